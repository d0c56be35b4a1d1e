//! A one-launch reduction: every block sums its part of the input, writes its partial
//! sum, waits for the whole grid at `device_std::grid::sync` (a cooperative launch),
//! then block 0 sums the partials. CUDA C++ needs cooperative groups' `grid.sync()`
//! and `cudaLaunchCooperativeKernel` for the same (`grid_sync.cu`, the timing twin).
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

use device_std::{grid, kernel, thread, SharedArray};

/// Threads per block: the kernel's launches use 1D blocks of exactly this many.
pub const BLOCK: u32 = 256;

/// The sum of `value` over the block's threads, in thread 0 (others get a partial
/// value). Every thread of the block must call it.
#[inline(always)]
fn block_sum(tile: &SharedArray<u64, { BLOCK as usize }>, t: usize, value: u64) -> u64 {
    tile.write(t, value);
    thread::sync_threads();
    let mut half = BLOCK as usize / 2;
    while half > 0 {
        if t < half {
            tile.write(t, tile.read(t) + tile.read(t + half));
        }
        thread::sync_threads();
        half /= 2;
    }
    let s = tile.read(0);
    thread::sync_threads(); // the tile is reused by the next call
    s
}

/// `*total = Σ input` as `u64`, in one cooperative launch: 1D blocks of [`BLOCK`]
/// threads, any number of blocks that are resident at once (the host's
/// `Kernel::max_cooperative_blocks`); `partials` holds at least one `u64` per block.
///
/// # Safety
/// `partials` and `total` point at device memory of that size, used by nothing else
/// during the launch; the launch is cooperative.
#[kernel]
pub unsafe fn sum_grid(input: &[u32], partials: *mut u64, total: *mut u64) {
    let tile = SharedArray::<u64, { BLOCK as usize }>::new();
    let t = thread::threadIdx_x() as usize;
    let b = thread::blockIdx_x() as usize;
    let blocks = thread::gridDim_x() as usize;
    let stride = blocks * BLOCK as usize;
    let mut acc = 0u64;
    let mut i = b * BLOCK as usize + t;
    while i < input.len() {
        acc += u64::from(input[i]);
        i += stride;
    }
    let s = block_sum(&tile, t, acc);
    if t == 0 {
        // SAFETY: element b of the caller's `partials`, written by this block only.
        unsafe { partials.add(b).write(s) };
    }
    grid::sync();
    if b == 0 {
        let mut acc = 0u64;
        let mut k = t;
        while k < blocks {
            // SAFETY: every block's partial, written before the grid barrier.
            acc += unsafe { partials.add(k).read() };
            k += BLOCK as usize;
        }
        let s = block_sum(&tile, t, acc);
        if t == 0 {
            // SAFETY: the caller's `total`, written by this thread only.
            unsafe { total.write(s) };
        }
    }
}
