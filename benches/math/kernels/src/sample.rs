//! The fixed inputs of the emulator-identity hashes, and the hash: the same
//! definitions as `sample_*` and `fnv1a` in `benches/math/reference.cu`.
//!
//! - f32 unary: the 65,536 bit patterns `j * 65537` (`acc_f(0, 65537, out)`).
//! - `sm(j)`: output `j` (from 0) of splitmix64 seeded with 0:
//!   `z = (j + 1) * 0x9E3779B97F4A7C15; z = (z ^ z >> 30) * 0xBF58476D1CE4E5B9;
//!   z = (z ^ z >> 27) * 0x94D049BB133111EB; z ^ z >> 31` (wrapping).
//! - Odd `j` is "tamed": the exponent field is replaced by one in [-8, 8]
//!   (`bias - 8 + old_field % 17`), sign and mantissa kept; even `j` stays raw
//!   bits (NaNs, infinities, subnormals, huge and tiny values).
//! - f32 binary pair `j`: `x = bits(sm(j) as u32)`, `y = bits(sm(j) >> 32)`.
//! - f64 unary `j`: `bits(sm(j))`; f64 binary pair `j`: `bits(sm(2j))`, `bits(sm(2j + 1))`.
//! - Hash: FNV-1a 64 over the outputs' bits as little-endian bytes, in order.

/// Inputs per function.
pub const N: usize = 65_536;

/// Stride of the f32 unary inputs (`j * STRIDE`, wrapping).
pub const F32_STRIDE: u32 = 65_537;

/// Output `j` of splitmix64 seeded with 0.
pub fn sm(j: u64) -> u64 {
    let mut z = (j.wrapping_add(1)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `b` with its exponent moved into [-8, 8].
pub fn tame32(b: u32) -> u32 {
    (b & 0x807F_FFFF) | ((119 + ((b >> 23) & 0xFF) % 17) << 23)
}

/// `b` with its exponent moved into [-8, 8].
pub fn tame64(b: u64) -> u64 {
    (b & 0x800F_FFFF_FFFF_FFFF) | ((1015 + ((b >> 52) & 0x7FF) % 17) << 52)
}

/// f32 unary input `j`.
pub fn f32_unary(j: usize) -> f32 {
    f32::from_bits((j as u32).wrapping_mul(F32_STRIDE))
}

/// f32 binary pair `j`.
pub fn f32_pair(j: usize) -> (f32, f32) {
    let z = sm(j as u64);
    let (mut x, mut y) = (z as u32, (z >> 32) as u32);
    if j % 2 == 1 {
        (x, y) = (tame32(x), tame32(y));
    }
    (f32::from_bits(x), f32::from_bits(y))
}

/// f64 unary input `j`.
pub fn f64_unary(j: usize) -> f64 {
    let b = sm(j as u64);
    f64::from_bits(if j % 2 == 1 { tame64(b) } else { b })
}

/// f64 binary pair `j`.
pub fn f64_pair(j: usize) -> (f64, f64) {
    let (mut x, mut y) = (sm(2 * j as u64), sm(2 * j as u64 + 1));
    if j % 2 == 1 {
        (x, y) = (tame64(x), tame64(y));
    }
    (f64::from_bits(x), f64::from_bits(y))
}

/// FNV-1a 64 of `bytes`, continuing from `h` (start: [`FNV_OFFSET`]).
pub fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// FNV-1a 64's initial value.
pub const FNV_OFFSET: u64 = 0xCBF2_9CE4_8422_2325;

/// The bits hashed for an f32 result: every NaN as `0x7fff_ffff`. IEEE 754 leaves
/// NaN payloads open and they differ between machines (the GPU returns its canonical
/// NaN, x86 propagates the input's payload or its own `0xffc0_0000`): a NaN must
/// match a NaN, not its bits.
pub fn canonical_f32(y: f32) -> u32 {
    if y.is_nan() {
        0x7fff_ffff
    } else {
        y.to_bits()
    }
}

/// [`canonical_f32`] for f64: every NaN as `0x7fff_ffff_ffff_ffff`.
pub fn canonical_f64(y: f64) -> u64 {
    if y.is_nan() {
        0x7fff_ffff_ffff_ffff
    } else {
        y.to_bits()
    }
}

/// The hash of f32 results, in order ([`canonical_f32`] bits, little-endian).
pub fn hash_f32_outputs(ys: impl IntoIterator<Item = f32>) -> u64 {
    ys.into_iter()
        .fold(FNV_OFFSET, |h, y| fnv1a(h, &canonical_f32(y).to_le_bytes()))
}

/// The hash of f64 results, in order ([`canonical_f64`] bits, little-endian).
pub fn hash_f64_outputs(ys: impl IntoIterator<Item = f64>) -> u64 {
    ys.into_iter()
        .fold(FNV_OFFSET, |h, y| fnv1a(h, &canonical_f64(y).to_le_bytes()))
}

/// The hash of `f` over the f32 unary sample.
pub fn hash_f32_unary(f: fn(f32) -> f32) -> u64 {
    hash_f32_outputs((0..N).map(|j| f(f32_unary(j))))
}

/// The hash of `f` over the f32 binary sample.
pub fn hash_f32_binary(f: fn(f32, f32) -> f32) -> u64 {
    hash_f32_outputs((0..N).map(|j| {
        let (x, y) = f32_pair(j);
        f(x, y)
    }))
}

/// The hash of `f` over the f64 unary sample.
pub fn hash_f64_unary(f: fn(f64) -> f64) -> u64 {
    hash_f64_outputs((0..N).map(|j| f(f64_unary(j))))
}

/// The hash of `f` over the f64 binary sample.
pub fn hash_f64_binary(f: fn(f64, f64) -> f64) -> u64 {
    hash_f64_outputs((0..N).map(|j| {
        let (x, y) = f64_pair(j);
        f(x, y)
    }))
}
