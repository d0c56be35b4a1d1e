//! Runs `gemm_bf16` (tensor cores, `mma.sync`) on random `bf16` matrices at square and
//! ragged sizes, output poisoned first, and compares every element with an `f64` CPU
//! reference computed from the same `bf16` values: relative Frobenius error below 1e-5
//! (the products are exact in `f32`; only the accumulation rounds).

use anyhow::{bail, Result};
use clap::Parser;
use half::bf16;
use host_loader::{open_device, LaunchConfig, Module, Slice, SliceMut};
use rand::{Rng, SeedableRng};

#[derive(Parser)]
struct Args {
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value = "target/ptx/mma_gemm-kernels.ptx")]
    ptx: String,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let (ctx, stream) = open_device(0)?;
    let module = Module::from_ptx_file(&ctx, &args.ptx)?;
    let gemm =
        module.kernel::<(Slice<bf16>, Slice<bf16>, SliceMut<f32>, u32, u32, u32)>("gemm_bf16")?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(args.seed);
    let mut failed = 0;
    for (m, n, k) in [
        (128, 128, 64),
        (256, 512, 1024),
        (77, 45, 35),
        (1000, 1000, 1000),
    ] {
        let a: Vec<bf16> = (0..m * k)
            .map(|_| bf16::from_f32(rng.random_range(-1.0..1.0)))
            .collect();
        let b: Vec<bf16> = (0..k * n)
            .map(|_| bf16::from_f32(rng.random_range(-1.0..1.0)))
            .collect();
        let (a_d, b_d) = (stream.clone_htod(&a)?, stream.clone_htod(&b)?);
        let mut c_d = stream.clone_htod(&vec![f32::NAN; m * n])?;
        let warps = m.div_ceil(16) * n.div_ceil(8);
        let cfg = LaunchConfig {
            grid_dim: (u32::try_from(warps.div_ceil(4))?, 1, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: each warp writes only its own 16 x 8 tile of c, inside m x n.
        unsafe {
            gemm.launch(
                &stream,
                cfg,
                (&a_d, &b_d, &mut c_d, m as u32, n as u32, k as u32),
            )
        }?;
        let c = stream.clone_dtoh(&c_d)?;
        let (mut num, mut den, mut nan) = (0f64, 0f64, 0usize);
        for i in 0..m {
            for j in 0..n {
                let want: f64 = (0..k)
                    .map(|p| a[i * k + p].to_f64() * b[p * n + j].to_f64())
                    .sum();
                let got = c[i * n + j] as f64;
                nan += got.is_nan() as usize;
                num += (got - want) * (got - want);
                den += want * want;
            }
        }
        let err = (num / den).sqrt();
        let ok = nan == 0 && err < 1e-5;
        failed += !ok as usize;
        println!(
            "{} gemm_bf16 {m}x{n}x{k}: relative Frobenius error {err:.2e}, {nan} unwritten (seed {})",
            if ok { "PASS" } else { "FAIL" },
            args.seed
        );
    }
    if failed > 0 {
        bail!("{failed} size(s) failed");
    }
    Ok(())
}
