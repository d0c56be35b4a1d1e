//! `C = A · B` on the tensor cores (`mma.sync.m16n8k16`, sm_80): `bf16` inputs, `f32`
//! accumulation and output. The simplest correct form (fragments loaded straight from
//! global memory, one warp per 16 × 8 tile of `C`), the first step of issue 15's GEMM.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
use device_std::{bf16, kernel, thread, DisjointSlice};

/// `c = a · b` for row-major `a` (`m × k`), `b` (`k × n`) and `c` (`m × n`), any sizes
/// (edges masked: elements past the matrices read as zero and are not written). Warp
/// `w` of the launch (`blockDim.x` a multiple of 32, 1D) computes tile
/// `(w / ceil(n / 8), w % ceil(n / 8))` of 16 × 8; launch at least
/// `ceil(m / 16) * ceil(n / 8)` warps (extra warps do nothing). sm_80.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[kernel]
pub fn gemm_bf16(a: &[bf16], b: &[bf16], mut c: DisjointSlice<f32>, m: u32, n: u32, k: u32) {
    use device_std::mma::{mma_m16n8k16, Accum, FragA, FragB};
    let (m, n, k) = (m as usize, n as usize, k as usize);
    assert!(
        thread::blockDim_x() % 32 == 0 && a.len() >= m * k && b.len() >= k * n && c.len() >= m * n
    );
    let warp = thread::global_x() / 32;
    let tiles_n = n.div_ceil(8);
    let (row0, col0) = (16 * (warp / tiles_n), 8 * (warp % tiles_n));
    // Warp-uniform: the whole warp takes part in every mma or none.
    if row0 >= m {
        return;
    }
    let zero = bf16::from_bits(0);
    let mut acc = Accum::zero();
    let mut k0 = 0;
    while k0 < k {
        let fa = FragA::<bf16>::load(|r, col| {
            let (i, j) = (row0 + r, k0 + col);
            if i < m && j < k {
                a[i * k + j]
            } else {
                zero
            }
        });
        let fb = FragB::<bf16>::load(|r, col| {
            let (i, j) = (k0 + r, col0 + col);
            if i < k && j < n {
                b[i * n + j]
            } else {
                zero
            }
        });
        mma_m16n8k16(&fa, &fb, &mut acc);
        k0 += 16;
    }
    acc.store(|r, col, v| {
        let (i, j) = (row0 + r, col0 + col);
        if i < m && j < n {
            // SAFETY: (warp, lane, element) maps one-to-one onto (i, j) of this warp's
            // tile, and tiles do not overlap; i * n + j < m * n <= c.len().
            unsafe { *c.get_unchecked_mut(i * n + j) = v };
        }
    });
}

/// [`gemm_bf16`] through shared memory: each block of 128 threads (4 warps, 1D; a trap
/// otherwise) computes a 32 × 16 tile of `c` at `(32 blockIdx.y, 16 blockIdx.x)`; per
/// step of 16 along `k` the block stages a 32 × 16 slice of `a` and a 16 × 16 slice of `b`
/// in shared memory (elements past the matrices as zeros), and warp `w` loads its
/// fragments with `ldmatrix` (`A` rows `16 (w / 2)`, `B` columns `8 (w % 2)`, the latter
/// transposed on the way) and issues one `mma`. Launch a
/// `(ceil(n / 16), ceil(m / 32))` grid. sm_80.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[kernel]
pub fn gemm_bf16_smem(a: &[bf16], b: &[bf16], mut c: DisjointSlice<f32>, m: u32, n: u32, k: u32) {
    use device_std::mma::{mma_m16n8k16, Accum, FragA, FragB};
    use device_std::SharedArray;
    let (m, n, k) = (m as usize, n as usize, k as usize);
    assert!(
        thread::block_size() == 128 && a.len() >= m * k && b.len() >= k * n && c.len() >= m * n
    );
    let a_tile = SharedArray::<bf16, { 32 * 16 }, 16>::new();
    let b_tile = SharedArray::<bf16, { 16 * 16 }, 16>::new();
    let t = thread::threadIdx_x() as usize;
    let w = t / 32;
    let (row0, col0) = (
        32 * thread::blockIdx_y() as usize,
        16 * thread::blockIdx_x() as usize,
    );
    let zero = bf16::from_bits(0);
    let mut acc = Accum::zero();
    let mut k0 = 0;
    while k0 < k {
        let mut e = t;
        while e < 32 * 16 {
            let (i, j) = (row0 + e / 16, k0 + e % 16);
            a_tile.write(e, if i < m && j < k { a[i * k + j] } else { zero });
            e += 128;
        }
        let mut e = t;
        while e < 16 * 16 {
            let (i, j) = (k0 + e / 16, col0 + e % 16);
            b_tile.write(e, if i < k && j < n { b[i * n + j] } else { zero });
            e += 128;
        }
        thread::sync_threads();
        let fa = FragA::<bf16>::load_shared(&a_tile, 16 * (w / 2), 0, 16);
        let fb = FragB::<bf16>::load_shared_trans(&b_tile, 0, 8 * (w % 2), 16);
        mma_m16n8k16(&fa, &fb, &mut acc);
        thread::sync_threads();
        k0 += 16;
    }
    let (r0, c0) = (row0 + 16 * (w / 2), col0 + 8 * (w % 2));
    acc.store(|r, col, v| {
        let (i, j) = (r0 + r, c0 + col);
        if i < m && j < n {
            // SAFETY: (block, warp, lane, element) maps one-to-one onto (i, j) of this
            // warp's 16 x 8 part of the block's tile; i * n + j < m * n <= c.len().
            unsafe { *c.get_unchecked_mut(i * n + j) = v };
        }
    });
}

/// Rows of `a` (and of `c`) per block of [`gemm_wgmma`].
pub const WG_BM: usize = 128;
/// Columns of `c` (rows of the stored `b`) per block of [`gemm_wgmma`].
pub const WG_BN: usize = 256;
/// Elements of `k` per pipeline stage of [`gemm_wgmma`] (128 bytes: one 128-byte swizzle
/// span).
pub const WG_BK: usize = 64;
/// Pipeline stages of [`gemm_wgmma`]: `STAGES * (BM + BN) * BK * 2` = 192 KiB of shared
/// memory.
pub const WG_STAGES: usize = 4;

/// The tensor map of `a` that [`gemm_wgmma`] takes: boxes of 64 (`k`) × 128 (rows), 128-byte
/// swizzle.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub type MapA = device_std::tma::TensorMap<bf16, 2, WG_BK, WG_BM, 1, 1, 1, 128>;
/// The tensor map of the stored `b` (`n` × `k`) that [`gemm_wgmma`] takes: boxes of 64
/// (`k`) × 256 (rows = columns of `c`), 128-byte swizzle.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub type MapB = device_std::tma::TensorMap<bf16, 2, WG_BK, WG_BN, 1, 1, 1, 128>;

/// `c = a · bᵀ` on Hopper's warpgroup tensor cores (`wgmma`, sm_90a): `a` is `m × k`
/// row-major and `b` is stored `n × k` row-major (so `bᵀ`, the `k × n` right operand, is
/// column-major: both operands K-major, as `wgmma` reads them without transposing), `c`
/// is `m × n` row-major `bf16`, accumulated in `f32`. `k` must be a multiple of 8 (the
/// tensor maps' 16-byte row stride); `m` and `n` are free (edges masked; elements past
/// the matrices read as zero through the maps).
///
/// Each block (384 threads: three warpgroups; a trap otherwise) computes one 128 × 256
/// tile of `c`, block `blockIdx.x` taking the tiles in groups of `group_m` tile rows
/// swept column by column (8 keeps a wave's operands in L2; 1 is row-major order):
/// launch a 1D grid of `ceil(m / 128) * ceil(n / 256)` blocks. Warpgroup 0's first thread is the
/// producer, issuing tensor copies of 128 × 64 tiles of `a` and 256 × 64 tiles of `b` into
/// a ring of 4 stages (full/empty mbarriers); warpgroups 1 and 2 each multiply 64 rows
/// of the tile with `wgmma.m64n256k16`, keeping one group in flight while they release
/// the previous stage. The kernel is capped at 384 threads, one block per SM
/// (`max_threads`, `min_blocks`), so `setmaxnreg` moves registers from the producer
/// warpgroup (40 a thread) to the consumers (232).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
#[kernel(max_threads = 384, min_blocks = 1)]
pub fn gemm_wgmma(
    a: MapA,
    b: MapB,
    mut c: DisjointSlice<bf16>,
    m: u32,
    n: u32,
    k: u32,
    group_m: u32,
) {
    use device_std::wgmma::{commit_group, Accum256, KMajorTile};
    use device_std::{Mbarriers, Phases, SharedArray};
    const A_TILE: usize = WG_BM * WG_BK;
    const B_TILE: usize = WG_BN * WG_BK;
    let (m, n, k) = (m as usize, n as usize, k as usize);
    assert!(thread::block_size() == 384 && c.len() >= m * n);
    let a_ring = SharedArray::<bf16, { WG_STAGES * A_TILE }, 1024>::new();
    let b_ring = SharedArray::<bf16, { WG_STAGES * B_TILE }, 1024>::new();
    // full[s]: the producer's expect_tx plus the copies' bytes; empty[s]: lane 0 of each
    // of the 8 consumer warps, once its warpgroup's multiplies have read stage s.
    let full = Mbarriers::<WG_STAGES>::new(1);
    let empty = Mbarriers::<WG_STAGES>::new(8);
    let t = thread::thread_in_block() as usize;
    let (tile_m, tile_n) = raster(
        thread::blockIdx_x() as usize,
        m.div_ceil(WG_BM),
        n.div_ceil(WG_BN),
        group_m as usize,
    );
    let (m0, n0) = (WG_BM * tile_m, WG_BN * tile_n);
    let k_tiles = k.div_ceil(WG_BK);
    // The warpgroup index, read from lane 0 so that the compiler sees it is the same
    // across the warp: branches on it are then uniform, which wgmma needs to run
    // unserialised (ptxas C7519 otherwise).
    let warpgroup = device_std::warp::shfl_sync(u32::MAX, (t / 128) as u32, 0) as usize;
    if warpgroup == 0 {
        // The producer needs few registers: hand them to the consumers.
        device_std::wgmma::setmaxnreg_dec::<40>();
        if t == 0 {
            a.prefetch();
            b.prefetch();
            let mut empty_phases = Phases::<WG_STAGES>::new();
            for kt in 0..k_tiles {
                let s = kt % WG_STAGES;
                if kt >= WG_STAGES {
                    empty.wait(s, &mut empty_phases);
                }
                full.get(s)
                    .arrive_expect_tx(MapA::BOX_BYTES + MapB::BOX_BYTES);
                let kx = (kt * WG_BK) as i32;
                a.load(&a_ring.part::<A_TILE>(s), [kx, m0 as i32], &full.get(s));
                b.load(&b_ring.part::<B_TILE>(s), [kx, n0 as i32], &full.get(s));
            }
        }
        return;
    }
    device_std::wgmma::setmaxnreg_inc::<232>();
    let wg = warpgroup - 1;
    let mut acc = Accum256::zero();
    let mut full_phases = Phases::<WG_STAGES>::new();
    for kt in 0..k_tiles {
        let s = kt % WG_STAGES;
        full.wait(s, &mut full_phases);
        let at = KMajorTile::<bf16, WG_BM, WG_BK, 128>::of(&a_ring.part::<A_TILE>(s));
        let bt = KMajorTile::<bf16, WG_BN, WG_BK, 128>::of(&b_ring.part::<B_TILE>(s));
        acc.fence();
        for kk in 0..WG_BK / 16 {
            acc.mma_async(
                at.descriptor(64 * wg, 16 * kk),
                bt.descriptor(0, 16 * kk),
                kt > 0 || kk > 0,
            );
        }
        commit_group();
        // The previous step's group is complete: its stage can be refilled.
        acc.wait::<1>();
        if kt > 0 && t % 32 == 0 {
            empty.get((kt - 1) % WG_STAGES).arrive();
        }
    }
    acc.wait::<0>();
    let row0 = m0 + 64 * wg;
    let out = c.as_mut_ptr();
    if row0 + 64 <= m && n0 + WG_BN <= n && n % 2 == 0 {
        // A whole tile with even rows: each pair of columns is one 4-byte store.
        acc.store_bf16_pairs(|r, col, pair| {
            // SAFETY: (block, warpgroup, thread, pair) maps one-to-one onto (i, j..j+2)
            // of this warpgroup's 64 x 256 part of the tile, inside m x n; i * n + j is
            // even (n and j are), so the address is 4-byte aligned.
            unsafe { *out.add((row0 + r) * n + n0 + col).cast::<u32>() = pair };
        });
    } else {
        acc.store(|r, col, v| {
            let (i, j) = (row0 + r, n0 + col);
            if i < m && j < n {
                // SAFETY: as above, one element, masked to m x n.
                unsafe { *out.add(i * n + j) = bf16::from_f32(v) };
            }
        });
    }
}

/// The `(row, column)` tile of `c` that block `block` computes, sweeping `group_m`
/// tile rows together column by column (so that a wave of blocks shares tiles of `a`
/// and `b` in L2) — `group_m = 1` is plain row-major order.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
fn raster(block: usize, tiles_m: usize, tiles_n: usize, group_m: usize) -> (usize, usize) {
    let group_m = group_m.max(1);
    let per_group = group_m * tiles_n;
    let first = (block / per_group) * group_m;
    let rows = (tiles_m - first).min(group_m);
    let within = block % per_group;
    (first + within % rows, within / rows)
}

/// The tensor map of `b` that [`wgmma_reg_a`] takes: boxes of 64 (`k`) × 64 rows,
/// 128-byte swizzle.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub type MapB64 = device_std::tma::TensorMap<bf16, 2, 64, 64, 1, 1, 1, 128>;

/// `c = a · bᵀ` for one 64 × 64 tile with `wgmma`'s `A` from registers: `a` is 64 × `k`
/// row-major (each warp loads its 16 rows as `mma` fragments), `b` 64 × `k` row-major
/// through tensor copies into shared memory, `c` 64 × 64 row-major `f32`; `k` a multiple
/// of 64. One block of one warpgroup (128 threads; a trap otherwise). sm_90a.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
#[kernel(max_threads = 128)]
pub fn wgmma_reg_a(a: &[bf16], b: MapB64, mut c: DisjointSlice<f32>, k: u32) {
    use device_std::mma::FragA;
    use device_std::wgmma::{commit_group, Accum64, KMajorTile};
    use device_std::{Mbarrier, Phase, SharedArray};
    let k = k as usize;
    assert!(thread::block_size() == 128 && k % 64 == 0 && a.len() >= 64 * k && c.len() >= 64 * 64);
    let tile = SharedArray::<bf16, { 64 * 64 }, 1024>::new();
    let bar = Mbarrier::new(1);
    let mut phase = Phase::new();
    let t = thread::thread_in_block() as usize;
    let warp = t / 32;
    let mut acc = Accum64::zero();
    for k0 in (0..k).step_by(64) {
        if t == 0 {
            bar.arrive_expect_tx(MapB64::BOX_BYTES);
            b.load(&tile, [k0 as i32, 0], &bar);
        }
        bar.wait(&mut phase);
        let bt = KMajorTile::<bf16, 64, 64, 128>::of(&tile);
        acc.fence();
        for kk in 0..4 {
            let fa = FragA::<bf16>::load(|r, col| a[(16 * warp + r) * k + k0 + 16 * kk + col]);
            acc.mma_async_reg_a(&fa, bt.descriptor(0, 16 * kk), k0 > 0 || kk > 0);
        }
        commit_group();
        acc.wait::<0>();
        // Every warp's multiplies have read the tile before the next copy overwrites it.
        thread::sync_threads();
    }
    acc.store(|r, col, v| {
        // SAFETY: (thread, element) maps one-to-one onto (r, col) of the 64 x 64 tile.
        unsafe { *c.get_unchecked_mut(r * 64 + col) = v };
    });
}
