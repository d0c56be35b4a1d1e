//! PTX linker: parse, merge and validate PTX modules.
//!
//! [`link`] reads top to bottom as a pipeline; each phase has its own module
//! and borrows the previous phases' output:
//!
//! | phase | module | does |
//! |---|---|---|
//! | lex | [`lex`] | text → tokens (never fails) |
//! | parse | [`parse`], [`body`], [`ast`] | tokens → [`ast::Module`] + errors (never fails) |
//! | select + symbols | [`symbols`] | pull in needed libraries; one [`symbols::SymbolId`] per symbol |
//! | resolve | [`resolve`] | choose definitions, check prototypes, rename colliding locals |
//! | liveness | [`gc`] | what survives (`gc`, libraries), unresolved references |
//! | headers | [`merge`] | `.version`/`.target`/`.address_size`, `.file` tables, debug sections |
//! | validate | [`validate`] | per-kernel static shared memory and parameter space |
//! | emit | [`emit`] | the merged module's text |
//! | map | [`map`] | the [`LinkMap`] |
//!
//! **Every item and every error carries a span** (file id + byte range); only
//! [`diagnostic`] turns spans into `file:line:col`. **Nothing panics on bad
//! input**: errors are collected and returned together as a [`LinkError`].
//! **ptx-linker never touches CUDA.**
//!
//! References: PTX ISA 9.0, sections 5.1 "State Spaces", 11 "Directives",
//! 11.6 "Linking Directives", 11.7 "Debugging Directives".
#![deny(missing_docs)]
#![deny(missing_debug_implementations)]

pub mod ast;
pub mod body;
pub mod diagnostic;
pub mod emit;
pub mod gc;
pub mod input;
pub mod lex;
pub mod map;
pub mod merge;
pub mod parse;
pub mod resolve;
pub mod signature;
pub mod symbols;
pub mod validate;

pub use diagnostic::{Diagnostic, LinkError, Severity, Span};
pub use input::{InputKind, LinkInput, LinkOptions, LinkOutput, SourceFile};
pub use map::{KernelInfo, LinkMap, SymbolInfo};
pub use signature::{EntrySignature, Param, ParamKind};

use ast::{FnKind, ItemKind, Module};
use diagnostic::{FileId, Sources};

/// Links `inputs` into one module.
///
/// Errors: every problem found, as one [`LinkError`]: parse errors, target or
/// address-size mismatches, duplicate symbols, prototype mismatches,
/// unresolved references, kernels over the shared-memory or parameter limits.
pub fn link(inputs: &[LinkInput], options: &LinkOptions) -> Result<LinkOutput, LinkError> {
    let files: Vec<(&str, &str)> = inputs
        .iter()
        .map(|i| (i.file.path.as_str(), i.file.text.as_str()))
        .collect();
    let sources = Sources { files: &files };
    let paths: Vec<&str> = files.iter().map(|f| f.0).collect();
    let kinds: Vec<InputKind> = inputs.iter().map(|i| i.kind).collect();
    let fail = |diags: Vec<Diagnostic>| Err(LinkError::new(sources, diags));

    if inputs.is_empty() {
        return fail(vec![Diagnostic::error_nowhere("no input files")]);
    }
    let modules: Vec<Module<'_>> = files
        .iter()
        .enumerate()
        .map(|(i, (_, text))| parse::parse(FileId(i as u32), text))
        .collect();
    let mut diags: Vec<Diagnostic> = modules.iter().flat_map(|m| m.errors.clone()).collect();
    if diags.iter().any(Diagnostic::is_error) {
        return fail(diags);
    }

    let included = symbols::select_inputs(&modules, &kinds);
    let table = symbols::build(&modules, included);
    let res = resolve::resolve(&modules, &table, options, &mut diags);
    let live = gc::liveness(&modules, &kinds, &table, &res, options, &mut diags);
    let in_link: Vec<&Module<'_>> = modules
        .iter()
        .filter(|m| table.included[m.file.0 as usize])
        .collect();
    let mut header = merge::unify_headers(&in_link, options, &mut diags);
    let file_table = merge::merge_files(&modules, &table.included);
    let keep_sections =
        merge::keep_sections(&modules, &table.included, &|r| live.is_live(r), &mut diags);
    if !keep_sections {
        header.drop_debug_option();
    }
    let kernels = validate::check_kernels(&modules, &table, &res, &live, &header, &mut diags);
    if diags.iter().any(Diagnostic::is_error) {
        return fail(diags);
    }

    let emitted = emit::emit(emit::EmitInput {
        modules: &modules,
        paths: &paths,
        table: &table,
        res: &res,
        live: &live,
        header: &header,
        files: &file_table,
        keep_sections,
    });
    let map = map::build(&modules, &paths, &table, &res, &header, &kernels, &emitted);
    let warnings = diags
        .iter()
        .map(|d| diagnostic::render_short(sources, std::slice::from_ref(d)))
        .collect();
    Ok(LinkOutput {
        ptx: emitted.ptx,
        map,
        warnings,
    })
}

/// Reads the `.entry` signatures of one PTX module, in source order
/// (PTX ISA 9.0, section 5.1.6.1 "Kernel Function Parameters").
///
/// Errors: the module does not parse, or a parameter has a type whose size
/// is unknown.
pub fn entry_signatures(path: &str, text: &str) -> Result<Vec<EntrySignature>, LinkError> {
    let files = [(path, text)];
    let sources = Sources { files: &files };
    let module = parse::parse(FileId(0), text);
    let mut diags = module.errors.clone();
    let mut out = Vec::new();
    for item in &module.items {
        let ItemKind::Function(f) = &item.kind else {
            continue;
        };
        if f.kind != FnKind::Entry {
            continue;
        }
        let mut params = Vec::new();
        for p in &f.params {
            match signature::param_of(p) {
                Ok(p) => params.push(p),
                Err(d) => diags.push(d),
            }
        }
        out.push(EntrySignature {
            name: f.name.text.to_string(),
            line: diagnostic::line_of(text, item.span.start as usize),
            params,
        });
    }
    if diags.iter().any(Diagnostic::is_error) {
        return Err(LinkError::new(sources, diags));
    }
    Ok(out)
}
