//! Liveness: which definitions go into the output, and which references are
//! left unresolved.
//!
//! Roots are every chosen definition of an object input (with `gc`: only
//! object inputs' kernels and their `.visible`, `.weak` and `.common`
//! module-scope variables, which the host can read through
//! `cuModuleGetGlobal` — the device runtime's `__kernel_abi_*` records are
//! such variables that no code references), plus `keep` symbols. Whatever a root's body or
//! initializer names is live too. Library definitions are live only when
//! reached. Debug sections do not keep anything alive.

use rustc_hash::FxHashSet as HashSet;

use crate::ast::{FnKind, ItemKind, Linkage, Module, Space};
use crate::diagnostic::Diagnostic;
use crate::input::{InputKind, LinkOptions};
use crate::resolve::Resolution;
use crate::symbols::{ItemRef, SymbolId, SymbolTable};

/// What survives.
#[derive(Debug, Clone)]
pub struct Liveness {
    /// Live definitions.
    pub live: ItemSet,
    /// Symbols without a definition that live code references (kept external).
    pub external_refs: HashSet<SymbolId>,
}

impl Liveness {
    /// True when `r` goes into the output.
    pub fn is_live(&self, r: ItemRef) -> bool {
        self.live.contains(r)
    }
}

/// A set of items of the modules: one flag per item, so membership costs
/// no hashing, and the items come out in input order.
#[derive(Debug, Clone)]
pub struct ItemSet {
    /// Per module: the index of its first item's flag.
    start: Vec<usize>,
    flags: Vec<bool>,
}

impl ItemSet {
    /// The empty set over the items of `modules`.
    pub fn new(modules: &[Module<'_>]) -> ItemSet {
        let mut start = Vec::with_capacity(modules.len() + 1);
        let mut n = 0;
        for m in modules {
            start.push(n);
            n += m.items.len();
        }
        start.push(n);
        ItemSet {
            start,
            flags: vec![false; n],
        }
    }

    /// The flag of `r`, if `r` is an item of the modules.
    fn index(&self, r: ItemRef) -> Option<usize> {
        let (&first, &end) = (self.start.get(r.module)?, self.start.get(r.module + 1)?);
        let i = first.checked_add(r.item)?;
        (i < end).then_some(i)
    }

    /// True when `r` is in the set.
    pub fn contains(&self, r: ItemRef) -> bool {
        self.index(r).is_some_and(|i| self.flags[i])
    }

    /// Adds `r`; true when it was not in the set yet (false, too, for an
    /// item the modules do not have).
    pub fn insert(&mut self, r: ItemRef) -> bool {
        match self.index(r) {
            Some(i) => !std::mem::replace(&mut self.flags[i], true),
            None => false,
        }
    }

    /// The items in the set, in input order (by module, then item).
    pub fn iter(&self) -> impl Iterator<Item = ItemRef> + '_ {
        self.start
            .windows(2)
            .enumerate()
            .flat_map(move |(module, w)| {
                self.flags[w[0]..w[1]]
                    .iter()
                    .enumerate()
                    .filter(|(_, &on)| on)
                    .map(move |(item, _)| ItemRef { module, item })
            })
    }
}

/// Computes liveness; reports unresolved references and unknown `keep` names.
pub fn liveness(
    modules: &[Module<'_>],
    kinds: &[InputKind],
    table: &SymbolTable<'_>,
    res: &Resolution,
    options: &LinkOptions,
    diags: &mut Vec<Diagnostic>,
) -> Liveness {
    let mut stack: Vec<ItemRef> = Vec::new();
    for id in table.ids() {
        let Some(def) = res.chosen(id) else { continue };
        if kinds[def.module] != InputKind::Object {
            continue;
        }
        let item = &modules[def.module].items[def.item];
        let is_entry = matches!(&item.kind, ItemKind::Function(f) if f.kind == FnKind::Entry);
        let host_visible = matches!(&item.kind, ItemKind::Variable(v)
            if matches!(v.linkage, Linkage::Visible | Linkage::Weak | Linkage::Common));
        if !options.gc || is_entry || host_visible {
            stack.push(def);
        }
    }
    for k in &options.keep {
        let found: Vec<ItemRef> = table
            .ids()
            .filter(|&id| table.get(id).name == k || res.out_name(id) == k)
            .filter_map(|id| res.chosen(id))
            .collect();
        if found.is_empty() {
            diags.push(
                Diagnostic::error_nowhere(format!("`--keep {k}`: no input defines `{k}`"))
                    .with_help("check the spelling, or drop the `--keep`")
                    .warning(),
            );
        }
        stack.extend(found);
    }
    let mut live = ItemSet::new(modules);
    let mut external_refs = HashSet::default();
    let mut reported: HashSet<(SymbolId, usize)> = HashSet::default();
    let mut unresolved = Vec::new();
    while let Some(r) = stack.pop() {
        if !live.insert(r) {
            continue;
        }
        let item = &modules[r.module].items[r.item];
        let refs = modules[r.module].item_refs(item);
        for (name, id) in refs.iter().zip(table.ref_symbols(r.module, item)) {
            let Some(id) = id else {
                continue;
            };
            match res.chosen(id) {
                Some(def) => stack.push(def),
                None if res.external[id.0 as usize] => {
                    external_refs.insert(id);
                }
                None => {
                    if reported.insert((id, r.module)) {
                        // A sized `.extern .shared` is not dynamic shared
                        // memory: nvlink wants a definition too.
                        let sized_shared = table.decls(id).iter().any(|d| {
                            matches!(&modules[d.module].items[d.item].kind, ItemKind::Variable(v)
                                if v.space == Space::Shared && v.dims.iter().all(Option::is_some))
                        });
                        let help = if sized_shared {
                            format!(
                                "a sized `.extern .shared` array needs a definition; declare `{}` with `[]` to make it dynamic shared memory, sized at launch",
                                name.text
                            )
                        } else {
                            format!(
                                "link the PTX file that defines `{}` (as an input or with `--lib`), or pass `--allow-unresolved` to leave it external",
                                name.text
                            )
                        };
                        unresolved.push(
                            Diagnostic::error(
                                name.span,
                                format!("unresolved symbol `{}`", name.text),
                            )
                            .with_label(format!(
                                "`{}` is referenced here but defined in no input",
                                name.text
                            ))
                            .with_help(help),
                        );
                    }
                }
            }
        }
    }
    unresolved
        .sort_by_key(|d: &Diagnostic| d.primary.as_ref().map(|p| (p.span.file, p.span.start)));
    diags.extend(unresolved);
    Liveness {
        live,
        external_refs,
    }
}
