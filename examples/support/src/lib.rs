//! Shared plumbing for the example host programs: command-line options,
//! seeded random inputs, and the PASS/FAIL verdict; the inputs, `f64` references and
//! checks of the math-library examples ([`black_scholes`], [`nbody`]), which the host
//! programs and the emulator tests share.

use rand::{Rng, SeedableRng};
use std::path::PathBuf;

pub mod black_scholes;
pub mod module_vars;
pub mod nbody;
pub mod texture;
pub mod timing;

/// Options every example host program takes.
#[derive(clap::Parser, Debug)]
pub struct Options {
    /// Number of elements (default 2^24).
    #[arg(long, default_value_t = 1 << 24)]
    pub n: usize,
    /// Seed for the random inputs (default: from the clock; printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Linked PTX module (default: `target/ptx/<kernel crate>.ptx`).
    #[arg(long)]
    pub ptx: Option<PathBuf>,
}

impl Options {
    /// The seed to use: `--seed`, else the clock's nanoseconds.
    pub fn seed(&self) -> u64 {
        self.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        })
    }

    /// `--ptx`, else `target/ptx/<kernel_crate>.ptx`.
    pub fn ptx_path(&self, kernel_crate: &str) -> PathBuf {
        self.ptx
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("target/ptx/{kernel_crate}.ptx")))
    }
}

/// A seeded random generator, so a failing run can be repeated with `--seed`.
pub fn rng(seed: u64) -> rand::rngs::StdRng {
    rand::rngs::StdRng::seed_from_u64(seed)
}

/// `n` uniform values in `[lo, hi)`.
pub fn random_f32(rng: &mut impl Rng, n: usize, lo: f32, hi: f32) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(lo..hi)).collect()
}

/// `n` `bf16` values, each an `f32` drawn uniformly from `[-1, 1)` and rounded: the
/// inputs of the tensor-core GEMMs.
pub fn random_bf16(rng: &mut impl Rng, n: usize) -> Vec<half::bf16> {
    (0..n)
        .map(|_| half::bf16::from_f32(rng.random_range(-1.0..1.0)))
        .collect()
}

/// `c = a · b` in `f64` for row-major `a` (`m × k`) and `b` (`k × n`): `m × n`, row-major.
pub fn matmul_f64(a: &[half::bf16], b: &[half::bf16], m: usize, n: usize, k: usize) -> Vec<f64> {
    (0..m * n)
        .map(|e| {
            let (i, j) = (e / n, e % n);
            (0..k)
                .map(|p| a[i * k + p].to_f64() * b[p * n + j].to_f64())
                .sum()
        })
        .collect()
}

/// `c = a · bᵀ` in `f64` for row-major `a` (`m × k`) and `b` stored `n × k` (both
/// K-major, as the `wgmma` and `gemm_mma` kernels take them): `m × n`, row-major.
pub fn matmul_bt_f64(
    a: &[half::bf16],
    bt: &[half::bf16],
    m: usize,
    n: usize,
    k: usize,
) -> Vec<f64> {
    (0..m * n)
        .map(|e| {
            let (i, j) = (e / n, e % n);
            (0..k)
                .map(|p| a[i * k + p].to_f64() * bt[j * k + p].to_f64())
                .sum()
        })
        .collect()
}

/// The relative Frobenius error `‖got − want‖ / ‖want‖` (NaN when `got` holds a NaN),
/// and how many elements of `got` are NaN: outputs poisoned with NaN that the kernel
/// never wrote.
pub fn frobenius(got: impl IntoIterator<Item = f64>, want: &[f64]) -> (f64, usize) {
    let (mut num, mut nan) = (0.0f64, 0);
    for (g, w) in got.into_iter().zip(want) {
        nan += g.is_nan() as usize;
        num += (g - w).powi(2);
    }
    let den: f64 = want.iter().map(|w| w * w).sum();
    ((num / den).sqrt(), nan)
}

/// The value outputs are filled with before a launch, so an element the
/// kernel never writes cannot pass as correct.
pub const POISON: f32 = f32::NAN;

/// Compares `got` with `want` element by element: `|got - want| <= tol * max(1, |want|)`.
/// NaN never passes. Returns the number of mismatches and prints the first few.
pub fn count_mismatches(what: &str, got: &[f32], want: &[f32], tol: f32) -> usize {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let mut bad = 0;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let ok = (g - w).abs() <= tol * w.abs().max(1.0);
        if !ok {
            if bad < 5 {
                eprintln!("{what}[{i}]: got {g}, want {w}");
            }
            bad += 1;
        }
    }
    bad
}

/// Prints `PASS name (...)` or `FAIL name (...)` and returns whether it passed.
pub fn verdict(name: &str, mismatches: usize, total: usize, seed: u64) -> bool {
    let word = if mismatches == 0 { "PASS" } else { "FAIL" };
    println!("{word} {name}: {mismatches} of {total} elements differ from the CPU reference (seed {seed})");
    mismatches == 0
}
