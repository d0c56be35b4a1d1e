//! The tour's verdicts and figures: `PASS`/`FAIL` lines as they happen, `BENCH` lines
//! (`BENCH name value unit`) that `scripts/gpu-memory.sh` reads, and a closing summary.

/// Collected results.
#[derive(Default)]
pub struct Report {
    checks: Vec<(String, bool, String)>,
}

impl Report {
    /// Records and prints one check.
    pub fn check(&mut self, name: &str, ok: bool, detail: impl Into<String>) {
        let detail = detail.into();
        println!("{} {name}: {detail}", if ok { "PASS" } else { "FAIL" });
        self.checks.push((name.to_string(), ok, detail));
    }

    /// Prints one figure in the machine-readable form.
    pub fn figure(&mut self, name: &str, value: f64, unit: &str) {
        println!("BENCH {name} {value:.4} {unit}");
    }

    /// Whether every check passed.
    pub fn all_passed(&self) -> bool {
        self.checks.iter().all(|(_, ok, _)| *ok)
    }

    /// Prints the summary: one line per check.
    pub fn summary(&self) {
        println!("\n== summary ==");
        for (name, ok, _) in &self.checks {
            println!("{} {name}", if *ok { "PASS" } else { "FAIL" });
        }
        let failed = self.checks.iter().filter(|c| !c.1).count();
        println!("total: {} checks, {failed} failed", self.checks.len());
    }
}

/// Median of `samples` (seconds); 0 when empty.
pub fn median(samples: &mut [f64]) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// `bytes` moved in `secs`, in GB/s (10^9 bytes per second).
pub fn gbps(bytes: usize, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes as f64 / secs / 1e9
    } else {
        0.0
    }
}
