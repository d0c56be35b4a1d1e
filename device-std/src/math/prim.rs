//! The exact operations every math function is built from: fused multiply-add,
//! square root and the rounding functions, each correctly rounded (or exact) by
//! IEEE 754, so the GPU and the host give the same bits.
//!
//! On nvptx64 each is one PTX instruction (`fma.rn`, `sqrt.rn`, `cvt.rmi`,
//! `cvt.rpi`, `cvt.rzi`, `cvt.rni`), reached through LLVM's intrinsics; on the
//! host (the emulator, tests, type-checking builds) the `libm` crate's
//! correctly rounded implementations. rustc's plain `+ - * /` are `add.rn`,
//! `sub.rn`, `mul.rn`, `div.rn` on the GPU: the explicit rounding keeps ptxas
//! from fusing a multiply and an add, so they match the host's too.

macro_rules! prim {
    ($(#[$doc:meta])* $name:ident($($arg:ident),+) -> $t:ty, $intrinsic:ident, $host:path) => {
        $(#[$doc])*
        #[inline(always)]
        pub fn $name($($arg: $t),+) -> $t {
            #[cfg(target_arch = "nvptx64")]
            {
                #[allow(unused_unsafe)]
                // SAFETY: a pure arithmetic intrinsic, defined for every input.
                unsafe {
                    core::intrinsics::$intrinsic($($arg),+)
                }
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                $host($($arg),+)
            }
        }
    };
}

prim!(
    /// `a * b + c` rounded once (`fma.rn.f32`).
    fmaf(a, b, c) -> f32, fmaf32, libm::fmaf
);
prim!(
    /// `a * b + c` rounded once (`fma.rn.f64`).
    fma(a, b, c) -> f64, fmaf64, libm::fma
);
prim!(
    /// Correctly rounded square root (`sqrt.rn.f32`).
    sqrtf(x) -> f32, sqrtf32, libm::sqrtf
);
prim!(
    /// Correctly rounded square root (`sqrt.rn.f64`).
    sqrt(x) -> f64, sqrtf64, libm::sqrt
);
prim!(
    /// Largest integer not above `x` (`cvt.rmi.f32.f32`).
    floorf(x) -> f32, floorf32, libm::floorf
);
prim!(
    /// Largest integer not above `x` (`cvt.rmi.f64.f64`).
    floor(x) -> f64, floorf64, libm::floor
);
prim!(
    /// Smallest integer not below `x` (`cvt.rpi.f32.f32`).
    ceilf(x) -> f32, ceilf32, libm::ceilf
);
prim!(
    /// Smallest integer not below `x` (`cvt.rpi.f64.f64`).
    ceil(x) -> f64, ceilf64, libm::ceil
);
prim!(
    /// `x` rounded toward zero (`cvt.rzi.f32.f32`).
    truncf(x) -> f32, truncf32, libm::truncf
);
prim!(
    /// `x` rounded toward zero (`cvt.rzi.f64.f64`).
    trunc(x) -> f64, truncf64, libm::trunc
);
prim!(
    /// `x` rounded to the nearest integer, ties to even (`cvt.rni.f32.f32`).
    rintf(x) -> f32, round_ties_even_f32, libm::rintf
);
prim!(
    /// `x` rounded to the nearest integer, ties to even (`cvt.rni.f64.f64`).
    rint(x) -> f64, round_ties_even_f64, libm::rint
);

/// `x` rounded to the nearest integer, ties away from zero; exact. On the GPU
/// CUDA's two instructions, `cvt.rzi(add.rz(x, ±0.5))`: the sum rounded toward zero
/// never reaches the next integer unless `x` is at least halfway there, and every `x`
/// of magnitude 2^23 or more is an integer already (the sum truncates back to it).
/// On the host `libm::roundf`. Both exact, so the same bits.
#[inline(always)]
pub fn roundf(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        // SAFETY: a pure arithmetic intrinsic, defined for every input.
        truncf(unsafe { crate::intrinsics::add_rz_f32(x, 0.5f32.copysign(x)) })
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        libm::roundf(x)
    }
}

/// [`roundf`] for `f64` (`add.rz.f64`, `cvt.rzi.f64.f64`; every `x` of magnitude 2^52
/// or more is an integer); exact. On the host `libm::round`.
#[inline(always)]
pub fn round(x: f64) -> f64 {
    #[cfg(target_arch = "nvptx64")]
    {
        // SAFETY: a pure arithmetic intrinsic, defined for every input.
        trunc(unsafe { crate::intrinsics::add_rz_f64(x, 0.5f64.copysign(x)) })
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        libm::round(x)
    }
}
