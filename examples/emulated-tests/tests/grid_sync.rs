//! `examples/grid_sync` and `device_std::grid::sync` under the emulator's cooperative
//! launch: the one-launch reduction against the exact sum, and the two misuses the GPU
//! would hang on (a launch that is not cooperative, a block that returns before the
//! grid barrier) reported as errors.

use device_std::emulator::{self, EmulatorError, LaunchConfig};
use device_std::{grid, thread};
use grid_sync_kernels::BLOCK;
use rand::Rng;

#[test]
fn one_launch_reduction_sums_exactly() {
    let mut r = example_support::rng(41);
    let n = 5000;
    let input: Vec<u32> = (0..n).map(|_| r.random_range(0..1u32 << 20)).collect();
    let want: u64 = input.iter().map(|&x| u64::from(x)).sum();
    let blocks = 4;
    let mut partials = vec![u64::MAX; blocks as usize];
    let mut total = [u64::MAX];
    let (p, t) = (partials.as_mut_ptr() as usize, total.as_mut_ptr() as usize);
    let cfg = LaunchConfig::new((blocks, 1, 1), (BLOCK, 1, 1));
    emulator::launch_cooperative(cfg, || {
        // SAFETY: one partial per block and one total, used by nothing else; the launch
        // is cooperative.
        unsafe { grid_sync_kernels::sum_grid(&input, p as *mut u64, t as *mut u64) }
    })
    .unwrap();
    assert_eq!(total[0], want);
}

#[test]
fn grid_sync_outside_a_cooperative_launch_is_an_error() {
    let cfg = LaunchConfig::new((2, 1, 1), (32, 1, 1));
    let err = emulator::launch(cfg, grid::sync).unwrap_err();
    assert!(format!("{err}").contains("not cooperative"), "{err}");
}

#[test]
fn a_block_that_skips_grid_sync_is_reported() {
    let cfg = LaunchConfig::new((3, 1, 1), (32, 1, 1));
    let err = emulator::launch_cooperative(cfg, || {
        if thread::blockIdx_x() == 1 {
            return;
        }
        grid::sync();
    })
    .unwrap_err();
    assert!(matches!(err, EmulatorError::Deadlock { .. }), "{err}");
    assert!(format!("{err}").contains("grid::sync"), "{err}");
}

#[test]
fn cooperative_grids_are_bounded() {
    let cfg = LaunchConfig::new((1000, 1, 1), (1024, 1, 1));
    let err = emulator::launch_cooperative(cfg, grid::sync).unwrap_err();
    assert!(matches!(err, EmulatorError::InvalidLaunch(_)), "{err}");
}

#[test]
fn cluster_functions_in_a_cooperative_launch_are_refused() {
    let cfg = LaunchConfig::new((2, 1, 1), (32, 1, 1));
    let err = emulator::launch_cooperative(cfg, || {
        let _ = device_std::cluster::cta_count();
    })
    .unwrap_err();
    assert!(format!("{err}").contains("cooperative launch"), "{err}");
}
