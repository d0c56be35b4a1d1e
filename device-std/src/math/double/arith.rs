//! The arithmetic every `f64` module builds on: exact sums and products and
//! double-double (`hi + lo`) steps (TwoSum, Fast2Sum, the FMA product error), exact
//! powers of two and scaling by them, and Horner's rule ([`poly`]).

use super::consts::{ROUND_MAGIC, TWO54};
use crate::math::prim::fma;
use crate::math::single::arith::recip_1_2;

/// `a + b` as `s + e` exactly (Knuth's TwoSum; any magnitudes).
#[inline(always)]
pub(super) fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// `a + b` as `s + e` exactly when `|a| ≥ |b|` (or `a` is 0).
#[inline(always)]
pub(super) fn fast_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    (s, b - (s - a))
}

/// `a * b` as `p + e` exactly (barring over/underflow).
#[inline(always)]
pub(super) fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, fma(a, b, -p))
}

/// `(ah + al) * (bh + bl)` to about 2^-104 relative.
#[inline(always)]
pub(super) fn dd_mul(ah: f64, al: f64, bh: f64, bl: f64) -> (f64, f64) {
    let (p, e) = two_prod(ah, bh);
    fast_two_sum(p, e + (ah * bl + al * bh))
}

/// `2^k` for `k` in -1022..=1023.
#[inline(always)]
pub(super) fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// `v * 2^k` for `|k| ≤ 2044`, rounded once: the first factor is exact for the
/// `v` (in about 2^-2..2^2) the callers pass.
#[inline(always)]
pub(super) fn scale(v: f64, k: i32) -> f64 {
    let k1 = k >> 1;
    v * pow2(k1) * pow2(k - k1)
}

/// `c[0] + c[1] z + … ` (Horner, one `fma` a step; the loop is unrolled).
#[inline(always)]
pub(super) fn poly<const N: usize>(z: f64, c: &[f64; N]) -> f64 {
    let Some((&last, rest)) = c.split_last() else {
        return 0.0;
    };
    let mut acc = last;
    for &ci in rest.iter().rev() {
        acc = fma(acc, z, ci);
    }
    acc
}

/// `v · 2^k` by adding `k` to the exponent field, for `v` and `v · 2^k` normal (an
/// add to the high word alone: a 64-bit add would carry through the low word).
#[inline(always)]
pub(super) fn scale_normal(v: f64, k: i32) -> f64 {
    with_high_word(v, high_word(v).wrapping_add((k as u32) << 20))
}

/// `|x| < h·2^32` (`h` the high word of a bound whose low word is 0), false for NaN:
/// one `f32` comparison of `x`'s high word (the `f64` comparison uses the slower
/// `f64` pipe). The high word read as an `f32` orders like `|x|`, and is NaN only for
/// `|x| ≥ 2^1017` or NaN.
#[inline(always)]
pub(super) fn abs_below(x: f64, h: u32) -> bool {
    f32::from_bits(high_word(x)).abs() < f32::from_bits(h)
}

/// `1/a` for `1 < a ≤ 2^1000` without a division instruction: `div.rn.f64` calls a
/// slow path, and a call inside an unrolled loop makes ptxas reload every constant
/// after it. `a = m·2^e`, an `f32` estimate of `1/m` (2^-23), one third-order step
/// (about 2^-68 before rounding), then `2^-e` exactly: the correctly rounded
/// reciprocal but for rare ties. Callers carry the residual `fma(-u, a, 1)`.
#[inline(always)]
pub(super) fn recip_above_1(a: f64) -> f64 {
    let h = high_word(a);
    let e = (h >> 20) - 1023;
    let m = with_high_word(a, (h & 0x000F_FFFF) | 0x3FF0_0000);
    let y = recip_refined(m, recip_1_2(f32_truncated(m)));
    with_high_word(y, high_word(y).wrapping_sub(e << 20))
}

/// `1/d` from an `f32` estimate `y0` of it (to about 2^-22): one third-order step,
/// about 2^-66 before the final rounding. No division instruction.
#[inline(always)]
pub(super) fn recip_refined(d: f64, y0: f32) -> f64 {
    let y0 = f64_of_f32(y0);
    let e0 = fma(-d, y0, 1.0);
    fma(y0, fma(e0, e0, e0), y0)
}

/// The high 32 bits of `x` (sign, exponent, top 20 mantissa bits).
#[inline(always)]
pub(super) fn high_word(x: f64) -> u32 {
    (x.to_bits() >> 32) as u32
}

/// `x` with its high 32 bits replaced by `h` (the low word kept).
#[inline(always)]
pub(super) fn with_high_word(x: f64, h: u32) -> f64 {
    f64::from_bits(((h as u64) << 32) | (x.to_bits() & 0xFFFF_FFFF))
}

/// `x` as an `f32`, truncated toward zero, by bit arithmetic: for a positive `x` in
/// `f32`'s normal range (an estimate's input; `as f32` is a conversion instruction at a
/// quarter of the `f64` rate on sm_90).
#[inline(always)]
pub(super) fn f32_truncated(x: f64) -> f32 {
    f32::from_bits(((x.to_bits() >> 29) as u32).wrapping_sub(896 << 23))
}

/// `r` as an `f64` (exact) by bit arithmetic, for a positive normal `r`.
#[inline(always)]
pub(super) fn f64_of_f32(r: f32) -> f64 {
    f64::from_bits(((r.to_bits() as u64) << 29) + (896 << 52))
}

/// `k` as an `f64` (exact) by bit arithmetic and one subtraction, for `|k| < 2^31`:
/// `k` added to the low bits of 1.5·2^52, which is then subtracted. `as f64` is a
/// conversion instruction at a quarter of the `f64` rate on sm_90.
#[inline(always)]
pub(super) fn f64_of_int(k: i32) -> f64 {
    f64::from_bits(ROUND_MAGIC.to_bits().wrapping_add(k as i64 as u64)) - ROUND_MAGIC
}

/// `(|x| scaled to normal, its power-of-two scale exponent)`.
#[inline(always)]
pub(super) fn normalize(a: f64) -> (f64, i32) {
    if a < f64::MIN_POSITIVE {
        (a * TWO54, -54)
    } else {
        (a, 0)
    }
}
