//! The GPU benchmark suite's Rust kernels (`benches/gpu/kernels`) under the
//! emulator, at shapes the benchmark itself never runs: partial edge tiles,
//! a wrong block shape, softmax rows that are not all alike.

use device_std::emulator::{self, EmulatorError, GlobalMut, LaunchConfig};
use emulated_tests::{emulate::POISON, reference};
use example_support::{count_mismatches, random_f32, rng};

/// `bench_kernels::transpose` of an `n × n` matrix, launched as `gpu-bench`
/// does but with `block` threads.
fn transpose(input: &[f32], n: usize, block: (u32, u32, u32)) -> Result<Vec<f32>, EmulatorError> {
    let mut t = vec![POISON; n * n];
    let out = GlobalMut::new(&mut t);
    let tiles = n.div_ceil(32) as u32;
    let cfg = LaunchConfig::new((tiles, tiles, 1), block);
    emulator::launch(cfg, || {
        bench_kernels::transpose(input, out.disjoint(), n as u32)
    })?;
    Ok(t)
}

#[test]
fn transpose_matches_the_cpu_with_whole_and_partial_tiles() {
    for (n, seed) in [(64, 41), (70, 42), (33, 43), (5, 44)] {
        let input = random_f32(&mut rng(seed), n * n, -1000.0, 1000.0);
        let got = transpose(&input, n, (32, 8, 1)).unwrap();
        let want = reference::transpose(&input, n, n);
        assert_eq!(
            count_mismatches("bench transpose", &got, &want, 0.0),
            0,
            "n = {n}"
        );
    }
}

#[test]
fn transpose_refuses_a_block_that_is_not_32_by_8_by_1() {
    let n = 64;
    let input = random_f32(&mut rng(45), n * n, -1.0, 1.0);
    for block in [(32, 8, 2), (16, 8, 1), (32, 4, 1)] {
        match transpose(&input, n, block) {
            Err(EmulatorError::Panic { message, .. }) => {
                assert!(
                    message.contains("block_is_tile_shaped"),
                    "{block:?}: {message}"
                )
            }
            other => panic!("{block:?}: expected a panic, got {:?}", other.map(|_| ())),
        }
    }
}

#[test]
fn softmax_matches_the_f64_reference_on_rows_of_different_scales() {
    let cols = 4096;
    let mut r = rng(46);
    // Row k spans ±2^k, so the running maximum moves a lot in some rows.
    let input: Vec<f32> = (0..5)
        .flat_map(|k| random_f32(&mut r, cols, -(1 << k) as f32, (1 << k) as f32))
        .collect();
    let mut y = vec![POISON; input.len()];
    let out = GlobalMut::new(&mut y);
    let cfg = LaunchConfig::new((5, 1, 1), (256, 1, 1)).with_dynamic_shared((cols * 4) as u32);
    emulator::launch(cfg, || {
        bench_kernels::softmax(&input, out.disjoint(), cols as u32)
    })
    .unwrap();
    let want = reference::softmax_f64(&input, cols);
    let worst = reference::worst_relative_error(&y, &want);
    assert!(worst < 2e-5, "worst relative error {worst:e}");
}
