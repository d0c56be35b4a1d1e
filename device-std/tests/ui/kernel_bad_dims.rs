// `#[kernel(dims = ...)]` misuse: out of range, not a literal, given twice, a cluster
// shape that spans blocks past the declared dimensions (no launch could satisfy both).
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

#[kernel(cluster = (1, 2, 1), dims = 1)]
pub fn cluster_in_y() {}

#[kernel(dims = 2, cluster = (2, 1, 2))]
pub fn cluster_in_z() {}

// Fine: the cluster lies in the declared dimensions.
#[kernel(cluster = (2, 2, 1), dims = 2)]
pub fn cluster_in_plane() {}

fn main() {}
