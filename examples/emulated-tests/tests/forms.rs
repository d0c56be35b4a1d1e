//! The device-API forms of the users' documentation (`get_mut_indexed` with its
//! witness, the two-step `get_mut` with the witness by value, `DynamicSharedArray`
//! carved by `offset` and addressed with `add`), run under the emulator on random
//! inputs with poisoned outputs and checked element by element against the CPU. The
//! kernels live in device-std's fixture crate, which `cargo xtask build-ptx` also
//! compiles for the GPU.

use device_std::emulator::{self, GlobalMut, LaunchConfig};
use device_std_fixture_kernels as k;
use emulated_tests::emulate::POISON;
use example_support::{count_mismatches, random_f32, rng};

const N: usize = 10_007;

fn run(
    cfg: LaunchConfig,
    xs: &[f32],
    kernel: fn(&[f32], device_std::DisjointSlice<f32>),
) -> Vec<f32> {
    let mut out = vec![POISON; xs.len()];
    let view = GlobalMut::new(&mut out);
    emulator::launch(cfg, || kernel(xs, view.disjoint())).unwrap();
    out
}

#[test]
fn get_mut_indexed_gives_the_slot_and_the_witness() {
    let xs = random_f32(&mut rng(61), N, -100.0, 100.0);
    let got = run(
        LaunchConfig::for_num_elems(N as u32, 128),
        &xs,
        k::form_claim_and_read,
    );
    let want: Vec<f32> = xs.iter().map(|x| 2.0 * x + 1.0).collect();
    assert_eq!(count_mismatches("claim_and_read", &got, &want, 0.0), 0);
}

#[test]
fn get_mut_takes_the_witness_by_value() {
    let xs = random_f32(&mut rng(62), N, -100.0, 100.0);
    let got = run(
        LaunchConfig::for_num_elems(N as u32, 96),
        &xs,
        k::form_two_step,
    );
    let want: Vec<f32> = xs.iter().map(|x| x - 3.0).collect();
    assert_eq!(count_mismatches("two_step", &got, &want, 0.0), 0);
}

#[test]
fn dynamic_shared_partitions_by_offset_and_add() {
    let xs = random_f32(&mut rng(63), N, -100.0, 100.0);
    let block = 64u32;
    let cfg = LaunchConfig::for_num_elems(N as u32, block).with_dynamic_shared(8 * block);
    let got = run(cfg, &xs, k::form_dynamic_partitions);
    let want: Vec<f32> = (0..N)
        .map(|i| {
            let j = i ^ 1;
            xs.get(j).copied().unwrap_or(0.0) + (j % 3) as f32
        })
        .collect();
    assert_eq!(count_mismatches("dynamic_partitions", &got, &want, 0.0), 0);
}

/// A generic kernel's instances (`#[kernel(instances(...))]`, issue 31, point 11) are
/// kernels of their own under the emulator too: `block_reduce::<f32, 256>` and
/// `block_reduce::<u32, 128>` give each block's sum.
#[test]
fn generic_kernel_instances_reduce_each_block() {
    let mut r = rng(31);
    let xs = random_f32(&mut r, 4 * 256 + 37, -1.0, 1.0);
    let blocks = xs.len().div_ceil(256);
    let mut sums = vec![f32::NAN; blocks];
    {
        let out = GlobalMut::new(&mut sums);
        let cfg = LaunchConfig::new((blocks as u32, 1, 1), (256, 1, 1));
        emulator::launch(cfg, || k::block_reduce_f32_256(&xs, out.disjoint())).unwrap();
    }
    for (b, got) in sums.iter().enumerate() {
        let chunk = &xs[b * 256..((b + 1) * 256).min(xs.len())];
        let want: f64 = chunk.iter().map(|&x| x as f64).sum();
        assert!(
            (*got as f64 - want).abs() <= 1e-4 * (1.0 + want.abs()),
            "block {b}: {got} vs {want}"
        );
    }
    let ys: Vec<u32> = (0..1000u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 12)
        .collect();
    let blocks = ys.len().div_ceil(128);
    let mut sums = vec![u32::MAX; blocks];
    {
        let out = GlobalMut::new(&mut sums);
        let cfg = LaunchConfig::new((blocks as u32, 1, 1), (128, 1, 1));
        emulator::launch(cfg, || k::block_reduce_u32_128(&ys, out.disjoint())).unwrap();
    }
    let want: Vec<u32> = ys
        .chunks(128)
        .map(|c| c.iter().fold(0u32, |a, &y| a.wrapping_add(y)))
        .collect();
    assert_eq!(sums, want);
}

/// A kernel that declares its dynamic shared memory (`#[kernel(dynamic_shared = 64,
/// dynamic_shared_per_thread = 4)]`, issue 31, point 2) runs with what it declares, and a
/// launch with less fails with the numbers instead of an out-of-bounds access.
#[test]
fn declared_dynamic_shared_memory_is_checked_under_the_emulator() {
    let block = 96u32;
    let n = 3 * block as usize;
    let mut out = vec![f32::NAN; n];
    {
        let o = GlobalMut::new(&mut out);
        let cfg = LaunchConfig::new((3, 1, 1), (block, 1, 1)).with_dynamic_shared(64 + 4 * block);
        emulator::launch(cfg, || k::declared_shared(o.disjoint())).unwrap();
    }
    for (i, got) in out.iter().enumerate() {
        let t = i % block as usize;
        let want = (block as usize - 1 - t) as f32 + 100.0 * (t % 16) as f32;
        assert_eq!(*got, want, "i = {i}");
    }
    let mut out = vec![0.0f32; n];
    let o = GlobalMut::new(&mut out);
    let cfg = LaunchConfig::new((3, 1, 1), (block, 1, 1)).with_dynamic_shared(64 + 4 * block - 1);
    let err = emulator::launch(cfg, || k::declared_shared(o.disjoint())).unwrap_err();
    let msg = err.to_string();
    for part in [
        "declared_shared",
        "64 + 4 × threads",
        "448 bytes for blocks of 96 threads",
        "gives 447",
    ] {
        assert!(msg.contains(part), "{part:?} missing from: {msg}");
    }
}

/// Optional buffers (issue 31, point 12): the kernel sees `None` or the buffer, in every
/// combination.
#[test]
fn optional_buffers_are_none_or_the_buffer() {
    let n = 300usize;
    let xs: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let scale: Vec<f32> = (0..n).map(|i| 1.0 + (i % 7) as f32).collect();
    let cfg = LaunchConfig::new((3, 1, 1), (128, 1, 1));
    for (with_scale, with_firsts) in [(false, false), (true, false), (false, true), (true, true)] {
        let mut out = vec![f32::NAN; n];
        let mut firsts = vec![f32::NAN; 3];
        {
            let o = GlobalMut::new(&mut out);
            let f = GlobalMut::new(&mut firsts);
            emulator::launch(cfg, || {
                k::optional_buffers(
                    &xs,
                    with_scale.then_some(&scale[..]),
                    o.disjoint(),
                    with_firsts.then(|| f.disjoint()),
                )
            })
            .unwrap();
        }
        let want = |i: usize| if with_scale { xs[i] * scale[i] } else { xs[i] };
        for (i, got) in out.iter().enumerate() {
            assert_eq!(*got, want(i), "scale {with_scale}, i = {i}");
        }
        for (b, got) in firsts.iter().enumerate() {
            if with_firsts && b * 128 < n {
                assert_eq!(*got, want(b * 128), "block {b}");
            } else {
                assert!(got.is_nan(), "block {b} written without the buffer");
            }
        }
    }
}
