//! Emission: the merged module as text.
//!
//! Order, so that everything is declared before use: header; merged `.file`
//! table; prototypes of every function (and the declarations of symbols left
//! external); module-scope variables, each after the variables its
//! initializer names; function definitions in input order; `.alias`es;
//! debug sections. Items are copied verbatim from their input, with renamed
//! symbols, labels that a symbol would hide ([`crate::labels`]) and `.loc`
//! file indices rewritten; each live variable of a
//! parameterized declaration `a<4>` gets a declaration of its own
//! (`.global .u32 a2;`). Same inputs give the same bytes.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::fmt::Write;
use std::ops::{Deref, DerefMut};

use crate::ast::{FnKind, ItemKind, Linkage, Module, Variable};
use crate::entry_directives::{fold_launch_dims, EntryDirectives};
use crate::gc::Liveness;
use crate::labels::LabelRenames;
use crate::merge::{FileTable, Header};
use crate::prefetch::prefetch;
use crate::resolve::Resolution;
use crate::symbols::{ItemRef, SymbolId, SymbolTable};

/// Everything emission reads.
#[derive(Debug, Clone, Copy)]
pub struct EmitInput<'a, 'src> {
    /// Parsed inputs.
    pub modules: &'a [Module<'src>],
    /// Display paths, by module.
    pub paths: &'a [&'a str],
    /// Symbols.
    pub table: &'a SymbolTable<'src>,
    /// Chosen definitions and output names.
    pub res: &'a Resolution<'src>,
    /// What survives.
    pub live: &'a Liveness,
    /// Output header.
    pub header: &'a Header,
    /// Merged `.file` table.
    pub files: &'a FileTable,
    /// Whether debug sections are kept.
    pub keep_sections: bool,
    /// Directives to write on kernels' `.entry`s (cluster shapes, launch bounds),
    /// from device-std statics ([`crate::entry_directives`]).
    pub directives: &'a HashMap<SymbolId, EntryDirectives>,
    /// Labels renamed so that no module-scope name hides them
    /// ([`crate::labels`]).
    pub labels: &'a LabelRenames,
    /// `.global` variables emitted in `.const` ([`crate::module_vars`]).
    pub const_vars: &'a rustc_hash::FxHashSet<SymbolId>,
    /// Statics emitted as `.shared` allocations, and the `cvta`s of their addresses
    /// ([`crate::module_vars::shared_statics`]).
    pub shared_statics: &'a crate::module_vars::SharedStatics,
}

/// The emitted text and the symbols it contains, in output order, each with
/// the item that defines (or, for external symbols, declares) it.
#[derive(Debug, Clone)]
pub struct Emitted {
    /// The module text.
    pub ptx: String,
    /// Symbols in output order.
    pub symbols: Vec<(SymbolId, ItemRef)>,
}

/// Writes the merged module into one string.
pub fn emit(e: EmitInput<'_, '_>) -> Emitted {
    // The output is about as long as the inputs: one allocation, no regrowth
    // (which would briefly hold two copies).
    let input_len: usize = e
        .modules
        .iter()
        .enumerate()
        .filter(|(i, _)| e.table.included[*i])
        .map(|(_, m)| m.text.len())
        .sum();
    let mut out = Out {
        buf: String::with_capacity(input_len + input_len / 16 + 4096),
        sink: None,
        error: None,
    };
    let symbols = emit_into(&e, &mut out);
    Emitted {
        ptx: out.buf,
        symbols,
    }
}

/// Writes the merged module to `sink` as it goes, in pieces of about
/// [`CHUNK`] bytes, holding no more than one piece (and one item) at a time.
/// Returns the symbols in output order, or the first write error (after
/// which nothing more is written).
pub fn emit_to(
    e: EmitInput<'_, '_>,
    sink: &mut dyn std::io::Write,
) -> std::io::Result<Vec<(SymbolId, ItemRef)>> {
    let mut out = Out {
        buf: String::with_capacity(CHUNK + CHUNK / 4),
        sink: Some(sink),
        error: None,
    };
    let symbols = emit_into(&e, &mut out);
    out.drain();
    match out.error {
        Some(err) => Err(err),
        None => Ok(symbols),
    }
}

/// How many bytes [`emit_to`] gathers before it writes them.
pub const CHUNK: usize = 1 << 20;

/// The output: a string, passed on to a sink whenever it holds [`CHUNK`]
/// bytes (with no sink, it holds the whole module).
struct Out<'w> {
    buf: String,
    sink: Option<&'w mut dyn std::io::Write>,
    /// The first write error; nothing is written after it.
    error: Option<std::io::Error>,
}

impl Out<'_> {
    /// Called between items: writes what has gathered once it is a chunk.
    fn spill(&mut self) {
        if self.sink.is_some() && self.buf.len() >= CHUNK {
            self.drain();
        }
    }

    /// Writes everything gathered to the sink, if there is one.
    fn drain(&mut self) {
        if let Some(sink) = self.sink.as_mut() {
            if self.error.is_none() {
                if let Err(err) = sink.write_all(self.buf.as_bytes()) {
                    self.error = Some(err);
                }
            }
            self.buf.clear();
        }
    }
}

impl Deref for Out<'_> {
    type Target = String;
    fn deref(&self) -> &String {
        &self.buf
    }
}

impl DerefMut for Out<'_> {
    fn deref_mut(&mut self) -> &mut String {
        &mut self.buf
    }
}

/// [`emit`] and [`emit_to`]: the module into `out`; the symbols in output order.
fn emit_into(e: &EmitInput<'_, '_>, out: &mut Out<'_>) -> Vec<(SymbolId, ItemRef)> {
    let e = *e;
    let mut symbols = Vec::new();
    let h = e.header;
    out.push_str("//\n// Generated by ptx-linker from:");
    for (i, p) in e.paths.iter().enumerate() {
        if e.table.included[i] {
            let _ = write!(out, " {p}");
        }
    }
    out.push_str("\n//\n\n");
    let _ = writeln!(out, ".version {}", h.version);
    let _ = write!(out, ".target {}", h.arch);
    for o in &h.options {
        let _ = write!(out, ", {o}");
    }
    out.push('\n');
    if let Some(a) = h.address_size {
        let _ = writeln!(out, ".address_size {a}");
    }
    out.push('\n');
    for (i, rest) in e.files.entries.iter().enumerate() {
        let _ = writeln!(out, "\t.file\t{} {rest}", i + 1);
    }

    let live_defs: Vec<ItemRef> = {
        let mut v: Vec<ItemRef> = e.live.live.iter().collect();
        v.sort();
        v
    };
    let kind_of = |r: ItemRef| &e.modules[r.module].items[r.item].kind;
    let sym_of = |r: ItemRef| e.table.item_symbol(r);

    // Prototypes first: external functions, then every defined function.
    out.push('\n');
    let mut externals: Vec<(SymbolId, ItemRef)> = e
        .live
        .external_refs
        .iter()
        .filter_map(|&id| e.table.decls(id).first().map(|&d| (id, d)))
        .collect();
    externals.sort_by_key(|(_, d)| *d);
    for &(id, d) in &externals {
        if matches!(kind_of(d), ItemKind::Function(_)) {
            push_decl(out, &e, d, e.modules[d.module].items[d.item].span.end);
            symbols.push((id, d));
        }
    }
    for (k, &r) in live_defs.iter().enumerate() {
        prefetch_item(&e, live_defs.get(k + AHEAD));
        match kind_of(r) {
            ItemKind::Function(f) if f.kind == FnKind::Func => {
                write_item(out, &e, r, f.proto_end);
                if f.noreturn {
                    out.push_str(" .noreturn");
                }
                out.push_str(";\n");
            }
            ItemKind::Alias { .. } => {
                if let Some(&d) = sym_of(r).and_then(|id| e.table.decls(id).first()) {
                    push_decl(out, &e, d, e.modules[d.module].items[d.item].span.end);
                }
            }
            _ => {}
        }
    }

    // Module-scope statements kept verbatim, then variables.
    out.push('\n');
    for (mi, m) in e.modules.iter().enumerate() {
        if !e.table.included[mi] {
            continue;
        }
        for (ii, item) in m.items.iter().enumerate() {
            if matches!(item.kind, ItemKind::Other) {
                let r = ItemRef {
                    module: mi,
                    item: ii,
                };
                write_item(out, &e, r, item.span.end);
                out.push('\n');
                out.spill();
            }
        }
    }
    for &(id, d) in &externals {
        if let ItemKind::Variable(v) = kind_of(d) {
            match e.res.dynamic_shared_align(id) {
                // The one merged declaration, at the largest alignment asked for.
                Some(align) => out.push_str(&extern_decl(e.res.out_name(id), v, Some(align))),
                None => write_var(out, &e, d, v),
            }
            out.push('\n');
            out.spill();
            symbols.push((id, d));
        }
    }
    let vars: Vec<ItemRef> = live_defs
        .iter()
        .copied()
        .filter(|&r| matches!(kind_of(r), ItemKind::Variable(_)))
        .collect();
    let (order, forward) = topo_order(&e, &vars);
    for &r in &forward {
        if let (ItemKind::Variable(v), Some(id)) = (kind_of(r), sym_of(r)) {
            let decl = extern_decl(e.res.out_name(id), v, v.align);
            let decl = if e.const_vars.contains(&id) {
                decl.replacen(".global", ".const", 1)
            } else {
                decl
            };
            out.push_str(&decl);
            out.push('\n');
        }
    }
    for r in order {
        if let ItemKind::Variable(v) = kind_of(r) {
            write_var(out, &e, r, v);
        }
        out.push('\n');
        out.spill();
        if let Some(id) = sym_of(r) {
            symbols.push((id, r));
        }
    }

    // Function definitions, then aliases.
    for (k, &r) in live_defs.iter().enumerate() {
        prefetch_item(&e, live_defs.get(k + AHEAD));
        if let ItemKind::Function(f) = kind_of(r) {
            out.push('\n');
            let end = e.modules[r.module].items[r.item].span.end;
            match sym_of(r).and_then(|id| e.directives.get(&id)) {
                Some(d) if f.kind == FnKind::Entry => {
                    let start = e.modules[r.module].items[r.item].span.start;
                    write_patched(out, &e, r, start, f.proto_end);
                    d.write_to(out);
                    match d.dims {
                        Some(dims) => {
                            let mut body = String::new();
                            write_patched(&mut body, &e, r, f.proto_end, end);
                            fold_launch_dims(&body, dims, out);
                        }
                        None => write_patched(out, &e, r, f.proto_end, end),
                    }
                }
                _ => write_item(out, &e, r, end),
            }
            out.push('\n');
            out.spill();
            if let Some(id) = sym_of(r) {
                symbols.push((id, r));
            }
        }
    }
    for &r in &live_defs {
        if matches!(kind_of(r), ItemKind::Alias { .. }) {
            write_item(out, &e, r, e.modules[r.module].items[r.item].span.end);
            out.push('\n');
            out.spill();
            if let Some(id) = sym_of(r) {
                symbols.push((id, r));
            }
        }
    }
    if e.keep_sections {
        for (mi, m) in e.modules.iter().enumerate() {
            if !e.table.included[mi] {
                continue;
            }
            for (ii, item) in m.items.iter().enumerate() {
                if matches!(item.kind, ItemKind::Section) {
                    out.push('\n');
                    write_item(
                        out,
                        &e,
                        ItemRef {
                            module: mi,
                            item: ii,
                        },
                        item.span.end,
                    );
                    out.push('\n');
                    out.spill();
                }
            }
        }
    }
    symbols
}

/// How many items ahead of the one being written [`prefetch_item`] reaches.
const AHEAD: usize = 2;

/// Prefetches what writing item `r` reads first: the start of its text and
/// its references (both left cold since parsing).
fn prefetch_item(e: &EmitInput<'_, '_>, r: Option<&ItemRef>) {
    if let Some(r) = r {
        let m = &e.modules[r.module];
        let item = &m.items[r.item];
        prefetch(
            m.text
                .as_bytes()
                .as_ptr()
                .wrapping_add(item.span.start as usize),
        );
        prefetch(m.item_refs(item).as_ptr());
    }
}

/// One variable declarator with the declaration's shared prefix:
/// `.global .u32 a, b = 1;` gives `.global .u32 b = 1;` for `b`, and
/// `.global .u32 a<4>;` gives `.global .u32 a2;` for `a2`.
fn write_var(out: &mut String, e: &EmitInput<'_, '_>, r: ItemRef, v: &Variable<'_>) {
    let item = &e.modules[r.module].items[r.item];
    let id = e.table.item_symbol(r);
    if let Some(s) = id.and_then(|id| e.shared_statics.vars.get(&id)) {
        // The static shared form: the CTA's allocation, uninitialised, file-local.
        let name = id.map_or(v.symbol(), |id| e.res.out_name(id));
        let _ = write!(out, ".shared .align {} .b8 {name}[{}];", s.align, s.bytes);
        return;
    }
    if id.is_some_and(|id| e.const_vars.contains(&id)) {
        // `device_std::constant!`: the same declaration in `.const`.
        let mut prefix = String::new();
        write_patched(&mut prefix, e, r, item.span.start, v.prefix_end);
        out.push_str(&prefix.replacen(".global", ".const", 1));
    } else {
        write_patched(out, e, r, item.span.start, v.prefix_end);
    }
    out.push(' ');
    match &v.generated {
        Some(g) => {
            let id = e.table.item_symbol(r);
            out.push_str(id.map_or(&*g.name, |id| e.res.out_name(id)));
        }
        None => write_patched(out, e, r, v.declarator.start, v.declarator.end),
    }
    out.push(';');
}

/// A declaration item, verbatim, ending in `;` (legacy PTX omits it).
fn push_decl(out: &mut String, e: &EmitInput<'_, '_>, d: ItemRef, end: u32) {
    let text = item_text(e, d, end);
    out.push_str(&text);
    if !text.trim_end().ends_with(';') {
        out.push(';');
    }
    out.push('\n');
}

/// Variables ordered so each comes after those its initializer names, and
/// the variables that must be declared (`.extern`) before all of them
/// because initializers refer to each other in a cycle (`a = generic(b)`,
/// `b = generic(a)`). Only a variable with linkage can be declared ahead; a
/// cycle of file-local variables (which ptxas rejects in any order) is left
/// in input order.
fn topo_order(e: &EmitInput<'_, '_>, vars: &[ItemRef]) -> (Vec<ItemRef>, Vec<ItemRef>) {
    let mut forward: HashSet<ItemRef> = HashSet::default();
    loop {
        let (order, cycles) = dfs_order(e, vars, &forward);
        let mut marked = false;
        for cycle in cycles {
            let pick = cycle.iter().copied().find(|&r| {
                let item = &e.modules[r.module].items[r.item];
                matches!(
                    item.linkage(),
                    Some(Linkage::Visible | Linkage::Weak | Linkage::Common)
                )
            });
            if let Some(p) = pick {
                marked |= forward.insert(p);
            }
        }
        if !marked {
            let mut fwd: Vec<ItemRef> = forward.into_iter().collect();
            fwd.sort();
            return (order, fwd);
        }
    }
}

/// Live variables an initializer of `r` names.
fn var_deps(e: &EmitInput<'_, '_>, r: ItemRef) -> Vec<ItemRef> {
    let item = &e.modules[r.module].items[r.item];
    e.table
        .ref_symbols(r.module, item)
        .filter_map(|id| id.and_then(|id| e.res.chosen(id)))
        .filter(|&def| {
            matches!(
                e.modules[def.module].items[def.item].kind,
                ItemKind::Variable(_)
            ) && e.live.is_live(def)
        })
        .collect()
}

/// Depth-first post-order over initializer references (iterative: chains
/// can be long), ignoring references to `forward` variables; also returns
/// the cycles closed by back edges.
fn dfs_order(
    e: &EmitInput<'_, '_>,
    vars: &[ItemRef],
    forward: &HashSet<ItemRef>,
) -> (Vec<ItemRef>, Vec<Vec<ItemRef>>) {
    let mut done: HashSet<ItemRef> = HashSet::default();
    let mut on_path: HashMap<ItemRef, usize> = HashMap::default();
    let mut order = Vec::with_capacity(vars.len());
    let mut cycles = Vec::new();
    for &root in vars {
        if done.contains(&root) {
            continue;
        }
        // (node, its dependencies, next dependency to visit)
        let mut stack: Vec<(ItemRef, Vec<ItemRef>, usize)> = vec![(root, var_deps(e, root), 0)];
        let mut path = vec![root];
        on_path.insert(root, 0);
        while let Some((node, deps, next)) = stack.last_mut() {
            if let Some(&d) = deps.get(*next) {
                *next += 1;
                if forward.contains(&d) || done.contains(&d) {
                    continue;
                }
                if let Some(&at) = on_path.get(&d) {
                    cycles.push(path[at..].to_vec());
                    continue;
                }
                on_path.insert(d, path.len());
                path.push(d);
                let deps = var_deps(e, d);
                stack.push((d, deps, 0));
            } else {
                let node = *node;
                stack.pop();
                path.pop();
                on_path.remove(&node);
                done.insert(node);
                order.push(node);
            }
        }
    }
    (order, cycles)
}

/// `.extern .SPACE [.align A] [.vN] .TYPE name[dims];`: a declaration of a
/// variable defined elsewhere in the output (or, for dynamic shared memory,
/// nowhere).
fn extern_decl(name: &str, v: &Variable<'_>, align: Option<u32>) -> String {
    let mut out = format!(".extern .{} ", v.space.as_str());
    if let Some(a) = align {
        let _ = write!(out, ".align {a} ");
    }
    if v.vector > 1 {
        let _ = write!(out, ".v{} ", v.vector);
    }
    let _ = write!(out, ".{} {name}", v.ty);
    for d in &v.dims {
        match d {
            Some(n) => {
                let _ = write!(out, "[{n}]");
            }
            None => out.push_str("[]"),
        }
    }
    out.push(';');
    out
}

/// The item's text from its start up to `end`, with renamed symbols and
/// renumbered `.loc` file indices substituted.
fn item_text(e: &EmitInput<'_, '_>, r: ItemRef, end: u32) -> String {
    let mut out = String::new();
    write_item(&mut out, e, r, end);
    out
}

/// [`item_text`], appended to `out`.
fn write_item(out: &mut String, e: &EmitInput<'_, '_>, r: ItemRef, end: u32) {
    let item = &e.modules[r.module].items[r.item];
    if let ItemKind::Function(f) = &item.kind {
        if f.linkage_inherited {
            // `.visible ` or `.weak `.
            out.push('.');
            out.push_str(f.linkage.as_str());
            out.push(' ');
        }
    }
    write_patched(out, e, r, item.span.start, end);
}

/// What replaces a patched byte range.
enum Rep<'a> {
    Text(&'a str),
    Number(u32),
}

/// Appends the source text `start..end` of item `r` to `out`, patched like
/// [`item_text`].
fn write_patched(out: &mut String, e: &EmitInput<'_, '_>, r: ItemRef, start: u32, end: u32) {
    let m = &e.modules[r.module];
    let item = &m.items[r.item];
    let mut patches: Vec<(u32, u32, Rep<'_>)> = Vec::new();
    // A generated name is written by `write_var`, not patched in.
    let own = item
        .symbol_name()
        .filter(|_| !matches!(&item.kind, ItemKind::Variable(v) if v.generated.is_some()))
        .map(|n| (n, e.table.item_symbol(r)));
    let refs = m
        .item_refs(item)
        .iter()
        .copied()
        .zip(e.table.ref_symbols(r.module, item));
    for (n, id) in own.into_iter().chain(refs) {
        if n.span.start < start || n.span.end > end {
            continue;
        }
        if let Some(id) = id {
            let name = e.res.out_name(id);
            // Not renamed: the reference spells the symbol's name, or a
            // longer alias (`a02` for `a2`), so the lengths tell.
            if e.res.is_renamed(id) || name.len() != n.text.len() {
                patches.push((n.span.start, n.span.end, Rep::Text(name)));
            }
        }
    }
    for (span, name) in e.labels.of(r) {
        patches.push((span.start, span.end, Rep::Text(name)));
    }
    for &(s, t) in e.shared_statics.patches.get(&r).into_iter().flatten() {
        patches.push((s, t, Rep::Text("shared")));
    }
    for loc in &item.locs {
        for (span, idx) in loc.file_index.iter().flatten() {
            if let Some(&new) = e.files.remap[r.module].get(idx) {
                if new != *idx {
                    patches.push((span.start, span.end, Rep::Number(new)));
                }
            }
        }
        if !e.keep_sections {
            if let Some(x) = loc.extra {
                patches.push((x.start, x.end, Rep::Text("")));
            }
        }
    }
    patches.retain(|p| p.0 >= start && p.1 <= end);
    patches.sort_by_key(|p| p.0);
    let text = m.text;
    let mut at = start as usize;
    for (s, t, rep) in patches {
        let (s, t) = (s as usize, t as usize);
        if s < at {
            continue; // overlapping patch: keep the first
        }
        out.push_str(text.get(at..s).unwrap_or(""));
        match rep {
            Rep::Text(t) => out.push_str(t),
            Rep::Number(n) => {
                let _ = write!(out, "{n}");
            }
        }
        at = t;
    }
    out.push_str(text.get(at..end as usize).unwrap_or(""));
}
