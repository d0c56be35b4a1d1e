//! `#[kernel(max_threads = N, min_blocks = M)]` on the host: the constant the macro
//! emits, the arguments combined with `cluster = (..)` in any order, and the emulator
//! refusing a block larger than `max_threads`, as the driver does on the GPU.
//!
//! Needs the `emulator` feature (`cargo test -p device-std --features
//! emulator`; `cargo xtask test` has it through the workspace).
#![cfg(feature = "emulator")]

use device_std::emulator::{self, EmulatorError, GlobalMut, LaunchConfig};
use device_std::{kernel, thread, DisjointSlice};

/// Writes each thread's linear index; at most 128 threads per block.
#[kernel(max_threads = 128)]
pub fn bounded(mut out: DisjointSlice<u32>) {
    let i = thread::index_1d();
    let v = i.get() as u32;
    if let Some(o) = out.get_mut(&i) {
        *o = v;
    }
}

#[kernel(min_blocks = 2, cluster = (2, 1, 1), max_threads = 64)]
pub fn all_three() {}

#[kernel(max_threads = 1024, min_blocks = 1)]
pub fn widest() {}

#[test]
fn the_macro_emits_the_bounds() {
    assert_eq!(__KERNEL_BOUNDS_bounded, [128, 0]);
    assert_eq!(__KERNEL_BOUNDS_all_three, [64, 2]);
    assert_eq!(__KERNEL_CLUSTER_all_three, [2, 1, 1]);
    assert_eq!(__KERNEL_BOUNDS_widest, [1024, 1]);
}

#[test]
fn a_block_within_the_bound_runs() {
    for block in [128, 96, 1] {
        let mut out = vec![u32::MAX; 512];
        let g = GlobalMut::new(&mut out);
        emulator::launch(LaunchConfig::for_num_elems(512, block), || {
            bounded(g.disjoint())
        })
        .unwrap();
        assert!(out.iter().enumerate().all(|(i, &v)| v == i as u32));
    }
}

#[test]
fn a_block_over_the_bound_is_refused_naming_kernel_block_and_bound() {
    let mut out = vec![u32::MAX; 512];
    let g = GlobalMut::new(&mut out);
    let err = emulator::launch(LaunchConfig::new((2, 1, 1), (64, 2, 2)), || {
        bounded(g.disjoint())
    })
    .unwrap_err();
    match &err {
        EmulatorError::InvalidLaunch(s) => assert_eq!(
            s,
            "block (64, 2, 2) has 256 threads, but kernel `bounded` allows at most 128 \
             (`#[kernel(max_threads = 128)]`, `.maxntid`)"
        ),
        other => panic!("expected InvalidLaunch, got {other}"),
    }
    // No thread ran the body.
    assert!(out.iter().all(|&v| v == u32::MAX));
}

#[test]
fn called_outside_a_launch_a_bounded_kernel_is_a_plain_function() {
    widest();
}

/// Writes each thread's linear index; every launch one-dimensional.
#[kernel(dims = 1)]
pub fn flat(mut out: DisjointSlice<u32>) {
    let i = thread::index_1d();
    let v = i.get() as u32;
    if let Some(o) = out.get_mut(&i) {
        *o = v;
    }
}

#[kernel(dims = 2, max_threads = 256)]
pub fn planar() {}

#[test]
fn the_macro_emits_the_launch_dims() {
    assert_eq!(__KERNEL_DIMS_flat, [1]);
    assert_eq!(__KERNEL_DIMS_planar, [2]);
    assert_eq!(__KERNEL_BOUNDS_planar, [256, 0]);
}

#[test]
fn a_one_dimensional_launch_of_a_1d_kernel_runs() {
    let mut out = vec![u32::MAX; 300];
    let g = GlobalMut::new(&mut out);
    emulator::launch(LaunchConfig::for_num_elems(300, 64), || flat(g.disjoint())).unwrap();
    assert!(out.iter().enumerate().all(|(i, &v)| v == i as u32));
}

#[test]
fn a_launch_past_the_declared_dims_is_refused_naming_kernel_and_shape() {
    for (grid, block) in [((2, 2, 1), (64, 1, 1)), ((2, 1, 1), (32, 1, 2))] {
        let mut out = vec![u32::MAX; 512];
        let g = GlobalMut::new(&mut out);
        let err =
            emulator::launch(LaunchConfig::new(grid, block), || flat(g.disjoint())).unwrap_err();
        let EmulatorError::InvalidLaunch(s) = &err else {
            panic!("expected InvalidLaunch, got {err}");
        };
        let want = format!(
            "kernel `flat` is declared one-dimensional (`#[kernel(dims = 1)]`), but the \
             launch has grid ({}, {}, {}) and block ({}, {}, {}); launch it with extents of \
             1 past dimension 1, or remove `dims`",
            grid.0, grid.1, grid.2, block.0, block.1, block.2
        );
        assert_eq!(s, &want);
        assert!(out.iter().all(|&v| v == u32::MAX), "no thread ran the body");
    }
    // Two dimensions: y may grow, z may not.
    emulator::launch(LaunchConfig::new((1, 3, 1), (8, 4, 1)), planar).unwrap();
    let err = emulator::launch(LaunchConfig::new((1, 1, 2), (8, 1, 1)), planar).unwrap_err();
    assert!(
        matches!(&err, EmulatorError::InvalidLaunch(s) if s.contains("`planar` is declared two-dimensional")),
        "{err}"
    );
}

/// A generic kernel's instances each carry the declaration under their own name.
#[kernel(dims = 1, instances(flat_u32 = <u32>, flat_u64 = <u64>))]
pub fn flat_generic<T: Copy + Send + Sync + 'static>(mut out: DisjointSlice<T>, v: T) {
    let i = thread::index_1d();
    if let Some(o) = out.get_mut(&i) {
        *o = v;
    }
}

#[test]
fn every_emulated_launch_form_checks_the_declared_dims() {
    let mut out = vec![0u32; 256];
    let g = GlobalMut::new(&mut out);
    // Cooperative and cluster launches run the same check as a plain one.
    let coop = emulator::launch_cooperative(LaunchConfig::new((2, 2, 1), (32, 1, 1)), || {
        flat(g.disjoint())
    })
    .unwrap_err();
    assert!(
        matches!(&coop, EmulatorError::InvalidLaunch(s) if s.contains("`flat` is declared one-dimensional")),
        "{coop}"
    );
    let cluster = LaunchConfig::new((2, 2, 1), (32, 1, 1)).with_cluster(2, 1, 1);
    let err = emulator::launch(cluster, || flat(g.disjoint())).unwrap_err();
    assert!(
        matches!(&err, EmulatorError::InvalidLaunch(s) if s.contains("`flat` is declared")),
        "{err}"
    );
    // Each instance by its own name.
    assert_eq!(__KERNEL_DIMS_flat_u32, [1]);
    assert_eq!(__KERNEL_DIMS_flat_u64, [1]);
    let err = emulator::launch(LaunchConfig::new((1, 1, 1), (8, 2, 1)), || {
        flat_u32(g.disjoint(), 7)
    })
    .unwrap_err();
    assert!(
        matches!(&err, EmulatorError::InvalidLaunch(s) if s.contains("`flat_u32` is declared one-dimensional")),
        "{err}"
    );
    emulator::launch(LaunchConfig::new((2, 1, 1), (128, 1, 1)), || {
        flat_u32(g.disjoint(), 7)
    })
    .unwrap();
    assert!(out.iter().all(|&v| v == 7));
}
