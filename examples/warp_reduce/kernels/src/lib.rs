//! `warp_reduce`: one result per warp of 32 consecutive inputs, with warp
//! shuffles and `redux.sync` instead of shared memory.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

use device_std::warp::{self, ReduxOp, FULL_MASK};
use device_std::{kernel, thread, DisjointSlice, WarpIndex1D};

/// Inputs each warp reduces.
pub const WARP: usize = 32;

/// Launch: a 1D grid of at least `xs.len()` threads, blocks a multiple of
/// 32 threads. For each warp `w`: `sums[w]` = the f32 sum of
/// `xs[32w .. 32w + 32]` (tree order, `shfl.sync.down`), `maxes[w]` = the
/// maximum of `keys[32w ..]` (`redux.sync.max`, sm_80+), `totals[w]` = the
/// i64 sum of `big[32w ..]` (64-bit `shfl.sync.bfly`). Missing tail inputs
/// count as 0.
#[kernel]
pub fn warp_reduce(
    xs: &[f32],
    keys: &[u32],
    big: &[i64],
    mut sums: DisjointSlice<f32, WarpIndex1D>,
    mut maxes: DisjointSlice<u32, WarpIndex1D>,
    mut totals: DisjointSlice<i64, WarpIndex1D>,
) {
    let i = thread::index_1d().get();
    let mut x = xs.get(i).copied().unwrap_or(0.0);
    let mut delta = 16;
    while delta > 0 {
        x += warp::shfl_down_sync(FULL_MASK, x, delta);
        delta /= 2;
    }
    let key_max = warp::redux_sync(ReduxOp::Max, FULL_MASK, keys.get(i).copied().unwrap_or(0));
    let mut t = big.get(i).copied().unwrap_or(0);
    let mut lane_mask = 16;
    while lane_mask > 0 {
        t = t.wrapping_add(warp::shfl_xor_sync(FULL_MASK, t, lane_mask));
        lane_mask /= 2;
    }

    if let Some(w) = thread::warp_leader_index() {
        if let Some(out) = sums.get_mut(&w) {
            *out = x;
        }
        if let Some(out) = maxes.get_mut(&w) {
            *out = key_max;
        }
        if let Some(out) = totals.get_mut(&w) {
            *out = t;
        }
    }
}
