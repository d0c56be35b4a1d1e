//! The verdict matrix with ABI records: rustc-built kernels (`fixtures/kernels`, built by
//! `cargo xtask build-ptx` into `data/fixture.ptx` + `data/fixture.map.json`) against
//! matching and seeded-wrong Rust signatures. No GPU.
//!
//! Every seeded mismatch is refused with its exact message; every matching signature is
//! accepted. Structs on the host are the kernel crate's own types (built for the host),
//! plus host-only look-alikes with one thing changed: field order, field types of the same
//! size (value classes), sizes, alignment.

use bytemuck::{Pod, Zeroable};
use host_loader::{
    check_signature, check_signature_with_record, AbiField, AbiKind, AbiMismatchDetail, AbiRecord,
    AbiRecordError, AbiRecordProblem, Error, KernelSignature, Ptr, PtrMut, Signatures, Slice,
    SliceMut, Struct, ValueClass,
};
use host_loader_fixture_kernels::{Cubic, Params, Quant};
use ValueClass::{Float, Signed, Unsigned};

const FIXTURE: &str = include_str!("data/fixture.ptx");
const FIXTURE_MAP: &str = include_str!("data/fixture.map.json");
const NAME: &str = "tests/data/fixture.ptx";

/// `Params` with `off` first: same size and alignment, fields at other offsets.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, device_std::KernelStruct)]
struct ParamsSwapped {
    off: u64,
    n: u32,
    scale: f32,
}

/// `Params` with `n` and `scale` swapped: two 4-byte fields, so the same offsets and
/// sizes; only the fields' value classes tell them apart.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, device_std::KernelStruct)]
struct ParamsSameSizeSwap {
    scale: f32,
    n: u32,
    off: u64,
}

/// `Quant` with an unsigned zero point: same size, other class.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, device_std::KernelStruct)]
struct QuantUnsigned {
    scale: f32,
    zero: u32,
}

/// `Quant` with an `f32` zero point.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, device_std::KernelStruct)]
struct QuantFloat {
    scale: f32,
    zero: f32,
}

/// `Params` with two 4-byte fields in place of `off`: 16 bytes aligned to 8, 4 fields.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, device_std::KernelStruct)]
struct ParamsSplit {
    n: u32,
    scale: f32,
    off_lo: u32,
    off_hi: u32,
    wide: [u64; 0],
}

/// `Cubic` without `align(16)`: 32 bytes, aligned to 4.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, device_std::KernelStruct)]
struct CubicPacked {
    c: [f32; 4],
    bias: f32,
    pad: [u32; 3],
}

/// `Cubic` with the array after the bias: 32 bytes aligned to 16, `c` at 4.
#[repr(C, align(16))]
#[derive(Clone, Copy, Pod, Zeroable, device_std::KernelStruct)]
struct CubicBiasFirst {
    bias: f32,
    c: [f32; 4],
    pad: [u32; 3],
}

/// `Cubic` with a 3-element array: the same size (padding grows), field 1 moves.
#[repr(C, align(16))]
#[derive(Clone, Copy, Pod, Zeroable, device_std::KernelStruct)]
struct Cubic3 {
    c: [f32; 3],
    bias: f32,
    pad: [u32; 4],
}

fn parsed() -> Signatures {
    Signatures::parse(NAME, FIXTURE).expect("fixture.ptx parses")
}

fn mapped() -> Signatures {
    let map = serde_json::from_str(FIXTURE_MAP).expect("fixture.map.json is a link map");
    Signatures::from_link_map(NAME, &map, FIXTURE).expect("signatures from the map")
}

/// Both ways of reading the module give the same verdict.
fn check<S: KernelSignature>(kernel: &str) -> Result<(), Error> {
    let a = parsed().check::<S>(kernel).map(drop);
    let b = mapped().check::<S>(kernel).map(drop);
    assert_eq!(
        a.as_ref()
            .map_err(ToString::to_string)
            .err()
            .map(|s| strip_line(&s)),
        b.as_ref()
            .map_err(ToString::to_string)
            .err()
            .map(|s| strip_line(&s)),
        "parsed and mapped verdicts differ for {kernel}"
    );
    a
}

/// The map has no line numbers: `tests/data/fixture.ptx:231: ` → `tests/data/fixture.ptx: `.
fn strip_line(s: &str) -> String {
    let prefix = format!("{NAME}:");
    match s.strip_prefix(&prefix) {
        Some(rest) if rest.starts_with(|c: char| c.is_ascii_digit()) => {
            let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
            format!("{NAME}{rest}")
        }
        _ => s.to_string(),
    }
}

fn err<S: KernelSignature>(kernel: &str) -> String {
    check::<S>(kernel).unwrap_err().to_string()
}

fn detail(e: Error) -> AbiMismatchDetail {
    match e {
        Error::AbiMismatch(m) => m.detail,
        other => panic!("expected an ABI mismatch, got {other}"),
    }
}

#[test]
fn every_kernel_has_a_record() {
    let sigs = parsed();
    let names: Vec<&str> = sigs.entries().iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "advance",
            "cubic",
            "dequantize",
            "empty",
            "gather",
            "optional_axpy",
            "scale",
            "smem_declared",
            "smem_ends",
            "vecadd",
            "vecadd_aligned",
            "vecadd_flat",
            "widen"
        ]
    );
    for name in names {
        assert!(sigs.record(name).unwrap().is_some(), "{name}");
    }
    let scale = sigs.record("scale").unwrap().unwrap();
    assert_eq!(scale.params[0].kind, AbiKind::Pointer);
    assert_eq!(scale.params[0].elem_size, 4);
    assert_eq!(scale.params[0].elem_class, Float);
    assert_eq!(scale.params[1].kind, AbiKind::Struct);
    assert_eq!(scale.params[1].elem_class, ValueClass::Opaque);
    let field = |offset, size, class| AbiField {
        offset,
        size,
        class,
    };
    assert_eq!(
        scale.params[1].fields,
        [
            field(0, 4, Unsigned),
            field(4, 4, Float),
            field(8, 8, Unsigned)
        ]
    );
    let dq = sigs.record("dequantize").unwrap().unwrap();
    let classes: Vec<ValueClass> = dq.params.iter().map(|p| p.elem_class).collect();
    assert_eq!(classes, [ValueClass::Opaque, Signed, Signed, Float]);
    assert_eq!(
        dq.params[0].fields,
        [field(0, 4, Float), field(4, 4, Signed)]
    );
    // Arrays have their element's class.
    let cubic = sigs.record("cubic").unwrap().unwrap();
    assert_eq!(
        cubic.params[0].fields,
        [
            field(0, 16, Float),
            field(16, 4, Float),
            field(20, 12, Unsigned)
        ]
    );
    assert_eq!(sigs.record("empty").unwrap().unwrap().params.len(), 0);
    assert_eq!(
        mapped().record("cubic").unwrap(),
        sigs.record("cubic").unwrap()
    );
    // `gather(*const *const f32, *mut bool, *mut c_void, DisjointSlice<f32>)`: a raw
    // pointer pointee (8 bytes), a bool pointee (class 5), an untyped pointee (size 0).
    let gather = sigs.record("gather").unwrap().unwrap();
    let elems: Vec<(AbiKind, u32, ValueClass)> = gather
        .params
        .iter()
        .map(|p| (p.kind, p.elem_size, p.elem_class))
        .collect();
    assert_eq!(
        elems,
        [
            (AbiKind::Pointer, 8, ValueClass::Pointer),
            (AbiKind::Pointer, 1, ValueClass::Bool),
            (AbiKind::Pointer, 0, ValueClass::Opaque),
            (AbiKind::DisjointSlice, 4, Float)
        ]
    );
}

#[test]
fn pointer_tables_bools_and_untyped_pointers() {
    // The typed forms that can be launched: a `u64` buffer of device addresses, `bool`s,
    // any element type behind `c_void`.
    check::<(Ptr<u64>, PtrMut<bool>, PtrMut<u32>, SliceMut<f32>)>("gather").unwrap();
    check::<(Ptr<usize>, PtrMut<bool>, PtrMut<u8>, SliceMut<f32>)>("gather").unwrap();
    check::<(Ptr<u64>, PtrMut<bool>, PtrMut<Params>, SliceMut<f32>)>("gather").unwrap();
    check::<(Ptr<*const f32>, PtrMut<bool>, PtrMut<f64>, SliceMut<f32>)>("gather").unwrap();
    assert_eq!(
        err::<(Ptr<i64>, PtrMut<bool>, PtrMut<u32>, SliceMut<f32>)>("gather"),
        "tests/data/fixture.ptx:274: kernel `gather` parameter 0 (`gather_param_0`): the \
         kernel takes a raw pointer to 8-byte raw pointer data, the Rust argument `Ptr<i64>` \
         is a raw pointer to 8-byte signed integer data; pointee classes differ: raw pointer \
         vs signed integer; a device address on the host is a `u64` (`CUdeviceptr`)"
    );
    assert_eq!(
        err::<(Ptr<u32>, PtrMut<bool>, PtrMut<u32>, SliceMut<f32>)>("gather"),
        "tests/data/fixture.ptx:274: kernel `gather` parameter 0 (`gather_param_0`): the \
         kernel's element type is 8 bytes, the element type of the Rust argument `Ptr<u32>` \
         is 4 bytes"
    );
    assert_eq!(
        err::<(Ptr<u64>, PtrMut<u8>, PtrMut<u32>, SliceMut<f32>)>("gather"),
        "tests/data/fixture.ptx:274: kernel `gather` parameter 1 (`gather_param_1`): the \
         kernel takes a raw pointer to 1-byte bool data, the Rust argument `PtrMut<u8>` is a \
         raw pointer to 1-byte unsigned integer data; pointee classes differ: bool vs \
         unsigned integer; `bool` is a class of its own: a `bool` must be 0 or 1, a byte need \
         not be"
    );
    assert_eq!(
        detail(check::<(Ptr<u64>, PtrMut<i8>, PtrMut<u32>, SliceMut<f32>)>("gather").unwrap_err()),
        AbiMismatchDetail::ElemClass {
            kind: AbiKind::Pointer,
            size: 1,
            device: ValueClass::Bool,
            host: Signed
        }
    );
    // Untyped only on the kernel's side: a host `c_void` is a 1-byte opaque element.
    assert_eq!(
        err::<(
            Ptr<u64>,
            PtrMut<bool>,
            PtrMut<u32>,
            SliceMut<core::ffi::c_void>
        )>("gather"),
        "tests/data/fixture.ptx:274: kernel `gather` parameter 3 (`gather_param_3`): the \
         kernel's element type is 4 bytes, the element type of the Rust argument \
         `SliceMut<c_void>` is 1 byte"
    );
}

#[test]
fn dynamic_shared_alignment() {
    // The map knows it per kernel; the PTX alone only for the module.
    let m = mapped();
    assert_eq!(m.dynamic_shared_align("smem_ends").unwrap(), Some(128));
    assert_eq!(m.dynamic_shared_align("vecadd").unwrap(), None);
    let p = parsed();
    assert_eq!(p.dynamic_shared_align("smem_ends").unwrap(), Some(128));
    assert_eq!(p.dynamic_shared_align("vecadd").unwrap(), Some(128));
}

#[test]
fn declared_dynamic_shared_memory_is_read_from_the_ptx() {
    // `#[kernel(dynamic_shared_per_thread = 8)]` on `smem_declared`; none elsewhere.
    let want = Some(host_loader::DynamicShared {
        bytes: 0,
        per_thread: 8,
    });
    for sigs in [mapped(), parsed()] {
        assert_eq!(sigs.dynamic_shared("smem_declared").unwrap(), want);
        assert_eq!(sigs.dynamic_shared("smem_ends").unwrap(), None);
        assert_eq!(sigs.dynamic_shared("vecadd").unwrap(), None);
    }
}

#[test]
fn declared_launch_dims_are_read_from_the_map_and_the_ptx() {
    // `#[kernel(dims = 1)]` on `vecadd_flat`; none on `vecadd`.
    for sigs in [mapped(), parsed()] {
        assert_eq!(sigs.launch_dims("vecadd_flat").unwrap(), Some(1));
        assert_eq!(sigs.launch_dims("vecadd").unwrap(), None);
        assert!(sigs.launch_dims("no_such_kernel").is_err());
    }
}

/// A map that disagrees with the PTX it came with (stale, or edited) cannot loosen the
/// declaration the linker folded into the code: the stricter of the two holds. A map
/// without the field (written before it existed) leaves the PTX's.
#[test]
fn a_map_cannot_loosen_the_launch_dims_of_its_ptx() {
    let with_dims = |dims: Option<u32>| {
        let mut map: ptx_linker::LinkMap = serde_json::from_str(FIXTURE_MAP).unwrap();
        for k in &mut map.kernels {
            k.launch_dims = dims;
        }
        Signatures::from_link_map(NAME, &map, FIXTURE)
    };
    for dims in [None, Some(1), Some(2)] {
        let sigs = with_dims(dims).unwrap();
        assert_eq!(
            sigs.launch_dims("vecadd_flat").unwrap(),
            Some(1),
            "{dims:?}"
        );
        assert_eq!(sigs.launch_dims("vecadd").unwrap(), dims, "{dims:?}");
    }
    // Without the PTX (a cubin's map alone), the map's word stands.
    let mut map: ptx_linker::LinkMap = serde_json::from_str(FIXTURE_MAP).unwrap();
    map.kernels.iter_mut().for_each(|k| k.launch_dims = Some(2));
    let sigs = Signatures::from_link_map(NAME, &map, "").unwrap();
    assert_eq!(sigs.launch_dims("vecadd_flat").unwrap(), Some(2));
    // No link writes other values: such a map is refused, naming the kernel.
    for bad in [0, 3] {
        let mut map: ptx_linker::LinkMap = serde_json::from_str(FIXTURE_MAP).unwrap();
        let k = map.kernels.iter_mut().find(|k| k.name == "vecadd").unwrap();
        k.launch_dims = Some(bad);
        let err = Signatures::from_link_map(NAME, &map, FIXTURE)
            .unwrap_err()
            .to_string();
        assert!(err.contains(&format!("launch_dims {bad}")), "{err}");
        assert!(err.contains("`vecadd`"), "{err}");
        assert!(err.contains("rebuild"), "{err}");
    }
}

/// Signatures built by hand know no declaration until they are given one.
#[test]
fn hand_built_signatures_take_launch_dims() {
    let sigs = Signatures::new("hand", parsed().entries().to_vec());
    assert_eq!(sigs.launch_dims("vecadd_flat").unwrap(), None);
    let sigs = sigs
        .with_launch_dims("vecadd_flat", Some(1))
        .with_launch_dims("vecadd", Some(2))
        .with_launch_dims("no_such_kernel", Some(1));
    assert_eq!(sigs.launch_dims("vecadd_flat").unwrap(), Some(1));
    assert_eq!(sigs.launch_dims("vecadd").unwrap(), Some(2));
    // Three dimensions constrain nothing.
    let sigs = sigs.with_launch_dims("vecadd", Some(3));
    assert_eq!(sigs.launch_dims("vecadd").unwrap(), None);
}

/// The linker folds `vecadd_flat`'s y and z special registers: its entry reads only the
/// x ones, while `vecadd`'s (the same code without `dims`) reads y and z ones too.
#[test]
fn a_one_dimensional_kernel_reads_only_x_registers() {
    let ptx = include_str!("data/fixture.ptx");
    let body = |name: &str| {
        let start = ptx.find(&format!(".visible .entry {name}(")).unwrap();
        let end = start + ptx[start..].find("\n}\n").unwrap();
        &ptx[start..end]
    };
    for reg in [
        "%tid.y",
        "%tid.z",
        "%ntid.y",
        "%ntid.z",
        "%ctaid.y",
        "%ctaid.z",
        "%nctaid.y",
        "%nctaid.z",
    ] {
        assert!(
            !body("vecadd_flat").contains(reg),
            "vecadd_flat reads {reg}"
        );
    }
    for reg in ["%tid.y", "%tid.z", "%ctaid.y", "%ctaid.z"] {
        assert!(body("vecadd").contains(reg), "vecadd does not read {reg}");
    }
    assert!(body("vecadd_flat").contains("%tid.x"));
}

/// What a launch of a kernel that declares its dynamic shared memory gets: the size
/// filled in when 0, its own when larger, an error with the numbers when smaller.
#[test]
fn declared_dynamic_shared_memory_fills_in_or_refuses_a_launch() {
    let d = host_loader::DynamicShared {
        bytes: 256,
        per_thread: 8,
    };
    let cfg = |block: (u32, u32, u32), bytes| host_loader::LaunchConfig {
        grid_dim: (4, 1, 1),
        block_dim: block,
        shared_mem_bytes: bytes,
    };
    assert_eq!(d.bytes_for(128), 256 + 1024);
    let filled = d.apply("k", cfg((32, 4, 1), 0)).unwrap();
    assert_eq!(filled.shared_mem_bytes, 256 + 8 * 128);
    assert_eq!(filled.block_dim, (32, 4, 1));
    assert_eq!(
        d.apply("k", cfg((128, 1, 1), 4096))
            .unwrap()
            .shared_mem_bytes,
        4096
    );
    let e = d
        .apply("k", cfg((128, 1, 1), 1279))
        .unwrap_err()
        .to_string();
    for part in [
        "`k`",
        "256 + 8 × threads",
        "1280 bytes",
        "(128, 1, 1)",
        "gives 1279",
    ] {
        assert!(e.contains(part), "{part:?} missing from: {e}");
    }
    let huge = host_loader::DynamicShared {
        bytes: u32::MAX,
        per_thread: u32::MAX,
    };
    assert!(huge.apply("k", cfg((1024, 1, 1), 0)).is_err());
}

#[test]
fn matching_signatures_accepted() {
    check::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd").unwrap();
    check::<(PtrMut<f32>, Struct<Params>)>("scale").unwrap();
    // The record cannot tell `*const` from `*mut`.
    check::<(Ptr<f32>, Struct<Params>)>("scale").unwrap();
    check::<(Struct<Cubic>, Slice<f32>, SliceMut<f32>)>("cubic").unwrap();
    check::<(Slice<f64>, u32, SliceMut<f32>)>("widen").unwrap();
    check::<(Slice<f32>, SliceMut<f32>)>("smem_ends").unwrap();
    check::<()>("empty").unwrap();
    check::<(Struct<Quant>, Slice<i32>, i32, SliceMut<f32>)>("dequantize").unwrap();
    // `[f32; 1]` is an `f32`: same size, same class.
    check::<(Slice<[f32; 1]>, Slice<f32>, SliceMut<f32>)>("vecadd").unwrap();
}

#[test]
fn wrong_size() {
    assert_eq!(
        err::<(Slice<f64>, u64, SliceMut<f32>)>("widen"),
        "tests/data/fixture.ptx:1002: kernel `widen` parameter 1 (`widen_param_1`): the PTX \
         expects 4 bytes aligned to 4 (.u32), the Rust argument `u64` is 8 bytes aligned to 8 \
         (integer); use `u32` or `i32`"
    );
}

#[test]
fn wrong_alignment_16_byte_struct() {
    assert_eq!(
        err::<(Struct<CubicPacked>, Slice<f32>, SliceMut<f32>)>("cubic"),
        "tests/data/fixture.ptx:129: kernel `cubic` parameter 0 (`cubic_param_0`): the PTX \
         expects 32 bytes aligned to 16 (.align 16 .b8 [32]), the Rust argument \
         `Struct<CubicPacked>` is 32 bytes aligned to 4 (aggregate); use a `Struct<T>` with \
         size_of::<T>() = 32 and align_of::<T>() = 16"
    );
}

#[test]
fn swapped_struct_fields() {
    assert_eq!(
        err::<(PtrMut<f32>, Struct<ParamsSwapped>)>("scale"),
        "tests/data/fixture.ptx:425: kernel `scale` parameter 1 (`scale_param_1`): field 0 of \
         the kernel's struct is 4 bytes at byte offset 0, field 0 (`off`) of the Rust argument \
         `Struct<ParamsSwapped>` is 8 bytes at byte offset 0; the two struct definitions \
         differ (fields in another order?)"
    );
    let e = check::<(PtrMut<f32>, Struct<ParamsSwapped>)>("scale").unwrap_err();
    match e {
        Error::AbiMismatch(m) => {
            assert_eq!((m.kernel.as_str(), m.param_index), ("scale", 1));
            assert_eq!(
                m.detail,
                AbiMismatchDetail::Field {
                    index: 0,
                    host_name: "off",
                    device: AbiField {
                        offset: 0,
                        size: 4,
                        class: Unsigned
                    },
                    host: AbiField {
                        offset: 0,
                        size: 8,
                        class: Unsigned
                    },
                }
            );
        }
        other => panic!("{other}"),
    }
}

#[test]
fn array_in_struct_moved_or_resized() {
    assert_eq!(
        err::<(Struct<CubicBiasFirst>, Slice<f32>, SliceMut<f32>)>("cubic"),
        "tests/data/fixture.ptx:129: kernel `cubic` parameter 0 (`cubic_param_0`): field 0 of \
         the kernel's struct is 16 bytes at byte offset 0, field 0 (`bias`) of the Rust \
         argument `Struct<CubicBiasFirst>` is 4 bytes at byte offset 0; the two struct \
         definitions differ (fields in another order?)"
    );
    let d = detail(check::<(Struct<Cubic3>, Slice<f32>, SliceMut<f32>)>("cubic").unwrap_err());
    assert_eq!(
        d,
        AbiMismatchDetail::Field {
            index: 0,
            host_name: "c",
            device: AbiField {
                offset: 0,
                size: 16,
                class: Float
            },
            host: AbiField {
                offset: 0,
                size: 12,
                class: Float
            },
        }
    );
}

#[test]
fn struct_with_other_field_count() {
    assert_eq!(
        err::<(PtrMut<f32>, Struct<ParamsSplit>)>("scale"),
        "tests/data/fixture.ptx:425: kernel `scale` parameter 1 (`scale_param_1`): the \
         kernel's struct has 3 fields, the Rust argument `Struct<ParamsSplit>` has 5; the two \
         struct definitions differ"
    );
}

#[test]
fn same_size_swap_is_refused_by_class() {
    assert_eq!(
        err::<(PtrMut<f32>, Struct<ParamsSameSizeSwap>)>("scale"),
        "tests/data/fixture.ptx:425: kernel `scale` parameter 1 (`scale_param_1`): field 0 of \
         the kernel's struct is a 4-byte unsigned integer at byte offset 0, field 0 (`scale`) \
         of the Rust argument `Struct<ParamsSameSizeSwap>` is a 4-byte float at byte offset 0; \
         field classes differ: unsigned integer vs float (the two struct definitions differ: \
         fields of equal size in another order?)"
    );
    let d = detail(check::<(PtrMut<f32>, Struct<ParamsSameSizeSwap>)>("scale").unwrap_err());
    assert_eq!(
        d,
        AbiMismatchDetail::FieldClass {
            index: 0,
            host_name: "scale",
            device: AbiField {
                offset: 0,
                size: 4,
                class: Unsigned
            },
            host: AbiField {
                offset: 0,
                size: 4,
                class: Float
            },
        }
    );
    // Signed for unsigned, float for signed: field 1 of `Quant` is an `i32`.
    assert_eq!(
        err::<(Struct<QuantUnsigned>, Slice<i32>, i32, SliceMut<f32>)>("dequantize"),
        "tests/data/fixture.ptx:200: kernel `dequantize` parameter 0 (`dequantize_param_0`): \
         field 1 of the kernel's struct is a 4-byte signed integer at byte offset 4, field 1 \
         (`zero`) of the Rust argument `Struct<QuantUnsigned>` is a 4-byte unsigned integer at \
         byte offset 4; field classes differ: signed integer vs unsigned integer (the two \
         struct definitions differ: fields of equal size in another order?)"
    );
    assert!(matches!(
        detail(
            check::<(Struct<QuantFloat>, Slice<i32>, i32, SliceMut<f32>)>("dequantize")
                .unwrap_err()
        ),
        AbiMismatchDetail::FieldClass {
            index: 1,
            device: AbiField { class: Signed, .. },
            host: AbiField { class: Float, .. },
            ..
        }
    ));
}

#[test]
fn element_class_mismatch() {
    // (a) `u32` elements for `f32` ones: the same 4 bytes, read as another type.
    assert_eq!(
        err::<(Slice<u32>, Slice<f32>, SliceMut<f32>)>("vecadd"),
        "tests/data/fixture.ptx:798: kernel `vecadd` parameter 0 (`vecadd_param_0`): the \
         kernel takes a read-only slice of 4-byte float elements, the Rust argument \
         `Slice<u32>` is a read-only slice of 4-byte unsigned integer elements; element \
         classes differ: float vs unsigned integer"
    );
    assert_eq!(
        detail(check::<(Slice<f32>, Slice<f32>, SliceMut<i32>)>("vecadd").unwrap_err()),
        AbiMismatchDetail::ElemClass {
            kind: AbiKind::DisjointSlice,
            size: 4,
            device: Float,
            host: Signed
        }
    );
    // The same for a raw pointer.
    assert_eq!(
        err::<(PtrMut<u32>, Struct<Params>)>("scale"),
        "tests/data/fixture.ptx:425: kernel `scale` parameter 0 (`scale_param_0`): the kernel \
         takes a raw pointer to 4-byte float data, the Rust argument `PtrMut<u32>` is a raw \
         pointer to 4-byte unsigned integer data; pointee classes differ: float vs unsigned \
         integer"
    );
    // (c) `u32` for `i32`: elements and a scalar.
    assert_eq!(
        err::<(Struct<Quant>, Slice<u32>, i32, SliceMut<f32>)>("dequantize"),
        "tests/data/fixture.ptx:200: kernel `dequantize` parameter 1 (`dequantize_param_1`): \
         the kernel takes a read-only slice of 4-byte signed integer elements, the Rust \
         argument `Slice<u32>` is a read-only slice of 4-byte unsigned integer elements; \
         element classes differ: signed integer vs unsigned integer"
    );
    assert_eq!(
        err::<(Struct<Quant>, Slice<i32>, u32, SliceMut<f32>)>("dequantize"),
        "tests/data/fixture.ptx:200: kernel `dequantize` parameter 2 (`dequantize_param_2`): \
         the kernel takes a 4-byte signed integer, the Rust argument `u32` is a 4-byte \
         unsigned integer; classes differ: signed integer vs unsigned integer"
    );
    assert_eq!(
        err::<(Slice<f64>, i32, SliceMut<f32>)>("widen"),
        "tests/data/fixture.ptx:1002: kernel `widen` parameter 1 (`widen_param_1`): the kernel \
         takes a 4-byte unsigned integer, the Rust argument `i32` is a 4-byte signed integer; \
         classes differ: unsigned integer vs signed integer"
    );
    // An 8-byte float element for an 8-byte float: `[f32; 2]` is float data too.
    check::<(Slice<[f32; 2]>, u32, SliceMut<f32>)>("widen").unwrap();
    assert!(matches!(
        detail(check::<(Slice<u64>, u32, SliceMut<f32>)>("widen").unwrap_err()),
        AbiMismatchDetail::ElemClass {
            device: Float,
            host: Unsigned,
            ..
        }
    ));
}

#[test]
fn missing_and_extra_parameter() {
    assert_eq!(
        err::<(Slice<f32>, Slice<f32>)>("vecadd"),
        "tests/data/fixture.ptx:798: kernel `vecadd` takes 3 parameters in the PTX, the Rust \
         signature `(Slice<f32>, Slice<f32>)` has 2"
    );
    assert_eq!(
        err::<(u32,)>("empty"),
        "tests/data/fixture.ptx:266: kernel `empty` takes 0 parameters in the PTX, the Rust \
         signature `(u32,)` has 1"
    );
}

#[test]
fn slice_versus_disjoint_slice() {
    assert_eq!(
        err::<(Slice<f32>, Slice<f32>, Slice<f32>)>("vecadd"),
        "tests/data/fixture.ptx:798: kernel `vecadd` parameter 2 (`vecadd_param_2`): the \
         kernel takes a writable slice (`DisjointSlice<T>` / `&mut [T]`), the Rust argument \
         `Slice<f32>` is a read-only slice (`&[T]`); use `SliceMut<T>`"
    );
    assert_eq!(
        err::<(SliceMut<f32>, Slice<f32>, SliceMut<f32>)>("vecadd"),
        "tests/data/fixture.ptx:798: kernel `vecadd` parameter 0 (`vecadd_param_0`): the \
         kernel takes a read-only slice (`&[T]`), the Rust argument `SliceMut<f32>` is a \
         writable slice (`DisjointSlice<T>` / `&mut [T]`); use `Slice<T>`"
    );
}

#[test]
fn slice_versus_raw_pointer_and_struct() {
    // The PTX refuses a slice for a pointer (different size).
    assert_eq!(
        err::<(Slice<f32>, Struct<Params>)>("scale"),
        "tests/data/fixture.ptx:425: kernel `scale` parameter 0 (`scale_param_0`): the PTX \
         expects 8 bytes aligned to 8 (.u64 .ptr .align 1), the Rust argument `Slice<f32>` is \
         16 bytes aligned to 8 (aggregate); use `Ptr<T>` or `PtrMut<T>` (the kernel takes a \
         raw pointer, not a slice)"
    );
    // A 16-byte struct where the kernel takes a slice: the PTX cannot tell, the record can.
    assert_eq!(
        err::<(Struct<Params>, Slice<f32>, SliceMut<f32>)>("vecadd"),
        "tests/data/fixture.ptx:798: kernel `vecadd` parameter 0 (`vecadd_param_0`): the \
         kernel takes a read-only slice (`&[T]`), the Rust argument `Struct<Params>` is a \
         struct by value; use `Slice<T>`"
    );
    assert_eq!(
        detail(check::<(PtrMut<f32>, Slice<f32>)>("scale").unwrap_err()),
        AbiMismatchDetail::Kind {
            device: AbiKind::Struct,
            host: AbiKind::Slice
        }
    );
}

#[test]
fn element_type_mismatch() {
    assert_eq!(
        err::<(Slice<f32>, u32, SliceMut<f32>)>("widen"),
        "tests/data/fixture.ptx:1002: kernel `widen` parameter 0 (`widen_param_0`): the \
         kernel's element type is 8 bytes, the element type of the Rust argument `Slice<f32>` \
         is 4 bytes"
    );
    assert_eq!(
        detail(check::<(PtrMut<f64>, Struct<Params>)>("scale").unwrap_err()),
        AbiMismatchDetail::ElemSize { device: 4, host: 8 }
    );
    assert_eq!(
        detail(check::<(Slice<f32>, Slice<f32>, SliceMut<u16>)>("vecadd").unwrap_err()),
        AbiMismatchDetail::ElemSize { device: 4, host: 2 }
    );
}

#[test]
fn without_a_record_only_the_ptx_is_checked() {
    // The same `.entry` without its record: the PTX-only verdict accepts what only the
    // record refuses.
    let sigs = parsed();
    let vecadd = sigs.get("vecadd").unwrap();
    check_signature::<(Slice<f32>, Slice<f32>, Slice<f64>)>(vecadd).unwrap();
    let bare = Signatures::new(NAME, sigs.entries().to_vec());
    assert!(bare.record("vecadd").unwrap().is_none());
    bare.check::<(Slice<f32>, Slice<f32>, Slice<f64>)>("vecadd")
        .unwrap();
    bare.check::<(PtrMut<f32>, Struct<ParamsSwapped>)>("scale")
        .unwrap();
    // With the record given back, refused again.
    let record = sigs.record("vecadd").unwrap().unwrap().clone();
    let e =
        check_signature_with_record::<(Slice<f32>, Slice<f32>, Slice<f64>)>(NAME, vecadd, &record)
            .unwrap_err();
    assert!(matches!(e, Error::AbiMismatch(_)), "{e}");
    bare.with_record("vecadd", record)
        .check::<(Slice<f32>, Slice<f32>, Slice<f64>)>("vecadd")
        .unwrap_err();
}

#[test]
fn stale_or_broken_records_are_errors() {
    let sigs = parsed();
    let mut record = sigs.record("vecadd").unwrap().unwrap().clone();
    record.params.pop();
    let e = Signatures::new(NAME, sigs.entries().to_vec())
        .with_record("vecadd", record)
        .check::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "tests/data/fixture.ptx: the ABI record of kernel `vecadd` (`__kernel_abi_vecadd`) \
         lists 2 parameters, the PTX `.entry` has 3; the record is stale"
    );
    let mut record = sigs.record("widen").unwrap().unwrap().clone();
    record.params[1].size = 8;
    let e = Signatures::new(NAME, sigs.entries().to_vec())
        .with_record("widen", record)
        .check::<(Slice<f64>, u32, SliceMut<f32>)>("widen")
        .unwrap_err();
    assert!(
        matches!(
            &e,
            Error::AbiRecord {
                problem: AbiRecordProblem::ParamLayout {
                    param: 1,
                    record_size: 8,
                    ptx_size: 4,
                    ..
                },
                ..
            }
        ),
        "{e}"
    );

    // A garbage record in the PTX: reading the module works, checking that kernel fails.
    let empty_v2 = "__kernel_abi_empty[12] = {73, 66, 65, 75, 2}";
    assert!(FIXTURE.contains(empty_v2));
    let broken = FIXTURE.replace(empty_v2, "__kernel_abi_empty[12] = {73, 66, 65, 75, 7}");
    let sigs = Signatures::parse(NAME, &broken).unwrap();
    sigs.check::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")
        .unwrap();
    assert_eq!(
        sigs.check::<()>("empty").unwrap_err().to_string(),
        "tests/data/fixture.ptx: the ABI record of kernel `empty` (`__kernel_abi_empty`) has \
         version 7; this host-loader reads ABI record version 2 only; rebuild the kernels with \
         the device-std that matches this host-loader"
    );
    // A version 1 record (before value classes), as the previous device-std wrote it.
    let v1 = FIXTURE.replace(empty_v2, "__kernel_abi_empty[12] = {73, 66, 65, 75, 1}");
    let e = Signatures::parse(NAME, &v1)
        .unwrap()
        .check::<()>("empty")
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "tests/data/fixture.ptx: the ABI record of kernel `empty` (`__kernel_abi_empty`) has \
         version 1; this host-loader reads ABI record version 2 only (older records carry no \
         value classes); rebuild the kernels with the device-std that matches this host-loader"
    );
    assert!(
        matches!(
            &e,
            Error::AbiRecord {
                kernel,
                problem: AbiRecordProblem::UnsupportedVersion { found: 1 },
                ..
            } if kernel == "empty"
        ),
        "{e:?}"
    );
    let truncated = FIXTURE.replace(empty_v2, "__kernel_abi_empty[6] = {73, 66, 65, 75, 2}");
    assert_eq!(
        Signatures::parse(NAME, &truncated)
            .unwrap()
            .check::<()>("empty")
            .unwrap_err()
            .to_string(),
        "tests/data/fixture.ptx: the ABI record of kernel `empty` (`__kernel_abi_empty`) is \
         malformed: the record is 6 bytes long, not a whole number of 4-byte words"
    );
    assert_eq!(
        AbiRecordProblem::from(AbiRecordError::NotWords { len: 6 }),
        AbiRecordProblem::Malformed(AbiRecordError::NotWords { len: 6 })
    );
}

#[test]
fn hand_built_record_round_trip() {
    // The record bytes exactly as the PTX holds them, parsed directly.
    let bytes: Vec<u8> = [0x4B41_4249u32, 2, 1, 3, 16, 8, 4, 3, 0]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    let r = AbiRecord::parse(&bytes).unwrap();
    assert_eq!(r.params[0].kind, AbiKind::Slice);
    assert_eq!(r.params[0].elem_class, Float);
}

/// The declared dynamic shared memory (`#[kernel(dynamic_shared_per_thread = 8)]` on
/// `smem_declared`) reaches the link map, and the map and the PTX agree on every kernel.
#[test]
fn declared_dynamic_shared_in_the_map_and_the_ptx() {
    assert_eq!(
        device_std::abi::DYNAMIC_SHARED_PREFIX,
        ptx_linker::DYNAMIC_SHARED_PREFIX
    );
    let map: ptx_linker::LinkMap = serde_json::from_str(FIXTURE_MAP).unwrap();
    let (parsed, mapped) = (parsed(), mapped());
    let mut declared = Vec::new();
    for k in &map.kernels {
        let want = k.dynamic_shared.map(host_loader::DynamicShared::from);
        assert_eq!(parsed.dynamic_shared(&k.name).unwrap(), want, "{}", k.name);
        assert_eq!(mapped.dynamic_shared(&k.name).unwrap(), want, "{}", k.name);
        if want.is_some() {
            declared.push(k.name.as_str());
        }
    }
    assert_eq!(declared, ["smem_declared"]);
}
