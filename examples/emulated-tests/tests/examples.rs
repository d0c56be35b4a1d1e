//! Every example kernel (but `memory_tour`'s, which are nvptx-only) under
//! the emulator, on random inputs with poisoned outputs, against its CPU
//! reference. Sizes keep the tail cases: lengths that are not multiples of
//! the block, matrices whose sides are not multiples of the tile.

use emulated_tests::{emulate, inputs, reference};
use example_support::{count_mismatches, random_f32, rng};
use mathlib::Affine;
use struct_params_kernels::{Float4, Transform};

#[test]
fn vecadd_matches_the_cpu_exactly() {
    let mut r = rng(11);
    let n = 100_003;
    let (a, b) = (
        random_f32(&mut r, n, -1000.0, 1000.0),
        random_f32(&mut r, n, -1000.0, 1000.0),
    );
    let c = emulate::vecadd(&a, &b).unwrap();
    assert_eq!(
        count_mismatches("vecadd", &c, &reference::vecadd(&a, &b), 0.0),
        0
    );
}

#[test]
fn block_sum_matches_the_f64_sums_and_its_own_tree_order_bit_for_bit() {
    let mut r = rng(12);
    let input = random_f32(&mut r, 40_000, -1.0, 1.0); // 79 blocks, the last partial
    let partial = emulate::block_sum(&input).unwrap();
    assert_eq!(partial.len(), 79);
    let want = reference::block_sum_f64(&input);
    assert_eq!(count_mismatches("partial", &partial, &want, 1e-4), 0);
    let tree = reference::block_sum_tree(&input);
    assert!(partial
        .iter()
        .zip(&tree)
        .all(|(g, w)| g.to_bits() == w.to_bits()));
}

#[test]
fn linked_math_poly_eval_and_affine_match_mathlib() {
    let mut r = rng(13);
    let n = 20_000;
    let xs = random_f32(&mut r, n, -1.0, 1.0);
    let coeffs = random_f32(&mut r, 8, -2.0, 2.0);
    let got = emulate::poly_eval(&xs, &coeffs).unwrap();
    let want: Vec<f32> = xs.iter().map(|&x| mathlib::horner(&coeffs, x)).collect();
    assert_eq!(count_mismatches("poly", &got, &want, 0.0), 0);

    let params = Affine {
        scale: 1.5,
        shift: -0.25,
        count: (n - 1000) as u64,
    };
    let got = emulate::affine(params, &xs).unwrap();
    let head = params.count as usize;
    let want: Vec<f32> = xs[..head]
        .iter()
        .map(|&x| mathlib::apply_affine(&params, x))
        .collect();
    assert_eq!(count_mismatches("affine", &got[..head], &want, 0.0), 0);
    assert!(
        got[head..].iter().all(|x| x.is_nan()),
        "the tail must keep its poison"
    );
}

#[test]
fn transpose_matches_the_cpu_on_a_ragged_matrix() {
    let mut r = rng(14);
    let (rows, cols) = (77, 101);
    let input = random_f32(&mut r, rows * cols, -1000.0, 1000.0);
    let got = emulate::transpose(&input, rows, cols).unwrap();
    let want = reference::transpose(&input, rows, cols);
    assert_eq!(count_mismatches("transpose", &got, &want, 0.0), 0);
}

#[test]
fn histogram_matches_the_cpu_count_under_contention() {
    let mut r = rng(15);
    let data = inputs::histogram_bytes(&mut r, 300_001);
    let offsets = inputs::histogram_offsets();
    let got = emulate::histogram(&data, &offsets).unwrap();
    assert_eq!(got, reference::histogram(&data, &offsets));
}

#[test]
fn softmax_matches_the_f64_reference_and_rows_sum_to_one() {
    let mut r = rng(16);
    let cols = 4096;
    let input = random_f32(&mut r, 6 * cols, -10.0, 10.0);
    let got = emulate::softmax(&input, cols).unwrap();
    let want = reference::softmax_f64(&input, cols);
    let worst = reference::worst_relative_error(&got, &want);
    assert!(worst < 2e-5, "worst relative error {worst:e}");
    for row in got.chunks(cols) {
        let s: f64 = row.iter().map(|&x| x as f64).sum();
        assert!((s - 1.0).abs() < 1e-4, "row sums to {s}");
    }
}

#[test]
fn warp_reduce_matches_the_cpu_and_its_shuffle_tree_bit_for_bit() {
    let mut r = rng(17);
    let n = 10_000; // the last warp is partial: its missing inputs count as 0
    let (xs, keys, big) = inputs::warp_reduce_inputs(&mut r, n);
    let (sums, maxes, totals) = emulate::warp_reduce(&xs, &keys, &big).unwrap();
    let (want_sums, want_maxes, want_totals) = reference::warp_reduce(&xs, &keys, &big);
    assert_eq!(count_mismatches("sums", &sums, &want_sums, 1e-5), 0);
    assert_eq!(maxes, want_maxes);
    assert_eq!(totals, want_totals);
    let tree = reference::warp_sums_tree(&xs);
    assert!(sums
        .iter()
        .zip(&tree)
        .all(|(g, w)| g.to_bits() == w.to_bits()));
}

#[test]
fn struct_params_transform_matches_apply() {
    let mut r = rng(18);
    let n = 5000;
    let f = |v: &[f32]| -> Vec<Float4> {
        v.chunks_exact(4)
            .map(|c| Float4 {
                x: c[0],
                y: c[1],
                z: c[2],
                w: c[3],
            })
            .collect()
    };
    let xs = f(&random_f32(&mut r, 4 * n, -10.0, 10.0));
    let rows = f(&random_f32(&mut r, 20, -2.0, 2.0));
    let tr = Transform {
        m: [rows[0], rows[1], rows[2], rows[3]],
        t: rows[4],
        count: (n - 1000) as u32,
        pad: [0; 3],
    };
    let got = emulate::transform(tr, &xs).unwrap();
    let head = tr.count as usize;
    for (p, g) in xs[..head].iter().zip(&got) {
        assert_eq!(*g, struct_params_kernels::apply(&tr, p));
    }
    assert!(got[head..].iter().all(|p| p.x.is_nan() && p.w.is_nan()));
}
