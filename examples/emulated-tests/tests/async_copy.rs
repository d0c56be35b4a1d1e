//! Bulk asynchronous copies and mbarriers under the emulator: the kernels that use
//! them (`async_copy`'s round trip, the benchmark's `bulk_scale`) against the CPU at
//! ragged sizes, and the misuse the GPU would hang on or silently corrupt, each reported
//! with its thread.

use device_std::emulator::{self, EmulatorError, GlobalMut, LaunchConfig};
use device_std::{bulk, kernel, thread, DisjointSlice, Mbarrier, Phase, SharedArray};
use emulated_tests::emulate::POISON;
use example_support::{random_f32, rng};

/// `n` random values at a 16-byte-aligned address (with `skew` elements more in
/// front, to misalign on purpose), in a buffer the caller keeps.
fn aligned_input(seed: u64, n: usize, skew: usize) -> (Vec<f32>, usize) {
    let buf = random_f32(&mut rng(seed), n + 4 + skew, -1.0, 1.0);
    let off = buf.as_ptr().align_offset(16) + skew;
    (buf, off)
}

/// A poisoned output of `n` elements starting 16-byte aligned: (buffer, offset).
fn aligned_output(n: usize) -> (Vec<f32>, usize) {
    let buf = vec![POISON; n + 4];
    let off = buf.as_ptr().align_offset(16);
    (buf, off)
}

fn assert_scaled(got: &[f32], x: &[f32], alpha: f32, what: &str) {
    let bad: Vec<usize> = (0..x.len())
        .filter(|&i| got[i].to_bits() != (alpha * x[i]).to_bits())
        .collect();
    assert!(
        bad.is_empty(),
        "{what}: {} of {} elements differ, first at {:?}",
        bad.len(),
        x.len(),
        bad.first()
    );
}

#[test]
fn tile_roundtrip_matches_the_cpu_at_whole_and_ragged_sizes() {
    use async_copy_kernels::TILE;
    for (n, block, seed) in [
        (4 * TILE, 128, 1),
        (3 * TILE + 7, 96, 2),
        (5, 32, 3),
        (TILE + 4, 256, 4),
    ] {
        let (xb, xo) = aligned_input(seed, n, 0);
        let x = &xb[xo..xo + n];
        let (mut yb, yo) = aligned_output(n);
        let alpha = 1.5f32;
        let out = GlobalMut::new(&mut yb[yo..yo + n]);
        let cfg = LaunchConfig::new((n.div_ceil(TILE) as u32, 1, 1), (block, 1, 1));
        emulator::launch(cfg, || {
            async_copy_kernels::tile_roundtrip(alpha, x, out.disjoint())
        })
        .unwrap();
        assert_scaled(
            &yb[yo..yo + n],
            x,
            alpha,
            &format!("n = {n}, block = {block}"),
        );
    }
}

#[test]
fn bulk_scale_matches_the_cpu_through_many_ring_rounds_and_misaligned_input() {
    // A persistent grid of 3 blocks of 256 threads: 4 KiB tiles, so n = 100_003 gives 33
    // tiles per block, the 3-stage ring wraps ten times, the last tile is partial, the
    // tail is 3 floats. Then the benchmark's one-shot grid, n / 4096 blocks rounded up (4
    // tiles each, fewer in the last block).
    for (n, skew, seed) in [(100_003, 0, 5), (4096, 0, 6), (9000, 1, 7), (3, 0, 8)] {
        let one_shot = (n / 4usize).div_ceil(1024).max(1) as u32;
        for blocks in [3, one_shot] {
            let (xb, xo) = aligned_input(seed, n, skew);
            let x = &xb[xo..xo + n];
            let (mut yb, yo) = aligned_output(n);
            let alpha = -0.75f32;
            let out = GlobalMut::new(&mut yb[yo..yo + n]);
            let cfg = LaunchConfig::new((blocks, 1, 1), (256, 1, 1));
            let stats =
                emulator::launch(cfg, || bench_kernels::bulk_scale(alpha, x, out.disjoint()));
            stats.unwrap();
            assert_scaled(
                &yb[yo..yo + n],
                x,
                alpha,
                &format!("n = {n}, skew = {skew}, {blocks} blocks"),
            );
        }
    }
}

/// Fault: the issuing thread reads the tile right after the copy is issued, without
/// waiting on the barrier.
#[kernel]
pub fn read_before_wait(x: &[f32], mut out: DisjointSlice<f32>) {
    let tile = SharedArray::<f32, 256, 16>::new();
    let bar = Mbarrier::new(1);
    let t = thread::threadIdx_x() as usize;
    if t == 0 {
        bar.arrive_expect_tx(1024);
        bulk::load(&tile, 0, x, 0, 256, &bar);
        let v = tile.read(0); // (the seeded fault: no bar.wait first)
        if let Some(o) = out.get_mut(thread::index_1d()) {
            *o = v;
        }
    }
}

/// Fault: the barrier is told to expect `announced` bytes, but 1024 arrive.
#[kernel]
pub fn wrong_byte_count(announced: u32, x: &[f32], mut out: DisjointSlice<f32>) {
    let tile = SharedArray::<f32, 256, 16>::new();
    let bar = Mbarrier::new(1);
    let mut phase = Phase::new();
    let t = thread::threadIdx_x() as usize;
    if t == 0 {
        bar.arrive_expect_tx(announced);
        bulk::load(&tile, 0, x, 0, 256, &bar);
    }
    bar.wait(&mut phase);
    if let Some(o) = out.get_mut(thread::index_1d()) {
        *o = tile.read(t);
    }
}

/// Fault: a bulk store whose source is overwritten (`overwrite`) or abandoned at exit
/// (`!overwrite`) before `wait_group_read`.
#[kernel]
pub fn store_without_read_wait(overwrite: u32, mut out: DisjointSlice<f32>) {
    let tile = SharedArray::<f32, 64, 16>::new();
    let t = thread::threadIdx_x() as usize;
    tile.write(t, t as f32);
    bulk::fence_proxy_async_shared();
    thread::sync_threads();
    if t == 0 {
        // SAFETY: out has 64 elements (the test's launch), 16-byte aligned.
        unsafe { bulk::store(out.as_mut_ptr(), &tile, 0, 64) };
        bulk::commit_group();
        if overwrite != 0 {
            tile.write(0, -1.0); // (the seeded fault: no wait_group_read first)
        }
    }
}

/// A warp refills a bulk store's source after thread 0's `wait_group_read`, as an
/// epilogue that recycles its staging buffer does: the warp syncs after the issue (so
/// the issue itself is ordered before what follows), thread 0 waits, and thread 1
/// rewrites the source, after a second `sync_warp` when `synced`, at once otherwise (the
/// seeded fault: the copy engine may still be reading until thread 0's wait returns,
/// and nothing orders thread 1's write after it).
#[kernel]
pub fn refill_after_read_wait(synced: u32, mut out: DisjointSlice<f32>) {
    let tile = SharedArray::<f32, 32, 16>::new();
    let t = thread::threadIdx_x() as usize;
    tile.write(t, t as f32);
    bulk::fence_proxy_async_shared();
    thread::sync_warp(u32::MAX);
    if t == 0 {
        // SAFETY: out has 32 elements (the test's launch), 16-byte aligned.
        unsafe { bulk::store(out.as_mut_ptr(), &tile, 0, 32) };
        bulk::commit_group();
    }
    thread::sync_warp(u32::MAX);
    if t == 0 {
        bulk::wait_group_read::<0>();
    }
    if synced != 0 {
        thread::sync_warp(u32::MAX);
    }
    if t == 1 {
        tile.write(0, -1.0);
    }
}

fn run_faulty(kernel: impl Fn(&[f32], DisjointSlice<f32>) + Sync) -> EmulatorError {
    let (xb, xo) = aligned_input(9, 256, 0);
    let x = &xb[xo..xo + 256];
    let (mut yb, yo) = aligned_output(256);
    let out = GlobalMut::new(&mut yb[yo..yo + 256]);
    emulator::launch(LaunchConfig::new((1, 1, 1), (256, 1, 1)), || {
        kernel(x, out.disjoint())
    })
    .unwrap_err()
}

#[test]
fn reading_a_bulk_load_destination_before_the_barrier_phase_is_reported() {
    let err = run_faulty(read_before_wait).to_string();
    assert!(
        err.starts_with("block (0, 0, 0) thread (0, 0, 0): accesses 4 bytes at shared address"),
        "{err}"
    );
    assert!(
        err.contains("is the destination of the bulk::load at"),
        "{err}"
    );
    assert!(
        err.contains("wait on that barrier's phase (Mbarrier::wait)"),
        "{err}"
    );
}

#[test]
fn a_transaction_count_that_does_not_match_the_bytes_copied_is_reported() {
    // More announced than copied: the phase can never complete.
    let err = run_faulty(|x, o| wrong_byte_count(2048, x, o)).to_string();
    assert!(
        err.starts_with(
            "deadlock in block (0, 0, 0): 256 threads wait on mbarriers that nothing will complete"
        ),
        "{err}"
    );
    assert!(
        err.contains("with 0 of 1 arrivals and 1024 bytes of transactions pending"),
        "{err}"
    );
    // Fewer announced than copied: the count goes below zero.
    let err = run_faulty(|x, o| wrong_byte_count(512, x, o)).to_string();
    assert!(
        err.contains("wrote 512 more bytes than its phase 0 announced"),
        "{err}"
    );
    // The right count passes and copies.
    let (xb, xo) = aligned_input(9, 256, 0);
    let x = &xb[xo..xo + 256];
    let (mut yb, yo) = aligned_output(256);
    let out = GlobalMut::new(&mut yb[yo..yo + 256]);
    emulator::launch(LaunchConfig::new((1, 1, 1), (256, 1, 1)), || {
        wrong_byte_count(1024, x, out.disjoint())
    })
    .unwrap();
    assert_scaled(&yb[yo..yo + 256], x, 1.0, "announced 1024");
}

#[test]
fn a_bulk_store_source_overwritten_or_abandoned_before_wait_group_read_is_reported() {
    let run = |overwrite: bool| {
        let (mut yb, yo) = aligned_output(64);
        let out = GlobalMut::new(&mut yb[yo..yo + 64]);
        emulator::launch(LaunchConfig::new((1, 1, 1), (64, 1, 1)), || {
            store_without_read_wait(overwrite as u32, out.disjoint())
        })
        .map(|_| ())
        .unwrap_err()
        .to_string()
    };
    let err = run(true);
    assert!(err.contains("is the source of the bulk::store at"), "{err}");
    assert!(err.contains("must call bulk::wait_group_read"), "{err}");
    let err = run(false);
    assert!(
        err.starts_with("block (0, 0, 0) thread (0, 0, 0): the block ends while this thread's bulk::store may still read its shared memory"),
        "{err}"
    );
}

#[test]
fn refilling_a_bulk_store_source_needs_a_barrier_after_the_issuers_read_wait() {
    let run = |synced: bool| {
        let (mut yb, yo) = aligned_output(32);
        let out = GlobalMut::new(&mut yb[yo..yo + 32]);
        let result = emulator::launch(LaunchConfig::new((1, 1, 1), (32, 1, 1)), || {
            refill_after_read_wait(synced as u32, out.disjoint())
        })
        .map(|_| ());
        (result, yb[yo..yo + 32].to_vec())
    };
    let (ok, stored) = run(true);
    ok.unwrap();
    assert_eq!(stored, (0..32).map(|i| i as f32).collect::<Vec<_>>());
    let (err, _) = run(false);
    let err = err.unwrap_err().to_string();
    assert!(err.contains("thread (1, 0, 0)"), "{err}");
    assert!(err.contains("thread (0, 0, 0)"), "{err}");
}

/// `bench_kernels::transpose_tma` of a `rows × cols` matrix through emulated tensor maps.
fn transpose_tma(input: &[f32], rows: usize, cols: usize) -> Result<Vec<f32>, EmulatorError> {
    use device_std::emulator::TensorMapDesc;
    let (xb, xo) = {
        let mut b = vec![0.0f32; rows * cols + 4];
        let o = b.as_ptr().align_offset(16);
        b[o..o + rows * cols].copy_from_slice(input);
        (b, o)
    };
    let (mut yb, yo) = aligned_output(rows * cols);
    let (r, c) = (rows as u64, cols as u64);
    // SAFETY: each buffer outlives the launch; the output is written only by the
    // kernel's tensor stores.
    let in_map = unsafe {
        TensorMapDesc::new(
            xb[xo..].as_ptr().cast_mut(),
            rows * cols,
            &[c, r],
            &[c * 4],
            &[64, 64],
        )
    }
    .unwrap();
    let out = GlobalMut::new(&mut yb[yo..yo + rows * cols]);
    // SAFETY: as above.
    let out_map =
        unsafe { TensorMapDesc::new(out.as_mut_ptr(), rows * cols, &[r, c], &[r * 4], &[64, 64]) }
            .unwrap();
    let cfg = LaunchConfig::new(
        (cols.div_ceil(64) as u32, rows.div_ceil(64) as u32, 1),
        (32, 8, 1),
    );
    emulator::launch(cfg, || {
        bench_kernels::transpose_tma(in_map.as_param(), out_map.as_param())
    })?;
    Ok(yb[yo..yo + rows * cols].to_vec())
}

#[test]
fn transpose_tma_matches_the_cpu_with_whole_partial_and_tiny_tiles() {
    for (rows, cols, seed) in [
        (64, 64, 21),
        (100, 68, 22),
        (36, 40, 23),
        (4, 4, 24),
        (132, 200, 25),
    ] {
        let input = random_f32(&mut rng(seed), rows * cols, -1000.0, 1000.0);
        let got = transpose_tma(&input, rows, cols).unwrap();
        let want = emulated_tests::reference::transpose(&input, rows, cols);
        let bad = (0..want.len())
            .filter(|&i| got[i].to_bits() != want[i].to_bits())
            .count();
        assert_eq!(bad, 0, "{rows} x {cols}: {bad} elements differ");
    }
}

#[test]
fn a_tensor_map_the_driver_would_refuse_is_refused_with_the_rule() {
    use device_std::emulator::TensorMapDesc;
    let mut buf = vec![0.0f32; 4096 + 4];
    let o = buf.as_ptr().align_offset(16);
    let p = buf[o..].as_mut_ptr();
    // SAFETY (each): `p` is valid for 4096 f32s; no launch uses the maps.
    let err = |dims: &[u64], strides: &[u64], boxes: &[u32]| {
        unsafe { TensorMapDesc::new(p, 4096, dims, strides, boxes) }.unwrap_err()
    };
    assert_eq!(
        err(&[63, 64], &[63 * 4], &[32, 32]),
        "the stride of dimension 1 is 252 bytes; the driver needs a multiple of 16 below 2^40 \
         (pad each row to a multiple of 16 bytes)"
    );
    assert_eq!(
        err(&[64, 64], &[256], &[3, 32]),
        "the innermost box extent 3 spans 12 bytes, not a multiple of 16"
    );
    assert_eq!(
        err(&[64, 65], &[256], &[32, 32]),
        "the tensor spans 16640 bytes (last element's offset + its size) but the buffer holds \
         16384"
    );
    assert_eq!(
        err(&[64, 64], &[256], &[32, 512]),
        "box extent 1 is 512; 1 to 256 allowed"
    );
    // SAFETY: as above, one element in.
    let skew = unsafe { TensorMapDesc::new(p.add(1), 4000, &[64], &[], &[32]) }.unwrap_err();
    assert!(skew.contains("is not 16-byte aligned"), "{skew}");
}

/// Fault: only the issuing thread waits on the barrier; the others read the tile with
/// nothing ordering them after the copy (on the GPU they may read before it lands).
#[kernel]
pub fn only_the_issuer_waits(x: &[f32], mut out: DisjointSlice<f32>) {
    let tile = SharedArray::<f32, 256, 16>::new();
    let bar = Mbarrier::new(1);
    let mut phase = Phase::new();
    let t = thread::threadIdx_x() as usize;
    if t == 0 {
        bar.arrive_expect_tx(1024);
        bulk::load(&tile, 0, x, 0, 256, &bar);
        bar.wait(&mut phase);
    } else {
        // Long enough on any GPU? No sleep orders anything; under the emulator it
        // lets thread 0 issue, land and observe the copy first.
        thread::nanosleep(1000);
    }
    let v = tile.read(t); // (the seeded fault: threads 1.. never wait)
    if let Some(o) = out.get_mut(thread::index_1d()) {
        *o = v;
    }
}

#[test]
fn a_thread_that_reads_a_landed_load_without_waiting_is_reported() {
    let err = run_faulty(only_the_issuer_waits).to_string();
    // One of the threads that did not wait (the emulator runs the last one first).
    assert!(
        err.starts_with("block (0, 0, 0) thread (255, 0, 0): accesses 4 bytes at shared address"),
        "{err}"
    );
    assert!(err.contains("was written by the bulk::load at"), "{err}");
    assert!(
        err.contains("this thread has not waited on that phase"),
        "{err}"
    );
}

/// The same load, waited for by every thread, then a `sync_threads`-ordered read by
/// thread 0 only waiting and the others ordered through a block barrier: correct.
#[kernel]
pub fn issuer_waits_then_block_barrier(x: &[f32], mut out: DisjointSlice<f32>) {
    let tile = SharedArray::<f32, 256, 16>::new();
    let bar = Mbarrier::new(1);
    let mut phase = Phase::new();
    let t = thread::threadIdx_x() as usize;
    if t == 0 {
        bar.arrive_expect_tx(1024);
        bulk::load(&tile, 0, x, 0, 256, &bar);
        bar.wait(&mut phase);
    }
    thread::sync_threads();
    let v = tile.read(t);
    if let Some(o) = out.get_mut(thread::index_1d()) {
        *o = v;
    }
}

#[test]
fn a_load_observed_by_one_thread_then_a_block_barrier_is_visible_to_all() {
    let (xb, xo) = aligned_input(9, 256, 0);
    let x = &xb[xo..xo + 256];
    let (mut yb, yo) = aligned_output(256);
    let out = GlobalMut::new(&mut yb[yo..yo + 256]);
    emulator::launch(LaunchConfig::new((1, 1, 1), (256, 1, 1)), || {
        issuer_waits_then_block_barrier(x, out.disjoint())
    })
    .unwrap();
    assert_scaled(&yb[yo..yo + 256], x, 1.0, "issuer waits, then sync_threads");
}

/// Fault: the copy's bytes are never announced, so the phase completes on the plain
/// arrival, before (or after: a race) the copy lands.
#[kernel]
pub fn load_without_expect_tx(x: &[f32], mut out: DisjointSlice<f32>) {
    let tile = SharedArray::<f32, 256, 16>::new();
    let bar = Mbarrier::new(1);
    let mut phase = Phase::new();
    let t = thread::threadIdx_x() as usize;
    if t == 0 {
        bulk::load(&tile, 0, x, 0, 256, &bar);
        bar.arrive(); // (the seeded fault: arrive_expect_tx(1024) expected)
    }
    bar.wait(&mut phase);
    if let Some(o) = out.get_mut(thread::index_1d()) {
        *o = tile.read(t);
    }
}

#[test]
fn a_phase_that_completes_while_an_unannounced_copy_is_in_flight_is_reported() {
    let err = run_faulty(load_without_expect_tx).to_string();
    assert!(
        err.starts_with("block (0, 0, 0) thread (0, 0, 0): "),
        "{err}"
    );
    assert!(
        err.contains("phase 0 completes while 1024 bytes of copies issued on it are in flight"),
        "{err}"
    );
}

/// Fault: the block returns with a load still writing its shared memory.
#[kernel]
pub fn load_never_waited(x: &[f32], _out: DisjointSlice<f32>) {
    let tile = SharedArray::<f32, 256, 16>::new();
    let bar = Mbarrier::new(1);
    if thread::threadIdx_x() == 0 {
        bar.arrive_expect_tx(1024);
        bulk::load(&tile, 0, x, 0, 256, &bar); // (the seeded fault: nobody waits)
    }
}

#[test]
fn a_block_that_ends_with_a_load_in_flight_is_reported() {
    let err = run_faulty(load_never_waited).to_string();
    assert!(
        err.contains("the block ends while the bulk::load at"),
        "{err}"
    );
    assert!(err.contains("still writes shared"), "{err}");
}

#[test]
fn a_tensor_map_whose_extent_overflows_64_bits_is_refused_not_wrapped() {
    use device_std::emulator::TensorMapDesc;
    let mut buf = vec![0.0f32; 64 + 4];
    let o = buf.as_ptr().align_offset(16);
    let p = buf[o..].as_mut_ptr();
    // (2^28) * 2^36 = 2^64: wraps to 0 in 64-bit arithmetic.
    // SAFETY: `p` is valid for 64 f32s; no launch uses the map.
    let err =
        unsafe { TensorMapDesc::new(p, 64, &[4, (1 << 28) + 1], &[1 << 36], &[4, 1]) }.unwrap_err();
    assert_eq!(
        err,
        "the tensor spans more than 2^64 bytes but the buffer holds 256"
    );
}

/// Loads the 1D box of 16 `f32` at `at` (may reach outside the tensor) and writes it out.
#[kernel]
pub fn load_box_1d(
    map: device_std::tma::TensorMap<f32, 1, 16>,
    at: i32,
    mut out: DisjointSlice<f32>,
) {
    let tile = SharedArray::<f32, 16, 128>::new();
    let bar = Mbarrier::new(1);
    let mut phase = Phase::new();
    let t = thread::threadIdx_x() as usize;
    if t == 0 {
        bar.arrive_expect_tx(64);
        map.load(&tile, [at], &bar);
    }
    bar.wait(&mut phase);
    if let Some(o) = out.get_mut(thread::index_1d()) {
        *o = tile.read(t);
    }
}

/// A map of the `len` `f32`s at address `x`, made (and its descriptor dropped) in a
/// frame of its own.
#[inline(never)]
fn map_of(x: usize, len: usize) -> device_std::tma::TensorMap<f32, 1, 16> {
    use device_std::emulator::TensorMapDesc;
    // SAFETY: the test's buffer at `x` outlives every launch that uses the map.
    let desc =
        unsafe { TensorMapDesc::new(x as *mut f32, len, &[len as u64], &[], &[16]) }.unwrap();
    desc.as_param()
}

/// Overwrites the stack below the caller's frame.
#[inline(never)]
fn clobber_stack() -> u8 {
    let junk = std::hint::black_box([0xA5u8; 4096]);
    junk[17]
}

#[test]
fn a_tensor_map_parameter_outlives_its_descriptor() {
    let mut xb = [0.0f32; 32 + 4];
    let o = xb.as_ptr().align_offset(16);
    for (i, v) in xb[o..o + 32].iter_mut().enumerate() {
        *v = i as f32;
    }
    let x = xb[o..].as_mut_ptr() as usize;
    let mut got = vec![POISON; 16];
    let out = GlobalMut::new(&mut got);
    emulator::launch(LaunchConfig::new((1, 1, 1), (16, 1, 1)), || {
        // Safe code after the descriptor's `new`: `as_param` gives a `'static` value.
        let map = map_of(x, 32);
        clobber_stack();
        load_box_1d(map, 24, out.disjoint())
    })
    .unwrap();
    let want: Vec<f32> = (0..16)
        .map(|i| if 24 + i < 32 { (24 + i) as f32 } else { 0.0 })
        .collect();
    assert_eq!(got, want);
}

/// A bulk store of what the block wrote, with (`fence != 0`) or without the proxy
/// fence that makes ordinary shared-memory writes visible to the copy engine.
#[kernel]
pub fn store_after_barrier(fence: u32, mut out: DisjointSlice<f32>) {
    let tile = SharedArray::<f32, 64, 16>::new();
    let t = thread::threadIdx_x() as usize;
    tile.write(t, t as f32);
    if fence != 0 {
        bulk::fence_proxy_async_shared();
    }
    thread::sync_threads(); // (the seeded fault when fence == 0: no proxy fence first)
    if t == 0 {
        // SAFETY: out has 64 elements (the test's launch), 16-byte aligned.
        unsafe { bulk::store(out.as_mut_ptr(), &tile, 0, 64) };
        bulk::commit_group();
        bulk::wait_group_read::<0>();
    }
}

#[test]
fn a_bulk_store_of_writes_no_proxy_fence_ordered_is_reported() {
    let run = |fence: bool| {
        let (mut yb, yo) = aligned_output(64);
        let out = GlobalMut::new(&mut yb[yo..yo + 64]);
        let r = emulator::launch(LaunchConfig::new((1, 1, 1), (64, 1, 1)), || {
            store_after_barrier(fence as u32, out.disjoint())
        })
        .map(|_| ());
        (r, yb[yo..yo + 64].to_vec())
    };
    let (ok, got) = run(true);
    ok.unwrap();
    assert_eq!(got, (0..64).map(|i| i as f32).collect::<Vec<_>>());
    let err = run(false).0.unwrap_err().to_string();
    assert!(
        err.starts_with("block (0, 0, 0) thread (0, 0, 0): the bulk::store at"),
        "{err}"
    );
    assert!(err.contains("reads shared 0x"), "{err}");
    assert!(
        err.contains(
            "which thread (0, 0, 0) wrote with no bulk::fence_proxy_async_shared after it"
        ),
        "{err}"
    );
}

#[test]
fn cp_async_reverse_matches_the_cpu() {
    use device_std::vector::F32x4;
    let tiles = 5;
    let n = tiles * async_copy_kernels::REVERSE_TILE;
    let x: Vec<F32x4> = random_f32(&mut rng(41), 4 * n, -1.0, 1.0)
        .chunks(4)
        .map(|c| F32x4([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut y = vec![F32x4([f32::NAN; 4]); n];
    let out = GlobalMut::new(&mut y);
    emulator::launch(LaunchConfig::new((tiles as u32, 1, 1), (256, 1, 1)), || {
        async_copy_kernels::cp_async_reverse(&x, out.disjoint())
    })
    .unwrap();
    let flat = |v: &[F32x4]| -> Vec<f32> { v.iter().flat_map(|v| v.0).collect() };
    let (xf, yf) = (flat(&x), flat(&y));
    for (i, y) in yf.iter().enumerate() {
        let j = i - i % 1024 + 1023 - i % 1024;
        assert_eq!(y.to_bits(), xf[j].to_bits(), "element {i}");
    }
}

/// Fault `which`: 0 reads its own copy before `wait_group`; 1 reads the previous
/// thread's landed copy without a barrier after the waits (thread 0 runs first, so
/// its copy has landed when thread 1 reads it: a race, not an unwritten read).
#[kernel]
pub fn cp_async_faults(which: u32, x: &[f32], mut out: DisjointSlice<f32>) {
    use device_std::cp_async;
    let tile = SharedArray::<f32, 64, 16>::new();
    let t = thread::thread_in_block() as usize;
    cp_async::copy(&tile, t, x, t);
    cp_async::commit_group();
    if which == 0 {
        let v = tile.read(t); // (the seeded fault: before wait_group)
        cp_async::wait_group::<0>();
        if let Some(o) = out.get_mut(thread::index_1d()) {
            *o = v;
        }
    } else {
        cp_async::wait_group::<0>();
        if t > 0 {
            let v = tile.read(t - 1); // (the seeded fault: no sync_threads first)
            if let Some(o) = out.get_mut(thread::index_1d()) {
                *o = v;
            }
        }
    }
}

#[test]
fn cp_async_destinations_read_before_the_wait_or_the_barrier_are_reported() {
    let x = random_f32(&mut rng(42), 64, -1.0, 1.0);
    let run = |which: u32| {
        let mut y = vec![POISON; 64];
        let out = GlobalMut::new(&mut y);
        emulator::launch(LaunchConfig::new((1, 1, 1), (64, 1, 1)), || {
            cp_async_faults(which, &x, out.disjoint())
        })
        .map(|_| ())
        .unwrap_err()
    };
    let err = run(0).to_string();
    assert!(
        err.starts_with("block (0, 0, 0) thread (0, 0, 0): accesses 4 bytes at shared address")
            && err.contains("is the destination of the cp_async::copy at")
            && err.contains("by thread 0 of the block, still in flight"),
        "{err}"
    );
    match run(1) {
        EmulatorError::SharedRace {
            at, other, kind, ..
        } => {
            assert_eq!(kind, device_std::emulator::RaceKind::ReadAfterWrite);
            assert_eq!((at.thread.0, other.thread.0), (1, 0));
        }
        other => panic!("expected a race, got {other}"),
    }
}

/// `bulk::prefetch_l2` of `count` floats from `at`: a hint, checked like a load.
#[kernel]
pub fn prefetch(at: u32, count: u32, x: &[f32], mut out: DisjointSlice<f32>) {
    bulk::prefetch_l2(x, at as usize, count as usize);
    if let Some(o) = out.get_mut(thread::index_1d()) {
        *o = 1.0;
    }
}

#[test]
fn an_l2_prefetch_is_checked_like_a_load() {
    let (xb, xo) = aligned_input(51, 256, 0);
    let x = &xb[xo..xo + 256];
    let run = |at: u32, count: u32| {
        let mut y = vec![POISON; 32];
        let out = GlobalMut::new(&mut y);
        emulator::launch(LaunchConfig::new((1, 1, 1), (32, 1, 1)), || {
            prefetch(at, count, x, out.disjoint())
        })
        .map(|_| y.iter().all(|&v| v == 1.0))
    };
    assert_eq!(run(0, 256), Ok(true));
    let past = run(4, 256).unwrap_err().to_string();
    assert!(
        past.contains("bulk::prefetch_l2: range out of bounds"),
        "{past}"
    );
    let odd = run(0, 3).unwrap_err().to_string();
    assert!(odd.contains("a non-zero multiple of 16 bytes"), "{odd}");
}

#[test]
fn a_multicast_tensor_load_reaches_both_ctas_of_the_cluster() {
    use device_std::emulator::TensorMapDesc;
    let (rows, cols) = (70usize, 64usize);
    let (xb, xo) = aligned_input(61, rows * cols, 0);
    let x = &xb[xo..xo + rows * cols];
    // SAFETY: `x` outlives the launch; the kernel only loads through the map.
    let map = unsafe {
        TensorMapDesc::new(
            x.as_ptr().cast_mut(),
            rows * cols,
            &[cols as u64, rows as u64],
            &[cols as u64 * 4],
            &[32, 32],
        )
    }
    .unwrap();
    let (tiles_x, tiles) = (cols / 32, (cols / 32) * rows.div_ceil(32));
    let mut out = vec![POISON; 2 * tiles * 1024];
    let o = GlobalMut::new(&mut out);
    emulator::launch(
        LaunchConfig::new((2 * tiles as u32, 1, 1), (256, 1, 1)).with_cluster(2, 1, 1),
        || async_copy_kernels::tma_multicast(map.as_param(), tiles_x as u32, o.disjoint()),
    )
    .unwrap();
    for c in 0..tiles {
        let (tx, ty) = (c % tiles_x, c / tiles_x);
        for r in 0..2 {
            for i in 0..1024 {
                let (row, col) = (32 * ty + i / 32, 32 * tx + i % 32);
                let v = if row < rows { x[row * cols + col] } else { 0.0 };
                assert_eq!(
                    out[(2 * c + r) * 1024 + i].to_bits(),
                    (v * (r + 1) as f32).to_bits(),
                    "cluster {c} rank {r} element {i}"
                );
            }
        }
    }
}

/// Fault: rank 0 multicasts before the cluster barrier that would show it rank 1's
/// barrier is initialised.
#[kernel]
pub fn multicast_without_cluster_sync(
    map: device_std::tma::TensorMap<f32, 2, 32, 32>,
    mut out: DisjointSlice<f32>,
) {
    use device_std::cluster;
    let tile = SharedArray::<f32, 1024, 128>::new();
    let bar = Mbarrier::new(1);
    let mut phase = Phase::new();
    if thread::thread_in_block() == 0 {
        bar.arrive_expect_tx(4096);
        if cluster::cta_rank() == 0 {
            map.load_multicast(&tile, [0, 0], &bar, 0b11); // (the seeded fault: no cluster::sync first)
        }
    }
    bar.wait(&mut phase);
    if let Some(o) = out.get_mut(thread::index_1d()) {
        *o = tile.read(0);
    }
}

#[test]
fn a_multicast_into_a_cta_that_may_not_have_its_barrier_yet_is_reported() {
    use device_std::emulator::TensorMapDesc;
    let (xb, xo) = aligned_input(62, 64 * 64, 0);
    let x = &xb[xo..xo + 64 * 64];
    // SAFETY: `x` outlives the launch; loads only.
    let map =
        unsafe { TensorMapDesc::new(x.as_ptr().cast_mut(), 64 * 64, &[64, 64], &[256], &[32, 32]) }
            .unwrap();
    let mut out = vec![POISON; 64];
    let o = GlobalMut::new(&mut out);
    let err = emulator::launch(
        LaunchConfig::new((2, 1, 1), (32, 1, 1)).with_cluster(2, 1, 1),
        || multicast_without_cluster_sync(map.as_param(), o.disjoint()),
    )
    .map(|_| ())
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("block (0, 0, 0) thread (0, 0, 0): ")
            && err.contains("the multicast into CTA rank 1")
            && err.contains("then cluster::sync, before the copy is issued"),
        "{err}"
    );
}

/// Rank 0 declares a scratch array before the tile, rank 1 does not: on the GPU both
/// CTAs have the same layout; under the emulator the multicast must still find each
/// CTA's own tile and barrier.
#[kernel]
pub fn multicast_reordered(
    map: device_std::tma::TensorMap<f32, 2, 32, 32>,
    mut out: DisjointSlice<f32>,
) {
    use device_std::cluster;
    let t = thread::thread_in_block() as usize;
    if cluster::cta_rank() == 0 {
        let scratch = SharedArray::<u32, 64>::new();
        scratch.write(t % 64, 0);
    }
    let tile = SharedArray::<f32, 1024, 128>::new();
    let bar = Mbarrier::new(1);
    let mut phase = Phase::new();
    cluster::sync();
    if t == 0 {
        bar.arrive_expect_tx(4096);
        if cluster::cta_rank() == 0 {
            map.load_multicast(&tile, [0, 0], &bar, 0b11);
        }
    }
    bar.wait(&mut phase);
    if let Some(o) = out.get_mut(thread::index_1d()) {
        *o = tile.read(t);
    }
    cluster::sync();
}

#[test]
fn a_multicast_finds_each_ctas_own_arrays_whatever_the_declaration_order() {
    use device_std::emulator::TensorMapDesc;
    let (xb, xo) = aligned_input(63, 64 * 64, 0);
    let x = &xb[xo..xo + 64 * 64];
    // SAFETY: `x` outlives the launch; loads only.
    let map =
        unsafe { TensorMapDesc::new(x.as_ptr().cast_mut(), 64 * 64, &[64, 64], &[256], &[32, 32]) }
            .unwrap();
    let mut out = vec![POISON; 2 * 64];
    let o = GlobalMut::new(&mut out);
    emulator::launch(
        LaunchConfig::new((2, 1, 1), (64, 1, 1)).with_cluster(2, 1, 1),
        || multicast_reordered(map.as_param(), o.disjoint()),
    )
    .unwrap();
    for b in 0..2 {
        for t in 0..64 {
            // Element t of the tile at [0, 0]: row t / 32, column t % 32.
            assert_eq!(
                out[64 * b + t].to_bits(),
                x[(t / 32) * 64 + t % 32].to_bits(),
                "block {b} thread {t}"
            );
        }
    }
}

/// A two-stage producer/consumer ring on mbarriers alone: warp 0's first lane loads
/// rounds of 64 words with `bulk::load`, waiting on a stage's `empty` barrier before
/// refilling it; warp 1 sums each stage and releases it (every lane arrives on
/// `empty`). Released after reading, the race shadow sees every read ordered before the
/// refill (through the barrier); released before reading (the classic pipeline bug),
/// the refill is a write-after-read race.
fn ring(release_after_reading: bool) -> Result<u32, EmulatorError> {
    use device_std::{Mbarriers, Phases};
    let input: Vec<u32> = (0..64 * 6).collect();
    let mut sum = vec![0u32; 1];
    let out = GlobalMut::new(&mut sum);
    emulator::launch(LaunchConfig::new((1, 1, 1), (64, 1, 1)), || {
        let ring = SharedArray::<u32, 128, 128>::new();
        let full = Mbarriers::<2>::new(1);
        let empty = Mbarriers::<2>::new(32);
        let t = thread::thread_in_block() as usize;
        if t < 32 {
            if t == 0 {
                let mut phases = Phases::<2>::new();
                for r in 0..6 {
                    let s = r % 2;
                    if r >= 2 {
                        empty.wait(s, &mut phases);
                    }
                    full.get(s).arrive_expect_tx(256);
                    bulk::load(&ring.part::<64>(s), 0, &input, 64 * r, 64, &full.get(s));
                }
            }
            return;
        }
        let lane = t - 32;
        let mut phases = Phases::<2>::new();
        let mut acc = 0u32;
        for r in 0..6 {
            let s = r % 2;
            full.wait(s, &mut phases);
            if !release_after_reading {
                empty.get(s).arrive();
            }
            acc += ring.read(64 * s + lane) + ring.read(64 * s + 32 + lane);
            if release_after_reading {
                empty.get(s).arrive();
            }
        }
        let total = device_std::warp::redux_sync(device_std::warp::ReduxOp::Add, u32::MAX, acc);
        if lane == 0 {
            let mut o = out.disjoint::<device_std::Index1D>();
            // SAFETY: one thread writes the one element.
            unsafe { *o.get_unchecked_mut(0) = total };
        }
    })?;
    Ok(sum[0])
}

#[test]
fn a_ring_released_after_reading_is_race_free_and_one_released_before_races() {
    assert_eq!(ring(true).unwrap(), (0..64 * 6).sum::<u32>());
    let err = ring(false).unwrap_err();
    assert!(
        matches!(
            err,
            EmulatorError::SharedRace {
                kind: device_std::emulator::RaceKind::WriteAfterRead,
                ..
            }
        ),
        "{err}"
    );
}
