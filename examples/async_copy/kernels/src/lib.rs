//! Bulk asynchronous copies (`cp.async.bulk`, sm_90) through shared memory, both ways:
//! each block loads one tile of `x` into shared memory with a copy that completes on an
//! [`Mbarrier`], scales it in place, and writes it back with a bulk store.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
use device_std::{bulk, kernel, thread, DisjointSlice, Mbarrier, Phase, SharedArray};

/// Elements of one tile: 4 KiB of `f32`.
pub const TILE: usize = 1024;

/// `y = alpha * x` for the first `TILE * (y.len() / TILE)` elements... and the rest:
/// block `b` moves tile `b` (`x[b * TILE ..]`, shorter for the last one, rounded down to
/// whole 16-byte vectors) with a bulk load, scales it in shared memory (thread `t` owns
/// elements `t, t + blockDim, ...`), makes it visible to the copy engine
/// (`fence.proxy.async` + barrier) and writes it with a bulk store; the last block also
/// does the `y.len() % 4` trailing elements with plain loads and stores. Launch
/// `ceil(len / TILE)` blocks of any 1D size; `x` and `y` 16-byte aligned (a trap
/// otherwise) and `x` at least as long as `y`. sm_90.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
#[kernel]
pub fn tile_roundtrip(alpha: f32, x: &[f32], mut y: DisjointSlice<f32>) {
    let n = y.len();
    let tile = SharedArray::<f32, TILE, 128>::new();
    let bar = Mbarrier::new(1);
    let mut phase = Phase::new();
    let b = thread::blockIdx_x() as usize;
    let start = b * TILE;
    if start >= n {
        return;
    }
    let len = (TILE.min(n - start)) & !3;
    let t = thread::threadIdx_x() as usize;
    let threads = thread::block_size() as usize;
    if len > 0 {
        if t == 0 {
            bar.arrive_expect_tx((len * 4) as u32);
            bulk::load(&tile, 0, x, start, len, &bar);
        }
        bar.wait(&mut phase);
        let mut i = t;
        while i < len {
            tile.write(i, alpha * tile.read(i));
            i += threads;
        }
        bulk::fence_proxy_async_shared();
        thread::sync_threads();
        if t == 0 {
            // SAFETY: block `b` alone writes y[start .. start + len] (its tile); the
            // range is in bounds and 16-byte aligned (checked by `store` at run time:
            // `start` is a multiple of TILE and `y` is 16-byte aligned), and nothing
            // reads it before the grid ends.
            unsafe { bulk::store(y.as_mut_ptr().add(start), &tile, 0, len) };
            bulk::commit_group();
            bulk::wait_group_read::<0>();
        }
    }
    // The last block's trailing elements, below one 16-byte vector.
    let rest = start + len;
    if rest < n && start + TILE >= n && t < n - rest {
        // SAFETY: only thread t of the last block writes element rest + t (< n).
        unsafe { *y.get_unchecked_mut(rest + t) = alpha * x[rest + t] };
    }
}
