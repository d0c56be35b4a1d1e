//! Runs `softmax` over the rows of a random matrix, checks every element
//! against an f64 CPU reference (relative error), and checks that each row
//! sums to 1.

use anyhow::Result;
use clap::Parser;
use example_support::{random_f32, rng, Options, POISON};
use host_loader::{open_device, LaunchConfig, Module, Slice, SliceMut};
use softmax_kernels::{shared_bytes, BLOCK};

/// Columns per row: 4096 floats (16 KiB of dynamic shared memory per block).
const COLS: usize = 4096;

fn main() -> Result<()> {
    let opts = Options::parse();
    let seed = opts.seed();
    let rows = (opts.n / COLS).max(1);
    let n = rows * COLS;
    let (ctx, stream) = open_device(0)?;
    let module = Module::from_ptx_file(&ctx, opts.ptx_path("softmax-kernels"))?;
    let softmax = module.kernel::<(Slice<f32>, SliceMut<f32>, u32)>("softmax")?;

    let mut rng = rng(seed);
    let input = random_f32(&mut rng, n, -10.0, 10.0);
    let input_dev = stream.clone_htod(&input)?;
    let mut out_dev = stream.clone_htod(&vec![POISON; n])?;
    let cfg = LaunchConfig {
        grid_dim: (u32::try_from(rows)?, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: u32::try_from(shared_bytes(COLS))?,
    };
    // SAFETY: shared_mem_bytes is what the kernel carves; block b writes
    // only row b, each element from one thread.
    unsafe { softmax.launch(&stream, cfg, (&input_dev, &mut out_dev, COLS as u32)) }?;
    let got = stream.clone_dtoh(&out_dev)?;

    let (mut bad, mut worst, mut bad_rows) = (0usize, 0.0f64, 0usize);
    for r in 0..rows {
        let row = &input[r * COLS..(r + 1) * COLS];
        let max = row.iter().fold(f64::NEG_INFINITY, |m, &x| m.max(x as f64));
        let exps: Vec<f64> = row.iter().map(|&x| (x as f64 - max).exp()).collect();
        let sum: f64 = exps.iter().sum();
        let mut got_sum = 0.0f64;
        for c in 0..COLS {
            let (g, w) = (got[r * COLS + c] as f64, exps[c] / sum);
            got_sum += g;
            let rel = (g - w).abs() / w.max(1e-30);
            worst = worst.max(rel);
            // ex2.approx plus the rounding of (x - max) * log2(e): ~2e-6.
            if rel.is_nan() || rel > 2e-5 {
                if bad < 5 {
                    eprintln!("out[{r}, {c}]: got {g}, want {w}");
                }
                bad += 1;
            }
        }
        if (got_sum - 1.0).abs() > 1e-4 {
            bad_rows += 1;
        }
    }
    let word = if bad == 0 && bad_rows == 0 {
        "PASS"
    } else {
        "FAIL"
    };
    println!("{word} softmax: {bad} of {n} elements beyond 2e-5 relative error (worst {worst:.2e}), {bad_rows} of {rows} rows not summing to 1 ({rows} x {COLS}, seed {seed})");
    if word == "FAIL" {
        std::process::exit(1);
    }
    Ok(())
}
