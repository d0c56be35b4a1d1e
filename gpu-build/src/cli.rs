//! The command line: `cargo xtask build-ptx | setup | test | ptxas-path` in this
//! repository and in any workspace whose own `xtask` calls [`main`], and
//! `cargo ptx ...` once `cargo install --path gpu-build` has installed `cargo-ptx`.

use std::path::PathBuf;
use std::process::Command;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::error::{Error, Result};
use crate::pipeline::{BuildPtx, PanicMode, Verify};
use crate::progress::{self, Progress};
use crate::toolchain;
use crate::workspace;

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "Build driver of the Rust GPU toolkit: compile, link and validate device crates"
)]
struct Cli {
    #[command(subcommand)]
    command: Command_,
}

#[derive(Subcommand)]
enum Command_ {
    /// Compile, link and validate the PTX of every kernel crate (or those given with -p).
    #[command(alias = "build")]
    BuildPtx(BuildArgs),
    /// Install nightly rust-src and ptxas (into ~/.cache/gpu-toolkit).
    Setup {
        /// The rustup toolchain device crates build with.
        #[arg(long, default_value = toolchain::DEFAULT_TOOLCHAIN)]
        toolchain: String,
    },
    /// Run `cargo test --workspace ARGS` with `PTXAS` pointing at the installed ptxas.
    Test {
        /// The workspace's Cargo.toml (default: found from the current directory).
        #[arg(long)]
        manifest_path: Option<PathBuf>,
        /// Extra arguments for `cargo test`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Print the path of the ptxas that build-ptx and the tests use.
    PtxasPath,
}

/// Arguments of `build-ptx`.
#[derive(clap::Args, Debug)]
struct BuildArgs {
    /// The workspace's (or a member's) Cargo.toml (default: found from the current
    /// directory, as cargo does).
    #[arg(long)]
    manifest_path: Option<PathBuf>,
    /// GPU architecture to compile for (sm_70 or newer), or a comma-separated list
    /// (sm_80,sm_90a): each kernel crate built for every one, assembled by ptxas and packed
    /// into <out>/<crate>.fatbin with a manifest <crate>.fatbin.json.
    #[arg(long, default_value = "sm_90")]
    arch: String,
    /// Build with the release profile (the default).
    #[arg(long, conflicts_with = "debug")]
    release: bool,
    /// Build with the dev profile (overflow checks and debug assertions kept).
    #[arg(long)]
    debug: bool,
    /// Only this kernel crate (repeatable); default: every kernel crate.
    #[arg(short = 'p', long = "package")]
    packages: Vec<String>,
    /// What panics do in device code.
    #[arg(long, value_enum, default_value = "immediate-abort")]
    panic: PanicMode,
    /// Skip the `ptxas` validation of the linked modules.
    #[arg(long)]
    no_verify: bool,
    /// Where linked modules go (default: `<target>/ptx`).
    #[arg(long)]
    out_dir: Option<PathBuf>,
    /// The rustup toolchain device crates build with.
    #[arg(long, default_value = toolchain::DEFAULT_TOOLCHAIN)]
    toolchain: String,
}

/// Parses the process's arguments, runs the command, and exits with status 1 and an
/// `error:` line on failure. A user's `xtask/src/main.rs` is `fn main() {
/// gpu_build::cli::main() }`.
pub fn main() {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // Run as `cargo ptx ...`, cargo passes `ptx` as the first argument.
    if args.get(1).is_some_and(|a| a == "ptx") {
        args.remove(1);
    }
    // `cargo ptx ...` when installed as cargo-ptx, `cargo xtask ...` from an xtask.
    let invoked_as = args
        .first()
        .and_then(|a| std::path::Path::new(a).file_stem())
        .is_some_and(|s| s == "cargo-ptx");
    let name = if invoked_as {
        "cargo ptx"
    } else {
        "cargo xtask"
    };
    let cli = match Cli::command().bin_name(name).try_get_matches_from(args) {
        Ok(m) => Cli::from_arg_matches(&m).unwrap_or_else(|e| e.exit()),
        Err(e) => e.exit(),
    };
    if let Err(err) = run(cli.command) {
        progress::error_line(&err.to_string());
        std::process::exit(1);
    }
}

fn run(command: Command_) -> Result<()> {
    match command {
        Command_::BuildPtx(args) => {
            let mut build = BuildPtx::new()
                .arch(&args.arch)
                .release(!args.debug)
                .panic(args.panic)
                .toolchain(&args.toolchain)
                .verify(if args.no_verify {
                    Verify::Never
                } else {
                    Verify::Always
                })
                .progress(Progress::Stderr);
            if let Some(m) = args.manifest_path {
                build = build.manifest_path(m);
            }
            if let Some(d) = args.out_dir {
                build = build.out_dir(d);
            }
            for p in args.packages {
                build = build.package(p);
            }
            build.run().map(|_| ())
        }
        Command_::Setup { toolchain } => toolchain::setup(&toolchain, &Progress::Stderr),
        Command_::Test {
            manifest_path,
            args,
        } => test(manifest_path, &args),
        Command_::PtxasPath => {
            let ptxas = toolchain::require_ptxas()?;
            println!("{}", ptxas.display());
            Ok(())
        }
    }
}

/// `test`: `cargo test --workspace ARGS` at the workspace root, with `PTXAS` set.
fn test(manifest_path: Option<PathBuf>, args: &[String]) -> Result<()> {
    toolchain::check_nightly(toolchain::DEFAULT_TOOLCHAIN)?;
    let ptxas = toolchain::require_ptxas()?;
    let metadata = workspace::load(manifest_path.as_deref())?;
    progress::status_line("Testing", &format!("workspace (PTXAS={})", ptxas.display()));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(metadata.workspace_root.as_std_path())
        .env("PTXAS", ptxas)
        .args(["test", "--workspace"])
        .args(args)
        .status()
        .map_err(|e| Error::toolchain(format!("cannot start cargo test: {e}")))?;
    if !status.success() {
        return Err(Error::new(
            crate::ErrorKind::Compile,
            format!("cargo test failed ({status})"),
        ));
    }
    Ok(())
}
