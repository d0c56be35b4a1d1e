// A ThreadIndex cannot escape into a static (a static needs Sync).
use device_std::{Index1D, ThreadIndex};

static LEAK: std::sync::OnceLock<ThreadIndex<'static, Index1D>> = std::sync::OnceLock::new();

fn main() {
    let _ = LEAK.set(device_std::thread::index_1d());
}
