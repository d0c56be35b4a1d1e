//! `histogram`: counts of each byte value in `data`, with one private
//! histogram per block in shared memory (`atom.shared.add`, CTA scope) that
//! is merged into the global one with GPU-scope atomics.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

use device_std::atomic::{self, Ordering, Scope};
use device_std::{kernel, thread, SharedArray};

/// Number of bins: one per byte value.
pub const BINS: usize = 256;
/// Threads per block the kernel requires.
pub const BLOCK: u32 = 256;

/// Launch: any 1D grid of blocks of exactly `BLOCK` threads (others trap);
/// a grid-stride loop covers all of `data`. Adds the counts of `data` to
/// `bins[0..256]` (zero it first for a plain histogram).
///
/// # Safety
/// `bins` points at 256 `u32`s of global memory, written only atomically
/// during the launch.
#[kernel]
pub unsafe fn histogram(data: &[u8], bins: *mut u32) {
    assert!(thread::blockDim_x() == BLOCK);
    let local = SharedArray::<u32, BINS>::new();
    let tid = thread::threadIdx_x() as usize;
    local.write(tid, 0);
    thread::sync_threads();

    let stride = thread::gridDim_x() as usize * BLOCK as usize;
    let mut i = thread::blockIdx_x() as usize * BLOCK as usize + tid;
    while i < data.len() {
        // SAFETY: `local.ptr` is in bounds (a byte < 256) of this block's
        // shared array; every concurrent access to it is atomic.
        unsafe {
            atomic::shared::fetch_add(
                local.ptr(data[i] as usize),
                1,
                Ordering::Relaxed,
                Scope::Cta,
            )
        };
        i += stride;
    }
    thread::sync_threads();

    let count = local.read(tid);
    if count != 0 {
        // SAFETY: `bins` has 256 elements (the caller's contract) and
        // `tid < 256`; concurrent accesses are atomic.
        unsafe { atomic::fetch_add(bins.add(tid), count, Ordering::Relaxed, Scope::Gpu) };
    }
}
