//! `vecadd`: `c[i] = a[i] + b[i]`, one thread per element.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]
// `&[T]` crosses the kernel boundary as one 16-byte (ptr, len) aggregate; see device-std.
#![allow(improper_ctypes_definitions)]

#[cfg(target_arch = "nvptx64")]
mod kernels {
    use device_std::{thread, DisjointSlice};

    /// Grid: at least `c.len()` threads in a 1D launch. `a` and `b` are
    /// at least as long as `c` (a shorter input traps).
    #[no_mangle]
    pub extern "ptx-kernel" fn vecadd(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
        let i = thread::index_1d();
        let k = i.get();
        if let Some(out) = c.get_mut(&i) {
            *out = a[k] + b[k];
        }
    }
}
