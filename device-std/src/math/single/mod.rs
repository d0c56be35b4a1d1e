//! The `f32` functions, under CUDA's names (`sinf`, `expf`, …).
//!
//! Built from `f32` arithmetic only (no `f64` anywhere: consumer GPUs run it at 1/32
//! to 1/64 of the `f32` rate), the correctly rounded primitives of [`prim`](super::prim)
//! and integer bit operations, so every function gives the same bits on the GPU and
//! the host. Extra precision comes from pairs of `f32` (a head and a tail, summed
//! with Fast2Sum / the exact FMA product error). Polynomial coefficients are minimax
//! fits from `remez.py` beside this file, named by their table.

// Coefficients are written as remez.py prints them; `x - x` is the NaN of an infinite
// argument; `!(x < y)` is true for NaN on purpose.
#![allow(
    clippy::excessive_precision,
    clippy::eq_op,
    clippy::neg_cmp_op_on_partial_ord
)]

use super::prim::truncf as p_trunc;
use super::prim::{ceilf as p_ceil, floorf as p_floor, fmaf, rintf as p_rint, sqrtf as p_sqrt};

// ---------------------------------------------------------------------------------
// Constants (each the f32 nearest the value, a `_LO` tail the f32 nearest the rest).

/// ln 2 with 16 significant bits, so `e * LN2_HI` is exact for any exponent `e`.
const LN2_HI: f32 = f32::from_bits(0x3f31_7200);
const LN2_HI_LO: f32 = f32::from_bits(0x35bf_be8e);
const LN2: f32 = f32::from_bits(0x3f31_7218);
const LN2_LO: f32 = f32::from_bits(0xb102_e308);
const INV_LN2: f32 = f32::from_bits(0x3fb8_aa3b);
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
const PI: f32 = f32::from_bits(0x4049_0fdb);
const PI_LO: f32 = f32::from_bits(0xb3bb_bd2e);
const PIO2: f32 = f32::from_bits(0x3fc9_0fdb);
const PIO2_LO: f32 = f32::from_bits(0xb33b_bd2e);
/// The third term of π/2 = PIO2 + PIO2_LO + PIO2_LO2 (Cody–Waite reduction).
const PIO2_LO2: f32 = -1.715_124_5e-15;
const TWO_OVER_PI: f32 = f32::from_bits(0x3f22_f983);
/// Below this (2^-12), `sin x` and `tan x` round to `x` (and `cos x` to 1).
const TINY_TRIG: f32 = 2.441_406_3e-4;
/// Above this, [`reduce_pio2`] takes the Payne–Hanek path.
const CODY_WAITE_MAX: f32 = 131_072.0;

// Minimax tables (remez.py NAME).

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
// LOG_ATANH_Q: log(m) = 2s + s^3 q(s^2), s = (m-1)/(m+1), m in [sqrt(1/2), sqrt(2)):
// the series 2/(2i+3) (u = s^2 <= 0.0295: the first term left out, 2u^5/13, is 2^-27.5
// of q). The first, 2/3, is applied as head and tail (LOG_ATANH_Q0_LO).
const LOG_ATANH_Q: [f32; 5] = [0.666_666_7, 0.4, 0.285_714_3, 0.222_222_22, 0.181_818_18];
const LOG_ATANH_Q0_LO: f32 = -1.986_821_3e-8;
// SIN_Q: sin(r) = r + r^3 q(r^2), |r| <= pi/4; relative error 2^-32.5.
const SIN_Q: [f32; 4] = [
    -0.166_666_67,
    0.008_333_379,
    -0.000_198_530_25,
    2.831_717_9e-6,
];
// COS_Q: cos(r) = 1 - r^2/2 + r^4 q(r^2), |r| <= pi/4; absolute error 2^-37.2.
const COS_Q: [f32; 4] = [
    0.041_666_668,
    -0.001_388_898_1,
    2.482_244_8e-5,
    -2.891_816_6e-7,
];
// TAN_Q: tan(r) = r + r^3 q(r^2), |r| <= pi/4; relative error 2^-29.2.
const TAN_Q: [f32; 7] = [
    0.333_333_52,
    0.133_325_77,
    0.054_069_86,
    0.021_230_739,
    0.010_968_48,
    -7.741_393e-5,
    0.004_458_022_3,
];
// ATAN_Q: atan(t) = t + t^3 q(t^2), t in [0, 1]; relative error 2^-28.2.
const ATAN_Q: [f32; 9] = [
    -0.333_332_99,
    0.199_985_3,
    -0.142_640_16,
    0.109_508_81,
    -0.083_993_14,
    0.057_881_616,
    -0.031_097_058,
    0.010_868_356,
    -0.001_782_576_7,
];
// ASIN_Q: asin(t) = t + t^3 q(t^2), t in [0, 1/2]; relative error 2^-31.7.
const ASIN_Q: [f32; 6] = [
    0.166_666_6,
    0.075_005_22,
    0.044_513_382,
    0.031_838_845,
    0.014_316_644,
    0.037_693_076,
];
// SINPI_Q: sin(pi r) = pi r + r^3 q(r^2), |r| <= 1/4; relative error 2^-33.4.
const SINPI_Q: [f32; 4] = [-5.167_712_7, 2.550_154_7, -0.598_982_04, 0.079_174_37];
// COSPI_Q: cos(pi r) = 1 + r^2 q(r^2), |r| <= 1/4; relative error 2^-31.6.
const COSPI_Q: [f32; 5] = [
    -4.934_802,
    4.058_690_5,
    -1.334_256_8,
    0.216_729_5,
    0.093_387_47,
];
// ERF_Q: erf(x) = x (2/sqrt(pi) + x^2 q(x^2)), |x| <= 0.75; relative error 2^-31.5.
const ERF_Q: [f32; 7] = [
    -0.376_126_38,
    0.112_837_57,
    -0.026_862_219,
    0.005_203_363,
    -0.000_800_250_45,
    4.854_061e-5,
    2.370_201_2e-5,
];
/// 1/√2 as head and tail.
const FRAC_1_SQRT_2: f32 = f32::from_bits(0x3f35_04f3);
const FRAC_1_SQRT_2_LO: f32 = f32::from_bits(0x324f_e77a);
/// `remez.py ERFINV_A`: erfinv(x)/x for `w = −ln(1 − x²)` in [0, 2], `v = w − 1`; relative
/// error 2^-27.21 (the constant term as head and tail).
const ERFINV_A: [f32; 9] = [
    1.1273744,
    0.24783286,
    0.00425071,
    -0.0023763673,
    0.00010011785,
    3.8191934e-05,
    -4.26657e-06,
    -5.517617e-07,
    1.1366212e-07,
];
const ERFINV_A_LO: f32 = -1.6955774e-08;
/// `remez.py ERFINV_B`: erfinv(x)/x for `w = −ln(1 − x²)` in [2, 5], `v = w − 3.5`; relative
/// error 2^-26.93 (the constant term as head and tail).
const ERFINV_B: [f32; 9] = [
    1.7428299,
    0.23535842,
    -0.00671707,
    -0.00048128876,
    0.00015857237,
    -1.5789878e-05,
    -3.9304265e-07,
    3.168584e-07,
    -3.21575e-08,
];
const ERFINV_B_LO: f32 = 3.391486e-09;
/// `remez.py ERFINV_TAIL`: erfinv(x) in `v = √w − 3.125`, `√w` in [√5, 4], relative
/// error 2^-25.8.
const ERFINV_TAIL: [f32; 9] = [
    2.958_235_3,
    1.004_220_5,
    0.005_654_438_9,
    -0.002_908_814_5,
    0.000_999_520_4,
    -0.000_235_732_4,
    4.972_049e-7,
    3.968_885e-5,
    -1.707_625_4e-5,
];
/// `remez.py ERFCINV_FAR`: erfinv(x) in `v = √w − 7.125`, `√w` in [4, 10.25] (erfcinv
/// of `y` down to the least subnormal), relative error 2^-25.5.
const ERFCINV_FAR: [f32; 11] = [
    6.995086,
    1.0084678,
    -0.00050969527,
    9.141686e-06,
    5.052413e-06,
    -1.4415033e-06,
    2.909199e-07,
    -3.6579852e-08,
    4.2689274e-09,
    -1.9871196e-09,
    3.5548295e-10,
];
/// √2 as head and tail.
const SQRT_2: f32 = f32::from_bits(0x3fb5_04f3);
const SQRT_2_LO: f32 = f32::from_bits(0x32cf_e77a);
/// 2/√π as head and tail.
const TWO_OVER_SQRT_PI: f32 = f32::from_bits(0x3f90_6ebb);
const TWO_OVER_SQRT_PI_LO: f32 = f32::from_bits(0xb37b_d649);
// ERFC_NEAR: erfc(t) = e^(-t^2) g(t - 11/8), t in [0.75, 2]; remez.py ERFC_NEAR at
// degree 11, rounded to f32 (the first with a tail); relative error 2^-30.
const ERFC_NEAR: [f32; 12] = [
    0.343_295_9,
    -0.184_315_47,
    0.089_862_123,
    -0.040_503_372,
    0.017_084_956,
    -0.006_804_605_5,
    0.002_576_599_4,
    -0.000_932_122_5,
    0.000_321_795,
    -0.000_107_881_51,
    3.910_876_7e-5,
    -1.198_054_6e-5,
];
const ERFC_NEAR_LO: f32 = -1.215_787_9e-8;
// ERFC_FAR: erfc(t) = e^(-t^2) w g(w), w = 1/t in [0.099, 0.5]; relative error 2^-30.5.
const ERFC_FAR: [f32; 10] = [
    0.564_190_57,
    -3.966_34e-5,
    -0.281_445_1,
    -0.005_296_918_6,
    0.440_965_83,
    0.048_814_94,
    -1.810_241_2,
    3.262_46,
    -2.650_062_3,
    0.873_999_06,
];
// SINH_Q: sinh(t) = t + t^3 q(t^2), t in [0, 1]; relative error 2^-27.7 (the rounding of
// 1/6).
const SINH_Q: [f32; 6] = [
    0.166_666_67,
    0.008_333_334,
    0.000_198_412_7,
    2.755_734_4e-6,
    2.504_84e-8,
    1.632_919_6e-10,
];
// RECIP_P: 1/m on [1, 2]; relative error 2^-6.6 (a start for Newton's method).
const RECIP_P: [f32; 3] = [2.121_212_2, -1.454_545_5, 0.323_232_3];

/// The bits of 2/π, most significant first, after one zero word (so the
/// Payne–Hanek window may start up to 32 bits before the binary point).
static TWO_OVER_PI_BITS: [u32; 9] = [
    0,
    0xa2f9_836e,
    0x4e44_1529,
    0xfc27_57d1,
    0xf534_ddc0,
    0xdb62_9599,
    0x3c43_9041,
    0xfe51_63ab,
    0xdebb_c561,
];

// ---------------------------------------------------------------------------------
// Helpers.

/// `c[0] + c[1] x + … + c[N-1] x^(N-1)` by Horner's rule with FMAs.
#[inline(always)]
fn poly<const N: usize>(x: f32, c: &[f32; N]) -> f32 {
    let mut acc = c[N - 1];
    let mut i = N - 1;
    while i > 0 {
        i -= 1;
        acc = fmaf(acc, x, c[i]);
    }
    acc
}

/// `c[1] + c[2] x + … + c[N-1] x^(N-2)`: [`poly`] without its constant term.
#[inline(always)]
fn poly_from1<const N: usize>(x: f32, c: &[f32; N]) -> f32 {
    let mut acc = c[N - 1];
    let mut i = N - 1;
    while i > 1 {
        i -= 1;
        acc = fmaf(acc, x, c[i]);
    }
    acc
}

/// `2^k` for `k` in -126..=127.
#[inline(always)]
fn pow2i(k: i32) -> f32 {
    f32::from_bits(((k + 127) as u32) << 23)
}

/// `2^k · (1 + em)`, for `k` in -252..=254: `2^k1·(1 + em)` rounded once, then times
/// `2^k2` (`k1 + k2 = k`, both normal powers), exact unless the result is subnormal
/// (then rounded a second time: at most 2^-25 ulp more) or overflows. No branches.
#[inline(always)]
fn scale_1p(k: i32, em: f32) -> f32 {
    let k1 = k >> 1;
    let t1 = pow2i(k1);
    fmaf(t1, em, t1) * pow2i(k - k1)
}

/// `2^k · (1 + em)` as [`scale_1p`], `k` given as the bits of [`round_magic`]'s sum
/// (`b` = MAGIC's bits + `k`): MAGIC's bits are even and leave nothing when shifted
/// by 23, so `2^(k>>1)` and `2^(k - (k>>1))` come from `b` without first taking `k`.
#[inline(always)]
fn scale_1p_bits(b: u32, em: f32) -> f32 {
    let h = b >> 1; // MAGIC/2 + (k >> 1)
    let t1 = f32::from_bits((h << 23).wrapping_add(0x3f80_0000));
    let t2 = f32::from_bits((b.wrapping_sub(h) << 23).wrapping_add(0x3f80_0000));
    fmaf(t1, em, t1) * t2
}

/// [`round_magic`] with the integer left as the bits of the sum (for
/// [`scale_1p_bits`]).
#[inline(always)]
fn round_magic_bits(x: f32) -> (f32, u32) {
    const MAGIC: f32 = 12_582_912.0; // 1.5·2^23
    let big = x + MAGIC;
    (big - MAGIC, big.to_bits())
}

/// `rint(x)` for `|x| < 2^22` as a float and as an integer, by the 1.5·2^23 trick: no
/// conversion instruction (and no saturation checks); a NaN `x` gives NaN and any
/// integer.
#[inline(always)]
fn round_magic(x: f32) -> (f32, i32) {
    const MAGIC: f32 = 12_582_912.0; // 1.5·2^23
    let big = x + MAGIC;
    (
        big - MAGIC,
        big.to_bits().wrapping_sub(MAGIC.to_bits()) as i32,
    )
}

/// `expm1(rh + rl) - rh` for `|rh| <= ln2/2 (+ a little)`, `|rl| <= 2^-20 |rh|`.
#[inline(always)]
fn expm1_tail(rh: f32, rl: f32) -> f32 {
    let q = poly(rh, &EXPM1_Q);
    fmaf(rh * rh, q, fmaf(rl, rh, rl))
}

/// `expm1(rh + rl)`, arguments as for [`expm1_tail`].
#[inline(always)]
fn expm1_kernel(rh: f32, rl: f32) -> f32 {
    rh + expm1_tail(rh, rl)
}

/// `x = k·ln2 + (rh + rl)` with `k = rint(x/ln2)`, for `|x| <= 104`.
#[inline(always)]
fn reduce_ln2(x: f32) -> (i32, f32, f32) {
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
fn log_poly(x: f32) -> (f32, f32, f32) {
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

/// `a + b` as head and exact tail, for `|a| >= |b|` or `a == 0`.
#[inline(always)]
fn fast_two_sum(a: f32, b: f32) -> (f32, f32) {
    let s = a + b;
    (s, (a - s) + b)
}

/// `(h + l)·(ch + cl)` as head and tail.
#[inline(always)]
fn mul_dd(h: f32, l: f32, ch: f32, cl: f32) -> (f32, f32) {
    let ph = h * ch;
    let pl = fmaf(h, ch, -ph) + fmaf(h, cl, l * ch);
    (ph, pl)
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

/// `x = q·π/2 + (rh + rl)`, `|rh| <= π/4` (slightly more for huge `x`), `q` mod 4 in
/// the low bits. Finite `x` only.
#[inline(always)]
fn reduce_pio2(x: f32) -> (i32, f32, f32) {
    if x.abs() <= CODY_WAITE_MAX {
        let (j, q) = round_magic(x * TWO_OVER_PI);
        let r1 = fmaf(-j, PIO2, x); // exact
        let th = j * PIO2_LO;
        let tl = fmaf(j, PIO2_LO, -th);
        let rh = r1 - th;
        let rl = ((r1 - rh) - th) - fmaf(j, PIO2_LO2, tl);
        (q, rh, rl)
    } else {
        payne_hanek(x)
    }
}

/// The reduction of a huge finite `x` with the bits of 2/π (Payne–Hanek).
#[inline(never)]
fn payne_hanek(x: f32) -> (i32, f32, f32) {
    let bits = x.to_bits();
    let m = ((bits & 0x007f_ffff) | 0x0080_0000) as u128; // x = m · 2^(E)
    let exp = ((bits >> 23) & 0xff) as i32 - 150; // E, at least -6 here
                                                  // Bits of 2/π with weight 2^-(p) for p >= E - 1 matter modulo 4; take 96 from there.
    let start = (exp - 1 - 1 + 32) as u32; // index in TWO_OVER_PI_BITS of weight 2^-(E-1)
    let w = (start / 32) as usize;
    let s = start % 32;
    let word = |i: usize| TWO_OVER_PI_BITS[(w + i).min(TWO_OVER_PI_BITS.len() - 1)] as u128;
    let window = (word(0) << 96) | (word(1) << 64) | (word(2) << 32) | word(3);
    let b = (window << s) >> 32; // 96 bits: weights 2^-(E-1) .. 2^-(E+94)
    let b = b & ((1u128 << 96) - 1);
    // x·2/π = m·b·2^(E - (E - 1) - 95) = m·b·2^-94: bits 94, 95 the quadrant.
    let p = m * b;
    let q = ((p >> 94) & 3) as i32;
    let frac = (p >> 30) as u64; // the fraction's top 64 bits
    let fs = frac as i64; // in [-1/2, 1/2) turns (two's complement)
    let q = q + (frac >> 63) as i32;
    let hi = fs as f32;
    let lo = fs.wrapping_sub(hi as i64) as f32;
    // r = (hi + lo)·2^-64·π/2
    const PIO2_S: f32 = f32::from_bits(0x1fc9_0fdb); // π/2·2^-64
    const PIO2_S_LO: f32 = f32::from_bits(0x933b_bd2e);
    let (rh, rl) = mul_dd(hi, lo, PIO2_S, PIO2_S_LO);
    let (rh, rl) = fast_two_sum(rh, rl);
    if x < 0.0 {
        (-q, -rh, -rl)
    } else {
        (q, rh, rl)
    }
}

/// `sin(rh + rl)` for `|rh| <= π/4`.
#[inline(always)]
fn sin_kernel(rh: f32, rl: f32) -> f32 {
    let r2 = rh * rh;
    rh + fmaf(r2 * rh, poly(r2, &SIN_Q), rl)
}

/// `cos(rh + rl)` for `|rh| <= π/4`.
#[inline(always)]
fn cos_kernel(rh: f32, rl: f32) -> f32 {
    let r2 = rh * rh;
    let e2 = fmaf(rh, rh, -r2);
    let hc = 0.5 * r2;
    let w = 1.0 - hc;
    let err = (1.0 - w) - hc;
    w + (fmaf(r2 * r2, poly(r2, &COS_Q), err) - fmaf(0.5, e2, rh * rl))
}

/// `(sin x, cos x)` from one reduction.
#[inline(always)]
fn sincos_core(x: f32) -> (f32, f32) {
    if !x.is_finite() {
        return (x - x, x - x);
    }
    if x.abs() < TINY_TRIG {
        return (x, 1.0);
    }
    let (q, rh, rl) = reduce_pio2(x);
    let s = sin_kernel(rh, rl);
    let c = cos_kernel(rh, rl);
    let (s, c) = if q & 1 != 0 { (c, -s) } else { (s, c) };
    if q & 2 != 0 {
        (-s, -c)
    } else {
        (s, c)
    }
}

/// `atan(t) - t` for `t` in [0, 1] (the tail of `atan(t) = t + tail`).
#[inline(always)]
fn atan_tail(t: f32) -> f32 {
    let t2 = t * t;
    t2 * t * poly(t2, &ATAN_Q)
}

/// `1/x` to about 2^-16 relative, for normal positive `x` below 2^125: an integer
/// seed and two Newton steps, all FMA (no division, no approximate instruction, so the
/// same bits everywhere). For correction terms that need only a few bits.
#[inline(always)]
fn recip_rough(x: f32) -> f32 {
    let y = f32::from_bits(0x7ef3_11c3u32.wrapping_sub(x.to_bits()));
    let y = y * fmaf(-x, y, 2.0);
    y * fmaf(-x, y, 2.0)
}

/// The tail of `√z = s + tail`, `s` the rounded root (0 for `z` = 0).
#[inline(always)]
fn sqrt_tail(s: f32, z: f32) -> f32 {
    if s > 0.0 {
        fmaf(-s, s, z) * (0.5 * recip_rough(s))
    } else {
        0.0
    }
}

/// `(ch + cl) - (t + tail)` rounded once at the end, for `|ch| >= |t|`.
#[inline(always)]
fn sub_from(ch: f32, cl: f32, t: f32, tail: f32) -> f32 {
    let (h, e) = fast_two_sum(ch, -t);
    h + ((e + cl) - tail)
}

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

// ---------------------------------------------------------------------------------
// Exact functions.

/// Square root, correctly rounded (`sqrt.rn.f32`; CUDA `sqrtf`, 0 ulp). `sqrtf(-0) =
/// -0`, negative → NaN. Every target.
#[inline(always)]
pub fn sqrtf(x: f32) -> f32 {
    p_sqrt(x)
}

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
    let t = p_trunc(x);
    if (x - t).abs() >= 0.5 {
        t + 1.0f32.copysign(x)
    } else {
        t
    }
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
/// for 0 and NaN, `i32::MAX` for ±∞ (CUDA's values, as [`ilogb`](super::ilogb)).
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

/// `1/m` for `m` in [1, 2) to within 2^-23 relative: a quadratic start (RECIP_P,
/// 2^-6.6) and two Newton steps, all FMA.
#[inline(always)]
fn recip_1_2(m: f32) -> f32 {
    let y = poly(m, &RECIP_P);
    let y = fmaf(y, fmaf(-m, y, 1.0), y);
    fmaf(y, fmaf(-m, y, 1.0), y)
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

// ---------------------------------------------------------------------------------
// Exponentials and logarithms.

/// `e^x` (CUDA `expf`, bound 2 ulp). Every target.
#[inline]
pub fn expf(x: f32) -> f32 {
    exp_core(x)
}

/// `2^x` (CUDA `exp2f`, bound 2 ulp). Every target.
#[inline]
pub fn exp2f(x: f32) -> f32 {
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

/// `ln x` (CUDA `logf`, bound 1 ulp). Every target.
#[inline]
pub fn logf(x: f32) -> f32 {
    if let Some(s) = log_special(x) {
        return s;
    }
    let (e, lh, ll) = log_poly(x);
    let (s, err) = fast_two_sum(e * LN2_HI, lh);
    s + (err + fmaf(e, LN2_HI_LO, ll))
}

/// `log2 x` (CUDA `log2f`, bound 1 ulp); exact at powers of two. Every target.
#[inline]
pub fn log2f(x: f32) -> f32 {
    if let Some(s) = log_special(x) {
        return s;
    }
    let (e, lh, ll) = log_poly(x);
    let (ph, pl) = mul_dd(lh, ll, INV_LN2, INV_LN2_LO);
    let (s, err) = fast_two_sum(e, ph);
    s + (err + pl)
}

/// `log10 x` (CUDA `log10f`, bound 2 ulp). Every target.
#[inline]
pub fn log10f(x: f32) -> f32 {
    if let Some(s) = log_special(x) {
        return s;
    }
    let (e, lh, ll) = log_poly(x);
    let (ph, pl) = mul_dd(lh, ll, INV_LN10, INV_LN10_LO);
    let (s, err) = fast_two_sum(e * LOG10_2_HI, ph);
    s + (err + fmaf(e, LOG10_2_HI_LO, pl))
}

/// `ln(1 + x)`, accurate near 0 (CUDA `log1pf`, bound 1 ulp). Every target.
#[inline]
pub fn log1pf(x: f32) -> f32 {
    if x.abs() < 0.333_333_3 {
        // log1p(x) = x − x²/2 + x³q'(x) directly (the range log_poly's f covers).
        let f2 = x * x;
        let f2l = fmaf(x, x, -f2);
        let (h, hl) = fast_two_sum(x, -0.5 * f2);
        let v = h + (hl + fmaf(f2, x * poly_from1(x, &LOG1P_Q), -0.5 * f2l));
        return if x == 0.0 { x } else { v }; // −0 stays −0
    }
    if !(x > -1.0) || x == f32::INFINITY {
        return if x == -1.0 {
            f32::NEG_INFINITY
        } else if x == f32::INFINITY {
            x
        } else {
            f32::NAN
        };
    }
    // 1 + x = a + c exactly; log(1 + x) = log(a) + c/a.
    let a = 1.0 + x;
    let c = if x > 1.0 {
        (x - a) + 1.0
    } else {
        (1.0 - a) + x
    };
    let (e, lh, ll) = log_poly(a);
    let (s, err) = fast_two_sum(e * LN2_HI, lh);
    s + (err + fmaf(e, LN2_HI_LO, fmaf(c, recip_rough(a.min(1.0e30)), ll)))
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

// ---------------------------------------------------------------------------------
// Roots.

/// `1/√x` (CUDA `rsqrtf`, bound 2 ulp): +∞ for +0, −∞ for −0, NaN for negative `x`.
/// An integer seed and Newton steps in FMAs (no division, no square root), the last
/// on the exact residual. Every target.
#[inline]
pub fn rsqrtf(x: f32) -> f32 {
    // 2^-126 <= x < 2^126 keeps y² normal.
    if !(f32::MIN_POSITIVE..8.507_059e37).contains(&x) {
        return rsqrt_special(x);
    }
    rsqrt_normal(x)
}

/// [`rsqrtf`] of `x` in [2^-126, 2^126).
#[inline(always)]
fn rsqrt_normal(x: f32) -> f32 {
    let hx = 0.5 * x;
    let mut y = f32::from_bits(0x5f37_5a86u32.wrapping_sub(x.to_bits() >> 1)); // 2^-8.2
    y = y * fmaf(-hx, y * y, 1.5); // 2^-15.4
    y = y * fmaf(-hx, y * y, 1.5); // 2^-29
                                   // Last step on e = 1 − x·y², with y² as head and tail.
    let yy = y * y;
    let yyl = fmaf(y, y, -yy);
    let e = fmaf(-x, yy, 1.0) - x * yyl;
    fmaf(0.5 * y, e, y)
}

/// [`rsqrtf`] of 0, subnormals, `x >= 2^126`, ∞, negatives and NaN.
#[inline(never)]
fn rsqrt_special(x: f32) -> f32 {
    if x > 0.0 && x < f32::MIN_POSITIVE {
        // rsqrt(x) = rsqrt(x·2^64)·2^32.
        return rsqrt_normal(x * f32::from_bits(0x5f80_0000)) * f32::from_bits(0x4f80_0000);
    }
    if (8.507_059e37..f32::INFINITY).contains(&x) {
        // rsqrt(x) = rsqrt(x·2^-64)·2^-32.
        return rsqrt_normal(x * f32::from_bits(0x1f80_0000)) * f32::from_bits(0x2f80_0000);
    }
    if x == 0.0 {
        return f32::INFINITY.copysign(x);
    }
    if x == f32::INFINITY {
        return 0.0;
    }
    f32::NAN
}

/// `a = |x|` scaled by 2^72 below 2^-54 (so that the residuals of the last steps
/// stay normal), `t = a^(-1/3)` to about 2^-15.8 relative, and whether `a` was
/// scaled. An integer seed (`bits/3` from a magic constant, 2^-4.9) and two Newton
/// steps on `t^-3 = a`, all FMA: no division, no exponent arithmetic. Garbage for 0,
/// ∞ and NaN.
#[inline(always)]
fn rcbrt_rough(x: f32) -> (f32, f32, bool) {
    let a = x.abs();
    let sub = a < f32::from_bits(0x2480_0000); // 2^-54
    let a = if sub {
        a * f32::from_bits(0x6380_0000)
    } else {
        a
    }; // 2^72
    let mut t = f32::from_bits(0x54a2_32a3u32.wrapping_sub(a.to_bits() / 3));
    // t += t(1 − a t³)/3, with a/3 once (its rounding is far below the error here).
    let a3 = a * (1.0 / 3.0);
    for _ in 0..2 {
        t = fmaf(t, fmaf(-(a3 * t), t * t, 1.0 / 3.0), t);
    }
    (a, t, sub)
}

/// `∛x` (CUDA `cbrtf`, bound 1 ulp); odd, exact for cubes of small integers. Every
/// target.
#[inline]
pub fn cbrtf(x: f32) -> f32 {
    let (a, t, sub) = rcbrt_rough(x);
    // c = a·t² ≈ a^(1/3); one Newton step on c with the exact residual c³ − a, its
    // derivative 3c² ≈ 3/t².
    let t2 = t * t;
    let c = (a * t) * t;
    let c2 = c * c;
    let res = fmaf(fmaf(c, c, -c2), c, fmaf(c2, c, -a));
    let c = fmaf(-res * (1.0 / 3.0), t2, c);
    let c = if sub {
        c * f32::from_bits(0x3380_0000)
    } else {
        c
    }; // 2^-24, exact
    if x == 0.0 || !x.is_finite() {
        x + x
    } else {
        c.copysign(x)
    }
}

/// `1/∛x` (CUDA `rcbrtf`, bound 1 ulp): ±∞ for ±0, ±0 for ±∞. Every target.
#[inline]
pub fn rcbrtf(x: f32) -> f32 {
    let (a, t, sub) = rcbrt_rough(x);
    // One more Newton step on t, the residual 1 − a·t³ from a·t² as head and tails.
    let p = a * t;
    let pl = fmaf(a, t, -p);
    let p2 = p * t;
    let p2l = fmaf(p, t, -p2);
    let res = fmaf(-fmaf(pl, t, p2l), t, fmaf(-p2, t, 1.0));
    let t = fmaf(t * (1.0 / 3.0), res, t);
    let t = if sub { t * 16_777_216.0 } else { t }; // 2^24, exact
    if x == 0.0 {
        f32::INFINITY.copysign(x)
    } else if x.is_nan() {
        x
    } else if x.is_infinite() {
        0.0f32.copysign(x)
    } else {
        t.copysign(x)
    }
}

/// `√(x² + y²)` without undue overflow or underflow (CUDA `hypotf`, bound 3 ulp): +∞
/// if either is ±∞, even with a NaN. Every target.
#[inline]
pub fn hypotf(x: f32, y: f32) -> f32 {
    let (ax, ay) = (x.abs(), y.abs());
    if ax == f32::INFINITY || ay == f32::INFINITY {
        return f32::INFINITY;
    }
    if ax.is_nan() || ay.is_nan() {
        return x + y;
    }
    let (a, b) = if ax >= ay { (ax, ay) } else { (ay, ax) };
    if a == 0.0 {
        return 0.0;
    }
    if a > 8.673_617e-19 && a < 1.152_921_5e18 {
        // 2^-60 < a < 2^60: no scaling (a² stays normal, b² below 2^-126 does not
        // matter beside it).
        let (p, pl) = (a * a, fmaf(a, a, -(a * a)));
        let (q, ql) = (b * b, fmaf(b, b, -(b * b)));
        return p_sqrt(p + (q + (pl + ql)));
    }
    // Scale a to [1, 2) exactly (b by the same power of two).
    let k = ilogbf(a);
    let (a, b) = (ldexpf(a, -k), ldexpf(b, -k));
    let (p, pl) = (a * a, fmaf(a, a, -(a * a)));
    let (q, ql) = (b * b, fmaf(b, b, -(b * b)));
    let s = p + (q + (pl + ql));
    let r = p_sqrt(s);
    ldexpf(r, k)
}

/// `1/√(x² + y²)` (CUDA `rhypotf`, bound 2 ulp). Every target.
#[inline]
pub fn rhypotf(x: f32, y: f32) -> f32 {
    1.0 / hypotf(x, y)
}

/// `√(a² + b² + c²)` (CUDA `norm3df`, bound 3 ulp). Every target.
#[inline]
pub fn norm3df(a: f32, b: f32, c: f32) -> f32 {
    norm_core(&[a, b, c])
}

/// `1/√(a² + b² + c²)` (CUDA `rnorm3df`, bound 2 ulp). Every target.
#[inline]
pub fn rnorm3df(a: f32, b: f32, c: f32) -> f32 {
    1.0 / norm_core(&[a, b, c])
}

/// `√(a² + b² + c² + d²)` (CUDA `norm4df`, bound 3 ulp). Every target.
#[inline]
pub fn norm4df(a: f32, b: f32, c: f32, d: f32) -> f32 {
    norm_core(&[a, b, c, d])
}

/// `1/√(a² + b² + c² + d²)` (CUDA `rnorm4df`, bound 2 ulp). Every target.
#[inline]
pub fn rnorm4df(a: f32, b: f32, c: f32, d: f32) -> f32 {
    1.0 / norm_core(&[a, b, c, d])
}

/// The Euclidean norm of up to four values, scaled by the largest exponent.
#[inline(always)]
fn norm_core<const N: usize>(v: &[f32; N]) -> f32 {
    let mut big = 0.0f32;
    let mut nan = false;
    for &x in v {
        if x.is_infinite() {
            return f32::INFINITY;
        }
        nan |= x.is_nan();
        big = big.max(x.abs());
    }
    if nan {
        return f32::NAN;
    }
    if big == 0.0 {
        return 0.0;
    }
    let k = ilogbf(big);
    let mut s = 0.0f32;
    let mut sl = 0.0f32;
    for &x in v {
        let a = ldexpf(x.abs(), -k);
        let p = a * a;
        sl += fmaf(a, a, -p);
        s += p;
    }
    ldexpf(p_sqrt(s + sl), k)
}

// ---------------------------------------------------------------------------------
// Trigonometric functions.

/// `sin x`, `x` in radians (CUDA `sinf`, bound 2 ulp), with the exact reduction of
/// every finite `x` (Payne–Hanek above 2^17). Every target.
#[inline]
pub fn sinf(x: f32) -> f32 {
    if !x.is_finite() {
        return x - x;
    }
    if x.abs() < TINY_TRIG {
        return x;
    }
    // Both kernels, then a select: cheaper than a branch that diverges by quadrant.
    let (q, rh, rl) = reduce_pio2(x);
    let (s, c) = (sin_kernel(rh, rl), cos_kernel(rh, rl));
    let v = if q & 1 != 0 { c } else { s };
    if q & 2 != 0 {
        -v
    } else {
        v
    }
}

/// `cos x`, `x` in radians (CUDA `cosf`, bound 2 ulp). Every target.
#[inline]
pub fn cosf(x: f32) -> f32 {
    if !x.is_finite() {
        return x - x;
    }
    let (q, rh, rl) = reduce_pio2(x);
    let (s, c) = (sin_kernel(rh, rl), cos_kernel(rh, rl));
    let v = if q & 1 != 0 { s } else { c };
    if (q + 1) & 2 != 0 {
        -v
    } else {
        v
    }
}

/// `(sin x, cos x)` from one argument reduction (CUDA `sincosf`, bound 2 ulp each).
/// Every target.
#[inline]
pub fn sincosf(x: f32) -> (f32, f32) {
    sincos_core(x)
}

/// `tan x`, `x` in radians (CUDA `tanf`, bound 4 ulp). Every target.
#[inline]
pub fn tanf(x: f32) -> f32 {
    if !x.is_finite() {
        return x - x;
    }
    if x.abs() < TINY_TRIG {
        return x;
    }
    let (q, rh, rl) = reduce_pio2(x);
    let r2 = rh * rh;
    let t = rh + fmaf(r2 * rh, poly(r2, &TAN_Q), rl * (1.0 + r2));
    if q & 1 != 0 {
        -1.0 / t
    } else {
        t
    }
}

/// `sin(πx)`, exact reduction for every `x` (CUDA `sinpif`, bound 1 ulp); odd, so
/// `sinpif(-0) = -0`, and +0 at positive integers. Every target.
#[inline]
pub fn sinpif(x: f32) -> f32 {
    sincospif(x).0
}

/// `cos(πx)` (CUDA `cospif`, bound 1 ulp); +0 at half-integers, ±1 at integers. Every
/// target.
#[inline]
pub fn cospif(x: f32) -> f32 {
    sincospif(x).1
}

/// `(sin πx, cos πx)` (CUDA `sincospif`, bound 1 ulp each). Every target.
#[inline]
pub fn sincospif(x: f32) -> (f32, f32) {
    if !x.is_finite() {
        return (x - x, x - x);
    }
    if x.abs() >= 8_388_608.0 {
        // |x| >= 2^23: an integer, odd only below 2^24.
        let odd = x.abs() < 16_777_216.0 && (x as i32) & 1 != 0;
        return (0.0f32.copysign(x), if odd { -1.0 } else { 1.0 });
    }
    if x == 0.0 {
        return (x, 1.0);
    }
    if x.abs() < 1.0e-30 {
        // πx rounded once, scaled out of the subnormal range and back.
        let y = x * f32::from_bits(0x5f80_0000); // 2^64
        let ph = y * PI;
        let pl = fmaf(y, PI, -ph) + y * PI_LO;
        return ((ph + pl) * f32::from_bits(0x1f80_0000), 1.0);
    }
    // x = n/2 + r exactly, |r| <= 1/4.
    let n = p_rint(x + x);
    let r = fmaf(n, -0.5, x);
    let q = (n as i32) & 3;
    let r2 = r * r;
    // sin(πr) = πr + r³q(r²), πr as head and tail.
    let ph = r * PI;
    let pl = fmaf(r, PI, -ph) + r * PI_LO;
    let s = ph + fmaf(r2 * r, poly(r2, &SINPI_Q), pl);
    let c = fmaf(r2, poly(r2, &COSPI_Q), 1.0);
    let (s, c) = if q & 1 != 0 { (c, -s) } else { (s, c) };
    let (s, c) = if q & 2 != 0 { (-s, -c) } else { (s, c) };
    // Exact zeros: sin at integers takes the sign of x, cos at half-integers is +0.
    let s = if s == 0.0 { 0.0f32.copysign(x) } else { s };
    let c = if c == 0.0 { 0.0 } else { c };
    (s, c)
}

/// `atan x` in [-π/2, π/2] (CUDA `atanf`, bound 2 ulp). Every target.
#[inline]
pub fn atanf(x: f32) -> f32 {
    // One reduced argument and one polynomial for both halves (selects, no branch).
    let t = x.abs();
    let big = t > 1.0;
    let u = if big { 1.0 / t } else { t };
    let tail = atan_tail(u);
    let v = if big {
        sub_from(PIO2, PIO2_LO, u, tail)
    } else {
        u + tail
    };
    v.copysign(x)
}

/// `atan(y/x)` in [-π, π], the quadrant from both signs (CUDA `atan2f`, bound 3 ulp),
/// with C99's special cases for zeros and infinities. Every target.
#[inline]
pub fn atan2f(y: f32, x: f32) -> f32 {
    if x.is_nan() || y.is_nan() {
        return x + y;
    }
    let (ax, ay) = (x.abs(), y.abs());
    let v = if ax == f32::INFINITY || ay == f32::INFINITY {
        // atan2(±∞, x), atan2(y, ±∞).
        match (ax == f32::INFINITY, ay == f32::INFINITY) {
            (true, true) => {
                if x > 0.0 {
                    PI / 4.0
                } else {
                    3.0 * PI / 4.0
                }
            }
            (true, false) => {
                if x > 0.0 {
                    0.0
                } else {
                    PI
                }
            }
            _ => PIO2,
        }
    } else if ay == 0.0 {
        if x.is_sign_negative() {
            PI
        } else {
            0.0
        }
    } else if ax == 0.0 {
        PIO2
    } else {
        let (num, den) = if ay > ax { (ax, ay) } else { (ay, ax) };
        let u = num / den;
        let tail = atan_tail(u);
        // a = ah + al = atan(ay/ax) in [0, π/2].
        let (ah, al) = if ay > ax {
            let (h, e) = fast_two_sum(PIO2, -u);
            fast_two_sum(h, (e + PIO2_LO) - tail)
        } else {
            (u, tail)
        };
        if x < 0.0 {
            sub_from(PI, PI_LO, ah, al)
        } else {
            ah + al
        }
    };
    v.copysign(y)
}

/// `asin x` in [-π/2, π/2] (CUDA `asinf`, bound 2 ulp); NaN outside [-1, 1]. Every
/// target.
#[inline]
pub fn asinf(x: f32) -> f32 {
    let t = x.abs();
    let (small, s, sl, tail) = asin_parts(t);
    let v = if small {
        t + tail
    } else {
        // asin t = π/2 − 2 asin √((1 − t)/2).
        sub_from(PIO2, PIO2_LO, 2.0 * s, 2.0 * (tail + sl))
    };
    if t > 1.0 {
        return f32::NAN;
    }
    v.copysign(x)
}

/// The shared part of [`asinf`] and [`acosf`] for `t = |x|`, with selects instead of
/// branches (the two halves diverge inside a warp): whether `t <= 1/2`; the argument
/// `s` of `asin` (`t`, or `√((1 − t)/2)` as `s + sl`); and `asin(s) − s`.
#[inline(always)]
fn asin_parts(t: f32) -> (bool, f32, f32, f32) {
    let small = t <= 0.5;
    let z = if small { t * t } else { 0.5 * (1.0 - t) }; // exact in the second case
    let root = p_sqrt(z);
    let s = if small { t } else { root };
    let sl = if small { 0.0 } else { sqrt_tail(root, z) };
    (small, s, sl, s * z * poly(z, &ASIN_Q))
}

/// `acos x` in [0, π] (CUDA `acosf`, bound 2 ulp); NaN outside [-1, 1]. Every target.
#[inline]
pub fn acosf(x: f32) -> f32 {
    let t = x.abs();
    let (small, s, sl, tail) = asin_parts(t);
    let v = if small {
        // π/2 − asin x, the sign of x on s and its tail.
        sub_from(PIO2, PIO2_LO, s.copysign(x), tail.copysign(x))
    } else {
        let tail = 2.0 * (tail + sl);
        if x > 0.0 {
            2.0 * s + tail
        } else {
            sub_from(PI, PI_LO, 2.0 * s, tail)
        }
    };
    if t > 1.0 {
        return f32::NAN;
    }
    v
}

// ---------------------------------------------------------------------------------
// Hyperbolic functions.

/// `sinh x` (CUDA `sinhf`, bound 3 ulp). Every target.
#[inline]
pub fn sinhf(x: f32) -> f32 {
    let t = x.abs();
    let v = if t < 1.0 {
        let u = t * t;
        fmaf(u * t, poly(u, &SINH_Q), t)
    } else {
        // e^t/2 − e^−t/2 = h − 1/(4h), h = e^t/2 (finite up to where sinh is).
        let h = half_exp(t);
        h - 0.25 / h
    };
    v.copysign(x)
}

/// `cosh x` (CUDA `coshf`, bound 2 ulp). Every target.
#[inline]
pub fn coshf(x: f32) -> f32 {
    let h = half_exp(x.abs());
    h + 0.25 / h
}

/// `e^t / 2` for `t >= 0`, without overflowing before the result does.
#[inline(always)]
fn half_exp(t: f32) -> f32 {
    let t = if t > 90.0 { 90.0 } else { t }; // NaN passes
    let (k, rh, rl) = reduce_ln2(t);
    scale_1p(k - 1, expm1_kernel(rh, rl))
}

/// `tanh x` (CUDA `tanhf`, bound 2 ulp). Every target.
///
/// One path for every `x` (no branch to diverge on): `tanh t = −M/(2 + M)`, `M =
/// expm1(−2t)` in (−1, 0] as head and tail, so that both the relative accuracy near 0
/// and `1 − tanh t` for large `t` hold; the quotient from an FMA reciprocal of the
/// head of `2 + M` (in [1, 2]) and one correction with the exact residual.
#[inline]
pub fn tanhf(x: f32) -> f32 {
    let t = x.abs();
    let t = if t > 9.1 { 9.1 } else { t }; // tanh rounds to 1 from 9.01 on; NaN passes
    let (k, rh, rl) = reduce_ln2(-2.0 * t); // k in -26..=0
    let tail = expm1_tail(rh, rl);
    // M = (p − 1) + p·rh + p·tail, p = 2^k: p − 1 is exact down to k = −24, below
    // which it is −1 and p goes to the tail.
    let p = pow2i(k);
    let c = p - 1.0;
    let cl = p - (c + 1.0);
    let (h, e) = fast_two_sum(c, p * rh);
    let (h, e2) = fast_two_sum(h, p * tail); // |h| >= |p·tail| (or both 0)
    let ml = (e + cl) + e2;
    let (dh, de) = fast_two_sum(2.0, h);
    let dl = de + ml;
    let r = recip_1_2(dh);
    let q0 = -h * r;
    let rho = -(fmaf(q0, dh, h) + fmaf(q0, dl, ml));
    let v = fmaf(rho, r, q0);
    if x.is_nan() {
        x
    } else {
        v.copysign(x)
    }
}

/// `asinh x` (CUDA `asinhf`, bound 3 ulp). Every target.
#[inline]
pub fn asinhf(x: f32) -> f32 {
    let t = x.abs();
    let v = if t > 4096.0 {
        if t == f32::INFINITY {
            t
        } else {
            logf(t) + LN2
        }
    } else {
        // log1p(t + t²/(1 + √(1 + t²))).
        let t2 = t * t;
        log1pf(t + t2 / (1.0 + p_sqrt(1.0 + t2)))
    };
    v.copysign(x)
}

/// `acosh x` for `x >= 1` (CUDA `acoshf`, bound 4 ulp); NaN below 1. Every target.
#[inline]
pub fn acoshf(x: f32) -> f32 {
    if !(x >= 1.0) {
        return f32::NAN;
    }
    if x > 4096.0 {
        return if x == f32::INFINITY { x } else { logf(x) + LN2 };
    }
    let t = x - 1.0; // exact
    log1pf(t + p_sqrt(fmaf(t, t, 2.0 * t)))
}

/// `atanh x` for `|x| <= 1` (CUDA `atanhf`, bound 3 ulp): ±∞ at ±1, NaN beyond.
/// Every target.
#[inline]
pub fn atanhf(x: f32) -> f32 {
    let t = x.abs();
    if !(t <= 1.0) {
        return f32::NAN;
    }
    // atanh t = log1p(2t/(1 − t))/2.
    let v = 0.5 * log1pf((t + t) / (1.0 - t));
    v.copysign(x)
}

// ---------------------------------------------------------------------------------
// Error functions.

/// `erf x` for `|x| <= 0.75`.
#[inline(always)]
fn erf_small(x: f32) -> f32 {
    let u = x * x;
    let tail = fmaf(u, poly(u, &ERF_Q), TWO_OVER_SQRT_PI_LO);
    fmaf(x, TWO_OVER_SQRT_PI, x * tail)
}

/// `erfc t` for `t >= 0.75`: `e^(-t²)·g`, `g` a polynomial in `t` below 2 and `w·h(w)`,
/// `w = 1/t`, above, with `e^(-t²)` from `t²` as
/// head and tail and scaled by 2^64 until the last multiply, so a subnormal result
/// is rounded once.
#[inline(always)]
fn erfc_large(t: f32) -> f32 {
    erfc_large_dd(t, 0.0)
}

/// `erfc(t + tl)` for `t >= 0.75` and a tail `|tl| <= 2^-23 t`: [`erfc_large`] with
/// the tail carried into `e^(−t²)` (where the result is sensitive to it: a relative
/// error of `2t·|tl|`) and left out of the slowly varying polynomial.
#[inline(always)]
fn erfc_large_dd(t: f32, tl: f32) -> f32 {
    // Both polynomials and a select (the two sides diverge inside a warp), `1/t`
    // from FMAs; `t` held to 10.2, where the result is 0.
    let big = t > 10.1; // below half the smallest subnormal
    let t = t.min(10.2);
    let h = erfc_scaled(t);
    // −t² = −th − tl exactly; reduced with tl inside the head, not left in the tail.
    let th = t * t;
    let tl = if tl == 0.0 {
        fmaf(t, t, -th) // folded away for erfc_large's literal 0
    } else {
        fmaf(t, t, -th) + 2.0 * t * tl
    };
    let (kf, k) = round_magic(-th * INV_LN2);
    let r1 = fmaf(-kf, LN2, -th); // exact
    let (s, e) = fast_two_sum(r1, -tl);
    let rh = fmaf(-kf, LN2_LO, s);
    let rl = fmaf(-kf, LN2_LO, s - rh) + e;
    let em = expm1_kernel(rh, rl);
    let v = scale_1p(k + 64, em) * h;
    if big {
        0.0
    } else {
        v * f32::from_bits(0x1f80_0000) // 2^-64
    }
}

/// `e^(t²)·erfc(t)` for `0.75 <= t <= 10.2`: `g(t − 11/8)` below 2, `w·h(w)` (`w = 1/t`)
/// above; both evaluated and one selected (the sides diverge inside a warp).
#[inline(always)]
fn erfc_scaled(t: f32) -> f32 {
    let v = t - 1.375; // exact
    let near = fmaf(v, poly_from1(v, &ERFC_NEAR), ERFC_NEAR_LO) + ERFC_NEAR[0];
    let w = recip_rough(t);
    let w = fmaf(w, fmaf(-t, w, 1.0), w); // 1/t to within an ulp
    let far = w * poly(w, &ERFC_FAR);
    if t < 2.0 {
        near
    } else {
        far
    }
}

/// `e^(xh + xl)` for `xh` in [−104, 89] and `|xl| <= ulp(xh)`; overflows to +∞.
#[inline(always)]
fn exp_dd(xh: f32, xl: f32) -> f32 {
    exp_dd_times(xh, xl, 1.0)
}

/// `e^(xh + xl) · m` (`xh` in [−140, 89], `|xl| <= ulp(xh)`, `m` normal): `2^k` applied in two
/// halves around the product, so a subnormal result is rounded once and an overflow
/// is a true one.
#[inline(always)]
fn exp_dd_times(xh: f32, xl: f32, m: f32) -> f32 {
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

/// `1/√π` as head and tail.
const FRAC_1_SQRT_PI: f32 = 0.564_189_6;
const FRAC_1_SQRT_PI_LO: f32 = -2.931_769_2e-8;

/// The scaled complementary error function `erfcx(x) = e^(x²)·erfc(x)` (CUDA `erfcxf`,
/// bound 4 ulp): 1 at 0, about `1/(x√π)` for large `x` (no overflow or underflow
/// where the true value is representable), `+∞` at `−∞` and below about −9.38, `+0`
/// at `+∞`. Every target. Source: CUDA Math API `erfcxf`.
#[inline]
pub fn erfcxf(x: f32) -> f32 {
    let t = x.abs();
    // t >= 0.75: the scaled polynomials of erfc, or the asymptotic series
    // (1/(t√π))·(1 − w²/2 + 3w⁴/4 − 15w⁶/8 + 105w⁸/16 − 945w¹⁰/32), w = 1/t, beyond
    // the fit (its next term is below 2^-32 from t = 10.1 on).
    let w2 = {
        let w = 1.0 / t.max(10.1);
        w * w
    };
    let series = fmaf(
        w2,
        fmaf(
            w2,
            fmaf(w2, fmaf(w2, fmaf(w2, -29.531_25, 6.5625), -1.875), 0.75),
            -0.5,
        ),
        1.0,
    );
    let q = series / t;
    let asymptotic = fmaf(q, FRAC_1_SQRT_PI, q * FRAC_1_SQRT_PI_LO);
    let large = if t > 10.1 {
        asymptotic
    } else {
        erfc_scaled(t.max(0.75))
    };
    if x >= 0.75 {
        return large;
    }
    // e^(x²) from x² as head and tail; +∞ once x² passes ln(f32::MAX).
    let sq = x * x;
    let (eh, el) = if sq > 89.0 {
        (89.0, 0.0)
    } else {
        (sq, fmaf(x, x, -sq)) // NaN stays NaN
    };
    let e = exp_dd(eh, el);
    if t < 0.75 {
        e * (1.0 - erf_small(x))
    } else {
        // erfc(x) = 2 − erfc(|x|) for x < 0 (NaN ends here too).
        fmaf(2.0, e, -large)
    }
}

/// The error function `erf x = 2/√π ∫₀ˣ e^(−t²) dt` (CUDA `erff`, bound 2 ulp): odd,
/// ±1 at ±∞. Every target.
#[inline]
pub fn erff(x: f32) -> f32 {
    // Both sides and a select (they diverge inside a warp); erf rounds to ±1 from
    // 3.92 on, so t is held to 4.
    let t = x.abs();
    let large = (1.0 - erfc_large(t.min(4.0))).copysign(x);
    if t <= 0.75 || x.is_nan() {
        erf_small(x).copysign(x) // erf(−0) = −0: the tail term would round it to +0
    } else {
        large
    }
}

/// The complementary error function `1 − erf x` (CUDA `erfcf`, bound 4 ulp), accurate
/// where it is small: 2 at −∞, +0 at +∞ and for `x` above about 10.05. Every target.
#[inline]
pub fn erfcf(x: f32) -> f32 {
    // Both sides and a select (they diverge inside a warp).
    let t = x.abs();
    let c = erfc_large(t);
    let large = if x < 0.0 { 2.0 - c } else { c };
    if t <= 0.75 || x.is_nan() {
        1.0 - erf_small(x)
    } else {
        large
    }
}

/// The standard normal cumulative distribution function `Φ(x) = erfc(−x/√2)/2` (CUDA
/// `normcdff`, bound 5 ulp), with `−x/√2` carried as head and tail so that the
/// lower tail keeps its relative accuracy: `Φ(−10)` is 7.6e-24, not rounding noise.
/// 0 at −∞, 1 at +∞. Every target.
#[inline]
pub fn normcdff(x: f32) -> f32 {
    let th = -x * FRAC_1_SQRT_2;
    let tl = fmaf(-x, FRAC_1_SQRT_2, -th) - x * FRAC_1_SQRT_2_LO;
    let t = th.abs();
    if t <= 0.75 {
        // erfc(th + tl) = 1 − erf(th) − tl·2/√π·(1 − th² …).
        return 0.5 * (1.0 - fmaf(tl, TWO_OVER_SQRT_PI, erf_small(th)));
    }
    if x.is_nan() {
        return x;
    }
    let c = erfc_large_dd(t, if th < 0.0 { -tl } else { tl });
    0.5 * if th < 0.0 { 2.0 - c } else { c }
}

// ---------------------------------------------------------------------------------
// Inverse error functions.

/// `erfinv(x + xl)` for `0 <= x < 1`, `|xl| <= ulp(x)`, given `u = 1 − (x + xl)²` to
/// within an ulp: `(x + xl)·P(w)` for `w = −ln u < 5` (two pieces), else `T(√w − c)` (Giles'
/// variables, our own fits: `math/remez.py ERFINV_A ERFINV_B ERFINV_TAIL ERFCINV_FAR`).
/// `u` down to the least subnormal (`w` to 103.3, `√w` to 10.17).
#[inline(always)]
fn erfinv_core(x: f32, xl: f32, u: f32) -> f32 {
    let w = -logf(u);
    if w < 5.0 {
        // P = c0 + v·Q(v) as head and tail, rounded once with the product by x.
        let (v, c, c_lo, q) = if w < 2.0 {
            let v = w - 1.0;
            (v, ERFINV_A[0], ERFINV_A_LO, poly_from1(v, &ERFINV_A))
        } else {
            let v = w - 3.5;
            (v, ERFINV_B[0], ERFINV_B_LO, poly_from1(v, &ERFINV_B))
        };
        let vq = v * q;
        let (p, e) = fast_two_sum(c, vq);
        let p_lo = e + fmaf(v, q, -vq) + c_lo;
        fmaf(p, x, fmaf(p_lo, x, p * xl))
    } else {
        let s = p_sqrt(w);
        if s < 4.0 {
            poly(s - 3.125, &ERFINV_TAIL)
        } else {
            poly(s - 7.125, &ERFCINV_FAR)
        }
    }
}

/// The inverse error function: `y` with `erf y = x` (CUDA `erfinvf`, bound 2 ulp).
/// `erfinvf(±1) = ±∞`, `erfinvf(±0) = ±0`, NaN for `|x| > 1` and NaN. Every target.
/// Source: CUDA Math API `erfinvf`; the variables of Giles, "Approximating the erfinv
/// function" (GPU Computing Gems, 2011).
#[inline]
pub fn erfinvf(x: f32) -> f32 {
    let a = x.abs();
    if !(a < 1.0) {
        return if a == 1.0 {
            f32::INFINITY.copysign(x)
        } else {
            f32::NAN
        };
    }
    let u = if a < 0.5 {
        fmaf(-a, a, 1.0)
    } else {
        // (1 − a)(1 + a): 1 − a is exact, 1 + a = b + e exactly.
        let (b, e) = fast_two_sum(1.0, a);
        let d = 1.0 - a;
        fmaf(d, b, d * e)
    };
    erfinv_core(a, 0.0, u).copysign(x)
}

/// The inverse complementary error function: `x` with `erfc x = y` (CUDA `erfcinvf`,
/// bound 4 ulp), accurate for tiny `y`, subnormals included (`erfcinvf` of the least
/// subnormal is 10.02). `erfcinvf(0) = +∞`, `erfcinvf(2) = −∞`, NaN outside `[0, 2]` and for NaN.
/// Every target. Source: CUDA Math API `erfcinvf`.
#[inline]
pub fn erfcinvf(y: f32) -> f32 {
    if !(y > 0.0 && y < 2.0) {
        return if y == 0.0 {
            f32::INFINITY
        } else if y == 2.0 {
            f32::NEG_INFINITY
        } else {
            f32::NAN
        };
    }
    // erfcinv(y) = −erfcinv(2 − y), 2 − y exact for y ≥ 1: take y ≤ 1.
    let upper = y > 1.0;
    let y = if upper { 2.0 - y } else { y };
    // erfcinv(y) = erfinv(1 − y): 1 − y = x + xl and 1 − x² = y·(2 − y) exactly as
    // far as the last multiply.
    let (x, xl) = fast_two_sum(1.0, -y);
    let (b, e) = fast_two_sum(2.0, -y);
    let r = erfinv_core(x, xl, fmaf(y, b, y * e));
    if upper {
        -r
    } else {
        r
    }
}

/// The inverse of the standard normal cumulative distribution function: `x` with
/// `Φ(x) = p`, as `−√2·erfcinv(2p)` (CUDA `normcdfinvf`, bound 5 ulp). Accurate in the
/// lower tail (`normcdfinvf(1e-40)` is −13.3). `normcdfinvf(0) = −∞`,
/// `normcdfinvf(1) = +∞`, NaN outside `[0, 1]` and for NaN. Every target. Source:
/// CUDA Math API `normcdfinvf`.
#[inline]
pub fn normcdfinvf(p: f32) -> f32 {
    let r = erfcinvf(p + p);
    // + 0: Φ⁻¹(1/2) is +0, not the −0 the negation gives.
    fmaf(-r, SQRT_2, -r * SQRT_2_LO) + 0.0
}

// ---------------------------------------------------------------------------------
// Modified Bessel functions of the first kind.

// remez.py BESSEL_I0_SMALL: degree 9 on [0, 60.07], weighted error 7.835e-9 (2^-26.93)
const BESSEL_I0_SMALL: [f32; 10] = [
    0.25,
    0.015625,
    0.00043402769370004535,
    6.781717274861876e-06,
    6.781179706649709e-08,
    4.713432422143171e-10,
    2.3853130842049763e-12,
    9.8464005639275e-15,
    2.1952197206326304e-17,
    1.2795367382368392e-19,
];
// remez.py BESSEL_I1_SMALL: degree 9 on [0, 60.07], weighted error 1.706e-10 (2^-32.45)
const BESSEL_I1_SMALL: [f32; 10] = [
    0.125,
    0.0052083334885537624,
    0.00010850685794139281,
    1.356354346171429e-06,
    1.1301028557397785e-08,
    6.73809411044779e-11,
    2.9681511697250695e-13,
    1.117092991222981e-15,
    1.983230038683663e-18,
    1.2439495865154753e-20,
];
// remez.py BESSEL_I0_LARGE: degree 7 on [0, 0.12904], weighted error 3.523e-10 (2^-31.4)
const BESSEL_I0_LARGE: [f32; 8] = [
    0.3989422917366028,
    0.04986775666475296,
    0.028051231056451797,
    0.02934681437909603,
    0.0371938981115818,
    0.25690916180610657,
    -1.446000099182129,
    7.4846014976501465,
];
const BESSEL_I0_LARGE_LO: f32 = -1.1259656318429734e-08;
// remez.py BESSEL_I1_LARGE: degree 7 on [0, 0.12904], weighted error 1.397e-9 (2^-29.41)
const BESSEL_I1_LARGE: [f32; 8] = [
    0.3989422917366028,
    -0.14960333704948425,
    -0.04675035923719406,
    -0.04111931473016739,
    -0.047426484525203705,
    -0.31658127903938293,
    1.7175471782684326,
    -8.647225379943848,
];
const BESSEL_I1_LARGE_LO: f32 = -1.1414783784857718e-08;

/// `e^a/√a · (c0 + c0_lo + w·Q(w))`, `w = 1/a`, for `a` held to [7.75, 92] (above 92
/// both functions overflow).
#[inline(always)]
fn bessel_i_large(a: f32, c: &[f32; 8], c0_lo: f32) -> f32 {
    let a = a.clamp(7.75, 92.0);
    let w = 1.0 / a;
    let h = fmaf(w, poly_from1(w, c), c0_lo) + c[0];
    exp_dd_times(a, 0.0, h * rsqrtf(a))
}

/// The modified Bessel function of the first kind of order 0, `I₀(x)` (CUDA
/// `cyl_bessel_i0f`, bound 6 ulp): even, 1 at 0, `+∞` at ±∞ and for `|x|` above about
/// 91.9 (overflow). Every target. Source: CUDA Math API `cyl_bessel_i0f`.
#[inline]
pub fn cyl_bessel_i0f(x: f32) -> f32 {
    // 1 + t·P(t), t = x², up to 7.75; e^x/√x·H(1/x) above. Both, then a select.
    let a = x.abs();
    let t = a * a;
    let small = fmaf(t, poly(t, &BESSEL_I0_SMALL), 1.0);
    let large = bessel_i_large(a, &BESSEL_I0_LARGE, BESSEL_I0_LARGE_LO);
    if a <= 7.75 || x.is_nan() {
        small
    } else {
        large
    }
}

/// The modified Bessel function of the first kind of order 1, `I₁(x)` (CUDA
/// `cyl_bessel_i1f`, bound 6 ulp): odd, `±∞` at ±∞ and for `|x|` above about 91.9.
/// Every target. Source: CUDA Math API `cyl_bessel_i1f`.
#[inline]
pub fn cyl_bessel_i1f(x: f32) -> f32 {
    // (x/2)(1 + t·P(t)), t = x², up to 7.75; e^x/√x·H(1/x) above.
    let a = x.abs();
    let t = a * a;
    let small = (0.5 * a) * fmaf(t, poly(t, &BESSEL_I1_SMALL), 1.0);
    let large = bessel_i_large(a, &BESSEL_I1_LARGE, BESSEL_I1_LARGE_LO);
    let r = if a <= 7.75 || x.is_nan() {
        small
    } else {
        large
    };
    r.copysign(x)
}

// ---------------------------------------------------------------------------------
// Gamma functions.

// remez.py GAMMA_Q: degree 9 on [-0.501, 1.001], weighted error 4.003e-9 (2^-27.9)
const GAMMA_Q: [f32; 10] = [
    -0.5772156715393066,
    0.07866240292787552,
    0.1206650584936142,
    -0.04587353393435478,
    -0.00367606314830482,
    0.005945975426584482,
    -0.0012714354088529944,
    -0.00010807213402586058,
    0.00010483100777491927,
    -1.7831673176260665e-05,
];
const GAMMA_Q_LO: f32 = 6.507374195052762e-09;
// remez.py LGAMMA_S: degree 2 on [0, 0.015626], weighted error 2.98e-8 (2^-25.0)
const LGAMMA_S: [f32; 3] = [
    0.0833333358168602,
    -0.002778977621346712,
    0.0008613233803771436,
];

/// `ln√(2π)` and `ln π` as head and tail.
const LN_SQRT_2PI: f32 = 0.918_938_5;
const LN_SQRT_2PI_LO: f32 = 1.563_417_7e-8;
const LN_PI: f32 = 1.144_729_9;
const LN_PI_LO: f32 = 3.317_300_9e-8;

/// `1/Γ(1 + v) − 1 = v(v − 1)·Q(v)` for `v` in [−0.5, 1]; also `Q(v)`.
#[inline(always)]
fn rgamma_m1f(v: f32) -> (f32, f32) {
    let q = fmaf(v, poly_from1(v, &GAMMA_Q), GAMMA_Q_LO) + GAMMA_Q[0];
    (v * (v - 1.0) * q, q)
}

/// `ln x` as head and tail for finite `x > 0` (to about 2^-40 relative).
#[inline(always)]
fn ln_df(x: f32) -> (f32, f32) {
    let (e, lh, ll) = log_poly(x);
    let (s, err) = fast_two_sum(e * LN2_HI, lh);
    (s, err + fmaf(e, LN2_HI_LO, ll))
}

/// `ln Γ(x)` for `x ≥ 8` by Stirling's series, as head and tail; `None` on overflow.
#[inline(always)]
fn stirling_df(x: f32) -> Option<(f32, f32)> {
    let (lh, ll) = ln_df(x);
    let xm = x - 0.5;
    let ph = xm * lh;
    if !(ph < f32::INFINITY) {
        return None;
    }
    let pe = fmaf(xm, lh, -ph);
    let w = 1.0 / x;
    let tail = w * poly(w * w, &LGAMMA_S);
    // (x − ½) ln x > x + 7 from x = 8 on: the sums below are ordered.
    let (s1, e1) = fast_two_sum(ph, -x);
    let (s2, e2) = fast_two_sum(s1, LN_SQRT_2PI);
    let lo = fmaf(xm, ll, pe) + (e1 + e2) + (LN_SQRT_2PI_LO + tail);
    Some(fast_two_sum(s2, lo))
}

/// `m·y·(y + 1)·…·(y + n − 1)` (each factor exact) as head and tail.
#[inline(always)]
fn rising_df(y: f32, n: u32, m: f32) -> (f32, f32) {
    let (mut ph, mut pl) = (m, 0.0);
    let mut k = 0;
    while k < n {
        let c = y + k as f32;
        let p = ph * c;
        pl = fmaf(ph, c, -p) + pl * c;
        ph = p;
        k += 1;
    }
    (ph, pl)
}

/// `a + b` as head and exact tail, any order of magnitude.
#[inline(always)]
fn two_sum(a: f32, b: f32) -> (f32, f32) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// `ln|Γ(x)|` for finite `x > −0.5`, `x ≠ 0`, as `lgamma_main` in `double.rs`: each
/// range writes the result as `m·ln(h + l) + s·log1p(a) + (c + c2 + cl)`, and one
/// logarithm and one `log1pf` serve them all.
#[inline(always)]
fn lgamma_mainf(x: f32) -> f32 {
    if x > 1e30 {
        // x(ln x − 1): the rest is below an ulp, and (x − ½)·ln x alone would
        // overflow before the result does.
        let (lh, ll) = ln_df(x);
        return fmaf(x, lh - 1.0, x * ll);
    }
    let (mut m, mut h, mut l) = (0.0f32, 1.0f32, 0.0f32);
    let (mut s, mut a) = (-1.0f32, 0.0f32);
    let (mut c, mut c2, mut cl) = (0.0f32, 0.0f32, 0.0f32);
    if x < 0.5 {
        // Γ(x) = Γ(1 + x)/x: −ln|x| − log1p(1/Γ(1 + x) − 1), for x < 0 too.
        m = -1.0;
        h = x.abs();
        a = rgamma_m1f(x).0;
    } else if x < 1.0 {
        // x·(1/Γ(1 + x)) − 1 = (x − 1)(1 + x²Q(x)): exact near the zero at 1.
        let (_, q) = rgamma_m1f(x);
        a = (x - 1.0) * fmaf(x * x, q, 1.0);
    } else if x < 2.0 {
        a = rgamma_m1f(x - 1.0).0; // lgammaf(1) = +0
    } else if x < 3.0 {
        // Γ(2 + v) − 1 = v(1 − (v − 1)Q)/(1 + w) as head and tail: exact near 2.
        let v = x - 2.0;
        let (w, q) = rgamma_m1f(v);
        let cv = fmaf(-(v - 1.0), q, 1.0);
        let nh = v * cv;
        let nl = fmaf(v, cv, -nh);
        let (dh, dl) = fast_two_sum(1.0, w);
        a = nh / dh;
        // The quotient's tail over (1 + a): a correction, so FMA reciprocals do (a
        // division for every lane of a warp would cost more than the rest).
        cl = (fmaf(-a, dh, nh) + (nl - a * dl)) * recip_rough(dh) * recip_rough(1.0 + a);
        s = 1.0;
    } else if x < 8.0 {
        // Γ(x) = (1 + v)·(2 + v)·…·(x − 1) / (1 + w), v = x − n − 2 in [0, 1).
        let n = x as u32 - 2;
        let v = x - (n + 2) as f32;
        (h, l) = rising_df(v + 2.0, n, 1.0 + v);
        m = 1.0;
        a = rgamma_m1f(v).0;
    } else {
        // Stirling: (x − ½) ln x − x + ln√(2π) + S(1/x²)/x.
        m = x - 0.5;
        h = x;
        s = 0.0;
        c = -x;
        c2 = LN_SQRT_2PI;
        let w = recip_rough(x);
        let w = fmaf(w, fmaf(-x, w, 1.0), w); // 1/x to within an ulp
        cl = LN_SQRT_2PI_LO + w * poly(w * w, &LGAMMA_S);
    }
    let (lh, lt) = ln_df(h);
    // ln(h + l) = ln h + l/h; l is nonzero only for the product (h ≥ 2).
    let ll = if l != 0.0 {
        fmaf(l, recip_rough(h), lt)
    } else {
        lt
    };
    let lp = log1pf(a);
    let ph = m * lh;
    let pe = fmaf(m, lh, -ph);
    let (s1, e1) = two_sum(ph, c);
    let (s2, e2) = two_sum(s1, c2);
    s2 + (((e1 + e2) + fmaf(m, ll, pe)) + fmaf(s, lp, cl))
}

/// `ln|Γ(x)|` (CUDA `lgammaf`, bound 6 ulp outside [−10.001, −2.264], larger inside,
/// where it has zeros): `+∞` at 0, at the negative integers (the poles), at ±∞ and
/// above about 4.08e36. Every target. Source: CUDA Math API `lgammaf`; C99 F.9.5.3.
#[inline]
pub fn lgammaf(x: f32) -> f32 {
    if !(x.abs() < f32::INFINITY) {
        return x * x; // NaN stays NaN, ±∞ gives +∞
    }
    if x == floorf(x) && x <= 0.0 {
        return f32::INFINITY; // ±0 and the negative integers
    }
    if x > -0.5 {
        return lgamma_mainf(x);
    }
    // Γ(x)·(−x)·Γ(−x) = π / sin(πx), with −x exact.
    let s = sinpif(x);
    let ph = (s * x).abs();
    let pl = fmaf(s, x, -(s * x)).copysign(s * x);
    let (lh, ll) = ln_df(ph);
    (LN_PI - lh) + ((LN_PI_LO - (ll + pl / ph)) - lgamma_mainf(-x))
}

/// `Γ(x)` for finite `x > 0` (+∞ on overflow).
#[inline(always)]
fn tgamma_posf(x: f32) -> f32 {
    if x < 1.0 {
        return (1.0 / x) / (1.0 + rgamma_m1f(x).0);
    }
    if x < 2.0 {
        return 1.0 / (1.0 + rgamma_m1f(x - 1.0).0);
    }
    if x < 10.0 {
        // y·(y + 1)·…·(x − 1) / (1 + w), y = x − n in [1, 2).
        let n = x as u32 - 1;
        let v = x - (n + 1) as f32;
        let (ph, pl) = rising_df(v + 1.0, n, 1.0);
        let d = 1.0 + rgamma_m1f(v).0;
        let r = ph / d;
        return r + (fmaf(-r, d, ph) + pl) / d;
    }
    match stirling_df(x) {
        Some((h, l)) if h < 89.0 => exp_dd(h, l),
        _ => f32::INFINITY,
    }
}

/// The gamma function `Γ(x)` (CUDA `tgammaf`, bound 5 ulp): `±∞` at ±0, NaN at the
/// negative integers and −∞, `+∞` at +∞ and above about 35.04; tiny (down to the
/// subnormals, then ±0) for large negative non-integers. Every target. Source: CUDA
/// Math API `tgammaf`; C99 F.9.5.4.
#[inline]
pub fn tgammaf(x: f32) -> f32 {
    if x.is_nan() || x == f32::INFINITY {
        return x + x;
    }
    if x == 0.0 {
        return 1.0 / x;
    }
    if x > 0.0 {
        return tgamma_posf(x);
    }
    if x == floorf(x) {
        return f32::NAN; // negative integers and −∞
    }
    if x > -0.5 {
        return (1.0 / x) / (1.0 + rgamma_m1f(x).0);
    }
    if x > -10.0 {
        // Γ(x) = Γ(y) / (x·(x + 1)·…·(x + n − 1)), y = x + n in (0, 1) (exact, as each
        // factor is): fewer roundings than reflecting.
        let n = (-x) as u32 + 1;
        let y = x + n as f32;
        let (ph, pl) = rising_df(x, n, 1.0);
        let r = ((1.0 / y) / (1.0 + rgamma_m1f(y).0)) / ph;
        return fmaf(-r, pl / ph, r);
    }
    // Γ(x) = −π / (x·sin(πx)·Γ(−x)); past 10, Γ(−x) as e^(ln Γ) (subnormal results).
    let s = -x * sinpif(x);
    let y = -x;
    if y < 10.0 {
        return PI / (s * tgamma_posf(y));
    }
    match stirling_df(y) {
        Some((h, l)) if h < 140.0 => exp_dd_times(-h, -l, PI / s),
        _ => 0.0f32.copysign(s),
    }
}

// ---------------------------------------------------------------------------------
// Norms of vectors of any length.

/// `Σ (aᵢ·2^−e)²` for the exponent `e` of the largest `|aᵢ|`, and `e`; or the result
/// itself for the special cases (`Err`): `+∞` when an element is infinite (NaNs too,
/// as `hypotf`), NaN when one is NaN, and `zero` when all are zero (or `a` is empty).
#[inline(always)]
fn scaled_sum_of_squares(a: &[f32], zero: f32, inf: f32) -> Result<(f32, i32), f32> {
    let mut m = 0.0f32;
    let mut nan = false;
    for &v in a {
        let av = v.abs();
        if av == f32::INFINITY {
            return Err(inf);
        }
        nan |= av.is_nan();
        m = if av > m { av } else { m };
    }
    if nan {
        return Err(f32::NAN);
    }
    if m == 0.0 {
        return Err(zero);
    }
    let e = ilogbf(m);
    let mut s = 0.0f32;
    for &v in a {
        let t = scalbnf(v, -e); // exact: a power of two, the largest element in [1, 2)
        s = fmaf(t, t, s);
    }
    Ok((s, e))
}

/// The Euclidean norm `√(Σ aᵢ²)` of `a` (CUDA `normf(dim, p)`, the length taken from
/// the slice), without overflow or underflow in between: the squares are summed
/// scaled by the largest element's power of two. `+∞` when an element is infinite
/// (even beside NaNs), NaN when one is NaN, 0 for an empty or all-zero `a`. Error:
/// the sum's `n` roundings, at most about `n/2` ulp of the sum before the square root
/// halves them (CUDA documents no bound). Every target. Source: CUDA Math API `normf`.
#[inline]
pub fn normf(a: &[f32]) -> f32 {
    match scaled_sum_of_squares(a, 0.0, f32::INFINITY) {
        Ok((s, e)) => scalbnf(sqrtf(s), e),
        Err(v) => v,
    }
}

/// `1/√(Σ aᵢ²)` (CUDA `rnormf(dim, p)`), scaled as [`normf`]: `+0` when an element is
/// infinite, NaN when one is NaN, `+∞` for an empty or all-zero `a`. Error as
/// [`normf`], plus the division's rounding. Every target. Source: CUDA Math API
/// `rnormf`.
#[inline]
pub fn rnormf(a: &[f32]) -> f32 {
    match scaled_sum_of_squares(a, f32::INFINITY, 0.0) {
        Ok((s, e)) => scalbnf(1.0 / sqrtf(s), -e),
        Err(v) => v,
    }
}
