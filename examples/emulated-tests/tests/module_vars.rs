//! `examples/module_vars` under the emulator: constant memory written by the host
//! side (`Constant::write_on_host`, the stand-in for `Module::constant(..).write`),
//! and device globals that count across launches. One test: the variables are
//! process-wide statics, as they are module-wide on the GPU.

use device_std::emulator::{self, GlobalMut, LaunchConfig};
use example_support::module_vars::{conv_clamped, reverse_blocks};
use example_support::{random_f32, rng, POISON};
use module_vars_kernels::{ABOVE, BLOCK, LAUNCHES, TAPS, TAPS_LEN};

#[test]
fn static_shared_form_reverses_each_block() {
    let mut r = rng(32);
    let b = BLOCK as usize;
    let n = 3 * b;
    let input = random_f32(&mut r, n, -1.0, 1.0);
    let mut out = vec![POISON; n];
    let o = GlobalMut::new(&mut out);
    let cfg = LaunchConfig::for_num_elems(n as u32, BLOCK);
    emulator::launch(cfg, || {
        module_vars_kernels::reverse_blocks(&input, o.disjoint())
    })
    .unwrap();
    let want = reverse_blocks(&input, b);
    assert_eq!(out, want);
}

#[test]
fn filter_from_constant_memory_and_counters_across_launches() {
    let mut r = rng(31);
    let n = 1000; // the last block partial
    let input = random_f32(&mut r, n, -1.0, 1.0);
    let taps: [f32; TAPS_LEN] = random_f32(&mut r, TAPS_LEN, -1.0, 1.0).try_into().unwrap();
    let want = conv_clamped(&input, &taps);
    let cfg = LaunchConfig::for_num_elems(n as u32, BLOCK);

    TAPS.write_on_host(taps);
    let mut out = vec![POISON; n];
    let o = GlobalMut::new(&mut out);
    emulator::launch(cfg, || {
        module_vars_kernels::conv_const(&input, o.disjoint())
    })
    .unwrap();
    assert!(out
        .iter()
        .zip(&want)
        .all(|(a, b)| a.to_bits() == b.to_bits()));

    let mut out = vec![POISON; n];
    let o = GlobalMut::new(&mut out);
    emulator::launch(cfg, || {
        module_vars_kernels::conv_global(&input, &taps, o.disjoint())
    })
    .unwrap();
    assert!(out
        .iter()
        .zip(&want)
        .all(|(a, b)| a.to_bits() == b.to_bits()));

    let threshold = 0.25;
    let above = input.iter().filter(|&&x| x > threshold).count() as u32;
    assert!(above > 0);
    ABOVE.write(5);
    LAUNCHES.write(0);
    for _ in 0..3 {
        emulator::launch(cfg, || module_vars_kernels::count_above(&input, threshold)).unwrap();
    }
    assert_eq!(ABOVE.read(), 5 + 3 * above);
    assert_eq!(LAUNCHES.read(), 3);
}

/// Two statics of the static shared form reached through one helper: two arrays.
#[test]
fn two_static_shared_arrays_through_one_helper() {
    use device_std::{thread, SharedArray};
    static mut A: SharedArray<u32, 32> = SharedArray::UNINIT;
    static mut B: SharedArray<u32, 32> = SharedArray::UNINIT;
    fn put(t: &mut SharedArray<u32, 32>, i: usize, v: u32) {
        t[i] = v;
    }
    let mut out = vec![0u32; 32];
    let o = GlobalMut::new(&mut out);
    emulator::launch(LaunchConfig::new((1, 1, 1), (32, 1, 1)), || {
        let i = thread::threadIdx_x() as usize;
        // SAFETY: each thread its own element; the barrier orders the reads.
        #[allow(static_mut_refs)]
        unsafe {
            put(&mut A, i, i as u32);
            put(&mut B, i, 100 + i as u32);
        }
        thread::sync_threads();
        let idx = thread::index_1d();
        #[allow(static_mut_refs)]
        let v = unsafe { A[31 - i] + B[i] };
        if let Some(x) = o.disjoint().get_mut(&idx) {
            *x = v;
        }
    })
    .unwrap();
    assert!(out
        .iter()
        .enumerate()
        .all(|(i, &v)| v == (31 - i as u32) + 100 + i as u32));
}

/// Indexing a handle (not a static of the static shared form) panics instead of
/// handing out a reference into memory the whole block shares.
#[test]
fn indexing_a_handle_panics() {
    use device_std::SharedArray;
    let err = emulator::launch(LaunchConfig::new((1, 1, 1), (32, 1, 1)), || {
        let mut tile = SharedArray::<f32, 32>::new();
        tile[0] = 1.0;
    })
    .unwrap_err();
    assert!(format!("{err}").contains("static shared form"), "{err}");
}
