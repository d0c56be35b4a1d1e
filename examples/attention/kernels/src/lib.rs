//! Fused attention forward, `O = softmax(scale · Q·Kᵀ) · V` per (batch, head), with
//! FlashAttention-2's algorithm on `mma.sync` tensor cores (sm_80): the scores never
//! reach memory. `q`, `k`, `v` and `o` are `[batch·heads][seq][D]` row-major `bf16`
//! (`D` = 64 or 128), `f32` accumulation.
//!
//! Each block ([`THREADS`] = 128 threads, four warps) takes [`BQ`] = 64 query rows of one (batch,
//! head), warp `w` rows `16 w ..`; it walks the keys in tiles of [`BKV`] = 64, staged in
//! shared memory (rows padded by 8 elements, so `ldmatrix` meets no bank conflict):
//! - `S = Q·Kᵀ` for the warp's 16 × 64 tile (`Q`'s fragments loaded once, `K`'s by
//!   `ldmatrix` from the K-major tile);
//! - the online softmax in registers: the running row maximum `m` (a quad's four lanes
//!   share a row: two shuffles), `P = 2^(S·scale·log2 e − m)`, the running row sum and
//!   the output rescaled by `2^(m_old − m_new)`;
//! - `O += P·V`, `P` fed from the accumulators' registers as `A` fragments
//!   ([`FragA::from_accum_pair`]), `V`'s by `ldmatrix.trans` from the row-major tile.
//!
//! At the end each row is divided by its sum and stored as `bf16`. Keys past `seq` are
//! masked, and with `causal` keys after the query too (their tiles skipped). The tiles
//! are copied by `cp.async` (16 bytes a thread, when the inputs start 16-byte aligned;
//! element by element otherwise), `V_j` while `S_j` is computed and `K_{j+1}` while
//! `P·V_j` is.

#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

#[cfg(not(target_arch = "nvptx64"))]
pub mod reference;

/// The kernels on `wgmma` (sm_90a), head dimensions 64 and 128:
/// `wgmma::attention_wgmma_d64`, `wgmma::attention_wgmma_d128`.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma;

/// A plain `f32` attention on the GPU, to check the fast kernels on shapes too large for
/// the CPU reference: [`check::attention_reference_f32`].
pub mod check;

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
use device_std::mma::{mma_m16n8k16, Accum, FragA, FragB};
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
use device_std::vector::{split_vectors, Bf16x8};
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
use device_std::{bf16, cp_async, kernel, thread, warp, DisjointSlice, SharedArray};

/// Warps per block. Eight (128 query rows a block, half the `K`/`V` traffic per row, one
/// block per SM at 212 registers) measured 3% slower non-causal and 9% causal on an H100.
pub const WARPS: usize = 4;
/// Query rows per block (16 per warp).
pub const BQ: usize = 16 * WARPS;
/// Keys per tile.
pub const BKV: usize = 64;
/// Threads per block the kernels require.
pub const THREADS: u32 = 32 * WARPS as u32;

/// `log2(e)`: the softmax runs on `exp2`.
const LOG2_E: f32 = core::f32::consts::LOG2_E;

/// The per-row state of the online softmax for the lane's two rows (`lane / 4` and
/// `lane / 4 + 8` of the warp's 16): running maximum (in `exp2` units) and this lane's
/// part of the running sum.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
struct RowState {
    max: [f32; 2],
    sum: [f32; 2],
}

/// The maximum over the quad of lanes that share a row (lanes `4 g .. 4 g + 4`).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
fn quad_max(v: f32) -> f32 {
    let v = v.max(warp::shfl_xor_sync(u32::MAX, v, 1));
    v.max(warp::shfl_xor_sync(u32::MAX, v, 2))
}

/// The sum over the quad of lanes that share a row.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
fn quad_sum(v: f32) -> f32 {
    let v = v + warp::shfl_xor_sync(u32::MAX, v, 1);
    v + warp::shfl_xor_sync(u32::MAX, v, 2)
}

/// Calls `f(0)`, `f(1)`, …, `f(N − 1)` written out (`N` is 4, 8 or 16; a compile error
/// otherwise), so that the arrays of fragments `f` indexes by its argument stay in
/// registers: a loop LLVM kept would index them at run time, in local memory (what
/// happened at `D = 128`, where the loops are too long for its full unrolling).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
pub(crate) fn unrolled<const N: usize>(mut f: impl FnMut(usize)) {
    const { assert!(N == 4 || N == 8 || N == 16, "unrolled: N is 4, 8 or 16") };
    macro_rules! calls {
        ($($i:literal)*) => {{ $(f($i);)* }};
    }
    match N {
        4 => calls!(0 1 2 3),
        8 => calls!(0 1 2 3 4 5 6 7),
        _ => calls!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15),
    }
}

/// Starts copying rows `row0 .. row0 + BKV` of one `[seq][D]` matrix into `tile` (`BKV`
/// rows of `LD` elements), zeros past `seq`: `src` is the whole `[.][seq][D]` input, `base`
/// the (batch, head)'s first element, `src8` the same input as 16-byte vectors when it
/// starts 16-byte aligned. Then each thread issues one `cp.async` of 16 bytes per 8
/// elements (`base` and every row start are multiples of 8, as `D` is; rows of `LD`
/// elements keep the 16-byte alignment), which land after its next
/// [`cp_async::wait_group`]; otherwise the elements are copied one by one, at once. Every
/// thread of the block takes part; the caller commits the group.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
#[allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV
fn load_tile<const D: usize, const LD: usize, const N: usize>(
    tile: &SharedArray<bf16, N>,
    (src, src8): (&[bf16], Option<&[Bf16x8]>),
    base: usize,
    row0: usize,
    seq: usize,
) {
    const { assert!(LD & 7 == 0 && N >= BKV * LD) };
    let t = thread::thread_in_block() as usize;
    if let Some(src8) = src8 {
        // Thread t copies vector t % VR of rows t / VR + RP·i of the tile (VR vectors a
        // row, RP rows a pass of the block, BKV / RP ≤ 8 passes), written out with constant
        // offsets: no per-copy index arithmetic.
        let (vr, rp) = (D / 8, THREADS as usize / (D / 8));
        const {
            assert!(
                (THREADS as usize) % (D / 8) == 0
                    && BKV % (THREADS as usize / (D / 8)) == 0
                    && BKV / (THREADS as usize / (D / 8)) <= 8,
                "load_tile: the block's threads must cover whole rows in at most 8 passes"
            )
        };
        let (r0, c8) = (t / vr, t % vr);
        let dst = tile.ptr(0).cast::<Bf16x8>().add(r0 * (LD / 8) + c8);
        let src = src8
            .as_ptr()
            .wrapping_add((base + (row0 + r0) * D) / 8 + c8);
        // Rows of this thread still inside seq (row0 + r0 + RP·i < seq).
        let rows_left = seq.saturating_sub(row0 + r0).min(BKV) as u32;
        unrolled::<8>(|i| {
            if i * rp < BKV {
                // SAFETY: row r0 + RP·i < BKV and 8 c8 < D ≤ LD lie in the tile, a
                // 16-byte aligned vector of it (LD and the array's alignment are multiples
                // of 8 elements); every thread waits and the block syncs before reading it
                // (the caller's loop). When valid, the source row is below seq, inside
                // src8 by the launch checks; otherwise nothing is read (zero fill).
                unsafe {
                    cp_async::copy16_unchecked(
                        dst.add(i * rp * (LD / 8)),
                        src.wrapping_add(i * rp * vr),
                        ((i * rp) as u32) < rows_left,
                    )
                };
            }
        });
        return;
    }
    let mut e = t;
    while e < BKV * D {
        let (r, c) = (e / D, e % D);
        let v = if row0 + r < seq {
            src[base + (row0 + r) * D + c]
        } else {
            bf16::ZERO
        };
        tile.write(r * LD + c, v);
        e += THREADS as usize;
    }
}

/// The block's work, for head dimension `D` (`DK = D / 16` steps of `k` in `Q·Kᵀ`,
/// `DN = D / 8` accumulators of `O`), tiles of `LD = D + 8` elements a row.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
#[allow(clippy::too_many_arguments)] // the kernels' parameters and their two tiles
fn attention_block<
    const D: usize,
    const DK: usize,
    const DN: usize,
    const LD: usize,
    const N: usize,
>(
    q: &[bf16],
    k: &[bf16],
    v: &[bf16],
    mut o: DisjointSlice<bf16>,
    seq: usize,
    scale: f32,
    causal: bool,
    k_tile: &SharedArray<bf16, N>,
    v_tile: &SharedArray<bf16, N>,
) {
    const { assert!(D == 16 * DK && D == 8 * DN && LD == D + 8 && N == BKV * LD) };
    let heads = thread::gridDim_y() as usize;
    assert!(
        thread::block_size() == THREADS
            && q.len() >= heads * seq * D
            && k.len() >= heads * seq * D
            && v.len() >= heads * seq * D
            && o.len() >= heads * seq * D
            && (o.as_mut_ptr() as usize) & 3 == 0
            && thread::gridDim_x() as usize * BQ >= seq
    );
    let base = thread::blockIdx_y() as usize * seq * D;
    let q = &q[base..base + seq * D];
    // The inputs as 16-byte vectors when they start aligned (`cuMemAlloc` buffers).
    let k8 = split_vectors::<Bf16x8>(k).map(|(v, _)| v);
    let v8 = split_vectors::<Bf16x8>(v).map(|(v, _)| v);
    let q0 = thread::blockIdx_x() as usize * BQ;
    let t = thread::thread_in_block() as usize;
    let (w, lane) = (t / 32, thread::lane_id() as usize);
    let row0 = q0 + 16 * w;
    // The lane's two query rows.
    let rows = [row0 + lane / 4, row0 + lane / 4 + 8];
    let mut qf = [FragA::<bf16>::zero(); DK];
    unrolled::<DK>(|kk| {
        qf[kk] = FragA::load(|r, c| {
            if row0 + r < seq {
                q[(row0 + r) * D + 16 * kk + c]
            } else {
                bf16::ZERO
            }
        })
    });
    let scale2 = scale * LOG2_E;
    let mut acc = [Accum::zero(); DN];
    let mut st = RowState {
        max: [f32::NEG_INFINITY; 2],
        sum: [0.0; 2],
    };
    let kv_end = if causal { seq.min(q0 + BQ) } else { seq };
    // The pipeline (FlashAttention-2's): V_j lands while S = Q·K_jᵀ and its softmax run,
    // K_{j+1} while O += P·V_j does. One group per tile, so `wait_group::<0>` waits for
    // exactly the tile needed next.
    if kv_end > 0 {
        load_tile::<D, LD, N>(k_tile, (k, k8), base, 0, seq);
    }
    cp_async::commit_group();
    let mut kv0 = 0;
    while kv0 < kv_end {
        // K_j has landed everywhere, and every warp is done with V_{j-1}.
        cp_async::wait_group::<0>();
        thread::sync_threads();
        load_tile::<D, LD, N>(v_tile, (v, v8), base, kv0, seq);
        cp_async::commit_group();
        // S = Q·Kᵀ for the warp's 16 rows and the tile's 64 keys: 8 accumulators.
        // Two key groups of 8 per `ldmatrix.x4`: lane l names row 16 jj + 8 (l / 16) + l % 8
        // of the tile (a key), at d = 16 kk + 8 ((l / 8) % 2).
        let mut s = [Accum::zero(); BKV / 8];
        let pair_row = 8 * (lane / 16) + lane % 8;
        let pair_col = 8 * ((lane / 8) % 2);
        unrolled::<DK>(|kk| {
            unrolled::<{ BKV / 16 }>(|jj| {
                let at = (16 * jj + pair_row) * LD + 16 * kk + pair_col;
                let [b0, b1] = FragB::load_shared_pair_rows(k_tile, at);
                mma_m16n8k16(&qf[kk], &b0, &mut s[2 * jj]);
                mma_m16n8k16(&qf[kk], &b1, &mut s[2 * jj + 1]);
            })
        });
        // Scale to exp2 units and mask keys past seq (and after the query): only a tile
        // that crosses seq, or with causal the block's diagonal tile, has any to mask.
        if kv0 + BKV > seq || (causal && kv0 + BKV > q0 + 1) {
            let lane_col = 2 * (lane % 4);
            unrolled::<{ BKV / 8 }>(|j| {
                s[j].map(|i, x| {
                    let key = kv0 + 8 * j + lane_col + i % 2;
                    if key >= seq || (causal && key > rows[i / 2]) {
                        f32::NEG_INFINITY
                    } else {
                        x * scale2
                    }
                });
            });
        } else {
            unrolled::<{ BKV / 8 }>(|j| s[j].map(|_, x| x * scale2));
        }
        // The new row maxima, the rescale of what came before, P and its row sums.
        let mut new_max = st.max;
        unrolled::<{ BKV / 8 }>(|j| {
            new_max[0] = new_max[0].max(s[j].get(0)).max(s[j].get(1));
            new_max[1] = new_max[1].max(s[j].get(2)).max(s[j].get(3));
        });
        let new_max = new_max.map(quad_max);
        // A row every key of which is masked so far keeps 0 as its reference (its P is 0).
        let base_max = new_max.map(|m| if m == f32::NEG_INFINITY { 0.0 } else { m });
        let alpha = [0, 1].map(|h| device_std::math::fast::exp2f(st.max[h] - base_max[h]));
        st.sum = [st.sum[0] * alpha[0], st.sum[1] * alpha[1]];
        st.max = new_max;
        unrolled::<{ BKV / 8 }>(|j| {
            s[j].map(|i, x| device_std::math::fast::exp2f(x - base_max[i / 2]));
            st.sum[0] += s[j].get(0) + s[j].get(1);
            st.sum[1] += s[j].get(2) + s[j].get(3);
        });
        unrolled::<DN>(|n| acc[n].map(|i, x| x * alpha[i / 2]));
        // V_j has landed everywhere, and every warp is done with K_j: K_{j+1} may start.
        cp_async::wait_group::<0>();
        thread::sync_threads();
        if kv0 + BKV < kv_end {
            load_tile::<D, LD, N>(k_tile, (k, k8), base, kv0 + BKV, seq);
        }
        cp_async::commit_group();
        // O += P·V: 16 keys per step, P from the accumulators' registers.
        unrolled::<{ BKV / 16 }>(|kk| {
            let p = FragA::from_accum_pair(&[s[2 * kk], s[2 * kk + 1]]);
            // DK = D / 16 pairs of the DN = D / 8 output fragments.
            unrolled::<DK>(|nn| {
                let [b0, b1] = FragB::load_shared_trans_pair(v_tile, 16 * kk, 16 * nn, LD);
                mma_m16n8k16(&p, &b0, &mut acc[2 * nn]);
                mma_m16n8k16(&p, &b1, &mut acc[2 * nn + 1]);
            })
        });
        kv0 += BKV;
    }
    let sum = st.sum.map(quad_sum);
    let inv = sum.map(|s| if s > 0.0 { 1.0 / s } else { 0.0 });
    let out = o.as_mut_ptr();
    unrolled::<DN>(|n| {
        let a = &mut acc[n];
        a.map(|i, x| x * inv[i / 2]);
        a.store_bf16_pairs(|r, c, pair| {
            let row = row0 + r;
            if row < seq {
                // SAFETY: (block, warp, lane, pair) maps one-to-one onto (row, col..col+2)
                // of this (batch, head)'s rows q0..q0 + BQ, inside o (checked above);
                // o is 4-byte aligned (checked above) and the index even (D and col are).
                unsafe { *out.add(base + row * D + 8 * n + c).cast::<u32>() = pair };
            }
        });
    });
}

/// Attention forward: `o = softmax(scale · q·kᵀ) · v` for each of the `gridDim.y`
/// (batch, head) pairs, `[.][seq][D]` row-major `bf16`, keys after the query masked when
/// `causal` is not 0. Launch `(ceil(seq / BQ), batch·heads, 1)` blocks of [`THREADS`], `o`
/// 4-byte aligned (its elements are stored in pairs; a trap otherwise). Two entries:
/// `attention_d64` (`D` = 64) and `attention_d128` (`D` = 128), each with its own two
/// tiles of `BKV × (D + 8)` elements. sm_80.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[kernel(instances(attention_d64 = <64, 4, 8, 72, 4608>, attention_d128 = <128, 8, 16, 136, 8704>))]
pub fn attention<
    const D: usize,
    const DK: usize,
    const DN: usize,
    const LD: usize,
    const N: usize,
>(
    q: &[bf16],
    k: &[bf16],
    v: &[bf16],
    o: DisjointSlice<bf16>,
    seq: u32,
    scale: f32,
    causal: u32,
) {
    let k_tile = SharedArray::<bf16, N>::new();
    let v_tile = SharedArray::<bf16, N>::new();
    attention_block::<D, DK, DN, LD, N>(
        q,
        k,
        v,
        o,
        seq as usize,
        scale,
        causal != 0,
        &k_tile,
        &v_tile,
    );
}
