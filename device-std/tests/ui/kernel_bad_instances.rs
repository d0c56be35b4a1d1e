// `#[kernel(instances(...))]` misuse: too few arguments for an instance, instances on a
// kernel that is not generic, an empty list.
use device_std::{kernel, DisjointSlice};

#[kernel(instances(scale_f32 = <f32>))]
pub fn scale<T: Copy, const K: usize>(xs: &[T], out: DisjointSlice<T>) {
    let _ = (xs, out, K);
}

#[kernel(instances(plain_u32 = <u32>))]
pub fn plain(out: DisjointSlice<u32>) {
    let _ = out;
}

#[kernel(instances())]
pub fn empty<T: Copy>(out: DisjointSlice<T>) {
    let _ = out;
}

fn main() {}
