//! Runs `block_sum` on random input, checks each block's partial sum and the
//! total against the CPU (in f64), then shows that a wrong argument is refused.

use anyhow::{bail, Result};
use block_sum_kernels::{BLOCK, ITEMS_PER_BLOCK};
use clap::Parser;
use cudarc::driver::LaunchConfig;
use example_support::{count_mismatches, random_f32, rng, verdict, Options, POISON};
use host_loader::{open_device, Module, Slice, SliceMut};

fn main() -> Result<()> {
    let opts = Options::parse();
    let (n, seed) = (opts.n, opts.seed());
    let (ctx, stream) = open_device(0)?;
    let module = Module::from_ptx_file(&ctx, opts.ptx_path("block_sum-kernels"))?;
    let block_sum = module.kernel::<(Slice<f32>, SliceMut<f32>)>("block_sum")?;

    let mut rng = rng(seed);
    let input = random_f32(&mut rng, n, -1.0, 1.0);
    let blocks = n.div_ceil(ITEMS_PER_BLOCK);
    let input_dev = stream.clone_htod(&input)?;
    let mut partial_dev = stream.clone_htod(&vec![POISON; blocks])?;

    let cfg = LaunchConfig {
        grid_dim: (u32::try_from(blocks)?, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: block_sum reads input through a bounds-checked slice and writes
    // partial[b] from block b's leader only, for b < partial.len().
    unsafe { block_sum.launch(&stream, cfg, (&input_dev, &mut partial_dev)) }?;
    let partial = stream.clone_dtoh(&partial_dev)?;

    // CPU reference in f64; the GPU's tree order differs from a sequential
    // sum, so allow f32 rounding of a 512-term sum of values in [-1, 1).
    let want: Vec<f32> = input
        .chunks(ITEMS_PER_BLOCK)
        .map(|c| c.iter().map(|&x| f64::from(x)).sum::<f64>() as f32)
        .collect();
    let bad = count_mismatches("partial", &partial, &want, 1e-4);
    let total: f64 = partial.iter().map(|&x| f64::from(x)).sum();
    let want_total: f64 = input.iter().map(|&x| f64::from(x)).sum();
    println!("total: gpu {total:.6}, cpu {want_total:.6}");
    let passed = verdict("block_sum", bad, blocks, seed)
        && (total - want_total).abs() <= 1e-3 * (n as f64).sqrt();

    // A raw pointer where the kernel takes a (ptr, len) slice must be refused.
    match module.kernel::<(host_loader::Ptr<f32>, SliceMut<f32>)>("block_sum") {
        Ok(_) => bail!("a raw pointer in place of &[f32] was accepted"),
        Err(err) => println!("refused as expected: {err}"),
    }
    if !passed {
        std::process::exit(1);
    }
    Ok(())
}
