//! Bulk asynchronous copies (`cp.async.bulk`, sm_90) through shared memory, both ways:
//! each block loads one tile of `x` into shared memory with a copy that completes on an
//! [`Mbarrier`], scales it in place, and writes it back with a bulk store.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
use device_std::{bulk, Mbarrier, Phase};
use device_std::{kernel, thread, DisjointSlice, SharedArray};

/// Elements of one tile: 4 KiB of `f32`.
pub const TILE: usize = 1024;

/// `y = alpha * x` for the first `TILE * (y.len() / TILE)` elements... and the rest:
/// block `b` moves tile `b` (`x[b * TILE ..]`, shorter for the last one, rounded down to
/// whole 16-byte vectors) with a bulk load, scales it in shared memory (thread `t` owns
/// elements `t, t + blockDim, ...`), makes it visible to the copy engine
/// (`fence.proxy.async` + barrier) and writes it with a bulk store; the last block also
/// does the `y.len() % 4` trailing elements with plain loads and stores. Launch
/// `ceil(len / TILE)` blocks of any 1D size; `x` and `y` 16-byte aligned (a trap
/// otherwise) and `x` at least as long as `y`. sm_90.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
#[kernel]
pub fn tile_roundtrip(alpha: f32, x: &[f32], mut y: DisjointSlice<f32>) {
    let n = y.len();
    let tile = SharedArray::<f32, TILE, 128>::new();
    let bar = Mbarrier::new(1);
    let mut phase = Phase::new();
    let b = thread::blockIdx_x() as usize;
    let start = b * TILE;
    if start >= n {
        return;
    }
    let len = (TILE.min(n - start)) & !3;
    let t = thread::threadIdx_x() as usize;
    let threads = thread::block_size() as usize;
    if len > 0 {
        if t == 0 {
            bar.arrive_expect_tx((len * 4) as u32);
            bulk::load(&tile, 0, x, start, len, &bar);
        }
        bar.wait(&mut phase);
        let mut i = t;
        while i < len {
            tile.write(i, alpha * tile.read(i));
            i += threads;
        }
        bulk::fence_proxy_async_shared();
        thread::sync_threads();
        if t == 0 {
            // SAFETY: block `b` alone writes y[start .. start + len] (its tile); the
            // range is in bounds and 16-byte aligned (checked by `store` at run time:
            // `start` is a multiple of TILE and `y` is 16-byte aligned), and nothing
            // reads it before the grid ends.
            unsafe { bulk::store(y.as_mut_ptr().add(start), &tile, 0, len) };
            bulk::commit_group();
            bulk::wait_group_read::<0>();
        }
    }
    // The last block's trailing elements, below one 16-byte vector.
    let rest = start + len;
    if rest < n && start + TILE >= n && t < n - rest {
        // SAFETY: only thread t of the last block writes element rest + t (< n).
        unsafe { *y.get_unchecked_mut(rest + t) = alpha * x[rest + t] };
    }
}

/// Vectors (16 bytes) per block of [`cp_async_reverse`].
pub const REVERSE_TILE: usize = 256;

/// `y[b * 1024 + i] = x[b * 1024 + 1023 - i]` within each 1024-float tile, through
/// shared memory filled with `cp.async` (sm_80): thread `t` of a 256-thread block copies
/// vector `t` of tile `b` (16 bytes), waits for its group, and after the block barrier
/// reads another thread's vector: the barrier makes every thread's landed copies
/// visible to all. Only whole tiles are moved (`y.len()` a multiple of 1024, `x` as
/// long); 1D grid of `y.len() / 1024` blocks of 256 threads (a trap otherwise).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[kernel]
pub fn cp_async_reverse(
    x: &[device_std::vector::F32x4],
    mut y: DisjointSlice<device_std::vector::F32x4>,
) {
    use device_std::cp_async;
    assert!(thread::block_size() as usize == REVERSE_TILE);
    let tile = SharedArray::<device_std::vector::F32x4, REVERSE_TILE>::new();
    let t = thread::threadIdx_x() as usize;
    let base = thread::blockIdx_x() as usize * REVERSE_TILE;
    cp_async::copy(&tile, t, x, base + t);
    cp_async::commit_group();
    cp_async::wait_group::<0>();
    thread::sync_threads();
    let v = tile.read(REVERSE_TILE - 1 - t);
    if let Some(out) = y.get_mut(thread::index_1d()) {
        let [a, b, c, d] = v.0;
        *out = device_std::vector::F32x4([d, c, b, a]);
    }
}

/// One tensor load feeding both CTAs of a cluster (`.multicast::cluster`, sm_90): cluster
/// `c` (of a grid of `2 × tiles` CTAs, compiled for clusters of 2) takes tile
/// `(c % tiles_x, c / tiles_x)` of 32 × 32 floats of the row-major matrix behind `map`;
/// the lane `elect.sync` picks in warp 0 of CTA rank 0 prefetches the map and loads the
/// tile once into the same shared array of both CTAs, each of which waits on its own
/// barrier. Then each CTA writes, through distributed shared memory, its rank + 1 into
/// the other's `mark`, and after a cluster barrier writes the *other* CTA's copy of the
/// tile (`ld.shared::cluster`) times its own `3 - mark` (= rank + 1) to
/// `out[(2 c + rank) * 1024 ..][..1024]` (elements outside the matrix read as zeros); a
/// last cluster barrier keeps both CTAs alive while the other reads. Blocks of 256
/// threads (a trap otherwise).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
#[kernel(cluster = (2, 1, 1))]
pub fn tma_multicast(
    map: device_std::tma::TensorMap<f32, 2, 32, 32>,
    tiles_x: u32,
    mut out: DisjointSlice<f32>,
) {
    use device_std::cluster;
    use device_std::tma::TensorMap;
    assert!(thread::block_size() == 256);
    let tile = SharedArray::<f32, 1024, 128>::new();
    let mark = SharedArray::<u32, 1>::new();
    let bar = Mbarrier::new(1);
    let mut phase = Phase::new();
    // Both CTAs' barriers and arrays exist before rank 0 writes into them.
    cluster::sync();
    let (c, rank) = (cluster::cluster_id_x(), cluster::cta_rank());
    let t = thread::thread_in_block() as usize;
    if t < 32 && cluster::elect_one() {
        bar.arrive_expect_tx(TensorMap::<f32, 2, 32, 32>::BOX_BYTES);
        if rank == 0 {
            map.prefetch();
            let (x, y) = (32 * (c % tiles_x) as i32, 32 * (c / tiles_x) as i32);
            map.load_multicast(&tile, [x, y], &bar, 0b11);
        }
        mark.in_cta(1 - rank).write(0, rank + 1);
    }
    bar.wait(&mut phase);
    cluster::sync();
    let factor = (3 - mark.read(0)) as f32;
    let other = tile.in_cta(1 - rank);
    let base = (2 * c as usize + rank as usize) * 1024;
    let mut i = t;
    while i < 1024 {
        let v = other.read(i) * factor;
        if base + i < out.len() {
            // SAFETY: (cluster, rank, i) maps one-to-one onto base + i; only this
            // thread writes it.
            unsafe { *out.get_unchecked_mut(base + i) = v };
        }
        i += 256;
    }
    cluster::sync();
}
