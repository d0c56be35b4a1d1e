//! [`FloatMath`]: std's float methods for `#![no_std]` kernels.

use super::double as d;
use super::single as s;

/// The float methods std has and `core` lacks, for `f32` and `f64`, under std's names
/// and with std's documented semantics; `use device_std::prelude::*;` brings it into
/// scope, so `x.sqrt()`, `x.sin()`, `x.powf(y)` read as they do with std.
///
/// Each method is the [`math`](super) function of CUDA's name (`f32::sin` →
/// [`sinf`](super::sinf), `f64::sin` → [`sin`](super::sin)); the table in
/// [`math`](super) gives their errors. `abs`, `signum`, `copysign`, `min`, `max`,
/// `clamp`, `recip`, `to_degrees` and `to_radians` are `core`'s own inherent methods
/// and need nothing.
///
/// Under the emulator (any host build with `std` in its crate graph) Rust resolves
/// `x.sin()` to std's inherent method, not this trait's: see [`math`](super) for the
/// forms that give the GPU's bits there. Every target.
pub trait FloatMath: Sized {
    /// `√self` (std `sqrt`: NaN for negative, −0 for −0); correctly rounded.
    fn sqrt(self) -> Self;
    /// `∛self` (std `cbrt`).
    fn cbrt(self) -> Self;
    /// `e^self` (std `exp`).
    fn exp(self) -> Self;
    /// `2^self` (std `exp2`).
    fn exp2(self) -> Self;
    /// `e^self − 1`, accurate near 0 (std `exp_m1`).
    fn exp_m1(self) -> Self;
    /// Natural logarithm (std `ln`).
    fn ln(self) -> Self;
    /// Base-2 logarithm (std `log2`).
    fn log2(self) -> Self;
    /// Base-10 logarithm (std `log10`).
    fn log10(self) -> Self;
    /// `ln(1 + self)`, accurate near 0 (std `ln_1p`).
    fn ln_1p(self) -> Self;
    /// Logarithm to `base`, as std computes it: `self.ln() / base.ln()`.
    fn log(self, base: Self) -> Self;
    /// `self^n` (std `powf`, C99's special cases).
    fn powf(self, n: Self) -> Self;
    /// `self^n` by repeated squaring (std `powi`, as `llvm.powi` computes it).
    fn powi(self, n: i32) -> Self;
    /// Sine, radians (std `sin`).
    fn sin(self) -> Self;
    /// Cosine, radians (std `cos`).
    fn cos(self) -> Self;
    /// Tangent, radians (std `tan`).
    fn tan(self) -> Self;
    /// `(sin, cos)` from one argument reduction (std `sin_cos`); the same bits as
    /// [`sin`](Self::sin) and [`cos`](Self::cos).
    fn sin_cos(self) -> (Self, Self);
    /// Arcsine in [−π/2, π/2] (std `asin`).
    fn asin(self) -> Self;
    /// Arccosine in [0, π] (std `acos`).
    fn acos(self) -> Self;
    /// Arctangent in [−π/2, π/2] (std `atan`).
    fn atan(self) -> Self;
    /// Four-quadrant arctangent of `self` (y) and `other` (x), in [−π, π] (std `atan2`).
    fn atan2(self, other: Self) -> Self;
    /// Hyperbolic sine (std `sinh`).
    fn sinh(self) -> Self;
    /// Hyperbolic cosine (std `cosh`).
    fn cosh(self) -> Self;
    /// Hyperbolic tangent (std `tanh`).
    fn tanh(self) -> Self;
    /// Inverse hyperbolic sine (std `asinh`).
    fn asinh(self) -> Self;
    /// Inverse hyperbolic cosine (std `acosh`).
    fn acosh(self) -> Self;
    /// Inverse hyperbolic tangent (std `atanh`).
    fn atanh(self) -> Self;
    /// `√(self² + other²)` without undue overflow (std `hypot`).
    fn hypot(self, other: Self) -> Self;
    /// `self·a + b` with one rounding (std `mul_add`).
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// Largest integer not above (std `floor`).
    fn floor(self) -> Self;
    /// Smallest integer not below (std `ceil`).
    fn ceil(self) -> Self;
    /// Nearest integer, ties away from zero (std `round`).
    fn round(self) -> Self;
    /// Nearest integer, ties to even (std `round_ties_even`).
    fn round_ties_even(self) -> Self;
    /// Integer part, toward zero (std `trunc`).
    fn trunc(self) -> Self;
    /// `self − self.trunc()` (std `fract`).
    fn fract(self) -> Self;
    /// Euclidean remainder, in [0, |rhs|) up to rounding (std `rem_euclid`), from the
    /// exact `fmod`: unlike a kernel's `%` on floats, which LLVM lowers to an inexact
    /// `x − y·trunc(x/y)` on nvptx64.
    fn rem_euclid(self, rhs: Self) -> Self;
    /// Euclidean quotient (std `div_euclid`).
    fn div_euclid(self, rhs: Self) -> Self;
}

macro_rules! float_math {
    ($t:ty, $m:ident, {
        sqrt: $sqrt:ident, cbrt: $cbrt:ident, exp: $exp:ident, exp2: $exp2:ident,
        expm1: $expm1:ident, log: $log:ident, log2: $log2:ident, log10: $log10:ident,
        log1p: $log1p:ident, pow: $pow:ident, powi: $powi:ident, sin: $sin:ident,
        cos: $cos:ident, tan: $tan:ident, sincos: $sincos:ident, asin: $asin:ident,
        acos: $acos:ident, atan: $atan:ident, atan2: $atan2:ident, sinh: $sinh:ident,
        cosh: $cosh:ident, tanh: $tanh:ident, asinh: $asinh:ident, acosh: $acosh:ident,
        atanh: $atanh:ident, hypot: $hypot:ident, fma: $fma:path, floor: $floor:ident,
        ceil: $ceil:ident, round: $round:ident, rint: $rint:ident, trunc: $trunc:ident,
        fmod: $fmod:ident $(,)?
    }) => {
        impl FloatMath for $t {
            #[inline]
            fn sqrt(self) -> $t {
                $m::$sqrt(self)
            }
            #[inline]
            fn cbrt(self) -> $t {
                $m::$cbrt(self)
            }
            #[inline]
            fn exp(self) -> $t {
                $m::$exp(self)
            }
            #[inline]
            fn exp2(self) -> $t {
                $m::$exp2(self)
            }
            #[inline]
            fn exp_m1(self) -> $t {
                $m::$expm1(self)
            }
            #[inline]
            fn ln(self) -> $t {
                $m::$log(self)
            }
            #[inline]
            fn log2(self) -> $t {
                $m::$log2(self)
            }
            #[inline]
            fn log10(self) -> $t {
                $m::$log10(self)
            }
            #[inline]
            fn ln_1p(self) -> $t {
                $m::$log1p(self)
            }
            #[inline]
            fn log(self, base: $t) -> $t {
                $m::$log(self) / $m::$log(base)
            }
            #[inline]
            fn powf(self, n: $t) -> $t {
                $m::$pow(self, n)
            }
            #[inline]
            fn powi(self, n: i32) -> $t {
                $m::$powi(self, n)
            }
            #[inline]
            fn sin(self) -> $t {
                $m::$sin(self)
            }
            #[inline]
            fn cos(self) -> $t {
                $m::$cos(self)
            }
            #[inline]
            fn tan(self) -> $t {
                $m::$tan(self)
            }
            #[inline]
            fn sin_cos(self) -> ($t, $t) {
                $m::$sincos(self)
            }
            #[inline]
            fn asin(self) -> $t {
                $m::$asin(self)
            }
            #[inline]
            fn acos(self) -> $t {
                $m::$acos(self)
            }
            #[inline]
            fn atan(self) -> $t {
                $m::$atan(self)
            }
            #[inline]
            fn atan2(self, other: $t) -> $t {
                $m::$atan2(self, other)
            }
            #[inline]
            fn sinh(self) -> $t {
                $m::$sinh(self)
            }
            #[inline]
            fn cosh(self) -> $t {
                $m::$cosh(self)
            }
            #[inline]
            fn tanh(self) -> $t {
                $m::$tanh(self)
            }
            #[inline]
            fn asinh(self) -> $t {
                $m::$asinh(self)
            }
            #[inline]
            fn acosh(self) -> $t {
                $m::$acosh(self)
            }
            #[inline]
            fn atanh(self) -> $t {
                $m::$atanh(self)
            }
            #[inline]
            fn hypot(self, other: $t) -> $t {
                $m::$hypot(self, other)
            }
            #[inline]
            fn mul_add(self, a: $t, b: $t) -> $t {
                $fma(self, a, b)
            }
            #[inline]
            fn floor(self) -> $t {
                $m::$floor(self)
            }
            #[inline]
            fn ceil(self) -> $t {
                $m::$ceil(self)
            }
            #[inline]
            fn round(self) -> $t {
                $m::$round(self)
            }
            #[inline]
            fn round_ties_even(self) -> $t {
                $m::$rint(self)
            }
            #[inline]
            fn trunc(self) -> $t {
                $m::$trunc(self)
            }
            #[inline]
            fn fract(self) -> $t {
                self - $m::$trunc(self)
            }
            #[inline]
            fn rem_euclid(self, rhs: $t) -> $t {
                let r = $m::$fmod(self, rhs);
                if r < 0.0 {
                    r + rhs.abs()
                } else {
                    r
                }
            }
            #[inline]
            fn div_euclid(self, rhs: $t) -> $t {
                let q = $m::$trunc(self / rhs);
                if $m::$fmod(self, rhs) < 0.0 {
                    if rhs > 0.0 {
                        q - 1.0
                    } else {
                        q + 1.0
                    }
                } else {
                    q
                }
            }
        }
    };
}

float_math!(f32, s, {
    sqrt: sqrtf, cbrt: cbrtf, exp: expf, exp2: exp2f, expm1: expm1f, log: logf,
    log2: log2f, log10: log10f, log1p: log1pf, pow: powf, powi: powif, sin: sinf,
    cos: cosf, tan: tanf, sincos: sincosf, asin: asinf, acos: acosf, atan: atanf,
    atan2: atan2f, sinh: sinhf, cosh: coshf, tanh: tanhf, asinh: asinhf, acosh: acoshf,
    atanh: atanhf, hypot: hypotf, fma: super::prim::fmaf, floor: floorf, ceil: ceilf,
    round: roundf, rint: rintf, trunc: truncf, fmod: fmodf,
});

float_math!(f64, d, {
    sqrt: sqrt, cbrt: cbrt, exp: exp, exp2: exp2, expm1: expm1, log: log,
    log2: log2, log10: log10, log1p: log1p, pow: pow, powi: powi, sin: sin,
    cos: cos, tan: tan, sincos: sincos, asin: asin, acos: acos, atan: atan,
    atan2: atan2, sinh: sinh, cosh: cosh, tanh: tanh, asinh: asinh, acosh: acosh,
    atanh: atanh, hypot: hypot, fma: super::prim::fma, floor: floor, ceil: ceil,
    round: round, rint: rint, trunc: trunc, fmod: fmod,
});
