//! Runs `poly_eval` and `affine`, whose PTX calls into the `mathlib` device
//! crate, checks them against the CPU, then shows that a struct of the wrong
//! size is refused.

use anyhow::{bail, Result};
use clap::Parser;
use example_support::{count_mismatches, random_f32, rng, verdict, Options, POISON};
use host_loader::{for_num_elems, open_device, Module, Slice, SliceMut, Struct};
use mathlib::Affine;

/// An `Affine` missing its `count` field: 8 bytes instead of 16.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, device_std::KernelStruct)]
struct ShortAffine {
    scale: f32,
    shift: f32,
}

fn main() -> Result<()> {
    let opts = Options::parse();
    let (n, seed) = (opts.n, opts.seed());
    let (ctx, stream) = open_device(0)?;
    let module = Module::from_ptx_file(&ctx, opts.ptx_path("linked_math-kernels"))?;
    let poly_eval = module.kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("poly_eval")?;
    let affine = module.kernel::<(Struct<Affine>, Slice<f32>, SliceMut<f32>)>("affine")?;

    let mut rng = rng(seed);
    let xs = random_f32(&mut rng, n, -1.0, 1.0);
    let coeffs = random_f32(&mut rng, 8, -2.0, 2.0);
    let xs_dev = stream.clone_htod(&xs)?;
    let coeffs_dev = stream.clone_htod(&coeffs)?;
    let cfg = for_num_elems(u32::try_from(n)?, 256)?;

    let mut out_dev = stream.clone_htod(&vec![POISON; n])?;
    // SAFETY: poly_eval writes out[i] for i < out.len() only; slices are bounds-checked.
    unsafe { poly_eval.launch(&stream, cfg, (&xs_dev, &coeffs_dev, &mut out_dev)) }?;
    let got = stream.clone_dtoh(&out_dev)?;
    let want: Vec<f32> = xs.iter().map(|&x| mathlib::horner(&coeffs, x)).collect();
    let poly_ok = verdict(
        "poly_eval",
        count_mismatches("poly", &got, &want, 1e-5),
        n,
        seed,
    );

    // Transform all but the last 1000 elements; those must keep the poison.
    let params = Affine {
        scale: 1.5,
        shift: -0.25,
        count: (n - 1000) as u64,
    };
    let mut out_dev = stream.clone_htod(&vec![POISON; n])?;
    // SAFETY: affine writes out[i] for i < min(count, out.len()) only.
    unsafe { affine.launch(&stream, cfg, (params, &xs_dev, &mut out_dev)) }?;
    let got = stream.clone_dtoh(&out_dev)?;
    let head = params.count as usize;
    let want: Vec<f32> = xs[..head]
        .iter()
        .map(|&x| mathlib::apply_affine(&params, x))
        .collect();
    let bad_head = count_mismatches("affine", &got[..head], &want, 0.0);
    let bad_tail = got[head..].iter().filter(|x| !x.is_nan()).count();
    let affine_ok = verdict("affine", bad_head + bad_tail, n, seed);

    match module.kernel::<(Struct<ShortAffine>, Slice<f32>, SliceMut<f32>)>("affine") {
        Ok(_) => bail!("an 8-byte struct in place of the 16-byte Affine was accepted"),
        Err(err) => println!("refused as expected: {err}"),
    }
    if !(poly_ok && affine_ok) {
        std::process::exit(1);
    }
    Ok(())
}
