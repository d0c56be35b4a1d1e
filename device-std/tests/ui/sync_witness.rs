// A ThreadIndex is not Sync: no other thread can even borrow it.
fn needs_sync<T: Sync>(_: &T) {}

fn main() {
    let i = device_std::thread::index_1d();
    needs_sync(&i);
}
