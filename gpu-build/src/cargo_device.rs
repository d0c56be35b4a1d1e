//! Compiling device crates for `nvptx64-nvidia-cuda` with the nightly cargo, and finding
//! the PTX (`.s`) file rustc wrote for each crate.

use std::collections::BTreeMap;
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use cargo_metadata::{Message, PackageId};

use crate::error::{Error, ErrorKind};
use crate::toolchain::toolchain_command;
use crate::PanicMode;

/// The device target triple.
pub const TARGET: &str = "nvptx64-nvidia-cuda";

/// Options for one device build.
#[derive(Debug, Clone)]
pub struct BuildRequest<'a> {
    /// The rustup toolchain (`nightly`).
    pub toolchain: &'a str,
    /// The workspace's root `Cargo.toml`.
    pub manifest_path: &'a Path,
    /// `sm_XX`.
    pub arch: &'a str,
    /// Release (`true`) or dev profile.
    pub release: bool,
    /// Panic strategy.
    pub panic: PanicMode,
    /// Package names to build (`-p`).
    pub packages: Vec<String>,
    /// `CARGO_TARGET_DIR` for the device build.
    pub target_dir: PathBuf,
    /// Pass `--quiet` to cargo (diagnostics still show).
    pub quiet: bool,
}

/// One crate's PTX from a build.
#[derive(Debug, Clone)]
pub struct CratePtx {
    /// Crate name as rustc sees it (`vecadd_kernels`, `core`).
    pub crate_name: String,
    /// The `.s` file (PTX text).
    pub path: PathBuf,
}

/// Why the device build failed, beyond what the compiler printed.
#[derive(Debug, Default)]
pub struct BuildFailure {
    /// Packages whose compilation said "can't find crate for `std`".
    pub needs_std: Vec<PackageId>,
    /// Packages whose compilation said "can't find crate for `alloc`", or could not find
    /// `Vec`, `Box`, `String`, `vec!` or `format!` (all need a heap).
    pub needs_alloc: Vec<PackageId>,
}

/// The result of [`build`]: every compiled crate's PTX, keyed by package id (`core` and
/// `compiler_builtins` included), or what is known of the failure.
pub type BuildResult = std::result::Result<BTreeMap<PackageId, CratePtx>, (Error, BuildFailure)>;

/// The `-Ctarget-feature` that raises rustc's `.version` for `arch`, if any: rustc
/// emits `.version 7.8` for `sm_90`, the oldest ISA that knows the target, but
/// device-std's Hopper instructions (`cp.async.bulk`, `mbarrier.expect_tx`,
/// `fence.proxy.async`, `elect.sync`; PTX ISA 9.0 §9.7.9.25, §9.7.13.15) need PTX ISA
/// 8.0, which every CUDA 12 driver reads. Other targets already get what they need.
fn ptx_isa_feature(arch: &str) -> Option<&'static str> {
    (arch == "sm_90").then_some("+ptx80")
}

/// Whether rustc's message is its warning about the `+ptxNN` feature this
/// build passes on purpose ([`ptx_isa_feature`]): printed once per crate, it
/// would bury the user's own messages.
fn is_own_flag_warning(message: &str) -> bool {
    message.starts_with("unstable feature specified for `-Ctarget-feature`: `ptx")
}

/// Runs the nightly `cargo build` for `request`. Compiler diagnostics go to stderr.
pub fn build(request: &BuildRequest<'_>) -> BuildResult {
    let panic_flag = match request.panic {
        PanicMode::ImmediateAbort => "-Cpanic=immediate-abort",
        PanicMode::Abort => "-Cpanic=abort",
    };
    let mut rustflags = vec![
        "--emit=asm,link".to_string(),
        format!("-Ctarget-cpu={}", request.arch),
        // rust-lang/rust#137086: JumpThreading can duplicate `bar.sync` into divergent
        // branches.
        "-Zmir-enable-passes=-JumpThreading".to_string(),
        "-Zunstable-options".to_string(),
        panic_flag.to_string(),
    ];
    if let Some(feature) = ptx_isa_feature(request.arch) {
        rustflags.push(format!("-Ctarget-feature={feature}"));
    }
    if !request.release {
        // DWARF sections in PTX (`$L__sec_end0` labels) are refused by the linker and by
        // ptxas; a debug build keeps its checks, not its DWARF.
        rustflags.push("-Cdebuginfo=0".to_string());
    }

    let mut cmd = toolchain_command(request.toolchain, "cargo");
    cmd.args(["build", "--target", TARGET, "-Zbuild-std=core"])
        .arg("--manifest-path")
        .arg(request.manifest_path)
        .arg("--message-format=json")
        .env("CARGO_ENCODED_RUSTFLAGS", rustflags.join("\x1f"))
        .env("CARGO_TARGET_DIR", &request.target_dir)
        .stdout(Stdio::piped());
    if request.quiet {
        cmd.arg("--quiet");
    }
    if request.release {
        cmd.arg("--release");
    } else {
        // At opt-level 0, compiler_builtins' nvptx64 build fails in LLVM ("unsupported
        // library call operation").
        cmd.args([
            "--config",
            "profile.dev.package.compiler_builtins.opt-level=1",
        ]);
    }
    for package in &request.packages {
        cmd.args(["-p", package]);
    }

    let fail = |e: Error| (e, BuildFailure::default());
    let mut child = cmd.spawn().map_err(|e| {
        fail(Error::toolchain(format!(
            "cannot start `rustup run {} cargo`: {e}",
            request.toolchain
        )))
    })?;
    let stdout = child.stdout.take().ok_or_else(|| {
        fail(Error::new(
            ErrorKind::Compile,
            "cargo's stdout was not piped",
        ))
    })?;
    let mut found = BTreeMap::new();
    let mut failure = BuildFailure::default();
    let stderr = std::io::stderr();
    let device_dir = format!("/{TARGET}/");
    for message in Message::parse_stream(BufReader::new(stdout)) {
        let message =
            message.map_err(|e| fail(Error::io("reading the nightly cargo's JSON messages", e)))?;
        match message {
            Message::CompilerArtifact(artifact) => {
                // Proc macros and build scripts are compiled for the host.
                let for_device = artifact
                    .filenames
                    .iter()
                    .any(|f| f.as_str().contains(&device_dir));
                if !for_device {
                    continue;
                }
                let files: Vec<&Path> =
                    artifact.filenames.iter().map(|f| f.as_std_path()).collect();
                if let Some(ptx) = ptx_of(&files) {
                    found.insert(artifact.package_id.clone(), ptx);
                }
            }
            Message::CompilerMessage(msg) => {
                if is_own_flag_warning(&msg.message.message) {
                    continue;
                }
                if let Some(text) = &msg.message.rendered {
                    let _ = stderr.lock().write_all(text.as_bytes());
                }
                let code = msg.message.code.as_ref().map(|c| c.code.as_str());
                if code == Some("E0463") && msg.message.message.contains("crate for `std`") {
                    failure.needs_std.push(msg.package_id.clone());
                }
                let heap_type = matches!(code, Some("E0412" | "E0433" | "E0425"))
                    && ["`Vec`", "`Box`", "`String`", "`vec`", "`format`"]
                        .iter()
                        .any(|t| msg.message.message.contains(t));
                if heap_type
                    || (code == Some("E0463") && msg.message.message.contains("crate for `alloc`"))
                {
                    failure.needs_alloc.push(msg.package_id.clone());
                }
            }
            _ => {}
        }
    }
    let status = child
        .wait()
        .map_err(|e| fail(Error::io("waiting for the nightly cargo", e)))?;
    if !status.success() {
        return Err((
            Error::new(
                ErrorKind::Compile,
                format!(
                    "the device build failed (rustup run {} cargo build --target {TARGET} \
                     -Zbuild-std=core); the compiler's messages are above",
                    request.toolchain
                ),
            ),
            failure,
        ));
    }
    for ptx in found.values() {
        if !ptx.path.exists() {
            return Err(fail(Error::new(
                ErrorKind::Compile,
                format!(
                    "rustc reported {} but wrote no PTX at {}",
                    ptx.crate_name,
                    ptx.path.display()
                ),
            )));
        }
    }
    Ok(found)
}

/// `deps/libNAME-HASH.rmeta` → `deps/NAME-HASH.s` (rustc's `--emit=asm` name). The
/// `.rmeta` is the one artifact that always stays in `deps/` with its hash; cargo
/// uplifts workspace `.rlib`s without one.
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

/// The uplifted dep-info file cargo writes for a root crate of the build
/// (`<target>/nvptx64-nvidia-cuda/<profile>/lib<crate>.d`): every source file of the
/// crate and of its path dependencies, the proc macros' included.
pub fn dep_info_path(target_dir: &Path, release: bool, crate_ident: &str) -> PathBuf {
    target_dir
        .join(TARGET)
        .join(if release { "release" } else { "debug" })
        .join(format!("lib{crate_ident}.d"))
}

/// The prerequisites listed in a Makefile-style dep-info file (`out: a b\ c`).
pub fn parse_dep_info(text: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for line in text.lines() {
        let Some((_, deps)) = split_rule(line) else {
            continue;
        };
        let mut current = String::new();
        let mut chars = deps.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&' ') => {
                    current.push(' ');
                    chars.next();
                }
                ' ' => {
                    if !current.is_empty() {
                        files.push(PathBuf::from(std::mem::take(&mut current)));
                    }
                }
                _ => current.push(c),
            }
        }
        if !current.is_empty() {
            files.push(PathBuf::from(current));
        }
    }
    files.sort();
    files.dedup();
    files
}

/// `target: prerequisites` split at the first `: ` that is not escaped.
fn split_rule(line: &str) -> Option<(&str, &str)> {
    let at = line
        .find(": ")
        .or_else(|| line.strip_suffix(':').map(|l| l.len()))?;
    Some((&line[..at], line.get(at + 2..).unwrap_or("")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_path_comes_from_the_rmeta_name() {
        let rmeta = Path::new("/t/nvptx64-nvidia-cuda/release/deps/libmy_kernels-0a1b.rmeta");
        let rlib = Path::new("/t/nvptx64-nvidia-cuda/release/libmy_kernels.rlib");
        let ptx = ptx_of(&[rlib, rmeta]).unwrap();
        assert_eq!(ptx.crate_name, "my_kernels");
        assert_eq!(
            ptx.path,
            Path::new("/t/nvptx64-nvidia-cuda/release/deps/my_kernels-0a1b.s")
        );
        assert!(ptx_of(&[rlib]).is_none());
    }

    #[test]
    fn dep_info_lists_every_prerequisite_once() {
        let text = "/t/libk.rlib: /w/k/src/lib.rs /w/my\\ lib/src/lib.rs\n\n/w/k/src/lib.rs:\n";
        assert_eq!(
            parse_dep_info(text),
            vec![
                PathBuf::from("/w/k/src/lib.rs"),
                PathBuf::from("/w/my lib/src/lib.rs")
            ]
        );
    }
}
