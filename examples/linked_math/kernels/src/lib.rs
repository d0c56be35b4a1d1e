//! `linked_math`: kernels that call `#[inline(never)]` functions of the
//! separate device library crate `mathlib`, so their PTX needs the linker.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]
// `&[T]` crosses the kernel boundary as one 16-byte (ptr, len) aggregate; see device-std.
#![allow(improper_ctypes_definitions)]

#[cfg(target_arch = "nvptx64")]
mod kernels {
    use device_std::{thread, DisjointSlice};
    use mathlib::Affine;

    /// `out[i] = horner(coeffs, xs[i])`; grid: at least `out.len()` threads,
    /// `xs` at least as long as `out`.
    #[no_mangle]
    pub extern "ptx-kernel" fn poly_eval(xs: &[f32], coeffs: &[f32], mut out: DisjointSlice<f32>) {
        let i = thread::index_1d();
        let k = i.get();
        if let Some(y) = out.get_mut(&i) {
            *y = mathlib::horner(coeffs, xs[k]);
        }
    }

    /// `out[i] = params.scale * xs[i] + params.shift` for `i < params.count`.
    #[no_mangle]
    pub extern "ptx-kernel" fn affine(params: Affine, xs: &[f32], mut out: DisjointSlice<f32>) {
        let i = thread::index_1d();
        let k = i.get();
        if (k as u64) < params.count {
            if let Some(y) = out.get_mut(&i) {
                *y = mathlib::apply_affine(&params, xs[k]);
            }
        }
    }
}
