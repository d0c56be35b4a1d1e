//! Inverse trigonometric functions in `f64`: `atan`, `atan2`, `asin`, `acos`.

use super::arith::{
    f32_truncated, f64_of_f32, fast_two_sum, high_word, poly, recip_above_1, two_sum,
    with_high_word,
};
use super::consts::{PIO2_H, PIO2_M, PI_H, PI_L};
use super::roots::rsqrt_f32_estimate;
use crate::math::prim::fma;

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

/// `atan(t + tl) = hi + tail` for `0 ≤ t ≤ 1`, `|tl| ≤ ulp(t)`.
#[inline(always)]
fn atan_k(t: f64, tl: f64) -> (f64, f64) {
    let z = t * t;
    atan_k_tail(t, tl, z, poly(z, &ATAN_C))
}

/// [`atan_k`] from `z = t²` and `p = A(z)`.
#[inline(always)]
fn atan_k_tail(t: f64, tl: f64, z: f64, p: f64) -> (f64, f64) {
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
/// 1.08 ulp measured (CUDA `atan`: 2 ulp). Every target. Source: CUDA Math API
/// `atan`; C99 F.9.1.3.
#[inline]
pub fn atan(x: f64) -> f64 {
    let a = x.abs();
    // Above 1, atan a = π/2 - atan(1/a). One polynomial for both sides: a warp whose
    // lanes fall on both would run two.
    let big = a > 1.0;
    let (t, tl) = if big {
        let a = if a > 1e300 { 1e300 } else { a }; // atan(∞) = π/2 too, without 0·∞
        let u = recip_above_1(a);
        (u, fma(-u, a, 1.0) * u)
    } else {
        (a, 0.0)
    };
    let z = t * t;
    let p = poly(z, &ATAN_C);
    let r = if big {
        let (h, tail) = atan_k_tail(t, tl, z, p);
        let (s, e) = pio2_minus(h, tail);
        s + e
    } else {
        fma(t * z, p, t) // atan_k without a tail
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

/// `sqrt((1 - a)/2)` as a double-double `s + sl` (to about 2^-75 relative), for
/// `1/2 ≤ a ≤ 1`, without a square root or division instruction: `hr ≈ 1/(2 sqrt w)`
/// from an `f32` estimate (2^-22), three steps `s + (w - s²)·hr` (each gains 22 bits),
/// and the tail `(w - s²)·hr` of the rounded result. `w` is 0 or at least 2^-54.
#[inline(always)]
fn half_complement_sqrt(a: f64) -> (f64, f64) {
    let w = (1.0 - a) * 0.5; // exact
                             // The estimate of w held at 2^-54 or above (one integer max on the high word), so
                             // that it stays finite at w = 0 (a = 1), where every step below then gives 0.
    let w_est = with_high_word(w, high_word(w).max(0x3C90_0000));
    let r = f64_of_f32(rsqrt_f32_estimate(f32_truncated(w_est)));
    let hr = 0.5 * r;
    let s0 = w * r;
    let s1 = fma(fma(-s0, s0, w), hr, s0);
    let s2 = fma(fma(-s1, s1, w), hr, s1);
    (s2, fma(-s2, s2, w) * hr)
}

/// The shared part of [`asin`] and [`acos`] for `0 ≤ a ≤ 1`: whether `a > 1/2`, and
/// `asin` of the reduced argument as `h + t` (`a` itself, or `sqrt((1 - a)/2)` above
/// 1/2, where `asin a = π/2 - 2 (h + t)`). One polynomial for both sides: a warp whose
/// lanes fall on both would run two.
#[inline(always)]
fn asin_reduced(a: f64) -> (bool, f64, f64) {
    let big = a > 0.5;
    let (h, hl) = if big {
        half_complement_sqrt(a)
    } else {
        (a, 0.0)
    };
    let (h, t) = asin_k(h, hl);
    (big, h, t)
}

/// Arc sine, in `[-π/2, π/2]`. `asin(±0) = ±0`, `asin(±1) = ±π/2`,
/// `asin(|x| > 1) = NaN`. Max error: 0.68 ulp measured (CUDA `asin`: 2 ulp).
/// Every target. Source: CUDA Math API `asin`; C99 F.9.1.2.
#[inline]
pub fn asin(x: f64) -> f64 {
    let a = x.abs();
    if !(a <= 1.0) {
        return f64::NAN; // |x| > 1 or NaN: a literal, as 0/0 would add a division's slow path
    }
    let (big, h, t) = asin_reduced(a);
    let r = if big {
        let (p, e) = pio2_minus(2.0 * h, 2.0 * t);
        p + e
    } else {
        h + t
    };
    r.copysign(x)
}

/// Arc cosine, in `[0, π]`. `acos(1) = +0`, `acos(-1) = π`, `acos(|x| > 1) = NaN`.
/// Max error: 0.65 ulp measured (CUDA `acos`: 2 ulp). Every target. Source: CUDA
/// Math API `acos`; C99 F.9.1.1.
#[inline]
pub fn acos(x: f64) -> f64 {
    let a = x.abs();
    if !(a <= 1.0) {
        return f64::NAN; // |x| > 1 or NaN: a literal, as 0/0 would add a division's slow path
    }
    let (big, h, t) = asin_reduced(a);
    if !big {
        let (h, t) = (h.copysign(x), t.copysign(x));
        let (p, e) = pio2_minus(h, t);
        p + e
    } else if x > 0.0 {
        2.0 * h + 2.0 * t
    } else {
        let (p, e) = two_sum(PI_H, -2.0 * h);
        p + (e + (PI_L - 2.0 * t))
    }
}
