//! Runs `tile_roundtrip` (bulk loads and stores through shared memory, sm_90) on random
//! input, output poisoned first, and checks every element against the CPU.

use anyhow::{bail, Result};
use async_copy_kernels::{REVERSE_TILE, TILE};
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

    // cp_async_reverse: whole 1024-float tiles, each reversed through shared memory.
    let r = module.kernel::<(Slice<[f32; 4]>, SliceMut<[f32; 4]>)>("cp_async_reverse")?;
    let tiles = args.n / (4 * REVERSE_TILE);
    let vecs = tiles * REVERSE_TILE;
    let xv: Vec<[f32; 4]> = (0..vecs)
        .map(|i| [x[4 * i], x[4 * i + 1], x[4 * i + 2], x[4 * i + 3]])
        .collect();
    let xv_d = stream.clone_htod(&xv)?;
    let mut yv_d = stream.clone_htod(&vec![[f32::NAN; 4]; vecs])?;
    let cfg = LaunchConfig {
        grid_dim: (u32::try_from(tiles)?, 1, 1),
        block_dim: (REVERSE_TILE as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    if tiles > 0 {
        // SAFETY: block b writes y[b * 256 ..][..256] only, reads x there.
        unsafe { r.launch(&stream, cfg, (&xv_d, &mut yv_d)) }?;
    }
    let yv = stream.clone_dtoh(&yv_d)?;
    let floats = |v: &[[f32; 4]]| -> Vec<f32> { v.iter().flatten().copied().collect() };
    let (xf, yf) = (floats(&xv), floats(&yv));
    let tile = 4 * REVERSE_TILE;
    let bad = (0..yf.len())
        .filter(|&i| yf[i].to_bits() != xf[i - i % tile + tile - 1 - i % tile].to_bits())
        .count();
    println!(
        "{} cp_async_reverse: {bad} of {} elements differ from the CPU ({tiles} tiles, seed {})",
        if bad == 0 { "PASS" } else { "FAIL" },
        yf.len(),
        args.seed
    );
    if bad != 0 {
        bail!("cp_async_reverse differs from the CPU");
    }

    // tma_multicast: the input as a rows x 64 matrix (rows = n / 64), 32 x 32 tiles, each
    // loaded once per cluster of two CTAs.
    let cols = 64usize;
    let rows = args.n / cols;
    if rows > 0 {
        use host_loader::tma::TensorMap;
        let m = module
            .kernel::<(TensorMap<'static, f32, 2, 32, 32>, u32, SliceMut<f32>)>("tma_multicast")?;
        let (tiles_x, tiles_y) = (cols / 32, rows.div_ceil(32));
        let tiles = tiles_x * tiles_y;
        let map = TensorMap::<f32, 2, 32, 32>::tiled(
            &stream,
            &x_d,
            [cols as u64, rows as u64],
            &[cols as u64 * 4],
        )?;
        let mut out_d = stream.clone_htod(&vec![f32::NAN; 2 * tiles * 1024])?;
        let cfg = LaunchConfig {
            grid_dim: (u32::try_from(2 * tiles)?, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: CTA (cluster c, rank r) writes out[(2c + r) * 1024 ..][..1024] only.
        unsafe { m.launch(&stream, cfg, (&map, tiles_x as u32, &mut out_d)) }?;
        let out = stream.clone_dtoh(&out_d)?;
        let mut bad = 0usize;
        for c in 0..tiles {
            let (tx, ty) = (c % tiles_x, c / tiles_x);
            for r in 0..2 {
                for i in 0..1024 {
                    let (row, col) = (32 * ty + i / 32, 32 * tx + i % 32);
                    let v = if row < rows { x[row * cols + col] } else { 0.0 };
                    if out[(2 * c + r) * 1024 + i].to_bits() != (v * (r + 1) as f32).to_bits() {
                        bad += 1;
                    }
                }
            }
        }
        println!(
            "{} tma_multicast: {bad} of {} elements differ from the CPU ({tiles} clusters of 2, seed {})",
            if bad == 0 { "PASS" } else { "FAIL" },
            out.len(),
            args.seed
        );
        if bad != 0 {
            bail!("tma_multicast differs from the CPU");
        }
    }
    Ok(())
}
