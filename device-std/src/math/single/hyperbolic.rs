//! Hyperbolic functions and their inverses in `f32`: `sinhf`, `coshf`, `tanhf`,
//! `asinhf`, `acoshf`, `atanhf`.

use super::arith::{poly, scale_1p};
use super::consts::LN2;
use super::exp_log::{exp_normal, expm1_kernel, log1pf, logf, reduce_ln2};
use crate::math::prim::{fmaf, sqrtf as p_sqrt};

// TANH_Q: tanh(t) = t + t^3 q(t^2), t in [0, 0.754]: remez.py TANH_Q, relative error
// 2^-29.0.
const TANH_Q: [f32; 6] = [
    -0.333_333_13,
    0.133_326_47,
    -0.053_888_462,
    0.021_435_365,
    -0.007_627_933_3,
    0.001_717_892_2,
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
    if t <= 87.0 {
        return 0.5 * exp_normal(t);
    }
    half_exp_large(t)
}

/// [`half_exp`] above 87 (and NaN), out of line.
#[inline(never)]
fn half_exp_large(t: f32) -> f32 {
    let t = if t > 90.0 { 90.0 } else { t }; // NaN passes
    let (k, rh, rl) = reduce_ln2(t);
    scale_1p(k - 1, expm1_kernel(rh, rl))
}

/// `tanh x` (CUDA `tanhf`, bound 2 ulp). Every target.
///
/// Both forms, then a select (no branch to diverge on): below 0.75 the odd polynomial
/// `t + t³q(t²)`, above `1 − 2/(e^2t + 1)` with `t` capped at 9.1, from where `tanh`
/// rounds to 1.
#[inline]
pub fn tanhf(x: f32) -> f32 {
    let t = x.abs();
    let u = t * t;
    let near = fmaf(u * t, poly(u, &TANH_Q), t);
    let e = exp_normal(2.0 * t.min(9.1));
    let far = 1.0 - 2.0 / (e + 1.0);
    let v = if t < 0.75 { near } else { far };
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
