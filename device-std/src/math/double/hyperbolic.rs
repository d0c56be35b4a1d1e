//! Hyperbolic functions and their inverses in `f64`: `sinh`, `cosh`, `tanh`, `asinh`,
//! `acosh`, `atanh`.

use super::arith::{fast_two_sum, poly, pow2, scale_normal, two_prod, two_sum};
use super::consts::{LN2_H, LN2_L, TINY};
use super::exp_log::{exp_big, exp_reduce, expm1_parts, log_dd, log_dd1, EXP_FAST};
use super::roots::sqrt_dd;
use crate::math::prim::fma;

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
            f64::NAN // a literal: 0/0 would add a division's slow path
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
            f64::NAN // a literal: 0/0 would add a division's slow path
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
