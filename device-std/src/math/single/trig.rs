//! Trigonometric functions in `f32`: `sinf`, `cosf`, `sincosf`, `tanf`, `sinpif`,
//! `cospif`, `sincospif`, with the reduction by π/2 (Cody–Waite, Payne–Hanek for huge
//! arguments) and the sine and cosine kernels.

use super::arith::{fast_two_sum, mul_dd, poly};
use super::consts::{PI, PIO2, PIO2_LO, PI_LO};
use crate::math::prim::{fmaf, rintf as p_rint};

/// The third term of π/2 = PIO2 + PIO2_LO + PIO2_LO2 (Cody–Waite reduction).
const PIO2_LO2: f32 = -1.715_124_5e-15;
const TWO_OVER_PI: f32 = f32::from_bits(0x3f22_f983);
/// Above this, the functions take the Payne–Hanek reduction (out of line).
const CODY_WAITE_MAX: f32 = 131_072.0;

// SIN_Q: sin(r) = r + r^3 q(r^2), |r| <= pi/4; relative error 2^-32.5.
const SIN_Q: [f32; 4] = [
    -0.166_666_67,
    0.008_333_379,
    -0.000_198_530_25,
    2.831_717_9e-6,
];
// COS_Q: cos(r) = 1 - r^2/2 + r^4 q(r^2), |r| <= pi/4; absolute error 2^-37.2.
const COS_Q: [f32; 4] = [
    0.041_666_668,
    -0.001_388_898_1,
    2.482_244_8e-5,
    -2.891_816_6e-7,
];
// TAN_Q: tan(r) = r + r^3 q(r^2), |r| <= pi/4; relative error 2^-29.2.
const TAN_Q: [f32; 7] = [
    0.333_333_52,
    0.133_325_77,
    0.054_069_86,
    0.021_230_739,
    0.010_968_48,
    -7.741_393e-5,
    0.004_458_022_3,
];

// SINPI_Q: sin(pi r) = pi r + r^3 q(r^2), |r| <= 1/4; relative error 2^-33.4.
const SINPI_Q: [f32; 4] = [-5.167_712_7, 2.550_154_7, -0.598_982_04, 0.079_174_37];
// COSPI_Q: cos(pi r) = 1 + r^2 q(r^2), |r| <= 1/4; relative error 2^-31.6.
const COSPI_Q: [f32; 5] = [
    -4.934_802,
    4.058_690_5,
    -1.334_256_8,
    0.216_729_5,
    0.093_387_47,
];

/// The bits of 2/π, most significant first, after one zero word (so the
/// Payne–Hanek window may start up to 32 bits before the binary point).
static TWO_OVER_PI_BITS: [u32; 9] = [
    0,
    0xa2f9_836e,
    0x4e44_1529,
    0xfc27_57d1,
    0xf534_ddc0,
    0xdb62_9599,
    0x3c43_9041,
    0xfe51_63ab,
    0xdebb_c561,
];

/// The Cody–Waite reduction for `|x| <= 2^17`: `x = j·π/2 + (rh + rl)`, `j` in the low
/// bits of the returned word (wrapping), `|rh| <= π/4`. Larger `x` take [`payne_hanek`].
#[inline(always)]
fn reduce_pio2_fast(x: f32) -> (u32, f32, f32) {
    const MAGIC: f32 = 12_582_912.0; // 1.5·2^23
    let big = fmaf(x, TWO_OVER_PI, MAGIC);
    let j = big - MAGIC;
    let r1 = fmaf(-j, PIO2, x); // exact
                                // r1 − j·PIO2_LO as a sum with its error (th + tl = j·PIO2_LO exactly): near a
                                // multiple of π/2 r1 and th cancel, and their difference is exact.
    let th = j * PIO2_LO;
    let tl = fmaf(j, PIO2_LO, -th);
    let rh = r1 - th;
    let rl = ((r1 - rh) - th) - fmaf(j, PIO2_LO2, tl);
    (big.to_bits(), rh, rl)
}

/// `(sin, cos)` of `rh + rl` from [`reduce_pio2_fast`]: one FMA rounding each after
/// the polynomials (`(rh + rl)²` taken to first order in `rl`).
#[inline(always)]
fn sincos_lean(rh: f32, rl: f32) -> (f32, f32) {
    let r2 = fmaf(rh, rh, rh * (rl + rl));
    let s = rh + fmaf(r2 * rh, poly(r2, &SIN_Q), rl);
    let c = fmaf(r2, fmaf(r2, poly(r2, &COS_Q), -0.5), 1.0);
    (s, c)
}

/// `v` negated when bit 1 of `q` is set (`q` as [`reduce_pio2_fast`] gives it).
#[inline(always)]
fn negate_if_bit1(v: f32, q: u32) -> f32 {
    f32::from_bits(v.to_bits() ^ ((q & 2) << 30))
}

/// The reduction of a huge finite `x` with the bits of 2/π (Payne–Hanek).
#[inline(never)]
fn payne_hanek(x: f32) -> (i32, f32, f32) {
    let bits = x.to_bits();
    let m = ((bits & 0x007f_ffff) | 0x0080_0000) as u128; // x = m · 2^(E)
    let exp = ((bits >> 23) & 0xff) as i32 - 150; // E, at least -6 here
                                                  // Bits of 2/π with weight 2^-(p) for p >= E - 1 matter modulo 4; take 96 from there.
    let start = (exp - 1 - 1 + 32) as u32; // index in TWO_OVER_PI_BITS of weight 2^-(E-1)
    let w = (start / 32) as usize;
    let s = start % 32;
    let word = |i: usize| TWO_OVER_PI_BITS[(w + i).min(TWO_OVER_PI_BITS.len() - 1)] as u128;
    let window = (word(0) << 96) | (word(1) << 64) | (word(2) << 32) | word(3);
    let b = (window << s) >> 32; // 96 bits: weights 2^-(E-1) .. 2^-(E+94)
    let b = b & ((1u128 << 96) - 1);
    // x·2/π = m·b·2^(E - (E - 1) - 95) = m·b·2^-94: bits 94, 95 the quadrant.
    let p = m * b;
    let q = ((p >> 94) & 3) as i32;
    let frac = (p >> 30) as u64; // the fraction's top 64 bits
    let fs = frac as i64; // in [-1/2, 1/2) turns (two's complement)
    let q = q + (frac >> 63) as i32;
    let hi = fs as f32;
    let lo = fs.wrapping_sub(hi as i64) as f32;
    // r = (hi + lo)·2^-64·π/2
    const PIO2_S: f32 = f32::from_bits(0x1fc9_0fdb); // π/2·2^-64
    const PIO2_S_LO: f32 = f32::from_bits(0x933b_bd2e);
    let (rh, rl) = mul_dd(hi, lo, PIO2_S, PIO2_S_LO);
    let (rh, rl) = fast_two_sum(rh, rl);
    if x < 0.0 {
        (-q, -rh, -rl)
    } else {
        (q, rh, rl)
    }
}

/// `sin(rh + rl)` for `|rh| <= π/4`.
#[inline(always)]
fn sin_kernel(rh: f32, rl: f32) -> f32 {
    let r2 = rh * rh;
    rh + fmaf(r2 * rh, poly(r2, &SIN_Q), rl)
}

/// `cos(rh + rl)` for `|rh| <= π/4`.
#[inline(always)]
fn cos_kernel(rh: f32, rl: f32) -> f32 {
    let r2 = rh * rh;
    let e2 = fmaf(rh, rh, -r2);
    let hc = 0.5 * r2;
    let w = 1.0 - hc;
    let err = (1.0 - w) - hc;
    w + (fmaf(r2 * r2, poly(r2, &COS_Q), err) - fmaf(0.5, e2, rh * rl))
}

/// `sin x`, `x` in radians (CUDA `sinf`, bound 2 ulp), with the exact reduction of
/// every finite `x` (Payne–Hanek above 2^17). Every target.
#[inline]
pub fn sinf(x: f32) -> f32 {
    if !(x.abs() <= CODY_WAITE_MAX) {
        return sincos_slow(x).0;
    }
    // Both kernels, then a select: cheaper than a branch that diverges by quadrant.
    let (q, rh, rl) = reduce_pio2_fast(x);
    let (s, c) = sincos_lean(rh, rl);
    let v = negate_if_bit1(if q & 1 != 0 { c } else { s }, q);
    if x == 0.0 {
        x // the reduction's sums turn −0 into +0
    } else {
        v
    }
}

/// `cos x`, `x` in radians (CUDA `cosf`, bound 2 ulp). Every target.
#[inline]
pub fn cosf(x: f32) -> f32 {
    if !(x.abs() <= CODY_WAITE_MAX) {
        return sincos_slow(x).1;
    }
    let (q, rh, rl) = reduce_pio2_fast(x);
    let (s, c) = sincos_lean(rh, rl);
    negate_if_bit1(if q & 1 != 0 { s } else { c }, q.wrapping_add(1))
}

/// `(sin x, cos x)` for `|x| > 2^17` or non-finite `x`, out of line: the Payne–Hanek
/// reduction and the head-and-tail kernels.
#[inline(never)]
fn sincos_slow(x: f32) -> (f32, f32) {
    if !x.is_finite() {
        return (x - x, x - x);
    }
    let (q, rh, rl) = payne_hanek(x);
    let s = sin_kernel(rh, rl);
    let c = cos_kernel(rh, rl);
    let (s, c) = if q & 1 != 0 { (c, -s) } else { (s, c) };
    if q & 2 != 0 {
        (-s, -c)
    } else {
        (s, c)
    }
}

/// `(sin x, cos x)` from one argument reduction (CUDA `sincosf`, bound 2 ulp each).
/// Every target.
#[inline]
pub fn sincosf(x: f32) -> (f32, f32) {
    if !(x.abs() <= CODY_WAITE_MAX) {
        return sincos_slow(x);
    }
    let (q, rh, rl) = reduce_pio2_fast(x);
    let (s, c) = sincos_lean(rh, rl);
    let (s, c) = if q & 1 != 0 { (c, -s) } else { (s, c) };
    let s = if x == 0.0 { x } else { negate_if_bit1(s, q) };
    (s, negate_if_bit1(c, q))
}

/// `tan x`, `x` in radians (CUDA `tanf`, bound 4 ulp). Every target.
#[inline]
pub fn tanf(x: f32) -> f32 {
    if !(x.abs() <= CODY_WAITE_MAX) {
        return tan_slow(x);
    }
    let (q, rh, rl) = reduce_pio2_fast(x);
    if x == 0.0 {
        x // −0 stays −0
    } else {
        tan_quadrant(q & 1 != 0, rh, rl)
    }
}

/// `tan(rh + rl)`, or `−1/tan(rh + rl)` in an odd quadrant, for `|rh| <= π/4`.
#[inline(always)]
fn tan_quadrant(odd: bool, rh: f32, rl: f32) -> f32 {
    let r2 = rh * rh;
    let t = rh + fmaf(r2 * rh, poly(r2, &TAN_Q), rl * (1.0 + r2));
    if odd {
        -1.0 / t
    } else {
        t
    }
}

/// [`tanf`] for `|x| > 2^17` or non-finite `x`, out of line (Payne–Hanek).
#[inline(never)]
fn tan_slow(x: f32) -> f32 {
    if !x.is_finite() {
        return x - x;
    }
    let (q, rh, rl) = payne_hanek(x);
    tan_quadrant(q & 1 != 0, rh, rl)
}

/// `sin(πx)`, exact reduction for every `x` (CUDA `sinpif`, bound 1 ulp); odd, so
/// `sinpif(-0) = -0`, and +0 at positive integers. Every target.
#[inline]
pub fn sinpif(x: f32) -> f32 {
    sincospif(x).0
}

/// `cos(πx)` (CUDA `cospif`, bound 1 ulp); +0 at half-integers, ±1 at integers. Every
/// target.
#[inline]
pub fn cospif(x: f32) -> f32 {
    sincospif(x).1
}

/// `(sin πx, cos πx)` (CUDA `sincospif`, bound 1 ulp each). Every target.
#[inline]
pub fn sincospif(x: f32) -> (f32, f32) {
    if !(x.abs() >= 1.0e-30 && x.abs() < 2_097_152.0) {
        return sincospi_slow(x);
    }
    // x = n/2 + r exactly, |r| <= 1/4 (n by the 1.5·2^23 trick: MAGIC + 2x < 2^24).
    const MAGIC: f32 = 12_582_912.0;
    let big = (x + x) + MAGIC;
    let n = big - MAGIC;
    let q = big.to_bits();
    let r = fmaf(n, -0.5, x);
    let r2 = r * r;
    // sin(πr) = πr + r³q(r²) with π as head and tail, rounded once.
    let s = fmaf(r, PI, r * fmaf(r2, poly(r2, &SINPI_Q), PI_LO));
    let c = fmaf(r2, poly(r2, &COSPI_Q), 1.0);
    let (s, c) = if q & 1 != 0 { (c, -s) } else { (s, c) };
    let flip = (q & 2) << 30;
    let (s, c) = (
        f32::from_bits(s.to_bits() ^ flip),
        f32::from_bits(c.to_bits() ^ flip),
    );
    // Exact zeros: sin at integers takes the sign of x, cos at half-integers is +0.
    let s = if s == 0.0 { 0.0f32.copysign(x) } else { s };
    let c = if c == 0.0 { 0.0 } else { c };
    (s, c)
}

/// [`sincospif`] for zero, tiny, huge or non-finite `x`, out of line.
#[inline(never)]
fn sincospi_slow(x: f32) -> (f32, f32) {
    if !x.is_finite() {
        return (x - x, x - x);
    }
    if x.abs() >= 8_388_608.0 {
        // |x| >= 2^23: an integer, odd only below 2^24.
        let odd = x.abs() < 16_777_216.0 && (x as i32) & 1 != 0;
        return (0.0f32.copysign(x), if odd { -1.0 } else { 1.0 });
    }
    if x == 0.0 {
        return (x, 1.0);
    }
    if x.abs() < 1.0e-30 {
        // πx rounded once, scaled out of the subnormal range and back.
        let y = x * f32::from_bits(0x5f80_0000); // 2^64
        let ph = y * PI;
        let pl = fmaf(y, PI, -ph) + y * PI_LO;
        return ((ph + pl) * f32::from_bits(0x1f80_0000), 1.0);
    }
    // x = n/2 + r exactly, |r| <= 1/4.
    let n = p_rint(x + x);
    let r = fmaf(n, -0.5, x);
    let q = (n as i32) & 3;
    let r2 = r * r;
    // sin(πr) = πr + r³q(r²), πr as head and tail.
    let ph = r * PI;
    let pl = fmaf(r, PI, -ph) + r * PI_LO;
    let s = ph + fmaf(r2 * r, poly(r2, &SINPI_Q), pl);
    let c = fmaf(r2, poly(r2, &COSPI_Q), 1.0);
    let (s, c) = if q & 1 != 0 { (c, -s) } else { (s, c) };
    let (s, c) = if q & 2 != 0 { (-s, -c) } else { (s, c) };
    // Exact zeros: sin at integers takes the sign of x, cos at half-integers is +0.
    let s = if s == 0.0 { 0.0f32.copysign(x) } else { s };
    let c = if c == 0.0 { 0.0 } else { c };
    (s, c)
}
