//! Kernels for the host-memory chapter (`memory_tour`, and host-loader's `memory_gpu`
//! tests): a timed spin to hold a stream busy, an integer compute kernel whose cost is set
//! by an iteration count (for the copy/compute overlap pipeline), an in-place increment (for
//! managed memory), and an affine map whose parameters are read in place from pageable
//! host memory (HMM).
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
// `&[T]` crosses the kernel boundary as one 16-byte (ptr, len) aggregate; see device-std.
#![allow(improper_ctypes_definitions)]

/// The parameters of `hmm_affine`, read by the kernel from host memory through a
/// `*const AffineConfig`: `y[i] = x[i] * scale + offset`. The host declares the same
/// `#[repr(C)]` layout (8 bytes, aligned to 4).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AffineConfig {
    /// Multiplier.
    pub scale: f32,
    /// Addend.
    pub offset: f32,
}

#[cfg(target_arch = "nvptx64")]
mod kernels {
    use super::AffineConfig;
    use device_std::{thread, DisjointSlice};

    /// `%globaltimer`: a nanosecond clock shared by the whole GPU (PTX ISA §10.31).
    #[inline(always)]
    fn globaltimer_ns() -> u64 {
        let t: u64;
        // SAFETY: reads a special register; touches no memory. Not `pure`: every read
        // must happen.
        unsafe {
            core::arch::asm!("mov.u64 {t}, %globaltimer;", t = out(reg64) t, options(nomem, nostack))
        };
        t
    }

    /// Every thread waits `ns` nanoseconds (by `%globaltimer`), then writes
    /// `out[i] = value`. Grid: at least `out.len()` threads; keeps its stream busy for
    /// `ns` so host-side timings can show what does and does not wait for it.
    #[no_mangle]
    pub extern "ptx-kernel" fn spin_fill(ns: u64, value: f32, mut out: DisjointSlice<f32>) {
        let start = globaltimer_ns();
        while globaltimer_ns().wrapping_sub(start) < ns {}
        let i = thread::index_1d();
        if let Some(o) = out.get_mut(&i) {
            *o = value;
        }
    }

    /// `y[i] = f^iters(x[i])` with `f(v) = v * a + b` (wrapping `u32` arithmetic, a
    /// linear congruential step): `iters` dependent integer multiply-adds per element, so
    /// the run time is set by `iters` and the result is exact on any hardware. Grid: at
    /// least `y.len()` threads; `x` at least as long as `y` (a shorter one traps).
    #[no_mangle]
    pub extern "ptx-kernel" fn iterate(
        x: &[u32],
        mut y: DisjointSlice<u32>,
        iters: u32,
        a: u32,
        b: u32,
    ) {
        let i = thread::index_1d();
        let k = i.get();
        if let Some(out) = y.get_mut(&i) {
            let mut v = x[k];
            let mut n = 0;
            while n < iters {
                v = v.wrapping_mul(a).wrapping_add(b);
                n += 1;
            }
            *out = v;
        }
    }

    /// `v[i] += 1.0`, read and written in place. Grid: at least `v.len()` threads.
    #[no_mangle]
    pub extern "ptx-kernel" fn add_one(mut v: DisjointSlice<f32>) {
        let i = thread::index_1d();
        if let Some(e) = v.get_mut(&i) {
            *e += 1.0;
        }
    }

    /// `y[i] = x[i] * cfg.scale + cfg.offset`, where `cfg` points at host memory that the
    /// device reads in place (pageable memory access). Grid: at least `y.len()` threads;
    /// `x` at least as long as `y`.
    #[no_mangle]
    pub extern "ptx-kernel" fn hmm_affine(
        cfg: *const AffineConfig,
        x: &[f32],
        mut y: DisjointSlice<f32>,
    ) {
        let i = thread::index_1d();
        let k = i.get();
        if let Some(out) = y.get_mut(&i) {
            // SAFETY: the host passes the address of a live `AffineConfig` and keeps it
            // alive and unchanged until the kernel completes (host-loader's `HostPtr`
            // launch waits for the kernel).
            let c = unsafe { cfg.read() };
            *out = x[k] * c.scale + c.offset;
        }
    }
}
