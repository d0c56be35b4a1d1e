//! Runs `histogram` over random bytes, with the bins pre-filled with known
//! offsets (so a bin the kernel never touches cannot pass), and checks every
//! bin against a CPU count.

use anyhow::{bail, Result};
use clap::Parser;
use example_support::{rng, Options};
use histogram_kernels::{BINS, BLOCK};
use host_loader::{open_device, LaunchConfig, Module, PtrMut, Slice};
use rand::Rng;

fn main() -> Result<()> {
    let opts = Options::parse();
    let (n, seed) = (opts.n, opts.seed());
    let (ctx, stream) = open_device(0)?;
    let module = Module::from_ptx_file(&ctx, opts.ptx_path("histogram-kernels"))?;
    let histogram = module.kernel::<(Slice<u8>, PtrMut<u32>)>("histogram")?;

    let mut rng = rng(seed);
    // Skewed bytes: half uniform, half from a narrow band, so some bins see
    // heavy contention.
    let data: Vec<u8> = (0..n)
        .map(|_| {
            if rng.random_bool(0.5) {
                rng.random()
            } else {
                rng.random_range(100..108)
            }
        })
        .collect();
    let offsets: Vec<u32> = (0..BINS as u32).map(|i| 1_000_000 * (i % 7) + i).collect();
    let data_dev = stream.clone_htod(&data)?;
    let mut bins_dev = stream.clone_htod(&offsets)?;
    let blocks = u32::try_from(n.div_ceil(BLOCK as usize * 16).clamp(1, 1024))?;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: `bins` holds 256 u32s, written only atomically by the kernel.
    unsafe { histogram.launch(&stream, cfg, (&data_dev, &mut bins_dev)) }?;
    let got = stream.clone_dtoh(&bins_dev)?;

    let mut want = offsets.clone();
    for &b in &data {
        want[b as usize] += 1;
    }
    let bad = got.iter().zip(&want).filter(|(g, w)| g != w).count();
    for (i, (g, w)) in got
        .iter()
        .zip(&want)
        .enumerate()
        .filter(|(_, (g, w))| g != w)
        .take(5)
    {
        eprintln!("bin {i}: got {g}, want {w}");
    }
    let word = if bad == 0 { "PASS" } else { "FAIL" };
    println!("{word} histogram: {bad} of {BINS} bins differ from the CPU count ({n} bytes, {blocks} blocks, seed {seed})");

    match module.kernel::<(Slice<u32>, PtrMut<u32>)>("histogram") {
        Ok(_) => bail!("a u32 slice in place of the u8 data was accepted"),
        Err(err) => println!("refused as expected: {err}"),
    }
    if bad != 0 {
        std::process::exit(1);
    }
    Ok(())
}
