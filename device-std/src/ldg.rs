//! [`ldg`]: CUDA's `__ldg`, a read-only load through the non-coherent
//! global-memory path (`ld.global.nc`, PTX ISA 9.0 §9.7.9.8 `ld`).
//!
//! A kernel's `&[T]` parameter is immutable for the whole launch (the host
//! cannot pass the same buffer as a writable argument: host-loader's typed
//! launch borrows it shared), which is exactly the condition `.nc` needs.
//! A plain `s[i]` compiles to a generic `ld`, which ptxas cannot reorder
//! across shared-memory stores (a generic address might be shared); `ldg`
//! names the global state space, so independent loads stay in flight together.

use crate::layout::PlainData;

/// `s[i]` loaded with `ld.global.nc` (4-, 8- or 16-byte `T`; other sizes use
/// a plain load). Panics (traps) when `i >= s.len()`.
///
/// `s` must point into global memory, as every kernel slice parameter does
/// (a slice of shared or local memory gives an unspecified value).
#[inline(always)]
pub fn ldg<T: PlainData + Copy>(s: &[T], i: usize) -> T {
    let p = &s[i] as *const T;
    #[cfg(target_arch = "nvptx64")]
    {
        // SAFETY: `p` is in bounds and aligned for `T`; the data is not
        // written during the launch (module docs), as `.nc` requires.
        unsafe { ld_global_nc(p) }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        // SAFETY: `p` comes from a reference.
        unsafe { p.read() }
    }
}

/// [`ldg`] without the bounds check.
///
/// # Safety
/// `i < s.len()`, and `s` points into global memory that is not written
/// during the launch (true of every kernel slice parameter).
#[inline(always)]
pub unsafe fn ldg_unchecked<T: PlainData + Copy>(s: &[T], i: usize) -> T {
    // SAFETY: the caller guarantees `i < s.len()`.
    let p = unsafe { s.as_ptr().add(i) };
    #[cfg(target_arch = "nvptx64")]
    {
        // SAFETY: in bounds and aligned; not written during the launch.
        unsafe { ld_global_nc(p) }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        // SAFETY: in bounds (the caller's contract).
        unsafe { p.read() }
    }
}

/// # Safety
/// `p` is a generic address of global memory, valid and aligned for `T`,
/// not written while the kernel runs.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
unsafe fn ld_global_nc<T: Copy>(p: *const T) -> T {
    use core::arch::asm;
    use core::mem::{align_of, size_of, transmute_copy};
    // SAFETY (all arms): the caller's contract; each asm reads exactly
    // `size_of::<T>()` bytes at the global address of `p`.
    unsafe {
        match (size_of::<T>(), align_of::<T>() >= size_of::<T>()) {
            (4, true) => {
                let v: u32;
                asm!("{{ .reg .b64 g; cvta.to.global.u64 g, {p}; ld.global.nc.b32 {v}, [g]; }}",
                    v = out(reg32) v, p = in(reg64) p, options(nostack, readonly, preserves_flags));
                transmute_copy(&v)
            }
            (8, true) => {
                let v: u64;
                asm!("{{ .reg .b64 g; cvta.to.global.u64 g, {p}; ld.global.nc.b64 {v}, [g]; }}",
                    v = out(reg64) v, p = in(reg64) p, options(nostack, readonly, preserves_flags));
                transmute_copy(&v)
            }
            (16, true) => {
                let (x, y, z, w): (u32, u32, u32, u32);
                asm!("{{ .reg .b64 g; cvta.to.global.u64 g, {p}; ld.global.nc.v4.b32 {{{x}, {y}, {z}, {w}}}, [g]; }}",
                    x = out(reg32) x, y = out(reg32) y, z = out(reg32) z, w = out(reg32) w,
                    p = in(reg64) p, options(nostack, readonly, preserves_flags));
                transmute_copy(&[x, y, z, w])
            }
            _ => p.read(),
        }
    }
}
