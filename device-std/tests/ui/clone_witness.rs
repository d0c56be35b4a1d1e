// A ThreadIndex is not Clone.
fn main() {
    let i = device_std::thread::index_1d();
    let _j = i.clone();
}
