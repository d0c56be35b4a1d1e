//! Runs `tile_roundtrip` (bulk loads and stores through shared memory, sm_90) on random
//! input, output poisoned first, and checks every element against the CPU.

use anyhow::{bail, Result};
use async_copy_kernels::TILE;
use clap::Parser;
use host_loader::{open_device, LaunchConfig, Module, Slice, SliceMut};
use rand::{Rng, SeedableRng};

#[derive(Parser)]
struct Args {
    /// Elements.
    #[arg(long, default_value_t = (1 << 24) + 7)]
    n: usize,
    /// Threads per block.
    #[arg(long, default_value_t = 128)]
    block: u32,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value = "target/ptx/async_copy-kernels.ptx")]
    ptx: String,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let (ctx, stream) = open_device(0)?;
    let module = Module::from_ptx_file(&ctx, &args.ptx)?;
    let k = module.kernel::<(f32, Slice<f32>, SliceMut<f32>)>("tile_roundtrip")?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(args.seed);
    let alpha: f32 = rng.random_range(-2.0..2.0);
    let x: Vec<f32> = (0..args.n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let x_d = stream.clone_htod(&x)?;
    let mut y_d = stream.clone_htod(&vec![f32::NAN; args.n])?;
    let cfg = LaunchConfig {
        grid_dim: (u32::try_from(args.n.div_ceil(TILE))?, 1, 1),
        block_dim: (args.block, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: block b writes only y[b * TILE ..][..TILE] below n (see the kernel's docs).
    unsafe { k.launch(&stream, cfg, (alpha, &x_d, &mut y_d)) }?;
    let y = stream.clone_dtoh(&y_d)?;
    let bad = y
        .iter()
        .zip(&x)
        .filter(|(g, x)| g.to_bits() != (alpha * **x).to_bits())
        .count();
    println!(
        "{} tile_roundtrip: {bad} of {} elements differ from the CPU (block {}, seed {})",
        if bad == 0 { "PASS" } else { "FAIL" },
        args.n,
        args.block,
        args.seed
    );
    if bad != 0 {
        bail!("tile_roundtrip differs from the CPU");
    }
    Ok(())
}
