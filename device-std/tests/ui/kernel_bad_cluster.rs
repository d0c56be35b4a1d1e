// Cluster shapes the hardware cannot run.
use device_std::kernel;

#[kernel(cluster = (16, 1, 1))]
pub fn too_wide() {}

#[kernel(cluster = (4, 4, 1))]
pub fn too_many() {}

#[kernel(cluster = (2, 1))]
pub fn two_extents() {}

#[kernel(clusters = (2, 1, 1))]
pub fn misspelled() {}

fn main() {}
