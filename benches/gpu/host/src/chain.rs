//! The latency benchmarks' chain, `x[(i+1)%2] = x[i%2] + b`, on the CPU: the reference
//! graph-bench, node-bench and threads-bench check every way against.

/// Both buffers after `steps` links from `x0`, `x1` (f32 adds in order, as the GPU).
pub fn chain_ref(x0: &[f32], x1: &[f32], b: &[f32], steps: usize) -> [Vec<f32>; 2] {
    let mut x = [x0.to_vec(), x1.to_vec()];
    for i in 0..steps {
        let (src, dst) = (i % 2, (i + 1) % 2);
        for k in 0..b.len() {
            x[dst][k] = x[src][k] + b[k];
        }
    }
    x
}

/// How many elements of `got` differ from `want` bit for bit (NaN equal only to the same
/// NaN).
pub fn mismatches(got: &[f32], want: &[f32]) -> usize {
    got.iter()
        .zip(want)
        .filter(|(g, w)| g.to_bits() != w.to_bits())
        .count()
}
