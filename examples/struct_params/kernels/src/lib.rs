//! `transform`: a 4×4 affine transform of `Float4` points, with the matrix passed by
//! value in a struct whose fields are 16-byte aligned.
//!
//! The structs build for the device and the host alike: the host program passes these
//! same types, and `host_loader` checks their field offsets, sizes and value classes
//! against the kernel's ABI record.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

use device_std::{kernel, thread, DisjointSlice, KernelStruct};

/// Four floats aligned to 16 bytes (one `ld.v4.f32`).
#[repr(C, align(16))]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, KernelStruct, bytemuck::Pod, bytemuck::Zeroable,
)]
pub struct Float4 {
    /// x.
    pub x: f32,
    /// y.
    pub y: f32,
    /// z.
    pub z: f32,
    /// w.
    pub w: f32,
}

/// `y = m x + t` for points `0..count`: 96 bytes aligned to 16 (`m` at 0, `t` at 64,
/// `count` at 80, explicit padding to 96).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, KernelStruct, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Transform {
    /// Rows of the matrix.
    pub m: [Float4; 4],
    /// Translation.
    pub t: Float4,
    /// Points to transform; the rest of the output is left as it was.
    pub count: u32,
    /// Explicit padding, so the struct is `Pod`.
    pub pad: [u32; 3],
}

/// Row `r` of `m` times `p`.
#[inline(always)]
pub fn dot(r: &Float4, p: &Float4) -> f32 {
    r.x * p.x + r.y * p.y + r.z * p.z + r.w * p.w
}

/// `m p + t`, the same on the CPU and the GPU (up to contraction into FMAs).
#[inline(always)]
pub fn apply(tr: &Transform, p: &Float4) -> Float4 {
    Float4 {
        x: dot(&tr.m[0], p) + tr.t.x,
        y: dot(&tr.m[1], p) + tr.t.y,
        z: dot(&tr.m[2], p) + tr.t.z,
        w: dot(&tr.m[3], p) + tr.t.w,
    }
}

/// `out[i] = tr.m · xs[i] + tr.t` for `i < min(tr.count, out.len())`. Grid: at least
/// that many threads in a 1D launch; `xs` at least as long.
#[kernel]
pub fn transform(tr: Transform, xs: &[Float4], mut out: DisjointSlice<Float4>) {
    let i = thread::index_1d();
    let k = i.get();
    if k < tr.count as usize {
        if let Some(o) = out.get_mut(&i) {
            *o = apply(&tr, &xs[k]);
        }
    }
}
