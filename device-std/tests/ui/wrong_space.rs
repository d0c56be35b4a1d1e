// A 1D witness cannot index a slice of the 2D space.
use device_std::{thread, DisjointSlice, Index2D};

fn write(out: &mut DisjointSlice<'_, f32, Index2D<64>>) {
    let i = thread::index_1d();
    if let Some(o) = out.get_mut(&i) {
        *o = 1.0;
    }
}

fn main() {}
