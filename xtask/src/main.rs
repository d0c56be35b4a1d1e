//! `cargo xtask`: the project's build driver.
//!
//! - `cargo xtask setup`: installs what device builds and tests need
//!   (nightly `rust-src`, `ptxas` from the `nvidia-cuda-nvcc` wheel).
//! - `cargo xtask build-ptx`: compiles every device crate to PTX, links each
//!   kernel crate with `ptx-linker`, and validates the result with `ptxas`.
//!
//! Every command runs from the workspace root.

mod build_ptx;
mod cargo_device;
mod progress;
mod toolchain;

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "Build driver for the Rust GPU toolkit")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compile, link and validate the PTX of every kernel crate.
    BuildPtx(build_ptx::Args),
    /// Install nightly rust-src and ptxas (into ~/.cache/gpu-toolkit) for device builds and tests.
    Setup,
    /// Run `cargo test --workspace` with `PTXAS` pointing at the installed ptxas.
    Test {
        /// Extra arguments for `cargo test`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Print the path of the ptxas that build-ptx and the tests use.
    PtxasPath,
}

fn main() {
    let cli = Cli::parse();
    let result: Result<()> = match cli.command {
        Command::BuildPtx(args) => build_ptx::run(&args),
        Command::Setup => toolchain::setup(),
        Command::Test { args } => toolchain::test(&args),
        Command::PtxasPath => toolchain::find_ptxas()
            .map(|p| println!("{}", p.display()))
            .ok_or_else(|| anyhow::anyhow!("ptxas not found.\n  fix: cargo xtask setup")),
    };
    if let Err(err) = result {
        progress::error(&format!("{err:#}"));
        std::process::exit(1);
    }
}
