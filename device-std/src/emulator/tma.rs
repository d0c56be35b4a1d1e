//! Tensor maps and tensor copies under the emulator.
//!
//! On the GPU a tensor map is 128 opaque bytes the driver encodes; here it is a
//! [`TensorMapDesc`], built on the host with the same rules the driver checks
//! (`cuTensorMapEncodeTiled`, tile mode, no interleave, no swizzle), whose
//! address a kernel receives as its [`TensorMap`] parameter. A load gathers the
//! box at issue (elements outside the tensor read as zero) and lands like a
//! bulk load (see `mbarrier`); a store writes the box's elements that lie
//! inside the tensor.

#![allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV

use super::mbarrier;
use crate::layout::PlainData;
use crate::tma::{rules, TensorMap};
use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

/// The emulator's tensor map: a `RANK`-dimensional tensor of `elem`-byte
/// elements at `base`, and the box its copies move.
///
/// The description itself lives for the rest of the process (about 100
/// bytes leaked per [`new`](Self::new)): the kernel parameter
/// [`as_param`](Self::as_param) makes is a `'static` address, as on the GPU,
/// so it must never dangle when the descriptor is dropped first.
#[derive(Debug, Clone, Copy)]
pub struct TensorMapDesc {
    d: &'static Desc,
}

/// What a [`TensorMapDesc`] describes.
#[derive(Debug)]
struct Desc {
    base: *mut u8,
    elem: usize,
    rank: usize,
    dims: [u64; 5],
    /// Byte stride of each dimension (`strides[0]` = the element size).
    strides: [u64; 5],
    boxes: [u32; 5],
    /// Shared-memory swizzle in bytes: 0, 32, 64 or 128.
    swizzle: u32,
}

// SAFETY: the descriptor only holds the address the caller vouched for in
// `new`; the emulator's blocks read and write through it as global memory.
unsafe impl Sync for Desc {}
// SAFETY: as above.
unsafe impl Send for Desc {}

impl TensorMapDesc {
    /// A map of the tensor at `base` with extents `dims` (elements, innermost
    /// first), byte strides `strides` of dimensions 1.. (`dims.len() - 1` of
    /// them), copied in boxes of `box_dims`, checked as
    /// `host_loader::tma::TensorMap::tiled` checks before the driver: rank
    /// 1..=5, every extent and stride in range, strides multiples of 16 bytes,
    /// `base` 16-byte aligned, box extents in 1..=256 with the innermost one a
    /// multiple of 16 bytes, and the whole tensor inside `len` elements.
    ///
    /// # Safety
    /// `base` is valid for reads (and, if the kernel stores through the map,
    /// writes) of `len` elements of `T` for as long as launches use the map.
    pub unsafe fn new<T: PlainData>(
        base: *mut T,
        len: usize,
        dims: &[u64],
        strides: &[u64],
        box_dims: &[u32],
    ) -> Result<Self, String> {
        // SAFETY: the caller's contract, passed on.
        unsafe { Self::new_swizzled(base, len, dims, strides, box_dims, 0) }
    }

    /// [`new`](Self::new) for copies that swizzle shared memory by `swizzle` bytes
    /// (0, 32, 64 or 128; `device_std::tma::TensorMap`'s `SWIZZLE`), which also needs the
    /// innermost box extent to span exactly `swizzle` bytes.
    ///
    /// # Safety
    /// As for [`new`](Self::new).
    pub unsafe fn new_swizzled<T: PlainData>(
        base: *mut T,
        len: usize,
        dims: &[u64],
        strides: &[u64],
        box_dims: &[u32],
        swizzle: u32,
    ) -> Result<Self, String> {
        let rank = dims.len();
        let elem = core::mem::size_of::<T>();
        if strides.len() + 1 != rank || box_dims.len() != rank {
            return Err(format!(
                "rank {rank} needs {} strides and {rank} box extents, got {} and {}",
                rank.saturating_sub(1),
                strides.len(),
                box_dims.len()
            ));
        }
        if (base as usize) % 16 != 0 {
            return Err(format!("the base address {base:p} is not 16-byte aligned"));
        }
        let mut boxes = [1usize; 5];
        for (b, &x) in boxes.iter_mut().zip(box_dims) {
            *b = x as usize;
        }
        // The driver's rules, as the device type and the host encoder check them.
        rules::check_box(elem, rank, boxes, swizzle as usize).map_err(|e| e.to_string())?;
        rules::check_layout(elem as u64, dims, strides, len as u64).map_err(|e| e.to_string())?;
        let (mut d, mut s, mut b) = ([1u64; 5], [0u64; 5], [1u32; 5]);
        s[0] = elem as u64;
        d[..rank].copy_from_slice(dims);
        s[1..rank].copy_from_slice(strides);
        b[..rank].copy_from_slice(box_dims);
        let d = std::boxed::Box::leak(std::boxed::Box::new(Desc {
            base: base.cast(),
            elem,
            rank,
            dims: d,
            strides: s,
            boxes: b,
            swizzle,
        }));
        Ok(TensorMapDesc { d })
    }

    /// This map as the kernel parameter of the given shape. Panics when the
    /// element size, rank or box differ (the host loader's ABI check, here).
    pub fn as_param<
        T: PlainData,
        const RANK: usize,
        const B0: usize,
        const B1: usize,
        const B2: usize,
        const B3: usize,
        const B4: usize,
        const SWIZZLE: usize,
    >(
        &self,
    ) -> TensorMap<T, RANK, B0, B1, B2, B3, B4, SWIZZLE> {
        let d = self.d;
        let want = [B0, B1, B2, B3, B4].map(|b| b as u32);
        assert!(
            d.elem == core::mem::size_of::<T>() && d.rank == RANK && d.boxes == want && d.swizzle as usize == SWIZZLE,
            "TensorMapDesc of {} {}-byte elements, box {:?}, swizzle {}, passed for a TensorMap of rank {RANK}, {}-byte elements, box {want:?}, swizzle {SWIZZLE}",
            d.rank,
            d.elem,
            d.boxes,
            d.swizzle,
            core::mem::size_of::<T>()
        );
        // SAFETY: the description has this shape (checked above) and lives for
        // the rest of the process; the emulator's copies read it as a `Desc`.
        unsafe { TensorMap::from_ptr(core::ptr::from_ref(d).cast()) }
    }
}

impl Desc {
    /// The alignment a copy's shared address needs: 128 bytes, or the swizzle's
    /// repeat (`8 * swizzle`).
    fn dst_align(&self) -> usize {
        rules::dst_align(self.swizzle as usize)
    }

    /// For each element of the box at `coords`, in box order: its byte offset
    /// in the tensor, or `None` when it lies outside.
    fn box_elements(&self, coords: [i32; 5]) -> impl Iterator<Item = Option<u64>> + '_ {
        let b = self.boxes;
        let count = b.iter().map(|&x| x as usize).product::<usize>();
        (0..count).map(move |mut k| {
            let mut off = 0u64;
            let mut inside = true;
            for i in 0..5 {
                let j = (k % b[i] as usize) as i64;
                k /= b[i] as usize;
                let x = coords[i] as i64 + j;
                if i < self.rank && (x < 0 || x >= self.dims[i] as i64) {
                    inside = false;
                }
                off = off.wrapping_add((x as u64).wrapping_mul(self.strides[i]));
            }
            inside.then_some(off)
        })
    }
}

/// The description behind a kernel's map parameter.
fn desc(map: *const u8, rank: usize) -> &'static Desc {
    // SAFETY: under the emulator a safe `TensorMap` is only made by
    // `as_param`, which points it at a leaked (never freed) `Desc` of this rank.
    let d = unsafe { &*map.cast::<Desc>() };
    assert_eq!(d.rank, rank, "tensor map rank");
    d
}

/// `TensorMap::load`: gathers the box at `coords` and queues it for shared
/// `dst` on the barrier at `bar`.
#[track_caller]
pub(crate) fn load(map: *const u8, rank: usize, coords: [i32; 5], dst: u32, bytes: u32, bar: u32) {
    let d = desc(map, rank);
    let data = gather(d, coords, bytes);
    mbarrier::queue_load(dst, data, d.dst_align(), bar);
}

/// The box at `coords` as the copy engine writes it to shared memory (`bytes` of it):
/// elements outside the tensor are zeros, and each 16-byte chunk is where the swizzle
/// puts it (the destination is aligned to the pattern's repeat, so offsets in the box
/// swizzle as shared addresses do).
fn gather(d: &Desc, coords: [i32; 5], bytes: u32) -> Vec<u8> {
    let mut data = Vec::with_capacity(bytes as usize);
    for e in d.box_elements(coords) {
        match e {
            // SAFETY: inside the tensor, which `new` checked lies in the buffer.
            Some(off) => data.extend_from_slice(unsafe {
                core::slice::from_raw_parts(d.base.add(off as usize), d.elem)
            }),
            None => data.extend(core::iter::repeat_n(0u8, d.elem)),
        }
    }
    if d.swizzle == 0 {
        return data;
    }
    let mut out = std::vec![0u8; data.len()];
    for (o, chunk) in data.chunks(16).enumerate() {
        let at = super::wgmma::swizzle(16 * o as u32, d.swizzle) as usize;
        out[at..at + chunk.len()].copy_from_slice(chunk);
    }
    out
}

/// `TensorMap::load_multicast`: gathers the box at `coords` and queues it for shared
/// `dst` on the barrier at `bar` in every CTA of the cluster in `mask`.
#[track_caller]
pub(crate) fn load_multicast(
    map: *const u8,
    rank: usize,
    coords: [i32; 5],
    dst: u32,
    bytes: u32,
    bar: u32,
    mask: u16,
) {
    let d = desc(map, rank);
    let data = gather(d, coords, bytes);
    mbarrier::queue_multicast(dst, data, d.dst_align(), bar, mask);
}

/// `TensorMap::store`: writes the box in shared `src` to the tensor at
/// `coords`, elements outside the tensor skipped.
#[track_caller]
pub(crate) fn store(map: *const u8, rank: usize, coords: [i32; 5], src: u32, bytes: u32) {
    let d = desc(map, rank);
    mbarrier::store_from(src, bytes, d.dst_align(), |p| {
        for (k, e) in d.box_elements(coords).enumerate() {
            if let Some(off) = e {
                // Where the swizzle put the box's byte `k * elem` (elements never
                // straddle a 16-byte chunk: sizes are powers of two up to 16).
                let k_at = if d.swizzle == 0 {
                    k * d.elem
                } else {
                    super::wgmma::swizzle((k * d.elem) as u32, d.swizzle) as usize
                };
                // SAFETY: the source holds `bytes` = box bytes (checked read);
                // the destination is inside the tensor, writable per `new`'s
                // contract.
                unsafe {
                    core::ptr::copy_nonoverlapping(p.add(k_at), d.base.add(off as usize), d.elem)
                };
            }
        }
    });
}
