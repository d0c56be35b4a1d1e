// `#[kernel(dims = ...)]` misuse: out of range, not a literal, given twice.
use device_std::kernel;

#[kernel(dims = 3)]
pub fn three() {}

#[kernel(dims = 0)]
pub fn zero() {}

const D: u32 = 1;

#[kernel(dims = D)]
pub fn not_literal() {}

#[kernel(dims = 1, dims = 1)]
pub fn twice() {}

fn main() {}
