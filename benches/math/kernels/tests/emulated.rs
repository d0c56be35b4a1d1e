//! The accuracy kernels themselves, launched under device-std's CPU emulator over
//! the identity sample (`sample::f32_unary`: base 0, stride `F32_STRIDE`), hashed as the
//! GPU hashes them, against `benches/math/gpu-hashes.txt`: the emulator gives the
//! GPU's bits for every f32 unary function.

use device_std::emulator::{launch, GlobalMut, LaunchConfig};
use math_bench_kernels::{sample, F32_UNARY_KERNELS};
use std::collections::BTreeMap;

fn gpu_hashes() -> BTreeMap<String, u64> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../gpu-hashes.txt");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            ["hash", name, hex] => Some((name.to_string(), u64::from_str_radix(hex, 16).ok()?)),
            _ => None,
        })
        .collect()
}

#[test]
fn emulated_kernels_give_the_gpus_bits() {
    let expected = gpu_hashes();
    let mut mismatched = Vec::new();
    for &(name, kernel) in F32_UNARY_KERNELS {
        let mut out = vec![f32::from_bits(0xffff_ffff); sample::N];
        let global = GlobalMut::new(&mut out);
        launch(LaunchConfig::for_num_elems(sample::N as u32, 256), || {
            kernel(0, sample::F32_STRIDE, global.disjoint())
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        for (j, y) in out.iter().enumerate() {
            let want = kernel_free(name, j);
            assert!(
                y.to_bits() == want.to_bits() || (y.is_nan() && want.is_nan()),
                "{name} at sample {j}: {y:e} from the launch, {want:e} called directly"
            );
        }
        let hash = sample::hash_f32_outputs(out.iter().copied());
        match expected.get(name) {
            Some(&want) if want == hash => {}
            other => mismatched.push(format!("{name}: emulator {hash:016x}, file {other:x?}")),
        }
    }
    assert!(mismatched.is_empty(), "{}", mismatched.join("\n"));
}

/// The same function called directly (not through a launch) at sample `j`.
fn kernel_free(name: &str, j: usize) -> f32 {
    let f = math_bench_kernels::F32_UNARY
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
        .unwrap();
    f(sample::f32_unary(j))
}
