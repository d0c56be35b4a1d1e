//! The tools a device build needs: a nightly toolchain with `rust-src` (through
//! `rustup`), and `ptxas` (found by [`ptx_linker::ptxas::find`], installed by [`setup`]
//! from the `nvidia-cuda-nvcc` wheel, with `fatbinary` for multi-architecture builds).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};
use crate::progress::Progress;

/// The toolchain device crates build with unless told otherwise: whatever `nightly` the
/// user has (never a dated one: not every machine can download it).
pub const DEFAULT_TOOLCHAIN: &str = "nightly";

/// The wheel that ships a standalone x86-64 `ptxas` (and `nvlink`).
pub const PTXAS_WHEEL: &str = "nvidia-cuda-nvcc==13.5.37";

/// Variables an outer cargo (or a build script's environment) sets that must not leak
/// into the nightly device build: they name the outer toolchain, its flags, its target
/// directory, or describe the build script's own package.
const LEAKING_VARS: &[&str] = &[
    "RUSTUP_TOOLCHAIN",
    "RUSTC",
    "RUSTDOC",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTC_LINKER",
    "CARGO",
    "RUSTFLAGS",
    "RUSTDOCFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_ENCODED_RUSTDOCFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "CARGO_BUILD_TARGET",
    "CARGO_BUILD_TARGET_DIR",
    "CARGO_TARGET_DIR",
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_PRIMARY_PACKAGE",
    "OUT_DIR",
    "TARGET",
    "HOST",
    "PROFILE",
    "OPT_LEVEL",
    "DEBUG",
    "NUM_JOBS",
];
const LEAKING_PREFIXES: &[&str] = &["CARGO_CFG_", "CARGO_FEATURE_", "CARGO_PKG_", "DEP_"];

/// `rustup run <toolchain> <program>`, with the variables of an outer cargo removed, so
/// the child runs that toolchain's own cargo and rustc whether the caller is a terminal,
/// a stable `cargo run` or a build script.
pub(crate) fn toolchain_command(toolchain: &str, program: &str) -> Command {
    let mut cmd = Command::new("rustup");
    cmd.args(["run", toolchain, program]);
    for var in LEAKING_VARS {
        cmd.env_remove(var);
    }
    for (key, _) in std::env::vars_os() {
        if let Some(k) = key.to_str() {
            if LEAKING_PREFIXES.iter().any(|p| k.starts_with(p)) {
                cmd.env_remove(&key);
            }
        }
    }
    cmd
}

/// Checks that `rustup`, the toolchain and its `rust-src` are installed.
///
/// Errors: [`ErrorKind::Toolchain`](crate::ErrorKind::Toolchain), with the command that
/// fixes it.
pub fn check_nightly(toolchain: &str) -> Result<()> {
    let out = toolchain_command(toolchain, "rustc")
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| {
            Error::toolchain(format!(
                "cannot run `rustup` ({e}); device crates build with a rustup-managed \
                 `{toolchain}` toolchain.\n  fix: install rustup (https://rustup.rs), then \
                 `rustup toolchain install {toolchain} --component rust-src`"
            ))
        })?;
    if !out.status.success() {
        return Err(Error::toolchain(format!(
            "the `{toolchain}` toolchain is not installed; device crates need a nightly \
             toolchain with `rust-src` (`-Zbuild-std=core` for nvptx64-nvidia-cuda and the \
             `ptx-kernel` ABI are nightly-only).\n  fix: rustup toolchain install \
             {toolchain} --component rust-src"
        )));
    }
    let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let core = sysroot.join("lib/rustlib/src/rust/library/core/Cargo.toml");
    if !core.exists() {
        return Err(Error::toolchain(format!(
            "the `{toolchain}` toolchain has no `rust-src` component ({} is missing); the \
             device build compiles `core` from it (`-Zbuild-std=core`, on a nightly \
             toolchain).\n  fix: rustup component add rust-src --toolchain {toolchain}",
            core.display()
        )));
    }
    let version = toolchain_command(toolchain, "rustc")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    if !(version.contains("nightly") || version.contains("-dev")) {
        return Err(Error::toolchain(format!(
            "the `{toolchain}` toolchain is `{version}`, not a nightly; the device build \
             needs nightly rustc (`-Zbuild-std=core` for nvptx64-nvidia-cuda, the \
             `ptx-kernel` ABI, `asm_experimental_arch`)\n  fix: rustup toolchain install \
             nightly --component rust-src, and build device crates with it (the default; \
             `BuildPtx::toolchain` or `--toolchain` chose `{toolchain}`)"
        )));
    }
    Ok(())
}

/// Where [`setup`] unpacks the wheel: `<ptx_linker::ptxas::cache_dir>/nvidia-cuda-nvcc-13.5.37`.
fn wheel_dir() -> Result<PathBuf> {
    ptx_linker::ptxas::cache_dir()
        .map(|d| d.join(PTXAS_WHEEL.replace("==", "-")))
        .ok_or_else(|| {
            Error::toolchain("neither XDG_CACHE_HOME nor HOME is set: nowhere to install ptxas")
        })
}

/// The `ptxas` to validate with, or an error with the fix.
pub fn require_ptxas() -> Result<PathBuf> {
    ptx_linker::ptxas::find().ok_or_else(|| Error::toolchain(ptx_linker::ptxas::not_found_fix()))
}

/// `setup`: installs `rust-src` for `toolchain` and `ptxas` (from [`PTXAS_WHEEL`], with
/// `python3 -m pip download`) into `~/.cache/gpu-toolkit`. Quick when both are there.
///
/// Errors: `rustup`, `python3` or `pip` fail (no network, no python3):
/// [`ErrorKind::Toolchain`](crate::ErrorKind::Toolchain).
pub fn setup(toolchain: &str, progress: &Progress) -> Result<()> {
    progress.status(
        "Installing",
        &format!("rust-src for the {toolchain} toolchain"),
    );
    let mut rustup = Command::new("rustup");
    rustup.args(["component", "add", "rust-src", "--toolchain", toolchain]);
    run(&mut rustup)?;
    check_nightly(toolchain)?;

    let dir = wheel_dir()?;
    let ptxas = dir.join("nvidia/cu13/bin/ptxas");
    if ptxas.exists() {
        // Older setups unpacked nvlink and fatbinary without their executable bits; the
        // linker's differential test runs nvlink, a multi-architecture build fatbinary.
        for tool in ["nvlink", "fatbinary"] {
            let path = dir.join("nvidia/cu13/bin").join(tool);
            if path.exists() {
                make_executable(&path)?;
            }
        }
        progress.status("Fresh", &format!("ptxas at {}", ptxas.display()));
        return Ok(());
    }
    let wheels = dir.join("wheel");
    progress.status("Downloading", &format!("{PTXAS_WHEEL} (ptxas)"));
    run(Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            PTXAS_WHEEL,
            "-d",
        ])
        .arg(&wheels))?;
    let wheel = std::fs::read_dir(&wheels)
        .map_err(|e| Error::io(format!("reading {}", wheels.display()), e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("nvidia_cuda_nvcc"))
        })
        .ok_or_else(|| {
            Error::toolchain("pip reported success but left no nvidia_cuda_nvcc wheel")
        })?;
    progress.status("Unpacking", &wheel.display().to_string());
    run(Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); \
             [z.extract(n, sys.argv[2]) for n in z.namelist() if n.startswith('nvidia/cu13/bin/')]",
        ])
        .arg(&wheel)
        .arg(&dir))?;
    for tool in ["ptxas", "nvlink", "fatbinary"] {
        make_executable(&dir.join("nvidia/cu13/bin").join(tool))?;
    }
    progress.status("Installed", &format!("ptxas at {}", ptxas.display()));
    Ok(())
}

fn make_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut perms = std::fs::metadata(path)
        .map_err(|e| Error::io(format!("{} was not unpacked", path.display()), e))?
        .permissions();
    perms.set_mode(0o755);
    std::fs::set_permissions(path, perms)
        .map_err(|e| Error::io(format!("chmod {}", path.display()), e))
}

fn run(cmd: &mut Command) -> Result<()> {
    let status = cmd
        .status()
        .map_err(|e| Error::toolchain(format!("cannot start {cmd:?}: {e}")))?;
    if !status.success() {
        return Err(Error::toolchain(format!("{cmd:?} failed with {status}")));
    }
    Ok(())
}
