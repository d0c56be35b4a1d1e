//! `memory_tour`: one program that walks the host-memory chapter of host-loader on a GPU
//! and prints what each path achieved.
//!
//! 1. device capabilities (memory pools, copy engines, managed and pageable access);
//! 2. explicit copies: pageable and pinned round trips, views, device-to-device,
//!    a refused length mismatch, and the bandwidth of each host path;
//! 3. streams and events: fork/join, and stream-ordered frees that do not block;
//! 4. the copy/compute overlap pipeline, serial against 2 and 3 streams;
//! 5. unified (managed) memory from both sides, and a refused over-subscription;
//! 6. pageable host memory read in place by a kernel (HMM), or the error where the device
//!    cannot.
//!
//! Every check compares with a CPU reference on random data, outputs poisoned first.
//! `PASS`/`FAIL` lines and `BENCH name value unit` lines go to stdout; the exit status is
//! 1 when a check failed.

mod hmm;
mod kernels;
mod managed;
mod overlap;
mod report;
mod streams;
mod transfers;

use std::path::PathBuf;

use anyhow::Result;
use clap::Parser;
use host_loader::memory::{set_release_threshold, MemoryCaps};
use host_loader::{open_device, Module};

use kernels::Kernels;
use report::Report;

/// Command line.
#[derive(Parser, Debug)]
#[command(about = "Walk host-loader's memory chapter on a GPU and measure each path")]
struct Args {
    /// MiB per bandwidth copy and per round trip.
    #[arg(long, default_value_t = 256)]
    mib: usize,
    /// Timed repetitions of each bandwidth copy (the median is reported).
    #[arg(long, default_value_t = 10)]
    reps: usize,
    /// MiB of u32 pushed through the overlap pipeline.
    #[arg(long, default_value_t = 256)]
    pipeline_mib: usize,
    /// MiB per pipeline chunk.
    #[arg(long, default_value_t = 8)]
    chunk_mib: usize,
    /// Elements of the managed-memory and HMM checks.
    #[arg(long, default_value_t = 1 << 20)]
    n: usize,
    /// Skip the HMM chapter (for tools that do not follow kernels into pageable host
    /// memory, e.g. a compute-sanitizer run).
    #[arg(long)]
    skip_hmm: bool,
    /// Seed of the random inputs (default: from the clock; printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Only the pageable-copy comparison (issue 16, part 4): this many interleaved rounds
    /// of host-loader's pageable copies against the synchronous driver copies
    /// `cudaMemcpy` uses, in this one process; then exit.
    #[arg(long)]
    pageable_ab: Option<usize>,
    /// Linked PTX of `memory_tour-kernels`.
    #[arg(long, default_value = "target/ptx/memory_tour-kernels.ptx")]
    ptx: PathBuf,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    println!("memory_tour, seed {seed}");
    let mut rng = example_support::rng(seed);
    let (ctx, stream) = open_device(0)?;
    let module = Module::from_ptx_file(&ctx, &args.ptx)?;
    let k = Kernels::load(&module)?;
    let mut report = Report::default();

    println!("\n== device ==");
    print!("{}", MemoryCaps::query(&ctx)?);
    // Keep freed pool memory instead of returning it at every synchronization.
    set_release_threshold(&ctx, u64::MAX)?;

    let work = ctx.new_stream()?;
    if let Some(rounds) = args.pageable_ab {
        return transfers::pageable_ab(&work, args.mib << 20, rounds);
    }
    transfers::run(
        &ctx,
        &work,
        &mut rng,
        &transfers::Sizes {
            bytes: args.mib << 20,
            reps: args.reps,
        },
        &mut report,
    )?;
    streams::run(&ctx, &k, &mut report)?;
    overlap::run(
        &ctx,
        &k,
        &mut rng,
        &overlap::Sizes {
            total: (args.pipeline_mib << 20) / 4,
            chunk: (args.chunk_mib << 20) / 4,
            reps: 5,
        },
        &mut report,
    )?;
    managed::run(&ctx, &work, &k, &mut rng, args.n, &mut report)?;
    if !args.skip_hmm {
        hmm::run(&ctx, &stream, &k, &mut rng, args.n, &mut report)?;
    }
    ctx.check_err()?;

    report.summary();
    if !report.all_passed() {
        std::process::exit(1);
    }
    Ok(())
}
