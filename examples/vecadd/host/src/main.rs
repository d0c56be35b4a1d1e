//! Runs `vecadd` on random input, checks every element against the CPU, then
//! shows that a launch with a wrong argument type is refused.

use anyhow::{bail, Result};
use clap::Parser;
use example_support::{count_mismatches, random_f32, rng, verdict, Options, POISON};
use host_loader::{for_num_elems, open_device, Module, Slice, SliceMut};

fn main() -> Result<()> {
    let opts = Options::parse();
    let (n, seed) = (opts.n, opts.seed());
    let (ctx, stream) = open_device(0)?;
    let module = Module::from_ptx_file(&ctx, opts.ptx_path("vecadd-kernels"))?;
    let vecadd = module.kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")?;

    let mut rng = rng(seed);
    let a = random_f32(&mut rng, n, -1000.0, 1000.0);
    let b = random_f32(&mut rng, n, -1000.0, 1000.0);
    let a_dev = stream.clone_htod(&a)?;
    let b_dev = stream.clone_htod(&b)?;
    let mut c_dev = stream.clone_htod(&vec![POISON; n])?;

    let cfg = for_num_elems(u32::try_from(n)?, 256)?;
    // SAFETY: vecadd writes c[i] only for i < c.len() and reads a[i], b[i]
    // through bounds-checked slices.
    unsafe { vecadd.launch(&stream, cfg, (&a_dev, &b_dev, &mut c_dev)) }?;
    let c = stream.clone_dtoh(&c_dev)?;

    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    let passed = verdict("vecadd", count_mismatches("c", &c, &want, 0.0), n, seed);

    // The kernel's third parameter is a 16-byte (ptr, len) aggregate; a u64
    // in its place must be refused before any launch.
    match module.kernel::<(Slice<f32>, Slice<f32>, u64)>("vecadd") {
        Ok(_) => bail!("a u64 in place of DisjointSlice<f32> was accepted"),
        Err(err) => println!("refused as expected: {err}"),
    }
    // Same 4-byte elements, another type: the ABI record's value classes refuse it.
    match module.kernel::<(Slice<u32>, Slice<f32>, SliceMut<f32>)>("vecadd") {
        Ok(_) => bail!("a Slice<u32> in place of &[f32] was accepted"),
        Err(err) => println!("refused as expected: {err}"),
    }
    if !passed {
        std::process::exit(1);
    }
    Ok(())
}
