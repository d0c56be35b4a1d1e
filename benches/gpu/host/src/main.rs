//! `gpu-bench`: one run that times every benchmark kernel three ways where
//! they exist — the Rust kernel (device-std, `target/ptx/bench-kernels.ptx`),
//! the CUDA C++ kernel of the same algorithm (`reference.cu` compiled by nvcc
//! to PTX), and the vendor library (CUB, cuBLAS) — after checking each one
//! against a CPU reference on fresh random inputs with poisoned outputs.
//!
//! Timing: CUDA events around each launch, 3 warm-up launches, the median of
//! `--runs` launches. The device-to-device copy bandwidth is measured in the
//! same run and every bandwidth figure is also given as a share of it.

mod cases;
mod timing;

use anyhow::{Context, Result};
use clap::Parser;
use std::path::PathBuf;

/// Command-line options.
#[derive(Parser, Debug)]
pub struct Options {
    /// Linked Rust PTX (from `cargo xtask build-ptx`).
    #[arg(long, default_value = "target/ptx/bench-kernels.ptx")]
    pub rust_ptx: PathBuf,
    /// nvcc-built PTX of `benches/gpu/reference.cu`.
    #[arg(long)]
    pub ref_ptx: PathBuf,
    /// File with `NAME MEDIAN_MS` lines from the CUB program (`vendor.cu`).
    #[arg(long)]
    pub vendor: Option<PathBuf>,
    /// Linked PTX of `examples/mma_gemm` built for sm_90a (`gemm_wgmma`): the tensor-core
    /// GEMM case runs only with it.
    #[arg(long)]
    pub gemm_ptx: Option<PathBuf>,
    /// Linked PTX of `examples/attention`: the fused attention case runs only with it.
    #[arg(long)]
    pub attention_ptx: Option<PathBuf>,
    /// Timed launches per variant (the median is reported).
    #[arg(long, default_value_t = 51)]
    pub runs: usize,
    /// Small sizes and 1 timed run: for compute-sanitizer.
    #[arg(long)]
    pub quick: bool,
    /// Only the benchmarks whose names contain one of these comma-separated words
    /// (`--only gemm_fp8,attention`).
    #[arg(long)]
    pub only: Option<String>,
    /// The `gemm_sweep` shapes instead of its own, as comma-separated `MxNxK`
    /// (`--gemm-shapes 3072x5120x4096,3000x5000x4104`; `k` a multiple of 8).
    #[arg(long)]
    pub gemm_shapes: Option<String>,
    /// The L2 promotion of `gemm_sweep`'s maps of `a` and `b`, in bytes: 0 (none), 64,
    /// 128 (the default, as `TensorMap::tiled`) or 256.
    #[arg(long, default_value_t = 128)]
    pub gemm_l2_promotion: u32,
    /// Seed for the random inputs (default: the clock).
    #[arg(long)]
    pub seed: Option<u64>,
}

fn main() -> Result<()> {
    let mut opts = Options::parse();
    if opts.quick {
        opts.runs = 1;
    }
    let seed = opts.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let (ctx, stream) = host_loader::open_device(0)?;
    let rust = host_loader::Module::from_ptx_file(&ctx, &opts.rust_ptx)?;
    let reference = ctx
        .load_module(cudarc::nvrtc::Ptx::from_file(&opts.ref_ptx))
        .with_context(|| format!("loading {}", opts.ref_ptx.display()))?;
    let vendor = match &opts.vendor {
        Some(path) => {
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?
        }
        None => String::new(),
    };
    let gemm = match &opts.gemm_ptx {
        Some(path) => Some(host_loader::Module::from_ptx_file(&ctx, path)?),
        None => None,
    };
    let attention = match &opts.attention_ptx {
        Some(path) => Some(host_loader::Module::from_ptx_file(&ctx, path)?),
        None => None,
    };
    let env = cases::Env {
        ctx: &ctx,
        stream: &stream,
        rust: &rust,
        gemm: gemm.as_ref(),
        attention: attention.as_ref(),
        reference: &reference,
        vendor: &vendor,
        opts: &opts,
        seed,
    };

    let copy_gbs = cases::copy_bandwidth(&env)?;
    println!("device-to-device copy: {copy_gbs:.0} GB/s (read + write); seed {seed}");
    let mut rows = Vec::new();
    let mut failed = Vec::new();
    for case in cases::ALL {
        if opts
            .only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|w| case.name.contains(w)))
        {
            continue;
        }
        match (case.run)(&env) {
            Ok(mut r) => rows.append(&mut r),
            Err(e) => {
                println!("FAIL {}: {e:#}", case.name);
                failed.push(case.name);
            }
        }
    }
    timing::print_table(&rows, copy_gbs);
    if !failed.is_empty() {
        anyhow::bail!("failed: {}", failed.join(", "));
    }
    Ok(())
}
