//! Every file of `shared/corpus/ptx-wild` parses without errors, and
//! re-emitting it alone gives PTX that ptxas accepts whenever it accepted the
//! original.

mod common;

use ptx_linker::{link, LinkInput, LinkOptions};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus/ptx-wild");

fn corpus() -> Vec<(String, String)> {
    let mut files: Vec<_> = std::fs::read_dir(CORPUS)
        .unwrap_or_else(|e| panic!("cannot read {CORPUS}: {e} (the corpus is the repository's sibling `shared/corpus/ptx-wild`)"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p.file_name().unwrap().to_string_lossy().into_owned(), text)
        })
        .collect()
}

fn relink(name: &str, text: &str) -> String {
    relink_with(name, text, false)
}

fn relink_with(name: &str, text: &str, gc: bool) -> String {
    let opts = LinkOptions {
        allow_unresolved: true,
        gc,
        ..LinkOptions::default()
    };
    match link(&[LinkInput::object(name, text)], &opts) {
        Ok(out) => out.ptx,
        Err(e) => panic!("{name}: re-emit failed:\n{e}"),
    }
}

#[test]
fn corpus_has_31_files_that_parse_without_errors() {
    let files = corpus();
    assert_eq!(files.len(), 31);
    let mut failures = String::new();
    for (name, text) in &files {
        let m = ptx_linker::parse::parse(ptx_linker::diagnostic::FileId(0), text);
        if !m.errors.is_empty() {
            let e = ptx_linker::LinkError::new(
                ptx_linker::diagnostic::Sources {
                    files: &[(name, text)],
                },
                m.errors,
            );
            failures.push_str(&format!("{e}\n"));
        }
    }
    assert!(failures.is_empty(), "{failures}");
}

#[test]
fn corpus_reemit_is_deterministic_and_reparses() {
    for (name, text) in corpus() {
        let a = relink(&name, &text);
        let b = relink(&name, &text);
        assert_eq!(a, b, "{name}: output differs between runs");
        let m = ptx_linker::parse::parse(ptx_linker::diagnostic::FileId(0), &a);
        assert!(
            m.errors.is_empty(),
            "{name}: re-emitted text has parse errors: {:?}",
            m.errors
        );
    }
}

#[test]
fn corpus_reemit_passes_ptxas_when_the_original_does() {
    let Some(ptxas) = common::ptxas() else { return };
    let files = corpus();
    let handles: Vec<_> = files
        .into_iter()
        .map(|(name, text)| {
            let ptxas = ptxas.clone();
            std::thread::spawn(move || {
                let (arch, has_extern, tag) = ptxas_setup(&name, &text);
                let original =
                    common::run_ptxas(&ptxas, &text, &arch, has_extern, &format!("{tag}_orig"));
                let out = relink(&name, &text);
                let relinked =
                    common::run_ptxas(&ptxas, &out, &arch, has_extern, &format!("{tag}_new"));
                (name, original.is_ok(), relinked)
            })
        })
        .collect();
    let mut accepted = 0;
    let mut failures = String::new();
    for h in handles {
        let (name, orig_ok, relinked) = h.join().unwrap();
        if orig_ok {
            accepted += 1;
            if let Err(e) = relinked {
                failures.push_str(&format!(
                    "{name}: ptxas accepted the original but not a re-emitted module (plain or --gc):\n{e}\n"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures}");
    // TOOLCHAIN.md: ptxas 13.5 accepts 25 of the 31 files as they are.
    assert_eq!(
        accepted, 25,
        "ptxas accepted {accepted} originals, expected 25"
    );
}

/// `ptxas -v`: static shared memory per entry, from its `Used ...` line
/// (`..., 2048 bytes smem, ...`; no `smem` part means 0).
fn ptxas_smem(
    ptxas: &std::path::Path,
    ptx: &str,
    arch: &str,
    compile_only: bool,
    tag: &str,
) -> Result<Vec<(String, u64)>, String> {
    let dir = std::env::temp_dir().join(format!("ptx-linker-smem-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{tag}.ptx"));
    std::fs::write(&file, ptx).unwrap();
    let mut cmd = std::process::Command::new(ptxas);
    cmd.arg(format!("-arch={arch}"))
        .arg("-v")
        .arg(&file)
        .arg("-o")
        .arg(dir.join(format!("{tag}.cubin")));
    if compile_only {
        cmd.arg("-c");
    }
    let out = cmd.output().map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_file(dir.join(format!("{tag}.cubin")));
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        return Err(text);
    }
    let mut result = Vec::new();
    let mut current = None;
    for line in text.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            current = rest.split('\'').next().map(str::to_string);
        }
        if line.contains(": Used ") {
            if let Some(name) = current.take() {
                let smem = line
                    .split(", ")
                    .find_map(|p| p.trim().strip_suffix(" bytes smem"))
                    .map_or(0, |n| n.trim().parse().unwrap());
                result.push((name, smem));
            }
        }
    }
    Ok(result)
}

/// A module with the same header as `text` whose kernel uses a dynamic
/// shared-memory array aligned to 1024: linked beside a corpus file, it
/// makes ptxas round every kernel's static shared memory up to 1024.
fn dynamic_shared_probe(text: &str) -> String {
    let mut probe: String = text
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            l.starts_with(".version") || l.starts_with(".target") || l.starts_with(".address_size")
        })
        .map(|l| format!("{l}\n"))
        .collect();
    // No parameter list: PTX ISA 1.3 has none.
    let w = if probe.contains(".address_size 64") {
        64
    } else {
        32
    };
    probe.push_str(&format!(
        ".extern .shared .align 1024 .b8 probe_smem[];\n\
         .entry probe_kernel\n{{\n\t.reg .u{w} %a<2>;\n\tmov.u{w} %a1, probe_smem;\n\tret;\n}}\n"
    ));
    probe
}

/// The link map's static shared memory is what `ptxas -v` reports for the
/// linked module, for every kernel of every corpus file ptxas accepts:
/// linked alone (plain and `gc`), and beside a module whose dynamic
/// shared-memory array is aligned to 1024 (ptxas rounds each kernel's
/// static shared memory up to that alignment).
#[test]
fn link_map_static_shared_memory_matches_ptxas() {
    let Some(ptxas) = common::ptxas() else { return };
    let files = corpus();
    let results = common::parallel_map(&files, |(name, text)| {
        let (arch, has_extern, tag) = ptxas_setup(name, text);
        let mut rows = Vec::new();
        if ptxas_smem(&ptxas, text, &arch, has_extern, &tag).is_err() {
            return rows;
        }
        let probe = dynamic_shared_probe(text);
        let runs: [(&str, bool, Vec<LinkInput>); 3] = [
            (
                "alone",
                false,
                vec![LinkInput::object(name.as_str(), text.as_str())],
            ),
            (
                "gc",
                true,
                vec![LinkInput::object(name.as_str(), text.as_str())],
            ),
            (
                "probe",
                false,
                vec![
                    LinkInput::object(name.as_str(), text.as_str()),
                    LinkInput::object("probe.ptx", probe.as_str()),
                ],
            ),
        ];
        for (how, gc, inputs) in runs {
            let opts = LinkOptions {
                allow_unresolved: true,
                gc,
                ..LinkOptions::default()
            };
            let out = link(&inputs, &opts).unwrap_or_else(|e| panic!("{name} ({how}): {e}"));
            let theirs = ptxas_smem(&ptxas, &out.ptx, &arch, has_extern, &format!("{tag}_{how}"))
                .unwrap_or_else(|e| panic!("{name} ({how}): ptxas rejects the output:\n{e}"));
            for (kernel, smem) in theirs {
                let ours = out
                    .map
                    .kernels
                    .iter()
                    .find(|k| k.name == kernel)
                    .map(|k| k.static_shared_bytes);
                rows.push((format!("{name} {kernel} ({how})"), smem, ours));
            }
        }
        rows
    });
    let rows: Vec<_> = results.into_iter().flatten().collect();
    let wrong: Vec<String> = rows
        .iter()
        .filter(|(_, theirs, ours)| Some(*theirs) != *ours)
        .map(|(k, theirs, ours)| format!("{k}: ptxas -v {theirs}, link map {ours:?}"))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let alone = |k: &str| {
        rows.iter()
            .find(|r| r.0 == format!("{k} (alone)"))
            .map(|r| r.1)
    };
    let probed: Vec<_> = rows
        .iter()
        .filter_map(|r| Some((r.0.strip_suffix(" (probe)")?, r.1)))
        .filter(|(k, _)| !k.ends_with(" probe_kernel"))
        .collect();
    let nonzero = probed.iter().filter(|(_, smem)| *smem > 0).count();
    let rounded = probed
        .iter()
        .filter(|(k, smem)| alone(k) != Some(*smem))
        .count();
    // 104 kernels in the 25 files ptxas accepts; 13 declare static shared
    // memory, which the probe's alignment rounds up for 11 of them (two
    // already hold a multiple of 1024: 2048 bytes).
    assert_eq!(
        (probed.len(), nonzero, rounded),
        (104, 13, 11),
        "{probed:?}"
    );
}

/// How ptxas assembles a corpus file on its own: the `-arch` for its `.target`, whether
/// it needs `-c` (it declares `.extern` symbols), and a file-name tag for scratch files.
fn ptxas_setup(name: &str, text: &str) -> (String, bool, String) {
    let m = ptx_linker::parse::parse(ptx_linker::diagnostic::FileId(0), text);
    let arch = common::ptxas_arch(m.target.as_ref().map_or("sm_75", |t| t.arch));
    let has_extern = m
        .items
        .iter()
        .any(|i| i.linkage() == Some(ptx_linker::ast::Linkage::Extern));
    (arch, has_extern, name.replace('.', "_"))
}
