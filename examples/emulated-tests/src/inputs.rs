//! Seeded random inputs, shaped like the example host programs' (same
//! ranges, same skew), at sizes that keep the emulator quick.

use example_support::random_f32;
use rand::rngs::StdRng;
use rand::Rng;

/// Bytes for `histogram`: half uniform, half from the narrow band
/// `100..108`, so some bins see heavy contention (as `histogram-host`).
pub fn histogram_bytes(rng: &mut StdRng, n: usize) -> Vec<u8> {
    (0..n)
        .map(|_| {
            if rng.random_bool(0.5) {
                rng.random()
            } else {
                rng.random_range(100..108)
            }
        })
        .collect()
}

/// The bins' starting values: known offsets, so a bin the kernel never
/// touches cannot pass (as `histogram-host`).
pub fn histogram_offsets() -> Vec<u32> {
    (0..histogram_kernels::BINS as u32)
        .map(|i| 1_000_000 * (i % 7) + i)
        .collect()
}

/// Inputs of `warp_reduce`: f32 in `[-1, 1)`, any u32, i64 in `±2^40`.
pub fn warp_reduce_inputs(rng: &mut StdRng, n: usize) -> (Vec<f32>, Vec<u32>, Vec<i64>) {
    let xs = random_f32(rng, n, -1.0, 1.0);
    let keys = (0..n).map(|_| rng.random()).collect();
    let big = (0..n)
        .map(|_| rng.random_range(-(1i64 << 40)..1i64 << 40))
        .collect();
    (xs, keys, big)
}
