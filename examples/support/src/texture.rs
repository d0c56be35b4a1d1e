//! The texture example's inputs and references: the sample cases `calibrate.cu` runs
//! (regenerated here bit for bit from the same splitmix64 seeds), and a CPU bilinear
//! resize by the CUDA Programming Guide's rules.

use host_loader::texture::{AddressMode, Sampler};

/// splitmix64, as `examples/texture/calibrate.cu` has it.
#[derive(Debug, Clone)]
pub struct SplitMix(pub u64);

impl SplitMix {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi)` with 24 random bits, in `f32` arithmetic as the C++ does.
    pub fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * (self.next_u64() >> 40) as f32 * (1.0 / 16_777_216.0)
    }
}

/// One sample case: a texture and the coordinates fetched from it.
#[derive(Debug, Clone)]
pub struct SampleCase {
    /// `false`: `f32` texels; `true`: `[u8; 4]` read as normalized floats.
    pub rgba8: bool,
    /// 1, 2 or 3.
    pub dims: usize,
    /// Extent in texels, 1 past `dims`.
    pub extent: [usize; 3],
    /// Linear (else point) filtering.
    pub linear: bool,
    /// Normalized coordinates.
    pub normalized: bool,
    /// `CUaddress_mode`: wrap 0, clamp 1, mirror 2, border 3.
    pub address: u32,
    /// The `f32` texels (used when `!rgba8`), x fastest.
    pub texels_f32: Vec<f32>,
    /// The `[u8; 4]` texels (used when `rgba8`).
    pub texels_rgba8: Vec<[u8; 4]>,
    /// Coordinate triples `(x, y, z)`; only the first `dims` are used.
    pub coords: Vec<f32>,
}

impl SampleCase {
    /// Floats one fetch returns: 1 or 4.
    pub fn channels(&self) -> usize {
        if self.rgba8 {
            4
        } else {
            1
        }
    }

    /// The sampler `calibrate.cu` asked for: filter, coordinates and `address` as
    /// `CUaddress_mode` (wrap 0, clamp 1, mirror 2, border 3).
    pub fn requested_sampler(&self) -> Sampler {
        let mode = [
            AddressMode::Wrap,
            AddressMode::Clamp,
            AddressMode::Mirror,
            AddressMode::Border,
        ][self.address as usize];
        let base = if self.linear {
            Sampler::LINEAR
        } else {
            Sampler::POINT
        };
        let mut s = base.address_mode(mode);
        s.normalized_coords = self.normalized;
        s
    }

    /// The sampler the texture unit used: wrap and mirror on texel coordinates clamp
    /// (the toolkit refuses them, so the case is made with clamp).
    pub fn sampler(&self) -> Sampler {
        let s = self.requested_sampler();
        if !self.normalized && matches!(self.address, 0 | 2) {
            s.address_mode(AddressMode::Clamp)
        } else {
            s
        }
    }

    /// Fetches in the case.
    pub fn len(&self) -> usize {
        self.coords.len() / 3
    }

    /// Whether the case has no fetch (never).
    pub fn is_empty(&self) -> bool {
        self.coords.is_empty()
    }
}

/// Floats one fetch per case gives over all 96 cases: 48 `f32` cases of 1, 48 RGBA8
/// cases of 4.
pub const FLOATS_PER_ROUND: usize = 48 + 48 * 4;

/// The fetches per case of a results file of `bytes` bytes, if it has a whole number.
pub fn samples_per_case(bytes: usize) -> Option<usize> {
    let per = 4 * FLOATS_PER_ROUND;
    (bytes.is_multiple_of(per) && bytes > 0).then_some(bytes / per)
}

/// The 96 cases of `calibrate.cu` with `samples` fetches each, in its order: format ×
/// dimensions × filter × normalized × address mode. The first `k` fetches of a case
/// are the same for every `samples ≥ k`.
pub fn sample_cases(samples: usize) -> Vec<SampleCase> {
    let shapes = [[100, 1, 1], [37, 23, 1], [9, 7, 5]];
    let mut cases = Vec::new();
    for rgba8 in [false, true] {
        for dims in 1..=3 {
            for linear in [false, true] {
                for normalized in [false, true] {
                    for address in 0..4 {
                        let ci = cases.len() as u64;
                        let extent = shapes[dims - 1];
                        let mut rng = SplitMix(0x7e47 + ci);
                        let texels = extent.iter().product::<usize>();
                        let texels_f32 = (0..texels).map(|_| rng.uniform(-2.0, 2.0)).collect();
                        let bytes: Vec<u8> = (0..texels * 4)
                            .map(|_| (rng.next_u64() >> 56) as u8)
                            .collect();
                        let texels_rgba8 = bytes
                            .chunks_exact(4)
                            .map(|c| [c[0], c[1], c[2], c[3]])
                            .collect();
                        let mut coords = Vec::with_capacity(3 * samples);
                        for _ in 0..samples {
                            for &e in &extent {
                                let (lo, hi) = if normalized {
                                    (-0.35f32, 1.35f32)
                                } else {
                                    (-0.35 * e as f32, 1.35 * e as f32)
                                };
                                coords.push(rng.uniform(lo, hi));
                            }
                        }
                        cases.push(SampleCase {
                            rgba8,
                            dims,
                            extent,
                            linear,
                            normalized,
                            address,
                            texels_f32,
                            texels_rgba8,
                            coords,
                        });
                    }
                }
            }
        }
    }
    cases
}

/// Splits the results file `calibrate.cu` writes (little-endian `f32`s, case after
/// case) into one vector per case. `None` when its length does not fit `cases`.
pub fn split_samples(bytes: &[u8], cases: &[SampleCase]) -> Option<Vec<Vec<f32>>> {
    let floats: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let want: usize = cases.iter().map(|c| c.len() * c.channels()).sum();
    if !bytes.len().is_multiple_of(4) || floats.len() != want {
        return None;
    }
    let mut at = 0;
    Some(
        cases
            .iter()
            .map(|c| {
                let n = c.len() * c.channels();
                at += n;
                floats[at - n..at].to_vec()
            })
            .collect(),
    )
}

/// A random RGBA8 image of `w × h` pixels.
pub fn random_image(seed: u64, w: usize, h: usize) -> Vec<[u8; 4]> {
    let mut rng = SplitMix(seed);
    (0..w * h)
        .map(|_| {
            rng.next_u64().to_le_bytes()[..4]
                .try_into()
                .expect("4 bytes")
        })
        .collect()
}

/// `resize_bilinear` on the CPU: normalized-coordinate bilinear filtering with clamp
/// to edge, weights rounded to 8 fraction bits per axis, products exact (the GPU
/// rounds them in a way not reproduced here: expect at most 1 apart per channel).
pub fn resize_reference(
    src: &[[u8; 4]],
    sw: usize,
    sh: usize,
    dw: usize,
    dh: usize,
) -> Vec<[u8; 4]> {
    let axis = |o: usize, dn: usize, sn: usize| {
        let u = (o as f32 + 0.5) / dn as f32;
        let x = f64::from(u * sn as f32) - 0.5;
        let i = x.floor();
        let a = ((x - i) * 256.0 + 0.5).floor() / 256.0;
        let clamp = |k: f64| (k.max(0.0) as usize).min(sn - 1);
        (clamp(i), clamp(i + 1.0), a)
    };
    let mut out = Vec::with_capacity(dw * dh);
    for y in 0..dh {
        let (y0, y1, b) = axis(y, dh, sh);
        for x in 0..dw {
            let (x0, x1, a) = axis(x, dw, sw);
            let mut px = [0u8; 4];
            for (k, p) in px.iter_mut().enumerate() {
                let t = |xx: usize, yy: usize| f64::from(f32::from(src[yy * sw + xx][k]) / 255.0);
                let v = (1.0 - a) * (1.0 - b) * t(x0, y0)
                    + a * (1.0 - b) * t(x1, y0)
                    + (1.0 - a) * b * t(x0, y1)
                    + a * b * t(x1, y1);
                *p = (v as f32).mul_add(255.0, 0.5) as u8;
            }
            out.push(px);
        }
    }
    out
}

/// FNV-1a over bytes: the hash both resize programs print.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
