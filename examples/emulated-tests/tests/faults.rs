//! Seeded faults: kernels with one bug each (copies of the examples with a
//! line removed or changed), and the report the emulator must give, with
//! the block and thread it names.

use device_std::emulator::{
    self, EmulatorError, GlobalMut, LaunchConfig, Options, RaceKind, ThreadCoords,
};
use device_std::{kernel, thread, BlockIndex1D, DisjointSlice, DynamicSharedArray, SharedArray};
use emulated_tests::reference;
use example_support::{random_f32, rng};

const BLOCK: u32 = block_sum_kernels::BLOCK;

/// `block_sum` without the `sync_threads` inside the reduction loop.
#[kernel]
pub fn block_sum_missing_sync(input: &[f32], mut partial: DisjointSlice<f32, BlockIndex1D>) {
    let cache = SharedArray::<f32, { BLOCK as usize }>::new();
    let tid = thread::threadIdx_x() as usize;
    let base = thread::blockIdx_x() as usize * 2 * BLOCK as usize + tid;
    let load = |i: usize| input.get(i).copied().unwrap_or(0.0);
    cache.write(tid, load(base) + load(base + BLOCK as usize));
    thread::sync_threads();
    let mut stride = BLOCK as usize / 2;
    while stride > 0 {
        if tid < stride {
            cache.write(tid, cache.read(tid) + cache.read(tid + stride));
        }
        // (the seeded fault: no thread::sync_threads() here)
        stride /= 2;
    }
    if let Some(block) = thread::block_leader_index() {
        if let Some(out) = partial.get_mut(&block) {
            *out = cache.read(0);
        }
    }
}

fn run_block_sum(input: &[f32], options: &Options) -> Result<Vec<f32>, EmulatorError> {
    let blocks = input.len().div_ceil(2 * BLOCK as usize);
    let mut partial = vec![f32::NAN; blocks];
    let out = GlobalMut::new(&mut partial);
    let cfg = LaunchConfig::new((blocks as u32, 1, 1), (BLOCK, 1, 1));
    emulator::launch_with(cfg, options, || {
        block_sum_missing_sync(input, out.disjoint())
    })?;
    Ok(partial)
}

#[test]
fn missing_sync_threads_in_the_block_reduction_is_a_reported_race() {
    let input = random_f32(&mut rng(31), 4096, -1.0, 1.0);
    let err = run_block_sum(&input, &Options::default()).unwrap_err();
    // Thread 0 ran its whole loop first, reading cache[1] at stride 1; then
    // thread 1 overwrites cache[1] (stride 128) with no barrier in between.
    match err {
        EmulatorError::SharedRace {
            at,
            other,
            kind: RaceKind::WriteAfterRead,
            addr: _,
            ref allocation,
        } => {
            assert_eq!(at.block, (0, 0, 0));
            assert_eq!(at.thread, (1, 0, 0));
            assert_eq!(other.thread, (0, 0, 0));
            assert!(
                allocation.contains("offset 4 in the 1024-byte SharedArray declared at"),
                "{allocation}"
            );
            assert!(allocation.contains(file!()), "{allocation}");
        }
        other => panic!("expected a write-after-read race, got {other}"),
    }
}

#[test]
fn missing_sync_threads_gives_a_wrong_result_when_races_are_not_tracked() {
    let input = random_f32(&mut rng(32), 4096, -1.0, 1.0);
    let options = Options {
        check_shared: false,
        ..Options::default()
    };
    let got = run_block_sum(&input, &options).unwrap();
    let want = reference::block_sum_tree(&input);
    let wrong = got
        .iter()
        .zip(&want)
        .filter(|(g, w)| (*g - *w).abs() > 1e-3)
        .count();
    assert_eq!(
        wrong,
        got.len(),
        "every block's sum is wrong without the barrier"
    );
}

/// Only the first 100 threads reach the barrier.
#[kernel]
pub fn divergent_barrier(mut out: DisjointSlice<u32>) {
    let i = thread::index_1d();
    if thread::threadIdx_x() < 100 {
        thread::sync_threads();
    }
    if let Some(o) = out.get_mut(&i) {
        *o = 1;
    }
}

#[test]
fn a_barrier_not_every_thread_reaches_is_an_error_not_a_hang() {
    let mut v = vec![0u32; 512];
    let out = GlobalMut::new(&mut v);
    let err = emulator::launch(LaunchConfig::new((2, 1, 1), (256, 1, 1)), || {
        divergent_barrier(out.disjoint())
    })
    .unwrap_err();
    match err {
        EmulatorError::DivergentBarrier {
            block,
            waiting,
            threads,
            exited,
            ref site,
        } => {
            assert_eq!((block, waiting, threads), ((0, 0, 0), 100, 256));
            assert_eq!(exited.thread, (100, 0, 0));
            assert!(site.starts_with(file!()), "{site}");
        }
        other => panic!("expected a divergent barrier, got {other}"),
    }
}

/// Even and odd warps wait at two different `sync_threads` calls.
#[kernel]
#[allow(clippy::if_same_then_else)] // the seeded fault: two barriers that look alike
pub fn two_barriers(mut out: DisjointSlice<u32>) {
    let i = thread::index_1d();
    if thread::warp_id().is_multiple_of(2) {
        thread::sync_threads();
    } else {
        thread::sync_threads();
    }
    if let Some(o) = out.get_mut(&i) {
        *o = 1;
    }
}

#[test]
fn threads_at_two_different_barriers_are_reported() {
    let mut v = vec![0u32; 64];
    let out = GlobalMut::new(&mut v);
    let err = emulator::launch(LaunchConfig::new((1, 1, 1), (64, 1, 1)), || {
        two_barriers(out.disjoint())
    })
    .unwrap_err();
    match err {
        EmulatorError::BarrierMismatch {
            first,
            second,
            ref first_site,
            ref second_site,
        } => {
            assert_eq!((first.thread, second.thread), ((0, 0, 0), (32, 0, 0)));
            assert_ne!(first_site, second_site);
        }
        other => panic!("expected mismatched barriers, got {other}"),
    }
}

/// `transpose`'s unchecked write with a wrong index: `at / 2`, so two
/// threads take each element.
#[kernel]
pub fn duplicate_write(input: &[f32], mut output: DisjointSlice<f32>) {
    let k = thread::index_1d().get();
    if k < input.len() {
        // SAFETY (deliberately broken): in bounds, but not exclusive.
        unsafe { *output.get_unchecked_mut(k / 2) = input[k] };
    }
}

#[test]
fn two_threads_writing_one_disjoint_element_are_reported() {
    let input = random_f32(&mut rng(33), 1000, -1.0, 1.0);
    let mut v = vec![f32::NAN; 1000];
    let out = GlobalMut::new(&mut v);
    let options = Options {
        workers: 1,
        ..Options::default()
    };
    let err = emulator::launch_with(LaunchConfig::for_num_elems(1000, 128), &options, || {
        duplicate_write(&input, out.disjoint())
    })
    .unwrap_err();
    let t = |x| ThreadCoords {
        block: (0, 0, 0),
        thread: (x, 0, 0),
    };
    assert_eq!(
        err,
        EmulatorError::DuplicateWrite {
            index: 0,
            first: t(0),
            second: t(1),
        }
    );
}

/// Writes one element past the end of a shared array through `SharedPtr`.
#[kernel]
pub fn shared_out_of_bounds(mut out: DisjointSlice<f32>) {
    let tile = SharedArray::<f32, 32>::new();
    let t = thread::threadIdx_x() as usize;
    // SAFETY (deliberately broken): thread 31 writes element 32 of 32.
    unsafe { tile.ptr(t).add(1).write(t as f32) };
    thread::sync_threads();
    if let Some((o, _)) = out.get_mut_indexed() {
        *o = tile.read(t);
    }
}

#[test]
fn a_shared_access_past_the_end_is_reported_with_its_allocation() {
    let mut v = vec![0.0f32; 64];
    let out = GlobalMut::new(&mut v);
    let err = emulator::launch(LaunchConfig::new((2, 1, 1), (32, 1, 1)), || {
        shared_out_of_bounds(out.disjoint())
    })
    .unwrap_err();
    match err {
        EmulatorError::SharedOutOfBounds {
            at,
            bytes,
            ref detail,
            ..
        } => {
            assert_eq!(at.thread, (31, 0, 0));
            assert_eq!(bytes, 4);
            assert!(
                detail.starts_with("0 bytes past the end of the 128-byte SharedArray declared at"),
                "{detail}"
            );
        }
        other => panic!("expected an out-of-bounds shared access, got {other}"),
    }
}

/// Reads a dynamic shared element past what the launch provided (a failed
/// bounds check, i.e. a kernel panic), after reading an unwritten one.
#[kernel]
pub fn dynamic_past_the_end(which: u32, mut out: DisjointSlice<f32>) {
    let d = DynamicSharedArray::<f32>::get();
    let t = thread::threadIdx_x() as usize;
    d.write(t, 1.0);
    thread::sync_threads();
    let v = if which == 0 {
        d.read(t + 1)
    } else {
        d.read(d.len())
    };
    if let Some((o, _)) = out.get_mut_indexed() {
        *o = v;
    }
}

#[test]
fn unwritten_shared_reads_and_failed_bounds_checks_are_reported() {
    let mut v = vec![0.0f32; 64];
    let cfg = LaunchConfig::new((1, 1, 1), (64, 1, 1)).with_dynamic_shared(4 * 64 + 16);
    let out = GlobalMut::new(&mut v);
    let err = emulator::launch(cfg, || dynamic_past_the_end(0, out.disjoint())).unwrap_err();
    match err {
        EmulatorError::UninitSharedRead {
            at, ref allocation, ..
        } => {
            assert_eq!(at.thread, (63, 0, 0));
            assert!(
                allocation.starts_with("offset 256 in the 272 bytes of dynamic shared memory"),
                "{allocation}"
            );
        }
        other => panic!("expected an uninitialised read, got {other}"),
    }
    let out = GlobalMut::new(&mut v);
    let err = emulator::launch(cfg, || dynamic_past_the_end(1, out.disjoint())).unwrap_err();
    match err {
        EmulatorError::Panic {
            at,
            ref message,
            ref location,
        } => {
            // The last thread to reach the barrier runs on first.
            assert_eq!(at.thread, (63, 0, 0));
            // The index, the length, and the kernel's own line (issue 31, point 4).
            assert_eq!(
                message,
                "DynamicSharedArray index 68 out of bounds for length 68"
            );
            assert!(
                location.as_deref().is_some_and(|l| l.starts_with(file!())),
                "{location:?}"
            );
        }
        other => panic!("expected a kernel panic, got {other}"),
    }
}

/// Reads a static shared array one past its end on thread 7.
#[kernel]
pub fn shared_past_the_end(mut out: DisjointSlice<f32>) {
    let tile = SharedArray::<f32, 32>::new();
    let t = thread::threadIdx_x() as usize;
    tile.write(t, 1.0);
    thread::sync_threads();
    let v = tile.read(if t == 7 { 32 } else { t });
    if let Some((o, _)) = out.get_mut_indexed() {
        *o = v;
    }
}

#[test]
fn a_shared_array_index_past_the_end_names_index_length_and_line() {
    let mut v = vec![0.0f32; 32];
    let out = GlobalMut::new(&mut v);
    let err = emulator::launch(LaunchConfig::new((1, 1, 1), (32, 1, 1)), || {
        shared_past_the_end(out.disjoint())
    })
    .unwrap_err();
    match err {
        EmulatorError::Panic {
            at,
            ref message,
            ref location,
        } => {
            assert_eq!(at.thread, (7, 0, 0));
            assert_eq!(message, "SharedArray index 32 out of bounds for length 32");
            assert!(
                location.as_deref().is_some_and(|l| l.starts_with(file!())),
                "{location:?}"
            );
        }
        other => panic!("expected a kernel panic, got {other}"),
    }
}

/// A kernel with an out-of-bounds slice index on block 3's thread 5.
#[kernel]
pub fn indexes_past_the_input(input: &[f32], mut out: DisjointSlice<f32>) {
    let i = thread::index_1d();
    let k = i.get();
    if let Some(o) = out.get_mut(&i) {
        *o = input[k + 1];
    }
}

#[test]
fn a_kernel_panic_is_reported_with_its_thread_and_location() {
    let input = vec![1.0f32; 100];
    let mut v = vec![0.0f32; 100];
    let out = GlobalMut::new(&mut v);
    let err = emulator::launch(LaunchConfig::for_num_elems(100, 32), || {
        indexes_past_the_input(&input, out.disjoint())
    })
    .unwrap_err();
    match err {
        EmulatorError::Panic {
            at,
            ref message,
            ref location,
        } => {
            assert_eq!(at.block, (3, 0, 0));
            assert_eq!(at.thread, (3, 0, 0));
            assert!(message.contains("index out of bounds"), "{message}");
            assert!(location.as_deref().is_some_and(|l| l.starts_with(file!())));
        }
        other => panic!("expected a kernel panic, got {other}"),
    }
}

#[test]
fn a_block_of_2048_threads_is_refused_before_anything_runs() {
    let err = emulator::launch(LaunchConfig::new((1, 1, 1), (2048, 1, 1)), || {
        unreachable!("no thread may run")
    })
    .unwrap_err();
    assert!(matches!(err, EmulatorError::InvalidLaunch(ref s) if s.contains("1024 threads")));
}

/// `DynamicSharedArray::array`: a `SharedArray` over part of the dynamic shared memory
/// (the same bytes: written through the view, read back through the array), and its two
/// traps: a view reaching past the end (`which` 1) and one off the alignment (2).
#[kernel]
pub fn dynamic_array_view(which: u32, mut out: DisjointSlice<f32>) {
    let d = DynamicSharedArray::<f32, 256>::get();
    let t = thread::threadIdx_x() as usize;
    let at = match which {
        0 => 64,
        1 => d.len() - 63,
        _ => 1,
    };
    let view = d.array::<64>(at);
    view.write(t, t as f32);
    thread::sync_threads();
    let v = d.read(at + 63 - t);
    if let Some((o, _)) = out.get_mut_indexed() {
        *o = v;
    }
}

#[test]
fn dynamic_shared_array_views_share_the_memory_and_check_bounds_and_alignment() {
    let mut v = vec![-1.0f32; 64];
    let cfg = LaunchConfig::new((1, 1, 1), (64, 1, 1)).with_dynamic_shared(4 * 128);
    let out = GlobalMut::new(&mut v);
    emulator::launch(cfg, || dynamic_array_view(0, out.disjoint())).unwrap();
    assert!(
        v.iter().enumerate().all(|(t, &x)| x == (63 - t) as f32),
        "{v:?}"
    );
    for (which, want) in [
        (1, "DynamicSharedArray::array out of bounds"),
        (
            2,
            "DynamicSharedArray::array: the address is not a multiple of ALIGN",
        ),
    ] {
        let out = GlobalMut::new(&mut v);
        let err = emulator::launch(cfg, || dynamic_array_view(which, out.disjoint())).unwrap_err();
        match err {
            EmulatorError::Panic { ref message, .. } => assert_eq!(message, want),
            other => panic!("expected a kernel panic, got {other}"),
        }
    }
}
