//! GEMMs on the tensor cores, `bf16` inputs and `f32` accumulation: [`gemm_bf16`] and
//! [`gemm_bf16_smem`], the simplest correct `mma.sync` forms (`f32` out); [`gemm_mma`], the
//! fast portable one (`c = a · bᵀ`, `bf16` out: `cp.async` pipeline, swizzled shared
//! memory, `ldmatrix`, double-buffered fragments; sm_80) and [`gemm_mma_tma`], the same
//! compute fed by tensor copies (sm_90, for targets without `wgmma`); [`gemm_wgmma`],
//! Hopper's (tensor copies and `wgmma`, sm_90a), [`gemm_wgmma_128x128`], the same with
//! smaller tiles for outputs that leave SMs idle, and [`gemm_wgmma_fp8`], the same with
//! FP8 e4m3 inputs and per-tensor scales. Plus one-warp demonstrations of the
//! TensorFloat-32 `mma` ([`mma_tf32_tile`]) and of `stmatrix` ([`stmatrix_tile`], sm_90),
//! and the FP8 conversions ([`fp8_convert`], sm_89) checked against the host's bits.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_89"))]
use device_std::F8E4M3;
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
        thread::blockDim_x().is_multiple_of(32)
            && a.len() >= m * k
            && b.len() >= k * n
            && c.len() >= m * n
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
/// Each block (384 threads: three warpgroups; a trap otherwise) computes 128 × 256 tiles
/// of `c`, numbered in groups of `group_m` tile rows swept column by column (pass 8, as
/// every measurement did: it keeps a wave's operands in L2; 1 is row-major order, and 0
/// acts as 1): block `b` takes tiles `b`, `b + gridDim.x`, … of the
/// `ceil(m / 128) * ceil(n / 256)`. Any 1D grid of 1 to that many blocks is correct; the
/// benchmarks launch `min(tiles, SMs)` (persistent: the producer loads the next tile's
/// first stages while the consumers store the last). [`prefers_128x128`] says when
/// [`gemm_wgmma_128x128`] is the faster choice; where `n` is a multiple of 8, the
/// `*_tma_store` form of the chosen kernel ([`gemm_wgmma_tma_store`],
/// [`gemm_wgmma_128x128_tma_store`]) is faster still: its stores do not hold up the
/// consumers.
///
/// Host side (see `examples/mma_gemm/host`): build the module with `cargo xtask
/// build-ptx --arch sm_90a`; make `a`'s map with `host_loader::tma::TensorMap<bf16, 2,
/// WG_BK, WG_BM, 1, 1, 1, 128>::tiled(stream, &a, [k, m], &[2 * k])` and `b`'s the same
/// with `WG_BN` and `[k, n]`; the 192 KiB of shared memory are static, so launch with
/// `shared_mem_bytes: 0` (under the emulator, `with_static_shared_limit`).
///
/// Warpgroup 0's first thread is the producer, issuing tensor copies of 128 × 64 tiles of
/// `a` and 256 × 64 tiles of `b` into a ring of 4 stages (full/empty mbarriers);
/// warpgroups 1 and 2 each multiply 64 rows of the tile with `wgmma.m64n256k16`, keeping
/// one group in flight while they release the previous stage. `max_threads = 384` and
/// `min_blocks = 1` let ptxas budget registers for one resident block (the shared memory
/// allows no second), so `setmaxnreg` moves registers from the producer warpgroup (40 a
/// thread) to the consumers (232).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
#[kernel(max_threads = 384, min_blocks = 1)]
pub fn gemm_wgmma(a: MapA, b: MapB, c: DisjointSlice<bf16>, m: u32, n: u32, k: u32, group_m: u32) {
    let a_ring = device_std::SharedArray::<bf16, { WG_STAGES * WG_BM * WG_BK }, 1024>::new();
    let b_ring = device_std::SharedArray::<bf16, { WG_STAGES * WG_BN * WG_BK }, 1024>::new();
    wgmma_gemm_tile::<
        bf16,
        WG_BK,
        WG_BN,
        128,
        WG_STAGES,
        { WG_BM * WG_BK },
        { WG_BN * WG_BK },
        _,
        _,
        _,
    >(
        a,
        b,
        &a_ring,
        &b_ring,
        DirectStore::new(c),
        m,
        n,
        k,
        group_m,
        1.0,
    );
}

/// [`gemm_wgmma`] writing `c` through a tensor map: each consumer warp rounds its
/// finished rows into shared memory (`stmatrix`, 128-byte swizzle) and a tensor-copy
/// store (`cp.async.bulk.tensor.2d.global.shared::cta`) writes them, clipped to `m × n`,
/// while the warp goes on to the next part and the next tile. `c`'s map is the host's
/// `host_loader::tma::TensorMap<bf16, 2, 64, 16, 1, 1, 1, 128>::tiled(stream, &c, [n, m],
/// &[2 * n])`, so `n` must be a multiple of 8 (the map's 16-byte row stride) and `c`
/// 16-byte aligned; the map's extents must be `[n, m]`. `a`, `b`, shapes, threads (384),
/// grid, `group_m` as [`gemm_wgmma`]; 224 KiB of static shared memory (the ring's 192 and
/// 32 for the epilogue's boxes). sm_90a.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
#[kernel(max_threads = 384, min_blocks = 1)]
pub fn gemm_wgmma_tma_store(a: MapA, b: MapB, c: MapC, m: u32, n: u32, k: u32, group_m: u32) {
    let a_ring = device_std::SharedArray::<bf16, { WG_STAGES * WG_BM * WG_BK }, 1024>::new();
    let b_ring = device_std::SharedArray::<bf16, { WG_STAGES * WG_BN * WG_BK }, 1024>::new();
    let stage = device_std::SharedArray::<bf16, C_STAGE, 1024>::new();
    let epilogue = MapStore::new(c, &stage);
    wgmma_gemm_tile::<
        bf16,
        WG_BK,
        WG_BN,
        128,
        WG_STAGES,
        { WG_BM * WG_BK },
        { WG_BN * WG_BK },
        _,
        _,
        _,
    >(a, b, &a_ring, &b_ring, epilogue, m, n, k, group_m, 1.0);
}

/// Columns of `c` per block of [`gemm_wgmma_128x128`].
pub const WG_BN_128: usize = 128;

/// Whether [`gemm_wgmma_128x128`] should compute an `m × n` output on a GPU of `sms`
/// multiprocessors rather than [`gemm_wgmma`]: when the 128 × 256 tiles would fill at
/// most half the SMs. On an H100 (132 SMs) that picks it for 512³ (1.21× cuBLAS against
/// 0.86×) and 1024³ (1.14× against 0.80×), and leaves 2048³ (128 tiles) and every
/// larger shape of the sweep to the wider tiles (`benches/LOG.md`, "128 × 128 tiles for
/// small grids"). `sms` is the device's `CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`
/// (`host_loader::cudarc`'s `CudaContext::attribute`). `k` is not considered: the rule
/// was measured only on the sweep's shapes. It chooses the same way between
/// [`gemm_wgmma_128x128_tma_store`] and [`gemm_wgmma_tma_store`] (1.50× and 1.39× cuBLAS
/// at 512³ and 1024³ with the narrow tiles; 1.28× at 2048³ with the wide ones).
pub const fn prefers_128x128(m: usize, n: usize, sms: usize) -> bool {
    2 * m.div_ceil(WG_BM) * n.div_ceil(WG_BN) <= sms
}

/// The tensor map of the stored `b` that [`gemm_wgmma_128x128`] takes: boxes of 64 (`k`)
/// × 128 rows, 128-byte swizzle.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub type MapB128 = device_std::tma::TensorMap<bf16, 2, WG_BK, WG_BN_128, 1, 1, 1, 128>;

/// [`gemm_wgmma`] with 128 × 128 tiles of `c` (`wgmma.m64n128k16`, 64 accumulator
/// registers a thread, 128 KiB of shared memory): twice the tiles, each half the work,
/// for outputs whose 128 × 256 tiles leave SMs idle (1024³ has 32 of them for 132 SMs,
/// 64 of these). `a` as for [`gemm_wgmma`] ([`MapA`]), `b` through [`MapB128`] (the
/// host's map: `WG_BN_128` rows a box); shapes, threads (384), grid, `group_m` and static
/// shared memory as [`gemm_wgmma`], with `ceil(n / 128)` tile columns. sm_90a.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
#[kernel(max_threads = 384, min_blocks = 1)]
pub fn gemm_wgmma_128x128(
    a: MapA,
    b: MapB128,
    c: DisjointSlice<bf16>,
    m: u32,
    n: u32,
    k: u32,
    group_m: u32,
) {
    let a_ring = device_std::SharedArray::<bf16, { WG_STAGES * WG_BM * WG_BK }, 1024>::new();
    let b_ring = device_std::SharedArray::<bf16, { WG_STAGES * WG_BN_128 * WG_BK }, 1024>::new();
    wgmma_gemm_tile::<
        bf16,
        WG_BK,
        WG_BN_128,
        64,
        WG_STAGES,
        { WG_BM * WG_BK },
        { WG_BN_128 * WG_BK },
        _,
        _,
        _,
    >(
        a,
        b,
        &a_ring,
        &b_ring,
        DirectStore::new(c),
        m,
        n,
        k,
        group_m,
        1.0,
    );
}

/// Pipeline stages of [`gemm_wgmma_128x128_tma_store`]: its stages are half as large as
/// [`gemm_wgmma`]'s, so six (192 KiB) fit beside the epilogue's 32 KiB.
pub const WG_STAGES_128: usize = 6;

/// [`gemm_wgmma_128x128`] writing `c` through a tensor map as [`gemm_wgmma_tma_store`]
/// does, with a ring of [`WG_STAGES_128`] stages: `a` through [`MapA`], `b` through
/// [`MapB128`], `c` through [`MapC`] (extents `[n, m]`, `n` a multiple of 8); shapes,
/// threads (384), grid and `group_m` as [`gemm_wgmma`], with `ceil(n / 128)` tile
/// columns; 224 KiB of static shared memory. sm_90a.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
#[kernel(max_threads = 384, min_blocks = 1)]
pub fn gemm_wgmma_128x128_tma_store(
    a: MapA,
    b: MapB128,
    c: MapC,
    m: u32,
    n: u32,
    k: u32,
    group_m: u32,
) {
    const S: usize = WG_STAGES_128;
    let a_ring = device_std::SharedArray::<bf16, { S * WG_BM * WG_BK }, 1024>::new();
    let b_ring = device_std::SharedArray::<bf16, { S * WG_BN_128 * WG_BK }, 1024>::new();
    let stage = device_std::SharedArray::<bf16, C_STAGE, 1024>::new();
    let epilogue = MapStore::new(c, &stage);
    wgmma_gemm_tile::<
        bf16,
        WG_BK,
        WG_BN_128,
        64,
        S,
        { WG_BM * WG_BK },
        { WG_BN_128 * WG_BK },
        _,
        _,
        _,
    >(a, b, &a_ring, &b_ring, epilogue, m, n, k, group_m, 1.0);
}

/// Elements of `k` per pipeline stage of [`gemm_wgmma_fp8`] (128 bytes, as
/// [`gemm_wgmma`]'s).
pub const WG_BK_FP8: usize = 128;

/// The tensor map of `a` that [`gemm_wgmma_fp8`] takes: boxes of 128 (`k`) × 128 (rows),
/// 128-byte swizzle.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub type MapA8 = device_std::tma::TensorMap<F8E4M3, 2, WG_BK_FP8, WG_BM, 1, 1, 1, 128>;
/// The tensor map of the stored `b` (`n` × `k`) that [`gemm_wgmma_fp8`] takes: boxes of
/// 128 (`k`) × 256 rows, 128-byte swizzle.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub type MapB8 = device_std::tma::TensorMap<F8E4M3, 2, WG_BK_FP8, WG_BN, 1, 1, 1, 128>;

/// `c = scale · a · bᵀ` with FP8 e4m3 inputs, `f32` accumulation and `bf16` output: the
/// same tiling, pipeline and warpgroups as [`gemm_wgmma`], 128 elements of `k` (128
/// bytes) per stage, `wgmma.m64n256k32.f32.e4m3.e4m3`. `scale` is the product of the
/// per-tensor scales of `a` and `b` (the factors their values were multiplied by to fit
/// e4m3's ±448, inverted), applied to the `f32` sums before the `bf16` rounding. `k` must
/// be a multiple of 16 (the tensor maps' 16-byte row stride); `m` and `n` are free. Launch
/// as [`gemm_wgmma`]: 384 threads, a 1D grid of one block per tile or per SM.
/// sm_90a.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
#[kernel(max_threads = 384, min_blocks = 1)]
#[allow(clippy::too_many_arguments)] // the launch's parameters, as gemm_wgmma's plus `scale`
pub fn gemm_wgmma_fp8(
    a: MapA8,
    b: MapB8,
    c: DisjointSlice<bf16>,
    m: u32,
    n: u32,
    k: u32,
    group_m: u32,
    scale: f32,
) {
    let a_ring = device_std::SharedArray::<F8E4M3, { WG_STAGES * WG_BM * WG_BK_FP8 }, 1024>::new();
    let b_ring = device_std::SharedArray::<F8E4M3, { WG_STAGES * WG_BN * WG_BK_FP8 }, 1024>::new();
    wgmma_gemm_tile::<
        F8E4M3,
        WG_BK_FP8,
        WG_BN,
        128,
        WG_STAGES,
        { WG_BM * WG_BK_FP8 },
        { WG_BN * WG_BK_FP8 },
        _,
        _,
        _,
    >(
        a,
        b,
        &a_ring,
        &b_ring,
        DirectStore::new(c),
        m,
        n,
        k,
        group_m,
        scale,
    );
}

/// [`gemm_wgmma_fp8`] writing `c` through a tensor map, as [`gemm_wgmma_tma_store`] does
/// for `bf16` inputs: `c`'s map ([`MapC`], extents `[n, m]`, `n` a multiple of 8), 224 KiB
/// of static shared memory; the rest as [`gemm_wgmma_fp8`]. sm_90a.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
#[kernel(max_threads = 384, min_blocks = 1)]
#[allow(clippy::too_many_arguments)] // the launch's parameters, as gemm_wgmma_fp8's
pub fn gemm_wgmma_fp8_tma_store(
    a: MapA8,
    b: MapB8,
    c: MapC,
    m: u32,
    n: u32,
    k: u32,
    group_m: u32,
    scale: f32,
) {
    let a_ring = device_std::SharedArray::<F8E4M3, { WG_STAGES * WG_BM * WG_BK_FP8 }, 1024>::new();
    let b_ring = device_std::SharedArray::<F8E4M3, { WG_STAGES * WG_BN * WG_BK_FP8 }, 1024>::new();
    let stage = device_std::SharedArray::<bf16, C_STAGE, 1024>::new();
    let epilogue = MapStore::new(c, &stage);
    wgmma_gemm_tile::<
        F8E4M3,
        WG_BK_FP8,
        WG_BN,
        128,
        WG_STAGES,
        { WG_BM * WG_BK_FP8 },
        { WG_BN * WG_BK_FP8 },
        _,
        _,
        _,
    >(a, b, &a_ring, &b_ring, epilogue, m, n, k, group_m, scale);
}

/// The body of the six `wgmma` GEMM kernels ([`gemm_wgmma`], [`gemm_wgmma_128x128`],
/// [`gemm_wgmma_fp8`] and their `*_tma_store` forms) for element type `T`: `BK` elements
/// of `k` per stage (128 bytes), tiles of `WG_BM × BN` (`REGS = BN / 2` accumulator
/// registers a thread), a ring of `STAGES` stages, `A_TILE` and `B_TILE` the elements of
/// one stage of each ring (`WG_BM * BK`, `BN * BK`; the rings, declared by the kernel,
/// hold `STAGES` of them), and `c` the epilogue that writes the finished tiles
/// ([`DirectStore`] or [`MapStore`]). `scale` multiplies the sums before the `bf16` store
/// (1.0 folds away). `m`, `n` and `k` must be below 2^31 (tensor-copy coordinates are
/// `i32`).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
#[inline(always)]
#[allow(clippy::too_many_arguments)] // the kernels' parameters, passed through
fn wgmma_gemm_tile<
    T: device_std::wgmma::WgmmaInput + device_std::PlainData,
    const BK: usize,
    const BN: usize,
    const REGS: usize,
    const STAGES: usize,
    const A_TILE: usize,
    const B_TILE: usize,
    const A_RING: usize,
    const B_RING: usize,
    E: Epilogue,
>(
    a: device_std::tma::TensorMap<T, 2, BK, WG_BM, 1, 1, 1, 128>,
    b: device_std::tma::TensorMap<T, 2, BK, BN, 1, 1, 1, 128>,
    a_ring: &device_std::SharedArray<T, A_RING, 1024>,
    b_ring: &device_std::SharedArray<T, B_RING, 1024>,
    mut c: E,
    m: u32,
    n: u32,
    k: u32,
    group_m: u32,
    scale: f32,
) {
    use device_std::tma::TensorMap;
    use device_std::wgmma::{commit_group, Accum, KMajorTile};
    use device_std::{Mbarriers, Phases};
    const { assert!(A_RING == STAGES * A_TILE && B_RING == STAGES * B_TILE) }
    let (m, n, k) = (m as usize, n as usize, k as usize);
    assert!(thread::block_size() == 384 && c.fits(m, n));
    // full[s]: the producer's expect_tx plus the copies' bytes; empty[s]: lane 0 of each
    // of the 8 consumer warps, once its warpgroup's multiplies have read stage s.
    let full = Mbarriers::<STAGES>::new(1);
    let empty = Mbarriers::<STAGES>::new(8);
    let t = thread::thread_in_block() as usize;
    let (tiles_m, tiles_n) = (m.div_ceil(WG_BM), n.div_ceil(BN));
    // Persistent: block b takes tiles b, b + gridDim.x, ... in raster order. The ring
    // runs on across tiles (stage g % STAGES for the g-th k-tile of the block), so the
    // producer loads the next tile's first stages while the consumers store this one.
    let (first, step) = (thread::blockIdx_x() as usize, thread::gridDim_x() as usize);
    let tiles = tiles_m * tiles_n;
    let k_tiles = k.div_ceil(BK);
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
            let mut empty_phases = Phases::<STAGES>::new();
            let mut g = 0;
            let mut tile = first;
            while tile < tiles {
                let (tile_m, tile_n) = raster(tile, tiles_m, tiles_n, group_m as usize);
                let (m0, n0) = (WG_BM * tile_m, BN * tile_n);
                for kt in 0..k_tiles {
                    let s = g % STAGES;
                    if g >= STAGES {
                        empty.wait(s, &mut empty_phases);
                    }
                    full.get(s).arrive_expect_tx(
                        TensorMap::<T, 2, BK, WG_BM, 1, 1, 1, 128>::BOX_BYTES
                            + TensorMap::<T, 2, BK, BN, 1, 1, 1, 128>::BOX_BYTES,
                    );
                    let kx = (kt * BK) as i32;
                    a.load(&a_ring.part::<A_TILE>(s), [kx, m0 as i32], &full.get(s));
                    b.load(&b_ring.part::<B_TILE>(s), [kx, n0 as i32], &full.get(s));
                    g += 1;
                }
                tile += step;
            }
        }
        return;
    }
    device_std::wgmma::setmaxnreg_inc::<232>();
    let wg = warpgroup - 1;
    let mut full_phases = Phases::<STAGES>::new();
    let k_step = KMajorTile::<T, WG_BM, BK, 128>::K_STEP;
    let mut g = 0;
    let mut tile = first;
    while tile < tiles {
        let (tile_m, tile_n) = raster(tile, tiles_m, tiles_n, group_m as usize);
        let (m0, n0) = (WG_BM * tile_m, BN * tile_n);
        let mut acc = Accum::<BN, REGS>::zero();
        for kt in 0..k_tiles {
            let s = g % STAGES;
            full.wait(s, &mut full_phases);
            let at = KMajorTile::<T, WG_BM, BK, 128>::of(&a_ring.part::<A_TILE>(s));
            let bt = KMajorTile::<T, BN, BK, 128>::of(&b_ring.part::<B_TILE>(s));
            acc.fence();
            for kk in 0..BK / k_step {
                acc.mma_async(
                    at.descriptor(64 * wg, k_step * kk),
                    bt.descriptor(0, k_step * kk),
                    kt > 0 || kk > 0,
                );
            }
            commit_group();
            // The previous step's group is complete: its stage can be refilled.
            acc.wait::<1>();
            if kt > 0 && t.is_multiple_of(32) {
                empty.get((g - 1) % STAGES).arrive();
            }
            g += 1;
        }
        acc.wait::<0>();
        // The tile's last stage is read too: the producer may refill it for the next tile.
        if k_tiles > 0 && t.is_multiple_of(32) {
            empty.get((g - 1) % STAGES).arrive();
        }
        acc.scale(scale);
        c.store(&acc, m0 + 64 * wg, n0, m, n);
        tile += step;
    }
    c.finish();
}

/// How [`wgmma_gemm_tile`]'s consumer warpgroups write their finished tiles.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
trait Epilogue {
    /// Writes a consumer warpgroup's 64 × `BN` accumulator at `(row0, n0)` of the
    /// `m × n` row-major `c` as `bf16`, nothing outside `m × n` ([`DirectStore`] masks;
    /// [`MapStore`]'s copies clip to the map, whose extents are `[n, m]`).
    fn store<const BN: usize, const REGS: usize>(
        &mut self,
        acc: &device_std::wgmma::Accum<BN, REGS>,
        row0: usize,
        n0: usize,
        m: usize,
        n: usize,
    );
    /// After the consumer's last tile: whatever is still in flight completes.
    fn finish(&mut self);
    /// Whether the output can take an `m × n` result (tested once, with the block size,
    /// by the kernel's single entry check).
    fn fits(&self, m: usize, n: usize) -> bool;
}

/// The epilogue of [`gemm_wgmma`]: each thread stores its own elements to `c`.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
struct DirectStore<'c> {
    c: DisjointSlice<'c, bf16>,
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
impl<'c> DirectStore<'c> {
    /// Stores into `c`, which must hold the `m × n` output ([`Epilogue::fits`]).
    #[inline(always)]
    fn new(c: DisjointSlice<'c, bf16>) -> Self {
        DirectStore { c }
    }
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
impl Epilogue for DirectStore<'_> {
    /// Pairs of columns as one 4-byte store when the whole part lies inside, `n` is even
    /// and `c` 4-byte aligned; element by element (masked) otherwise.
    #[inline(always)]
    fn store<const BN: usize, const REGS: usize>(
        &mut self,
        acc: &device_std::wgmma::Accum<BN, REGS>,
        row0: usize,
        n0: usize,
        m: usize,
        n: usize,
    ) {
        let out = self.c.as_mut_ptr();
        // `c` promises 2-byte alignment only (a launch may pass a view one element in).
        let aligned = (out as usize).is_multiple_of(4);
        if row0 + 64 <= m && n0 + BN <= n && n & 1 == 0 && aligned {
            // A whole tile with even rows: each pair of columns is one 4-byte store.
            acc.store_bf16_pairs(|r, col, pair| {
                // SAFETY: (block, tile, warpgroup, thread, pair) maps one-to-one onto
                // (i, j..j+2) of this warpgroup's 64 x BN part of the tile, inside m x n
                // (c.len() >= m * n: `fits`, checked at the kernel's entry); i * n + j is even (n and j are)
                // and `c` starts 4-byte aligned (tested above), so the address is
                // 4-byte aligned.
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

    #[inline(always)]
    fn finish(&mut self) {}

    #[inline(always)]
    fn fits(&self, m: usize, n: usize) -> bool {
        self.c.len() >= m * n
    }
}

/// The tensor map of `c` that the `*_tma_store` kernels ([`gemm_wgmma_tma_store`],
/// [`gemm_wgmma_128x128_tma_store`], [`gemm_wgmma_fp8_tma_store`]) write through: boxes
/// of 64 columns × 16 rows, 128-byte swizzle (one warp's 16 rows of a 64-column part).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub type MapC = device_std::tma::TensorMap<bf16, 2, 64, 16, 1, 1, 1, 128>;

/// Elements of the epilogue's staging buffer in [`gemm_wgmma_tma_store`]: two 16 × 64
/// boxes for each of the 8 consumer warps (32 KiB).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
const C_STAGE: usize = 2 * 8 * 16 * 64;

/// The epilogue of [`gemm_wgmma_tma_store`]: each consumer warp rounds 64 columns of its
/// 16 rows into one of its two swizzled boxes in shared memory (`stmatrix`), and its
/// lane 0 hands the box to a tensor-copy store, which clips the box to the tensor. The
/// warp goes on with the next part while the copy engine writes this one; a box is
/// refilled once its copy has read it (`cp.async.bulk.wait_group.read 1`).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
struct MapStore<'s> {
    map: MapC,
    stage: &'s device_std::SharedArray<bf16, C_STAGE, 1024>,
    /// Boxes this warp has stored so far (which of its two comes next).
    boxes: usize,
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
impl<'s> MapStore<'s> {
    /// Stores through `map`, staging in `stage`.
    #[inline(always)]
    fn new(map: MapC, stage: &'s device_std::SharedArray<bf16, C_STAGE, 1024>) -> Self {
        MapStore {
            map,
            stage,
            boxes: 0,
        }
    }
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
impl Epilogue for MapStore<'_> {
    #[inline(always)]
    fn store<const BN: usize, const REGS: usize>(
        &mut self,
        acc: &device_std::wgmma::Accum<BN, REGS>,
        row0: usize,
        n0: usize,
        _m: usize,
        _n: usize,
    ) {
        use device_std::bulk;
        let t = thread::thread_in_block() as usize;
        // The consumer warps are 4..12 of the block.
        let (warp, lane) = (t / 32 - 4, t % 32);
        let row = row0 + 16 * (warp % 4);
        // Straight-line code: `j` indexes the accumulator's registers.
        unrolled::<4>(|j| {
            if j >= BN / 64 {
                return;
            }
            // (The mask keeps the index visibly in bounds: no check, no call.)
            let part = self
                .stage
                .part::<{ 16 * 64 }>((2 * warp + self.boxes % 2) & 15);
            if self.boxes >= 2 {
                // The copy issued two boxes ago read this one.
                if lane == 0 {
                    bulk::wait_group_read::<1>();
                }
                thread::sync_warp(u32::MAX);
            }
            acc.store_bf16_swizzled(64 * j, &part);
            bulk::fence_proxy_async_shared();
            thread::sync_warp(u32::MAX);
            if lane == 0 {
                // SAFETY: (block, tile, warp, j) maps one-to-one onto the boxes of c;
                // no other thread touches this box's elements of c. The launch's
                // contract: the map covers exactly c's m x n and aliases neither a nor b.
                unsafe { self.map.store(&part, [(n0 + 64 * j) as i32, row as i32]) };
                bulk::commit_group();
            }
            self.boxes += 1;
        });
    }

    #[inline(always)]
    fn finish(&mut self) {
        if thread::lane_id() == 0 {
            device_std::bulk::wait_group::<0>();
        }
    }

    /// The map clips the stores; its extents are the launch's contract.
    #[inline(always)]
    fn fits(&self, _m: usize, _n: usize) -> bool {
        true
    }
}

/// The `(row, column)` tile of `c` that block `block` computes, sweeping `group_m`
/// tile rows together column by column (so that a wave of blocks shares tiles of `a`
/// and `b` in L2) — `group_m = 1` is plain row-major order.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
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
    assert!(
        thread::block_size() == 128
            && k.is_multiple_of(64)
            && a.len() >= 64 * k
            && c.len() >= 64 * 64
    );
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
        // The fragments are written before the fence: a register of A written between
        // `wgmma.fence` and the `mma_async` that reads it is undefined (PTX ISA,
        // wgmma.fence).
        let fa: [FragA<bf16>; 4] = core::array::from_fn(|kk| {
            FragA::<bf16>::load(|r, col| a[(16 * warp + r) * k + k0 + 16 * kk + col])
        });
        acc.fence();
        for (kk, fa) in fa.iter().enumerate() {
            acc.mma_async_reg_a(fa, bt.descriptor(0, 16 * kk), k0 > 0 || kk > 0);
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

/// The tensor map of the row-major `k × 128` `b` that [`wgmma_mn_b`] takes: boxes of 64
/// columns (128 bytes) × 64 rows of `k`, 128-byte swizzle.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub type MapMnB = device_std::tma::TensorMap<bf16, 2, 64, 64, 1, 1, 1, 128>;

/// `c = a · b` for one 64 × 128 tile with `A` from registers and an MN-major `B`
/// (`wgmma`'s transpose-B flag, [`device_std::wgmma::MnMajorTile`]): `a` is 64 × 64
/// row-major (each warp loads its 16 rows as `mma` fragments), `b` 64 × 128 row-major
/// (`n` contiguous, as FlashAttention's `V`) through two tensor copies of 64 columns,
/// `c` 64 × 128 row-major `f32`. One block of one warpgroup (128 threads; a trap
/// otherwise). sm_90a.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
#[kernel(max_threads = 128)]
pub fn wgmma_mn_b(a: &[bf16], b: MapMnB, mut c: DisjointSlice<f32>) {
    use device_std::mma::FragA;
    use device_std::wgmma::{commit_group, Accum128, MnMajorTile};
    use device_std::{Mbarrier, Phase, SharedArray};
    assert!(thread::block_size() == 128 && a.len() >= 64 * 64 && c.len() >= 64 * 128);
    let tile = SharedArray::<bf16, { 64 * 128 }, 1024>::new();
    let bar = Mbarrier::new(1);
    let mut phase = Phase::new();
    let t = thread::thread_in_block() as usize;
    let warp = t / 32;
    if t == 0 {
        bar.arrive_expect_tx(2 * MapMnB::BOX_BYTES);
        b.load(&tile.part::<{ 64 * 64 }>(0), [0, 0], &bar);
        b.load(&tile.part::<{ 64 * 64 }>(1), [64, 0], &bar);
    }
    bar.wait(&mut phase);
    let bt = MnMajorTile::<bf16, 64, 128, 128>::of(&tile);
    // The fragments are written before the fence (see `wgmma_reg_a`).
    let fa: [FragA<bf16>; 4] = core::array::from_fn(|kk| {
        FragA::<bf16>::load(|r, col| a[(16 * warp + r) * 64 + 16 * kk + col])
    });
    let mut acc = Accum128::zero();
    acc.fence();
    for (kk, fa) in fa.iter().enumerate() {
        acc.mma_async_reg_a_mn(fa, bt.descriptor(16 * kk, 0), kk > 0);
    }
    commit_group();
    acc.wait::<0>();
    acc.store(|r, col, v| {
        // SAFETY: (thread, element) maps one-to-one onto (r, col) of the 64 x 128 tile.
        unsafe { *c.get_unchecked_mut(r * 128 + col) = v };
    });
}

/// The tensor maps [`wgmma_sw32`] takes: boxes of 16 (`k`, 32 bytes) × 64 rows, 32-byte
/// swizzle.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub type MapSw32 = device_std::tma::TensorMap<bf16, 2, 16, 64, 1, 1, 1, 32>;
/// The tensor maps [`wgmma_sw64`] takes: boxes of 32 (`k`, 64 bytes) × 64 rows, 64-byte
/// swizzle.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub type MapSw64 = device_std::tma::TensorMap<bf16, 2, 32, 64, 1, 1, 1, 64>;

/// `c = a · bᵀ` for one 64 × 64 tile with both `wgmma` operands read from shared memory
/// through a `SW`-byte swizzle: `a` and `b` are 64 × `k` row-major, each loaded by tensor
/// copies of `KT` × 64 boxes (`KT` = one swizzle span of `k`, `N` = 64 `KT` elements),
/// `c` 64 × 64 row-major `f32`; `k` a multiple of `KT`. One block of one warpgroup (128
/// threads; a trap otherwise). sm_90a.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
#[inline(always)]
#[allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV
fn wgmma_swizzled<const KT: usize, const SW: usize, const N: usize>(
    a: device_std::tma::TensorMap<bf16, 2, KT, 64, 1, 1, 1, SW>,
    b: device_std::tma::TensorMap<bf16, 2, KT, 64, 1, 1, 1, SW>,
    mut c: DisjointSlice<f32>,
    k: u32,
) {
    use device_std::wgmma::{commit_group, Accum64, KMajorTile};
    use device_std::{Mbarrier, Phase, SharedArray};
    let k = k as usize;
    assert!(thread::block_size() == 128 && k % KT == 0 && c.len() >= 64 * 64);
    let (ta, tb) = (
        SharedArray::<bf16, N, 1024>::new(),
        SharedArray::<bf16, N, 1024>::new(),
    );
    let bar = Mbarrier::new(1);
    let mut phase = Phase::new();
    let mut acc = Accum64::zero();
    for k0 in (0..k).step_by(KT) {
        if thread::thread_in_block() == 0 {
            bar.arrive_expect_tx(
                2 * device_std::tma::TensorMap::<bf16, 2, KT, 64, 1, 1, 1, SW>::BOX_BYTES,
            );
            a.load(&ta, [k0 as i32, 0], &bar);
            b.load(&tb, [k0 as i32, 0], &bar);
        }
        bar.wait(&mut phase);
        let (da, db) = (
            KMajorTile::<bf16, 64, KT, SW>::of(&ta),
            KMajorTile::<bf16, 64, KT, SW>::of(&tb),
        );
        acc.fence();
        for kk in (0..KT).step_by(16) {
            acc.mma_async(da.descriptor(0, kk), db.descriptor(0, kk), k0 > 0 || kk > 0);
        }
        commit_group();
        acc.wait::<0>();
        // Every warp's multiplies have read both tiles before the next copies overwrite them.
        thread::sync_threads();
    }
    acc.store(|r, col, v| {
        // SAFETY: (thread, element) maps one-to-one onto (r, col) of the 64 x 64 tile.
        unsafe { *c.get_unchecked_mut(r * 64 + col) = v };
    });
}

/// `wgmma_swizzled` with the 32-byte swizzle (16 of `k` per copy): `c = a · bᵀ`, `a` and
/// `b` 64 × `k` row-major `bf16` through [`MapSw32`] maps, `c` 64 × 64 `f32`; `k` a
/// multiple of 16; one block of 128 threads. sm_90a.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
#[kernel(max_threads = 128)]
pub fn wgmma_sw32(a: MapSw32, b: MapSw32, c: DisjointSlice<f32>, k: u32) {
    wgmma_swizzled::<16, 32, { 64 * 16 }>(a, b, c, k)
}

/// `wgmma_swizzled` with the 64-byte swizzle (32 of `k` per copy): as [`wgmma_sw32`]
/// through [`MapSw64`] maps; `k` a multiple of 32. sm_90a.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
#[kernel(max_threads = 128)]
pub fn wgmma_sw64(a: MapSw64, b: MapSw64, c: DisjointSlice<f32>, k: u32) {
    wgmma_swizzled::<32, 64, { 64 * 32 }>(a, b, c, k)
}

/// Threads per block of the `mma.sync` GEMMs: 8 warps.
pub const MMA_THREADS: usize = 256;

/// The tile shape of an `mma.sync` GEMM kernel: `bm × bn` of `c` per block, `stages`
/// pipeline stages of `bk` along `k`; the launch needs [`smem_bytes`](Self::smem_bytes) of
/// dynamic shared memory and [`MMA_THREADS`] threads per block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MmaShape {
    /// Rows of `c` per block.
    pub bm: usize,
    /// Columns of `c` per block.
    pub bn: usize,
    /// Elements of `k` per stage: 32 (64-byte tile rows) or 64 (128-byte rows).
    pub bk: usize,
    /// Pipeline stages.
    pub stages: usize,
}

impl MmaShape {
    /// Bytes of dynamic shared memory a launch must provide: `stages (bm + bn) bk 2`.
    pub const fn smem_bytes(self) -> usize {
        self.stages * (self.bm + self.bn) * self.bk * 2
    }
    /// Blocks of a 1D launch for an `m × n` output.
    pub const fn blocks(self, m: usize, n: usize) -> usize {
        m.div_ceil(self.bm) * n.div_ceil(self.bn)
    }
}

/// [`gemm_mma`]'s shape: 128 × 256 × 32, 4 stages (96 KiB of dynamic shared memory).
pub const MMA: MmaShape = MmaShape {
    bm: 128,
    bn: 256,
    bk: 32,
    stages: 4,
};

/// `c = a · bᵀ` on the tensor cores with `mma.sync.m16n8k16` (sm_80 and newer): the
/// portable form of [`gemm_wgmma`], the same operands as plain slices. `a` is `m × k`
/// row-major, `b` is stored `n × k` row-major (both operands K-major), `c` is `m × n`
/// row-major `bf16`, accumulated in `f32` and rounded to nearest even. `k` must be a
/// multiple of 8 (every 16-byte chunk of a row is then inside or outside the matrix; a
/// trap otherwise) and the slices 16-byte aligned (as `cudaMalloc` gives; a trap
/// otherwise); `m` and `n` are free (edges masked: rows past the matrices read as zero
/// and are not written).
///
/// Each block ([`MMA_THREADS`] = 256 threads, 1D; a trap otherwise) computes one
/// 128 × 256 tile of `c` ([`MMA`]), block `blockIdx.x` taking the tiles in groups of 8
/// tile rows swept column by column: launch a 1D grid of `MMA.blocks(m, n)` blocks with
/// `MMA.smem_bytes()` (96 KiB) of dynamic shared memory (a trap with less). Per step of 32
/// along `k` every thread copies 16-byte chunks of the tiles of `a` and `b` with
/// `cp.async` (zero-filling past the edges, no branches) into a ring of 4 stages (rows of
/// 64 bytes whose 4 chunks are XOR-swizzled by `(row / 2) % 4`, so that `ldmatrix` reads
/// and the copies' writes are free of bank conflicts); the 8 warps (2 × 4) each compute
/// 64 × 64 of the tile from `ldmatrix` fragments (`b` needs no transpose: it is K-major
/// like `a`), double-buffered: each step's 32 `mma`s run while the next step's fragments
/// load, across tile boundaries too; the two steps of a k-tile each issue half of the
/// copies of the tile 3 ahead, and the block waits for the next tile between them (after
/// the first step's multiplies, as CUTLASS's multistage kernels do). The output tile is
/// staged in shared memory as `bf16` pairs and written in 16-byte chunks (whole tiles,
/// `n % 8 == 0`, `c` 16-byte aligned) or element by element, masked (edge tiles, other
/// `n`).
///
/// On the H200: 429–445 TFLOP/s at 8192³ (0.59–0.60× cuBLAS in the same run, within 1.3%
/// of CUTLASS's sm80 kernel of the same tile shape timed beside it), 449–455 at 4096³
/// (0.60×); 234 registers, no spills, one block per multiprocessor (BENCHMARKS.md).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[kernel]
pub fn gemm_mma(a: &[bf16], b: &[bf16], c: DisjointSlice<bf16>, m: u32, n: u32, k: u32) {
    mma_tiled::<2, 4, 4, 8, 4, 4, _>(CpAsyncFeed { a, b }, c, m, n, k);
}

/// `c = a · bᵀ` on the tensor cores with `mma.sync.m16n8k16`, the tiles of the operands
/// brought in by tensor copies (the TMA) instead of per-thread `cp.async`: [`gemm_mma`]'s
/// compute, for targets that have tensor copies but where `wgmma` may be absent (sm_90
/// without `a`, sm_100, sm_120). Minimum sm_90. `a` is `m × k` row-major and `b` is
/// stored `n × k` row-major, both given as tensor maps: [`MapA32`] (boxes of 32 × 128)
/// and [`MapB32`] (32 × 256), both with the 64-byte swizzle, which the host encodes over
/// the `bf16` buffers with extents `[k, m]` and `[k, n]` (innermost first) and a row
/// stride of `2k` bytes. `c` is `m × n` row-major `bf16`, accumulated in `f32` and
/// rounded to nearest even. `k` must be a multiple of 8 (the maps' 16-byte row stride; a
/// trap otherwise); `m` and `n` are free (the copies read zeros past the matrices, and
/// the output is masked).
///
/// Launched as [`gemm_mma`]: [`MMA_THREADS`] = 256 threads per block (1D; a trap
/// otherwise), a 1D grid of `MMA.blocks(m, n)` blocks, `MMA.smem_bytes()` (96 KiB) of
/// dynamic shared memory (a trap with less, or when the driver places it off a 512-byte
/// boundary); the kernel adds 32 bytes of static shared memory (the barriers). Per k-tile
/// of 32, thread 0 announces both boxes' bytes on the stage's full mbarrier and issues
/// the two tensor copies (`a`'s 128 × 32 box, `b`'s 256 × 32 box) 3 k-tiles ahead into the
/// 4-stage ring. The 64-byte swizzle puts the 16-byte chunk `c` of tile row `r` at chunk
/// `c ^ ((r / 2) % 4)` of its 64-byte row (each tile 512-byte aligned), the layout
/// `gemm_mma`'s copies write, so the `ldmatrix` addressing, the multiplies and the staged
/// epilogue are the same code (`mma_tiled` with a `Feed`). Every thread waits for the
/// k-tile's phase on the stage's barrier, then the block barrier, which also tells thread 0
/// that the stage its next copy overwrites is no longer read. The epilogue reuses the ring
/// once every copy has landed (each was waited for).
///
/// On the H200 2–5% slower than [`gemm_mma`]: 383–390 TFLOP/s at 8192³ (0.52–0.54×
/// cuBLAS), 434–440 at 4096³ (benches/LOG.md, "Third round: tensor copies"): use `gemm_mma` there.
///
/// PTX ISA 9.0: §9.7.9.27 "cp.async.bulk.tensor" (`.tile`, `mbarrier::complete_tx::bytes`),
/// §9.7.13.15 "mbarrier" (`init`, `arrive.expect_tx`, `try_wait.parity`), §9.7.14.5.14
/// "mma" (`m16n8k16`, `bf16` → `f32`), §9.7.14.5.15 "ldmatrix".
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
#[kernel]
pub fn gemm_mma_tma(a: MapA32, b: MapB32, c: DisjointSlice<bf16>, m: u32, n: u32, k: u32) {
    mma_tiled::<2, 4, 4, 8, 4, 4, _>(TmaFeed { a, b }, c, m, n, k);
}

/// Index in a stage tile with rows of `KC` 8-element chunks (`KC` = 4: 64-byte rows; 8:
/// 128-byte rows) of chunk `chunk` of row `row`, the chunks XOR-swizzled by `(row / 2) % 4`
/// (`KC` = 4) or `row % 8` (`KC` = 8). The 8 rows an `ldmatrix` phase reads (same chunk,
/// consecutive rows) then fall into 8 distinct 16-byte bank groups, and so do the chunks
/// 8 consecutive threads copy.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
const fn swz<const KC: usize>(row: usize, chunk: usize) -> usize {
    let sw = if KC == 4 { (row / 2) % 4 } else { row % 8 };
    row * KC * 8 + ((chunk ^ sw) * 8)
}

/// Calls `f(0)`, `f(1)`, ... `f(N - 1)` as straight-line code (`N` <= 8): fragment arrays
/// indexed by these constants stay in registers, where a loop that the compiler declines
/// to unroll would put them on the stack.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
fn unrolled<const N: usize>(mut f: impl FnMut(usize)) {
    const { assert!(N <= 8, "unrolled: at most 8") }
    macro_rules! call {
        ($($i:literal)*) => { $( if $i < N { f($i) } )* };
    }
    call!(0 1 2 3 4 5 6 7);
}

/// A block's share of an `mma.sync` GEMM, as a [`Feed`] sees it: the block's tile of `c`
/// (rows `m0..m0 + bm` of `a`, rows `n0..n0 + bn` of the stored `b`), the tile shape and
/// the ring. Made only by [`mma_tiled`], after it has checked that the dynamic shared
/// memory holds `stages` stages: stage `s` is the `(bm + bn) kc` 16-byte chunks from chunk
/// `s (bm + bn) kc` of `ring`, `a`'s tile (`bm` rows of `kc` chunks, placed by [`swz`])
/// first and `b`'s (`bn` rows) after it. All but `m0`, `n0`, `t` and `ring` are
/// constants once inlined.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[derive(Clone, Copy)]
struct BlockTile {
    m: usize,
    n: usize,
    k: usize,
    m0: usize,
    n0: usize,
    /// This thread's index in the block.
    t: usize,
    bm: usize,
    bn: usize,
    /// 16-byte chunks of `k` per stage row (4: 64-byte rows; 8: 128-byte rows).
    kc: usize,
    threads: usize,
    /// Read by the tensor-copy feed only (sm_90).
    #[cfg_attr(
        all(target_arch = "nvptx64", not(target_feature = "sm_90")),
        allow(dead_code)
    )]
    k_tiles: usize,
    ring: device_std::SharedPtr<[u32; 4]>,
}

/// How the tiles of `a` and `b` reach [`mma_tiled`]'s ring: per-thread `cp.async`
/// ([`CpAsyncFeed`], sm_80) or tensor copies ([`TmaFeed`], sm_90). The operands, before a
/// block starts.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
trait Feed {
    /// The one block shape the feed is built for, if it has one (tensor maps fix the
    /// box): [`mma_tiled`] checks it against its own at compile time.
    const SHAPE: Option<MmaShape> = None;
    /// The feed of one block.
    type Loader: Loader;
    /// Checks the operands against `m × k` and `n × k` (traps) and prepares the block's
    /// copies. Every thread of the block calls it, at the same place (it may
    /// synchronise the block).
    fn start(self, tile: &BlockTile) -> Self::Loader;
}

/// One block's copies into the ring; every thread calls every method, at the same
/// places (the main loop's pattern: [`mma_tiled`]).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
trait Loader {
    /// Issues part `part` (0 or 1: steps 0 and 1 of a k-tile issue one each) of the
    /// copies of k-tile `kt` into stage `s`, which no thread reads any more (the block
    /// barrier after its last reads came before).
    fn load(&mut self, s: usize, kt: usize, part: usize);
    /// Closes the group of copies issued since the last call (one per k-tile, issued or
    /// not).
    fn commit(&mut self);
    /// Returns once k-tile `kt`'s copies (none when `kt >= k_tiles`) have landed and this
    /// thread's part of them is visible to it, where `newer` groups were committed after
    /// the one that completes `kt`; the caller's block barrier then makes the whole tile
    /// visible to every thread.
    fn wait(&mut self, kt: usize, newer: usize);
    /// Returns once no copy is in flight (before the ring is reused).
    fn drain(&mut self);
}

/// [`gemm_mma`]'s operands: plain slices, copied by every thread in 16-byte `cp.async`
/// chunks.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
struct CpAsyncFeed<'a> {
    a: &'a [bf16],
    b: &'a [bf16],
}

/// [`CpAsyncFeed`] for one block: this thread's first source chunks and where they go.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
struct CpAsyncLoader {
    tile: BlockTile,
    a_src: *const [u32; 4],
    b_src: *const [u32; 4],
    /// This thread's first row of a tile and its chunk of every row.
    row0: usize,
    ch: usize,
    rows_per_pass: usize,
    k8: usize,
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
impl Feed for CpAsyncFeed<'_> {
    type Loader = CpAsyncLoader;

    #[inline(always)]
    #[allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV
    fn start(self, tile: &BlockTile) -> CpAsyncLoader {
        let (a, b) = (self.a, self.b);
        let (m, n, k) = (tile.m, tile.n, tile.k);
        assert!(
            a.len() >= m * k
                && b.len() >= n * k
                && a.as_ptr() as usize % 16 == 0
                && b.as_ptr() as usize % 16 == 0
        );
        // 16-byte views of the operands: chunk `q` is elements 8q..8q+8.
        // SAFETY: the same memory read as whole 16-byte chunks: both pointers are 16-byte
        // aligned (checked above), any bits are a valid [u32; 4], and the lengths round down.
        let (a16, b16) = unsafe {
            (
                core::slice::from_raw_parts(a.as_ptr().cast::<[u32; 4]>(), a.len() / 8),
                core::slice::from_raw_parts(b.as_ptr().cast::<[u32; 4]>(), b.len() / 8),
            )
        };
        // Chunk q = t + THREADS i of a tile is its row q / KC, chunk q % KC, so this
        // thread's chunk of the row is always t % KC and its rows are t / KC +
        // (THREADS / KC) i.
        let (row0, ch) = (tile.t / tile.kc, tile.t % tile.kc);
        let k8 = k / 8;
        CpAsyncLoader {
            tile: *tile,
            a_src: a16.as_ptr().wrapping_add((tile.m0 + row0) * k8 + ch),
            b_src: b16.as_ptr().wrapping_add((tile.n0 + row0) * k8 + ch),
            row0,
            ch,
            rows_per_pass: tile.threads / tile.kc,
            k8,
        }
    }
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
impl Loader for CpAsyncLoader {
    /// Half of this thread's copies of k-tile `kt`: `part` 0 copies a's tile and the first
    /// half of b's rows, `part` 1 the rest of b's; chunks past the matrices are
    /// zero-filled. No checks and no branches in here: the bounds are established once.
    #[inline(always)]
    fn load(&mut self, s: usize, kt: usize, part: usize) {
        let BlockTile {
            m,
            n,
            m0,
            n0,
            bm,
            bn,
            kc: kcs,
            ring,
            ..
        } = self.tile;
        let (row0, ch, rows_per_pass, k8) = (self.row0, self.ch, self.rows_per_pass, self.k8);
        let kc = kt * kcs;
        let k_ok = kc + ch < k8;
        let at = ring.add(s * (bm + bn) * kcs);
        for i in 0..bm / rows_per_pass {
            if part == 1 {
                break;
            }
            let row = row0 + rows_per_pass * i;
            let src = self.a_src.wrapping_add(rows_per_pass * i * k8 + kc);
            // SAFETY: the chunk lies in this stage's a tile (the ring's length was checked
            // by mma_tiled), 16-byte aligned, and no thread reads it before the wait and
            // barrier of its k-tile; when valid, src is chunk (m0 + row, kc + ch) of a,
            // inside a16.
            unsafe {
                device_std::cp_async::copy16_unchecked(
                    at.add(swz_kc(kcs, row, ch) / 8),
                    src,
                    m0 + row < m && k_ok,
                )
            };
        }
        let at = at.add(bm * kcs);
        for i in 0..bn / rows_per_pass {
            if (part == 0) != (i < bn / rows_per_pass / 2) {
                continue;
            }
            let row = row0 + rows_per_pass * i;
            let src = self.b_src.wrapping_add(rows_per_pass * i * k8 + kc);
            // SAFETY: as above, in this stage's b tile and inside b16.
            unsafe {
                device_std::cp_async::copy16_unchecked(
                    at.add(swz_kc(kcs, row, ch) / 8),
                    src,
                    n0 + row < n && k_ok,
                )
            };
        }
    }

    #[inline(always)]
    fn commit(&mut self) {
        device_std::cp_async::commit_group();
    }

    /// Waits until at most the `newer` groups are pending (`cp.async.wait_group`), which
    /// is waiting for `kt`'s last copies and everything before them.
    #[inline(always)]
    fn wait(&mut self, _kt: usize, newer: usize) {
        use device_std::cp_async::wait_group;
        match newer {
            0 => wait_group::<0>(),
            1 => wait_group::<1>(),
            2 => wait_group::<2>(),
            3 => wait_group::<3>(),
            _ => wait_group::<4>(),
        }
    }

    #[inline(always)]
    fn drain(&mut self) {
        device_std::cp_async::wait_all();
    }
}

/// [`swz`] with the chunks per row as a value (a constant once inlined).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
const fn swz_kc(kc: usize, row: usize, chunk: usize) -> usize {
    if kc == 4 {
        swz::<4>(row, chunk)
    } else {
        swz::<8>(row, chunk)
    }
}

/// The tensor map of `a` that [`gemm_mma_tma`] takes: boxes of 32 (`k`, 64 bytes) × 128
/// rows, 64-byte swizzle (one [`MMA`] stage of `a`).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
pub type MapA32 = device_std::tma::TensorMap<bf16, 2, { MMA.bk }, { MMA.bm }, 1, 1, 1, 64>;
/// The tensor map of the stored `b` (`n` × `k`) that [`gemm_mma_tma`] takes: boxes of 32
/// (`k`, 64 bytes) × 256 rows, 64-byte swizzle (one [`MMA`] stage of `b`).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
pub type MapB32 = device_std::tma::TensorMap<bf16, 2, { MMA.bk }, { MMA.bn }, 1, 1, 1, 64>;

/// [`gemm_mma_tma`]'s operands: tensor maps, one copy of each box per k-tile issued by
/// thread 0.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
struct TmaFeed {
    a: MapA32,
    b: MapB32,
}

/// [`TmaFeed`] for one block: the stages' full barriers (one arrival: thread 0's
/// `arrive_expect_tx`, plus the copies' bytes) and the phase each thread waits for next.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
struct TmaLoader {
    a: MapA32,
    b: MapB32,
    full: device_std::Mbarriers<{ MMA.stages }>,
    phases: device_std::Phases<{ MMA.stages }>,
    /// The ring as `bf16`, aligned to the 64-byte swizzle's repeat (8 rows of 64 bytes:
    /// `DST_ALIGN` = 512), so that each tile's swizzle starts at its first byte.
    ring: device_std::DynamicSharedArray<bf16, 512>,
    m0: i32,
    n0: i32,
    t: usize,
    k_tiles: usize,
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
impl Feed for TmaFeed {
    const SHAPE: Option<MmaShape> = Some(MMA);
    type Loader = TmaLoader;

    #[inline(always)]
    fn start(self, tile: &BlockTile) -> TmaLoader {
        // Every thread: declares and initialises the barriers, then synchronises.
        let full = device_std::Mbarriers::new(1);
        if tile.t == 0 {
            self.a.prefetch();
            self.b.prefetch();
        }
        TmaLoader {
            a: self.a,
            b: self.b,
            full,
            phases: device_std::Phases::new(),
            ring: device_std::DynamicSharedArray::get(),
            // The maps' coordinates are i32; m0 < m and n0 < n, which are u32: m0 and n0
            // fit unless m or n is at least 2^31, where the copies would read zeros.
            m0: tile.m0 as i32,
            n0: tile.n0 as i32,
            t: tile.t,
            k_tiles: tile.k_tiles,
        }
    }
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
impl Loader for TmaLoader {
    /// Part 0 on thread 0: announces both boxes' bytes on stage `s`'s full barrier and
    /// issues the two tensor copies (elements past the matrices arrive as zeros). The
    /// stage's last readers were ordered before this by the block barrier of the k-tile
    /// before (`ldmatrix` reads, then `bar.sync`, then the copy's issue: the tensor
    /// copy's writes cannot overtake reads that completed before it was issued).
    #[inline(always)]
    fn load(&mut self, s: usize, kt: usize, part: usize) {
        const A_TILE: usize = MMA.bm * MMA.bk;
        const B_TILE: usize = MMA.bn * MMA.bk;
        if part == 0 && self.t == 0 {
            let bar = self.full.get(s);
            bar.arrive_expect_tx(MapA32::BOX_BYTES + MapB32::BOX_BYTES);
            let kx = (kt * MMA.bk) as i32;
            let at = s * (A_TILE + B_TILE);
            self.a
                .load(&self.ring.array::<A_TILE>(at), [kx, self.m0], &bar);
            self.b
                .load(&self.ring.array::<B_TILE>(at + A_TILE), [kx, self.n0], &bar);
        }
    }

    /// Nothing to close: each k-tile completes on its own barrier.
    #[inline(always)]
    fn commit(&mut self) {}

    /// Every thread waits for the phase of k-tile `kt` on its stage's barrier (which
    /// makes the copies' bytes visible to it); groups do not matter here.
    #[inline(always)]
    fn wait(&mut self, kt: usize, _newer: usize) {
        if kt < self.k_tiles {
            self.full.wait(kt % MMA.stages, &mut self.phases);
        }
    }

    /// Nothing is in flight: every copy was of a k-tile below `k_tiles`, and every such
    /// k-tile was waited for before it was read.
    #[inline(always)]
    fn drain(&mut self) {}
}

/// The body of [`gemm_mma`] and [`gemm_mma_tma`]: `WARPS_M × WARPS_N` = 8 warps, each
/// `16 MI × 8 NI` of the `(16 MI WARPS_M) × (8 NI WARPS_N)` tile, `8 KC` along `k` per
/// stage, `STAGES` stages in the dynamic shared memory: stage `s` holds `a`'s tile at chunk
/// `s (BM + BN) KC`, `b`'s after it ([`BlockTile`]), filled by `feed`.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
#[allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV
fn mma_tiled<
    const WARPS_M: usize,
    const WARPS_N: usize,
    const MI: usize,
    const NI: usize,
    const KC: usize,
    const STAGES: usize,
    F: Feed,
>(
    feed: F,
    mut c: DisjointSlice<bf16>,
    m: u32,
    n: u32,
    k: u32,
) {
    use device_std::mma::{mma_m16n8k16, FragA, FragB};
    use device_std::DynamicSharedArray;
    const {
        assert!(WARPS_M * WARPS_N <= 8 && NI % 2 == 0);
        // The staged output tile (rows of bn / 2 + 4 words) fits in the ring.
        let (bm, bn) = (WARPS_M * MI * 16, WARPS_N * NI * 8);
        assert!(bm * (bn / 2 + 4) * 4 <= STAGES * (bm + bn) * KC * 16);
        // 2 stages would refill the stage being read (see the main loop).
        assert!(STAGES >= 3 && STAGES <= 6 && (KC == 4 || KC == 8));
        if let Some(s) = F::SHAPE {
            assert!(
                s.bm == bm && s.bn == bn && s.bk == 8 * KC && s.stages == STAGES,
                "mma_tiled: the feed is built for another block shape"
            );
        }
    }
    let threads = WARPS_M * WARPS_N * 32;
    let (bm, bn) = (WARPS_M * MI * 16, WARPS_N * NI * 8);
    // 16-byte chunks per stage (rows of KC chunks), and where b's tile starts in it.
    let (stage_chunks, b_chunks) = ((bm + bn) * KC, bm * KC);
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let ring = DynamicSharedArray::<[u32; 4], 128>::get();
    assert!(
        thread::block_size() as usize == threads
            && ring.len() >= STAGES * stage_chunks
            && k % 8 == 0
            && c.len() >= m * n
    );
    let base = ring.ptr(0).cast::<bf16>();
    let t = thread::threadIdx_x() as usize;
    let (tile_m, tile_n) = raster(
        thread::blockIdx_x() as usize,
        m.div_ceil(bm),
        n.div_ceil(bn),
        8,
    );
    let (m0, n0) = (bm * tile_m, bn * tile_n);
    let k_tiles = k.div_ceil(8 * KC);
    let mut feed = feed.start(&BlockTile {
        m,
        n,
        k,
        m0,
        n0,
        t,
        bm,
        bn,
        kc: KC,
        threads,
        k_tiles,
        ring: ring.ptr(0),
    });
    // Steps of 16 along k per tile. Each tile's wait and barrier come after the
    // multiplies of step `steps - 2` (see the main loop), so with 2 steps, part 1 of a
    // tile's copies is issued after that group's commit and joins the next group; the
    // prologue leaves the last tile's part 1 open the same way.
    let steps = KC / 2;
    let part1_late = steps == 2;
    // When the main loop waits for tile kt + 1, the groups committed after the one that
    // completes it: tiles kt + 2 ..= kt + STAGES - 2, less one with `part1_late`.
    let newer = if part1_late { STAGES - 3 } else { STAGES - 2 };
    for s in 0..STAGES - 1 {
        if s < k_tiles {
            feed.load(s, s, 0);
            if !(part1_late && s == STAGES - 2) {
                feed.load(s, s, 1);
            }
        }
        feed.commit();
    }
    if part1_late && STAGES - 2 < k_tiles {
        feed.load(STAGES - 2, STAGES - 2, 1);
    }
    let lane = t % 32;
    let warp = t / 32;
    let (wm, wn) = (warp % WARPS_M, warp / WARPS_M);
    // This lane's ldmatrix rows: A row 16 mi + lane % 16 of the warp's rows, chunk
    // 2 kk + lane / 16; B row (n) 16 p + 8 (lane / 16) + lane % 8, chunk 2 kk + (lane / 8) % 2.
    let a_row = wm * MI * 16 + lane % 16;
    let b_row = wn * NI * 8 + 8 * (lane / 16) + lane % 8;
    // The warp's fragments of step kk (16 along k) of the tile in `stage`.
    let frags = |stage: device_std::SharedPtr<bf16>,
                 kk: usize,
                 fa: &mut [FragA<bf16>; MI],
                 fb: &mut [FragB<bf16>; NI]| {
        unrolled::<MI>(|mi| {
            let at = stage.add(swz::<KC>(a_row + 16 * mi, 2 * kk + lane / 16));
            // SAFETY: a 16-byte-aligned row of this stage's a tile (inside the ring,
            // checked above), which no thread writes before the next barrier.
            fa[mi] = unsafe { FragA::load_shared_ptr(at) };
        });
        // One x4 load per pair of 8-column fragments.
        unrolled::<NI>(|ni| {
            if ni % 2 == 0 {
                let at =
                    stage.add(b_chunks * 8 + swz::<KC>(b_row + 8 * ni, 2 * kk + (lane / 8) % 2));
                // SAFETY: as above, in this stage's b tile.
                [fb[ni], fb[ni + 1]] = unsafe { FragB::load_shared_pair_ptr(at) };
            }
        });
    };
    let stage_of = |kt: usize| base.add((kt % STAGES) * stage_chunks * 8);
    let mut acc = [[device_std::mma::Accum::zero(); NI]; MI];
    {
        let (mut fa0, mut fa1) = ([FragA::<bf16>::zero(); MI], [FragA::<bf16>::zero(); MI]);
        let (mut fb0, mut fb1) = ([FragB::<bf16>::zero(); NI], [FragB::<bf16>::zero(); NI]);
        feed.wait(0, STAGES - 2);
        thread::sync_threads();
        frags(stage_of(0), 0, &mut fa0, &mut fb0);
        // Fragments double-buffered across steps and tiles. Step kk of tile kt first loads
        // the next fragments (step kk + 1, or in the last step tile kt + 1's step 0), then
        // issues its part of the copies of tile kt + STAGES - 1, then multiplies with the
        // current ones. After the multiplies of step `steps - 2` the group is committed,
        // tile kt + 1 waited for and the block barrier taken: tile kt + 1 is then visible,
        // and no warp reads tile kt's stage any more (its last fragments were loaded at
        // the start of that step), so tile kt + 1's step 0 refills it with tile kt +
        // STAGES. With 2 stages that refill would hit the stage being read: STAGES >= 3.
        // The barrier there rather than in the last step (CUTLASS's multistage order) lets
        // the next tile's first fragments load during the whole last step; ptxas keeps
        // them after the barrier, and before, ncu had 9% of the stall samples on the first
        // `mma` waiting for them (measured +7% at 8192³).
        let mut step = |kt: usize,
                        kk: usize,
                        ca: &[FragA<bf16>; MI],
                        cb: &[FragB<bf16>; NI],
                        na: &mut [FragA<bf16>; MI],
                        nb: &mut [FragB<bf16>; NI]| {
            if kk + 1 < steps {
                frags(stage_of(kt), kk + 1, na, nb);
            } else if kt + 1 < k_tiles {
                frags(stage_of(kt + 1), 0, na, nb);
            }
            // Steps 0 and 1 each issue half of the copies (a third fewer copies in flight
            // per step than all at once; measured +1-2%).
            let next = kt + STAGES - 1;
            if kk < 2 && next < k_tiles {
                feed.load(next % STAGES, next, kk);
            }
            unrolled::<MI>(|mi| {
                unrolled::<NI>(|ni| mma_m16n8k16(&ca[mi], &cb[ni], &mut acc[mi][ni]));
            });
            if kk + 2 == steps {
                feed.commit();
                feed.wait(kt + 1, newer);
                thread::sync_threads();
            }
        };
        for kt in 0..k_tiles {
            // KC / 2 steps (2 or 4), in pairs so that the buffers alternate by name.
            for kp in 0..KC / 4 {
                step(kt, 2 * kp, &fa0, &fb0, &mut fa1, &mut fb1);
                step(kt, 2 * kp + 1, &fa1, &fb1, &mut fa0, &mut fb0);
            }
        }
    }
    feed.drain();
    // The tile goes through shared memory (inside the ring; rows padded by 4 words so
    // that each warp's pair stores hit 32 distinct banks), then out: whole tiles of a
    // 16-byte-aligned `c` with `n % 8 == 0` in 16-byte chunks, 32 consecutive threads
    // writing a 512-byte row (measured +1.5-4% over 4-byte pair stores from the
    // fragments); edge tiles element by element, masked to m x n.
    let staged = DynamicSharedArray::<u32, 128>::get();
    let ld = bn / 2 + 4; // words per staged row
    thread::sync_threads(); // every warp is done reading the ring
    let (lr, lc) = (wm * MI * 16, wn * NI * 8);
    unrolled::<MI>(|mi| {
        unrolled::<NI>(|ni| {
            let at = (lr + 16 * mi) * ld + (lc + 8 * ni) / 2;
            acc[mi][ni].store_bf16_pairs(|r, col, pair| staged.write(at + r * ld + col / 2, pair));
        });
    });
    thread::sync_threads();
    let out = c.as_mut_ptr();
    if m0 + bm <= m && n0 + bn <= n && n % 8 == 0 && out as usize % 16 == 0 {
        let chunks_per_row = bn / 8;
        let mut q = t;
        while q < bm * chunks_per_row {
            let (row, ch) = (q / chunks_per_row, q % chunks_per_row);
            let w = row * ld + 4 * ch;
            let v = [
                staged.read(w),
                staged.read(w + 1),
                staged.read(w + 2),
                staged.read(w + 3),
            ];
            // SAFETY: (block, q) maps one-to-one onto elements n0 + 8 ch .. + 8 of row
            // m0 + row, inside m x n (whole tile); 16-byte aligned (c is, n % 8 == 0).
            unsafe { *out.add((m0 + row) * n + n0 + 8 * ch).cast::<[u32; 4]>() = v };
            q += threads;
        }
    } else {
        let out = out.cast::<u16>();
        let mut e = t;
        while e < bm * bn {
            let (r, col) = (e / bn, e % bn);
            let (i, j) = (m0 + r, n0 + col);
            if i < m && j < n {
                // SAFETY: (block, e) maps one-to-one onto (i, j) of the block's tile,
                // masked to m x n.
                unsafe {
                    *out.add(i * n + j) = (staged.read(r * ld + col / 2) >> (16 * (col % 2))) as u16
                };
            }
            e += threads;
        }
    }
}

/// `c = a · b` for one 16 × 8 tile in TensorFloat-32 (`mma.sync.m16n8k8.tf32`, sm_80): `a`
/// is 16 × 8 and `b` 8 × 8 (`k × n`), both row-major `f32` rounded to TensorFloat-32 on
/// the way in ([`to_tf32`](device_std::mma::to_tf32)), `c` 16 × 8 row-major `f32`. Launch
/// one warp (32 threads, one block; a trap otherwise).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[kernel]
pub fn mma_tf32_tile(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
    use device_std::mma::{mma_m16n8k8_tf32, Accum, FragATf32, FragBTf32};
    assert!(thread::block_size() == 32 && a.len() >= 128 && b.len() >= 64 && c.len() >= 128);
    let fa = FragATf32::load(|r, k| a[r * 8 + k]);
    let fb = FragBTf32::load(|k, n| b[k * 8 + n]);
    let mut acc = Accum::zero();
    mma_m16n8k8_tf32(&fa, &fb, &mut acc);
    acc.store(|r, col, v| {
        // SAFETY: (lane, element) maps one-to-one onto the 16 x 8 tile; r * 8 + col < 128.
        unsafe { *c.get_unchecked_mut(r * 8 + col) = v };
    });
}

/// Round trip of two accumulators through `stmatrix` (sm_90): the warp (32 threads, one
/// block; a trap otherwise) loads the 16 × 16 row-major `f32` block `x` as two 16 × 8
/// accumulators, stores them rounded to `bf16` with `stmatrix` at column 8 of a 16 × 24
/// shared tile, and copies that block out to `out` (16 × 16 row-major).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
#[kernel]
pub fn stmatrix_tile(x: &[f32], mut out: DisjointSlice<bf16>) {
    use device_std::mma::Accum;
    use device_std::SharedArray;
    assert!(thread::block_size() == 32 && x.len() >= 256 && out.len() >= 256);
    let tile = SharedArray::<bf16, { 16 * 24 }>::new();
    let pair = [
        Accum::load(|r, col| x[r * 16 + col]),
        Accum::load(|r, col| x[r * 16 + 8 + col]),
    ];
    Accum::store_pair_shared_bf16(&pair, &tile, 0, 8, 24);
    thread::sync_threads();
    let lane = thread::lane_id() as usize;
    for e in (lane..256).step_by(32) {
        // SAFETY: lane l writes elements l, l + 32, ...: each element once.
        unsafe { *out.get_unchecked_mut(e) = tile.read((e / 16) * 24 + 8 + e % 16) };
    }
}

/// FP8 conversions on the GPU, for comparison with the host's bits (sm_89): each thread
/// converts `x[2 i]` and `x[2 i + 1]` with [`Fp8::pack2`](device_std::fp8::Fp8::pack2) to
/// both types, writes the pair's bits to `e4m3[i]` and `e5m2[i]` (low byte from
/// `x[2 i]`), and converts them back with `unpack2`, writing the four `f32`s to
/// `back[4 i ..]` (e4m3's two, then e5m2's). Any 1D launch covering `x.len() / 2`
/// threads; extra threads do nothing.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_89"))]
#[kernel]
pub fn fp8_convert(
    x: &[f32],
    mut e4m3: DisjointSlice<u16>,
    mut e5m2: DisjointSlice<u16>,
    mut back: DisjointSlice<f32>,
) {
    use device_std::fp8::Fp8;
    use device_std::F8E5M2;
    let i = thread::index_1d().get();
    if 2 * i + 1 >= x.len() || i >= e4m3.len() || i >= e5m2.len() || 4 * i + 3 >= back.len() {
        return;
    }
    let (lo, hi) = (x[2 * i], x[2 * i + 1]);
    let (p4, p5) = (F8E4M3::pack2(lo, hi), F8E5M2::pack2(lo, hi));
    let ([a, b], [c, d]) = (F8E4M3::unpack2(p4), F8E5M2::unpack2(p5));
    // SAFETY: thread i writes element i of e4m3 and e5m2 and elements 4 i .. 4 i + 4 of
    // back, each once, inside the lengths checked above.
    unsafe {
        *e4m3.get_unchecked_mut(i) = p4;
        *e5m2.get_unchecked_mut(i) = p5;
        for (j, v) in [a, b, c, d].into_iter().enumerate() {
            *back.get_unchecked_mut(4 * i + j) = v;
        }
    }
}
