//! The build side of the Rust GPU toolkit: turns a workspace's device crates into
//! linked, validated PTX and typed host bindings. Runtime crates (`device-std`,
//! `host-loader`) never depend on it.
//!
//! Three front ends drive the same pipeline ([`BuildPtx`]):
//!
//! | front end | what the user writes | command |
//! |---|---|---|
//! | their own `xtask` | `fn main() { gpu_build::cli::main() }` and a `.cargo/config.toml` alias | `cargo xtask build-ptx` |
//! | a host crate's `build.rs` | `gpu_build::BuildScript::new("../kernels").run();` | `cargo build` (stable) |
//! | the installed command | nothing (`cargo install --path gpu-build`) | `cargo ptx build-ptx` |
//!
//! Each finds the workspace as cargo does (current directory, or `--manifest-path`),
//! compiles with the nightly toolchain through `rustup run nightly cargo` (so the caller
//! may be stable cargo), and writes `<crate>.ptx` and `<crate>.map.json`.
//!
//! Device crates say what they are in `Cargo.toml`:
//!
//! ```toml
//! [package.metadata.gpu]
//! kernels = true   # a kernel crate: gets a linked module
//! # device = true  # a device library other device crates call
//! ```
//!
//! A crate that says neither but is reached from a kernel crate (a path, git or registry
//! dependency) is compiled for the device all the same, and its PTX is linked in where it
//! resolves a reference.
//!
//! Sources: TOOLCHAIN.md of this repository for the rustc flags (`-Zbuild-std=core`,
//! `--emit=asm`, `-Zmir-enable-passes=-JumpThreading`, rust-lang/rust#137086); cargo's
//! JSON messages and dep-info files (The Cargo Book, "External tools" and "Build
//! scripts").
#![deny(missing_docs)]
#![deny(missing_debug_implementations)]

pub mod bindings;
mod build_script;
mod cargo_device;
pub mod cli;
mod error;
pub mod fatbin;
mod link;
mod pipeline;
mod preflight;
mod progress;
pub mod toolchain;
mod workspace;

pub use build_script::{BuildScript, ScriptOutput};
pub use error::{Error, ErrorKind, Result};
pub use pipeline::{BuildPtx, Built, LinkedModule, PanicMode, Verify, MIN_DEVICE_SM};
pub use progress::{Progress, StatusFn};
pub use workspace::DeviceRole;
