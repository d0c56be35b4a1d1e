//! `cargo-ptx`: the toolkit's build driver as a command (`cargo install --path gpu-build`,
//! then `cargo ptx build-ptx` in any workspace). This repository's `cargo xtask` (the
//! `xtask` package) calls the same `gpu_build::cli::main`. Everything it does is in the
//! `gpu_build` library.

fn main() {
    gpu_build::cli::main()
}
