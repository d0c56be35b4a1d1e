//! The exact `f64` functions: rounding to integers (`floor`, `rint`, `lround`,
//! `llrint`, …), sign and comparison (`fabs`, `copysign`, `fmin`, `fdim`, …) and the
//! exponent and representation functions (`ldexp`, `scalbn`, `scalbln`, `ilogb`, `logb`,
//! `frexp`, `modf`, `nextafter`, `nan`).

use super::arith::normalize;
use super::consts::{MANT, TWO54};
use crate::math::prim;

/// Largest integer not above `x` (`cvt.rmi.f64.f64`); exact. Every target. Source:
/// CUDA Math API `floor`; C99 F.9.6.2.
#[inline]
pub fn floor(x: f64) -> f64 {
    prim::floor(x)
}

/// Smallest integer not below `x` (`cvt.rpi.f64.f64`); exact, `ceil(-0.5) = -0`.
/// Every target. Source: CUDA Math API `ceil`; C99 F.9.6.1.
#[inline]
pub fn ceil(x: f64) -> f64 {
    prim::ceil(x)
}

/// `x` rounded toward zero (`cvt.rzi.f64.f64`); exact. Every target. Source: CUDA
/// Math API `trunc`; C99 F.9.6.8.
#[inline]
pub fn trunc(x: f64) -> f64 {
    prim::trunc(x)
}

/// `x` rounded to the nearest integer, ties to even (`cvt.rni.f64.f64`); exact.
/// Every target. Source: CUDA Math API `rint`; C99 F.9.6.4.
#[inline]
pub fn rint(x: f64) -> f64 {
    prim::rint(x)
}

/// Same as [`rint`] (the rounding mode is always to nearest). Exact. Every target.
/// Source: CUDA Math API `nearbyint`; C99 F.9.6.3.
#[inline]
pub fn nearbyint(x: f64) -> f64 {
    prim::rint(x)
}

/// `x` rounded to the nearest integer, ties away from zero; exact,
/// `round(-0.4) = -0`. Every target. Source: CUDA Math API `round`; C99 F.9.6.6.
#[inline]
pub fn round(x: f64) -> f64 {
    prim::round(x)
}

/// [`rint`] as an `i64`; out-of-range values saturate to `i64::MIN`/`i64::MAX` and
/// NaN gives 0 (Rust's `as`; C leaves them unspecified). Every target. Source: CUDA
/// Math API `llrint`.
#[inline]
pub fn lrint(x: f64) -> i64 {
    prim::rint(x) as i64
}

/// [`round`] as an `i64`; saturating as [`lrint`]. Every target. Source: CUDA Math
/// API `llround`.
#[inline]
pub fn lround(x: f64) -> i64 {
    round(x) as i64
}

/// `|x|`; exact, clears the sign of NaN too. Every target. Source: CUDA Math API
/// `fabs`.
#[inline]
pub fn fabs(x: f64) -> f64 {
    x.abs()
}

/// `|x|` with the sign of `y`; exact. Every target. Source: CUDA Math API `copysign`.
#[inline]
pub fn copysign(x: f64, y: f64) -> f64 {
    x.copysign(y)
}

/// `x - y` if `x > y`, else `+0`; NaN if either is NaN. Every target. Source: CUDA
/// Math API `fdim`; C99 F.9.9.1.
#[inline]
pub fn fdim(x: f64, y: f64) -> f64 {
    // A select, no branch: x − y is positive for x > y and NaN for a NaN.
    if x <= y {
        0.0
    } else {
        x - y
    }
}

/// The smaller of `x` and `y`, a NaN argument ignored (NaN only if both are);
/// `fmin(-0, +0) = -0`. Every target. Source: CUDA Math API `fmin`; C99 F.9.9.3.
#[inline]
pub fn fmin(x: f64, y: f64) -> f64 {
    if x.is_nan() {
        y
    } else if y.is_nan() || x < y {
        x
    } else if y < x {
        y
    } else {
        f64::from_bits(x.to_bits() | y.to_bits())
    }
}

/// The larger of `x` and `y`, a NaN argument ignored; `fmax(-0, +0) = +0`. Every
/// target. Source: CUDA Math API `fmax`; C99 F.9.9.2.
#[inline]
pub fn fmax(x: f64, y: f64) -> f64 {
    if x.is_nan() {
        y
    } else if y.is_nan() || x > y {
        x
    } else if y > x {
        y
    } else {
        f64::from_bits(x.to_bits() & y.to_bits())
    }
}

/// The next representable value after `x` toward `y`; `y` if `x == y`, NaN if
/// either is NaN, `±min subnormal` from zero. Every target. Source: CUDA Math API
/// `nextafter`; C99 7.12.11.3.
#[inline]
pub fn nextafter(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        return x + y;
    }
    if x == y {
        return y;
    }
    if x == 0.0 {
        return f64::from_bits(1).copysign(y);
    }
    let b = x.to_bits();
    f64::from_bits(if (x < y) == (x > 0.0) { b + 1 } else { b - 1 })
}

/// `x · 2^n`, rounded once (subnormal results included). ±0, ±∞ and NaN are
/// returned unchanged. Every target. Source: CUDA Math API `ldexp`; C99 F.9.3.6.
#[inline]
pub fn ldexp(x: f64, n: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let n = n.clamp(-2200, 2200);
    let (x, n) = if x.abs() < f64::MIN_POSITIVE {
        (x * TWO54, n - 54)
    } else {
        (x, n)
    };
    let b = x.to_bits();
    let e = ((b >> 52) & 0x7ff) as i32 + n; // biased
    if e >= 0x7ff {
        f64::INFINITY.copysign(x)
    } else if e >= 1 {
        f64::from_bits((b & !(0x7ff << 52)) | ((e as u64) << 52))
    } else if e < -54 {
        0.0f64.copysign(x)
    } else {
        // Build x·2^(n+64) (normal), then one rounding multiply by 2^-64.
        f64::from_bits((b & !(0x7ff << 52)) | (((e + 64) as u64) << 52)) * 5.421010862427522e-20
    }
}

/// Same as [`ldexp`] (the radix is 2). Every target. Source: CUDA Math API `scalbn`.
#[inline]
pub fn scalbn(x: f64, n: i32) -> f64 {
    ldexp(x, n)
}

/// `(m, e)` with `x = m · 2^e`, `0.5 ≤ |m| < 1`; `(x, 0)` for ±0, ±∞ and NaN. Exact.
/// Every target. Source: CUDA Math API `frexp`; C99 F.9.3.4.
#[inline]
pub fn frexp(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let (xn, sc) = normalize(x.abs());
    let b = xn.to_bits();
    let e = ((b >> 52) & 0x7ff) as i32 - 1022 + sc;
    (f64::from_bits((b & MANT) | (1022 << 52)).copysign(x), e)
}

/// The unbiased exponent of `x` as an `f64` (`floor(log2 |x|)`, subnormals
/// included). `logb(±0) = -∞`, `logb(±∞) = +∞`. Exact. Every target. Source: CUDA
/// Math API `logb`; C99 F.9.3.11.
#[inline]
pub fn logb(x: f64) -> f64 {
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    if !x.is_finite() {
        return x * x;
    }
    ilogb(x) as f64
}

/// The unbiased exponent of `x` as an `i32`. `ilogb(±0) = i32::MIN`,
/// `ilogb(NaN) = i32::MIN`, `ilogb(±∞) = i32::MAX`, as CUDA documents (its
/// `FP_ILOGB0` and `FP_ILOGBNAN` are `INT_MIN`). Every target. Source: CUDA Math
/// API `ilogb` (libdevice `__nv_ilogb`).
#[inline]
pub fn ilogb(x: f64) -> i32 {
    if x == 0.0 || x.is_nan() {
        return i32::MIN;
    }
    if x.is_infinite() {
        return i32::MAX;
    }
    let (xn, sc) = normalize(x.abs());
    ((xn.to_bits() >> 52) & 0x7ff) as i32 - 1023 + sc
}

/// `(fractional part, integral part)` of `x`, both with the sign of `x`:
/// `modf(±∞) = (±0, ±∞)`, `modf(NaN) = (NaN, NaN)`. Exact. Every target. Source:
/// CUDA Math API `modf`; C99 F.9.3.12.
#[inline]
pub fn modf(x: f64) -> (f64, f64) {
    let i = prim::trunc(x);
    if x.is_infinite() {
        return (0.0f64.copysign(x), x);
    }
    ((x - i).copysign(x), i)
}

// ---------------------------------------------------------------- small conversions

/// [`lrint`] under CUDA's `long long` name (the same `i64`). Every target.
#[inline(always)]
pub fn llrint(x: f64) -> i64 {
    lrint(x)
}

/// [`lround`] under CUDA's `long long` name (the same `i64`). Every target.
#[inline(always)]
pub fn llround(x: f64) -> i64 {
    lround(x)
}

/// `x · 2^n` with an `i64` exponent (CUDA `scalbln`): [`scalbn`] with `n` held to
/// ±10000 (past which every finite result is 0 or ±∞ already). Every target.
#[inline(always)]
pub fn scalbln(x: f64, n: i64) -> f64 {
    scalbn(x, n.clamp(-10_000, 10_000) as i32)
}

/// A quiet NaN (CUDA `nan`, C `nan`): `tagp` of decimal digits sets the payload (its
/// low 51 bits), anything else gives payload 0. Every target.
#[inline]
pub fn nan(tagp: &str) -> f64 {
    let mut p: u64 = 0;
    for b in tagp.bytes() {
        if !b.is_ascii_digit() {
            p = 0;
            break;
        }
        p = p.wrapping_mul(10).wrapping_add(u64::from(b - b'0'));
    }
    f64::from_bits(0x7ff8_0000_0000_0000 | (p & 0x0007_ffff_ffff_ffff))
}
