//! The second half of the verdict: Rust argument types against a kernel's ABI record.
//!
//! Runs after the PTX check ([`crate::signature`]) has accepted every parameter's size,
//! alignment and class, and only for kernels whose module holds a record (`#[kernel]`
//! emits one; hand-written PTX has none). It sees what the PTX cannot: a slice from a
//! writable slice, the element size and value class behind a pointer or slice, the sign
//! of an integer scalar, and a struct's fields (offset, size, class).
//!
//! Classes ([`ValueClass`](crate::ValueClass)) are compared only when both sides know
//! theirs: an [`Opaque`](crate::ValueClass::Opaque) element or field (a nested struct, a
//! type that does not say) is compared by size alone, so `[f32; 4]` on one side and a
//! 16-byte struct of four `f32` on the other agree. Two more rules ([`class_accepted`],
//! [`param_detail`]):
//!
//! - a kernel's raw-pointer element, pointee or field (class 4: a pointer table,
//!   `*const *const f32`) accepts an 8-byte unsigned host element (`u64`, `usize`),
//!   because a device address on the host is a `u64` (`CUdeviceptr`) and cudarc cannot
//!   allocate buffers of raw pointers. Not the reverse: a kernel's `u64` refuses a host raw
//!   pointer, which holds a host address;
//! - a kernel's pointer to an untyped pointee (`*mut c_void`, recorded with element size 0
//!   and class opaque) accepts a pointer to any host element type, as CUDA's `void*` does.
//!
//! `bool` (class 5) is not `u8` (class 1): a `PtrMut<u8>` for a kernel's `*mut bool` would
//! hand it bytes other than 0 and 1, and the reverse would let it write them into a host
//! `bool` buffer; both are refused.

use ptx_linker::EntrySignature;

use device_std::ValueClass;

use crate::abi_record::{AbiField, AbiKind, AbiParam, AbiRecord, AbiRecordProblem};
use crate::param::HostAbi;

mod mismatch;

pub use mismatch::{AbiMismatch, AbiMismatchDetail};

/// Why [`verify_record`] refused: this module's own error type, which the crate's
/// [`Error`](crate::Error) turns into [`Error::AbiRecord`](crate::Error::AbiRecord) or
/// [`Error::AbiMismatch`](crate::Error::AbiMismatch) (`From`, so `?` converts it).
#[derive(Debug)]
pub(crate) enum RecordRefusal {
    /// The record contradicts the PTX `.entry`: it is stale.
    Stale {
        /// Module display name.
        module: String,
        /// The kernel.
        kernel: String,
        /// What is wrong.
        problem: AbiRecordProblem,
    },
    /// A Rust parameter type differs from what the record says the kernel takes (boxed,
    /// as in [`Error::AbiMismatch`](crate::Error::AbiMismatch)).
    Mismatch(Box<AbiMismatch>),
}

/// Checks the Rust parameters `host` (one [`HostAbi`] per parameter, named by `names`)
/// against `record`, the ABI record of `entry`. `module` names the module in messages.
///
/// Errors: [`RecordRefusal::Stale`] (the crate's `Error::AbiRecord`) when the record
/// contradicts the PTX `.entry` (parameter count, or a parameter's size or alignment);
/// else [`RecordRefusal::Mismatch`] (`Error::AbiMismatch`) for the first parameter whose
/// kind, element size, element class or struct fields differ.
pub(crate) fn verify_record(
    entry: &EntrySignature,
    module: &str,
    record: &AbiRecord,
    host: &[HostAbi],
    names: &dyn Fn() -> Vec<String>,
) -> Result<(), RecordRefusal> {
    let stale = |problem| RecordRefusal::Stale {
        module: module.to_string(),
        kernel: entry.name.clone(),
        problem,
    };
    if record.params.len() != entry.params.len() {
        return Err(stale(AbiRecordProblem::ParamCount {
            record: record.params.len(),
            ptx: entry.params.len(),
        }));
    }
    for (index, (rec, ptx)) in record.params.iter().zip(&entry.params).enumerate() {
        if rec.size != ptx.size || rec.align != ptx.align {
            return Err(stale(AbiRecordProblem::ParamLayout {
                param: index,
                record_size: rec.size,
                record_align: rec.align,
                ptx_size: ptx.size,
                ptx_align: ptx.align,
            }));
        }
    }
    // The PTX check ran first, so `host` has one entry per parameter; `zip` keeps this
    // total even if a caller broke that.
    for (index, ((rec, ptx), host)) in record
        .params
        .iter()
        .zip(&entry.params)
        .zip(host)
        .enumerate()
    {
        if let Some(detail) = param_detail(rec, host) {
            return Err(RecordRefusal::Mismatch(Box::new(AbiMismatch {
                module: Some(module.to_string()),
                line: entry.line,
                kernel: entry.name.clone(),
                param_index: index,
                param_name: ptx.name.clone(),
                rust_type: names().swap_remove(index),
                detail,
            })));
        }
    }
    Ok(())
}

/// Whether a host value of class `host` may stand for a kernel value of class `device`,
/// both `size` bytes: the classes agree or either is opaque, or the kernel's is a raw
/// pointer and the host's an 8-byte unsigned integer (a device address on the host is a
/// `u64`). The relaxation is one-way: a kernel's unsigned integer refuses a host raw
/// pointer.
pub(crate) fn class_accepted(device: ValueClass, host: ValueClass, size: u32) -> bool {
    !device.conflicts_with(host)
        || (device == ValueClass::Pointer && host == ValueClass::Unsigned && size == 8)
}

/// What differs between one record entry and one Rust parameter, if anything: the kind,
/// then the element size, then the element class ([`class_accepted`]); for a struct the
/// field count, then field by field the offset and size, then the class. A kernel's
/// pointer to an untyped pointee (element size 0, class opaque: `*mut c_void`) accepts
/// any host pointee.
pub(crate) fn param_detail(rec: &AbiParam, host: &HostAbi) -> Option<AbiMismatchDetail> {
    if rec.kind != host.kind {
        return Some(AbiMismatchDetail::Kind {
            device: rec.kind,
            host: host.kind,
        });
    }
    if rec.kind == AbiKind::Pointer && rec.elem_size == 0 && rec.elem_class == ValueClass::Opaque {
        return None;
    }
    let class = |size| {
        (!class_accepted(rec.elem_class, host.elem_class, size)).then_some(
            AbiMismatchDetail::ElemClass {
                kind: rec.kind,
                size,
                device: rec.elem_class,
                host: host.elem_class,
            },
        )
    };
    match rec.kind {
        // The PTX check compared size and integer/float class already; the sign is here.
        AbiKind::Scalar => class(rec.size),
        AbiKind::Pointer
        | AbiKind::Slice
        | AbiKind::DisjointSlice
        | AbiKind::OptionalSlice
        | AbiKind::OptionalDisjointSlice => {
            if rec.elem_size != host.elem_size {
                return Some(AbiMismatchDetail::ElemSize {
                    device: rec.elem_size,
                    host: host.elem_size,
                });
            }
            class(rec.elem_size)
        }
        AbiKind::TensorMap => {
            if rec.elem_size != host.elem_size {
                return Some(AbiMismatchDetail::ElemSize {
                    device: rec.elem_size,
                    host: host.elem_size,
                });
            }
            let device: Vec<u32> = rec.fields.iter().map(|f| f.offset).collect();
            let host_box: Vec<u32> = host.fields.iter().map(|f| f.offset).collect();
            if device != host_box {
                return Some(AbiMismatchDetail::TensorBox {
                    device,
                    host: host_box,
                });
            }
            // Box extent 0's size is the swizzle (0: none).
            let device_swizzle = rec.fields.first().map_or(0, |f| f.size);
            let host_swizzle = host.fields.first().map_or(0, |f| f.size);
            if device_swizzle != host_swizzle {
                return Some(AbiMismatchDetail::TensorSwizzle {
                    device: device_swizzle,
                    host: host_swizzle,
                });
            }
            class(rec.elem_size)
        }
        AbiKind::Texture | AbiKind::Surface => {
            if rec.elem_size != host.elem_size {
                return Some(AbiMismatchDetail::ElemSize {
                    device: rec.elem_size,
                    host: host.elem_size,
                });
            }
            let dims = |f: &[AbiField]| f.first().map_or(0, |f| f.offset);
            let host_dims = host.fields.first().map_or(0, |f| f.offset);
            if dims(&rec.fields) != host_dims {
                return Some(AbiMismatchDetail::TextureDims {
                    device: dims(&rec.fields),
                    host: host_dims,
                });
            }
            class(rec.elem_size)
        }
        AbiKind::Struct => {
            if rec.fields.len() != host.fields.len() {
                return Some(AbiMismatchDetail::FieldCount {
                    device: rec.fields.len(),
                    host: host.fields.len(),
                });
            }
            rec.fields
                .iter()
                .zip(host.fields)
                .enumerate()
                .find_map(|(index, (dev, h))| {
                    let h_field = AbiField {
                        offset: h.offset,
                        size: h.size,
                        class: h.class,
                    };
                    if (dev.offset, dev.size) != (h.offset, h.size) {
                        Some(AbiMismatchDetail::Field {
                            index,
                            host_name: h.name,
                            device: *dev,
                            host: h_field,
                        })
                    } else if !class_accepted(dev.class, h.class, dev.size) {
                        Some(AbiMismatchDetail::FieldClass {
                            index,
                            host_name: h.name,
                            device: *dev,
                            host: h_field,
                        })
                    } else {
                        None
                    }
                })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::param::KernelParam;
    use crate::ValueClass;
    use crate::{Ptr, PtrMut, Slice, SliceMut, Struct};
    use device_std::FieldLayout;
    use ptx_linker::{Param, ParamKind};

    fn words(w: &[u32]) -> AbiRecord {
        let bytes: Vec<u8> = w.iter().flat_map(|w| w.to_le_bytes()).collect();
        AbiRecord::parse(&bytes).unwrap()
    }

    /// `.entry k(...)` with one `.param` per record parameter, named `k_param_N`.
    fn entry(record: &AbiRecord) -> EntrySignature {
        EntrySignature {
            name: "k".into(),
            line: 7,
            params: record
                .params
                .iter()
                .enumerate()
                .map(|(i, p)| Param {
                    name: format!("k_param_{i}"),
                    kind: match p.kind {
                        AbiKind::Scalar => ParamKind::Scalar {
                            ty: format!("u{}", p.size * 8),
                        },
                        AbiKind::Pointer => ParamKind::Pointer {
                            space: None,
                            pointee_align: 1,
                        },
                        _ => ParamKind::Aggregate { elem: "b8".into() },
                    },
                    size: p.size,
                    align: p.align,
                })
                .collect(),
        }
    }

    /// The record check alone (the PTX check is `signature`'s), as its message.
    fn check(record: &AbiRecord, host: &[HostAbi], names: &[&str]) -> Result<(), String> {
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        verify_record(&entry(record), "m.ptx", record, host, &|| names.clone())
            .map_err(|e| Error::from(e).to_string())
    }

    /// `k(xs: &[f32], out: DisjointSlice<f32>, p: *mut f32)`.
    fn floats() -> AbiRecord {
        words(&[
            0x4B41_4249,
            2,
            3, //
            3,
            16,
            8,
            4,
            3,
            0, //
            4,
            16,
            8,
            4,
            3,
            0, //
            2,
            8,
            8,
            4,
            3,
            0,
        ])
    }

    /// `k(xs: &[i32], n: i32, out: *mut i64)`.
    fn signed() -> AbiRecord {
        words(&[
            0x4B41_4249,
            2,
            3, //
            3,
            16,
            8,
            4,
            2,
            0, //
            1,
            4,
            4,
            4,
            2,
            0, //
            2,
            8,
            8,
            8,
            2,
            0,
        ])
    }

    #[repr(C)]
    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, device_std::KernelStruct)]
    struct FloatFirst {
        a: f32,
        b: u32,
    }

    #[repr(C)]
    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, device_std::KernelStruct)]
    struct UintFirst {
        a: u32,
        b: f32,
    }

    #[repr(C)]
    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, device_std::KernelStruct)]
    struct Nested {
        inner: FloatFirst,
        lanes: [f32; 2],
    }

    #[repr(C)]
    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, device_std::KernelStruct)]
    struct NestedOther {
        inner: UintFirst,
        lanes: [f32; 2],
    }

    #[repr(C)]
    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, device_std::KernelStruct)]
    struct NestedInts {
        inner: FloatFirst,
        lanes: [i32; 2],
    }

    /// `k(p: FloatFirst)`, written from the device definition.
    fn float_first() -> AbiRecord {
        words(&[0x4B41_4249, 2, 1, 5, 8, 4, 0, 0, 2, 0, 4, 3, 4, 4, 1])
    }

    #[test]
    fn u32_slice_for_f32_slice_is_refused() {
        let r = floats();
        let host = [Slice::<u32>::ABI, SliceMut::<f32>::ABI, PtrMut::<f32>::ABI];
        assert_eq!(
            check(&r, &host, &["Slice<u32>", "SliceMut<f32>", "PtrMut<f32>"]).unwrap_err(),
            "m.ptx:7: kernel `k` parameter 0 (`k_param_0`): the kernel takes a read-only slice \
             of 4-byte float elements, the Rust argument `Slice<u32>` is a read-only slice of \
             4-byte unsigned integer elements; element classes differ: float vs unsigned \
             integer"
        );
        let host = [Slice::<f32>::ABI, SliceMut::<i32>::ABI, PtrMut::<f32>::ABI];
        assert_eq!(
            check(&r, &host, &["Slice<f32>", "SliceMut<i32>", "PtrMut<f32>"]).unwrap_err(),
            "m.ptx:7: kernel `k` parameter 1 (`k_param_1`): the kernel takes a writable slice \
             of 4-byte float elements, the Rust argument `SliceMut<i32>` is a writable slice \
             of 4-byte signed integer elements; element classes differ: float vs signed integer"
        );
        let host = [Slice::<f32>::ABI, SliceMut::<f32>::ABI, Ptr::<u32>::ABI];
        assert_eq!(
            check(&r, &host, &["Slice<f32>", "SliceMut<f32>", "Ptr<u32>"]).unwrap_err(),
            "m.ptx:7: kernel `k` parameter 2 (`k_param_2`): the kernel takes a raw pointer to \
             4-byte float data, the Rust argument `Ptr<u32>` is a raw pointer to 4-byte \
             unsigned integer data; pointee classes differ: float vs unsigned integer"
        );
        // The right types, and arrays classed by their element.
        let host = [Slice::<f32>::ABI, SliceMut::<f32>::ABI, PtrMut::<f32>::ABI];
        check(&r, &host, &[]).unwrap();
        let host = [
            Slice::<[f32; 1]>::ABI,
            SliceMut::<f32>::ABI,
            Ptr::<f32>::ABI,
        ];
        check(&r, &host, &[]).unwrap();
    }

    #[test]
    fn signed_for_unsigned_is_refused() {
        let r = signed();
        let ok = [Slice::<i32>::ABI, i32::ABI, PtrMut::<i64>::ABI];
        check(&r, &ok, &[]).unwrap();
        // `isize` is `i64`.
        check(
            &r,
            &[Slice::<i32>::ABI, i32::ABI, PtrMut::<isize>::ABI],
            &[],
        )
        .unwrap();
        assert_eq!(
            check(
                &r,
                &[Slice::<u32>::ABI, i32::ABI, PtrMut::<i64>::ABI],
                &["Slice<u32>"]
            )
            .unwrap_err(),
            "m.ptx:7: kernel `k` parameter 0 (`k_param_0`): the kernel takes a read-only slice \
             of 4-byte signed integer elements, the Rust argument `Slice<u32>` is a read-only \
             slice of 4-byte unsigned integer elements; element classes differ: signed integer \
             vs unsigned integer"
        );
        assert_eq!(
            check(
                &r,
                &[Slice::<i32>::ABI, u32::ABI, PtrMut::<i64>::ABI],
                &["", "u32"]
            )
            .unwrap_err(),
            "m.ptx:7: kernel `k` parameter 1 (`k_param_1`): the kernel takes a 4-byte signed \
             integer, the Rust argument `u32` is a 4-byte unsigned integer; classes differ: \
             signed integer vs unsigned integer"
        );
        let e = verify_record(
            &entry(&r),
            "m.ptx",
            &r,
            &[Slice::<i32>::ABI, i32::ABI, PtrMut::<usize>::ABI],
            &|| vec![String::new(); 3],
        )
        .unwrap_err();
        match e {
            RecordRefusal::Mismatch(m) => {
                assert_eq!(m.param_index, 2);
                assert_eq!(
                    m.detail,
                    AbiMismatchDetail::ElemClass {
                        kind: AbiKind::Pointer,
                        size: 8,
                        device: ValueClass::Signed,
                        host: ValueClass::Unsigned
                    }
                );
            }
            other => panic!("{}", Error::from(other)),
        }
    }

    #[test]
    fn usize_is_u64() {
        // `k(a: u64, b: u8)`.
        let r = words(&[0x4B41_4249, 2, 2, 1, 8, 8, 8, 1, 0, 1, 1, 1, 1, 1, 0]);
        check(&r, &[usize::ABI, u8::ABI], &[]).unwrap();
        check(&r, &[u64::ABI, u8::ABI], &[]).unwrap();
        assert!(check(&r, &[i64::ABI, u8::ABI], &["i64"]).is_err());
        assert!(check(&r, &[u64::ABI, i8::ABI], &["", "i8"]).is_err());
    }

    /// `k(flags: *mut bool, bytes: *mut u8, b: u8)`, as `#[kernel]` writes it.
    fn bools() -> AbiRecord {
        let w = [
            0x4B41_4249,
            2,
            3, //
            2,
            8,
            8,
            1,
            5,
            0, //
            2,
            8,
            8,
            1,
            1,
            0, //
            1,
            1,
            1,
            1,
            1,
            0,
        ];
        let r = words(&w);
        // The device crate computes the same words.
        let dev = [
            <*mut bool as device_std::KernelParam>::ABI,
            <*mut u8 as device_std::KernelParam>::ABI,
            <u8 as device_std::KernelParam>::ABI,
        ];
        assert_eq!(device_std::abi::record::<21>(&dev), w);
        r
    }

    /// `k(a: &[bf16], b: &[f16])`: the words `#[kernel]` writes.
    fn halves() -> AbiRecord {
        let w = [0x4B41_4249, 2, 2, 3, 16, 8, 2, 6, 0, 3, 16, 8, 2, 7, 0];
        let r = words(&w);
        let device = device_std::abi::record::<15>(&[
            <&[device_std::bf16] as device_std::KernelParam>::ABI,
            <&[device_std::f16] as device_std::KernelParam>::ABI,
        ]);
        assert_eq!(device, w);
        r
    }

    #[test]
    fn bf16_f16_and_u16_are_three_classes() {
        use device_std::{bf16, f16};
        let r = halves();
        check(&r, &[Slice::<bf16>::ABI, Slice::<f16>::ABI], &[]).unwrap();
        assert_eq!(
            check(&r, &[Slice::<u16>::ABI, Slice::<f16>::ABI], &["Slice<u16>"]).unwrap_err(),
            "m.ptx:7: kernel `k` parameter 0 (`k_param_0`): the kernel takes a read-only slice \
             of 2-byte bfloat16 elements, the Rust argument `Slice<u16>` is a read-only slice of \
             2-byte unsigned integer elements; element classes differ: bfloat16 vs unsigned \
             integer; `bf16`, `f16` and `u16` read the same 16 bits as different numbers"
        );
        assert_eq!(
            detail(check_detail(&r, &[Slice::<bf16>::ABI, Slice::<bf16>::ABI])),
            AbiMismatchDetail::ElemClass {
                kind: AbiKind::Slice,
                size: 2,
                device: ValueClass::Float16,
                host: ValueClass::BFloat16
            }
        );
    }

    #[test]
    fn bool_is_not_u8_either_way() {
        let r = bools();
        check(&r, &[PtrMut::<bool>::ABI, PtrMut::<u8>::ABI, u8::ABI], &[]).unwrap();
        // A `u8` buffer for the kernel's `*mut bool`: it would read 2..=255 as `bool`.
        assert_eq!(
            check(
                &r,
                &[PtrMut::<u8>::ABI, PtrMut::<u8>::ABI, u8::ABI],
                &["PtrMut<u8>"]
            )
            .unwrap_err(),
            "m.ptx:7: kernel `k` parameter 0 (`k_param_0`): the kernel takes a raw pointer to \
             1-byte bool data, the Rust argument `PtrMut<u8>` is a raw pointer to 1-byte \
             unsigned integer data; pointee classes differ: bool vs unsigned integer; `bool` \
             is a class of its own: a `bool` must be 0 or 1, a byte need not be"
        );
        assert_eq!(
            detail(check_detail(
                &r,
                &[PtrMut::<i8>::ABI, PtrMut::<u8>::ABI, u8::ABI]
            )),
            AbiMismatchDetail::ElemClass {
                kind: AbiKind::Pointer,
                size: 1,
                device: ValueClass::Bool,
                host: ValueClass::Signed
            }
        );
        // A `bool` buffer for the kernel's `*mut u8`: it may write any byte into it.
        assert_eq!(
            check(
                &r,
                &[PtrMut::<bool>::ABI, PtrMut::<bool>::ABI, u8::ABI],
                &["", "PtrMut<bool>"]
            )
            .unwrap_err(),
            "m.ptx:7: kernel `k` parameter 1 (`k_param_1`): the kernel takes a raw pointer to \
             1-byte unsigned integer data, the Rust argument `PtrMut<bool>` is a raw pointer \
             to 1-byte bool data; pointee classes differ: unsigned integer vs bool; `bool` is \
             a class of its own: a `bool` must be 0 or 1, a byte need not be"
        );
        assert!(check(
            &r,
            &[PtrMut::<bool>::ABI, Ptr::<bool>::ABI, u8::ABI],
            &["", "Ptr<bool>"]
        )
        .is_err());
        // A host `bool` scalar for the kernel's `u8` (a kernel takes no `bool`).
        assert_eq!(
            check(
                &r,
                &[PtrMut::<bool>::ABI, PtrMut::<u8>::ABI, bool::ABI],
                &["", "", "bool"]
            )
            .unwrap_err(),
            "m.ptx:7: kernel `k` parameter 2 (`k_param_2`): the kernel takes a 1-byte \
             unsigned integer, the Rust argument `bool` is a 1-byte bool; classes differ: \
             unsigned integer vs bool; `bool` is a class of its own: a `bool` must be 0 or 1, \
             a byte need not be"
        );
    }

    /// `k(table: *const *const f32, words: *const u64)`, as `#[kernel]` writes it.
    fn pointer_table() -> AbiRecord {
        let w = [
            0x4B41_4249,
            2,
            2, //
            2,
            8,
            8,
            8,
            4,
            0, //
            2,
            8,
            8,
            8,
            1,
            0,
        ];
        let dev = [
            <*const *const f32 as device_std::KernelParam>::ABI,
            <*const u64 as device_std::KernelParam>::ABI,
        ];
        assert_eq!(device_std::abi::record::<15>(&dev), w);
        words(&w)
    }

    #[test]
    fn pointer_tables_take_u64_device_addresses() {
        let r = pointer_table();
        // A buffer of `CUdeviceptr`s (`u64`), the only form cudarc can allocate.
        check(&r, &[Ptr::<u64>::ABI, Ptr::<u64>::ABI], &[]).unwrap();
        check(&r, &[Ptr::<usize>::ABI, Ptr::<u64>::ABI], &[]).unwrap();
        check(&r, &[PtrMut::<u64>::ABI, Ptr::<u64>::ABI], &[]).unwrap();
        // Raw pointers on the host still match, and opaque is compared by size.
        check(&r, &[Ptr::<*const f32>::ABI, Ptr::<u64>::ABI], &[]).unwrap();
        check(&r, &[Ptr::<*const u32>::ABI, Ptr::<u64>::ABI], &[]).unwrap();
        // Signed or float 8-byte elements are not addresses.
        assert_eq!(
            check(&r, &[Ptr::<i64>::ABI, Ptr::<u64>::ABI], &["Ptr<i64>"]).unwrap_err(),
            "m.ptx:7: kernel `k` parameter 0 (`k_param_0`): the kernel takes a raw pointer to \
             8-byte raw pointer data, the Rust argument `Ptr<i64>` is a raw pointer to 8-byte \
             signed integer data; pointee classes differ: raw pointer vs signed integer; a \
             device address on the host is a `u64` (`CUdeviceptr`)"
        );
        assert!(check(&r, &[Ptr::<f64>::ABI, Ptr::<u64>::ABI], &["Ptr<f64>"]).is_err());
        // Only 8-byte unsigned elements: a `u32` is the wrong size.
        assert_eq!(
            check(&r, &[Ptr::<u32>::ABI, Ptr::<u64>::ABI], &["Ptr<u32>"]).unwrap_err(),
            "m.ptx:7: kernel `k` parameter 0 (`k_param_0`): the kernel's element type is 8 \
             bytes, the element type of the Rust argument `Ptr<u32>` is 4 bytes"
        );
        // Not the reverse: the kernel's `*const u64` refuses host raw pointers (host
        // addresses).
        assert_eq!(
            check(
                &r,
                &[Ptr::<u64>::ABI, Ptr::<*const f32>::ABI],
                &["", "Ptr<*const f32>"]
            )
            .unwrap_err(),
            "m.ptx:7: kernel `k` parameter 1 (`k_param_1`): the kernel takes a raw pointer to \
             8-byte unsigned integer data, the Rust argument `Ptr<*const f32>` is a raw \
             pointer to 8-byte raw pointer data; pointee classes differ: unsigned integer vs \
             raw pointer"
        );
        assert!(class_accepted(ValueClass::Pointer, ValueClass::Unsigned, 8));
        assert!(!class_accepted(
            ValueClass::Pointer,
            ValueClass::Unsigned,
            4
        ));
        assert!(!class_accepted(
            ValueClass::Unsigned,
            ValueClass::Pointer,
            8
        ));
        assert!(!class_accepted(ValueClass::Pointer, ValueClass::Signed, 8));
    }

    #[test]
    fn pointer_fields_take_u64_fields() {
        // `k(p: S)` with `S { table: u64-sized raw pointer at 0, n: u64 at 8 }`, as a record
        // written by hand (device-std structs cannot hold pointers).
        let r = words(&[0x4B41_4249, 2, 1, 5, 16, 8, 0, 0, 2, 0, 8, 4, 8, 8, 1]);
        const U64_U64: &[FieldLayout] = &[
            FieldLayout {
                name: "table",
                offset: 0,
                size: 8,
                class: ValueClass::Unsigned,
            },
            FieldLayout {
                name: "n",
                offset: 8,
                size: 8,
                class: ValueClass::Unsigned,
            },
        ];
        const PTR_PTR: &[FieldLayout] = &[
            FieldLayout {
                name: "table",
                offset: 0,
                size: 8,
                class: ValueClass::Pointer,
            },
            FieldLayout {
                name: "n",
                offset: 8,
                size: 8,
                class: ValueClass::Pointer,
            },
        ];
        let host = |fields| HostAbi {
            kind: AbiKind::Struct,
            elem_size: 0,
            elem_class: ValueClass::Opaque,
            fields,
        };
        check(&r, &[host(U64_U64)], &[]).unwrap();
        assert_eq!(
            detail(check_detail(&r, &[host(PTR_PTR)])),
            AbiMismatchDetail::FieldClass {
                index: 1,
                host_name: "n",
                device: AbiField {
                    offset: 8,
                    size: 8,
                    class: ValueClass::Unsigned
                },
                host: AbiField {
                    offset: 8,
                    size: 8,
                    class: ValueClass::Pointer
                },
            }
        );
    }

    /// `k(any: *mut c_void, one: *const [u32; 0], f: *const f32)`, as `#[kernel]` writes it.
    fn void_pointers() -> AbiRecord {
        let w = [
            0x4B41_4249,
            2,
            3, //
            2,
            8,
            8,
            0,
            0,
            0, //
            2,
            8,
            8,
            0,
            1,
            0, //
            2,
            8,
            8,
            4,
            3,
            0,
        ];
        let dev = [
            <*mut core::ffi::c_void as device_std::KernelParam>::ABI,
            <*const [u32; 0] as device_std::KernelParam>::ABI,
            <*const f32 as device_std::KernelParam>::ABI,
        ];
        assert_eq!(device_std::abi::record::<21>(&dev), w);
        words(&w)
    }

    #[test]
    fn void_pointers_take_any_pointee() {
        let r = void_pointers();
        let rest = [Ptr::<[u32; 0]>::ABI, Ptr::<f32>::ABI];
        for any in [
            PtrMut::<f32>::ABI,
            PtrMut::<u8>::ABI,
            PtrMut::<bool>::ABI,
            PtrMut::<[f64; 3]>::ABI,
            PtrMut::<FloatFirst>::ABI,
            Ptr::<u64>::ABI,
            Ptr::<core::ffi::c_void>::ABI,
        ] {
            check(&r, &[any, rest[0], rest[1]], &[]).unwrap();
        }
        // Still a pointer: a slice is another kind.
        assert!(check(&r, &[Slice::<f32>::ABI, rest[0], rest[1]], &["Slice<f32>"]).is_err());
        // A zero-sized pointee with a class is typed: `Ptr<f32>` is the wrong size.
        assert_eq!(
            check(
                &r,
                &[PtrMut::<f32>::ABI, Ptr::<f32>::ABI, rest[1]],
                &["", "Ptr<f32>"]
            )
            .unwrap_err(),
            "m.ptx:7: kernel `k` parameter 1 (`k_param_1`): the kernel's element type is 0 \
             bytes, the element type of the Rust argument `Ptr<f32>` is 4 bytes"
        );
        // Untyped only on the kernel's side: a host `c_void` (1 byte in Rust) for the
        // kernel's `*const f32` is refused.
        assert_eq!(
            check(
                &r,
                &[PtrMut::<f32>::ABI, rest[0], Ptr::<core::ffi::c_void>::ABI],
                &["", "", "Ptr<c_void>"]
            )
            .unwrap_err(),
            "m.ptx:7: kernel `k` parameter 2 (`k_param_2`): the kernel's element type is 4 \
             bytes, the element type of the Rust argument `Ptr<c_void>` is 1 byte"
        );
    }

    #[test]
    fn swapped_equal_size_fields_are_refused() {
        let r = float_first();
        check(&r, &[Struct::<FloatFirst>::ABI], &[]).unwrap();
        assert_eq!(
            check(&r, &[Struct::<UintFirst>::ABI], &["Struct<UintFirst>"]).unwrap_err(),
            "m.ptx:7: kernel `k` parameter 0 (`k_param_0`): field 0 of the kernel's struct is \
             a 4-byte float at byte offset 0, field 0 (`a`) of the Rust argument \
             `Struct<UintFirst>` is a 4-byte unsigned integer at byte offset 0; field classes \
             differ: float vs unsigned integer (the two struct definitions differ: fields of \
             equal size in another order?)"
        );
        // The host's own record of the same struct says the same.
        let fields: Vec<(u32, u32, ValueClass)> = <FloatFirst as device_std::KernelStruct>::LAYOUT
            .fields
            .iter()
            .map(|f: &FieldLayout| (f.offset, f.size, f.class))
            .collect();
        assert_eq!(
            fields,
            [(0, 4, ValueClass::Float), (4, 4, ValueClass::Unsigned)]
        );
    }

    #[test]
    fn nested_structs_are_opaque_and_arrays_take_their_element_class() {
        // `k(p: Nested)`: `inner` opaque at 0 (8 bytes), `lanes` float at 8 (8 bytes).
        let r = words(&[0x4B41_4249, 2, 1, 5, 16, 4, 0, 0, 2, 0, 8, 0, 8, 8, 3]);
        check(&r, &[Struct::<Nested>::ABI], &[]).unwrap();
        // Inside a nested struct only the size is compared.
        check(&r, &[Struct::<NestedOther>::ABI], &[]).unwrap();
        assert_eq!(
            detail(check_detail(&r, &[Struct::<NestedInts>::ABI])),
            AbiMismatchDetail::FieldClass {
                index: 1,
                host_name: "lanes",
                device: AbiField {
                    offset: 8,
                    size: 8,
                    class: ValueClass::Float
                },
                host: AbiField {
                    offset: 8,
                    size: 8,
                    class: ValueClass::Signed
                },
            }
        );
        assert!(
            check(&r, &[Struct::<NestedInts>::ABI], &["Struct<NestedInts>"])
                .unwrap_err()
                .contains(
                    "field 1 of the kernel's struct is an 8-byte float at byte offset 8, field 1 \
                 (`lanes`) of the Rust argument `Struct<NestedInts>` is an 8-byte signed \
                 integer at byte offset 8; field classes differ: float vs signed integer"
                )
        );
    }

    /// The record of a kernel taking `device_std::tma::TensorMap<bf16, 2, 64, 128, 1, 1, 1,
    /// SWIZZLE>`.
    fn swizzled_map<const SWIZZLE: usize>() -> AbiRecord {
        type Dev<const S: usize> =
            device_std::tma::TensorMap<device_std::bf16, 2, 64, 128, 1, 1, 1, S>;
        words(&device_std::abi::record::<15>(&[
            <Dev<SWIZZLE> as device_std::KernelParam>::ABI,
        ]))
    }

    #[test]
    fn tensor_map_swizzles_must_match() {
        type Host<const S: usize> =
            crate::tma::TensorMap<'static, device_std::bf16, 2, 64, 128, 1, 1, 1, S>;
        let dev = swizzled_map::<128>();
        assert_eq!(dev.params[0].fields[0].size, 128);
        assert_eq!(param_detail(&dev.params[0], &Host::<128>::ABI), None);
        let err = param_detail(&dev.params[0], &Host::<0>::ABI).unwrap();
        assert_eq!(
            err,
            AbiMismatchDetail::TensorSwizzle {
                device: 128,
                host: 0
            }
        );
        assert_eq!(
            param_detail(&swizzled_map::<0>().params[0], &Host::<128>::ABI),
            Some(AbiMismatchDetail::TensorSwizzle {
                device: 0,
                host: 128
            })
        );
    }

    fn check_detail(record: &AbiRecord, host: &[HostAbi]) -> RecordRefusal {
        verify_record(&entry(record), "m.ptx", record, host, &|| {
            vec![String::new(); host.len()]
        })
        .unwrap_err()
    }

    fn detail(e: RecordRefusal) -> AbiMismatchDetail {
        match e {
            RecordRefusal::Mismatch(m) => m.detail,
            other => panic!("expected an ABI mismatch, got {}", Error::from(other)),
        }
    }
}
