//! Inverse trigonometric functions in `f32`: `atanf`, `atan2f`, `asinf`, `acosf`.

use super::arith::{fast_two_sum, poly, recip_rough};
use super::consts::{PI, PIO2, PIO2_LO, PI_LO};
use crate::math::prim::{fmaf, sqrtf as p_sqrt};

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

/// `atan(t) - t` for `t` in [0, 1] (the tail of `atan(t) = t + tail`).
#[inline(always)]
fn atan_tail(t: f32) -> f32 {
    let t2 = t * t;
    t2 * t * poly(t2, &ATAN_Q)
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
