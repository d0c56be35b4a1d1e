//! Rust kernels of the GPU benchmark suite (`benches/gpu`). Each mirrors the
//! CUDA C++ kernel of the same name in `benches/gpu/reference.cu`: the same
//! algorithm, launch shape and memory access pattern, written with
//! device-std's safe surface where it has one.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

use device_std::atomic::{self, Ordering::Relaxed, Scope};
use device_std::ldg::{ldg, ldg_unchecked};
use device_std::vector::{
    grid_stride, split_aligned, split_vectors, split_vectors_or_tail, F32x4, U16x8, U8x16,
};
use device_std::{kernel, math, thread, warp, DisjointSlice, DynamicSharedArray, SharedArray};

mod softmax_wide;
pub use softmax_wide::*;

const FULL: u32 = 0xffff_ffff;

/// `#pragma unroll` for a constant trip count: `unroll!(k in [0, 1, 2] => body)`
/// expands `body` once per listed value, with `k` a `usize` constant in each copy.
macro_rules! unroll {
    ($k:ident in [$($v:literal),*] => $body:block) => {
        $({
            const $k: usize = $v;
            $body
        })*
    };
}

/// Vector `i` of the output's body, read from an input whose 16-byte
/// alignment differs from the output's: the same four elements one by one.
#[inline(always)]
fn unaligned_vec(s: &[f32], head: usize, i: usize) -> F32x4 {
    let k = head + 4 * i;
    F32x4([s[k], s[k + 1], s[k + 2], s[k + 3]])
}

/// The scalar parts of an output split by `split_aligned_mut`: `f(k, out)` for
/// every element of the unaligned head and tail, `k` its index in the whole
/// slice of `n` elements, over a grid-stride loop.
#[inline(always)]
fn for_each_scalar(
    head: &mut DisjointSlice<f32>,
    tail: &mut DisjointSlice<f32>,
    n: usize,
    f: impl Fn(usize, &mut f32),
) {
    for_each_from(head, 0, &f);
    let t0 = n - tail.len();
    for_each_from(tail, t0, &f);
}

/// `f(k0 + i, out)` for every element `i` of `part`, over a grid-stride loop.
#[inline(always)]
fn for_each_from(part: &mut DisjointSlice<f32>, k0: usize, f: impl Fn(usize, &mut f32)) {
    for i in grid_stride(part.len()) {
        let k = k0 + i.get();
        if let Some(out) = part.get_mut(&i) {
            f(k, out);
        }
    }
}

/// `c = a + b` over 16-byte vectors: a grid-stride loop as nvcc's `vecadd_ref`, then
/// the last `n % 4` elements. Any 1D launch. `a`, `b` at least as long as `c` (panics
/// otherwise); all three start 16-byte aligned, as nvcc's twin requires too (every
/// cuMemAlloc buffer does): `slice_align = 16` has the loader (and the emulator) refuse
/// any other launch, so the kernel tests no alignment.
#[kernel(dims = 1, slice_align = 16)]
pub fn vecadd(a: &[f32], b: &[f32], c: DisjointSlice<f32>) {
    let n = c.len();
    assert!(
        (a.len() >= n) & (b.len() >= n),
        "vecadd: `a` or `b` shorter than `c`"
    );
    let (a, b) = (&a[..n], &b[..n]);
    // The splits succeed (the alignment is declared), and all three vector parts are
    // `n / 4` long: no branch is left but the loop's.
    if let (Some((a4, _)), Some((b4, _)), Ok((mut body, mut tail))) = (
        split_vectors::<F32x4>(a),
        split_vectors::<F32x4>(b),
        c.split_vectors_mut::<F32x4>(),
    ) {
        for i in grid_stride(body.len()) {
            let k = i.get();
            if let Some(out) = body.get_mut(&i) {
                *out = a4[k].zip_with(b4[k], |x, y| x + y);
            }
        }
        let t0 = n - tail.len();
        for_each_from(&mut tail, t0, |k, out| *out = a[k] + b[k]);
    }
}

/// `y = alpha * x + y`, shaped like [`vecadd`] (the aligned case first). `x` at least
/// as long as `y`.
#[kernel(dims = 1)]
pub fn saxpy(alpha: f32, x: &[f32], mut y: DisjointSlice<f32>) {
    let n = y.len();
    // As in `vecadd`: both buffers 16-byte aligned and `x` long enough, one test.
    let aligned = (x.as_ptr() as usize | y.as_mut_ptr() as usize).is_multiple_of(16);
    let long = (x.len() >= n) & (x.len() / 4 >= n / 4);
    let y = match (aligned & long, split_vectors::<F32x4>(x)) {
        (true, Some((x4, _))) if x4.len() >= n / 4 => match y.split_vectors_mut::<F32x4>() {
            Ok((mut body, mut tail)) => {
                let x4 = &x4[..body.len()];
                for i in grid_stride(body.len()) {
                    let k = i.get();
                    if let Some(out) = body.get_mut(&i) {
                        *out = x4[k].zip_with(*out, |x, y| alpha * x + y);
                    }
                }
                let t0 = n - tail.len();
                for_each_from(&mut tail, t0, |k, out| *out += alpha * x[k]);
                return;
            }
            Err(y) => y,
        },
        _ => y,
    };
    let x = &x[..n];
    let (mut head, mut body, mut tail) = y.split_aligned_mut::<F32x4>();
    let (xh, x4, _) = split_aligned::<F32x4>(x);
    let h = head.len();
    if xh.len() == h {
        for i in grid_stride(body.len()) {
            let k = i.get();
            if let (Some(out), Some(v)) = (body.get_mut(&i), x4.get(k)) {
                *out = v.zip_with(*out, |x, y| alpha * x + y);
            }
        }
    } else {
        for i in grid_stride(body.len()) {
            let k = i.get();
            if let Some(out) = body.get_mut(&i) {
                *out = unaligned_vec(x, h, k).zip_with(*out, |x, y| alpha * x + y);
            }
        }
    }
    for_each_scalar(&mut head, &mut tail, n, |k, out| *out += alpha * x[k]);
}

/// `y = alpha * x` with plain 16-byte loads and stores over a grid-stride loop (the
/// shape of [`saxpy`]): the baseline [`bulk_scale`] is compared with. `x` at least as
/// long as `y`.
#[kernel(dims = 1)]
pub fn scale(alpha: f32, x: &[f32], y: DisjointSlice<f32>) {
    let n = y.len();
    let x = &x[..n];
    let (mut head, mut body, mut tail) = y.split_aligned_mut::<F32x4>();
    let (xh, x4, _) = split_aligned::<F32x4>(x);
    let h = head.len();
    if xh.len() == h {
        for i in grid_stride(body.len()) {
            let k = i.get();
            if let (Some(out), Some(v)) = (body.get_mut(&i), x4.get(k)) {
                *out = v.map(|v| alpha * v);
            }
        }
    } else {
        for i in grid_stride(body.len()) {
            let k = i.get();
            if let Some(out) = body.get_mut(&i) {
                *out = unaligned_vec(x, h, k).map(|v| alpha * v);
            }
        }
    }
    for_each_scalar(&mut head, &mut tail, n, |k, out| *out = alpha * x[k]);
}

/// Threads per block of [`bulk_scale`], and 16-byte vectors per round.
const BULK_TB: usize = 256;

/// `y = alpha * x` through shared memory with bulk copies (sm_90): each block
/// of 256 threads (1D grid, 1D blocks, a trap otherwise) streams the 4 KiB
/// rounds `k * grid + block` of `x`'s 16-byte vectors through a ring of `S`
/// shared stages of `R` rounds each; a stage is filled by `R` `cp.async.bulk`
/// copies that complete on its mbarrier, every thread scales its vector of
/// each round and stores it, and thread 0 refills the stage once the block's
/// barrier says every thread has read it. `x` at least as long as `y`; when
/// `x` and `y` differ in 16-byte alignment, a plain grid-stride loop does the
/// work instead.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
#[inline(always)]
fn bulk_scale_ring<const R: usize, const S: usize, const V: usize>(
    alpha: f32,
    x: &[f32],
    y: DisjointSlice<f32>,
) {
    use device_std::{bulk, Mbarriers, Phases};
    let n = y.len();
    let x = &x[..n];
    let (mut head, mut body, mut tail) = y.split_aligned_mut::<F32x4>();
    let (xh, x4, _) = split_aligned::<F32x4>(x);
    let h = head.len();
    if xh.len() != h {
        for i in grid_stride(body.len()) {
            let k = i.get();
            if let Some(out) = body.get_mut(&i) {
                *out = unaligned_vec(x, h, k).map(|v| alpha * v);
            }
        }
        for_each_scalar(&mut head, &mut tail, n, |k, out| *out = alpha * x[k]);
        return;
    }
    assert!(
        thread::block_size() as usize == BULK_TB
            && thread::gridDim_y() == 1
            && thread::gridDim_z() == 1
    );
    // `V` = `R * S * BULK_TB` vectors (a const generic expression is not allowed here).
    let stages = SharedArray::<F32x4, V, 128>::new();
    let full = Mbarriers::<S>::new(1);
    let mut phases = Phases::new();
    let nvec = body.len();
    let tid = thread::threadIdx_x() as usize;
    let step = thread::gridDim_x() as usize * BULK_TB;
    let first = thread::blockIdx_x() as usize * BULK_TB;
    let rounds = if first < nvec {
        (nvec - first).div_ceil(step)
    } else {
        0
    };
    let fills = rounds.div_ceil(R);
    // Fill `m` of the ring: rounds m * R .. m * R + R into stage m % S.
    let fill = |m: usize| {
        let s = m % S;
        let q0 = m * R;
        let count = R.min(rounds - q0);
        let last = first + (q0 + count - 1) * step;
        let bytes = ((count - 1) * BULK_TB + BULK_TB.min(nvec - last)) * 16;
        let bar = full.get(s);
        bar.arrive_expect_tx(bytes as u32);
        for j in 0..count {
            let start = first + (q0 + j) * step;
            let len = BULK_TB.min(nvec - start);
            bulk::load(&stages, (s * R + j) * BULK_TB, x4, start, len, &bar);
        }
    };
    if tid == 0 {
        for m in 0..fills.min(S) {
            fill(m);
        }
    }
    let mut mine = grid_stride(nvec);
    for m in 0..fills {
        let s = m % S;
        full.wait(s, &mut phases);
        for j in 0..R {
            if let Some(i) = mine.next() {
                let v = stages.read((s * R + j) * BULK_TB + tid);
                if let Some(out) = body.get_mut(&i) {
                    *out = v.map(|v| alpha * v);
                }
            }
        }
        thread::sync_threads();
        if tid == 0 && m + S < fills {
            fill(m + S);
        }
    }
    for_each_scalar(&mut head, &mut tail, n, |k, out| *out = alpha * x[k]);
}

/// [`bulk_scale_ring`] with 1 round per stage, 3 stages (12 KiB of shared memory). Any
/// 1D grid of 256-thread blocks is correct; the fastest measured on the H200 is a one-shot
/// grid of `n / 4096` blocks (4 rounds each), which the block scheduler retires and
/// refills in address order: 99–100% of the copy bandwidth, against 96% for the best
/// persistent grid (3 blocks per SM). Shapes tried: benches/LOG.md, "Bulk asynchronous copies".
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
#[kernel(dims = 1)]
pub fn bulk_scale(alpha: f32, x: &[f32], y: DisjointSlice<f32>) {
    bulk_scale_ring::<1, 3, { 3 * BULK_TB }>(alpha, x, y)
}

/// `out = inᵀ` with tensor copies (sm_90): `input` is a `rows × cols` row-major
/// matrix (map dims `[cols, rows]`), `output` its `cols × rows` transpose (map dims
/// `[rows, cols]`); both maps copy 64 × 64 boxes (16 KiB, rows of 256 bytes). Block
/// `(bx, by)` of a `(ceil(cols / 64), ceil(rows / 64))` grid of 32 × 8 threads (a trap
/// otherwise) loads the tile at `[64 bx, 64 by]` into shared memory (the copy engine
/// fills outside elements with zeros), transposes it into a second shared tile, and
/// stores that at `[64 by, 64 bx]` (the engine skips outside elements). Lane `l` of warp
/// `w` moves element `(row (l + k) % 64, column l + 32 h)` for `h` in 0..2 and
/// `k = w, w + 8, ...`: it reads bank `l` and writes bank `(l + k) % 32`, so neither
/// side has a bank conflict, though the copy engine wants both tiles dense.
/// The shapes tried: benches/LOG.md, "Transpose with tensor copies".
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
#[kernel(dims = 2)]
pub fn transpose_tma(
    input: device_std::tma::TensorMap<f32, 2, 64, 64>,
    output: device_std::tma::TensorMap<f32, 2, 64, 64>,
) {
    use device_std::tma::TensorMap;
    use device_std::{bulk, Mbarrier, Phase};
    assert!(thread::blockDim_x() == 32 && thread::blockDim_y() == 8 && thread::blockDim_z() == 1);
    let a = SharedArray::<f32, 4096, 128>::new();
    let b = SharedArray::<f32, 4096, 128>::new();
    let bar = Mbarrier::new(1);
    let mut phase = Phase::new();
    let (bx, by) = (
        64 * thread::blockIdx_x() as i32,
        64 * thread::blockIdx_y() as i32,
    );
    let (lane, warp) = (
        thread::threadIdx_x() as usize,
        thread::threadIdx_y() as usize,
    );
    let leader = lane == 0 && warp == 0;
    if leader {
        bar.arrive_expect_tx(TensorMap::<f32, 2, 64, 64>::BOX_BYTES);
        input.load(&a, [bx, by], &bar);
    }
    bar.wait(&mut phase);
    for h in 0..2 {
        let c = lane + 32 * h;
        let mut k = warp;
        while k < 64 {
            let r = (lane + k) % 64;
            b.write(c * 64 + r, a.read(r * 64 + c));
            k += 8;
        }
    }
    bulk::fence_proxy_async_shared();
    thread::sync_threads();
    if leader {
        // SAFETY: this block alone writes the output tile at [by, bx].
        unsafe { output.store(&b, [by, bx]) };
        bulk::commit_group();
        bulk::wait_group_read::<0>();
    }
}

/// Bins of the wide histograms: one per `u16` value (256 KiB of `u32` counts, more than
/// one CTA's shared memory holds).
pub const WIDE_BINS: usize = 1 << 16;
/// Bins per CTA of [`cluster_histogram_wide`] and per block of
/// [`histogram_wide_halves`]: half of them, 128 KiB of shared memory.
pub const WIDE_HALF: usize = WIDE_BINS / 2;
/// The dynamic shared memory of [`cluster_histogram_wide`] and
/// [`histogram_wide_halves`], bytes (more than the 48 KiB of static shared memory sm_90
/// allows a kernel).
pub const WIDE_SHARED_BYTES: u32 = (WIDE_HALF * 4) as u32;

/// The block's [`WIDE_HALF`] bins in its dynamic shared memory.
#[inline(always)]
fn wide_counts() -> SharedArray<u32, WIDE_HALF, 16> {
    DynamicSharedArray::<u32, 16>::get().array::<WIDE_HALF>(0)
}

/// `f(v)` for every `u16` of `data`, over a grid-stride loop of 16-byte vectors (the
/// unaligned head and tail one by one).
#[inline(always)]
fn for_each_u16(data: &[u16], mut f: impl FnMut(u16)) {
    let (head, body, tail) = split_aligned::<U16x8>(data);
    for i in grid_stride(body.len()) {
        let v = body[i.get()].0;
        unroll!(K in [0, 1, 2, 3, 4, 5, 6, 7] => {
            f(v[K]);
        });
    }
    for i in grid_stride(head.len()) {
        f(head[i.get()]);
    }
    for i in grid_stride(tail.len()) {
        f(tail[i.get()]);
    }
}

/// Adds this block's `counts` (bins `base ..`) into `bins`: one GPU-scope atomic per
/// non-zero bin.
#[inline(always)]
fn flush_counts<const N: usize, const A: usize>(
    counts: &SharedArray<u32, N, A>,
    bins: *mut u32,
    base: usize,
) {
    let mut b = thread::thread_in_block() as usize;
    let threads = thread::block_size() as usize;
    while b < N {
        let v = counts.read(b);
        if v != 0 {
            // SAFETY: the host passes WIDE_BINS u32 bins of global memory that only
            // atomics touch during the launch; base + b < WIDE_BINS.
            unsafe { atomic::global::add(bins.add(base + b), v, Relaxed, Scope::Gpu) };
        }
        b += threads;
    }
}

/// Zeroes `counts`, the block's threads striding over it.
#[inline(always)]
fn zero_counts<const N: usize, const A: usize>(counts: &SharedArray<u32, N, A>) {
    let mut b = thread::thread_in_block() as usize;
    let threads = thread::block_size() as usize;
    while b < N {
        counts.write(b, 0);
        b += threads;
    }
}

/// The 65,536-bin histogram of `data` into `bins` (added to; the host zeroes it) with
/// the bins split over a thread-block cluster: CTA rank `r` of each cluster of two
/// holds bins `32768 r ..` in 128 KiB of shared memory, every thread adds each value
/// to its bin in whichever CTA holds it (`atom.shared::cluster.add`, distributed shared
/// memory), and after a cluster barrier each CTA adds its non-zero bins into `bins`.
/// The bins are the block's 128 KiB of dynamic shared memory ([`WIDE_SHARED_BYTES`],
/// declared: a launch with `shared_mem_bytes == 0` gets it).
/// The input is read once. 1D launch, an even number of blocks (clusters of `(2, 1, 1)`,
/// compiled in); one block per SM (the shared memory). sm_90.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
#[allow(clippy::not_unsafe_ptr_arg_deref)] // the launch's contract, as `histogram`'s
#[kernel(cluster = (2, 1, 1), dynamic_shared = 131072, max_threads = 1024, dims = 1)]
pub fn cluster_histogram_wide(data: &[u16], bins: *mut u32) {
    use device_std::cluster;
    let local = wide_counts();
    zero_counts(&local);
    // Every CTA's bins are zeroed before any CTA counts into them.
    cluster::sync();
    let (low, high) = (local.in_cta(0), local.in_cta(1));
    for_each_u16(data, |v| {
        let owner = if (v as usize) < WIDE_HALF {
            &low
        } else {
            &high
        };
        owner.atomic_add(v as usize % WIDE_HALF, 1);
    });
    // No CTA flushes (or exits, freeing its bins) while another still counts into it.
    cluster::sync();
    flush_counts(&local, bins, cluster::cta_rank() as usize * WIDE_HALF);
}

/// The same histogram without clusters, the best one CTA can do when the bins do not fit
/// its shared memory: two passes, each counting the values of one half of the bins in
/// the block's 128 KiB (`atom.shared.add`, [`WIDE_SHARED_BYTES`], declared) over the
/// block's grid-stride share of the input, then adding its non-zero bins into `bins`; the
/// input is read twice. 1D launch, one block per SM. sm_90 (for the shared memory size;
/// the code is sm_70's).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
#[allow(clippy::not_unsafe_ptr_arg_deref)] // the launch's contract, as `histogram`'s
#[kernel(dynamic_shared = 131072, max_threads = 1024, dims = 2)]
pub fn histogram_wide_halves(data: &[u16], bins: *mut u32) {
    let local = wide_counts();
    for half in 0..2 {
        zero_counts(&local);
        thread::sync_threads();
        for_each_u16(data, |v| {
            let v = v as usize;
            if v / WIDE_HALF == half {
                // SAFETY: v % WIDE_HALF indexes the block's bins; only atomics touch them.
                unsafe { atomic::shared::add(local.ptr(v % WIDE_HALF), 1u32, Relaxed, Scope::Cta) };
            }
        });
        thread::sync_threads();
        flush_counts(&local, bins, half * WIDE_HALF);
        // Every thread has read its bins before the next pass zeroes them.
        thread::sync_threads();
    }
}

/// The same histogram straight into global memory: one GPU-scope atomic add per value
/// (`atomic::global::add`, a `red.global`: nothing comes back). Any 1D launch.
#[allow(clippy::not_unsafe_ptr_arg_deref)] // the launch's contract, as `histogram`'s
#[kernel(dims = 1)]
pub fn histogram_wide_global(data: &[u16], bins: *mut u32) {
    for_each_u16(data, |v| {
        // SAFETY: v < WIDE_BINS, the host's bins in global memory; only atomics touch
        // them.
        unsafe { atomic::global::add(bins.add(v as usize), 1u32, Relaxed, Scope::Gpu) };
    });
}

/// Sum of the 32 lanes' `v`, in every lane (butterfly shuffles).
#[inline(always)]
fn warp_sum(mut v: f32) -> f32 {
    let mut offset = 16;
    while offset > 0 {
        v += warp::shfl_down_sync(FULL, v, offset);
        offset /= 2;
    }
    v
}

/// `*out += sum(x)` (the host zeroes `*out`). 1D launch of up to 1024
/// threads per block: grid-stride 16-byte loads, warp shuffles, one shared
/// slot per warp, one atomic add per block.
// The pointer is the launch's contract (host-loader's launch is `unsafe`), not this function's.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
#[kernel(dims = 1)]
pub fn reduce_sum(x: &[f32], out: *mut f32) {
    let slots = SharedArray::<f32, 32>::new();
    // Branch-free: the loop's test is the only branch before the first load.
    let (body, tail) = split_vectors_or_tail::<F32x4>(x);
    let mut acc = 0.0f32;
    for i in grid_stride(body.len()) {
        let v = body[i.get()].0;
        acc += (v[0] + v[1]) + (v[2] + v[3]);
    }
    for i in grid_stride(tail.len()) {
        acc += tail[i.get()];
    }
    acc = warp_sum(acc);
    let (lane, warp_in_block) = (thread::lane_id() as usize, thread::warp_id() as usize);
    if lane == 0 {
        // `% 32`: a block has at most 1024 threads, so this is the warp's index, and
        // the slot needs no bounds check (whose panic path costs a stack frame).
        slots.write(warp_in_block % 32, acc);
    }
    thread::sync_threads();
    if warp_in_block == 0 {
        let warps = (thread::block_size() as usize).div_ceil(32);
        acc = warp_sum(if lane < warps { slots.read(lane) } else { 0.0 });
        if lane == 0 {
            // SAFETY: the host passes a valid global f32 that only atomics touch.
            unsafe { atomic::global::add(out, acc, Relaxed, Scope::Gpu) };
        }
    }
}

/// Transpose tile edge and rows per pass (block `(32, 8)`).
const TILE: usize = 32;
const ROWS: usize = 8;

/// `out = inᵀ` for an `n × n` matrix: block `(32, 8)`, grid `(n/32, n/32)`
/// (a partial edge tile is guarded), a 32×33 shared tile. Each thread issues
/// its four global loads before its shared stores (and its four shared loads
/// before its global stores), so the loads are in flight together. Whole
/// tiles take a straight-line path: one test per thread, then no
/// per-element checks; edge tiles check every element.
#[kernel(dims = 2)]
pub fn transpose(input: &[f32], mut output: DisjointSlice<f32>, n: u32) {
    let tile = SharedArray::<f32, { TILE * (TILE + 1) }>::new();
    let (tx, ty) = (thread::threadIdx_x(), thread::threadIdx_y());
    let (cx, cy) = (thread::blockIdx_x(), thread::blockIdx_y());
    let mut v = [0.0f32; TILE / ROWS];
    // A whole tile: this thread inside the 32 × 8 tile, both tile indices
    // below n / 32 (so the u32 sums below cannot overflow), and both slices
    // hold n * n elements. `exchange` traps on any other block shape.
    let whole_tiles = n / TILE as u32;
    let nn = n as usize * n as usize;
    let in_tile = tx < TILE as u32 && ty < ROWS as u32;
    let (tx, ty) = (tx as usize, ty as usize);
    if in_tile && cx < whole_tiles && cy < whole_tiles && input.len() >= nn && output.len() >= nn {
        let t32 = TILE as u32;
        let in_at = (cy * t32 + ty as u32) as usize * n as usize + (cx * t32) as usize + tx;
        let out_at = (cx * t32 + ty as u32) as usize * n as usize + (cy * t32) as usize + tx;
        let row_step = ROWS * n as usize;
        unroll!(Q in [0, 1, 2, 3] => {
            // SAFETY: row and column < n (whole tile), so the index < n * n <= len.
            v[Q] = unsafe { ldg_unchecked(input, in_at + Q * row_step) };
        });
        exchange(&tile, tx, ty, &mut v);
        unroll!(Q in [0, 1, 2, 3] => {
            // SAFETY: < n * n <= len as above; (block, thread, Q) maps
            // one-to-one onto the mirrored tile (the block is 32 × 8 × 1,
            // asserted in `exchange`), so no other thread writes it.
            unsafe { *output.get_unchecked_mut(out_at + Q * row_step) = v[Q] };
        });
    } else {
        let (n, bx, by) = (n as usize, cx as usize * TILE, cy as usize * TILE);
        unroll!(Q in [0, 1, 2, 3] => {
            let (r, c) = (by + ty + Q * ROWS, bx + tx);
            if r < n && c < n {
                v[Q] = ldg(input, r * n + c);
            }
        });
        exchange(&tile, tx, ty, &mut v);
        unroll!(Q in [0, 1, 2, 3] => {
            let (r, c) = (bx + ty + Q * ROWS, by + tx);
            if r < n && c < n && r * n + c < output.len() {
                // SAFETY: in bounds (checked); one writer per element as above.
                unsafe { *output.get_unchecked_mut(r * n + c) = v[Q] };
            }
        });
    }
}

/// The transpose's block shape `(32, 8, 1)`: every thread has `tx < 32`,
/// `ty < 8`, and no two threads share `(tx, ty)`. Launch-uniform (`%ntid`).
#[inline(always)]
fn block_is_tile_shaped() -> bool {
    thread::blockDim_x() == TILE as u32
        && thread::blockDim_y() == ROWS as u32
        && thread::blockDim_z() == 1
}

/// The transpose tile's shared-memory step: this thread's four values go to
/// its row of the 32 × 33 tile, and after the barrier its column comes back.
/// Traps unless the block is `(32, 8, 1)`.
#[inline(always)]
fn exchange(
    tile: &SharedArray<f32, { TILE * (TILE + 1) }>,
    tx: usize,
    ty: usize,
    v: &mut [f32; TILE / ROWS],
) {
    // Shared addresses, bounds-checked once: this thread's row of the tile
    // for the stores, its column for the loads.
    assert!(block_is_tile_shaped());
    let store_at = tile.ptr(ty * (TILE + 1) + tx);
    let load_at = tile.ptr(tx * (TILE + 1) + ty);
    // SAFETY (both loops): offsets stay inside the tile for tx < 32 and
    // ty < 8 (the block shape, asserted); each thread stores its own
    // elements, and loads read what the barrier published.
    unroll!(Q in [0, 1, 2, 3] => {
        unsafe { store_at.add(Q * ROWS * (TILE + 1)).write(v[Q]) };
    });
    thread::sync_threads();
    unroll!(Q in [0, 1, 2, 3] => {
        v[Q] = unsafe { load_at.add(Q * ROWS).read() };
    });
}

/// 256-bin histogram of `data` into `bins` (added to; the host zeroes it).
/// 1D launch: per-block shared bins with CTA-scope atomics over grid-stride
/// 16-byte loads, then one GPU-scope atomic add per non-zero bin.
// The pointer is the launch's contract (host-loader's launch is `unsafe`), not this function's.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
#[kernel(dims = 1)]
pub fn histogram(data: &[u8], bins: *mut u32) {
    let local = SharedArray::<u32, 256>::new();
    let tid = thread::thread_in_block() as usize;
    let threads = thread::block_size() as usize;
    let mut b = tid;
    while b < 256 {
        local.write(b, 0);
        b += threads;
    }
    thread::sync_threads();
    let count = |byte: u8| {
        // SAFETY: `byte` indexes one of the 256 bins; only atomics touch them.
        unsafe { atomic::shared::fetch_add(local.ptr(byte as usize), 1u32, Relaxed, Scope::Cta) };
    };
    // Branch-free: a misaligned buffer is counted byte by byte.
    let (body, tail) = split_vectors_or_tail::<U8x16>(data);
    for i in grid_stride(body.len()) {
        let v = body[i.get()].0;
        let mut w = 0;
        while w < 4 {
            let word = u32::from_le_bytes([v[4 * w], v[4 * w + 1], v[4 * w + 2], v[4 * w + 3]]);
            count(word as u8);
            count((word >> 8) as u8);
            count((word >> 16) as u8);
            count((word >> 24) as u8);
            w += 1;
        }
    }
    for i in grid_stride(tail.len()) {
        count(tail[i.get()]);
    }
    thread::sync_threads();
    let mut b = tid;
    while b < 256 {
        let v = local.read(b);
        if v != 0 {
            // SAFETY: the host passes 256 global u32 bins that only atomics touch.
            unsafe { atomic::global::add(bins.add(b), v, Relaxed, Scope::Gpu) };
        }
        b += threads;
    }
}

/// Merges two online-softmax states `(max, sum of exp(x - max))`.
#[inline(always)]
fn merge((m, s): (f32, f32), (m2, s2): (f32, f32)) -> (f32, f32) {
    let mx = if m > m2 { m } else { m2 };
    if mx == f32::NEG_INFINITY {
        return (mx, 0.0);
    }
    (
        mx,
        s * math::fast::expf(m - mx) + s2 * math::fast::expf(m2 - mx),
    )
}

#[inline(always)]
fn warp_merge(mut state: (f32, f32)) -> (f32, f32) {
    let mut offset = 16;
    while offset > 0 {
        let other = (
            warp::shfl_xor_sync(FULL, state.0, offset),
            warp::shfl_xor_sync(FULL, state.1, offset),
        );
        state = merge(state, other);
        offset /= 2;
    }
    state
}

/// The `(max, sum of exp(x - max))` state of one vector.
#[inline(always)]
fn vector_state(v: F32x4) -> (f32, f32) {
    let vm = v.0[0].max(v.0[1]).max(v.0[2].max(v.0[3]));
    let vs = math::fast::expf(v.0[0] - vm)
        + math::fast::expf(v.0[1] - vm)
        + math::fast::expf(v.0[2] - vm)
        + math::fast::expf(v.0[3] - vm);
    (vm, vs)
}

/// Merges every thread's state into the block's, returned to every thread: shuffles
/// within each warp, then each warp's state through `red_m`/`red_s` and one barrier. A
/// 1D block.
#[inline(always)]
fn block_merge(
    state: (f32, f32),
    red_m: &SharedArray<f32, 32>,
    red_s: &SharedArray<f32, 32>,
) -> (f32, f32) {
    let state = warp_merge(state);
    let (lane, w) = (thread::lane_id() as usize, thread::warp_id() as usize);
    if lane == 0 {
        red_m.write(w, state.0);
        red_s.write(w, state.1);
    }
    thread::sync_threads();
    let warps = (thread::blockDim_x() as usize).div_ceil(32);
    warp_merge(if lane < warps {
        (red_m.read(lane), red_s.read(lane))
    } else {
        (f32::NEG_INFINITY, 0.0)
    })
}

/// Row softmax: block `b` of 256 threads handles row `b` of `cols` floats
/// (`cols` a multiple of 4, dynamic shared memory `cols * 4` bytes). The row
/// is read once into dynamic shared memory while each thread keeps an online
/// (max, sum) pair; pairs merge through shuffles and per-warp slots; the
/// output is written once from shared memory. The row's slices are checked
/// once, so the loops (u32 counters) carry no bounds checks. `input` and `output`
/// start 16-byte aligned (a panic otherwise).
#[kernel(dims = 1)]
pub fn softmax(input: &[f32], output: DisjointSlice<f32>, cols: u32) {
    let red_m = SharedArray::<f32, 32>::new();
    let red_s = SharedArray::<f32, 32>::new();
    let row = DynamicSharedArray::<F32x4>::get();
    let c4 = cols / 4;
    let r = thread::blockIdx_x() as usize;
    // Rows are whole vectors from element 0, so both buffers must start 16-byte
    // aligned (a head split off would shift every row): a misaligned `input` has no
    // vectors and a misaligned `output` is refused, both after the loads.
    let (src, _) = split_vectors_or_tail::<F32x4>(input);
    let base = r * c4 as usize;
    // Branch-free (an empty row when `input` or `row` is short, refused after the
    // loads): the loop's test is the only branch before the first load.
    let src = src.get(base..base + c4 as usize).unwrap_or(&[]);
    let n4 = src.len().min(row.len());
    let (tid, threads) = (thread::threadIdx_x(), thread::blockDim_x());
    let mut state = (f32::NEG_INFINITY, 0.0f32);
    let mut i = tid;
    while (i as usize) < n4 {
        let v = ldg(src, i as usize);
        row.write(i as usize, v);
        state = merge(state, vector_state(v));
        i += threads;
    }
    // The row whole and room for it in `row` and `dst` (the block is 1D: `dims = 1`).
    assert!(src.len() == c4 as usize && row.len() >= c4 as usize);
    let Ok((mut dst, _)) = output.split_vectors_mut::<F32x4>() else {
        panic!("softmax: `output` is not 16-byte aligned");
    };
    assert!(dst.len() >= base + c4 as usize);
    let (m, s) = block_merge(state, &red_m, &red_s);
    let inv = 1.0 / s;
    let mut i = tid;
    while i < c4 {
        let v = row.read(i as usize).map(|x| math::fast::expf(x - m) * inv);
        // SAFETY: base + i < base + c4 <= dst.len() (asserted); row r is
        // block r's alone, element i thread i % threads' alone.
        unsafe { *dst.get_unchecked_mut(base + i as usize) = v };
        i += threads;
    }
}

/// SGEMM tile sizes: a 128×128 block tile, K step 8, 256 threads each
/// computing an 8×8 register tile.
const BM: usize = 128;
const BK: usize = 8;

/// `C = A·B`, row-major `n × n` (`n` a multiple of 128): block 256 threads,
/// grid `(n/128, n/128)`. A is stored transposed in shared memory so that
/// both operands are read as 16-byte vectors. Two shared buffers: the next
/// tile's global loads are issued before the current tile's math and stored
/// to the other buffer after it, one barrier per step. Other shapes trap.
#[kernel(dims = 2)]
pub fn sgemm(a: &[f32], b: &[f32], c: DisjointSlice<f32>, n: u32) {
    let a_tile = SharedArray::<f32, { 2 * BK * BM }>::new();
    let b_tile = SharedArray::<f32, { 2 * BK * BM }>::new();
    let n = n as usize;
    let t = thread::threadIdx_x() as usize;
    let (tx, ty) = (t % 16, t / 16);
    let (row0, col0) = (
        thread::blockIdx_y() as usize * BM,
        thread::blockIdx_x() as usize * BM,
    );
    let (a4, a_rest) = split_vectors_or_tail::<F32x4>(a);
    let (b4, b_rest) = split_vectors_or_tail::<F32x4>(b);
    // One test, one branch (`&`, not `&&`): the block shape, whole tiles inside the
    // matrices, and both inputs 16-byte aligned whole vectors.
    assert!(
        (thread::blockDim_x() == 256)
            & n.is_multiple_of(BM)
            & (a.len() >= n * n)
            & (b.len() >= n * n)
            & (row0 + BM <= n)
            & (col0 + BM <= n)
            & a_rest.is_empty()
            & b_rest.is_empty()
    );
    // Loaders: A tile 128×8, one float4 per thread (row ar, cols ac..ac+4);
    // B tile 8×128, one float4 per thread (row br, cols bc..bc+4).
    let (ar, ac) = (t / 2, (t % 2) * 4);
    let (br, bc) = (t / 32, (t % 32) * 4);
    // Each k step moves the A loader 8 columns right and the B loader 8 rows down.
    let (a_step, b_step) = (BK / 4, BK * n / 4);
    // SAFETY: in bounds of a4/b4 (the asserts above bound every row and column
    // this block touches by n); each later step stays in bounds while
    // k0 + BK < n, and the pointers are only read then.
    let mut a_ptr = unsafe { a4.as_ptr().add(((row0 + ar) * n + ac) / 4) };
    let mut b_ptr = unsafe { b4.as_ptr().add((br * n + col0 + bc) / 4) };
    // Shared addresses, bounds-checked once here (t < 256); buffer `q` is
    // `q * BK * BM` elements further on.
    let a_store = a_tile.ptr(ac * BM + ar);
    let b_store = b_tile.ptr(br * BM + bc).cast::<F32x4>();
    let a_load = a_tile.ptr(ty * 4).cast::<F32x4>();
    let b_load = b_tile.ptr(tx * 4).cast::<F32x4>();
    // SAFETY (every tile access below): offsets stay inside the two buffers
    // for t < 256 (asserted), vector accesses are 16-byte aligned, each
    // thread stores its own elements, and loads read what the previous
    // barrier published.
    let store = |buf: usize, av: [f32; 4], bv: F32x4| unsafe {
        unroll!(Q in [0, 1, 2, 3] => {
            a_store.add(buf * BK * BM + Q * BM).write(av[Q]);
        });
        b_store.add(buf * BK * BM / 4).write(bv);
    };
    // SAFETY: in bounds (see the pointers' definitions).
    let (mut av, mut bv) = unsafe { ((*a_ptr).0, *b_ptr) };
    store(0, av, bv);
    thread::sync_threads();
    let mut acc = [[0.0f32; 8]; 8];
    let mut k0 = 0;
    // One k step on shared buffer `$cur`: prefetch the next tile into
    // registers, multiply the current one, store the prefetched tile into the
    // other buffer, barrier. Written out for each buffer so that every shared
    // offset is a constant.
    macro_rules! k_step {
        ($cur:literal) => {{
            let more = k0 + BK < n;
            if more {
                // SAFETY: in bounds for k0 + BK < n (see the pointers' definitions).
                unsafe {
                    a_ptr = a_ptr.add(a_step);
                    b_ptr = b_ptr.add(b_step);
                    (av, bv) = ((*a_ptr).0, *b_ptr);
                }
            }
            unroll!(K in [0, 1, 2, 3, 4, 5, 6, 7] => {
                const BASE: usize = $cur * BK * BM / 4;
                // SAFETY: see above.
                let (ra0, ra1, rb0, rb1) = unsafe {
                    (
                        a_load.add(BASE + K * BM / 4).read().0,
                        a_load.add(BASE + (K * BM + 64) / 4).read().0,
                        b_load.add(BASE + K * BM / 4).read().0,
                        b_load.add(BASE + (K * BM + 64) / 4).read().0,
                    )
                };
                let ra = [ra0[0], ra0[1], ra0[2], ra0[3], ra1[0], ra1[1], ra1[2], ra1[3]];
                let rb = [rb0[0], rb0[1], rb0[2], rb0[3], rb1[0], rb1[1], rb1[2], rb1[3]];
                let mut i = 0;
                while i < 8 {
                    let mut j = 0;
                    while j < 8 {
                        acc[i][j] = math::fmaf(ra[i], rb[j], acc[i][j]);
                        j += 1;
                    }
                    i += 1;
                }
            });
            if more {
                store(1 - $cur, av, bv);
            }
            thread::sync_threads();
            k0 += BK;
        }};
    }
    // n / BK is even (n is a multiple of 128): buffers 0 and 1 alternate.
    while k0 < n {
        k_step!(0);
        k_step!(1);
    }
    let (_, mut c4, _) = c.split_aligned_mut::<F32x4>();
    let mut i = 0;
    while i < 8 {
        let r = row0
            + if i < 4 {
                ty * 4 + i
            } else {
                ty * 4 + 64 + (i - 4)
            };
        let at = (r * n + col0 + tx * 4) / 4;
        let v = acc[i];
        if at + 16 < c4.len() {
            // SAFETY: in bounds (checked); each (block, thread, i) owns these
            // two vectors of C.
            unsafe {
                *c4.get_unchecked_mut(at) = F32x4([v[0], v[1], v[2], v[3]]);
                *c4.get_unchecked_mut(at + 16) = F32x4([v[4], v[5], v[6], v[7]]);
            }
        }
        i += 1;
    }
}

/// `c = a + b`, one element per thread, as most users write it: `node-bench` compares it
/// with nvcc's form as a graph node (issue 30, point 2). `a`, `b` at least as long as `c`.
#[kernel(dims = 1)]
pub fn vecadd_each(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
    let i = thread::index_1d();
    let k = i.get();
    if let Some(out) = c.get_mut(&i) {
        *out = a[k] + b[k];
    }
}

/// [`vecadd_each`] without the bounds checks of `a` and `b` (nvcc's form): what those
/// checks cost a small kernel.
///
/// # Safety
/// `a` and `b` at least as long as `c`.
#[kernel(dims = 1)]
pub unsafe fn vecadd_each_nocheck(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
    let i = thread::index_1d();
    let k = i.get();
    if let Some(out) = c.get_mut(&i) {
        // SAFETY: the caller's contract.
        *out = unsafe { *a.get_unchecked(k) + *b.get_unchecked(k) };
    }
}

/// [`vecadd_each`] with `get` instead of indexing: one combined check, no panics.
#[kernel(dims = 1)]
pub fn vecadd_each_get(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
    let i = thread::index_1d();
    let k = i.get();
    if let (Some(out), Some(x), Some(y)) = (c.get_mut(&i), a.get(k), b.get(k)) {
        *out = x + y;
    }
}

/// `c = a + b`, one element per thread, written for programmatic dependent launch: the
/// next launch may start at once, and this one waits for the previous before touching
/// memory (graph-bench's PDL chain; CUDA twin `vecadd_pdl_ref` in `graph_reference.cu`).
/// Correct with or without the launch attribute. Minimum sm_90 for the overlap (the
/// instructions are no-ops without it).
#[kernel(dims = 1)]
pub fn vecadd_pdl(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
    device_std::grid_dependency::launch_dependents();
    let i = thread::index_1d();
    let k = i.get();
    device_std::grid_dependency::wait();
    if let (Some(out), Some(x), Some(y)) = (c.get_mut(&i), a.get(k), b.get(k)) {
        *out = x + y;
    }
}
