//! CPU references. The `*_f64` ones are the host programs' (sums in f64,
//! compared with a tolerance); the `*_tree` ones redo the kernel's own f32
//! operation order, so the emulator (and the GPU) must match them bit for
//! bit.

use block_sum_kernels::{BLOCK, ITEMS_PER_BLOCK};

/// `a[i] + b[i]`.
pub fn vecadd(a: &[f32], b: &[f32]) -> Vec<f32> {
    a.iter().zip(b).map(|(x, y)| x + y).collect()
}

/// Each 512-input chunk's sum in f64, rounded to f32 (`block_sum-host`).
pub fn block_sum_f64(input: &[f32]) -> Vec<f32> {
    input
        .chunks(ITEMS_PER_BLOCK)
        .map(|c| c.iter().map(|&x| f64::from(x)).sum::<f64>() as f32)
        .collect()
}

/// Each chunk summed as the kernel does: thread `t` adds `x[t]` and
/// `x[t + 256]`, then a halving tree in f32.
pub fn block_sum_tree(input: &[f32]) -> Vec<f32> {
    let block = BLOCK as usize;
    input
        .chunks(ITEMS_PER_BLOCK)
        .map(|c| {
            let load = |i: usize| c.get(i).copied().unwrap_or(0.0);
            let mut cache: Vec<f32> = (0..block).map(|t| load(t) + load(t + block)).collect();
            let mut stride = block / 2;
            while stride > 0 {
                for t in 0..stride {
                    cache[t] += cache[t + stride];
                }
                stride /= 2;
            }
            cache[0]
        })
        .collect()
}

/// `out[c * rows + r] = in[r * cols + c]`.
pub fn transpose(input: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut out = vec![0.0; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = input[r * cols + c];
        }
    }
    out
}

/// `offsets` plus the count of each byte value in `data`.
pub fn histogram(data: &[u8], offsets: &[u32]) -> Vec<u32> {
    let mut bins = offsets.to_vec();
    for &b in data {
        bins[b as usize] += 1;
    }
    bins
}

/// Row-wise softmax in f64 (`softmax-host`).
pub fn softmax_f64(input: &[f32], cols: usize) -> Vec<f64> {
    input
        .chunks(cols)
        .flat_map(|row| {
            let max = row.iter().fold(f64::NEG_INFINITY, |m, &x| m.max(x as f64));
            let exps: Vec<f64> = row.iter().map(|&x| (x as f64 - max).exp()).collect();
            let sum: f64 = exps.iter().sum();
            exps.into_iter().map(move |e| e / sum)
        })
        .collect()
}

/// The largest `|got - want| / want` over the elements (`want > 0`, as
/// softmax outputs are; a denominator below 1e-30 counts as 1e-30); a NaN in
/// `got` counts as infinitely wrong.
pub fn worst_relative_error(got: &[f32], want: &[f64]) -> f64 {
    assert_eq!(
        got.len(),
        want.len(),
        "worst_relative_error: lengths differ"
    );
    got.iter()
        .zip(want)
        .map(|(&g, &w)| (g as f64 - w).abs() / w.max(1e-30))
        .fold(
            0.0f64,
            |m, e| if e.is_nan() { f64::INFINITY } else { m.max(e) },
        )
}

/// Per warp of 32: the f32 sum in f64 (`warp_reduce-host`), the u32
/// maximum and the i64 sum; missing tail inputs count as 0.
pub fn warp_reduce(xs: &[f32], keys: &[u32], big: &[i64]) -> (Vec<f32>, Vec<u32>, Vec<i64>) {
    const W: usize = warp_reduce_kernels::WARP;
    (
        xs.chunks(W)
            .map(|c| c.iter().map(|&x| x as f64).sum::<f64>() as f32)
            .collect(),
        keys.chunks(W)
            .map(|c| c.iter().copied().max().unwrap_or(0))
            .collect(),
        big.chunks(W).map(|c| c.iter().sum()).collect(),
    )
}

/// Per warp, lane 0's f32 sum after the kernel's `shfl_down` tree
/// (deltas 16, 8, 4, 2, 1; a lane past 31 reads its own value).
pub fn warp_sums_tree(xs: &[f32]) -> Vec<f32> {
    xs.chunks(32)
        .map(|c| {
            let mut x: Vec<f32> = (0..32).map(|l| c.get(l).copied().unwrap_or(0.0)).collect();
            let mut delta = 16;
            while delta > 0 {
                x = (0..32)
                    .map(|l| x[l] + if l + delta <= 31 { x[l + delta] } else { x[l] })
                    .collect();
                delta /= 2;
            }
            x[0]
        })
        .collect()
}
