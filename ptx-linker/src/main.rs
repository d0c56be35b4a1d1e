//! `ptx-linker`: merge PTX modules into one.
//!
//! ```text
//! ptx-linker -o OUT.ptx [--arch sm_XX] [--gc] [--keep SYM]... [--map M.json]
//!            [--lib FILE]... [--allow-unresolved] [--verify] INPUTS...
//! ```
//! Inputs and `--lib` files are PTX text, `ar` archives (`.a`, `.rlib`) of
//! PTX, ELF files with an embedded fatbin, or fatbins.
//! Exit status: 0 on success, 1 on link errors (bad input, a failed
//! `--verify`), 2 on usage or I/O errors. On error no output file is left
//! behind.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use clap::Parser;
use ptx_linker::{link_to, load_input, InputKind, LinkInput, LinkOptions, LinkToError};

/// Merge PTX modules: resolve `.extern`s, rename colliding locals, unify
/// headers, check prototypes and shared-memory budgets.
#[derive(Debug, Parser)]
#[command(name = "ptx-linker", version)]
struct Args {
    /// Output PTX file.
    #[arg(short = 'o', long = "output", value_name = "OUT.ptx")]
    output: PathBuf,
    /// Target architecture of the output (`sm_XX`); at least every input's.
    #[arg(long, value_name = "sm_XX")]
    arch: Option<String>,
    /// Drop every function and variable no kernel (or `--keep` symbol) reaches.
    #[arg(long)]
    gc: bool,
    /// Keep this symbol even when `--gc` finds it unreachable.
    #[arg(long, value_name = "SYM")]
    keep: Vec<String>,
    /// Write the link map (JSON) here.
    #[arg(long, value_name = "M.json")]
    map: Option<PathBuf>,
    /// A library input: linked only where it defines an otherwise unresolved symbol.
    #[arg(long = "lib", value_name = "FILE")]
    libs: Vec<PathBuf>,
    /// Leave unresolved `.extern` declarations external instead of failing.
    #[arg(long)]
    allow_unresolved: bool,
    /// Assemble the output with ptxas (`$PTXAS`, else `ptxas` on `PATH`, else
    /// the one `cargo xtask setup` caches) and fail when it rejects it; `-c`
    /// when symbols stay external.
    #[arg(long)]
    verify: bool,
    /// Inputs: `.ptx` files, `ar` archives of PTX (`.a`, `.rlib`), ELF files
    /// with an embedded fatbin, or fatbins.
    #[arg(required = true, value_name = "INPUTS")]
    inputs: Vec<PathBuf>,
}

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(msg)) => {
            eprintln!("ptx-linker: error: {msg}");
            ExitCode::from(2)
        }
        Err(Failure::Link(text)) => {
            eprint!("{text}");
            ExitCode::from(1)
        }
    }
}

enum Failure {
    Usage(String),
    Link(String),
}

/// Reads one input file into the PTX modules it holds.
fn read(path: &Path, kind: InputKind, arch: Option<u32>) -> Result<Vec<LinkInput>, Failure> {
    let bytes = std::fs::read(path)
        .map_err(|e| Failure::Usage(format!("cannot read `{}`: {e}", path.display())))?;
    load_input(&path.display().to_string(), bytes, kind, arch)
        .map_err(|e| Failure::Link(format!("error: {e}\n")))
}

fn run(args: &Args) -> Result<(), Failure> {
    let arch: Option<targets::Arch> = match &args.arch {
        Some(a) => Some(
            a.parse()
                .map_err(|e| Failure::Usage(format!("--arch: {e}")))?,
        ),
        None => None,
    };
    let sm = arch.map(|a| a.sm);
    let mut inputs = Vec::new();
    for p in &args.inputs {
        inputs.extend(read(p, InputKind::Object, sm)?);
    }
    for p in &args.libs {
        inputs.extend(read(p, InputKind::Library, sm)?);
    }
    let options = LinkOptions {
        arch,
        gc: args.gc,
        keep: args.keep.clone(),
        allow_unresolved: args.allow_unresolved,
    };
    // The module goes to a temporary file as it is emitted (the whole text
    // is never in memory), which becomes the output only if everything
    // succeeds; link errors are found before the file is created.
    let mut out = TempOutput::new(&args.output);
    let report = link_to(&inputs, &options, &mut out).map_err(|e| match e {
        LinkToError::Link(e) => Failure::Link(e.rendered),
        LinkToError::Write(e) => out.failure(e),
    })?;
    drop(inputs);
    for w in &report.warnings {
        eprint!("{w}");
    }
    out.finish().map_err(|e| out.failure(e))?;
    if args.verify {
        verify(&out.tmp, &report.map.target, !report.external.is_empty())?;
    }
    // The link map is written in full before either output is committed,
    // so a failure leaves neither (a pipe receives nothing).
    let mut map_out = None;
    if let Some(map) = &args.map {
        let json = serde_json::to_string_pretty(&report.map)
            .map_err(|e| Failure::Usage(format!("cannot serialise the link map: {e}")))?;
        let mut m = TempOutput::new(map);
        m.write_all(json.as_bytes())
            .and_then(|()| m.finish())
            .map_err(|e| m.failure(e))?;
        map_out = Some(m);
    }
    out.commit().map_err(|e| out.failure(e))?;
    if let Some(mut m) = map_out {
        if let Err(e) = m.commit() {
            if !out.special {
                let _ = std::fs::remove_file(&args.output);
            }
            return Err(m.failure(e));
        }
    }
    Ok(())
}

/// Runs ptxas on the linked module (the file `ptx`): `-arch=max(target, sm_75)` (ptxas 13
/// assembles nothing older), `-c` when symbols stay external.
fn verify(ptx: &Path, target: &str, compile_only: bool) -> Result<(), Failure> {
    let ptxas = ptx_linker::ptxas::find().ok_or_else(|| {
        Failure::Usage(format!("--verify: {}", ptx_linker::ptxas::not_found_fix()))
    })?;
    let dir = std::env::temp_dir().join(format!("ptx-linker-verify-{}", std::process::id()));
    std::fs::create_dir_all(&dir)
        .map_err(|e| Failure::Usage(format!("--verify: cannot create `{}`: {e}", dir.display())))?;
    let cubin = dir.join("linked.cubin");
    let arch = ptxas_arch(target);
    let mut cmd = Command::new(&ptxas);
    cmd.arg(format!("-arch={arch}"))
        .arg(ptx)
        .arg("-o")
        .arg(&cubin);
    if compile_only {
        cmd.arg("-c");
    }
    let result = cmd
        .output()
        .map_err(|e| Failure::Usage(format!("--verify: cannot run `{}`: {e}", ptxas.display())));
    let _ = std::fs::remove_dir_all(&dir);
    let output = result?;
    if output.status.success() {
        return Ok(());
    }
    Err(Failure::Link(format!(
        "error: ptxas (-arch={arch}{}) rejects the linked module:\n{}",
        if compile_only { " -c" } else { "" },
        String::from_utf8_lossy(&output.stderr)
    )))
}

/// `sm_XX` for ptxas: the output's architecture, at least `sm_75`.
fn ptxas_arch(target: &str) -> String {
    match ptx_linker::parse::arch_number(target) {
        Some(sm) if sm >= 75 => target.replace("compute_", "sm_"),
        _ => "sm_75".to_string(),
    }
}

/// An output file written under a temporary name next to `path` (created
/// at the first write) and renamed over `path` by [`TempOutput::commit`], so
/// a failed run never leaves a partial file: dropped before the rename, it
/// removes the temporary file. An output that exists and is no regular file
/// (`/dev/null`, a pipe), or is a symbolic link (`/dev/stdout`, even when
/// it leads to a regular file), is never replaced: the temporary file is in
/// the system's temporary directory, and is copied into it. The temporary
/// file is created only if its name is free (never through a link another
/// user placed there).
struct TempOutput {
    path: PathBuf,
    tmp: PathBuf,
    /// `path` is a symbolic link, a device, a pipe or a socket.
    special: bool,
    file: Option<std::fs::File>,
    committed: bool,
}

impl TempOutput {
    fn new(path: &Path) -> TempOutput {
        let special = std::fs::symlink_metadata(path)
            .is_ok_and(|m| m.file_type().is_symlink() || (!m.is_file() && !m.is_dir()));
        let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
            _ if special => std::env::temp_dir(),
            Some(d) => d.to_path_buf(),
            None => PathBuf::from("."),
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        TempOutput {
            path: path.to_path_buf(),
            tmp: dir.join(format!(".{name}.{}.tmp", std::process::id())),
            special,
            file: None,
            committed: false,
        }
    }

    fn file(&mut self) -> std::io::Result<&mut std::fs::File> {
        if self.file.is_none() {
            // A free name: `.NAME.PID.tmp`, then `.NAME.PID.1.tmp`, ...
            let base = self.tmp.clone();
            let mut n = 0;
            let file = loop {
                let open = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&self.tmp);
                match open {
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => {
                        n += 1;
                        self.tmp = base.with_extension(format!("{n}.tmp"));
                    }
                    other => break other?,
                }
            };
            self.file = Some(file);
        }
        Ok(self.file.as_mut().expect("created above"))
    }

    /// Flushes everything to disk (the file is then complete at `tmp`).
    fn finish(&mut self) -> std::io::Result<()> {
        self.file()?.sync_all()
    }

    /// Renames the temporary file over the output (copies it into a
    /// special output, then removes it).
    fn commit(&mut self) -> std::io::Result<()> {
        self.file()?;
        if self.special {
            let mut from = std::fs::File::open(&self.tmp)?;
            let mut to = std::fs::OpenOptions::new().write(true).open(&self.path)?;
            std::io::copy(&mut from, &mut to)?;
            to.flush()?;
            std::fs::remove_file(&self.tmp)?;
        } else {
            std::fs::rename(&self.tmp, &self.path)?;
        }
        self.committed = true;
        Ok(())
    }

    fn failure(&self, e: std::io::Error) -> Failure {
        Failure::Usage(format!("cannot write `{}`: {e}", self.path.display()))
    }
}

impl Write for TempOutput {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file()?.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.file()?.write_all(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.file.as_mut() {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for TempOutput {
    fn drop(&mut self) {
        if self.file.is_some() && !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}
