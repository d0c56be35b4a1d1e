//! Symbol table: which inputs take part, and one [`SymbolId`] per symbol.
//!
//! Global symbols (`.visible`, `.weak`, `.common`, `.extern`, and every
//! `.entry`) share one namespace across modules. A definition without a
//! linkage directive is file-local: it gets a symbol of its own, visible only
//! from its module (PTX ISA 9.0, section 11.6 "Linking Directives").

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::ast::{FnKind, ItemKind, Linkage, Module};
use crate::input::InputKind;

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

/// One symbol: every item that defines or declares it.
#[derive(Debug, Clone)]
pub struct Symbol<'src> {
    /// The name in the inputs.
    pub name: &'src str,
    /// Global or file-local.
    pub scope: Scope,
    /// Definitions, in input order.
    pub defs: Vec<ItemRef>,
    /// Declarations (no body / `.extern`), in input order.
    pub decls: Vec<ItemRef>,
}

/// All symbols of the modules that take part in the link.
#[derive(Debug, Clone)]
pub struct SymbolTable<'src> {
    /// Symbols in order of first appearance.
    pub symbols: Vec<Symbol<'src>>,
    /// Per module: the symbol each module-scope name means there.
    pub scopes: Vec<HashMap<&'src str, SymbolId>>,
    /// Per module: whether it takes part (objects always; libraries when needed).
    pub included: Vec<bool>,
}

impl<'src> SymbolTable<'src> {
    /// The symbol `name` means inside module `module`.
    pub fn lookup(&self, module: usize, name: &str) -> Option<SymbolId> {
        self.scopes.get(module)?.get(name).copied()
    }

    /// The symbol for an id.
    pub fn get(&self, id: SymbolId) -> &Symbol<'src> {
        &self.symbols[id.0 as usize]
    }

    /// Every symbol id, in order.
    pub fn ids(&self) -> impl Iterator<Item = SymbolId> {
        (0..self.symbols.len() as u32).map(SymbolId)
    }
}

/// True when a definition with this linkage is file-local. Kernels are always
/// global: their names are what the host looks up.
fn is_local(kind: &ItemKind<'_>, linkage: Linkage) -> bool {
    linkage == Linkage::Local && !matches!(kind, ItemKind::Function(f) if f.kind == FnKind::Entry)
}

/// Names a module defines globally, and names it declares without defining.
fn exports_and_needs<'src>(m: &Module<'src>) -> (HashSet<&'src str>, Vec<&'src str>) {
    let mut defined_here = HashSet::default();
    let mut exports = HashSet::default();
    for item in &m.items {
        if let (Some(n), Some(l)) = (item.symbol_name(), item.linkage()) {
            if item.is_definition() {
                defined_here.insert(n.text);
                if !is_local(&item.kind, l) {
                    exports.insert(n.text);
                }
            }
        }
    }
    let mut needs = Vec::new();
    for item in &m.items {
        if let Some(n) = item.symbol_name() {
            if !item.is_definition() && !defined_here.contains(n.text) && !needs.contains(&n.text) {
                needs.push(n.text);
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

/// Builds the symbol table over the included modules.
pub fn build<'src>(modules: &[Module<'src>], included: Vec<bool>) -> SymbolTable<'src> {
    let mut symbols: Vec<Symbol<'src>> = Vec::new();
    let mut global: HashMap<&'src str, SymbolId> = HashMap::default();
    let mut scopes = vec![HashMap::default(); modules.len()];
    for (mi, m) in modules.iter().enumerate() {
        if !included[mi] {
            continue;
        }
        // File-local definitions first, so their declarations find them.
        let mut local: HashMap<&'src str, SymbolId> = HashMap::default();
        for item in &m.items {
            if let (Some(n), Some(l)) = (item.symbol_name(), item.linkage()) {
                if item.is_definition() && is_local(&item.kind, l) && !local.contains_key(n.text) {
                    let id = SymbolId(symbols.len() as u32);
                    symbols.push(Symbol {
                        name: n.text,
                        scope: Scope::Local(mi),
                        defs: Vec::new(),
                        decls: Vec::new(),
                    });
                    local.insert(n.text, id);
                }
            }
        }
        for (ii, item) in m.items.iter().enumerate() {
            let Some(n) = item.symbol_name() else {
                continue;
            };
            let id = match local.get(n.text) {
                Some(&id) => id,
                None => *global.entry(n.text).or_insert_with(|| {
                    symbols.push(Symbol {
                        name: n.text,
                        scope: Scope::Global,
                        defs: Vec::new(),
                        decls: Vec::new(),
                    });
                    SymbolId(symbols.len() as u32 - 1)
                }),
            };
            let r = ItemRef {
                module: mi,
                item: ii,
            };
            let s = &mut symbols[id.0 as usize];
            if item.is_definition() {
                s.defs.push(r);
            } else {
                s.decls.push(r);
            }
            scopes[mi].insert(n.text, id);
        }
    }
    SymbolTable {
        symbols,
        scopes,
        included,
    }
}
