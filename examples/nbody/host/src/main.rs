//! One all-pairs n-body step (NVIDIA's CUDA sample `nbody`, on device-std's math
//! library) for `--n` random bodies, with `nbody_step` (`math::rsqrtf`) and
//! `nbody_step_fast` (`math::fast::rsqrtf`, what CUDA C++'s `rsqrtf` compiles to); each
//! checked against an `f64` CPU reference of all `n²` pairs, then timed.
//!
//! Bodies as the sample's `NBODY_CONFIG_RANDOM` places them (`example_support::nbody`),
//! `dt = 0.016`, softening `ε = 0.1`; outputs poisoned with NaN first. Check
//! (`example_support::nbody::check`): per body, the acceleration the kernel applied,
//! `(v' − v)/dt`, within `1e-3` of `|a|` (plus `1e-5` of the sum of the pulls' sizes
//! and the rounding of `v'`) of the `f64` one, and `p' = p + v'·dt` up to `f32`
//! rounding. PASS/FAIL, exit code 0/1.
//!
//! Timing: CUDA events around each of `--runs` launches (after 3 untimed ones), the
//! median printed as `TIME nbody rust: median M ms of R launches, G Ginteractions/s
//! (n = N)` (`n²` interactions a step), and `rust-fast` for the second kernel;
//! `examples/nbody/nbody.cu` prints the same line for nvcc.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Parser;
use example_support::nbody::{self, DT, SOFTENING_SQ};
use example_support::timing::median_ms;
use example_support::{rng, POISON};
use host_loader::cudarc::driver::CudaSlice;
use host_loader::{for_num_elems, open_device, Kernel, Module, Slice, SliceMut};
use nbody_kernels::BLOCK;

#[derive(Parser)]
struct Args {
    /// Number of bodies (the reference costs `n²` f64 interactions).
    #[arg(long, default_value_t = 16384)]
    n: usize,
    /// Seed for the random bodies (default: from the clock; printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Linked PTX module (default: `target/ptx/nbody-kernels.ptx`).
    #[arg(long, default_value = "target/ptx/nbody-kernels.ptx")]
    ptx: PathBuf,
    /// Timed launches per kernel (after 3 untimed ones); 0 skips the timing.
    #[arg(long, default_value_t = 20)]
    runs: usize,
}

type Step = Kernel<(
    Slice<[f32; 4]>,
    Slice<[f32; 4]>,
    f32,
    f32,
    SliceMut<[f32; 4]>,
    SliceMut<[f32; 4]>,
)>;

fn main() -> Result<()> {
    let args = Args::parse();
    let n = args.n;
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    if n == 0 {
        bail!("--n must be positive");
    }
    let (ctx, stream) = open_device(0)?;
    let module = Module::from_ptx_file(&ctx, &args.ptx)?;

    let mut rng = rng(seed);
    let (pos, vel) = nbody::bodies(&mut rng, n);
    let pos_dev = stream.clone_htod(&pos)?;
    let vel_dev = stream.clone_htod(&vel)?;
    let cfg = for_num_elems(u32::try_from(n)?, BLOCK)?;

    let mut passed = true;
    for (name, label) in [("nbody_step", "rust"), ("nbody_step_fast", "rust-fast")] {
        let step: Step = module.kernel(name)?;
        let mut new_pos = stream.clone_htod(&vec![[POISON; 4]; n])?;
        let mut new_vel = stream.clone_htod(&vec![[POISON; 4]; n])?;
        let launch = |p: &mut CudaSlice<[f32; 4]>, v: &mut CudaSlice<[f32; 4]>| -> Result<()> {
            // SAFETY: the kernel writes new_pos[i] and new_vel[i] only for
            // i < new_pos.len() (= n), through its DisjointSlices, and reads pos and
            // vel (n bodies each) through bounds-checked slices; blocks of BLOCK
            // threads, 4 KiB of static shared memory.
            unsafe { step.launch(&stream, cfg, (&pos_dev, &vel_dev, DT, SOFTENING_SQ, p, v)) }?;
            Ok(())
        };
        launch(&mut new_pos, &mut new_vel)?;
        let got_pos = stream.clone_dtoh(&new_pos)?;
        let got_vel = stream.clone_dtoh(&new_vel)?;
        let check = nbody::check(&pos, &vel, DT, SOFTENING_SQ, &got_pos, &got_vel);
        let word = if check.passed() { "PASS" } else { "FAIL" };
        println!(
            "{word} {name}: {} of {} bodies beyond tolerance (worst acceleration error {:.3} of its tolerance; n = {n}, seed {seed})",
            check.bad, check.total, check.worst_share
        );
        passed &= check.passed();

        if args.runs > 0 {
            let ms = median_ms(&stream, args.runs, || launch(&mut new_pos, &mut new_vel))?;
            println!(
                "TIME nbody {label}: median {ms:.4} ms of {} launches, {:.2} Ginteractions/s (n = {n})",
                args.runs,
                (n as f64).powi(2) / ms / 1e6
            );
        }
    }
    if !passed {
        std::process::exit(1);
    }
    Ok(())
}
