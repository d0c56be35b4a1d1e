//! Event timing and the result table.

use anyhow::Result;
use cudarc::driver::{sys::CUevent_flags::CU_EVENT_DEFAULT, CudaStream};

/// Median milliseconds of `runs` timed calls of `launch(state)` (after 3
/// untimed ones). `before(state)` runs outside the timed region of each call
/// (e.g. zeroing an accumulator).
pub fn median_ms<S>(
    stream: &CudaStream,
    runs: usize,
    state: &mut S,
    mut before: impl FnMut(&mut S) -> Result<()>,
    mut launch: impl FnMut(&mut S) -> Result<()>,
) -> Result<f64> {
    for _ in 0..3 {
        before(state)?;
        launch(state)?;
    }
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        before(state)?;
        let start = stream.record_event(Some(CU_EVENT_DEFAULT))?;
        launch(state)?;
        let end = stream.record_event(Some(CU_EVENT_DEFAULT))?;
        times.push(f64::from(start.elapsed_ms(&end)?));
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// A variant to time: its launch, on the shared state.
pub type Launch<'a, S> = &'a dyn Fn(&mut S) -> Result<()>;

/// Median milliseconds of each launch over `runs` rounds, interleaved: each
/// round times every variant once, starting at a different one each round,
/// so clock and thermal drift fall on all of them alike (3 untimed rounds
/// first). All variants write the same `state` (the same output buffer), so
/// none is favoured by where its buffer lies in DRAM. `before(state)` runs
/// outside the timed region of each launch.
pub fn interleaved_medians<S>(
    stream: &CudaStream,
    runs: usize,
    state: &mut S,
    mut before: impl FnMut(&mut S) -> Result<()>,
    launches: &[Launch<'_, S>],
) -> Result<Vec<f64>> {
    let count = launches.len();
    let mut times = vec![Vec::with_capacity(runs); count];
    for round in 0..3 + runs.max(1) {
        for k in 0..count {
            let v = (round + k) % count;
            before(state)?;
            let start = stream.record_event(Some(CU_EVENT_DEFAULT))?;
            launches[v](state)?;
            let end = stream.record_event(Some(CU_EVENT_DEFAULT))?;
            let ms = f64::from(start.elapsed_ms(&end)?);
            if round >= 3 {
                times[v].push(ms);
            }
        }
    }
    Ok(times
        .into_iter()
        .map(|mut t| {
            t.sort_by(f64::total_cmp);
            t[t.len() / 2]
        })
        .collect())
}

/// One line of the final table.
pub struct Row {
    /// `kernel` or `kernel (variant)`.
    pub name: String,
    /// Who produced it: `rust`, `nvcc`, `CUB`, `cuBLAS`, `memcpy`.
    pub by: &'static str,
    /// Median time, ms.
    pub ms: f64,
    /// Bytes the algorithm must move (each input read once, each output written once).
    pub bytes: f64,
    /// Floating-point operations, for compute-bound kernels.
    pub flops: f64,
}

/// Prints the table: per kernel, each variant's time, the Rust/other ratio,
/// GB/s or TFLOP/s, and % of the copy bandwidth.
pub fn print_table(rows: &[Row], copy_gbs: f64) {
    println!(
        "\n{:<12} {:<7} {:>10} {:>12} {:>10} {:>8}",
        "kernel", "by", "time ms", "rust/this", "GB/s", "% copy"
    );
    for row in rows {
        let rust = rows
            .iter()
            .find(|r| r.name == row.name && r.by == "rust")
            .map(|r| r.ms);
        let ratio = rust.map_or("-".to_string(), |ms| format!("{:.3}", ms / row.ms));
        let gbs = row.bytes / row.ms / 1e6;
        let rate = if row.flops > 0.0 {
            format!("{:.1} TF/s", row.flops / row.ms / 1e9)
        } else {
            format!("{gbs:.0}")
        };
        let share = if row.flops > 0.0 {
            "-".to_string()
        } else {
            format!("{:.0}%", 100.0 * gbs / copy_gbs)
        };
        println!(
            "{:<12} {:<7} {:>10.4} {:>12} {:>10} {:>8}",
            row.name, row.by, row.ms, ratio, rate, share
        );
    }
}
