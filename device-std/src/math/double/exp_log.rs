//! Exponentials, logarithms and powers in `f64`: `exp`, `exp2`, `exp10`, `expm1`, `log`,
//! `log2`, `log10`, `log1p`, `pow`, `powi`, and the kernels other modules share (`e^x`
//! of a double-double, `log` as a double-double).

use super::arith::{
    abs_below, f32_truncated, f64_of_f32, f64_of_int, fast_two_sum, high_word, poly, pow2,
    recip_refined, scale, scale_normal, two_prod, two_sum, with_high_word,
};
use super::consts::{LN2_H, LN2_L, ROUND_MAGIC, TWO54};
use crate::math::prim;
use crate::math::prim::fma;

const LOG2E: f64 = core::f64::consts::LOG2_E;
const LOG2_10: f64 = core::f64::consts::LOG2_10;

/// ln 2 with 42 significant bits (`e * LN2_H42` is exact for |e| < 2^11), and the rest.
const LN2_H42: f64 = 0.6931471805598903;
const LN2_L42: f64 = 5.497923018708371e-14;
const INVLN2_H: f64 = core::f64::consts::LOG2_E;
const INVLN2_L: f64 = 2.0355273740931033e-17;
const LN10_H: f64 = core::f64::consts::LN_10;
const LN10_L: f64 = -2.1707562233822494e-16;
const INVLN10_H: f64 = core::f64::consts::LOG10_E;
const INVLN10_L: f64 = 1.098319650216765e-17;
const LOG10_2_H: f64 = core::f64::consts::LOG10_2;
const LOG10_2_L: f64 = -2.8037281277851704e-18;
const TWO_THIRDS_H: f64 = 0.6666666666666666;
const TWO_THIRDS_L: f64 = 3.700743415417188e-17;

/// `scripts/math_coeffs_f64.py exp`: Q(r) = (e^r - 1 - r) / r^2 on [-0.3467, 0.3467], degree 10: max rel err 2^-58.2 (2^-57.5 with the coefficients rounded to f64).
#[allow(clippy::excessive_precision)]
pub(super) const EXP_C: [f64; 11] = [
    0.5,
    0.1666666666666667,
    0.04166666666666667,
    0.00833333333332612,
    0.0013888888888883737,
    0.00019841269874873975,
    2.480158732558584e-05,
    2.755725533255441e-06,
    2.755727359479943e-07,
    2.510524515390137e-08,
    2.0914707069607536e-09,
];

/// `scripts/math_coeffs_f64.py log`: U(w) on [0, 0.02945], degree 7: max rel err 2^-57.6 (2^-53.8 with the coefficients rounded to f64).
#[allow(clippy::excessive_precision)]
const LOG_C: [f64; 8] = [
    0.4,
    0.2857142857142937,
    0.22222222221654733,
    0.1818181833565416,
    0.15384594934597917,
    0.13334806212100603,
    0.11706195689881364,
    0.11723603622905411,
];

/// `e^(xh + xl) = 2^k (1 + r + u)` with `|r| ≤ 0.35`, `|u| ≤ 0.07`, `1 + r + u` to about
/// 2^-60 relative, for `|xh| ≤ 746` and `|xl| ≤ ulp(xh)` (the callers bound `xh`; NaN
/// gives NaN in `r` and `u`). `k` comes from the low bits of the 1.5·2^52 rounding: no
/// float-to-integer conversion.
#[inline(always)]
pub(super) fn exp_parts(xh: f64, xl: f64) -> (i32, f64, f64) {
    let (k, r, rl) = exp_reduce(xh, xl);
    let u = fma(r * r, poly(r, &EXP_C), fma(rl, r, rl));
    (k, r, u)
}

/// `xh + xl = k ln 2 + (r + rl)`, `|r| ≤ 0.35` and `rl` below `ulp(r)` (as
/// [`exp_parts`]).
#[inline(always)]
pub(super) fn exp_reduce(xh: f64, xl: f64) -> (i32, f64, f64) {
    let t = fma(xh, LOG2E, ROUND_MAGIC);
    let kf = t - ROUND_MAGIC;
    let k = t.to_bits() as i32;
    // Exact: |k| ≤ 1077 and the difference fits in 53 bits.
    let r1 = fma(-kf, LN2_H, xh);
    let t2 = fma(-kf, LN2_L, xl);
    // r + rl = r1 + t2; where |t2| > |r1|, |r| is below 2^-40 and rl does not matter.
    let (r, rl) = fast_two_sum(r1, t2);
    (k, r, rl)
}

/// `1 + r + u` (from [`exp_parts`]) rounded once.
#[inline(always)]
pub(super) fn exp_value(r: f64, u: f64) -> f64 {
    let (h, l) = fast_two_sum(1.0, r);
    h + (l + u)
}

/// `|xh|` below this: `e^(xh + xl)` is normal and [`scale_normal`] applies.
pub(super) const EXP_FAST: f64 = 707.0;

/// `e^(xh + xl)` for `|xh| ≥` [`EXP_FAST`] or NaN: clamped, then scaled in two steps
/// (overflow to +∞, subnormal results).
#[inline(never)]
pub(super) fn exp_big(xh: f64, xl: f64) -> f64 {
    if xh.is_nan() {
        return xh + xh;
    }
    let (xh, xl) = if xh > 710.0 {
        (710.0, 0.0)
    } else if xh < -746.0 {
        (-746.0, 0.0)
    } else {
        (xh, xl)
    };
    let (k, r, u) = exp_parts(xh, xl);
    scale(exp_value(r, u), k)
}

/// `e^(xh + xl)`, rounded once.
#[inline(always)]
pub(super) fn exp_dd(xh: f64, xl: f64) -> f64 {
    if !(xh.abs() < EXP_FAST) {
        return exp_big(xh, xl);
    }
    let (k, r, u) = exp_parts(xh, xl);
    scale_normal(exp_value(r, u), k)
}

/// `e^x`. `exp(±0) = 1`, `exp(-∞) = +0`, `exp(+∞) = +∞`; overflows to +∞ above
/// 709.78…, results below 2^-1022 are subnormal (`exp(-745.13)` is the smallest).
/// Max error: 0.87 ulp measured, 0.90 for subnormal results (CUDA `exp`: 1 ulp).
/// Every target. Source: CUDA
/// Math API `exp`; C99 F.9.3.1.
#[inline]
pub fn exp(x: f64) -> f64 {
    // x = k ln 2 + r, |r| ≤ 0.347: the first step is exact (|x - k·LN2_H| < 1/2 and
    // both are multiples of ulp(x) or 2^-53), the second rounds once.
    let t = fma(x, LOG2E, ROUND_MAGIC);
    let kf = t - ROUND_MAGIC;
    let r = fma(-kf, LN2_L, fma(-kf, LN2_H, x));
    // e^r = 1 + r (1 + r Q(r)), one rounding at the end.
    let v = fma(r, fma(r, poly(r, &EXP_C), 1.0), 1.0);
    scale_or_limit(x, abs_below(x, EXP_FAST_HI), v, t, 709.8, -745.2)
}

/// The high word of [`EXP_FAST`] (its low word is 0).
const EXP_FAST_HI: u32 = 0x4086_1800;

/// The exponentials' last step: `v · 2^k`, `k` the low word of `t`, when `normal`
/// (the fast path's range); otherwise the result for NaN `x` (NaN), `x > hi` (+∞),
/// `x < lo` (+0), or `v · 2^k` in two steps (overflow to +∞, subnormal results; `v` is
/// rounded twice there, below half an ulp of the subnormal result).
#[inline(always)]
fn scale_or_limit(x: f64, normal: bool, v: f64, t: f64, hi: f64, lo: f64) -> f64 {
    let k = t.to_bits() as i32;
    if normal {
        return scale_normal(v, k);
    }
    if x.is_nan() {
        x + x
    } else if x > hi {
        f64::INFINITY
    } else if x < lo {
        0.0
    } else {
        scale(v, k)
    }
}

/// `scripts/math_coeffs_f64.py exp2_short`: P2(f) = (2^f - 1) / f on [-0.5, 0.5], degree 11: max rel err 2^-61.7 (2^-54.2 with the coefficients rounded to f64),
/// without its constant term `ln 2` (which the code adds as `LN2_H + LN2_L`).
#[allow(clippy::excessive_precision)]
const EXP2_SHORT_C: [f64; 11] = [
    0.24022650695910072,
    0.055504108664821625,
    0.00961812910762848,
    0.001333355814640647,
    0.00015403530393370734,
    1.5252733841556773e-05,
    1.3215486808705563e-06,
    1.0178057087733941e-07,
    7.0548973041554995e-09,
    4.4558179083360645e-10,
    2.5729324177362305e-11,
];

/// `scripts/math_coeffs_f64.py exp10_short`: P10(y) = (10^y - 1) / y on [-0.1506, 0.1506], degree 11: max rel err 2^-61.7 (2^-53.2 with the coefficients rounded to f64),
/// without its constant term `ln 10` (added as `LN10_H + LN10_L`).
#[allow(clippy::excessive_precision)]
const EXP10_SHORT_C: [f64; 11] = [
    2.650949055239199,
    2.034678592293478,
    1.1712551489122673,
    0.5393829291946886,
    0.20699584869672127,
    0.06808936524239452,
    0.01959769465409708,
    0.005013914554228571,
    0.0011544974308532708,
    0.00024222617541417793,
    4.646351721606715e-05,
];

/// `2^x`; special values as [`exp`]. Exact for integer `x`. Max error: 0.83 ulp
/// measured, 0.90 for subnormal results (CUDA `exp2`: 1 ulp). Every target. Source: CUDA Math API `exp2`; C99
/// F.9.3.2.
#[inline]
pub fn exp2(x: f64) -> f64 {
    // x = k + f exactly, |f| ≤ 1/2; 2^f = 1 + f P2(f), P2's constant term ln 2 as a
    // head and a tail (the head alone would cost up to 0.1 ulp).
    let t = x + ROUND_MAGIC;
    let f = x - (t - ROUND_MAGIC);
    let v = fma(f, LN2_H + fma(f, poly(f, &EXP2_SHORT_C), LN2_L), 1.0);
    scale_or_limit(x, abs_below(x, 0x408F_E000), v, t, 1024.0, -1075.0) // 1020
}

/// `10^x`; special values as [`exp`]. Max error: 0.84 ulp measured, about 0.92 for
/// subnormal results (CUDA
/// `exp10`: 1 ulp). Every target. Source: CUDA Math API `exp10`.
#[inline]
pub fn exp10(x: f64) -> f64 {
    // x = k log10(2) + y, |y| ≤ 0.1506: the first step is exact (as in `exp`), the
    // second rounds once (up to 0.21 ulp of the result). 10^y = 1 + y P10(y): the
    // leading term y·ln 10 as an exact product (y·LN10_H and its error) and 1 + y·LN10_H
    // as an exact sum, the rest added once. Rounding P10 itself (near 2, where its ulp
    // doubles) before the product would cost up to 0.25 ulp more, past 1 ulp in all.
    let t = fma(x, LOG2_10, ROUND_MAGIC);
    let kf = t - ROUND_MAGIC;
    let y = fma(-kf, LOG10_2_L, fma(-kf, LOG10_2_H, x));
    let p = y * LN10_H;
    let q = fma(
        y,
        fma(y, poly(y, &EXP10_SHORT_C), LN10_L),
        fma(y, LN10_H, -p),
    );
    let (s, se) = fast_two_sum(1.0, p);
    let v = s + (se + q);
    scale_or_limit(x, abs_below(x, 0x4073_3000), v, t, 308.3, -323.7) // 307
}

/// `e^x - 1` as `2^k (sh + sl)`, for `|x| <` [`EXP_FAST`].
#[inline(always)]
pub(super) fn expm1_parts(x: f64) -> (i32, f64, f64) {
    let (k, r, u) = exp_parts(x, 0.0);
    // 2^k (1 + p) - 1 = 2^k (p + (1 - 2^-k)).
    let m = if k > 60 { 0.0 } else { pow2(-k) };
    let (ch, cl) = two_sum(1.0, -m);
    let (sh, se) = two_sum(ch, r);
    (k, sh, se + (u + cl))
}

/// `expm1` for `|x| ≥` [`EXP_FAST`] or NaN.
#[inline(never)]
fn expm1_big(x: f64) -> f64 {
    if x < 0.0 {
        -1.0
    } else {
        exp_big(x, 0.0) // NaN, +∞ and overflow too; the 1 is far below an ulp
    }
}

/// `e^x - 1`, accurate for small `|x|`. `expm1(±0) = ±0`, `expm1(-∞) = -1`,
/// `expm1(+∞) = +∞`; overflows as [`exp`]. Max error: 0.56 ulp measured (CUDA
/// `expm1`: 1 ulp). Every target. Source: CUDA Math API `expm1`; C99 F.9.3.3.
#[inline]
pub fn expm1(x: f64) -> f64 {
    let a = x.abs();
    if a < 5.551115123125783e-17 {
        return x; // 2^-54: also ±0 and subnormals
    }
    if !(a < EXP_FAST) {
        return expm1_big(x);
    }
    let (k, sh, sl) = expm1_parts(x);
    scale_normal(sh + sl, k)
}

// ---------------------------------------------------------------- log family

/// `1/d` for `d` in [1.7071, 2.4143] (the logarithms' `2 + f`), without a division
/// instruction (`div.rn.f64` is a `MUFU.RCP64H`, five `f64` steps and a test that
/// branches to a slow path): an `f32` estimate, then one third-order step, which leaves
/// about 2^-68 before the final rounding — as close as the correctly rounded reciprocal
/// but for rare ties. Its callers correct the quotient by its exact residual.
#[inline(always)]
fn recip_near_2(d: f64) -> f64 {
    recip_refined(d, recip_f32_estimate(f32_truncated(d)))
}

/// `1/d` to about 2^-22.8 relative for `d` in [1.7071, 2.4143]: a linear minimax seed
/// (1.5% off) and two Newton steps, in `f32`.
#[inline(always)]
fn recip_f32_estimate(d: f32) -> f32 {
    let mut y = prim::fmaf(-0.239_016, d, 0.985_061_5);
    for _ in 0..2 {
        let e = prim::fmaf(-d, y, 1.0);
        y = prim::fmaf(y, e, y);
    }
    y
}

/// `ln(h + l) = e·ln 2 + (mh + ml)` for finite `h > 0` (normal or subnormal) and
/// `|l| ≤ ulp(h)` (`l` read only when `TAIL`; without it `l` is 0 and the code
/// skips the work a literal 0 would not fold away): returns `(e, mh, ml)`, `mh + ml`
/// to about 2^-66 relative.
#[inline(always)]
fn log_parts<const TAIL: bool>(h: f64, l: f64) -> (f64, f64, f64) {
    let (h, l, eadj) = if h < f64::MIN_POSITIVE {
        (h * TWO54, l * TWO54, -54)
    } else {
        (h, l, 0)
    };
    let bits = h.to_bits();
    // m = h / 2^e in [sqrt(1/2), sqrt(2)).
    let t = bits.wrapping_sub(0x3FE6_A09E_667F_3BCD);
    let e = ((t as i64) >> 52) as i32;
    let m = f64::from_bits(bits.wrapping_sub((e as i64 as u64) << 52));
    // ln m = 2 atanh(s), s = f / (2 + f), f = m - 1 (exact).
    let (sh, sl) = if TAIL {
        let ls = l * pow2(-(e >> 1)) * pow2(-(e - (e >> 1)));
        let (fh, fl) = two_sum(m - 1.0, ls);
        let dh = 2.0 + fh;
        let dl = ((2.0 - dh) + fh) + fl;
        let inv = recip_near_2(dh);
        let sh = fh * inv;
        (sh, (fma(-sh, dh, fh) + (fl - sh * dl)) * inv)
    } else {
        let fh = m - 1.0;
        let dh = 2.0 + fh;
        let dl = (2.0 - dh) + fh;
        let inv = recip_near_2(dh);
        let sh = fh * inv;
        (sh, fma(-sh, dl, fma(-sh, dh, fh)) * inv)
    };
    // 2 atanh(s) = 2s + 2s^3/3 + s^5 U(s^2); s³ and (2/3)s³ as unnormalized pairs
    // (their tails only join the final sum).
    let (z, ze) = two_prod(sh, sh);
    let ze = ze + 2.0 * sh * sl;
    let (c3h, c3e) = two_prod(z, sh);
    let c3l = c3e + fma(ze, sh, z * sl);
    let t3h = c3h * TWO_THIRDS_H;
    let t3l = fma(c3h, TWO_THIRDS_H, -t3h) + fma(c3l, TWO_THIRDS_H, c3h * TWO_THIRDS_L);
    let t5 = c3h * z * poly(z, &LOG_C);
    let (a, ae) = two_sum(2.0 * sh, t3h);
    let (mh, ml) = fast_two_sum(a, ae + ((2.0 * sl + t3l) + t5));
    (f64_of_int(e + eadj), mh, ml)
}

/// `ln(h + l)` as a double-double (see [`log_parts`]).
#[inline(always)]
pub(super) fn log_dd(h: f64, l: f64) -> (f64, f64) {
    let (e, mh, ml) = log_parts::<true>(h, l);
    log_join(e, mh, ml)
}

/// `ln x` as a double-double for finite `x > 0` (see [`log_parts`]).
#[inline(always)]
pub(super) fn log_dd1(x: f64) -> (f64, f64) {
    let (e, mh, ml) = log_parts::<false>(x, 0.0);
    log_join(e, mh, ml)
}

/// `e·ln 2 + (mh + ml)` as a double-double.
#[inline(always)]
fn log_join(e: f64, mh: f64, ml: f64) -> (f64, f64) {
    let (s, se) = two_sum(e * LN2_H42, mh);
    fast_two_sum(s, se + (ml + e * LN2_L42))
}

/// The value of a log-family function outside (0, ∞): NaN for NaN and negative
/// `x`, -∞ for ±0, +∞ for +∞.
#[inline(always)]
fn log_special(x: f64) -> f64 {
    if x == 0.0 {
        f64::NEG_INFINITY
    } else if x > 0.0 || x.is_nan() {
        x + x
    } else {
        f64::NAN
    }
}

/// `scripts/math_coeffs_f64.py log_short`: P(v) = (2 atanh(sqrt(v)/2) - sqrt v) / v^1.5 on [0, 0.1178], degree 6: max rel err 2^-51.0 (2^-50.9 with the coefficients rounded to f64).
#[allow(clippy::excessive_precision)]
const LOG_SHORT_C: [f64; 7] = [
    0.08333333333333337,
    0.012499999999968512,
    0.0022321428614137414,
    0.0004340275608426594,
    8.878364529636525e-05,
    1.871542240010725e-05,
    4.460765853513077e-06,
];

/// The short path of `log`, `log2`, `log10`: `ln x = e·ln 2 + (u + ut)` for `x > 0`
/// finite (subnormals scaled here; other `x` give garbage the callers replace), `u +
/// ut` to about 2^-57 relative. No division or conversion instruction.
#[inline(always)]
fn log_short(x: f64) -> (f64, f64, f64) {
    let sub = high_word(x) < 0x0010_0000;
    let (x, eadj) = if sub { (x * TWO54, -54) } else { (x, 0) };
    let hi = high_word(x);
    // m = x / 2^e in [0.70710676…, 1.41421353…) (the high word of √½ as the edge).
    let e = (hi.wrapping_sub(0x3FE6_A09E) as i32) >> 20;
    let m = with_high_word(x, hi.wrapping_sub((e as u32) << 20));
    // f = m - 1 is exact. ln m = 2 atanh(u/2) = u + u³ P(u²), u = 2f / (m + 1), |u| ≤
    // 0.3432. y ≈ 1/(m + 1) to about 2^-53 (an f32 estimate, one third-order step);
    // u = 2f·y, then ut from the residual 2f - u·(2 + f), exact but for its last
    // rounding (f - u is exact by Sterbenz's lemma), corrects u to 2^-90. ut stays near
    // 2^-53·u, so the polynomial is evaluated at u alone and ut added with its slope.
    let f = m - 1.0;
    let d = m + 1.0;
    let y0 = f64_of_f32(recip_f32_estimate(f32_truncated(d)));
    let e0 = fma(-d, y0, 1.0);
    let y = fma(y0, fma(e0, e0, e0), y0);
    let u = (f + f) * y;
    let t = f - u;
    let ut = fma(-u, f, t + t) * y;
    let v = u * u;
    (
        f64_of_int(e + eadj),
        u,
        // ut enters with the slope of 2 atanh(u/2), 1/(1 - u²/4) ≈ 1 + u²/4 (up to 1.03).
        fma(u, v * poly(v, &LOG_SHORT_C), fma(ut, 0.25 * v, ut)),
    )
}

/// Whether `x` is positive and finite (zero, negative, ∞ and NaN are not).
#[inline(always)]
fn positive_finite(x: f64) -> bool {
    x.to_bits().wrapping_sub(1) < 0x7FEF_FFFF_FFFF_FFFF
}

/// Natural logarithm. `log(±0) = -∞`, `log(1) = +0`, `log(x < 0) = NaN`,
/// `log(+∞) = +∞`; subnormal inputs are exact-scaled, not flushed. Max error:
/// 0.55 ulp measured (CUDA `log`: 1 ulp). Every target. Source: CUDA Math API
/// `log`; C99 F.9.3.7.
#[inline]
pub fn log(x: f64) -> f64 {
    let (e, u, ut) = log_short(x);
    // e·LN2_H42 is exact; |e ln 2| ≥ |u| unless e = 0, so Fast2Sum is exact.
    let (s, se) = fast_two_sum(e * LN2_H42, u);
    let r = s + (se + fma(e, LN2_L42, ut));
    if positive_finite(x) {
        r
    } else {
        log_special(x)
    }
}

/// Base-2 logarithm; special values as [`log`], exact for powers of two. Max
/// error: 0.57 ulp measured (CUDA `log2`: 1 ulp). Every target. Source: CUDA Math
/// API `log2`; C99 F.9.3.10.
#[inline]
pub fn log2(x: f64) -> f64 {
    let (e, u, ut) = log_short(x);
    // e + (u + ut)·log2(e): the product's head and its exact error; |e| ≥ |p| or e = 0.
    let p = u * INVLN2_H;
    let pe = fma(u, INVLN2_H, -p);
    let (s, se) = fast_two_sum(e, p);
    let r = s + (se + (pe + fma(ut, INVLN2_H, u * INVLN2_L)));
    if positive_finite(x) {
        r
    } else {
        log_special(x)
    }
}

/// Base-10 logarithm; special values as [`log`]. Max error: 0.54 ulp measured
/// (CUDA `log10`: 1 ulp). Every target. Source: CUDA Math API `log10`; C99 F.9.3.8.
#[inline]
pub fn log10(x: f64) -> f64 {
    let (e, u, ut) = log_short(x);
    // e·log10(2) + (u + ut)·log10(e), each product as a head and its exact error;
    // |e log10 2| ≥ 0.30 > |u log10 e| unless e = 0.
    let a = e * LOG10_2_H;
    let ae = fma(e, LOG10_2_H, -a);
    let b = u * INVLN10_H;
    let be = fma(u, INVLN10_H, -b);
    let (s, se) = fast_two_sum(a, b);
    let lo = fma(e, LOG10_2_L, fma(ut, INVLN10_H, u * INVLN10_L));
    let r = s + (se + ((ae + be) + lo));
    if positive_finite(x) {
        r
    } else {
        log_special(x)
    }
}

/// `ln(1 + x)`, accurate for small `|x|`. `log1p(±0) = ±0`, `log1p(-1) = -∞`,
/// `log1p(x < -1) = NaN`, `log1p(+∞) = +∞`. Max error: 0.50 ulp measured (CUDA
/// `log1p`: 1 ulp). Every target. Source: CUDA Math API `log1p`; C99 F.9.3.9.
#[inline]
pub fn log1p(x: f64) -> f64 {
    if !(x > -1.0 && x < f64::INFINITY) {
        return log_special(x + 1.0);
    }
    if x.abs() < 5.551115123125783e-17 {
        return x;
    }
    let (u, ul) = two_sum(1.0, x);
    let (h, l) = log_dd(u, ul);
    h + l
}

// ---------------------------------------------------------------- pow

/// Whether `y` is an odd integer (false for ±∞, NaN, and every `|y| ≥ 2^53`).
#[inline(always)]
fn is_odd_int(y: f64) -> bool {
    let h = y * 0.5;
    prim::trunc(y) == y && prim::trunc(h) != h && y.abs() < 9007199254740992.0
}

/// `x^y`. Every case of C99 F.9.4.4: `pow(x, ±0) = 1` (even for NaN `x`),
/// `pow(1, y) = 1` (even for NaN `y`), `pow(-1, ±∞) = 1`, `pow(±0, y)` is ±∞ or ±0
/// by the sign and parity of `y`, `pow(x < 0, non-integer y) = NaN`
/// (`pow(-8, 1/3)` too), `pow(x < 0, integer y)` carries the sign of odd powers,
/// `pow(x, ±∞)` and `pow(±∞, y)` by `|x|` against 1 and the sign of `y`; overflow to
/// ±∞ and underflow to (subnormal or) zero. Computed as `e^(y·ln|x|)` with `ln|x|`
/// and the product in double-double. Max error: 1.12 ulp measured (CUDA `pow`:
/// 2 ulp). Every target. Source: CUDA Math API `pow`; C99 F.9.4.4.
#[inline]
pub fn pow(x: f64, y: f64) -> f64 {
    let ax = x.abs();
    let yint = prim::trunc(y) == y;
    let special = x == 0.0
        || !(ax < f64::INFINITY)
        || !(y.abs() < f64::INFINITY)
        || y == 0.0
        || x == 1.0
        || (x < 0.0 && !yint);
    if special {
        return pow_special(x, y);
    }
    let (lh, ll) = log_dd1(ax);
    let zh = y * lh;
    let zl = fma(y, lh, -zh) + y * ll;
    let r = exp_dd(zh, zl);
    if x < 0.0 && is_odd_int(y) {
        -r
    } else {
        r
    }
}

#[inline(never)]
fn pow_special(x: f64, y: f64) -> f64 {
    let ax = x.abs();
    if y == 0.0 || x == 1.0 {
        return 1.0;
    }
    if x.is_nan() || y.is_nan() {
        return x + y;
    }
    if y.is_infinite() {
        return if ax == 1.0 {
            1.0
        } else if (ax < 1.0) == (y < 0.0) {
            f64::INFINITY
        } else {
            0.0
        };
    }
    let odd = is_odd_int(y);
    if x == 0.0 {
        return match (y < 0.0, odd) {
            (true, true) => f64::INFINITY.copysign(x),
            (true, false) => f64::INFINITY,
            (false, true) => x,
            (false, false) => 0.0,
        };
    }
    if ax == f64::INFINITY {
        let r = if y < 0.0 { 0.0 } else { f64::INFINITY };
        return if x < 0.0 && odd { -r } else { r };
    }
    // Negative finite x, non-integer y.
    f64::NAN
}

/// `x^n` by repeated squaring (`n < 0`: `1 / x^|n|`), the semantics of std's
/// `f64::powi` (LLVM's `llvm.powi`): exact for small integer powers of small
/// integers, otherwise an error growing with `log2 |n|` (about `log2|n| + 1` roundings); `powi(x, 0) = 1` for every `x`, NaN included. Not a CUDA function
/// (use [`pow`] for a bounded error). Every target.
#[inline]
pub fn powi(x: f64, n: i32) -> f64 {
    let mut e = n.unsigned_abs();
    let mut b = x;
    let mut acc = 1.0;
    while e != 0 {
        if e & 1 != 0 {
            acc *= b;
        }
        b *= b;
        e >>= 1;
    }
    if n < 0 {
        1.0 / acc
    } else {
        acc
    }
}
