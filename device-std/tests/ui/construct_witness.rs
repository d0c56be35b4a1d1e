// A ThreadIndex cannot be built outside device-std: its fields are private.
use device_std::{Index1D, ThreadIndex};

fn main() {
    let _forged: ThreadIndex<'static, Index1D> = ThreadIndex {
        value: 0,
        stride: 0,
        _not_send_sync: core::marker::PhantomData,
    };
}
