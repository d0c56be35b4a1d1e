//! The build pipeline, compile → link → validate, as a builder ([`BuildPtx`]) that any
//! front end drives: `cargo xtask build-ptx`, `cargo ptx build-ptx`, or a build script
//! through [`BuildScript`](crate::BuildScript).
//!
//! 1. `cargo metadata` finds the workspace (of `--manifest-path`, or of the current
//!    directory) and the kernel crates to build.
//! 2. One nightly `cargo build --target nvptx64-nvidia-cuda -Zbuild-std=core` compiles
//!    them and every crate they depend on (path, git or registry; `core` included) to one
//!    PTX file per crate, in its own target directory (`<target>/device/<arch>`), so it
//!    never waits on the lock of a build that runs it.
//! 3. For each kernel crate, `ptx-linker` links its own PTX (an object) with the PTX of
//!    every crate it depends on (libraries: pulled in only where they resolve a
//!    reference, trimmed to what the kernels reach) into `<out>/<crate>.ptx` and
//!    `<out>/<crate>.map.json`.
//! 4. `ptxas -arch=<arch>` assembles each linked module.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use cargo_metadata::{Metadata, Package, PackageId};

use crate::cargo_device::{self, BuildFailure, BuildRequest, CratePtx};
use crate::error::{Error, ErrorKind, Result};
use crate::fatbin;
use crate::link;
use crate::preflight;
use crate::progress::Progress;
use crate::toolchain;
use crate::workspace::{self, DeviceRole};

/// What `panic!` and failed bounds checks do in device code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum PanicMode {
    /// `-Cpanic=immediate-abort`: `trap` in place; no reference to `core`'s panic
    /// machinery, so modules stay small. The default.
    #[default]
    ImmediateAbort,
    /// `-Cpanic=abort`: calls `core::panicking`, which ends in device-std's
    /// `#[panic_handler]` (it prints the message); `core`'s PTX is linked and trimmed to
    /// what is reached.
    Abort,
}

/// Whether linked modules are assembled by `ptxas` (found by
/// [`ptx_linker::ptxas::find`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Verify {
    /// Always; no ptxas is an error. The default.
    #[default]
    Always,
    /// When a ptxas is found; otherwise the modules stay unvalidated
    /// ([`LinkedModule::verified`] is `false`).
    IfFound,
    /// Never.
    Never,
}

/// The oldest architecture rustc's nvptx64 backend builds for (the installed nightly
/// reports older ones as "known but unsupported").
pub const MIN_DEVICE_SM: u32 = 70;

/// A build of linked, validated PTX: which crates, for which architecture, where to.
///
/// ```no_run
/// # fn main() -> Result<(), gpu_build::Error> {
/// let built = gpu_build::BuildPtx::new()
///     .manifest_path("path/to/workspace/Cargo.toml")
///     .arch("sm_90")
///     .run()?;
/// for m in &built.modules {
///     println!("{} -> {}", m.package, m.ptx.display());
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct BuildPtx {
    manifest_path: Option<PathBuf>,
    packages: Vec<String>,
    crate_paths: Vec<PathBuf>,
    arch: String,
    release: bool,
    panic: PanicMode,
    out_dir: Option<PathBuf>,
    target_dir: Option<PathBuf>,
    verify: Verify,
    toolchain: String,
    progress: Progress,
    /// Write into `<out>/<arch>/` (one architecture of a multi-architecture build).
    arch_subdir: bool,
}

impl Default for BuildPtx {
    fn default() -> Self {
        Self::new()
    }
}

/// One kernel crate's linked module.
#[derive(Debug, Clone)]
pub struct LinkedModule {
    /// The kernel crate's package name (`vecadd-kernels`).
    pub package: String,
    /// Its `Cargo.toml`.
    pub manifest_path: PathBuf,
    /// Its crate root (`src/lib.rs`), where typed bindings are read from.
    pub lib_root: PathBuf,
    /// `<out>/<package>.ptx`.
    pub ptx: PathBuf,
    /// `<out>/<package>.map.json`: kernels, parameter layouts, static shared memory,
    /// where every symbol came from.
    pub map: PathBuf,
    /// Whether `ptxas` assembled it.
    pub verified: bool,
    /// In a build for several architectures (`arch("sm_80,sm_90a")`):
    /// `<out>/<package>.fatbin`, every architecture's cubin and PTX, with its manifest
    /// `<package>.fatbin.json` beside it ([`crate::fatbin`]); `ptx` and `map` are then the
    /// first architecture's (`<out>/<arch>/`). `None` in a build for one.
    pub fatbin: Option<PathBuf>,
    /// Every file the module was built from that can change: the sources of the crate
    /// and of its path dependencies (from rustc's dep-info), their `Cargo.toml`s, the
    /// workspace's `Cargo.toml` and `Cargo.lock`.
    pub inputs: Vec<PathBuf>,
}

/// What [`BuildPtx::run`] produced.
#[derive(Debug, Clone)]
pub struct Built {
    /// The workspace root.
    pub workspace_root: PathBuf,
    /// Where the modules were written.
    pub out_dir: PathBuf,
    /// One per kernel crate, by package name.
    pub modules: Vec<LinkedModule>,
}

impl BuildPtx {
    /// Every kernel crate of the current directory's workspace, for `sm_90`, release
    /// profile, `immediate-abort` panics, into `<target>/ptx`, verified by ptxas, quiet.
    pub fn new() -> Self {
        BuildPtx {
            manifest_path: None,
            packages: Vec::new(),
            crate_paths: Vec::new(),
            arch: "sm_90".to_string(),
            release: true,
            panic: PanicMode::default(),
            out_dir: None,
            target_dir: None,
            verify: Verify::default(),
            toolchain: toolchain::DEFAULT_TOOLCHAIN.to_string(),
            progress: Progress::default(),
            arch_subdir: false,
        }
    }

    /// The workspace's (or any member's) `Cargo.toml`, as cargo's `--manifest-path`.
    pub fn manifest_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.manifest_path = Some(path.into());
        self
    }

    /// Builds kernel crate `name` (repeatable). Without this and without
    /// [`crate_path`](Self::crate_path), every kernel crate of the workspace and every
    /// device library is built.
    pub fn package(mut self, name: impl Into<String>) -> Self {
        self.packages.push(name.into());
        self
    }

    /// Builds the kernel crate in directory `path` (or whose `Cargo.toml` is `path`),
    /// repeatable. It need not declare `[package.metadata.gpu]`; when no manifest path is
    /// set, its workspace is the one built.
    pub fn crate_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.crate_paths.push(path.into());
        self
    }

    /// `sm_XX` (or `sm_XXa`), at least `sm_70`. Default `sm_90`. A comma-separated list
    /// (`"sm_80,sm_90a"`) builds every kernel crate for each and packs them into one
    /// fatbin per crate ([`LinkedModule::fatbin`], [`crate::fatbin`]).
    pub fn arch(mut self, arch: impl Into<String>) -> Self {
        self.arch = arch.into();
        self
    }

    /// Release profile (`true`, the default) or dev profile (overflow checks and debug
    /// assertions kept, no DWARF).
    pub fn release(mut self, release: bool) -> Self {
        self.release = release;
        self
    }

    /// What panics do in device code. Default [`PanicMode::ImmediateAbort`].
    pub fn panic(mut self, mode: PanicMode) -> Self {
        self.panic = mode;
        self
    }

    /// Where linked modules go. Default `<target>/ptx` (cargo's target directory).
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// The device build's own target directory. Default
    /// `<target>/device/<arch>[-panic-abort]`, one per architecture and panic mode so
    /// that switching does not rebuild `core`.
    pub fn target_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.target_dir = Some(dir.into());
        self
    }

    /// Whether `ptxas` validates the modules. Default [`Verify::Always`].
    pub fn verify(mut self, verify: Verify) -> Self {
        self.verify = verify;
        self
    }

    /// The rustup toolchain device crates build with. Default `nightly`.
    pub fn toolchain(mut self, name: impl Into<String>) -> Self {
        self.toolchain = name.into();
        self
    }

    /// Where status lines go. Default [`Progress::Quiet`].
    pub fn progress(mut self, progress: Progress) -> Self {
        self.progress = progress;
        self
    }

    /// Runs the pipeline.
    ///
    /// Errors, each naming the crate or file and the fix: the architecture is malformed,
    /// unknown or older than `sm_70` ([`ErrorKind::Config`]); nightly, `rust-src` or
    /// ptxas is missing ([`ErrorKind::Toolchain`]); a `[package.metadata.gpu]` key is
    /// misspelled, a selected crate is not a kernel crate, a kernel crate is not
    /// `#![no_std]`, lacks the `abi_ptx` line or defines no kernels
    /// ([`ErrorKind::Config`]); a crate pulls in `std` through a dependency (the chain is
    /// named) or does not compile ([`ErrorKind::Compile`]); the linker refuses
    /// ([`ErrorKind::Link`]); ptxas refuses ([`ErrorKind::Verify`]). Nothing partial or
    /// refused is left in the output directory. For several architectures also: ptxas or
    /// `fatbinary` missing, or verification turned off ([`ErrorKind::Toolchain`],
    /// [`ErrorKind::Config`]).
    pub fn run(&self) -> Result<Built> {
        let archs: Vec<&str> = self
            .arch
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .collect();
        match archs[..] {
            [] => Err(Error::config(format!(
                "`{}` names no architecture; fix: pass --arch sm_90 (or a list, sm_80,sm_90a)",
                self.arch
            ))),
            [one] if one != self.arch => {
                let mut single = self.clone();
                single.arch = one.to_string();
                single.run_one()
            }
            [_] => self.run_one(),
            _ => self.run_archs(&archs),
        }
    }

    /// [`run`](Self::run) for several architectures: each built into `<out>/<arch>/`,
    /// assembled into a cubin, and every crate's images packed into a fatbin.
    fn run_archs(&self, archs: &[&str]) -> Result<Built> {
        // Every name checked before anything is built, and no two for one GPU: the
        // driver would pick one of two cubins for it, unknown to the loader.
        let mut parsed: Vec<(&str, targets::Arch)> = Vec::new();
        for a in archs {
            parsed.push((a, check_arch_name(a)?));
        }
        for (i, (a, pa)) in parsed.iter().enumerate() {
            if let Some((b, _)) = parsed[..i].iter().find(|(_, pb)| pb == pa) {
                return Err(Error::config(format!(
                    "--arch lists {b} twice ({a}); fix: name each architecture once"
                )));
            }
            if let Some((b, _)) = parsed[..i].iter().find(|(_, pb)| pb.sm == pa.sm) {
                return Err(Error::config(format!(
                    "--arch lists {b} and {a}, two cubins for the same GPU (sm_{}): the \
                     driver picks one of them and the loader cannot know which; fix: keep one",
                    pa.sm
                )));
            }
        }
        if self.verify == Verify::Never {
            return Err(Error::config(
                "a build for several architectures assembles each module into a cubin with \
                 ptxas; fix: drop --no-verify (Verify::Never)",
            ));
        }
        let ptxas = toolchain::require_ptxas()?;
        let fatbinary = fatbin::find_fatbinary(&ptxas).ok_or_else(|| {
            Error::toolchain(format!(
                "fatbinary not found (next to {}, in $FATBINARY or on PATH): it packs the \
                 architectures into one fatbin; fix: run `cargo xtask setup` (it ships with \
                 ptxas in the nvidia-cuda-nvcc wheel) or set FATBINARY",
                ptxas.display()
            ))
        })?;
        let mut builds = Vec::new();
        for arch in archs {
            let mut one = self.clone();
            one.arch = arch.to_string();
            one.arch_subdir = true;
            // ptxas runs once per module, below, writing the cubin: that is the check.
            one.verify = Verify::Never;
            builds.push((*arch, one.run_one()?));
        }
        let (_, first) = &builds[0];
        let out_dir = first
            .out_dir
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| first.out_dir.clone());
        let mut modules = Vec::new();
        for module in &first.modules {
            let mut images = Vec::new();
            for (arch, built) in &builds {
                let m = built
                    .modules
                    .iter()
                    .find(|m| m.package == module.package)
                    .ok_or_else(|| {
                        Error::new(
                            ErrorKind::Compile,
                            format!("no {arch} module was built for {}", module.package),
                        )
                    })?;
                let rel = |p: &Path| {
                    p.strip_prefix(&out_dir)
                        .unwrap_or(p)
                        .to_string_lossy()
                        .into_owned()
                };
                let cubin = m.ptx.with_extension("cubin");
                self.progress.status(
                    "Assembling",
                    &format!(
                        "{} (ptxas -arch={arch})",
                        link::display(&cubin, &first.workspace_root)
                    ),
                );
                fatbin::assemble(&ptxas, &m.ptx, arch, &cubin)?;
                let read = |p: &Path| {
                    std::fs::read(p).map_err(|e| Error::io(format!("reading {}", p.display()), e))
                };
                images.push(fatbin::FatbinImage {
                    arch: arch.to_string(),
                    ptx: rel(&m.ptx),
                    map: rel(&m.map),
                    cubin: rel(&cubin),
                    kernels: fatbin::kernels_of(&m.map)?,
                    hash: fatbin::content_hash(&[&read(&m.ptx)?, &read(&m.map)?]),
                });
            }
            self.progress.status(
                "Packing",
                &format!("{}.fatbin ({})", module.package, archs.join(", ")),
            );
            let manifest = fatbin::pack(&fatbinary, &out_dir, &module.package, images)?;
            // A single-architecture build's module of the same crate would now be stale.
            for stale in [
                format!("{}.ptx", module.package),
                format!("{}.map.json", module.package),
            ] {
                remove_if_present(&out_dir.join(stale))?;
            }
            let mut m = module.clone();
            m.verified = true;
            m.fatbin = Some(out_dir.join(&manifest.fatbin));
            modules.push(m);
        }
        Ok(Built {
            workspace_root: first.workspace_root.clone(),
            out_dir,
            modules,
        })
    }

    fn run_one(&self) -> Result<Built> {
        let started = Instant::now();
        let arch = self.check_arch()?;
        toolchain::check_nightly(&self.toolchain)?;
        let ptxas = match self.verify {
            Verify::Never => None,
            Verify::IfFound => ptx_linker::ptxas::find(),
            Verify::Always => Some(toolchain::require_ptxas().map_err(|e| {
                Error::toolchain(format!(
                    "{e}\n  (ptxas validates the linked PTX; to skip that, pass --no-verify)"
                ))
            })?),
        };

        let manifest = match (&self.manifest_path, self.crate_paths.first()) {
            (Some(m), _) => Some(m.clone()),
            (None, Some(krate)) => Some(workspace::manifest_of(krate)?),
            (None, None) => None,
        };
        let metadata = workspace::load(manifest.as_deref())?;
        let devices = workspace::device_packages(&metadata)?;
        let kernel_crates = self.select(&metadata, &devices)?;
        let mut packages: Vec<&Package> = kernel_crates.clone();
        if self.packages.is_empty() && self.crate_paths.is_empty() {
            // Also compile device libraries no kernel crate uses yet.
            let members: BTreeSet<&PackageId> = metadata.workspace_members.iter().collect();
            packages.extend(
                devices
                    .iter()
                    .filter(|(p, r)| *r == DeviceRole::Library && members.contains(&p.id))
                    .map(|(p, _)| *p),
            );
        }
        for p in &packages {
            preflight::check(p, kernel_crates.iter().any(|k| k.id == p.id))?;
        }

        let root = metadata.workspace_root.as_std_path().to_path_buf();
        let target = metadata.target_directory.as_std_path().to_path_buf();
        let profile = if self.release { "release" } else { "debug" };
        self.progress.status(
            "Compiling",
            &format!(
                "{} device crate(s) for {arch} ({profile}, panic={})",
                packages.len(),
                panic_name(self.panic)
            ),
        );
        let target_dir = self.target_dir.clone().unwrap_or_else(|| {
            target.join("device").join(match self.panic {
                PanicMode::ImmediateAbort => self.arch.clone(),
                PanicMode::Abort => format!("{}-panic-abort", self.arch),
            })
        });
        let root_manifest = root.join("Cargo.toml");
        let request = BuildRequest {
            toolchain: &self.toolchain,
            manifest_path: &root_manifest,
            arch: &self.arch,
            release: self.release,
            panic: self.panic,
            packages: packages
                .iter()
                .map(|p| format!("{}@{}", p.name, p.version))
                .collect(),
            target_dir: target_dir.clone(),
            quiet: self.progress.is_quiet(),
        };
        let built = cargo_device::build(&request)
            .map_err(|(e, failure)| explain_failure(e, &failure, &metadata, &kernel_crates))?;

        let mut out_dir = self.out_dir.clone().unwrap_or_else(|| target.join("ptx"));
        if self.arch_subdir {
            out_dir = out_dir.join(&self.arch);
        }
        std::fs::create_dir_all(&out_dir)
            .map_err(|e| Error::io(format!("creating {}", out_dir.display()), e))?;
        let mut modules = Vec::new();
        for kernel_crate in &kernel_crates {
            let own = built.get(&kernel_crate.id).ok_or_else(|| {
                Error::new(
                    ErrorKind::Compile,
                    format!("cargo built no PTX for {}", kernel_crate.name),
                )
            })?;
            let deps = workspace::dependency_closure(&metadata, &kernel_crate.id);
            let libraries: Vec<&CratePtx> = built
                .iter()
                .filter(|(id, _)| deps.contains(*id) || is_sysroot_crate(&metadata, id))
                .map(|(_, ptx)| ptx)
                .collect();
            let output = out_dir.join(format!("{}.ptx", kernel_crate.name));
            self.progress.status(
                "Linking",
                &format!(
                    "{} with {} librar{}",
                    own.crate_name,
                    libraries.len(),
                    if libraries.len() == 1 { "y" } else { "ies" }
                ),
            );
            link::link_one(&kernel_crate.name, own, &libraries, arch, &output, &root)?;
            if let Some(ptxas) = &ptxas {
                self.progress.status(
                    "Verifying",
                    &format!("{} (ptxas -arch={arch})", link::display(&output, &root)),
                );
                link::verify(ptxas, &output, arch)?;
            }
            if !self.arch_subdir {
                // A multi-architecture build's fatbin of the same crate, and its modules in
                // the architecture folders, would now be stale.
                for stale in ["fatbin", "fatbin.json"] {
                    remove_if_present(&out_dir.join(format!("{}.{stale}", kernel_crate.name)))?;
                }
                remove_arch_modules(&out_dir, &kernel_crate.name)?;
            }
            let dep_info = cargo_device::dep_info_path(&target_dir, self.release, &own.crate_name);
            modules.push(LinkedModule {
                package: kernel_crate.name.to_string(),
                manifest_path: kernel_crate.manifest_path.clone().into(),
                lib_root: preflight::lib_root(kernel_crate)
                    .map(Path::to_path_buf)
                    .unwrap_or_default(),
                map: link::map_path(&output),
                ptx: output,
                verified: ptxas.is_some(),
                fatbin: None,
                inputs: inputs(&metadata, &kernel_crate.id, &deps, &dep_info),
            });
        }
        self.progress.status(
            "Finished",
            &format!(
                "{} linked module(s) in {} in {:.1}s",
                modules.len(),
                link::display(&out_dir, &root),
                started.elapsed().as_secs_f64()
            ),
        );
        Ok(Built {
            workspace_root: root,
            out_dir,
            modules,
        })
    }

    fn check_arch(&self) -> Result<targets::Arch> {
        check_arch_name(&self.arch)
    }

    /// The kernel crates this build links.
    fn select<'m>(
        &self,
        metadata: &'m Metadata,
        devices: &[(&'m Package, DeviceRole)],
    ) -> Result<Vec<&'m Package>> {
        let mut chosen: Vec<&Package> = Vec::new();
        for path in &self.crate_paths {
            chosen.push(workspace::package_at(metadata, path)?);
        }
        for wanted in &self.packages {
            let found = devices
                .iter()
                .find(|(p, r)| *r == DeviceRole::Kernels && p.name.as_str() == wanted);
            match found {
                Some((p, _)) => chosen.push(p),
                None => return Err(not_a_kernel_crate(metadata, devices, wanted)),
            }
        }
        if self.packages.is_empty() && self.crate_paths.is_empty() {
            let members: BTreeSet<&PackageId> = metadata.workspace_members.iter().collect();
            chosen.extend(
                devices
                    .iter()
                    .filter(|(p, r)| *r == DeviceRole::Kernels && members.contains(&p.id))
                    .map(|(p, _)| *p),
            );
            if chosen.is_empty() {
                return Err(Error::config(format!(
                    "no kernel crates in the workspace at {}\n  fix: give a kernel crate's \
                     Cargo.toml `[package.metadata.gpu]` with `kernels = true`",
                    metadata.workspace_root
                )));
            }
        }
        let mut seen = BTreeSet::new();
        chosen.retain(|p| seen.insert(p.id.clone()));
        Ok(chosen)
    }
}

/// Why `-p wanted` names no kernel crate: no such package (with the closest kernel
/// crate's name), or a package that does not say `kernels = true`.
fn not_a_kernel_crate(
    metadata: &Metadata,
    devices: &[(&Package, DeviceRole)],
    wanted: &str,
) -> Error {
    let kernels: Vec<&str> = devices
        .iter()
        .filter(|(_, r)| *r == DeviceRole::Kernels)
        .map(|(p, _)| p.name.as_str())
        .collect();
    let listed = if kernels.is_empty() {
        "none".to_string()
    } else {
        kernels.join(", ")
    };
    let root = &metadata.workspace_root;
    if let Some(p) = metadata.packages.iter().find(|p| p.name.as_str() == wanted) {
        return Error::config(format!(
            "`{wanted}` ({}) is a package of the workspace at {root} but not a kernel crate \
             (kernel crates: {listed})\n  fix: if it defines kernels, give its Cargo.toml \
             `[package.metadata.gpu]` with `kernels = true`; otherwise pass a kernel crate",
            p.manifest_path
        ));
    }
    let close = kernels
        .iter()
        .find(|k| k.replace('_', "-") == wanted.replace('_', "-"))
        .or_else(|| kernels.iter().find(|k| workspace::is_typo_of(wanted, k)));
    let hint = close.map_or(String::new(), |k| format!("; did you mean `{k}`?"));
    Error::config(format!(
        "no package named `{wanted}` in the workspace at {root}{hint} (kernel crates: \
         {listed})\n  fix: pass a kernel crate's package name with -p (as in its \
         Cargo.toml, `-` included)"
    ))
}

fn panic_name(mode: PanicMode) -> String {
    use clap::ValueEnum;
    mode.to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_string())
}

/// `core` and `compiler_builtins` come from `-Zbuild-std`, outside the workspace's
/// dependency graph.
fn is_sysroot_crate(metadata: &Metadata, id: &PackageId) -> bool {
    !metadata.packages.iter().any(|p| &p.id == id)
}

/// Turns "can't find crate for `std`" into the crate that needs `std` and the chain of
/// dependencies that brought it into the device build.
fn explain_failure(
    err: Error,
    failure: &BuildFailure,
    metadata: &Metadata,
    kernel_crates: &[&Package],
) -> Error {
    let (culprit, krate) = match (failure.needs_std.first(), failure.needs_alloc.first()) {
        (Some(c), _) => (c, "std"),
        (None, Some(c)) => (c, "alloc"),
        (None, None) => return err,
    };
    let name = workspace::name_of(metadata, culprit);
    let chain = kernel_crates
        .iter()
        .find(|k| workspace::dependency_closure(metadata, &k.id).contains(culprit))
        .map(|k| workspace::dependency_chain(metadata, &k.id, culprit));
    let package = metadata.packages.iter().find(|p| &p.id == culprit);
    let local_root = package
        .filter(|p| p.source.is_none())
        .and_then(preflight::lib_root);
    let fix = match (krate, local_root) {
        ("alloc", Some(root)) => format!(
            "device code has no heap: in {} replace `Vec`, `Box` and `String` by the slices a \
             launch passes in, `SharedArray` or `DynamicSharedArray` for scratch memory and \
             fixed-size arrays for locals (and drop `extern crate alloc;`), or move the \
             dependency on `{name}` under `[target.'cfg(not(target_arch = \"nvptx64\"))'.dependencies]` \
             if only the host needs it",
            root.display()
        ),
        ("alloc", None) => format!(
            "device code has no heap: turn off `{name}`'s `alloc` feature if it has one, or \
             move the dependency under `[target.'cfg(not(target_arch = \"nvptx64\"))'.dependencies]` \
             if only the host needs it"
        ),
        (_, Some(root)) => format!(
            "add `#![no_std]` as the first line of {} (device code has no `std`), or move \
             the dependency on `{name}` under `[target.'cfg(not(target_arch = \"nvptx64\"))'.dependencies]` \
             if only the host needs it",
            root.display()
        ),
        (_, None) => format!(
            "turn off `{name}`'s `std` feature (`default-features = false`) if it has one, or \
             move the dependency under `[target.'cfg(not(target_arch = \"nvptx64\"))'.dependencies]` \
             if only the host needs it"
        ),
    };
    let how = match chain {
        Some(chain) if chain.len() > 1 => format!(
            "device crate `{}` pulls in `{krate}` through its dependencies: {}",
            chain[0],
            chain.join(" → ")
        ),
        _ => format!("device crate `{name}` needs `{krate}`"),
    };
    Error::new(
        ErrorKind::Compile,
        format!("{how}; `{name}` needs `{krate}`, which the nvptx64-nvidia-cuda target does not have\n  fix: {fix}\n({err})"),
    )
}

/// Every file a linked module depends on that can change (see [`LinkedModule::inputs`]).
fn inputs(
    metadata: &Metadata,
    kernel_crate: &PackageId,
    deps: &BTreeSet<PackageId>,
    dep_info: &Path,
) -> Vec<PathBuf> {
    let mut files = std::fs::read_to_string(dep_info)
        .map(|t| cargo_device::parse_dep_info(&t))
        .unwrap_or_default();
    for p in &metadata.packages {
        let local = p.source.is_none();
        if local && (&p.id == kernel_crate || deps.contains(&p.id)) {
            files.push(p.manifest_path.clone().into());
        }
    }
    let root = metadata.workspace_root.as_std_path();
    files.push(root.join("Cargo.toml"));
    let lock = root.join("Cargo.lock");
    if lock.exists() {
        files.push(lock);
    }
    files.sort();
    files.dedup();
    files
}

/// Parses and checks one architecture name: known, and one rustc's nvptx64 backend
/// builds for.
///
/// Errors: [`ErrorKind::Config`] with the fix.
fn check_arch_name(name: &str) -> Result<targets::Arch> {
    let fix = "fix: pass --arch sm_70 or newer, e.g. sm_80, sm_90 or sm_90a (in a build \
               script: BuildScript::arch or GPU_BUILD_ARCH)";
    let arch: targets::Arch = name
        .parse()
        .map_err(|e| Error::config(format!("{e}\n  {fix}")))?;
    arch.info()
        .map_err(|e| Error::config(format!("{e}\n  {fix}")))?;
    if arch.sm < MIN_DEVICE_SM {
        return Err(Error::config(format!(
            "rustc's nvptx64 backend cannot build for {arch} (\"target cpu `{arch}` is \
             known but unsupported\"): device crates need sm_{MIN_DEVICE_SM} or newer\n  {fix}"
        )));
    }
    Ok(arch)
}

/// Removes `path` when it exists (an output of the other build layout that would be
/// stale beside this one).
///
/// Errors: [`ErrorKind::Io`] when it exists and cannot be removed.
/// Removes `<out>/sm_*/<package>.{ptx,map.json,cubin}` (a multi-architecture build's
/// modules of this crate), and each such folder left empty.
fn remove_arch_modules(out_dir: &Path, package: &str) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(out_dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let dir = entry.path();
        let is_arch = entry.file_name().to_string_lossy().starts_with("sm_");
        if !is_arch || !dir.is_dir() {
            continue;
        }
        for ext in ["ptx", "map.json", "cubin"] {
            remove_if_present(&dir.join(format!("{package}.{ext}")))?;
        }
        // Only when empty: another crate's modules may share the folder.
        let _ = std::fs::remove_dir(&dir);
    }
    Ok(())
}

fn remove_if_present(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(
            format!("removing the stale {}", path.display()),
            e,
        )),
    }
}
