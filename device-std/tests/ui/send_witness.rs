// A ThreadIndex is not Send: it cannot go to another thread.
fn needs_send<T: Send>(_: T) {}

fn main() {
    needs_send(device_std::thread::index_1d());
}
