//! The `f32` GPU reference of the fused attention kernels: one warp per query row, the
//! lanes splitting the head dimension, `f32` scores and the accurate `expf`
//! (`device_std::math`, not the `ex2.approx` the fast kernels use), an online softmax over the keys one at a time. Slow and simple:
//! for checking the tensor-core kernels on every element of shapes whose CPU reference
//! would take minutes.

use device_std::math::{expf, fmaf};
use device_std::{bf16, kernel, thread, warp, DisjointSlice};

/// Query rows per block of [`attention_reference_f32`] (one warp each).
pub const ROWS_PER_BLOCK: u32 = 4;

/// `o = softmax(scale · q·kᵀ) · v` in `f32` for `heads` (batch, head) pairs of `seq` ×
/// `d` row-major `bf16` inputs (`d` a multiple of 32, at most 128; a trap otherwise),
/// keys after the query masked when `causal` is not 0; `o` is `[heads][seq][d]` `f32`.
/// Launch `ceil(heads · seq / 4)` blocks of 128 threads (one warp per row; a trap
/// otherwise). sm_70.
#[kernel]
#[allow(clippy::too_many_arguments)] // the launch's parameters
pub fn attention_reference_f32(
    q: &[bf16],
    k: &[bf16],
    v: &[bf16],
    mut o: DisjointSlice<f32>,
    heads: u32,
    seq: u32,
    d: u32,
    scale: f32,
    causal: u32,
) {
    let (heads, seq, d) = (heads as usize, seq as usize, d as usize);
    let n = heads * seq * d;
    assert!(
        thread::block_size() == 32 * ROWS_PER_BLOCK
            && d.is_multiple_of(32)
            && d <= 128
            && q.len() >= n
            && k.len() >= n
            && v.len() >= n
            && o.len() >= n
    );
    let t = thread::thread_in_block() as usize;
    let row = thread::blockIdx_x() as usize * ROWS_PER_BLOCK as usize + t / 32;
    if row >= heads * seq {
        return;
    }
    let lane = t % 32;
    let (h, i) = (row / seq, row % seq);
    let base = h * seq * d;
    let per = d / 32;
    // The lane's elements of d: lane, lane + 32, ...
    let mut qr = [0.0f32; 4];
    for (e, x) in qr.iter_mut().enumerate().take(per) {
        *x = q[base + i * d + lane + 32 * e].to_f32();
    }
    let (mut m, mut l) = (f32::NEG_INFINITY, 0.0f32);
    let mut acc = [0.0f32; 4];
    let end = if causal != 0 { i + 1 } else { seq };
    for j in 0..end {
        let mut part = 0.0f32;
        for (e, x) in qr.iter().enumerate().take(per) {
            part = fmaf(*x, k[base + j * d + lane + 32 * e].to_f32(), part);
        }
        for off in [16, 8, 4, 2, 1] {
            part += warp::shfl_xor_sync(u32::MAX, part, off);
        }
        let s = part * scale;
        let m_new = m.max(s);
        let (alpha, p) = (expf(m - m_new), expf(s - m_new));
        l = l * alpha + p;
        for (e, a) in acc.iter_mut().enumerate().take(per) {
            *a = fmaf(*a, alpha, p * v[base + j * d + lane + 32 * e].to_f32());
        }
        m = m_new;
    }
    for (e, a) in acc.iter().enumerate().take(per) {
        // SAFETY: (block, warp, lane, e) maps one-to-one onto (row, lane + 32 e) of o:
        // row < heads · seq and lane + 32 e < d, inside o (checked above).
        unsafe { *o.get_unchecked_mut(base + i * d + lane + 32 * e) = a / l };
    }
}
