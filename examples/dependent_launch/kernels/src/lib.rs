//! `dependent_launch`: a chain of short kernels, each reading what the previous one
//! wrote, written for programmatic dependent launch (PDL): every step lets the next one
//! launch at once and waits for the previous one before touching memory.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

use device_std::{grid_dependency, kernel, thread, DisjointSlice};

/// One link of the chain: `dst[i] = src[i] * a + i` (wrapping `u32`). Grid: at least
/// `dst.len()` threads; `src` as long as `dst`. Launched with or without programmatic
/// stream serialization; correct either way.
#[kernel]
pub fn step(src: &[u32], mut dst: DisjointSlice<u32>, a: u32) {
    // The next step may start now: its prologue overlaps this one.
    grid_dependency::launch_dependents();
    let idx = thread::index_1d();
    let i = idx.get();
    // Everything above touches no memory; from here on, the previous step (which writes
    // `src`, and reads what this one overwrites in `dst`) must be complete.
    grid_dependency::wait();
    if let Some(d) = dst.get_mut(idx) {
        *d = src[i].wrapping_mul(a).wrapping_add(i as u32);
    }
}

/// The chain's CPU reference: `steps` links from `x`, `a` for link `k` being
/// `multiplier(k)`.
pub fn multiplier(k: usize) -> u32 {
    3 + 2 * (k as u32 % 5)
}
