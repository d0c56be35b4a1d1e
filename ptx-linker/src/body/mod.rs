//! Function bodies: kept as text, scanned for what the linker must know.
//!
//! The scan finds (1) identifiers that may name module-scope symbols (call
//! targets, `mov`/`cvta` address-of, `[sym+off]`, `.calltargets`), leaving out
//! opcodes and their `::` qualifiers (`.shared::cta`), branch targets and
//! every use of a name the function declares at that point; (2) `.loc` directives, whose file indices are renumbered on
//! merge; (3) function-scope `.shared` allocations for the shared-memory
//! budget.
//!
//! **Scopes**, as ptxas 13.5 applies them (checked case by case): a name
//! the body declares (`.reg`, `.local`, `.shared`, `.param`, a
//! label, or a name a parameterized declaration `x<4>` generates) is visible
//! from its declaration to the end of the `{ }` block that holds it; the
//! function's parameters are visible in the whole body. Before its
//! declaration, and after its block closes, the same name means the
//! module-scope symbol, so that use is a reference (and is renamed with the
//! symbol). An inner declaration hides an outer one until its block ends.
//! `bra` takes only a label in scope, which may come later (a forward
//! branch); its operand is never a reference.
//!
//! **Checks**, as ptxas 13.5 makes them: a name declared twice in one block
//! (a label: "Duplicate definition of label"; a variable, `%` registers and
//! the names of `x<N>` included, or a parameter in the outermost block:
//! "Duplicate definition of variable"; a label and an `x<N>` do not clash,
//! and an `x<N>` after the block's names `x` and digits follows ptxas's own
//! rule, [`Scopes::generated_clash`]: `x0; x<4>` and `x01; x<4>` pass),
//! a label used where ptxas takes no label, a guard included
//! ([`check_label_uses`]), and a `bra` whose target is no label in scope
//! ("Unknown symbol": none in this block or an enclosing one) or a name of
//! another kind ("Label expected for argument 0 of instruction 'bra'": a
//! variable, a parameter, a `.branchtargets` or `.callprototype` label).
//! ptxas looks a target up twice: at the branch (a variable, parameter or
//! `.branchtargets` label in scope there is refused, even if the block
//! declares a label of that name later) and when the branch's block closes,
//! as the name is declared then (a label of an enclosing block is found
//! there even if an enclosing block declares a variable of that name after
//! the nested block; a name declared nowhere yet is looked up again when
//! the enclosing block closes).
//! Targets are collected as the scan goes and looked for when their block
//! closes ([`Scopes::close_branches`]) or the body ends, among the outermost
//! block's labels in a small table ([`LabelTable`]) that the label
//! declarations fill: no hash map per label or target. (A parameter list
//! that repeats a name is refused by the parser.)
//! `.branchtargets` entries are checked the same way ("Illegal branch
//! target, label expected" for a variable, a parameter, or a
//! `.branchtargets` or `.callprototype` label other than the list's own).
//! A target found among labels declared after it (a forward branch) is
//! noted: a module-scope symbol of its name hides it from ptxas
//! ([`crate::labels`]).
//! A target that an `x<N>` (or `%x<N>`) in scope generates is the
//! register for ptxas, over a label of that block or an enclosing one
//! (`.reg .b32 x<4>; x1: bra x1;`: "Label expected"), and when a block
//! closes ptxas does not find a label that the block's `x<N>` generates,
//! unless the label came before the branch in its own block (`bra x1; x1:
//! .reg .b32 x<4>;`: "Unknown symbol"); [`Scopes::generated_at_branch`].
//! A `%` guard is looked up only in a body that has `%` labels.
//! Known gaps, which ptxas refuses and the scan passes: a `%` label (`%L1:`)
//! used as an operand (`mov.u64 %rd1, %L1;`, "Arguments mismatch"), or as a
//! guard before its declaration (`@%L1 bra L2; %L1:`): `%` operands are
//! never looked up, nor are `%` registers checked to be declared.

use rustc_hash::FxHashMap as HashMap;

use crate::ast::Linkage;
use crate::ast::{Body, LocFix, Name, Space};
use crate::diagnostic::{Diagnostic, Span};
use crate::labels;
use crate::lex::{
    ident_end, int_value, is_blank, is_ident_char, lex_number, Lexer, TokKind, CLASS, C_DIGIT,
    C_DOT, C_NL, C_OTHER, C_QUOTE, C_SLASH, C_SPACE, IDENT_START,
};
use crate::parse::{parse_var, Cursor, Declared};

/// What [`scan`] found.
pub(crate) struct Scanned {
    pub(crate) body: Body,
    pub(crate) locs: Vec<LocFix>,
}

/// The names a body declares, by block. Kept in the [`Cursor`] and reused by
/// every body scan (its maps keep their capacity).
#[derive(Debug, Default)]
pub(crate) struct Scopes<'src> {
    /// Each declared name in scope: its innermost declaration.
    names: HashMap<&'src str, Decl>,
    /// Declarations in nested blocks, to undo when their block closes: the
    /// name and the declaration it had before (`None`: not declared).
    undo: Vec<(&'src str, Option<Decl>)>,
    /// Parameterized declarations `x<N>` in scope, outermost first.
    generated: Vec<Generated<'src>>,
    /// `%` names the body declares (`.reg .b32 %r<40>;`), in scope,
    /// outermost first: to refuse a second declaration in one block, as
    /// ptxas does, and to hide a module-scope `%` symbol of that name.
    percent: Vec<Percent<'src>>,
    /// The module-scope symbols named with a `%` declared before the body
    /// ([`PercentSymbols`]); when there are any, the scan reads every
    /// statement token by token.
    module_percent: PercentSymbols<'src>,
    /// Per open nested block: the lengths of the lists it truncates when it
    /// closes, at its `{`.
    marks: Vec<Mark>,
    /// Function-scope `.shared x<N>` declarations of this body.
    shared_generated: Vec<SharedGenerated>,
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
    /// ends ([`check_label_uses`]): ptxas takes a label only in a few places.
    label_uses: Vec<(Name<'src>, Kind, Use)>,
    /// `bra` targets not yet found among the labels in scope: those of a
    /// nested block are looked for among its labels when it closes (and
    /// passed to the enclosing block if not there), the rest among the
    /// outermost block's labels when the scan ends ([`Scopes::check_branches`]).
    branches: Vec<Branch<'src>>,
    /// The outermost block's labels, to find `bra` targets cheaply.
    outer_labels: LabelTable<'src>,
    /// A label labels a `.branchtargets`, `.callprototype` or
    /// `.calltargets` (which `bra` does not take).
    special_labels: bool,
    /// The label of the `.branchtargets` list being read ("" when none).
    own_label: &'src str,
    /// The body declares a `%` label, which a `%` guard may name.
    percent_labels: bool,
    /// A declared variable, register or parameter (or an `x<N>` prefix, or
    /// a nested block's label) ends like a renamed symbol's ([`rename_form`]).
    declares_rename_form: bool,
    /// The short hashes ([`labels::short_hash`]) of the targets found among
    /// labels declared after the branch (forward branches), where the scan
    /// has no list of the module's to add them to ([`Self::check_branches`]
    /// adds its own there): a module-scope name hides such a label from
    /// ptxas ([`crate::labels`]).
    forward: Vec<u32>,
    /// The forward targets that may name a module-scope symbol declared
    /// before the body (looked up when the scan ends).
    forward_suspects: Vec<Branch<'src>>,
}

/// A `bra` target or a `.branchtargets` entry: a label in scope, to be
/// found ([`Scopes::branches`]).
#[derive(Debug, Clone, Copy)]
struct Branch<'src> {
    name: Name<'src>,
    /// An entry of a `.branchtargets` list. It takes a label of an
    /// instruction, as `bra` does: ptxas 13.5 refuses a `.branchtargets`
    /// or `.callprototype` label ("Illegal branch target, label expected"),
    /// except the list's own (`ts: .branchtargets ts;`), which is not
    /// collected (ptxas finds it before the list gives it its kind).
    entry: bool,
    /// Passed from the nested block that holds it to an enclosing one (not
    /// found when its own block closed).
    nested: bool,
}

impl Branch<'_> {
    /// Whether a name of kind `kind` is a target here.
    fn takes(self, kind: Kind) -> bool {
        kind == Kind::Label
    }
}

/// The lengths of [`Scopes`]' per-block lists at a nested block's `{`.
#[derive(Debug, Clone, Copy)]
struct Mark {
    undo: usize,
    generated: usize,
    percent: usize,
    branches: usize,
}

/// Up to [`LabelTable::MAX`] labels by [`name_hash`], open addressing in
/// 64 slots: a label costs a few instructions to add and a `bra` target
/// one probe to find, where a map would hash each name again. Past `MAX`
/// labels it adds no more, and a target it lacks is looked up in
/// [`Scopes::names`] instead.
#[derive(Debug)]
struct LabelTable<'src> {
    /// The slots' hashes, 0 when empty (a stored hash has its low bit set).
    hashes: [u64; 64],
    names: [&'src str; 64],
    len: usize,
}

impl Default for LabelTable<'_> {
    fn default() -> Self {
        LabelTable {
            hashes: [0; 64],
            names: [""; 64],
            len: 0,
        }
    }
}

impl<'src> LabelTable<'src> {
    /// Labels kept, at most (three quarters of the slots: short probes).
    const MAX: usize = 48;

    fn clear(&mut self) {
        if self.len > 0 {
            self.hashes = [0; 64];
            self.len = 0;
        }
    }

    /// Adds the label `name` of hash `h`.
    #[inline(always)]
    fn add(&mut self, h: u64, name: &'src str) {
        if self.len == Self::MAX {
            return;
        }
        let h = h | 1;
        let mut slot = (h >> 58) as usize;
        while self.hashes[slot] != 0 {
            slot = (slot + 1) % 64;
        }
        self.hashes[slot] = h;
        self.names[slot] = name;
        self.len += 1;
    }

    /// Where the label `name` of hash `h` that was added is declared (its
    /// address in the source), if it was.
    #[inline(always)]
    fn find(&self, h: u64, name: &str) -> Option<usize> {
        let h = h | 1;
        let mut slot = (h >> 58) as usize;
        loop {
            match self.hashes[slot] {
                0 => return None,
                x if x == h && same_name(self.names[slot], name) => {
                    return Some(self.names[slot].as_ptr() as usize)
                }
                _ => slot = (slot + 1) % 64,
            }
        }
    }
}

/// What a declared name of a body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
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
struct Decl {
    depth: u32,
    kind: Kind,
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
struct Percent<'src> {
    name: &'src str,
    count: Option<u32>,
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

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A cheap hash of `name`: its length and its first and last 8 bytes
/// (names differ mostly at their ends), mixed into the high bits by a
/// multiply. Names that differ only in their middle bytes collide.
#[inline(always)]
pub(crate) fn name_hash(name: &str) -> u64 {
    let b = name.as_bytes();
    let (head, tail) = match (b.first_chunk::<8>(), b.last_chunk::<8>()) {
        (Some(h), Some(t)) => (u64::from_le_bytes(*h), u64::from_le_bytes(*t)),
        _ => (b.iter().fold(0u64, |w, &x| w << 8 | u64::from(x)), 0),
    };
    (head ^ tail.rotate_left(29) ^ b.len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// `a == b`, without a call to `memcmp` for names of 8 to 16 bytes (the
/// first and last 8 bytes then cover the name).
#[inline(always)]
fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    match (a.first_chunk::<8>(), b.first_chunk::<8>()) {
        (Some(ha), Some(hb)) if a.len() <= 16 => {
            ha == hb && a.last_chunk::<8>() == b.last_chunk::<8>()
        }
        _ => a == b,
    }
}

/// The bit of the name of hash `h` ([`name_hash`]) in [`Scopes::seen`].
#[inline(always)]
fn seen_bit_of(h: u64) -> (usize, u64) {
    ((h >> 61) as usize, 1 << ((h >> 55) & 63))
}

/// The bit of `name` in [`Scopes::seen`].
#[inline(always)]
fn seen_bit(name: &str) -> (usize, u64) {
    seen_bit_of(name_hash(name))
}

/// How many labels [`Scopes::use_name`] searches one by one before it
/// moves them into the map.
const LABELS_SEARCHED: usize = 32;

/// A parameterized declaration `prefix<count>` in scope.
#[derive(Debug, Clone, Copy)]
struct Generated<'src> {
    prefix: &'src str,
    count: u32,
    /// The depth of its block.
    depth: u32,
    /// For a `.shared` one, its index in [`Scopes::shared_generated`].
    shared: Option<usize>,
}

/// A function-scope `.shared .T x<N>`: ptxas 13.5 allocates one element for
/// the declaration and one for each distinct generated name the body uses
/// (`.shared .u32 s<20000>;` with only `s7` used: 8 bytes), not all `N`.
#[derive(Debug)]
struct SharedGenerated {
    /// Its entry in [`Body::shared`], written when the scan ends.
    slot: usize,
    /// One element's bytes and alignment.
    size: u64,
    align: u32,
    /// Indices of the names used (repeats included).
    used: Vec<u32>,
}

impl<'src> Scopes<'src> {
    /// Empties every table, keeping the capacity.
    fn clear(&mut self) {
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
    fn names_percent_symbol(&self, name: &str) -> bool {
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
    fn declare(&mut self, name: &'src str, depth: u32, kind: Kind) {
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
    fn declare_var(&mut self, name: &'src str, depth: u32) -> bool {
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
    fn declare_generated(
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
    fn declare_percent(&mut self, name: &'src str, count: Option<u32>, depth: u32) -> bool {
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
    fn declare_label(&mut self, name: &'src str, depth: u32) -> bool {
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
    fn set_label_kind(&mut self, kind: Kind, depth: u32) {
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
    fn flush_labels(&mut self) {
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
    fn open(&mut self) {
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
    fn close(&mut self, errors: &mut Vec<Diagnostic>) {
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

    /// `bra` targets of the nested block at `depth` that closes
    /// (`branches[mark.branches..]`), looked for as ptxas 13.5 does: the
    /// name as it is declared now, when the block ends, in this block or an
    /// enclosing one (a label of an enclosing block is found here even if the
    /// enclosing block declares a variable of that name later); and the
    /// name as it was at the branch, which ptxas looks up there too (an
    /// enclosing block's variable, parameter or `.branchtargets` label
    /// is refused at the branch, even if this block declares a label of
    /// that name later). A name not declared at all is passed to the
    /// enclosing block, as is one this block's `x<N>` generates (ptxas
    /// then does not find a label of the block, unless the label came before
    /// the branch, in the same block).
    #[cold]
    fn close_branches(&mut self, mark: Mark, depth: u32, errors: &mut Vec<Diagnostic>) {
        let mut keep = mark.branches;
        let generated = self.any_generated();
        // This block's declarations (the last of each name), by name, when
        // searching the list for every branch would cost more.
        let declared = &self.undo[mark.undo..];
        let index: Option<HashMap<&str, (usize, Option<Decl>)>> =
            ((self.branches.len() - mark.branches).saturating_mul(declared.len()) > 4096).then(
                || {
                    declared
                        .iter()
                        .map(|&(n, before)| (n, (n.as_ptr() as usize, before)))
                        .collect()
                },
            );
        for i in mark.branches..self.branches.len() {
            let b = self.branches[i];
            let target = b.name.text.as_ptr() as usize;
            let now = self.names.get(b.name.text).copied();
            // This block's declaration of the name: where, and what it hides.
            let here = match (now, &index) {
                (Some(d), Some(index)) if d.depth == depth => index.get(b.name.text).copied(),
                (Some(d), None) if d.depth == depth => self.undo[mark.undo..]
                    .iter()
                    .rev()
                    .find(|&&(n, _)| n == b.name.text)
                    .map(|&(n, before)| (n.as_ptr() as usize, before)),
                _ => None,
            };
            // A declaration of this block after the branch hides what the
            // branch saw (the enclosing blocks' names, or nothing).
            let at_branch = match here {
                Some((at, before)) if at > target => before,
                _ => now,
            };
            let Some(generates_here) =
                self.generated_at_branch(b, at_branch, Some((mark, depth)), generated)
            else {
                errors.push(not_a_label(b, Kind::Var));
                continue;
            };
            if let Some(d) = at_branch.filter(|d| !b.takes(d.kind)) {
                errors.push(not_a_label(b, d.kind));
                continue;
            }
            match now {
                // A label of the branch's own block, before it: ptxas finds
                // it at the branch.
                Some(d)
                    if !b.nested && b.takes(d.kind) && here.is_some_and(|(at, _)| at < target) =>
                {
                    continue;
                }
                // ptxas looks further out for a name this block's `x<N>`
                // generates, as for one declared nowhere yet.
                _ if generates_here => {}
                None => {}
                Some(d) => {
                    if !b.takes(d.kind) {
                        errors.push(not_a_label(b, d.kind));
                    } else if here.is_some_and(|(at, _)| at > target) && at_branch.is_none() {
                        // (A label of an enclosing block was declared
                        // before this block, or one of this block hides
                        // another one: found at the branch.)
                        self.add_forward(b);
                    }
                    continue;
                }
            }
            self.branches[keep] = Branch { nested: true, ..b };
            keep += 1;
        }
        self.branches.truncate(keep);
    }

    /// A `%` name as a guard, in a body with `%` labels: when it names a
    /// label in scope (no `%x<N>` of that block or a deeper one generating
    /// the name, which ptxas would take), it is listed in
    /// [`Self::label_uses`], as [`Self::use_name`] lists other names
    /// (ptxas: "Predicate expression expected").
    #[cold]
    fn percent_guard(&mut self, n: Name<'src>) {
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
    fn any_generated(&self) -> bool {
        !self.generated.is_empty() || self.percent.iter().any(|p| p.count.is_some())
    }

    /// For the target of `b`, when `generated` ([`Self::any_generated`]):
    /// `None` when an `x<N>` in scope at the branch generates it and no
    /// name of a deeper block hides that (`at_branch`: the name there):
    /// ptxas takes the register ("Label expected"; an `x<N>` hides a label
    /// of its own block too). Else whether an `x<N>` of the block that
    /// closes (`closing`, see [`Self::generated_hits`]; `None`: the
    /// outermost block, when the body ends) generates it (declared after
    /// the branch).
    #[cold]
    fn generated_at_branch(
        &self,
        b: Branch<'_>,
        at_branch: Option<Decl>,
        closing: Option<(Mark, u32)>,
        generated: bool,
    ) -> Option<bool> {
        if !generated {
            return Some(false);
        }
        let target = b.name.text.as_ptr() as usize;
        let mut here = false;
        let mut innermost = None;
        let depth = closing.map_or(1, |(_, depth)| depth);
        for (d, at) in self.generated_hits(b.name.text, closing) {
            here |= d == depth;
            if at < target {
                innermost = innermost.max(Some(d));
            }
        }
        match innermost {
            Some(g) if at_branch.is_none_or(|d| g >= d.depth) => None,
            _ => Some(here),
        }
    }

    /// The parameterized declarations in scope (`x<N>`, `%x<N>`) that
    /// generate `name` as ptxas 13.5 matches it (the prefix, then a number
    /// below `N`, leading zeros allowed; a prefix that ends in a digit
    /// generates none): each one's block depth and its place in the source.
    /// `closing`: the block at that depth closes, its [`Mark`] already
    /// popped.
    fn generated_hits<'a>(
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

    /// The `bra` targets left when the scan ends must be labels of the
    /// outermost block (ptxas: "Unknown symbol", or "Label expected" for a
    /// variable, a parameter or a `.branchtargets`/`.callprototype` label).
    fn check_branches(
        &mut self,
        errors: &mut Vec<Diagnostic>,
        module: &labels::ModuleNames<'_>,
        forward: &mut Vec<u32>,
    ) {
        // `%x<N>` are in nearly every body, `%` labels rare: only with
        // both may a `%x<N>` generate a label's name.
        let slow = self.special_labels
            || !self.generated.is_empty()
            || (self.percent_labels && self.percent.iter().any(|p| p.count.is_some()));
        for i in 0..self.branches.len() {
            let b = self.branches[i];
            let h = name_hash(b.name.text);
            match self.outer_labels.find(h, b.name.text) {
                Some(at) if !slow => {
                    if at > b.name.text.as_ptr() as usize {
                        forward.push(labels::short_hash(h));
                        if module.may_hold(h, b.name.text) {
                            self.forward_suspects.push(b);
                        }
                    }
                }
                _ => self.check_branch(b, errors),
            }
        }
    }

    /// [`Self::check_branches`] for one target that the table does not
    /// settle (the table is full, the target is missing, labels have
    /// kinds, or an `x<N>` may generate the name).
    #[cold]
    #[inline(never)]
    fn check_branch(&mut self, b: Branch<'src>, errors: &mut Vec<Diagnostic>) {
        // Every label of the outermost block is in `names` then.
        self.flush_labels();
        let target = b.name.text.as_ptr() as usize;
        let now = self
            .names
            .get_key_value(b.name.text)
            .map(|(n, &d)| (n.as_ptr() as usize, d));
        let Some(generates) =
            self.generated_at_branch(b, now.map(|(_, d)| d), None, self.any_generated())
        else {
            return errors.push(not_a_label(b, Kind::Var));
        };
        match now {
            Some((_, d)) if !b.takes(d.kind) => errors.push(not_a_label(b, d.kind)),
            // A label before the branch, in its block: found at the branch.
            Some((at, _)) if !b.nested && at < target => {}
            // ptxas finds no label the block's `x<N>` generates later.
            _ if generates => errors.push(no_label(b)),
            Some((at, _)) => {
                if at > target {
                    self.add_forward(b);
                }
            }
            None => errors.push(no_label(b)),
        }
    }

    /// `b` targets a label declared after it (seldom here: the common case
    /// is in [`Self::check_branches`]).
    #[cold]
    fn add_forward(&mut self, b: Branch<'src>) {
        self.forward
            .push(labels::short_hash(name_hash(b.name.text)));
        self.forward_suspects.push(b);
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
    fn use_name(&mut self, n: Name<'src>, refs: &mut Vec<Name<'src>>, at: Use) {
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

/// Scans a body starting at its `{`; leaves the cursor after the matching `}`.
///
/// Fused with lexing: the body's bytes are read here, token by token, with
/// no token list; only a statement that starts with a directive is handed
/// to the token cursor ([`statement_directive`]). Each token is treated as
/// the token-based scan treated it.
pub(crate) fn scan<'src>(
    c: &mut Cursor<'_, 'src>,
    params: impl Iterator<Item = &'src str>,
    refs: &mut Vec<Name<'src>>,
) -> Scanned {
    let open = c.here();
    c.restart_at(open.end as usize);
    let (src, file) = (c.src, c.file);
    let bytes = src.as_bytes();
    let mut scopes = c.scopes.take().unwrap_or_default();
    scopes.clear();
    scopes.module_percent.clone_from(&c.percent_symbols);
    // With module-scope `%` symbols, `%` operands may be references, which
    // the plain-statement passes do not look at.
    let token_by_token = !scopes.module_percent.is_empty();
    for p in params {
        scopes.declare(p, 0, Kind::Var);
        if p.starts_with('%') {
            scopes.percent.push(Percent {
                name: p,
                count: None,
            });
        }
    }
    // Collected in a buffer kept in `scopes`, copied out once at its size:
    // no growth and no shrink per body.
    let mut locs = Vec::new();
    let mut shared = Vec::new();
    let mut unsynced_warp_op = None;
    let mut body_param = None;
    let mut texture_op = false;
    let mut f64_op = false;
    let mut depth = 1u32;
    let mut vec_depth = 0usize;
    let mut stmt_start = true;
    // In a `bra` statement: its operand is a label, never a reference.
    let mut branch = false;
    // The end of the last token.
    let mut prev_end = open.end as usize;
    // The last token was a `:` ending here (`usize::MAX`: it was not).
    let mut colon_end = usize::MAX;
    // The last two tokens were adjacent `:`s: an identifier after them is a
    // qualifier (`shared::cta`).
    let mut colons = false;
    // The start of the statement's opcode (for a label among its operands).
    let mut op_start = open.start as usize;
    loop {
        // Blanks and punctuation the scan ignores, in one tight loop.
        let mut i = c.lexer.at;
        let mut seen = 0u8;
        while let Some(&b) = bytes.get(i) {
            let k = SKIP[b as usize];
            if k == 0 {
                break;
            }
            seen |= k;
            i += 1;
        }
        if seen & SKIP_PUNCT != 0 {
            colons = false;
            colon_end = usize::MAX;
        }
        c.lexer.at = i;
        if bytes.get(i) == Some(&b'/') {
            c.lexer.skip_blanks(); // comments
        }
        let start = c.lexer.at;
        let Some(&b) = bytes.get(start) else {
            // The end of the last token (skipped punctuation included).
            prev_end = last_token_end(&c.lexer, prev_end);
            c.errors.push(
                Diagnostic::error(open, "unterminated function body")
                    .with_label("this `{` is never closed")
                    .with_help("add the missing `}`"),
            );
            break;
        };
        let qualifier = std::mem::replace(&mut colons, false);
        let after_colon = std::mem::replace(&mut colon_end, usize::MAX);
        let end = if IDENT_START[b as usize] {
            let end = ident_end(bytes, start + 1);
            c.lexer.at = end;
            c.lexer.nl = false;
            if stmt_start {
                // A label when a `:` follows, blanks and comments between
                // (looked for only when one of those follows).
                if matches!(
                    CLASS[bytes.get(end).map_or(0, |&n| n as usize)],
                    C_SPACE | C_NL | C_SLASH
                ) {
                    c.lexer.skip_blanks();
                }
                if bytes.get(c.lexer.at) == Some(&b':') {
                    let text = src.get(start..end).unwrap_or("");
                    // (The plain-statement run leaves `%` labels to this scan.)
                    scopes.percent_labels |= b == b'%';
                    if scopes.declare_label(text, depth) {
                        c.errors.push(
                            Diagnostic::error(
                                Span::new(file, start, end),
                                format!("`{text}` is already defined in this block"),
                            )
                            .with_label("a second definition of this name")
                            .with_help(
                                "rename one of the labels (or the variable or parameter it \
                                 repeats); ptxas refuses a duplicate definition in one block",
                            ),
                        );
                    }
                    prev_end = c.lexer.at + 1;
                    colon_end = prev_end;
                    c.lexer.at = prev_end;
                    c.lexer.nl = false;
                    continue;
                }
                stmt_start = false; // the opcode
                op_start = start;
                let op = Opcode::of(bytes, start, end);
                branch = op == Opcode::Bra;
                texture_op |= op == Opcode::Texture;
                if unsynced_warp_op.is_none() && op == Opcode::Warp && !synced(&c.lexer, src) {
                    unsynced_warp_op = Some(Span::new(file, start, end));
                }
                // Most statements' operands hold only registers, numbers,
                // punctuation and a few names: pass them in one go, and the `;`.
                let mut names = Names::default();
                let plain = if token_by_token {
                    None
                } else if branch {
                    branch_target(bytes, end).map(|(target, semi)| {
                        scopes.branches.push(Branch {
                            name: Name {
                                text: src.get(target.clone()).unwrap_or(""),
                                span: Span::new(file, target.start, target.end),
                            },
                            entry: false,
                            nested: false,
                        });
                        Plain { semi, f64: false }
                    })
                } else {
                    plain_operands(bytes, end).or_else(|| named_operands(bytes, end, &mut names))
                };
                if let Some(Plain { semi, f64 }) = plain {
                    names.use_all(src, file, &mut scopes, refs, start);
                    f64_op |= f64;
                    stmt_start = true;
                    branch = false;
                    // And the plain statements that follow, in a tight loop.
                    let run = plain_statements(
                        src,
                        semi + 1,
                        PlainFlags {
                            scopes: &mut scopes,
                            refs,
                            file,
                            depth,
                            texture_op: &mut texture_op,
                            f64_op: &mut f64_op,
                        },
                    );
                    c.lexer.at = run.at;
                    c.lexer.nl = false;
                    prev_end = run.prev_end;
                    colon_end = run.colon_end;
                    continue;
                }
            } else if branch && !qualifier {
                let text = src.get(start..end).unwrap_or("");
                scopes.branches.push(Branch {
                    name: Name {
                        text,
                        span: Span::new(file, start, end),
                    },
                    entry: false,
                    nested: false,
                });
            } else if !branch && !qualifier && b != b'%' {
                let text = src.get(start..end).unwrap_or("");
                scopes.use_name(
                    Name {
                        text,
                        span: Span::new(file, start, end),
                    },
                    refs,
                    Use::Operand(op_start),
                );
            } else if !branch && !qualifier && token_by_token {
                let text = src.get(start..end).unwrap_or("");
                if scopes.names_percent_symbol(text) {
                    refs.push(Name {
                        text,
                        span: Span::new(file, start, end),
                    });
                }
            }
            prev_end = end;
            continue;
        } else {
            match CLASS[b as usize] {
                C_DOT if bytes.get(start + 1).is_some_and(|&n| is_ident_char(n)) => {
                    let end = ident_end(bytes, start + 1);
                    if stmt_start {
                        let text = src.get(start..end).unwrap_or("");
                        if depth == 1 && text == ".param" && body_param.is_none() {
                            body_param = Some(Span::new(file, start, end));
                        }
                        // `.reg` of `%` names only (as rustc writes them):
                        // nothing to record, passed without tokens.
                        if text == ".reg" {
                            if let Some(semi) = percent_regs(bytes, end) {
                                declare_percent_regs(
                                    src,
                                    file,
                                    end..semi,
                                    depth,
                                    &mut scopes,
                                    &mut c.errors,
                                );
                                prev_end = semi + 1;
                                c.restart_at(prev_end);
                                continue;
                            }
                        }
                        // A label's kind is the directive right after it.
                        if after_colon == prev_end {
                            let kind = match text {
                                ".branchtargets" => Some(Kind::BranchTargets),
                                ".callprototype" => Some(Kind::CallPrototype),
                                ".calltargets" => Some(Kind::CallTargets),
                                _ => None,
                            };
                            if let Some(kind) = kind {
                                scopes.set_label_kind(kind, depth);
                            }
                        }
                        // Through the tokens, from the directive on.
                        c.resume_tokens(prev_end);
                        c.peek();
                        statement_directive(
                            c,
                            text,
                            Decls {
                                scopes: &mut scopes,
                                depth,
                                refs,
                                shared: &mut shared,
                            },
                            &mut locs,
                        );
                        prev_end = c.prev_end() as usize;
                        c.restart_at(prev_end);
                        continue;
                    }
                    f64_op |= bytes.get(start..end) == Some(b".f64");
                    end
                }
                C_DIGIT => lex_number(bytes, start),
                C_QUOTE => c.lexer.string(start),
                C_OTHER => c.lexer.char_end(start),
                // One punctuation byte (`.` and `/` included).
                _ => {
                    match b {
                        b'{' => {
                            if stmt_start {
                                depth += 1;
                                scopes.open();
                            } else {
                                vec_depth += 1;
                            }
                        }
                        b'}' => {
                            if vec_depth > 0 {
                                vec_depth -= 1;
                            } else {
                                depth -= 1;
                                stmt_start = true;
                                branch = false;
                                if depth == 0 {
                                    prev_end = start + 1;
                                    break;
                                }
                                scopes.close(&mut c.errors);
                            }
                        }
                        b';' => {
                            stmt_start = true;
                            branch = false;
                            vec_depth = 0;
                        }
                        b':' => {
                            colons = after_colon == start;
                            colon_end = start + 1;
                        }
                        b'@' if stmt_start => {
                            // Guard `@%p` / `@!%p`: the opcode follows.
                            let mut at = start + 1;
                            c.lexer.at = at;
                            c.lexer.nl = false;
                            c.lexer.skip_blanks();
                            if bytes.get(c.lexer.at) == Some(&b'!') {
                                at = c.lexer.at + 1;
                                c.lexer.at = at;
                                c.lexer.nl = false;
                                c.lexer.skip_blanks();
                            }
                            if let Some(&n) =
                                bytes.get(c.lexer.at).filter(|&&n| IDENT_START[n as usize])
                            {
                                let from = c.lexer.at;
                                at = ident_end(bytes, from + 1);
                                c.lexer.at = at;
                                c.lexer.nl = false;
                                let name = Name {
                                    text: src.get(from..at).unwrap_or(""),
                                    span: Span::new(file, from, at),
                                };
                                if n != b'%' {
                                    // A predicate named without `%` (or a label: refused).
                                    scopes.use_name(name, refs, Use::Guard);
                                } else if scopes.percent_labels {
                                    scopes.percent_guard(name);
                                }
                            }
                            prev_end = at;
                            continue;
                        }
                        _ => {}
                    }
                    start + 1
                }
            }
        };
        c.lexer.at = end;
        c.lexer.nl = false;
        prev_end = end;
    }
    c.restart_at(prev_end);
    let end = prev_end as u32;
    let forward_start = c.forward_labels.len() as u32;
    if !scopes.branches.is_empty() {
        scopes.check_branches(&mut c.errors, &c.module_names, &mut c.forward_labels);
    }
    c.forward_labels.extend_from_slice(&scopes.forward);
    let forward_labels = forward_start..c.forward_labels.len() as u32;
    for b in &scopes.forward_suspects {
        if let Some(symbol) = crate::parse::module_declaration(c, b.name.text) {
            c.errors
                .push(labels::hidden_by_symbol(b.name, b.entry, symbol));
        }
    }
    if !scopes.label_uses.is_empty() {
        check_label_uses(src, &scopes.label_uses, &mut c.errors);
    }
    for g in &mut scopes.shared_generated {
        g.used.sort_unstable();
        g.used.dedup();
        shared[g.slot] = (
            shared_generated_bytes(g.size, g.align, g.used.len()),
            g.align,
        );
    }
    let scopes_rename_form = scopes.declares_rename_form;
    scopes.clear();
    c.scopes = Some(scopes);
    shared.shrink_to_fit();
    locs.shrink_to_fit();
    Scanned {
        body: Body {
            span: Span {
                file: open.file,
                start: open.start,
                end,
            },
            shared,
            unsynced_warp_op,
            body_param,
            texture_op,
            f64_op,
            declares_rename_form: scopes_rename_form,
            forward_labels,
        },
        locs,
    }
}

/// What every renamed symbol's new name holds: `x` becomes `x__ptxlink2`.
pub(crate) const RENAME_MARKER: &str = "__ptxlink";

/// Whether a declared `name` (or `x<N>` prefix) ends like a renamed
/// symbol's new name: [`RENAME_MARKER`], then digits or nothing. A few
/// compares per label: the scan asks it of every declaration.
#[inline]
fn rename_form(name: &str) -> bool {
    let b = name.as_bytes();
    let mut end = b.len();
    while end > 0 && b[end - 1].is_ascii_digit() {
        end -= 1;
    }
    // The marker's last byte first: most labels end `_12` and stop there.
    end >= RENAME_MARKER.len() && b[end - 1] == b'k' && b[..end].ends_with(RENAME_MARKER.as_bytes())
}

/// [`SKIP`]: a blank.
const SKIP_BLANK: u8 = 1;
/// [`SKIP`]: punctuation the scan does nothing with (it only ends a `::`).
const SKIP_PUNCT: u8 = 2;

/// `SKIP[b]`: what the scan may pass over without a look (0: nothing).
static SKIP: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if crate::lex::is_blank(c) {
            SKIP_BLANK
        } else if c.is_ascii_punctuation()
            && !matches!(
                c,
                b'{' | b'}' | b';' | b':' | b'@' | b'.' | b'/' | b'"' | b'%' | b'_' | b'$'
            )
        {
            SKIP_PUNCT
        } else {
            0
        };
        b += 1;
    }
    t
};

/// Where [`plain_statements`] records what it finds.
struct PlainFlags<'a, 'src> {
    scopes: &'a mut Scopes<'src>,
    /// The body's references, for names among the operands.
    refs: &'a mut Vec<Name<'src>>,
    file: crate::diagnostic::FileId,
    /// The depth of the block the statements are in.
    depth: u32,
    texture_op: &'a mut bool,
    f64_op: &'a mut bool,
}

/// Where [`plain_statements`] stopped.
struct PlainRun {
    /// The first byte not read: the start of a statement (or of the blanks
    /// before it) that the token-by-token scan reads.
    at: usize,
    /// The end of the last token read.
    prev_end: usize,
    /// The end of a label's `:` when that was the last token read (else
    /// `usize::MAX`), for the scan's `::` rule.
    colon_end: usize,
}

/// Reads statements from `at` (just after a `;`) as long as each is a label
/// (`name:`) or an opcode that the scan only needs to classify, with
/// [`plain_operands`], optionally guarded (`@%p` / `@!%p`, no blanks
/// inside the guard): what the token-by-token scan does for them, without
/// its per-token dispatch. Stops before anything else: a brace, a
/// directive, a comment, `shfl`/`vote`, operands that hold a name, spaced
/// labels or guards.
fn plain_statements<'src>(src: &'src str, at: usize, f: PlainFlags<'_, 'src>) -> PlainRun {
    if crate::scan32::available() {
        // SAFETY: `available` checked that the CPU has AVX2.
        unsafe { plain_statements_avx2(src, at, f) }
    } else {
        plain_statements_in::<false>(src, at, f)
    }
}

/// [`plain_statements`] compiled with AVX2, so that the AVX2 operand pass
/// is inlined into its loop.
///
/// # Safety
///
/// The CPU must support AVX2 ([`crate::scan32::available`]).
#[target_feature(enable = "avx2")]
unsafe fn plain_statements_avx2<'src>(
    src: &'src str,
    at: usize,
    f: PlainFlags<'_, 'src>,
) -> PlainRun {
    plain_statements_in::<true>(src, at, f)
}

/// [`plain_statements`], with the AVX2 operand pass when `AVX2` (which the
/// caller has checked).
#[inline(always)]
fn plain_statements_in<'src, const AVX2: bool>(
    src: &'src str,
    mut at: usize,
    f: PlainFlags<'_, 'src>,
) -> PlainRun {
    let bytes = src.as_bytes();
    let mut run = PlainRun {
        at,
        prev_end: at,
        colon_end: usize::MAX,
    };
    if f.scopes.percent_labels {
        // A `%` guard may name a `%` label: the token scan checks it (a rare
        // body; the run itself declares no `%` label).
        return run;
    }
    loop {
        at = statement_start(bytes, at);
        let mut start = at;
        let Some(&b) = bytes.get(start) else {
            return run;
        };
        if b == b'@' {
            // A guard: `@%p1` or `@!%p1`, then a blank.
            let mut g = start + 1;
            if bytes.get(g) == Some(&b'!') {
                g += 1;
            }
            if bytes.get(g) != Some(&b'%') {
                return run;
            }
            g = ident_end(bytes, g + 1);
            if !bytes.get(g).is_some_and(|&n| n == b' ' || n == b'\t') {
                return run;
            }
            start = g + 1;
            while bytes.get(start).is_some_and(|&n| n == b' ' || n == b'\t') {
                start += 1;
            }
        }
        if !bytes
            .get(start)
            .is_some_and(|&n| IDENT_START[n as usize] && n != b'%')
        {
            return run;
        }
        let end = ident_end(bytes, start + 1);
        if start == at && bytes.get(end) == Some(&b':') {
            // A label (a second definition goes to the token-by-token scan,
            // which reports it).
            let text = src.get(start..end).unwrap_or("");
            if f.scopes.declare_label(text, f.depth) {
                return run;
            }
            at = end + 1;
            run = PlainRun {
                at,
                prev_end: at,
                colon_end: at,
            };
            continue;
        }
        if !matches!(bytes.get(end), Some(b'.' | b' ' | b'\t' | b';')) {
            return run; // perhaps a spaced label
        }
        let op = Opcode::of(bytes, start, end);
        if op == Opcode::Warp {
            return run;
        }
        if op == Opcode::Bra {
            // `bra[.uni] target;`: the target is looked for when its block ends.
            let Some((target, semi)) = branch_target(bytes, end) else {
                return run;
            };
            f.scopes.branches.push(Branch {
                name: Name {
                    text: src.get(target.clone()).unwrap_or(""),
                    span: Span::new(f.file, target.start, target.end),
                },
                entry: false,
                nested: false,
            });
            at = semi + 1;
            run = PlainRun {
                at,
                prev_end: at,
                colon_end: usize::MAX,
            };
            continue;
        }
        let mut names = Names::default();
        let plain = match plain_operands_in::<AVX2>(bytes, end) {
            None => named_operands(bytes, end, &mut names),
            plain => plain,
        };
        let Some(Plain { semi, f64 }) = plain else {
            return run;
        };
        names.use_all(src, f.file, f.scopes, f.refs, start);
        *f.texture_op |= op == Opcode::Texture;
        *f.f64_op |= f64;
        at = semi + 1;
        run = PlainRun {
            at,
            prev_end: at,
            colon_end: usize::MAX,
        };
    }
}

/// [`first_non_blank`], found first in the layout compilers write between
/// statements: a line feed, perhaps a tab. Those are three loads that do not
/// wait for each other, where the 16-byte mask is a chain of steps that the
/// rest of the next statement would wait for (about a sixth of a plain
/// statement's time).
#[inline(always)]
fn statement_start(bytes: &[u8], at: usize) -> usize {
    let blank = |i: usize| bytes.get(i).is_none_or(|&b| is_blank(b));
    let newline = bytes.get(at) == Some(&b'\n');
    if newline && !blank(at + 1) {
        at + 1
    } else if newline && bytes.get(at + 1) == Some(&b'\t') && !blank(at + 2) {
        at + 2
    } else {
        first_non_blank(bytes, at)
    }
}

/// The first byte at or after `at` that is not blank (` `, `\t`..`\r`), or
/// the end of `bytes`: 16 bytes at a time where that is possible.
#[inline(always)]
fn first_non_blank(bytes: &[u8], mut at: usize) -> usize {
    loop {
        match crate::scan16::non_blank(bytes, at) {
            Some(0) => at += 16,
            Some(mask) => return at + mask.trailing_zeros() as usize,
            None => {
                while bytes.get(at).is_some_and(|&b| is_blank(b)) {
                    at += 1;
                }
                return at;
            }
        }
    }
}

/// The target of a `bra` whose opcode ends at `at` and the index of the
/// statement's `;`, when the rest is plain: qualifiers (`.uni`), blanks,
/// one name, blanks, `;`. `None` otherwise (the token scan reads it).
#[inline(always)]
fn branch_target(bytes: &[u8], mut at: usize) -> Option<(std::ops::Range<usize>, usize)> {
    while bytes.get(at) == Some(&b'.') {
        at = ident_end(bytes, at + 1);
    }
    while bytes.get(at).is_some_and(|&b| b == b' ' || b == b'\t') {
        at += 1;
    }
    if !IDENT_START[*bytes.get(at)? as usize] {
        return None;
    }
    let end = ident_end(bytes, at + 1);
    let mut semi = end;
    while bytes.get(semi).is_some_and(|&b| b == b' ' || b == b'\t') {
        semi += 1;
    }
    (bytes.get(semi) == Some(&b';')).then_some((at..end, semi))
}

/// The opcodes the scan must tell apart from the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opcode {
    /// `bra`: its operand is a label.
    Bra,
    /// `tex`, `tld4`, `txq`, `suld`, `sust`, `sured`, `suq`.
    Texture,
    /// `shfl`, `vote` (without `.sync` they need an older target).
    Warp,
    Other,
}

impl Opcode {
    /// The opcode `bytes[start..end]`, as one word (at most 5 bytes,
    /// zero-padded) looked up in [`OPCODES`]: one multiply and one compare
    /// instead of a chain of compares.
    #[inline]
    fn of(bytes: &[u8], start: usize, end: usize) -> Opcode {
        let Some(x) = word(bytes, start, end) else {
            return Opcode::Other;
        };
        let (w, op) = OPCODES[opcode_slot(x)];
        if w == x {
            op
        } else {
            Opcode::Other
        }
    }
}

/// The multiplier of [`opcode_slot`], chosen (by trying random odd
/// numbers) so that the opcodes of [`OPCODES`] each get a slot of their own.
const OPCODE_HASH: u64 = 0x451a_bd81_f1d6_9ed7;

/// The slot of [`OPCODES`] for the word `x`: the top 4 bits of `x` times
/// [`OPCODE_HASH`].
#[inline]
const fn opcode_slot(x: u64) -> usize {
    (x.wrapping_mul(OPCODE_HASH) >> 60) as usize
}

/// The opcodes [`Opcode`] tells apart, each in its slot as (word, kind);
/// empty slots hold the word 0, which no opcode is. Two opcodes in one slot
/// fail the build.
static OPCODES: [(u64, Opcode); 16] = {
    const LIST: [(&[u8], Opcode); 10] = [
        (b"bra", Opcode::Bra),
        (b"tex", Opcode::Texture),
        (b"tld4", Opcode::Texture),
        (b"txq", Opcode::Texture),
        (b"suld", Opcode::Texture),
        (b"sust", Opcode::Texture),
        (b"sured", Opcode::Texture),
        (b"suq", Opcode::Texture),
        (b"shfl", Opcode::Warp),
        (b"vote", Opcode::Warp),
    ];
    let mut table = [(0u64, Opcode::Other); 16];
    let mut i = 0;
    while i < LIST.len() {
        let (s, op) = LIST[i];
        let mut b = [0u8; 8];
        let mut j = 0;
        while j < s.len() {
            b[j] = s[j];
            j += 1;
        }
        let x = u64::from_le_bytes(b);
        let slot = opcode_slot(x);
        assert!(table[slot].0 == 0, "two opcodes share a slot");
        table[slot] = (x, op);
        i += 1;
    }
    table
};

/// `bytes[start..end]` as a little-endian word padded with zeros, when it
/// is at most 5 bytes long (the longest opcode or qualifier compared).
#[inline]
fn word(bytes: &[u8], start: usize, end: usize) -> Option<u64> {
    let len = end.checked_sub(start).filter(|&n| n <= 5)?;
    let mut b = [0u8; 8];
    match bytes.get(start..start + 8) {
        // Read 8 bytes and keep `len` of them: no copy of variable length.
        Some(eight) => {
            b.copy_from_slice(eight);
            Some(u64::from_le_bytes(b) & ((1u64 << (8 * len)) - 1))
        }
        None => {
            b[..len].copy_from_slice(bytes.get(start..end)?);
            Some(u64::from_le_bytes(b))
        }
    }
}

/// When the rest of a statement, from `at` (just after its opcode), is
/// glued qualifiers (`.lo.s32`) and then operands in which the scan would do
/// nothing: the index of the statement's `;` and whether a qualifier is
/// `.f64`. Otherwise `None`, and the scan reads the statement token by token.
///
/// "Nothing to do" means no byte that ends a statement or a block, opens a
/// block, a comment or a string, starts a label, a guard, a directive or a
/// `::` qualifier (`{ } ; : @ . / "`, control bytes, non-ASCII), and no
/// identifier that may name a symbol: a letter, `_` or `$` that starts a
/// token, i.e. that follows no letter, digit, `_`, `$` or `%` (the rest of a
/// `%r1` or of a number `0f3F800000` is no start: [`lex_number`] takes every
/// identifier byte glued to a number). (A `bra` goes to [`branch_target`]
/// instead.) The operands are classified 16 bytes at a time ([`first_stop`]), without a branch per byte
/// (SSE2 on x86-64: [`crate::scan16`]).
#[inline]
fn plain_operands(bytes: &[u8], at: usize) -> Option<Plain> {
    if crate::scan32::available() {
        plain_operands_in::<true>(bytes, at)
    } else {
        plain_operands_in::<false>(bytes, at)
    }
}

/// [`plain_operands`], with the AVX2 pass when `AVX2` (which the caller
/// has checked: `crate::scan32::available()`).
#[inline(always)]
fn plain_operands_in<const AVX2: bool>(bytes: &[u8], at: usize) -> Option<Plain> {
    if AVX2 {
        use crate::scan32::Operands;
        // SAFETY: the caller checked that the CPU has AVX2.
        match unsafe { crate::scan32::operands(bytes, at) } {
            Operands::Plain(semi, f64) => return Some(Plain { semi, f64 }),
            Operands::NotPlain => return None,
            Operands::From(from, f64) => {
                let semi = first_stop(bytes, from)?;
                return (bytes[semi] == b';').then_some(Plain { semi, f64 });
            }
            Operands::Unknown => {}
        }
    }
    plain_operands_16(bytes, at).map(|(semi, f64)| Plain { semi, f64 })
}

/// The names among a statement's operands (start, end), at most 4.
#[derive(Debug, Default)]
struct Names {
    found: [(usize, usize); 4],
    len: usize,
}

impl Names {
    /// The statement (its opcode at `op_start`) is read: its names are
    /// uses, in order.
    fn use_all<'src>(
        &self,
        src: &'src str,
        file: crate::diagnostic::FileId,
        scopes: &mut Scopes<'src>,
        refs: &mut Vec<Name<'src>>,
        op_start: usize,
    ) {
        for &(start, end) in &self.found[..self.len] {
            let name = Name {
                text: src.get(start..end).unwrap_or(""),
                span: Span::new(file, start, end),
            };
            scopes.use_name(name, refs, Use::Operand(op_start));
        }
    }
}

/// [`plain_operands`] outside `bra` for operands that hold names (at most
/// 4, listed in `names`): each name is passed as the token-by-token scan
/// passes an identifier, and the operands between names must be plain.
/// `None` when they are not, or hold more names.
#[inline(never)]
fn named_operands(bytes: &[u8], at: usize, names: &mut Names) -> Option<Plain> {
    let (mut at, f64) = qualifiers_end(bytes, at);
    loop {
        let stop = first_stop(bytes, at)?;
        match bytes[stop] {
            b';' => return Some(Plain { semi: stop, f64 }),
            b if OPERAND[b as usize] & O_LETTER != 0 && names.len < names.found.len() => {
                let end = ident_end(bytes, stop + 1);
                names.found[names.len] = (stop, end);
                names.len += 1;
                at = end;
            }
            _ => return None,
        }
    }
}

/// The end of the qualifiers glued on at `at` (`.lo.s32`), and whether one
/// of them is `.f64`.
#[inline]
fn qualifiers_end(bytes: &[u8], mut at: usize) -> (usize, bool) {
    let mut f64 = false;
    while bytes.get(at) == Some(&b'.') && bytes.get(at + 1).is_some_and(|&n| is_ident_char(n)) {
        let end = ident_end(bytes, at + 1);
        f64 |= word(bytes, at, end) == Some(u64::from_le_bytes(*b".f64\0\0\0\0"));
        at = end;
    }
    (at, f64)
}

/// What [`plain_operands`] found.
#[derive(Debug, PartialEq, Eq)]
struct Plain {
    /// The statement's `;`.
    semi: usize,
    /// Whether a qualifier is `.f64`.
    f64: bool,
}

/// [`plain_operands`] without AVX2: qualifiers one by one, then
/// [`first_stop_16`].
#[inline]
fn plain_operands_16(bytes: &[u8], at: usize) -> Option<(usize, bool)> {
    let (at, f64) = qualifiers_end(bytes, at);
    let stop = first_stop_16(bytes, at)?;
    (bytes[stop] == b';').then_some((stop, f64))
}

/// [`OPERAND`]: a byte the fast operand scan must stop at.
const O_STOP: u8 = 1;
/// [`OPERAND`]: a letter, `_` or `$` (starts a name unless glued on).
const O_LETTER: u8 = 2;
/// [`OPERAND`]: a byte after which a letter is glued on (letters, digits,
/// `_`, `$`, `%`).
const O_GLUE: u8 = 4;

/// `OPERAND[b]`: `b`'s classes for [`plain_operands`].
static OPERAND: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let letter = c.is_ascii_alphabetic() || c == b'_' || c == b'$';
        let stop = matches!(c, b'{' | b'}' | b';' | b':' | b'@' | b'.' | b'/' | b'"')
            || (c < 0x20 && !crate::lex::is_blank(c))
            || c >= 0x7f;
        t[b] = (stop as u8) * O_STOP
            + (letter as u8) * O_LETTER
            + ((letter || c.is_ascii_digit() || c == b'%') as u8) * O_GLUE;
        b += 1;
    }
    t
};

/// Whether the fast operand scan stops at byte `b`, preceded by `before`
/// (a stop byte, or a name that starts here).
#[inline]
pub(crate) fn stops_at(b: u8, before: u8) -> bool {
    let (k, p) = (OPERAND[b as usize], OPERAND[before as usize]);
    k & O_STOP != 0 || (k & O_LETTER != 0 && p & O_GLUE == 0)
}

/// Whether a letter after `b` is glued on (it continues `b`'s token).
#[inline]
pub(crate) fn is_glue(b: u8) -> bool {
    OPERAND[b as usize] & O_GLUE != 0
}

/// The first index from `at` (`at > 0`) where [`stops_at`] holds; `None`
/// at the end of input. 32 bytes at a time with AVX2 where the CPU has it
/// ([`crate::scan32`]), then 16 at a time with SSE2, then byte by byte:
/// all three give the same answer.
#[inline]
fn first_stop(bytes: &[u8], mut at: usize) -> Option<usize> {
    if crate::scan32::available() {
        // SAFETY: `available` checked that the CPU has AVX2.
        match unsafe { crate::scan32::first_stop(bytes, at) } {
            crate::scan32::Found::At(i) => return Some(i),
            crate::scan32::Found::Before(i) => at = i,
        }
    }
    first_stop_16(bytes, at)
}

/// [`first_stop`] without AVX2: SSE2 (on x86-64), then byte by byte.
#[inline]
fn first_stop_16(bytes: &[u8], mut at: usize) -> Option<usize> {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        while at + 16 <= bytes.len() {
            let mask = crate::scan16::operand_stops(bytes, at);
            if mask != 0 {
                return Some(at + mask.trailing_zeros() as usize);
            }
            at += 16;
        }
    }
    first_stop_scalar(bytes, at)
}

/// [`first_stop`] byte by byte.
#[inline]
fn first_stop_scalar(bytes: &[u8], mut at: usize) -> Option<usize> {
    while let Some(&b) = bytes.get(at) {
        if stops_at(b, bytes[at - 1]) {
            return Some(at);
        }
        at += 1;
    }
    None
}

/// When the rest of a `.reg` statement, from `at`, declares only `%`
/// names (`.b32 %r<40>`, `.pred %p1, %p2`), which the scan never tracks:
/// the index of its `;`. Otherwise (a name without `%`, an initializer, a
/// brace, a comment, a string, ...) `None`, and the tokens decide. Passed
/// with the operand scan ([`first_stop`] with names), directive by directive.
fn percent_regs(bytes: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    loop {
        let stop = first_stop(bytes, at)?;
        if bytes[stop] == b';' {
            // After `=`, even `%` names are uses.
            return (!bytes[from..stop].contains(&b'=')).then_some(stop);
        }
        if bytes[stop] != b'.' || !bytes.get(stop + 1).is_some_and(|&n| is_ident_char(n)) {
            return None;
        }
        at = ident_end(bytes, stop + 1);
    }
}

/// Declares the `%` names of a `.reg` statement that [`percent_regs`]
/// passed (`range`: from after `.reg` to before its `;`), and reports a
/// name its block already declares, as ptxas does.
#[inline(never)]
fn declare_percent_regs<'src>(
    src: &'src str,
    file: crate::diagnostic::FileId,
    range: std::ops::Range<usize>,
    depth: u32,
    scopes: &mut Scopes<'src>,
    errors: &mut Vec<Diagnostic>,
) {
    let bytes = src.as_bytes();
    let blanks = |mut at: usize| {
        while bytes.get(at).is_some_and(|&b| is_blank(b)) {
            at += 1;
        }
        at
    };
    let mut at = range.start;
    while at < range.end {
        match bytes[at] {
            // A directive (`.b32`, `.v2`).
            b'.' => at = ident_end(bytes, at + 1),
            b'%' => {
                let end = ident_end(bytes, at + 1);
                let name = src.get(at..end).unwrap_or("");
                // `<N>`, as `generated_count` reads it from tokens.
                let mut next = end;
                let mut count = None;
                let lt = blanks(end);
                if bytes.get(lt) == Some(&b'<') {
                    let n = blanks(lt + 1);
                    if bytes.get(n).is_some_and(u8::is_ascii_digit) {
                        // Decimal digits, the usual case, read here.
                        let mut n_end = n;
                        let mut v = 0u64;
                        while let Some(d) = bytes.get(n_end).filter(|d| d.is_ascii_digit()) {
                            v = v.saturating_mul(10).saturating_add(u64::from(d - b'0'));
                            n_end += 1;
                        }
                        let mut value = Some(v);
                        // Else (octal `010`, hex, a suffix) as `int_value` reads it.
                        if (bytes[n] == b'0' && n_end - n > 1)
                            || bytes
                                .get(n_end)
                                .is_some_and(|&b| is_ident_char(b) || b == b'.')
                        {
                            n_end = lex_number(bytes, n);
                            value = src.get(n..n_end).and_then(int_value);
                        }
                        let gt = blanks(n_end);
                        if bytes.get(gt) == Some(&b'>') {
                            count = value.and_then(|v| u32::try_from(v).ok());
                            if count.is_some() {
                                next = gt + 1;
                            }
                        }
                    }
                }
                if scopes.declare_percent(name, count, depth) {
                    errors.push(declared_twice(
                        Span::new(file, at, end),
                        name,
                        count.is_some(),
                    ));
                }
                at = next;
            }
            _ => at += 1,
        }
    }
}

/// The error for a variable `name` (a parameterized `name<N>` when
/// `generated`) that its block already declares.
#[cold]
fn declared_twice(span: Span, name: &str, generated: bool) -> Diagnostic {
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

/// What a [`Branch`] is, for its errors.
fn branch_what(b: Branch<'_>) -> String {
    if b.entry {
        format!("`.branchtargets` entry `{}`", b.name.text)
    } else {
        format!("`bra` to `{}`", b.name.text)
    }
}

/// The error for a `bra` target or `.branchtargets` entry that names no
/// label in scope.
#[cold]
fn no_label(b: Branch<'_>) -> Diagnostic {
    let target = b.name;
    Diagnostic::error(
        target.span,
        format!("{}, which no label in scope names", branch_what(b)),
    )
    .with_label("no label of this name in this block or an enclosing one")
    .with_help(format!(
        "define the label (`{}:`) in this block or an enclosing one, or fix the name; a \
         label in a nested block is not visible outside it (ptxas: \"Unknown symbol '{}'\")",
        target.text, target.text
    ))
}

/// The error for a `bra` target or `.branchtargets` entry that is a name
/// of kind `kind` in scope, which it does not take.
#[cold]
fn not_a_label(b: Branch<'_>, kind: Kind) -> Diagnostic {
    let target = b.name;
    let what = match kind {
        Kind::Var => "a variable or parameter",
        Kind::Label => "a label",
        Kind::BranchTargets => "the label of a `.branchtargets` list (which `brx.idx` takes)",
        Kind::CallPrototype => "the label of a `.callprototype` (which an indirect `call` takes)",
        Kind::CallTargets => "the label of a `.calltargets` list (which an indirect `call` takes)",
    };
    let ptxas = if b.entry {
        "Illegal branch target, label expected"
    } else {
        "Label expected for argument 0 of instruction 'bra'"
    };
    Diagnostic::error(target.span, format!("{}, which is {what}", branch_what(b)))
        .with_label("a branch takes the label of an instruction")
        .with_help(format!(
            "branch to a label of an instruction (`L1: ...` then `bra L1;` or `.branchtargets \
         L1;`); ptxas refuses any other target (\"{ptxas}\")"
        ))
}

/// The first byte at or after `at` that is no blank and not in a comment.
fn significant(bytes: &[u8], mut at: usize) -> Option<usize> {
    loop {
        match bytes.get(at)? {
            &b if is_blank(b) => at += 1,
            b'/' if bytes.get(at + 1) == Some(&b'*') => {
                let close = bytes.get(at + 2..)?.windows(2).position(|w| w == b"*/")?;
                at += 2 + close + 2;
            }
            b'/' if bytes.get(at + 1) == Some(&b'/') => {
                at += bytes[at..].iter().position(|&b| b == b'\n')?;
            }
            _ => return Some(at),
        }
    }
}

/// Checks the uses of labels that [`Scopes::use_name`] listed, as ptxas
/// 13.5 does: a code label is only a branch target (never looked up, see
/// the module docs); a `.branchtargets` label only the last operand of
/// `brx.idx`; a `.callprototype` or `.calltargets` label only the last
/// operand of a `call` through a register. Any other use of a label (`mov`,
/// an address `[L1]`, an arithmetic operand, the callee of a `call`, an
/// initializer, a `.calltargets` entry) is refused.
#[cold]
#[inline(never)]
fn check_label_uses(src: &str, uses: &[(Name<'_>, Kind, Use)], errors: &mut Vec<Diagnostic>) {
    let bytes = src.as_bytes();
    for &(name, kind, at) in uses {
        let (start, end) = (name.span.start as usize, name.span.end as usize);
        let (message, ptxas) = match at {
            Use::Operand(op) => {
                let op_end = ident_end(bytes, op + 1);
                let opcode = src.get(op..op_end).unwrap_or("");
                // The last operand (the `;` follows), and not the first: a
                // top-level `,` before it, outside `( )`.
                let last = significant(bytes, end).is_some_and(|i| bytes[i] == b';');
                let mut parens = 0i32;
                let mut later = false;
                let mut address = false;
                let mut i = op_end;
                while let Some(j) = significant(bytes, i).filter(|&j| j < start) {
                    match bytes[j] {
                        b'(' => parens += 1,
                        b')' => parens -= 1,
                        b',' if parens == 0 => later = true,
                        _ => {}
                    }
                    address = bytes[j] == b'[';
                    i = j + 1;
                }
                let in_place = last && later;
                let fine = match kind {
                    Kind::BranchTargets => opcode == "brx" && in_place,
                    Kind::CallPrototype | Kind::CallTargets => opcode == "call" && in_place,
                    _ => false,
                };
                if fine {
                    continue;
                }
                let ptxas = match opcode {
                    "brx" => "Label with '.branchtargets' directive expected for argument 1 of \
                              instruction 'brx.idx'"
                        .to_string(),
                    "call" if in_place => "Call target not recognized".to_string(),
                    "call" if later => {
                        format!("Call argument '{}' has illegal state space", name.text)
                    }
                    "call" => "Illegal call target, device function expected".to_string(),
                    _ if address => format!("Illegal operand type to instruction '{opcode}'"),
                    _ => format!("Arguments mismatch for instruction '{opcode}'"),
                };
                (
                    format!("label `{}` cannot be an operand of `{opcode}`", name.text),
                    ptxas,
                )
            }
            Use::Init => (
                format!("label `{}` cannot be an initializer", name.text),
                format!("Invalid initial value symbol '{}'", name.text),
            ),
            Use::CallTargets => (
                format!("label `{}` cannot be an entry of `.calltargets`", name.text),
                "Illegal call target, device function expected".to_string(),
            ),
            Use::Guard => (
                format!("label `{}` cannot be a guard", name.text),
                "Predicate expression expected".to_string(),
            ),
        };
        let what = match kind {
            Kind::BranchTargets => format!(
                "a `.branchtargets` label is only the last operand of `brx.idx` \
                 (`brx.idx %r1, {};`)",
                name.text
            ),
            Kind::CallPrototype | Kind::CallTargets => format!(
                "a `.callprototype` or `.calltargets` label is only the last operand of a \
                 `call` through a register (`call (%r1), %rd1, (%r2), {};`)",
                name.text
            ),
            Kind::Label | Kind::Var => format!(
                "a label is only a branch target (`bra {};`) or an entry of a \
                 `.branchtargets` list (whose own label `brx.idx` takes); to take an \
                 address, name a variable or a function instead",
                name.text
            ),
        };
        errors.push(
            Diagnostic::error(name.span, message)
                .with_label("a label of this function, where ptxas expects a value")
                .with_help(format!("{what} (ptxas: \"{ptxas}\")")),
        );
    }
}

/// The end of the last token before the end of input, lexing on from
/// `prev_end` (the end of an earlier token).
#[cold]
fn last_token_end(lexer: &Lexer<'_>, mut prev_end: usize) -> usize {
    let mut ahead = lexer.ahead();
    ahead.rewind(prev_end);
    let mut toks = Vec::new();
    while ahead.lex_some(&mut toks) {
        prev_end = toks.last().map_or(prev_end, |t| t.end as usize);
        toks.clear();
    }
    prev_end
}

/// True when the tokens right after an opcode, up to the first that is not
/// a directive, hold `.sync` (`shfl.sync`, `vote.sync`).
fn synced(lexer: &Lexer<'_>, src: &str) -> bool {
    let mut ahead = lexer.ahead();
    let mut toks = Vec::new();
    let mut synced = false;
    loop {
        toks.clear();
        if !ahead.lex_some(&mut toks) {
            return synced;
        }
        for t in &toks {
            if t.kind != TokKind::Directive {
                return synced;
            }
            synced |= t.text(src) == ".sync";
        }
    }
}

/// Bytes of a function-scope `.shared x<N>` of which `used` distinct names
/// are used: `used + 1` elements of `size` bytes, each at `align` (see
/// [`SharedGenerated`]). Saturates at `u64::MAX`, which no limit allows.
fn shared_generated_bytes(size: u64, align: u32, used: usize) -> u64 {
    size.checked_next_multiple_of(u64::from(align.max(1)))
        .and_then(|stride| stride.checked_mul(used as u64))
        .and_then(|n| n.checked_add(size))
        .unwrap_or(u64::MAX)
}

/// The index of `name` among the names `prefix<count>` generates: the
/// prefix, then decimal digits for a number below `count`. Leading zeros
/// count (`x02` is `x2`), as ptxas reads them (PTX ISA 9.0, section 5.4.6).
pub(crate) fn generated_index(name: &str, prefix: &str, count: u32) -> Option<u32> {
    let digits = name.strip_prefix(prefix)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let index: u64 = digits.parse().ok()?;
    u32::try_from(index).ok().filter(|&i| i < count)
}

/// Whether the variables of `prefix<count>` go by no name: ptxas 13.5 reads
/// a name such as `a15` as the prefix `a` and 15, so when the prefix ends in
/// a digit (`a1<10>`) no name finds them, nor clashes with them.
pub(crate) fn names_nothing(prefix: &str) -> bool {
    prefix.ends_with(|c: char| c.is_ascii_digit())
}

/// Whether `prefix<count>` generates `name` as ptxas 13.5 finds a name
/// among them (a `bra` target): the prefix, then a number below `count`,
/// leading zeros allowed (`x01` is `x<4>`'s); none when the prefix
/// [names nothing](names_nothing).
pub(crate) fn generates(prefix: &str, count: u32, name: &str) -> bool {
    !names_nothing(prefix) && generated_index(name, prefix, count).is_some()
}

/// Whether ptxas 13.5 takes a variable `name` declared after `prefix<count>`
/// in the same block for one of its names ("Duplicate definition of
/// variable"): the prefix, then decimal digits whose value, read modulo
/// 2^32 (`x4294967297` repeats `x1`), is below `count`; leading zeros count
/// (`x01` repeats `x1`). Checked case by case.
fn repeats_generated(name: &str, prefix: &str, count: u32) -> bool {
    // (`a1<10>` and `a15` do not clash.)
    if names_nothing(prefix) {
        return false;
    }
    let Some(digits) = name.strip_prefix(prefix) else {
        return false;
    };
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && digits.bytes().fold(0u32, |v, d| {
            v.wrapping_mul(10).wrapping_add(u32::from(d - b'0'))
        }) < count
}

/// What [`Scopes::generated_clash`] gathers about the names of a block.
struct GeneratedCheck<'a> {
    prefix: &'a str,
    count: u32,
    /// The smallest number among its variables named `prefix` and digits.
    min: Option<u32>,
    /// Whether a name is `prefix` and a number below `count` written
    /// without a leading zero.
    named: bool,
}

impl GeneratedCheck<'_> {
    /// A variable or parameter (`var`) or a label of the block.
    fn add(&mut self, name: &str, var: bool) {
        if names_nothing(self.prefix) {
            return;
        }
        let Some(digits) = name.strip_prefix(self.prefix) else {
            return;
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return;
        }
        if var {
            let v = digits.bytes().fold(0u32, |v, d| {
                v.wrapping_mul(10).wrapping_add(u32::from(d - b'0'))
            });
            self.min = Some(self.min.map_or(v, |m| m.min(v)));
        }
        if (digits == "0" || !digits.starts_with('0'))
            && digits.parse::<u32>().is_ok_and(|i| i < self.count)
        {
            self.named = true;
        }
    }
}

/// `<N>` at the cursor (after a declared name): `N`, consuming it.
fn generated_count(c: &mut Cursor<'_, '_>) -> Option<u32> {
    let (lt, n, gt) = (c.peek()?, c.peek_at(1)?, c.peek_at(2)?);
    if !lt.is(b'<') || n.kind != TokKind::Number || !gt.is(b'>') {
        return None;
    }
    let n = u32::try_from(int_value(c.text(n))?).ok()?;
    c.pos += 3;
    Some(n)
}

/// Where a body's declarations and references are recorded.
struct Decls<'a, 'src> {
    scopes: &'a mut Scopes<'src>,
    /// The depth of the block the statement is in.
    depth: u32,
    refs: &'a mut Vec<Name<'src>>,
    shared: &'a mut Vec<(u64, u32)>,
}

/// A statement that starts with a directive: declarations, `.loc`,
/// `.pragma`, `.callprototype`, `.calltargets`.
fn statement_directive<'src>(
    c: &mut Cursor<'_, 'src>,
    d: &'src str,
    decls: Decls<'_, 'src>,
    locs: &mut Vec<LocFix>,
) {
    let Decls {
        scopes,
        depth,
        refs,
        shared,
    } = decls;
    c.pos += 1;
    match d {
        ".loc" => {
            let mut fix = LocFix {
                file_index: [None, None],
                extra: None,
            };
            if let Some(t) = c
                .peek()
                .filter(|t| t.kind == TokKind::Number && !t.nl_before)
            {
                if let Some(v) = int_value(c.text(t)) {
                    fix.file_index[0] = Some((c.span(t), v as u32));
                }
            }
            let mut extra_start = None;
            let mut end = 0;
            while let Some(t) = c.peek() {
                if t.nl_before || t.is(b'}') {
                    break;
                }
                c.pos += 1;
                if t.is(b';') {
                    break;
                }
                end = t.end;
                if t.is(b',') && extra_start.is_none() {
                    extra_start = Some(t.start);
                }
                if t.kind == TokKind::Ident && c.text(t) == "inlined_at" {
                    if let Some(n) = c.peek().filter(|n| n.kind == TokKind::Number) {
                        if let Some(v) = int_value(c.text(n)) {
                            fix.file_index[1] = Some((c.span(n), v as u32));
                        }
                    }
                }
            }
            if let Some(s) = extra_start {
                fix.extra = Some(Span {
                    file: c.file,
                    start: s,
                    end,
                });
            }
            locs.push(fix);
        }
        ".shared" => {
            for Declared {
                var: v,
                refs: init_refs,
                count,
            } in parse_var(c, Space::Shared, Linkage::Local)
            {
                for n in init_refs {
                    scopes.use_name(n, refs, Use::Init);
                }
                // An oversized array has been reported by `parse_var`.
                let (size, align) = (v.size_bytes().unwrap_or(u64::MAX), v.align_bytes());
                let twice = match count {
                    None => {
                        shared.push((size, align));
                        if v.name.text.starts_with('%') {
                            scopes.declare_percent(v.name.text, None, depth)
                        } else {
                            scopes.declare_var(v.name.text, depth)
                        }
                    }
                    // Sized when the scan ends, by the names used.
                    Some(n) => {
                        let index = scopes.shared_generated.len();
                        scopes.shared_generated.push(SharedGenerated {
                            slot: shared.len(),
                            size,
                            align,
                            used: Vec::new(),
                        });
                        shared.push((size, align));
                        if v.name.text.starts_with('%') {
                            scopes.declare_percent(v.name.text, Some(n), depth)
                        } else {
                            scopes.declare_generated(v.name.text, n, depth, Some(index))
                        }
                    }
                };
                if twice {
                    c.errors
                        .push(declared_twice(v.name.span, v.name.text, count.is_some()));
                }
            }
        }
        ".reg" | ".local" | ".param" | ".const" | ".global" | ".tex" | ".sreg" => {
            // Declarations: every identifier before `=` is declared here.
            let mut in_init = false;
            while let Some(t) = c.peek() {
                if t.is(b'}') && !in_init {
                    break;
                }
                c.pos += 1;
                if t.is(b';') {
                    break;
                }
                if t.is(b'=') {
                    in_init = true;
                }
                if t.kind == TokKind::Ident {
                    let text = c.text(t);
                    if in_init {
                        scopes.use_name(c.name(t), refs, Use::Init);
                    } else {
                        let count = generated_count(c);
                        // `%`-names are never references: they are tracked
                        // apart, only for the duplicate check.
                        let twice = match (text.starts_with('%'), count) {
                            (true, count) => scopes.declare_percent(text, count, depth),
                            (false, Some(n)) => scopes.declare_generated(text, n, depth, None),
                            (false, None) => scopes.declare_var(text, depth),
                        };
                        if twice {
                            c.errors
                                .push(declared_twice(c.span(t), text, count.is_some()));
                        }
                    }
                }
            }
        }
        ".extern" | ".visible" | ".weak" | ".common" => {
            // ptxas accepts no linkage directive inside a function body; a
            // dynamic shared-memory array belongs at module scope.
            let span = c.span(c.toks[c.pos - 1]);
            c.errors.push(
                Diagnostic::error(span, format!("`{d}` is not allowed inside a function body"))
                    .with_help("declare it at module scope, e.g. `.extern .shared .align 16 .b8 name[];` before the function"),
            );
            while let Some(t) = c.peek() {
                if t.is(b'}') {
                    break;
                }
                c.pos += 1;
                if t.is(b';') {
                    break;
                }
                if t.kind == TokKind::Ident {
                    scopes.declare(c.text(t), depth, Kind::Var);
                }
            }
        }
        ".calltargets" => {
            while let Some(t) = c.peek() {
                if t.is(b'}') {
                    break;
                }
                c.pos += 1;
                if t.is(b';') {
                    break;
                }
                if t.kind == TokKind::Ident {
                    scopes.use_name(c.name(t), refs, Use::CallTargets);
                }
            }
        }
        ".branchtargets" => {
            // Labels in scope, looked for as `bra` targets are; the list's
            // own label is one while the list is read (ptxas takes it).
            let own = std::mem::take(&mut scopes.own_label);
            while let Some(t) = c.peek() {
                if t.is(b'}') {
                    break;
                }
                c.pos += 1;
                if t.is(b';') {
                    break;
                }
                if t.kind == TokKind::Ident && c.text(t) != own {
                    scopes.branches.push(Branch {
                        name: c.name(t),
                        entry: true,
                        nested: false,
                    });
                }
            }
        }
        _ => {
            // `.pragma`, `.callprototype`, `.maxnreg`, ...: nothing to record.
            while let Some(t) = c.peek() {
                if t.is(b'}') {
                    break;
                }
                c.pos += 1;
                if t.is(b';') {
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ast::ItemKind;
    use crate::diagnostic::FileId;
    use crate::parse::parse;

    const HEAD: &str = ".version 7.8\n.target sm_90\n.address_size 64\n";

    /// The references of the module's last item (a function), each as
    /// `name@line`.
    fn refs(body: &str) -> Vec<String> {
        refs_checked(body, false)
    }

    /// [`refs`] where `body` may use labels as operands (refused, see
    /// [`super::check_label_uses`]), to show what a label hides.
    fn refs_using_labels(body: &str) -> Vec<String> {
        refs_checked(body, true)
    }

    fn refs_checked(body: &str, label_uses: bool) -> Vec<String> {
        let src = format!("{HEAD}.global .u32 t2;\n.global .u32 t1;\n{body}");
        let m = parse(FileId(0), &src);
        // A forward `bra t2` here names the module's `t2` for ptxas (refused,
        // see `crate::labels`); these tests look at the references only.
        let unexpected = |e: &&crate::diagnostic::Diagnostic| {
            let label_operand =
                label_uses && e.message.starts_with("label `") && e.message.contains("operand");
            !label_operand && !e.message.ends_with("not the label declared later")
        };
        assert!(!m.errors.iter().any(|e| unexpected(&e)), "{:?}", m.errors);
        m.item_refs(m.items.last().unwrap())
            .iter()
            .map(|n| {
                let line = crate::diagnostic::line_of(&src, n.span.start as usize);
                format!("{}@{line}", n.text)
            })
            .collect()
    }

    /// The function-scope `.shared` allocations of the module's last item.
    fn shared(body: &str) -> Vec<(u64, u32)> {
        let src = format!("{HEAD}{body}");
        let m = parse(FileId(0), &src);
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        match &m.items.last().unwrap().kind {
            ItemKind::Function(f) => f.body.as_ref().unwrap().shared.clone(),
            _ => panic!("not a function"),
        }
    }

    #[test]
    fn a_nested_declaration_hides_a_module_symbol_only_in_its_block() {
        // Lines: 6 `.entry`, 8 before the block, 10 in the block before the
        // declaration, 12 after it, 14 after the block.
        let body = ".visible .entry k()\n{\n\
                    ld.global.u32 %r1, [t2];\n{\n\
                    ld.global.u32 %r2, [t2];\n.reg .b32 t2;\n\
                    mov.b32 t2, %r1;\n}\n\
                    st.global.u32 [t2], %r1;\nret;\n}\n";
        assert_eq!(refs(body), ["t2@8", "t2@10", "t2@14"]);
        // The same for the names `t<3>` generates, `t02` included.
        let body = ".visible .entry k()\n{\n\
                    ld.global.u32 %r1, [t2];\n{\n\
                    ld.global.u32 %r2, [t1];\n.reg .b32 t<3>;\n\
                    mov.b32 t02, %r1;\nadd.u32 t1, t2, 1;\n}\n\
                    st.global.u32 [t2], %r1;\nst.global.u32 [t1], %r1;\nret;\n}\n";
        assert_eq!(refs(body), ["t2@8", "t1@10", "t2@15", "t1@16"]);
    }

    #[test]
    fn module_symbols_named_with_a_percent_are_references_unless_a_register_hides_them() {
        // `%m<4>` declares `%m0` .. `%m3` at module scope; the nested block's `%m<2>`
        // hides `%m0` and `%m1` there; `%tid` and `%rd1` are registers.
        let body = ".global .u32 %m<4>;\n.visible .entry k()\n{\n\
                    mov.u64 %rd1, %m1;\n{\n.reg .b32 %m<2>;\nmov.u32 %m1, 1;\n\
                    mov.u64 %rd1, %m3;\n}\nld.global.u32 %r1, [%m2+4];\n\
                    mov.u32 %r1, %tid.x;\nret;\n}\n";
        assert_eq!(refs(body), ["%m1@9", "%m3@13", "%m2@15"]);
    }

    #[test]
    fn a_declaration_at_function_level_starts_where_it_is_written() {
        // ptxas binds the first `t2` to the module variable, the second to the register.
        let body = ".visible .entry k()\n{\n\
                    mov.u64 %rd1, t2;\n.reg .b32 t2;\nmov.b32 t2, 1;\nret;\n}\n";
        assert_eq!(refs(body), ["t2@8"]);
    }

    #[test]
    fn inner_declarations_shadow_outer_ones_until_their_block_ends() {
        // Outer register `t2`; an inner block re-declares it; both hide the
        // module symbol. A parameter is in scope everywhere.
        let body = ".visible .entry k(.param .u64 t1)\n{\n\
                    .reg .b64 t2;\n{\n.reg .b32 t2;\nmov.b32 t2, 1;\n}\n\
                    mov.b64 t2, 1;\n{\nld.param.u64 %rd1, [t1];\n}\nret;\n}\n";
        assert_eq!(refs(body), Vec::<String>::new());
        // A nested block's `.param`s (rustc's call sequences) end with it.
        let body = ".func f(.param .b32 x)\n{\nret;\n}\n\
                    .visible .entry k()\n{\n{\n.param .b32 t1;\nst.param.b32 [t1], 1;\n\
                    call.uni f, (t1);\n}\nld.global.u32 %r1, [t1];\nret;\n}\n";
        assert_eq!(refs(body), ["f@15", "t1@17"]);
    }

    #[test]
    fn qualifiers_after_double_colons_and_the_sink_are_no_symbols() {
        // `cta`, `complete_tx` and `bytes` are parts of the opcode, even
        // where a module symbol has their name; `_` stays a use (no
        // identifier is `_`, so it never matches a symbol).
        let body = ".global .u32 cta;\n.global .u32 bytes;\n.visible .entry k()\n{\n\
                    mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], %r2;\n\
                    cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 16, [%r2];\n\
                    ld.global.u32 %r3, [cta];\nret;\n}\n";
        assert_eq!(refs(body), ["_@10", "cta@12"]);
    }

    #[test]
    fn the_byte_scan_reads_tokens_across_blanks_and_comments() {
        // (Labels among operands are refused, but what they hide shows.)
        // A label's `:` and a qualifier's `::` may stand apart from their
        // names; punctuation between `::` and a name ends the qualifier; a
        // guard may be spaced out. Same results as the token-based scan.
        let body = ".global .u32 cta;\n.visible .entry k()\n{\n\
                    t1 /* label */ :\n\
                    mbarrier.arrive.shared:: /* c */ cta.b64 _, [%r1];\n\
                    ld.shared:: ,t2 %r1;\n@ ! %p1 bra t1;\nmov.u64 %rd1, t1;\nret;\n}\n";
        assert_eq!(refs_using_labels(body), ["_@10", "t2@11"]);
    }

    #[test]
    fn an_unterminated_body_ends_at_its_last_token_after_the_lexer_errors() {
        let src =
            format!("{HEAD}.visible .entry k()\n{{\nmov.u32 %r1, \"open;\nret;\n// trailing\n");
        let m = parse(FileId(0), &src);
        let messages: Vec<&str> = m.errors.iter().map(|e| e.message.as_str()).collect();
        assert_eq!(
            messages,
            ["unterminated string literal", "unterminated function body"]
        );
        let end = m.items[0].span.end as usize;
        assert_eq!(&src[end - 4..end], "ret;");
    }

    #[test]
    fn the_fast_operand_scan_finds_names_wherever_they_stand() {
        // A name at every offset across the 16-byte chunks, after registers
        // and numbers; glued to a number or a register it is no name.
        for pad in 0..40 {
            let ops = format!("%r1,{}%rd22, 0f3F800000, 12t1, %t1, t2", " ".repeat(pad));
            let body = format!(".visible .entry k()\n{{\nadd.lo.u32 {ops};\nret;\n}}\n");
            assert_eq!(refs(&body), ["t2@8"], "pad {pad}");
        }
        // A statement that ends the input, a comment, a `::` or a
        // `bra` among the operands.
        let body = ".visible .entry k()\n{\nmov.u32 %r1, %r2 /* t1 */, t2;\n\
                    ld.shared::cta.u32 %r1, [%r2+4], t2;\n@%p1 bra.uni t1;\nt1: ret;\n}\n";
        assert_eq!(refs(body), ["t2@8", "t2@9"]);
    }

    /// Every corpus file and the bench's generated modules parse to the same items,
    /// flags and errors through the AVX2 scan and through the portable one (on an AVX2
    /// machine the latter would otherwise never see whole bodies).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx2_and_portable_body_scans_agree_on_whole_modules() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus/ptx-wild");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("cannot read {dir}: {e}"))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
            .map(|p| std::fs::read_to_string(p).unwrap())
            .collect();
        assert!(files.len() >= 30, "the corpus has {} files", files.len());
        files.push(format!(
            "{HEAD}.visible .entry k()\n{{\nadd.s32 %r1, %r1, 1;\nt1:\n@!%p1 bra t2;\n\
             mov.u64 %rd1, t2;\nt2 :\nadd.rn.f64 %fd1, %fd2, %fd3;\nmov.u64 %rd1, t1;\nret;\n}}\n"
        ));
        for src in &files {
            let scan = |portable: bool| {
                crate::scan32::imp_no_avx2(portable);
                let m = parse(FileId(0), src);
                crate::scan32::imp_no_avx2(false);
                format!("{:?}", m)
            };
            assert!(scan(false) == scan(true), "the scans differ on a module");
        }
    }

    #[test]
    fn statement_starts_are_the_first_non_blank_bytes() {
        // Every text of up to 5 bytes over blanks, line feeds, tabs and
        // others, from every position (the byte loop is the reference).
        let alphabet = [b'\n', b'\t', b' ', b'\r', b'\x0c', b'a', b';', b'$'];
        for len in 0..=5u32 {
            for code in 0..alphabet.len().pow(len) {
                let text: Vec<u8> = (0..len)
                    .map(|i| alphabet[code / alphabet.len().pow(i) % alphabet.len()])
                    .collect();
                for at in 0..=text.len() {
                    let mut want = at;
                    while text
                        .get(want)
                        .is_some_and(|&b| b == b' ' || (9..=13).contains(&b))
                    {
                        want += 1;
                    }
                    assert_eq!(
                        super::statement_start(&text, at),
                        want,
                        "{text:?} from {at}"
                    );
                    assert_eq!(
                        super::first_non_blank(&text, at),
                        want,
                        "{text:?} from {at}"
                    );
                }
            }
        }
    }

    #[test]
    fn runs_of_plain_statements_keep_labels_guards_and_scopes() {
        // (Labels among operands are refused, but what they hide shows.)
        // After a plain statement: labels (also spaced, and one hiding a
        // module symbol from there on), guards, a `bra` to a module
        // symbol's name, blanks of every kind, a reference after a label.
        let body = ".visible .entry k()\n{\nadd.s32 %r1, %r1, 1;\n\
                    t1:\n@!%p1 bra t2;\n \t\r\x0c@%p1 add.s32 %r1, %r1, 2;\n\
                    mov.u64 %rd1, t2;\nt2 :\nadd.s32 %r1, %r1, 3;\nmov.u64 %rd1, t2;\n\
                    mov.u64 %rd1, t1;\nret;\n}\n";
        assert_eq!(refs_using_labels(body), ["t2@12"]);
    }

    #[test]
    fn opcodes_and_qualifiers_are_told_apart_as_words() {
        use super::{word, Opcode};
        let b = b"bra.uni sured tex texture shfl.sync vote brax .f64";
        assert_eq!(Opcode::of(b, 0, 3), Opcode::Bra);
        assert_eq!(Opcode::of(b, 8, 13), Opcode::Texture);
        assert_eq!(Opcode::of(b, 14, 17), Opcode::Texture);
        assert_eq!(Opcode::of(b, 18, 25), Opcode::Other); // `texture`: too long
        assert_eq!(Opcode::of(b, 26, 30), Opcode::Warp);
        assert_eq!(Opcode::of(b, 36, 40), Opcode::Warp);
        assert_eq!(Opcode::of(b, 41, 45), Opcode::Other); // `brax`
        let words = b"tld4 txq suld sust suq bar mad shl setp st ld mov ret call b s vot";
        let kinds: Vec<Opcode> = words
            .split(|&c| c == b' ')
            .map(|w| Opcode::of(w, 0, w.len()))
            .collect();
        assert_eq!(&kinds[..5], [Opcode::Texture; 5]);
        assert!(kinds[5..].iter().all(|&k| k == Opcode::Other));
        // Near the end of the input (fewer than 8 bytes left).
        assert_eq!(word(b, 46, 50), word(b".f64", 0, 4));
        assert_eq!(Opcode::of(b"bra", 0, 3), Opcode::Bra);
        // The body's flags, through the fast operand pass and without it.
        let src = format!(
            "{HEAD}.visible .entry k()\n{{\nadd.rn.f64 %fd1, %fd2, %fd3;\n\
             tex.2d.v4.f32.s32 {{%f1, %f2, %f3, %f4}}, [t, {{%r1, %r2}}];\n\
             shfl.up.b32 %r1, %r2, 1, 0;\nret;\n}}\n"
        );
        let m = parse(FileId(0), &src);
        let ItemKind::Function(f) = &m.items[0].kind else {
            panic!("not a function")
        };
        let body = f.body.as_ref().unwrap();
        assert!(body.f64_op && body.texture_op && body.unsynced_warp_op.is_some());
    }

    #[test]
    fn listed_labels_hide_module_symbols_as_declared_names_do() {
        // (Labels among operands are refused, but what they hide shows.)
        // Few labels (searched in the list) and many (moved into the map):
        // a label hides the module symbol from its line on; a nested block
        // that declares the same name hides it until it ends.
        for labels in [3, 40] {
            let mut body = String::from(".visible .entry k(.param .u64 p1)\n{\n");
            for i in 0..labels {
                body.push_str(&format!("L{i}:\nadd.s32 %r1, %r1, 1;\n"));
            }
            body.push_str(
                "mov.u64 %rd1, t2;\nt2:\nmov.u64 %rd1, t2;\n{\n.reg .b64 t2;\n\
                 mov.b64 t2, 1;\n}\nmov.u64 %rd1, t2;\nt1:\nmov.u64 %rd1, t1;\nret;\n}\n",
            );
            let line = 8 + 2 * labels;
            assert_eq!(
                refs_using_labels(&body),
                [format!("t2@{line}")],
                "{labels} labels"
            );
        }
    }

    /// The messages of parsing `body` after [`HEAD`], with the line of each.
    fn errors(body: &str) -> Vec<String> {
        let src = format!("{HEAD}{body}");
        parse(FileId(0), &src)
            .errors
            .iter()
            .map(|e| {
                let at = e.primary.as_ref().map_or(0, |l| l.span.start as usize);
                let line = crate::diagnostic::line_of(&src, at);
                format!("{}@{line}", e.message)
            })
            .collect()
    }

    #[test]
    fn a_name_defined_twice_in_one_block_is_refused_as_ptxas_does() {
        // ptxas 13.5: "Duplicate definition of label" for a label repeated in its
        // block, or naming a parameter (outermost block) or a variable of its block;
        // the same label in sibling or nested blocks is fine. Both scans, few labels
        // (listed) and many (in the map).
        for portable in [false, true] {
            crate::scan32::imp_no_avx2(portable);
            for filler in [0, 40] {
                let pad: String = (0..filler).map(|i| format!("F{i}:\nret;\n")).collect();
                let line = 6 + 2 * filler;
                let cases: [(String, Vec<String>); 6] = [
                    (format!("{pad}L1:\nret;\nL1:\nret;\n"), vec![format!("`L1` is already defined in this block@{}", line + 2)]),
                    (format!("{pad}L1: ret; L1 : ret;\n"), vec![format!("`L1` is already defined in this block@{line}")]),
                    (format!("{pad}p:\nret;\n"), vec![format!("`p` is already defined in this block@{line}")]),
                    (format!("{pad}.reg .b32 x;\nx:\nret;\n"), vec![format!("`x` is already defined in this block@{}", line + 1)]),
                    (format!("{pad}{{\nL1:\nret;\n}}\n{{\nL1:\nret;\n}}\nL1:\n{{\np:\nL1:\nret;\n}}\nret;\n"), vec![]),
                    (format!("{pad}{{\nL2:\nret;\nL2:\nret;\n}}\n"), vec![format!("`L2` is already defined in this block@{}", line + 3)]),
                ];
                for (body, want) in cases {
                    let src = format!(".visible .entry k(.param .u32 p)\n{{\n{body}}}\n");
                    assert_eq!(errors(&src), want, "{body:?}, portable {portable}");
                }
            }
            crate::scan32::imp_no_avx2(false);
        }
    }

    /// The errors of a kernel `k(.param .u32 p)` with `body`, through the
    /// AVX2 scan and the portable one (which must agree), with the labels
    /// listed (none before) and in the map (40 before).
    fn kernel_errors(body: &str) -> Vec<String> {
        let mut out = Vec::new();
        // 40 labels before the body keep the listed labels past their limit,
        // 60 the table of outer labels past its own.
        for filler in [0, 40, 60] {
            let pad: String = (0..filler).map(|i| format!("F{i}:\n")).collect();
            let src = format!(
                ".func (.param .b32 r) f(.param .b32 a)\n{{\nret;\n}}\n\
                 .visible .entry k(.param .u32 p)\n{{\n{pad}{body}ret;\n}}\n"
            );
            let mut both = Vec::new();
            for portable in [false, true] {
                crate::scan32::imp_no_avx2(portable);
                both.push(errors(&src));
                crate::scan32::imp_no_avx2(false);
            }
            assert_eq!(both[0], both[1], "the scans differ on {body:?}");
            // Lines are counted from the first line of `body`.
            let first = 10 + filler;
            out.push(
                both.swap_remove(0)
                    .into_iter()
                    .map(|e| {
                        let (m, line) = e.rsplit_once('@').unwrap();
                        format!("{m}@{}", line.parse::<usize>().unwrap() + 1 - first)
                    })
                    .collect(),
            );
        }
        assert!(
            out[0] == out[1] && out[1] == out[2],
            "listed, mapped and overflowing labels differ on {body:?}: {out:?}"
        );
        out.swap_remove(0)
    }

    /// Each body has no error in [`kernel_errors`] (ptxas accepts each).
    fn assert_accepted(bodies: &[&str]) {
        for body in bodies {
            assert_eq!(kernel_errors(body), Vec::<String>::new(), "{body:?}");
        }
    }

    /// Each body has exactly the one error given, `message@line`, in
    /// [`kernel_errors`].
    fn assert_refused(cases: &[(&str, String)]) {
        for (body, want) in cases {
            assert_eq!(kernel_errors(body), [want.as_str()], "{body:?}");
        }
    }

    /// The error for a `bra` to `name` at `line` that no label in scope names.
    fn no_label(name: &str, line: usize) -> String {
        format!("`bra` to `{name}`, which no label in scope names@{line}")
    }

    /// The error for a `bra` to `name` at `line` that names a variable or
    /// parameter.
    fn not_label(name: &str, line: usize) -> String {
        format!("`bra` to `{name}`, which is a variable or parameter@{line}")
    }

    #[test]
    fn a_label_is_refused_where_ptxas_takes_no_label() {
        // ptxas 13.5: "Arguments mismatch for instruction 'mov'" (also `add`,
        // `setp`, `cvta`), "Illegal to use symbol 'L1' of type unexpected as
        // address operand" (`ld`, `st`), "Illegal call target, device function
        // expected" (a label as the callee, or in `.calltargets`), "Call target
        // not recognized" (a code or `.branchtargets` label as the prototype),
        // "Label with '.branchtargets' directive expected for argument 1 of
        // instruction 'brx.idx'", "Invalid initial value symbol 'L1'".
        let cases: &[(&str, &str)] = &[
            ("L1:\nmov.u64 %rd1, L1;\n", "label `L1` cannot be an operand of `mov`@2"),
            ("mov.u64 %rd1, %rd2;\nL1:\nadd.s32 %r1, L1, 1;\n", "label `L1` cannot be an operand of `add`@3"),
            ("L1:\nld.u32 %r1, [L1+4];\n", "label `L1` cannot be an operand of `ld`@2"),
            ("L1:\n@%p1 st.global.u32 [L1], %r1;\n", "label `L1` cannot be an operand of `st`@2"),
            ("L1:\ncvta.global.u64 %rd1, L1;\n", "label `L1` cannot be an operand of `cvta`@2"),
            // Token by token: a comment, more than four names.
            ("L1:\nmov.u64 %rd1, /* c */ L1;\n", "label `L1` cannot be an operand of `mov`@2"),
            ("L1:\nmov.u64 %rd1, %rd2, %rd3, %rd4, %rd5, p, p, p, p, L1;\n", "label `L1` cannot be an operand of `mov`@2"),
            ("{\nL1:\nsetp.eq.u64 %p1, L1, 0;\n}\n", "label `L1` cannot be an operand of `setp`@3"),
            ("pr: .callprototype _ ();\nmov.u64 %rd1, pr;\n", "label `pr` cannot be an operand of `mov`@2"),
            ("ts: .branchtargets L1;\nmov.u64 %rd1, ts;\nL1:\n", "label `ts` cannot be an operand of `mov`@2"),
            ("L1:\n{\n.param .b32 a;\n.param .b32 r;\ncall (r), %rd1, (a), L1;\n}\n", "label `L1` cannot be an operand of `call`@5"),
            ("ts: .branchtargets L1;\nL1:\n{\n.param .b32 a;\n.param .b32 r;\ncall (r), %rd1, (a), ts;\n}\n", "label `ts` cannot be an operand of `call`@6"),
            ("pr: .callprototype _ ();\ncall pr;\n", "label `pr` cannot be an operand of `call`@2"),
            ("pr: .callprototype (.param .b32 _) _ (.param .b32 _);\n{\n.param .b32 r;\ncall (r), %rd1, (pr), pr;\n}\n", "label `pr` cannot be an operand of `call`@4"),
            ("pr: .callprototype _ ();\nbrx.idx %r1, pr;\n", "label `pr` cannot be an operand of `brx`@2"),
            ("ct: .calltargets f;\nbrx.idx %r1, ct;\n", "label `ct` cannot be an operand of `brx`@2"),
            ("L1:\nbrx.idx %r1, L1;\n", "label `L1` cannot be an operand of `brx`@2"),
            ("L1:\nct: .calltargets f, L1;\n", "label `L1` cannot be an entry of `.calltargets`@2"),
            ("L1:\n.reg .b64 x = L1;\n", "label `L1` cannot be an initializer@2"),
        ];
        for &(body, want) in cases {
            assert_eq!(kernel_errors(body), [want], "{body:?}");
        }
    }

    /// Bodies with a branch to no label in scope, and their one error, for
    /// [`a_branch_to_no_label_in_scope_is_refused_as_ptxas_does`].
    fn no_label_cases() -> Vec<(&'static str, String)> {
        let none = |at: usize| no_label("L1", at);
        let var = |at: usize| not_label("L1", at);
        vec![
            ("@%p1 bra L1;\n", none(1)),
            ("bra.uni L1;\nL2:\n", none(1)),
            ("@%p1 bra L1;\n{\nL1:\n}\n", none(1)),
            ("{\nL1:\n}\n{\n@%p1 bra L1;\n}\n", none(5)),
            ("{\n{\nL1:\n}\nbra L1;\n}\n", none(5)),
            ("mov.u32 %r1, 1;\n@%p1 bra\n  L1\n;\n", none(3)),
            (".reg .b32 L1;\n@%p1 bra L1;\n", var(2)),
            (".reg .b32 L1;\n{\nL1:\n}\n@%p1 bra L1;\n", var(5)),
            ("{\n.reg .b32 L1;\n@%p1 bra L1;\n}\nL1:\n", var(3)),
            (
                "L1: .branchtargets L2;\nL2:\n@%p1 bra L1;\n",
                "`bra` to `L1`, which is the label of a `.branchtargets` list (which \
             `brx.idx` takes)@3"
                    .to_string(),
            ),
            (
                "L1:\n@L1 bra L1;\n",
                "label `L1` cannot be a guard@2".to_string(),
            ),
            // `.branchtargets` entries: "Unknown symbol", "Illegal branch
            // target, label expected".
            (
                "ts: .branchtargets L1, L9;\nbrx.idx %r1, ts;\nL1:\n",
                "`.branchtargets` entry `L9`, which no label in scope names@1".to_string(),
            ),
            (
                "ts: .branchtargets L1;\nbrx.idx %r1, ts;\n{\nL1:\n}\n",
                "`.branchtargets` entry `L1`, which no label in scope names@1".to_string(),
            ),
            (
                ".reg .b32 v;\nts: .branchtargets L1, v;\nbrx.idx %r1, ts;\nL1:\n",
                "`.branchtargets` entry `v`, which is a variable or parameter@2".to_string(),
            ),
        ]
    }

    #[test]
    fn a_branch_to_no_label_in_scope_is_refused_as_ptxas_does() {
        // ptxas 13.5: "Unknown symbol 'L1'" for a name no label in scope
        // has (none at all, a nested block's seen from outside it, a sibling
        // block's, a function's), "Label expected for argument 0 of
        // instruction 'bra'" for a variable, a parameter or a label of a
        // `.branchtargets` list (an inner variable hides the outer label),
        // "Predicate expression expected" for a label as a guard.
        assert_refused(&no_label_cases());
        // A parameter, and a module function.
        let e = errors(".visible .entry k(.param .u32 L1)\n{\nbra L1;\n}\n");
        assert_eq!(e, ["`bra` to `L1`, which is a variable or parameter@6"]);
        let e = errors(".func f()\n{\nret;\n}\n.visible .entry k()\n{\nbra f;\n}\n");
        assert_eq!(e, ["`bra` to `f`, which no label in scope names@10"]);
    }

    #[test]
    fn a_block_with_many_branches_and_labels_gets_the_same_verdicts() {
        // Past 4096 branch-declaration pairs in one nested block, the block's
        // declarations are found by name instead of searched for each
        // branch (80 k of each took seconds). The cases of the two tests
        // around this one that have a nested block, their innermost block
        // opened with 70 forward branches and their labels, must give the
        // same errors (lines aside).
        // (And a label declared twice in a nested block.)
        let extra = ["{\nbra L1;\n}\nL1:\n{\nL1:\nbra L1;\nL1:\n}\n"];
        let refused = no_label_cases().into_iter().chain(looked_up_refused());
        let bodies: Vec<&str> = refused
            .map(|(body, _)| body)
            .chain(LOOKED_UP_ACCEPTED.iter().copied())
            .chain(extra)
            .filter(|body| body.contains("{\n"))
            .collect();
        let pad: String = (0..70)
            .map(|i| format!("@%p1 bra P{i};\nP{i}:\n"))
            .collect();
        let messages = |body: &str| -> Vec<String> {
            kernel_errors(body)
                .into_iter()
                .map(|e| e.rsplit_once('@').unwrap().0.to_string())
                .collect()
        };
        for body in bodies {
            let at = body.rfind("{\n").unwrap() + 2;
            let padded = format!("{}{pad}{}", &body[..at], &body[at..]);
            assert_eq!(messages(&padded), messages(body), "{body:?}");
        }
    }

    /// Bodies ptxas 13.5 accepts, for
    /// [`a_branch_target_is_looked_up_at_the_branch_and_when_its_block_closes`].
    const LOOKED_UP_ACCEPTED: &[&str] = &[
        "L1:\n{\n{\n@%p1 bra L1;\n}\n.reg .b32 L1;\n}\n",
        "L1:\n{\n{\n{\nbra L1;\n}\n}\n.reg .b32 L1;\n}\n",
        "L1:\n{\n{\nts: .branchtargets L1;\nbrx.idx %r1, ts;\n}\n.reg .b32 L1;\n}\n",
        "{\np:\nbra p;\n}\n",
        ".reg .b32 %x;\n{\n%x:\nbra %x;\n}\n",
        "%x:\n{\n{\nbra %x;\n}\n.reg .b32 %x;\n}\n",
        "{\n.reg .b32 %x;\n}\nbra %x;\n%x:\n",
        "ts: .branchtargets L1, ts;\nbrx.idx %r1, ts;\nL1:\n",
    ];

    /// Bodies ptxas 13.5 refuses, and their one error, for
    /// [`a_branch_target_is_looked_up_at_the_branch_and_when_its_block_closes`].
    fn looked_up_refused() -> Vec<(&'static str, String)> {
        let var = not_label;
        let bt = ", which is the label of a `.branchtargets` list (which `brx.idx` takes)@";
        vec![
            (".reg .b32 L1;\n{\nbra L1;\nL1:\n}\n", var("L1", 3)),
            ("{\nbra p;\np:\n}\n", var("p", 2)),
            (
                ".reg .b32 L1;\n{\n{\n@%p1 bra L1;\n}\nL1:\n}\n",
                var("L1", 4),
            ),
            (
                "L1:\n{\n{\nbra L1;\n}\n.reg .b32 L1;\nbra L1;\n}\n",
                var("L1", 7),
            ),
            (
                "L1: .branchtargets L2;\nL2:\n{\nbra L1;\nL1:\n}\n",
                format!("`bra` to `L1`{bt}4"),
            ),
            (
                ".reg .b32 L1;\n{\nts: .branchtargets L1;\nbrx.idx %r1, ts;\nL1:\n}\n",
                "`.branchtargets` entry `L1`, which is a variable or parameter@3".to_string(),
            ),
            (
                "ta: .branchtargets L1;\ntb: .branchtargets ta;\nbrx.idx %r1, tb;\nL1:\n",
                format!("`.branchtargets` entry `ta`{bt}2"),
            ),
            (
                "tb: .branchtargets ta;\nbrx.idx %r1, tb;\nta: .branchtargets L1;\nL1:\n",
                format!("`.branchtargets` entry `ta`{bt}1"),
            ),
            (
                "pr: .callprototype _ ();\nts: .branchtargets pr;\nbrx.idx %r1, ts;\n",
                "`.branchtargets` entry `pr`, which is the label of a `.callprototype` (which \
             an indirect `call` takes)@2"
                    .to_string(),
            ),
            ("%x:\n{\n.reg .b32 %x;\nbra %x;\n}\n", var("%x", 4)),
            (".reg .b32 %x;\n{\nbra %x;\n%x:\n}\n", var("%x", 3)),
            ("%x:\n{\nbra %x;\n.reg .b32 %x;\n}\n", var("%x", 3)),
        ]
    }

    #[test]
    fn a_branch_target_is_looked_up_at_the_branch_and_when_its_block_closes() {
        // ptxas 13.5 looks a `bra` target or `.branchtargets` entry up at
        // the branch (a variable, parameter or `.branchtargets` label in
        // scope there is refused, even if the block declares a label of that
        // name later) and again when the branch's block closes, as declared
        // then: a label of an enclosing block is found, even if an enclosing
        // block declares a variable of that name after the nested block
        // (accepted by ptxas, as each case here). `%` variables hide `%`
        // labels as others do.
        assert_accepted(LOOKED_UP_ACCEPTED);
        // Refused by ptxas 13.5 at the line given: "Label expected for
        // argument 0 of instruction 'bra'" (or "... for forward reference"),
        // "Illegal branch target, label expected" for an entry (a
        // `.branchtargets` or `.callprototype` label too, but for the list's
        // own label).
        assert_refused(&looked_up_refused());
    }

    #[test]
    fn a_branch_target_that_an_x_n_generates_is_found_as_ptxas_finds_it() {
        // ptxas 13.5 takes the register an `x<N>` (or `%x<N>`) in scope at
        // the branch generates, over a label of its block or an enclosing
        // one ("Label expected"; `x01` is `x<4>`'s, `a15` not `a1<10>`'s);
        // when a block closes it does not find a label that the block's
        // `x<N>` generates, unless the label came before the branch in its
        // own block ("Unknown symbol" when no enclosing block has the
        // label). A `%` label as a guard is refused as other labels are,
        // unless a `%x<N>` of its block generates it. Accepted by ptxas:
        assert_accepted(&[
            "x1:\nbra x1;\n.reg .b32 x<4>;\n",
            "x1:\n{\nbra x1;\n.reg .b32 x<4>;\n}\n",
            "x1:\n{\nbra x1;\n}\n.reg .b32 x<4>;\n",
            ".reg .b32 x<4>;\n{\nx1:\nbra x1;\n}\n",
            ".reg .b32 a1<10>;\na15:\nbra a15;\n",
            ".reg .b32 x<4>;\nx7:\nbra x7;\n",
            "{\nbra x1;\n.reg .b32 x<4>;\n}\nx1:\n",
            "{\nbra %q1;\n.reg .b32 %q<4>;\n}\n%q1:\n",
            ".reg .pred %q<4>;\n%q1:\n@%q1 bra L1;\nL1:\n",
            "%q:\n{\n.reg .pred %q;\n@%q bra L1;\n}\nL1:\n",
            "{\n%q:\n}\n.reg .pred %q;\n@%q bra L1;\nL1:\n",
            "%q1:\n{\n.reg .pred %q<4>;\n@%q1 bra L1;\n}\nL1:\n",
        ]);
        // Refused by ptxas at the line given.
        let (var, none) = (not_label, no_label);
        let guard = |at: usize| format!("label `%q` cannot be a guard@{at}");
        assert_refused(&[
            (".reg .b32 x<4>;\nx1:\nbra x1;\n", var("x1", 3)),
            ("x1:\n.reg .b32 x<4>;\nbra x1;\n", var("x1", 3)),
            (".reg .b32 x<4>;\nx01:\nbra x01;\n", var("x01", 3)),
            ("x1:\n{\n.reg .b32 x<4>;\nbra x1;\n}\n", var("x1", 4)),
            (".reg .b32 x<4>;\n{\nbra x1;\nx1:\n}\n", var("x1", 3)),
            ("bra x1;\n.reg .b32 x<4>;\nx1:\n", none("x1", 1)),
            ("{\nbra x1;\n.reg .b32 x<4>;\nx1:\n}\n", none("x1", 2)),
            ("{\nbra x1;\nx1:\n.reg .b32 x<4>;\n}\n", none("x1", 2)),
            (
                "{\nx1:\n{\nbra x1;\n.reg .b32 x<4>;\n}\n.reg .b32 x<4>;\n}\n",
                none("x1", 4),
            ),
            (".reg .b32 %q<4>;\n%q1:\nbra %q1;\n", var("%q1", 3)),
            ("bra %q1;\n%q1:\n.reg .b32 %q<4>;\n", none("%q1", 1)),
            ("%q1:\n{\n.reg .b32 %q<4>;\nbra %q1;\n}\n", var("%q1", 4)),
            (
                ".reg .b32 x<4>;\nx1:\nts: .branchtargets x1;\nbrx.idx %r1, ts;\n",
                "`.branchtargets` entry `x1`, which is a variable or parameter@3".to_string(),
            ),
            (".reg .pred %q;\n{\n%q:\n@%q bra L1;\n}\nL1:\n", guard(4)),
            ("%q:\n{\n@!%q bra L1;\n}\nL1:\n", guard(3)),
            ("%q:\n@%q add.s32 %r1, %r1, 1;\n", guard(2)),
        ]);
    }

    #[test]
    fn a_parameter_list_that_repeats_a_name_is_refused_in_a_definition_only() {
        // ptxas 13.5: "Duplicate definition of variable 'a'" for a function
        // or kernel with a body; a declaration without one is accepted.
        let repeated = "parameter `a` is declared twice@4";
        for def in [
            ".func f(.param .b32 a, .param .b32 a)\n{\nret;\n}\n",
            ".func (.param .b32 a) f(.param .b32 a)\n{\nret;\n}\n",
            ".visible .entry k(.param .u64 a, .param .u32 b, .param .u64 a)\n{\nret;\n}\n",
        ] {
            assert_eq!(errors(def), [repeated], "{def:?}");
        }
        let many: Vec<String> = (0..40).map(|i| format!(".param .b32 p{i}")).collect();
        let def = format!(
            ".func f({}, .param .b32 p7)\n{{\nret;\n}}\n",
            many.join(", ")
        );
        assert_eq!(errors(&def), ["parameter `p7` is declared twice@4"]);
        let def = format!(".func f({})\n{{\nret;\n}}\n", many.join(", "));
        assert_eq!(errors(&def), Vec::<String>::new());
        assert_eq!(
            errors(".extern .func f(.param .b32 a, .param .b32 a);\n"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn labels_are_accepted_where_ptxas_takes_them() {
        // ptxas 13.5 accepts each: `bra` to a label before or after it, to an
        // outer block's label; `brx.idx` with a `.branchtargets` label (spaced
        // too); an indirect `call` with a `.callprototype` or `.calltargets`
        // label (last, `call.uni`, blanks or a comment before the `;`, in a
        // nested block); a module symbol named like a label before the label,
        // or after the block of a label.
        assert_accepted(&[
            "bra L1;\nL1:\n@%p1 bra L1;\n{\nbra.uni L1;\n}\n",
            // `bra` from nested blocks, forward and back, to the nearest
            // label of its name; spaced, split over lines, commented; a
            // predicate named without `%`; a sibling block's variable.
            "L0:\n{\n@%p1 bra L0;\n{\n@%p1 bra L9;\n}\n}\nL9:\n",
            "{\n@%p1 bra L2;\nL2:\n}\n{\nL2:\nbra L2;\n}\nL2:\nbra L2;\n",
            "@%p1 bra.uni   L1  ;\n@%p1 bra\n  L1\n  ;\nbra L1; // c\nbra /* c */ L1;\nL1:\n",
            ".reg .pred q;\n@!q bra L1;\n@q bra L1;\nL1:\n",
            "@%p1 bra L1;\n{\n.reg .b32 L1;\n}\nL1:\n",
            "ts: .branchtargets L1, L2;\nbrx.idx %r1, ts;\nL1:\nL2:\n",
            "L1:\n{\nts: .branchtargets L1, ts;\nbrx.idx %r1, ts;\n}\n",
            "ts : .branchtargets L1;\nbrx.idx.uni %r1, ts ;\nL1:\n",
            "mov.u64 %rd1, f;\npr: .callprototype (.param .b32 _) _ (.param .b32 _);\n\
             {\n.param .b32 a;\n.param .b32 r;\ncall (r), %rd1, (a), pr;\n\
             call.uni (r), %rd1, (a), pr /* c */ ;\n}\n",
            "mov.u64 %rd1, f;\nct: .calltargets f;\n{\n.param .b32 a;\n.param .b32 r;\n\
             call (r), %rd1, (a), ct;\n}\n",
            "mov.u64 %rd1, f;\n{\npr: .callprototype (.param .b32 _) _ (.param .b32 _);\n\
             .param .b32 a;\n.param .b32 r;\ncall (r), %rd1, (a), pr;\n}\n",
            "mov.u64 %rd1, t1;\nt1:\n{\nt2:\n}\nmov.u64 %rd1, t2;\n",
        ]);
        // The module symbols stay references (no label hides them there).
        let body = ".visible .entry k()\n{\nmov.u64 %rd1, t1;\nt1:\n{\nt2:\n}\n\
                    mov.u64 %rd1, t2;\nret;\n}\n";
        assert_eq!(refs(body), ["t1@8", "t2@13"]);
    }

    #[test]
    fn an_x_n_after_numbered_names_clashes_only_where_ptxas_says() {
        // ptxas 13.5, case by case: `x<N>` after the block's variables and
        // labels named `x` and digits clashes only when the smallest number
        // among the variables (read modulo 2^32) is in 1..N, and then with a
        // name `x` and a number below N without a leading zero (a variable or
        // a label). The other order reads leading zeros and wraps too. A
        // prefix that ends in a digit matches nothing.
        let gen = |n: &str, line: usize| {
            format!("`{n}<N>` repeats a name already declared in this block@{line}")
        };
        let twice =
            |n: &str, line: usize| format!("`{n}` is already declared in this block@{line}");
        let cases: Vec<(&str, Vec<String>)> = vec![
            // Accepted by ptxas.
            (".reg .b32 %r0;\n.reg .b32 %r<20>;\n", vec![]),
            (".reg .b32 %r01;\n.reg .b32 %r<20>;\n", vec![]),
            (".reg .b32 x00;\n.reg .b32 x<20>;\n", vec![]),
            (".reg .b32 x010;\n.reg .b32 x<20>;\n", vec![]),
            (".reg .b32 x2;\n.reg .b32 x0;\n.reg .b32 x<20>;\n", vec![]),
            (".reg .b32 x0;\n.reg .b32 x2;\n.reg .b32 x<20>;\n", vec![]),
            (".reg .b32 x2;\n.reg .b32 x00;\n.reg .b32 x<20>;\n", vec![]),
            (
                ".reg .b32 %r2;\n.reg .b32 %r0;\n.reg .b32 %r<20>;\n",
                vec![],
            ),
            ("x1:\n.reg .b32 x<20>;\n", vec![]),
            (".reg .b32 x0;\nx1:\n.reg .b32 x<20>;\n", vec![]),
            (".reg .b32 x05;\nx01:\n.reg .b32 x<20>;\n", vec![]),
            (".reg .b32 x05;\nx5:\n.reg .b32 x<3>;\n", vec![]),
            (".reg .b32 x01;\n{\nx1:\n.reg .b32 x<20>;\n}\n", vec![]),
            (".reg .b32 a15;\n.reg .b32 a1<10>;\n", vec![]),
            (".reg .b32 a1<10>;\n.reg .b32 a15;\n", vec![]),
            (".reg .b32 %r1<10>;\n.reg .b32 %r15;\n", vec![]),
            // Refused by ptxas.
            (".reg .b32 %r1;\n.reg .b32 %r<20>;\n", vec![gen("%r", 2)]),
            (".reg .b32 x01;\nx1:\n.reg .b32 x<20>;\n", vec![gen("x", 3)]),
            (".reg .b32 x05;\nx5:\n.reg .b32 x<20>;\n", vec![gen("x", 3)]),
            (".reg .b32 x2;\nx0:\n.reg .b32 x<20>;\n", vec![gen("x", 3)]),
            (".reg .b32 x01;\nx0:\n.reg .b32 x<20>;\n", vec![gen("x", 3)]),
            (
                ".reg .b32 x2;\n.reg .b32 x25;\n.reg .b32 x<20>;\n",
                vec![gen("x", 3)],
            ),
            (
                ".reg .b32 x4294967297;\nx1:\n.reg .b32 x<20>;\n",
                vec![gen("x", 3)],
            ),
            (
                ".shared .b32 x05;\nx1:\n.shared .b32 x<20>;\n",
                vec![gen("x", 3)],
            ),
            (
                ".reg .b32 %r05;\n%r1:\n.reg .b32 %r<20>;\n",
                vec![gen("%r", 3)],
            ),
            (
                ".reg .b32 x2;\n{\n.reg .b32 x0;\n}\n.reg .b32 x<20>;\n",
                vec![gen("x", 5)],
            ),
            (
                ".reg .b32 %r<20>;\n.reg .b32 %r4294967297;\n",
                vec![twice("%r4294967297", 2)],
            ),
            (
                ".reg .b32 x<20>;\n.shared .b32 x4294967296;\n",
                vec![twice("x4294967296", 2)],
            ),
        ];
        for (body, want) in &cases {
            assert_eq!(&kernel_errors(body), want, "{body:?}");
        }
        // Parameters count in the outermost block: `x01` alone does not
        // clash, with a label `x1` it does; `x0` keeps `x2` from clashing.
        let k =
            |params: &str, body: &str| errors(&format!(".func k({params})\n{{\n{body}ret;\n}}\n"));
        assert_eq!(
            k(".param .b32 %r01", ".reg .b32 %r<20>;\n"),
            Vec::<String>::new()
        );
        assert_eq!(
            k(".param .b32 r01", ".reg .b32 r<20>;\n"),
            Vec::<String>::new()
        );
        assert_eq!(
            k(".param .b32 x2, .param .b32 x0", ".reg .b32 x<20>;\n"),
            Vec::<String>::new()
        );
        assert_eq!(
            k(".param .b32 x01", "x1:\n.reg .b32 x<20>;\n"),
            [gen("x", 7)]
        );
        assert_eq!(
            k(".param .b32 x1", ".reg .b32 x02;\n.reg .b32 x<20>;\n"),
            [gen("x", 7)]
        );
    }

    #[test]
    fn a_variable_declared_twice_in_one_block_is_refused_as_ptxas_does() {
        // ptxas 13.5: "Duplicate definition of variable 'x'" for a variable
        // (any state space) or `%` register repeated in its block, a name an
        // `x<N>` of the block generates, a parameter repeated in the outermost
        // block, a variable after a label of the same name;
        // "Duplicate definition of variable 'x<'" for two `x<N>` of one prefix.
        let twice =
            |n: &str, line: usize| format!("`{n}` is already declared in this block@{line}");
        let gen = |n: &str, line: usize| {
            format!("`{n}<N>` repeats a name already declared in this block@{line}")
        };
        let cases: Vec<(&str, Vec<String>)> = vec![
            (".reg .b32 x;\n.reg .b32 x;\n", vec![twice("x", 2)]),
            (".reg .b32 x, x;\n", vec![twice("x", 1)]),
            (".reg .b32 x;\n.local .b32 x;\n", vec![twice("x", 2)]),
            (".reg .b32 x;\n.shared .b32 x;\n", vec![twice("x", 2)]),
            (".shared .b32 s;\n.shared .b32 s;\n", vec![twice("s", 2)]),
            (
                "{\n.param .b32 a;\n.param .b32 a;\n}\n",
                vec![twice("a", 3)],
            ),
            (".reg .b32 p;\n", vec![twice("p", 1)]),
            ("x:\n.reg .b32 x;\n", vec![twice("x", 2)]),
            ("{\nx:\n.reg .b32 x;\n}\n", vec![twice("x", 3)]),
            (".reg .b32 x<4>;\n.reg .b32 x02;\n", vec![twice("x02", 2)]),
            (".reg .b32 x2;\n.reg .b32 x<4>;\n", vec![gen("x", 2)]),
            (".reg .b32 x<4>;\n.reg .b32 x<2>;\n", vec![gen("x", 2)]),
            (".shared .b32 x<4>;\n.reg .b32 x<2>;\n", vec![gen("x", 2)]),
            (
                ".shared .b32 s<4>;\n.shared .b32 s1;\n",
                vec![twice("s1", 2)],
            ),
            (".reg .b32 p<4>;\n", vec![]),
            // `%` names: passed without tokens (rustc's `.reg` lines) and
            // token by token (a comment, an initializer).
            (".reg .b32 %r1;\n.reg .b32 %r1;\n", vec![twice("%r1", 2)]),
            (".reg .b32 %r<4>;\n.reg .b32 %r1;\n", vec![twice("%r1", 2)]),
            (".reg .b32 %r<4>;\n.reg .b32 %r<4>;\n", vec![gen("%r", 2)]),
            (
                ".reg .b32 %r<4>;\n.reg .b32 %r1 /* c */;\n",
                vec![twice("%r1", 2)],
            ),
            (
                ".reg .b32 %r<4>;\n.reg .b32 /* c */ %r<9>;\n",
                vec![gen("%r", 2)],
            ),
            (".reg .pred %p;\n.reg .pred %p, %q;\n", vec![twice("%p", 2)]),
            (
                "{\n.reg .b32 %r<4>;\n{\n.reg .b32 %r<4>;\n.reg .b32 %r1;\n}\n}\n",
                vec![twice("%r1", 5)],
            ),
            ("%L1:\n.reg .b32 %L1;\n", vec![twice("%L1", 2)]),
            (
                ".reg .b32 %L1;\n%L1:\n",
                vec!["`%L1` is already defined in this block@2".into()],
            ),
        ];
        for (body, want) in &cases {
            assert_eq!(&kernel_errors(body), want, "{body:?}");
        }
        // Parameters, `x<N>` against `x<N>` and `%`-parameters.
        let src = ".visible .entry k(.param .u32 x2, .param .u32 %x)\n{\n\
                   .reg .b32 x<4>;\n.reg .b32 %x;\nret;\n}\n";
        assert_eq!(
            errors(src),
            [
                "`x<N>` repeats a name already declared in this block@6",
                "`%x` is already declared in this block@7"
            ]
        );
        let src = ".func (.param .b32 r) f(.param .b32 a)\n{\n.reg .b32 r;\n\
                   .param .b32 a;\nret;\n}\n";
        assert_eq!(
            errors(src),
            [
                "`r` is already declared in this block@6",
                "`a` is already declared in this block@7"
            ]
        );
    }

    #[test]
    fn the_same_variable_in_sibling_or_nested_blocks_is_accepted() {
        // ptxas 13.5 accepts each: sibling and nested blocks, a parameter
        // hidden in a nested block, `x<N>` and a label `x2`, `%r<40>` and
        // `%r1<5>` (different prefixes), `x<0>` and `x0`, `x<4>` and `x4`, a
        // name after a nested block's label, a special register's name.
        assert_accepted(&[
            "{\n.reg .b32 x;\n}\n{\n.reg .b32 x;\n}\n",
            ".reg .b32 x;\n{\n.reg .b32 x;\n{\n.reg .b32 x;\n}\n}\n",
            "{\n.reg .b32 p;\n}\n{\n.param .b32 a;\n}\n{\n.param .b32 a;\n}\n",
            ".reg .b32 x<4>;\nx2:\n",
            "x2:\n.reg .b32 x<4>;\n",
            ".reg .b32 %r<40>;\n.reg .b32 %r1<5>;\n",
            ".reg .b32 %r<4>;\n{\n.reg .b32 %r<4>;\n.reg .b32 %r9;\n}\n{\n.reg .b32 %r<4>;\n}\n",
            ".reg .b32 %r<4>;\n%r1:\n",
            ".reg .b32 x<0>;\n.reg .b32 x0;\n.reg .b32 y<4>;\n.reg .b32 y4;\n",
            "{\nx:\n}\n.reg .b32 x;\n",
            "{\n.reg .b32 x;\n}\n.reg .b32 x;\n",
            ".reg .b32 %tid;\n",
        ]);
    }

    #[test]
    fn labels_hide_module_symbols_either_side_of_the_listed_limit() {
        // (Labels among operands are refused, but what they hide shows.)
        // Around `LABELS_SEARCHED` labels the list moves into the map at the
        // use: a label named like a module symbol hides it from its line on,
        // in a run of plain statements (4 names, one passed) and token by
        // token (5 names), through the AVX2 and portable operand passes.
        for portable in [false, true] {
            for labels in super::LABELS_SEARCHED - 1..=super::LABELS_SEARCHED + 2 {
                let mut body = String::from(".visible .entry k()\n{\n");
                for i in 0..labels {
                    body.push_str(&format!("L{i}:\n"));
                }
                body.push_str(
                    "add.s32 %r1, t2, L0, %r2, L1;\nt2:\nadd.s32 %r1, t2, t1, L0, L1;\n\
                     add.s32 %r1, t2, t1, L0, L1, t1;\nret;\n}\n",
                );
                crate::scan32::imp_no_avx2(portable);
                let got = refs_using_labels(&body);
                crate::scan32::imp_no_avx2(false);
                let line = 8 + labels;
                let want = [
                    format!("t2@{line}"),
                    format!("t1@{}", line + 2),
                    format!("t1@{}", line + 3),
                    format!("t1@{}", line + 3),
                ];
                assert_eq!(got, want, "{labels} labels, portable {portable}");
            }
        }
    }

    #[test]
    fn names_among_plain_operands_are_uses_in_order() {
        // (Labels among operands are refused, but what they hide shows.)
        // In a run of plain statements and first after a directive: names
        // between registers (one a parameter, one a label declared later),
        // five names (more than the fast pass lists), a name before a
        // comment, and `bra` (its operand is a label).
        let body = ".visible .entry k(.param .u64 p)\n{\n.reg .b32 %r<4>;\n\
                    ld.param.u64 %rd1, [p];\nmov.u64 %rd1, t2;\nadd.s32 %r1, %r1, 1;\n\
                    mad.lo.s32 %r1, t1, t2, L1;\nmov.u64 %rd1, t1, t2, t1, t2, t1;\n\
                    mov.u64 %rd1, t2 /* t1 */;\n@%p1 bra t2;\nL1:\nmov.u64 %rd1, L1, t1;\nt2: ret;\n}\n";
        assert_eq!(
            refs_using_labels(body),
            [
                "t2@10", "t1@12", "t2@12", "L1@12", "t1@13", "t2@13", "t1@13", "t2@13", "t1@13",
                "t2@14", "t1@17"
            ]
        );
    }

    #[test]
    fn reg_declarations_of_percent_names_declare_nothing_else() {
        // `%` names only (passed without tokens), a name among them, an
        // initializer (its names are uses), a brace in the statement.
        let body = ".visible .entry k()\n{\n.reg .pred %p<4>;\n.reg .v2 .b32 %r1, %r2;\n\
                    mov.u64 %rd1, t2;\n.reg .b32 %r3, t2;\nmov.u64 %rd1, t2;\n\
                    .reg .b64 %rd9 = t1;\n.reg .b32 %q<2>\n}\n";
        assert_eq!(refs(body), ["t2@10", "t1@13"]);
    }

    #[test]
    fn labels_are_scoped_and_branch_targets_are_never_references() {
        // `bra` to a later label (and to an earlier one) names no symbol; a
        // label ends with its block, like any declaration.
        let body = ".visible .entry k()\n{\n\
                    bra t2;\n{\nt1:\nbra.uni t1;\n}\nt2:\n\
                    mov.u64 %rd1, t1;\n@%p1 bra t2;\nret;\n}\n";
        assert_eq!(refs(body), ["t1@14"]);
    }

    #[test]
    fn function_scope_shared_parameterized_names_count_as_ptxas_counts_them() {
        let k = |decls: &str, uses: &str| {
            shared(&format!(
                ".visible .entry k()\n{{\n{decls}\n{uses}\nret;\n}}\n"
            ))
        };
        // ptxas 13.5 (`-v`): one element for the declaration, one per name used.
        assert_eq!(k(".shared .u32 s<20000>;", ""), [(4, 4)]);
        assert_eq!(
            k(".shared .u32 s<20000>;", "ld.shared.u32 %r1, [s7];"),
            [(8, 4)]
        );
        assert_eq!(
            k(
                ".shared .u32 s<20000>;",
                "ld.shared.u32 %r1, [s7];\nld.shared.u32 %r1, [s07];\nmov.u64 %rd1, s19999;"
            ),
            [(12, 4)]
        );
        assert_eq!(k(".shared .u32 s<0>;", ""), [(4, 4)]);
        assert_eq!(
            k(
                ".shared .align 16 .u32 s<20000>;",
                "ld.shared.u32 %r1, [s7];\nld.shared.u32 %r1, [s100];"
            ),
            [(36, 16)]
        );
        // Plain `.shared` declarations count in full, used or not.
        assert_eq!(
            k(".shared .u8 x;\n.shared .u32 big[100];", ""),
            [(1, 1), (400, 4)]
        );
        // A name an inner declaration hides is not a use; the block's own
        // declarations count.
        assert_eq!(
            k(
                ".shared .u32 s<20000>;",
                "{\n.reg .b32 s7;\nmov.b32 s7, 1;\n.shared .u8 q<9>;\nst.shared.u8 [q1], s7;\n}"
            ),
            [(4, 4), (2, 1)]
        );
        // A generated name past the count, or after the block, is no use.
        assert_eq!(
            k(
                "{\n.shared .u32 s<3>;\n}",
                "ld.shared.u32 %r1, [s2];\nld.shared.u32 %r1, [s3];"
            ),
            [(4, 4)]
        );
    }

    /// [`super::plain_operands`] with AVX2 (where the CPU has it) and
    /// without agree on random statement tails: qualifiers (`.f64` among
    /// them, `..`, a trailing `.`), operands with names, stops anywhere.
    #[test]
    fn the_avx2_operand_pass_agrees_with_the_sse2_one() {
        const PIECES: &[&str] = &[
            ".f64", ".f6", ".f644", ".lo", ".s32", ".", "..", " ", "\t", "%r1", ", ", "x", "_a",
            "$b", "9", "0f3F80", ";", ":", "{", "}", "@", "/", "\"", "[", "]", "+", "\n", "f64",
            ".u64", "\u{80}",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..3000 {
            let n = 1 + (next() % 16) as usize;
            let mut text = String::from("mad");
            for _ in 0..n {
                text.push_str(PIECES[(next() >> 8) as usize % PIECES.len()]);
            }
            let bytes = text.as_bytes();
            for at in 1..=bytes.len() {
                let fast = super::plain_operands(bytes, at);
                assert_eq!(
                    fast.as_ref().map(|p| (p.semi, p.f64)),
                    super::plain_operands_16(bytes, at),
                    "{text:?} at {at}"
                );
            }
        }
    }

    /// The AVX2, SSE2 and scalar operand scans find the same stop on random
    /// texts of the bytes they classify (and some others), from every start,
    /// with and without names.
    #[test]
    fn the_avx2_sse2_and_scalar_operand_scans_agree() {
        const ALPHABET: &[u8] =
            b" \t\n\r\x0b\x0c\x1a\x00\x1f\x7f\x80\xff%$_azAZ09gG,[]()+-!{};:@./\"";
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..400 {
            let len = 1 + (next() % 120) as usize;
            // Mostly operand bytes, so that stops are sometimes far away.
            let text: Vec<u8> = (0..len)
                .map(|_| {
                    let r = next();
                    if round % 2 == 0 && r % 8 != 0 {
                        b" %r1,"[(r >> 8) as usize % 5]
                    } else {
                        ALPHABET[(r >> 8) as usize % ALPHABET.len()]
                    }
                })
                .collect();
            for at in 1..=len {
                let scalar = super::first_stop_scalar(&text, at);
                assert_eq!(super::first_stop_16(&text, at), scalar);
                assert_eq!(super::first_stop(&text, at), scalar, "{text:?} {at}");
            }
        }
    }
}
