//! Compiling device crates for `nvptx64-nvidia-cuda` with the nightly cargo,
//! and finding the PTX (`.s`) file rustc wrote for each crate.

use anyhow::{bail, Context, Result};
use cargo_metadata::{Message, Metadata, Package, PackageId};
use std::collections::{BTreeMap, BTreeSet};
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::toolchain::{clean_command, NIGHTLY};

/// The device target triple.
pub const TARGET: &str = "nvptx64-nvidia-cuda";

/// How device crates mark themselves in `Cargo.toml`:
/// `[package.metadata.gpu] kernels = true` (a kernel crate, linked into
/// `target/ptx/<crate>.ptx`) or `device = true` (a device library).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceRole {
    /// Defines kernels; gets a linked module.
    Kernels,
    /// A library other device crates call.
    Library,
}

/// What `panic!` and failed bounds checks do in device code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PanicMode {
    /// `-Cpanic=immediate-abort`: `trap` in place; no reference to `core`'s
    /// panic machinery, so modules stay small. The default.
    ImmediateAbort,
    /// `-Cpanic=abort`: calls `core::panicking`, which ends in device-std's
    /// `#[panic_handler]`; `core`'s PTX is linked and trimmed to what is reached.
    Abort,
}

/// Options for one device build.
#[derive(Debug, Clone)]
pub struct BuildRequest<'a> {
    /// `sm_XX`.
    pub arch: &'a str,
    /// Release (`true`) or dev profile.
    pub release: bool,
    /// Panic strategy.
    pub panic: PanicMode,
    /// Packages to build.
    pub packages: Vec<&'a Package>,
    /// `CARGO_TARGET_DIR` for the device build.
    pub target_dir: PathBuf,
}

/// One crate's PTX from a build.
#[derive(Debug, Clone)]
pub struct CratePtx {
    /// Crate name as rustc sees it (`vecadd_kernels`, `core`).
    pub crate_name: String,
    /// The `.s` file (PTX text).
    pub path: PathBuf,
}

/// Device crates of the workspace, by role.
pub fn device_packages(metadata: &Metadata) -> Vec<(&Package, DeviceRole)> {
    metadata
        .workspace_packages()
        .into_iter()
        .filter_map(|p| {
            let gpu = p.metadata.get("gpu")?;
            let flag = |key: &str| gpu.get(key).and_then(|v| v.as_bool()).unwrap_or(false);
            if flag("kernels") {
                Some((p, DeviceRole::Kernels))
            } else if flag("device") {
                Some((p, DeviceRole::Library))
            } else {
                None
            }
        })
        .collect()
}

/// Runs the nightly `cargo build` for `request` and returns each compiled
/// crate's PTX, keyed by package id (`core` and `compiler_builtins` included).
///
/// Errors: cargo fails (compile errors are shown as cargo prints them), or a
/// crate's `.s` file is missing after a successful build.
pub fn build(request: &BuildRequest<'_>) -> Result<BTreeMap<PackageId, CratePtx>> {
    let panic_flag = match request.panic {
        PanicMode::ImmediateAbort => "-Cpanic=immediate-abort",
        PanicMode::Abort => "-Cpanic=abort",
    };
    let mut rustflags = vec![
        "--emit=asm,link".to_string(),
        format!("-Ctarget-cpu={}", request.arch),
        "-Zmir-enable-passes=-JumpThreading".to_string(),
        "-Zunstable-options".to_string(),
        panic_flag.to_string(),
    ];
    if !request.release {
        // DWARF sections in PTX (`$L__sec_end0` labels) are refused by the
        // linker and by ptxas; a debug build keeps its checks, not its DWARF.
        rustflags.push("-Cdebuginfo=0".to_string());
    }
    let rustflags = rustflags.join("\x1f");

    let mut cmd = clean_command("cargo");
    cmd.arg(format!("+{NIGHTLY}"))
        .args([
            "build",
            "--target",
            TARGET,
            "-Zbuild-std=core",
            "--message-format=json-render-diagnostics",
        ])
        .env("CARGO_ENCODED_RUSTFLAGS", rustflags)
        .env("CARGO_TARGET_DIR", &request.target_dir)
        .stdout(Stdio::piped());
    if request.release {
        cmd.arg("--release");
    } else {
        // At opt-level 0, compiler_builtins' nvptx64 build fails in LLVM
        // ("unsupported library call operation").
        cmd.args([
            "--config",
            "profile.dev.package.compiler_builtins.opt-level=1",
        ]);
    }
    for package in &request.packages {
        cmd.args(["-p", &package.name]);
    }

    let mut child = cmd.spawn().context("starting the nightly cargo")?;
    let stdout = child.stdout.take().context("cargo's stdout")?;
    let mut found = BTreeMap::new();
    for message in Message::parse_stream(BufReader::new(stdout)) {
        if let Message::CompilerArtifact(artifact) =
            message.context("reading cargo's JSON messages")?
        {
            // Proc macros and build scripts are compiled for the host.
            let for_device = artifact
                .filenames
                .iter()
                .any(|f| f.as_str().contains(&format!("/{TARGET}/")));
            if !for_device {
                continue;
            }
            if let Some(ptx) = ptx_of(
                &artifact
                    .filenames
                    .iter()
                    .map(|f| f.as_std_path())
                    .collect::<Vec<_>>(),
            ) {
                found.insert(artifact.package_id.clone(), ptx);
            }
        }
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("the device build failed (cargo +{NIGHTLY} build --target {TARGET})");
    }
    for ptx in found.values() {
        if !ptx.path.exists() {
            bail!(
                "rustc reported {} but wrote no PTX at {}",
                ptx.crate_name,
                ptx.path.display()
            );
        }
    }
    Ok(found)
}

/// `deps/libNAME-HASH.rmeta` → `deps/NAME-HASH.s` (rustc's `--emit=asm`
/// name). The `.rmeta` is the one artifact that always stays in `deps/`
/// with its hash; cargo uplifts workspace `.rlib`s without one.
fn ptx_of(filenames: &[&Path]) -> Option<CratePtx> {
    let rmeta = filenames
        .iter()
        .find(|f| f.extension().is_some_and(|e| e == "rmeta"))?;
    let stem = rmeta.file_stem()?.to_str()?.strip_prefix("lib")?;
    let crate_name = stem
        .rsplit_once('-')
        .map_or(stem, |(name, _hash)| name)
        .to_string();
    Some(CratePtx {
        crate_name,
        path: rmeta.with_file_name(format!("{stem}.s")),
    })
}

/// Every package `root` depends on, transitively (normal dependencies only),
/// excluding `root` itself.
pub fn dependency_closure(metadata: &Metadata, root: &PackageId) -> BTreeSet<PackageId> {
    let mut seen = BTreeSet::new();
    let Some(resolve) = metadata.resolve.as_ref() else {
        return seen;
    };
    let mut stack = vec![root.clone()];
    while let Some(id) = stack.pop() {
        if let Some(node) = resolve.nodes.iter().find(|n| n.id == id) {
            for dep in &node.deps {
                let normal = dep
                    .dep_kinds
                    .iter()
                    .any(|k| k.kind == cargo_metadata::DependencyKind::Normal);
                if normal && seen.insert(dep.pkg.clone()) {
                    stack.push(dep.pkg.clone());
                }
            }
        }
    }
    seen
}
