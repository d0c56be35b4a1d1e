//! `examples/texture` and `device_std::texture` under the emulator: the emulator's
//! texture unit against what an H100 returned for the same 96 cases
//! (`examples/texture/gpu-samples-256.bin`, written by `calibrate.cu`), the bilinear
//! resize against the CPU rules, surfaces exactly, and the misuses reported.

use device_std::emulator::{
    self, EmulatorError, GlobalMut, LaunchConfig, SurfaceDesc, TextureDesc,
};
use device_std::texture::{AddressMode, Sampler, Texel, Texture};
use example_support::texture::{
    random_image, resize_reference, sample_cases, samples_per_case, split_samples, SampleCase,
};
use texture_kernels::BLOCK_2D;

const GPU_SAMPLES: &[u8] = include_bytes!("../../texture/gpu-samples-256.bin");

/// Runs `kernel` over the case's coordinates on a texture of `texels`, under the
/// emulator; the fetched floats.
fn emulate<T: Texel + Sync, const D: usize, O: bytemuck::Pod + Default + Send>(
    c: &SampleCase,
    texels: &[T],
    kernel: fn(Texture<T, D>, &[f32], device_std::DisjointSlice<O>),
) -> Vec<f32> {
    let extent: [usize; D] = c.extent[..D].try_into().unwrap();
    let desc = TextureDesc::new(texels, extent, c.sampler()).unwrap();
    let tex = desc.as_param::<T, D>();
    let mut out = vec![O::default(); c.len()];
    let o = GlobalMut::new(&mut out);
    let coords = &c.coords;
    emulator::launch(LaunchConfig::for_num_elems(c.len() as u32, 128), || {
        kernel(tex, coords, o.disjoint())
    })
    .unwrap();
    bytemuck::cast_slice::<O, f32>(&out).to_vec()
}

#[test]
fn the_emulated_texture_unit_matches_the_gpu() {
    let per_case = samples_per_case(GPU_SAMPLES.len()).unwrap();
    let cases = sample_cases(per_case);
    let gpu = split_samples(GPU_SAMPLES, &cases).unwrap();
    let mut report = Vec::new();
    let mut worst = 0.0f32;
    for (ci, (c, gpu)) in cases.iter().zip(&gpu).enumerate() {
        use texture_kernels as k;
        let emu = match (c.rgba8, c.dims) {
            (false, 1) => emulate(c, &c.texels_f32, k::sample_1d_f32),
            (false, 2) => emulate(c, &c.texels_f32, k::sample_2d_f32),
            (false, _) => emulate(c, &c.texels_f32, k::sample_3d_f32),
            (true, 1) => emulate(c, &c.texels_rgba8, k::sample_1d_rgba8),
            (true, 2) => emulate(c, &c.texels_rgba8, k::sample_2d_rgba8),
            (true, _) => emulate(c, &c.texels_rgba8, k::sample_3d_rgba8),
        };
        // The spread of the texel values (channels read as floats), for the bound.
        let spread = if c.rgba8 { 1.0 } else { 4.0 };
        let mut differ = 0;
        for (i, (e, g)) in emu.iter().zip(gpu).enumerate() {
            if e.to_bits() == g.to_bits() {
                continue;
            }
            differ += 1;
            worst = worst.max((e - g).abs() / spread);
            let bound = spread / 128.0;
            assert!(
                c.linear && (e - g).abs() <= bound,
                "case {ci} ({c:?}) value {i}: emulator {e}, GPU {g}",
                c = (c.rgba8, c.dims, c.linear, c.normalized, c.address)
            );
        }
        if !c.linear || !c.rgba8 && c.dims == 1 && !c.normalized && c.address != 3 {
            // Point filtering, every address mode, and 1D linear filtering on texel
            // coordinates (clamped) give the GPU's bits.
            assert_eq!(differ, 0, "case {ci}");
        }
        report.push(differ);
        eprintln!(
            "case {ci:2}: {} {}D {} {} address {}: {differ} of {} differ",
            if c.rgba8 { "rgba8" } else { "f32  " },
            c.dims,
            if c.linear { "linear" } else { "point " },
            if c.normalized { "norm " } else { "texel" },
            c.address,
            gpu.len()
        );
    }
    eprintln!("worst difference: {worst} of the texel spread");
    // Measured: a third of the values (linear filtering) differ in low bits, at most
    // 1.1/256 of the spread.
    let differ: usize = report.iter().sum();
    let total: usize = gpu.iter().map(Vec::len).sum();
    assert!(differ * 2 < total, "{differ} of {total} values differ");
}

#[test]
fn resize_follows_the_cpu_rules() {
    let (sw, sh, dw, dh) = (37, 23, 80, 50);
    let image = random_image(5, sw, sh);
    let desc = TextureDesc::new(&image, [sw, sh], Sampler::LINEAR.normalized()).unwrap();
    let tex = desc.as_param::<[u8; 4], 2>();
    // Pixels in `u32` storage: the kernel declares `slice_align = 4`.
    let mut words = vec![u32::from_ne_bytes([7; 4]); dw * dh];
    let out: &mut [[u8; 4]] = bytemuck::cast_slice_mut(&mut words);
    let o = GlobalMut::new(out);
    let cfg = LaunchConfig::new(
        (dw.div_ceil(32) as u32, dh.div_ceil(8) as u32, 1),
        (BLOCK_2D.0, BLOCK_2D.1, 1),
    );
    emulator::launch(cfg, || {
        texture_kernels::resize_bilinear(tex, o.disjoint(), dw as u32, dh as u32)
    })
    .unwrap();
    let out: &[[u8; 4]] = bytemuck::cast_slice(&words);
    assert_eq!(out, &resize_reference(&image, sw, sh, dw, dh)[..]);
}

#[test]
fn surfaces_read_and_write_texels() {
    let (w, h) = (19, 11);
    let image = random_image(6, w, h);
    let surf = SurfaceDesc::new(&image, [w, h]).unwrap();
    let s = surf.as_param::<[u8; 4], 2>();
    let cfg = LaunchConfig::new((1, 2, 1), (32, 8, 1));
    emulator::launch(cfg, || texture_kernels::invert_rgba8(s, w as u32, h as u32)).unwrap();
    let want: Vec<[u8; 4]> = image
        .iter()
        .map(|p| [255 - p[0], 255 - p[1], 255 - p[2], p[3]])
        .collect();
    assert_eq!(surf.read_back::<[u8; 4]>(), want);

    let (w, h, d) = (5, 3, 2);
    let pairs: Vec<[f32; 2]> = (0..w * h * d)
        .map(|i| [i as f32, 0.25 - i as f32])
        .collect();
    let surf = SurfaceDesc::new(&pairs, [w, h, d]).unwrap();
    let s = surf.as_param::<[f32; 2], 3>();
    let cfg = LaunchConfig::new((1, 1, d as u32), (8, 4, 1));
    emulator::launch(cfg, || {
        texture_kernels::swap_pairs_3d(s, w as u32, h as u32, d as u32)
    })
    .unwrap();
    let want: Vec<[f32; 2]> = pairs.iter().map(|p| [p[1], p[0] * 2.0]).collect();
    assert_eq!(surf.read_back::<[f32; 2]>(), want);
}

#[test]
fn a_surface_access_out_of_range_is_reported_at_the_kernel_line() {
    let surf = SurfaceDesc::new(&[[0u8; 4]; 6], [3, 2]).unwrap();
    let s = surf.as_param::<[u8; 4], 2>();
    // The grid covers 32 x 8 texels and the kernel is told the image is that large.
    let err = emulator::launch(LaunchConfig::new((1, 1, 1), (32, 8, 1)), || {
        texture_kernels::invert_rgba8(s, 32, 8)
    })
    .unwrap_err();
    assert!(matches!(err, EmulatorError::Panic { .. }), "{err}");
    let msg = format!("{err}");
    assert!(msg.contains("outside the [3, 2] array"), "{msg}");
    assert!(msg.contains("texture/kernels/src/lib.rs"), "{msg}");
}

#[test]
fn wrap_on_texel_coordinates_and_mismatched_parameters_are_refused() {
    let err = TextureDesc::new(
        &[0.0f32; 4],
        [4],
        Sampler::POINT.address_mode(AddressMode::Wrap),
    )
    .unwrap_err();
    assert!(err.contains("needs normalized coordinates"), "{err}");
    let err = TextureDesc::new(&[0.0f32; 5], [2, 2], Sampler::POINT).unwrap_err();
    assert!(err.contains("holds 4 texels, but 5"), "{err}");
    let desc = TextureDesc::new(&[0.0f32; 4], [2, 2], Sampler::POINT).unwrap();
    let wrong = std::panic::catch_unwind(|| desc.as_param::<[u8; 4], 2>());
    assert!(wrong.is_err());
    let wrong = std::panic::catch_unwind(|| desc.as_param::<f32, 1>());
    assert!(wrong.is_err());
}
