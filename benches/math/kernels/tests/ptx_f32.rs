//! The f32 kernels' PTX has no f64 arithmetic: builds the module the way
//! `tests/tests/build_ptx.rs` does (`cargo xtask build-ptx -p math-bench-kernels
//! --out-dir TMP`, which also runs ptxas) and checks that no `acc_`/`thr_` entry of an
//! f32 function, nor any function it calls, has an instruction with a `.f64` type.

use math_bench_kernels::{F32_BINARY, F32_UNARY, F64_BINARY, F64_UNARY};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

/// Each function defined in `ptx` (`.entry` or `.func`): its name and body lines.
fn bodies(ptx: &str) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    let mut lines = ptx.lines();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        let header = [
            ".visible .entry",
            ".entry",
            ".visible .func",
            ".func",
            ".weak .func",
        ]
        .iter()
        .any(|p| t.starts_with(p));
        if !header {
            continue;
        }
        // The name precedes the parameter list's `(`; a return list `(...)` may come first.
        let before = match t.rfind(") ") {
            Some(r)
                if t.starts_with(".visible .func")
                    || t.starts_with(".func")
                    || t.starts_with(".weak") =>
            {
                &t[r + 2..]
            }
            _ => t,
        };
        let name = before
            .split('(')
            .next()
            .unwrap()
            .split_whitespace()
            .last()
            .unwrap()
            .to_string();
        // A declaration ends with `;` before any `{`; a definition's body is `{ ... }`.
        let mut depth = 0usize;
        let mut body = Vec::new();
        let mut started = false;
        if t.trim_end().ends_with(';') {
            continue;
        }
        for l in lines.by_ref() {
            let code = l.split("//").next().unwrap();
            if !started {
                if code.trim_end().ends_with(';') && !code.contains('{') {
                    break; // declaration
                }
                if code.trim() == "{" {
                    started = true;
                    depth = 1;
                }
                continue;
            }
            depth += code.matches('{').count();
            depth -= code.matches('}').count();
            if depth == 0 {
                break;
            }
            body.push(code.trim().to_string());
        }
        if started {
            out.insert(name, body);
        }
    }
    out
}

#[test]
fn f32_kernels_use_no_f64() {
    let dir = tempfile::tempdir().unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(workspace_root())
        .args([
            "xtask",
            "build-ptx",
            "-p",
            "math-bench-kernels",
            "--out-dir",
        ])
        .arg(dir.path())
        .output()
        .expect("running cargo xtask build-ptx");
    assert!(
        out.status.success(),
        "build-ptx -p math-bench-kernels failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ptx = std::fs::read_to_string(dir.path().join("math-bench-kernels.ptx")).unwrap();
    let funcs = bodies(&ptx);

    let f32_names = F32_UNARY
        .iter()
        .map(|f| f.0)
        .chain(F32_BINARY.iter().map(|f| f.0));
    let f64_names = F64_UNARY
        .iter()
        .map(|f| f.0)
        .chain(F64_BINARY.iter().map(|f| f.0));
    for name in f64_names {
        for k in ["acc_", "thr_"] {
            assert!(
                funcs.contains_key(&format!("{k}{name}")),
                "no entry {k}{name} in the PTX"
            );
        }
    }
    let mut bad = Vec::new();
    for name in f32_names {
        for entry in [format!("acc_{name}"), format!("thr_{name}")] {
            assert!(funcs.contains_key(&entry), "no entry {entry} in the PTX");
            // Everything reachable through `call`s.
            let mut seen = BTreeSet::new();
            let mut todo = vec![entry.clone()];
            while let Some(f) = todo.pop() {
                if !seen.insert(f.clone()) {
                    continue;
                }
                let Some(body) = funcs.get(&f) else { continue };
                for l in body {
                    if l.starts_with("call") {
                        for callee in funcs.keys() {
                            if l.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                                .any(|w| w == callee)
                            {
                                todo.push(callee.clone());
                            }
                        }
                    }
                    if !l.starts_with('.') && l.contains(".f64") {
                        bad.push(format!("{entry} (in {f}): {l}"));
                    }
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "f64 arithmetic in f32 kernels:\n  {}",
        bad.join("\n  ")
    );
}

#[test]
fn parses_entries_and_calls() {
    let ptx = "\
.visible .func  (.param .b32 func_retval0) helper(
\t.param .b32 helper_param_0
);
.visible .entry acc_x(
\t.param .b32 acc_x_param_0
)
{
\t{ // callseq 0, 0
\tcall.uni (retval0), helper, (param0);
\t}
\tret;
}
.visible .func  (.param .b32 func_retval0) helper(
\t.param .b32 helper_param_0
)
{
\tcvt.f64.f32 \t%fd1, %r1;
\tret;
}
";
    let f = bodies(ptx);
    assert_eq!(f.keys().collect::<Vec<_>>(), ["acc_x", "helper"]);
    assert!(f["acc_x"].iter().any(|l| l.starts_with("call.uni")));
    assert!(f["helper"].iter().any(|l| l.contains(".f64")));
}
