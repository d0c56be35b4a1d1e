#![no_std]
#![feature(abi_ptx, stdarch_nvptx)]
#[panic_handler] fn p(_: &core::panic::PanicInfo) -> ! { loop {} }
#[repr(C)] #[derive(Clone, Copy)] pub struct P { n: u32, scale: f32, off: u64 }
#[repr(C)] #[derive(Clone, Copy)] pub struct Q { a: u8, b: u16 }
#[repr(C, align(16))] #[derive(Clone, Copy)] pub struct R { a: u32 }
#[no_mangle] pub unsafe extern "ptx-kernel" fn probe(a: u8, b: u16, c: i32, d: u32, e: f32, f: f64, g: u64, h: i64, i: usize, j: bool, k: *const f32, l: *mut f64, m: &[u32], n: &mut [f32], o: P, q: Q, r: R, s: i8, t: i16) {
  let x = a as u64 + b as u64 + c as u64 + d as u64 + e as u64 + f as u64 + g + h as u64 + i as u64 + j as u64 + s as u64 + t as u64 + o.n as u64 + o.off + o.scale as u64 + q.a as u64 + q.b as u64 + r.a as u64 + m.len() as u64 + m[0] as u64 + *k as u64;
  *l = x as f64; n[0] = x as f32;
}
#[no_mangle] pub unsafe extern "ptx-kernel" fn vecadd(a: &[f32], b: &[f32], c: &mut [f32]) {
  let i = core::arch::nvptx::_thread_idx_x() as usize + core::arch::nvptx::_block_idx_x() as usize * core::arch::nvptx::_block_dim_x() as usize;
  if i < c.len() { c[i] = a[i] + b[i]; }
}
#[no_mangle] pub unsafe extern "ptx-kernel" fn scale(x: *mut f32, p: P) {
  let i = core::arch::nvptx::_thread_idx_x() as usize;
  if (i as u32) < p.n { *x.add(i + p.off as usize) *= p.scale; }
}
