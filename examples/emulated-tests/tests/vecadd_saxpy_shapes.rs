//! `bench_kernels::vecadd` and `saxpy` under the emulator over every 16-byte alignment
//! offset of each buffer (0..4 elements), output lengths 0..=9, inputs shorter than,
//! as long as and longer than the output, and three launch shapes (one block of 64
//! threads, one thread, two blocks of 3): each launch either writes exactly the
//! expected values, bit for bit, and nothing outside the output, or leaves the output
//! untouched and fails: `vecadd` (`#[kernel(slice_align = 16)]`) refuses a non-empty
//! buffer that does not start 16-byte aligned (`EmulatorError::InvalidLaunch`), and
//! both panic on an input shorter than the output.
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

/// Runs `body` with kernel panics' messages silenced (hundreds are expected), then
/// fails with the mismatches it collected, reported with the hook back. One at a time:
/// the panic hook is process-wide, and two tests swapping it at once could leave it
/// silent.
fn quietly(body: impl FnOnce(&mut Vec<String>)) {
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
    assert!(
        failures.is_empty(),
        "{} failures, first: {:#?}",
        failures.len(),
        &failures[..failures.len().min(8)]
    );
}

/// Compares every element `k` of `storage` (the whole buffer `name` around the output)
/// with `want(k)`, bit for bit.
fn check_storage(
    what: &str,
    name: &str,
    storage: &[f32],
    want: impl Fn(usize) -> f32,
    failures: &mut Vec<String>,
) {
    for (k, got) in storage.iter().enumerate() {
        let want = want(k);
        if got.to_bits() != want.to_bits() {
            failures.push(format!("{what}: {name} storage {k} is {got}, want {want}"));
        }
    }
}

/// What a launch should do.
#[derive(Debug, PartialEq)]
enum Want {
    Run,
    Panic,
    Refused,
}

/// Checks a launch's outcome against `want`.
fn outcome<T>(got: Result<T, EmulatorError>, want: Want, what: &str, failures: &mut Vec<String>) {
    let got = match got {
        Ok(_) => Want::Run,
        Err(EmulatorError::Panic { .. }) => Want::Panic,
        Err(EmulatorError::InvalidLaunch(m)) if m.contains("slice_align = 16") => Want::Refused,
        Err(e) => return failures.push(format!("{what}: {e:?}")),
    };
    if got != want {
        failures.push(format!("{what}: {got:?}, want {want:?}"));
    }
}

#[test]
fn vecadd_every_offset_length_and_shape() {
    quietly(|failures| {
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
                        let misaligned =
                            |offset: usize, len: usize| len > 0 && !offset.is_multiple_of(4);
                        let want = if misaligned(ao, la) || misaligned(bo, lb) || misaligned(co, n)
                        {
                            Want::Refused
                        } else if la < n || lb < n {
                            Want::Panic
                        } else {
                            Want::Run
                        };
                        let ok = want == Want::Run;
                        outcome(got, want, &what, failures);
                        let inside = |k| ok && (co..co + n).contains(&k);
                        check_storage(
                            &what,
                            "c",
                            &c.0,
                            |k| {
                                if inside(k) {
                                    ar[k - co] + br[k - co]
                                } else {
                                    POISON
                                }
                            },
                            failures,
                        );
                    }
                }
            }
        }
    });
}

#[test]
fn saxpy_every_offset_length_and_shape() {
    let alpha = 1.75f32;
    quietly(|failures| {
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
                        let want = if ok { Want::Run } else { Want::Panic };
                        outcome(got, want, &what, failures);
                        let inside = |k| ok && (yo..yo + n).contains(&k);
                        check_storage(
                            &what,
                            "y",
                            &y.0,
                            |k| {
                                if inside(k) {
                                    alpha * xr[k - yo] + y0.0[k]
                                } else {
                                    y0.0[k]
                                }
                            },
                            failures,
                        );
                    }
                }
            }
        }
    });
}

/// Empty outputs: nothing to do, no panic. `vecadd`'s `slice_align` lets an empty
/// slice through wherever it points (`&[]` is at address 4 on the host; on the GPU
/// `host_loader` passes every empty slice at an aligned address), and refuses a
/// non-empty input that is not 16-byte aligned even when there is nothing to compute.
#[test]
fn empty_outputs() {
    let a = Aligned([1.0; 64]);
    let mut c: [f32; 0] = [];
    for (ar, br, vecadd_runs) in [
        (&[][..], &[][..], true),
        (&a.0[..5], &[][..], true),
        (&a.0[1..9], &a.0[..], false),
    ] {
        let out = GlobalMut::new(&mut c[..]);
        let got = emulator::launch(LaunchConfig::new((1, 1, 1), (4, 1, 1)), || {
            bench_kernels::vecadd(ar, br, out.disjoint())
        });
        match got {
            Ok(_) => assert!(vecadd_runs, "vecadd ran with `a` at element 1"),
            Err(EmulatorError::InvalidLaunch(m)) => {
                assert!(!vecadd_runs, "vecadd refused: {m}");
                assert!(m.contains("parameter 0 (`a`) of kernel `vecadd`"), "{m}");
            }
            Err(e) => panic!("vecadd with an empty output: {e:?}"),
        }
        let out = GlobalMut::new(&mut c[..]);
        emulator::launch(LaunchConfig::new((1, 1, 1), (4, 1, 1)), || {
            bench_kernels::saxpy(2.0, ar, out.disjoint())
        })
        .expect("saxpy with an empty output");
    }
}
