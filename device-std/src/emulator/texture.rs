//! Texture and surface objects under the emulator.
//!
//! A [`TextureDesc`] holds a copy of the texels (as the texture unit reads them:
//! `u8` channels already `b / 255`) and the [`Sampler`]; a fetch applies the
//! addressing and filtering rules `crate::texture` documents. A [`SurfaceDesc`]
//! holds the array's bytes behind a lock, written by kernels and read back by the
//! host. Both are leaked on creation (a few words plus the data), so the `'static`
//! handle a kernel receives never dangles, as a tensor map's does not.

use crate::layout::PlainData;
use crate::texture::{
    AddressMode, ChannelKind, FilterMode, Sampler, Surface, SurfaceTexel, Texel, Texture,
};
use std::boxed::Box;
use std::format;
use std::string::String;
use std::sync::Mutex;
use std::vec::Vec;

/// The emulator's texture object: `D`-dimensional texels and a sampler.
#[derive(Debug, Clone, Copy)]
pub struct TextureDesc {
    d: &'static TexDesc,
}

#[derive(Debug)]
struct TexDesc {
    dims: usize,
    /// Extent per dimension in texels, 1 past `dims`.
    extent: [usize; 3],
    texel_size: usize,
    channels: usize,
    kind: ChannelKind,
    /// Every texel's channels as a fetch reads them, x fastest.
    texels: Vec<[f32; 4]>,
    sampler: Sampler,
}

/// Checks an extent against a texel count; the extent padded to 3 dimensions.
fn check_extent<const D: usize>(extent: [usize; D], len: usize) -> Result<[usize; 3], String> {
    if !(1..=3).contains(&D) {
        return Err(format!("{D} dimensions; textures and surfaces have 1 to 3"));
    }
    let mut e = [1usize; 3];
    e[..D].copy_from_slice(&extent);
    if e.contains(&0) {
        return Err(format!("extent {extent:?} has a zero dimension"));
    }
    let count = e.iter().try_fold(1usize, |a, &b| a.checked_mul(b));
    if count != Some(len) {
        return Err(format!(
            "extent {extent:?} holds {} texels, but {len} were given",
            count.map_or_else(|| String::from("more than usize::MAX"), |c| format!("{c}"))
        ));
    }
    Ok(e)
}

impl TextureDesc {
    /// A texture of `texels` (x fastest, then y, then z) with extent `extent`
    /// (texels per dimension), read as `sampler` says.
    ///
    /// # Errors
    /// An extent with a zero dimension or whose product is not `texels.len()`, and a
    /// sampler [`Sampler::check`] refuses (wrap or mirror on unnormalized coordinates).
    pub fn new<T: Texel, const D: usize>(
        texels: &[T],
        extent: [usize; D],
        sampler: Sampler,
    ) -> Result<Self, String> {
        let e = check_extent(extent, texels.len())?;
        sampler.check(D).map_err(|err| format!("{err}"))?;
        let texels = texels.iter().map(channels_of).collect();
        let d = Box::leak(Box::new(TexDesc {
            dims: D,
            extent: e,
            texel_size: core::mem::size_of::<T>(),
            channels: T::CHANNELS,
            kind: T::KIND,
            texels,
            sampler,
        }));
        Ok(TextureDesc { d })
    }

    /// This texture as the kernel parameter `Texture<T, D>`. Panics when the texel
    /// type or dimension count differ from the description's (the host loader's ABI
    /// check, here).
    #[track_caller]
    pub fn as_param<T: Texel, const D: usize>(&self) -> Texture<T, D> {
        let d = self.d;
        assert!(
            d.dims == D
                && d.texel_size == core::mem::size_of::<T>()
                && d.channels == T::CHANNELS
                && d.kind == T::KIND,
            "TextureDesc of {} dimensions and {}-byte {:?} texels with {} channels, passed \
             for a Texture<{}, {D}>",
            d.dims,
            d.texel_size,
            d.kind,
            d.channels,
            core::any::type_name::<T>()
        );
        // SAFETY: the handle is a leaked `TexDesc` of this shape, which `fetch` reads.
        unsafe { Texture::from_handle(core::ptr::from_ref(d) as u64) }
    }
}

/// A texel's channels as the texture unit reads them: floats as they are, `u8` as
/// the correctly rounded `b / 255` (what the GPU returns).
fn channels_of<T: Texel>(t: &T) -> [f32; 4] {
    let size = core::mem::size_of::<T>();
    // SAFETY: `T` is plain data of `size` bytes.
    let bytes = unsafe { core::slice::from_raw_parts(core::ptr::from_ref(t).cast::<u8>(), size) };
    let mut v = [0.0f32; 4];
    match T::KIND {
        ChannelKind::Float => {
            for (k, c) in bytes.chunks_exact(4).enumerate() {
                v[k] = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
        }
        ChannelKind::UnormU8 => {
            for (k, &b) in bytes.iter().enumerate() {
                v[k] = f32::from(b) / 255.0;
            }
        }
    }
    v
}

/// The description behind a texture handle.
fn tex_desc(handle: u64, dims: usize) -> &'static TexDesc {
    // SAFETY: under the emulator a `Texture` is only made by `as_param` (its
    // `from_handle` contract), which passes the address of a leaked `TexDesc`.
    let d = unsafe { &*(handle as usize as *const TexDesc) };
    assert_eq!(d.dims, dims, "texture dimensions");
    d
}

/// The index an address mode gives texel index `i` of an extent `n`; `None` reads
/// the border colour.
fn address(i: i64, n: usize, mode: AddressMode) -> Option<usize> {
    let n = n as i64;
    let j = match mode {
        AddressMode::Border => return (0..n).contains(&i).then_some(i as usize),
        AddressMode::Clamp => i.clamp(0, n - 1),
        AddressMode::Wrap => i.rem_euclid(n),
        AddressMode::Mirror => {
            let m = i.rem_euclid(2 * n);
            if m < n {
                m
            } else {
                2 * n - 1 - m
            }
        }
    };
    Some(j as usize)
}

impl TexDesc {
    /// Coordinate `c` of dimension `a` in texel space: normalized coordinates scale by
    /// the extent in `f32`; the address mode then maps the index.
    fn texel_coord(&self, c: f32, a: usize) -> f64 {
        let s = &self.sampler;
        if !s.normalized_coords {
            return f64::from(c);
        }
        f64::from(c * self.extent[a] as f32)
    }

    /// The texel at `idx`, or the border colour where an index is `None`.
    fn texel(&self, idx: [Option<usize>; 3]) -> [f32; 4] {
        match idx {
            [Some(x), Some(y), Some(z)] => {
                self.texels[(z * self.extent[1] + y) * self.extent[0] + x]
            }
            _ => self.sampler.border_color,
        }
    }

    fn fetch(&self, c: [f32; 3]) -> [f32; 4] {
        let s = &self.sampler;
        let mut idx = [Some(0usize); 3];
        if s.filter == FilterMode::Point {
            for a in 0..self.dims {
                let i = self.texel_coord(c[a], a).clamp(-1.0e12, 1.0e12).floor() as i64;
                idx[a] = address(i, self.extent[a], s.address[a]);
            }
            return self.texel(idx);
        }
        // Linear: per axis the lower texel and the weight of the upper one, with 8
        // fraction bits (rounded half up). A 1D texture filters as 2D, one row high,
        // at row coordinate 0 (−0.5 in texel space): what the GPU does.
        let axes = self.dims.max(2);
        let mut lower = [0i64; 3];
        let mut alpha = [0.0f64; 3];
        for a in 0..axes {
            let x = if a < self.dims {
                self.texel_coord(c[a], a) - 0.5
            } else {
                -0.5
            };
            // Held to ±2^40 texels (any extent's address mode decides the same there);
            // ±∞ too, so the weights stay finite.
            let x = x.clamp(-1.0e12, 1.0e12);
            let i = x.floor();
            lower[a] = i as i64;
            alpha[a] = ((x - i) * 256.0 + 0.5).floor() / 256.0;
        }
        let mut acc = [0.0f64; 4];
        for corner in 0..1usize << axes {
            let mut w = 1.0f64;
            for a in 0..axes {
                let up = (corner >> a) & 1 == 1;
                w *= if up { alpha[a] } else { 1.0 - alpha[a] };
                idx[a] = address(lower[a] + i64::from(up), self.extent[a], s.address[a]);
            }
            if w == 0.0 {
                continue;
            }
            let t = self.texel(idx);
            for (sum, v) in acc.iter_mut().zip(t) {
                *sum += w * f64::from(v);
            }
        }
        acc.map(round_ties_away)
    }
}

/// `v` rounded to the nearest `f32`, ties away from zero: how the texture unit rounds
/// a filtered value (measured; round-to-even differs on ties).
fn round_ties_away(v: f64) -> f32 {
    let r = v as f32;
    let d = v - f64::from(r);
    if d == 0.0 || r == 0.0 || !r.is_finite() {
        return r;
    }
    // The other neighbour of `v`: one ulp from `r` towards `v`.
    let toward_larger = (d > 0.0) == (r > 0.0);
    let n = f32::from_bits(if toward_larger {
        r.to_bits() + 1
    } else {
        r.to_bits() - 1
    });
    if toward_larger && (f64::from(n) - v).abs() == d.abs() {
        n
    } else {
        r
    }
}

/// `Texture::fetch` under the emulator.
pub(crate) fn fetch(handle: u64, dims: usize, c: [f32; 3]) -> [f32; 4] {
    tex_desc(handle, dims).fetch(c)
}

/// The emulator's surface object: a `D`-dimensional CUDA array kernels read and
/// write through [`Surface`], and the host reads back.
#[derive(Debug, Clone, Copy)]
pub struct SurfaceDesc {
    d: &'static SurfDesc,
}

#[derive(Debug)]
struct SurfDesc {
    dims: usize,
    extent: [usize; 3],
    texel_size: usize,
    bytes: Mutex<Vec<u8>>,
}

impl SurfaceDesc {
    /// A surface over an array of extent `extent` (texels per dimension) holding
    /// `texels` (x fastest).
    ///
    /// # Errors
    /// An extent with a zero dimension or whose product is not `texels.len()`, or a
    /// texel size other than 1, 2, 4, 8 or 16 bytes.
    pub fn new<T: SurfaceTexel, const D: usize>(
        texels: &[T],
        extent: [usize; D],
    ) -> Result<Self, String> {
        let e = check_extent(extent, texels.len())?;
        let size = core::mem::size_of::<T>();
        if ![1, 2, 4, 8, 16].contains(&size) {
            return Err(format!(
                "{size}-byte texels; surfaces take 1, 2, 4, 8 or 16 bytes"
            ));
        }
        // SAFETY: plain data, `texels.len() * size` bytes.
        let bytes = unsafe {
            core::slice::from_raw_parts(
                texels.as_ptr().cast::<u8>(),
                core::mem::size_of_val(texels),
            )
        };
        let d = Box::leak(Box::new(SurfDesc {
            dims: D,
            extent: e,
            texel_size: size,
            bytes: Mutex::new(bytes.to_vec()),
        }));
        Ok(SurfaceDesc { d })
    }

    /// This surface as the kernel parameter `Surface<T, D>`. Panics when the texel
    /// size or dimension count differ.
    #[track_caller]
    pub fn as_param<T: SurfaceTexel, const D: usize>(&self) -> Surface<T, D> {
        let d = self.d;
        assert!(
            d.dims == D && d.texel_size == core::mem::size_of::<T>(),
            "SurfaceDesc of {} dimensions and {}-byte texels, passed for a Surface<{}, {D}>",
            d.dims,
            d.texel_size,
            core::any::type_name::<T>()
        );
        // SAFETY: the handle is a leaked `SurfDesc` of this shape.
        unsafe { Surface::from_handle(core::ptr::from_ref(d) as u64) }
    }

    /// The array's texels now (x fastest). Panics if `T`'s size is not the texel size.
    pub fn read_back<T: PlainData>(&self) -> Vec<T> {
        let size = core::mem::size_of::<T>();
        assert_eq!(
            size, self.d.texel_size,
            "SurfaceDesc::read_back: texel size"
        );
        let bytes = self.d.bytes.lock().unwrap_or_else(|p| p.into_inner());
        bytes
            .chunks_exact(size)
            // SAFETY: each chunk holds `size_of::<T>()` bytes of plain data.
            .map(|c| unsafe { core::ptr::read_unaligned(c.as_ptr().cast::<T>()) })
            .collect()
    }
}

/// The byte offset of texel `c`, or a panic naming the coordinates and extent (the
/// GPU's `.trap`).
#[track_caller]
fn surface_offset(d: &SurfDesc, c: [u32; 3], what: &str) -> usize {
    let inside = (0..d.dims).all(|a| (c[a] as usize) < d.extent[a]);
    if !inside {
        panic!(
            "surface {what} at {:?} outside the {:?} array (a GPU traps: suld/sust .trap)",
            &c[..d.dims],
            &d.extent[..d.dims]
        );
    }
    ((c[2] as usize * d.extent[1] + c[1] as usize) * d.extent[0] + c[0] as usize) * d.texel_size
}

/// The description behind a surface handle.
fn surf_desc(handle: u64, dims: usize) -> &'static SurfDesc {
    // SAFETY: under the emulator a `Surface` is only made by `as_param`, which
    // passes the address of a leaked `SurfDesc`.
    let d = unsafe { &*(handle as usize as *const SurfDesc) };
    assert_eq!(d.dims, dims, "surface dimensions");
    d
}

/// `Surface::read` under the emulator: the texel's bytes, zero-padded to 16.
#[track_caller]
pub(crate) fn surface_read(handle: u64, dims: usize, c: [u32; 3], size: usize) -> [u8; 16] {
    let d = surf_desc(handle, dims);
    assert_eq!(size, d.texel_size, "surface texel size");
    let at = surface_offset(d, c, "read");
    let bytes = d.bytes.lock().unwrap_or_else(|p| p.into_inner());
    let mut v = [0u8; 16];
    v[..size].copy_from_slice(&bytes[at..at + size]);
    v
}

/// `Surface::write` under the emulator.
#[track_caller]
pub(crate) fn surface_write(handle: u64, dims: usize, c: [u32; 3], size: usize, v: [u32; 4]) {
    let d = surf_desc(handle, dims);
    assert_eq!(size, d.texel_size, "surface texel size");
    let at = surface_offset(d, c, "write");
    let mut bytes = d.bytes.lock().unwrap_or_else(|p| p.into_inner());
    let src: Vec<u8> = v.iter().flat_map(|w| w.to_le_bytes()).collect();
    bytes[at..at + size].copy_from_slice(&src[..size]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_modes_map_indices_as_cuda_documents() {
        let n = 4;
        let idx = |mode| (-5..9).map(|i| address(i, n, mode)).collect::<Vec<_>>();
        let some = |v: &[usize]| v.iter().map(|&i| Some(i)).collect::<Vec<_>>();
        assert_eq!(
            idx(AddressMode::Clamp),
            some(&[0, 0, 0, 0, 0, 0, 1, 2, 3, 3, 3, 3, 3, 3])
        );
        assert_eq!(
            idx(AddressMode::Wrap),
            some(&[3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0])
        );
        assert_eq!(
            idx(AddressMode::Mirror),
            some(&[3, 3, 2, 1, 0, 0, 1, 2, 3, 3, 2, 1, 0, 0])
        );
        let border = idx(AddressMode::Border);
        assert_eq!(border[..5], [None; 5]);
        assert_eq!(border[5..9], some(&[0, 1, 2, 3])[..]);
        assert_eq!(border[9..], [None; 5]);
    }
}
