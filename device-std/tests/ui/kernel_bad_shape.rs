// Shapes a PTX entry cannot have.
use device_std::kernel;

#[kernel]
pub fn generic<T: Copy>(x: T) {}

#[kernel]
pub async fn asynchronous() {}

#[kernel]
pub extern "C" fn has_abi() {}

#[kernel(fast)]
pub fn with_args() {}

fn main() {}
