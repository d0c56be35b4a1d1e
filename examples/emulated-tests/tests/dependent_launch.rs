//! The programmatic-dependent-launch chain (`examples/dependent_launch`) under the
//! emulator: `grid_dependency::launch_dependents` and `wait` are no-ops there (launches
//! run one after another), and the chain's result matches the CPU bit for bit.

use dependent_launch_kernels::{multiplier, step};
use device_std::emulator::{self, GlobalMut, LaunchConfig};
use example_support::rng;
use rand::Rng;

#[test]
fn a_chain_of_dependent_steps_matches_the_cpu() {
    let n = 3001;
    let steps = 7;
    let mut r = rng(71);
    let x: Vec<u32> = (0..n).map(|_| r.random()).collect();
    let mut want = x.clone();
    for k in 0..steps {
        for (i, v) in want.iter_mut().enumerate() {
            *v = v.wrapping_mul(multiplier(k)).wrapping_add(i as u32);
        }
    }
    let cfg = LaunchConfig::for_num_elems(n as u32, 128);
    let mut src = x;
    for k in 0..steps {
        let mut dst = vec![0xDEAD_BEEF_u32; n];
        let out = GlobalMut::new(&mut dst);
        emulator::launch(cfg, || step(&src, out.disjoint(), multiplier(k))).unwrap();
        src = dst;
    }
    let bad = src.iter().zip(&want).filter(|(g, w)| g != w).count();
    assert_eq!(bad, 0, "{bad} of {n} elements differ");
}
