// A kernel returns nothing, so a witness cannot leave the kernel body.
use device_std::{kernel, thread, Index1D, ThreadIndex};

#[kernel]
pub fn leak() -> ThreadIndex<'static, Index1D> {
    thread::index_1d()
}

fn main() {}
