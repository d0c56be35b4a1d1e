//! `intrinsics`: one kernel per device-std intrinsic family, each writing
//! what it observed so the host can compare it with a CPU model. The model
//! (the expected values) is the host-only `reference` module, shared by the host
//! program (`intrinsics-host`) and the emulator tests.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

#[cfg(not(target_arch = "nvptx64"))]
pub mod reference;

use device_std::atomic;
use device_std::warp::{self, ReduxOp, FULL_MASK};
use device_std::{
    kernel, thread, BlockIndex1D, DisjointSlice, DynamicSharedArray, Index2D, Runtime2DIndex,
    SharedArray, SharedPtr,
};

/// Words `thread_ids` writes per thread.
pub const ID_WORDS: usize = 16;
/// Words `warp_ops` writes per thread.
pub const WARP_WORDS: usize = 48;
/// Words `warp_shuffle_widths` writes per thread.
pub const WIDTH_WORDS: usize = 60;
/// Segment widths `warp_shuffle_widths` runs, `1 << i` for `i < 6`.
pub const WIDTHS: usize = 6;
/// First word of `warp_shuffle_widths`' shuffles with `b >= 32`.
pub const WIDTH_HIGH_B_AT: usize = 8 * WIDTHS;
/// First word of `warp_shuffle_widths`' partial-mask shuffles.
pub const WIDTH_PARTIAL_AT: usize = WIDTH_HIGH_B_AT + 5;
/// First word of `warp_shuffle_widths`' shuffles with a width known only
/// at run time.
pub const WIDTH_RUNTIME_AT: usize = WIDTH_PARTIAL_AT + 3;
/// Counter slots of `atomics` (each 8 bytes, reinterpreted per test).
pub const ATOMIC_SLOTS: usize = 40;
/// Row stride of the `index_2d_fill` output.
pub const STRIDE_2D: usize = 100;
/// Words `barriers` writes per block.
pub const BARRIER_WORDS: usize = 3;
/// Words `dyn_shared` writes per block (leader) before the per-thread part.
pub const DYN_HEADER: usize = 8;
/// Byte offset of the 128-aligned `f64` array in `dyn_shared`.
pub const DYN_OFFSET_B: usize = 1024;
/// Byte offset of the 1024-aligned `u8` array in `dyn_shared`.
pub const DYN_OFFSET_C: usize = 4096;
/// Values `message_passing` publishes.
pub const MESSAGE_LEN: usize = 32;
/// Spin iterations after which `message_passing` gives up.
pub const SPIN_LIMIT: u32 = 1 << 22;

/// Every coordinate register of the calling thread, at `16 * index_1d`:
/// `tid.xyz, ctaid.xyz, ntid.xyz, nctaid.xyz, lane, warp, thread_in_block,
/// 0xC0FFEE`.
///
/// # Safety
/// `out` holds `16 *` (threads of the launch) `u32`s.
#[kernel]
pub unsafe fn thread_ids(out: *mut u32) {
    use thread::*;
    let k = index_1d().get();
    let words = [
        threadIdx_x(),
        threadIdx_y(),
        threadIdx_z(),
        blockIdx_x(),
        blockIdx_y(),
        blockIdx_z(),
        blockDim_x(),
        blockDim_y(),
        blockDim_z(),
        gridDim_x(),
        gridDim_y(),
        gridDim_z(),
        lane_id(),
        warp_id(),
        thread_in_block(),
        0xC0FFEE,
    ];
    let mut w = 0;
    while w < ID_WORDS {
        // SAFETY: `k` is unique per thread (index_1d) and the caller sized `out`.
        unsafe { out.add(k * ID_WORDS + w).write(words[w]) };
        w += 1;
    }
}

/// `out[row * 100 + col] = row << 16 | col` through `index_2d::<100>()`.
#[kernel]
pub fn index_2d_fill(mut out: DisjointSlice<u32, Index2D<STRIDE_2D>>) {
    if let Some(i) = thread::index_2d::<STRIDE_2D>() {
        let v = ((i.row() as u32) << 16) | i.col() as u32;
        if let Some(o) = out.get_mut(&i) {
            *o = v;
        }
    }
}

/// `out[row * stride + col] = row << 16 | col` through `index_2d_runtime`.
#[kernel]
pub fn index_2d_runtime_fill(mut out: DisjointSlice<u32, Runtime2DIndex>, stride: u32) {
    // SAFETY: `stride` is a kernel parameter, the same in every thread.
    if let Some(i) = unsafe { thread::index_2d_runtime(stride as usize) } {
        let v = ((i.row() as u32) << 16) | i.col() as u32;
        if let Some(o) = out.get_mut(&i) {
            *o = v;
        }
    }
}

/// Shuffles, votes, match, redux and masks; 48 words per thread at
/// `48 * index_1d` (layout in `reference::warp_ops`). 1D launch, full warps.
///
/// # Safety
/// `out` holds `48 *` (threads) `u64`s; `input` holds one value per thread.
#[kernel]
pub unsafe fn warp_ops(input: &[u32], out: *mut u64) {
    let k = thread::index_1d().get();
    let v = input[k];
    let lane = thread::lane_id();
    let mut o = [0u64; WARP_WORDS];
    let src = (lane * 7 + 3) % 32;

    macro_rules! shuffles {
        ($at:expr, $x:expr, $bits:expr) => {{
            let x = $x;
            o[$at] = $bits(warp::shfl_sync(FULL_MASK, x, src));
            o[$at + 1] = $bits(warp::shfl_up_sync(FULL_MASK, x, 3));
            o[$at + 2] = $bits(warp::shfl_down_sync(FULL_MASK, x, 5));
            o[$at + 3] = $bits(warp::shfl_xor_sync(FULL_MASK, x, 9));
        }};
    }
    shuffles!(0, v, |x: u32| x as u64);
    shuffles!(4, v as i32, |x: i32| x as u32 as u64);
    shuffles!(8, v as f32 / 3.0, |x: f32| x.to_bits() as u64);
    shuffles!(12, ((v as u64) << 32) | (v as u64 * 7), |x: u64| x);
    shuffles!(16, -(v as i64) * 1_000_003, |x: i64| x as u64);
    shuffles!(20, v as f64 * 0.5 + 0.25, |x: f64| x.to_bits());

    o[24] = warp::all_sync(FULL_MASK, v & 0xF != 0xF) as u64;
    o[25] = warp::any_sync(FULL_MASK, v.is_multiple_of(64)) as u64;
    o[26] = warp::ballot_sync(FULL_MASK, v & 1 == 1) as u64;
    o[27] = warp::match_any_sync(FULL_MASK, v % 4) as u64;
    o[28] = warp::match_any_sync(FULL_MASK, v as u64 % 3) as u64;
    o[29] = warp::match_all_sync(FULL_MASK, v).map_or(0xDEAD, u64::from);
    o[30] = warp::match_all_sync(FULL_MASK, v as f64).map_or(0xDEAD, u64::from);
    o[31] = warp::redux_sync(ReduxOp::Add, FULL_MASK, v) as u64;
    o[32] = warp::redux_sync(ReduxOp::Min, FULL_MASK, v) as u64;
    o[33] = warp::redux_sync(ReduxOp::Max, FULL_MASK, v) as u64;
    o[34] = warp::redux_sync(ReduxOp::And, FULL_MASK, v) as u64;
    o[35] = warp::redux_sync(ReduxOp::Or, FULL_MASK, v) as u64;
    o[36] = warp::redux_sync(ReduxOp::Xor, FULL_MASK, v) as u64;
    o[37] = warp::redux_sync(ReduxOp::Min, FULL_MASK, v as i32) as u32 as u64;
    o[38] = warp::redux_sync(ReduxOp::Max, FULL_MASK, v as i32) as u32 as u64;
    o[39] = warp::activemask() as u64;
    if lane < 10 {
        o[40] = warp::activemask() as u64;
    }
    o[41] = lane as u64;
    o[42] = thread::warp_id() as u64;
    // Lanes 0..16 only: a partial mask.
    if lane < 16 {
        o[43] = warp::redux_sync(ReduxOp::Add, 0xFFFF, v) as u64;
        o[44] = warp::shfl_xor_sync(0xFFFF, v, 1) as u64;
    }
    let mut w = 0;
    while w < WARP_WORDS {
        // SAFETY: `k` is unique per thread; the caller sized `out`.
        unsafe { out.add(k * WARP_WORDS + w).write(o[w]) };
        w += 1;
    }
}

/// The `width` shuffles; 60 words per thread at `60 * index_1d`, of
/// `x = input[index_1d]` (layout in `reference::warp_shuffle_widths`):
/// for each width `1 << i` (`i < 6`), at `8 * i`, `shfl_sync_width` from lane
/// `5 * lane + 3`, `shfl_up_sync_width` by 3, `shfl_down_sync_width` by 5 and
/// `shfl_xor_sync_width` with 9, of `x as u32` and then of `x as i64`; at 48,
/// five shuffles whose `b` is 32 or more (only `b % 32` counts); at 53,
/// three under mask `0xFFFF` (lanes 16.. leave 0); at 56, the four of
/// `x as u32` again with width `1 << (blockIdx.x % 6)`, computed at run
/// time. 1D launch, full warps.
///
/// # Safety
/// `out` holds `60 *` (threads) `u64`s; `input` holds one value per thread.
#[kernel]
pub unsafe fn warp_shuffle_widths(input: &[u64], out: *mut u64) {
    let k = thread::index_1d().get();
    let x = input[k];
    let lane = thread::lane_id();
    let mut o = [0u64; WIDTH_WORDS];
    let src = lane * 5 + 3;
    let mut i = 0;
    while i < WIDTHS {
        let w = 1 << i;
        let (v, at) = (x as u32, 8 * i);
        o[at] = warp::shfl_sync_width(FULL_MASK, v, src, w) as u64;
        o[at + 1] = warp::shfl_up_sync_width(FULL_MASK, v, 3, w) as u64;
        o[at + 2] = warp::shfl_down_sync_width(FULL_MASK, v, 5, w) as u64;
        o[at + 3] = warp::shfl_xor_sync_width(FULL_MASK, v, 9, w) as u64;
        let v = x as i64;
        o[at + 4] = warp::shfl_sync_width(FULL_MASK, v, src, w) as u64;
        o[at + 5] = warp::shfl_up_sync_width(FULL_MASK, v, 3, w) as u64;
        o[at + 6] = warp::shfl_down_sync_width(FULL_MASK, v, 5, w) as u64;
        o[at + 7] = warp::shfl_xor_sync_width(FULL_MASK, v, 9, w) as u64;
        i += 1;
    }
    let (v, at) = (x as u32, WIDTH_HIGH_B_AT);
    o[at] = warp::shfl_up_sync_width(FULL_MASK, v, 35, 8) as u64;
    o[at + 1] = warp::shfl_down_sync_width(FULL_MASK, v, 37, 16) as u64;
    o[at + 2] = warp::shfl_xor_sync_width(FULL_MASK, v, 41, 16) as u64;
    o[at + 3] = warp::shfl_sync_width(FULL_MASK, v, 70, 4) as u64;
    o[at + 4] = warp::shfl_down_sync(FULL_MASK, v, 33) as u64;
    // Lanes 0..16 only: segments inside the mask.
    if lane < 16 {
        o[WIDTH_PARTIAL_AT] = warp::shfl_xor_sync_width(0xFFFF, v, 4, 8) as u64;
        o[WIDTH_PARTIAL_AT + 1] = warp::shfl_down_sync_width(0xFFFF, v, 6, 16) as u64;
        o[WIDTH_PARTIAL_AT + 2] = warp::shfl_up_sync_width(0xFFFF, v, 1, 4) as u64;
    }
    let (w, at) = (
        1 << (thread::blockIdx_x() % WIDTHS as u32),
        WIDTH_RUNTIME_AT,
    );
    o[at] = warp::shfl_sync_width(FULL_MASK, v, src, w) as u64;
    o[at + 1] = warp::shfl_up_sync_width(FULL_MASK, v, 3, w) as u64;
    o[at + 2] = warp::shfl_down_sync_width(FULL_MASK, v, 5, w) as u64;
    o[at + 3] = warp::shfl_xor_sync_width(FULL_MASK, v, 9, w) as u64;
    let mut w = 0;
    while w < WIDTH_WORDS {
        // SAFETY: `k` is unique per thread; the caller sized `out`.
        unsafe { out.add(k * WIDTH_WORDS + w).write(o[w]) };
        w += 1;
    }
}

/// Slot `i` of the counters, as a `T` (every slot is 8 bytes, 8-aligned).
#[inline(always)]
fn slot<T>(counters: *mut u64, i: usize) -> *mut T {
    counters.wrapping_add(i).cast()
}

/// Every atomic operation under contention from every thread; the host
/// initialises the 40 slots and checks the exact totals.
///
/// # Safety
/// `counters` holds 40 `u64`s accessed only atomically during the launch;
/// `vals` one value per thread. 1D launch, any block size ≥ 1.
#[kernel]
pub unsafe fn atomics(vals: &[u32], counters: *mut u64) {
    use atomic::*;
    use Ordering::*;
    use Scope::*;
    let k = thread::index_1d().get();
    let v = vals[k];
    let c = counters;
    let shared_u32 = SharedArray::<u32, 8>::new();
    let shared_f64 = SharedArray::<f64, 1>::new();
    if thread::threadIdx_x() == 0 {
        shared_u32.write(0, 0);
        shared_u32.write(1, 0);
        shared_u32.write(2, 0);
        shared_u32.write(3, 0);
        shared_u32.write(4, 0);
        shared_u32.write(5, 0);
        shared_f64.write(0, 0.0);
    }
    thread::sync_threads();
    // SAFETY (whole block): every slot is valid, 8-aligned, and accessed only
    // through these atomics; the shared pointers are in bounds.
    unsafe {
        fetch_add(slot::<u32>(c, 0), 1, Relaxed, Gpu);
        fetch_add(slot::<u64>(c, 1), v as u64, AcqRel, Gpu);
        fetch_add(slot::<i32>(c, 2), -((v % 100) as i32), Release, Sys);
        fetch_add(slot::<i64>(c, 3), v as i64 - (1 << 31), Acquire, Gpu);
        fetch_add(slot::<f32>(c, 4), 1.0, Relaxed, Gpu);
        fetch_add(slot::<f64>(c, 5), v as f64, Relaxed, Sys);
        fetch_min(slot::<u32>(c, 6), v, Relaxed, Sys);
        fetch_max(slot::<u32>(c, 7), v, Relaxed, Gpu);
        fetch_min(slot::<i32>(c, 8), v as i32, AcqRel, Gpu);
        fetch_max(slot::<i32>(c, 9), v as i32, AcqRel, Gpu);
        fetch_min(slot::<u64>(c, 10), v as u64 * 3 + 1, Relaxed, Gpu);
        fetch_max(slot::<u64>(c, 11), v as u64 * 3 + 1, Relaxed, Gpu);
        fetch_min(slot::<i64>(c, 12), -(v as i64), Relaxed, Gpu);
        fetch_max(slot::<i64>(c, 13), -(v as i64), Relaxed, Gpu);
        fetch_min(slot::<f32>(c, 14), v as f32 / 7.0, Relaxed, Gpu);
        fetch_max(slot::<f32>(c, 15), v as f32 / 7.0, Relaxed, Gpu);
        fetch_min(slot::<f64>(c, 16), v as f64 / 7.0, AcqRel, Gpu);
        fetch_max(slot::<f64>(c, 17), v as f64 / 7.0, AcqRel, Gpu);
        fetch_or(slot::<u32>(c, 18), 1 << (v % 32), Relaxed, Gpu);
        fetch_and(slot::<u32>(c, 19), !(1 << (v % 29)), Relaxed, Gpu);
        fetch_xor(slot::<u32>(c, 20), v, Relaxed, Gpu);
        fetch_or(slot::<u64>(c, 21), 1 << (v % 61), Relaxed, Gpu);
        fetch_xor(slot::<i64>(c, 22), (v as i64) << 20, Relaxed, Gpu);
        // An increment built from compare_exchange.
        let p = slot::<u32>(c, 23);
        let mut seen = compare_exchange(p, 0, 0, Relaxed, Gpu);
        loop {
            let got = compare_exchange(p, seen, seen + 1, AcqRel, Gpu);
            if got == seen {
                break;
            }
            seen = got;
        }
        // swap: Σ returned + final = initial + Σ k.
        let old = swap(slot::<u32>(c, 24), k as u32, AcqRel, Gpu);
        fetch_add(slot::<u64>(c, 25), old as u64, Relaxed, Gpu);
        let old = swap(slot::<f64>(c, 31), k as f64, Relaxed, Gpu);
        fetch_add(slot::<f64>(c, 30), old, Relaxed, Gpu);

        // Shared memory, CTA scope.
        shared::fetch_add(shared_u32.ptr(0), 1, Relaxed, Cta);
        shared::fetch_max(shared_u32.ptr(1), v, Relaxed, Cta);
        shared::fetch_or(shared_u32.ptr(2), 1 << (v % 32), Relaxed, Cta);
        shared::fetch_xor(shared_u32.ptr(3), v, Relaxed, Cta);
        let p: SharedPtr<u32> = shared_u32.ptr(4);
        let mut seen = shared::compare_exchange(p, 0, 0, Relaxed, Cta);
        loop {
            let got = shared::compare_exchange(p, seen, seen + 2, AcqRel, Cta);
            if got == seen {
                break;
            }
            seen = got;
        }
        shared::fetch_add(shared_f64.ptr(0), 0.5, Relaxed, Cta);

        // Reductions (`red`: no old value): global, generic, shared; an acquire one
        // runs as `atom`.
        global::add(slot::<u32>(c, 34), 1, Relaxed, Gpu);
        add(slot::<u64>(c, 35), v as u64, Release, Sys);
        global::add(slot::<f64>(c, 36), v as f64, Relaxed, Gpu);
        global::add(slot::<i32>(c, 37), -((v % 100) as i32), Acquire, Gpu);
        shared::add(shared_u32.ptr(5), 2, Relaxed, Cta);
    }
    thread::sync_threads();
    if thread::threadIdx_x() == 0 {
        // SAFETY: as above.
        unsafe {
            fetch_add(slot::<u64>(c, 26), shared_u32.read(0) as u64, Relaxed, Gpu);
            fetch_max(slot::<u32>(c, 27), shared_u32.read(1), Relaxed, Gpu);
            fetch_or(slot::<u32>(c, 28), shared_u32.read(2), Relaxed, Gpu);
            fetch_xor(slot::<u32>(c, 29), shared_u32.read(3), Relaxed, Gpu);
            fetch_add(slot::<u64>(c, 32), shared_u32.read(4) as u64, Relaxed, Gpu);
            fetch_add(slot::<f64>(c, 33), shared_f64.read(0), Relaxed, Gpu);
            global::add(slot::<u64>(c, 38), shared_u32.read(5) as u64, Relaxed, Gpu);
        }
    }
}

/// Block barriers: per block `[count(v odd), and(v < 2^31), or(v % 1000 == 0)]`
/// at `3 * block`; per thread, the value of the thread mirrored in the block
/// (through a shared array and `sync_threads`), and of the lane mirrored in
/// the warp (through `sync_warp`).
///
/// # Safety
/// `per_block` holds 3 `u32`s per block; 1D launch with whole warps.
#[kernel]
pub unsafe fn barriers(
    vals: &[u32],
    per_block: *mut u32,
    mut mirrored: DisjointSlice<u32>,
    mut lane_mirrored: DisjointSlice<u32>,
) {
    let i = thread::index_1d();
    let v = vals[i.get()];
    let count = thread::sync_threads_count(v % 2 == 1);
    let all = thread::sync_threads_and(v < (1 << 31));
    let any = thread::sync_threads_or(v.is_multiple_of(1000));
    if let Some(b) = thread::block_leader_index::<'_>() {
        let at = b.get() * BARRIER_WORDS;
        // SAFETY: one leader per block; the caller sized `per_block`.
        unsafe {
            per_block.add(at).write(count);
            per_block.add(at + 1).write(all as u32);
            per_block.add(at + 2).write(any as u32);
        }
    }
    let tile = SharedArray::<u32, 1024>::new();
    let t = thread::threadIdx_x() as usize;
    let n = thread::blockDim_x() as usize;
    tile.write(t, v);
    thread::sync_threads();
    let mirror = tile.read(n - 1 - t);
    let warp_tile = SharedArray::<u32, 1024>::new();
    warp_tile.write(t, v ^ 0x5555);
    thread::sync_warp(FULL_MASK);
    let lane = thread::lane_id() as usize;
    let lane_mirror = warp_tile.read(t - lane + (31 - lane));
    if let Some(o) = mirrored.get_mut(&i) {
        *o = mirror;
    }
    if let Some(o) = lane_mirrored.get_mut(&i) {
        *o = lane_mirror;
    }
}

/// Dynamic shared memory at alignments 16, 128 and 1024, and a static
/// array aligned to 1024. The block leader writes `[a % 16, b % 128,
/// c % 1024, s % 1024, a.len(), b.len(), c.len(), dynamic_smem_size]`
/// (shared-window addresses) at `block * (8 + 3 * blockDim)`; then each
/// thread writes what the mirrored thread stored in each array.
///
/// # Safety
/// `out` holds `gridDim * (8 + 3 * blockDim)` `u32`s; `shared_mem_bytes` is
/// at least `4096 + blockDim`, and `blockDim <= 128`.
#[kernel]
pub unsafe fn dyn_shared(out: *mut u32) {
    let a = DynamicSharedArray::<u32, 16>::get();
    let b = DynamicSharedArray::<f64, 128>::offset(DYN_OFFSET_B);
    let c = DynamicSharedArray::<u8, 1024>::offset(DYN_OFFSET_C);
    let s = SharedArray::<u32, 8, 1024>::new();
    let t = thread::threadIdx_x() as usize;
    let n = thread::blockDim_x() as usize;
    let base = thread::blockIdx_x() as usize * (DYN_HEADER + 3 * n);
    if t == 0 {
        let words = [
            SharedPtr::from_generic(a.as_mut_ptr()).addr() % 16,
            SharedPtr::from_generic(b.as_mut_ptr()).addr() % 128,
            SharedPtr::from_generic(c.as_mut_ptr()).addr() % 1024,
            s.ptr(0).addr() % 1024,
            a.len() as u32,
            b.len() as u32,
            c.len() as u32,
            device_std::dynamic_shared::dynamic_smem_size(),
        ];
        let mut w = 0;
        while w < DYN_HEADER {
            // SAFETY: the caller sized `out`; one leader per block.
            unsafe { out.add(base + w).write(words[w]) };
            w += 1;
        }
    }
    a.write(t, t as u32 * 3);
    b.write(t, t as f64 * 0.5);
    c.write(t, t as u8 ^ 0xA5);
    thread::sync_threads();
    let m = n - 1 - t;
    // SAFETY: each thread writes its own three words of its block's part.
    unsafe {
        out.add(base + DYN_HEADER + 3 * t).write(a.read(m));
        out.add(base + DYN_HEADER + 3 * t + 1)
            .write((b.read(m) * 2.0) as u32);
        out.add(base + DYN_HEADER + 3 * t + 2)
            .write(c.read(m) as u32);
    }
}

/// Message passing between two blocks: block 0 publishes
/// `data[i] = 3 i + 1` (i < 32), fences, and raises `flag` with a release
/// exchange; block 1 spins on an acquire read of `flag` (with `nanosleep`)
/// and sums `data`. `result = [sum, spins, gave_up]`. Launch: 2 blocks of 1
/// thread.
///
/// # Safety
/// `data` holds 32 `u32`s, `flag` one (zeroed), `result` three.
#[kernel]
pub unsafe fn message_passing(data: *mut u32, flag: *mut u32, result: *mut u32) {
    use atomic::*;
    if thread::blockIdx_x() == 0 {
        let mut i = 0;
        while i < MESSAGE_LEN {
            // SAFETY: the caller sized `data`; only this thread writes it.
            unsafe { data.add(i).write_volatile(3 * i as u32 + 1) };
            i += 1;
        }
        thread::threadfence_block();
        thread::threadfence();
        thread::threadfence_system();
        // SAFETY: `flag` is valid and accessed only atomically.
        unsafe { swap(flag, 1, Ordering::Release, Scope::Gpu) };
    } else {
        let mut spins = 0;
        // SAFETY: as above.
        while unsafe { fetch_or(flag, 0, Ordering::Acquire, Scope::Gpu) } == 0 {
            spins += 1;
            if spins == SPIN_LIMIT {
                break;
            }
            thread::nanosleep(100);
        }
        thread::threadfence();
        let mut sum = 0u32;
        let mut i = 0;
        while i < MESSAGE_LEN {
            // SAFETY: the caller sized `data`; the acquire above orders this
            // read after block 0's writes.
            sum += unsafe { data.add(i).read_volatile() };
            i += 1;
        }
        // SAFETY: the caller sized `result`; one writer.
        unsafe {
            result.write(sum);
            result.add(1).write(spins);
            result.add(2).write((spins == SPIN_LIMIT) as u32);
        }
    }
}

/// Per-block leader output through a `BlockIndex1D` witness: `out[b] = b`.
#[kernel]
pub fn block_ids(mut out: DisjointSlice<u32, BlockIndex1D>) {
    if let Some(b) = thread::block_leader_index() {
        let v = b.get() as u32;
        if let Some(o) = out.get_mut(&b) {
            *o = v;
        }
    }
}

/// `device_println!` through `vprintf`: each block's leader prints one line,
/// `hello from block B of G, tag T`. The host checks nothing here; the GPU
/// script looks for the lines in the program's output.
///
/// Tag 13 fails an assertion: in a `--panic abort` build the panic handler
/// prints `panicked at FILE:LINE:COL: tag 13 is refused` through `vprintf`
/// and traps; in the default build it only traps.
#[kernel]
pub fn hello(tag: u32) {
    assert!(tag != 13, "tag 13 is refused");
    if thread::thread_in_block() == 0 {
        device_std::device_println!(
            "hello from block %u of %u, tag %u",
            thread::blockIdx_x(),
            thread::gridDim_x(),
            tag
        );
    }
}

/// Reads element `index` of a 64-element `SharedArray` into every thread's output.
/// Past the end (`index >= 64`) the launch traps after printing `SharedArray index I
/// out of bounds for length 64 at FILE:LINE:COL`, this line's location, in every
/// build (the host's `--oob-demo`).
#[kernel]
pub fn shared_index(index: u32, mut out: DisjointSlice<u32>) {
    let tile = SharedArray::<u32, 64>::new();
    let t = thread::threadIdx_x() as usize;
    if t < 64 {
        tile.write(t, t as u32);
    }
    thread::sync_threads();
    let v = tile.read(index as usize);
    if let Some((o, _)) = out.get_mut_indexed() {
        *o = v;
    }
}
