//! Texture and surface objects on the GPU (issue 29, part 4):
//!
//! 1. the 96 sample cases of `calibrate.cu` (1D/2D/3D, `f32` and RGBA8, point and
//!    linear, texel and normalized coordinates, every address mode) fetched through
//!    our kernels and `host_loader::texture`, compared bit for bit with what nvcc's
//!    kernel got from the same texture unit (`--samples`, the file `calibrate.cu`
//!    writes);
//! 2. a bilinear RGBA8 resize checked against the CPU rules, hashed for comparison
//!    with `texture.cu`, and timed;
//! 3. surface reads and writes (2D RGBA8, 3D `[f32; 2]`) checked exactly;
//! 4. what is refused: wrap on texel coordinates, a texture of the wrong texel type
//!    or dimension count.

use std::path::PathBuf;

use anyhow::{ensure, Context, Result};
use clap::Parser;
use example_support::texture::{
    fnv1a, random_image, resize_reference, sample_cases, samples_per_case, split_samples,
};
use example_support::timing::median_ms;
use host_loader::texture::{AddressMode, Array, Sampler, Surface, Texture};
use host_loader::{open_device, LaunchConfig, Module, Slice, SliceMut};
use texture_kernels::BLOCK_2D;

#[derive(Parser)]
struct Opts {
    /// Linked PTX module (default: `target/ptx/texture-kernels.ptx`).
    #[arg(long)]
    ptx: Option<PathBuf>,
    /// The results `calibrate.cu` wrote (default: `examples/texture/gpu-samples-256.bin`).
    #[arg(long)]
    samples: Option<PathBuf>,
    /// Resize: source and destination sizes, `SW SH DW DH`.
    #[arg(long, num_args = 4, default_values_t = [1920, 1080, 3840, 2160])]
    resize: Vec<usize>,
    /// Seed of the resize's random image.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

fn cfg_1d(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.div_ceil(128) as u32, 1, 1),
        block_dim: (128, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn cfg_2d(w: usize, h: usize, d: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (
            w.div_ceil(BLOCK_2D.0 as usize) as u32,
            h.div_ceil(BLOCK_2D.1 as usize) as u32,
            d as u32,
        ),
        block_dim: (BLOCK_2D.0, BLOCK_2D.1, 1),
        shared_mem_bytes: 0,
    }
}

fn main() -> Result<()> {
    let opts = Opts::parse();
    let (ctx, stream) = open_device(0)?;
    let ptx = opts
        .ptx
        .clone()
        .unwrap_or_else(|| PathBuf::from("target/ptx/texture-kernels.ptx"));
    let module = Module::from_ptx_file(&ctx, &ptx)?;

    // 1. The sample cases against nvcc's results.
    let samples_path = opts
        .samples
        .clone()
        .unwrap_or_else(|| PathBuf::from("examples/texture/gpu-samples-256.bin"));
    let bytes = std::fs::read(&samples_path)
        .with_context(|| format!("reading {}", samples_path.display()))?;
    let per_case = samples_per_case(bytes.len()).context("the samples file has a partial round")?;
    let cases = sample_cases(per_case);
    let want = split_samples(&bytes, &cases).context("the samples file does not fit the cases")?;
    macro_rules! run_case {
        ($texel:ty, $d:literal, $out:ty, $name:literal, $case:expr, $texels:expr) => {{
            let c = $case;
            let extent: [usize; $d] = c.extent[..$d].try_into()?;
            let array = Array::<$texel, $d>::from_host(&stream, extent, $texels)?;
            // Wrap and mirror on texel coordinates: refused here, clamped by CUDA.
            if c.requested_sampler() != c.sampler() {
                ensure!(
                    Texture::new(&array, c.requested_sampler()).is_err(),
                    "wrap on texel coordinates accepted"
                );
            }
            let tex = Texture::new(&array, c.sampler())?;
            let k = module
                .kernel::<(Texture<'static, $texel, $d>, Slice<f32>, SliceMut<$out>)>($name)?;
            let coords = stream.clone_htod(&c.coords)?;
            let mut out = stream.alloc_zeros::<$out>(c.len())?;
            // SAFETY: one thread per sample; `out` has a slot per sample.
            unsafe { k.launch(&stream, cfg_1d(c.len()), (&tex, &coords, &mut out)) }?;
            let got: Vec<$out> = stream.clone_dtoh(&out)?;
            bytemuck::cast_slice::<$out, f32>(&got).to_vec()
        }};
    }
    let (mut identical, mut total, mut pitched_cases) = (0usize, 0usize, 0usize);
    for (ci, (c, want)) in cases.iter().zip(&want).enumerate() {
        let got = match (c.rgba8, c.dims) {
            (false, 1) => run_case!(f32, 1, f32, "sample_1d_f32", c, &c.texels_f32),
            (false, 2) => run_case!(f32, 2, f32, "sample_2d_f32", c, &c.texels_f32),
            (false, _) => run_case!(f32, 3, f32, "sample_3d_f32", c, &c.texels_f32),
            (true, 1) => run_case!([u8; 4], 1, [f32; 4], "sample_1d_rgba8", c, &c.texels_rgba8),
            (true, 2) => run_case!([u8; 4], 2, [f32; 4], "sample_2d_rgba8", c, &c.texels_rgba8),
            (true, _) => run_case!([u8; 4], 3, [f32; 4], "sample_3d_rgba8", c, &c.texels_rgba8),
        };
        // 2D f32 cases again from pitched device memory: rows of 40 texels (160 bytes).
        if !c.rgba8 && c.dims == 2 {
            let (w, h, pitch) = (c.extent[0], c.extent[1], 40);
            let mut rows = vec![f32::NAN; pitch * h];
            for y in 0..h {
                rows[y * pitch..y * pitch + w].copy_from_slice(&c.texels_f32[y * w..(y + 1) * w]);
            }
            let buf = stream.clone_htod(&rows)?;
            let tex = Texture::from_pitched(&stream, &buf, [w, h], pitch, c.sampler())?;
            let k = module
                .kernel::<(Texture<'static, f32, 2>, Slice<f32>, SliceMut<f32>)>("sample_2d_f32")?;
            let coords = stream.clone_htod(&c.coords)?;
            let mut out = stream.alloc_zeros::<f32>(c.len())?;
            // SAFETY: one thread per sample; `out` has a slot per sample.
            unsafe { k.launch(&stream, cfg_1d(c.len()), (&tex, &coords, &mut out)) }?;
            let pitched = stream.clone_dtoh(&out)?;
            ensure!(
                pitched
                    .iter()
                    .zip(&got)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "case {ci}: the pitched texture's fetches differ from the array's"
            );
            pitched_cases += 1;
        }
        let same = got
            .iter()
            .zip(want)
            .filter(|(a, b)| a.to_bits() == b.to_bits())
            .count();
        identical += same;
        total += want.len();
        if same != want.len() {
            println!(
                "case {ci}: {} of {} values differ from nvcc's",
                want.len() - same,
                want.len()
            );
        }
    }
    ensure!(
        identical == total,
        "{} of {total} fetched values differ from nvcc's",
        total - identical
    );
    println!(
        "PASS samples: {total} values from 96 texture cases identical to nvcc's ({})",
        samples_path.display()
    );
    println!("PASS pitched: {pitched_cases} 2D cases from pitched memory identical to the array's");
    // A pitch that breaks the texture unit's alignment is refused before the driver.
    let buf = stream.alloc_zeros::<f32>(37 * 23)?;
    match Texture::from_pitched(&stream, &buf, [37, 23], 37, Sampler::POINT) {
        Err(e) => println!("refused as expected: {e}"),
        Ok(_) => anyhow::bail!("a 148-byte pitch accepted"),
    }

    // 2. Bilinear resize.
    let [sw, sh, dw, dh] = opts.resize[..] else {
        unreachable!("clap gives 4 values")
    };
    let image = random_image(opts.seed, sw, sh);
    let src = Array::<[u8; 4], 2>::from_host(&stream, [sw, sh], &image)?;
    let tex = Texture::new(&src, Sampler::LINEAR.normalized())?;
    let resize = module
        .kernel::<(Texture<'static, [u8; 4], 2>, SliceMut<[u8; 4]>, u32, u32)>("resize_bilinear")?;
    let mut dst = stream.alloc_zeros::<[u8; 4]>(dw * dh)?;
    stream.memset_zeros(&mut dst)?;
    let cfg = cfg_2d(dw, dh, 1);
    let (w32, h32) = (u32::try_from(dw)?, u32::try_from(dh)?);
    // SAFETY: a 2D grid over dw × dh; `dst` holds dw × dh pixels.
    unsafe { resize.launch(&stream, cfg, (&tex, &mut dst, w32, h32)) }?;
    let got = stream.clone_dtoh(&dst)?;
    let want = resize_reference(&image, sw, sh, dw, dh);
    let (mut worst, mut off) = (0u8, 0usize);
    for (g, w) in got.iter().zip(&want) {
        for k in 0..4 {
            let d = g[k].abs_diff(w[k]);
            worst = worst.max(d);
            off += usize::from(d != 0);
        }
    }
    ensure!(
        worst <= 1,
        "resize: a channel {worst} away from the CPU's rules"
    );
    let flat: Vec<u8> = got.iter().flatten().copied().collect();
    println!(
        "PASS resize {sw}x{sh} -> {dw}x{dh}: within 1 of the CPU rules ({off} of {} channels 1 apart); hash {:016x}",
        4 * dw * dh,
        fnv1a(&flat)
    );
    let ms = median_ms(&stream, 21, || -> Result<()> {
        // SAFETY: as above.
        Ok(unsafe { resize.launch(&stream, cfg, (&tex, &mut dst, w32, h32)) }?)
    })?;
    println!(
        "TIME resize rust: median {ms:.4} ms, {:.1} Gpixel/s ({sw}x{sh} -> {dw}x{dh})",
        (dw * dh) as f64 / ms / 1e6
    );

    // 3. Surfaces.
    let arr = Array::<[u8; 4], 2>::from_host(&stream, [sw, sh], &image)?;
    let surf = Surface::new(&arr)?;
    let invert = module.kernel::<(Surface<'static, [u8; 4], 2>, u32, u32)>("invert_rgba8")?;
    // SAFETY: a 2D grid over the image; each thread touches its own texel.
    unsafe { invert.launch(&stream, cfg_2d(sw, sh, 1), (&surf, sw as u32, sh as u32)) }?;
    let back = arr.copy_to_host(&stream)?;
    let exact = back
        .iter()
        .zip(&image)
        .all(|(b, p)| *b == [255 - p[0], 255 - p[1], 255 - p[2], p[3]]);
    ensure!(
        exact,
        "invert_rgba8: the surface's texels differ from the CPU's"
    );
    println!("PASS surface 2D: invert_rgba8 over {sw}x{sh} exact");
    let (w, h, d) = (33usize, 17usize, 5usize);
    let pairs: Vec<[f32; 2]> = (0..w * h * d)
        .map(|i| [i as f32, -(i as f32) * 0.5])
        .collect();
    let arr3 = Array::<[f32; 2], 3>::from_host(&stream, [w, h, d], &pairs)?;
    let surf3 = Surface::new(&arr3)?;
    let swap = module.kernel::<(Surface<'static, [f32; 2], 3>, u32, u32, u32)>("swap_pairs_3d")?;
    // SAFETY: a 3D grid over the array; each thread touches its own texel.
    unsafe {
        swap.launch(
            &stream,
            cfg_2d(w, h, d),
            (&surf3, w as u32, h as u32, d as u32),
        )
    }?;
    let back3 = arr3.copy_to_host(&stream)?;
    ensure!(
        back3
            .iter()
            .zip(&pairs)
            .all(|(b, p)| *b == [p[1], p[0] * 2.0]),
        "swap_pairs_3d: the surface's texels differ from the CPU's"
    );
    println!("PASS surface 3D: swap_pairs_3d over {w}x{h}x{d} exact");

    // 4. Refusals.
    match Texture::new(&src, Sampler::POINT.address_mode(AddressMode::Wrap)) {
        Err(e) => println!("refused as expected: {e}"),
        Ok(_) => anyhow::bail!("wrap on texel coordinates accepted"),
    }
    match module
        .kernel::<(Texture<'static, f32, 2>, SliceMut<[u8; 4]>, u32, u32)>("resize_bilinear")
    {
        Err(e) => println!("refused as expected: {e}"),
        Ok(_) => anyhow::bail!("a Texture<f32, 2> accepted for Texture2d<[u8; 4]>"),
    }
    match module
        .kernel::<(Texture<'static, [u8; 4], 3>, SliceMut<[u8; 4]>, u32, u32)>("resize_bilinear")
    {
        Err(e) => println!("refused as expected: {e}"),
        Ok(_) => anyhow::bail!("a 3D texture accepted for Texture2d"),
    }
    println!("texture: all PASS");
    Ok(())
}
