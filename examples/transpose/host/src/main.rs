//! Runs `transpose` on a random `rows × cols` matrix (both sides not
//! multiples of the tile), checks every element of the result, then shows
//! that swapping the two scalar parameters' types is refused.

use anyhow::{bail, Result};
use clap::Parser;
use example_support::{count_mismatches, random_f32, rng, verdict, Options, POISON};
use host_loader::{open_device, LaunchConfig, Module, Slice, SliceMut};
use transpose_kernels::{BLOCK_ROWS, TILE};

fn main() -> Result<()> {
    let opts = Options::parse();
    let seed = opts.seed();
    // A near-square matrix of about `n` elements whose sides are not
    // multiples of 32, so the tile guards are exercised.
    let rows = ((opts.n as f64).sqrt() as usize | 1) + 2;
    let cols = (opts.n / rows).max(1) + 1;
    let n = rows * cols;
    let (ctx, stream) = open_device(0)?;
    let module = Module::from_ptx_file(&ctx, opts.ptx_path("transpose-kernels"))?;
    let transpose = module.kernel::<(Slice<f32>, SliceMut<f32>, u32, u32)>("transpose")?;

    let mut rng = rng(seed);
    let input = random_f32(&mut rng, n, -1000.0, 1000.0);
    let input_dev = stream.clone_htod(&input)?;
    let mut out_dev = stream.clone_htod(&vec![POISON; n])?;
    let cfg = LaunchConfig {
        grid_dim: (
            u32::try_from(cols.div_ceil(TILE))?,
            u32::try_from(rows.div_ceil(TILE))?,
            1,
        ),
        block_dim: (TILE as u32, BLOCK_ROWS as u32, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel reads input through a bounds-checked slice and
    // writes each in-bounds output element from exactly one thread.
    unsafe {
        transpose.launch(
            &stream,
            cfg,
            (
                &input_dev,
                &mut out_dev,
                u32::try_from(rows)?,
                u32::try_from(cols)?,
            ),
        )
    }?;
    let got = stream.clone_dtoh(&out_dev)?;

    let mut want = vec![0.0f32; n];
    for r in 0..rows {
        for c in 0..cols {
            want[c * rows + r] = input[r * cols + c];
        }
    }
    println!("matrix {rows} x {cols}");
    let passed = verdict(
        "transpose",
        count_mismatches("out", &got, &want, 0.0),
        n,
        seed,
    );

    match module.kernel::<(Slice<f32>, SliceMut<f32>, u64, u32)>("transpose") {
        Ok(_) => bail!("a u64 in place of the u32 `rows` was accepted"),
        Err(err) => println!("refused as expected: {err}"),
    }
    if !passed {
        std::process::exit(1);
    }
    Ok(())
}
