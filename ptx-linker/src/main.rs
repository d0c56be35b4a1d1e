//! `ptx-linker`: merge PTX modules into one.
//!
//! ```text
//! ptx-linker -o OUT.ptx [--arch sm_XX] [--gc] [--keep SYM]... [--map M.json]
//!            [--lib FILE]... [--allow-unresolved] INPUTS...
//! ```
//! Exit status: 0 on success, 1 on link errors, 2 on usage or I/O errors.
//! On error no output file is left behind.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use ptx_linker::{link, InputKind, LinkInput, LinkOptions, SourceFile};

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
    /// Input PTX files.
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

fn read(path: &Path, kind: InputKind) -> Result<LinkInput, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::Usage(format!("cannot read `{}`: {e}", path.display())))?;
    Ok(LinkInput {
        file: SourceFile {
            path: path.display().to_string(),
            text,
        },
        kind,
    })
}

fn run(args: &Args) -> Result<(), Failure> {
    let arch = match &args.arch {
        Some(a) => Some(
            a.parse()
                .map_err(|e| Failure::Usage(format!("--arch: {e}")))?,
        ),
        None => None,
    };
    let mut inputs = Vec::new();
    for p in &args.inputs {
        inputs.push(read(p, InputKind::Object)?);
    }
    for p in &args.libs {
        inputs.push(read(p, InputKind::Library)?);
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
