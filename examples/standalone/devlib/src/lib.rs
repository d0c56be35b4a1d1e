//! A device library: `affine` is `#[inline(never)]`, so a kernel crate's PTX holds an
//! `.extern .func` that the linker resolves from this crate's PTX; `clamp` is generic,
//! so each caller instantiates it in its own crate.
//!
//! It builds for the host too, where `Affine` is the very type the host passes by value
//! and `Clamped` the very type it reads back.
#![no_std]

/// `y = clamp(scale * x + shift, lo, hi)`, passed to kernels by value (16 bytes, align 4).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, device_std::KernelStruct)]
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

/// A clamped integer and which bound it met, written by kernels into a buffer the host
/// reads back: 8 bytes aligned to 4, the last 3 of them padding.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, device_std::KernelStruct)]
pub struct Clamped {
    /// The input limited to `lo..=hi`.
    pub value: i32,
    /// -1 when the input was below `lo`, 1 when above `hi`, 0 otherwise.
    pub side: i8,
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
