//! Sets `cfg(emulated)` when the `emulator` feature is on and the target is
//! not `nvptx64`: the one condition under which device-std runs kernels on
//! the CPU (see `src/emulator/mod.rs`). On nvptx64 the feature changes
//! nothing, so the PTX is the same with or without it.

fn main() {
    println!("cargo:rustc-check-cfg=cfg(emulated)");
    println!("cargo:rerun-if-changed=build.rs");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if std::env::var_os("CARGO_FEATURE_EMULATOR").is_some() && arch != "nvptx64" {
        println!("cargo:rustc-cfg=emulated");
    }
}
