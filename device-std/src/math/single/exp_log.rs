//! Exponentials, logarithms and powers in `f32`: `expf`, `exp2f`, `exp10f`, `expm1f`,
//! `logf`, `log2f`, `log10f`, `log1pf`, `powf`, `powif`, and the kernels other modules
//! share (the reduction by ln 2, `e^x` of a head and tail, `log` as a head and tail).

use super::arith::{
    fast_two_sum, mul_dd, poly, poly_from1, pow2i, round_magic, round_magic_bits, scale_1p,
    scale_1p_bits,
};
use super::consts::{INV_LN2, LN2, LN2_LO};
use crate::math::prim::{fmaf, truncf as p_trunc};

const INV_LN2_LO: f32 = f32::from_bits(0x32a5_7060);
const INV_LN10: f32 = f32::from_bits(0x3ede_5bd9);
const INV_LN10_LO: f32 = f32::from_bits(0xb22d_91af);
/// log10(2) with 16 significant bits.
const LOG10_2_HI: f32 = f32::from_bits(0x3e9a_2100);
const LOG10_2_HI_LO: f32 = f32::from_bits(0xb64a_f608);
const LOG10_2: f32 = f32::from_bits(0x3e9a_209b);
const LOG10_2_LO: f32 = f32::from_bits(0xb276_0860);
const LN10: f32 = f32::from_bits(0x4013_5d8e);
const LN10_LO: f32 = f32::from_bits(0xb309_555d);
const LOG2_10: f32 = f32::from_bits(0x4054_9a78);

// EXPM1_Q: expm1(r) = r + r^2 q(r), |r| <= ln2/2; relative error 2^-30.9.
const EXPM1_Q: [f32; 6] = [
    0.5,
    0.166_666_66,
    0.041_666_46,
    0.008_333_635,
    0.001_393_591_8,
    0.000_196_751_37,
];
// LOG1P_Q: log1p(f) = f + f^2 q(f), f = m - 1, m in [2/3, 4/3): remez.py LOG1P_Q3 at
// degree 9, rounded to f32; relative error of log1p 2^-26.9. No division: logf's path.
const LOG1P_Q: [f32; 10] = [
    -0.5,
    0.333_333_34,
    -0.249_996_07,
    0.199_997_59,
    -0.166_857_62,
    0.142_988_7,
    -0.121_260_47,
    0.108_253_695,
    -0.131_143_47,
    0.117_071_53,
];
/// 1.5·2^23: `(x + MAGIC) − MAGIC` is `x` rounded to an integer for `|x| < 2^22`.
const MAGIC: f32 = 12_582_912.0;
// EXP_Q: e^r = 1 + r + r^2 q(r), |r| <= ln2/2: remez.py EXP_Q, relative error 2^-31.1.
const EXP_Q: [f32; 6] = [
    0.5,
    0.166_666_48,
    0.041_666_48,
    0.008_337_774,
    0.001_393_376,
    0.000_174_423_46,
];
// EXP2_P: 2^r = 1 + r p(r), |r| <= 1/2: remez.py EXP2_P, relative error 2^-30.0.
#[allow(clippy::approx_constant)] // fitted: the first coefficient rounds to ln 2 / ln 10
const EXP2_P: [f32; 7] = [
    0.693_147_2,
    0.240_226_51,
    0.055_504_005,
    0.009_618_057,
    0.001_334_195_1,
    0.000_154_613_68,
    1.335_974e-5,
];
// EXP10_P: 10^r = 1 + r p(r), |r| <= log10(2)/2: remez.py EXP10_P, relative error
// 2^-29.2.
#[allow(clippy::approx_constant)] // fitted: the first coefficient rounds to ln 2 / ln 10
const EXP10_P: [f32; 7] = [
    2.302_585_1,
    2.650_949_2,
    2.034_679,
    1.171_218_4,
    0.538_842_1,
    0.208_752_17,
    0.089_632_71,
];
// LOG2_Q: log2(1 + f) = f/ln2 + f^2 q(f), 1 + f in [sqrt(1/2), sqrt(2)): remez.py
// LOG2_Q, relative error 2^-27.4.
const LOG2_Q: [f32; 11] = [
    -0.721_347_5,
    0.480_898_35,
    -0.360_672_38,
    0.288_537_4,
    -0.240_519_9,
    0.206_212_03,
    -0.178_877_7,
    0.157_316_33,
    -0.156_525_09,
    0.163_364_84,
    -0.096_972_555,
];
// LOG10_Q: as LOG2_Q for log10 (remez.py LOG10_Q), relative error 2^-26.3.
const LOG10_Q: [f32; 10] = [
    -0.217_147_19,
    0.144_764_8,
    -0.108_580_3,
    0.086_867_675,
    -0.072_140_24,
    0.061_592_564,
    -0.057_396_7,
    0.055_924_326,
    -0.033_683_654,
    0.000_919_610_4,
];
// LOG_ATANH_Q: log(m) = 2s + s^3 q(s^2), s = (m-1)/(m+1), m in [sqrt(1/2), sqrt(2)):
// the series 2/(2i+3) (u = s^2 <= 0.0295: the first term left out, 2u^5/13, is 2^-27.5
// of q). The first, 2/3, is applied as head and tail (LOG_ATANH_Q0_LO).
const LOG_ATANH_Q: [f32; 5] = [0.666_666_7, 0.4, 0.285_714_3, 0.222_222_22, 0.181_818_18];
const LOG_ATANH_Q0_LO: f32 = -1.986_821_3e-8;

/// `expm1(rh + rl) - rh` for `|rh| <= ln2/2 (+ a little)`, `|rl| <= 2^-20 |rh|`.
#[inline(always)]
pub(super) fn expm1_tail(rh: f32, rl: f32) -> f32 {
    let q = poly(rh, &EXPM1_Q);
    fmaf(rh * rh, q, fmaf(rl, rh, rl))
}

/// `expm1(rh + rl)`, arguments as for [`expm1_tail`].
#[inline(always)]
pub(super) fn expm1_kernel(rh: f32, rl: f32) -> f32 {
    rh + expm1_tail(rh, rl)
}

/// `x = k·ln2 + (rh + rl)` with `k = rint(x/ln2)`, for `|x| <= 104`.
#[inline(always)]
pub(super) fn reduce_ln2(x: f32) -> (i32, f32, f32) {
    let (b, rh, rl) = reduce_ln2_bits(x);
    (b.wrapping_sub(12_582_912.0f32.to_bits()) as i32, rh, rl)
}

/// [`reduce_ln2`] with `k` as [`round_magic_bits`] gives it.
#[inline(always)]
fn reduce_ln2_bits(x: f32) -> (u32, f32, f32) {
    let (kf, b) = round_magic_bits(x * INV_LN2);
    let r1 = fmaf(-kf, LN2, x); // exact
    let rh = fmaf(-kf, LN2_LO, r1);
    let rl = fmaf(-kf, LN2_LO, r1 - rh);
    (b, rh, rl)
}

/// `e^x`, for `x` clamped to the range where the result is neither 0 nor ∞
/// (NaN passes through).
#[inline(always)]
fn exp_core(x: f32) -> f32 {
    let x = x.clamp(-104.0, 89.0);
    let (b, rh, rl) = reduce_ln2_bits(x);
    scale_1p_bits(b, expm1_kernel(rh, rl))
}

/// Splits a positive finite `x` into `e` and `f = m - 1` (exact), `m` in [2/3, 4/3),
/// `x = 2^e·m`, and returns `(e, h, tail)` with `log m = h + tail` to about 2^-27
/// relative (the polynomial's error), `tail` below 2^-3 of `h`.
#[inline(always)]
pub(super) fn log_poly(x: f32) -> (f32, f32, f32) {
    let (x, bias) = if x < f32::MIN_POSITIVE {
        (x * 8_388_608.0, 23) // 2^23
    } else {
        (x, 0)
    };
    let ix = x.to_bits().wrapping_sub(0x3f2a_aaab); // 2/3 rounded up
    let e = (ix as i32 >> 23) - bias;
    let f = f32::from_bits((ix & 0x007f_ffff) + 0x3f2a_aaab) - 1.0;
    // log1p(f) = f − f²/2 + f³q'(f): f − f2/2 summed exactly (−f2/2 is exact), the
    // rest (f2's rounding error and the cubic term, ≤ 0.012) as the tail.
    let f2 = f * f;
    let f2l = fmaf(f, f, -f2);
    let (h, hl) = fast_two_sum(f, -0.5 * f2);
    let cubic = fmaf(f2, f * poly_from1(f, &LOG1P_Q), -0.5 * f2l);
    (e as f32, h, hl + cubic)
}

/// Splits a positive finite `x` into `e` and `m` in [√½, √2) with `x = 2^e·m`.
#[inline(always)]
fn split_sqrt2(x: f32) -> (f32, f32) {
    let (x, bias) = if x < f32::MIN_POSITIVE {
        (x * 8_388_608.0, 23) // 2^23
    } else {
        (x, 0)
    };
    let ix = x.to_bits().wrapping_sub(0x3f35_04f3);
    let e = (ix as i32 >> 23) - bias;
    let m = f32::from_bits((ix & 0x007f_ffff) + 0x3f35_04f3);
    (e as f32, m)
}

/// `log(m)` for `m` in [√½, √2) as a normalised head and tail, to about 2^-45: for
/// `powf`, whose exponent `y·log2 x` needs the logarithm to ~2^-31 relative.
#[inline(always)]
fn log_m_dd(m: f32) -> (f32, f32) {
    let f = m - 1.0;
    let u = m + 1.0;
    let ul = m - (u - 1.0);
    let rcp = 1.0 / u;
    let sh = f * rcp;
    let r = fmaf(-sh, ul, fmaf(-sh, u, f));
    let sl = r * rcp;
    // s³ = s3 + s3l and (2/3)s³ = p + pe exactly enough.
    let s2 = sh * sh;
    let s2l = fmaf(sh, sh, -s2);
    let s3 = sh * s2;
    let s3l = fmaf(sh, s2, -s3) + sh * s2l;
    let w = s2
        * poly(
            s2,
            &[
                LOG_ATANH_Q[1],
                LOG_ATANH_Q[2],
                LOG_ATANH_Q[3],
                LOG_ATANH_Q[4],
            ],
        );
    // (2/3)(sh + sl)³ adds 2sh²·sl to (2/3)sh³.
    let lo = fmaf(
        s3,
        LOG_ATANH_Q0_LO + w,
        fmaf(s3l, LOG_ATANH_Q[0], fmaf(2.0 * s2, sl, 2.0 * sl)),
    );
    let p = s3 * LOG_ATANH_Q[0];
    let pe = fmaf(s3, LOG_ATANH_Q[0], -p);
    let (th, te) = fast_two_sum(p, lo);
    let (h, e1) = fast_two_sum(2.0 * sh, th);
    fast_two_sum(h, e1 + (te + pe))
}

/// Special cases of the logarithms: `Some(result)` for zero, negative, infinite or
/// NaN `x`.
#[inline(always)]
fn log_special(x: f32) -> Option<f32> {
    if x > 0.0 && x < f32::INFINITY {
        None
    } else if x == 0.0 {
        Some(f32::NEG_INFINITY)
    } else if x == f32::INFINITY {
        Some(x)
    } else {
        Some(f32::NAN)
    }
}

/// 2^23, to scale a subnormal into the normal range.
const TWO_23: f32 = 8_388_608.0;

/// `(e, f)` with `x = 2^e·(1 + f)` exactly and `1 + f` in `[low, 2·low)`, for positive
/// normal `x`; `low` given by its bits (2/3 or √½ rounded up).
#[inline(always)]
fn split_from(x: f32, low_bits: u32) -> (f32, f32) {
    let ebits = x.to_bits().wrapping_sub(low_bits) & 0xff80_0000;
    let f = f32::from_bits(x.to_bits().wrapping_sub(ebits)) - 1.0;
    ((ebits as i32 >> 23) as f32, f)
}

/// The bits of 2/3 rounded up and of √½ rounded up: the low ends of [`split_from`]'s
/// two ranges.
const TWO_THIRDS_BITS: u32 = 0x3f2a_aaab;
const SQRT_HALF_BITS: u32 = 0x3f35_04f3;

/// Whether `y` is an integer, and whether an odd one (finite `y`).
#[inline(always)]
fn integer_parity(y: f32) -> (bool, bool) {
    if y.abs() >= 16_777_216.0 {
        return (true, false); // every f32 from 2^24 up is even
    }
    let t = p_trunc(y);
    if t != y {
        return (false, false);
    }
    (true, (t as i32) & 1 != 0)
}

/// `2^j` for the sum `big = 1.5·2^23 + j` of the rounding trick (`j` in -126..=127):
/// the low bits of `big` are `j`, so one shift and add make the exponent field.
#[inline(always)]
fn pow2_of_magic_sum(big: f32) -> f32 {
    f32::from_bits((big.to_bits() << 23).wrapping_add(0x3f80_0000))
}

/// `e^x` (CUDA `expf`, bound 2 ulp). Every target.
#[inline]
pub fn expf(x: f32) -> f32 {
    if !(x.abs() <= 87.0) {
        return exp_slow(x); // results near or beyond the normal range, and NaN
    }
    exp_normal(x)
}

/// `e^x` for `|x| <= 87` (a normal result), at most 0.98 ulp, no branch.
#[inline(always)]
pub(super) fn exp_normal(x: f32) -> f32 {
    // x = j·ln2 + r, |r| <= ln2/2 (x − j·LN2 is exact, the tail rounded once);
    // e^x = 2^j·(1 + r + r²q(r)), one rounding.
    let big = fmaf(x, INV_LN2, MAGIC);
    let j = big - MAGIC;
    let r = fmaf(-j, LN2_LO, fmaf(-j, LN2, x));
    let em = fmaf(r * r, poly(r, &EXP_Q), r);
    let t = pow2_of_magic_sum(big);
    fmaf(t, em, t)
}

/// [`expf`] outside [-87, 87], out of line: subnormal and overflowing results.
#[inline(never)]
fn exp_slow(x: f32) -> f32 {
    exp_core(x)
}

/// `2^x` (CUDA `exp2f`, bound 2 ulp). Every target.
#[inline]
pub fn exp2f(x: f32) -> f32 {
    if !(x.abs() <= 126.0) {
        return exp2_slow(x);
    }
    // x = j + r exactly, |r| <= 1/2; 2^x = 2^j·(1 + r·p(r)).
    let big = x + MAGIC;
    let r = x - (big - MAGIC);
    let t = pow2_of_magic_sum(big);
    fmaf(t, r * poly(r, &EXP2_P), t)
}

/// [`exp2f`] outside [-126, 126], out of line.
#[inline(never)]
fn exp2_slow(x: f32) -> f32 {
    let x = x.clamp(-152.0, 129.0);
    let (kf, b) = round_magic_bits(x);
    let r = x - kf; // exact
    let rh = r * LN2;
    let rl = fmaf(r, LN2_LO, fmaf(r, LN2, -rh));
    scale_1p_bits(b, expm1_kernel(rh, rl))
}

/// `10^x` (CUDA `exp10f`, bound 2 ulp). Every target.
#[inline]
pub fn exp10f(x: f32) -> f32 {
    if !(x.abs() <= 37.5) {
        return exp10_slow(x);
    }
    // x = j·log10(2) + r, |r| <= log10(2)/2, as expf; 10^x = 2^j·(1 + r·p(r)).
    let big = fmaf(x, LOG2_10, MAGIC);
    let j = big - MAGIC;
    let r = fmaf(-j, LOG10_2_LO, fmaf(-j, LOG10_2, x));
    let t = pow2_of_magic_sum(big);
    fmaf(t, r * poly(r, &EXP10_P), t)
}

/// [`exp10f`] outside [-37.5, 37.5], out of line.
#[inline(never)]
fn exp10_slow(x: f32) -> f32 {
    let x = x.clamp(-46.0, 39.0);
    let (kf, b) = round_magic_bits(x * LOG2_10);
    let r1 = fmaf(-kf, LOG10_2, x); // exact
    let r = fmaf(-kf, LOG10_2_LO, r1);
    let r_lo = fmaf(-kf, LOG10_2_LO, r1 - r);
    let (rh, rl) = mul_dd(r, r_lo, LN10, LN10_LO);
    scale_1p_bits(b, expm1_kernel(rh, rl))
}

/// `e^x - 1`, accurate near 0 (CUDA `expm1f`, bound 1 ulp). Every target.
#[inline]
pub fn expm1f(x: f32) -> f32 {
    if x < -17.5 {
        return -1.0; // e^x below half an ulp of 1
    }
    if x.abs() < 5.960_464_5e-8 {
        return x; // |x| < 2^-24: x + x²/2 rounds to x (and −0 stays −0)
    }
    let x = if x > 89.0 { 89.0 } else { x }; // NaN passes
    let (k, rh, rl) = reduce_ln2(x);
    let tail = expm1_tail(rh, rl);
    if k == 0 {
        return rh + tail;
    }
    if k > 127 {
        return scale_1p(k, rh + tail);
    }
    let t = pow2i(k);
    if k < -24 {
        return fmaf(t, rh + tail, t) - 1.0;
    }
    // 2^k(1 + rh + tail) - 1 = (2^k - 1) + 2^k·rh + 2^k·tail, the first two summed
    // exactly (2^k·rh is exact; 2^k - 1 is for k <= 24, else 2^k and -1).
    let (c, cl) = if k <= 24 { (t - 1.0, 0.0) } else { (t, -1.0) };
    let (h, e) = fast_two_sum(c, t * rh);
    h + ((e + cl) + t * tail)
}

/// Whether `x` is positive, normal and finite: one integer comparison.
#[inline(always)]
fn is_positive_normal(x: f32) -> bool {
    x.to_bits().wrapping_sub(0x0080_0000) < 0x7f00_0000
}

/// `ln x` (CUDA `logf`, bound 1 ulp). Every target.
#[inline]
pub fn logf(x: f32) -> f32 {
    if !is_positive_normal(x) {
        return log_slow(x);
    }
    ln_scaled(x, 0.0)
}

/// `ln(x·2^bias)` for positive normal `x`: `x = 2^e·(1 + f)`, `f` in [-1/3, 1/3),
/// `ln = (e + bias)·ln2 + f + f²q(f)`, two roundings.
#[inline(always)]
fn ln_scaled(x: f32, bias: f32) -> f32 {
    let (e, f) = split_from(x, TWO_THIRDS_BITS);
    let r = fmaf(f, f * poly(f, &LOG1P_Q), f);
    fmaf(e + bias, LN2, r)
}

/// [`logf`] for subnormal, zero, negative, infinite or NaN `x`, out of line.
#[inline(never)]
fn log_slow(x: f32) -> f32 {
    log_special_or_scaled(x, ln_scaled)
}

/// The special values of the logarithms, else `scaled(x·2^23, −23)` for a subnormal
/// `x`: the out-of-line part of `logf`, `log2f` and `log10f`.
#[inline(always)]
fn log_special_or_scaled(x: f32, scaled: fn(f32, f32) -> f32) -> f32 {
    match log_special(x) {
        Some(v) => v,
        None => scaled(x * TWO_23, -23.0),
    }
}

/// `log2 x` (CUDA `log2f`, bound 1 ulp); exact at powers of two. Every target.
#[inline]
pub fn log2f(x: f32) -> f32 {
    if !is_positive_normal(x) {
        return log2_slow(x);
    }
    log2_scaled(x, 0.0)
}

/// `log2(x·2^bias)` for positive normal `x`: `x = 2^e·(1 + f)`, `1 + f` in [√½, √2),
/// `log2 = (e + bias) + f/ln2 + f²q(f)`, where `|f/ln2 + …| < 1/2` so that its rounding
/// is at most half an ulp of the sum's for `e + bias ≠ 0`.
#[inline(always)]
fn log2_scaled(x: f32, bias: f32) -> f32 {
    let (e, f) = split_from(x, SQRT_HALF_BITS);
    let t = f * (f * poly(f, &LOG2_Q));
    (e + bias) + fmaf(f, INV_LN2, fmaf(f, INV_LN2_LO, t))
}

/// [`log2f`] for the inputs [`log_slow`] takes, out of line.
#[inline(never)]
fn log2_slow(x: f32) -> f32 {
    log_special_or_scaled(x, log2_scaled)
}

/// `log10 x` (CUDA `log10f`, bound 2 ulp). Every target.
#[inline]
pub fn log10f(x: f32) -> f32 {
    if !is_positive_normal(x) {
        return log10_slow(x);
    }
    log10_scaled(x, 0.0)
}

/// `log10(x·2^bias)` as [`log2_scaled`]; `e·log10(2)` as a 16-bit head (an exact
/// product) and a tail.
#[inline(always)]
fn log10_scaled(x: f32, bias: f32) -> f32 {
    let (e, f) = split_from(x, SQRT_HALF_BITS);
    let e = e + bias;
    let t = f * (f * poly(f, &LOG10_Q));
    let r = fmaf(f, INV_LN10, fmaf(f, INV_LN10_LO, t));
    fmaf(e, LOG10_2_HI, fmaf(e, LOG10_2_HI_LO, r))
}

/// [`log10f`] for the inputs [`log_slow`] takes, out of line.
#[inline(never)]
fn log10_slow(x: f32) -> f32 {
    log_special_or_scaled(x, log10_scaled)
}

/// `ln(1 + x)`, accurate near 0 (CUDA `log1pf`, bound 1 ulp). Every target.
#[inline]
pub fn log1pf(x: f32) -> f32 {
    if !(x > -1.0 && x < 1.0e30) {
        return log1p_special(x);
    }
    // 1 + x = u + c exactly; u = 2^e·(1 + f) as in logf, so ln(1 + x) = e·ln2 +
    // ln(1 + f) + c·2^-e/(1 + f), the last term to first order in f·c.
    let u = 1.0 + x;
    let v = u - 1.0;
    let c = (1.0 - (u - v)) + (x - v);
    let ebits = u.to_bits().wrapping_sub(TWO_THIRDS_BITS) & 0xff80_0000;
    let s = f32::from_bits(0x3f80_0000u32.wrapping_sub(ebits)); // 2^-e, normal for e <= 100
    let f = fmaf(u, s, -1.0); // exact
    let corr = (c * s) * poly(f, &[1.0, -1.0, 1.0]);
    let r = f + fmaf(f, f * poly(f, &LOG1P_Q), corr);
    let e = (ebits as i32 >> 23) as f32;
    let y = fmaf(e, LN2, r);
    if x == 0.0 {
        x // −0 stays −0
    } else {
        y
    }
}

/// `log1pf` for `x` at most −1, from 10^30 up, or NaN, out of line.
#[inline(never)]
fn log1p_special(x: f32) -> f32 {
    if x >= 1.0e30 {
        logf(x) // ln(1 + x) − ln x < 10^-30: below an ulp
    } else if x == -1.0 {
        f32::NEG_INFINITY
    } else {
        f32::NAN
    }
}

/// `x^y` (CUDA `powf`, bound 4 ulp), with C99's special cases: `powf(x, ±0) = 1` and
/// `powf(1, y) = 1` for every `x`, `y` (NaN too); a negative `x` gives NaN unless `y`
/// is an integer. Every target.
#[inline]
pub fn powf(x: f32, y: f32) -> f32 {
    let ax = x.abs();
    let ay = y.abs();
    let ordinary = ax > 0.0 && ax < f32::INFINITY && x > 0.0 && ay > 0.0 && ay < f32::INFINITY;
    if !ordinary {
        return pow_special(x, y);
    }
    pow_finite(x, y)
}

/// `x^y` for finite positive `x` and finite nonzero `y`.
#[inline(always)]
fn pow_finite(x: f32, y: f32) -> f32 {
    let (e, m) = split_sqrt2(x);
    let (lh, ll) = log_m_dd(m);
    let (ph, pl) = mul_dd(lh, ll, INV_LN2, INV_LN2_LO);
    let (l2h, l2t) = fast_two_sum(e, ph);
    let l2l = l2t + pl;
    // z = y·log2(x) as head and tail.
    let zh = y * l2h;
    let zl = fmaf(y, l2h, -zh) + y * l2l;
    if zh > 129.0 {
        return f32::INFINITY;
    }
    if zh < -152.0 {
        return 0.0;
    }
    let (kf, k) = round_magic(zh);
    let (r, rt) = fast_two_sum(zh - kf, zl); // zh - kf exact
    let rh = r * LN2;
    let rl = fmaf(r, LN2, -rh) + fmaf(r, LN2_LO, rt * LN2);
    scale_1p(k, expm1_kernel(rh, rl))
}

/// `powf` where `x` is not positive finite or `y` is 0, ±∞ or NaN (C99 F.9.4.4).
#[inline(never)]
fn pow_special(x: f32, y: f32) -> f32 {
    if y == 0.0 || x == 1.0 {
        return 1.0;
    }
    if x.is_nan() || y.is_nan() {
        return x + y;
    }
    let ax = x.abs();
    if y.is_infinite() {
        if ax == 1.0 {
            return 1.0;
        }
        return if (ax < 1.0) == (y < 0.0) {
            f32::INFINITY
        } else {
            0.0
        };
    }
    let (int, odd) = integer_parity(y);
    let sign = if x.is_sign_negative() && odd {
        -1.0f32
    } else {
        1.0
    };
    if ax == 0.0 || ax == f32::INFINITY {
        let big = (ax == 0.0) == (y < 0.0);
        return sign * if big { f32::INFINITY } else { 0.0 };
    }
    // Finite nonzero x < 0.
    if !int {
        return f32::NAN;
    }
    sign * pow_finite(ax, y)
}

/// `x^n` by repeated squaring, as `llvm.powi` (and so std's `f32::powi` outside
/// constant folding) computes it: the bits of `|n|` from the lowest, then one
/// division for negative `n`. Error grows with `|n|` (about `log2|n|` roundings).
/// Every target.
#[inline]
pub fn powif(x: f32, n: i32) -> f32 {
    let recip = n < 0;
    let mut a = x;
    let mut b = n;
    let mut r = 1.0f32;
    loop {
        if b & 1 != 0 {
            r *= a;
        }
        b /= 2;
        if b == 0 {
            break;
        }
        a *= a;
    }
    if recip {
        1.0 / r
    } else {
        r
    }
}

/// `e^(xh + xl)` for `xh` in [−104, 89] and `|xl| <= ulp(xh)`; overflows to +∞.
#[inline(always)]
pub(super) fn exp_dd(xh: f32, xl: f32) -> f32 {
    exp_dd_times(xh, xl, 1.0)
}

/// `e^(xh + xl) · m` (`xh` in [−140, 89], `|xl| <= ulp(xh)`, `m` normal): `2^k` applied in two
/// halves around the product, so a subnormal result is rounded once and an overflow
/// is a true one.
#[inline(always)]
pub(super) fn exp_dd_times(xh: f32, xl: f32, m: f32) -> f32 {
    let (kf, k) = round_magic(xh * INV_LN2);
    let r1 = fmaf(-kf, LN2, xh); // exact
    let (s, e) = fast_two_sum(r1, xl);
    let rh = fmaf(-kf, LN2_LO, s);
    let rl = fmaf(-kf, LN2_LO, s - rh) + e;
    let em = expm1_kernel(rh, rl);
    let k1 = k >> 1;
    let t1 = pow2i(k1);
    (fmaf(t1, em, t1) * m) * pow2i(k - k1)
}
