//! `vecadd`: `c[i] = a[i] + b[i]`, one thread per element.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

use device_std::{kernel, thread, DisjointSlice};

/// Grid: at least `c.len()` threads in a 1D launch (`dims = 1`: the linker folds the
/// y and z indices away, and the loader refuses a 2D or 3D launch). `a` and `b` are at
/// least as long as `c` (a shorter input traps).
#[kernel(dims = 1)]
pub fn vecadd(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
    let i = thread::index_1d();
    let k = i.get();
    if let Some(out) = c.get_mut(&i) {
        *out = a[k] + b[k];
    }
}
