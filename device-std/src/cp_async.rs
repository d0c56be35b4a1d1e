//! Asynchronous copies of 4, 8 or 16 bytes from global to shared memory per thread
//! (sm_80, PTX ISA 7.0), grouped per thread: the Ampere way to overlap loads with
//! compute, and the portable one where there is no copy engine.
//!
//! | here | PTX (PTX ISA 9.0 §9.7.9.25.3 "cp.async", "cp.async.commit_group", "cp.async.wait_group") |
//! |---|---|
//! | [`copy`] | `cp.async.ca.shared.global [dst], [src], 4/8/16` (`.cg` for 16 bytes: L2 only) |
//! | [`copy16_unchecked`] | `cp.async.cg.shared.global [dst], [src], 16, src_size` (zero fill) |
//! | [`commit_group`] | `cp.async.commit_group` |
//! | [`wait_group`] | `cp.async.wait_group N` |
//! | [`wait_all`] | `cp.async.wait_all` |
//!
//! A thread's copies land in shared memory some time after [`copy`] returns; its
//! [`wait_group`] makes the copies of all but its newest `N` committed groups
//! visible **to that thread**. Other threads see them after a barrier that follows
//! the wait:
//!
//! ```no_run
//! use device_std::{cp_async, thread, SharedArray};
//! fn stage(src: &[f32]) -> f32 {
//!     let tile = SharedArray::<f32, 1024>::new();
//!     let t = thread::thread_in_block() as usize;
//!     cp_async::copy(&tile, t, src, t); // one f32 per thread
//!     cp_async::commit_group();
//!     cp_async::wait_group::<0>();
//!     thread::sync_threads();          // everyone's copies visible to everyone
//!     tile.read(1023 - t)
//! }
//! ```
//!
//! Under the emulator a copy is pending until its thread's `wait_group` retires
//! it: touching its destination before then, from any thread, is an error, and
//! the landed bytes count as that thread's writes for the race checks.

use crate::host::on_device;
use crate::layout::PlainData;
use crate::shared::SharedRegion;

/// Copies `src[src_index]` into `dst[dst_index]` asynchronously, as part of the
/// calling thread's current group (see the [module docs](self)). `T` is 4, 8 or
/// 16 bytes (a compile error otherwise); both indices are bounds-checked, both
/// addresses must be aligned to `size_of::<T>()`, and the source must lie in global
/// memory (`isspacep.global`; a trap otherwise). sm_80.
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn copy<T: PlainData>(
    dst: &impl SharedRegion<T>,
    dst_index: usize,
    src: &[T],
    src_index: usize,
) {
    const {
        let size = core::mem::size_of::<T>();
        assert!(
            size == 4 || size == 8 || size == 16,
            "cp_async::copy: elements of 4, 8 or 16 bytes"
        );
    }
    let size = core::mem::size_of::<T>();
    assert!(
        dst_index < dst.region_len(),
        "cp_async::copy: destination index out of bounds"
    );
    let s = &src[src_index] as *const T;
    let d = dst.region_addr(dst_index);
    #[allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV
    let aligned = d as usize % size == 0 && s as usize % size == 0;
    assert!(
        aligned,
        "cp_async::copy: both addresses must be aligned to the element size"
    );
    assert!(
        crate::shared::is_global(s),
        "cp_async::copy: the source must be global memory (a kernel's slice), not a local or shared array"
    );
    on_device!("cp_async::copy", {
        // SAFETY: both addresses in bounds and aligned (checked above); the
        // destination is written asynchronously and read only after this thread's
        // wait_group (and a barrier for other threads): the documented contract.
        unsafe {
            match size {
                4 => core::arch::asm!("cp.async.ca.shared.global [{d}], [{s}], 4;", d = in(reg32) d, s = in(reg64) s, options(nostack, preserves_flags)),
                8 => core::arch::asm!("cp.async.ca.shared.global [{d}], [{s}], 8;", d = in(reg32) d, s = in(reg64) s, options(nostack, preserves_flags)),
                _ => core::arch::asm!("cp.async.cg.shared.global [{d}], [{s}], 16;", d = in(reg32) d, s = in(reg64) s, options(nostack, preserves_flags)),
            }
        }
    }, emulated: {
        crate::emulator::cp_async::copy(d, s.cast(), size)
    })
}

/// Copies 16 bytes from `src` (global memory) to `dst` (shared memory) asynchronously
/// when `valid`, or fills `dst` with 16 zero bytes when not (the `src_size` operand 0:
/// nothing is read), as part of the calling thread's current group — with no checks and no
/// branch, for the inner loops of tiled kernels, where [`copy`]'s checks would cost more
/// than the copy (`cp.async.cg.shared.global [dst], [src], 16, src_size`, PTX ISA 9.0
/// §9.7.9.25.3.1; L2 only). `T` is 16 bytes (a compile error otherwise). sm_80.
///
/// # Safety
/// `dst` is 16-byte aligned in shared memory, and no thread touches those 16 bytes until
/// this thread's [`wait_group`] has retired the copy (other threads: and a barrier after
/// it). When `valid`, `src` is 16-byte aligned and points at 16 bytes of global memory
/// that nothing writes until then.
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub unsafe fn copy16_unchecked<T: PlainData>(dst: crate::SharedPtr<T>, src: *const T, valid: bool) {
    const {
        assert!(
            core::mem::size_of::<T>() == 16,
            "cp_async::copy16_unchecked: 16-byte elements"
        );
    }
    on_device!("cp_async::copy16_unchecked", {
        let src_size: u32 = if valid { 16 } else { 0 };
        // SAFETY: the caller's contract; with src_size 0 the source is not read.
        unsafe {
            core::arch::asm!(
                "cp.async.cg.shared.global [{d}], [{s}], 16, {n};",
                d = in(reg32) dst.addr(),
                s = in(reg64) src,
                n = in(reg32) src_size,
                options(nostack, preserves_flags),
            )
        }
    }, emulated: {
        if valid {
            crate::emulator::cp_async::copy(dst.addr(), src.cast(), 16)
        } else {
            // SAFETY: the caller's contract for dst.
            unsafe { crate::SharedPtr::<[u32; 4]>::from_addr(dst.addr()).write([0; 4]) }
        }
    })
}

/// Closes the calling thread's current group of [`copy`]s (an empty group if it
/// issued none). sm_80.
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn commit_group() {
    on_device!("cp_async::commit_group", {
        // SAFETY: no operands.
        unsafe { core::arch::asm!("cp.async.commit_group;", options(nostack, preserves_flags)) }
    }, emulated: {
        crate::emulator::cp_async::commit_group()
    })
}

/// Waits until at most `N` of the calling thread's committed groups are still in
/// flight; the copies of the others are visible to this thread. sm_80.
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn wait_group<const N: u32>() {
    on_device!("cp_async::wait_group", {
        // SAFETY: waits; not `nomem`, so memory accesses stay on their side.
        unsafe { core::arch::asm!("cp.async.wait_group {n};", n = const N, options(nostack, preserves_flags)) }
    }, emulated: {
        crate::emulator::cp_async::wait_group(N)
    })
}

/// Commits the current group and waits for all of the calling thread's copies
/// (`cp.async.wait_all`). sm_80.
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn wait_all() {
    on_device!("cp_async::wait_all", {
        // SAFETY: waits; not `nomem`.
        unsafe { core::arch::asm!("cp.async.wait_all;", options(nostack, preserves_flags)) }
    }, emulated: {
        crate::emulator::cp_async::commit_group();
        crate::emulator::cp_async::wait_group(0)
    })
}
