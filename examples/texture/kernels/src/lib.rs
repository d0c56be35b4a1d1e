//! Texture and surface objects in kernels (issue 29, part 4).
//!
//! - `resize_bilinear`: an RGBA8 image resized through the texture unit's bilinear
//!   filter at normalized coordinates, the classic use (`texture.cu` is its nvcc twin).
//! - `sample_{1,2,3}d_{f32,rgba8}`: one fetch per coordinate triple, for comparing
//!   the GPU's texture unit through our `tex` instructions with nvcc's
//!   (`calibrate.cu`) and with the emulator's rules.
//! - `invert_rgba8` (2D) and `swap_pairs_3d` (3D): reads and writes through surfaces.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

use device_std::math::fmaf;
use device_std::texture::{Surface2d, Surface3d, Texture1d, Texture2d, Texture3d};
use device_std::{kernel, thread, DisjointSlice, Runtime2DIndex};

/// Threads per block along x and y of the 2D launches.
pub const BLOCK_2D: (u32, u32) = (32, 8);

/// `dst` (`width × height` pixels, row-major) = `src` resampled bilinearly: pixel
/// `(x, y)` reads the texture at the normalized coordinates of its centre,
/// `((x + 0.5) / width, (y + 0.5) / height)`, and rounds each channel to 8 bits.
/// `src` must use linear filtering and normalized coordinates. Launch a 2D grid
/// covering `width × height`; `dst` starts at a multiple of 4 bytes (`slice_align`, as
/// an allocation does), so each pixel is one 4-byte store.
#[kernel(dims = 2, slice_align = 4)]
pub fn resize_bilinear(
    src: Texture2d<[u8; 4]>,
    mut dst: DisjointSlice<[u8; 4], Runtime2DIndex>,
    width: u32,
    height: u32,
) {
    // SAFETY: every thread passes the same `width`.
    let Some(i) = (unsafe { thread::index_2d_runtime(width as usize) }) else {
        return;
    };
    let (x, y) = (thread::global_x() as u32, thread::global_y() as u32);
    if y >= height {
        return;
    }
    let u = (x as f32 + 0.5) / width as f32;
    let v = (y as f32 + 0.5) / height as f32;
    let p = src.fetch(u, v);
    if let Some(out) = dst.get_mut(&i) {
        // SAFETY: a filtered read of 8-bit texels in normalized-float mode is in
        // [0, 1], so c·255 + 0.5 is in [0.5, 255.5] and truncates to 0..=255 (one
        // conversion, without the clamps a saturating `as` adds).
        let byte = |c: f32| unsafe { fmaf(c, 255.0, 0.5).to_int_unchecked::<u32>() } as u8;
        let word = u32::from_ne_bytes(p.map(byte));
        // SAFETY: `dst` starts at a multiple of 4 bytes (`slice_align = 4`, checked by
        // the launch) and its elements are 4 bytes, so `out` is 4-byte aligned; a
        // `[u8; 4]` and a `u32` have the same size and no invalid bit patterns.
        unsafe { (out as *mut [u8; 4]).cast::<u32>().write(word) };
    }
}

/// The coordinate triple of sample `k`.
#[inline(always)]
fn coords(c: &[f32], k: usize) -> (f32, f32, f32) {
    (c[3 * k], c[3 * k + 1], c[3 * k + 2])
}

/// `out[k] = t.fetch(x_k)` for the triples `(x, y, z)` in `c` (only x used).
#[kernel(dims = 1)]
pub fn sample_1d_f32(t: Texture1d<f32>, c: &[f32], mut out: DisjointSlice<f32>) {
    let i = thread::index_1d();
    if i.get() < c.len() / 3 {
        let (x, _, _) = coords(c, i.get());
        if let Some(o) = out.get_mut(&i) {
            *o = t.fetch(x);
        }
    }
}

/// `out[k] = t.fetch(x_k, y_k)`.
#[kernel(dims = 1)]
pub fn sample_2d_f32(t: Texture2d<f32>, c: &[f32], mut out: DisjointSlice<f32>) {
    let i = thread::index_1d();
    if i.get() < c.len() / 3 {
        let (x, y, _) = coords(c, i.get());
        if let Some(o) = out.get_mut(&i) {
            *o = t.fetch(x, y);
        }
    }
}

/// `out[k] = t.fetch(x_k, y_k, z_k)`.
#[kernel(dims = 1)]
pub fn sample_3d_f32(t: Texture3d<f32>, c: &[f32], mut out: DisjointSlice<f32>) {
    let i = thread::index_1d();
    if i.get() < c.len() / 3 {
        let (x, y, z) = coords(c, i.get());
        if let Some(o) = out.get_mut(&i) {
            *o = t.fetch(x, y, z);
        }
    }
}

/// `out[k] = t.fetch(x_k)` of RGBA8 texels read as normalized floats.
#[kernel(dims = 1)]
pub fn sample_1d_rgba8(t: Texture1d<[u8; 4]>, c: &[f32], mut out: DisjointSlice<[f32; 4]>) {
    let i = thread::index_1d();
    if i.get() < c.len() / 3 {
        let (x, _, _) = coords(c, i.get());
        if let Some(o) = out.get_mut(&i) {
            *o = t.fetch(x);
        }
    }
}

/// `out[k] = t.fetch(x_k, y_k)` of RGBA8 texels.
#[kernel(dims = 1)]
pub fn sample_2d_rgba8(t: Texture2d<[u8; 4]>, c: &[f32], mut out: DisjointSlice<[f32; 4]>) {
    let i = thread::index_1d();
    if i.get() < c.len() / 3 {
        let (x, y, _) = coords(c, i.get());
        if let Some(o) = out.get_mut(&i) {
            *o = t.fetch(x, y);
        }
    }
}

/// `out[k] = t.fetch(x_k, y_k, z_k)` of RGBA8 texels.
#[kernel(dims = 1)]
pub fn sample_3d_rgba8(t: Texture3d<[u8; 4]>, c: &[f32], mut out: DisjointSlice<[f32; 4]>) {
    let i = thread::index_1d();
    if i.get() < c.len() / 3 {
        let (x, y, z) = coords(c, i.get());
        if let Some(o) = out.get_mut(&i) {
            *o = t.fetch(x, y, z);
        }
    }
}

/// Inverts the colour channels of a `width × height` RGBA8 image in place through
/// its surface (alpha kept). Launch a 2D grid covering the image.
#[kernel(dims = 2)]
pub fn invert_rgba8(s: Surface2d<[u8; 4]>, width: u32, height: u32) {
    let (x, y) = (thread::global_x() as u32, thread::global_y() as u32);
    if x < width && y < height {
        let [r, g, b, a] = s.read(x, y);
        // SAFETY: each thread reads and writes only its own texel.
        unsafe { s.write(x, y, [255 - r, 255 - g, 255 - b, a]) };
    }
}

/// Swaps the two channels of every texel of a `extent[0] × extent[1] × extent[2]`
/// array of `[f32; 2]` through its surface, and doubles the second. One thread per
/// texel along x; y and z from the grid's y and z (a 3D launch).
#[kernel]
pub fn swap_pairs_3d(s: Surface3d<[f32; 2]>, w: u32, h: u32, d: u32) {
    let x = thread::global_x() as u32;
    let y = thread::global_y() as u32;
    let z = thread::global_z() as u32;
    if x < w && y < h && z < d {
        let [a, b] = s.read(x, y, z);
        // SAFETY: each thread reads and writes only its own texel.
        unsafe { s.write(x, y, z, [b, a * 2.0]) };
    }
}
