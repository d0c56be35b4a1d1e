//! Every pair of `shared/corpus/ptx-wild` files, linked together.
//!
//! A pair that can legitimately not be linked (different address sizes,
//! texture or double-precision modes, two different arch-specific targets)
//! must fail with that precise diagnostic, naming both files. Every other
//! pair links (at the newer of the two targets), or fails only because both
//! files define the same global symbol; when both files pass ptxas alone,
//! the merged module must pass ptxas too (`-c` where externs remain).

mod common;

use std::path::Path;
use std::sync::Mutex;

use ptx_linker::diagnostic::FileId;
use ptx_linker::parse::{arch_number, parse};
use ptx_linker::{link, LinkInput, LinkOptions};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus/ptx-wild");

struct File {
    name: String,
    text: String,
    arch: String,
    address_size: u32,
    texmode_independent: bool,
    uses_textures: bool,
    uses_f64: bool,
    f64_to_f32: bool,
    version: (u32, u32),
    /// `shfl.`/`vote.` without `.sync` somewhere in the text.
    unsynced_warp_op: bool,
    /// An `.entry` without a parameter list.
    entry_without_params: bool,
    accepted: bool,
}

fn corpus(ptxas: Option<&Path>) -> Vec<File> {
    let mut paths: Vec<_> = std::fs::read_dir(CORPUS)
        .unwrap_or_else(|e| panic!("cannot read {CORPUS}: {e} (the corpus is the repository's sibling `shared/corpus/ptx-wild`)"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .collect();
    paths.sort();
    let files: Vec<File> = paths
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            let m = parse(FileId(0), &text);
            let t = m.target.as_ref().unwrap();
            File {
                name: p.file_name().unwrap().to_string_lossy().into_owned(),
                arch: t.arch.to_string(),
                // Before PTX ISA 2.3 there was no `.address_size`: either fits.
                address_size: match (m.address_size, m.version) {
                    (Some((n, _)), _) => n,
                    (None, Some((v, _))) if (v.major, v.minor) < (2, 3) => 0,
                    (None, _) => 32,
                },
                uses_textures: m.uses_textures(),
                uses_f64: m.uses_f64(),
                texmode_independent: t.options.contains(&"texmode_independent"),
                f64_to_f32: t.options.contains(&"map_f64_to_f32"),
                version: m.version.map_or((1, 0), |(v, _)| (v.major, v.minor)),
                unsynced_warp_op: ["shfl.", "vote."].iter().any(|op| {
                    text.match_indices(op)
                        .any(|(i, _)| !text[i + op.len()..].starts_with("sync"))
                }),
                entry_without_params: text.lines().any(|l| {
                    let l = l.trim();
                    l.starts_with(".entry") && !l.contains('(')
                }),
                accepted: false,
                text,
            }
        })
        .collect();
    let Some(ptxas) = ptxas else { return files };
    let accepted = common::parallel_map(&files, |f| {
        let m = parse(FileId(0), &f.text);
        let has_extern = m
            .items
            .iter()
            .any(|i| i.linkage() == Some(ptx_linker::ast::Linkage::Extern));
        let tag = format!("pair_orig_{}", f.name.replace('.', "_"));
        common::run_ptxas(
            ptxas,
            &f.text,
            &common::ptxas_arch(&f.arch),
            has_extern,
            &tag,
        )
        .is_ok()
    });
    files
        .into_iter()
        .zip(accepted)
        .map(|(f, accepted)| File { accepted, ..f })
        .collect()
}

/// The headline a pair that cannot be linked must fail with, if any.
fn expected_incompatibility(a: &File, b: &File) -> Option<&'static str> {
    let specific = |f: &File| f.arch.ends_with(['a', 'f']);
    if a.address_size != b.address_size && a.address_size != 0 && b.address_size != 0 {
        Some("address size mismatch")
    } else if a.uses_textures && b.uses_textures && a.texmode_independent != b.texmode_independent {
        Some("texture mode mismatch")
    } else if a.uses_f64 && b.uses_f64 && a.f64_to_f32 != b.f64_to_f32 {
        Some("double-precision mode mismatch")
    } else if specific(a) && specific(b) && a.arch != b.arch {
        Some("cannot retarget")
    } else {
        let newest = a.version.max(b.version);
        let sm =
            arch_number(&pair_arch(a, b).map_or(a.arch.clone(), |x| x.to_string())).unwrap_or(0);
        let old =
            |f: &File, since: (u32, u32), has: bool| has && f.version < since && newest >= since;
        let raise = |f: &File| {
            old(f, (1, 4), f.entry_without_params)
                || (sm >= 70 && old(f, (6, 4), f.unsynced_warp_op))
        };
        (raise(a) || raise(b)).then_some("version raise")
    }
}

/// The newer of the two targets, as `--arch` (arch-specific wins a tie).
fn pair_arch(a: &File, b: &File) -> Option<targets::Arch> {
    if a.arch == b.arch {
        return None;
    }
    let key = |f: &File| (arch_number(&f.arch).unwrap_or(0), f.arch.ends_with('a'));
    let newer = if key(a) >= key(b) { a } else { b };
    newer.arch.replace("compute_", "sm_").parse().ok()
}

enum Outcome {
    Linked,
    Verified,
    Incompatible,
    Duplicates,
}

fn check_pair(a: &File, b: &File, ptxas: Option<&Path>) -> Result<Outcome, String> {
    let pair = format!("{} + {}", a.name, b.name);
    let inputs = [
        LinkInput::object(&a.name, &a.text),
        LinkInput::object(&b.name, &b.text),
    ];
    let opts = LinkOptions {
        allow_unresolved: true,
        arch: pair_arch(a, b),
        ..LinkOptions::default()
    };
    let result = link(&inputs, &opts);
    if let Some(headline) = expected_incompatibility(a, b) {
        let e = match result {
            Ok(_) => return Err(format!("{pair}: linked, expected `{headline}`")),
            Err(e) => e,
        };
        let ok = if headline == "version raise" {
            e.message.contains("is valid only before PTX ISA")
                && e.message.contains("note: this input needs `.version")
        } else {
            e.message.contains(&format!("error: {headline}"))
        } && (matches!(headline, "cannot retarget" | "version raise")
            || (e.message.contains(&format!("{}:", a.name))
                && e.message.contains(&format!("{}:", b.name))));
        if std::env::var_os("PAIRS_VERBOSE").is_some() && a.accepted && b.accepted {
            eprintln!("incompatible ({headline}): {pair}");
        }
        return if ok {
            Ok(Outcome::Incompatible)
        } else {
            Err(format!(
                "{pair}: expected `{headline}` naming both files, got:\n{}",
                e.message
            ))
        };
    }
    match result {
        Ok(out) => {
            let (Some(ptxas), true) = (ptxas, a.accepted && b.accepted) else {
                return Ok(Outcome::Linked);
            };
            let tag = format!("pair_{}_{}", a.name, b.name).replace('.', "_");
            // `-O0`: validity is the question, and it halves the time.
            common::run_ptxas_with(
                ptxas,
                &out.ptx,
                &common::ptxas_arch(&out.map.target),
                !out.external.is_empty(),
                &tag,
                &["-O0"],
            )
            .map(|()| Outcome::Verified)
            .map_err(|e| format!("{pair}: ptxas rejects the merged module:\n{e}"))
        }
        Err(e) => {
            // Only two definitions of one global symbol may stop the link,
            // and then the diagnostic names both places.
            let legit = e.diagnostics.iter().filter(|d| d.is_error()).all(|d| {
                d.message.starts_with("duplicate symbol")
                    && d.secondary.len() == 1
                    && d.primary
                        .as_ref()
                        .is_some_and(|p| p.span.file != d.secondary[0].span.file)
            });
            if legit {
                Ok(Outcome::Duplicates)
            } else {
                Err(format!("{pair}: unexpected link error:\n{}", e.message))
            }
        }
    }
}

#[test]
fn every_corpus_pair_links_or_fails_precisely() {
    let ptxas = common::ptxas();
    let files = corpus(ptxas.as_deref());
    assert_eq!(files.len(), 31);
    assert_eq!(
        files.iter().filter(|f| f.accepted).count(),
        if ptxas.is_some() { 25 } else { 0 }
    );
    let mut pairs = Vec::new();
    for i in 0..files.len() {
        for j in i + 1..files.len() {
            pairs.push((i, j));
        }
    }
    let results = common::parallel_map(&pairs, |&(i, j)| {
        check_pair(&files[i], &files[j], ptxas.as_deref())
    });
    let failures = Mutex::new(Vec::new());
    let mut counts = [0usize; 4];
    for r in results {
        match r {
            Ok(o) => counts[o as usize] += 1,
            Err(e) => failures.lock().unwrap().push(e),
        }
    }
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} pair(s) failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    let [linked, verified, incompatible, duplicates] = counts;
    eprintln!(
        "{} pairs: {verified} verified by ptxas, {linked} linked (one side rejected by ptxas alone), \
         {incompatible} incompatible with a precise error, {duplicates} with duplicate global symbols",
        pairs.len()
    );
    assert_eq!(pairs.len(), 465);
    if ptxas.is_some() {
        // Every pair of the 25 files ptxas accepts alone is compatible.
        assert!(
            verified + duplicates >= 25 * 24 / 2 - incompatible,
            "{counts:?}"
        );
    }
}
