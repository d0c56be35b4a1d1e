//! The kernel crate: two kernels that call the device library `devlib`.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

use device_std::{kernel, thread, DisjointSlice};
use devlib::{Affine, Clamped};

/// `out[i] = clamp(p.scale * xs[i] + p.shift, p.lo, p.hi)`. Grid: at least `out.len()`
/// threads in one dimension (`dims = 1` declares it: the y and z indices fold away, and a
/// 2D or 3D launch is refused); `xs` at least as long as `out`.
#[kernel(dims = 1)]
pub fn transform(p: Affine, xs: &[f32], mut out: DisjointSlice<f32>) {
    let i = thread::index_1d();
    let k = i.get();
    if let Some(y) = out.get_mut(&i) {
        *y = devlib::clamp(devlib::affine(&p, xs[k]), p.lo, p.hi);
    }
}

/// `out[i] = clamp(xs[i], lo, hi)` on integers, with the side it was clamped on (a struct
/// per element, which the host reads back). Grid: at least `out.len()` threads; `xs` at
/// least as long as `out`.
#[kernel]
pub fn clamp_ints(xs: &[i32], lo: i32, hi: i32, mut out: DisjointSlice<Clamped>) {
    let i = thread::index_1d();
    let k = i.get();
    if let Some(y) = out.get_mut(&i) {
        let x = xs[k];
        let side = if x < lo {
            -1
        } else if x > hi {
            1
        } else {
            0
        };
        *y = Clamped {
            value: devlib::clamp(x, lo, hi),
            side,
        };
    }
}
