//! Parser and merger: the input is split at the first `\0` into two PTX
//! modules, which are parsed and linked (with and without `gc`); the first
//! module's variables are read back with `global_initializer`. Nothing may
//! panic, and a successful link must re-parse without errors.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptx_linker::{global_initializer, link, LinkInput, LinkOptions};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (a, b) = text.split_once('\0').unwrap_or((text, ""));
    let m = ptx_linker::parse::parse(ptx_linker::diagnostic::FileId(0), a);
    let names: Vec<&str> = m
        .items
        .iter()
        .filter_map(|i| match &i.kind {
            ptx_linker::ast::ItemKind::Variable(v) => Some(v.name.text),
            _ => None,
        })
        .take(3)
        .collect();
    for n in names {
        let _ = global_initializer("a.ptx", a, n);
    }
    let _ = ptx_linker::entry_signatures("a.ptx", a);
    let inputs = [LinkInput::object("a.ptx", a), LinkInput::library("b.ptx", b)];
    for gc in [false, true] {
        let opts = LinkOptions { gc, allow_unresolved: true, ..LinkOptions::default() };
        if let Ok(out) = link(&inputs, &opts) {
            let again = ptx_linker::parse::parse(ptx_linker::diagnostic::FileId(0), &out.ptx);
            assert!(again.errors.is_empty(), "output does not re-parse: {:?}\n{}", again.errors, out.ptx);
        }
    }
});
