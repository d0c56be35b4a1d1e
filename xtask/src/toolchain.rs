//! Finding (and, for `setup`, installing) the nightly toolchain, its
//! `rust-src`, and `ptxas`.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::progress::status;

/// The toolchain device crates build with (never a dated nightly: the
/// machines cannot download one).
pub const NIGHTLY: &str = "nightly";

/// The wheel that ships a standalone x86-64 `ptxas` (the project's toolchain notes, `../shared/TOOLCHAIN.md`).
const PTXAS_WHEEL: &str = "nvidia-cuda-nvcc==13.5.37";

/// A `rustup` command without the variables the outer `cargo` sets, so the
/// child picks its own toolchain.
pub fn clean_command(program: &str) -> Command {
    let mut cmd = Command::new(program);
    for var in [
        "RUSTUP_TOOLCHAIN",
        "RUSTC",
        "RUSTDOC",
        "RUSTC_WRAPPER",
        "CARGO",
        "RUSTFLAGS",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// Checks that nightly and its `rust-src` are installed.
///
/// Errors: either is missing; the message gives the command that fixes it.
pub fn check_nightly() -> Result<()> {
    let out = clean_command("rustc")
        .args([&format!("+{NIGHTLY}"), "--print", "sysroot"])
        .output()
        .context("running `rustc +nightly --print sysroot` (is rustup installed?)")?;
    if !out.status.success() {
        bail!(
            "the `{NIGHTLY}` toolchain is not installed; device crates need it.\n  fix: rustup toolchain install {NIGHTLY} --component rust-src"
        );
    }
    let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let core = sysroot.join("lib/rustlib/src/rust/library/core/Cargo.toml");
    if !core.exists() {
        bail!(
            "the `{NIGHTLY}` toolchain has no `rust-src` component ({} is missing); `-Zbuild-std=core` needs it.\n  fix: rustup component add rust-src --toolchain {NIGHTLY}",
            core.display()
        );
    }
    Ok(())
}

/// Where `setup` installs the wheel's tools, shared by every clone on the
/// machine so CI reuses it: `$XDG_CACHE_HOME` (or `~/.cache`)
/// `/gpu-toolkit/nvidia-cuda-nvcc-13.5.37`.
fn tools_dir() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".tools"));
    cache
        .join("gpu-toolkit")
        .join(PTXAS_WHEEL.replace("==", "-"))
}

fn installed_ptxas() -> PathBuf {
    tools_dir().join("nvidia/cu13/bin/ptxas")
}

/// Finds `ptxas`: `$PTXAS`, then the one `setup` installed, then `PATH`.
pub fn find_ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PTXAS") {
        return Some(PathBuf::from(p));
    }
    let installed = installed_ptxas();
    if installed.exists() {
        return Some(installed);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("ptxas"))
            .find(|p| p.is_file())
    })
}

/// `cargo xtask setup`: installs nightly `rust-src` and `ptxas`.
///
/// Errors: `rustup` or `pip` fail (no network, no python3).
pub fn setup() -> Result<()> {
    status(
        "Installing",
        &format!("rust-src for the {NIGHTLY} toolchain"),
    );
    run(clean_command("rustup").args(["component", "add", "rust-src", "--toolchain", NIGHTLY]))?;
    check_nightly()?;

    let ptxas = installed_ptxas();
    if ptxas.exists() {
        status("Fresh", &format!("ptxas at {}", ptxas.display()));
        return Ok(());
    }
    let dir = tools_dir();
    let wheels = dir.join("wheel");
    status("Downloading", &format!("{PTXAS_WHEEL} (ptxas)"));
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
    let wheel = std::fs::read_dir(&wheels)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("nvidia_cuda_nvcc"))
        })
        .context("pip reported success but left no nvidia_cuda_nvcc wheel")?;
    status("Unpacking", &wheel.display().to_string());
    run(Command::new("python3")
        .args(["-c", "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); [z.extract(n, sys.argv[2]) for n in z.namelist() if n.startswith('nvidia/cu13/bin/')]"])
        .arg(&wheel)
        .arg(&dir))?;
    make_executable(&ptxas)?;
    status("Installed", &format!("ptxas at {}", ptxas.display()));
    Ok(())
}

fn make_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut perms = std::fs::metadata(path)
        .with_context(|| format!("{} was not unpacked", path.display()))?
        .permissions();
    perms.set_mode(0o755);
    std::fs::set_permissions(path, perms)?;
    Ok(())
}

fn run(cmd: &mut Command) -> Result<()> {
    let status = cmd.status().with_context(|| format!("starting {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed with {status}");
    }
    Ok(())
}

/// `cargo xtask test`: `cargo test --workspace ARGS` with `PTXAS` set.
///
/// Errors: ptxas or nightly is missing (with the fix), or a test fails.
pub fn test(args: &[String]) -> Result<()> {
    check_nightly()?;
    let ptxas = find_ptxas().context(
        "ptxas not found; the tests assemble every PTX they produce.\n  fix: cargo xtask setup",
    )?;
    let root = crate::build_ptx::workspace_root()?;
    status("Testing", &format!("workspace (PTXAS={})", ptxas.display()));
    run(
        Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .current_dir(root)
            .env("PTXAS", ptxas)
            .args(["test", "--workspace"])
            .args(args),
    )
}
