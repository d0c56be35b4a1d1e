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
                let m = ptx_linker::parse::parse(ptx_linker::diagnostic::FileId(0), &text);
                let arch = common::ptxas_arch(m.target.as_ref().map_or("sm_75", |t| t.arch));
                let has_extern = m
                    .items
                    .iter()
                    .any(|i| i.linkage() == Some(ptx_linker::ast::Linkage::Extern));
                let tag = name.replace('.', "_");
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
