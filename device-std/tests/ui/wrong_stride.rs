// A stride-64 witness cannot index a stride-32 slice.
use device_std::{thread, DisjointSlice, Index2D};

fn write(out: &mut DisjointSlice<'_, f32, Index2D<32>>) {
    if let Some(i) = thread::index_2d::<64>() {
        out.get_mut(&i);
    }
}

fn main() {}
