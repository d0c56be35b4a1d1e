//! State spaces rustc cannot write: stock rustc puts every `static` in `.global`.
//!
//! - Constant memory: `device_std::constant!` writes a record `__const_abi_NAME`
//!   beside its variable `NAME`, and the linker emits that variable in `.const`
//!   instead (PTX ISA 9.0 §5.1.3 "Constant State Space"), [`const_vars`].
//! - The static shared form: a `static` initialized with device-std's
//!   `SharedArray::UNINIT` becomes a `.shared` allocation ([`shared_statics`]).
//!
//! Checked for constants, each an error naming the variable:
//! - the record names a `.global` variable defined in the link;
//! - function bodies use the variable only through its address (`mov`), as
//!   device-std's `ld.const` accessors do; any other instruction would read or
//!   write it as global memory, which it no longer is;
//! - the module's `.const` variables fit CUDA's 64 KiB of constant memory per
//!   module.
//!
//! The record's words (type, size, class) are for the host, which reads them
//! through `cuModuleGetGlobal`; the linker keeps them as it keeps every
//! `.visible` variable.

use rustc_hash::FxHashSet as HashSet;

use crate::ast::{ItemKind, Module, Space, Variable};
use crate::diagnostic::Diagnostic;
use crate::gc::Liveness;
use crate::symbols::{SymbolId, SymbolTable};

/// Prefix of the records `device_std::constant!` writes: `__const_abi_NAME`.
pub const CONST_RECORD_PREFIX: &str = "__const_abi_";

/// Constant memory a module may declare, in bytes (CUDA: 64 KiB).
pub const MAX_CONST_BYTES: u64 = 64 * 1024;

/// The variables of this link to emit in `.const`, by symbol.
///
/// Errors: a record whose variable is not a `.global` variable defined in the link, a
/// body that uses such a variable other than by `mov`ing its address, `.const`
/// variables (these and the inputs' own) above [`MAX_CONST_BYTES`] in all.
pub fn const_vars(
    modules: &[Module<'_>],
    table: &SymbolTable<'_>,
    live: &Liveness,
    diags: &mut Vec<Diagnostic>,
) -> HashSet<SymbolId> {
    let mut out = HashSet::default();
    let mut refs: Vec<_> = live.live.iter().collect();
    refs.sort();
    for &r in &refs {
        let m = &modules[r.module];
        let item = &m.items[r.item];
        let ItemKind::Variable(rec) = &item.kind else {
            continue;
        };
        let Some(name) = rec.symbol().strip_prefix(CONST_RECORD_PREFIX) else {
            continue;
        };
        if !item.is_definition() {
            continue;
        }
        let target = table.lookup(r.module, name).and_then(|id| {
            table
                .defs(id)
                .iter()
                .find_map(|d| match &modules[d.module].items[d.item].kind {
                    ItemKind::Variable(v) => Some((id, v.space)),
                    _ => None,
                })
        });
        match target {
            Some((id, Space::Global)) => {
                out.insert(id);
            }
            Some((_, space)) => diags.push(
                Diagnostic::error(
                    rec.name.span,
                    format!(
                        "`{}` marks `{name}` as constant memory, but `{name}` is a `.{}` variable, not `.global`",
                        rec.symbol(),
                        space.as_str()
                    ),
                )
                .with_help("declare the variable with `device_std::constant!` only"),
            ),
            None => diags.push(
                Diagnostic::error(
                    rec.name.span,
                    format!("`{}` marks `{name}` as constant memory, but no variable `{name}` is defined in this link", rec.symbol()),
                )
                .with_help("declare the variable with `device_std::constant!`, which writes both"),
            ),
        }
    }
    if out.is_empty() {
        return out;
    }
    check_uses(modules, table, live, &out, diags);
    check_size(modules, table, live, &out, diags);
    out
}

/// Every body reference to a variable of `consts` must be a `mov` of its address.
fn check_uses(
    modules: &[Module<'_>],
    table: &SymbolTable<'_>,
    live: &Liveness,
    consts: &HashSet<SymbolId>,
    diags: &mut Vec<Diagnostic>,
) {
    for r in live.live.iter() {
        let m = &modules[r.module];
        let item = &m.items[r.item];
        if !matches!(item.kind, ItemKind::Function(_)) {
            continue;
        }
        for (n, id) in m
            .item_refs(item)
            .iter()
            .zip(table.ref_symbols(r.module, item))
        {
            if !id.is_some_and(|id| consts.contains(&id)) {
                continue;
            }
            let (start, end) = statement_at(m.text, n.span.start as usize, n.span.end as usize);
            let stmt = instruction(&m.text[start..end]);
            if stmt.starts_with("mov.") || stmt.starts_with("ld.const") {
                continue;
            }
            diags.push(
                Diagnostic::error(
                    n.span,
                    format!(
                        "`{}` is constant memory (`device_std::constant!`), but `{}` uses it as global memory",
                        n.text,
                        stmt.split_whitespace().next().unwrap_or("")
                    ),
                )
                .with_label("here")
                .with_help("read it through the constant's `get`/`read`, which load from `.const`"),
            );
        }
    }
}

/// The instruction of a statement: without `//` comments, a leading label (`L: `)
/// and a guard (`@%p `).
fn instruction(stmt: &str) -> String {
    let code: String = stmt
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join(" ");
    let mut s = code.trim();
    if let Some((label, rest)) = s.split_once(':') {
        if !label.trim().contains(char::is_whitespace) && !label.contains('[') {
            s = rest.trim_start();
        }
    }
    if s.starts_with('@') {
        s = s
            .split_once(char::is_whitespace)
            .map_or("", |(_, rest)| rest.trim_start());
    }
    s.to_string()
}

/// The `.const` variables of the output must fit [`MAX_CONST_BYTES`].
fn check_size(
    modules: &[Module<'_>],
    table: &SymbolTable<'_>,
    live: &Liveness,
    consts: &HashSet<SymbolId>,
    diags: &mut Vec<Diagnostic>,
) {
    let mut total = 0u64;
    let mut largest: Option<(u64, &str, crate::diagnostic::Span)> = None;
    for r in live.live.iter() {
        let item = &modules[r.module].items[r.item];
        let ItemKind::Variable(v) = &item.kind else {
            continue;
        };
        let moved = table.item_symbol(r).is_some_and(|id| consts.contains(&id));
        if !item.is_definition() || !(moved || v.space == Space::Const) {
            continue;
        }
        let bytes = var_bytes(v);
        total += bytes;
        if largest.is_none_or(|(b, _, _)| bytes > b) {
            largest = Some((bytes, v.symbol(), v.name.span));
        }
    }
    if total > MAX_CONST_BYTES {
        let (bytes, name, span) = largest.expect("a constant was counted");
        diags.push(
            Diagnostic::error(
                span,
                format!(
                    "the module's constant memory is {total} bytes, more than CUDA's {MAX_CONST_BYTES}; the largest is `{name}` ({bytes} bytes)"
                ),
            )
            .with_help("keep large read-only tables in global memory (`&[T]` parameters) and constant memory for what every thread of a warp reads at once"),
        );
    }
}

/// Bytes a variable declares: element size × vector width × dimensions (0 for `[]`).
fn var_bytes(v: &Variable<'_>) -> u64 {
    let elem: u64 = match v.ty {
        "b8" | "u8" | "s8" | "pred" => 1,
        "b16" | "u16" | "s16" | "f16" | "bf16" => 2,
        "b32" | "u32" | "s32" | "f32" | "f16x2" | "bf16x2" => 4,
        "b64" | "u64" | "s64" | "f64" => 8,
        "b128" => 16,
        _ => 0,
    };
    v.dims
        .iter()
        .fold(elem * u64::from(v.vector.max(1)), |acc, d| {
            acc.saturating_mul(d.unwrap_or(0))
        })
}

/// Word 1 of the initializer of device-std's `SharedArray::UNINIT` (`"SHST"` in
/// memory order); word 0 is `bytes | log2(align) << 24`.
pub const SHARED_STATIC_TAG: u32 = u32::from_le_bytes(*b"SHST");

/// The `.shared` allocation a static of the static shared form becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharedStatic {
    /// Bytes.
    pub bytes: u32,
    /// Alignment in bytes, 4..=1024.
    pub align: u32,
}

/// The statics of the static shared form (`static mut TILE: SharedArray<f32, 256> =
/// SharedArray::UNINIT;`) and the body edits that make them `.shared` allocations.
#[derive(Debug, Default)]
pub struct SharedStatics {
    /// Each static's allocation, by symbol.
    pub vars: rustc_hash::FxHashMap<SymbolId, SharedStatic>,
    /// Byte ranges of function items that read `global` in a `cvta.global` of such a
    /// static's address, to be written `shared`.
    pub patches: rustc_hash::FxHashMap<crate::symbols::ItemRef, Vec<(u32, u32)>>,
}

/// Finds the statics of the static shared form: `.global .b8 NAME[8]` variables whose
/// initializer ends in [`SHARED_STATIC_TAG`]. Each becomes `.shared .align A .b8
/// NAME[BYTES]` (PTX ISA 9.0 §5.1.5), and each `cvta.global` of its address (device-std's
/// indexing converts the static's generic address) a `cvta.shared`.
///
/// Errors, naming the static: a malformed size or alignment, and any use of it in a body
/// other than `mov.u64 %r, NAME;` whose register only `cvta.global.u64` reads (an access
/// to the static's own bytes, e.g. from a debug build or a method other than indexing).
pub fn shared_statics(
    modules: &[Module<'_>],
    table: &SymbolTable<'_>,
    live: &Liveness,
    diags: &mut Vec<Diagnostic>,
) -> SharedStatics {
    let mut out = SharedStatics::default();
    let mut refs: Vec<_> = live.live.iter().collect();
    refs.sort();
    for &r in &refs {
        let m = &modules[r.module];
        let item = &m.items[r.item];
        let ItemKind::Variable(v) = &item.kind else {
            continue;
        };
        let eight = v.ty == "b8" && v.vector == 1 && v.dims == [Some(8)];
        if !item.is_definition() || v.space != Space::Global || !eight || v.init.is_none() {
            continue;
        }
        let Ok(bytes) = crate::init::initializer_bytes(m.file, m.text, v) else {
            continue;
        };
        let word = |i: usize| {
            u32::from_le_bytes([
                bytes[4 * i],
                bytes[4 * i + 1],
                bytes[4 * i + 2],
                bytes[4 * i + 3],
            ])
        };
        if bytes.len() != 8 || word(1) != SHARED_STATIC_TAG {
            continue;
        }
        let (size, log2) = (word(0) & 0xFF_FFFF, word(0) >> 24);
        if size == 0 || !(2..=10).contains(&log2) {
            diags.push(
                Diagnostic::error(v.name.span, format!("`{}` is a static shared array of {size} bytes aligned to 2^{log2}; expected at least one byte aligned to 4..=1024", v.symbol()))
                    .with_help("declare it as `static mut NAME: SharedArray<T, N, ALIGN> = SharedArray::UNINIT;`"),
            );
            continue;
        }
        if let Some(id) = table.item_symbol(r) {
            out.vars.insert(
                id,
                SharedStatic {
                    bytes: size,
                    align: 1 << log2,
                },
            );
        }
    }
    if out.vars.is_empty() {
        return out;
    }
    for &r in &refs {
        let m = &modules[r.module];
        let item = &m.items[r.item];
        if !matches!(item.kind, ItemKind::Function(_)) {
            continue;
        }
        let body = (item.span.start as usize, item.span.end as usize);
        for (n, id) in m
            .item_refs(item)
            .iter()
            .zip(table.ref_symbols(r.module, item))
        {
            if !id.is_some_and(|id| out.vars.contains_key(&id)) {
                continue;
            }
            let refuse = |diags: &mut Vec<Diagnostic>, span, what: &str| {
                diags.push(
                    Diagnostic::error(span, format!("`{}` is a static shared array (`SharedArray::UNINIT`), but {what}", n.text))
                        .with_label("here")
                        .with_help("index it (`NAME[i]`) in an optimized build; `read`, `write`, `ptr`, `part` and `cast` are for the handles `SharedArray::new` returns"),
                );
            };
            let (start, end) = statement_at(m.text, n.span.start as usize, n.span.end as usize);
            let stmt = instruction(&m.text[start..end]);
            let Some(reg) = address_mov(&stmt, n.text) else {
                refuse(
                    diags,
                    n.span,
                    &format!(
                        "`{}` uses its bytes",
                        stmt.split_whitespace().next().unwrap_or("")
                    ),
                );
                continue;
            };
            // Every other use of the register must be a `cvta.global` of it.
            let text = &m.text[..body.1];
            let mut at = body.0;
            while let Some(k) = text[at..].find(reg.as_str()) {
                let pos = at + k;
                at = pos + reg.len();
                let after = text[at..].chars().next().unwrap_or(' ');
                if after.is_alphanumeric() || after == '_' || (pos >= start && pos < end) {
                    continue;
                }
                let (s, e) = statement_at(m.text, pos, at);
                let use_stmt = instruction(&m.text[s..e]);
                let ok = use_stmt.starts_with("cvta.global.u64")
                    && use_stmt
                        .split(',')
                        .nth(1)
                        .is_some_and(|src| src.trim() == reg);
                let span = crate::diagnostic::Span::new(m.file, pos, at);
                if !ok {
                    refuse(
                        diags,
                        span,
                        &format!(
                            "its address `{reg}` is used by `{}`",
                            use_stmt.split_whitespace().next().unwrap_or("")
                        ),
                    );
                    continue;
                }
                let g = m.text[s..e]
                    .find("cvta.global")
                    .map(|i| s + i + "cvta.".len());
                if let Some(g) = g {
                    out.patches
                        .entry(r)
                        .or_default()
                        .push((g as u32, (g + "global".len()) as u32));
                }
            }
        }
    }
    out
}

/// The instruction around `start..end` of `text`: from after the previous `;` or line
/// break to the next `;` (one instruction per line, as LLVM and device-std's inline
/// assembly write them; a vector operand's `{…}` stays inside).
fn statement_at(text: &str, start: usize, end: usize) -> (usize, usize) {
    let s = text[..start].rfind([';', '\n']).map_or(0, |i| i + 1);
    let e = text[end..].find(';').map_or(text.len(), |i| end + i);
    (s, e)
}

/// `%r` when `stmt` is `mov.u64 %r, name` (or `.b64`).
fn address_mov(stmt: &str, name: &str) -> Option<String> {
    let rest = stmt
        .strip_prefix("mov.u64")
        .or_else(|| stmt.strip_prefix("mov.b64"))?;
    let (dst, src) = rest.split_once(',')?;
    (src.trim() == name).then(|| dst.trim().to_string())
}
