//! Runs the one-launch reduction `sum_grid` as a cooperative launch on random input,
//! checks the total against the CPU's exact sum, shows a grid too large to be resident
//! refused with the numbers, and times it.

use anyhow::{bail, ensure, Result};
use clap::Parser;
use example_support::timing::median_ms;
use example_support::{rng, Options};
use grid_sync_kernels::BLOCK;
use host_loader::cudarc::driver::CudaSlice;
use host_loader::{open_device, LaunchAttributes, LaunchConfig, Module, PtrMut, Slice};
use rand::Rng;

fn main() -> Result<()> {
    let opts = Options::parse();
    let (n, seed) = (opts.n, opts.seed());
    let (ctx, stream) = open_device(0)?;
    let module = Module::from_ptx_file(&ctx, opts.ptx_path("grid_sync-kernels"))?;
    let sum_grid = module.kernel::<(Slice<u32>, PtrMut<u64>, PtrMut<u64>)>("sum_grid")?;

    let mut rng = rng(seed);
    let input: Vec<u32> = (0..n).map(|_| rng.random_range(0..1u32 << 20)).collect();
    let want: u64 = input.iter().map(|&x| u64::from(x)).sum();
    let input_dev = stream.clone_htod(&input)?;

    // As many blocks as can be resident at once, and no more than the input needs.
    let most = sum_grid.max_cooperative_blocks(&stream, BLOCK, 0)?;
    let blocks = most.min(u32::try_from(n.div_ceil(BLOCK as usize))?.max(1));
    let mut partials = stream.alloc_zeros::<u64>(most as usize + 1)?;
    let mut total = stream.clone_htod(&[u64::MAX])?;
    let coop = LaunchAttributes::new().cooperative(true);
    // One cooperative launch of `blocks` blocks of BLOCK threads.
    let mut launch = |blocks: u32, total: &mut CudaSlice<u64>| {
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: partials holds a u64 per resident block, total one u64; the launch is
        // cooperative (and refused before the driver when the grid cannot be resident).
        unsafe { sum_grid.launch_with(&stream, cfg, &coop, (&input_dev, &mut partials, total)) }
    };
    launch(blocks, &mut total)?;
    let got = stream.clone_dtoh(&total)?[0];
    ensure!(
        got == want,
        "sum_grid: {got}, want {want} (n = {n}, seed {seed})"
    );
    println!("PASS sum_grid: {got} over {n} elements in {blocks} blocks of {BLOCK} (of {most} resident; seed {seed})");

    // One block more than can be resident: refused before the driver, with the numbers.
    match launch(most + 1, &mut total) {
        Ok(()) => bail!("a cooperative grid of {} blocks was accepted", most + 1),
        Err(err) => println!("refused as expected: {err}"),
    }

    let ms = median_ms(&stream, 21, || -> Result<()> {
        Ok(launch(blocks, &mut total)?)
    })?;
    println!(
        "TIME sum_grid rust: median {ms:.4} ms, {:.1} GB/s (n = {n}, {blocks} blocks)",
        n as f64 * 4.0 / ms / 1e6
    );
    Ok(())
}
