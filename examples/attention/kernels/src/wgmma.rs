//! Fused attention forward on Hopper's warpgroup tensor cores (`wgmma`, sm_90a), head
//! dimension 128: FlashAttention-3's structure without its two scheduling refinements
//! (ping-pong between the consumer warpgroups, softmax overlapped with the next `Q·Kᵀ`
//! inside a warpgroup).
//!
//! Each block (384 threads: three warpgroups) takes [`BQ`] = 128 query rows of one
//! (batch, head):
//! - warpgroup 0's first thread is the producer: one tensor copy of the block's `Q`, then
//!   `K` and `V` tiles of [`BKV`] = 128 keys into two rings of two stages (full/empty
//!   mbarriers); the rest of warpgroup 0 gives its registers to the consumers
//!   (`setmaxnreg`);
//! - warpgroups 1 and 2 each own 64 query rows: `S = Q·Kᵀ` with both operands in shared
//!   memory (`wgmma.m64n128k16`, eight steps over `d`), the online softmax in registers
//!   (the accumulator's rows live in quads of lanes, as with `mma.sync`), then
//!   `O += P·V` with `P` from registers ([`Accum::a_fragment`]) and `V` read MN-major
//!   ([`MnMajorTile`], the transpose-B flag), eight steps over the keys.
//!
//! `q`, `k`, `v` are tensor maps of `[batch·heads][seq][128]` row-major `bf16` (rank 3,
//! so rows past `seq` read as zero), `o` the same layout in memory.

use device_std::mma::FragA;
use device_std::tma::TensorMap;
use device_std::wgmma::{commit_group, Accum128, KMajorTile, MnMajorTile};
use device_std::{bf16, kernel, thread, warp, DisjointSlice, Mbarriers, Phases, SharedArray};

/// Query rows per block (64 per consumer warpgroup).
pub const BQ: usize = 128;
/// Keys per tile.
pub const BKV: usize = 128;
/// Head dimension.
pub const D: usize = 128;
/// Threads per block: one producer and two consumer warpgroups.
pub const THREADS: u32 = 384;
/// Stages of each of the `K` and `V` rings.
const STAGES: usize = 2;

/// The tensor map of `q` [`attention_wgmma_d128`] takes: `[bh][seq][128]`, boxes of 64
/// (`d`, 128 bytes) × 64 rows × 1, 128-byte swizzle.
pub type MapQ = TensorMap<bf16, 3, 64, 64, 1, 1, 1, 128>;
/// The tensor map of `k` and of `v`: boxes of 64 (`d`) × 128 rows (keys) × 1, 128-byte
/// swizzle.
pub type MapKV = TensorMap<bf16, 3, 64, 128, 1, 1, 1, 128>;

/// Elements of one `Q` box (64 rows × 64 of `d`), four per block.
const Q_BOX: usize = 64 * 64;
/// Elements of one `K`/`V` box (128 keys × 64 of `d`), two per tile.
const KV_BOX: usize = BKV * 64;
/// Elements of one `K`/`V` tile (128 keys × 128 of `d`).
const KV_TILE: usize = BKV * D;

/// The maximum over the quad of lanes that share a row.
#[inline(always)]
fn quad_max(v: f32) -> f32 {
    let v = v.max(warp::shfl_xor_sync(u32::MAX, v, 1));
    v.max(warp::shfl_xor_sync(u32::MAX, v, 2))
}

/// The sum over the quad of lanes that share a row.
#[inline(always)]
fn quad_sum(v: f32) -> f32 {
    let v = v + warp::shfl_xor_sync(u32::MAX, v, 1);
    v + warp::shfl_xor_sync(u32::MAX, v, 2)
}

/// Attention forward with head dimension 128 on `wgmma`: `o = softmax(scale · q·kᵀ) · v`
/// for each of the `gridDim.y` (batch, head) pairs, keys after the query masked when
/// `causal` is not 0. `q`, `k`, `v` describe `[gridDim.y][seq][128]` row-major `bf16`
/// ([`MapQ`], [`MapKV`]); `o` is that layout, 4-byte aligned. Launch
/// `(ceil(seq / 128), batch·heads, 1)` blocks of [`THREADS`] (a trap otherwise).
/// 160 KiB of static shared memory. sm_90a.
#[kernel(max_threads = 384, min_blocks = 1)]
#[allow(clippy::too_many_arguments)] // the launch's parameters
pub fn attention_wgmma_d128(
    q: MapQ,
    k: MapKV,
    v: MapKV,
    mut o: DisjointSlice<bf16>,
    seq: u32,
    scale: f32,
    causal: u32,
) {
    let q_tile = SharedArray::<bf16, { 4 * Q_BOX }, 1024>::new();
    let k_ring = SharedArray::<bf16, { STAGES * KV_TILE }, 1024>::new();
    let v_ring = SharedArray::<bf16, { STAGES * KV_TILE }, 1024>::new();
    let seq = seq as usize;
    let heads = thread::gridDim_y() as usize;
    assert!(
        thread::block_size() == THREADS
            && o.len() >= heads * seq * D
            && (o.as_mut_ptr() as usize) & 3 == 0
            && thread::gridDim_x() as usize * BQ >= seq
    );
    let bh = thread::blockIdx_y() as usize;
    let q0 = thread::blockIdx_x() as usize * BQ;
    let causal = causal != 0;
    let kv_end = if causal { seq.min(q0 + BQ) } else { seq };
    let tiles = kv_end.div_ceil(BKV);
    // Q: one arrival and its bytes; full: the producer's arrival and the copies' bytes;
    // empty: lane 0 of each of the 8 consumer warps, once its warpgroup has read it.
    let q_bar = Mbarriers::<1>::new(1);
    let full_k = Mbarriers::<STAGES>::new(1);
    let full_v = Mbarriers::<STAGES>::new(1);
    let empty_k = Mbarriers::<STAGES>::new(8);
    let empty_v = Mbarriers::<STAGES>::new(8);
    let t = thread::thread_in_block() as usize;
    // Read from lane 0 so that the compiler sees it is warp-uniform (ptxas C7519).
    let warpgroup = warp::shfl_sync(u32::MAX, (t / 128) as u32, 0) as usize;
    if warpgroup == 0 {
        device_std::wgmma::setmaxnreg_dec::<40>();
        if t == 0 {
            produce(
                (&q, &k, &v),
                (&q_tile, &k_ring, &v_ring),
                (&q_bar, &full_k, &full_v, &empty_k, &empty_v),
                (bh, q0, tiles),
            );
        }
        return;
    }
    device_std::wgmma::setmaxnreg_inc::<232>();
    let wg = warpgroup - 1;
    let mut q_phase = Phases::<1>::new();
    q_bar.wait(0, &mut q_phase);
    // `& 3` (wg is 0 or 1): the index is provably in range, so no bounds-check call
    // sits in the wgmma pipeline (ptxas C7510 serialises it otherwise).
    let qt = [0, 1]
        .map(|h| KMajorTile::<bf16, 64, 64, 128>::of(&q_tile.part::<Q_BOX>((2 * wg + h) & 3)));
    let scale2 = scale * core::f32::consts::LOG2_E;
    let (w, lane) = ((t % 128) / 32, t % 32);
    // The thread's two query rows (of the whole sequence).
    let row0 = q0 + 64 * wg + 16 * w + lane / 4;
    let rows = [row0, row0 + 8];
    let mut out = Accum128::zero();
    let (mut max, mut sum) = ([f32::NEG_INFINITY; 2], [0.0f32; 2]);
    let (mut k_phases, mut v_phases) = (Phases::<STAGES>::new(), Phases::<STAGES>::new());
    for j in 0..tiles {
        let s = j % STAGES;
        let kv0 = j * BKV;
        // S = Q·K_jᵀ: 64 rows × 128 keys, eight steps of 16 over d (two boxes of 64).
        full_k.wait(s, &mut k_phases);
        let kt =
            [0, 1].map(|h| KMajorTile::<bf16, BKV, 64, 128>::of(&k_ring.part::<KV_BOX>(2 * s + h)));
        let mut sc = Accum128::zero();
        sc.fence();
        for kk in 0..D / 16 {
            let (h, c) = (kk / 4, 16 * (kk % 4));
            sc.mma_async(qt[h].descriptor(0, c), kt[h].descriptor(0, c), kk > 0);
        }
        commit_group();
        sc.wait::<0>();
        // Scale to exp2 units; mask keys past seq (and after the query) on the tiles
        // that have any: the last, and with causal those that reach the first row.
        let lane_col = 2 * (lane % 4);
        if kv0 + BKV > seq || (causal && kv0 + BKV > q0 + 64 * wg + 1) {
            sc.map(|i, x| {
                let key = kv0 + 8 * (i / 4) + lane_col + i % 2;
                if key >= seq || (causal && key > rows[(i / 2) % 2]) {
                    f32::NEG_INFINITY
                } else {
                    x * scale2
                }
            });
        } else {
            sc.map(|_, x| x * scale2);
        }
        // The new row maxima, the rescale of what came before, P and its row sums.
        let mut new_max = max;
        sc.map(|i, x| {
            new_max[(i / 2) % 2] = new_max[(i / 2) % 2].max(x);
            x
        });
        let new_max = new_max.map(quad_max);
        // A row every key of which is masked so far keeps 0 as its reference (P = 0).
        let base = new_max.map(|m| if m == f32::NEG_INFINITY { 0.0 } else { m });
        let alpha = [0, 1].map(|h| device_std::math::fast::exp2f(max[h] - base[h]));
        sum = [sum[0] * alpha[0], sum[1] * alpha[1]];
        max = new_max;
        sc.map(|i, x| {
            let p = device_std::math::fast::exp2f(x - base[(i / 2) % 2]);
            sum[(i / 2) % 2] += p;
            p
        });
        out.map(|i, x| x * alpha[(i / 2) % 2]);
        // P as eight A fragments (written before the fence), then O += P·V_j.
        let p: [FragA<bf16>; BKV / 16] = [
            sc.a_fragment(0),
            sc.a_fragment(1),
            sc.a_fragment(2),
            sc.a_fragment(3),
            sc.a_fragment(4),
            sc.a_fragment(5),
            sc.a_fragment(6),
            sc.a_fragment(7),
        ];
        full_v.wait(s, &mut v_phases);
        let vt = MnMajorTile::<bf16, BKV, D, 128>::of(&v_ring.part::<KV_TILE>(s));
        out.fence();
        for (kk, p) in p.iter().enumerate() {
            out.mma_async_reg_a_mn(p, vt.descriptor(16 * kk, 0), true);
        }
        commit_group();
        out.wait::<0>();
        // Both stages are released after the tile: K_{j+1} is already in the other stage,
        // so the producer's refill of this one has all of the next tile to land. (Released
        // right after S, the emulator's race check cannot order every warp's reads of K
        // before the refill: it keeps the latest read's time only.)
        if t.is_multiple_of(32) {
            empty_k.get(s).arrive();
            empty_v.get(s).arrive();
        }
    }
    let sum = sum.map(quad_sum);
    let inv = sum.map(|s| if s > 0.0 { 1.0 / s } else { 0.0 });
    out.map(|i, x| x * inv[(i / 2) % 2]);
    let base = bh * seq * D;
    let dst = o.as_mut_ptr();
    let first = q0 + 64 * wg;
    out.store_bf16_pairs(|r, c, pair| {
        if first + r < seq {
            // SAFETY: (block, warpgroup, thread, pair) maps one-to-one onto
            // (row, c..c+2) of this (batch, head)'s rows, inside o (checked above);
            // o is 4-byte aligned (checked above) and the index even (D and c are).
            unsafe { *dst.add(base + (first + r) * D + c).cast::<u32>() = pair };
        }
    });
}

/// The producer (warpgroup 0's first thread): the block's `Q` (four boxes: two
/// warpgroups × two halves of `d`), then for each key tile `K` and `V` (two boxes each)
/// into stage `j % STAGES` of their rings, waiting for the consumers to release a stage
/// before refilling it.
#[inline(always)]
#[allow(clippy::type_complexity)] // the kernel's maps, arrays and barriers, grouped
fn produce(
    (q, k, v): (&MapQ, &MapKV, &MapKV),
    (q_tile, k_ring, v_ring): (
        &SharedArray<bf16, { 4 * Q_BOX }, 1024>,
        &SharedArray<bf16, { STAGES * KV_TILE }, 1024>,
        &SharedArray<bf16, { STAGES * KV_TILE }, 1024>,
    ),
    (q_bar, full_k, full_v, empty_k, empty_v): (
        &Mbarriers<1>,
        &Mbarriers<STAGES>,
        &Mbarriers<STAGES>,
        &Mbarriers<STAGES>,
        &Mbarriers<STAGES>,
    ),
    (bh, q0, tiles): (usize, usize, usize),
) {
    q.prefetch();
    k.prefetch();
    v.prefetch();
    let bh = bh as i32;
    q_bar.get(0).arrive_expect_tx(4 * MapQ::BOX_BYTES);
    for part in 0..4 {
        let (wg, h) = (part / 2, part % 2);
        q.load(
            &q_tile.part::<Q_BOX>(part),
            [64 * h as i32, (q0 + 64 * wg) as i32, bh],
            &q_bar.get(0),
        );
    }
    let (mut k_phases, mut v_phases) = (Phases::<STAGES>::new(), Phases::<STAGES>::new());
    for j in 0..tiles {
        let s = j % STAGES;
        let row = (j * BKV) as i32;
        if j >= STAGES {
            empty_k.wait(s, &mut k_phases);
        }
        full_k.get(s).arrive_expect_tx(2 * MapKV::BOX_BYTES);
        for h in 0..2 {
            k.load(
                &k_ring.part::<KV_BOX>(2 * s + h),
                [64 * h as i32, row, bh],
                &full_k.get(s),
            );
        }
        if j >= STAGES {
            empty_v.wait(s, &mut v_phases);
        }
        full_v.get(s).arrive_expect_tx(2 * MapKV::BOX_BYTES);
        for h in 0..2 {
            v.load(
                &v_ring.part::<KV_BOX>(2 * s + h),
                [64 * h as i32, row, bh],
                &full_v.get(s),
            );
        }
    }
}
