//! This repository's `cargo xtask` (`.cargo/config.toml`): the toolkit's build driver,
//! exactly as a user's workspace calls it (`examples/standalone/xtask`). Everything it
//! does is in the `gpu_build` library (`gpu-build/`).

fn main() {
    gpu_build::cli::main()
}
