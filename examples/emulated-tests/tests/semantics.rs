//! CUDA semantics the examples do not reach: partial warps, exited lanes,
//! mismatched collectives, spin-waits inside a block, `device_println!`,
//! and misuse of `GlobalMut`.

// Kernels here take raw pointers; the launch is their contract, as on the GPU.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use device_std::emulator::{self, EmulatorError, GlobalMut, LaunchConfig, Options};
use device_std::warp::{self, FULL_MASK};
use device_std::{atomic, device_println, kernel, thread, DisjointSlice, SharedArray};

/// Per thread: the active mask, a `redux` sum and a ballot over it, and a
/// butterfly sum that reads lane `lane ^ 16`.
#[kernel]
pub fn partial_warp(butterfly: u32, mut out: DisjointSlice<[u32; 3]>) {
    let lane = thread::lane_id();
    let mask = warp::activemask();
    let sum = warp::redux_sync(warp::ReduxOp::Add, mask, lane);
    let odd = warp::ballot_sync(mask, lane % 2 == 1);
    let mut v = lane;
    if butterfly != 0 {
        v += warp::shfl_xor_sync(mask, v, 16);
    }
    if let Some((o, _)) = out.get_mut_indexed() {
        *o = [mask, sum + v - lane, odd];
    }
}

#[test]
fn a_partial_last_warp_exchanges_among_the_lanes_it_has() {
    // Blocks of 40 threads: warp 1 has lanes 0..8 only.
    let cfg = LaunchConfig::new((2, 1, 1), (40, 1, 1));
    let mut v = vec![[0u32; 3]; 80];
    let out = GlobalMut::new(&mut v);
    emulator::launch(cfg, || partial_warp(0, out.disjoint())).unwrap();
    for b in 0..2 {
        assert_eq!(v[40 * b], [u32::MAX, (0..32).sum(), 0xAAAA_AAAA]);
        assert_eq!(v[40 * b + 39], [0xFF, (0..8).sum(), 0xAA]);
    }
    // A shuffle from lane 0 to lane 16, which warp 1 does not have.
    let out = GlobalMut::new(&mut v);
    let err = emulator::launch(cfg, || partial_warp(1, out.disjoint())).unwrap_err();
    match err {
        EmulatorError::WarpCollective { at, ref message } => {
            assert_eq!(at.thread, (32, 0, 0));
            assert!(
                message.contains("with mask 0x000000ff: lane 0 reads lane 16"),
                "{message}"
            );
        }
        other => panic!("expected a warp-collective error, got {other}"),
    }
}

/// Lane 31 exits; the others shuffle down by one with the full mask.
#[kernel]
pub fn reads_an_exited_lane(mut out: DisjointSlice<u32>) {
    let lane = thread::lane_id();
    if lane == 31 {
        return;
    }
    let v = warp::shfl_down_sync(FULL_MASK, lane, 1);
    if let Some((o, _)) = out.get_mut_indexed() {
        *o = v;
    }
}

/// Half the warp votes, the other half shuffles, both under the full mask.
#[kernel]
pub fn mixes_collectives(mut out: DisjointSlice<u32>) {
    let lane = thread::lane_id();
    let v = if lane < 16 {
        warp::ballot_sync(FULL_MASK, lane.is_multiple_of(2))
    } else {
        warp::shfl_sync(FULL_MASK, lane, 0)
    };
    if let Some((o, _)) = out.get_mut_indexed() {
        *o = v;
    }
}

#[test]
fn warp_collective_misuse_is_reported() {
    let mut v = vec![0u32; 32];
    let cfg = LaunchConfig::new((1, 1, 1), (32, 1, 1));
    let out = GlobalMut::new(&mut v);
    let err = emulator::launch(cfg, || reads_an_exited_lane(out.disjoint())).unwrap_err();
    match err {
        EmulatorError::WarpCollective { at, ref message } => {
            assert_eq!(at.thread, (30, 0, 0));
            assert!(
                message.contains("lane 30 reads lane 31, which is not in the mask or has exited"),
                "{message}"
            );
        }
        other => panic!("expected a warp-collective error, got {other}"),
    }
    let out = GlobalMut::new(&mut v);
    let err = emulator::launch(cfg, || mixes_collectives(out.disjoint())).unwrap_err();
    match err {
        EmulatorError::WarpCollective { at, ref message } => {
            assert_eq!(at.thread, (16, 0, 0));
            assert!(
                message.contains("shfl_sync") && message.contains("ballot_sync"),
                "{message}"
            );
        }
        other => panic!("expected a warp-collective error, got {other}"),
    }
}

/// Thread 1 spins (with `nanosleep`) until thread 0 raises a shared flag.
#[kernel]
pub fn spin_on_a_sibling(mut out: DisjointSlice<u32>) {
    let flag = SharedArray::<u32, 1>::new();
    let t = thread::threadIdx_x();
    if t == 0 {
        flag.write(0, 0);
    }
    thread::sync_threads();
    let mut spins = 0;
    if t == 1 {
        // SAFETY: in bounds; every concurrent access is atomic.
        while unsafe {
            atomic::shared::fetch_or(
                flag.ptr(0),
                0,
                atomic::Ordering::Acquire,
                atomic::Scope::Cta,
            )
        } == 0
        {
            spins += 1;
            thread::nanosleep(100);
        }
    } else if t == 0 {
        // SAFETY: as above.
        unsafe {
            atomic::shared::swap(
                flag.ptr(0),
                1,
                atomic::Ordering::Release,
                atomic::Scope::Cta,
            )
        };
    }
    if let Some((o, _)) = out.get_mut_indexed() {
        *o = spins;
    }
}

#[test]
fn a_spin_wait_with_nanosleep_lets_the_other_threads_of_its_block_run() {
    let mut v = vec![u32::MAX; 2];
    let out = GlobalMut::new(&mut v);
    emulator::launch(LaunchConfig::new((1, 1, 1), (2, 1, 1)), || {
        spin_on_a_sibling(out.disjoint())
    })
    .unwrap();
    // Thread 1, the last at the barrier, runs on first and spins once; its
    // `nanosleep` lets thread 0 raise the flag.
    assert_eq!(v, [0, 1]);
}

/// Every thread prints its coordinates and a few formats.
#[kernel]
pub fn prints() {
    device_println!(
        "block %u thread %u: %5.2f %s %lld",
        thread::blockIdx_x(),
        thread::threadIdx_x(),
        1.5f32,
        c"ok",
        -7i64
    );
}

#[test]
fn device_println_formats_like_printf() {
    let options = Options {
        capture_output: true,
        workers: 1,
        ..Options::default()
    };
    let stats =
        emulator::launch_with(LaunchConfig::new((2, 1, 1), (2, 1, 1)), &options, prints).unwrap();
    assert_eq!(
        stats.output,
        [
            "block 0 thread 0:  1.50 ok -7",
            "block 0 thread 1:  1.50 ok -7",
            "block 1 thread 0:  1.50 ok -7",
            "block 1 thread 1:  1.50 ok -7",
        ]
    );
}

#[test]
fn a_global_mut_serves_one_slice_per_thread_and_launches_in_turn() {
    let mut v = vec![0u32; 4];
    let out = GlobalMut::new(&mut v);
    let cfg = LaunchConfig::new((1, 1, 1), (4, 1, 1));
    let err = emulator::launch(cfg, || {
        let _a: DisjointSlice<u32> = out.disjoint();
        let _b: DisjointSlice<u32> = out.disjoint();
    })
    .unwrap_err();
    assert!(
        matches!(err, EmulatorError::Panic { ref message, .. } if message.contains("called twice by one thread")),
        "{err}"
    );
    // The next launch may use the handle: the one before has ended.
    emulator::launch(cfg, || {
        let _a: DisjointSlice<u32> = out.disjoint();
    })
    .unwrap();
}

#[test]
#[should_panic(expected = "outside an emulated launch")]
fn a_device_function_outside_a_launch_panics() {
    thread::threadIdx_x();
}

/// `sync_warp(mask)` orders the accesses of the lanes in `mask` among themselves only
/// (`bar.warp.sync`): lanes 0..16 meet under `0xFFFF` and lane 0 then reads a word
/// that lane `writer` stored before (lanes 0..16 sleep first, so the store comes
/// before the meeting whoever makes it). From lane 1 (in the mask) the read is
/// ordered; from lane 16 (outside it, and exited by the time of the meeting) it is a
/// race.
fn partial_sync_then_read(writer: usize) -> Result<u32, EmulatorError> {
    let mut v = vec![u32::MAX; 1];
    let out = GlobalMut::new(&mut v);
    emulator::launch(LaunchConfig::new((1, 1, 1), (32, 1, 1)), || {
        let s = SharedArray::<u32, 32, 16>::new();
        let lane = thread::thread_in_block() as usize;
        if lane < 16 {
            thread::nanosleep(100);
        }
        if lane == writer {
            s.write(0, 7);
        }
        if lane < 16 {
            thread::sync_warp(0x0000_FFFF);
            if lane == 0 {
                let mut o = out.disjoint::<device_std::Index1D>();
                // SAFETY: one thread writes the one element.
                unsafe { *o.get_unchecked_mut(0) = s.read(0) };
            }
        }
    })?;
    Ok(v[0])
}

#[test]
fn a_partial_sync_warp_orders_only_the_lanes_in_its_mask() {
    assert_eq!(partial_sync_then_read(1).unwrap(), 7);
    let err = partial_sync_then_read(16).unwrap_err();
    assert!(
        matches!(
            err,
            EmulatorError::SharedRace {
                kind: emulator::RaceKind::ReadAfterWrite,
                ..
            }
        ),
        "{err}"
    );
}

/// Per thread: `index_1d` and the documented linearisation, `block_in_grid() ×
/// block_size() + thread_in_block()`, written at the index.
#[kernel]
pub fn linear_indices(mut out: DisjointSlice<[u64; 2]>) {
    let i = thread::index_1d();
    let want =
        thread::block_in_grid() * thread::block_size() as u64 + thread::thread_in_block() as u64;
    let k = i.get() as u64;
    if let Some(o) = out.get_mut(&i) {
        *o = [k, want];
    }
}

#[test]
fn index_1d_linearises_every_launch_shape_without_gaps() {
    for (grid, block) in [
        ((3, 1, 1), (64, 1, 1)),
        ((2, 3, 1), (8, 4, 1)),
        ((2, 3, 2), (4, 2, 3)),
        ((1, 1, 5), (1, 1, 7)),
        ((4, 1, 1), (2, 5, 1)),
    ] {
        let cfg = LaunchConfig::new(grid, block);
        let n = (grid.0 * grid.1 * grid.2 * block.0 * block.1 * block.2) as usize;
        let mut v = vec![[u64::MAX; 2]; n];
        let out = GlobalMut::new(&mut v);
        emulator::launch(cfg, || linear_indices(out.disjoint())).unwrap();
        for (j, [k, want]) in v.iter().enumerate() {
            assert_eq!(
                (*k, *want),
                (j as u64, j as u64),
                "grid {grid:?} block {block:?}"
            );
        }
    }
}
