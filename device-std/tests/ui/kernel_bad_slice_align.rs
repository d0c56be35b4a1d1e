// `#[kernel(slice_align = ...)]` misuse: not a power of two from 2 to 256, not a literal,
// given twice, and a parameter that is a pattern (the per-parameter check names it).
use device_std::kernel;

#[kernel(slice_align = 12)]
pub fn twelve(_a: &[f32]) {}

#[kernel(slice_align = 512)]
pub fn too_big(_a: &[f32]) {}

#[kernel(slice_align = 1)]
pub fn one(_a: &[f32]) {}

const A: u32 = 16;

#[kernel(slice_align = A)]
pub fn not_literal(_a: &[f32]) {}

#[kernel(slice_align = 16, slice_align = 16)]
pub fn twice(_a: &[f32]) {}

#[kernel(slice_align = 16)]
pub fn pattern((_a, _b): (u32, u32)) {}

#[kernel(slice_align = 16)]
pub fn by_ref(ref _a: u32) {}

// Fine: scalars and slices, `mut` names, an `unsafe fn`, optional slices, a generic
// kernel's instances.
#[kernel(dims = 1, slice_align = 16)]
pub fn fine(_n: u32, _a: &[f32], mut _b: &mut [f32]) {}

#[kernel(slice_align = 8)]
pub unsafe fn fine_unsafe(_a: Option<&[f64]>, _b: device_std::DisjointSlice<f64>) {}

#[kernel(slice_align = 16, instances(fine_f32 = <f32>, fine_u32 = <u32>))]
pub fn fine_generic<T: device_std::PlainData + Copy>(_a: &[T], _b: &mut [T]) {}

fn main() {}
