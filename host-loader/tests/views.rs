//! Launching on part of a buffer (issue 31, point 10): a `Slice`/`SliceMut` argument is
//! anything cudarc's `DevicePtr`/`DevicePtrMut` covers, so a view (`buf.slice(a..b)`,
//! `buf.slice_mut(a..b)`) is an argument, CUDA's `kernel(d_data + offset, ...)`, and the
//! kernel's slice is the view: its address and its length.
//!
//! `gpu_views_are_kernel_arguments` needs a CUDA GPU and is `#[ignore]`d; run it with
//! `cargo test -p host-loader --test views -- --ignored`.

use cudarc::driver::{CudaSlice, CudaStream};
use host_loader::{
    for_num_elems, include_ptx, open_device, EmbeddedPtx, Kernel, LaunchConfig, Module, Slice,
    SliceMut,
};

static FIXTURE: EmbeddedPtx = include_ptx!("fixture", dir = "tests/data");

/// Compiles only if views are launch arguments: the type-level half of the test.
#[allow(dead_code)]
unsafe fn views_type_check(
    k: &Kernel<(Slice<f32>, Slice<f32>, SliceMut<f32>)>,
    stream: &CudaStream,
    cfg: LaunchConfig,
    a: &CudaSlice<f32>,
    c: &mut CudaSlice<f32>,
) -> Result<(), host_loader::Error> {
    // SAFETY: never called.
    unsafe { k.launch(stream, cfg, (&a.slice(1..), a, &mut c.slice_mut(2..))) }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_views_are_kernel_arguments() {
    let (ctx, stream) = open_device(0).unwrap();
    let m = Module::from_embedded(&ctx, &FIXTURE).unwrap();
    let vecadd = m
        .kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")
        .unwrap();
    let n = 5000usize;
    let xs: Vec<f32> = (0..n).map(|i| (i as f32).sin()).collect();
    let ys: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).cos()).collect();
    let a = stream.clone_htod(&xs).unwrap();
    let b = stream.clone_htod(&ys).unwrap();
    let mut c = stream.clone_htod(&vec![f32::NAN; n]).unwrap();
    // c[100..1100] = a[300..1300] + b[0..1000]; the kernel sees 1000-element slices, so
    // a grid of 1024 threads writes exactly the view.
    let cfg = for_num_elems(1024, 256).unwrap();
    // SAFETY: vecadd writes out[i] for i < out.len() (the view's 1000) and reads a[i],
    // b[i] (bounds-checked against the views' lengths).
    unsafe {
        vecadd.launch(
            &stream,
            cfg,
            (
                &a.slice(300..1300),
                &b.slice(..1000),
                &mut c.slice_mut(100..1100),
            ),
        )
    }
    .unwrap();
    let got = stream.clone_dtoh(&c).unwrap();
    for (i, g) in got.iter().enumerate() {
        if (100..1100).contains(&i) {
            assert_eq!(*g, xs[i + 200] + ys[i - 100], "i={i}");
        } else {
            assert!(g.is_nan(), "i={i}: written outside the view: {g}");
        }
    }
}
