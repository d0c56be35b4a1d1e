//! PTX linker: parse, merge and validate PTX modules.
//!
//! [`link`] (or [`link_to`], which writes the output as it is emitted)
//! reads top to bottom as a pipeline; each phase has its own module
//! and borrows the previous phases' output:
//!
//! | phase | module | does |
//! |---|---|---|
//! | load (binary, callers) | [`load`] | `.ptx`, `ar` archives, ELF `.nv_fatbin`, fatbins → [`LinkInput`]s |
//! | lex | [`lex`] | text → tokens, on demand (never fails) |
//! | parse | [`parse`], [`body`], [`ast`] | tokens → [`ast::Module`] + errors (never fails); bodies are scanned from the bytes, without tokens |
//! | select + symbols | [`symbols`] | pull in needed libraries; one [`symbols::SymbolId`] per symbol; names in bodies that mean nothing |
//! | resolve | [`resolve`], [`agree`] | choose definitions (nvlink's winner; definitions must agree as nvlink requires), check prototypes, rename colliding locals |
//! | liveness | [`gc`] | what survives (`gc`, libraries), unresolved references |
//! | headers | [`merge`] | `.version`/`.target`/`.address_size`, `.file` tables, debug sections |
//! | validate | [`validate`] | per-kernel static shared memory and parameter space |
//! | state spaces | [`module_vars`] | `device_std::constant!` variables moved to `.const` (64 KiB per module); statics of the static shared form (`SharedArray::UNINIT`) made `.shared` |
//! | emit | [`emit`] | the merged module's text (whole, or to a writer piece by piece) |
//! | map | [`map`] | the [`LinkMap`] |
//!
//! Outside the pipeline, [`init`] evaluates initializers for
//! [`global_initializer`], and [`entry_signatures`] reads kernel parameter lists.
//!
//! **Every item and every error carries a span** (file id + byte range); only
//! [`diagnostic`] turns spans into `file:line:col`. **Nothing panics on bad
//! input**: errors are collected and returned together as a [`LinkError`].
//! **ptx-linker never touches CUDA.**
//!
//! **What the host and the device runtime rely on.** With `gc`, the roots are
//! every `.entry`, every `keep` symbol, and every `.visible`, `.weak` or
//! `.common` module-scope variable defined in an [`InputKind::Object`] input:
//! the host can read any of them through `cuModuleGetGlobal`, and the device
//! runtime's ABI records (`.visible .global .align 4 .b8 __kernel_abi_<K>[N] =
//! {...}`) are referenced by no code (a library's variables are not roots).
//! [`global_initializer`] returns such a variable's bytes as loaded
//! (little-endian, zero-padded to its declared size), and [`KernelInfo`]
//! names a kernel's record in `abi_record`. Dynamic shared memory is a
//! module-scope `.extern .shared .align A .b8 NAME[]`: identical declarations
//! from several inputs merge into one at the largest `.align` (a different
//! element type or shape is an error naming both), and
//! `KernelInfo::dynamic_shared_align` is the largest alignment of the arrays
//! a kernel reaches through its calls. ptxas rejects `.extern` inside a
//! function body, and so does the linker.
//!
//! **Parameterized names.** A module-scope `.global .u32 a<4>;` declares
//! `a0` .. `a3` (PTX ISA 9.0, section 5.4.6), each an ordinary symbol: it
//! resolves against `.extern .global .u32 a2;` elsewhere, is renamed and kept
//! or dropped by `gc` on its own, and is emitted as its own declaration
//! (`.global .u32 a2;`). At most [`parse::MAX_GENERATED_NAMES`] per module.
//!
//! **Names in function bodies.** A name a body declares (`.reg`, `.shared`,
//! `.param`, a label, the names `x<4>` generates) is visible from its
//! declaration to the end of the `{ }` block that holds it, as ptxas reads
//! it; any other use of a module symbol's name in the body means that
//! symbol and is renamed with it (see [`body`]). A function-scope
//! `.shared .T s<N>` counts toward static shared memory as ptxas allocates
//! it: one element, plus one for each distinct `sI` the body uses.
//!
//! References: PTX ISA 9.0, sections 5.1 "State Spaces", 5.4.6
//! "Parameterized Variable Names", 11 "Directives",
//! 11.6 "Linking Directives", 11.7 "Debugging Directives".
#![deny(missing_docs)]
#![deny(missing_debug_implementations)]

pub mod agree;
pub mod ast;
pub mod body;
pub mod diagnostic;
pub mod emit;
pub mod entry_directives;
pub mod fatbin_map;
pub mod gc;
pub mod init;
pub mod input;
pub mod labels;
pub mod lex;
pub mod load;
pub mod map;
pub mod merge;
pub mod module_vars;
pub mod parse;
mod prefetch;
pub mod ptxas;
pub mod resolve;
mod scan16;
mod scan32;
pub mod signature;
pub mod symbols;
pub mod validate;

pub use diagnostic::{Diagnostic, LinkError, LinkToError, Severity, Span};
pub use input::{InputKind, LinkInput, LinkOptions, LinkOutput, LinkReport, SourceFile};
pub use load::{load_input, LoadError};
pub use map::{DeclaredDynamicShared, KernelInfo, LinkMap, SymbolInfo, DYNAMIC_SHARED_PREFIX};
pub use signature::{EntrySignature, Param, ParamKind};

use ast::{FnKind, ItemKind, Module};
use diagnostic::{FileId, Sources};

/// Links `inputs` into one module, returned as a string.
///
/// Errors: every problem found, as one [`LinkError`]: parse errors, target or
/// address-size mismatches, duplicate symbols, prototype mismatches,
/// unresolved references, kernels over the shared-memory or parameter limits.
pub fn link(inputs: &[LinkInput], options: &LinkOptions) -> Result<LinkOutput, LinkError> {
    let mut ptx = String::new();
    let report = link_with(inputs, options, |e| {
        let emitted = emit::emit(e);
        ptx = emitted.ptx;
        Ok::<_, std::convert::Infallible>(emitted.symbols)
    })?;
    let Ok(LinkReport {
        map,
        warnings,
        external,
    }) = report;
    Ok(LinkOutput {
        ptx,
        map,
        warnings,
        external,
    })
}

/// Links `inputs` into one module and writes it to `out` as it is emitted,
/// in pieces of about 1 MiB ([`emit::CHUNK`]), instead of holding it whole:
/// the peak memory is the inputs and the syntax trees, not the output too.
/// The same bytes as [`link`]'s [`LinkOutput::ptx`].
///
/// **Nothing is written unless the link succeeds**: every check runs before
/// the first byte is emitted, so a [`LinkToError::Link`] leaves `out`
/// untouched. After a [`LinkToError::Write`], `out` holds part of the
/// module: a caller writing a file should write a temporary one and rename
/// it only on success (as the `ptx-linker` binary does).
pub fn link_to(
    inputs: &[LinkInput],
    options: &LinkOptions,
    out: &mut impl std::io::Write,
) -> Result<LinkReport, LinkToError> {
    let report = link_with(inputs, options, |e| emit::emit_to(e, out))?;
    Ok(report?)
}

/// The link pipeline, with emission left to `emit`: link errors come back in
/// the outer result, `emit`'s in the inner one.
fn link_with<E>(
    inputs: &[LinkInput],
    options: &LinkOptions,
    emit: impl FnOnce(emit::EmitInput<'_, '_>) -> Result<Vec<(symbols::SymbolId, symbols::ItemRef)>, E>,
) -> Result<Result<LinkReport, E>, LinkError> {
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
    let mut scratch = Vec::new();
    let modules: Vec<Module<'_>> = files
        .iter()
        .enumerate()
        .map(|(i, (_, text))| parse::parse_reusing(FileId(i as u32), text, &mut scratch))
        .collect();
    drop(scratch);
    let mut diags: Vec<Diagnostic> = modules.iter().flat_map(|m| m.errors.clone()).collect();
    if diags.iter().any(Diagnostic::is_error) {
        return fail(diags);
    }

    let included = symbols::select_inputs(&modules, &kinds);
    let table = symbols::build(&modules, included);
    symbols::check_body_names(&modules, &table, &mut diags);
    let res = resolve::resolve(&modules, &table, options, &mut diags);
    let live = gc::liveness(&modules, &kinds, &table, &res, options, &mut diags);
    let in_link: Vec<&Module<'_>> = modules
        .iter()
        .filter(|m| table.included[m.file.0 as usize])
        .collect();
    let mut header = merge::unify_headers(&in_link, options, &mut diags);
    merge::check_version_raise(&in_link, &header, &mut diags);
    let file_table = merge::merge_files(&modules, &table.included);
    let keep_sections =
        merge::keep_sections(&modules, &table.included, &|r| live.is_live(r), &mut diags);
    if !keep_sections {
        header.drop_debug_option();
    }
    let shared_statics = module_vars::shared_statics(&modules, &table, &live, &mut diags);
    let kernels = validate::check_kernels(
        &modules,
        &table,
        &res,
        &live,
        &header,
        &shared_statics,
        &mut diags,
    );
    let directives =
        entry_directives::entry_directives(&modules, &table, &live, &header, &mut diags);
    let const_vars = module_vars::const_vars(&modules, &table, &live, &mut diags);
    let labels = labels::hidden_labels(&modules, &table, &res, &live);
    if diags.iter().any(Diagnostic::is_error) {
        return fail(diags);
    }

    let emitted = emit(emit::EmitInput {
        modules: &modules,
        paths: &paths,
        table: &table,
        res: &res,
        live: &live,
        header: &header,
        files: &file_table,
        keep_sections,
        directives: &directives,
        labels: &labels,
        const_vars: &const_vars,
        shared_statics: &shared_statics,
    });
    let emitted = match emitted {
        Ok(symbols) => symbols,
        Err(e) => return Ok(Err(e)),
    };
    let map = map::build(
        &modules,
        &paths,
        &table,
        &res,
        &header,
        map::Output {
            kernels: &kernels,
            emitted: &emitted,
            const_vars: &const_vars,
            shared_statics: &shared_statics,
            directives: &directives,
        },
    );
    let warnings = diags
        .iter()
        .map(|d| diagnostic::render_short(sources, std::slice::from_ref(d)))
        .collect();
    let mut external: Vec<String> = live
        .external_refs
        .iter()
        .filter(|&&id| res.dynamic_shared_align(id).is_none())
        .map(|&id| res.out_name(id).to_string())
        .collect();
    external.sort();
    Ok(Ok(LinkReport {
        map,
        warnings,
        external,
    }))
}

/// Reads the `.entry` signatures of one PTX module, in source order
/// (PTX ISA 9.0, section 5.1.6.1 "Kernel Function Parameters").
///
/// Errors: the module does not parse, or a parameter has a type whose size
/// is unknown.
pub fn entry_signatures(path: &str, text: &str) -> Result<Vec<EntrySignature>, LinkError> {
    entry_signatures_parsed(path, text, &parse::parse(FileId(0), text))
}

/// [`entry_signatures`] of `module`, `text` parsed already
/// (`parse::parse(FileId(0), text)`). The same result and errors.
pub fn entry_signatures_parsed(
    path: &str,
    text: &str,
    module: &ast::Module<'_>,
) -> Result<Vec<EntrySignature>, LinkError> {
    let files = [(path, text)];
    let sources = Sources { files: &files };
    let mut diags = module.errors.clone();
    let mut out = Vec::new();
    // Entries come in source order: count lines from the previous one, not from the
    // start (a module of many kernels would rescan its text once per kernel).
    let (mut at, mut line) = (0usize, 1u32);
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
        let start = (item.span.start as usize).min(text.len());
        if start >= at {
            line += diagnostic::line_of(&text[at..start], start - at) - 1;
        } else {
            line = diagnostic::line_of(text, start);
        }
        at = start;
        out.push(EntrySignature {
            name: f.name.text.to_string(),
            line,
            params,
        });
    }
    if diags.iter().any(Diagnostic::is_error) {
        return Err(LinkError::new(sources, diags));
    }
    Ok(out)
}

/// The bytes module-scope variable `name` of one PTX module holds when the
/// module is loaded: its initializer, little-endian, each element as wide as
/// its type (`.b8`/`.u8` one byte, `.u32`/`.f32` four, `.b64`/`.f64` eight;
/// a `.v4 .f32` element is four `.f32`s), zero-padded to the declared size in
/// bytes (LLVM drops trailing zero bytes: `.b8 X[16] = {16, 0, 0, 0, 8}` gives
/// sixteen bytes). A variable without initializer gives its size in zeros.
/// This is how the host reads the device runtime's ABI records
/// (`__kernel_abi_<kernel>`) without a GPU (PTX ISA 9.0, section 5.4.4
/// "Initializers").
///
/// Returns `Ok(None)` when the module defines no module-scope variable `name`
/// (an `.extern` declaration is not a definition). `name` may be one that a
/// parameterized declaration generates (`a2` of `.global .u32 a<4>;`, PTX
/// ISA 9.0, section 5.4.6): all zeros, as it has no initializer.
///
/// Errors (naming `path`, line and column): the module does not parse; the
/// initializer holds a symbol's address (`generic(sym)`), which is known only
/// after loading; the type has no byte layout (`.texref`, `.pred`); the
/// initializer is malformed or longer than the variable.
pub fn global_initializer(
    path: &str,
    text: &str,
    name: &str,
) -> Result<Option<Vec<u8>>, LinkError> {
    global_initializer_parsed(path, text, &parse::parse(FileId(0), text), name)
}

/// [`global_initializer`] in `module`, `text` parsed already
/// (`parse::parse(FileId(0), text)`): a caller that reads many variables of one module
/// parses it once. The same result and errors.
pub fn global_initializer_parsed(
    path: &str,
    text: &str,
    module: &ast::Module<'_>,
    name: &str,
) -> Result<Option<Vec<u8>>, LinkError> {
    let files = [(path, text)];
    let sources = Sources { files: &files };
    if module.errors.iter().any(Diagnostic::is_error) {
        return Err(LinkError::new(sources, module.errors.clone()));
    }
    let var = module.items.iter().find_map(|item| match &item.kind {
        ItemKind::Variable(v) if v.symbol() == name && item.is_definition() => Some(v),
        _ => None,
    });
    match var {
        None => Ok(None),
        Some(v) => init::initializer_bytes(FileId(0), text, v)
            .map(Some)
            .map_err(|d| LinkError::new(sources, vec![d])),
    }
}
