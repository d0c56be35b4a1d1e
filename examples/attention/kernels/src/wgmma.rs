//! Fused attention forward on Hopper's warpgroup tensor cores (`wgmma`, sm_90a), head
//! dimensions 64 and 128: FlashAttention-3's structure, with its pipelining inside each
//! warpgroup (the softmax of one tile runs while the tensor cores multiply the previous
//! tile's `P·V`) and its ping-pong between the two consumer warpgroups (they take turns
//! issuing their products, through two mbarriers, so one's softmax overlaps the other's
//! products).
//!
//! Each block (384 threads: three warpgroups) takes [`BQ`] = 128 query rows of one
//! (batch, head):
//! - warpgroup 0's first thread is the producer: one tensor copy of the block's `Q`, then
//!   `K` and `V` tiles of [`BKV`] = 128 keys into two rings of two stages (full/empty
//!   mbarriers); the rest of warpgroup 0 gives its registers to the consumers
//!   (`setmaxnreg`);
//! - warpgroups 1 and 2 each own 64 query rows: `S = Q·Kᵀ` with both operands in shared
//!   memory (`wgmma.m64n128k16`, `d / 16` steps), the online softmax in registers
//!   (the accumulator's rows live in quads of lanes, as with `mma.sync`), then
//!   `O += P·V` with `P` from registers ([`Accum128::a_fragment`]) and `V` read MN-major
//!   ([`MnMajorTile`], the transpose-B flag), eight steps over the keys. `S_{j+1}` and
//!   `P_j·V_j` are issued together; only `O`'s rescale waits for the latter.
//!
//! `q`, `k`, `v` are tensor maps of `[batch·heads][seq][d]` row-major `bf16` (rank 3,
//! so rows past `seq` read as zero; boxes of 64 columns of `d`), `o` the same layout in
//! memory.

use device_std::mma::FragA;
use device_std::tma::TensorMap;
use device_std::wgmma::{commit_group, Accum, Accum128, KMajorTile, MnMajorTile};
use device_std::{bf16, kernel, thread, warp, DisjointSlice, Mbarriers, Phases, SharedArray};

/// Query rows per block (64 per consumer warpgroup).
pub const BQ: usize = 128;
/// Keys per tile.
pub const BKV: usize = 128;
/// Threads per block: one producer and two consumer warpgroups.
pub const THREADS: u32 = 384;
/// Stages of each of the `K` and `V` rings.
const STAGES: usize = 2;

/// The tensor map of `q` [`attention_wgmma`] takes: `[bh][seq][d]`, boxes of 64 (`d`,
/// 128 bytes) × 64 rows × 1, 128-byte swizzle.
pub type MapQ = TensorMap<bf16, 3, 64, 64, 1, 1, 1, 128>;
/// The tensor map of `k` and of `v`: boxes of 64 (`d`) × 128 rows (keys) × 1, 128-byte
/// swizzle.
pub type MapKV = TensorMap<bf16, 3, 64, 128, 1, 1, 1, 128>;

/// Elements of one `Q` box (64 rows × 64 of `d`), `2 d / 64` per block.
const Q_BOX: usize = 64 * 64;
/// Elements of one `K`/`V` box (128 keys × 64 of `d`), `d / 64` per tile.
const KV_BOX: usize = BKV * 64;

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

/// Attention forward on `wgmma`: `o = softmax(scale · q·kᵀ) · v` for each of the
/// `gridDim.y` (batch, head) pairs, keys after the query masked when `causal` is not 0.
/// `q`, `k`, `v` describe `[gridDim.y][seq][D]` row-major `bf16` ([`MapQ`], [`MapKV`]);
/// `o` is that layout, 4-byte aligned. Launch `(ceil(seq / 128), batch·heads, 1)` blocks
/// of [`THREADS`] (a trap otherwise). Two entries: `attention_wgmma_d64` (`D` = 64, 80 KiB
/// of static shared memory) and `attention_wgmma_d128` (`D` = 128, 160 KiB); `H = D / 64`
/// boxes of `d`, `DR = D / 2` accumulator registers, `QN`, `KVS` and `KVN` the elements
/// of the `Q` tile, of a ring's stage and of a ring. sm_90a.
#[kernel(
    max_threads = 384,
    min_blocks = 1,
    instances(
        attention_wgmma_d64 = <64, 1, 32, 8192, 8192, 16384>,
        attention_wgmma_d128 = <128, 2, 64, 16384, 16384, 32768>
    )
)]
#[allow(clippy::too_many_arguments)] // the launch's parameters
pub fn attention_wgmma<
    const D: usize,
    const H: usize,
    const DR: usize,
    const QN: usize,
    const KVS: usize,
    const KVN: usize,
>(
    q: MapQ,
    k: MapKV,
    v: MapKV,
    mut o: DisjointSlice<bf16>,
    seq: u32,
    scale: f32,
    causal: u32,
) {
    const {
        assert!(
            (D == 64 || D == 128)
                && H * 64 == D
                && DR * 2 == D
                && QN == BQ * D
                && KVS == BKV * D
                && KVN == STAGES * KVS
        )
    };
    let q_tile = SharedArray::<bf16, QN, 1024>::new();
    let k_ring = SharedArray::<bf16, KVN, 1024>::new();
    let v_ring = SharedArray::<bf16, KVN, 1024>::new();
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
    // Ping-pong: turn[w] lets consumer warpgroup w issue its products; each passes the
    // turn to the other right after issuing, so one's softmax runs while the other's
    // products do (lane 0 of each of the 4 warps arrives).
    let turn = Mbarriers::<2>::new(4);
    let t = thread::thread_in_block() as usize;
    // Read from lane 0 so that the compiler sees it is warp-uniform (ptxas C7519).
    let warpgroup = warp::shfl_sync(u32::MAX, (t / 128) as u32, 0) as usize;
    if warpgroup == 0 {
        device_std::wgmma::setmaxnreg_dec::<40>();
        if t == 0 {
            produce::<H, QN, KVN>(
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
    // `& (2H - 1)` (wg is 0 or 1): the index is provably in range, so no bounds-check
    // call sits in the wgmma pipeline (ptxas C7510 serialises it otherwise).
    let qt: [KMajorTile<bf16, 64, 64, 128>; H] =
        core::array::from_fn(|h| KMajorTile::of(&q_tile.part::<Q_BOX>((H * wg + h) & (2 * H - 1))));
    let scale2 = scale * core::f32::consts::LOG2_E;
    let (w, lane) = ((t % 128) / 32, t % 32);
    // The thread's two query rows (of the whole sequence).
    let row0 = q0 + 64 * wg + 16 * w + lane / 4;
    let rows = [row0, row0 + 8];
    let mut out = Accum::<D, DR>::zero();
    let mut stats = RowStats {
        max: [f32::NEG_INFINITY; 2],
        sum: [0.0; 2],
    };
    let (mut k_phases, mut v_phases) = (Phases::<STAGES>::new(), Phases::<STAGES>::new());
    let tiles_mask = TileMask {
        seq,
        causal,
        first_row: q0 + 64 * wg,
        rows,
        lane_col: 2 * (lane % 4),
        scale2,
    };
    let release = |bars: &Mbarriers<STAGES>, s: usize| release_stage(bars, s, t);
    let softmax =
        |sc: &mut Accum128, stats: &mut RowStats, j: usize| tiles_mask.softmax(sc, stats, j);
    // FlashAttention-3's pipelining inside the warpgroup: while the tensor cores compute
    // S_j = Q·K_jᵀ and O += P_{j-1}·V_{j-1}, nothing waits; the softmax of S_j runs while
    // P_{j-1}·V_{j-1} may still be in flight, and only O's rescale waits for it.
    let mut turn_phases = Phases::<2>::new();
    if tiles > 0 {
        // Warpgroup 0 issues first.
        if wg == 1 {
            pass_turn(&turn, wg, t);
        }
        let mut sc = Accum128::zero();
        full_k.wait(0, &mut k_phases);
        turn.wait(wg, &mut turn_phases);
        issue_qk::<D, H, KVN>(&mut sc, &qt, &k_ring, 0);
        pass_turn(&turn, wg, t);
        sc.wait::<0>();
        release(&empty_k, 0);
        softmax(&mut sc, &mut stats, 0);
        let mut p = fragments(&sc);
        for j in 1..tiles {
            let (s, prev) = (j % STAGES, (j - 1) % STAGES);
            full_k.wait(s, &mut k_phases);
            full_v.wait(prev, &mut v_phases);
            turn.wait(wg, &mut turn_phases);
            issue_qk::<D, H, KVN>(&mut sc, &qt, &k_ring, s);
            issue_pv::<D, DR, KVS, KVN>(&mut out, &p, &v_ring, prev);
            pass_turn(&turn, wg, t);
            // S_j is done (P_{j-1}·V_{j-1} may not be: O stays untouched until it is).
            sc.wait::<1>();
            release(&empty_k, s);
            let alpha = softmax(&mut sc, &mut stats, j);
            out.wait::<0>();
            release(&empty_v, prev);
            out.map(|i, x| x * alpha[(i / 2) % 2]);
            p = fragments(&sc);
        }
        let last = (tiles - 1) % STAGES;
        full_v.wait(last, &mut v_phases);
        turn.wait(wg, &mut turn_phases);
        issue_pv::<D, DR, KVS, KVN>(&mut out, &p, &v_ring, last);
        pass_turn(&turn, wg, t);
        out.wait::<0>();
        release(&empty_v, last);
    }
    let sum = stats.sum;
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

/// What masks a tile of scores for the calling thread, and the scale.
struct TileMask {
    seq: usize,
    causal: bool,
    /// The warpgroup's first query row.
    first_row: usize,
    /// The thread's two query rows.
    rows: [usize; 2],
    /// The first of the thread's two columns in each 8.
    lane_col: usize,
    /// `scale · log2 e`.
    scale2: f32,
}

impl TileMask {
    /// The softmax of tile `j`, in place (S → P, unnormalised), returning the rescale of
    /// what came before: masked on the tiles that have keys past `seq` or, with causal,
    /// after the warpgroup's first row.
    #[inline(always)]
    fn softmax(&self, sc: &mut Accum128, stats: &mut RowStats, j: usize) -> [f32; 2] {
        let kv0 = j * BKV;
        // Two instances of the step, so the unmasked tiles (almost all) test nothing per
        // element.
        if kv0 + BKV > self.seq || (self.causal && kv0 + BKV > self.first_row + 1) {
            stats.step(sc, self.scale2, |i| {
                let key = kv0 + 8 * (i / 4) + self.lane_col + i % 2;
                key >= self.seq || (self.causal && key > self.rows[(i / 2) % 2])
            })
        } else {
            stats.step(sc, self.scale2, |_| false)
        }
    }
}

/// Hands the tensor cores to the other consumer warpgroup (`1 - wg`): lane 0 of each of
/// this warpgroup's warps arrives on its turn barrier (thread `t`).
#[inline(always)]
fn pass_turn(turn: &Mbarriers<2>, wg: usize, t: usize) {
    if t.is_multiple_of(32) {
        turn.get((1 - wg) & 1).arrive();
    }
}

/// Releases stage `s` of a ring: lane 0 of each consumer warp arrives (thread `t`).
#[inline(always)]
fn release_stage(bars: &Mbarriers<STAGES>, s: usize, t: usize) {
    if t.is_multiple_of(32) {
        bars.get(s).arrive();
    }
}

/// The online softmax's state for the calling thread's two rows: running maximum (in
/// `exp2` units) and this thread's part of the running sum.
struct RowStats {
    max: [f32; 2],
    sum: [f32; 2],
}

impl RowStats {
    /// One tile of scores `sc` (64 × 128 of the warpgroup; the thread's rows are element
    /// `i`'s `(i / 2) % 2`): scaled by `scale2` (`scale · log2 e`), `-∞` where `masked(i)`,
    /// then `P = 2^(x − m_new)` in place and the sums rescaled and extended; returns each
    /// row's `2^(m_old − m_new)`, the factor for what `O` holds so far.
    #[inline(always)]
    fn step(&mut self, sc: &mut Accum128, scale2: f32, masked: impl Fn(usize) -> bool) -> [f32; 2] {
        let mut new_max = self.max;
        sc.map(|i, x| {
            let x = if masked(i) {
                f32::NEG_INFINITY
            } else {
                x * scale2
            };
            new_max[(i / 2) % 2] = new_max[(i / 2) % 2].max(x);
            x
        });
        let new_max = new_max.map(quad_max);
        // A row every key of which is masked so far keeps 0 as its reference (P = 0).
        let base = new_max.map(|m| if m == f32::NEG_INFINITY { 0.0 } else { m });
        let alpha = [0, 1].map(|h| device_std::math::fast::exp2f(self.max[h] - base[h]));
        let mut sum = [self.sum[0] * alpha[0], self.sum[1] * alpha[1]];
        sc.map(|i, x| {
            let p = device_std::math::fast::exp2f(x - base[(i / 2) % 2]);
            sum[(i / 2) % 2] += p;
            p
        });
        self.max = new_max;
        self.sum = sum;
        alpha
    }
}

/// Issues `S = Q·K_sᵀ` (`D / 16` `wgmma` steps of 16 over `d`, `H` boxes of 64) into
/// the current group and commits it.
#[inline(always)]
fn issue_qk<const D: usize, const H: usize, const KVN: usize>(
    sc: &mut Accum128,
    qt: &[KMajorTile<bf16, 64, 64, 128>; H],
    k_ring: &SharedArray<bf16, KVN, 1024>,
    s: usize,
) {
    let kt: [KMajorTile<bf16, BKV, 64, 128>; H] =
        core::array::from_fn(|h| KMajorTile::of(&k_ring.part::<KV_BOX>((H * s + h) & (2 * H - 1))));
    sc.fence();
    // Written out (`unrolled`, at most 8 steps): a loop the compiler kept would hold the
    // accumulator in local memory around each instruction.
    crate::unrolled::<8>(|kk| {
        if kk < D / 16 {
            let (h, c) = (kk / 4, 16 * (kk % 4));
            sc.mma_async(qt[h].descriptor(0, c), kt[h].descriptor(0, c), kk > 0);
        }
    });
    commit_group();
}

/// Issues `O += P·V_s` (eight steps of 16 keys, `P` from registers, `V` MN-major) into
/// the current group and commits it.
#[inline(always)]
fn issue_pv<const D: usize, const DR: usize, const KVS: usize, const KVN: usize>(
    out: &mut Accum<D, DR>,
    p: &[FragA<bf16>; BKV / 16],
    v_ring: &SharedArray<bf16, KVN, 1024>,
    s: usize,
) {
    let vt = MnMajorTile::<bf16, BKV, D, 128>::of(&v_ring.part::<KVS>(s & 1));
    out.fence();
    crate::unrolled::<{ BKV / 16 }>(|kk| {
        out.mma_async_reg_a_mn(&p[kk], vt.descriptor(16 * kk, 0), true);
    });
    commit_group();
}

/// `P` (the unnormalised probabilities in `sc`) as the eight `A` fragments of `P·V`.
#[inline(always)]
fn fragments(sc: &Accum128) -> [FragA<bf16>; BKV / 16] {
    [
        sc.a_fragment(0),
        sc.a_fragment(1),
        sc.a_fragment(2),
        sc.a_fragment(3),
        sc.a_fragment(4),
        sc.a_fragment(5),
        sc.a_fragment(6),
        sc.a_fragment(7),
    ]
}

/// The producer (warpgroup 0's first thread): the block's `Q` (`2 H` boxes: two
/// warpgroups × `H` boxes of 64 of `d`), then for each key tile `K` and `V` (`H` boxes each)
/// into stage `j % STAGES` of their rings, waiting for the consumers to release a stage
/// before refilling it.
#[inline(always)]
#[allow(clippy::type_complexity)] // the kernel's maps, arrays and barriers, grouped
fn produce<const H: usize, const QN: usize, const KVN: usize>(
    (q, k, v): (&MapQ, &MapKV, &MapKV),
    (q_tile, k_ring, v_ring): (
        &SharedArray<bf16, QN, 1024>,
        &SharedArray<bf16, KVN, 1024>,
        &SharedArray<bf16, KVN, 1024>,
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
    q_bar
        .get(0)
        .arrive_expect_tx(2 * H as u32 * MapQ::BOX_BYTES);
    for part in 0..2 * H {
        let (wg, h) = (part / H, part % H);
        q.load(
            &q_tile.part::<Q_BOX>(part),
            [64 * h as i32, (q0 + 64 * wg) as i32, bh],
            &q_bar.get(0),
        );
    }
    let (mut k_phases, mut v_phases) = (Phases::<STAGES>::new(), Phases::<STAGES>::new());
    for j in 0..tiles {
        fill_stage::<H, KVN>(k, k_ring, (full_k, empty_k, &mut k_phases), j, bh);
        fill_stage::<H, KVN>(v, v_ring, (full_v, empty_v, &mut v_phases), j, bh);
    }
}

/// Loads key tile `j` of `map` (`H` boxes of 64 of `d` × [`BKV`] rows of (batch, head)
/// `bh`) into stage `j % STAGES` of `ring`, completing on `full`, after waiting on
/// `empty` for the consumers' release of the stage's previous tile.
#[inline(always)]
fn fill_stage<const H: usize, const KVN: usize>(
    map: &MapKV,
    ring: &SharedArray<bf16, KVN, 1024>,
    (full, empty, empty_phases): (&Mbarriers<STAGES>, &Mbarriers<STAGES>, &mut Phases<STAGES>),
    j: usize,
    bh: i32,
) {
    let s = j % STAGES;
    if j >= STAGES {
        empty.wait(s, empty_phases);
    }
    full.get(s).arrive_expect_tx(H as u32 * MapKV::BOX_BYTES);
    for h in 0..H {
        map.load(
            &ring.part::<KV_BOX>(H * s + h),
            [64 * h as i32, (j * BKV) as i32, bh],
            &full.get(s),
        );
    }
}
