//! Error functions in `f32`: `erff`, `erfcf`, `erfcxf`, `normcdff`.

use super::arith::{fast_two_sum, poly, poly_from1, recip_rough, round_magic, scale_1p};
use super::consts::{INV_LN2, LN2, LN2_LO};
use super::exp_log::{exp_dd, exp_normal, expm1_kernel};
use crate::math::prim::fmaf;

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
// LN_ERFC: ln erfc(t) on [0.75, 3.93], fitted (remez.py LN_ERFC) to the absolute
// error erfc(t)·|p(t) − ln erfc t| below 2^-34.
const LN_ERFC: [f32; 10] = [
    4.409_819_7e-5,
    -1.128_721,
    -0.635_449_95,
    -0.105_097_19,
    0.022_088_584,
    -0.002_289_376_5,
    -0.000_326_719_83,
    0.000_172_252_87,
    -2.796_890_1e-5,
    1.754_661_9e-6,
];
/// 1/√2 as head and tail.
const FRAC_1_SQRT_2: f32 = f32::from_bits(0x3f35_04f3);
const FRAC_1_SQRT_2_LO: f32 = f32::from_bits(0x324f_e77a);

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
    // 3.92 on, so t is held to 3.93 (the end of LN_ERFC's interval).
    // Above 0.75, erf t = 1 − e^(p(t)) with p ≈ ln erfc t (absolute error of erf
    // below 2^-34): erf needs erfc only to 2^-26 absolute, not relative.
    let t = x.abs();
    let large = (1.0 - exp_normal(poly(t.min(3.93), &LN_ERFC))).copysign(x);
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
