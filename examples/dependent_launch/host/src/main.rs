//! Runs a chain of `--steps` dependent `step` kernels on random input, launched one by
//! one without and with programmatic dependent launch (PDL), checks both results against
//! the CPU (outputs poisoned first), then times both forms in interleaved rounds and
//! prints the time per step and the saving.

use std::time::Instant;

use anyhow::{bail, Result};
use clap::Parser;
use dependent_launch_kernels::multiplier;
use host_loader::{for_num_elems, open_device, Kernel, LaunchAttributes, Module, Slice, SliceMut};
use rand::{Rng, SeedableRng};

#[derive(Parser)]
struct Args {
    /// Elements per buffer.
    #[arg(long, default_value_t = 1 << 16)]
    n: usize,
    /// Kernels in the chain.
    #[arg(long, default_value_t = 1000)]
    steps: usize,
    /// Timing rounds (each times both forms once, alternating which goes first).
    #[arg(long, default_value_t = 21)]
    rounds: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value = "target/ptx/dependent_launch-kernels.ptx")]
    ptx: String,
}

type Step = Kernel<(Slice<u32>, SliceMut<u32>, u32)>;

fn main() -> Result<()> {
    let args = Args::parse();
    let (ctx, stream) = open_device(0)?;
    let module = Module::from_ptx_file(&ctx, &args.ptx)?;
    let step: Step = module.kernel("step")?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(args.seed);
    let x: Vec<u32> = (0..args.n).map(|_| rng.random()).collect();

    // The CPU reference of the whole chain.
    let mut want = x.clone();
    for k in 0..args.steps {
        let a = multiplier(k);
        for (i, v) in want.iter_mut().enumerate() {
            *v = v.wrapping_mul(a).wrapping_add(i as u32);
        }
    }

    let cfg = for_num_elems(u32::try_from(args.n)?, 256)?;
    let plain = LaunchAttributes::new();
    let pdl = LaunchAttributes::new().programmatic_stream_serialization(true);
    let mut ok = true;
    for (name, attrs) in [("plain", &plain), ("pdl", &pdl)] {
        let mut a = stream.clone_htod(&x)?;
        let mut b = stream.clone_htod(&vec![0xDEAD_BEEFu32; args.n])?;
        let result = chain(&stream, &step, cfg, attrs, &mut a, &mut b, args.steps)?;
        let got = stream.clone_dtoh(if result { &b } else { &a })?;
        let bad = got.iter().zip(&want).filter(|(g, w)| g != w).count();
        println!(
            "{} {name}: {bad} of {} elements differ from the CPU after {} steps (seed {})",
            if bad == 0 { "PASS" } else { "FAIL" },
            args.n,
            args.steps,
            args.seed
        );
        ok &= bad == 0;
    }

    // Timing: both forms on the same buffers, interleaved, median per step.
    let mut a = stream.clone_htod(&x)?;
    let mut b = stream.clone_htod(&x)?;
    let mut times = [Vec::new(), Vec::new()];
    for round in 0..args.rounds {
        for j in 0..2 {
            let which = (round + j) % 2;
            let attrs = if which == 0 { &plain } else { &pdl };
            stream.synchronize()?;
            let t = Instant::now();
            chain(&stream, &step, cfg, attrs, &mut a, &mut b, args.steps)?;
            stream.synchronize()?;
            times[which].push(t.elapsed().as_secs_f64() * 1e6 / args.steps as f64);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (p, d) = (median(&mut times[0]), median(&mut times[1]));
    println!(
        "time per step (n = {}, {} steps, median of {} rounds): plain {p:.3} us, pdl {d:.3} us, \
         pdl/plain {:.3}, saved {:.3} us per step",
        args.n,
        args.steps,
        args.rounds,
        d / p,
        p - d
    );
    if !ok {
        bail!("a chain's result differs from the CPU");
    }
    Ok(())
}

/// Launches `steps` links alternating `a → b`, `b → a`; returns whether the result is
/// in `b`.
fn chain(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    step: &Step,
    cfg: host_loader::LaunchConfig,
    attrs: &LaunchAttributes,
    a: &mut cudarc::driver::CudaSlice<u32>,
    b: &mut cudarc::driver::CudaSlice<u32>,
    steps: usize,
) -> Result<bool> {
    for k in 0..steps {
        let m = multiplier(k);
        // SAFETY: `step` reads src[i] and writes dst[i] for i < dst.len() = src.len();
        // it waits for the previous step (griddepcontrol.wait) before any access, as
        // programmatic launches require.
        unsafe {
            if k % 2 == 0 {
                step.launch_with(stream, cfg, attrs, (&*a, &mut *b, m))?;
            } else {
                step.launch_with(stream, cfg, attrs, (&*b, &mut *a, m))?;
            }
        }
    }
    Ok(steps % 2 == 1)
}
