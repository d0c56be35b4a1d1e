//! The exact `f32` functions: rounding to integers (`floorf`, `rintf`, `lroundf`, …),
//! sign and comparison (`fabsf`, `copysignf`, `fminf`, `fdimf`, …) and the exponent and
//! representation functions (`ldexpf`, `scalbnf`, `ilogbf`, `logbf`, `frexpf`, `modff`,
//! `nextafterf`, `nanf`).

use super::arith::pow2i;
use crate::math::prim::{
    ceilf as p_ceil, floorf as p_floor, rintf as p_rint, roundf as p_round, truncf as p_trunc,
};

/// Largest integer not above `x` (`cvt.rmi.f32.f32`; CUDA `floorf`), exact. Every target.
#[inline(always)]
pub fn floorf(x: f32) -> f32 {
    p_floor(x)
}

/// Smallest integer not below `x` (`cvt.rpi.f32.f32`; CUDA `ceilf`), exact. Every target.
#[inline(always)]
pub fn ceilf(x: f32) -> f32 {
    p_ceil(x)
}

/// `x` rounded toward zero (`cvt.rzi.f32.f32`; CUDA `truncf`), exact. Every target.
#[inline(always)]
pub fn truncf(x: f32) -> f32 {
    p_trunc(x)
}

/// `x` rounded to the nearest integer, ties to even (`cvt.rni.f32.f32`; CUDA `rintf`),
/// exact. Every target.
#[inline(always)]
pub fn rintf(x: f32) -> f32 {
    p_rint(x)
}

/// [`rintf`] (CUDA `nearbyintf`; the GPU raises no floating-point flags). Every target.
#[inline(always)]
pub fn nearbyintf(x: f32) -> f32 {
    p_rint(x)
}

/// `x` rounded to the nearest integer, ties away from zero (CUDA `roundf`, std's
/// `f32::round`), exact. Every target.
#[inline(always)]
pub fn roundf(x: f32) -> f32 {
    p_round(x)
}

/// [`rintf`] converted to `i64` (CUDA `llrintf`/`lrintf`); NaN gives 0 and values
/// out of range saturate, as Rust's `as` does (C leaves both undefined). Every target.
#[inline(always)]
pub fn lrintf(x: f32) -> i64 {
    p_rint(x) as i64
}

/// [`roundf`] converted to `i64` (CUDA `llroundf`/`lroundf`); NaN gives 0 and values
/// out of range saturate. Every target.
#[inline(always)]
pub fn lroundf(x: f32) -> i64 {
    roundf(x) as i64
}

/// [`lrintf`] under CUDA's `long long` name (the same `i64`). Every target.
#[inline(always)]
pub fn llrintf(x: f32) -> i64 {
    lrintf(x)
}

/// [`lroundf`] under CUDA's `long long` name (the same `i64`). Every target.
#[inline(always)]
pub fn llroundf(x: f32) -> i64 {
    lroundf(x)
}

/// A quiet NaN (CUDA `nanf`, C `nanf`): `tagp` of decimal digits sets the payload
/// (its low 22 bits), anything else gives payload 0. Every target.
#[inline]
pub fn nanf(tagp: &str) -> f32 {
    let mut p: u32 = 0;
    for b in tagp.bytes() {
        if !b.is_ascii_digit() {
            p = 0;
            break;
        }
        p = p.wrapping_mul(10).wrapping_add(u32::from(b - b'0'));
    }
    f32::from_bits(0x7fc0_0000 | (p & 0x003f_ffff))
}

/// `|x|` (CUDA `fabsf`), exact. Every target.
#[inline(always)]
pub fn fabsf(x: f32) -> f32 {
    x.abs()
}

/// `|x|` with the sign of `y` (CUDA `copysignf`), exact. Every target.
#[inline(always)]
pub fn copysignf(x: f32, y: f32) -> f32 {
    x.copysign(y)
}

/// The smaller of `x` and `y`, the other if one is NaN (CUDA `fminf`, `min.f32`).
/// Every target.
#[inline(always)]
pub fn fminf(x: f32, y: f32) -> f32 {
    x.min(y)
}

/// The larger of `x` and `y`, the other if one is NaN (CUDA `fmaxf`, `max.f32`).
/// Every target.
#[inline(always)]
pub fn fmaxf(x: f32, y: f32) -> f32 {
    x.max(y)
}

/// `x - y` if positive, else +0; NaN if either is (CUDA `fdimf`), exact up to the
/// rounding of the difference. Every target.
#[inline(always)]
pub fn fdimf(x: f32, y: f32) -> f32 {
    // A select, no branch: x − y is positive for x > y and NaN for a NaN.
    if x <= y {
        0.0
    } else {
        x - y
    }
}

/// `x · 2^n`, rounded once (CUDA `ldexpf`). Every target.
#[inline(always)]
pub fn ldexpf(x: f32, n: i32) -> f32 {
    let n = n.clamp(-300, 300);
    let mut y = x;
    let mut n = n;
    // Steps that keep a normal value exact; only the last can round.
    if n > 127 {
        y *= pow2i(127);
        n -= 127;
        if n > 127 {
            y *= pow2i(127);
            n -= 127;
        }
    } else if n < -126 {
        y *= pow2i(-126 + 24);
        n += 126 - 24;
        if n < -126 {
            y *= pow2i(-126 + 24);
            n += 126 - 24;
        }
    }
    y * pow2i(n.clamp(-126, 127))
}

/// [`ldexpf`] (CUDA `scalbnf`; radix 2). Every target.
#[inline(always)]
pub fn scalbnf(x: f32, n: i32) -> f32 {
    ldexpf(x, n)
}

/// `x · 2^n` with an `i64` exponent (CUDA `scalblnf`): [`scalbnf`] with `n` held to
/// ±1000 (past which every finite result is 0 or ±∞ already). Every target.
#[inline(always)]
pub fn scalblnf(x: f32, n: i64) -> f32 {
    scalbnf(x, n.clamp(-1000, 1000) as i32)
}

/// The exponent of `x` as an integer, `floor(log2|x|)` (CUDA `ilogbf`); `i32::MIN`
/// for 0 and NaN, `i32::MAX` for ±∞ (CUDA's values, as [`ilogb`](crate::math::ilogb)).
/// Every target.
#[inline(always)]
pub fn ilogbf(x: f32) -> i32 {
    let bits = x.to_bits() & 0x7fff_ffff;
    let e = (bits >> 23) as i32;
    if e == 0xff {
        if bits == 0x7f80_0000 {
            i32::MAX
        } else {
            i32::MIN
        }
    } else if e != 0 {
        e - 127
    } else if bits == 0 {
        i32::MIN
    } else {
        -127 - (bits.leading_zeros() as i32 - 9)
    }
}

/// The exponent of `x` as a float, `floor(log2|x|)` (CUDA `logbf`): −∞ for ±0, +∞
/// for ±∞, NaN for NaN. Exact. Every target.
#[inline(always)]
pub fn logbf(x: f32) -> f32 {
    // Selects, no branch: subnormals scaled by 2^24, and the exponent field made a
    // float by the 2^23 trick, (2^23 + field) − (2^23 + bias).
    let a = x.abs();
    let sub = a < f32::MIN_POSITIVE;
    let b = if sub { a * 16_777_216.0 } else { a };
    let field = f32::from_bits((b.to_bits() >> 23) | 0x4b00_0000);
    let e = field - if sub { 8_388_759.0 } else { 8_388_735.0 }; // 2^23 + 127 (+ 24)
    if a == 0.0 {
        f32::NEG_INFINITY
    } else if !(a < f32::INFINITY) {
        a // +∞ for ±∞, NaN for NaN
    } else {
        e
    }
}

/// `(m, e)` with `x = m · 2^e` and `|m|` in [1/2, 1) (CUDA `frexpf`); `(x, 0)` for
/// ±0, ±∞ and NaN. Exact. Every target.
#[inline(always)]
pub fn frexpf(x: f32) -> (f32, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let e = ilogbf(x) + 1;
    (ldexpf(x, -e), e)
}

/// `(fractional, integral)` parts of `x`, both with its sign (CUDA `modff`): ±∞ gives
/// `(±0, ±∞)`. Exact. Every target.
#[inline(always)]
pub fn modff(x: f32) -> (f32, f32) {
    let t = p_trunc(x);
    let f = if x.is_infinite() { 0.0 } else { x - t };
    (f.copysign(x), t)
}

/// The next `f32` after `x` toward `y` (CUDA `nextafterf`); `y` if they are equal,
/// NaN if either is. Every target.
#[inline(always)]
pub fn nextafterf(x: f32, y: f32) -> f32 {
    if x.is_nan() || y.is_nan() {
        return x + y;
    }
    if x == y {
        return y;
    }
    if x == 0.0 {
        return f32::from_bits(1).copysign(y);
    }
    let bits = x.to_bits();
    let away = (y > x) == (x > 0.0);
    f32::from_bits(if away { bits + 1 } else { bits - 1 })
}
