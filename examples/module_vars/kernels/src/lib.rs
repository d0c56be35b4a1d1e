//! Module-scope variables: a 9-tap filter whose taps live in constant memory
//! (`device_std::constant!`, CUDA `__constant__`) beside the same filter reading them
//! from a global buffer, and two device globals (`device_std::global!`, CUDA
//! `__device__`) that count across launches until the host resets them; and the static
//! shared form (`static mut TILE: SharedArray<f32, 256> = SharedArray::UNINIT;`, CUDA's
//! file-scope `__shared__ float tile[256];`) in a block-wise reversal.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

use device_std::atomic::{self, Ordering, Scope};
use device_std::{kernel, thread, DisjointSlice, SharedArray};

/// Taps of the filter.
pub const TAPS_LEN: usize = 9;

/// Threads per block of the host's launches.
pub const BLOCK: u32 = 256;

device_std::constant! {
    /// The filter's taps, written by the host before a launch.
    pub static TAPS: [f32; TAPS_LEN];
}

device_std::global! {
    /// Elements above the threshold, summed over launches of `count_above`.
    pub static ABOVE: u32;
    /// Launches of `count_above` so far.
    pub static LAUNCHES: u32;
}

/// `input[i + k − 4]` with the index clamped to the array (edges repeat); `last` is
/// `input.len() − 1` (so the index check folds away).
#[inline(always)]
fn at(input: &[f32], last: usize, i: usize, k: usize) -> f32 {
    input[(i + k).saturating_sub(TAPS_LEN / 2).min(last)]
}

/// `out[i] = Σ_k TAPS[k] · input[clamp(i + k − 4)]`, taps from constant memory (one
/// `ld.const` per tap, the same address for the whole warp). Grid: at least
/// `out.len()` threads, 1D; `input` at least as long as `out` (an empty `input`
/// writes nothing).
#[kernel(dims = 1)]
pub fn conv_const(input: &[f32], mut out: DisjointSlice<f32>) {
    let i = thread::index_1d();
    let k0 = i.get();
    let Some(last) = input.len().checked_sub(1) else {
        return;
    };
    if let Some(o) = out.get_mut(&i) {
        let mut acc = 0.0f32;
        for k in 0..TAPS_LEN {
            acc = device_std::math::fmaf(TAPS.get(k), at(input, last, k0, k), acc);
        }
        *o = acc;
    }
}

/// [`conv_const`] with the taps in a global buffer `taps` (at least `TAPS_LEN`
/// elements; a shorter one writes nothing).
#[kernel(dims = 1)]
pub fn conv_global(input: &[f32], taps: &[f32], mut out: DisjointSlice<f32>) {
    let i = thread::index_1d();
    let k0 = i.get();
    let Some(last) = input.len().checked_sub(1) else {
        return;
    };
    let Some(taps) = taps.get(..TAPS_LEN) else {
        return;
    };
    if let Some(o) = out.get_mut(&i) {
        let mut acc = 0.0f32;
        for (k, &t) in taps.iter().enumerate() {
            acc = device_std::math::fmaf(t, at(input, last, k0, k), acc);
        }
        *o = acc;
    }
}

/// Adds the number of `input` elements above `threshold` to [`ABOVE`] (one atomic
/// per element above), and 1 to [`LAUNCHES`] from thread 0. Grid: any 1D.
#[kernel(dims = 1)]
pub fn count_above(input: &[f32], threshold: f32) {
    let i = thread::index_1d();
    if let Some(&x) = input.get(i.get()) {
        if x > threshold {
            // SAFETY: ABOVE's own address; an atomic add.
            unsafe { atomic::fetch_add(ABOVE.ptr(), 1, Ordering::Relaxed, Scope::Gpu) };
        }
    }
    if i.get() == 0 {
        LAUNCHES.write(LAUNCHES.read() + 1);
    }
}

/// One block's elements, staged in shared memory (the static shared form).
static mut TILE: SharedArray<f32, { BLOCK as usize }> = SharedArray::UNINIT;

/// Reverses `input` within each block of [`BLOCK`] elements: `out[b·B + t] =
/// input[b·B + (B − 1 − t)]`, through the static shared array `TILE`. Grid: 1D blocks
/// of exactly `BLOCK` threads, `input.len() == out.len()` a multiple of `BLOCK` (other
/// threads write nothing).
#[kernel(dims = 1)]
#[allow(static_mut_refs)] // the chapter's form: `unsafe` at each use
pub fn reverse_blocks(input: &[f32], mut out: DisjointSlice<f32>) {
    let i = thread::index_1d();
    let t = thread::threadIdx_x() as usize;
    let b = BLOCK as usize;
    let full = input.len() == out.len() && input.len().is_multiple_of(b) && i.get() < input.len();
    if full {
        // SAFETY: each thread writes its own element; the barrier orders the reads.
        unsafe { TILE[t] = input[i.get()] };
    }
    thread::sync_threads();
    if full {
        if let Some(o) = out.get_mut(&i) {
            // SAFETY: element B − 1 − t, written by thread B − 1 − t before the barrier.
            *o = unsafe { TILE[b - 1 - t] };
        }
    }
}
