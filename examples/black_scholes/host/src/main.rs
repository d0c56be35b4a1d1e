//! Prices `--n` random European options with `black_scholes` (NVIDIA's CUDA sample
//! `BlackScholes`, on device-std's math library), checks every call and put against
//! an `f64` CPU reference, then times the kernel.
//!
//! Inputs as the sample draws them: spot `S` in [5, 30), strike `X` in [1, 100), `T` in
//! [0.25, 10) years, rate 2 %, volatility 30 %; outputs poisoned with NaN first.
//! Check (`example_support::black_scholes::check`): every price within
//! `max(1e-4·|want|, 1e-4·S)` of the `f64` one, and the sample's own criterion, the L1
//! norm `Σ|got − want| / Σ|want| ≤ 1e-6`. PASS/FAIL, exit code 0/1.
//!
//! Timing: CUDA events around each of `--runs` launches (after 3 untimed ones), the
//! median printed as `TIME black_scholes rust: median M ms of R launches, G Goptions/s
//! (n = N)`, the line `examples/black_scholes/black_scholes.cu` prints for nvcc.

use anyhow::{bail, Result};
use black_scholes_kernels::BLOCK;
use clap::Parser;
use example_support::black_scholes::{self as bs, L1_TOL, RATE, VOLATILITY};
use example_support::timing::median_ms;
use example_support::{rng, Options, POISON};
use host_loader::cudarc::driver::CudaSlice;
use host_loader::{for_num_elems, open_device, Module, Slice, SliceMut};

#[derive(Parser)]
struct Args {
    #[command(flatten)]
    opts: Options,
    /// Timed launches (after 3 untimed ones); 0 skips the timing.
    #[arg(long, default_value_t = 50)]
    runs: usize,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let (n, seed) = (args.opts.n, args.opts.seed());
    if n == 0 {
        bail!("--n must be positive");
    }
    let (ctx, stream) = open_device(0)?;
    let module = Module::from_ptx_file(&ctx, args.opts.ptx_path("black_scholes-kernels"))?;
    let black_scholes = module.kernel::<(
        Slice<f32>,
        Slice<f32>,
        Slice<f32>,
        f32,
        f32,
        SliceMut<f32>,
        SliceMut<f32>,
    )>("black_scholes")?;

    let mut rng = rng(seed);
    let (spot, strike, years) = bs::inputs(&mut rng, n);
    let spot_dev = stream.clone_htod(&spot)?;
    let strike_dev = stream.clone_htod(&strike)?;
    let years_dev = stream.clone_htod(&years)?;
    let mut call_dev = stream.clone_htod(&vec![POISON; n])?;
    let mut put_dev = stream.clone_htod(&vec![POISON; n])?;
    let cfg = for_num_elems(u32::try_from(n)?, BLOCK)?;
    let launch = |call: &mut CudaSlice<f32>, put: &mut CudaSlice<f32>| -> Result<()> {
        // SAFETY: black_scholes writes call[i] and put[i] only for i < call.len() (=
        // put.len()), through its DisjointSlices, and reads the inputs (n each) through
        // bounds-checked slices.
        unsafe {
            black_scholes.launch(
                &stream,
                cfg,
                (
                    &spot_dev,
                    &strike_dev,
                    &years_dev,
                    RATE,
                    VOLATILITY,
                    call,
                    put,
                ),
            )
        }?;
        Ok(())
    };
    launch(&mut call_dev, &mut put_dev)?;
    let call = stream.clone_dtoh(&call_dev)?;
    let put = stream.clone_dtoh(&put_dev)?;

    let check = bs::check(&spot, &strike, &years, RATE, VOLATILITY, &call, &put);
    let word = if check.passed() { "PASS" } else { "FAIL" };
    println!(
        "{word} black_scholes: {} of {} prices beyond max(1e-4 relative, 1e-4·S), L1 norm {:.2e} (limit {L1_TOL:.0e}), max abs error {:.2e} (n = {n}, seed {seed})",
        check.bad, check.total, check.l1, check.max_abs
    );

    if args.runs > 0 {
        let ms = median_ms(&stream, args.runs, || launch(&mut call_dev, &mut put_dev))?;
        println!(
            "TIME black_scholes rust: median {ms:.4} ms of {} launches, {:.2} Goptions/s (n = {n})",
            args.runs,
            n as f64 / ms / 1e6
        );
    }
    if !check.passed() {
        std::process::exit(1);
    }
    Ok(())
}
