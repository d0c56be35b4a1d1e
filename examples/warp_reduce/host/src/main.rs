//! Runs `warp_reduce` (one f32 sum, one u32 max, one i64 sum per warp of 32
//! inputs) on random input, and checks each result against the CPU.

use anyhow::Result;
use clap::Parser;
use example_support::{count_mismatches, random_f32, rng, Options, POISON};
use host_loader::{for_num_elems, open_device, Module, Slice, SliceMut};
use rand::Rng;
use warp_reduce_kernels::WARP;

fn main() -> Result<()> {
    let opts = Options::parse();
    let (n, seed) = (opts.n, opts.seed());
    let (ctx, stream) = open_device(0)?;
    let module = Module::from_ptx_file(&ctx, opts.ptx_path("warp_reduce-kernels"))?;
    let kernel = module.kernel::<(
        Slice<f32>,
        Slice<u32>,
        Slice<i64>,
        SliceMut<f32>,
        SliceMut<u32>,
        SliceMut<i64>,
    )>("warp_reduce")?;

    let mut rng = rng(seed);
    let xs = random_f32(&mut rng, n, -1.0, 1.0);
    let keys: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    let big: Vec<i64> = (0..n)
        .map(|_| rng.random_range(-(1i64 << 40)..1i64 << 40))
        .collect();
    let warps = n.div_ceil(WARP);
    let (xs_dev, keys_dev, big_dev) = (
        stream.clone_htod(&xs)?,
        stream.clone_htod(&keys)?,
        stream.clone_htod(&big)?,
    );
    let mut sums_dev = stream.clone_htod(&vec![POISON; warps])?;
    let mut maxes_dev = stream.clone_htod(&vec![0xDEAD_BEEFu32; warps])?;
    let mut totals_dev = stream.clone_htod(&vec![i64::MIN; warps])?;
    let cfg = for_num_elems(u32::try_from(n)?, 256)?;
    // SAFETY: inputs are read through bounds-checked slices; each output
    // element is written by one warp leader only.
    unsafe {
        kernel.launch(
            &stream,
            cfg,
            (
                &xs_dev,
                &keys_dev,
                &big_dev,
                &mut sums_dev,
                &mut maxes_dev,
                &mut totals_dev,
            ),
        )
    }?;
    let sums = stream.clone_dtoh(&sums_dev)?;
    let maxes = stream.clone_dtoh(&maxes_dev)?;
    let totals = stream.clone_dtoh(&totals_dev)?;

    let want_sums: Vec<f32> = xs
        .chunks(WARP)
        .map(|c| c.iter().map(|&x| x as f64).sum::<f64>() as f32)
        .collect();
    let want_maxes: Vec<u32> = keys
        .chunks(WARP)
        .map(|c| *c.iter().max().unwrap_or(&0))
        .collect();
    let want_totals: Vec<i64> = big.chunks(WARP).map(|c| c.iter().sum()).collect();
    let bad_sums = count_mismatches("sums", &sums, &want_sums, 1e-5);
    let bad_maxes = maxes
        .iter()
        .zip(&want_maxes)
        .filter(|(g, w)| g != w)
        .count();
    let bad_totals = totals
        .iter()
        .zip(&want_totals)
        .filter(|(g, w)| g != w)
        .count();
    let bad = bad_sums + bad_maxes + bad_totals;
    let word = if bad == 0 { "PASS" } else { "FAIL" };
    println!("{word} warp_reduce: {bad_sums} f32 sums, {bad_maxes} u32 maxima, {bad_totals} i64 sums of {warps} warps differ from the CPU (seed {seed})");
    if bad != 0 {
        std::process::exit(1);
    }
    Ok(())
}
