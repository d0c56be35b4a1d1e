//! Exponentials, logarithms and powers in `f64`: `exp`, `exp2`, `exp10`, `expm1`, `log`,
//! `log2`, `log10`, `log1p`, `pow`, `powi`, and the kernels other modules share (`e^x`
//! of a double-double, `log` as a double-double).

use super::arith::{
    dd_mul, f32_truncated, f64_of_f32, f64_of_int, fast_two_sum, poly, pow2, scale, scale_normal,
    two_prod, two_sum,
};
use super::consts::{LN2_H, LN2_L, ROUND_MAGIC, TWO54};
use crate::math::prim;
use crate::math::prim::fma;

const LOG2E: f64 = core::f64::consts::LOG2_E;

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
const EXP_C: [f64; 11] = [
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
/// Max error: 0.59 ulp measured (CUDA `exp`: 1 ulp). Every target. Source: CUDA
/// Math API `exp`; C99 F.9.3.1.
#[inline]
pub fn exp(x: f64) -> f64 {
    exp_dd(x, 0.0)
}

/// `2^x`; special values as [`exp`]. Exact for integer `x`. Max error: 0.64 ulp
/// measured (CUDA `exp2`: 1 ulp). Every target. Source: CUDA Math API `exp2`; C99
/// F.9.3.2.
#[inline]
pub fn exp2(x: f64) -> f64 {
    let h = x * LN2_H;
    exp_dd(h, fma(x, LN2_H, -h) + x * LN2_L)
}

/// `10^x`; special values as [`exp`]. Max error: 0.71 ulp measured (CUDA
/// `exp10`: 1 ulp). Every target. Source: CUDA Math API `exp10`.
#[inline]
pub fn exp10(x: f64) -> f64 {
    let h = x * LN10_H;
    exp_dd(h, fma(x, LN10_H, -h) + x * LN10_L)
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
    let y0 = f64_of_f32(recip_f32_estimate(f32_truncated(d)));
    let e0 = fma(-d, y0, 1.0);
    fma(y0, fma(e0, e0, e0), y0)
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

/// Natural logarithm. `log(±0) = -∞`, `log(1) = +0`, `log(x < 0) = NaN`,
/// `log(+∞) = +∞`; subnormal inputs are exact-scaled, not flushed. Max error:
/// 0.50 ulp measured (CUDA `log`: 1 ulp). Every target. Source: CUDA Math API
/// `log`; C99 F.9.3.7.
#[inline]
pub fn log(x: f64) -> f64 {
    if !(x > 0.0 && x < f64::INFINITY) {
        return log_special(x);
    }
    let (h, l) = log_dd1(x);
    h + l
}

/// Base-2 logarithm; special values as [`log`], exact for powers of two. Max
/// error: 0.50 ulp measured (CUDA `log2`: 1 ulp). Every target. Source: CUDA Math
/// API `log2`; C99 F.9.3.10.
#[inline]
pub fn log2(x: f64) -> f64 {
    if !(x > 0.0 && x < f64::INFINITY) {
        return log_special(x);
    }
    let (e, mh, ml) = log_parts::<false>(x, 0.0);
    let (p, pe) = dd_mul(mh, ml, INVLN2_H, INVLN2_L);
    let (s, se) = two_sum(e, p);
    s + (se + pe)
}

/// Base-10 logarithm; special values as [`log`]. Max error: 0.50 ulp measured
/// (CUDA `log10`: 1 ulp). Every target. Source: CUDA Math API `log10`; C99 F.9.3.8.
#[inline]
pub fn log10(x: f64) -> f64 {
    if !(x > 0.0 && x < f64::INFINITY) {
        return log_special(x);
    }
    let (e, mh, ml) = log_parts::<false>(x, 0.0);
    let (a, ae) = two_prod(e, LOG10_2_H);
    let ae = ae + e * LOG10_2_L;
    let (b, be) = dd_mul(mh, ml, INVLN10_H, INVLN10_L);
    let (s, se) = two_sum(a, b);
    s + (se + (ae + be))
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
