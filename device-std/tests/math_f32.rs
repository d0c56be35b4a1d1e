//! `device_std::math`'s `f32` functions on the host — the same code the GPU runs —
//! against std's `f64` functions (the host C library, below 1 `f64` ulp: about
//! 2^-29 of an `f32` ulp) on a strided sweep of every `f32` bit pattern plus the
//! known hard cases, and their special values bit for bit.
//!
//! `MATH_SAMPLES_LOG2=N` sweeps 2^N inputs per function (default 18); the GPU
//! measures all 2^32 (`scripts/gpu-math.sh`). Errors are printed with
//! `--nocapture`.

use device_std::math;

/// The error of `got` in ulps of the `f32` nearest `want` (subnormal ulp 2^-149); 0
/// when both are NaN or the same infinity, infinite for any other NaN/∞ mismatch.
fn ulp_error(got: f32, want: f64) -> f64 {
    if want.is_nan() {
        return if got.is_nan() { 0.0 } else { f64::INFINITY };
    }
    let rounded = want as f32;
    if rounded.is_infinite() || got.is_infinite() || got.is_nan() {
        return if got == rounded { 0.0 } else { f64::INFINITY };
    }
    let a = want.abs();
    let e = if a == 0.0 {
        -126
    } else {
        (a.log2().floor() as i32).max(-126)
    };
    let ulp = 2f64.powi(e - 23);
    (got as f64 - want).abs() / ulp
}

fn samples() -> Vec<f32> {
    let log2: u32 = std::env::var("MATH_SAMPLES_LOG2")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(18);
    let n = 1u64 << log2;
    let step = (1u64 << 32) / n;
    let mut v: Vec<f32> = (0..n)
        .map(|i| f32::from_bits((i * step + (i * 2_654_435_761) % step) as u32))
        .collect();
    // Dense around 0, 1 and the reduction boundaries.
    for i in 0..4096u32 {
        for base in [
            0.0f32,
            1.0,
            -1.0,
            0.5,
            std::f32::consts::FRAC_PI_4,
            88.0,
            -87.0,
        ] {
            v.push(f32::from_bits(base.to_bits().wrapping_add(i)));
            v.push(f32::from_bits(base.to_bits().wrapping_sub(i)));
        }
    }
    v
}

struct Worst {
    err: f64,
    at: f32,
}

fn check_unary(name: &str, bound: f64, f: impl Fn(f32) -> f32, reference: impl Fn(f64) -> f64) {
    let mut worst = Worst { err: 0.0, at: 0.0 };
    for x in samples() {
        let e = ulp_error(f(x), reference(x as f64));
        if e > worst.err || e.is_nan() {
            worst = Worst { err: e, at: x };
        }
    }
    println!(
        "{name:<10} max {:.3} ulp at {:e} ({:#010x}), bound {bound}",
        worst.err,
        worst.at,
        worst.at.to_bits()
    );
    assert!(
        worst.err <= bound,
        "{name}: {:.3} ulp at {:e} ({:#010x}): got {:e}, want {:e}",
        worst.err,
        worst.at,
        worst.at.to_bits(),
        f(worst.at),
        reference(worst.at as f64)
    );
}

#[test]
fn unary_functions_are_within_cudas_bounds() {
    use std::f64::consts::PI;
    check_unary("expf", 1.0, math::expf, f64::exp);
    check_unary("exp2f", 1.0, math::exp2f, f64::exp2);
    check_unary("exp10f", 1.0, math::exp10f, |x| 10f64.powf(x));
    check_unary("expm1f", 1.0, math::expm1f, f64::exp_m1);
    check_unary("logf", 1.0, math::logf, f64::ln);
    check_unary("log2f", 1.0, math::log2f, f64::log2);
    check_unary("log10f", 1.0, math::log10f, f64::log10);
    check_unary("log1pf", 1.0, math::log1pf, f64::ln_1p);
    check_unary("sinf", 1.0, math::sinf, f64::sin);
    check_unary("cosf", 1.0, math::cosf, f64::cos);
    check_unary("tanf", 2.0, math::tanf, f64::tan);
    check_unary("sinpif", 1.0, math::sinpif, |x| sinpi(x, 0));
    check_unary("cospif", 1.0, math::cospif, |x| sinpi(x, 1));
    check_unary("asinf", 2.0, math::asinf, f64::asin);
    check_unary("acosf", 2.0, math::acosf, f64::acos);
    check_unary("atanf", 2.0, math::atanf, f64::atan);
    check_unary("sinhf", 3.0, math::sinhf, f64::sinh);
    check_unary("coshf", 2.0, math::coshf, f64::cosh);
    check_unary("tanhf", 2.0, math::tanhf, f64::tanh);
    check_unary("asinhf", 3.0, math::asinhf, f64::asinh);
    check_unary("acoshf", 4.0, math::acoshf, f64::acosh);
    check_unary("atanhf", 3.0, math::atanhf, f64::atanh);
    check_unary("erff", 2.0, math::erff, erf64);
    check_unary("erfcf", 4.0, math::erfcf, erfc64);
    check_unary("normcdff", 5.0, math::normcdff, |x| {
        0.5 * erfc64(-x * std::f64::consts::FRAC_1_SQRT_2)
    });
    check_unary("cbrtf", 1.0, math::cbrtf, f64::cbrt);
    check_unary("rcbrtf", 1.0, math::rcbrtf, |x| 1.0 / x.cbrt());
    check_unary("rsqrtf", 1.0, math::rsqrtf, |x| 1.0 / x.sqrt());
    check_unary("sqrtf", 0.5, math::sqrtf, f64::sqrt);
    let _ = PI;
}

/// The special functions added after the first set, against device-std's `f64` ones
/// (checked against mpmath by `math_f64_accuracy.py`).
#[test]
fn special_functions_are_within_cudas_bounds() {
    check_unary("erfcxf", 2.0, math::erfcxf, math::erfcx);
    check_unary(
        "cyl_bessel_i0f",
        4.0,
        math::cyl_bessel_i0f,
        math::cyl_bessel_i0,
    );
    check_unary(
        "cyl_bessel_i1f",
        4.0,
        math::cyl_bessel_i1f,
        math::cyl_bessel_i1,
    );
    assert_eq!(math::cyl_bessel_i0f(0.0), 1.0);
    assert_eq!(math::cyl_bessel_i0f(f32::NEG_INFINITY), f32::INFINITY);
    assert_eq!(math::cyl_bessel_i0f(92.0), f32::INFINITY);
    assert!(math::cyl_bessel_i0f(91.8).is_finite());
    assert_eq!(math::cyl_bessel_i1f(-0.0).to_bits(), (-0.0f32).to_bits());
    assert_eq!(math::cyl_bessel_i1f(f32::NEG_INFINITY), f32::NEG_INFINITY);
    assert!(math::cyl_bessel_i1f(f32::NAN).is_nan());
    check_unary("tgammaf", 5.0, math::tgammaf, math::tgamma);
    // lgammaf: CUDA bounds it outside [−10.001, −2.264] only (it has zeros inside).
    let mut worst = (0.0f64, 0.0f32);
    let extra = (0..1u32 << 16).flat_map(|i| {
        let x = -0.25 - (i as f32) * (25.0 / 65536.0);
        [x, 2.0 + (i as f32) * 2e-7, 1.0 - (i as f32) * 1e-7]
    });
    for x in samples().into_iter().chain(extra) {
        if (-10.001..=-2.264).contains(&x) {
            continue;
        }
        let e = ulp_error(math::lgammaf(x), math::lgamma(x as f64));
        if e > worst.0 || e.is_nan() {
            worst = (e, x);
        }
    }
    println!(
        "lgammaf    max {:.3} ulp at {:e} ({:#010x}), bound 6 outside [-10.001, -2.264]",
        worst.0,
        worst.1,
        worst.1.to_bits()
    );
    assert!(
        worst.0 <= 6.0,
        "lgammaf: {:.3} ulp at {:e}",
        worst.0,
        worst.1
    );
    assert_eq!(math::lgammaf(1.0).to_bits(), 0);
    assert_eq!(math::lgammaf(2.0).to_bits(), 0);
    assert_eq!(math::lgammaf(-4.0), f32::INFINITY);
    assert_eq!(math::lgammaf(f32::NEG_INFINITY), f32::INFINITY);
    assert_eq!(math::tgammaf(5.0), 24.0);
    assert_eq!(math::tgammaf(-0.0), f32::NEG_INFINITY);
    assert!(math::tgammaf(-3.0).is_nan());
    assert_eq!(math::tgammaf(35.1), f32::INFINITY);
    // Near the poles past −34, where the result is subnormal: rounded once (the GPU's
    // exhaustive run found 2866 ulp at −36.9999962 when e^(−lnΓ) was rounded first).
    for k in 30..46 {
        for i in 1..2000u32 {
            let x = f32::from_bits((-(k as f32)).to_bits() - i * 7);
            let e = ulp_error(math::tgammaf(x), math::tgamma(x as f64));
            assert!(e <= 5.0, "tgammaf({x:e}): {e:.2} ulp");
        }
    }
    let t = math::tgammaf(-36.5);
    assert!(t != 0.0 && t.abs() < f32::MIN_POSITIVE, "{t:e}");
    assert_eq!(math::erfcxf(0.0), 1.0);
    assert_eq!(math::erfcxf(f32::INFINITY), 0.0);
    assert_eq!(math::erfcxf(f32::NEG_INFINITY), f32::INFINITY);
    assert_eq!(math::erfcxf(-9.5), f32::INFINITY);
    assert!(math::erfcxf(f32::NAN).is_nan());
    // 1/(x√π) down to the subnormals: no underflow before the true value's.
    let big = math::erfcxf(f32::MAX);
    assert!(
        big > 0.0 && ulp_error(big, math::erfcx(f32::MAX as f64)) <= 2.0,
        "{big:e}"
    );
}

/// The inverse error functions against device-std's `f64` ones (checked against
/// mpmath by `math_f64_accuracy.py`, within 2^-48 relative: 2^-25 of an `f32` ulp).
#[test]
fn inverse_error_functions_are_within_cudas_bounds() {
    check_unary("erfinvf", 2.0, math::erfinvf, math::erfinv);
    check_unary("erfcinvf", 4.0, math::erfcinvf, math::erfcinv);
    check_unary("normcdfinvf", 5.0, math::normcdfinvf, math::normcdfinv);
    // Near the ends, where the argument's complement decides.
    let ends = (0..1 << 16).flat_map(|i: u32| {
        [
            f32::from_bits(1f32.to_bits() - 1 - i),
            f32::from_bits(2f32.to_bits() - 1 - i),
            f32::from_bits(1 + i * 997),
        ]
    });
    for x in ends {
        for (name, bound, f, r) in [
            (
                "erfinvf",
                2.0,
                math::erfinvf as fn(f32) -> f32,
                math::erfinv as fn(f64) -> f64,
            ),
            ("erfcinvf", 4.0, math::erfcinvf, math::erfcinv),
            ("normcdfinvf", 5.0, math::normcdfinvf, math::normcdfinv),
        ] {
            let e = ulp_error(f(x), r(x as f64));
            assert!(
                e <= bound,
                "{name}({x:e}): {e:.3} ulp: got {:e}, want {:e}",
                f(x),
                r(x as f64)
            );
        }
    }
}

/// sin(πx) (`shift` 0) or cos(πx) (`shift` 1) in f64 with an exact reduction (x is
/// an f32, so 2x and x - n/2 are exact).
fn sinpi(x: f64, shift: i32) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let n = (2.0 * x).round_ties_even();
    let r = x - n / 2.0;
    let q = (n.rem_euclid(4.0) as i32 + shift) % 4;
    let (s, c) = (
        (std::f64::consts::PI * r).sin(),
        (std::f64::consts::PI * r).cos(),
    );
    let v = match q {
        0 => s,
        1 => c,
        2 => -s,
        _ => -c,
    };
    if v == 0.0 {
        if shift == 0 {
            0.0f64.copysign(x)
        } else {
            0.0
        }
    } else {
        v
    }
}

/// A splitmix64 stream: the fixed-seed generator of the sampled binary tests.
struct SplitMix(u64);
impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn check_binary(
    name: &str,
    bound: f64,
    pairs: &[(f32, f32)],
    f: impl Fn(f32, f32) -> f32,
    reference: impl Fn(f64, f64) -> f64,
) {
    let (mut worst, mut at) = (0.0f64, (0.0f32, 0.0f32));
    for &(x, y) in pairs {
        let e = ulp_error(f(x, y), reference(x as f64, y as f64));
        if e > worst || e.is_nan() {
            (worst, at) = (e, (x, y));
        }
    }
    println!(
        "{name:<10} max {worst:.3} ulp at ({:e}, {:e}), bound {bound}",
        at.0, at.1
    );
    assert!(
        worst <= bound,
        "{name}: {worst:.3} ulp at ({:e}, {:e}) = ({:#010x}, {:#010x}): got {:e}",
        at.0,
        at.1,
        at.0.to_bits(),
        at.1.to_bits(),
        f(at.0, at.1)
    );
}

/// Random bit patterns, random values of moderate size, and pairs near 1.
fn pairs() -> Vec<(f32, f32)> {
    let mut g = SplitMix(0x5eed);
    let mut v = Vec::new();
    for _ in 0..200_000 {
        let r = g.next();
        v.push((f32::from_bits(r as u32), f32::from_bits((r >> 32) as u32)));
        let (a, b) = ((r as u32) >> 8, (r >> 40) as u32);
        let x = a as f32 / 16_777_216.0 * 64.0 - 32.0;
        let y = b as f32 / 16_777_216.0 * 64.0 - 32.0;
        v.push((x, y));
        v.push((1.0 + x / 1024.0, y * 64.0));
        v.push((x.abs(), (y * 8.0).round()));
    }
    v
}

#[test]
fn binary_functions_are_within_cudas_bounds() {
    let p = pairs();
    check_binary("powf", 1.0, &p, math::powf, f64::powf);
    check_binary("atan2f", 2.0, &p, math::atan2f, f64::atan2);
    check_binary("hypotf", 1.0, &p, math::hypotf, f64::hypot);
    check_binary("fmodf", 0.0, &p, math::fmodf, |x, y| x % y);
    check_binary("remainderf", 0.0, &p, math::remainderf, remainder);
    check_binary("fdimf", 0.5, &p, math::fdimf, |x, y| {
        if x.is_nan() || y.is_nan() {
            f64::NAN
        } else if x > y {
            x - y
        } else {
            0.0
        }
    });
}

/// IEEE remainder in f64 (exact for f32 operands): x − n·y, n = x/y rounded to even.
fn remainder(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() || x.is_infinite() || y == 0.0 {
        return f64::NAN;
    }
    if y.is_infinite() {
        return x;
    }
    let r = x % y; // exact, sign of x, |r| < |y|
    let ay = y.abs();
    let r = if 2.0 * r.abs() > ay || (2.0 * r.abs() == ay && ((x - r) / y).rem_euclid(2.0) == 1.0) {
        r - ay.copysign(r)
    } else {
        r
    };
    if r == 0.0 {
        0.0f64.copysign(x)
    } else {
        r
    }
}

/// Bits of `got` against `want`, NaN matching any NaN.
fn same(got: f32, want: f32) -> bool {
    (got.is_nan() && want.is_nan()) || got.to_bits() == want.to_bits()
}

/// A function's name, the function, and `(input, expected)` pairs.
type UnaryCases<'a> = (&'a str, fn(f32) -> f32, &'a [(f32, f32)]);
/// A function's name, the function, and `(x, y, expected)` triples.
type BinaryCases<'a> = (&'a str, fn(f32, f32) -> f32, &'a [(f32, f32, f32)]);

#[test]
fn special_values_follow_c99_and_cuda() {
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    let unary: &[UnaryCases] = &[
        (
            "erff",
            math::erff,
            &[
                (0.0, 0.0),
                (-0.0, -0.0),
                (inf, 1.0),
                (-inf, -1.0),
                (nan, nan),
            ],
        ),
        (
            "erfinvf",
            math::erfinvf,
            &[
                (0.0, 0.0),
                (-0.0, -0.0),
                (1.0, inf),
                (-1.0, -inf),
                (1.0000001, nan),
                (-2.0, nan),
                (inf, nan),
                (nan, nan),
            ],
        ),
        (
            "erfcinvf",
            math::erfcinvf,
            &[
                (1.0, 0.0),
                (0.0, inf),
                (-0.0, inf),
                (2.0, -inf),
                (-1e-30, nan),
                (2.0000002, nan),
                (inf, nan),
                (nan, nan),
            ],
        ),
        (
            "normcdfinvf",
            math::normcdfinvf,
            &[
                (0.5, 0.0),
                (0.0, -inf),
                (1.0, inf),
                (-1e-30, nan),
                (1.0000001, nan),
                (nan, nan),
            ],
        ),
        (
            "expf",
            math::expf,
            &[
                (0.0, 1.0),
                (-0.0, 1.0),
                (inf, inf),
                (-inf, 0.0),
                (nan, nan),
                (88.8, inf),
                (-104.0, 0.0),
                (-103.0, f32::from_bits(1)),
            ],
        ),
        (
            "exp2f",
            math::exp2f,
            &[
                (0.0, 1.0),
                (inf, inf),
                (-inf, 0.0),
                (128.0, inf),
                (-149.0, f32::from_bits(1)),
                (-150.0, 0.0),
                (10.0, 1024.0),
            ],
        ),
        (
            "exp10f",
            math::exp10f,
            &[
                (0.0, 1.0),
                (inf, inf),
                (-inf, 0.0),
                (1.0, 10.0),
                (2.0, 100.0),
                (39.0, inf),
            ],
        ),
        (
            "expm1f",
            math::expm1f,
            &[
                (0.0, 0.0),
                (-0.0, -0.0),
                (inf, inf),
                (-inf, -1.0),
                (nan, nan),
                (f32::from_bits(1), f32::from_bits(1)),
            ],
        ),
        (
            "logf",
            math::logf,
            &[
                (1.0, 0.0),
                (0.0, -inf),
                (-0.0, -inf),
                (-1.0, nan),
                (inf, inf),
                (-inf, nan),
                (nan, nan),
            ],
        ),
        (
            "log2f",
            math::log2f,
            &[
                (1.0, 0.0),
                (8.0, 3.0),
                (f32::from_bits(1), -149.0),
                (0.0, -inf),
                (inf, inf),
                (-2.0, nan),
            ],
        ),
        (
            "log10f",
            math::log10f,
            &[
                (1.0, 0.0),
                (10.0, 1.0),
                (1000.0, 3.0),
                (0.0, -inf),
                (inf, inf),
            ],
        ),
        (
            "log1pf",
            math::log1pf,
            &[
                (0.0, 0.0),
                (-0.0, -0.0),
                (-1.0, -inf),
                (-2.0, nan),
                (inf, inf),
                (f32::from_bits(1), f32::from_bits(1)),
            ],
        ),
        (
            "sinf",
            math::sinf,
            &[
                (0.0, 0.0),
                (-0.0, -0.0),
                (inf, nan),
                (-inf, nan),
                (nan, nan),
                (f32::from_bits(1), f32::from_bits(1)),
            ],
        ),
        (
            "cosf",
            math::cosf,
            &[(0.0, 1.0), (-0.0, 1.0), (inf, nan), (nan, nan)],
        ),
        ("tanf", math::tanf, &[(0.0, 0.0), (-0.0, -0.0), (inf, nan)]),
        (
            "sinpif",
            math::sinpif,
            &[
                (0.0, 0.0),
                (-0.0, -0.0),
                (1.0, 0.0),
                (-1.0, -0.0),
                (0.5, 1.0),
                (-0.5, -1.0),
                (1.0e30, 0.0),
                (inf, nan),
            ],
        ),
        (
            "cospif",
            math::cospif,
            &[
                (0.0, 1.0),
                (0.5, 0.0),
                (-0.5, 0.0),
                (1.0, -1.0),
                (16_777_215.0, -1.0),
                (1.0e30, 1.0),
                (inf, nan),
            ],
        ),
        (
            "asinf",
            math::asinf,
            &[
                (0.0, 0.0),
                (-0.0, -0.0),
                (1.0, std::f32::consts::FRAC_PI_2),
                (-1.0, -std::f32::consts::FRAC_PI_2),
                (1.5, nan),
            ],
        ),
        (
            "acosf",
            math::acosf,
            &[
                (1.0, 0.0),
                (-1.0, std::f32::consts::PI),
                (0.0, std::f32::consts::FRAC_PI_2),
                (-1.5, nan),
            ],
        ),
        (
            "atanf",
            math::atanf,
            &[
                (0.0, 0.0),
                (-0.0, -0.0),
                (inf, std::f32::consts::FRAC_PI_2),
                (-inf, -std::f32::consts::FRAC_PI_2),
                (nan, nan),
            ],
        ),
        (
            "sinhf",
            math::sinhf,
            &[
                (0.0, 0.0),
                (-0.0, -0.0),
                (inf, inf),
                (-inf, -inf),
                (90.0, inf),
                (nan, nan),
            ],
        ),
        (
            "coshf",
            math::coshf,
            &[
                (0.0, 1.0),
                (-0.0, 1.0),
                (inf, inf),
                (-inf, inf),
                (90.0, inf),
                (nan, nan),
            ],
        ),
        (
            "tanhf",
            math::tanhf,
            &[
                (0.0, 0.0),
                (-0.0, -0.0),
                (inf, 1.0),
                (-inf, -1.0),
                (nan, nan),
            ],
        ),
        (
            "asinhf",
            math::asinhf,
            &[
                (0.0, 0.0),
                (-0.0, -0.0),
                (inf, inf),
                (-inf, -inf),
                (nan, nan),
            ],
        ),
        (
            "acoshf",
            math::acoshf,
            &[(1.0, 0.0), (0.5, nan), (inf, inf), (nan, nan)],
        ),
        (
            "atanhf",
            math::atanhf,
            &[
                (0.0, 0.0),
                (-0.0, -0.0),
                (1.0, inf),
                (-1.0, -inf),
                (2.0, nan),
            ],
        ),
        (
            "cbrtf",
            math::cbrtf,
            &[
                (0.0, 0.0),
                (-0.0, -0.0),
                (27.0, 3.0),
                (-8.0, -2.0),
                (inf, inf),
                (-inf, -inf),
                (nan, nan),
            ],
        ),
        (
            "rcbrtf",
            math::rcbrtf,
            &[
                (0.0, inf),
                (-0.0, -inf),
                (8.0, 0.5),
                (inf, 0.0),
                (-inf, -0.0),
            ],
        ),
        (
            "rsqrtf",
            math::rsqrtf,
            &[
                (0.0, inf),
                (-0.0, -inf),
                (4.0, 0.5),
                (inf, 0.0),
                (-1.0, nan),
            ],
        ),
        (
            "roundf",
            math::roundf,
            &[
                (0.5, 1.0),
                (-0.5, -1.0),
                (2.5, 3.0),
                (-0.4, -0.0),
                (8_388_609.0, 8_388_609.0),
            ],
        ),
        (
            "rintf",
            math::rintf,
            &[(0.5, 0.0), (1.5, 2.0), (2.5, 2.0), (-0.5, -0.0)],
        ),
        (
            "logbf",
            math::logbf,
            &[
                (0.0, -inf),
                (inf, inf),
                (8.0, 3.0),
                (f32::from_bits(1), -149.0),
            ],
        ),
    ];
    for (name, f, cases) in unary {
        for &(x, want) in cases.iter() {
            let got = f(x);
            assert!(
                same(got, want),
                "{name}({x:e}) = {got:e} ({:#010x}), want {want:e}",
                got.to_bits()
            );
        }
    }
    let binary: &[BinaryCases] = &[
        (
            "powf",
            math::powf,
            &[
                (nan, 0.0, 1.0),
                (1.0, nan, 1.0),
                (-1.0, inf, 1.0),
                (-1.0, -inf, 1.0),
                (0.0, -3.0, inf),
                (-0.0, -3.0, -inf),
                (-0.0, -2.0, inf),
                (-0.0, 3.0, -0.0),
                (-0.0, 2.0, 0.0),
                (0.5, -inf, inf),
                (2.0, -inf, 0.0),
                (0.5, inf, 0.0),
                (2.0, inf, inf),
                (-inf, -3.0, -0.0),
                (-inf, -2.0, 0.0),
                (-inf, 3.0, -inf),
                (-inf, 2.0, inf),
                (inf, -1.0, 0.0),
                (inf, 0.5, inf),
                (-8.0, 1.0 / 3.0, nan),
                (-2.0, 3.0, -8.0),
                (2.0, 10.0, 1024.0),
                (2.0, 128.0, inf),
                (2.0, -149.0, f32::from_bits(1)),
                (2.0, -150.0, 0.0),
                (nan, 1.0, nan),
            ],
        ),
        (
            "atan2f",
            math::atan2f,
            &[
                (0.0, 0.0, 0.0),
                (-0.0, 0.0, -0.0),
                (0.0, -0.0, std::f32::consts::PI),
                (-0.0, -0.0, -std::f32::consts::PI),
                (1.0, 0.0, std::f32::consts::FRAC_PI_2),
                (inf, inf, std::f32::consts::FRAC_PI_4),
                (inf, -inf, 3.0 * std::f32::consts::FRAC_PI_4),
                (-1.0, -inf, -std::f32::consts::PI),
                (1.0, inf, 0.0),
                (nan, 1.0, nan),
            ],
        ),
        (
            "hypotf",
            math::hypotf,
            &[
                (inf, nan, inf),
                (nan, -inf, inf),
                (3.0, 4.0, 5.0),
                (0.0, -0.0, 0.0),
                (f32::MAX, f32::MAX, inf),
                (nan, 1.0, nan),
            ],
        ),
        (
            "fmodf",
            math::fmodf,
            &[
                (5.5, 2.0, 1.5),
                (-5.5, 2.0, -1.5),
                (inf, 1.0, nan),
                (1.0, 0.0, nan),
                (1.0, inf, 1.0),
                (-0.0, 1.0, -0.0),
                (f32::MAX, f32::from_bits(1), 0.0),
            ],
        ),
        (
            "remainderf",
            math::remainderf,
            &[
                (5.0, 2.0, 1.0),
                (7.0, 2.0, -1.0),
                (-5.0, 2.0, -1.0),
                (4.0, 2.0, 0.0),
                (-4.0, 2.0, -0.0),
                (1.0, inf, 1.0),
                (inf, 1.0, nan),
                (1.0, 0.0, nan),
            ],
        ),
    ];
    for (name, f, cases) in binary {
        for &(x, y, want) in cases.iter() {
            let got = f(x, y);
            assert!(
                same(got, want),
                "{name}({x:e}, {y:e}) = {got:e}, want {want:e}"
            );
        }
    }
    assert_eq!(math::remquof(7.0, 2.0), (-1.0, 4));
    assert_eq!(math::remquof(-7.0, 2.0), (1.0, -4));
    assert_eq!(math::frexpf(8.0), (0.5, 4));
    assert_eq!(math::frexpf(f32::from_bits(1)), (0.5, -148));
    assert_eq!(math::modff(-3.75), (-0.75, -3.0));
    assert_eq!(math::ldexpf(1.0, -149), f32::from_bits(1));
    assert_eq!(
        math::ldexpf(f32::from_bits(1), 276),
        f32::from_bits(0x7f00_0000)
    );
    assert_eq!(math::ilogbf(0.0), i32::MIN);
    assert_eq!(math::ilogbf(f32::from_bits(1)), -149);
    assert_eq!(math::nextafterf(1.0, 2.0), f32::from_bits(0x3f80_0001));
    assert_eq!(math::nextafterf(0.0, -1.0), -f32::from_bits(1));
    assert_eq!(math::powif(2.0, -3), 0.125);
    assert_eq!(math::powif(-3.0, 3), -27.0);
}

/// The C library's `erf` and `erfc` (glibc: below 1 `f64` ulp), the reference of
/// `erff`/`erfcf`; std has none.
fn erf64(x: f64) -> f64 {
    extern "C" {
        fn erf(x: f64) -> f64;
    }
    // SAFETY: a pure C function of a double.
    unsafe { erf(x) }
}

fn erfc64(x: f64) -> f64 {
    extern "C" {
        fn erfc(x: f64) -> f64;
    }
    // SAFETY: a pure C function of a double.
    unsafe { erfc(x) }
}

/// `FloatMath` maps each std name to the CUDA-named function (called by path: on the
/// host std's inherent methods would win), and its own formulas follow std's.
#[test]
fn float_math_methods_are_the_cuda_functions_with_stds_semantics() {
    use device_std::math::FloatMath;
    let xs = [0.3f32, -1.7, 2.5, -2.5, 100.25, 1.0e-3, 7.0, -0.0];
    for &x in &xs {
        let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        assert!(same(FloatMath::sin(x), math::sinf(x)));
        assert!(same(FloatMath::cos(x), math::cosf(x)));
        assert!(same(FloatMath::exp_m1(x), math::expm1f(x)));
        assert!(same(FloatMath::ln(x), math::logf(x)));
        assert!(same(FloatMath::ln_1p(x), math::log1pf(x)));
        assert!(same(FloatMath::powf(x, 1.5), math::powf(x, 1.5)));
        assert!(same(FloatMath::atan2(x, 2.0), math::atan2f(x, 2.0)));
        assert!(same(FloatMath::hypot(x, 3.0), math::hypotf(x, 3.0)));
        let (s, c) = FloatMath::sin_cos(x);
        assert!(
            same(s, math::sinf(x)) && same(c, math::cosf(x)),
            "sin_cos({x})"
        );
        // Exact ones agree with std bit for bit.
        assert_eq!(FloatMath::floor(x), x.floor());
        assert_eq!(
            FloatMath::round(x).to_bits(),
            x.round().to_bits(),
            "round({x})"
        );
        assert_eq!(FloatMath::round_ties_even(x), x.round_ties_even());
        assert_eq!(FloatMath::trunc(x).to_bits(), x.trunc().to_bits());
        assert_eq!(FloatMath::fract(x).to_bits(), x.fract().to_bits());
        assert_eq!(FloatMath::sqrt(x.abs()), x.abs().sqrt());
        assert_eq!(FloatMath::mul_add(x, 3.0, 0.1), x.mul_add(3.0, 0.1));
        for y in [2.0f32, -3.0, 0.75] {
            assert_eq!(
                FloatMath::rem_euclid(x, y),
                x.rem_euclid(y),
                "rem_euclid({x}, {y})"
            );
            assert_eq!(
                FloatMath::div_euclid(x, y),
                x.div_euclid(y),
                "div_euclid({x}, {y})"
            );
        }
        assert_eq!(FloatMath::powi(x, 3), math::powif(x, 3));
    }
    let d = 0.7f64;
    assert_eq!(FloatMath::sin(d), math::sin(d));
    assert_eq!(FloatMath::ln_1p(d), math::log1p(d));
    assert_eq!(
        FloatMath::rem_euclid(-7.5f64, 2.0),
        (-7.5f64).rem_euclid(2.0)
    );
    assert_eq!(
        FloatMath::log(8.0f32, 2.0),
        math::logf(8.0) / math::logf(2.0)
    );
}

#[test]
fn norms_of_any_length_and_small_conversions() {
    use math::{llrintf, llroundf, nanf, normf, rnormf, scalblnf};
    // Against the f64 sum, on random vectors of several lengths and scales.
    let mut seed = 0x1234_5678u32;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    for len in [1usize, 2, 3, 7, 64, 1000] {
        for scale in [1e-40f32, 1e-20, 1.0, 1e20, 1e35] {
            let a: Vec<f32> = (0..len)
                .map(|_| (next() as f32 / u32::MAX as f32 - 0.5) * scale)
                .collect();
            let exact = a
                .iter()
                .map(|&v| (v as f64) * (v as f64))
                .sum::<f64>()
                .sqrt();
            let bound = 1.0 + len as f64 / 64.0;
            let e = ulp_error(normf(&a), exact);
            assert!(e <= bound, "normf len {len} scale {scale:e}: {e:.2} ulp");
            let e = ulp_error(rnormf(&a), 1.0 / exact);
            assert!(
                e <= bound + 0.5,
                "rnormf len {len} scale {scale:e}: {e:.2} ulp"
            );
        }
    }
    assert_eq!(normf(&[3.0, 4.0]), 5.0);
    assert_eq!(normf(&[]), 0.0);
    assert_eq!(rnormf(&[0.0, -0.0]), f32::INFINITY);
    assert_eq!(normf(&[f32::NAN, f32::NEG_INFINITY]), f32::INFINITY);
    assert!(normf(&[1.0, f32::NAN]).is_nan());
    assert_eq!(rnormf(&[1.0, f32::INFINITY]), 0.0);
    assert_eq!(normf(&[3e38, 3e38]), f32::INFINITY);
    assert_eq!(normf(&[2e38, 1e38]), 2.236_068e38);
    assert_eq!(llrintf(2.5), 2);
    assert_eq!(llroundf(-2.5), -3);
    assert_eq!(scalblnf(1.0, 1 << 40), f32::INFINITY);
    assert_eq!(scalblnf(3.0, -2), 0.75);
    assert_eq!(nanf("").to_bits(), 0x7fc0_0000);
    assert_eq!(nanf("5").to_bits(), 0x7fc0_0005);
    assert_eq!(nanf("x1").to_bits(), 0x7fc0_0000);
}
