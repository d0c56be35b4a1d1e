//! Gamma functions in `f64`: `lgamma`, `tgamma`.

use super::arith::{fast_two_sum, poly, scale, two_prod, two_sum};
use super::basic::{floor, trunc};
use super::exp_log::{exp_dd, exp_parts, exp_value, log1p, log_dd, log_dd1};
use super::trig::sinpi;
use crate::math::prim::fma;

// math_coeffs_f64.py gamma_q: Q(v) = (1/Gamma(1+v) - 1)/(v(v-1)) on [-0.501, 1.001], degree 16: max rel err 2^-59.2 (2^-55.8 with the coefficients rounded to f64)
const GAMMA_Q_C: [f64; 17] = [
    -0.5772156649015329,
    0.07866240661872104,
    0.12066504165281619,
    -0.04587356972947618,
    -0.00367583517392734,
    0.005946136353970566,
    -0.001272806892796631,
    -0.00010763930111158456,
    0.00010760237415175858,
    -2.04479081015965e-05,
    -3.1305957337095777e-07,
    9.374392597373095e-07,
    -1.955733592501963e-07,
    1.003396840843519e-08,
    3.915689822545754e-09,
    -1.0484676226044772e-09,
    1.0130178523997929e-10,
];
// math_coeffs_f64.py lgamma_stirling: S(z), z = 1/x^2 on [0, 0.015626], degree 6: max rel err 2^-56.9 (2^-54.0 with the coefficients rounded to f64)
const LGAMMA_STIRLING_C: [f64; 7] = [
    0.08333333333333333,
    -0.0027777777777739866,
    0.0007936507897512279,
    -0.0005952365841450824,
    0.0008414700359309848,
    -0.0018903799146045002,
    0.0050658338324904755,
];

/// `ln√(2π)` and `ln π` as head and tail.
const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;
const LN_SQRT_2PI_LO: f64 = -3.878_294_158_067_241_4e-17;
const LN_PI: f64 = 1.144_729_885_849_400_2;
const LN_PI_LO: f64 = 1.026_595_116_270_782_6e-17;

/// `1/Γ(1 + v) − 1 = v(v − 1)·Q(v)` for `v` in [−0.5, 1]; also `Q(v)`.
#[inline(always)]
fn rgamma_m1(v: f64) -> (f64, f64) {
    let q = poly(v, &GAMMA_Q_C);
    (v * (v - 1.0) * q, q)
}

/// `ln Γ(x)` for `x ≥ 8` by Stirling's series, as head and tail:
/// `(x − ½) ln x − x + ln√(2π) + S(1/x²)/x`. `None` when it overflows.
#[inline(always)]
fn stirling_dd(x: f64) -> Option<(f64, f64)> {
    let (lh, ll) = log_dd1(x);
    let xm = x - 0.5;
    let (ph, pe) = two_prod(xm, lh);
    if !(ph.abs() < f64::INFINITY) {
        return None;
    }
    let w = 1.0 / x;
    let tail = w * poly(w * w, &LGAMMA_STIRLING_C);
    let (s1, e1) = two_sum(ph, -x);
    let (s2, e2) = two_sum(s1, LN_SQRT_2PI);
    let lo = fma(xm, ll, pe) + (e1 + e2) + (LN_SQRT_2PI_LO + tail);
    Some(fast_two_sum(s2, lo))
}

/// `y·(y + 1)·…·(x − 1)` for `y = x − n` (`n ≥ 1` factors, each exact) times `m`, as
/// head and tail.
#[inline(always)]
fn rising_dd(y: f64, n: u32, m: f64) -> (f64, f64) {
    let (mut ph, mut pl) = (m, 0.0);
    let mut k = 0;
    while k < n {
        let c = y + k as f64;
        let p = ph * c;
        pl = fma(ph, c, -p) + pl * c;
        ph = p;
        k += 1;
    }
    (ph, pl)
}

/// `ln|Γ(x)|` for finite `x > −0.5`, `x ≠ 0`. Each range writes the result as
/// `m·ln(h + l) + s·log1p(a) + (c + c2 + cl)` and one logarithm and one `log1p` serve
/// them all: a warp whose lanes fall in different ranges runs the two once, not once
/// per range.
#[inline(always)]
fn lgamma_main(x: f64) -> f64 {
    if x > 1e300 {
        // x(ln x − 1): the rest is below an ulp, and (x − ½)·ln x alone would
        // overflow before the result does.
        let (lh, ll) = log_dd1(x);
        return fma(x, lh - 1.0, x * ll);
    }
    // One polynomial for every range below 8, on v = x below 1 and the fraction of x
    // above (exact): a warp whose lanes span several ranges evaluates it once.
    let v = if x < 1.0 { x } else { x - trunc(x) };
    let (w, q) = rgamma_m1(v);
    let (mut m, mut h, mut l) = (0.0, 1.0, 0.0);
    let (mut s, mut a) = (-1.0, w);
    let (mut c, mut c2, mut cl) = (0.0, 0.0, 0.0);
    if x < 0.5 {
        // Γ(x) = Γ(1 + x)/x: −ln|x| − log1p(1/Γ(1 + x) − 1), for x < 0 too.
        m = -1.0;
        h = x.abs();
    } else if x < 1.0 {
        // x·(1/Γ(1 + x)) − 1 = (x − 1)(1 + x²Q(x)): exact near the zero at 1.
        a = (x - 1.0) * fma(x * x, q, 1.0);
    } else if x < 2.0 {
        // 1/Γ(x) − 1 with v = x − 1; lgamma(1) = +0: s·log1p(0) = −0, added to +0.
    } else if x < 3.0 {
        // Γ(2 + v) − 1 = (1 + v)/(1 + w) − 1 = v(1 − (v − 1)Q)/(1 + w): exact near 2;
        // the quotient as head and tail, log1p(a + t) = log1p(a) + t/(1 + a).
        let (nh, nl) = two_prod(v, fma(-(v - 1.0), q, 1.0));
        let (dh, dl) = fast_two_sum(1.0, w);
        a = nh / dh;
        cl = ((fma(-a, dh, nh) + (nl - a * dl)) / dh) / (1.0 + a);
        s = 1.0;
    } else if x < 8.0 {
        // Γ(x) = (1 + v)·(2 + v)·…·(x − 1) / (1 + w), v = x − n − 2 in [0, 1).
        let n = x as u32 - 2;
        (h, l) = rising_dd(v + 2.0, n, 1.0 + v);
        m = 1.0;
    } else {
        // Stirling: (x − ½) ln x − x + ln√(2π) + S(1/x²)/x.
        m = x - 0.5;
        h = x;
        s = 0.0;
        a = 0.0;
        c = -x;
        c2 = LN_SQRT_2PI;
        let w = 1.0 / x;
        cl = LN_SQRT_2PI_LO + w * poly(w * w, &LGAMMA_STIRLING_C);
    }
    let (lh, ll) = log_dd(h, l);
    let lp = log1p(a);
    let (ph, pe) = two_prod(m, lh);
    let (s1, e1) = two_sum(ph, c);
    let (s2, e2) = two_sum(s1, c2);
    s2 + (((e1 + e2) + fma(m, ll, pe)) + fma(s, lp, cl))
}

/// `ln|Γ(x)|`, the logarithm of the gamma function's magnitude. `+∞` at 0 and at the
/// negative integers (the poles), at ±∞ and above about 2.55e305; NaN for NaN. Max
/// error: see BENCHMARKS.md (CUDA `lgamma`: 4 ulp outside [−23.0001, −2.2637], larger
/// inside, where `ln|Γ|` has zeros). Every target. Source: CUDA Math API `lgamma`;
/// C99 F.9.5.3.
#[inline]
pub fn lgamma(x: f64) -> f64 {
    if !(x.abs() < f64::INFINITY) {
        return x * x; // NaN stays NaN, ±∞ gives +∞
    }
    if x == floor(x) && x <= 0.0 {
        return f64::INFINITY; // ±0 and the negative integers
    }
    // Γ(x)·(−x)·Γ(−x) = π / sin(πx), with −x exact (1 − x would round), below −½:
    // one lgamma_main for the whole warp, on x or −x.
    let reflect = x <= -0.5;
    let main = lgamma_main(if reflect { -x } else { x });
    if !reflect {
        return main;
    }
    let (ph, pl) = two_prod(sinpi(x), x);
    let (ph, pl) = if ph < 0.0 { (-ph, -pl) } else { (ph, pl) };
    let (lh, ll) = log_dd(ph, pl);
    (LN_PI - lh) + ((LN_PI_LO - ll) - main)
}

/// `Γ(x)` for finite `x > 0` (+∞ on overflow).
#[inline(always)]
fn tgamma_pos(x: f64) -> f64 {
    if x < 1.0 {
        // Γ(x) = 1/(x·(1 + w)); 1/x first, so a subnormal x is not rounded twice.
        let (w, _) = rgamma_m1(x);
        return (1.0 / x) / (1.0 + w);
    }
    if x < 2.0 {
        return 1.0 / (1.0 + rgamma_m1(x - 1.0).0);
    }
    if x < 20.0 {
        // y·(y + 1)·…·(x − 1) / (1 + w), y = x − n in [1, 2).
        let n = x as u32 - 1;
        let v = x - (n + 1) as f64;
        let (ph, pl) = rising_dd(v + 1.0, n, 1.0);
        let d = 1.0 + rgamma_m1(v).0;
        let r = ph / d;
        return r + (fma(-r, d, ph) + pl) / d;
    }
    match stirling_dd(x) {
        Some((h, l)) => exp_dd(h, l),
        None => f64::INFINITY,
    }
}

/// The gamma function `Γ(x)`. `±∞` at ±0, NaN at the negative integers and at −∞,
/// `+∞` at +∞ and above about 171.62 (overflow); tiny (down to the subnormals, then
/// ±0) for large negative non-integers. Max error: see BENCHMARKS.md (CUDA `tgamma`:
/// 10 ulp). Every target. Source: CUDA Math API `tgamma`; C99 F.9.5.4.
#[inline]
pub fn tgamma(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x + x;
    }
    if x == 0.0 {
        return 1.0 / x;
    }
    if x > 0.0 {
        return tgamma_pos(x);
    }
    if x == floor(x) {
        return f64::NAN; // negative integers and −∞
    }
    if x > -0.5 {
        // Γ(x) = 1/(x·(1 + w)), as for 0 < x < 1.
        let (w, _) = rgamma_m1(x);
        return (1.0 / x) / (1.0 + w);
    }
    // Γ(x) = −π / (x·sin(πx)·Γ(−x)) (−x exact; 1 − x would round); past 20, Γ(−x) as
    // e^(ln Γ) so that a result below the overflow of Γ(−x) keeps its subnormal digits.
    let s = -x * sinpi(x);
    let y = -x;
    if y < 20.0 {
        return core::f64::consts::PI / (s * tgamma_pos(y));
    }
    match stirling_dd(y) {
        Some((h, l)) if h < 746.0 => {
            // π/s times e^(−h − l), 2^k applied last: a subnormal result rounds once.
            let (k, r, u) = exp_parts(-h, -l);
            scale(exp_value(r, u) * (core::f64::consts::PI / s), k)
        }
        Some(_) => 0.0f64.copysign(s),
        None => 0.0f64.copysign(s),
    }
}
