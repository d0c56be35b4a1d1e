//! CPU references for the kernels of this crate: what each one must write,
//! computed on the host. Shared by the GPU program (`intrinsics-host`) and
//! the emulator tests (`emulated-tests`), so both check the same values.
//! Host-only: the module does not exist in the nvptx64 build.
//!
//! Units: sizes are in elements (`u32` or `u64` words) unless a name says
//! bytes; launch shapes are `(x, y, z)` counts of threads or blocks.

extern crate alloc;

use crate::{
    ATOMIC_SLOTS, BARRIER_WORDS, DYN_HEADER, DYN_OFFSET_B, DYN_OFFSET_C, ID_WORDS, MESSAGE_LEN,
    WARP_WORDS, WIDTHS, WIDTH_HIGH_B_AT, WIDTH_PARTIAL_AT, WIDTH_RUNTIME_AT, WIDTH_WORDS,
};
use alloc::{vec, vec::Vec};

/// Lanes per warp.
const WARP: usize = 32;

/// Counter slots whose final value depends on which thread swapped last
/// (`atom.exch` on integers): checked by [`int_swaps_ok`], not by value.
pub const INT_SWAP_SLOTS: [usize; 2] = [24, 25];
/// As [`INT_SWAP_SLOTS`], for the `f64` exchanges: see [`float_swaps_ok`].
pub const FLOAT_SWAP_SLOTS: [usize; 2] = [30, 31];

/// The `ID_WORDS` words `thread_ids` writes for every thread of a
/// `grid` × `block` launch, in the kernel's layout (thread `k` at
/// `ID_WORDS * k`, `k` the linear thread index).
pub fn thread_ids(grid: (u32, u32, u32), block: (u32, u32, u32)) -> Vec<u32> {
    let bs = block.0 * block.1 * block.2;
    let total = (grid.0 * grid.1 * grid.2 * bs) as usize;
    let mut want = vec![0u32; total * ID_WORDS];
    for bz in 0..grid.2 {
        for by in 0..grid.1 {
            for bx in 0..grid.0 {
                let bid = (bz * grid.1 + by) * grid.0 + bx;
                for tz in 0..block.2 {
                    for ty in 0..block.1 {
                        for tx in 0..block.0 {
                            let tib = (tz * block.1 + ty) * block.0 + tx;
                            let k = (bid * bs + tib) as usize;
                            want[k * ID_WORDS..(k + 1) * ID_WORDS].copy_from_slice(&[
                                tx,
                                ty,
                                tz,
                                bx,
                                by,
                                bz,
                                block.0,
                                block.1,
                                block.2,
                                grid.0,
                                grid.1,
                                grid.2,
                                tib % 32,
                                tib / 32,
                                tib,
                                0xC0FFEE,
                            ]);
                        }
                    }
                }
            }
        }
    }
    want
}

/// The matrix `index_2d_fill` / `index_2d_runtime_fill` leave behind for a
/// `grid` × `block` launch with row `stride` (elements): `row << 16 | col`
/// where a thread exists for the column, `poison` (the initial value) past
/// the launch's width. Rows: `grid.1 * block.1 * grid.2`.
pub fn index_2d(
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    stride: usize,
    poison: u32,
) -> Vec<u32> {
    let len = (grid.1 * block.1 * grid.2) as usize * stride;
    let width = (grid.0 * block.0) as usize;
    (0..len)
        .map(|i| {
            let (r, c) = (i / stride, i % stride);
            if c < width {
                ((r as u32) << 16) | c as u32
            } else {
                poison
            }
        })
        .collect()
}

/// The four shuffles of `warp_ops` for `lane`, of the warp's values `vs`
/// mapped through `map`: `[idx((lane*7+3)%32), up(3), down(5), xor(9)]`
/// (up/down keep the lane's own value out of range).
fn shuffles(vs: &[u32], lane: usize, map: impl Fn(u32) -> u64) -> [u64; 4] {
    let src = (lane * 7 + 3) % WARP;
    let up = if lane >= 3 { lane - 3 } else { lane };
    let down = if lane + 5 <= 31 { lane + 5 } else { lane };
    [map(vs[src]), map(vs[up]), map(vs[down]), map(vs[lane ^ 9])]
}

/// `match.any`: the mask of lanes whose key `f(v)` equals `lane`'s.
fn match_any(vs: &[u32], lane: usize, f: impl Fn(u32) -> u64) -> u64 {
    (0..WARP)
        .filter(|&j| f(vs[j]) == f(vs[lane]))
        .fold(0, |m, j| m | 1 << j)
}

/// Words 0..24 of a lane: shuffles of u32, i32, f32, u64, i64 and f64.
fn warp_shuffle_words(vs: &[u32], l: usize, o: &mut [u64]) {
    o[0..4].copy_from_slice(&shuffles(vs, l, |v| v as u64));
    o[4..8].copy_from_slice(&shuffles(vs, l, |v| v as u64));
    o[8..12].copy_from_slice(&shuffles(vs, l, |v| (v as f32 / 3.0).to_bits() as u64));
    o[12..16].copy_from_slice(&shuffles(vs, l, |v| ((v as u64) << 32) | (v as u64 * 7)));
    o[16..20].copy_from_slice(&shuffles(vs, l, |v| (-(v as i64) * 1_000_003) as u64));
    o[20..24].copy_from_slice(&shuffles(vs, l, |v| (v as f64 * 0.5 + 0.25).to_bits()));
}

/// Words 24..31 of a lane: votes, ballot and match.
fn warp_vote_words(vs: &[u32], l: usize, o: &mut [u64]) {
    o[24] = vs.iter().all(|v| v & 0xF != 0xF) as u64;
    o[25] = vs.iter().any(|v| v % 64 == 0) as u64;
    o[26] = (0..WARP)
        .filter(|&j| vs[j] & 1 == 1)
        .fold(0, |m, j| m | 1 << j);
    o[27] = match_any(vs, l, |v| (v % 4) as u64);
    o[28] = match_any(vs, l, |v| v as u64 % 3);
    o[29] = if vs.iter().all(|&v| v == vs[0]) {
        0xFFFF_FFFF
    } else {
        0xDEAD
    };
    o[30] = o[29];
}

/// Words 31..39 of a lane: the redux operations over the whole warp.
fn warp_redux_words(vs: &[u32], o: &mut [u64]) {
    o[31] = vs.iter().fold(0u32, |a, &v| a.wrapping_add(v)) as u64;
    o[32] = vs.iter().fold(u32::MAX, |a, &v| a.min(v)) as u64;
    o[33] = vs.iter().fold(0u32, |a, &v| a.max(v)) as u64;
    o[34] = vs.iter().fold(!0u32, |a, &v| a & v) as u64;
    o[35] = vs.iter().fold(0u32, |a, &v| a | v) as u64;
    o[36] = vs.iter().fold(0u32, |a, &v| a ^ v) as u64;
    o[37] = vs.iter().fold(i32::MAX, |a, &v| a.min(v as i32)) as u32 as u64;
    o[38] = vs.iter().fold(i32::MIN, |a, &v| a.max(v as i32)) as u32 as u64;
}

/// Words 39..45 of lane `l` of a warp: masks, lane and warp ids, and the
/// half-warp collectives (lanes below 16 only; the rest keep 0).
fn warp_mask_words(vs: &[u32], l: usize, warp_in_block: usize, o: &mut [u64]) {
    o[39] = 0xFFFF_FFFF;
    o[40] = if l < 10 { 0x3FF } else { 0 };
    o[41] = l as u64;
    o[42] = warp_in_block as u64;
    if l < 16 {
        o[43] = vs[..16].iter().fold(0u32, |a, &v| a.wrapping_add(v)) as u64;
        o[44] = vs[l ^ 1] as u64;
    }
}

/// The `WARP_WORDS` words `warp_ops` writes per thread, for `input` (one
/// value per thread, whole warps) in blocks of `threads` threads. Words
/// the kernel leaves alone are 0.
pub fn warp_ops(input: &[u32], threads: usize) -> Vec<u64> {
    let mut want = vec![0u64; input.len() * WARP_WORDS];
    for (w, vs) in input.chunks_exact(WARP).enumerate() {
        for l in 0..WARP {
            let k = w * WARP + l;
            let o = &mut want[k * WARP_WORDS..(k + 1) * WARP_WORDS];
            warp_shuffle_words(vs, l, o);
            warp_vote_words(vs, l, o);
            warp_redux_words(vs, o);
            warp_mask_words(vs, l, (w * WARP) % threads / WARP, o);
        }
    }
    want
}

/// A shuffle's mode (`shfl.sync.idx/up/down/bfly`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShuffleMode {
    /// `__shfl_sync`.
    Idx,
    /// `__shfl_up_sync`.
    Up,
    /// `__shfl_down_sync`.
    Down,
    /// `__shfl_xor_sync`.
    Xor,
}

/// The lane whose value `lane` receives from a `mode` shuffle with third
/// argument `b` over segments of `width` lanes (a power of two ≤ 32): the
/// CUDA C++ Programming Guide's rules ("Warp Shuffle Functions"), with only
/// `b % 32` counting for up/down/xor as in PTX `shfl.sync` (`b[4:0]`). The
/// lane itself when the source is out of range: up from an earlier segment,
/// down or xor from a later one.
pub fn shuffle_source(mode: ShuffleMode, lane: usize, b: u32, width: usize) -> usize {
    let d = (b % 32) as usize;
    match mode {
        ShuffleMode::Idx => (lane & !(width - 1)) + b as usize % width,
        ShuffleMode::Up if lane % width < d => lane,
        ShuffleMode::Up => lane - d,
        ShuffleMode::Down if lane % width + d >= width => lane,
        ShuffleMode::Down => lane + d,
        ShuffleMode::Xor if (lane ^ d) / width > lane / width => lane,
        ShuffleMode::Xor => lane ^ d,
    }
}

/// The `WIDTH_WORDS` words `warp_shuffle_widths` writes per thread for
/// `input` (one value per thread, whole warps): per width `1 << i` at
/// `8 * i`, `[idx(5 lane + 3), up(3), down(5), xor(9)]` of the low 32 bits,
/// then of all 64; at `WIDTH_HIGH_B_AT`, `[up(35, width 8), down(37, width
/// 16), xor(41, width 16), idx(70, width 4), down(33)]` of the low 32 bits;
/// at `WIDTH_PARTIAL_AT`, lanes below 16 only, `[xor(4, width 8), down(6,
/// width 16), up(1, width 4)]` (the rest 0); at `WIDTH_RUNTIME_AT`, the
/// four 32-bit ones again with width `1 << (block % 6)`, for blocks of
/// `threads` threads.
pub fn warp_shuffle_widths(input: &[u64], threads: usize) -> Vec<u64> {
    use ShuffleMode::*;
    let mut want = vec![0u64; input.len() * WIDTH_WORDS];
    for (w, xs) in input.chunks_exact(WARP).enumerate() {
        for l in 0..WARP {
            let o = &mut want[(w * WARP + l) * WIDTH_WORDS..][..WIDTH_WORDS];
            let lo = |mode, b, width| xs[shuffle_source(mode, l, b, width)] as u32 as u64;
            let all = |mode, b, width| xs[shuffle_source(mode, l, b, width)];
            for i in 0..WIDTHS {
                let width = 1 << i;
                let src = l as u32 * 5 + 3;
                o[8 * i..8 * i + 8].copy_from_slice(&[
                    lo(Idx, src, width),
                    lo(Up, 3, width),
                    lo(Down, 5, width),
                    lo(Xor, 9, width),
                    all(Idx, src, width),
                    all(Up, 3, width),
                    all(Down, 5, width),
                    all(Xor, 9, width),
                ]);
            }
            o[WIDTH_HIGH_B_AT..WIDTH_PARTIAL_AT].copy_from_slice(&[
                lo(Up, 35, 8),
                lo(Down, 37, 16),
                lo(Xor, 41, 16),
                lo(Idx, 70, 4),
                lo(Down, 33, 32),
            ]);
            let (width, src) = (1 << (w * WARP / threads % WIDTHS), l as u32 * 5 + 3);
            o[WIDTH_RUNTIME_AT..].copy_from_slice(&[
                lo(Idx, src, width),
                lo(Up, 3, width),
                lo(Down, 5, width),
                lo(Xor, 9, width),
            ]);
            if l < 16 {
                o[WIDTH_PARTIAL_AT..WIDTH_RUNTIME_AT].copy_from_slice(&[
                    lo(Xor, 4, 8),
                    lo(Down, 6, 16),
                    lo(Up, 1, 4),
                ]);
            }
        }
    }
    want
}

/// The initial values of the `ATOMIC_SLOTS` counters of `atomics` (each
/// slot 8 bytes, read as the type its operations use).
pub fn atomics_init() -> Vec<u64> {
    let f32s = |x: f32| x.to_bits() as u64;
    let mut init = vec![0u64; ATOMIC_SLOTS];
    init[0] = 5;
    init[1] = 7;
    init[2] = (-3i32) as u32 as u64;
    init[3] = 11;
    init[4] = f32s(0.5);
    init[5] = 0.25f64.to_bits();
    init[6] = u32::MAX as u64;
    init[8] = i32::MAX as u32 as u64;
    init[9] = i32::MIN as u32 as u64;
    init[10] = u64::MAX;
    init[12] = i64::MAX as u64;
    init[13] = i64::MIN as u64;
    init[14] = f32s(f32::INFINITY);
    init[15] = f32s(f32::NEG_INFINITY);
    init[16] = f64::INFINITY.to_bits();
    init[17] = f64::NEG_INFINITY.to_bits();
    init[19] = 0xFFFF_FFFF;
    init[20] = 0x1234;
    init[23] = 100;
    init[24] = 999;
    init[31] = 0.5f64.to_bits();
    init
}

/// Slots 0..6: the additions (u32, i32 sub, i64, f32, f64) and the u32
/// increment by one per thread. `n` is the number of threads.
fn atomic_sums(vals: &[u32], n: usize, want: &mut [u64]) {
    want[0] = 5 + n as u64;
    want[1] = 7 + vals.iter().map(|&v| v as u64).sum::<u64>();
    want[2] = vals
        .iter()
        .fold(-3i32, |a, &v| a.wrapping_sub((v % 100) as i32)) as u32 as u64;
    want[3] = vals.iter().fold(11i64, |a, &v| a + (v as i64 - (1 << 31))) as u64;
    want[4] = (0.5 + n as f32).to_bits() as u64;
    want[5] = (0.25 + vals.iter().map(|&v| v as f64).sum::<f64>()).to_bits();
}

/// Slots 6..14: integer min/max (u32, i32, u64, i64) starting from the
/// identities `atomics_init` stores.
fn atomic_int_min_max(vals: &[u32], want: &mut [u64]) {
    let u64s = || vals.iter().map(|&v| v as u64 * 3 + 1);
    let i64s = || vals.iter().map(|&v| -(v as i64));
    want[6] = vals.iter().fold(u32::MAX, |a, &v| a.min(v)) as u64;
    want[7] = vals.iter().fold(0u32, |a, &v| a.max(v)) as u64;
    want[8] = vals.iter().fold(i32::MAX, |a, &v| a.min(v as i32)) as u32 as u64;
    want[9] = vals.iter().fold(i32::MIN, |a, &v| a.max(v as i32)) as u32 as u64;
    want[10] = u64s().fold(u64::MAX, u64::min);
    want[11] = u64s().fold(0, u64::max);
    want[12] = i64s().fold(i64::MAX, i64::min) as u64;
    want[13] = i64s().fold(i64::MIN, i64::max) as u64;
}

/// Slots 14..18: float min/max of `v / 7` in f32 and f64.
fn atomic_float_min_max(vals: &[u32], want: &mut [u64]) {
    let f32s = || vals.iter().map(|&v| v as f32 / 7.0);
    let f64s = || vals.iter().map(|&v| v as f64 / 7.0);
    want[14] = f32s().fold(f32::INFINITY, f32::min).to_bits() as u64;
    want[15] = f32s().fold(f32::NEG_INFINITY, f32::max).to_bits() as u64;
    want[16] = f64s().fold(f64::INFINITY, f64::min).to_bits();
    want[17] = f64s().fold(f64::NEG_INFINITY, f64::max).to_bits();
}

/// Slots 18..39 except the swaps: bitwise ops, the compare-and-swap loop,
/// the shared-memory copies of earlier results, the scoped adds and the reductions.
fn atomic_bits_and_rest(vals: &[u32], n: usize, want: &mut [u64]) {
    want[18] = vals.iter().fold(0u32, |a, &v| a | 1 << (v % 32)) as u64;
    want[19] = vals.iter().fold(!0u32, |a, &v| a & !(1 << (v % 29))) as u64;
    want[20] = vals.iter().fold(0x1234u32, |a, &v| a ^ v) as u64;
    want[21] = vals.iter().fold(0u64, |a, &v| a | 1 << (v % 61));
    want[22] = vals.iter().fold(0i64, |a, &v| a ^ ((v as i64) << 20)) as u64;
    want[23] = 100 + n as u64;
    want[26] = n as u64;
    want[27] = want[7];
    want[28] = want[18];
    want[29] = vals.iter().fold(0u32, |a, &v| a ^ v) as u64;
    want[32] = 2 * n as u64;
    want[33] = (0.5 * n as f64).to_bits();
    // The reductions (`atomic::add`, `global::add`, `shared::add`).
    want[34] = n as u64;
    want[35] = vals.iter().map(|&v| v as u64).sum::<u64>();
    want[36] = vals.iter().map(|&v| v as f64).sum::<f64>().to_bits();
    want[37] = vals
        .iter()
        .fold(0i32, |a, &v| a.wrapping_sub((v % 100) as i32)) as u32 as u64;
    want[38] = 2 * n as u64;
}

/// The counters after `atomics` ran one thread per value of `vals` from
/// [`atomics_init`]. The swap slots ([`INT_SWAP_SLOTS`],
/// [`FLOAT_SWAP_SLOTS`]) keep their initial values: their outcome depends
/// on the threads' order and is checked by [`int_swaps_ok`] and
/// [`float_swaps_ok`]. Every sum is exact (integers below 2^53), so the
/// order of the f64 additions does not matter.
pub fn atomics(vals: &[u32]) -> Vec<u64> {
    let n = vals.len();
    let mut want = atomics_init();
    atomic_sums(vals, n, &mut want);
    atomic_int_min_max(vals, &mut want);
    atomic_float_min_max(vals, &mut want);
    atomic_bits_and_rest(vals, n, &mut want);
    want
}

/// Σ k over the `n` threads' linear indices `k`.
fn index_sum(n: usize) -> u64 {
    (0..n as u64).sum()
}

/// The integer swaps of `n` threads are consistent: slot 24's low word is
/// some thread's `k`, and slot 25 (Σ returned values) plus it is
/// `999 + Σ k`.
pub fn int_swaps_ok(got: &[u64], n: usize) -> bool {
    let lo = got[24] as u32 as u64;
    lo < n as u64 && got[25] + lo == 999 + index_sum(n)
}

/// The f64 swaps of `n` threads are consistent: slot 31 is some thread's
/// `k`, and slot 30 (Σ returned values) plus it is `0.5 + Σ k`.
pub fn float_swaps_ok(got: &[u64], n: usize) -> bool {
    let fswap = f64::from_bits(got[31]);
    fswap < n as f64 && f64::from_bits(got[30]) + fswap == 0.5 + index_sum(n) as f64
}

/// What `barriers` writes for `vals` (one per thread) in blocks of
/// `threads` threads.
pub struct Barriers {
    /// `[count(v odd), and(v < 2^31), or(v % 1000 == 0)]` per block.
    pub per_block: Vec<u32>,
    /// Per thread: the value of the thread mirrored in its block.
    pub mirrored: Vec<u32>,
    /// Per thread: the value of the lane mirrored in its warp, `^ 0x5555`.
    pub lane_mirrored: Vec<u32>,
}

/// The expected output of `barriers` (see [`Barriers`]).
pub fn barriers(vals: &[u32], threads: usize) -> Barriers {
    let mut per_block = Vec::with_capacity(vals.len() / threads * BARRIER_WORDS);
    for b in vals.chunks(threads) {
        per_block.push(b.iter().filter(|&&v| v % 2 == 1).count() as u32);
        per_block.push(b.iter().all(|&v| v < 1 << 31) as u32);
        per_block.push(b.iter().any(|&v| v % 1000 == 0) as u32);
    }
    let n = vals.len();
    Barriers {
        per_block,
        mirrored: (0..n)
            .map(|i| vals[i - i % threads + (threads - 1 - i % threads)])
            .collect(),
        lane_mirrored: (0..n)
            .map(|i| vals[i - i % WARP + (WARP - 1 - i % WARP)] ^ 0x5555)
            .collect(),
    }
}

/// What `dyn_shared` writes for `blocks` blocks of `threads` threads with
/// `bytes` bytes of dynamic shared memory: per block the `DYN_HEADER`
/// leader words, then three words per thread (of the mirrored thread).
pub fn dyn_shared(blocks: usize, threads: usize, bytes: u32) -> Vec<u32> {
    let b = bytes as usize;
    let mut want = Vec::with_capacity(blocks * (DYN_HEADER + 3 * threads));
    for _ in 0..blocks {
        want.extend([
            0,
            0,
            0,
            0,
            (b / 4) as u32,
            ((b - DYN_OFFSET_B) / 8) as u32,
            (b - DYN_OFFSET_C) as u32,
            bytes,
        ]);
        for t in 0..threads {
            let m = threads - 1 - t;
            want.extend([m as u32 * 3, m as u32, (m as u8 ^ 0xA5) as u32]);
        }
    }
    want
}

/// The sum `message_passing`'s consumer must read: Σ (3 i + 1), i < 32.
pub fn message_sum() -> u32 {
    (0..MESSAGE_LEN as u32).map(|i| 3 * i + 1).sum()
}
