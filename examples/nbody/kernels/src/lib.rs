//! `nbody_step`: one time step of an all-pairs gravitational n-body simulation — the
//! algorithm of NVIDIA's CUDA sample `nbody` (`cuda-samples/Samples/5_Domain_Specific/nbody`,
//! `bodyBodyInteraction`, `computeBodyAccel`, `integrateBodies`; GPU Gems 3, ch. 31),
//! with the reciprocal square root from device-std's math library ([`math::rsqrtf`]).
//!
//! Body `i` is `pos[i] = (x, y, z, m)` (an [`F32x4`], CUDA's `float4`: position and
//! mass) and `vel[i] = (vx, vy, vz, w)`. With `G = 1` and softening `ε`:
//!
//! ```text
//! a_i = Σ_j m_j · r_ij / (|r_ij|² + ε²)^(3/2),   r_ij = p_j − p_i   (j = i included: r = 0)
//! v_i' = v_i + a_i·dt,   p_i' = p_i + v_i'·dt
//! ```
//!
//! (the sample's integration, a kick then a drift — symplectic Euler, the
//! velocity-Verlet "leapfrog" of one step — without its damping factor). Each block
//! of [`BLOCK`] threads walks the bodies in tiles of [`BLOCK`]: every thread stages one
//! body of the tile in shared memory, then each thread adds the tile's `BLOCK`
//! interactions to its own body's acceleration.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

use device_std::math::{self, fmaf};
use device_std::vector::F32x4;
use device_std::{kernel, thread, DisjointSlice, SharedArray};

/// Threads per block the kernels require, and bodies per shared-memory tile.
pub const BLOCK: u32 = 256;

// `max_threads = 256` below repeats BLOCK (the attribute takes a literal).
const _: () = assert!(
    BLOCK == 256,
    "keep #[kernel(max_threads = ...)] equal to BLOCK"
);

/// The sample's `bodyBodyInteraction`: adds body `bj`'s pull on body `bi` to `acc`,
/// `m_j · r / (|r|² + ε²)^(3/2)` with `r = bj − bi` (`.0[3]` is the mass). `rsqrt` is
/// the reciprocal square root to use. The multiply-adds are written as [`fmaf`], the
/// contractions nvcc makes in the sample's `r.x * r.x + r.y * r.y + ...` and
/// `ai.x += r.x * s` (rustc contracts nothing on its own).
#[inline(always)]
pub fn body_body(
    acc: [f32; 3],
    bi: F32x4,
    bj: F32x4,
    softening_sq: f32,
    rsqrt: impl Fn(f32) -> f32,
) -> [f32; 3] {
    let [xi, yi, zi, _] = bi.0;
    let [xj, yj, zj, mj] = bj.0;
    let (rx, ry, rz) = (xj - xi, yj - yi, zj - zi);
    let dist_sq = fmaf(rx, rx, fmaf(ry, ry, fmaf(rz, rz, softening_sq)));
    let inv_dist = rsqrt(dist_sq);
    let s = mj * (inv_dist * inv_dist * inv_dist);
    [
        fmaf(rx, s, acc[0]),
        fmaf(ry, s, acc[1]),
        fmaf(rz, s, acc[2]),
    ]
}

/// The body of both kernels: see [`nbody_step`].
#[inline(always)]
fn step(
    pos: &[F32x4],
    vel: &[F32x4],
    dt: f32,
    softening_sq: f32,
    new_pos: &mut DisjointSlice<F32x4>,
    new_vel: &mut DisjointSlice<F32x4>,
    rsqrt: impl Fn(f32) -> f32 + Copy,
) {
    assert!(thread::blockDim_x() == BLOCK);
    const B: usize = BLOCK as usize;
    let tile = SharedArray::<F32x4, B>::new();
    let i = thread::index_1d();
    let k = i.get();
    let tid = thread::threadIdx_x() as usize;
    let n = pos.len();
    // Threads past the last body still stage tiles and meet every barrier.
    let me = pos.get(k).copied().unwrap_or_default();
    let mut acc = [0.0f32; 3];
    let mut base = 0;
    while base < n {
        // A zero-mass body pads the last tile: it adds exactly 0 (ε² > 0).
        tile.write(tid, pos.get(base + tid).copied().unwrap_or_default());
        thread::sync_threads();
        // Four interactions per iteration, for ptxas to interleave (the sample
        // unrolls this loop with `#pragma unroll`).
        let mut j = 0;
        while j < B {
            acc = body_body(acc, me, tile.read(j), softening_sq, rsqrt);
            acc = body_body(acc, me, tile.read(j + 1), softening_sq, rsqrt);
            acc = body_body(acc, me, tile.read(j + 2), softening_sq, rsqrt);
            acc = body_body(acc, me, tile.read(j + 3), softening_sq, rsqrt);
            j += 4;
        }
        thread::sync_threads();
        base += B;
    }
    if let (Some(p), Some(v)) = (new_pos.get_mut(&i), new_vel.get_mut(&i)) {
        let [vx, vy, vz, vw] = vel[k].0;
        let (vx, vy, vz) = (vx + acc[0] * dt, vy + acc[1] * dt, vz + acc[2] * dt);
        let [x, y, z, m] = me.0;
        *v = F32x4([vx, vy, vz, vw]);
        *p = F32x4([x + vx * dt, y + vy * dt, z + vz * dt, m]);
    }
}

/// One step for `n = pos.len()` bodies: reads `pos[i] = (x, y, z, mass)` and
/// `vel[i] = (vx, vy, vz, w)`, writes `new_pos[i]` (new position, same mass) and
/// `new_vel[i]` (new velocity, same `w`) for `i < new_pos.len()`, with time step `dt`
/// and softening `softening_sq = ε²` (must be positive). `vel`, `new_pos` and
/// `new_vel` hold `n` bodies. Accelerations use [`math::rsqrtf`] (CUDA `rsqrtf`'s
/// name and 2 ulp bound; Newton steps in FMAs).
///
/// Launch: 1D grid of `ceil(n / 256)` blocks of exactly [`BLOCK`] = 256 threads (other
/// block sizes trap; larger ones are refused at launch), 4 KiB of static shared memory.
#[kernel(max_threads = 256)]
pub fn nbody_step(
    pos: &[F32x4],
    vel: &[F32x4],
    dt: f32,
    softening_sq: f32,
    mut new_pos: DisjointSlice<F32x4>,
    mut new_vel: DisjointSlice<F32x4>,
) {
    step(
        pos,
        vel,
        dt,
        softening_sq,
        &mut new_pos,
        &mut new_vel,
        math::rsqrtf,
    );
}

/// [`nbody_step`] with [`math::fast::rsqrtf`] (`rsqrt.approx.f32`, relative error
/// 2^-22.9), the instruction CUDA C++'s `rsqrtf` compiles to: the like-for-like
/// comparison with the nvcc build. Same launch.
#[kernel(max_threads = 256)]
pub fn nbody_step_fast(
    pos: &[F32x4],
    vel: &[F32x4],
    dt: f32,
    softening_sq: f32,
    mut new_pos: DisjointSlice<F32x4>,
    mut new_vel: DisjointSlice<F32x4>,
) {
    step(
        pos,
        vel,
        dt,
        softening_sq,
        &mut new_pos,
        &mut new_vel,
        math::fast::rsqrtf,
    );
}
