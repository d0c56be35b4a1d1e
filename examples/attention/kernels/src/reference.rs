//! The CPU reference of the attention kernels, shared by the GPU program
//! (`attention-host`) and the emulator tests: `softmax(q·kᵀ/√d) · v` per (batch, head)
//! in `f64` from the same `bf16` inputs. Host-only: the module does not exist in the
//! nvptx64 build.

extern crate std;

use device_std::bf16;
use std::vec::Vec;

/// `o = softmax(q·kᵀ/√d) · v` for `bh` (batch, head) pairs of `[seq][d]` row-major
/// matrices, keys after the query masked when `causal`: `bh·seq·d` values.
pub fn attention(
    q: &[bf16],
    k: &[bf16],
    v: &[bf16],
    bh: usize,
    seq: usize,
    d: usize,
    causal: bool,
) -> Vec<f64> {
    (0..bh)
        .flat_map(|h| (0..seq).flat_map(move |i| attention_row((q, k, v), (seq, d), h, i, causal)))
        .collect()
}

/// Row `i` of (batch, head) `h` of [`attention`]'s output: `d` values.
pub fn attention_row(
    (q, k, v): (&[bf16], &[bf16], &[bf16]),
    (seq, d): (usize, usize),
    h: usize,
    i: usize,
    causal: bool,
) -> Vec<f64> {
    let at = |m: &[bf16], r: usize, c: usize| m[(h * seq + r) * d + c].to_f64();
    let keys = if causal { i + 1 } else { seq };
    let scale = 1.0 / (d as f64).sqrt();
    let s: Vec<f64> = (0..keys)
        .map(|j| scale * (0..d).map(|c| at(q, i, c) * at(k, j, c)).sum::<f64>())
        .collect();
    let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let p: Vec<f64> = s.iter().map(|x| (x - m).exp()).collect();
    let l: f64 = p.iter().sum();
    (0..d)
        .map(|c| (0..keys).map(|j| p[j] * at(v, j, c)).sum::<f64>() / l)
        .collect()
}
