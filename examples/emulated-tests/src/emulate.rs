//! Each example kernel under the emulator, launched as its host program
//! launches it on the GPU, with its outputs poisoned first.

use device_std::emulator::{self, EmulatorError, GlobalMut, LaunchConfig};
use mathlib::Affine;
use struct_params_kernels::{Float4, Transform};

/// The poison of `f32` outputs.
pub const POISON: f32 = example_support::POISON;
/// The poison of `u32` outputs.
pub const POISON_U32: u32 = 0xDEAD_BEEF;
/// The poison of `i64` outputs.
pub const POISON_I64: i64 = i64::MIN;

/// Threads per block of the 1D examples' host programs.
pub const BLOCK_1D: u32 = 256;

fn n32(n: usize) -> u32 {
    u32::try_from(n).expect("example sizes fit in u32")
}

/// `vecadd`: `c = a + b`, at least `a.len()` threads in blocks of 256.
pub fn vecadd(a: &[f32], b: &[f32]) -> Result<Vec<f32>, EmulatorError> {
    let mut c = vec![POISON; a.len()];
    let out = GlobalMut::new(&mut c);
    emulator::launch(LaunchConfig::for_num_elems(n32(a.len()), BLOCK_1D), || {
        vecadd_kernels::vecadd(a, b, out.disjoint())
    })?;
    Ok(c)
}

/// `block_sum`: one partial sum per 512 inputs, blocks of 256.
pub fn block_sum(input: &[f32]) -> Result<Vec<f32>, EmulatorError> {
    let blocks = input.len().div_ceil(block_sum_kernels::ITEMS_PER_BLOCK);
    let mut partial = vec![POISON; blocks];
    let out = GlobalMut::new(&mut partial);
    let cfg = LaunchConfig::new((n32(blocks), 1, 1), (block_sum_kernels::BLOCK, 1, 1));
    emulator::launch(cfg, || block_sum_kernels::block_sum(input, out.disjoint()))?;
    Ok(partial)
}

/// `poly_eval`: `out[i] = horner(coeffs, xs[i])`.
pub fn poly_eval(xs: &[f32], coeffs: &[f32]) -> Result<Vec<f32>, EmulatorError> {
    let mut y = vec![POISON; xs.len()];
    let out = GlobalMut::new(&mut y);
    emulator::launch(LaunchConfig::for_num_elems(n32(xs.len()), BLOCK_1D), || {
        linked_math_kernels::poly_eval(xs, coeffs, out.disjoint())
    })?;
    Ok(y)
}

/// `affine`: `out[i] = scale * xs[i] + shift` for `i < count`; the rest
/// keeps the poison.
pub fn affine(params: Affine, xs: &[f32]) -> Result<Vec<f32>, EmulatorError> {
    let mut y = vec![POISON; xs.len()];
    let out = GlobalMut::new(&mut y);
    emulator::launch(LaunchConfig::for_num_elems(n32(xs.len()), BLOCK_1D), || {
        linked_math_kernels::affine(params, xs, out.disjoint())
    })?;
    Ok(y)
}

/// `transpose` of a `rows × cols` matrix: tiles of 32×32, blocks of 32×8.
pub fn transpose(input: &[f32], rows: usize, cols: usize) -> Result<Vec<f32>, EmulatorError> {
    use transpose_kernels::{BLOCK_ROWS, TILE};
    let mut t = vec![POISON; rows * cols];
    let out = GlobalMut::new(&mut t);
    let cfg = LaunchConfig::new(
        (n32(cols.div_ceil(TILE)), n32(rows.div_ceil(TILE)), 1),
        (TILE as u32, BLOCK_ROWS as u32, 1),
    );
    emulator::launch(cfg, || {
        transpose_kernels::transpose(input, out.disjoint(), n32(rows), n32(cols))
    })?;
    Ok(t)
}

/// Blocks `histogram-host` launches for `n` bytes: one per 4096 bytes,
/// 1 to 1024 (a grid-stride loop covers the rest).
pub fn histogram_blocks(n: usize) -> u32 {
    n32(n
        .div_ceil(histogram_kernels::BLOCK as usize * 16)
        .clamp(1, 1024))
}

/// `histogram`: adds the counts of `data` to `bins` (which start as
/// `offsets`).
pub fn histogram(data: &[u8], offsets: &[u32]) -> Result<Vec<u32>, EmulatorError> {
    let mut bins = offsets.to_vec();
    let out = GlobalMut::new(&mut bins);
    let cfg = LaunchConfig::new(
        (histogram_blocks(data.len()), 1, 1),
        (histogram_kernels::BLOCK, 1, 1),
    );
    // SAFETY: `bins` holds 256 u32s, written by the kernel only atomically.
    emulator::launch(cfg, || unsafe {
        histogram_kernels::histogram(data, out.as_mut_ptr())
    })?;
    Ok(bins)
}

/// `softmax` of each `cols`-wide row: one block of 256 per row, with
/// `shared_bytes(cols)` of dynamic shared memory.
pub fn softmax(input: &[f32], cols: usize) -> Result<Vec<f32>, EmulatorError> {
    let rows = input.len() / cols;
    let mut y = vec![POISON; input.len()];
    let out = GlobalMut::new(&mut y);
    let cfg = LaunchConfig::new((n32(rows), 1, 1), (softmax_kernels::BLOCK, 1, 1))
        .with_dynamic_shared(n32(softmax_kernels::shared_bytes(cols)));
    emulator::launch(cfg, || {
        softmax_kernels::softmax(input, out.disjoint(), n32(cols))
    })?;
    Ok(y)
}

/// Per warp of 32 inputs: the f32 sum, u32 maximum and i64 sum.
pub type WarpResults = (Vec<f32>, Vec<u32>, Vec<i64>);

/// `warp_reduce` over `xs.len()` threads in blocks of 256.
pub fn warp_reduce(xs: &[f32], keys: &[u32], big: &[i64]) -> Result<WarpResults, EmulatorError> {
    let warps = xs.len().div_ceil(warp_reduce_kernels::WARP);
    let (mut sums, mut maxes, mut totals) = (
        vec![POISON; warps],
        vec![POISON_U32; warps],
        vec![POISON_I64; warps],
    );
    let (s, m, t) = (
        GlobalMut::new(&mut sums),
        GlobalMut::new(&mut maxes),
        GlobalMut::new(&mut totals),
    );
    emulator::launch(LaunchConfig::for_num_elems(n32(xs.len()), BLOCK_1D), || {
        warp_reduce_kernels::warp_reduce(xs, keys, big, s.disjoint(), m.disjoint(), t.disjoint())
    })?;
    Ok((sums, maxes, totals))
}

/// `transform`: `out[i] = tr.m · xs[i] + tr.t` for `i < tr.count`.
pub fn transform(tr: Transform, xs: &[Float4]) -> Result<Vec<Float4>, EmulatorError> {
    let poison = Float4 {
        x: POISON,
        y: POISON,
        z: POISON,
        w: POISON,
    };
    let mut y = vec![poison; xs.len()];
    let out = GlobalMut::new(&mut y);
    emulator::launch(LaunchConfig::for_num_elems(n32(xs.len()), BLOCK_1D), || {
        struct_params_kernels::transform(tr, xs, out.disjoint())
    })?;
    Ok(y)
}

/// `black_scholes`: prices `spot.len()` options, one per thread in blocks of 128 (as
/// `black_scholes-host`); returns `(call, put)`.
pub fn black_scholes(
    spot: &[f32],
    strike: &[f32],
    years: &[f32],
    rate: f32,
    volatility: f32,
) -> Result<(Vec<f32>, Vec<f32>), EmulatorError> {
    let n = spot.len();
    let (mut call, mut put) = (vec![POISON; n], vec![POISON; n]);
    let (c, p) = (GlobalMut::new(&mut call), GlobalMut::new(&mut put));
    let cfg = LaunchConfig::for_num_elems(n32(n), black_scholes_kernels::BLOCK);
    emulator::launch(cfg, || {
        black_scholes_kernels::black_scholes(
            spot,
            strike,
            years,
            rate,
            volatility,
            c.disjoint(),
            p.disjoint(),
        )
    })?;
    Ok((call, put))
}

/// New positions and velocities of the bodies, `[x, y, z, m]` and `[vx, vy, vz, w]`.
pub type NbodyStep = (Vec<[f32; 4]>, Vec<[f32; 4]>);

/// One n-body step of `pos.len()` bodies (`[x, y, z, m]`, `[vx, vy, vz, w]`), blocks of
/// 256 (as `nbody-host`), with `nbody_step`, or `nbody_step_fast` when `fast` (which
/// the emulator runs with `math::rsqrtf` too); returns `(new_pos, new_vel)`.
pub fn nbody_step(
    pos: &[[f32; 4]],
    vel: &[[f32; 4]],
    dt: f32,
    softening_sq: f32,
    fast: bool,
) -> Result<NbodyStep, EmulatorError> {
    use device_std::vector::F32x4;
    let n = pos.len();
    let pos: Vec<F32x4> = pos.iter().map(|&p| F32x4(p)).collect();
    let vel: Vec<F32x4> = vel.iter().map(|&v| F32x4(v)).collect();
    let (mut new_pos, mut new_vel) = (vec![F32x4([POISON; 4]); n], vec![F32x4([POISON; 4]); n]);
    let (p, v) = (GlobalMut::new(&mut new_pos), GlobalMut::new(&mut new_vel));
    let cfg = LaunchConfig::for_num_elems(n32(n), nbody_kernels::BLOCK);
    emulator::launch(cfg, || {
        let step = if fast {
            nbody_kernels::nbody_step_fast
        } else {
            nbody_kernels::nbody_step
        };
        step(&pos, &vel, dt, softening_sq, p.disjoint(), v.disjoint())
    })?;
    Ok((
        new_pos.into_iter().map(|p| p.0).collect(),
        new_vel.into_iter().map(|v| v.0).collect(),
    ))
}
