//! A device library crate: functions kernel crates call across a crate
//! boundary. They are `#[inline(never)]`, so a caller's PTX holds an
//! `.extern .func` that only `ptx-linker` resolves.
//!
//! The crate also builds for the host, where [`Affine`] is the same type the
//! host program passes by value: one definition, one layout, recorded by
//! `#[derive(device_std::KernelStruct)]` for both sides.
#![no_std]

/// `y = scale * x + shift` for elements `0..count`; passed to kernels by
/// value as one `.param .align 8 .b8 [16]`.
#[repr(C)]
#[derive(
    Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, device_std::KernelStruct,
)]
pub struct Affine {
    /// Multiplier.
    pub scale: f32,
    /// Addend.
    pub shift: f32,
    /// Number of elements to transform.
    pub count: u64,
}

/// `scale * x + shift`.
#[inline(never)]
pub fn apply_affine(params: &Affine, x: f32) -> f32 {
    params.scale * x + params.shift
}

/// Evaluates `coeffs[0] + coeffs[1] x + ... + coeffs[n-1] x^(n-1)` by
/// Horner's rule, in `f32`.
#[inline(never)]
pub fn horner(coeffs: &[f32], x: f32) -> f32 {
    let mut acc = 0.0f32;
    for &c in coeffs.iter().rev() {
        acc = acc * x + c;
    }
    acc
}
