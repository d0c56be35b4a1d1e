//! Device kernels for host-loader's GPU tests. Build:
//! cargo +nightly rustc --release --target nvptx64-nvidia-cuda -Zbuild-std=core -- \
//!   --emit=asm -C target-cpu=sm_90 -Zunstable-options -Cpanic=immediate-abort
#![no_std]
#![feature(abi_ptx, stdarch_nvptx)]
#![allow(improper_ctypes_definitions)]
use core::arch::nvptx::*;

#[panic_handler]
fn p(_: &core::panic::PanicInfo) -> ! { loop {} }

#[repr(C)]
#[derive(Clone, Copy)]
pub struct P { n: u32, scale: f32, off: u64 }

fn gid() -> usize {
    unsafe { _thread_idx_x() as usize + _block_idx_x() as usize * _block_dim_x() as usize }
}

#[no_mangle]
pub unsafe extern "ptx-kernel" fn vecadd(a: &[f32], b: &[f32], c: &mut [f32]) {
    let i = gid();
    if i < c.len() { c[i] = a[i] + b[i]; }
}

/// x[off + i] *= scale for i < n.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn scale(x: *mut f32, p: P) {
    let i = gid();
    if (i as u32) < p.n { *x.add(i + p.off as usize) *= p.scale; }
}

/// Writes every argument, widened to 64 bits, to out[0..], plus the slice length.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn echo(out: *mut u64, a: u8, b: u16, c: i32, d: f32, e: f64, f: u64, g: bool, s: &[u32], p: P, h: i8) {
    if gid() == 0 {
        *out.add(0) = a as u64;
        *out.add(1) = b as u64;
        *out.add(2) = c as i64 as u64;
        *out.add(3) = d.to_bits() as u64;
        *out.add(4) = e.to_bits();
        *out.add(5) = f;
        *out.add(6) = g as u64;
        *out.add(7) = s.len() as u64;
        *out.add(8) = if s.is_empty() { 0 } else { s[s.len() - 1] as u64 };
        *out.add(9) = p.n as u64;
        *out.add(10) = p.scale.to_bits() as u64;
        *out.add(11) = p.off;
        *out.add(12) = h as i64 as u64;
    }
}
