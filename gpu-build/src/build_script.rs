//! The pipeline from a host crate's `build.rs`: build its kernel crate, link and validate
//! it into `OUT_DIR`, generate typed bindings there, and tell cargo which files to watch.

use std::path::PathBuf;

use crate::bindings;
use crate::error::{Error, ErrorKind, Result};
use crate::pipeline::{BuildPtx, LinkedModule, PanicMode, Verify};

/// A host crate's build script for one kernel crate.
///
/// In the host crate's `Cargo.toml`: `gpu-build` under `[build-dependencies]`, and
/// `host-loader` plus the kernel crate (built for the host: its types name the bindings'
/// struct parameters) under `[dependencies]`. Then `build.rs`:
///
/// ```no_run
/// // build.rs
/// # #[allow(clippy::needless_doctest_main)]
/// fn main() {
///     gpu_build::BuildScript::new("../kernels").run();
/// }
/// ```
///
/// and in the host program:
///
/// ```ignore
/// static PTX: host_loader::EmbeddedPtx = host_loader::include_ptx!("my-kernels");
/// mod kernels {
///     include!(concat!(env!("OUT_DIR"), "/my_kernels.rs"));
/// }
/// let module = host_loader::Module::from_embedded(&ctx, &PTX)?;
/// let kernels = kernels::MyKernels::load(&module)?;
/// ```
///
/// What it does, in `$OUT_DIR`: `<crate>.ptx` and `<crate>.map.json` (linked, assembled
/// by ptxas when one is found) — or, for several architectures ([`arch`](Self::arch)),
/// `<crate>.fatbin`, its manifest `<crate>.fatbin.json` and `<arch>/<crate>.ptx`, `.map.json`
/// and `.cubin` for each — and `<crate with - as _>.rs` (the bindings, see
/// [`bindings`](crate::bindings)). It prints `cargo:rerun-if-changed` for every source and
/// manifest of the kernel crate's path-dependency closure, so an edit to a device library
/// rebuilds the host crate.
///
/// It works when the host crate is built by stable cargo (the nightly runs through
/// `rustup run nightly cargo`, with the outer build's variables removed) and never waits
/// on the outer build's lock: the device build has its own target directory,
/// `<target>/device/<arch>`, shared with `cargo xtask build-ptx`.
///
/// The variable `GPU_BUILD_ARCH` overrides the architecture (`sm_80`, or a list such as
/// `sm_80,sm_90a`), so a CI job or a release build can target other GPUs without editing
/// the build script.
#[derive(Debug, Clone)]
pub struct BuildScript {
    kernel_crate: PathBuf,
    /// Everything but the crate and the output directory, which [`build`](Self::build)
    /// takes from cargo's variables.
    build: BuildPtx,
    bindings: bool,
}

/// What [`BuildScript::build`] wrote.
#[derive(Debug, Clone)]
pub struct ScriptOutput {
    /// The linked module and what it was built from.
    pub module: LinkedModule,
    /// The generated bindings, when [`BuildScript::bindings`] is on.
    pub bindings: Option<PathBuf>,
}

impl BuildScript {
    /// The kernel crate in `dir` (relative to the host crate's `Cargo.toml`, or absolute),
    /// for `sm_90`, `immediate-abort` panics, validated when ptxas is found, with bindings.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        BuildScript {
            kernel_crate: dir.into(),
            build: BuildPtx::new().verify(Verify::IfFound),
            bindings: true,
        }
    }

    /// `sm_XX` (or `sm_XXa`); `GPU_BUILD_ARCH` overrides it. Default `sm_90`. A
    /// comma-separated list (`"sm_80,sm_90a"`) builds the kernel crate for each, assembles
    /// each with ptxas and packs them into one fatbin in `OUT_DIR`
    /// ([`BuildPtx::arch`], [`crate::fatbin`]), which `include_ptx!` then embeds and
    /// `Module::from_embedded` loads: the driver runs the cubin built for the device, with
    /// no JIT on the user's first run. A list needs ptxas and `fatbinary` (`cargo xtask
    /// setup`), whatever [`verify`](Self::verify) says.
    pub fn arch(mut self, arch: impl Into<String>) -> Self {
        self.build = self.build.arch(arch);
        self
    }

    /// What panics do in device code. Default [`PanicMode::ImmediateAbort`].
    pub fn panic(mut self, mode: PanicMode) -> Self {
        self.build = self.build.panic(mode);
        self
    }

    /// Whether ptxas validates the module. Default [`Verify::IfFound`]: a missing ptxas
    /// is a `cargo:warning`, not an error.
    pub fn verify(mut self, verify: Verify) -> Self {
        self.build = self.build.verify(verify);
        self
    }

    /// Whether to generate typed bindings (`$OUT_DIR/<crate>.rs`). Default on.
    pub fn bindings(mut self, on: bool) -> Self {
        self.bindings = on;
        self
    }

    /// The rustup toolchain device crates build with. Default `nightly`.
    pub fn toolchain(mut self, name: impl Into<String>) -> Self {
        self.build = self.build.toolchain(name);
        self
    }

    /// Builds, links, validates and generates, and prints the `cargo:` lines.
    ///
    /// Errors: those of [`BuildPtx::run`] and [`bindings::generate`]; [`ErrorKind::Config`]
    /// when not run from a build script (`OUT_DIR` or `CARGO_MANIFEST_DIR` unset).
    pub fn build(&self) -> Result<ScriptOutput> {
        let var = |name: &str| {
            std::env::var_os(name).map(PathBuf::from).ok_or_else(|| {
                Error::config(format!(
                    "{name} is not set: gpu_build::BuildScript runs from a build script \
                     (build.rs), where cargo sets it"
                ))
            })
        };
        let out_dir = var("OUT_DIR")?;
        let manifest_dir = var("CARGO_MANIFEST_DIR")?;
        println!("cargo:rerun-if-env-changed=GPU_BUILD_ARCH");
        println!("cargo:rerun-if-env-changed=PTXAS");
        let mut build = self
            .build
            .clone()
            .crate_path(manifest_dir.join(&self.kernel_crate))
            .out_dir(&out_dir);
        if let Ok(arch) = std::env::var("GPU_BUILD_ARCH") {
            build = build.arch(arch);
        }
        let built = build.run()?;
        let module = built.modules.into_iter().next().ok_or_else(|| {
            Error::new(
                ErrorKind::Compile,
                "the build produced no module".to_string(),
            )
        })?;
        for input in &module.inputs {
            println!("cargo:rerun-if-changed={}", input.display());
        }
        if !module.verified {
            println!(
                "cargo:warning={} was not validated: {}",
                module.ptx.display(),
                ptx_linker::ptxas::not_found_fix().replace('\n', " ")
            );
            // Rerun once a ptxas can be found (after `cargo xtask setup`, a PATH change or
            // another cache directory), not only when a source changes: watch where setup
            // installs it and the variables that move it.
            println!("cargo:rerun-if-env-changed=PATH");
            println!("cargo:rerun-if-env-changed=XDG_CACHE_HOME");
            println!("cargo:rerun-if-env-changed=HOME");
            if let Some(cache) = ptx_linker::ptxas::cache_dir() {
                println!("cargo:rerun-if-changed={}", cache.display());
            }
        }
        let bindings = if self.bindings {
            let out = out_dir.join(format!("{}.rs", module.package.replace('-', "_")));
            let read = bindings::write(&module.package, &module.lib_root, &out)
                .map_err(|e| Error::config(format!("generating bindings: {e}")))?;
            // rustc's dep-info usually lists these already.
            for f in read.iter().filter(|f| !module.inputs.contains(f)) {
                println!("cargo:rerun-if-changed={}", f.display());
            }
            Some(out)
        } else {
            None
        };
        Ok(ScriptOutput { module, bindings })
    }

    /// [`build`](Self::build), and on error prints it and exits with status 1, so
    /// cargo shows the message without a panic's backtrace noise.
    pub fn run(&self) -> ScriptOutput {
        match self.build() {
            Ok(out) => out,
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
    }
}
