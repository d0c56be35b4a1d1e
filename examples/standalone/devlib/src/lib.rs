//! A device library: `affine` is `#[inline(never)]`, so a kernel crate's PTX holds an
//! `.extern .func` that the linker resolves from this crate's PTX; `clamp` is generic,
//! so each caller instantiates it in its own crate.
//!
//! It builds for the host too, where `Affine` is the very type the host passes by value.
#![no_std]

/// `y = clamp(scale * x + shift, lo, hi)`, passed to kernels by value (16 bytes, align 4).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, device_std::KernelStruct,
)]
pub struct Affine {
    /// Multiplier.
    pub scale: f32,
    /// Addend.
    pub shift: f32,
    /// Lower bound of the result.
    pub lo: f32,
    /// Upper bound of the result.
    pub hi: f32,
}

/// `scale * x + shift`. ptxas may fuse it into one `fma` (one rounding instead of two).
#[inline(never)]
pub fn affine(p: &Affine, x: f32) -> f32 {
    p.scale * x + p.shift
}

/// `x` limited to `lo..=hi` (`lo` when `x < lo`, `hi` when `x > hi`).
pub fn clamp<T: PartialOrd + Copy>(x: T, lo: T, hi: T) -> T {
    if x < lo {
        lo
    } else if x > hi {
        hi
    } else {
        x
    }
}
