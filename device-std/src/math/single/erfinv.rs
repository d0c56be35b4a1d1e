//! Inverse error functions in `f32`: `erfinvf`, `erfcinvf`, `normcdfinvf`.

use super::arith::{fast_two_sum, poly, poly_from1};
use super::exp_log::logf;
use crate::math::prim::{fmaf, sqrtf as p_sqrt};

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
