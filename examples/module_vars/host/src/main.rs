//! Runs the module-variable kernels on random input and checks them against the CPU:
//! the filter with its taps written into constant memory by name, the same filter
//! with the taps in a global buffer, and the device counters read back, reset and
//! counted again; then shows that a wrong type or state space is refused by name.

use anyhow::{bail, ensure, Result};
use clap::Parser;
use example_support::module_vars;
use example_support::timing::median_ms;
use example_support::{count_mismatches, random_f32, rng, verdict, Options, POISON};
use host_loader::{for_num_elems, open_device, Module, Slice, SliceMut};
use module_vars_kernels::{BLOCK, TAPS_LEN};

fn main() -> Result<()> {
    let opts = Options::parse();
    let (n, seed) = (opts.n, opts.seed());
    let (ctx, stream) = open_device(0)?;
    let module = Module::from_ptx_file(&ctx, opts.ptx_path("module_vars-kernels"))?;
    let conv_const = module.kernel::<(Slice<f32>, SliceMut<f32>)>("conv_const")?;
    let conv_global = module.kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("conv_global")?;
    let count_above = module.kernel::<(Slice<f32>, f32)>("count_above")?;
    let reverse_blocks = module.kernel::<(Slice<f32>, SliceMut<f32>)>("reverse_blocks")?;

    let mut rng = rng(seed);
    let input = random_f32(&mut rng, n, -1.0, 1.0);
    let taps: [f32; TAPS_LEN] = random_f32(&mut rng, TAPS_LEN, -1.0, 1.0)
        .try_into()
        .unwrap();
    let input_dev = stream.clone_htod(&input)?;
    let taps_dev = stream.clone_htod(&taps)?;
    let cfg = for_num_elems(u32::try_from(n)?, BLOCK)?;
    let want = module_vars::conv_clamped(&input, &taps);
    let mut passed = true;

    // The taps into constant memory by name, checked against the declared [f32; 9].
    module
        .constant::<[f32; TAPS_LEN]>("TAPS")?
        .write(&stream, &taps)?;
    let mut out_dev = stream.clone_htod(&vec![POISON; n])?;
    // SAFETY: each thread writes out[i] for i < out.len() and reads input through a
    // bounds-checked slice; the taps were written above.
    unsafe { conv_const.launch(&stream, cfg, (&input_dev, &mut out_dev)) }?;
    let out = stream.clone_dtoh(&out_dev)?;
    passed &= verdict(
        "conv_const",
        count_mismatches("out", &out, &want, 0.0),
        n,
        seed,
    );

    let mut out_dev = stream.clone_htod(&vec![POISON; n])?;
    // SAFETY: as above, taps from a 9-element buffer.
    unsafe { conv_global.launch(&stream, cfg, (&input_dev, &taps_dev, &mut out_dev)) }?;
    let out = stream.clone_dtoh(&out_dev)?;
    passed &= verdict(
        "conv_global",
        count_mismatches("out", &out, &want, 0.0),
        n,
        seed,
    );

    // Device globals keep their value between launches; the host reads and resets them.
    let threshold = 0.5f32;
    let above = input.iter().filter(|&&x| x > threshold).count() as u32;
    let above_var = module.global::<u32>("ABOVE")?;
    let launches_var = module.global::<u32>("LAUNCHES")?;
    above_var.write(&stream, &7)?;
    launches_var.write(&stream, &0)?;
    for _ in 0..2 {
        // SAFETY: reads input through a bounds-checked slice; atomics on ABOVE.
        unsafe { count_above.launch(&stream, cfg, (&input_dev, threshold)) }?;
    }
    let (got, launches) = (above_var.read(&stream)?, launches_var.read(&stream)?);
    ensure!(
        got == 7 + 2 * above && launches == 2,
        "count_above: ABOVE = {got} (want {}), LAUNCHES = {launches} (want 2)",
        7 + 2 * above
    );
    println!("count_above: PASS (ABOVE = 7 + 2 × {above}, LAUNCHES = 2)");

    // The static shared form: each block reverses its BLOCK elements through TILE.
    let whole = n - n % BLOCK as usize;
    let rev_in = stream.clone_htod(&input[..whole])?;
    let mut rev_dev = stream.clone_htod(&vec![POISON; whole])?;
    let rev_cfg = for_num_elems(u32::try_from(whole)?, BLOCK)?;
    // SAFETY: blocks of exactly BLOCK threads over whole blocks; each thread writes
    // its own element.
    unsafe { reverse_blocks.launch(&stream, rev_cfg, (&rev_in, &mut rev_dev)) }?;
    let rev = stream.clone_dtoh(&rev_dev)?;
    let b = BLOCK as usize;
    let want_rev = module_vars::reverse_blocks(&input[..whole], b);
    passed &= verdict(
        "reverse_blocks",
        count_mismatches("out", &rev, &want_rev, 0.0),
        whole,
        seed,
    );

    // Refused by the module's records, before any copy.
    for (what, result) in [
        (
            "[u32; 9] for the [f32; 9] constant",
            module.constant::<[u32; TAPS_LEN]>("TAPS").map(drop),
        ),
        (
            "[f32; 8] for the [f32; 9] constant",
            module.constant::<[f32; 8]>("TAPS").map(drop),
        ),
        (
            "Module::global for a constant",
            module.global::<[f32; TAPS_LEN]>("TAPS").map(drop),
        ),
        (
            "a name the module lacks",
            module.global::<u32>("NOT_THERE").map(drop),
        ),
    ] {
        match result {
            Ok(()) => bail!("{what} was accepted"),
            Err(err) => println!("refused as expected ({what}): {err}"),
        }
    }

    // Constant memory against a global buffer, same filter, interleaved.
    let mut out_dev = stream.clone_htod(&vec![POISON; n])?;
    let ms_const = median_ms(&stream, 21, || -> Result<()> {
        // SAFETY: as above.
        unsafe { conv_const.launch(&stream, cfg, (&input_dev, &mut out_dev)) }?;
        Ok(())
    })?;
    let ms_global = median_ms(&stream, 21, || -> Result<()> {
        // SAFETY: as above.
        unsafe { conv_global.launch(&stream, cfg, (&input_dev, &taps_dev, &mut out_dev)) }?;
        Ok(())
    })?;
    println!(
        "timing: n = {n}, conv_const {ms_const:.4} ms, conv_global {ms_global:.4} ms (global/const {:.2})",
        ms_global / ms_const
    );
    if !passed {
        std::process::exit(1);
    }
    Ok(())
}
