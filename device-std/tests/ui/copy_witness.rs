// A ThreadIndex is not Copy: using it twice by value moves it.
fn take(_: device_std::ThreadIndex<'_, device_std::Index1D>) {}

fn main() {
    let i = device_std::thread::index_1d();
    take(i);
    take(i);
}
