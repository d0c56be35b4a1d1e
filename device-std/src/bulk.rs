//! Bulk asynchronous copies between global and shared memory (Hopper's copy
//! engine, sm_90, PTX ISA 8.0), and the proxy fence that orders them with
//! ordinary accesses.
//!
//! | here | PTX (PTX ISA 9.0 §9.7.9.25 "Data Movement and Conversion Instructions: cp.async.bulk") |
//! |---|---|
//! | [`load`] | `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [mbar]` |
//! | [`store`] | `cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size` |
//! | [`prefetch_l2`] | `cp.async.bulk.prefetch.L2.global [src], size` |
//! | [`commit_group`] | `cp.async.bulk.commit_group` |
//! | [`wait_group`], [`wait_group_read`] | `cp.async.bulk.wait_group N`, `cp.async.bulk.wait_group.read N` |
//! | [`fence_proxy_async_shared`] | `fence.proxy.async.shared::cta` (§9.7.13.4 "membar/fence") |
//!
//! A load completes on an [`Mbarrier`]: the issuing thread announces the bytes
//! with [`Mbarrier::arrive_expect_tx`] (or `expect_tx`), the copy engine counts
//! them down as they land, and waiters see them after [`Mbarrier::wait`]. A
//! store reads shared memory asynchronously: its issuing thread commits it to
//! a bulk group and must [`wait_group_read`] before the source is written
//! again, and before the CTA exits (its shared memory is released then).
//! Shared memory written by ordinary stores that a [`store`] reads must be
//! made visible to the copy engine: every writing thread runs
//! [`fence_proxy_async_shared`], then a barrier, then one thread issues.
//!
//! Sizes are in bytes: a multiple of 16, both addresses aligned to 16. The
//! module exists on sm_90 and newer targets only (and on the host); using it
//! when building for an older target is a compile error.
#![allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV

use crate::host::on_device;
use crate::layout::PlainData;
use crate::Mbarrier;

pub use crate::shared::SharedRegion;

/// Checks a copy of `count` elements of `T` and returns its size in bytes.
#[inline(always)]
fn copy_bytes<T>(count: usize) -> u32 {
    let bytes = count * core::mem::size_of::<T>();
    assert!(
        bytes > 0 && bytes % 16 == 0 && bytes < (1 << 20),
        "bulk copy size must be a non-zero multiple of 16 bytes below 2^20"
    );
    bytes as u32
}

/// Copies `src[src_index .. src_index + count]` into shared memory
/// `dst[dst_index .. dst_index + count]`, asynchronously; completion counts
/// `count * size_of::<T>()` bytes down on `bar`'s current phase.
///
/// Call it from one thread, after (or before) that thread announced the bytes
/// with [`Mbarrier::arrive_expect_tx`]; read `dst` only after
/// [`Mbarrier::wait`] returns for that phase. The bytes must be a multiple of
/// 16 and below 2^20, both ranges in bounds, and both addresses aligned to 16
/// (`SharedArray<T, N, 16>` or more, and a 16-byte-aligned global element);
/// otherwise it panics (traps), where the GPU would fault or corrupt. The source
/// must lie in global memory (a kernel argument's slice), not a local or shared array:
/// checked with `isspacep.global`, a trap otherwise. sm_90.
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn load<T: PlainData>(
    dst: &impl SharedRegion<T>,
    dst_index: usize,
    src: &[T],
    src_index: usize,
    count: usize,
    bar: &Mbarrier,
) {
    let bytes = copy_bytes::<T>(count);
    assert!(
        dst_index <= dst.region_len() && count <= dst.region_len() - dst_index,
        "bulk::load: destination range out of bounds"
    );
    assert!(
        src_index <= src.len() && count <= src.len() - src_index,
        "bulk::load: source range out of bounds"
    );
    let d = dst.region_addr(dst_index);
    // SAFETY: in bounds (checked above).
    let s = unsafe { src.as_ptr().add(src_index) };
    assert!(
        d % 16 == 0 && (s as usize) % 16 == 0,
        "bulk::load: both addresses must be aligned to 16 bytes"
    );
    assert!(
        crate::shared::is_global(s),
        "bulk::load: the source must be global memory (a kernel's slice), not a local or shared array"
    );
    on_device!("bulk::load", {
        // SAFETY: both ranges are in bounds and aligned (checked above); `bar`
        // is an initialised barrier of this CTA. The destination is written
        // asynchronously: readers wait on `bar` first (documented contract).
        unsafe {
            core::arch::asm!(
                "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [{d}], [{s}], {n}, [{b}];",
                d = in(reg32) d,
                s = in(reg64) s,
                n = in(reg32) bytes,
                b = in(reg32) bar.shared_addr(),
                options(nostack, preserves_flags),
            );
        }
    }, emulated: {
        crate::emulator::mbarrier::bulk_load(d, s.cast(), bytes, bar.shared_addr())
    })
}

/// Brings `src[index .. index + count]` into the L2 cache, asynchronously
/// (`cp.async.bulk.prefetch.L2.global`, PTX ISA 9.0 §9.7.9.25.4.3): a hint that
/// puts more reads in flight ahead of the [`load`]s that will want the data. Size
/// and alignment rules as for [`load`] (a trap otherwise); the range must be in
/// bounds. sm_90.
#[inline(always)]
pub fn prefetch_l2<T: PlainData>(src: &[T], index: usize, count: usize) {
    let bytes = copy_bytes::<T>(count);
    assert!(
        index <= src.len() && count <= src.len() - index,
        "bulk::prefetch_l2: range out of bounds"
    );
    // SAFETY: in bounds (checked above).
    let s = unsafe { src.as_ptr().add(index) };
    assert!(
        (s as usize) % 16 == 0 && crate::shared::is_global(s),
        "bulk::prefetch_l2: the source must be 16-byte-aligned global memory"
    );
    on_device!("bulk::prefetch_l2", {
        // SAFETY: a prefetch of an in-bounds global range; changes no memory.
        unsafe {
            core::arch::asm!(
                "cp.async.bulk.prefetch.L2.global [{s}], {n};",
                s = in(reg64) s,
                n = in(reg32) bytes,
                options(nostack, preserves_flags),
            );
        }
    }, emulated: {
        let _ = (s, bytes);
    })
}

/// Copies `count` elements of shared memory `src[src_index ..]` to global
/// memory at `dst`, asynchronously, as part of the calling thread's current
/// bulk group ([`commit_group`] closes it).
///
/// Before: every thread that wrote `src` ran [`fence_proxy_async_shared`],
/// then a barrier. After: the issuing thread calls [`wait_group_read`] before
/// anyone writes `src` again and before the CTA exits, and [`wait_group`]
/// before it reads `dst` itself (other CTAs see `dst` only after this grid
/// ends). Size and alignment as for [`load`]; the source range is
/// bounds-checked. sm_90.
///
/// # Safety
/// `dst .. dst + count` is valid, 16-byte-aligned global memory for `count`
/// `T`s that no other thread accesses until this grid ends or this thread's
/// [`wait_group`] covers the copy.
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub unsafe fn store<T: PlainData>(
    dst: *mut T,
    src: &impl SharedRegion<T>,
    src_index: usize,
    count: usize,
) {
    let bytes = copy_bytes::<T>(count);
    assert!(
        src_index <= src.region_len() && count <= src.region_len() - src_index,
        "bulk::store: source range out of bounds"
    );
    let s = src.region_addr(src_index);
    assert!(
        s % 16 == 0 && (dst as usize) % 16 == 0,
        "bulk::store: both addresses must be aligned to 16 bytes"
    );
    on_device!("bulk::store", {
        // SAFETY: the caller's contract for `dst`; the source is in bounds and
        // aligned (checked above).
        unsafe {
            core::arch::asm!(
                "cp.async.bulk.global.shared::cta.bulk_group [{d}], [{s}], {n};",
                d = in(reg64) dst,
                s = in(reg32) s,
                n = in(reg32) bytes,
                options(nostack, preserves_flags),
            );
        }
    }, emulated: {
        crate::emulator::mbarrier::bulk_store(dst.cast(), s, bytes)
    })
}

/// Closes the calling thread's current bulk group (the [`store`]s issued
/// since the last commit). sm_90.
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn commit_group() {
    on_device!("bulk::commit_group", {
        // SAFETY: no operands.
        unsafe { core::arch::asm!("cp.async.bulk.commit_group;", options(nostack, preserves_flags)) }
    }, emulated: {
        crate::emulator::mbarrier::commit_group()
    })
}

/// Waits until at most `N` of the calling thread's committed bulk groups are
/// still running: the others have completed, their writes visible to this
/// thread. sm_90.
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn wait_group<const N: u32>() {
    on_device!("bulk::wait_group", {
        // SAFETY: waits; not `nomem`, so memory accesses stay on their side.
        unsafe { core::arch::asm!("cp.async.bulk.wait_group {n};", n = const N, options(nostack, preserves_flags)) }
    }, emulated: {
        crate::emulator::mbarrier::wait_group(N, false)
    })
}

/// Waits until at most `N` of the calling thread's committed bulk groups
/// still *read* shared memory: the sources of the others may be written
/// again. sm_90.
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn wait_group_read<const N: u32>() {
    on_device!("bulk::wait_group_read", {
        // SAFETY: waits; not `nomem`, so memory accesses stay on their side.
        unsafe { core::arch::asm!("cp.async.bulk.wait_group.read {n};", n = const N, options(nostack, preserves_flags)) }
    }, emulated: {
        crate::emulator::mbarrier::wait_group(N, true)
    })
}

/// `fence.proxy.async.shared::cta`: orders the calling thread's ordinary
/// shared-memory accesses before the copy engine's later accesses (a
/// [`store`] reading what this thread wrote). Follow it with a barrier when
/// another thread issues the copy. sm_90, PTX ISA 8.0.
#[inline(always)]
pub fn fence_proxy_async_shared() {
    on_device!("bulk::fence_proxy_async_shared", {
        // SAFETY: a fence; no operands.
        unsafe { core::arch::asm!("fence.proxy.async.shared::cta;", options(nostack, preserves_flags)) }
    }, emulated: {
        crate::emulator::shared_mem::proxy_fence()
    })
}
