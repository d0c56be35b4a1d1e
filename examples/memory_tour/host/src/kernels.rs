//! Typed handles to the kernels of `memory_tour-kernels`, checked once against the PTX.

use anyhow::Result;
use bytemuck::{Pod, Zeroable};
use host_loader::memory::HostPtr;
use host_loader::{Kernel, Module, Slice, SliceMut};

/// Host mirror of the device crate's `AffineConfig` (`#[repr(C)]`, 8 bytes, align 4).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct AffineConfig {
    /// Multiplier.
    pub scale: f32,
    /// Addend.
    pub offset: f32,
}

// SAFETY: opaque, the default: the ABI record compares its size only.
unsafe impl host_loader::HasValueClass for AffineConfig {}

/// `spin_fill(ns: u64, value: f32, out: DisjointSlice<f32>)`.
pub type SpinFill = Kernel<(u64, f32, SliceMut<f32>)>;
/// `iterate(x: &[u32], y: DisjointSlice<u32>, iters: u32, a: u32, b: u32)`.
pub type Iterate = Kernel<(Slice<u32>, SliceMut<u32>, u32, u32, u32)>;
/// `add_one(v: DisjointSlice<f32>)`.
pub type AddOne = Kernel<(SliceMut<f32>,)>;
/// `hmm_affine(cfg: *const AffineConfig, x: &[f32], y: DisjointSlice<f32>)`.
pub type HmmAffine = Kernel<(HostPtr<AffineConfig>, Slice<f32>, SliceMut<f32>)>;

/// All four kernels.
pub struct Kernels {
    pub spin_fill: SpinFill,
    pub iterate: Iterate,
    pub add_one: AddOne,
    pub hmm_affine: HmmAffine,
}

impl Kernels {
    /// Fetches and checks every kernel of `module`.
    pub fn load(module: &Module) -> Result<Self> {
        Ok(Kernels {
            spin_fill: module.kernel("spin_fill")?,
            iterate: module.kernel("iterate")?,
            add_one: module.kernel("add_one")?,
            hmm_affine: module.kernel("hmm_affine")?,
        })
    }
}

/// The multiplier and increment `iterate` is run with (Numerical Recipes' LCG).
pub const LCG: (u32, u32) = (1_664_525, 1_013_904_223);

/// The CPU reference of `iterate`: `iters` times `v = v * a + b`, wrapping.
pub fn iterate_ref(x: u32, iters: u32, a: u32, b: u32) -> u32 {
    let mut v = x;
    for _ in 0..iters {
        v = v.wrapping_mul(a).wrapping_add(b);
    }
    v
}
