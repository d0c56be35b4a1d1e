//! Data-driven link tests: each folder in `tests/cases/` holds inputs
//! (`*.ptx`, objects; `lib_*.ptx`, libraries, each in name order), optional
//! `args` (`--arch sm_XX`, `--gc`, `--keep SYM`, `--allow-unresolved`), and the
//! expectation: `expected.ptx` (plus `expected.map.json`) for a successful
//! link, `expected.err` (the one-line rendering) for a failed one. Successful
//! outputs must also pass ptxas. `BLESS=1 cargo test` rewrites expectations.
//! A case may also hold `nvlink`: what nvlink 13.5 did with the same inputs
//! (`ptxas -c` on each, then `nvlink` in both orders), the ground truth the
//! expectation follows (see `ptx_linker::agree`).

mod common;

use std::path::Path;

use ptx_linker::{link, LinkInput, LinkOptions};

const CASES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cases");

fn options(args: &str) -> LinkOptions {
    let mut o = LinkOptions::default();
    let mut it = args.split_whitespace();
    while let Some(a) = it.next() {
        match a {
            "--arch" => o.arch = Some(it.next().unwrap().parse().unwrap()),
            "--gc" => o.gc = true,
            "--keep" => o.keep.push(it.next().unwrap().to_string()),
            "--allow-unresolved" => o.allow_unresolved = true,
            other => panic!("unknown case argument {other}"),
        }
    }
    o
}

fn check_expectation(dir: &Path, file: &str, actual: &str, failures: &mut Vec<String>) {
    let path = dir.join(file);
    if std::env::var("BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    match std::fs::read_to_string(&path) {
        Ok(expected) if expected == actual => {}
        Ok(expected) => failures.push(format!(
            "{}: {file} differs\n--- expected\n{expected}\n--- actual\n{actual}",
            dir.display()
        )),
        Err(_) => failures.push(format!(
            "{}: missing {file}; actual:\n{actual}",
            dir.display()
        )),
    }
}

fn run_case(dir: &Path, ptxas: Option<&Path>, failures: &mut Vec<String>) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".ptx") && !n.starts_with("expected"))
        .collect();
    names.sort();
    let (libs, objs): (Vec<_>, Vec<_>) = names.into_iter().partition(|n| n.starts_with("lib_"));
    let mut inputs = Vec::new();
    for n in objs {
        inputs.push(LinkInput::object(
            n.clone(),
            std::fs::read_to_string(dir.join(&n)).unwrap(),
        ));
    }
    for n in libs {
        inputs.push(LinkInput::library(
            n.clone(),
            std::fs::read_to_string(dir.join(&n)).unwrap(),
        ));
    }
    let args = std::fs::read_to_string(dir.join("args")).unwrap_or_default();
    let opts = options(&args);
    match link(&inputs, &opts) {
        Ok(out) => {
            if dir.join("expected.err").exists() {
                failures.push(format!(
                    "{}: expected an error, the link succeeded",
                    dir.display()
                ));
            }
            check_expectation(dir, "expected.ptx", &out.ptx, failures);
            let map = serde_json::to_string_pretty(&out.map).unwrap() + "\n";
            check_expectation(dir, "expected.map.json", &map, failures);
            if let Some(ptxas) = ptxas {
                let arch = common::ptxas_arch(&out.map.target);
                let tag = dir.file_name().unwrap().to_string_lossy().into_owned();
                if let Err(e) =
                    common::run_ptxas(ptxas, &out.ptx, &arch, opts.allow_unresolved, &tag)
                {
                    failures.push(format!("{}: ptxas rejects the output:\n{e}", dir.display()));
                }
            }
        }
        Err(e) => {
            if dir.join("expected.ptx").exists() {
                failures.push(format!("{}: expected success, got:\n{e}", dir.display()));
            }
            check_expectation(dir, "expected.err", &format!("{}\n", e.message), failures);
        }
    }
}

#[test]
fn link_cases() {
    let ptxas = common::ptxas();
    let mut dirs: Vec<_> = std::fs::read_dir(CASES)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(
        dirs.len() >= 17,
        "expected at least 17 cases, found {}",
        dirs.len()
    );
    let mut failures = Vec::new();
    for d in &dirs {
        run_case(d, ptxas.as_deref(), &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
