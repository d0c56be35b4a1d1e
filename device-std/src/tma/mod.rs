//! Tensor copies through the Tensor Memory Accelerator (sm_90): a box of a 1D–5D
//! tensor in global memory, described by a tensor map the host encodes
//! (`cuTensorMapEncodeTiled`), copied into shared memory or back.
//!
//! | here | PTX (PTX ISA 9.0 §9.7.9.27 "cp.async.bulk.tensor", §9.7.9.28 "prefetch.tensormap") |
//! |---|---|
//! | [`TensorMap::load`] | `cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes [dst], [map, {c0, …}], [mbar]` |
//! | [`TensorMap::load_multicast`] | the same with `.multicast::cluster [..], ctaMask` (every CTA of the cluster in the mask) |
//! | [`TensorMap::store`] | `cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group [map, {c0, …}], [src]` |
//! | [`TensorMap::prefetch`] | `prefetch.tensormap [map]` |
//!
//! # Where the map lives
//!
//! A `CUtensorMap` is 128 bytes aligned to 64. CUDA C++ passes it by value as a
//! `__grid_constant__` parameter; stock rustc cannot (a kernel parameter aligned
//! above 16 bytes is an internal compiler error, and taking a by-value
//! parameter's address copies it to local memory). So here **the map lives in
//! global memory** and the kernel takes its address: [`TensorMap`] is one
//! `.param .u64`, and `host_loader::tma::TensorMap` uploads the encoded bytes to
//! a 128-byte device buffer. The copy engine reads the map through the L2
//! cache; [`TensorMap::prefetch`] warms it. ARCHITECTURE.md ("The ABI") has
//! the measured cost.
//!
//! # The box is part of the type
//!
//! `TensorMap<T, RANK, B0, B1, …>`: elements of type `T`, a `RANK`-dimensional
//! tensor, copied in boxes of `B0 × B1 × …` elements (`B0` the innermost,
//! contiguous dimension). A [`load`](TensorMap::load) into a `SharedArray<T, N, A>`
//! compiles only when `N` is the box's element count and `A` is at least
//! [`DST_ALIGN`](TensorMap::DST_ALIGN) (128; 1024 with the 128-byte swizzle),
//! and the box extents are written into the kernel's ABI record (kind
//! [`crate::abi::TENSOR_MAP`]), so the host refuses a map of another
//! element type, rank or box before launching. Elements of the box outside the
//! tensor read as zero and are not written by a store.
//!
//! ```no_run
//! use device_std::{thread, tma::TensorMap, Mbarrier, Phase, SharedArray};
//! // One 32 x 32 tile of a row-major f32 matrix per block.
//! fn tile(map: TensorMap<f32, 2, 32, 32>) -> f32 {
//!     let smem = SharedArray::<f32, 1024, 128>::new();
//!     let bar = Mbarrier::new(1);
//!     let mut phase = Phase::new();
//!     if thread::thread_in_block() == 0 {
//!         bar.arrive_expect_tx(TensorMap::<f32, 2, 32, 32>::BOX_BYTES);
//!         let (x, y) = (32 * thread::blockIdx_x() as i32, 32 * thread::blockIdx_y() as i32);
//!         map.load(&smem, [x, y], &bar);
//!     }
//!     bar.wait(&mut phase);
//!     smem.read(thread::thread_in_block() as usize)
//! }
//! ```

#![allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV

pub mod rules;

use crate::abi::{KernelParam, ParamAbi, TENSOR_MAP};
use crate::host::on_device;
use crate::layout::{FieldLayout, HasValueClass, PlainData};
use crate::{Mbarrier, SharedArray};
use core::marker::PhantomData;

/// The address of a tensor map in global memory, for boxes of
/// `B0 × B1 × B2 × B3 × B4` elements of `T` of a `RANK`-dimensional tensor
/// (extents past `RANK` are 1), swizzled by `SWIZZLE` bytes in shared memory. A kernel parameter (one `.param .u64`); see the
/// [module docs](self).
///
/// `SWIZZLE` is the shared-memory swizzle the copies apply (`cuTensorMapEncodeTiled`'s
/// `CUtensorMapSwizzle`): 0 for none, or 32, 64, 128 bytes. With a swizzle, the byte
/// at offset `o` of the unswizzled box lands at `o ^ (((o >> 7) & m) << 4)`, `m =
/// SWIZZLE / 16 - 1`: the 16-byte chunk within each 128-byte line is XORed with the
/// line's index in its group of `SWIZZLE / 16` lines (CUTLASS's `Swizzle<3,4,3>` for
/// 128 bytes), the layout Hopper's `wgmma` descriptors read (`device_std::wgmma`).
///
/// Compile-time rules (a const panic otherwise): `RANK` in 1..=5, every extent
/// in 1..=256, extents past `RANK` equal to 1, `B0 * size_of::<T>()` a
/// multiple of 16 bytes (the driver's rule for the innermost box extent), and with a
/// swizzle exactly `SWIZZLE` bytes (the driver also takes narrower boxes; this library
/// does not, so one layout holds); destinations aligned to
/// [`DST_ALIGN`](Self::DST_ALIGN).
#[repr(transparent)]
#[derive(Debug, Clone, Copy)]
pub struct TensorMap<
    T,
    const RANK: usize,
    const B0: usize,
    const B1: usize = 1,
    const B2: usize = 1,
    const B3: usize = 1,
    const B4: usize = 1,
    const SWIZZLE: usize = 0,
> {
    map: *const u8,
    _elem: PhantomData<*const T>,
}

impl<
        T: PlainData,
        const RANK: usize,
        const B0: usize,
        const B1: usize,
        const B2: usize,
        const B3: usize,
        const B4: usize,
        const SWIZZLE: usize,
    > TensorMap<T, RANK, B0, B1, B2, B3, B4, SWIZZLE>
{
    /// Elements in one box.
    pub const BOX_ELEMS: usize = B0 * B1 * B2 * B3 * B4;
    /// Bytes in one box: what a load's barrier must expect
    /// ([`Mbarrier::arrive_expect_tx`]).
    pub const BOX_BYTES: u32 = {
        let () = Self::VALID;
        (Self::BOX_ELEMS * core::mem::size_of::<T>()) as u32
    };

    const VALID: () = {
        if let Err(e) = rules::check_box(
            core::mem::size_of::<T>(),
            RANK,
            [B0, B1, B2, B3, B4],
            SWIZZLE,
        ) {
            panic!("{}", e.rule())
        }
    };

    /// The alignment a destination needs, in bytes: 128, or the swizzle pattern's
    /// repeat (8 rows of `SWIZZLE` bytes: 1024 for the 128-byte swizzle) so that the
    /// pattern starts at the destination's first byte.
    pub const DST_ALIGN: usize = rules::dst_align(SWIZZLE);

    const BOX_FIELDS: [FieldLayout; 5] =
        crate::abi::tensor_map_fields([B0, B1, B2, B3, B4], SWIZZLE);

    /// The shared address of `array`, which must hold exactly one box (`N` its element
    /// count) and be aligned to [`DST_ALIGN`](Self::DST_ALIGN) (`A`), as the tensor copies require: a compile
    /// error otherwise.
    #[inline(always)]
    fn box_addr<const N: usize, const A: usize>(array: &SharedArray<T, N, A>) -> u32 {
        const {
            assert!(
                N == Self::BOX_ELEMS,
                "TensorMap: the SharedArray of a tensor copy must hold exactly one box"
            );
            assert!(
                A >= Self::DST_ALIGN,
                "TensorMap: the SharedArray of a tensor copy must be aligned to 128 bytes \
                 (1024, 512, 256 with a 128-, 64-, 32-byte swizzle): DST_ALIGN"
            );
        }
        array.ptr(0).addr()
    }

    /// Wraps the address of an encoded map.
    ///
    /// # Safety
    /// `map` is the global-memory address of a valid `CUtensorMap` (64-byte
    /// aligned) for a `RANK`-dimensional tensor of `T` with exactly this box,
    /// in non-interleaved tile mode with this `SWIZZLE`, valid for the whole
    /// launch. Under the emulator there is no such address to wrap: make the
    /// parameter with `emulator::TensorMapDesc::as_param` instead.
    #[inline(always)]
    pub const unsafe fn from_ptr(map: *const u8) -> Self {
        TensorMap {
            map,
            _elem: PhantomData,
        }
    }

    /// The map's address.
    #[inline(always)]
    pub const fn as_ptr(self) -> *const u8 {
        self.map
    }

    /// Copies the box whose first element is at `coords` (innermost dimension
    /// first, in elements, may be negative or past the end: those elements
    /// read as zero) into `dst`, asynchronously; completion counts
    /// [`BOX_BYTES`](Self::BOX_BYTES) down on `bar`'s current phase. Issue it
    /// from one thread, announce the bytes with [`Mbarrier::arrive_expect_tx`],
    /// read `dst` after [`Mbarrier::wait`]. `N` must equal the box's element
    /// count and `A` be at least [`DST_ALIGN`](Self::DST_ALIGN) (compile errors otherwise). sm_90.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn load<const N: usize, const A: usize>(
        self,
        dst: &SharedArray<T, N, A>,
        coords: [i32; RANK],
        bar: &Mbarrier,
    ) {
        let d = Self::box_addr(dst);
        let c = pad(coords);
        on_device!("TensorMap::load", {
            tensor_asm::load(RANK, d, self.map, c, bar.shared_addr())
        }, emulated: {
            crate::emulator::tma::load(self.map, RANK, c, d, Self::BOX_BYTES, bar.shared_addr())
        })
    }

    /// [`load`](Self::load) into the same `dst` of every CTA of the cluster whose rank
    /// bit is set in `cta_mask` (`.multicast::cluster`), each completing on its own
    /// barrier at `bar`'s offset: every receiving CTA announces
    /// [`BOX_BYTES`](Self::BOX_BYTES) on its barrier, and the barriers and arrays of the
    /// other CTAs must be initialised (a [`cluster::sync`](crate::cluster::sync) after
    /// `Mbarrier::new`) before the copy is issued. One global read feeds several CTAs:
    /// the way a cluster shares a tile. Ranks past the cluster, or an empty mask, are
    /// errors under the emulator and undefined on the GPU. sm_90.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn load_multicast<const N: usize, const A: usize>(
        self,
        dst: &SharedArray<T, N, A>,
        coords: [i32; RANK],
        bar: &Mbarrier,
        cta_mask: u16,
    ) {
        let d = Self::box_addr(dst);
        let c = pad(coords);
        on_device!("TensorMap::load_multicast", {
            tensor_asm::load_multicast(RANK, d, self.map, c, bar.shared_addr(), cta_mask)
        }, emulated: {
            crate::emulator::tma::load_multicast(self.map, RANK, c, d, Self::BOX_BYTES, bar.shared_addr(), cta_mask)
        })
    }

    /// Copies the box in `src` to the tensor at `coords`, asynchronously, as
    /// part of the calling thread's current bulk group (as
    /// [`bulk::store`](crate::bulk::store): fence and barrier before,
    /// [`bulk::commit_group`](crate::bulk::commit_group) and
    /// [`bulk::wait_group_read`](crate::bulk::wait_group_read) after). Elements
    /// outside the tensor are not written. Same compile-time rules as
    /// [`load`](Self::load). sm_90.
    ///
    /// # Safety
    /// No other thread of the grid accesses the box's elements of the tensor
    /// until the grid ends (or this thread's `bulk::wait_group` covers the copy).
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub unsafe fn store<const N: usize, const A: usize>(
        self,
        src: &SharedArray<T, N, A>,
        coords: [i32; RANK],
    ) {
        let s = Self::box_addr(src);
        let c = pad(coords);
        on_device!("TensorMap::store", {
            tensor_asm::store(RANK, s, self.map, c)
        }, emulated: {
            crate::emulator::tma::store(self.map, RANK, c, s, Self::BOX_BYTES)
        })
    }

    /// Brings the map into the cache the copy engine reads it from
    /// (`prefetch.tensormap`). A hint; call it once per block before the
    /// first copy. sm_90.
    #[inline(always)]
    pub fn prefetch(self) {
        on_device!("TensorMap::prefetch", {
            // SAFETY: a prefetch of a valid map's address; no memory is changed.
            unsafe {
                core::arch::asm!("prefetch.tensormap [{m}];", m = in(reg64) self.map, options(nostack, preserves_flags))
            }
        }, emulated: {})
    }
}

/// `coords` padded with zeros to five.
#[inline(always)]
fn pad<const RANK: usize>(coords: [i32; RANK]) -> [i32; 5] {
    let mut c = [0; 5];
    let mut i = 0;
    while i < RANK {
        c[i] = coords[i];
        i += 1;
    }
    c
}

// SAFETY: `#[repr(transparent)]` over a raw pointer: rustc passes it as one
// `.u64`; the host passes the address of an encoded map (`host_loader::tma`),
// and any address is a valid raw pointer (the copies are what need a valid map).
unsafe impl<
        T: PlainData,
        const RANK: usize,
        const B0: usize,
        const B1: usize,
        const B2: usize,
        const B3: usize,
        const B4: usize,
        const SWIZZLE: usize,
    > KernelParam for TensorMap<T, RANK, B0, B1, B2, B3, B4, SWIZZLE>
{
    const ABI: ParamAbi = {
        let () = Self::VALID;
        let all: &'static [FieldLayout; 5] = &Self::BOX_FIELDS;
        let (fields, _) = all.split_at(RANK);
        ParamAbi {
            kind: TENSOR_MAP,
            size: 8,
            align: 8,
            elem_size: core::mem::size_of::<T>() as u32,
            elem_class: <T as HasValueClass>::VALUE_CLASS,
            fields,
        }
    };
}

/// The inline assembly of the tensor copies, one form per rank.
#[cfg(target_arch = "nvptx64")]
mod tensor_asm {
    use core::arch::asm;

    /// `cp.async.bulk.tensor.{RANK}d` load into shared `dst`, completing on `bar`.
    #[inline(always)]
    pub(super) fn load(rank: usize, dst: u32, map: *const u8, c: [i32; 5], bar: u32) {
        // SAFETY (all arms): the caller's `TensorMap` contract (a valid map of this
        // rank); `dst` is a 128-byte-aligned shared array of one box; `bar` an
        // initialised barrier. The destination is written asynchronously and read
        // only after the barrier's phase completes (documented contract).
        unsafe {
            match rank {
                1 => {
                    asm!("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{d}], [{m}, {{{c0}}}], [{b}];",
                    d = in(reg32) dst, m = in(reg64) map, c0 = in(reg32) c[0], b = in(reg32) bar, options(nostack, preserves_flags))
                }
                2 => {
                    asm!("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{d}], [{m}, {{{c0}, {c1}}}], [{b}];",
                    d = in(reg32) dst, m = in(reg64) map, c0 = in(reg32) c[0], c1 = in(reg32) c[1], b = in(reg32) bar, options(nostack, preserves_flags))
                }
                3 => {
                    asm!("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{d}], [{m}, {{{c0}, {c1}, {c2}}}], [{b}];",
                    d = in(reg32) dst, m = in(reg64) map, c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], b = in(reg32) bar, options(nostack, preserves_flags))
                }
                4 => {
                    asm!("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{d}], [{m}, {{{c0}, {c1}, {c2}, {c3}}}], [{b}];",
                    d = in(reg32) dst, m = in(reg64) map, c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], c3 = in(reg32) c[3], b = in(reg32) bar, options(nostack, preserves_flags))
                }
                _ => {
                    asm!("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{d}], [{m}, {{{c0}, {c1}, {c2}, {c3}, {c4}}}], [{b}];",
                    d = in(reg32) dst, m = in(reg64) map, c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], c3 = in(reg32) c[3], c4 = in(reg32) c[4], b = in(reg32) bar, options(nostack, preserves_flags))
                }
            }
        }
    }

    /// The multicast form of [`load`]: every CTA of the cluster in `mask` receives the box.
    #[inline(always)]
    pub(super) fn load_multicast(
        rank: usize,
        dst: u32,
        map: *const u8,
        c: [i32; 5],
        bar: u32,
        mask: u16,
    ) {
        // SAFETY (all arms): as for `load`, with the receiving CTAs' barriers and arrays
        // initialised (the caller's contract, documented on `load_multicast`).
        unsafe {
            match rank {
                1 => {
                    asm!("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [{d}], [{m}, {{{c0}}}], [{b}], {k};",
                    d = in(reg32) dst, m = in(reg64) map, c0 = in(reg32) c[0], b = in(reg32) bar, k = in(reg16) mask, options(nostack, preserves_flags))
                }
                2 => {
                    asm!("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [{d}], [{m}, {{{c0}, {c1}}}], [{b}], {k};",
                    d = in(reg32) dst, m = in(reg64) map, c0 = in(reg32) c[0], c1 = in(reg32) c[1], b = in(reg32) bar, k = in(reg16) mask, options(nostack, preserves_flags))
                }
                3 => {
                    asm!("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [{d}], [{m}, {{{c0}, {c1}, {c2}}}], [{b}], {k};",
                    d = in(reg32) dst, m = in(reg64) map, c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], b = in(reg32) bar, k = in(reg16) mask, options(nostack, preserves_flags))
                }
                4 => {
                    asm!("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [{d}], [{m}, {{{c0}, {c1}, {c2}, {c3}}}], [{b}], {k};",
                    d = in(reg32) dst, m = in(reg64) map, c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], c3 = in(reg32) c[3], b = in(reg32) bar, k = in(reg16) mask, options(nostack, preserves_flags))
                }
                _ => {
                    asm!("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [{d}], [{m}, {{{c0}, {c1}, {c2}, {c3}, {c4}}}], [{b}], {k};",
                    d = in(reg32) dst, m = in(reg64) map, c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], c3 = in(reg32) c[3], c4 = in(reg32) c[4], b = in(reg32) bar, k = in(reg16) mask, options(nostack, preserves_flags))
                }
            }
        }
    }

    /// `cp.async.bulk.tensor.{RANK}d` store from shared `src`, in a bulk group.
    #[inline(always)]
    pub(super) fn store(rank: usize, src: u32, map: *const u8, c: [i32; 5]) {
        // SAFETY (all arms): the caller's contract (`TensorMap::store`).
        unsafe {
            match rank {
                1 => {
                    asm!("cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [{m}, {{{c0}}}], [{s}];",
                    s = in(reg32) src, m = in(reg64) map, c0 = in(reg32) c[0], options(nostack, preserves_flags))
                }
                2 => {
                    asm!("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [{m}, {{{c0}, {c1}}}], [{s}];",
                    s = in(reg32) src, m = in(reg64) map, c0 = in(reg32) c[0], c1 = in(reg32) c[1], options(nostack, preserves_flags))
                }
                3 => {
                    asm!("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [{m}, {{{c0}, {c1}, {c2}}}], [{s}];",
                    s = in(reg32) src, m = in(reg64) map, c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], options(nostack, preserves_flags))
                }
                4 => {
                    asm!("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [{m}, {{{c0}, {c1}, {c2}, {c3}}}], [{s}];",
                    s = in(reg32) src, m = in(reg64) map, c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], c3 = in(reg32) c[3], options(nostack, preserves_flags))
                }
                _ => {
                    asm!("cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [{m}, {{{c0}, {c1}, {c2}, {c3}, {c4}}}], [{s}];",
                    s = in(reg32) src, m = in(reg64) map, c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], c3 = in(reg32) c[3], c4 = in(reg32) c[4], options(nostack, preserves_flags))
                }
            }
        }
    }
}
