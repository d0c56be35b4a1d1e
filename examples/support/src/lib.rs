//! Shared plumbing for the example host programs: command-line options,
//! seeded random inputs, and the PASS/FAIL verdict.

use rand::{Rng, SeedableRng};
use std::path::PathBuf;

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
