// Launch bounds the hardware cannot run, and arguments that do not combine.
use device_std::kernel;

#[kernel(max_threads = 2048)]
pub fn too_many_threads() {}

#[kernel(max_threads = 0)]
pub fn no_threads() {}

#[kernel(max_threads = 256, min_blocks = 0)]
pub fn zero_blocks() {}

#[kernel(min_blocks = 2)]
pub fn blocks_without_threads() {}

#[kernel(max_threads = 128, cluster = (2, 1, 1), max_threads = 64)]
pub fn twice() {}

#[kernel(max_threads = N)]
pub fn not_a_literal() {}

#[kernel(max_threads = 128 cluster = (2, 1, 1))]
pub fn no_comma() {}

const N: u32 = 128;

fn main() {}
