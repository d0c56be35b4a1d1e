//! PTX text → signatures (through `ptx_linker::entry_signatures`) → verdict. No GPU.
//!
//! `data/probe.ptx` is verbatim rustc nightly output for `data/probe.rs`.

use bytemuck::{Pod, Zeroable};
use host_loader::{
    Error, ParamKind, ParamLayout, Ptr, PtrMut, Signatures, Slice, SliceMut, Struct,
};

const PROBE: &str = include_str!("data/probe.ptx");
const PROBE_NAME: &str = "tests/data/probe.ptx";

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, device_std::KernelStruct)]
struct P {
    n: u32,
    scale: f32,
    off: u64,
}

#[repr(C, align(16))]
#[derive(Clone, Copy, Pod, Zeroable, device_std::KernelStruct)]
struct R {
    a: u32,
    pad: [u32; 3],
}

fn probe() -> Signatures {
    Signatures::parse(PROBE_NAME, PROBE).expect("probe.ptx parses")
}

#[test]
fn probe_signatures_read() {
    let sigs = probe();
    let names: Vec<&str> = sigs.entries().iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["probe", "scale", "vecadd"]);
    let vecadd = sigs.get("vecadd").unwrap();
    assert_eq!(vecadd.line, 221);
    assert_eq!(vecadd.params.len(), 3);
    assert_eq!(
        ParamLayout::from_ptx(&vecadd.params[0]),
        ParamLayout::aggregate(16, 8)
    );
    let probe = sigs.get("probe").unwrap();
    assert_eq!(probe.params.len(), 19);
    assert!(matches!(probe.params[10].kind, ParamKind::Pointer { .. }));
    assert_eq!(
        ParamLayout::from_ptx(&probe.params[16]),
        ParamLayout::aggregate(16, 16)
    );
}

#[test]
fn vecadd_from_ptx_accepted() {
    probe()
        .check::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")
        .unwrap();
}

#[test]
fn scale_from_ptx_accepted() {
    probe().check::<(PtrMut<f32>, Struct<P>)>("scale").unwrap();
}

#[test]
fn probe_scalars_from_ptx() {
    // The probe kernel's 19 parameters don't fit a 12-tuple; check them as layouts.
    let sigs = probe();
    let entry = sigs.get("probe").unwrap();
    use host_loader::KernelParam as K;
    let layouts = [
        <u8 as K>::LAYOUT,
        <u16 as K>::LAYOUT,
        <i32 as K>::LAYOUT,
        <u32 as K>::LAYOUT,
        <f32 as K>::LAYOUT,
        <f64 as K>::LAYOUT,
        <u64 as K>::LAYOUT,
        <i64 as K>::LAYOUT,
        <usize as K>::LAYOUT,
        <bool as K>::LAYOUT,
        <Ptr<f32> as K>::LAYOUT,
        <PtrMut<f64> as K>::LAYOUT,
        <Slice<u32> as K>::LAYOUT,
        <SliceMut<f32> as K>::LAYOUT,
        <Struct<P> as K>::LAYOUT,
        ParamLayout::aggregate(4, 2), // `Q { a: u8, b: u16 }` has padding, so it is not Pod
        <Struct<R> as K>::LAYOUT,
        <i8 as K>::LAYOUT,
        <i16 as K>::LAYOUT,
    ];
    host_loader::verify_layouts(entry, &layouts).unwrap();
}

#[test]
fn count_checked_before_layouts_from_ptx() {
    let sigs = probe();
    // probe_param_6 is `g: u64`.
    let err = host_loader::verify_layouts(
        sigs.get("probe").unwrap(),
        &[
            ParamLayout::int(1),
            ParamLayout::int(2),
            ParamLayout::int(4),
            ParamLayout::int(4),
            ParamLayout::float(4),
            ParamLayout::float(8),
            ParamLayout::int(4),
        ],
    )
    .unwrap_err();
    // Count is checked first.
    assert!(
        matches!(
            err,
            Error::ArgCount {
                expected: 19,
                found: 7,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn mismatches_from_ptx_exact_text() {
    let sigs = probe();
    let err = sigs
        .check::<(Slice<f32>, Slice<f32>, Ptr<f32>)>("vecadd")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tests/data/probe.ptx:221: kernel `vecadd` parameter 2 (`vecadd_param_2`): the PTX \
         expects 16 bytes aligned to 8 (.align 8 .b8 [16]), the Rust argument `Ptr<f32>` is 8 \
         bytes aligned to 8 (device pointer); use `Slice<T>` (`&[T]`), `SliceMut<T>` \
         (`DisjointSlice<T>`, `&mut [T]`), or a `Struct<T>` with a `T` of 16 bytes aligned \
         to 8"
    );
    let err = sigs.check::<(Slice<f32>, Struct<P>)>("scale").unwrap_err();
    assert_eq!(
        err.to_string(),
        "tests/data/probe.ptx:191: kernel `scale` parameter 0 (`scale_param_0`): the PTX \
         expects 8 bytes aligned to 8 (.u64 .ptr .align 1), the Rust argument `Slice<f32>` is \
         16 bytes aligned to 8 (aggregate); use `Ptr<T>` or `PtrMut<T>` (the kernel takes a \
         raw pointer, not a slice)"
    );
    let err = sigs.check::<(PtrMut<f32>,)>("scale").unwrap_err();
    assert!(
        matches!(
            err,
            Error::ArgCount {
                expected: 2,
                found: 1,
                ..
            }
        ),
        "{err}"
    );
    let err = sigs.check::<()>("nope").unwrap_err();
    assert_eq!(
        err.to_string(),
        "module `tests/data/probe.ptx` has no kernel `nope`; its kernels are: probe, scale, \
         vecadd"
    );
}

#[test]
fn malformed_ptx_is_an_error() {
    let err = Signatures::parse("bad.ptx", ".version 7.8\n.target sm_90\n.entry k(\n").unwrap_err();
    assert!(matches!(err, Error::Parse(_)), "{err:?}");
}
