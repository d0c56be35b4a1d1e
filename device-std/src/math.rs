//! The few float functions kernels need that `core` has no device version
//! of (`f32::exp` lives in `std`).
//!
//! They use the hardware's approximations (PTX ISA 9.0 `ex2.approx.ftz.f32`:
//! maximum relative error 2^-22 in the full range, subnormal inputs and
//! results flushed to zero), like CUDA C++'s `__expf`/`exp2f` with
//! `-use_fast_math`. The emulator computes `f32::exp2` with the same
//! flushing, so results can differ from the GPU's in the last bits.

use crate::host::on_device;

/// `2^x` (`ex2.approx.ftz.f32`).
#[inline(always)]
pub fn exp2f(x: f32) -> f32 {
    // SAFETY: a pure arithmetic instruction.
    on_device!("math::exp2f", {
        unsafe { crate::intrinsics::ex2_approx_ftz(x) }
    }, emulated: {
        // `.ftz`: subnormal inputs and results are flushed to zero.
        let x = if x.is_subnormal() { 0.0 } else { x };
        let y = std::primitive::f32::exp2(x);
        if y.is_subnormal() {
            0.0
        } else {
            y
        }
    })
}

/// `e^x`, as `2^(x * log2(e))` (CUDA's `__expf`). The extra rounding of the
/// product adds a relative error of about `|x| * 2^-24`.
#[inline(always)]
pub fn expf(x: f32) -> f32 {
    exp2f(x * core::f32::consts::LOG2_E)
}

/// `a * b + c` with one rounding (`fma.rn.f32`, PTX ISA 9.0 §9.7.3.6), like
/// CUDA C++'s `fmaf`. On the host (type-checking builds) it is computed in
/// `f64` and rounded once to `f32`, which can differ from a true fused
/// multiply-add in the last bit.
#[inline(always)]
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        #[allow(unused_unsafe)]
        // SAFETY: a pure arithmetic intrinsic.
        unsafe {
            core::intrinsics::fmaf32(a, b, c)
        }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        (a as f64 * b as f64 + c as f64) as f32
    }
}
