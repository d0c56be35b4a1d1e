// A pointer to a fat pointer (`*const [T]`, `*const str`, `*const dyn Trait`) has no
// layout the host can build: refused at compile time, with a message that says what to
// pass instead.
use device_std::kernel;

#[kernel]
pub unsafe fn takes_table_of_slices(t: *const *const [f32]) {}

fn main() {}
