//! Symbol table: which inputs take part, and one [`SymbolId`] per symbol.
//!
//! Global symbols (`.visible`, `.weak`, `.common`, `.extern`, and every
//! `.entry`) share one namespace across modules. A definition without a
//! linkage directive is file-local: it gets a symbol of its own, visible only
//! from its module (PTX ISA 9.0, section 11.6 "Linking Directives").
//!
//! Each variable of a parameterized declaration `a<4>` (`a0` .. `a3`) that
//! its module uses is a symbol like any other (ptxas keeps no other), named
//! as its first use spells it: `a02` and `a2` are one variable (ptxas reads
//! the index without its leading zeros), `a02` if that use comes first. A
//! plain declaration of such a name means itself. A prefix that ends in a
//! digit (`a1<10>`) gives no symbol: ptxas reads `a15` as `a` and 15, so no
//! name finds those variables (the parser drops them).
//!
//! A name a function body uses that is neither declared there (see
//! [`crate::body`]) nor a symbol of its module declared before the use is an
//! error, as in ptxas ("Unknown symbol"), and so is such a name in an
//! initializer ("Invalid initial value expression"); [`check_body_names`]
//! reports them.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::ast::{FnKind, Item, ItemKind, Linkage, Module, Name};
use crate::body::name_hash;
use crate::diagnostic::Diagnostic;
use crate::input::InputKind;
use crate::labels::short_hash;
use crate::prefetch::prefetch;

/// A symbol's index in [`SymbolTable::symbols`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SymbolId(pub u32);

/// One item of one module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ItemRef {
    /// Index of the module (= input index).
    pub module: usize,
    /// Index in [`Module::items`].
    pub item: usize,
}

/// Where a symbol's name is visible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every module.
    Global,
    /// Only the module with this index.
    Local(usize),
}

/// One symbol. The items that define or declare it are
/// [`SymbolTable::defs`] and [`SymbolTable::decls`].
#[derive(Debug, Clone)]
pub struct Symbol<'src> {
    /// The name in the inputs (for a variable of `a<4>`, as its module's
    /// first use spells it: `a2`, or `a02`).
    pub name: &'src str,
    /// Global or file-local.
    pub scope: Scope,
    /// Where its definitions, then its declarations, start in the table's
    /// list of items (one list for all symbols: no allocation per symbol).
    items_at: u32,
    /// How many definitions.
    defs: u32,
    /// How many declarations.
    decls: u32,
    /// The [`crate::labels::short_hash`] of `name`, taken while the name is
    /// in the cache (the label check wants every symbol's).
    pub(crate) short: u32,
}

impl<'src> Symbol<'src> {
    fn new(name: &'src str, scope: Scope) -> Self {
        Symbol {
            name,
            scope,
            items_at: 0,
            defs: 0,
            decls: 0,
            short: short_hash(name_hash(name)),
        }
    }
}

/// All symbols of the modules that take part in the link.
#[derive(Debug, Clone)]
pub struct SymbolTable<'src> {
    /// Symbols in order of first appearance.
    pub symbols: Vec<Symbol<'src>>,
    /// Per module: the symbol each module-scope name means there, and the
    /// index of the module's first item that declares it ([`u32::MAX`]: none,
    /// another input's symbol, see [`Self::undeclared`]).
    pub scopes: Vec<HashMap<&'src str, (SymbolId, u32)>>,
    /// Per module: whether it takes part (objects always; libraries when needed).
    pub included: Vec<bool>,
    /// Per module: names it uses without declaring them that another
    /// input's global symbol has (first use each). They bind to that symbol,
    /// as in the merged module, though ptxas refuses the input on its own.
    pub undeclared: Vec<Vec<Name<'src>>>,
    /// Every global symbol by name.
    pub global: HashMap<&'src str, SymbolId>,
    /// Each symbol's definitions then declarations, in input order (see
    /// [`Symbol::items_at`]).
    items: Vec<ItemRef>,
    /// Per module: what each item's name and each reference means, found
    /// once here so that later phases index instead of hashing names again.
    targets: Vec<ModuleTargets>,
}

/// The symbols one module's items and references mean ([`NONE`]: none).
#[derive(Debug, Clone, Default)]
struct ModuleTargets {
    /// Per item: its own symbol.
    items: Vec<u32>,
    /// Per reference of the module ([`Module::refs`], same indices): the
    /// symbol and the index of the module's first item that declares it (as
    /// in [`SymbolTable::scopes`]).
    refs: Vec<(u32, u32)>,
}

/// No symbol, in [`ModuleTargets`].
const NONE: u32 = u32::MAX;

fn some_id(id: u32) -> Option<SymbolId> {
    (id != NONE).then_some(SymbolId(id))
}

impl<'src> SymbolTable<'src> {
    /// The symbol `name` means inside module `module`.
    pub fn lookup(&self, module: usize, name: &str) -> Option<SymbolId> {
        Some(self.scopes.get(module)?.get(name)?.0)
    }

    /// The symbol for an id.
    pub fn get(&self, id: SymbolId) -> &Symbol<'src> {
        &self.symbols[id.0 as usize]
    }

    /// The items that define symbol `id`, in input order.
    pub fn defs(&self, id: SymbolId) -> &[ItemRef] {
        let s = self.get(id);
        let at = s.items_at as usize;
        &self.items[at..at + s.defs as usize]
    }

    /// The items that declare symbol `id` (no body, or `.extern`), in input
    /// order.
    pub fn decls(&self, id: SymbolId) -> &[ItemRef] {
        let s = self.get(id);
        let at = (s.items_at + s.defs) as usize;
        &self.items[at..at + s.decls as usize]
    }

    /// Every symbol id, in order.
    pub fn ids(&self) -> impl Iterator<Item = SymbolId> {
        (0..self.symbols.len() as u32).map(SymbolId)
    }

    /// The symbol item `r` declares or defines (of its [`crate::ast::Item::symbol`]),
    /// as [`Self::lookup`] finds it; `None` for an item without a name, an
    /// unused variable of an `a<N>`, or an item of a module that takes no part.
    pub fn item_symbol(&self, r: ItemRef) -> Option<SymbolId> {
        some_id(*self.targets.get(r.module)?.items.get(r.item)?)
    }

    /// The symbol each reference of `item`, an item of module `module`,
    /// means ([`crate::ast::Module::item_refs`], same order), as
    /// [`Self::lookup`] finds it; empty for a module that takes no part.
    pub fn ref_symbols(
        &self,
        module: usize,
        item: &Item<'_>,
    ) -> impl Iterator<Item = Option<SymbolId>> + '_ {
        self.ref_targets(module, item)
            .iter()
            .map(|&(id, _)| some_id(id))
    }

    /// [`Self::ref_symbols`] with the index of the module's first item that
    /// declares each symbol ([`u32::MAX`] for another input's symbol).
    fn ref_targets(&self, module: usize, item: &Item<'_>) -> &[(u32, u32)] {
        self.targets
            .get(module)
            .and_then(|t| t.refs.get(item.refs.range()))
            .unwrap_or(&[])
    }
}

/// True when a definition with this linkage is file-local. Kernels are always
/// global: their names are what the host looks up.
fn is_local(kind: &ItemKind<'_>, linkage: Linkage) -> bool {
    linkage == Linkage::Local && !matches!(kind, ItemKind::Function(f) if f.kind == FnKind::Entry)
}

/// Names a module defines globally, and names it declares without defining.
fn exports_and_needs<'m>(m: &'m Module<'_>) -> (HashSet<&'m str>, Vec<&'m str>) {
    let mut defined_here = HashSet::default();
    let mut exports = HashSet::default();
    for item in &m.items {
        if let (Some(n), Some(l)) = (item.symbol(), item.linkage()) {
            if item.is_definition() {
                defined_here.insert(n);
                if !is_local(&item.kind, l) {
                    exports.insert(n);
                }
            }
        }
    }
    let mut needs = Vec::new();
    for item in &m.items {
        if let Some(n) = item.symbol() {
            if !item.is_definition() && !defined_here.contains(n) && !needs.contains(&n) {
                needs.push(n);
            }
        }
    }
    (exports, needs)
}

/// Picks the inputs that take part: every object, then every library that
/// defines a symbol the inputs so far leave undefined, to a fixpoint
/// (classic archive semantics; among libraries defining the same symbol,
/// the first given wins). Linear in the number of symbols.
pub fn select_inputs(modules: &[Module<'_>], kinds: &[InputKind]) -> Vec<bool> {
    if kinds.iter().all(|k| *k == InputKind::Object) {
        // No library to pull in: every input takes part.
        return vec![true; modules.len()];
    }
    let info: Vec<_> = modules.iter().map(exports_and_needs).collect();
    let mut included: Vec<bool> = kinds.iter().map(|k| *k == InputKind::Object).collect();
    let mut providers: HashMap<&str, usize> = HashMap::default();
    for (i, (exports, _)) in info.iter().enumerate() {
        if !included[i] {
            for &e in exports {
                providers.entry(e).or_insert(i);
            }
        }
    }
    let mut defined: HashSet<&str> = HashSet::default();
    let mut wanted: Vec<&str> = Vec::new();
    for (i, (exports, needs)) in info.iter().enumerate() {
        if included[i] {
            defined.extend(exports.iter().copied());
            wanted.extend(needs.iter().copied());
        }
    }
    while let Some(name) = wanted.pop() {
        if defined.contains(name) {
            continue;
        }
        let Some(&lib) = providers.get(name) else {
            continue;
        };
        if included[lib] {
            continue;
        }
        included[lib] = true;
        defined.extend(info[lib].0.iter().copied());
        wanted.extend(info[lib].1.iter().copied());
    }
    included
}

/// Builds the symbol table over the included modules. Names borrow the
/// modules (generated names live in their items).
pub fn build<'m>(modules: &'m [Module<'_>], included: Vec<bool>) -> SymbolTable<'m> {
    // Sized once from the item counts: no table grows and rehashes.
    let items: usize = modules.iter().map(|m| m.items.len()).sum();
    let mut symbols: Vec<Symbol<'m>> = Vec::with_capacity(items);
    let mut global: HashMap<&'m str, SymbolId> =
        HashMap::with_capacity_and_hasher(items, Default::default());
    let mut scopes = vec![HashMap::default(); modules.len()];
    let mut targets = vec![ModuleTargets::default(); modules.len()];
    // File-local definitions of one module (reused by every module).
    let mut local: HashMap<&'m str, SymbolId> = HashMap::default();
    // References no declaration of their module names, for when every
    // global symbol is known: (module, index in its `refs`, the name).
    let mut misses: Vec<(usize, usize, Name<'m>)> = Vec::new();
    for (mi, m) in modules.iter().enumerate() {
        if !included[mi] {
            continue;
        }
        if let Some(next) = modules.get(mi + 1) {
            prefetch_names(next);
        }
        scopes[mi].reserve(m.items.len());
        let has_generated = m
            .items
            .iter()
            .any(|item| matches!(&item.kind, ItemKind::Variable(v) if v.generated.is_some()));
        let used = if has_generated {
            used_generated(m)
        } else {
            HashMap::default()
        };
        // A variable of `a<N>` that its module does not use is no symbol; a
        // used one is named as its first use spells it.
        let symbol = |item: &'m Item<'_>| match &item.kind {
            ItemKind::Variable(v) if v.generated.is_some() => used.get(v.symbol()).copied(),
            _ => item.symbol(),
        };
        // File-local definitions first, so their declarations find them.
        local.clear();
        for item in &m.items {
            if let (Some(n), Some(l)) = (symbol(item), item.linkage()) {
                if item.is_definition() && is_local(&item.kind, l) && !local.contains_key(n) {
                    let id = SymbolId(symbols.len() as u32);
                    symbols.push(Symbol::new(n, Scope::Local(mi)));
                    local.insert(n, id);
                }
            }
        }
        let t = &mut targets[mi];
        t.items = vec![NONE; m.items.len()];
        for (ii, item) in m.items.iter().enumerate() {
            let Some(n) = symbol(item) else {
                continue;
            };
            let first = ii as u32;
            let id = match local.get(n) {
                Some(&id) => id,
                None => *global.entry(n).or_insert_with(|| {
                    symbols.push(Symbol::new(n, Scope::Global));
                    SymbolId(symbols.len() as u32 - 1)
                }),
            };
            t.items[ii] = id.0;
            let s = &mut symbols[id.0 as usize];
            if item.is_definition() {
                s.defs += 1;
            } else {
                s.decls += 1;
            }
            scopes[mi].entry(n).or_insert((id, first));
        }
        if has_generated {
            alias_spellings(m, &used, &mut scopes[mi]);
        }
        // The references, while their names are in the cache.
        t.refs = Vec::with_capacity(m.refs.len());
        for (at, n) in m.refs.iter().enumerate() {
            let target = match scopes[mi].get(n.text) {
                Some(&(id, first)) => (id.0, first),
                None => {
                    misses.push((mi, at, *n));
                    (NONE, NONE)
                }
            };
            t.refs.push(target);
        }
    }
    let items = symbol_items(modules, &mut symbols, &targets);
    // A name a module uses without declaring it binds to another input's
    // global symbol of that name (reported by `check_body_names`).
    let mut undeclared = vec![Vec::new(); modules.len()];
    for (mi, at, n) in misses {
        targets[mi].refs[at] = match scopes[mi].get(n.text) {
            // An earlier miss of this name bound it.
            Some(&(id, first)) => (id.0, first),
            None => match global.get(n.text) {
                Some(&id) => {
                    scopes[mi].insert(n.text, (id, u32::MAX));
                    undeclared[mi].push(n);
                    (id.0, u32::MAX)
                }
                None => (NONE, NONE),
            },
        };
    }
    SymbolTable {
        symbols,
        scopes,
        included,
        undeclared,
        global,
        items,
        targets,
    }
}

/// Every symbol's definitions, then its declarations, each in input order,
/// in one list; sets each symbol's [`Symbol::items_at`] (its counts are set).
fn symbol_items(
    modules: &[Module<'_>],
    symbols: &mut [Symbol<'_>],
    targets: &[ModuleTargets],
) -> Vec<ItemRef> {
    // Next free slot per symbol: for definitions, and for declarations.
    let mut next = Vec::with_capacity(symbols.len());
    let mut at = 0u32;
    for s in symbols.iter_mut() {
        s.items_at = at;
        next.push((at, at + s.defs));
        at += s.defs + s.decls;
    }
    let mut items = vec![ItemRef { module: 0, item: 0 }; at as usize];
    for (mi, t) in targets.iter().enumerate() {
        for (ii, &id) in t.items.iter().enumerate() {
            if id == NONE {
                continue;
            }
            let slot = &mut next[id as usize];
            let i = if modules[mi].items[ii].is_definition() {
                &mut slot.0
            } else {
                &mut slot.1
            };
            items[*i as usize] = ItemRef {
                module: mi,
                item: ii,
            };
            *i += 1;
        }
    }
    items
}

/// Prefetches the names `m`'s items and references spell (one cache line
/// and often one page each), a module ahead of entering them.
fn prefetch_names(m: &Module<'_>) {
    for item in &m.items {
        if let Some(n) = item.symbol() {
            prefetch(n.as_ptr());
        }
    }
    for n in &m.refs {
        prefetch(n.text.as_ptr());
    }
}

/// Maps each other spelling of a used generated variable (`a1`, `a001`
/// where the first use wrote `a01`; ptxas reads the index without its
/// leading zeros) to that variable's symbol, so that every use resolves and
/// is emitted as the symbol's name (PTX ISA 9.0, section 5.4.6).
fn alias_spellings<'m>(
    m: &'m Module<'_>,
    used: &HashMap<&'m str, &'m str>,
    scope: &mut HashMap<&'m str, (SymbolId, u32)>,
) {
    for n in &m.refs {
        if scope.contains_key(n.text) {
            continue;
        }
        let spelled = as_written_or_unpadded(n.text, |name| used.get(name).copied());
        if let Some(&id) = spelled.and_then(|s| scope.get(s)) {
            scope.insert(n.text, id);
        }
    }
}

/// The names of the variables `m`'s parameterized declarations generate.
fn generated_names<'m>(m: &'m Module<'_>) -> HashSet<&'m str> {
    m.items
        .iter()
        .filter_map(|item| match &item.kind {
            ItemKind::Variable(v) => v.generated.as_ref().map(|g| &*g.name),
            _ => None,
        })
        .collect()
}

/// `find(name)`, else `find` of `name` without its index's leading zeros
/// (`a2` for `a02`), as ptxas finds a generated variable.
fn as_written_or_unpadded<T>(name: &str, find: impl Fn(&str) -> Option<T>) -> Option<T> {
    find(name).or_else(|| unpadded(name).and_then(|u| find(&u)))
}

/// `a2` for `a02` (ptxas reads a name's index without its leading zeros);
/// `None` for a name without leading zeros in its index.
fn unpadded(name: &str) -> Option<String> {
    let prefix = name.trim_end_matches(|c: char| c.is_ascii_digit());
    let digits = &name[prefix.len()..];
    if digits.len() < 2 || !digits.starts_with('0') {
        return None;
    }
    let index = digits.parse::<u64>().ok()?;
    Some(format!("{prefix}{index}"))
}

/// The generated variables (`a2` of `a<4>`) that `m` uses, by name or with
/// a zero-padded index (`a02`), each with the spelling of its first use.
/// ptxas keeps only those, under that spelling: `ptxas -c` of a module that
/// declares `.visible .global .u32 a<3>` and uses `a01` defines `a01` alone,
/// so nvlink finds no `a0` or `a1` another module uses ("Undefined
/// reference") and takes two such modules that use different variables. A
/// name that a plain declaration of the module also has (`a1` beside `a<3>`,
/// `.extern` too) means that declaration, for ptxas as here.
fn used_generated<'m>(m: &'m Module<'_>) -> HashMap<&'m str, &'m str> {
    let mut generated = generated_names(m);
    for item in &m.items {
        if !matches!(&item.kind, ItemKind::Variable(v) if v.generated.is_some()) {
            if let Some(n) = item.symbol() {
                generated.remove(n);
            }
        }
    }
    let mut used = HashMap::default();
    for n in &m.refs {
        if let Some(g) = as_written_or_unpadded(n.text, |name| generated.get(name).copied()) {
            used.entry(g).or_insert(n.text);
        }
    }
    used
}

/// The error for a reference `n` (in an initializer, or else a body) to a
/// symbol its module declares later, at item `first`: ptxas reads a module
/// in order ("Invalid initial value expression", "Unknown symbol"), where
/// the merged module would declare the symbol before every use.
fn declared_after_use(m: &Module<'_>, n: Name<'_>, first: u32, initializer: bool) -> Diagnostic {
    let decl = m.items[first as usize].symbol_name().map(|d| d.span);
    let (place, ptxas) = if initializer {
        ("an initializer", "Invalid initial value expression")
    } else {
        ("a function", "Unknown symbol")
    };
    let d = Diagnostic::error(
        n.span,
        format!("`{}` is used before its declaration", n.text),
    )
    .with_label("used here")
    .with_help(format!(
        "declare `{}` before {place} that uses it (a declaration without a body, or \
             `.extern`, will do); ptxas reads a module in order (\"{ptxas}\")",
        n.text
    ));
    match decl {
        Some(span) => d.with_secondary(span, "declared here, after the use"),
        None => d,
    }
}

/// The error for a name `n` in `item`'s initializer that no symbol has (an
/// undeclared name, or a variable `a5` that `a<3>` does not declare): ptxas
/// refuses the module ("Invalid initial value expression").
fn unknown_in_initializer(item: &Item<'_>, n: Name<'_>) -> Diagnostic {
    let var = item.symbol().unwrap_or("");
    Diagnostic::error(
        n.span,
        format!("unknown name `{}` in the initializer of `{var}`", n.text),
    )
    .with_label("no variable or function of this name is declared before here")
    .with_help(format!(
        "declare `{0}` before `{var}` (at module scope, e.g. `.extern .global .b8 {0}[];`), \
         or correct the spelling (ptxas: \"Invalid initial value expression\")",
        n.text
    ))
}

/// Names that are legal in a body without a declaration: the predefined
/// constant `WARP_SZ` and the sink `_` (`mbarrier.arrive... _, [addr]`)
/// (PTX ISA 9.0, sections 10 "Special Registers" and 9.7 "Instructions").
const PREDEFINED: &[&str] = &["WARP_SZ", "_"];

/// Reports each name that a function body of an included module uses and
/// that neither the body declares nor any input knows as a symbol: ptxas
/// refuses such a module ("Unknown symbol"). One error per module and name,
/// at its first use. A name only another input declares is an error too:
/// ptxas refuses that input on its own, so `ptxas -c` + nvlink cannot link
/// it, and binding it across inputs would guess at its type. So is a
/// reference, in a body or an initializer, to a symbol its module declares
/// only after it, and a name in an initializer that no input knows (one
/// error per use).
pub fn check_body_names(
    modules: &[Module<'_>],
    table: &SymbolTable<'_>,
    diags: &mut Vec<Diagnostic>,
) {
    for (mi, m) in modules.iter().enumerate() {
        if !table.included[mi] {
            continue;
        }
        for n in &table.undeclared[mi] {
            diags.push(
                Diagnostic::error(n.span, format!("`{}` is used here but not declared in this input", n.text))
                    .with_label("another input defines a global symbol of this name, but this input never declares it")
                    .with_help(format!(
                        "declare it in this input before this use (`.extern`, with the definition's type), as ptxas requires when it assembles this input alone (\"Unknown symbol '{}'\")",
                        n.text
                    )),
            );
        }
        let mut reported: HashSet<&str> = HashSet::default();
        for (ii, item) in m.items.iter().enumerate() {
            let f = match &item.kind {
                ItemKind::Function(f) => Some(f),
                // An initializer's references.
                ItemKind::Variable(_) => None,
                _ => continue,
            };
            for (n, &(id, first)) in m.item_refs(item).iter().zip(table.ref_targets(mi, item)) {
                if id != NONE {
                    if first > ii as u32 && first != u32::MAX {
                        diags.push(declared_after_use(m, *n, first, f.is_none()));
                    }
                    continue;
                }
                let Some(f) = f else {
                    diags.push(unknown_in_initializer(item, *n));
                    continue;
                };
                if PREDEFINED.contains(&n.text) || !reported.insert(n.text) {
                    continue;
                }
                diags.push(
                    Diagnostic::error(n.span, format!("unknown name `{}` in `{}`", n.text, f.name.text))
                        .with_label("no symbol, parameter, register or label of this name is declared here")
                        .with_help(format!(
                            "declare `{0}` before this use (`.reg`, a label, or at module scope, e.g. `.extern .global .b8 {0}[];` or `.extern .func {0}(...);`), or correct the spelling (ptxas: \"Unknown symbol '{0}'\")",
                            n.text
                        )),
                );
            }
        }
    }
}
