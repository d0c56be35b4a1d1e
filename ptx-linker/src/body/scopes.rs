//! The names a body declares, block by block ([`Scopes`]), as ptxas 13.5
//! scopes them: declaring a name (and refusing one its block already
//! declares), opening and closing nested blocks, and telling whether a use
//! of a name is a reference to a module symbol, one of the body's own
//! names, or a label.

use rustc_hash::FxHashMap as HashMap;

use super::branches::Branch;
use super::generated::{generated_index, generates, repeats_generated, GeneratedCheck};
use super::names::{name_hash, seen_bit, seen_bit_of, LabelTable};
use super::rename_form;
use crate::ast::Name;
use crate::diagnostic::{Diagnostic, Span};

/// The names a body declares, by block. Kept in the [`crate::parse::Cursor`] and reused by
/// every body scan (its maps keep their capacity).
#[derive(Debug, Default)]
pub(crate) struct Scopes<'src> {
    /// Each declared name in scope: its innermost declaration.
    pub(super) names: HashMap<&'src str, Decl>,
    /// Declarations in nested blocks, to undo when their block closes: the
    /// name and the declaration it had before (`None`: not declared).
    pub(super) undo: Vec<(&'src str, Option<Decl>)>,
    /// Parameterized declarations `x<N>` in scope, outermost first.
    pub(super) generated: Vec<Generated<'src>>,
    /// `%` names the body declares (`.reg .b32 %r<40>;`), in scope,
    /// outermost first: to refuse a second declaration in one block, as
    /// ptxas does, and to hide a module-scope `%` symbol of that name.
    pub(super) percent: Vec<Percent<'src>>,
    /// The module-scope symbols named with a `%` declared before the body
    /// ([`PercentSymbols`]); when there are any, the scan reads every
    /// statement token by token.
    pub(super) module_percent: PercentSymbols<'src>,
    /// Per open nested block: the lengths of the lists it truncates when it
    /// closes, at its `{`.
    marks: Vec<Mark>,
    /// Function-scope `.shared x<N>` declarations of this body.
    pub(super) shared_generated: Vec<SharedGenerated>,
    /// Labels of the body's outermost block not yet in `names`: most
    /// labels are never looked up, so they are only listed, and moved into
    /// `names` when a block opens or the list grows long.
    labels: Vec<&'src str>,
    /// One bit per hash of every name declared in the body so far (never
    /// cleared when a block closes): a label whose bit is clear is declared
    /// nowhere, so [`Scopes::declared_in_block`] answers without a lookup.
    seen: [u64; 8],
    /// The last label declared, for a `.branchtargets`, `.callprototype` or
    /// `.calltargets` directive right after it, which sets its kind.
    last_label: &'src str,
    /// Uses of a name that is a label of the body, checked when the scan
    /// ends ([`super::label_uses::check_label_uses`]): ptxas takes a label only in a few places.
    pub(super) label_uses: Vec<(Name<'src>, Kind, Use)>,
    /// `bra` targets not yet found among the labels in scope: those of a
    /// nested block are looked for among its labels when it closes (and
    /// passed to the enclosing block if not there), the rest among the
    /// outermost block's labels when the scan ends ([`Scopes::check_branches`]).
    pub(super) branches: Vec<Branch<'src>>,
    /// The outermost block's labels, to find `bra` targets cheaply.
    pub(super) outer_labels: LabelTable<'src>,
    /// A label labels a `.branchtargets`, `.callprototype` or
    /// `.calltargets` (which `bra` does not take).
    pub(super) special_labels: bool,
    /// The label of the `.branchtargets` list being read ("" when none).
    pub(super) own_label: &'src str,
    /// The body declares a `%` label, which a `%` guard may name.
    pub(super) percent_labels: bool,
    /// A declared variable, register or parameter (or an `x<N>` prefix, or
    /// a nested block's label) ends like a renamed symbol's ([`rename_form`]).
    pub(super) declares_rename_form: bool,
    /// The short hashes ([`crate::labels::short_hash`]) of the targets found among
    /// labels declared after the branch (forward branches), where the scan
    /// has no list of the module's to add them to ([`Self::check_branches`]
    /// adds its own there): a module-scope name hides such a label from
    /// ptxas ([`crate::labels`]).
    pub(super) forward: Vec<u32>,
    /// The forward targets that may name a module-scope symbol declared
    /// before the body (looked up when the scan ends).
    pub(super) forward_suspects: Vec<Branch<'src>>,
}

/// The lengths of [`Scopes`]' per-block lists at a nested block's `{`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Mark {
    pub(super) undo: usize,
    pub(super) generated: usize,
    pub(super) percent: usize,
    pub(super) branches: usize,
}

/// What a declared name of a body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A variable (`.reg`, `.local`, `.shared`, `.param`, ...) or a parameter.
    Var,
    /// A label of an instruction.
    Label,
    /// A label of a `.branchtargets` list (the operand of `brx.idx`).
    BranchTargets,
    /// A label of a `.callprototype` (the last operand of an indirect `call`).
    CallPrototype,
    /// A label of a `.calltargets` list (likewise).
    CallTargets,
}

/// A declaration in scope: the depth of its block (0: a parameter; 1: the
/// body's outermost block) and what it declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Decl {
    pub(super) depth: u32,
    pub(super) kind: Kind,
}

/// Where a name is used (see [`Scopes::use_name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Use {
    /// An operand of the instruction whose opcode starts at this index.
    Operand(usize),
    /// An initializer of a declaration.
    Init,
    /// A `.calltargets` list.
    CallTargets,
    /// The guard of an instruction (`@p`).
    Guard,
}

/// A `%` name declared in a body: `name` alone, or the names
/// `name<count>` generates.
#[derive(Debug, Clone, Copy)]
pub(super) struct Percent<'src> {
    pub(super) name: &'src str,
    pub(super) count: Option<u32>,
}

impl Percent<'_> {
    /// Whether this declaration declares `name` (`%r<4>`: `%r0` .. `%r3`).
    fn declares(&self, name: &str) -> bool {
        match self.count {
            None => self.name == name,
            Some(n) => generated_index(name, self.name, n).is_some(),
        }
    }
}

/// A module's symbols whose names start with `%`, declared so far: ptxas
/// takes `.global .u64 %g;`, `.func %f()` and `.alias %h, %f;`, and in a
/// body a `%` operand of such a name is a reference to the symbol unless a
/// register or parameter of the body hides it. rustc never names a symbol
/// so, so the list is almost always empty, and the body scan passes `%`
/// operands as registers without a look.
#[derive(Debug, Default, Clone)]
pub(crate) struct PercentSymbols<'src>(Vec<Percent<'src>>);

impl<'src> PercentSymbols<'src> {
    /// Records the module-scope symbol `name`, which starts with `%`
    /// (`count`: the variables `name<count>` declares).
    pub(crate) fn add(&mut self, name: &'src str, count: Option<u32>) {
        debug_assert!(name.starts_with('%'));
        self.0.push(Percent { name, count });
    }

    /// Whether one of the symbols is named `name`.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.0.iter().any(|p| p.declares(name))
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// How many labels [`Scopes::use_name`] searches one by one before it
/// moves them into the map.
pub(super) const LABELS_SEARCHED: usize = 32;

/// A parameterized declaration `prefix<count>` in scope.
#[derive(Debug, Clone, Copy)]
pub(super) struct Generated<'src> {
    pub(super) prefix: &'src str,
    pub(super) count: u32,
    /// The depth of its block.
    pub(super) depth: u32,
    /// For a `.shared` one, its index in [`Scopes::shared_generated`].
    pub(super) shared: Option<usize>,
}

/// A function-scope `.shared .T x<N>`: ptxas 13.5 allocates one element for
/// the declaration and one for each distinct generated name the body uses
/// (`.shared .u32 s<20000>;` with only `s7` used: 8 bytes), not all `N`.
#[derive(Debug)]
pub(super) struct SharedGenerated {
    /// Its entry in [`crate::ast::Body::shared`], written when the scan ends.
    pub(super) slot: usize,
    /// One element's bytes and alignment.
    pub(super) size: u64,
    pub(super) align: u32,
    /// Indices of the names used (repeats included).
    pub(super) used: Vec<u32>,
}

impl<'src> Scopes<'src> {
    /// Empties every table, keeping the capacity.
    pub(super) fn clear(&mut self) {
        self.names.clear();
        self.undo.clear();
        self.generated.clear();
        self.percent.clear();
        self.marks.clear();
        self.shared_generated.clear();
        self.labels.clear();
        self.seen = [0; 8];
        self.label_uses.clear();
        self.branches.clear();
        self.outer_labels.clear();
        self.special_labels = false;
        self.own_label = "";
        self.percent_labels = false;
        self.declares_rename_form = false;
        self.forward.clear();
        self.forward_suspects.clear();
    }

    /// Whether the `%` operand `name` names a module-scope `%` symbol that
    /// no register or parameter in scope hides: a reference.
    pub(super) fn names_percent_symbol(&self, name: &str) -> bool {
        self.module_percent.contains(name) && !self.percent.iter().any(|p| p.declares(name))
    }

    /// The start in [`Self::percent`] of the innermost open block's names.
    fn percent_from(&self) -> usize {
        self.marks.last().map_or(0, |m| m.percent)
    }

    /// Whether `name` (bit `bit` of `seen[word]`) may already be declared
    /// and is declared in the block at `depth`.
    #[inline(always)]
    fn seen_in_block(&self, (word, bit): (usize, u64), name: &str, depth: u32) -> bool {
        self.seen[word] & bit != 0 && self.declared_in_block(name, depth)
    }

    /// Records `name` in [`Self::seen`].
    fn mark_seen(&mut self, name: &str) {
        let (word, bit) = seen_bit(name);
        self.seen[word] |= bit;
    }

    /// `name` is declared in the block at `depth`, visible from here on.
    pub(super) fn declare(&mut self, name: &'src str, depth: u32, kind: Kind) {
        self.declares_rename_form |= rename_form(name);
        self.mark_seen(name);
        let before = self.names.insert(name, Decl { depth, kind });
        if depth > 1 {
            self.undo.push((name, before));
        }
    }

    /// A variable `name` (no `%` name, no `x<N>`) is declared in the block at
    /// `depth`. Returns whether the block already declared that name (a
    /// label or variable, a parameter at depth 1, or a name an `x<N>` of the
    /// block generates): ptxas refuses it ("Duplicate definition of variable").
    pub(super) fn declare_var(&mut self, name: &'src str, depth: u32) -> bool {
        let twice =
            self.seen_in_block(seen_bit(name), name, depth) || self.generated_in_block(name, depth);
        self.declare(name, depth, Kind::Var);
        twice
    }

    /// Whether an `x<N>` of the block at `depth` generates `name`.
    fn generated_in_block(&self, name: &str, depth: u32) -> bool {
        // The block's own are the last ones (a closed block's are gone).
        self.generated
            .iter()
            .rev()
            .take_while(|g| g.depth == depth)
            .any(|g| repeats_generated(name, g.prefix, g.count))
    }

    /// A parameterized declaration `prefix<count>` (no `%` name) in the block
    /// at `depth`. Returns whether the block already has one of that prefix,
    /// or a variable (a parameter at depth 1) among the names it generates,
    /// as [`Self::generated_clash`] tells: ptxas refuses both ("Duplicate
    /// definition of variable 'x<'").
    pub(super) fn declare_generated(
        &mut self,
        prefix: &'src str,
        count: u32,
        depth: u32,
        shared: Option<usize>,
    ) -> bool {
        let same_prefix = self
            .generated
            .iter()
            .rev()
            .take_while(|g| g.depth == depth)
            .any(|g| g.prefix == prefix);
        let twice = same_prefix || self.generated_clash(prefix, count, depth, false);
        self.declares_rename_form |= rename_form(prefix);
        self.generated.push(Generated {
            prefix,
            count,
            depth,
            shared,
        });
        twice
    }

    /// Whether ptxas 13.5 refuses `prefix<count>` declared in the block at
    /// `depth` for a name the block already declares (`percent`: a `%`
    /// prefix, whose variables are in [`Self::percent`]). As checked case by
    /// case: only when the smallest number among the block's variables and
    /// parameters named `prefix` and digits (read modulo 2^32, leading zeros
    /// allowed) is in `1..count`, and then for a variable, parameter or
    /// label named `prefix` and a number below `count` written without a
    /// leading zero. So `x1` clashes with a later `x<4>`, `x01` or a label
    /// `x1` alone does not, `x01` and a label `x1` together do, and `x0`
    /// (or `x00`) in the block keeps any of them from clashing.
    #[cold]
    fn generated_clash(&self, prefix: &str, count: u32, depth: u32, percent: bool) -> bool {
        let mut check = GeneratedCheck {
            prefix,
            count,
            min: None,
            named: false,
        };
        let in_block = |d: Decl| d.depth == depth || (depth == 1 && d.depth == 0);
        if percent {
            for p in &self.percent[self.percent_from()..] {
                if p.count.is_none() {
                    check.add(p.name, true);
                }
            }
        }
        if depth == 1 {
            for (n, &d) in &self.names {
                if in_block(d) && (!percent || d.kind != Kind::Var) {
                    check.add(n, d.kind == Kind::Var);
                }
            }
            for n in &self.labels {
                check.add(n, false);
            }
        } else {
            let from = self.marks.last().map_or(0, |m| m.undo);
            for &(n, _) in &self.undo[from..] {
                if let Some(&d) = self.names.get(n) {
                    if d.depth == depth && (!percent || d.kind != Kind::Var) {
                        check.add(n, d.kind == Kind::Var);
                    }
                }
            }
        }
        check.min.is_some_and(|m| m >= 1 && m < count) && check.named
    }

    /// A `%` name (`count`: `None`) or the names `name<count>` generates
    /// are declared in the block at `depth`. Returns whether that repeats a
    /// declaration of the block, as for [`Self::declare_var`] and
    /// [`Self::declare_generated`] (`%` parameters are listed at the start of
    /// [`Self::percent`], so that they count in the outermost block).
    pub(super) fn declare_percent(
        &mut self,
        name: &'src str,
        count: Option<u32>,
        depth: u32,
    ) -> bool {
        let mut twice =
            self.percent[self.percent_from()..]
                .iter()
                .any(|p| match (p.count, count) {
                    (Some(_), Some(_)) => p.name == name,
                    (None, None) => p.name == name,
                    (Some(n), None) => repeats_generated(name, p.name, n),
                    (None, Some(_)) => false,
                });
        if let Some(n) = count {
            twice = twice || self.generated_clash(name, n, depth, true);
            self.declares_rename_form |= rename_form(name);
        } else {
            // A label or parameter of the same name.
            twice |= self.seen_in_block(seen_bit(name), name, depth);
            // A variable in `names` too (which notes its form): it hides a
            // `%` label of an enclosing block from `bra`, as any variable does.
            self.declare(name, depth, Kind::Var);
        }
        self.percent.push(Percent { name, count });
        twice
    }

    /// A label `name` is declared in the block at `depth` (the innermost open
    /// one), visible from here on. Returns whether the block already declared
    /// that name: a second definition, which ptxas refuses ("Duplicate
    /// definition of label"); at depth 1 a parameter counts too, as for ptxas.
    pub(super) fn declare_label(&mut self, name: &'src str, depth: u32) -> bool {
        // (Not noted in `declares_rename_form`: a renamed operand that names
        // a label is refused by ptxas, not bound to it, and labels are many.)
        let h = name_hash(name);
        let seen = seen_bit_of(h);
        let twice = self.seen_in_block(seen, name, depth);
        self.seen[seen.0] |= seen.1;
        self.last_label = name;
        if depth == 1 {
            self.outer_labels.add(h, name);
            if self.labels.len() >= LABELS_SEARCHED {
                // Keeps `declared_in_block`'s search of the list short.
                self.flush_labels();
            }
            // No declaration is undone at depth 1, and a name declared
            // there again has the same depth: the list gives the same answer.
            self.labels.push(name);
        } else {
            self.declare(name, depth, Kind::Label);
        }
        twice
    }

    /// The label just declared in the block at `depth` ([`Self::last_label`])
    /// labels a `.branchtargets`, `.callprototype` or `.calltargets`.
    #[cold]
    pub(super) fn set_label_kind(&mut self, kind: Kind, depth: u32) {
        self.special_labels = true;
        if kind == Kind::BranchTargets {
            self.own_label = self.last_label;
        }
        if depth == 1 {
            self.flush_labels();
        }
        if let Some(d) = self.names.get_mut(self.last_label) {
            if d.depth == depth && d.kind == Kind::Label {
                d.kind = kind;
            }
        }
    }

    /// Whether `name` is declared in the block at `depth` (see
    /// [`Self::declare_label`]): a label or variable of the block, a
    /// parameter at depth 1, or a `%` name of the block.
    fn declared_in_block(&self, name: &str, depth: u32) -> bool {
        match self.names.get(name).copied() {
            Some(d) if d.depth == depth || (depth == 1 && d.depth == 0) => true,
            _ => {
                (depth == 1 && self.labels.contains(&name))
                    || (name.starts_with('%') && self.percent_in_block(name))
            }
        }
    }

    /// Whether the innermost open block declares the `%` name `name` (not
    /// through a `%x<N>`, which a label does not repeat).
    #[cold]
    fn percent_in_block(&self, name: &str) -> bool {
        self.percent[self.percent_from()..]
            .iter()
            .any(|p| p.count.is_none() && p.name == name)
    }

    /// Moves the listed labels into `names`.
    pub(super) fn flush_labels(&mut self) {
        for name in self.labels.drain(..) {
            // A name declared at depth 1 or deeper keeps its declaration (a
            // parameter's becomes the label's).
            let d = self.names.entry(name).or_insert(Decl {
                depth: 1,
                kind: Kind::Label,
            });
            if d.depth < 1 {
                *d = Decl {
                    depth: 1,
                    kind: Kind::Label,
                };
            }
        }
    }

    /// A nested block opens.
    pub(super) fn open(&mut self) {
        // Declarations in the block record what they hide: labels too.
        self.flush_labels();
        self.marks.push(Mark {
            undo: self.undo.len(),
            generated: self.generated.len(),
            percent: self.percent.len(),
            branches: self.branches.len(),
        });
    }

    /// The innermost nested block closes: its declarations go out of scope.
    pub(super) fn close(&mut self, errors: &mut Vec<Diagnostic>) {
        let Some(mark) = self.marks.pop() else {
            return;
        };
        let depth = self.marks.len() as u32 + 2;
        if self.branches.len() > mark.branches {
            self.close_branches(mark, depth, errors);
        }
        for (name, before) in self.undo.drain(mark.undo..).rev() {
            match before {
                Some(d) => {
                    self.names.insert(name, d);
                }
                None => {
                    self.names.remove(name);
                }
            }
        }
        self.generated.truncate(mark.generated);
        self.percent.truncate(mark.percent);
    }

    /// A `%` name as a guard, in a body with `%` labels: when it names a
    /// label in scope (no `%x<N>` of that block or a deeper one generating
    /// the name, which ptxas would take), it is listed in
    /// [`Self::label_uses`], as [`Self::use_name`] lists other names
    /// (ptxas: "Predicate expression expected").
    #[cold]
    pub(super) fn percent_guard(&mut self, n: Name<'src>) {
        let Some(d) = self.declaration(n.text).filter(|d| d.kind != Kind::Var) else {
            return;
        };
        if self.generated_hits(n.text, None).any(|(g, _)| g >= d.depth) {
            return;
        }
        self.label_uses.push((n, d.kind, Use::Guard));
    }

    /// Whether the body declares an `x<N>` or `%x<N>` in scope.
    #[cold]
    pub(super) fn any_generated(&self) -> bool {
        !self.generated.is_empty() || self.percent.iter().any(|p| p.count.is_some())
    }

    /// The parameterized declarations in scope (`x<N>`, `%x<N>`) that
    /// generate `name` as ptxas 13.5 matches it (the prefix, then a number
    /// below `N`, leading zeros allowed; a prefix that ends in a digit
    /// generates none): each one's block depth and its place in the source.
    /// `closing`: the block at that depth closes, its [`Mark`] already
    /// popped.
    pub(super) fn generated_hits<'a>(
        &'a self,
        name: &'a str,
        closing: Option<(Mark, u32)>,
    ) -> impl Iterator<Item = (u32, usize)> + 'a {
        let plain = self
            .generated
            .iter()
            .filter(move |g| generates(g.prefix, g.count, name))
            .map(|g| (g.depth, g.prefix.as_ptr() as usize));
        let percent = self.percent.iter().enumerate().filter_map(move |(i, p)| {
            let count = p.count?;
            generates(p.name, count, name).then(|| {
                let depth = match closing {
                    Some((mark, depth)) if i >= mark.percent => depth,
                    _ => 1 + self.marks.partition_point(|m| m.percent <= i) as u32,
                };
                (depth, p.name.as_ptr() as usize)
            })
        });
        plain.chain(percent)
    }

    /// The innermost declaration of `name` in scope, in [`Self::names`] or
    /// among the listed labels (`%x<N>` and `x<N>` aside).
    fn declaration(&self, name: &str) -> Option<Decl> {
        let decl = if self.names.is_empty() {
            None
        } else {
            self.names.get(name).copied()
        };
        // A listed label is at depth 1: it hides a parameter (depth 0).
        if decl.is_none_or(|d| d.depth < 1) && self.labels.contains(&name) {
            return Some(Decl {
                depth: 1,
                kind: Kind::Label,
            });
        }
        decl
    }

    /// A use of `n` (`at`: where): a reference when no declaration of the
    /// body is in scope (pushed to `refs`); a use of a function-scope
    /// `.shared x<N>` name is counted there; a use of a label is listed in
    /// [`Self::label_uses`].
    pub(super) fn use_name(&mut self, n: Name<'src>, refs: &mut Vec<Name<'src>>, at: Use) {
        if self.labels.len() > LABELS_SEARCHED {
            self.flush_labels();
        }
        let plain = self.declaration(n.text);
        if !self.generated.is_empty() {
            let hit =
                self.generated.iter().rev().find_map(|g| {
                    generated_index(n.text, g.prefix, g.count).map(|index| (*g, index))
                });
            if let Some((g, index)) = hit {
                // The innermost declaration wins.
                if plain.is_none_or(|d| g.depth >= d.depth) {
                    if let Some(s) = g.shared {
                        self.shared_generated[s].used.push(index);
                    }
                    return;
                }
            }
        }
        match plain {
            None => refs.push(n),
            Some(d) if d.kind != Kind::Var => self.label_uses.push((n, d.kind, at)),
            Some(_) => {}
        }
    }
}

/// The error for a variable `name` (a parameterized `name<N>` when
/// `generated`) that its block already declares.
#[cold]
pub(super) fn declared_twice(span: Span, name: &str, generated: bool) -> Diagnostic {
    let message = if generated {
        format!("`{name}<N>` repeats a name already declared in this block")
    } else {
        format!("`{name}` is already declared in this block")
    };
    Diagnostic::error(span, message)
        .with_label("a second declaration of this name")
        .with_help(
            "rename one of the variables (or the label or parameter it repeats), or drop \
             the second declaration; only a nested block may declare a name again (hiding \
             the outer one until it ends); ptxas refuses a duplicate in one block \
             (\"Duplicate definition of variable\")",
        )
}
