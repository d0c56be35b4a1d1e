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
