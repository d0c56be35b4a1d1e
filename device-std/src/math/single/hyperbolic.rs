//! Hyperbolic functions and their inverses in `f32`: `sinhf`, `coshf`, `tanhf`,
//! `asinhf`, `acoshf`, `atanhf`.

use super::arith::{fast_two_sum, poly, pow2i, recip_1_2, scale_1p};
use super::consts::LN2;
use super::exp_log::{expm1_kernel, expm1_tail, log1pf, logf, reduce_ln2};
use crate::math::prim::{fmaf, sqrtf as p_sqrt};

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
