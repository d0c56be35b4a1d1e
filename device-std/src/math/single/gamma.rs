//! Gamma functions in `f32`: `lgammaf`, `tgammaf`.

use super::arith::{fast_two_sum, poly, poly_from1, recip_rough};
use super::basic::{floorf, truncf};
use super::consts::{LN2_HI, LN2_HI_LO, PI};
use super::exp_log::{exp_dd, exp_dd_times, log1pf, log_poly};
use super::trig::sinpif;
use crate::math::prim::fmaf;

// remez.py GAMMA_Q: degree 9 on [-0.501, 1.001], weighted error 4.003e-9 (2^-27.9)
const GAMMA_Q: [f32; 10] = [
    -0.5772156715393066,
    0.07866240292787552,
    0.1206650584936142,
    -0.04587353393435478,
    -0.00367606314830482,
    0.005945975426584482,
    -0.0012714354088529944,
    -0.00010807213402586058,
    0.00010483100777491927,
    -1.7831673176260665e-05,
];
const GAMMA_Q_LO: f32 = 6.507374195052762e-09;
// remez.py LGAMMA_S: degree 2 on [0, 0.015626], weighted error 2.98e-8 (2^-25.0)
const LGAMMA_S: [f32; 3] = [
    0.0833333358168602,
    -0.002778977621346712,
    0.0008613233803771436,
];

/// `ln√(2π)` and `ln π` as head and tail.
const LN_SQRT_2PI: f32 = 0.918_938_5;
const LN_SQRT_2PI_LO: f32 = 1.563_417_7e-8;
const LN_PI: f32 = 1.144_729_9;
const LN_PI_LO: f32 = 3.317_300_9e-8;

/// `1/Γ(1 + v) − 1 = v(v − 1)·Q(v)` for `v` in [−0.5, 1]; also `Q(v)`.
#[inline(always)]
fn rgamma_m1f(v: f32) -> (f32, f32) {
    let q = fmaf(v, poly_from1(v, &GAMMA_Q), GAMMA_Q_LO) + GAMMA_Q[0];
    (v * (v - 1.0) * q, q)
}

/// `ln x` as head and tail for finite `x > 0` (to about 2^-40 relative).
#[inline(always)]
fn ln_df(x: f32) -> (f32, f32) {
    let (e, lh, ll) = log_poly(x);
    let (s, err) = fast_two_sum(e * LN2_HI, lh);
    (s, err + fmaf(e, LN2_HI_LO, ll))
}

/// `ln Γ(x)` for `x ≥ 8` by Stirling's series, as head and tail; `None` on overflow.
#[inline(always)]
fn stirling_df(x: f32) -> Option<(f32, f32)> {
    let (lh, ll) = ln_df(x);
    let xm = x - 0.5;
    let ph = xm * lh;
    if !(ph < f32::INFINITY) {
        return None;
    }
    let pe = fmaf(xm, lh, -ph);
    let w = 1.0 / x;
    let tail = w * poly(w * w, &LGAMMA_S);
    // (x − ½) ln x > x + 7 from x = 8 on: the sums below are ordered.
    let (s1, e1) = fast_two_sum(ph, -x);
    let (s2, e2) = fast_two_sum(s1, LN_SQRT_2PI);
    let lo = fmaf(xm, ll, pe) + (e1 + e2) + (LN_SQRT_2PI_LO + tail);
    Some(fast_two_sum(s2, lo))
}

/// `m·y·(y + 1)·…·(y + n − 1)` (each factor exact) as head and tail.
#[inline(always)]
fn rising_df(y: f32, n: u32, m: f32) -> (f32, f32) {
    let (mut ph, mut pl) = (m, 0.0);
    let mut k = 0;
    while k < n {
        let c = y + k as f32;
        let p = ph * c;
        pl = fmaf(ph, c, -p) + pl * c;
        ph = p;
        k += 1;
    }
    (ph, pl)
}

/// `a + b` as head and exact tail, any order of magnitude.
#[inline(always)]
fn two_sum(a: f32, b: f32) -> (f32, f32) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// `ln|Γ(x)|` for finite `x > −0.5`, `x ≠ 0`, as `lgamma_main` in `double/gamma.rs`: each
/// range writes the result as `m·ln(h + l) + s·log1p(a) + (c + c2 + cl)`, and one
/// logarithm and one `log1pf` serve them all.
#[inline(always)]
fn lgamma_mainf(x: f32) -> f32 {
    if x > 1e30 {
        // x(ln x − 1): the rest is below an ulp, and (x − ½)·ln x alone would
        // overflow before the result does.
        let (lh, ll) = ln_df(x);
        return fmaf(x, lh - 1.0, x * ll);
    }
    // One polynomial for every range below 8, on v = x below 1 and the fraction of x
    // above (exact): a warp whose lanes span several ranges evaluates it once.
    let v = if x < 1.0 { x } else { x - truncf(x) };
    let (w, q) = rgamma_m1f(v);
    let (mut m, mut h, mut l) = (0.0f32, 1.0f32, 0.0f32);
    let (mut s, mut a) = (-1.0f32, w);
    let (mut c, mut c2, mut cl) = (0.0f32, 0.0f32, 0.0f32);
    if x < 0.5 {
        // Γ(x) = Γ(1 + x)/x: −ln|x| − log1p(1/Γ(1 + x) − 1), for x < 0 too.
        m = -1.0;
        h = x.abs();
    } else if x < 1.0 {
        // x·(1/Γ(1 + x)) − 1 = (x − 1)(1 + x²Q(x)): exact near the zero at 1.
        a = (x - 1.0) * fmaf(x * x, q, 1.0);
    } else if x < 2.0 {
        // 1/Γ(x) − 1 with v = x − 1; lgammaf(1) = +0.
    } else if x < 3.0 {
        // Γ(2 + v) − 1 = v(1 − (v − 1)Q)/(1 + w) as head and tail: exact near 2.
        let cv = fmaf(-(v - 1.0), q, 1.0);
        let nh = v * cv;
        let nl = fmaf(v, cv, -nh);
        let (dh, dl) = fast_two_sum(1.0, w);
        a = nh / dh;
        // The quotient's tail over (1 + a): a correction, so FMA reciprocals do (a
        // division for every lane of a warp would cost more than the rest).
        cl = (fmaf(-a, dh, nh) + (nl - a * dl)) * recip_rough(dh) * recip_rough(1.0 + a);
        s = 1.0;
    } else if x < 8.0 {
        // Γ(x) = (1 + v)·(2 + v)·…·(x − 1) / (1 + w), v = x − n − 2 in [0, 1).
        let n = x as u32 - 2;
        (h, l) = rising_df(v + 2.0, n, 1.0 + v);
        m = 1.0;
    } else {
        // Stirling: (x − ½) ln x − x + ln√(2π) + S(1/x²)/x.
        m = x - 0.5;
        h = x;
        s = 0.0;
        a = 0.0;
        c = -x;
        c2 = LN_SQRT_2PI;
        let w = recip_rough(x);
        let w = fmaf(w, fmaf(-x, w, 1.0), w); // 1/x to within an ulp
        cl = LN_SQRT_2PI_LO + w * poly(w * w, &LGAMMA_S);
    }
    let (lh, lt) = ln_df(h);
    // ln(h + l) = ln h + l/h; l is nonzero only for the product (h ≥ 2).
    let ll = if l != 0.0 {
        fmaf(l, recip_rough(h), lt)
    } else {
        lt
    };
    let lp = log1pf(a);
    let ph = m * lh;
    let pe = fmaf(m, lh, -ph);
    let (s1, e1) = two_sum(ph, c);
    let (s2, e2) = two_sum(s1, c2);
    s2 + (((e1 + e2) + fmaf(m, ll, pe)) + fmaf(s, lp, cl))
}

/// `ln|Γ(x)|` (CUDA `lgammaf`, bound 6 ulp outside [−10.001, −2.264], larger inside,
/// where it has zeros): `+∞` at 0, at the negative integers (the poles), at ±∞ and
/// above about 4.08e36. Every target. Source: CUDA Math API `lgammaf`; C99 F.9.5.3.
#[inline]
pub fn lgammaf(x: f32) -> f32 {
    if !(x.abs() < f32::INFINITY) {
        return x * x; // NaN stays NaN, ±∞ gives +∞
    }
    if x == floorf(x) && x <= 0.0 {
        return f32::INFINITY; // ±0 and the negative integers
    }
    // Γ(x)·(−x)·Γ(−x) = π / sin(πx), with −x exact, below −½: one lgamma_mainf for
    // the whole warp, on x or −x.
    let reflect = x <= -0.5;
    let main = lgamma_mainf(if reflect { -x } else { x });
    if !reflect {
        return main;
    }
    let s = sinpif(x);
    let ph = (s * x).abs();
    let pl = fmaf(s, x, -(s * x)).copysign(s * x);
    let (lh, ll) = ln_df(ph);
    (LN_PI - lh) + ((LN_PI_LO - (ll + pl / ph)) - main)
}

/// `Γ(x)` for `x ≥ 10` by Stirling's series (+∞ on overflow).
#[inline(always)]
fn tgamma_stirlingf(x: f32) -> f32 {
    match stirling_df(x) {
        Some((h, l)) if h < 89.0 => exp_dd(h, l),
        _ => f32::INFINITY,
    }
}

/// The gamma function `Γ(x)` (CUDA `tgammaf`, bound 5 ulp): `±∞` at ±0, NaN at the
/// negative integers and −∞, `+∞` at +∞ and above about 35.04; tiny (down to the
/// subnormals, then ±0) for large negative non-integers. Every target. Source: CUDA
/// Math API `tgammaf`; C99 F.9.5.4.
#[inline]
pub fn tgammaf(x: f32) -> f32 {
    if x.is_nan() || x == f32::INFINITY {
        return x + x;
    }
    if x == 0.0 {
        return 1.0 / x;
    }
    if x >= 10.0 {
        return tgamma_stirlingf(x);
    }
    if x <= 0.0 && x == floorf(x) {
        return f32::NAN; // negative integers and −∞
    }
    if x <= -10.0 {
        // Γ(x) = −π / (x·sin(πx)·Γ(−x)), Γ(−x) as e^(ln Γ) (subnormal results).
        let s = -x * sinpif(x);
        return match stirling_df(-x) {
            Some((h, l)) if h < 140.0 => exp_dd_times(-h, -l, PI / s),
            _ => 0.0f32.copysign(s),
        };
    }
    // |x| < 10 with one polynomial and one rising product for the whole warp, on the
    // reduced argument v of each range:
    // - (−½, 1): Γ(x) = (1/x) / (1 + w(x));
    // - [1, 2): Γ(x) = 1 / (1 + w(x − 1));
    // - [2, 10): Γ(x) = y·(y + 1)·…·(x − 1) / (1 + w(v)), y = 1 + v, v the fraction of x;
    // - (−10, −½]: Γ(x) = Γ(y) / (x·(x + 1)·…·(x + n − 1)), y = x + n in (0, 1) (exact,
    //   as each factor is): fewer roundings than reflecting.
    let below = x <= -0.5;
    let rising = below || x >= 2.0;
    let n = if below {
        (-x) as u32 + 1
    } else if rising {
        x as u32 - 1
    } else {
        0
    };
    let v = if below {
        x + n as f32
    } else if x < 1.0 {
        x
    } else {
        x - truncf(x)
    };
    let d = 1.0 + rgamma_m1f(v).0;
    let a = if below || x < 1.0 { v } else { 1.0 };
    let q = (1.0 / a) / d;
    if !rising {
        return q;
    }
    let (ph, pl) = rising_df(if below { x } else { v + 1.0 }, n, 1.0);
    // [2, 10): ph/d plus the quotient's tail; below: q/ph times (1 − pl/ph).
    let (num, den) = if below { (q, ph) } else { (ph, d) };
    let r = num / den;
    let (tail, den) = if below {
        (pl, ph)
    } else {
        (fmaf(-r, d, ph) + pl, d)
    };
    let e = tail / den;
    if below {
        fmaf(-r, e, r)
    } else {
        r + e
    }
}
