//! `fmod`, `remainder` and `remquo`: exact, by integer long division of the
//! significands.

use super::basic::ldexp;
use super::consts::MANT;

/// `(integer significand, exponent of its last bit)` of a finite `a > 0`.
#[inline(always)]
fn decompose(a: f64) -> (u64, i32) {
    let b = a.to_bits();
    let e = (b >> 52) as i32;
    if e == 0 {
        (b, -1074)
    } else {
        ((b & MANT) | (1 << 52), e - 1075)
    }
}

/// `(ax mod ay, low 32 bits of the quotient)` for finite positive `ax`, `ay`: exact,
/// by integer long division 11 bits a step (at most 191 steps, a loop only as long as
/// the exponents are apart).
#[inline(always)]
fn fmod_parts(ax: f64, ay: f64) -> (f64, u32) {
    if ax < ay {
        return (ax, 0);
    }
    let (mx, ex) = decompose(ax);
    let (my, ey) = decompose(ay);
    // ay > 0, so my ≥ 1: dividing by a NonZeroU64 has no panic path.
    let nz = core::num::NonZeroU64::new(my).unwrap_or(core::num::NonZeroU64::MIN);
    let mut q = (mx / nz) as u32;
    let mut r = mx % nz;
    let mut d = ex - ey; // ≥ 0 since ax ≥ ay
    while d > 0 {
        let s = if d < 11 { d } else { 11 };
        let t = r << s;
        let qs = t / nz;
        r = t - qs * my;
        q = (q << s).wrapping_add(qs as u32);
        d -= s;
    }
    (ldexp(r as f64, ey), q)
}

/// Whether `fmod`/`remainder` give NaN (or `x` itself) without dividing.
#[inline(always)]
fn rem_special(x: f64, y: f64) -> Option<f64> {
    if x.is_nan() || y.is_nan() || x.is_infinite() || y == 0.0 {
        Some((x * y) / (x * y))
    } else if y.is_infinite() || x == 0.0 {
        Some(x)
    } else {
        None
    }
}

/// `x - trunc(x/y)·y`, exact, with the sign of `x`. `fmod(±0, y) = ±0` (y ≠ 0),
/// `fmod(x, ±∞) = x` (finite `x`), NaN for `x` infinite or `y` zero. A loop whose
/// length grows with the exponent difference of `x` and `y`. Every target. Source:
/// CUDA Math API `fmod`; C99 F.9.7.1.
#[inline]
pub fn fmod(x: f64, y: f64) -> f64 {
    if let Some(r) = rem_special(x, y) {
        return r;
    }
    fmod_parts(x.abs(), y.abs()).0.copysign(x)
}

/// `(x - n·y, n)` with `n` the integer nearest `x/y` (ties to even), `|rem| ≤ |y|/2`.
#[inline(always)]
fn remquo_parts(x: f64, y: f64) -> (f64, u32) {
    let ay = y.abs();
    let (mut r, mut q) = fmod_parts(x.abs(), ay);
    let d = ay - r;
    if r > d || (r == d && q & 1 == 1) {
        r -= ay;
        q = q.wrapping_add(1);
    }
    (if x.is_sign_negative() { -r } else { r }, q)
}

/// IEEE 754 remainder `x - n·y`, `n` the integer nearest `x/y` (ties to even);
/// exact. A zero result has the sign of `x`; special values as [`fmod`]. Every
/// target. Source: CUDA Math API `remainder`; C99 F.9.7.2.
#[inline]
pub fn remainder(x: f64, y: f64) -> f64 {
    if let Some(r) = rem_special(x, y) {
        return r;
    }
    remquo_parts(x, y).0
}

/// `(remainder(x, y), q)` with `q` the low 3 bits of the rounded quotient
/// `|x/y|`, negated when `x/y` is negative (as glibc; C asks for at least 3 bits);
/// `q = 0` where the remainder is NaN. Every target. Source: CUDA Math API
/// `remquo`; C99 F.9.7.3.
#[inline]
pub fn remquo(x: f64, y: f64) -> (f64, i32) {
    if let Some(r) = rem_special(x, y) {
        return (r, 0);
    }
    let (r, q) = remquo_parts(x, y);
    let q = (q & 7) as i32;
    (r, if (x < 0.0) != (y < 0.0) { -q } else { q })
}
