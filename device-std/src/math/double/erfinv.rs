//! Inverse error functions in `f64`: `erfinv`, `erfcinv`, `normcdfinv`.

use super::arith::{fast_two_sum, poly};
use super::exp_log::log;
use super::roots::sqrt;
use crate::math::prim::fma;

/// √2 as head and tail.
const SQRT_2_H: f64 = core::f64::consts::SQRT_2;
const SQRT_2_L: f64 = -9.667293313452913e-17;

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
