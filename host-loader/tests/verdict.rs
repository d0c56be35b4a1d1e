//! The layout verdict on hand-built `.entry` signatures: no GPU, no PTX parser.

use bytemuck::{Pod, Zeroable};
use host_loader::{
    check_signature, verify_layouts, EntrySignature, Error, KernelParam, LayoutMismatch, Param,
    ParamKind, ParamLayout, Ptr, PtrMut, Signatures, Slice, SliceMut, Struct,
};

/// The struct from TOOLCHAIN.md: `.param .align 8 .b8 NAME[16]`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable, device_std::KernelStruct)]
struct ScaleParams {
    n: u32,
    scale: f32,
    off: u64,
}

/// 12 bytes aligned to 4: the wrong size for a `[16]` aggregate.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable, device_std::KernelStruct)]
struct Three {
    a: u32,
    b: u32,
    c: u32,
}

/// 16 bytes aligned to 4: the right size, the wrong alignment for `.align 8 .b8 [16]`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable, device_std::KernelStruct)]
struct Quad {
    v: [u32; 4],
}

/// 16 bytes aligned to 16 (`.align 16 .b8 [16]`).
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, Pod, Zeroable, device_std::KernelStruct)]
struct Aligned16 {
    v: [u32; 4],
}

fn scalar(name: &str, ty: &str, size: u32) -> Param {
    Param {
        name: name.into(),
        kind: ParamKind::Scalar { ty: ty.into() },
        size,
        align: size,
    }
}

fn pointer(name: &str) -> Param {
    Param {
        name: name.into(),
        kind: ParamKind::Pointer {
            space: None,
            pointee_align: 1,
        },
        size: 8,
        align: 8,
    }
}

fn aggregate(name: &str, size: u32, align: u32) -> Param {
    Param {
        name: name.into(),
        kind: ParamKind::Aggregate { elem: "b8".into() },
        size,
        align,
    }
}

fn entry(name: &str, line: u32, params: Vec<Param>) -> EntrySignature {
    EntrySignature {
        name: name.into(),
        line,
        params,
    }
}

/// `vecadd(a: &[f32], b: &[f32], c: DisjointSlice<f32>)` as rustc emits it.
fn vecadd() -> EntrySignature {
    entry(
        "vecadd",
        12,
        (0..3)
            .map(|i| aggregate(&format!("vecadd_param_{i}"), 16, 8))
            .collect(),
    )
}

fn mismatch(e: Error) -> LayoutMismatch {
    match e {
        Error::LayoutMismatch(m) => *m,
        other => panic!("expected a layout mismatch, got {other:?}"),
    }
}

#[test]
fn vecadd_accepted() {
    check_signature::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>(&vecadd()).unwrap();
    // Element types are not visible in PTX; any slice of any T has the same layout.
    check_signature::<(Slice<u8>, Slice<f64>, SliceMut<i32>)>(&vecadd()).unwrap();
}

#[test]
fn repr_c_struct_accepted() {
    let e = entry(
        "scale",
        3,
        vec![pointer("scale_param_0"), aggregate("scale_param_1", 16, 8)],
    );
    check_signature::<(PtrMut<f32>, Struct<ScaleParams>)>(&e).unwrap();
    let e = entry("a16", 3, vec![aggregate("a16_param_0", 16, 16)]);
    check_signature::<(Struct<Aligned16>,)>(&e).unwrap();
    assert_eq!(
        <Struct<ScaleParams> as KernelParam>::LAYOUT,
        ParamLayout::aggregate(16, 8)
    );
}

#[test]
fn u32_where_ptx_has_u64_exact_text() {
    let e = entry(
        "vecadd",
        12,
        vec![
            aggregate("vecadd_param_0", 16, 8),
            aggregate("vecadd_param_1", 16, 8),
            scalar("vecadd_param_2", "u64", 8),
        ],
    );
    let err = check_signature::<(Slice<f32>, Slice<f32>, u32)>(&e).unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 12: kernel `vecadd` parameter 2 (`vecadd_param_2`): the PTX expects 8 bytes \
         aligned to 8 (.u64), the Rust argument `u32` is 4 bytes aligned to 4 (integer); use \
         `u64`, `i64` or `usize`"
    );
    let m = mismatch(err);
    assert_eq!(m.param_index, 2);
    assert_eq!(m.param_name, "vecadd_param_2");
    assert_eq!(m.expected, ParamLayout::int(8));
    assert_eq!(m.found, ParamLayout::int(4));
    assert_eq!(m.rust_type, "u32");
    assert_eq!(m.ptx_decl, ".u64");
}

#[test]
fn one_byte_is_singular_in_messages() {
    // `.u8` against a `u16`, and the reverse: "1 byte", not "1 bytes".
    let e = entry("flag", 3, vec![scalar("flag_param_0", "u8", 1)]);
    assert_eq!(
        check_signature::<(u16,)>(&e).unwrap_err().to_string(),
        "line 3: kernel `flag` parameter 0 (`flag_param_0`): the PTX expects 1 byte aligned \
         to 1 (.u8), the Rust argument `u16` is 2 bytes aligned to 2 (integer); use `u8`, \
         `i8` or `bool`"
    );
    let e = entry("wide", 4, vec![scalar("wide_param_0", "u16", 2)]);
    assert_eq!(
        check_signature::<(u8,)>(&e).unwrap_err().to_string(),
        "line 4: kernel `wide` parameter 0 (`wide_param_0`): the PTX expects 2 bytes aligned \
         to 2 (.u16), the Rust argument `u8` is 1 byte aligned to 1 (integer); use `u16` or \
         `i16`"
    );
    // Without a record, a host `bool` is a 1-byte integer (CUDA C++'s `bool` is `.u8`).
    let e = entry("cuda_bool", 5, vec![scalar("cuda_bool_param_0", "u8", 1)]);
    check_signature::<(bool,)>(&e).unwrap();
}

#[test]
fn f32_where_ptx_has_f64() {
    let e = entry("k", 1, vec![scalar("k_param_0", "f64", 8)]);
    let m = mismatch(check_signature::<(f32,)>(&e).unwrap_err());
    assert_eq!(m.expected, ParamLayout::float(8));
    assert_eq!(m.found, ParamLayout::float(4));
    assert_eq!(m.rust_type, "f32");
    check_signature::<(f64,)>(&e).unwrap();
    // Same size, wrong class: an 8-byte integer is not a double.
    let m = mismatch(check_signature::<(u64,)>(&e).unwrap_err());
    assert_eq!(m.found, ParamLayout::int(8));
}

#[test]
fn float_and_int_are_distinct_but_bits_take_both() {
    let f = entry("k", 1, vec![scalar("k_param_0", "f32", 4)]);
    assert!(check_signature::<(u32,)>(&f).is_err());
    assert!(check_signature::<(i32,)>(&f).is_err());
    let u = entry("k", 1, vec![scalar("k_param_0", "u32", 4)]);
    assert!(check_signature::<(f32,)>(&u).is_err());
    check_signature::<(i32,)>(&u).unwrap();
    let b = entry("k", 1, vec![scalar("k_param_0", "b32", 4)]);
    check_signature::<(u32,)>(&b).unwrap();
    check_signature::<(f32,)>(&b).unwrap();
    let s = entry("k", 1, vec![scalar("k_param_0", "s64", 8)]);
    check_signature::<(i64,)>(&s).unwrap();
    check_signature::<(usize,)>(&s).unwrap();
    let byte = entry("k", 1, vec![scalar("k_param_0", "u8", 1)]);
    check_signature::<(bool,)>(&byte).unwrap();
    check_signature::<(u8,)>(&byte).unwrap();
    assert!(check_signature::<(u16,)>(&byte).is_err());
}

#[test]
fn struct_of_wrong_size_exact_text() {
    let e = entry(
        "scale",
        40,
        vec![pointer("scale_param_0"), aggregate("scale_param_1", 16, 8)],
    );
    let err = check_signature::<(PtrMut<f32>, Struct<Three>)>(&e).unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 40: kernel `scale` parameter 1 (`scale_param_1`): the PTX expects 16 bytes \
         aligned to 8 (.align 8 .b8 [16]), the Rust argument `Struct<Three>` is 12 bytes aligned to 4 \
         (aggregate); use `Slice<T>` (`&[T]`), `SliceMut<T>` (`DisjointSlice<T>`, \
         `&mut [T]`), or a `Struct<T>` with a `T` of 16 bytes aligned to 8"
    );
}

#[test]
fn struct_of_wrong_alignment() {
    let e = entry("scale", 40, vec![aggregate("scale_param_0", 16, 8)]);
    let m = mismatch(check_signature::<(Struct<Quad>,)>(&e).unwrap_err());
    assert_eq!(m.expected, ParamLayout::aggregate(16, 8));
    assert_eq!(m.found, ParamLayout::aggregate(16, 4));
    assert_eq!(m.rust_type, "Struct<Quad>");
    let e = entry("a16", 3, vec![aggregate("a16_param_0", 16, 16)]);
    let m = mismatch(check_signature::<(Struct<ScaleParams>,)>(&e).unwrap_err());
    assert_eq!(m.found, ParamLayout::aggregate(16, 8));
    assert!(
        m.to_string()
            .contains("with size_of::<T>() = 16 and align_of::<T>() = 16"),
        "{m}"
    );
}

#[test]
fn missing_parameter_exact_text() {
    let err = check_signature::<(Slice<f32>, Slice<f32>)>(&vecadd()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 12: kernel `vecadd` takes 3 parameters in the PTX, the Rust signature \
         `(Slice<f32>, Slice<f32>)` has 2"
    );
    match err {
        Error::ArgCount {
            kernel,
            expected,
            found,
            ..
        } => {
            assert_eq!(kernel, "vecadd");
            assert_eq!((expected, found), (3, 2));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn extra_parameter() {
    let err =
        check_signature::<(Slice<f32>, Slice<f32>, SliceMut<f32>, u32)>(&vecadd()).unwrap_err();
    assert!(matches!(
        err,
        Error::ArgCount {
            expected: 3,
            found: 4,
            ..
        }
    ));
    let one = entry("one", 5, vec![scalar("one_param_0", "u32", 4)]);
    assert_eq!(
        check_signature::<(u32, u32)>(&one).unwrap_err().to_string(),
        "line 5: kernel `one` takes 1 parameter in the PTX, the Rust signature `(u32, u32)` \
         has 2"
    );
    let none = entry("none", 5, vec![]);
    check_signature::<()>(&none).unwrap();
    assert_eq!(
        check_signature::<(f32,)>(&none).unwrap_err().to_string(),
        "line 5: kernel `none` takes 0 parameters in the PTX, the Rust signature `(f32,)` has 1"
    );
}

#[test]
fn slice_where_pointer_expected_and_back() {
    let p = entry("k", 7, vec![pointer("k_param_0")]);
    let err = check_signature::<(Slice<f32>,)>(&p).unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 7: kernel `k` parameter 0 (`k_param_0`): the PTX expects 8 bytes aligned to 8 \
         (.u64 .ptr .align 1), the Rust argument `Slice<f32>` is 16 bytes aligned to 8 \
         (aggregate); use `Ptr<T>` or `PtrMut<T>` (the kernel takes a raw pointer, not a \
         slice)"
    );
    check_signature::<(Ptr<f32>,)>(&p).unwrap();
    check_signature::<(PtrMut<f32>,)>(&p).unwrap();

    let s = entry("k", 7, vec![aggregate("k_param_0", 16, 8)]);
    let m = mismatch(check_signature::<(Ptr<f32>,)>(&s).unwrap_err());
    assert_eq!(m.found, ParamLayout::pointer());
    assert_eq!(m.rust_type, "Ptr<f32>");
    assert!(check_signature::<(PtrMut<f32>,)>(&s).is_err());
}

#[test]
fn pointer_and_u64_are_distinct() {
    let p = entry("k", 7, vec![pointer("k_param_0")]);
    let m = mismatch(check_signature::<(u64,)>(&p).unwrap_err());
    assert_eq!(m.expected, ParamLayout::pointer());
    assert_eq!(m.found, ParamLayout::int(8));
    let u = entry("k", 7, vec![scalar("k_param_0", "u64", 8)]);
    let m = mismatch(check_signature::<(Ptr<u8>,)>(&u).unwrap_err());
    assert_eq!(
        m.to_string(),
        "line 7: kernel `k` parameter 0 (`k_param_0`): the PTX expects 8 bytes aligned to 8 \
         (.u64), the Rust argument `Ptr<u8>` is 8 bytes aligned to 8 (device pointer); use \
         `u64`, `i64` or `usize`"
    );
}

#[test]
fn first_mismatch_is_reported() {
    let e = entry(
        "k",
        2,
        vec![
            scalar("k_param_0", "u32", 4),
            scalar("k_param_1", "f32", 4),
            scalar("k_param_2", "u64", 8),
        ],
    );
    let m = mismatch(check_signature::<(u32, u32, u32)>(&e).unwrap_err());
    assert_eq!(m.param_index, 1);
    check_signature::<(u32, f32, u64)>(&e).unwrap();
}

#[test]
fn twelve_parameters() {
    let e = entry(
        "big",
        1,
        (0..12)
            .map(|i| scalar(&format!("big_param_{i}"), "u32", 4))
            .collect(),
    );
    check_signature::<(u32, u32, u32, u32, u32, u32, u32, u32, u32, u32, u32, i32)>(&e).unwrap();
    let m = mismatch(
        check_signature::<(u32, u32, u32, u32, u32, u32, u32, u32, u32, u32, u32, f32)>(&e)
            .unwrap_err(),
    );
    assert_eq!(m.param_index, 11);
}

#[test]
fn opaque_ptx_types_match_nothing() {
    let e = entry("t", 1, vec![scalar("t_param_0", "texref", 8)]);
    let m = mismatch(check_signature::<(u64,)>(&e).unwrap_err());
    assert!(
        m.to_string()
            .contains("use nothing: host-loader has no Rust type"),
        "{m}"
    );
}

#[test]
fn verify_layouts_by_value() {
    verify_layouts(
        &vecadd(),
        &[
            ParamLayout::aggregate(16, 8),
            ParamLayout::aggregate(16, 8),
            ParamLayout::aggregate(16, 8),
        ],
    )
    .unwrap();
    let m = mismatch(
        verify_layouts(
            &vecadd(),
            &[
                ParamLayout::aggregate(16, 8),
                ParamLayout::pointer(),
                ParamLayout::aggregate(16, 8),
            ],
        )
        .unwrap_err(),
    );
    assert_eq!(m.param_index, 1);
    assert_eq!(m.rust_type, "device pointer");
}

#[test]
fn signatures_name_module_and_line() {
    let sigs = Signatures::new("target/ptx/vecadd.ptx", vec![vecadd()]);
    let e = sigs
        .check::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")
        .unwrap();
    assert_eq!(e.line, 12);
    let err = sigs
        .check::<(Slice<f32>, Slice<f32>, Ptr<f32>)>("vecadd")
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("target/ptx/vecadd.ptx:12: kernel `vecadd` parameter 2"),
        "{err}"
    );
    assert_eq!(
        sigs.get("vecad").unwrap_err().to_string(),
        "module `target/ptx/vecadd.ptx` has no kernel `vecad`; its kernels are: vecadd"
    );
    assert_eq!(
        Signatures::new("empty.ptx", vec![])
            .get("x")
            .unwrap_err()
            .to_string(),
        "module `empty.ptx` has no kernel `x`; its kernels are: (none)"
    );
}
