//! The Bessel functions of `device_std::math` on the host (the code the GPU runs):
//! `f32` against the `libm` crate's `f64` ones (absolute errors near 1e-17, so below a
//! thousandth of an `f32` ulp even next to the zeros) on dense sweeps of `[−60, 60]`,
//! sparse ones of the whole range and the zeros' neighbourhoods; `f64` against `libm`
//! in absolute terms (its relative error at the zeros is too large for an ulp measure:
//! `math_f64_accuracy.py` measures ulps against mpmath); special values bit for bit.
//!
//! CUDA's bounds (CUDA C++ Programming Guide, "Mathematical Functions"): `j0f`, `j1f`,
//! `y0f`, `y1f` 9 ulp for `|x| < 8`, else 2.2e-6 absolute; `jnf` 2.2e-6 absolute for
//! n = 128; `ynf` ⌈2 + 2.5n⌉ ulp for `|x| < n`, else 2.2e-6 absolute; `f64`: 7 ulp
//! below 8, else 5e-12 absolute.

// `!(e <= worst)` takes a NaN error as the worst on purpose.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use device_std::math;

/// A function under test and its `f64` reference.
type Case = (&'static str, fn(f32) -> f32, fn(f64) -> f64);

/// `|got − want|` in ulps of the `f32` nearest `want`.
fn ulps32(got: f32, want: f64) -> f64 {
    if want.is_nan() || got.is_nan() {
        return if want.is_nan() && got.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    if (want as f32).is_infinite() || got.is_infinite() {
        return if got == want as f32 {
            0.0
        } else {
            f64::INFINITY
        };
    }
    let e = if want == 0.0 {
        -126
    } else {
        (want.abs().log2().floor() as i32).max(-126)
    };
    (got as f64 - want).abs() / 2f64.powi(e - 23)
}

/// Inputs: dense on [−60, 60], every 2^13th bit pattern, and 2^12 floats either side of
/// each zero below 30.
fn inputs() -> Vec<f32> {
    let mut v: Vec<f32> = (0..1 << 18)
        .map(|i| -60.0 + i as f32 * (120.0 / 262144.0))
        .collect();
    v.extend(
        (0..1u32 << 19).map(|i| f32::from_bits(i << 13 | i.wrapping_mul(2_654_435_761) >> 19)),
    );
    let zeros = [
        0.893_576_97,
        2.197_141_3,
        2.404_825_6,
        3.831_706,
        3.957_678_4,
        5.429_681,
        5.520_078,
        7.015_586_7,
        7.086_051,
        8.596_006,
        8.653_728,
        10.173_468,
        11.791_534,
        29.046_829,
    ];
    for z in zeros {
        let b = (z as f32).to_bits();
        v.extend((0..4096).flat_map(|i| [f32::from_bits(b + i), f32::from_bits(b - i)]));
    }
    v
}

struct Worst {
    ulp: f64,
    ulp_at: f32,
    abs: f64,
    abs_at: f32,
}

/// The largest ulp error for `|x| < 8` and absolute error above, of `ours` against
/// `reference`, over `inputs()`.
fn measure(ours: impl Fn(f32) -> f32, reference: impl Fn(f64) -> f64) -> Worst {
    let mut w = Worst {
        ulp: 0.0,
        ulp_at: 0.0,
        abs: 0.0,
        abs_at: 0.0,
    };
    for x in inputs() {
        let (got, want) = (ours(x), reference(x as f64));
        if x.abs() < 8.0 {
            let e = ulps32(got, want);
            if !(e <= w.ulp) {
                (w.ulp, w.ulp_at) = (e, x);
            }
        } else {
            let e = if want.is_nan() && got.is_nan() {
                0.0
            } else {
                (got as f64 - want).abs()
            };
            if !(e <= w.abs) {
                (w.abs, w.abs_at) = (e, x);
            }
        }
    }
    w
}

#[test]
fn order_0_and_1_within_cudas_bounds() {
    let cases: [Case; 4] = [
        ("j0f", math::j0f, libm::j0),
        ("j1f", math::j1f, libm::j1),
        ("y0f", math::y0f, |x| {
            if x < 0.0 {
                f64::NAN
            } else {
                libm::y0(x)
            }
        }),
        ("y1f", math::y1f, |x| {
            if x < 0.0 {
                f64::NAN
            } else {
                libm::y1(x)
            }
        }),
    ];
    for (name, ours, reference) in cases {
        let w = measure(ours, reference);
        println!(
            "{name}: {:.3} ulp at {:e} ({:#010x}) below 8; {:.3e} absolute at {:e} above",
            w.ulp,
            w.ulp_at,
            w.ulp_at.to_bits(),
            w.abs,
            w.abs_at
        );
        assert!(w.ulp <= 9.0, "{name}: {} ulp at {:e}", w.ulp, w.ulp_at);
        assert!(
            w.abs <= 2.2e-6,
            "{name}: {:e} absolute at {:e}",
            w.abs,
            w.abs_at
        );
    }
}

/// `jnf`/`ynf` against `libm::jn`/`yn` for the orders CUDA's bounds name (2 to 128):
/// `jnf` within 2.2e-6 absolute everywhere and, for information, its ulp error where
/// `|x| < n`; `ynf` within ⌈2 + 2.5n⌉ ulp for `0 < x < n`, else 2.2e-6 absolute.
#[test]
fn order_n_within_cudas_bounds() {
    for n in [2, 3, 5, 10, 20, 50, 128] {
        let bound = (2.0 + 2.5 * n as f64).ceil();
        let (mut j_abs, mut y_ulp, mut y_abs) = (0.0f64, 0.0f64, 0.0f64);
        let xs = (1..40_000).map(|i| i as f32 * (300.0 / 40_000.0)).chain(
            (0..4096).map(|i| f32::from_bits(0x2000_0000 + i * 0x0008_0000)), // 1e-19 to ~300
        );
        for x in xs {
            for x in [x, -x] {
                let (got, want) = (math::jnf(n, x), libm::jn(n, x as f64));
                j_abs = j_abs.max((got as f64 - want).abs());
            }
            let (got, want) = (math::ynf(n, x), libm::yn(n, x as f64));
            if x < n as f32 {
                y_ulp = y_ulp.max(ulps32(got, want));
            } else {
                y_abs = y_abs.max((got as f64 - want).abs());
            }
        }
        println!("n = {n}: jnf {j_abs:.2e} absolute; ynf {y_ulp:.2} ulp below n, {y_abs:.2e} absolute above");
        assert!(j_abs <= 2.2e-6, "jnf({n}, ·): {j_abs:e} absolute");
        assert!(
            y_ulp <= bound,
            "ynf({n}, ·): {y_ulp} ulp below n (bound {bound})"
        );
        assert!(y_abs <= 2.2e-6, "ynf({n}, ·): {y_abs:e} absolute");
    }
}

#[test]
fn special_values_are_cudas() {
    let bits = |v: f32| v.to_bits();
    // J0: even, 1 at 0, +0 at ±∞.
    assert_eq!(math::j0f(0.0), 1.0);
    assert_eq!(math::j0f(-0.0), 1.0);
    assert_eq!(bits(math::j0f(f32::INFINITY)), 0);
    assert_eq!(bits(math::j0f(f32::NEG_INFINITY)), 0);
    assert_eq!(math::j0f(-3.7), math::j0f(3.7));
    // J1: odd, signed zeros kept.
    assert_eq!(bits(math::j1f(0.0)), 0);
    assert_eq!(bits(math::j1f(-0.0)), bits(-0.0));
    assert_eq!(math::j1f(-7.0), -math::j1f(7.0));
    assert_eq!(math::j1f(1e-30), 5e-31);
    // Y0, Y1: −∞ at ±0, NaN below 0, +0 at +∞.
    for f in [math::y0f, math::y1f] {
        assert_eq!(f(0.0), f32::NEG_INFINITY);
        assert_eq!(f(-0.0), f32::NEG_INFINITY);
        assert!(f(-1.0).is_nan());
        assert!(f(f32::NEG_INFINITY).is_nan());
        assert_eq!(bits(f(f32::INFINITY)), 0);
    }
    assert_eq!(math::y1f(1e-39), f32::NEG_INFINITY); // −2/(π·1e-39) overflows
    assert!(math::y1f(3e-39).is_finite());
    // Order n: NaN for n < 0 (as CUDA), reflection in x, ±0 at 0.
    assert!(math::jnf(-2, 1.0).is_nan());
    assert!(math::ynf(-2, 1.0).is_nan());
    assert_eq!(math::jnf(3, -2.5), -math::jnf(3, 2.5));
    assert_eq!(math::jnf(4, -2.5), math::jnf(4, 2.5));
    assert_eq!(bits(math::jnf(3, 0.0)), 0);
    assert_eq!(math::jnf(1, 2.0), math::j1f(2.0));
    assert_eq!(math::ynf(0, 2.0), math::y0f(2.0));
    assert_eq!(math::ynf(60, 1.0), f32::NEG_INFINITY);
    assert_eq!(math::ynf(3, 0.0), f32::NEG_INFINITY);
    assert!(math::ynf(3, -1.0).is_nan());
    assert_eq!(bits(math::jnf(7, 1e-30)), 0); // (x/2)^7/7! underflows
    for f in [math::j0f, math::j1f, math::y0f, math::y1f] {
        assert!(f(f32::NAN).is_nan());
    }
    assert!(math::jnf(5, f32::NAN).is_nan() && math::ynf(5, f32::NAN).is_nan());
    // f64: the same rules.
    assert_eq!(math::j0(0.0), 1.0);
    assert_eq!(math::j1(-0.0).to_bits(), (-0.0f64).to_bits());
    assert_eq!(math::y0(0.0), f64::NEG_INFINITY);
    assert!(math::y1(-1.0).is_nan());
    assert_eq!(math::y0(f64::INFINITY).to_bits(), 0);
    assert!(math::jn(-1, 1.0).is_nan());
    assert_eq!(math::jn(3, -2.5), -math::jn(3, 2.5));
    assert_eq!(math::yn(200, 1.0), f64::NEG_INFINITY);
}

/// The `f64` functions against `libm` where its own error is small: absolutely
/// (CUDA: 5e-12 above 8; here far less everywhere).
#[test]
fn f64_agrees_with_libm_absolutely() {
    let mut worst = 0.0f64;
    for i in 0..200_000 {
        let x = -60.0 + i as f64 * (120.0 / 200_000.0) + 1e-7;
        for (ours, reference) in [
            (math::j0(x), libm::j0(x)),
            (math::j1(x), libm::j1(x)),
            (math::jn(4, x), libm::jn(4, x)),
        ] {
            worst = worst.max((ours - reference).abs());
        }
        if x > 0.0 {
            for (ours, reference) in [
                (math::y0(x), libm::y0(x)),
                (math::y1(x), libm::y1(x)),
                (math::yn(3, x), libm::yn(3, x)),
            ] {
                let scale = reference.abs().max(1.0);
                worst = worst.max((ours - reference).abs() / scale);
            }
        }
    }
    println!("f64: {worst:.2e} largest absolute difference to libm");
    assert!(worst < 1e-14, "{worst:e}");
}
