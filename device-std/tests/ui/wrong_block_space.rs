// A per-thread witness cannot index a per-block output.
use device_std::{thread, BlockIndex1D, DisjointSlice};

fn write(out: &mut DisjointSlice<'_, f32, BlockIndex1D>) {
    let i = thread::index_1d();
    out.get_mut(&i);
}

fn main() {}
