//! `block_sum`: each block of 256 threads sums 512 consecutive inputs into
//! one partial sum, through a shared-memory tree reduction.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

use device_std::{kernel, thread, BlockIndex1D, DisjointSlice, SharedArray};

/// Threads per block the kernel requires.
pub const BLOCK: u32 = 256;
/// Input elements each block reduces.
pub const ITEMS_PER_BLOCK: usize = 2 * BLOCK as usize;

// `max_threads = 256` below repeats BLOCK (the attribute takes a literal).
const _: () = assert!(
    BLOCK == 256,
    "keep #[kernel(max_threads = ...)] equal to BLOCK"
);

/// Launch: 1D grid of `ceil(input.len() / 512)` blocks of exactly 256
/// threads (smaller blocks trap; larger ones are refused at launch, as
/// `max_threads = 256` puts `.maxntid 256, 1, 1` on the entry).
/// `partial[b]` receives the sum of `input[512 b .. 512 (b + 1)]`; missing
/// tail elements count as 0.
#[kernel(max_threads = 256)]
pub fn block_sum(input: &[f32], mut partial: DisjointSlice<f32, BlockIndex1D>) {
    assert!(thread::blockDim_x() == BLOCK);
    let cache = SharedArray::<f32, { BLOCK as usize }>::new();
    let tid = thread::threadIdx_x() as usize;
    let base = thread::blockIdx_x() as usize * ITEMS_PER_BLOCK + tid;
    let load = |i: usize| input.get(i).copied().unwrap_or(0.0);
    cache.write(tid, load(base) + load(base + BLOCK as usize));
    thread::sync_threads();

    let mut stride = BLOCK as usize / 2;
    while stride > 0 {
        if tid < stride {
            cache.write(tid, cache.read(tid) + cache.read(tid + stride));
        }
        thread::sync_threads();
        stride /= 2;
    }

    if let Some(block) = thread::block_leader_index() {
        if let Some(out) = partial.get_mut(&block) {
            *out = cache.read(0);
        }
    }
}
