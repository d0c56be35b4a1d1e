//! `examples/attention`'s fused attention forward under the emulator, against an `f64`
//! CPU reference computed from the same `bf16` inputs: head dimensions 64 and 128,
//! causal and not, sequence lengths that fill the 64-row tiles and that leave them
//! ragged, several (batch, head) pairs, inputs 16-byte aligned (the tiles copied by
//! vectors) and not (element by element); outputs poisoned first.

use device_std::bf16;
use device_std::emulator::{self, GlobalMut, LaunchConfig};
use example_support::{frobenius, random_bf16, rng};

/// `k` and `v` stored from element `shift` of their buffers (`shift` 1: not 16-byte
/// aligned, whatever the allocation's alignment).
fn run_shifted(bh: usize, seq: usize, d: usize, causal: bool, seed: u64, shift: usize) {
    let mut r = rng(seed);
    let n = bh * seq * d;
    let (q, kb, vb) = (
        random_bf16(&mut r, n),
        random_bf16(&mut r, n + 8),
        random_bf16(&mut r, n + 8),
    );
    let (k, v) = (&kb[shift..shift + n], &vb[shift..shift + n]);
    // Which copy the kernel takes: the test means to cover both.
    #[allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV
    let aligned = (k.as_ptr() as usize) % 16 == 0 && (v.as_ptr() as usize) % 16 == 0;
    assert_eq!(
        aligned,
        shift == 0,
        "the allocator's alignment is not 16 bytes"
    );
    let want = attention_kernels::reference::attention(&q, k, v, bh, seq, d, causal);
    let mut o = vec![bf16::NAN; n];
    let out = GlobalMut::new(&mut o);
    let cfg = LaunchConfig::new(
        (seq.div_ceil(attention_kernels::BQ) as u32, bh as u32, 1),
        (attention_kernels::THREADS, 1, 1),
    );
    let (s32, scale, c) = (seq as u32, 1.0 / (d as f32).sqrt(), causal as u32);
    emulator::launch(cfg, || match d {
        64 => attention_kernels::attention_d64(&q, k, v, out.disjoint(), s32, scale, c),
        128 => attention_kernels::attention_d128(&q, k, v, out.disjoint(), s32, scale, c),
        _ => unreachable!(),
    })
    .unwrap();
    assert_matches_reference(
        &o,
        &want,
        &format!("bh {bh} seq {seq} d {d} causal {causal}"),
    );
}

/// Every output written, and within 1e-2 relative Frobenius error of the `f64` reference:
/// `P` is rounded to `bf16` before `P·V` and `O` on the way out, ~2^-8 each.
fn assert_matches_reference(o: &[bf16], want: &[f64], what: &str) {
    let (err, unwritten) = frobenius(o.iter().map(|x| x.to_f64()), want);
    assert_eq!(unwritten, 0, "{what}: unwritten outputs");
    assert!(err < 1e-2, "{what}: relative Frobenius error {err:e}");
}

/// [`run_shifted`] with the buffers as allocated (16-byte aligned: the vector copies).
fn run(bh: usize, seq: usize, d: usize, causal: bool, seed: u64) {
    run_shifted(bh, seq, d, causal, seed, 0);
}

#[test]
fn attention_copies_unaligned_inputs_element_by_element() {
    run_shifted(1, 100, 64, true, 76, 1);
    run_shifted(1, 70, 128, false, 77, 1);
}

#[test]
fn attention_d64_matches_the_f64_reference() {
    run(2, 128, 64, false, 71);
    run(1, 100, 64, true, 72);
    run(1, 37, 64, false, 73);
}

#[test]
fn attention_d128_matches_the_f64_reference() {
    run(1, 70, 128, false, 74);
    run(2, 128, 128, true, 75);
}

/// A `[bh][seq][d]` tensor map of `x` for `attention_wgmma_d64`/`_d128`: boxes of 64
/// (`d`) × `rows` × 1, 128-byte swizzle.
fn map_3d(x: &[bf16], bh: usize, seq: usize, d: usize, rows: u32) -> emulator::TensorMapDesc {
    // SAFETY: `x` holds bh * seq * 128 elements and outlives the launch, which only reads
    // through the map.
    unsafe {
        emulator::TensorMapDesc::new_swizzled(
            x.as_ptr().cast_mut(),
            x.len(),
            &[d as u64, seq as u64, bh as u64],
            &[2 * d as u64, 2 * (d * seq) as u64],
            &[64, rows, 1],
            128,
        )
    }
    .unwrap()
}

/// `attention_wgmma_d64`/`_d128` (tensor copies, `wgmma` with `V` MN-major) against the
/// `f64` reference.
fn run_wgmma(bh: usize, seq: usize, d: usize, causal: bool, seed: u64) {
    use attention_kernels::wgmma::{attention_wgmma_d128, attention_wgmma_d64, BQ, THREADS};
    let mut r = rng(seed);
    let n = bh * seq * d;
    let (q, k, v) = (
        random_bf16(&mut r, n),
        random_bf16(&mut r, n),
        random_bf16(&mut r, n),
    );
    let want = attention_kernels::reference::attention(&q, &k, &v, bh, seq, d, causal);
    let (mq, mk, mv) = (
        map_3d(&q, bh, seq, d, 64),
        map_3d(&k, bh, seq, d, 128),
        map_3d(&v, bh, seq, d, 128),
    );
    let mut o = vec![bf16::NAN; n];
    let out = GlobalMut::new(&mut o);
    let cfg = LaunchConfig::new((seq.div_ceil(BQ) as u32, bh as u32, 1), (THREADS, 1, 1))
        .with_static_shared_limit(emulator::MAX_STATIC_SHARED_BYTES);
    let (s32, scale, c) = (seq as u32, 1.0 / (d as f32).sqrt(), causal as u32);
    emulator::launch(cfg, || {
        let (q, k, v) = (mq.as_param(), mk.as_param(), mv.as_param());
        match d {
            64 => attention_wgmma_d64(q, k, v, out.disjoint(), s32, scale, c),
            128 => attention_wgmma_d128(q, k, v, out.disjoint(), s32, scale, c),
            _ => unreachable!(),
        }
    })
    .unwrap();
    assert_matches_reference(
        &o,
        &want,
        &format!("wgmma d{d} bh {bh} seq {seq} causal {causal}"),
    );
}

#[test]
fn attention_wgmma_d128_matches_the_f64_reference() {
    // Ragged (one partial tile of queries and keys); whole tiles over two (batch, head)
    // pairs, causal; three key tiles through the two-stage rings, causal and ragged.
    run_wgmma(1, 77, 128, false, 81);
    run_wgmma(2, 256, 128, true, 82);
    run_wgmma(1, 300, 128, false, 83);
    run_wgmma(1, 300, 128, true, 84);
}

#[test]
fn attention_wgmma_d64_matches_the_f64_reference() {
    run_wgmma(1, 77, 64, false, 85);
    run_wgmma(2, 300, 64, true, 86);
    run_wgmma(1, 400, 64, false, 87);
}

/// The `f32` GPU reference (`check::attention_reference_f32`) against the `f64` CPU one:
/// both exact up to `f32` rounding (1e-5 relative).
#[test]
fn the_f32_gpu_reference_matches_the_f64_reference() {
    use attention_kernels::check::{attention_reference_f32, ROWS_PER_BLOCK};
    for (bh, seq, d, causal, seed) in [(2, 37, 64, false, 88), (1, 70, 128, true, 89)] {
        let mut r = rng(seed);
        let n = bh * seq * d;
        let (q, k, v) = (
            random_bf16(&mut r, n),
            random_bf16(&mut r, n),
            random_bf16(&mut r, n),
        );
        let want = attention_kernels::reference::attention(&q, &k, &v, bh, seq, d, causal);
        let mut o = vec![f32::NAN; n];
        let out = GlobalMut::new(&mut o);
        let cfg = LaunchConfig::new(
            ((bh * seq).div_ceil(ROWS_PER_BLOCK as usize) as u32, 1, 1),
            (32 * ROWS_PER_BLOCK, 1, 1),
        );
        let scale = 1.0 / (d as f32).sqrt();
        emulator::launch(cfg, || {
            attention_reference_f32(
                &q,
                &k,
                &v,
                out.disjoint(),
                bh as u32,
                seq as u32,
                d as u32,
                scale,
                causal as u32,
            )
        })
        .unwrap();
        let (err, unwritten) = frobenius(o.iter().map(|&x| f64::from(x)), &want);
        assert_eq!(unwritten, 0, "d{d} seq {seq}: unwritten outputs");
        assert!(
            err < 1e-5,
            "d{d} seq {seq}: relative Frobenius error {err:e}"
        );
    }
}
