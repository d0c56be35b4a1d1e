//! `fmodf`, `remainderf` and `remquof`: exact, by a long division that takes a few
//! quotient bits per step.

use super::arith::{pow2i, recip_1_2};
use crate::math::prim::fmaf;

/// `(m, e)` with `a = m·2^e`, `m` in [1, 2), for finite positive `a` (subnormals
/// normalised; +0 gives `e` = -151, below every nonzero `f32`'s). Also `(m, 128)`
/// for ∞ and NaN.
#[inline(always)]
fn split_exp(a: f32) -> (f32, i32) {
    let sub = a < f32::MIN_POSITIVE;
    let b = if sub { a * 16_777_216.0 } else { a }; // 2^24, exact
    let bits = b.to_bits();
    let e = (bits >> 23) as i32 - if sub { 127 + 24 } else { 127 };
    (f32::from_bits((bits & 0x007f_ffff) | 0x3f80_0000), e)
}

/// Quotient bits taken per step of [`rem_core`]: `q` below 2^21 with an error below
/// 1/2 + 2^21·2^-23.
const REM_STEP: i32 = 20;

/// The remainder of `ax` by `ay` (finite `ax`, `ay > 0`) in `ay`'s frame:
/// `(r, my, n, e, ok)` with `ax - n·ay = r·2^e` exactly, `my = ay·2^-e` in [1, 2),
/// `r` in [0, `my`) and `n` the truncated quotient's low 32 bits. `ok` is false when
/// `ax`'s exponent is below `ay`'s (so `ax < ay`, and the remainder is `ax`); the
/// rest is then meaningless.
///
/// Long division with floats: `r·2^s` (at most `REM_STEP` bits at a time) less `q·my`,
/// `q = rint(r·2^s / my)` from a reciprocal good to 2^-23, so `|q − quotient| < 1`
/// and `|r| < my`: every value is a multiple of 2^-23 (the frame's `ulp(my)`) below 2
/// in magnitude, so each FMA is exact. A negative last remainder is put back in
/// [0, `my`) at the end. No integer division, no 64-bit arithmetic.
#[inline(always)]
fn rem_core(ax: f32, ay: f32) -> (f32, f32, i32, i32, bool) {
    const MAGIC: f32 = 12_582_912.0; // 1.5·2^23: rint by an addition
    let (mx, ex) = split_exp(ax);
    let (my, ey) = split_exp(ay);
    let inv = recip_1_2(my);
    let d = ex - ey;
    let ok = d >= 0;
    let s = d.clamp(0, REM_STEP);
    let mut d = d - s;
    let mut r = mx * pow2i(s);
    let big = fmaf(r, inv, MAGIC);
    r = fmaf(-(big - MAGIC), my, r);
    let mut n = big.to_bits().wrapping_sub(MAGIC.to_bits()) as i32;
    while d > 0 {
        let s = d.min(REM_STEP);
        d -= s;
        r *= pow2i(s);
        let big = fmaf(r, inv, MAGIC);
        r = fmaf(-(big - MAGIC), my, r);
        n = n
            .wrapping_shl(s as u32)
            .wrapping_add(big.to_bits().wrapping_sub(MAGIC.to_bits()) as i32);
    }
    if r < 0.0 {
        r += my;
        n = n.wrapping_sub(1);
    }
    (r, my, n, ey, ok)
}

/// `r·2^e` for a remainder of [`rem_core`] (`r` a multiple of 2^-23 below 2, `e` in
/// -149..=127): exact, the true remainder being an `f32`.
#[inline(always)]
fn rem_scale(r: f32, e: i32) -> f32 {
    let e1 = e >> 1;
    r * pow2i(e1) * pow2i(e - e1)
}

/// `x - trunc(x/y)·y`, exact, with the sign of `x` (CUDA `fmodf`): NaN for ∞ `x` or
/// 0 `y`; `x` for ∞ `y`. Every target.
#[inline(always)]
pub fn fmodf(x: f32, y: f32) -> f32 {
    let (ax, ay) = (x.abs(), y.abs());
    if !(ax < f32::INFINITY) || !(ay > 0.0) {
        return f32::NAN;
    }
    let (r, _, _, e, ok) = rem_core(ax, ay); // ∞ y: not ok, x
    if ok {
        rem_scale(r, e).copysign(x)
    } else {
        x
    }
}

/// `x - n·y` with `n` the integer nearest `x/y` (ties to even), exact, and the low
/// bits of `n` with its sign: at least 3 bits, as C's `remquo` (CUDA `remquof`).
/// NaN for ∞ `x` or 0 `y`. Every target.
#[inline(always)]
pub fn remquof(x: f32, y: f32) -> (f32, i32) {
    let (ax, ay) = (x.abs(), y.abs());
    if !(ax < f32::INFINITY) || !(ay > 0.0) {
        return (f32::NAN, 0);
    }
    let (r, my, n, e, ok) = rem_core(ax, ay);
    // Round the quotient to nearest, in the frame (exact: 2r < 4, r - my > -2).
    let twice = r + r;
    let up = twice > my || (twice == my && n & 1 != 0);
    let (r, n) = if up {
        (r - my, n.wrapping_add(1))
    } else {
        (r, n)
    };
    // ax < ay (∞ y too): n is 1 if ax > ay/2 (ay - ax is exact from ay/2 up), else 0.
    let small_up = ax > ay - ax;
    let (r, n) = if ok {
        (rem_scale(r, e), n)
    } else if small_up {
        (ax - ay, 1)
    } else {
        (ax, 0)
    };
    let n = n & 0x7fff_ffff;
    let r = if x.is_sign_negative() { -r } else { r };
    let n = if (x < 0.0) != (y < 0.0) { -n } else { n };
    (r, n)
}

/// `x - n·y` with `n` the integer nearest `x/y`, ties to even (CUDA `remainderf`),
/// exact. Every target.
#[inline(always)]
pub fn remainderf(x: f32, y: f32) -> f32 {
    remquof(x, y).0
}
