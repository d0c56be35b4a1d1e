// `#[kernel(dynamic_shared = ...)]` misuse: more than any GPU gives a block (here 1024
// threads of 256 bytes), a value that is not a literal, the same key twice.
use device_std::kernel;

#[kernel(max_threads = 1024, dynamic_shared_per_thread = 256)]
pub fn too_big() {}

const BYTES: u32 = 64;

#[kernel(dynamic_shared = BYTES)]
pub fn not_literal() {}

#[kernel(dynamic_shared = 64, dynamic_shared = 128)]
pub fn twice() {}

fn main() {}
