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
use ptx_linker::{link, load_input, InputKind, LinkInput, LinkOptions};

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
    let out = link(&inputs, &options).map_err(|e| Failure::Link(e.rendered))?;
    for w in &out.warnings {
        eprint!("{w}");
    }
    if args.verify {
        verify(&out.ptx, &out.map.target, !out.external.is_empty())?;
    }
    write_atomically(&args.output, out.ptx.as_bytes())?;
    if let Some(map) = &args.map {
        let json = serde_json::to_string_pretty(&out.map)
            .map_err(|e| Failure::Usage(format!("cannot serialise the link map: {e}")))?;
        if let Err(e) = write_atomically(map, json.as_bytes()) {
            let _ = std::fs::remove_file(&args.output);
            return Err(e);
        }
    }
    Ok(())
}

/// Runs ptxas on the linked module: `-arch=max(target, sm_75)` (ptxas 13
/// assembles nothing older), `-c` when symbols stay external.
fn verify(ptx: &str, target: &str, compile_only: bool) -> Result<(), Failure> {
    let ptxas = ptx_linker::ptxas::find()
        .ok_or_else(|| Failure::Usage(format!("--verify: {}", ptx_linker::ptxas::NOT_FOUND_FIX)))?;
    let dir = std::env::temp_dir().join(format!("ptx-linker-verify-{}", std::process::id()));
    std::fs::create_dir_all(&dir)
        .map_err(|e| Failure::Usage(format!("--verify: cannot create `{}`: {e}", dir.display())))?;
    let file = dir.join("linked.ptx");
    let cubin = dir.join("linked.cubin");
    let arch = ptxas_arch(target);
    let result = std::fs::write(&file, ptx)
        .map_err(|e| Failure::Usage(format!("--verify: cannot write `{}`: {e}", file.display())))
        .and_then(|()| {
            let mut cmd = Command::new(&ptxas);
            cmd.arg(format!("-arch={arch}"))
                .arg(&file)
                .arg("-o")
                .arg(&cubin);
            if compile_only {
                cmd.arg("-c");
            }
            cmd.output().map_err(|e| {
                Failure::Usage(format!("--verify: cannot run `{}`: {e}", ptxas.display()))
            })
        });
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

/// Writes `bytes` to a temporary file next to `path`, then renames it over
/// `path`, so a failed run never leaves a partial file.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let io = |e: std::io::Error| Failure::Usage(format!("cannot write `{}`: {e}", path.display()));
    let result = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    Ok(())
}
