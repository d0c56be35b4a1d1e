//! The CPU references of `examples/module_vars`, shared by its host program and the
//! emulator tests.

/// `out[i] = Σ_k taps[k] · input[clamp(i + k − taps.len()/2)]` (edges repeat), in the
/// kernels' order of fused multiply-adds, so the GPU's and the emulator's results are
/// bit for bit this one. `input` must not be empty.
pub fn conv_clamped(input: &[f32], taps: &[f32]) -> Vec<f32> {
    let (n, centre) = (input.len(), taps.len() / 2);
    (0..n)
        .map(|i| {
            taps.iter().enumerate().fold(0.0f32, |acc, (k, &t)| {
                t.mul_add(input[(i + k).saturating_sub(centre).min(n - 1)], acc)
            })
        })
        .collect()
}

/// `input` reversed within each run of `block` elements: `out[b·B + t] =
/// input[b·B + (B − 1 − t)]` (`reverse_blocks`). `input.len()` must be a multiple of
/// `block`.
pub fn reverse_blocks(input: &[f32], block: usize) -> Vec<f32> {
    (0..input.len())
        .map(|i| input[i / block * block + (block - 1 - i % block)])
        .collect()
}
