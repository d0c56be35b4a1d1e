//! `cargo xtask build-ptx`: compile → link → validate, for every kernel crate.
//!
//! 1. One nightly `cargo build` compiles the kernel crates and their device
//!    dependencies (and `core`, via `-Zbuild-std`) to PTX.
//! 2. For each kernel crate, `ptx-linker` links its own PTX (an object)
//!    with the PTX of every crate it depends on (libraries: pulled in only
//!    where they resolve a reference, trimmed to what the kernels reach).
//!    Output: `target/ptx/<crate>.ptx` and `target/ptx/<crate>.map.json`.
//! 3. `ptxas -arch=<arch>` assembles each linked module.

use anyhow::{bail, Context, Result};
use cargo_metadata::{Metadata, MetadataCommand};
use ptx_linker::{InputKind, LinkInput, LinkOptions, SourceFile};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::cargo_device::{self, BuildRequest, CratePtx, DeviceRole, PanicMode};
use crate::progress::status;
use crate::toolchain;

/// Arguments of `cargo xtask build-ptx`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// GPU architecture to compile for.
    #[arg(long, default_value = "sm_90")]
    arch: String,
    /// Build with the release profile (the default).
    #[arg(long, conflicts_with = "debug")]
    release: bool,
    /// Build with the dev profile.
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
    /// Where linked modules go (default: `<workspace>/target/ptx`).
    #[arg(long)]
    out_dir: Option<PathBuf>,
}

/// The workspace root (where the top `Cargo.toml` is).
pub fn workspace_root() -> Result<PathBuf> {
    let manifest_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map(Path::to_path_buf)
        .context("xtask has no parent directory")
}

/// Runs the whole job.
pub fn run(args: &Args) -> Result<()> {
    let started = Instant::now();
    let root = workspace_root()?;
    let arch: targets::Arch = args.arch.parse()?;
    arch.info()?;
    if arch.sm < MIN_DEVICE_SM {
        bail!(
            "rustc's nvptx64 backend cannot build for {arch} (\"target cpu `{arch}` is known but \
             unsupported\"): device crates need sm_{MIN_DEVICE_SM} or newer\n  fix: pass --arch sm_{MIN_DEVICE_SM} or newer"
        );
    }
    toolchain::check_nightly()?;
    let ptxas = if args.no_verify {
        None
    } else {
        Some(toolchain::find_ptxas().context(
            "ptxas not found (needed to validate the linked PTX).\n  fix: cargo xtask setup   (or set PTXAS=/path/to/ptxas, or pass --no-verify)",
        )?)
    };

    let metadata = MetadataCommand::new()
        .current_dir(&root)
        .exec()
        .context("cargo metadata")?;
    let device = cargo_device::device_packages(&metadata);
    let kernel_crates: Vec<_> = device
        .iter()
        .filter(|(p, role)| {
            *role == DeviceRole::Kernels
                && (args.packages.is_empty() || args.packages.contains(&p.name))
        })
        .map(|(p, _)| *p)
        .collect();
    for wanted in &args.packages {
        if !kernel_crates.iter().any(|p| p.name == *wanted) {
            let names: Vec<_> = device
                .iter()
                .filter(|(_, r)| *r == DeviceRole::Kernels)
                .map(|(p, _)| p.name.as_str())
                .collect();
            bail!(
                "`{wanted}` is not a kernel crate of this workspace (kernel crates: {})\n  fix: \
                 list its directory in `[workspace] members` of the root Cargo.toml and give its \
                 Cargo.toml `[package.metadata.gpu] kernels = true`",
                names.join(", ")
            );
        }
    }
    if kernel_crates.is_empty() {
        bail!("no kernel crates: mark one with `[package.metadata.gpu] kernels = true`");
    }

    let mut packages = kernel_crates.clone();
    if args.packages.is_empty() {
        // Also compile device libraries no kernel crate uses yet.
        packages.extend(
            device
                .iter()
                .filter(|(_, r)| *r == DeviceRole::Library)
                .map(|(p, _)| *p),
        );
    }
    let profile = if args.debug { "debug" } else { "release" };
    status(
        "Compiling",
        &format!(
            "{} device crate(s) for {arch} ({profile}, panic={})",
            packages.len(),
            panic_name(args.panic)
        ),
    );
    let request = BuildRequest {
        arch: &args.arch,
        release: !args.debug,
        panic: args.panic,
        packages,
        // One directory per (arch, panic mode): switching either would
        // otherwise rebuild `core`.
        target_dir: root.join("target/device").join(match args.panic {
            PanicMode::ImmediateAbort => args.arch.clone(),
            PanicMode::Abort => format!("{}-panic-abort", args.arch),
        }),
    };
    let built = cargo_device::build(&request)?;

    let out_dir = args
        .out_dir
        .clone()
        .unwrap_or_else(|| root.join("target/ptx"));
    std::fs::create_dir_all(&out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    for kernel_crate in &kernel_crates {
        let own = built
            .get(&kernel_crate.id)
            .with_context(|| format!("cargo built no PTX for {}", kernel_crate.name))?;
        let deps = cargo_device::dependency_closure(&metadata, &kernel_crate.id);
        let libraries: Vec<&CratePtx> = built
            .iter()
            .filter(|(id, _)| deps.contains(*id) || is_sysroot_crate(&metadata, id))
            .map(|(_, ptx)| ptx)
            .collect();
        let output = out_dir.join(format!("{}.ptx", kernel_crate.name));
        link_one(own, &libraries, arch, &output, &root)?;
        if let Some(ptxas) = &ptxas {
            verify(ptxas, &output, arch, &root)?;
        }
    }
    status(
        "Finished",
        &format!(
            "{} linked module(s) in {} in {:.1}s",
            kernel_crates.len(),
            display(&out_dir, &root),
            started.elapsed().as_secs_f64()
        ),
    );
    Ok(())
}

/// The oldest architecture rustc's nvptx64 backend builds for (this
/// nightly reports older ones as "known but unsupported").
const MIN_DEVICE_SM: u32 = 70;

fn panic_name(mode: PanicMode) -> String {
    use clap::ValueEnum;
    mode.to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_string())
}

/// `core` and `compiler_builtins` come from `-Zbuild-std`, outside the
/// workspace's dependency graph.
fn is_sysroot_crate(metadata: &Metadata, id: &cargo_metadata::PackageId) -> bool {
    !metadata.packages.iter().any(|p| &p.id == id)
}

fn link_one(
    own: &CratePtx,
    libraries: &[&CratePtx],
    arch: targets::Arch,
    output: &Path,
    root: &Path,
) -> Result<()> {
    let read = |ptx: &CratePtx, kind| -> Result<LinkInput> {
        let text = std::fs::read_to_string(&ptx.path)
            .with_context(|| format!("reading {}", ptx.path.display()))?;
        Ok(LinkInput {
            file: SourceFile {
                path: display(&ptx.path, root),
                text,
            },
            kind,
        })
    };
    let mut inputs = vec![read(own, InputKind::Object)?];
    for lib in libraries {
        inputs.push(read(lib, InputKind::Library)?);
    }
    status(
        "Linking",
        &format!(
            "{} with {} librar{}",
            own.crate_name,
            libraries.len(),
            if libraries.len() == 1 { "y" } else { "ies" }
        ),
    );
    let options = LinkOptions {
        arch: Some(arch),
        gc: true,
        ..LinkOptions::default()
    };
    let linked = ptx_linker::link(&inputs, &options)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .with_context(|| format!("linking {}", own.crate_name))?;
    let map = serde_json::to_string_pretty(&linked.map)?;
    write_atomically(output, linked.ptx.as_bytes())?;
    write_atomically(&output.with_extension("map.json"), map.as_bytes())?;
    Ok(())
}

/// Writes through a temporary file and a rename, so a failed run never
/// leaves a partial output behind.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))?;
    Ok(())
}

fn verify(ptxas: &Path, module: &Path, arch: targets::Arch, root: &Path) -> Result<()> {
    status(
        "Verifying",
        &format!("{} (ptxas -arch={arch})", display(module, root)),
    );
    let out = Command::new(ptxas)
        .arg(format!("-arch={arch}"))
        .arg(module)
        .args(["-o", "/dev/null"])
        .output()
        .with_context(|| format!("running {}", ptxas.display()))?;
    if !out.status.success() {
        // Leave no module behind that ptxas refused.
        let _ = std::fs::remove_file(module);
        let _ = std::fs::remove_file(module.with_extension("map.json"));
        bail!(
            "ptxas rejected {} (removed it and its link map):\n{}",
            module.display(),
            String::from_utf8_lossy(&out.stderr).trim_end()
        );
    }
    Ok(())
}

fn display(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}
