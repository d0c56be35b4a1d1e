//! `f64` functions under the CUDA Math API's double-precision names (`sin`, `exp`,
//! `pow`, …), written from `+ - * /`, bit operations and [`prim`](super::prim)'s
//! correctly rounded `fma`, `sqrt` and rounding functions only, so the GPU, the
//! emulator and a host test give the same bits.
//!
//! Shape: a Cody–Waite or exact reduction, one table-free polynomial, a few
//! double-double (`hi + lo`) steps where the last bits need them, and a rarely taken
//! path for special or huge inputs (Payne–Hanek reduction for `sin`/`cos`/`tan` of
//! `|x| ≥ 2^30`, the integer long division of `fmod`/`remainder`).
//!
//! Polynomial coefficients come from `scripts/math_coeffs_f64.py` (Chebyshev
//! interpolation at 60 digits with mpmath; each table below names its entry). The
//! "measured" error in each docstring is the largest seen against mpmath at 120 bits
//! by `device-std/tests/math_f64_accuracy.py` on random and hard-case inputs; the
//! CUDA bound is from the CUDA C++ Programming Guide, "Mathematical Functions",
//! double-precision table.

// `x - x` is the NaN of an infinite argument; `!(x < y)` is true for NaN on purpose.
#![allow(clippy::eq_op, clippy::neg_cmp_op_on_partial_ord)]

use super::prim;
use super::prim::fma;

// ---------------------------------------------------------------- helpers

/// `a + b` as `s + e` exactly (Knuth's TwoSum; any magnitudes).
#[inline(always)]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// `a + b` as `s + e` exactly when `|a| ≥ |b|` (or `a` is 0).
#[inline(always)]
fn fast_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    (s, b - (s - a))
}

/// `a * b` as `p + e` exactly (barring over/underflow).
#[inline(always)]
fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, fma(a, b, -p))
}

/// `(ah + al) * (bh + bl)` to about 2^-104 relative.
#[inline(always)]
fn dd_mul(ah: f64, al: f64, bh: f64, bl: f64) -> (f64, f64) {
    let (p, e) = two_prod(ah, bh);
    fast_two_sum(p, e + (ah * bl + al * bh))
}

/// `2^k` for `k` in -1022..=1023.
#[inline(always)]
fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// `v * 2^k` for `|k| ≤ 2044`, rounded once: the first factor is exact for the
/// `v` (in about 2^-2..2^2) the callers pass.
#[inline(always)]
fn scale(v: f64, k: i32) -> f64 {
    let k1 = k >> 1;
    v * pow2(k1) * pow2(k - k1)
}

/// `c[0] + c[1] z + … ` (Horner, one `fma` a step; the loop is unrolled).
#[inline(always)]
fn poly<const N: usize>(z: f64, c: &[f64; N]) -> f64 {
    let Some((&last, rest)) = c.split_last() else {
        return 0.0;
    };
    let mut acc = last;
    for &ci in rest.iter().rev() {
        acc = fma(acc, z, ci);
    }
    acc
}

const TWO54: f64 = 18014398509481984.0;
/// √2 as head and tail.
const SQRT_2_H: f64 = core::f64::consts::SQRT_2;
const SQRT_2_L: f64 = -9.667293313452913e-17;
const MANT: u64 = (1 << 52) - 1;
const LOG2E: f64 = core::f64::consts::LOG2_E;
const LN2_H: f64 = core::f64::consts::LN_2;
const LN2_L: f64 = 2.3190468138462996e-17;
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
const PIO2_H: f64 = core::f64::consts::FRAC_PI_2;
const PIO2_M: f64 = 6.123233995736766e-17;
const PIO2_T: f64 = -1.4973849048591698e-33;
const PI_H: f64 = core::f64::consts::PI;
const PI_L: f64 = 1.2246467991473532e-16;
const FRAC_2_PI: f64 = core::f64::consts::FRAC_2_PI;
const ISQRT2_H: f64 = core::f64::consts::FRAC_1_SQRT_2;
const ISQRT2_L: f64 = -4.833646656726457e-17;
const THIRD: f64 = 1.0 / 3.0;
/// 1.5·2^52: `(v + ROUND_MAGIC) - ROUND_MAGIC` is `v` rounded to an integer (ties to
/// even) for `|v| < 2^51`, and the low bits of the sum hold it as an integer.
const ROUND_MAGIC: f64 = 6755399441055744.0;

// ---------------------------------------------------------------- tables

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
/// `scripts/math_coeffs_f64.py sin`: S(z) = (sin sqrt z - sqrt z) / z^1.5 on [0, 0.617], degree 6: max rel err 2^-63.6 (2^-54.0 with the coefficients rounded to f64).
#[allow(clippy::excessive_precision)]
const SIN_C: [f64; 7] = [
    -0.16666666666666666,
    0.008333333333333331,
    -0.0001984126984126506,
    2.755731921933466e-06,
    -2.505210623088241e-08,
    1.6058531370931902e-10,
    -7.586682497157786e-13,
];
/// `scripts/math_coeffs_f64.py cos`: C(z) = (cos sqrt z - 1 + z/2) / z^2 on [0, 0.617], degree 6: max rel err 2^-65.8 (2^-54.0 with the coefficients rounded to f64).
#[allow(clippy::excessive_precision)]
const COS_C: [f64; 7] = [
    0.041666666666666664,
    -0.0013888888888888887,
    2.4801587301584642e-05,
    -2.755731922140032e-07,
    2.0876755790210228e-09,
    -1.1470460749696862e-11,
    4.7458637732829623e-14,
];
/// `scripts/math_coeffs_f64.py atan`: A(z) = (atan sqrt z - sqrt z) / z^1.5 on [0, 1], degree 22: max rel err 2^-61.1 (2^-54.0 with the coefficients rounded to f64).
#[allow(clippy::excessive_precision)]
const ATAN_C: [f64; 23] = [
    -0.3333333333333333,
    0.19999999999999984,
    -0.14285714285711718,
    0.11111111110929807,
    -0.09090909084093506,
    0.07692307534369985,
    -0.06666664203478607,
    0.0588232553920069,
    -0.05262931380521779,
    0.04760471049395462,
    -0.043407182638729704,
    0.03971908106924452,
    -0.036139320776507194,
    0.03213544133307827,
    -0.02718155333081564,
    0.021121594179966983,
    -0.014503079564732733,
    0.00844989240397037,
    -0.004000209679906822,
    0.0014617449054205385,
    -0.00038394037972999467,
    6.417524965866564e-05,
    -5.1088410388226665e-06,
];
/// `scripts/math_coeffs_f64.py asin`: B(z) = (asin sqrt z - sqrt z) / z^1.5 on [0, 0.25], degree 13: max rel err 2^-57.4 (2^-54.0 with the coefficients rounded to f64).
#[allow(clippy::excessive_precision)]
const ASIN_C: [f64; 14] = [
    0.16666666666666666,
    0.07500000000000118,
    0.044642857142551895,
    0.03038194447553234,
    0.02237215744350722,
    0.017352816540325496,
    0.01396378001220357,
    0.011566459612121669,
    0.009621842970100282,
    0.009319560794767446,
    0.0030448799094556773,
    0.019554513336123378,
    -0.01924167174674304,
    0.02961201126495512,
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
/// `scripts/math_coeffs_f64.py sinh`: H(z) = (sinh sqrt z - sqrt z) / z^1.5 on [0, 1], degree 7: max rel err 2^-69.2 (2^-54.0 with the coefficients rounded to f64).
#[allow(clippy::excessive_precision)]
const SINH_C: [f64; 8] = [
    0.16666666666666666,
    0.008333333333333333,
    0.00019841269841269773,
    2.755731922404034e-06,
    2.505210836405804e-08,
    1.6059048396350562e-10,
    7.646625361656657e-13,
    2.8445264169895285e-15,
];
/// `scripts/math_coeffs_f64.py coshr`: E(z) = (cosh sqrt z - 1) / z on [0, 0.1202], degree 5: max rel err 2^-64.7 (2^-61.2 with the coefficients rounded to f64).
#[allow(clippy::excessive_precision)]
const COSHR_C: [f64; 6] = [
    0.5,
    0.04166666666666668,
    0.0013888888888879054,
    2.4801587336496884e-05,
    2.7557263220620196e-07,
    2.091815936247947e-09,
];
/// `scripts/math_coeffs_f64.py sinhr`: O(z) = (sinh sqrt z - sqrt z) / z^1.5 on [0, 0.1202], degree 5: max rel err 2^-67.0 (2^-54.0 with the coefficients rounded to f64).
#[allow(clippy::excessive_precision)]
const SINHR_C: [f64; 6] = [
    0.16666666666666666,
    0.008333333333333333,
    0.00019841269841263285,
    2.7557319247255154e-06,
    2.5052071055323223e-08,
    1.6086642370154503e-10,
];
/// `scripts/math_coeffs_f64.py erfc`: P(t) = (1 + 2x) e^(x^2) erfc(x), t = (x - 3.75)/(x + 3.75) on [-0.7657058823529411, 0.7594541062801933], degree 22: max rel err 2^-61.3 (2^-53.2 with the coefficients rounded to f64).
#[allow(clippy::excessive_precision)]
const ERFC_C: [f64; 23] = [
    1.2375126308378275,
    -0.14024059858554702,
    0.0035854154854636526,
    0.08227673849015028,
    -0.10880393014170582,
    0.09230432116023247,
    -0.05869339859056174,
    0.028362277420788812,
    -0.009746579547915152,
    0.0017556258409901126,
    0.00029371360208992596,
    -0.0002901540408851427,
    5.164933913733198e-05,
    2.2384196250081335e-05,
    -1.1444684672389773e-05,
    -9.7371024106571e-07,
    1.7522430549429427e-06,
    -5.65570246956221e-08,
    -2.5863301218419176e-07,
    2.2147463620840913e-08,
    3.768568750339036e-08,
    -2.8191647083754087e-09,
    -4.05519164314062e-09,
];
/// `scripts/math_coeffs_f64.py erf`: G(z) = erf(sqrt z)/sqrt z - 1 on [0, 1], degree 12: max rel err 2^-62.6 (2^-55.5 with the coefficients rounded to f64).
#[allow(clippy::excessive_precision)]
const ERF_C: [f64; 13] = [
    0.1283791670955126,
    -0.3761263890318375,
    0.11283791670954879,
    -0.026866170645076792,
    0.0052239776248180145,
    -0.000854832698083379,
    0.0001205533111164271,
    -1.4925595266831182e-05,
    1.6461000484121368e-06,
    -1.6350312701054695e-07,
    1.4659775274047436e-08,
    -1.1372848856791674e-09,
    5.957176147748911e-11,
];

/// The bits of 2/π, 64 to a word, most significant first (`scripts/math_coeffs_f64.py`
/// prints them too); 32 words so that a masked index never leaves the table.
static TWO_OVER_PI: [u64; 32] = [
    0xA2F9836E4E441529,
    0xFC2757D1F534DDC0,
    0xDB6295993C439041,
    0xFE5163ABDEBBC561,
    0xB7246E3A424DD2E0,
    0x06492EEA09D1921C,
    0xFE1DEB1CB129A73E,
    0xE88235F52EBB4484,
    0xE99C7026B45F7E41,
    0x3991D639835339F4,
    0x9C845F8BBDF9283B,
    0x1FF897FFDE05980F,
    0xEF2F118B5A0A6D1F,
    0x6D367ECF27CB09B7,
    0x4F463F669E5FEA2D,
    0x7527BAC7EBE5F17B,
    0x3D0739F78A5292EA,
    0x6BFB5FB11F8D5D08,
    0x56033046FC7B6BAB,
    0xF0CFBC209AF4361D,
    0xA9E391615EE61B08,
    0x6599855F14A06840,
    0x8DFFD8804D732731,
    0x06061556CA73A8C9,
    0x60E27BC08C6B47C4,
    0x19C367CDDCE8092A,
    0x8359C4768B961CA6,
    0xDDAF44D15719053E,
    0xA5FF07053F7E33E8,
    0x32C2DE4F98327DBB,
    0xC33D26EF6B1E5EF8,
    0x9F3A1F35CAF27F1D,
];

// ---------------------------------------------------------------- exp family

/// `e^(xh + xl) = 2^k (1 + r + u)` with `|r| ≤ 0.35`, `|u| ≤ 0.07`, `1 + r + u` to about
/// 2^-60 relative, for `|xh| ≤ 746` and `|xl| ≤ ulp(xh)` (the callers bound `xh`; NaN
/// gives NaN in `r` and `u`). `k` comes from the low bits of the 1.5·2^52 rounding: no
/// float-to-integer conversion.
#[inline(always)]
fn exp_parts(xh: f64, xl: f64) -> (i32, f64, f64) {
    let (k, r, rl) = exp_reduce(xh, xl);
    let u = fma(r * r, poly(r, &EXP_C), fma(rl, r, rl));
    (k, r, u)
}

/// `xh + xl = k ln 2 + (r + rl)`, `|r| ≤ 0.35` and `rl` below `ulp(r)` (as
/// [`exp_parts`]).
#[inline(always)]
fn exp_reduce(xh: f64, xl: f64) -> (i32, f64, f64) {
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
fn exp_value(r: f64, u: f64) -> f64 {
    let (h, l) = fast_two_sum(1.0, r);
    h + (l + u)
}

/// `v · 2^k` by adding `k` to the exponent field, for `v` and `v · 2^k` normal.
#[inline(always)]
fn scale_normal(v: f64, k: i32) -> f64 {
    f64::from_bits(v.to_bits().wrapping_add(((k as i64) << 52) as u64))
}

/// `|xh|` below this: `e^(xh + xl)` is normal and [`scale_normal`] applies.
const EXP_FAST: f64 = 707.0;

/// `e^(xh + xl)` for `|xh| ≥` [`EXP_FAST`] or NaN: clamped, then scaled in two steps
/// (overflow to +∞, subnormal results).
#[inline(never)]
fn exp_big(xh: f64, xl: f64) -> f64 {
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
fn exp_dd(xh: f64, xl: f64) -> f64 {
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
fn expm1_parts(x: f64) -> (i32, f64, f64) {
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
        let inv = 1.0 / dh;
        let sh = fh * inv;
        (sh, (fma(-sh, dh, fh) + (fl - sh * dl)) * inv)
    } else {
        let fh = m - 1.0;
        let dh = 2.0 + fh;
        let dl = (2.0 - dh) + fh;
        let inv = 1.0 / dh;
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
    ((e + eadj) as f64, mh, ml)
}

/// `ln(h + l)` as a double-double (see [`log_parts`]).
#[inline(always)]
fn log_dd(h: f64, l: f64) -> (f64, f64) {
    let (e, mh, ml) = log_parts::<true>(h, l);
    log_join(e, mh, ml)
}

/// `ln x` as a double-double for finite `x > 0` (see [`log_parts`]).
#[inline(always)]
fn log_dd1(x: f64) -> (f64, f64) {
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
/// and the product in double-double. Max error: 0.82 ulp measured (CUDA `pow`:
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

// ---------------------------------------------------------------- trigonometric

/// `x = n·π/2 + (rh + rl)` with `|rh + rl| ≤ π/4 (1 + 2^-40)`, for finite `x`:
/// three-part Cody–Waite below 2^30, Payne–Hanek above. Returns `(n mod 4, rh, rl)`.
#[inline(always)]
fn rem_pio2(x: f64) -> (u32, f64, f64) {
    if x.abs() < 1073741824.0 {
        let t = fma(x, FRAC_2_PI, ROUND_MAGIC);
        let kf = t - ROUND_MAGIC;
        // Exact: kf·PIO2_H is exact in the fma and the difference has ≤ 53 bits.
        let r1 = fma(-kf, PIO2_H, x);
        let rh = fma(-kf, PIO2_M, r1);
        // |rh| > 2^-20 > 2^-50 |kf| > 14 |kf·PIO2_M|: r1 and rh are within a factor
        // 2, so r1 - rh is exact (Sterbenz) and the second fma gives rh's rounding
        // error. Otherwise (x within 2^-20 of a multiple of π/2: rare) the exact
        // sums below.
        if rh.abs() > 9.5367431640625e-7 {
            let rl = fma(-kf, PIO2_T, fma(-kf, PIO2_M, r1 - rh));
            return (t.to_bits() as u32 & 3, rh, rl);
        }
    }
    rem_pio2_slow(x)
}

/// [`rem_pio2`] where the short form does not apply: Cody–Waite with exact
/// products and sums near multiples of π/2 below 2^30, Payne–Hanek above.
#[inline(never)]
fn rem_pio2_slow(x: f64) -> (u32, f64, f64) {
    if x.abs() < 1073741824.0 {
        let t = fma(x, FRAC_2_PI, ROUND_MAGIC);
        let kf = t - ROUND_MAGIC;
        let r1 = fma(-kf, PIO2_H, x);
        let (p2, p2e) = two_prod(kf, PIO2_M);
        let (r2, e2) = two_sum(r1, -p2);
        let rl = (e2 - p2e) - kf * PIO2_T;
        let (rh, rl) = two_sum(r2, rl);
        (t.to_bits() as u32 & 3, rh, rl)
    } else {
        payne_hanek(x)
    }
}

/// 64 bits of `p` (little-endian words) starting at bit `s` (`s < 320`).
#[inline(always)]
fn bits_at(p: &[u64; 8], s: u32) -> u64 {
    let i = (s >> 6) as usize;
    let w = ((p[(i + 1) & 7] as u128) << 64) | p[i & 7] as u128;
    (w >> (s & 63)) as u64
}

/// Payne–Hanek reduction of a finite `|x| ≥ 2^30`: `x·2/π` from a 256-bit window
/// of [`TWO_OVER_PI`], integer part mod 4 and 128 bits of fraction.
#[inline(never)]
fn payne_hanek(x: f64) -> (u32, f64, f64) {
    let bits = x.to_bits();
    let m = (bits & MANT) | (1 << 52);
    let e = ((bits >> 52) & 0x7ff) as i32 - 1075; // |x| = m·2^e, e ≥ -22
    let j0 = if e >= 2 { (e - 2) >> 6 } else { 0 };
    let q = e - 64 * j0; // -22..=65
    let j = j0 as usize;
    // The words before j0 only add multiples of 4 to x·2/π.
    let w = [
        TWO_OVER_PI[(j + 3) & 31],
        TWO_OVER_PI[(j + 2) & 31],
        TWO_OVER_PI[(j + 1) & 31],
        TWO_OVER_PI[j & 31],
    ];
    let mut p = [0u64; 8];
    let mut carry: u128 = 0;
    for (i, &wi) in w.iter().enumerate() {
        let t = (m as u128) * (wi as u128) + carry;
        p[i] = t as u64;
        carry = t >> 64;
    }
    p[4] = carry as u64;
    // x·2/π = P·2^(q-256): the binary point sits at bit bp of P.
    let bp = (256 - q) as u32;
    let mut n = bits_at(&p, bp) & 3;
    let f = ((bits_at(&p, bp - 64) as u128) << 64) | bits_at(&p, bp - 128) as u128;
    let fi = f as i128; // the fraction in -1/2..1/2, in units of 2^-128
    if fi < 0 {
        n += 1;
    }
    let a = (fi >> 75) as i64 as f64;
    let b = ((fi >> 22) & ((1 << 53) - 1)) as i64 as f64;
    let c = (fi & ((1 << 22) - 1)) as i64 as f64;
    let (sh, sl) = two_sum(a * 1.1102230246251565e-16, b * 1.232595164407831e-32);
    let sl = sl + c * 2.938735877055719e-39;
    let (rh, rl) = dd_mul(sh, sl, PIO2_H, PIO2_M);
    if x < 0.0 {
        (((4 - (n & 3)) & 3) as u32, -rh, -rl)
    } else {
        ((n & 3) as u32, rh, rl)
    }
}

/// `sin(rh + rl) = hi + tail` for `|rh| ≤ π/4`, `|tail| ≤ |hi|/8`.
#[inline(always)]
fn sin_k(rh: f64, rl: f64) -> (f64, f64) {
    let z = rh * rh;
    let s = poly(z, &SIN_C);
    (rh, fma(rh * z, s, fma(-0.5 * z, rl, rl)))
}

/// `cos(rh + rl) = hi + tail` for `|rh| ≤ π/4`.
#[inline(always)]
fn cos_k(rh: f64, rl: f64) -> (f64, f64) {
    let (z, ze) = two_prod(rh, rh);
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    let c = poly(z, &COS_C);
    (w, ((1.0 - w) - hz) + fma(z * z, c, -(0.5 * ze + rh * rl)))
}

/// `(sin, cos)` of `n·π/2 + r`.
#[inline(always)]
fn sincos_q(n: u32, rh: f64, rl: f64) -> (f64, f64) {
    let (sh, st) = sin_k(rh, rl);
    let (ch, ct) = cos_k(rh, rl);
    let s = sh + st;
    let c = ch + ct;
    let (s, c) = if n & 1 == 0 { (s, c) } else { (c, -s) };
    if n & 2 == 0 {
        (s, c)
    } else {
        (-s, -c)
    }
}

/// `sin(n·π/2 + r)` (`cos` of it is `sin_q(n + 1, …)`): one polynomial whose
/// coefficients are selected by the quadrant, not both kernels and a select.
#[inline(always)]
fn sin_q(n: u32, rh: f64, rl: f64) -> f64 {
    let use_cos = n & 1 != 0;
    let (z, ze) = two_prod(rh, rh);
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    // sin r = rh + (rh z S(z) + rl (1 - z/2)), as sin_k;
    // cos r = w + (z² C(z) + ((1 - w) - z/2) - (ze/2 + rh rl)), as cos_k.
    let (hi, a, b) = if use_cos {
        (w, z * z, ((1.0 - w) - hz) - fma(0.5, ze, rh * rl))
    } else {
        (rh, rh * z, fma(-hz, rl, rl))
    };
    // Bit masks, not `if`: LLVM would turn selected constants into table loads.
    let m = ((n & 1) as u64).wrapping_neg();
    let c = |i: usize| f64::from_bits((SIN_C[i].to_bits() & !m) | (COS_C[i].to_bits() & m));
    let mut acc = c(6);
    for i in (0..6).rev() {
        acc = fma(acc, z, c(i));
    }
    let v = hi + fma(a, acc, b);
    // The sign of quadrants 2 and 3 as a bit flip, not an f64 negation.
    f64::from_bits(v.to_bits() ^ (((n & 2) as u64) << 62))
}

/// `x` rounds to this and below for `sin`, `tan`, `asin`, … (2^-27).
const TINY: f64 = 7.450580596923828e-9;

/// Sine of `x` radians. `sin(±0) = ±0`, `sin(±∞) = NaN`; exact reduction for every
/// finite `x` (Payne–Hanek above 2^30). Max error: 0.69 ulp measured (CUDA `sin`:
/// 2 ulp). Every target. Source: CUDA Math API `sin`; C99 F.9.1.6.
#[inline]
pub fn sin(x: f64) -> f64 {
    if x.abs() < TINY {
        return x;
    }
    if !x.is_finite() {
        return x - x;
    }
    let (n, rh, rl) = rem_pio2(x);
    sin_q(n, rh, rl)
}

/// Cosine of `x` radians. `cos(±0) = 1`, `cos(±∞) = NaN`. Max error: 0.67 ulp
/// measured (CUDA `cos`: 2 ulp). Every target. Source: CUDA Math API `cos`; C99
/// F.9.1.5.
#[inline]
pub fn cos(x: f64) -> f64 {
    if x.abs() < TINY {
        return 1.0;
    }
    if !x.is_finite() {
        return x - x;
    }
    let (n, rh, rl) = rem_pio2(x);
    sin_q(n.wrapping_add(1), rh, rl)
}

/// `(sin x, cos x)` with one reduction; values as [`sin`] and [`cos`]. Max error:
/// 0.69 ulp / 0.67 ulp measured (CUDA `sincos`: 2 ulp). Every target. Source: CUDA
/// Math API `sincos`.
#[inline]
pub fn sincos(x: f64) -> (f64, f64) {
    if x.abs() < TINY {
        return (x, 1.0);
    }
    if !x.is_finite() {
        return (x - x, x - x);
    }
    let (n, rh, rl) = rem_pio2(x);
    sincos_q(n, rh, rl)
}

/// Tangent of `x` radians. `tan(±0) = ±0`, `tan(±∞) = NaN`. Computed as a corrected
/// quotient of the sine and cosine kernels. Max error: 0.82 ulp measured (CUDA
/// `tan`: 2 ulp). Every target. Source: CUDA Math API `tan`; C99 F.9.1.7.
#[inline]
pub fn tan(x: f64) -> f64 {
    if x.abs() < TINY {
        return x;
    }
    if !x.is_finite() {
        return x - x;
    }
    let (n, rh, rl) = rem_pio2(x);
    let (sh, st) = sin_k(rh, rl);
    let (ch, ct) = cos_k(rh, rl);
    let (nh, nl, dh, dl) = if n & 1 == 0 {
        (sh, st, ch, ct)
    } else {
        (ch, ct, -sh, -st)
    };
    // The tails are up to a tenth of the heads: divide the sums, then correct.
    let inv = 1.0 / (dh + dl);
    let q = (nh + nl) * inv;
    let rem = fma(-q, dh, nh) + fma(-q, dl, nl);
    fma(rem, inv, q)
}

/// `(sin πx, cos πx)` for finite `x`, without the sign fix-ups of zeros.
#[inline(always)]
fn sincospi_raw(x: f64) -> (f64, f64) {
    if x.abs() >= 4503599627370496.0 {
        // 2^52: x is an integer, even from 2^53 on.
        let odd = x.abs() < 9007199254740992.0 && (x.to_bits() & 1) == 1;
        return (0.0, if odd { -1.0 } else { 1.0 });
    }
    let kf = prim::rint(2.0 * x);
    let r = fma(-0.5, kf, x); // exact
    let ph = r * PI_H;
    let pl = fma(r, PI_H, -ph) + r * PI_L;
    sincos_q((kf as i64 & 3) as u32, ph, pl)
}

/// `x = n/2 + r/π` with `π r = ph + pl`, `|r| ≤ 1/4`, for `|x| < 2^50`: `(n mod 4, ph, pl)`.
#[inline(always)]
fn pi_reduce(x: f64) -> (u32, f64, f64) {
    let t = fma(2.0, x, ROUND_MAGIC);
    let kf = t - ROUND_MAGIC;
    let r = fma(-0.5, kf, x); // exact
    let ph = r * PI_H;
    let pl = fma(r, PI_H, -ph) + r * PI_L;
    (t.to_bits() as u32 & 3, ph, pl)
}

/// `sin(πx)`. `sinpi(±0) = ±0`, `sinpi(±n) = ±0` for integers `n`, `sinpi(±∞) = NaN`;
/// the reduction is exact. Max error: 0.91 ulp measured (CUDA `sinpi`: 2 ulp).
/// Every target. Source: CUDA Math API `sinpi`; C23 F.10.1.13.
#[inline]
pub fn sinpi(x: f64) -> f64 {
    if !(x.abs() < 1125899906842624.0) {
        return sincospi_big(x).0; // 2^50, ±∞, NaN
    }
    let (n, ph, pl) = pi_reduce(x);
    let s = sin_q(n, ph, pl);
    if s == 0.0 {
        0.0f64.copysign(x)
    } else {
        s
    }
}

/// `cos(πx)`. `cospi(±0) = 1`, `cospi(n + 1/2) = +0`, `cospi(±∞) = NaN`. Max error:
/// 0.65 ulp measured (CUDA `cospi`: 2 ulp). Every target. Source: CUDA Math API
/// `cospi`; C23 F.10.1.12.
#[inline]
pub fn cospi(x: f64) -> f64 {
    if !(x.abs() < 1125899906842624.0) {
        return sincospi_big(x).1; // 2^50, ±∞, NaN
    }
    let (n, ph, pl) = pi_reduce(x);
    sin_q(n.wrapping_add(1), ph, pl) + 0.0
}

/// [`sincospi`] out of line, for the rare inputs of [`sinpi`] and [`cospi`].
#[inline(never)]
fn sincospi_big(x: f64) -> (f64, f64) {
    sincospi(x)
}

/// `(sin πx, cos πx)`; values as [`sinpi`] and [`cospi`]. Max error: 0.91 ulp /
/// 0.65 ulp measured (CUDA `sincospi`: 2 ulp). Every target. Source: CUDA Math
/// API `sincospi`.
#[inline]
pub fn sincospi(x: f64) -> (f64, f64) {
    if !x.is_finite() {
        return (x - x, x - x);
    }
    let (s, c) = sincospi_raw(x);
    let s = if s == 0.0 { 0.0f64.copysign(x) } else { s };
    (s, c + 0.0)
}

// ---------------------------------------------------------------- inverse trig

/// `atan(t + tl) = hi + tail` for `0 ≤ t ≤ 1`, `|tl| ≤ ulp(t)`.
#[inline(always)]
fn atan_k(t: f64, tl: f64) -> (f64, f64) {
    let z = t * t;
    let p = poly(z, &ATAN_C);
    // tl / (1 + z), to a few bits: it is below ulp(t).
    let c = tl * (1.0 - z * (1.0 - 0.5 * z));
    (t, fma(t * z, p, c))
}

/// `(π/2 - (h + t))` as a double-double, for `|h| ≤ π/2` (every caller's `h` is
/// at most about 1.05, so the short sum is exact).
#[inline(always)]
fn pio2_minus(h: f64, t: f64) -> (f64, f64) {
    let (s, e) = fast_two_sum(PIO2_H, -h);
    (s, e + (PIO2_M - t))
}

/// Arc tangent, in `[-π/2, π/2]`. `atan(±0) = ±0`, `atan(±∞) = ±π/2`. Max error:
/// 0.73 ulp measured (CUDA `atan`: 2 ulp). Every target. Source: CUDA Math API
/// `atan`; C99 F.9.1.3.
#[inline]
pub fn atan(x: f64) -> f64 {
    let a = x.abs();
    let r = if a > 1.0 {
        let a = if a > 1e300 { 1e300 } else { a }; // atan(∞) = π/2 too, without 0·∞
        let u = 1.0 / a;
        let ul = fma(-u, a, 1.0) * u;
        let (h, t) = atan_k(u, ul);
        let (s, e) = pio2_minus(h, t);
        s + e
    } else {
        let z = a * a;
        fma(a * z, poly(z, &ATAN_C), a) // atan_k without a tail
    };
    r.copysign(x)
}

/// Arc tangent of `y/x` in `[-π, π]`, by the signs of both. C99 F.9.1.4:
/// `atan2(±0, -0) = ±π`, `atan2(±0, +0) = ±0`, `atan2(±0, x<0) = ±π`,
/// `atan2(±y, ±∞)`, `atan2(±∞, x)`, `atan2(±∞, ±∞) = ±π/4, ±3π/4`. Max error:
/// 0.67 ulp measured (CUDA `atan2`: 2 ulp). Every target. Source: CUDA Math API
/// `atan2`; C99 F.9.1.4.
#[inline]
pub fn atan2(y: f64, x: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        return x + y;
    }
    let (mut ax, mut ay) = (x.abs(), y.abs());
    if ax == f64::INFINITY || ay == f64::INFINITY {
        ax = if ax == f64::INFINITY { 1.0 } else { 0.0 };
        ay = if ay == f64::INFINITY { 1.0 } else { 0.0 };
    }
    let swap = ay > ax;
    let (mut num, mut den) = if swap { (ax, ay) } else { (ay, ax) };
    if den < 1.0e-270 {
        num *= 1.6069380442589903e60; // 2^200, exact
        den *= 1.6069380442589903e60;
    }
    let (t, tl) = if den == 0.0 {
        (0.0, 0.0)
    } else {
        let inv = 1.0 / den;
        let t = num * inv;
        let r = fma(-t, den, num);
        let t2 = fma(r, inv, t);
        (t2, fma(-t2, den, num) * inv)
    };
    let (mut h, mut l) = atan_k(t, tl);
    if swap {
        (h, l) = pio2_minus(h, l);
    }
    if x.is_sign_negative() {
        let (s, e) = two_sum(PI_H, -h);
        (h, l) = (s, e + (PI_L - l));
    }
    (h + l).copysign(y)
}

/// `asin(h + hl) = hi + tail` for `0 ≤ h ≤ 1/2`.
#[inline(always)]
fn asin_k(h: f64, hl: f64) -> (f64, f64) {
    let z = h * h;
    (h, fma(h * z, poly(z, &ASIN_C), hl))
}

/// `sqrt((1 - a)/2)` as a double-double, for `1/2 ≤ a ≤ 1`.
#[inline(always)]
fn half_complement_sqrt(a: f64) -> (f64, f64) {
    let w = (1.0 - a) * 0.5; // exact
    let s = prim::sqrt(w);
    let d = if s == 0.0 { 1.0 } else { s };
    (s, fma(-s, s, w) * 0.5 / d)
}

/// Arc sine, in `[-π/2, π/2]`. `asin(±0) = ±0`, `asin(±1) = ±π/2`,
/// `asin(|x| > 1) = NaN`. Max error: 0.57 ulp measured (CUDA `asin`: 2 ulp).
/// Every target. Source: CUDA Math API `asin`; C99 F.9.1.2.
#[inline]
pub fn asin(x: f64) -> f64 {
    let a = x.abs();
    if !(a <= 1.0) {
        return (x - x) / (x - x);
    }
    let r = if a <= 0.5 {
        let (h, t) = asin_k(a, 0.0);
        h + t
    } else {
        let (s, sl) = half_complement_sqrt(a);
        let (h, t) = asin_k(s, sl);
        let (p, e) = pio2_minus(2.0 * h, 2.0 * t);
        p + e
    };
    r.copysign(x)
}

/// Arc cosine, in `[0, π]`. `acos(1) = +0`, `acos(-1) = π`, `acos(|x| > 1) = NaN`.
/// Max error: 0.57 ulp measured (CUDA `acos`: 2 ulp). Every target. Source: CUDA
/// Math API `acos`; C99 F.9.1.1.
#[inline]
pub fn acos(x: f64) -> f64 {
    let a = x.abs();
    if !(a <= 1.0) {
        return (x - x) / (x - x);
    }
    if a <= 0.5 {
        let (h, t) = asin_k(a, 0.0);
        let (h, t) = (h.copysign(x), t.copysign(x));
        let (p, e) = pio2_minus(h, t);
        return p + e;
    }
    let (s, sl) = half_complement_sqrt(a);
    let (h, t) = asin_k(s, sl);
    if x > 0.0 {
        2.0 * h + 2.0 * t
    } else {
        let (p, e) = two_sum(PI_H, -2.0 * h);
        p + (e + (PI_L - 2.0 * t))
    }
}

// ---------------------------------------------------------------- hyperbolic

/// `(e^a + s·e^-a) / 2` for `a ≥ 0` (or NaN), `s = ±1`, when it does not cancel badly
/// (`a ≥ 1` for `s = -1`).
#[inline(always)]
fn cosh_sinh(a: f64, s: f64) -> f64 {
    // e^a / 2 = e^(a - ln 2) = 2^k e^r
    let (xh, xl) = two_sum(a, -LN2_H);
    let xl = xl - LN2_L;
    if !(a < EXP_FAST) {
        return exp_big(xh, xl); // e^-a is far below an ulp; NaN and overflow too
    }
    let (k, r, rl) = exp_reduce(xh, xl);
    // e^±r = (1 + ev) ± (r + od) from the even and odd parts of e^r, so e^-a / 2 =
    // 2^-k e^-r / 4 needs no division; negligible for k > 40.
    let z = r * r;
    let ev = z * poly(z, &COSHR_C);
    let od = fma(r * z, poly(z, &SINHR_C), fma(rl, r, rl));
    let (h, l) = fast_two_sum(1.0, r);
    let (g, gl) = fast_two_sum(1.0, -r);
    let sc = if k > 40 { 0.0 } else { s * pow2(-2 * k - 2) };
    let (v, ve) = two_sum(h, sc * g);
    let tail = (l + (ev + od)) + sc * (gl + (ev - od));
    scale_normal(v + (ve + tail), k)
}

/// Hyperbolic sine. `sinh(±0) = ±0`, `sinh(±∞) = ±∞`; overflows to ±∞ above
/// 710.47…. Max error: 0.59 ulp measured (CUDA `sinh`: 2 ulp). Every target.
/// Source: CUDA Math API `sinh`; C99 F.9.2.5.
#[inline]
pub fn sinh(x: f64) -> f64 {
    let a = x.abs();
    if a < 1.0 {
        let z = x * x;
        return fma(x * z, poly(z, &SINH_C), x);
    }
    cosh_sinh(a, -1.0).copysign(x)
}

/// Hyperbolic cosine. `cosh(±0) = 1`, `cosh(±∞) = +∞`; overflows above 710.47….
/// Max error: 0.54 ulp measured (CUDA `cosh`: 1 ulp). Every target. Source: CUDA
/// Math API `cosh`; C99 F.9.2.4.
#[inline]
pub fn cosh(x: f64) -> f64 {
    cosh_sinh(x.abs(), 1.0)
}

/// Hyperbolic tangent. `tanh(±0) = ±0`, `tanh(±∞) = ±1`. Computed as
/// `expm1(2|x|) / (expm1(2|x|) + 2)` in double-double. Max error: 0.61 ulp measured
/// (CUDA `tanh`: 1 ulp). Every target. Source: CUDA Math API `tanh`; C99 F.9.2.6.
#[inline]
pub fn tanh(x: f64) -> f64 {
    let a = x.abs();
    if !(a < 22.0) {
        return if a > 0.0 { 1.0f64.copysign(x) } else { x + x };
    }
    if a < TINY {
        return x;
    }
    let (k, sh, sl) = expm1_parts(2.0 * a);
    let sc = pow2(k);
    // sl can be a tenth of sh: the quotient below wants a normalized pair.
    let (nh, nl) = fast_two_sum(sh * sc, sl * sc);
    let (dh, de) = two_sum(nh, 2.0);
    let dl = de + nl;
    let inv = 1.0 / dh;
    let q = nh * inv;
    let rem = fma(-q, dh, nh) + (nl - q * dl);
    fma(rem, inv, q).copysign(x)
}

/// `sqrt(wh + wl)` as a double-double, `wh > 0`.
#[inline(always)]
fn sqrt_dd(wh: f64, wl: f64) -> (f64, f64) {
    let q = prim::sqrt(wh);
    (q, (fma(-q, q, wh) + wl) * 0.5 / q)
}

/// Inverse hyperbolic sine. `asinh(±0) = ±0`, `asinh(±∞) = ±∞`. Computed as
/// `ln(|x| + sqrt(x² + 1))` in double-double. Max error: 0.50 ulp measured (CUDA
/// `asinh`: 3 ulp). Every target. Source: CUDA Math API `asinh`; C99 F.9.2.2.
#[inline]
pub fn asinh(x: f64) -> f64 {
    let a = x.abs();
    if !(a < f64::INFINITY) || a < TINY {
        return x; // NaN, ±∞, ±0, tiny
    }
    let r = if a > 268435456.0 {
        // 2^28: ln(2a), the 1/(4a²) term is below 2^-58.
        let (h, l) = log_dd1(a);
        let (s, e) = two_sum(h, LN2_H);
        s + (e + (l + LN2_L))
    } else {
        let (p, pe) = two_prod(a, a);
        let (s, se) = two_sum(p, 1.0);
        let (wh, wl) = fast_two_sum(s, se + pe);
        let (q, ql) = sqrt_dd(wh, wl);
        let (yh, ye) = two_sum(a, q);
        let (h, l) = log_dd(yh, ye + ql);
        h + l
    };
    r.copysign(x)
}

/// Inverse hyperbolic cosine. `acosh(1) = +0`, `acosh(x < 1) = NaN`,
/// `acosh(+∞) = +∞`. Max error: 0.50 ulp measured (CUDA `acosh`: 3 ulp). Every
/// target. Source: CUDA Math API `acosh`; C99 F.9.2.1.
#[inline]
pub fn acosh(x: f64) -> f64 {
    if !(1.0..f64::INFINITY).contains(&x) {
        return if x == f64::INFINITY {
            x
        } else {
            (x - x) / (x - x)
        };
    }
    if x > 268435456.0 {
        let (h, l) = log_dd1(x);
        let (s, e) = two_sum(h, LN2_H);
        return s + (e + (l + LN2_L));
    }
    if x == 1.0 {
        return 0.0;
    }
    let (p, pe) = two_prod(x, x);
    let (s, se) = two_sum(p, -1.0);
    let (wh, wl) = two_sum(s, se + pe);
    let (q, ql) = sqrt_dd(wh, wl);
    let (yh, ye) = two_sum(x, q);
    let (h, l) = log_dd(yh, ye + ql);
    h + l
}

/// Inverse hyperbolic tangent. `atanh(±0) = ±0`, `atanh(±1) = ±∞`,
/// `atanh(|x| > 1) = NaN`. Computed as `ln((1+|x|)/(1-|x|))/2` in double-double.
/// Max error: 0.50 ulp measured (CUDA `atanh`: 2 ulp). Every target. Source:
/// CUDA Math API `atanh`; C99 F.9.2.3.
#[inline]
pub fn atanh(x: f64) -> f64 {
    let a = x.abs();
    if !(a < 1.0) {
        return if a == 1.0 {
            f64::INFINITY.copysign(x)
        } else {
            (x - x) / (x - x)
        };
    }
    if a < TINY {
        return x;
    }
    let (nh, nl) = two_sum(1.0, a);
    let (dh, dl) = two_sum(1.0, -a);
    let inv = 1.0 / dh;
    let qh = nh * inv;
    let ql = (fma(-qh, dh, nh) + (nl - qh * dl)) * inv;
    let (qh, ql) = fast_two_sum(qh, ql);
    let (h, l) = log_dd(qh, ql);
    (0.5 * (h + l)).copysign(x)
}

// ---------------------------------------------------------------- error function

/// `e^(x²)·erfc(x) = P(t) / (1 + 2x)` for `x = ah + al`, `0.5 ≤ ah ≤ 27.3`, as head
/// and tail (`t = (ah − 3.75)/(ah + 3.75)`; the tail `al` only where it matters, in
/// `1 + 2x`).
#[inline(always)]
fn erfc_scaled(ah: f64, al: f64) -> (f64, f64) {
    let t = (ah - 3.75) / (ah + 3.75);
    let p = poly(t, &ERFC_C);
    let (dh, dl) = two_sum(1.0, 2.0 * ah);
    let inv = 1.0 / dh;
    let f = p * inv;
    (f, (fma(-f, dh, p) - f * (dl + 2.0 * al)) * inv)
}

/// `1/√π`.
const FRAC_1_SQRT_PI: f64 = 0.564_189_583_547_756_3;

/// The scaled complementary error function `erfcx(x) = e^(x²)·erfc(x)`: 1 at 0,
/// about `1/(x√π)` for large `x` (no overflow or underflow where the true value is
/// representable), `+∞` at `−∞` and below about −26.6, `+0` at `+∞`. Max error: see
/// BENCHMARKS.md (CUDA `erfcx`: 4 ulp). Every target. Source: CUDA Math API `erfcx`.
#[inline]
pub fn erfcx(x: f64) -> f64 {
    let a = x.abs();
    let large = if a > 27.3 {
        // (1/(a√π))·Σ (−1)^k (2k−1)!! / (2a²)^k, k ≤ 6: the next term is below 2^-56
        // from 27.3 on.
        let w2 = {
            let w = 1.0 / a;
            w * w
        };
        let c = [-0.5, 0.75, -1.875, 6.5625, -29.531_25, 162.421_875];
        let mut s = c[5];
        for &ck in c[..5].iter().rev() {
            s = fma(w2, s, ck);
        }
        FRAC_1_SQRT_PI * fma(w2, s, 1.0) / a
    } else {
        let (f, fl) = erfc_scaled(a.max(0.5), 0.0);
        f + fl
    };
    if x >= 0.5 {
        return large;
    }
    // e^(x²) from x² as head and tail; +∞ once x² passes ln(f64::MAX).
    let (sq, sqe) = two_prod(x, x);
    let e = if sq > 710.0 {
        f64::INFINITY
    } else {
        exp_dd(sq, sqe) // NaN stays NaN
    };
    if a < 0.5 {
        let (h, t) = erf_small(x);
        let (s, err) = two_sum(1.0, -h);
        e * (s + (err - t))
    } else {
        fma(2.0, e, -large)
    }
}

/// `erfc(ah + al) = 2^k · v` for `0.5 ≤ ah ≤ 27.3` (Shepherd & Laframboise's
/// `erfc(x) = e^(-x²) P(t) / (1 + 2x)`, `t = (x - 3.75)/(x + 3.75)`).
#[inline(always)]
fn erfc_parts(ah: f64, al: f64) -> (i32, f64) {
    let (f, fl) = erfc_scaled(ah, al);
    let (sq, sqe) = two_prod(ah, ah);
    let (k, r, u) = exp_parts(-sq, -(sqe + 2.0 * ah * al));
    let (eh, el) = fast_two_sum(1.0, r);
    (k, fma(eh, f, eh * fl + (el + u) * f))
}

/// `erf(x) = x + x G(x²)` for `|x| ≤ 1`: `(x, x·G)`.
#[inline(always)]
fn erf_small(x: f64) -> (f64, f64) {
    (x, x * poly(x * x, &ERF_C))
}

/// The error function. `erf(±0) = ±0`, `erf(±∞) = ±1`. Max error: 0.79 ulp
/// measured (CUDA `erf`: 2 ulp). Every target. Source: CUDA Math API `erf`; C99
/// F.9.5.1.
#[inline]
pub fn erf(x: f64) -> f64 {
    let a = x.abs();
    if a <= 1.0 {
        let (h, t) = erf_small(x);
        return h + t;
    }
    if !(a < 6.0) {
        return if a > 0.0 { 1.0f64.copysign(x) } else { x };
    }
    let (k, v) = erfc_parts(a, 0.0);
    (1.0 - scale(v, k)).copysign(x)
}

/// The complementary error function `1 - erf(x)`. `erfc(-∞) = 2`, `erfc(+∞) = +0`;
/// underflows to (subnormal, then) zero above 26.5. Max error: 2.01 ulp measured
/// (CUDA `erfc`: 5 ulp). Every target. Source: CUDA Math API `erfc`; C99 F.9.5.2.
#[inline]
pub fn erfc(x: f64) -> f64 {
    let a = x.abs();
    if a < 0.5 {
        let (h, t) = erf_small(x);
        let (s, e) = two_sum(1.0, -h);
        return s + (e - t);
    }
    if !(a < 27.3) {
        return if x > 0.0 {
            0.0
        } else if x < 0.0 {
            2.0
        } else {
            x + x
        };
    }
    let (k, v) = erfc_parts(a, 0.0);
    if x > 0.0 {
        scale(v, k)
    } else {
        2.0 - scale(v, k)
    }
}

/// The standard normal cumulative distribution function `erfc(-x/√2)/2`, with the
/// argument carried in double-double (so the left tail keeps its relative
/// accuracy). `normcdf(-∞) = +0`, `normcdf(+∞) = 1`. Max error: 1.99 ulp
/// measured (CUDA `normcdf`: 5 ulp). Every target. Source: CUDA Math API `normcdf`.
#[inline]
pub fn normcdf(x: f64) -> f64 {
    let h = -x * ISQRT2_H;
    let l = fma(-x, ISQRT2_H, -h) - x * ISQRT2_L;
    let a = h.abs();
    if a < 0.5 {
        // (1 - erf(h + l)) / 2, erf(h + l) ≈ erf(h) + l·2/√π
        let (eh, et) = erf_small(h);
        let et = fma(l, core::f64::consts::FRAC_2_SQRT_PI, et);
        let (s, e) = two_sum(1.0, -eh);
        return 0.5 * (s + (e - et));
    }
    if !(a < 27.3) {
        return if h > 0.0 {
            0.0
        } else if h < 0.0 {
            1.0
        } else {
            x + x
        };
    }
    if h > 0.0 {
        let (k, v) = erfc_parts(h, l);
        scale(v, k - 1)
    } else {
        let (k, v) = erfc_parts(-h, -l);
        1.0 - scale(v, k - 1)
    }
}

// ---------------------------------------------------------------- roots

/// `|x|^(-1/3)` to about 2^-60 for normal `a = |x|`, by 4 Newton steps from a bit
/// estimate (3.4% off).
#[inline(always)]
fn rcbrt_approx(a: f64) -> f64 {
    let mut r = f64::from_bits(0x553E_F0FB_54E0_0000 - a.to_bits() / 3);
    for _ in 0..4 {
        let t = fma(-(a * r), r * r, 1.0);
        r = fma(r * THIRD, t, r);
    }
    r
}

/// `(|x| scaled to normal, its power-of-two scale exponent)`.
#[inline(always)]
fn normalize(a: f64) -> (f64, i32) {
    if a < f64::MIN_POSITIVE {
        (a * TWO54, -54)
    } else {
        (a, 0)
    }
}

/// Cube root. `cbrt(±0) = ±0`, `cbrt(±∞) = ±∞`, negative `x` gives `-cbrt(-x)`.
/// Max error: 0.59 ulp measured (CUDA `cbrt`: 1 ulp). Every target. Source: CUDA
/// Math API `cbrt`; C99 F.9.4.1.
#[inline]
pub fn cbrt(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x + x;
    }
    let (a, sc) = normalize(x.abs());
    let r = rcbrt_approx(a);
    let y = a * r * r;
    // One Newton step on y³ = a with an exact residual.
    let (y2, y2e) = two_prod(y, y);
    let res = fma(y2, y, -a) + y2e * y;
    let y = fma(-res, r * r * THIRD, y);
    let y = if sc != 0 { y * 3.814697265625e-6 } else { y }; // 2^-18
    y.copysign(x)
}

/// Reciprocal cube root `1/cbrt(x)`. `rcbrt(±0) = ±∞`, `rcbrt(±∞) = ±0`. Max
/// error: 0.50 ulp measured (CUDA `rcbrt`: 1 ulp). Every target. Source: CUDA
/// Math API `rcbrt`.
#[inline]
pub fn rcbrt(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return 1.0 / (x + x);
    }
    let (a, sc) = normalize(x.abs());
    let r = rcbrt_approx(a);
    // 1 - a r³ with its rounding errors kept.
    let (ar, are) = two_prod(a, r);
    let (p, pe) = two_prod(ar, r);
    let res = -(fma(p, r, -1.0) + (pe + are * r) * r);
    let r = fma(r * THIRD, res, r);
    let r = if sc != 0 { r * 262144.0 } else { r }; // 2^18
    r.copysign(x)
}

/// Reciprocal square root `1/sqrt(x)`. `rsqrt(+0) = +∞`, `rsqrt(-0) = -∞`,
/// `rsqrt(x < 0) = NaN`, `rsqrt(+∞) = +0`. Max error: 0.50 ulp measured (CUDA
/// `rsqrt`: 1 ulp). Every target. Source: CUDA Math API `rsqrt`.
#[inline]
pub fn rsqrt(x: f64) -> f64 {
    if !(x > 0.0 && x < f64::INFINITY) {
        return 1.0 / prim::sqrt(x); // ±0, negative, +∞, NaN
    }
    // x = m·4^k with m in [1, 4); rsqrt(x) = rsqrt(m)·2^-k, no division or square
    // root: an f32 estimate (f32 runs at twice the f64 rate or more), then one
    // third-order step in f64.
    let (xn, sc) = if x < f64::MIN_POSITIVE {
        (x * TWO54, 27)
    } else {
        (x, 0)
    };
    let bits = xn.to_bits();
    let k = ((bits >> 52) as i32 - 1023) >> 1;
    let m = f64::from_bits(bits.wrapping_sub(((2 * k) as i64 as u64) << 52));
    let r = rsqrt_f32_estimate(m as f32) as f64;
    // t = m r² - 1 with the rounding of m·r kept; rsqrt(m) = r (1 + t)^(-1/2)
    // = r (1 - t/2 + 3t²/8 - …), |t| ≤ 2^-21, so the t³ term is below 2^-63.
    let (mr, mre) = two_prod(m, r);
    let t = fma(mr, r, -1.0) + mre * r;
    let u = t * fma(t, 0.375, -0.5);
    scale_normal(fma(r, u, r), sc - k)
}

/// `1/sqrt(m)` to about 2^-22 relative for `m` in [1, 16): a bit estimate (3.5% off)
/// and three Newton steps, in `f32`.
#[inline(always)]
fn rsqrt_f32_estimate(m: f32) -> f32 {
    let mut r = f32::from_bits(0x5f37_59df - (m.to_bits() >> 1));
    let h = 0.5 * m;
    for _ in 0..3 {
        let e = prim::fmaf(-(h * r), r, 0.5);
        r = prim::fmaf(r, e, r);
    }
    r
}

/// Square root, correctly rounded (`sqrt.rn.f64`). `sqrt(-0) = -0`,
/// `sqrt(x < 0) = NaN`. Max error: 0 ulp (CUDA `sqrt`: 0 ulp). Every target.
/// Source: CUDA Math API `sqrt`; C99 F.9.4.5.
#[inline]
pub fn sqrt(x: f64) -> f64 {
    prim::sqrt(x)
}

/// `(sqrt(Σ v²) = (h + l)·2^e)` for finite `v` with a nonzero largest `|v|`.
#[inline(always)]
fn norm_parts(v: [f64; 4]) -> (f64, f64, i32) {
    let m = v[0].abs().max(v[1].abs()).max(v[2].abs()).max(v[3].abs());
    let (mn, sc) = normalize(m);
    let e = ((mn.to_bits() >> 52) as i32 - 1023) + sc; // m in [2^e, 2^(e+1))
    let (s1, s2) = (pow2(-(e >> 1)), pow2(-(e - (e >> 1))));
    let (mut sh, mut sl) = (0.0, 0.0);
    for &vi in v.iter() {
        let w = vi * s1 * s2;
        let (p, pe) = two_prod(w, w);
        let (s, se) = two_sum(sh, p);
        sh = s;
        sl += se + pe;
    }
    let (sh, sl) = fast_two_sum(sh, sl);
    let (q, ql) = sqrt_dd(sh, sl);
    (q, ql, e)
}

/// `Some(result)` for inputs with an ∞ (+∞, even beside NaN), a NaN or all zeros.
#[inline(always)]
fn norm_special(v: [f64; 4], recip: bool) -> Option<f64> {
    let inf = v.iter().any(|c| c.is_infinite());
    let nan = v.iter().any(|c| c.is_nan());
    let zero = v.iter().all(|&c| c == 0.0);
    if inf {
        Some(if recip { 0.0 } else { f64::INFINITY })
    } else if nan {
        Some(f64::NAN)
    } else if zero {
        Some(if recip { f64::INFINITY } else { 0.0 })
    } else {
        None
    }
}

#[inline(always)]
fn norm_n(v: [f64; 4]) -> f64 {
    if let Some(r) = norm_special(v, false) {
        return r;
    }
    let (q, ql, e) = norm_parts(v);
    scale(q + ql, e)
}

#[inline(always)]
fn rnorm_n(v: [f64; 4]) -> f64 {
    if let Some(r) = norm_special(v, true) {
        return r;
    }
    let (q, ql, e) = norm_parts(v);
    let r = 1.0 / q;
    let rl = r * (fma(-r, q, 1.0) - r * ql);
    scale(r + rl, -e)
}

/// `sqrt(x² + y²)` without undue overflow or underflow. `hypot(±∞, y) = +∞` even
/// for NaN `y`; otherwise NaN in, NaN out. Max error: 0.50 ulp measured (CUDA
/// `hypot`: 2 ulp). Every target. Source: CUDA Math API `hypot`; C99 F.9.4.3.
#[inline]
pub fn hypot(x: f64, y: f64) -> f64 {
    let (ax, ay) = (x.abs(), y.abs());
    if !(ax < f64::INFINITY && ay < f64::INFINITY) {
        return if ax == f64::INFINITY || ay == f64::INFINITY {
            f64::INFINITY
        } else {
            x + y // NaN
        };
    }
    let (a, b) = if ax >= ay { (ax, ay) } else { (ay, ax) };
    if b == 0.0 {
        return a; // also hypot(0, 0)
    }
    // a·2^-e in [1, 2) (an exponent subtraction), b·2^-e (two exact steps; an
    // underflow there is far below a's ulp).
    let (an, sc) = normalize(a);
    let e = (an.to_bits() >> 52) as i32 - 1023;
    let a1 = f64::from_bits(an.to_bits().wrapping_sub((e as i64 as u64) << 52));
    let b1 = b * pow2(-(e >> 1)) * pow2(-(e - (e >> 1)) - sc);
    let (p, pe) = two_prod(a1, a1);
    let (q, qe) = two_prod(b1, b1);
    let (wh, wl) = fast_two_sum(p, q);
    let v = sqrt_dd_round(wh, wl + (pe + qe));
    let e = e + sc;
    if e.abs() < 1000 {
        scale_normal(v, e)
    } else {
        scale(v, e)
    }
}

/// `sqrt(wh + wl)` rounded once (to about 2^-64 before the rounding), for
/// `1 ≤ wh < 16`, `|wl| ≤ ulp(wh)`: no square root or division instruction, an
/// `f32` reciprocal square root and two Newton steps `y + (w - y²)/(2 sqrt w)`.
#[inline(always)]
fn sqrt_dd_round(wh: f64, wl: f64) -> f64 {
    let hr = 0.5 * rsqrt_f32_estimate(wh as f32) as f64;
    let y0 = wh * (2.0 * hr);
    let y1 = fma(fma(-y0, y0, wh) + wl, hr, y0);
    fma(fma(-y1, y1, wh) + wl, hr, y1)
}

/// `1 / sqrt(x² + y²)`. `rhypot(±∞, y) = +0`, `rhypot(0, 0) = +∞`. Max error:
/// 0.62 ulp measured (CUDA `rhypot`: 1 ulp). Every target. Source: CUDA Math API
/// `rhypot`.
#[inline]
pub fn rhypot(x: f64, y: f64) -> f64 {
    rnorm_n([x, y, 0.0, 0.0])
}

/// `sqrt(a² + b² + c²)`; special values as [`hypot`]. Max error: 0.50 ulp
/// measured (CUDA `norm3d`: 2 ulp). Every target. Source: CUDA Math API `norm3d`.
#[inline]
pub fn norm3d(a: f64, b: f64, c: f64) -> f64 {
    norm_n([a, b, c, 0.0])
}

/// `1 / sqrt(a² + b² + c²)`; special values as [`rhypot`]. Max error: 0.50 ulp
/// measured (CUDA `rnorm3d`: 1 ulp). Every target. Source: CUDA Math API `rnorm3d`.
#[inline]
pub fn rnorm3d(a: f64, b: f64, c: f64) -> f64 {
    rnorm_n([a, b, c, 0.0])
}

/// `sqrt(a² + b² + c² + d²)`; special values as [`hypot`]. Max error:
/// 0.50 ulp measured (CUDA `norm4d`: 2 ulp). Every target. Source: CUDA Math
/// API `norm4d`.
#[inline]
pub fn norm4d(a: f64, b: f64, c: f64, d: f64) -> f64 {
    norm_n([a, b, c, d])
}

/// `1 / sqrt(a² + b² + c² + d²)`; special values as [`rhypot`]. Max error:
/// 0.50 ulp measured (CUDA `rnorm4d`: 1 ulp). Every target. Source: CUDA Math
/// API `rnorm4d`.
#[inline]
pub fn rnorm4d(a: f64, b: f64, c: f64, d: f64) -> f64 {
    rnorm_n([a, b, c, d])
}

// ---------------------------------------------------------------- rounding

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
    let t = prim::trunc(x);
    if (x - t).abs() >= 0.5 {
        t + 1.0f64.copysign(x)
    } else {
        t
    }
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
    if x.is_nan() || y.is_nan() {
        x + y
    } else if x > y {
        x - y
    } else {
        0.0
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

// ---------------------------------------------------------------- remainders

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

// ---------------------------------------------------------------------------------
// Inverse error functions.

/// `erfinv(x + xl)` for `0 <= x < 1`, `|xl| <= ulp(x)`, given `u = 1 − (x + xl)²` to
/// within an ulp: `(x + xl)·P(w − 3.125)` for `w = −ln u < 6.25`, else a polynomial
/// `T_k(√w − c_k)` on four pieces of `√w` up to 27.5 (`u` down to the least
/// subnormal). Giles' variables, our own fits (`scripts/math_coeffs_f64.py erfinv_*`).
#[inline(always)]
fn erfinv_core(x: f64, xl: f64, u: f64) -> f64 {
    let w = -log(u);
    if w < 6.25 {
        let p = poly(w - 3.125, &ERFINV_CENTRAL_C);
        return fma(p, x, p * xl);
    }
    let s = sqrt(w);
    if s < 4.5 {
        poly(s - 3.5, &ERFINV_T1_C)
    } else if s < 8.0 {
        poly(s - 6.25, &ERFINV_T2_C)
    } else if s < 16.0 {
        poly(s - 12.0, &ERFINV_T3_C)
    } else {
        poly(s - 21.75, &ERFINV_T4_C)
    }
}

/// The inverse error function: `y` with `erf y = x` (CUDA `erfinv`, bound 5 ulp).
/// `erfinv(±1) = ±∞`, `erfinv(±0) = ±0`, NaN for `|x| > 1` and NaN. Every target.
/// Source: CUDA Math API `erfinv`; the variables of Giles, "Approximating the erfinv
/// function" (GPU Computing Gems, 2011).
#[inline]
pub fn erfinv(x: f64) -> f64 {
    let a = x.abs();
    if !(a < 1.0) {
        return if a == 1.0 {
            f64::INFINITY.copysign(x)
        } else {
            f64::NAN
        };
    }
    let u = if a < 0.5 {
        fma(-a, a, 1.0)
    } else {
        // (1 − a)(1 + a): 1 − a is exact, 1 + a = b + e exactly.
        let (b, e) = fast_two_sum(1.0, a);
        let d = 1.0 - a;
        fma(d, b, d * e)
    };
    erfinv_core(a, 0.0, u).copysign(x)
}

/// The inverse complementary error function: `x` with `erfc x = y` (CUDA `erfcinv`,
/// bound 6 ulp), accurate for tiny `y`, subnormals included. `erfcinv(0) = +∞`,
/// `erfcinv(2) = −∞`, NaN outside `[0, 2]` and for NaN. Every target. Source: CUDA
/// Math API `erfcinv`.
#[inline]
pub fn erfcinv(y: f64) -> f64 {
    if !(y > 0.0 && y < 2.0) {
        return if y == 0.0 {
            f64::INFINITY
        } else if y == 2.0 {
            f64::NEG_INFINITY
        } else {
            f64::NAN
        };
    }
    // erfcinv(y) = −erfcinv(2 − y), 2 − y exact for y ≥ 1: take y ≤ 1.
    let upper = y > 1.0;
    let y = if upper { 2.0 - y } else { y };
    // erfinv(1 − y), with 1 − y = x + xl and 1 − x² = y·(2 − y).
    let (x, xl) = fast_two_sum(1.0, -y);
    let (b, e) = fast_two_sum(2.0, -y);
    let r = erfinv_core(x, xl, fma(y, b, y * e));
    if upper {
        -r
    } else {
        r
    }
}

/// The inverse of the standard normal cumulative distribution function: `x` with
/// `Φ(x) = p`, as `−√2·erfcinv(2p)` (CUDA `normcdfinv`, bound 8 ulp), accurate in the
/// lower tail. `normcdfinv(0) = −∞`, `normcdfinv(1) = +∞`, NaN outside `[0, 1]` and
/// for NaN. Every target. Source: CUDA Math API `normcdfinv`.
#[inline]
pub fn normcdfinv(p: f64) -> f64 {
    let r = erfcinv(p + p);
    if r.is_infinite() {
        return -r; // the tail term would add ∞ − ∞
    }
    // + 0: Φ⁻¹(1/2) is +0, not the −0 the negation gives.
    fma(-r, SQRT_2_H, -r * SQRT_2_L) + 0.0
}

/// `scripts/math_coeffs_f64.py erfinv_t2: T2(s - 6.25) = erfinv(x) on [-1.75, 1.75], degree 22: max rel err 2^-64.3 (2^-53.7 with the coefficients rounded to f64)`.
const ERFINV_T2_C: [f64; 23] = [
    6.11228428058907,
    1.0093619038687056,
    -0.0004977179272362264,
    -2.4375297923938127e-05,
    1.5814826454955874e-05,
    -3.9423563714396795e-06,
    7.978346864225293e-07,
    -1.4678765189015662e-07,
    2.5519558756771847e-08,
    -4.265846498447613e-09,
    6.917925600589366e-10,
    -1.0938138541715525e-10,
    1.6903150897066686e-11,
    -2.549092974778695e-12,
    3.7625294359487044e-13,
    -5.70085783605742e-14,
    7.469286269826985e-15,
    5.401059879056099e-16,
    -2.222968100444128e-16,
    -2.02552573020874e-16,
    5.0084499523701675e-18,
    4.9203172129395987e-17,
    -1.110651804417434e-17,
];
/// `scripts/math_coeffs_f64.py erfinv_t3: T3(s - 12) = erfinv(x) on [-4, 4], degree 19: max rel err 2^-57.1 (2^-54.0 with the coefficients rounded to f64)`.
const ERFINV_T3_C: [f64; 20] = [
    11.901287167432752,
    1.0047720037686654,
    -0.0002543868552660238,
    1.3270861725733411e-05,
    -6.128339801303965e-07,
    1.843757558668044e-08,
    7.044258182357304e-10,
    -2.161449844718305e-10,
    2.922812441489254e-11,
    -3.2407735786817645e-12,
    3.2806930268406243e-13,
    -3.1501756891998723e-14,
    2.9131549600562366e-15,
    -2.638005888141426e-16,
    2.4271266582113018e-17,
    -2.121685077456922e-18,
    1.396049763818088e-19,
    -1.207549359125763e-20,
    2.3188589858837635e-21,
    -1.9364068067066481e-22,
];
/// `scripts/math_coeffs_f64.py erfinv_t4: T4(s - 21.75) = erfinv(x) on [-5.75, 5.75], degree 15: max rel err 2^-55.5 (2^-53.4 with the coefficients rounded to f64)`.
const ERFINV_T4_C: [f64; 16] = [
    21.681922023510992,
    1.0020763060548623,
    -7.131252324216753e-05,
    2.5403823238019337e-06,
    -9.13904537458235e-08,
    3.268894514323367e-09,
    -1.1460722291921269e-10,
    3.86553737871926e-12,
    -1.21399482362414e-13,
    3.2861723823230726e-15,
    -5.552277764859467e-17,
    -1.3855192722424506e-18,
    1.938285804738699e-19,
    -1.5644788434542814e-20,
    1.6498642876183828e-21,
    -9.16725273217591e-23,
];
/// `scripts/math_coeffs_f64.py erfinv_central: P(w - 3.125) = erfinv(x)/x on [-3.125, 3.13], degree 23: max rel err 2^-55.2 (2^-53.6 with the coefficients rounded to f64)`.
const ERFINV_CENTRAL_C: [f64; 24] = [
    1.6536545626831027,
    0.24015818242558834,
    -0.006033670871427868,
    -0.0007407025341545266,
    0.00018673420802472917,
    -1.388252339426385e-05,
    -1.365469185198449e-06,
    4.234788171929039e-07,
    -2.9070382142432704e-08,
    -4.1126606856574975e-09,
    1.0512180928891938e-09,
    -5.4142931288227555e-11,
    -1.2976866285434408e-11,
    2.630500232391474e-12,
    -8.118787400286173e-14,
    -4.0015472510478806e-14,
    6.5969087872177305e-15,
    -3.991040290626981e-17,
    -1.3020936338515656e-16,
    1.554634990640339e-17,
    1.1518300765298944e-18,
    -3.4876342857761388e-19,
    -1.1486195521853042e-21,
    3.218474848594905e-21,
];
/// `scripts/math_coeffs_f64.py erfinv_t1: T1(s - 3.5) = erfinv(x) on [-1.01, 1.01], degree 20: max rel err 2^-57.9 (2^-54.1 with the coefficients rounded to f64)`.
const ERFINV_T1_C: [f64; 21] = [
    3.335477736728649,
    1.0074222651033198,
    0.003106190710051981,
    -0.001719403565047809,
    0.0006072951663865029,
    -0.0001731357845118324,
    3.5951346997859085e-05,
    -5.100827545730024e-07,
    -4.634128019601748e-06,
    2.878126724126649e-06,
    -9.724098464938881e-07,
    9.785191239071645e-08,
    9.902990467213022e-08,
    -6.708080116346822e-08,
    1.939363077911651e-08,
    -6.680800595853931e-12,
    -2.83611320540957e-09,
    1.4808841889083201e-09,
    -2.410910558990142e-10,
    -1.3298570895827951e-10,
    5.665214796864089e-11,
];

// ---------------------------------------------------------------- modified Bessel functions

// math_coeffs_f64.py bessel_i0_small: P(z) = (I0(sqrt z) - 1)/z on [0, 144.1], degree 18: max rel err 2^-61.8 (2^-60.1 with the coefficients rounded to f64)
const BESSEL_I0_SMALL_C: [f64; 19] = [
    0.25,
    0.015624999999999998,
    0.00043402777777777884,
    6.7816840277774335e-06,
    6.78168402778377e-08,
    4.709502797004251e-10,
    2.402807549973047e-12,
    9.385966968163562e-15,
    2.896903471749084e-17,
    7.242256344263462e-20,
    1.4963387385668516e-22,
    2.5977352125779306e-25,
    3.843710804553461e-28,
    4.894278041368598e-31,
    5.497446724266669e-34,
    5.055913550422607e-37,
    5.564186433056576e-40,
    1.1992760918760725e-43,
    5.7401904110426155e-46,
];
// math_coeffs_f64.py bessel_i1_small: P(z) = (2 I1(sqrt z)/sqrt z - 1)/z on [0, 144.1], degree 18: max rel err 2^-66.2 (2^-60.1 with the coefficients rounded to f64)
const BESSEL_I1_SMALL_C: [f64; 19] = [
    0.125,
    0.005208333333333333,
    0.00010850694444444449,
    1.3563368055555397e-06,
    1.1302806712965722e-08,
    6.727861138639137e-11,
    3.003509437112034e-13,
    1.0428852201273588e-15,
    2.8969034287592776e-18,
    6.583870362015727e-21,
    1.2469473305709337e-23,
    1.9982786951314754e-26,
    2.745303208469432e-29,
    3.2643692917651104e-32,
    3.4275419486720067e-35,
    3.007235151104754e-38,
    3.001750858824555e-41,
    7.780619149541079e-45,
    2.7593816263040577e-47,
];
// math_coeffs_f64.py bessel_i0_large: H(w) = sqrt(x) e^-x I0(x), w = 1/x on [0, 0.08343], degree 18: max rel err 2^-58.3 (2^-53.8 with the coefficients rounded to f64)
const BESSEL_I0_LARGE_C: [f64; 19] = [
    0.3989422804014327,
    0.049867785050181614,
    0.02805062908714519,
    0.02921940729153477,
    0.04474163856160718,
    0.09070318676786022,
    0.21700687777743485,
    1.5796963203364711,
    -47.079089581407665,
    2004.5500073800772,
    -58679.815836840855,
    1257628.583341545,
    -19176771.655992292,
    197690146.20908603,
    -1189407992.5261042,
    1576209389.3755963,
    32366592972.350307,
    -229106112596.05728,
    503532214160.9786,
];
// math_coeffs_f64.py bessel_i1_large: H(w) = sqrt(x) e^-x I1(x), w = 1/x on [0, 0.08343], degree 18: max rel err 2^-58.2 (2^-53.8 with the coefficients rounded to f64)
const BESSEL_I1_LARGE_C: [f64; 19] = [
    0.3989422804014327,
    -0.14960335515053974,
    -0.04675104848103111,
    -0.04090716937236394,
    -0.057525140987284736,
    -0.11083476026941762,
    -0.2588440922528834,
    -1.6576973993291684,
    44.91619539561912,
    -1915.9312502593211,
    55375.64109710631,
    -1165740.1455811083,
    17238942.982260004,
    -167043848.68394107,
    832545364.6161102,
    1382590192.5139115,
    -48835692277.489655,
    284022391691.02277,
    -586059096549.7286,
];

/// `1/√(2π)` as head and tail: the constant term of the large-argument tables.
const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_7;
const FRAC_1_SQRT_2PI_LO: f64 = -2.492_327_202_277_73e-17;

/// `e^a/√a · H(1/a)` for `a` held to [12, 746] (above about 714 both functions
/// overflow), `H(w) = 1/√(2π) + w·(c[1] + c[2] w + …)`.
#[inline(always)]
fn bessel_i_large(a: f64, c: &[f64; 19]) -> f64 {
    let a = a.clamp(12.0, 746.0);
    let w = 1.0 / a;
    let mut q = c[18];
    for &ci in c[1..18].iter().rev() {
        q = fma(q, w, ci);
    }
    let h = FRAC_1_SQRT_2PI + fma(q, w, FRAC_1_SQRT_2PI_LO);
    let (k, r, u) = exp_parts(a, 0.0);
    scale(exp_value(r, u) * (h / sqrt(a)), k)
}

/// The modified Bessel function of the first kind of order 0, `I₀(x)`: even, 1 at 0,
/// `+∞` at ±∞ and for `|x|` above about 713.98 (overflow). Max error: see
/// BENCHMARKS.md (CUDA `cyl_bessel_i0`: 6 ulp). Every target. Source: CUDA Math API
/// `cyl_bessel_i0`.
#[inline]
pub fn cyl_bessel_i0(x: f64) -> f64 {
    let a = x.abs();
    if a <= 12.0 || x.is_nan() {
        // 1 + z·P(z), z = x².
        let z = a * a;
        return fma(z, poly(z, &BESSEL_I0_SMALL_C), 1.0);
    }
    bessel_i_large(a, &BESSEL_I0_LARGE_C)
}

/// The modified Bessel function of the first kind of order 1, `I₁(x)`: odd, `±∞` at
/// ±∞ and for `|x|` above about 713.98. Max error: see BENCHMARKS.md (CUDA
/// `cyl_bessel_i1`: 6 ulp). Every target. Source: CUDA Math API `cyl_bessel_i1`.
#[inline]
pub fn cyl_bessel_i1(x: f64) -> f64 {
    let a = x.abs();
    let r = if a <= 12.0 || x.is_nan() {
        // (x/2)(1 + z·P(z)), z = x².
        let z = a * a;
        (0.5 * a) * fma(z, poly(z, &BESSEL_I1_SMALL_C), 1.0)
    } else {
        bessel_i_large(a, &BESSEL_I1_LARGE_C)
    };
    r.copysign(x)
}

// ---------------------------------------------------------------- gamma functions

// math_coeffs_f64.py gamma_q: Q(v) = (1/Gamma(1+v) - 1)/(v(v-1)) on [-0.501, 1.001], degree 16: max rel err 2^-59.2 (2^-55.8 with the coefficients rounded to f64)
const GAMMA_Q_C: [f64; 17] = [
    -0.5772156649015329,
    0.07866240661872104,
    0.12066504165281619,
    -0.04587356972947618,
    -0.00367583517392734,
    0.005946136353970566,
    -0.001272806892796631,
    -0.00010763930111158456,
    0.00010760237415175858,
    -2.04479081015965e-05,
    -3.1305957337095777e-07,
    9.374392597373095e-07,
    -1.955733592501963e-07,
    1.003396840843519e-08,
    3.915689822545754e-09,
    -1.0484676226044772e-09,
    1.0130178523997929e-10,
];
// math_coeffs_f64.py lgamma_stirling: S(z), z = 1/x^2 on [0, 0.015626], degree 6: max rel err 2^-56.9 (2^-54.0 with the coefficients rounded to f64)
const LGAMMA_STIRLING_C: [f64; 7] = [
    0.08333333333333333,
    -0.0027777777777739866,
    0.0007936507897512279,
    -0.0005952365841450824,
    0.0008414700359309848,
    -0.0018903799146045002,
    0.0050658338324904755,
];

/// `ln√(2π)` and `ln π` as head and tail.
const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;
const LN_SQRT_2PI_LO: f64 = -3.878_294_158_067_241_4e-17;
const LN_PI: f64 = 1.144_729_885_849_400_2;
const LN_PI_LO: f64 = 1.026_595_116_270_782_6e-17;

/// `1/Γ(1 + v) − 1 = v(v − 1)·Q(v)` for `v` in [−0.5, 1]; also `Q(v)`.
#[inline(always)]
fn rgamma_m1(v: f64) -> (f64, f64) {
    let q = poly(v, &GAMMA_Q_C);
    (v * (v - 1.0) * q, q)
}

/// `ln Γ(x)` for `x ≥ 8` by Stirling's series, as head and tail:
/// `(x − ½) ln x − x + ln√(2π) + S(1/x²)/x`. `None` when it overflows.
#[inline(always)]
fn stirling_dd(x: f64) -> Option<(f64, f64)> {
    let (lh, ll) = log_dd1(x);
    let xm = x - 0.5;
    let (ph, pe) = two_prod(xm, lh);
    if !(ph.abs() < f64::INFINITY) {
        return None;
    }
    let w = 1.0 / x;
    let tail = w * poly(w * w, &LGAMMA_STIRLING_C);
    let (s1, e1) = two_sum(ph, -x);
    let (s2, e2) = two_sum(s1, LN_SQRT_2PI);
    let lo = fma(xm, ll, pe) + (e1 + e2) + (LN_SQRT_2PI_LO + tail);
    Some(fast_two_sum(s2, lo))
}

/// `y·(y + 1)·…·(x − 1)` for `y = x − n` (`n ≥ 1` factors, each exact) times `m`, as
/// head and tail.
#[inline(always)]
fn rising_dd(y: f64, n: u32, m: f64) -> (f64, f64) {
    let (mut ph, mut pl) = (m, 0.0);
    let mut k = 0;
    while k < n {
        let c = y + k as f64;
        let p = ph * c;
        pl = fma(ph, c, -p) + pl * c;
        ph = p;
        k += 1;
    }
    (ph, pl)
}

/// `ln|Γ(x)|` for finite `x > −0.5`, `x ≠ 0`. Each range writes the result as
/// `m·ln(h + l) + s·log1p(a) + (c + c2 + cl)` and one logarithm and one `log1p` serve
/// them all: a warp whose lanes fall in different ranges runs the two once, not once
/// per range.
#[inline(always)]
fn lgamma_main(x: f64) -> f64 {
    if x > 1e300 {
        // x(ln x − 1): the rest is below an ulp, and (x − ½)·ln x alone would
        // overflow before the result does.
        let (lh, ll) = log_dd1(x);
        return fma(x, lh - 1.0, x * ll);
    }
    let (mut m, mut h, mut l) = (0.0, 1.0, 0.0);
    let (mut s, mut a) = (-1.0, 0.0);
    let (mut c, mut c2, mut cl) = (0.0, 0.0, 0.0);
    if x < 0.5 {
        // Γ(x) = Γ(1 + x)/x: −ln|x| − log1p(1/Γ(1 + x) − 1), for x < 0 too.
        m = -1.0;
        h = x.abs();
        a = rgamma_m1(x).0;
    } else if x < 1.0 {
        // x·(1/Γ(1 + x)) − 1 = (x − 1)(1 + x²Q(x)): exact near the zero at 1.
        let (_, q) = rgamma_m1(x);
        a = (x - 1.0) * fma(x * x, q, 1.0);
    } else if x < 2.0 {
        a = rgamma_m1(x - 1.0).0; // lgamma(1) = +0: s·log1p(0) = −0, added to +0
    } else if x < 3.0 {
        // Γ(2 + v) − 1 = (1 + v)/(1 + w) − 1 = v(1 − (v − 1)Q)/(1 + w): exact near 2;
        // the quotient as head and tail, log1p(a + t) = log1p(a) + t/(1 + a).
        let v = x - 2.0;
        let (w, q) = rgamma_m1(v);
        let (nh, nl) = two_prod(v, fma(-(v - 1.0), q, 1.0));
        let (dh, dl) = fast_two_sum(1.0, w);
        a = nh / dh;
        cl = ((fma(-a, dh, nh) + (nl - a * dl)) / dh) / (1.0 + a);
        s = 1.0;
    } else if x < 8.0 {
        // Γ(x) = (1 + v)·(2 + v)·…·(x − 1) / (1 + w), v = x − n − 2 in [0, 1).
        let n = x as u32 - 2;
        let v = x - (n + 2) as f64;
        (h, l) = rising_dd(v + 2.0, n, 1.0 + v);
        m = 1.0;
        a = rgamma_m1(v).0;
    } else {
        // Stirling: (x − ½) ln x − x + ln√(2π) + S(1/x²)/x.
        m = x - 0.5;
        h = x;
        s = 0.0;
        c = -x;
        c2 = LN_SQRT_2PI;
        let w = 1.0 / x;
        cl = LN_SQRT_2PI_LO + w * poly(w * w, &LGAMMA_STIRLING_C);
    }
    let (lh, ll) = log_dd(h, l);
    let lp = log1p(a);
    let (ph, pe) = two_prod(m, lh);
    let (s1, e1) = two_sum(ph, c);
    let (s2, e2) = two_sum(s1, c2);
    s2 + (((e1 + e2) + fma(m, ll, pe)) + fma(s, lp, cl))
}

/// `ln|Γ(x)|`, the logarithm of the gamma function's magnitude. `+∞` at 0 and at the
/// negative integers (the poles), at ±∞ and above about 2.55e305; NaN for NaN. Max
/// error: see BENCHMARKS.md (CUDA `lgamma`: 4 ulp outside [−23.0001, −2.2637], larger
/// inside, where `ln|Γ|` has zeros). Every target. Source: CUDA Math API `lgamma`;
/// C99 F.9.5.3.
#[inline]
pub fn lgamma(x: f64) -> f64 {
    if !(x.abs() < f64::INFINITY) {
        return x * x; // NaN stays NaN, ±∞ gives +∞
    }
    if x == floor(x) && x <= 0.0 {
        return f64::INFINITY; // ±0 and the negative integers
    }
    if x > -0.5 {
        return lgamma_main(x);
    }
    // Γ(x)·(−x)·Γ(−x) = π / sin(πx), with −x exact (1 − x would round).
    let (ph, pl) = two_prod(sinpi(x), x);
    let (ph, pl) = if ph < 0.0 { (-ph, -pl) } else { (ph, pl) };
    let (lh, ll) = log_dd(ph, pl);
    (LN_PI - lh) + ((LN_PI_LO - ll) - lgamma_main(-x))
}

/// `Γ(x)` for finite `x > 0` (+∞ on overflow).
#[inline(always)]
fn tgamma_pos(x: f64) -> f64 {
    if x < 1.0 {
        // Γ(x) = 1/(x·(1 + w)); 1/x first, so a subnormal x is not rounded twice.
        let (w, _) = rgamma_m1(x);
        return (1.0 / x) / (1.0 + w);
    }
    if x < 2.0 {
        return 1.0 / (1.0 + rgamma_m1(x - 1.0).0);
    }
    if x < 20.0 {
        // y·(y + 1)·…·(x − 1) / (1 + w), y = x − n in [1, 2).
        let n = x as u32 - 1;
        let v = x - (n + 1) as f64;
        let (ph, pl) = rising_dd(v + 1.0, n, 1.0);
        let d = 1.0 + rgamma_m1(v).0;
        let r = ph / d;
        return r + (fma(-r, d, ph) + pl) / d;
    }
    match stirling_dd(x) {
        Some((h, l)) => exp_dd(h, l),
        None => f64::INFINITY,
    }
}

/// The gamma function `Γ(x)`. `±∞` at ±0, NaN at the negative integers and at −∞,
/// `+∞` at +∞ and above about 171.62 (overflow); tiny (down to the subnormals, then
/// ±0) for large negative non-integers. Max error: see BENCHMARKS.md (CUDA `tgamma`:
/// 10 ulp). Every target. Source: CUDA Math API `tgamma`; C99 F.9.5.4.
#[inline]
pub fn tgamma(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x + x;
    }
    if x == 0.0 {
        return 1.0 / x;
    }
    if x > 0.0 {
        return tgamma_pos(x);
    }
    if x == floor(x) {
        return f64::NAN; // negative integers and −∞
    }
    if x > -0.5 {
        // Γ(x) = 1/(x·(1 + w)), as for 0 < x < 1.
        let (w, _) = rgamma_m1(x);
        return (1.0 / x) / (1.0 + w);
    }
    // Γ(x) = −π / (x·sin(πx)·Γ(−x)) (−x exact; 1 − x would round); past 20, Γ(−x) as
    // e^(ln Γ) so that a result below the overflow of Γ(−x) keeps its subnormal digits.
    let s = -x * sinpi(x);
    let y = -x;
    if y < 20.0 {
        return core::f64::consts::PI / (s * tgamma_pos(y));
    }
    match stirling_dd(y) {
        Some((h, l)) if h < 746.0 => {
            // π/s times e^(−h − l), 2^k applied last: a subnormal result rounds once.
            let (k, r, u) = exp_parts(-h, -l);
            scale(exp_value(r, u) * (core::f64::consts::PI / s), k)
        }
        Some(_) => 0.0f64.copysign(s),
        None => 0.0f64.copysign(s),
    }
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

// ---------------------------------------------------------------- norms of any length

/// As `single.rs`'s: the scaled sum of squares and the exponent, or the special result.
#[inline(always)]
fn scaled_sum_of_squares(a: &[f64], zero: f64, inf: f64) -> Result<(f64, i32), f64> {
    let mut m = 0.0f64;
    let mut nan = false;
    for &v in a {
        let av = v.abs();
        if av == f64::INFINITY {
            return Err(inf);
        }
        nan |= av.is_nan();
        m = if av > m { av } else { m };
    }
    if nan {
        return Err(f64::NAN);
    }
    if m == 0.0 {
        return Err(zero);
    }
    let e = ilogb(m);
    let mut s = 0.0f64;
    for &v in a {
        let t = scalbn(v, -e); // exact: a power of two, the largest element in [1, 2)
        s = fma(t, t, s);
    }
    Ok((s, e))
}

/// The Euclidean norm `√(Σ aᵢ²)` of `a` (CUDA `norm(dim, p)`, the length taken from
/// the slice), without overflow or underflow in between (see [`normf`](super::normf)).
/// `+∞` when an element is infinite, NaN when one is NaN, 0 for an empty or all-zero
/// `a`. Error: the sum's roundings (CUDA documents no bound). Every target. Source:
/// CUDA Math API `norm`.
#[inline]
pub fn norm(a: &[f64]) -> f64 {
    match scaled_sum_of_squares(a, 0.0, f64::INFINITY) {
        Ok((s, e)) => scalbn(sqrt(s), e),
        Err(v) => v,
    }
}

/// `1/√(Σ aᵢ²)` (CUDA `rnorm(dim, p)`), scaled as [`norm`]: `+0` when an element is
/// infinite, NaN when one is NaN, `+∞` for an empty or all-zero `a`. Every target.
/// Source: CUDA Math API `rnorm`.
#[inline]
pub fn rnorm(a: &[f64]) -> f64 {
    match scaled_sum_of_squares(a, f64::INFINITY, 0.0) {
        Ok((s, e)) => scalbn(1.0 / sqrt(s), -e),
        Err(v) => v,
    }
}
