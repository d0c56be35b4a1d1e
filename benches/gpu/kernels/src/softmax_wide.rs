//! Row softmax over rows longer than one block should hold (`cols` of 2^16 floats and up:
//! 256 KiB and more per row), each row split into `parts` contiguous parts of
//! `cols / parts` floats, one block per part. The parts' `(max, sum of exp)` states must
//! meet before any output element can be written. Three ways:
//!
//! - [`softmax_cluster`]: the parts are the 8 CTAs of a thread-block cluster. Each keeps
//!   its part in shared memory, publishes its state in shared memory, reads the other
//!   seven states through distributed shared memory after one cluster barrier, and
//!   writes its part. The input is read once, in one launch.
//! - [`softmax_split_stats`] then [`softmax_split_finish`]: the same split without a
//!   cluster. The states go through global memory between two launches, and the second
//!   launch reads the input again.
//! - the same two launches with `parts = 1`: one block per row.
//!
//! Every kernel computes `exp` with `math::fast::expf`, as [`crate::softmax`] does.
//! 1D grids and blocks, `cols` a multiple of `4 * parts`, `input` and `output` 16-byte
//! aligned: anything else traps. sm_90 for the cluster kernel, sm_70 for the others.

use device_std::ldg::ldg;
use device_std::vector::{split_vectors_or_tail, F32x4};
use device_std::{kernel, math, thread, BlockIndex1D, DisjointSlice, SharedArray};

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
use device_std::{cluster, DynamicSharedArray};

use crate::{block_merge, merge, vector_state, warp_merge};

/// The CTAs of [`softmax_cluster`]'s clusters: the parts of each row.
pub const SOFTMAX_CLUSTER_PARTS: u32 = 8;

// The attribute's literal and the constant the host sizes grids by agree.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
const _: () = assert!(__KERNEL_CLUSTER_softmax_cluster[0] == SOFTMAX_CLUSTER_PARTS);

/// This block's part of the row, in vectors: the part's vectors of `input` (empty when
/// `input` is short or misaligned; the caller's `assert` then traps) and where they
/// start. Part `blockIdx.x` of `cols / (4 * parts)` vectors.
#[inline(always)]
fn part_of(input: &[f32], cols: u32, parts: u32) -> (&[F32x4], usize, usize) {
    let c4 = (cols / 4 / parts.max(1)) as usize;
    let base = thread::blockIdx_x() as usize * c4;
    let (src, _) = split_vectors_or_tail::<F32x4>(input);
    (src.get(base..base + c4).unwrap_or(&[]), base, c4)
}

/// Row softmax, each row over one cluster of [`SOFTMAX_CLUSTER_PARTS`] CTAs: cluster `r`
/// handles row `r`, CTA rank `k` its part `k` (`cols / 8` floats, kept in the block's
/// dynamic shared memory: the launch passes `cols / 8 * 4` bytes). Each CTA's state is
/// merged across the cluster through distributed shared memory. Grid `8 × rows` blocks
/// of up to 1024 threads. sm_90.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
#[kernel(cluster = (8, 1, 1), dims = 1, max_threads = 1024)]
pub fn softmax_cluster(input: &[f32], output: DisjointSlice<f32>, cols: u32) {
    let red_m = SharedArray::<f32, 32>::new();
    let red_s = SharedArray::<f32, 32>::new();
    let published = SharedArray::<f32, 2>::new();
    let kept = DynamicSharedArray::<F32x4>::get();
    let parts = cluster::cta_count();
    let (src, base, c4) = part_of(input, cols, parts);
    let n4 = src.len().min(kept.len());
    let (tid, threads) = (thread::threadIdx_x(), thread::blockDim_x());
    let mut state = (f32::NEG_INFINITY, 0.0f32);
    let mut i = tid as usize;
    while i < n4 {
        let v = ldg(src, i);
        kept.write(i, v);
        state = merge(state, vector_state(v));
        i += threads as usize;
    }
    // The whole part, room for it, whole vectors per part, and the output's part.
    assert!((src.len() == c4) & (kept.len() >= c4) & cols.is_multiple_of(4 * parts));
    let Ok((mut dst, _)) = output.split_vectors_mut::<F32x4>() else {
        panic!("softmax_cluster: `output` is not 16-byte aligned");
    };
    assert!(dst.len() >= base + c4);
    let (m, s) = block_merge(state, &red_m, &red_s);
    if tid == 0 {
        published.write(0, m);
        published.write(1, s);
    }
    // Every CTA's state is published before any CTA reads one.
    cluster::sync();
    let lane = thread::lane_id();
    let (m, s) = warp_merge(if lane < parts {
        let theirs = published.in_cta(lane);
        (theirs.read(0), theirs.read(1))
    } else {
        (f32::NEG_INFINITY, 0.0)
    });
    // Done with the other CTAs' memory; they may exit once everyone has arrived.
    cluster::arrive();
    let inv = 1.0 / s;
    let mut i = tid as usize;
    while i < c4 {
        let v = kept.read(i).map(|x| math::fast::expf(x - m) * inv);
        // SAFETY: base + i < base + c4 <= dst.len() (asserted); vector base + i is
        // block blockIdx.x's alone, and within it thread i % threads' alone.
        unsafe { *dst.get_unchecked_mut(base + i) = v };
        i += threads as usize;
    }
    // This CTA's `published` stays until every CTA has read it.
    cluster::wait();
}

/// The first launch of the split without a cluster: block `b` computes the state of
/// part `b % parts` of row `b / parts` (`cols / parts` floats, read once, kept nowhere)
/// into `maxes[b]` and `sums[b]`. Grid `parts × rows` blocks of up to 1024 threads;
/// `parts` from 1 to 32. sm_70.
#[kernel(dims = 1, max_threads = 1024)]
pub fn softmax_split_stats(
    input: &[f32],
    mut maxes: DisjointSlice<f32, BlockIndex1D>,
    mut sums: DisjointSlice<f32, BlockIndex1D>,
    cols: u32,
    parts: u32,
) {
    let red_m = SharedArray::<f32, 32>::new();
    let red_s = SharedArray::<f32, 32>::new();
    let (src, _, c4) = part_of(input, cols, parts);
    let (tid, threads) = (thread::threadIdx_x(), thread::blockDim_x());
    let mut state = (f32::NEG_INFINITY, 0.0f32);
    let mut i = tid as usize;
    while i < src.len() {
        state = merge(state, vector_state(ldg(src, i)));
        i += threads as usize;
    }
    let blocks = thread::gridDim_x() as usize;
    assert!(
        (src.len() == c4)
            & (maxes.len() >= blocks)
            & (sums.len() >= blocks)
            & (parts.wrapping_sub(1) < 32)
            && cols.is_multiple_of(4 * parts)
    );
    let (m, s) = block_merge(state, &red_m, &red_s);
    if let Some(b) = thread::block_leader_index() {
        if let (Some(om), Some(os)) = (maxes.get_mut(&b), sums.get_mut(&b)) {
            *om = m;
            *os = s;
        }
    }
}

/// The second launch of the split: block `b` merges the `parts` states of row
/// `b / parts` from [`softmax_split_stats`]'s `maxes` and `sums`, reads its part of the
/// input again and writes it normalised. Same grid and `parts` as the first launch.
/// sm_70.
#[kernel(dims = 1, max_threads = 1024)]
pub fn softmax_split_finish(
    input: &[f32],
    maxes: &[f32],
    sums: &[f32],
    output: DisjointSlice<f32>,
    cols: u32,
    parts: u32,
) {
    let (src, base, c4) = part_of(input, cols, parts);
    assert!((src.len() == c4) & (parts.wrapping_sub(1) < 32) && cols.is_multiple_of(4 * parts));
    let Ok((mut dst, _)) = output.split_vectors_mut::<F32x4>() else {
        panic!("softmax_split_finish: `output` is not 16-byte aligned");
    };
    assert!(dst.len() >= base + c4);
    let first = (thread::blockIdx_x() / parts * parts) as usize;
    let lane = thread::lane_id();
    let (m, s) = warp_merge(if lane < parts {
        let k = first + lane as usize;
        (maxes[k], sums[k])
    } else {
        (f32::NEG_INFINITY, 0.0)
    });
    let inv = 1.0 / s;
    let (tid, threads) = (thread::threadIdx_x(), thread::blockDim_x());
    let mut i = tid as usize;
    while i < c4 {
        let v = ldg(src, i).map(|x| math::fast::expf(x - m) * inv);
        // SAFETY: as in `softmax_cluster`.
        unsafe { *dst.get_unchecked_mut(base + i) = v };
        i += threads as usize;
    }
}
