//! Modified Bessel functions of the first kind in `f64`: `cyl_bessel_i0`,
//! `cyl_bessel_i1` (the Bessel functions of integer order are in `math/bessel.rs`).

use super::arith::{poly, scale};
use super::exp_log::{exp_parts, exp_value};
use super::roots::sqrt;
use crate::math::prim::fma;

// math_coeffs_f64.py bessel_i0_small: P(z) = (I0(sqrt z) - 1)/z on [0, 144.1], degree 18: max rel err 2^-61.8 (2^-60.1 with the coefficients rounded to f64)
const BESSEL_I0_SMALL_C: [f64; 19] = [
    0.25,
    0.015624999999999998,
    0.00043402777777777884,
    6.7816840277774335e-06,
    6.78168402778377e-08,
    4.709502797004251e-10,
    2.402807549973047e-12,
    9.385966968163562e-15,
    2.896903471749084e-17,
    7.242256344263462e-20,
    1.4963387385668516e-22,
    2.5977352125779306e-25,
    3.843710804553461e-28,
    4.894278041368598e-31,
    5.497446724266669e-34,
    5.055913550422607e-37,
    5.564186433056576e-40,
    1.1992760918760725e-43,
    5.7401904110426155e-46,
];
// math_coeffs_f64.py bessel_i1_small: P(z) = (2 I1(sqrt z)/sqrt z - 1)/z on [0, 144.1], degree 18: max rel err 2^-66.2 (2^-60.1 with the coefficients rounded to f64)
const BESSEL_I1_SMALL_C: [f64; 19] = [
    0.125,
    0.005208333333333333,
    0.00010850694444444449,
    1.3563368055555397e-06,
    1.1302806712965722e-08,
    6.727861138639137e-11,
    3.003509437112034e-13,
    1.0428852201273588e-15,
    2.8969034287592776e-18,
    6.583870362015727e-21,
    1.2469473305709337e-23,
    1.9982786951314754e-26,
    2.745303208469432e-29,
    3.2643692917651104e-32,
    3.4275419486720067e-35,
    3.007235151104754e-38,
    3.001750858824555e-41,
    7.780619149541079e-45,
    2.7593816263040577e-47,
];
// math_coeffs_f64.py bessel_i0_large: H(w) = sqrt(x) e^-x I0(x), w = 1/x on [0, 0.08343], degree 18: max rel err 2^-58.3 (2^-53.8 with the coefficients rounded to f64)
const BESSEL_I0_LARGE_C: [f64; 19] = [
    0.3989422804014327,
    0.049867785050181614,
    0.02805062908714519,
    0.02921940729153477,
    0.04474163856160718,
    0.09070318676786022,
    0.21700687777743485,
    1.5796963203364711,
    -47.079089581407665,
    2004.5500073800772,
    -58679.815836840855,
    1257628.583341545,
    -19176771.655992292,
    197690146.20908603,
    -1189407992.5261042,
    1576209389.3755963,
    32366592972.350307,
    -229106112596.05728,
    503532214160.9786,
];
// math_coeffs_f64.py bessel_i1_large: H(w) = sqrt(x) e^-x I1(x), w = 1/x on [0, 0.08343], degree 18: max rel err 2^-58.2 (2^-53.8 with the coefficients rounded to f64)
const BESSEL_I1_LARGE_C: [f64; 19] = [
    0.3989422804014327,
    -0.14960335515053974,
    -0.04675104848103111,
    -0.04090716937236394,
    -0.057525140987284736,
    -0.11083476026941762,
    -0.2588440922528834,
    -1.6576973993291684,
    44.91619539561912,
    -1915.9312502593211,
    55375.64109710631,
    -1165740.1455811083,
    17238942.982260004,
    -167043848.68394107,
    832545364.6161102,
    1382590192.5139115,
    -48835692277.489655,
    284022391691.02277,
    -586059096549.7286,
];

/// `1/√(2π)` as head and tail: the constant term of the large-argument tables.
const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_7;
const FRAC_1_SQRT_2PI_LO: f64 = -2.492_327_202_277_73e-17;

/// `e^a/√a · H(1/a)` for `a` held to [12, 746] (above about 714 both functions
/// overflow), `H(w) = 1/√(2π) + w·(c[1] + c[2] w + …)`.
#[inline(always)]
fn bessel_i_large(a: f64, c: &[f64; 19]) -> f64 {
    let a = a.clamp(12.0, 746.0);
    let w = 1.0 / a;
    let mut q = c[18];
    for &ci in c[1..18].iter().rev() {
        q = fma(q, w, ci);
    }
    let h = FRAC_1_SQRT_2PI + fma(q, w, FRAC_1_SQRT_2PI_LO);
    let (k, r, u) = exp_parts(a, 0.0);
    scale(exp_value(r, u) * (h / sqrt(a)), k)
}

/// The modified Bessel function of the first kind of order 0, `I₀(x)`: even, 1 at 0,
/// `+∞` at ±∞ and for `|x|` above about 713.98 (overflow). Max error: see
/// BENCHMARKS.md (CUDA `cyl_bessel_i0`: 6 ulp). Every target. Source: CUDA Math API
/// `cyl_bessel_i0`.
#[inline]
pub fn cyl_bessel_i0(x: f64) -> f64 {
    let a = x.abs();
    if a <= 12.0 || x.is_nan() {
        // 1 + z·P(z), z = x².
        let z = a * a;
        return fma(z, poly(z, &BESSEL_I0_SMALL_C), 1.0);
    }
    bessel_i_large(a, &BESSEL_I0_LARGE_C)
}

/// The modified Bessel function of the first kind of order 1, `I₁(x)`: odd, `±∞` at
/// ±∞ and for `|x|` above about 713.98. Max error: see BENCHMARKS.md (CUDA
/// `cyl_bessel_i1`: 6 ulp). Every target. Source: CUDA Math API `cyl_bessel_i1`.
#[inline]
pub fn cyl_bessel_i1(x: f64) -> f64 {
    let a = x.abs();
    let r = if a <= 12.0 || x.is_nan() {
        // (x/2)(1 + z·P(z)), z = x².
        let z = a * a;
        (0.5 * a) * fma(z, poly(z, &BESSEL_I1_SMALL_C), 1.0)
    } else {
        bessel_i_large(a, &BESSEL_I1_LARGE_C)
    };
    r.copysign(x)
}
