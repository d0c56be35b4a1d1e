//! `#[kernel(slice_align = N)]` on the host: the constant the macro emits, and the
//! emulator refusing a non-empty slice that does not start at a multiple of `N` bytes
//! (as `host_loader` does on the GPU) for plain, `unsafe`, optional-slice and generic
//! kernels, while letting empty slices and aligned ones through.
//!
//! Needs the `emulator` feature (`cargo test -p device-std --features emulator`).
#![cfg(feature = "emulator")]

use device_std::emulator::{self, EmulatorError, GlobalMut, LaunchConfig};
use device_std::{kernel, thread, DisjointSlice, PlainData};

/// `out[i] = x[i] + 1`.
#[kernel(dims = 1, slice_align = 16)]
pub fn add_one(x: &[f32], mut out: DisjointSlice<f32>) {
    let i = thread::index_1d();
    let k = i.get();
    if let (Some(o), Some(v)) = (out.get_mut(&i), x.get(k)) {
        *o = v + 1.0;
    }
}

/// `out[i] = x[i]` when `x` is given, else 0.
#[kernel(slice_align = 8)]
pub unsafe fn copy_or_zero(x: Option<&[f64]>, mut out: DisjointSlice<f64>) {
    let i = thread::index_1d();
    let k = i.get();
    let v = x.and_then(|x| x.get(k).copied()).unwrap_or(0.0);
    if let Some(o) = out.get_mut(&i) {
        *o = v;
    }
}

/// `out[i] = x[i]`, one instance per element type.
#[kernel(slice_align = 16, instances(copy_f32 = <f32>, copy_u32 = <u32>))]
pub fn copy<T: PlainData + Copy>(x: &[T], mut out: DisjointSlice<T>) {
    let i = thread::index_1d();
    let k = i.get();
    if let (Some(o), Some(v)) = (out.get_mut(&i), x.get(k)) {
        *o = *v;
    }
}

#[repr(C, align(16))]
struct Aligned<T>([T; 32]);

fn refused<T>(got: Result<T, EmulatorError>, what: &str) -> String {
    match got {
        Err(EmulatorError::InvalidLaunch(m)) => m,
        Err(e) => panic!("{what}: {e:?}"),
        Ok(_) => panic!("{what}: ran"),
    }
}

#[test]
fn the_macro_emits_the_alignment() {
    assert_eq!(__KERNEL_SLICE_ALIGN_add_one, [16]);
    assert_eq!(__KERNEL_SLICE_ALIGN_copy_or_zero, [8]);
    assert_eq!(__KERNEL_SLICE_ALIGN_copy_f32, [16]);
    assert_eq!(__KERNEL_SLICE_ALIGN_copy_u32, [16]);
}

#[test]
fn aligned_and_empty_slices_run_misaligned_ones_are_refused() {
    let cfg = LaunchConfig::new((1, 1, 1), (32, 1, 1));
    let x = Aligned(core::array::from_fn(|k| k as f32));
    let mut out = Aligned([f32::NAN; 32]);
    let o = GlobalMut::new(&mut out.0[..8]);
    emulator::launch(cfg, || add_one(&x.0[4..12], o.disjoint())).unwrap();
    assert_eq!(
        out.0[..8],
        core::array::from_fn::<f32, 8, _>(|k| k as f32 + 5.0)
    );
    // Empty slices pass wherever they point.
    let o = GlobalMut::new(&mut out.0[1..1]);
    emulator::launch(cfg, || add_one(&x.0[3..3], o.disjoint())).unwrap();
    // A misaligned input, then a misaligned output: refused, the output untouched.
    let mut out = Aligned([f32::NAN; 32]);
    let o = GlobalMut::new(&mut out.0[..8]);
    let m = refused(
        emulator::launch(cfg, || add_one(&x.0[1..9], o.disjoint())),
        "x + 4 bytes",
    );
    assert!(m.contains("parameter 0 (`x`) of kernel `add_one`"), "{m}");
    assert!(m.contains("slice_align = 16"), "{m}");
    let o = GlobalMut::new(&mut out.0[2..10]);
    let m = refused(
        emulator::launch(cfg, || add_one(&x.0[..8], o.disjoint())),
        "out + 8 bytes",
    );
    assert!(m.contains("parameter 1 (`out`)"), "{m}");
    assert!(out.0.iter().all(|v| v.is_nan()), "a refused launch wrote");
}

#[test]
fn unsafe_optional_and_generic_kernels_are_checked_too() {
    let cfg = LaunchConfig::new((1, 1, 1), (8, 1, 1));
    let x = Aligned(core::array::from_fn(|k| k as f64));
    let mut out = Aligned([f64::NAN; 32]);
    let o = GlobalMut::new(&mut out.0[1..9]);
    // 8-byte alignment: every f64 element start passes.
    unsafe { emulator::launch(cfg, || copy_or_zero(Some(&x.0[3..11]), o.disjoint())) }.unwrap();
    assert_eq!(
        out.0[1..9],
        core::array::from_fn::<f64, 8, _>(|k| (k + 3) as f64)
    );
    let o = GlobalMut::new(&mut out.0[..8]);
    unsafe { emulator::launch(cfg, || copy_or_zero(None, o.disjoint())) }.unwrap();
    assert_eq!(out.0[..8], [0.0; 8]);
    let xs = Aligned(core::array::from_fn(|k| k as u32));
    let mut ys = Aligned([u32::MAX; 32]);
    let o = GlobalMut::new(&mut ys.0[..8]);
    let m = refused(
        emulator::launch(cfg, || copy_u32(&xs.0[2..10], o.disjoint())),
        "u32 + 8",
    );
    assert!(m.contains("kernel `copy_u32`"), "{m}");
    let o = GlobalMut::new(&mut ys.0[..8]);
    emulator::launch(cfg, || copy_u32(&xs.0[4..12], o.disjoint())).unwrap();
    assert_eq!(
        ys.0[..8],
        core::array::from_fn::<u32, 8, _>(|k| k as u32 + 4)
    );
}
