// Nor through its constructor, which is crate-private.
use device_std::{Index1D, ThreadIndex};

fn main() {
    let _forged = ThreadIndex::<Index1D>::new(0, 0);
}
