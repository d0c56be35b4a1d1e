//! `linked_math`: kernels that call `#[inline(never)]` functions of the
//! separate device library crate `mathlib`, so their PTX needs the linker.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

use device_std::{kernel, thread, DisjointSlice};
use mathlib::Affine;

/// `out[i] = horner(coeffs, xs[i])`; grid: at least `out.len()` threads,
/// `xs` at least as long as `out`.
#[kernel]
pub fn poly_eval(xs: &[f32], coeffs: &[f32], mut out: DisjointSlice<f32>) {
    let i = thread::index_1d();
    let k = i.get();
    if let Some(y) = out.get_mut(&i) {
        *y = mathlib::horner(coeffs, xs[k]);
    }
}

/// `out[i] = params.scale * xs[i] + params.shift` for `i < params.count`.
#[kernel]
pub fn affine(params: Affine, xs: &[f32], mut out: DisjointSlice<f32>) {
    let i = thread::index_1d();
    let k = i.get();
    if (k as u64) < params.count {
        if let Some(y) = out.get_mut(&i) {
            *y = mathlib::apply_affine(&params, xs[k]);
        }
    }
}
