//! `bench_kernels::vecadd` and `saxpy` under the emulator over every 16-byte alignment
//! offset of each buffer (0..4 elements), output lengths 0..=9, inputs shorter than,
//! as long as and longer than the output, and three launch shapes (one block of 64
//! threads, one thread, two blocks of 3): each launch either writes exactly the
//! expected values, bit for bit, and nothing outside the output, or (an input shorter
//! than the output) panics with the output untouched. Written by the review of the
//! one-test fast path (`3ae1c0e`).
use device_std::emulator::{self, EmulatorError, GlobalMut, LaunchConfig};
use emulated_tests::emulate::POISON;

/// Sixteen-byte-aligned storage: a slice at offset `k` floats is 16-byte aligned
/// exactly when `k % 4 == 0`.
#[repr(C, align(16))]
struct Aligned([f32; 64]);

/// A launch shape: grid and block extents.
type Shape = ((u32, u32, u32), (u32, u32, u32));

const SHAPES: [Shape; 3] = [
    ((1, 1, 1), (64, 1, 1)),
    ((1, 1, 1), (1, 1, 1)),
    ((2, 1, 1), (3, 1, 1)),
];

/// Input lengths around an output of `n`: shorter (a panic), equal, longer.
fn lengths(n: usize) -> Vec<usize> {
    let mut v = vec![n, n + 1, n + 4, n + 5];
    if n > 0 {
        v.push(n - 1);
    }
    v
}

fn value(k: usize, scale: f32) -> f32 {
    k as f32 * scale + 0.125
}

/// Runs `body` with kernel panics' messages silenced (hundreds are expected) and
/// returns the mismatches it collected, so that they are reported with the hook back.
/// One at a time: the panic hook is process-wide, and two tests swapping it at once
/// could leave it silent.
fn quietly(body: impl FnOnce(&mut Vec<String>)) -> Vec<String> {
    static HOOK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = HOOK.lock().unwrap_or_else(|e| e.into_inner());
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut failures = Vec::new();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(&mut failures)));
    std::panic::set_hook(hook);
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
    failures
}

/// Checks a launch's outcome: `Ok` exactly when `ok`, a kernel panic otherwise.
fn outcome<T>(got: Result<T, EmulatorError>, ok: bool, what: &str, failures: &mut Vec<String>) {
    match got {
        Ok(_) if !ok => failures.push(format!("{what}: no panic for a short input")),
        Err(EmulatorError::Panic { .. }) if ok => failures.push(format!("{what}: panicked")),
        Err(e) if !matches!(e, EmulatorError::Panic { .. }) => {
            failures.push(format!("{what}: {e:?}"))
        }
        _ => {}
    }
}

#[test]
fn vecadd_every_offset_length_and_shape() {
    let failures = quietly(|failures| {
        for (ao, bo, co) in (0..64).map(|i| (i / 16, i / 4 % 4, i % 4)) {
            for n in 0..=9 {
                for (la, lb) in lengths(n)
                    .into_iter()
                    .flat_map(|la| lengths(n).into_iter().map(move |lb| (la, lb)))
                {
                    for (grid, block) in SHAPES {
                        let a = Aligned(core::array::from_fn(|k| value(k, 1.5)));
                        let b = Aligned(core::array::from_fn(|k| value(k, -3.25)));
                        let mut c = Aligned([POISON; 64]);
                        let (ar, br) = (&a.0[ao..ao + la], &b.0[bo..bo + lb]);
                        let out = GlobalMut::new(&mut c.0[co..co + n]);
                        let got = emulator::launch(LaunchConfig::new(grid, block), || {
                            bench_kernels::vecadd(ar, br, out.disjoint())
                        });
                        let what =
                            format!("a+{ao}[{la}] b+{bo}[{lb}] c+{co}[{n}] {grid:?}x{block:?}");
                        let ok = la >= n && lb >= n;
                        outcome(got, ok, &what, failures);
                        for (k, got) in c.0.iter().enumerate() {
                            let inside = ok && (co..co + n).contains(&k);
                            let want = if inside {
                                ar[k - co] + br[k - co]
                            } else {
                                POISON
                            };
                            if got.to_bits() != want.to_bits() {
                                failures
                                    .push(format!("{what}: c storage {k} is {got}, want {want}"));
                            }
                        }
                    }
                }
            }
        }
    });
    assert!(
        failures.is_empty(),
        "{} failures, first: {:#?}",
        failures.len(),
        &failures[..failures.len().min(8)]
    );
}

#[test]
fn saxpy_every_offset_length_and_shape() {
    let alpha = 1.75f32;
    let failures = quietly(|failures| {
        for (xo, yo) in (0..16).map(|i| (i / 4, i % 4)) {
            for n in 0..=9 {
                for lx in lengths(n) {
                    for (grid, block) in SHAPES {
                        let x = Aligned(core::array::from_fn(|k| value(k, 1.5)));
                        let y0 = Aligned(core::array::from_fn(|k| value(k, -3.25)));
                        let mut y = Aligned(y0.0);
                        let xr = &x.0[xo..xo + lx];
                        let out = GlobalMut::new(&mut y.0[yo..yo + n]);
                        let got = emulator::launch(LaunchConfig::new(grid, block), || {
                            bench_kernels::saxpy(alpha, xr, out.disjoint())
                        });
                        let what = format!("x+{xo}[{lx}] y+{yo}[{n}] {grid:?}x{block:?}");
                        let ok = lx >= n;
                        outcome(got, ok, &what, failures);
                        for (k, got) in y.0.iter().enumerate() {
                            let inside = ok && (yo..yo + n).contains(&k);
                            let want = if inside {
                                alpha * xr[k - yo] + y0.0[k]
                            } else {
                                y0.0[k]
                            };
                            if got.to_bits() != want.to_bits() {
                                failures
                                    .push(format!("{what}: y storage {k} is {got}, want {want}"));
                            }
                        }
                    }
                }
            }
        }
    });
    assert!(
        failures.is_empty(),
        "{} failures, first: {:#?}",
        failures.len(),
        &failures[..failures.len().min(8)]
    );
}

/// Empty slices, some at 4- but not 16-byte aligned addresses: nothing to do, no panic.
#[test]
fn empty_outputs_with_unaligned_inputs() {
    let a = Aligned([1.0; 64]);
    let mut c: [f32; 0] = [];
    for (ar, br) in [
        (&[][..], &[][..]),
        (&a.0[..5], &[][..]),
        (&a.0[1..9], &a.0[..]),
    ] {
        let out = GlobalMut::new(&mut c[..]);
        emulator::launch(LaunchConfig::new((1, 1, 1), (4, 1, 1)), || {
            bench_kernels::vecadd(ar, br, out.disjoint())
        })
        .expect("vecadd with an empty output");
        let out = GlobalMut::new(&mut c[..]);
        emulator::launch(LaunchConfig::new((1, 1, 1), (4, 1, 1)), || {
            bench_kernels::saxpy(2.0, ar, out.disjoint())
        })
        .expect("saxpy with an empty output");
    }
}
