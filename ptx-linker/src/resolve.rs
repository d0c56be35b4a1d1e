//! Resolution: pick each symbol's definition, check declarations against it,
//! and rename file-local symbols that collide (PTX ISA 9.0, section 11.6
//! "Linking Directives").
//!
//! Rules: one `.visible` definition wins; two are a duplicate-symbol error.
//! Without one, the first `.weak` wins, else the largest `.common`; the
//! other definitions must agree with it as nvlink requires (see [`agree`]).
//! Every declaration must match the chosen definition's kind and prototype
//! (by [`prototype_difference`], nvlink's comparison plus alignment). A
//! file-local symbol whose name another module also uses is renamed to
//! `NAME__ptxlinkN` (N = its input's 1-based index, bumped until unique).
//! Each variable of a parameterized declaration `a<4>` is resolved and
//! renamed on its own (`a2` may become `a2__ptxlink2` while `a0` stays),
//! and diagnostics about it name the declaration (`` (from `a<4>`)``).

use std::borrow::Cow;

use rustc_hash::FxHashSet as HashSet;

use crate::agree;
use crate::ast::{
    type_size, FnKind, Function, Item, ItemKind, Linkage, Module, ParamDecl, Space, Variable,
};
use crate::diagnostic::{count, Diagnostic};
use crate::input::LinkOptions;
use crate::symbols::{ItemRef, Scope, SymbolId, SymbolTable};

/// Functions the CUDA driver provides; references to them stay external.
pub const DRIVER_FUNCTIONS: &[&str] = &["vprintf", "malloc", "free", "__assertfail"];

/// The outcome of resolution, indexed by [`SymbolId`].
#[derive(Debug, Clone)]
pub struct Resolution<'src> {
    /// The definition each symbol binds to.
    pub chosen: Vec<Option<ItemRef>>,
    /// Name in the output: the input's name, borrowed, unless the symbol
    /// is renamed.
    pub out_names: Vec<Cow<'src, str>>,
    /// Whether a symbol without definition may stay external.
    pub external: Vec<bool>,
    /// For a dynamic shared-memory array (declared only, `.extern .shared`):
    /// the largest `.align` of its declarations, in bytes.
    pub shared_align: Vec<Option<u32>>,
}

impl Resolution<'_> {
    /// Output name of a symbol.
    pub fn out_name(&self, id: SymbolId) -> &str {
        &self.out_names[id.0 as usize]
    }
    /// Whether a symbol's output name differs from its name in the inputs
    /// (a renamed file-local symbol): tells without reading either name.
    pub fn is_renamed(&self, id: SymbolId) -> bool {
        matches!(self.out_names[id.0 as usize], Cow::Owned(_))
    }
    /// Chosen definition of a symbol.
    pub fn chosen(&self, id: SymbolId) -> Option<ItemRef> {
        self.chosen[id.0 as usize]
    }
    /// The merged alignment (bytes) of a dynamic shared-memory array, or
    /// `None` when `id` is not one.
    pub fn dynamic_shared_align(&self, id: SymbolId) -> Option<u32> {
        self.shared_align[id.0 as usize]
    }
}

/// Resolves every symbol; problems go to `diags`.
pub fn resolve<'src>(
    modules: &[Module<'_>],
    table: &SymbolTable<'src>,
    options: &LinkOptions,
    diags: &mut Vec<Diagnostic>,
) -> Resolution<'src> {
    let item = |r: ItemRef| &modules[r.module].items[r.item];
    let mut chosen = Vec::with_capacity(table.symbols.len());
    let mut external = Vec::with_capacity(table.symbols.len());
    let mut shared_align = Vec::with_capacity(table.symbols.len());
    for (id, sym) in table.ids().zip(&table.symbols) {
        let (defs, decls) = (table.defs(id), table.decls(id));
        // `.visible`, file-local, or `.common` with an initializer.
        // (An iterator, not a vector: one allocation less per symbol.)
        let is_strong = |r: &ItemRef| agree::binding(item(*r)) == agree::Binding::Strong;
        let mut strong = defs.iter().copied().filter(is_strong);
        if let Some(first_strong) = strong.next() {
            for dup in strong {
                let first = item(first_strong).symbol_name().map(|n| n.span);
                let here = item(dup).symbol_name().map(|n| n.span);
                if let (Some(first), Some(here)) = (first, here) {
                    let (from_here, from_first) = (from(item(dup)), from(item(first_strong)));
                    diags.push(
                        Diagnostic::error(here, format!("duplicate symbol `{}`{from_here}", sym.name))
                            .with_label("defined again here")
                            .with_secondary(first, format!("`{}` first defined here{from_first}", sym.name))
                            .with_help(format!(
                                "keep one definition of `{}`, mark the others `.weak`, or drop `.visible` to make them file-local{}",
                                sym.name,
                                if [dup, first_strong].iter().any(|r| item(*r).linkage() == Some(Linkage::Common)) {
                                    " (a `.common` variable with an initializer is an ordinary definition, as for nvlink)"
                                } else {
                                    ""
                                }
                            )),
                    );
                }
            }
        }
        let pick = agree::winner(modules, defs);
        if let Some(def) = pick {
            check_decls(modules, sym.name, def, decls, diags);
            for other in defs {
                // A second strong definition is a duplicate, reported above.
                if *other != def && !is_strong(other) {
                    agree::check_definition(modules, sym.name, def, *other, diags);
                }
            }
        }
        chosen.push(pick);
        // Only `[]` arrays: nvlink reports a sized `.extern .shared` that
        // nothing defines as an undefined reference.
        let dynamic_shared = pick.is_none()
            && !decls.is_empty()
            && decls.iter().all(|r| {
                matches!(&item(*r).kind, ItemKind::Variable(v)
                    if v.space == Space::Shared && v.dims.iter().any(Option::is_none))
            });
        if pick.is_none() {
            if let Some((&first, rest)) = decls.split_first() {
                for &other in rest {
                    check_decl_pair(modules, sym.name, first, other, diags);
                }
            }
        }
        shared_align.push(dynamic_shared.then(|| {
            decls
                .iter()
                .filter_map(|r| match &item(*r).kind {
                    ItemKind::Variable(v) => Some(v.align_bytes()),
                    _ => None,
                })
                .max()
                .unwrap_or(1)
        }));
        external.push(
            pick.is_none()
                && (DRIVER_FUNCTIONS.contains(&sym.name)
                    || dynamic_shared
                    || options.allow_unresolved),
        );
    }
    Resolution {
        out_names: rename_locals(modules, table),
        chosen,
        external,
        shared_align,
    }
}

/// Assigns output names: globals keep theirs; a file-local symbol keeps its
/// name unless a global symbol or an earlier module's local has it, and is
/// otherwise named `x__ptxlinkN` ([`rename_base`]).
fn rename_locals<'src>(modules: &[Module<'_>], table: &SymbolTable<'src>) -> Vec<Cow<'src, str>> {
    // Every symbol's name, built on the first rename (renames are rare).
    let mut all: Option<HashSet<&str>> = None;
    // Names taken: every global symbol's (the table's map), and those given
    // to locals so far (kept apart, so that the globals' names are not copied).
    let globals = &table.global;
    let mut given: HashSet<Cow<'src, str>> = HashSet::default();
    let mut out = Vec::with_capacity(table.symbols.len());
    for s in &table.symbols {
        let name = match s.scope {
            Scope::Global => Cow::Borrowed(s.name),
            Scope::Local(m) => {
                let mut name = Cow::Borrowed(s.name);
                let mut base = None;
                let mut n = m + 1;
                while globals.contains_key(&*name)
                    || given.contains(&*name)
                    || (*name != *s.name
                        && all
                            .get_or_insert_with(|| table.symbols.iter().map(|s| s.name).collect())
                            .contains(&*name))
                {
                    let base = base.get_or_insert_with(|| rename_base(modules, m, s.name));
                    name = Cow::Owned(format!("{base}{n}"));
                    n += 1;
                }
                // A copy of a borrowed name is free; renamed ones are few.
                given.insert(name.clone());
                name
            }
        };
        out.push(name);
    }
    out
}

/// The stem of the new names of module `m`'s file-local `name`: `name`
/// and [`crate::body::RENAME_MARKER`] (`x__ptxlink`, then a number). A
/// register, variable, parameter or `x<N>` of that stem in one of the
/// module's bodies would hide the symbol where its uses are renamed (ptxas
/// would bind them to the register; a label of that name only makes ptxas
/// refuse the output), so when a body declares a name of that form (the
/// body scan notes it: [`Module::declares_rename_form`]) the stem grows by `_` until the module's text does not
/// hold it: no name the module declares can then start with it.
fn rename_base(modules: &[Module<'_>], m: usize, name: &str) -> String {
    let mut base = format!("{name}{}", crate::body::RENAME_MARKER);
    let Some(module) = modules.get(m) else {
        return base;
    };
    let declares = module.declares_rename_form();
    while declares && memchr::memmem::find(module.text.as_bytes(), base.as_bytes()).is_some() {
        base.push('_');
    }
    base
}

/// `` (from `a<4>`)`` for a variable of a parameterized declaration, else
/// nothing.
pub(crate) fn from(item: &Item<'_>) -> String {
    match &item.kind {
        ItemKind::Variable(v) => v
            .parameterized()
            .map_or_else(String::new, |p| format!(" (from `{p}`)")),
        _ => String::new(),
    }
}

pub(crate) fn what(kind: &ItemKind<'_>) -> &'static str {
    match kind {
        ItemKind::Function(f) if f.kind == FnKind::Entry => "a kernel (`.entry`)",
        ItemKind::Function(_) | ItemKind::Alias { .. } => "a function (`.func`)",
        _ => "a variable",
    }
}

/// `.v2 .b8[]`-style description of a variable's element type and shape.
fn var_shape(v: &Variable<'_>) -> String {
    let mut s = String::new();
    if v.vector > 1 {
        s.push_str(&format!(".v{} ", v.vector));
    }
    s.push('.');
    s.push_str(v.ty);
    for d in &v.dims {
        match d {
            Some(n) => s.push_str(&format!("[{n}]")),
            None => s.push_str("[]"),
        }
    }
    s
}

/// Two declarations of a symbol that no input defines must agree: the same
/// prototype for a function; the same state space, element type and shape
/// for a variable (for `.extern .shared` arrays only `.align` may differ:
/// the largest wins).
fn check_decl_pair(
    modules: &[Module<'_>],
    name: &str,
    first: ItemRef,
    other: ItemRef,
    diags: &mut Vec<Diagnostic>,
) {
    let a = &modules[first.module].items[first.item];
    let b = &modules[other.module].items[other.item];
    let (Some(an), Some(bn)) = (a.symbol_name(), b.symbol_name()) else {
        return;
    };
    let problem = match (&b.kind, &a.kind) {
        (ItemKind::Function(x), ItemKind::Function(y)) => proto_diff(x, y, &PAIR_WORDS),
        (ItemKind::Variable(x), ItemKind::Variable(y)) if x.space != y.space => Some(format!(
            "`.{}` here but `.{}` there",
            x.space.as_str(),
            y.space.as_str()
        )),
        (ItemKind::Variable(x), ItemKind::Variable(y)) => {
            let (sx, sy) = (var_shape(x), var_shape(y));
            (sx != sy).then(|| format!("`{sx}` here but `{sy}` there"))
        }
        (x, y) => (what(x) != what(y)).then(|| format!("{} here but {} there", what(x), what(y))),
    };
    if let Some(p) = problem {
        diags.push(
            Diagnostic::error(
                bn.span,
                format!("conflicting declarations of `{name}`{}: {p}", from(b)),
            )
            .with_label("declared here")
            .with_secondary(
                an.span,
                format!("`{name}` declared differently here{}", from(a)),
            )
            .with_help(format!("declare `{name}` the same way in every input")),
        );
    }
}

/// Every declaration must match the chosen definition.
fn check_decls(
    modules: &[Module<'_>],
    name: &str,
    def: ItemRef,
    decls: &[ItemRef],
    diags: &mut Vec<Diagnostic>,
) {
    let d = &modules[def.module].items[def.item];
    let Some(dname) = d.symbol_name() else { return };
    for r in decls {
        let decl = &modules[r.module].items[r.item];
        let Some(n) = decl.symbol_name() else {
            continue;
        };
        let problem = match (&decl.kind, &d.kind) {
            (ItemKind::Function(a), ItemKind::Function(b)) => prototype_difference(a, b),
            (ItemKind::Function(_), ItemKind::Alias { .. }) => None,
            (ItemKind::Variable(a), ItemKind::Variable(b)) if a.space != b.space => Some(format!(
                "declared in `.{}` but defined in `.{}`",
                a.space.as_str(),
                b.space.as_str()
            )),
            (ItemKind::Variable(a), ItemKind::Variable(b)) => {
                // A sized declaration states the size; nvlink holds the
                // definition to it ("Size doesn't match"). `[]` states none.
                let sized = a.dims.iter().all(Option::is_some);
                match (a.size_bytes(), b.size_bytes()) {
                    (Some(x), Some(y)) if sized && x != y => Some(format!(
                        "declared as {} but defined as {}",
                        count(x, "byte", "bytes"),
                        count(y, "byte", "bytes")
                    )),
                    _ => None,
                }
            }
            (a, b) => Some(format!(
                "declared as {} but defined as {}",
                what(a),
                what(b)
            )),
        };
        if let Some(p) = problem {
            diags.push(
                Diagnostic::error(
                    n.span,
                    format!(
                        "declaration of `{name}`{} does not match its definition: {p}",
                        from(decl)
                    ),
                )
                .with_label("declared here")
                .with_secondary(dname.span, format!("`{name}` defined here{}", from(d)))
                .with_help(match &decl.kind {
                    ItemKind::Variable(_) => format!(
                        "declare `{name}` in the definition's state space and with its size, or as `[]` to leave the size open (nvlink refuses this too, unless a `[]` declaration of it comes first)"
                    ),
                    _ => format!("make the declaration of `{name}` repeat the definition's prototype"),
                }),
            );
        }
    }
}

/// How [`proto_diff`] names its two sides.
pub(crate) struct Words {
    pub(crate) a_verb: &'static str,
    pub(crate) b_verb: &'static str,
    pub(crate) a_place: &'static str,
    pub(crate) b_place: &'static str,
}

const DECL_WORDS: Words = Words {
    a_verb: "declared",
    b_verb: "defined",
    a_place: "the declaration",
    b_place: "the definition",
};

const PAIR_WORDS: Words = Words {
    a_verb: "declared here",
    b_verb: "declared there",
    a_place: "this declaration",
    b_place: "the other one",
};

/// The first difference between a declaration's and a definition's prototype.
pub fn prototype_difference(decl: &Function<'_>, def: &Function<'_>) -> Option<String> {
    proto_diff(decl, def, &DECL_WORDS)
}

pub(crate) fn proto_diff(decl: &Function<'_>, def: &Function<'_>, w: &Words) -> Option<String> {
    if decl.kind != def.kind {
        let k = |f: &Function<'_>| {
            if f.kind == FnKind::Entry {
                "`.entry`"
            } else {
                "`.func`"
            }
        };
        return Some(format!(
            "{} as {} but {} as {}",
            w.a_verb,
            k(decl),
            w.b_verb,
            k(def)
        ));
    }
    if decl.returns.len() != def.returns.len() {
        return Some(format!(
            "{} {}, {} {}",
            count(
                decl.returns.len() as u64,
                "return parameter",
                "return parameters"
            ),
            w.a_verb,
            def.returns.len(),
            w.b_verb
        ));
    }
    if decl.params.len() != def.params.len() {
        return Some(format!(
            "{} {}, {} {}",
            count(decl.params.len() as u64, "parameter", "parameters"),
            w.a_verb,
            def.params.len(),
            w.b_verb
        ));
    }
    let pairs = decl
        .returns
        .iter()
        .zip(&def.returns)
        .map(|p| ("return parameter", p));
    let pairs = pairs.chain(
        decl.params
            .iter()
            .zip(&def.params)
            .map(|p| ("parameter", p)),
    );
    let mut index = [0usize; 2];
    for (what, (a, b)) in pairs {
        let slot = usize::from(what == "parameter");
        index[slot] += 1;
        if !same_param(a, b) {
            return Some(format!(
                "{what} {} is `{}` in {} but `{}` in {}",
                index[slot],
                describe(a),
                w.a_place,
                describe(b),
                w.b_place
            ));
        }
    }
    None
}

fn describe(p: &ParamDecl<'_>) -> String {
    let mut s = String::new();
    if let Some(a) = p.align {
        s.push_str(&format!(".align {a} "));
    }
    if p.vector > 1 {
        s.push_str(&format!(".v{} ", p.vector));
    }
    s.push('.');
    s.push_str(p.ty);
    for d in &p.dims {
        match d {
            Some(n) => s.push_str(&format!("[{n}]")),
            None => s.push_str("[]"),
        }
    }
    s
}

/// One parameter as nvlink compares it (see [`agree`]): the same size,
/// float or not alike (`.f32` is not `.b32`, `.u32` is), the same array
/// shape. `.reg` and `.param` compare equal, as in both nvlink and ptxas.
fn nvlink_same_param(a: &ParamDecl<'_>, b: &ParamDecl<'_>) -> bool {
    // `ptxas -c` writes `f`/`d` for `.f32`/`.f64`, `i`/`l` for other 32- and
    // 64-bit types, `h` for every 16-bit one (`.f16` too).
    let float = |p: &ParamDecl<'_>| matches!(p.ty, "f32" | "f64");
    param_size(a) == param_size(b)
        && (param_size(a).is_some() || a.ty == b.ty)
        && float(a) == float(b)
        && a.dims == b.dims
}

fn param_size(p: &ParamDecl<'_>) -> Option<u32> {
    type_size(p.ty).map(|s| s * p.vector)
}

/// [`nvlink_same_param`] plus the same alignment, which ptxas checks at
/// every call of the merged module ("Alignment of argument does not match
/// formal parameter").
fn same_param(a: &ParamDecl<'_>, b: &ParamDecl<'_>) -> bool {
    let align = |p: &ParamDecl<'_>| p.align.or(param_size(p));
    nvlink_same_param(a, b) && align(a) == align(b)
}

/// True when nvlink accepts `a` and `b` as one function's prototype: the
/// same kind, counts and parameters by [`nvlink_same_param`] (alignment
/// aside).
pub(crate) fn nvlink_same_prototype(a: &Function<'_>, b: &Function<'_>) -> bool {
    let same = |x: &[ParamDecl<'_>], y: &[ParamDecl<'_>]| {
        x.len() == y.len() && x.iter().zip(y).all(|(p, q)| nvlink_same_param(p, q))
    };
    a.kind == b.kind && same(&a.returns, &b.returns) && same(&a.params, &b.params)
}
