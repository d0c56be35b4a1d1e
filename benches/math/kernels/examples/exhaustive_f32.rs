//! Every one of the 2^32 inputs of an `f32` function on the host, against the host's
//! `f64` function of the same input (glibc's, within 1 `f64` ulp: about 2^-29 of an
//! `f32` ulp), in ulps of the exact value as `benches/math/reference.cu` counts them.
//! The host computes the GPU's bits (the emulator-identity hashes check that), so this
//! measures the GPU's accuracy before a GPU run; the GPU run stays the record.
//!
//! `cargo run --release -p math-bench-kernels --example exhaustive_f32 -- NAME...`
//! (`all` for every function below); one line per function: max ulp, an input where it
//! occurs, and how many results are not the correctly rounded one.

use device_std::math as m;
use std::f64::consts::PI;

// glibc's libm, which std links on Linux.
extern "C" {
    fn erf(x: f64) -> f64;
}

/// `(name, ours, reference)`.
type Entry = (&'static str, fn(f32) -> f32, fn(f64) -> f64);

/// `sin(πx)` for an `f32` `x` (exact in `f64`): reduced modulo 2 exactly first.
fn sinpi64(x: f64) -> f64 {
    let r = x % 2.0;
    if r == 0.0 || r.abs() == 1.0 {
        return 0.0f64.copysign(x);
    }
    (PI * r).sin()
}

/// `cos(πx)` for an `f32` `x`.
fn cospi64(x: f64) -> f64 {
    let r = (x % 2.0).abs();
    if r == 0.5 || r == 1.5 {
        return 0.0;
    }
    (PI * r).cos()
}

const FUNCTIONS: &[Entry] = &[
    ("expf", m::expf, f64::exp),
    ("exp2f", m::exp2f, f64::exp2),
    ("exp10f", m::exp10f, |x| 10f64.powf(x)),
    ("expm1f", m::expm1f, f64::exp_m1),
    ("logf", m::logf, f64::ln),
    ("log2f", m::log2f, f64::log2),
    ("log10f", m::log10f, f64::log10),
    ("log1pf", m::log1pf, f64::ln_1p),
    ("sinf", m::sinf, f64::sin),
    ("cosf", m::cosf, f64::cos),
    ("tanf", m::tanf, f64::tan),
    ("sinpif", m::sinpif, sinpi64),
    ("cospif", m::cospif, cospi64),
    ("asinf", m::asinf, f64::asin),
    ("acosf", m::acosf, f64::acos),
    ("atanf", m::atanf, f64::atan),
    ("sinhf", m::sinhf, f64::sinh),
    ("coshf", m::coshf, f64::cosh),
    ("tanhf", m::tanhf, f64::tanh),
    ("asinhf", m::asinhf, f64::asinh),
    ("acoshf", m::acoshf, f64::acosh),
    ("atanhf", m::atanhf, f64::atanh),
    ("cbrtf", m::cbrtf, f64::cbrt),
    ("rsqrtf", m::rsqrtf, |x| 1.0 / x.sqrt()),
    ("erff", m::erff, |x| unsafe { erf(x) }),
];

/// Error of `got` against the exact `want`, in ulps of `want` (an `f32` ulp of its
/// binade, 2^-149 below the normal range); `None` where both are NaN or equal.
fn ulps(got: f32, want: f64) -> Option<f64> {
    if got.is_nan() && want.is_nan() {
        return None;
    }
    if got.is_nan() || want.is_nan() {
        return Some(f64::INFINITY);
    }
    let got = got as f64;
    if got == want {
        // ±0 must carry the sign of the exact zero.
        let sign_differs = got == 0.0 && got.is_sign_negative() != want.is_sign_negative();
        return sign_differs.then_some(f64::INFINITY);
    }
    if want.is_infinite() || got.is_infinite() {
        // An overflow to ∞ where the exact value rounds to ∞ is right.
        return if (want as f32) as f64 == got {
            None
        } else {
            Some(f64::INFINITY)
        };
    }
    let e = want.abs().log2().floor().max(-126.0);
    let ulp = (e - 23.0).exp2();
    Some((got - want).abs() / ulp)
}

/// `(max ulp, input, results not correctly rounded)` over the inputs `lo..hi` (bits).
fn scan(f: fn(f32) -> f32, r: fn(f64) -> f64, lo: u64, hi: u64) -> (f64, u32, u64) {
    let (mut worst, mut at, mut wrong) = (0.0f64, 0u32, 0u64);
    for b in lo..hi {
        let x = f32::from_bits(b as u32);
        let want = r(x as f64);
        let got = f(x);
        if let Some(u) = ulps(got, want) {
            if got != want as f32 {
                wrong += 1;
            }
            if u > worst {
                (worst, at) = (u, b as u32);
            }
        }
    }
    (worst, at, wrong)
}

fn main() {
    let names: Vec<String> = std::env::args().skip(1).collect();
    if names.is_empty() {
        eprintln!("usage: exhaustive_f32 NAME... | all");
        std::process::exit(2);
    }
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
    for &(name, f, r) in FUNCTIONS {
        if !names.iter().any(|n| n == name || n == "all") {
            continue;
        }
        let t0 = std::time::Instant::now();
        let chunk = (1u64 << 32) / threads;
        let parts: Vec<_> = (0..threads)
            .map(|i| std::thread::spawn(move || scan(f, r, i * chunk, (i + 1) * chunk)))
            .collect();
        let (mut worst, mut at, mut wrong) = (0.0f64, 0u32, 0u64);
        for p in parts {
            let (w, a, n) = p.join().expect("scan thread");
            wrong += n;
            if w > worst {
                (worst, at) = (w, a);
            }
        }
        println!(
            "{name:8} max {worst:.3} ulp at {at:#010x} ({:e}), {wrong} not correctly rounded, {:.0} s",
            f32::from_bits(at),
            t0.elapsed().as_secs_f64()
        );
    }
}
