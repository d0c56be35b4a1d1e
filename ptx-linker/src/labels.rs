//! Labels that a module-scope name hides.
//!
//! ptxas 13.5 looks a `bra` target (or a `.branchtargets` entry) up at the
//! branch. When the label is declared later (a forward branch) and a
//! module-scope symbol of that name is declared before the function, it
//! finds the symbol and refuses the module ("Label expected for argument 0
//! of instruction 'bra'", "Illegal branch target, label expected"); a label
//! declared before the branch hides the symbol. Checked with ptxas 13.5 for
//! variables, parameterized variables, functions, kernels, aliases and the
//! function itself, from nested blocks and to labels of nested blocks; a
//! symbol declared after the function hides nothing.
//!
//! Two consequences:
//! - In one input such a branch is an error. The parser keeps the
//!   module-scope names declared so far ([`ModuleNames`]); the body scan
//!   lists each body's forward targets, and looks them up there.
//! - The merged module declares every module-scope symbol before every
//!   function definition ([`crate::emit`]), so a label can meet a symbol of
//!   another input, or one its own input declares after the function. nvlink
//!   links such inputs (each assembled alone); the linker renames the label
//!   in that body ([`hidden_labels`]): its declarations, `bra` targets and
//!   `.branchtargets` entries, the only places a label of an instruction
//!   stands, never a parameter or register that shares its name. The scan keeps a short hash of each
//!   forward target ([`crate::ast::Module::forward_labels`]), so finding the
//!   bodies to look at costs one bit test per forward branch.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::ast::{Function, ItemKind, Module, Name};
use crate::body::{generates, name_hash};
use crate::diagnostic::{Diagnostic, Span};
use crate::gc::Liveness;
use crate::lex::{lex, TokKind, Token};
use crate::resolve::Resolution;
use crate::symbols::{ItemRef, SymbolTable};

/// The part of a name's [`name_hash`] kept for each forward target and
/// tested against a [`NameFilter`].
#[inline(always)]
pub(crate) fn short_hash(h: u64) -> u32 {
    (h >> 32) as u32
}

/// A set of names as one bit per [`short_hash`]: "may this name be in the
/// set" in a few instructions. At least 16 bits per name (it grows), so
/// about one name in 16 that is not in the set is taken for one.
#[derive(Debug, Clone)]
pub(crate) struct NameFilter {
    bits: Vec<u64>,
    /// The number of bits less one (a power of two less one).
    mask: usize,
    /// The short hashes added, to fill a larger table when it grows.
    shorts: Vec<u32>,
}

impl Default for NameFilter {
    fn default() -> Self {
        NameFilter::with_capacity(0)
    }
}

impl NameFilter {
    /// A filter sized for `names` names (4096 bits at least).
    pub(crate) fn with_capacity(names: usize) -> Self {
        let words = (names * 16 / 64).next_power_of_two().max(64);
        NameFilter {
            bits: vec![0; words],
            mask: words * 64 - 1,
            shorts: Vec::with_capacity(names),
        }
    }

    /// Adds the name of short hash `short`.
    pub(crate) fn add_short(&mut self, short: u32) {
        if (self.shorts.len() + 1) * 16 > self.mask + 1 {
            self.bits = vec![0; self.bits.len() * 2];
            self.mask = self.bits.len() * 64 - 1;
            for i in 0..self.shorts.len() {
                self.set(self.shorts[i]);
            }
        }
        self.shorts.push(short);
        self.set(short);
    }

    /// Adds `name`.
    pub(crate) fn add(&mut self, name: &str) {
        self.add_short(short_hash(name_hash(name)));
    }

    fn set(&mut self, short: u32) {
        let bit = short as usize & self.mask;
        self.bits[bit / 64] |= 1 << (bit % 64);
    }

    /// Whether a name of short hash `short` may have been added.
    #[inline(always)]
    pub(crate) fn may_hold(&self, short: u32) -> bool {
        let bit = short as usize & self.mask;
        self.bits[bit / 64] >> (bit % 64) & 1 != 0
    }
}

/// The module-scope names a module has declared so far, as the parser
/// reads it: variables, functions (each before its own body), kernels and
/// aliases. All are in the filter; the parser's own tables hold the
/// variables and device functions, this the rest.
#[derive(Debug, Default)]
pub(crate) struct ModuleNames<'src> {
    filter: NameFilter,
    /// Kernels and aliases, at their first declaration.
    others: HashMap<&'src str, Span>,
    /// Parameterized variables `prefix<count>`, at their declaration.
    generated: Vec<(&'src str, u32, Span)>,
}

impl<'src> ModuleNames<'src> {
    /// The symbol `name` is declared.
    pub(crate) fn add(&mut self, name: &str) {
        self.filter.add(name);
    }

    /// The kernel or alias `name`, [added](Self::add), is declared here
    /// (the parser's tables do not hold these).
    pub(crate) fn add_kernel_or_alias(&mut self, name: Name<'src>) {
        self.others.entry(name.text).or_insert(name.span);
    }

    /// The variables `prefix<count>` are declared.
    pub(crate) fn add_generated(&mut self, prefix: Name<'src>, count: u32) {
        self.generated.push((prefix.text, count, prefix.span));
    }

    /// Whether `name`, of [`name_hash`] `h`, may have been declared (an
    /// `a<N>` generates `a02` too).
    #[inline(always)]
    pub(crate) fn may_hold(&self, h: u64, name: &str) -> bool {
        self.filter.may_hold(short_hash(h)) || (!self.generated.is_empty() && self.generates(name))
    }

    /// Whether an `a<N>` generates `name` as ptxas finds a branch target
    /// among them ([`crate::body::generates`]: none when `a` ends in a digit).
    #[cold]
    fn generates(&self, name: &str) -> bool {
        self.generated
            .iter()
            .any(|(prefix, count, _)| generates(prefix, *count, name))
    }

    /// Where `name` was declared as a kernel, an alias or a generated
    /// variable, if it was.
    pub(crate) fn declaration(&self, name: &str) -> Option<Span> {
        self.others.get(name).copied().or_else(|| {
            self.generated
                .iter()
                .find(|(prefix, count, _)| generates(prefix, *count, name))
                .map(|&(_, _, span)| span)
        })
    }
}

/// The error for a forward branch (`entry`: a `.branchtargets` entry) to
/// `target`, whose name the module-scope symbol declared at `symbol` has.
#[cold]
pub(crate) fn hidden_by_symbol(target: Name<'_>, entry: bool, symbol: Span) -> Diagnostic {
    let (what, ptxas) = if entry {
        (
            "`.branchtargets` entry",
            "Illegal branch target, label expected",
        )
    } else {
        (
            "`bra` to",
            "Label expected for argument 0 of instruction 'bra'",
        )
    };
    Diagnostic::error(
        target.span,
        format!(
            "{what} `{0}` names the module-scope symbol `{0}`, not the label declared later",
            target.text
        ),
    )
    .with_label("the target is looked up here, where the label is not declared yet")
    .with_secondary(symbol, "declared at module scope here, before the function")
    .with_help(format!(
        "rename the label (or the symbol), or declare the symbol after this function; ptxas \
         finds the symbol at a branch that comes before its label (\"{ptxas}\")"
    ))
}

/// Label renames for the merged module: per function, each token to
/// replace and its new text.
#[derive(Debug, Default)]
pub struct LabelRenames {
    by_item: HashMap<ItemRef, Vec<(Span, String)>>,
}

impl LabelRenames {
    /// The replacements in the function `r` (none for most).
    pub fn of(&self, r: ItemRef) -> &[(Span, String)] {
        self.by_item.get(&r).map_or(&[], Vec::as_slice)
    }
}

/// What marks a renamed label: `L` becomes `L__ptxlabel`.
const LABEL_MARKER: &str = "__ptxlabel";

/// Renames each label of a live function that a forward branch targets and
/// that a module-scope symbol of the merged module names: every one of the
/// merged module's symbols precedes every function, so ptxas would find
/// the symbol at the branch. The label's module must not declare that name
/// before the function (then the forward branch was refused at parse, and
/// a label only branched to backwards needs nothing).
pub fn hidden_labels(
    modules: &[Module<'_>],
    table: &SymbolTable<'_>,
    res: &Resolution<'_>,
    live: &Liveness,
) -> LabelRenames {
    // The names' short hashes: bits to test first, then the hashes.
    let mut filter = NameFilter::with_capacity(table.symbols.len());
    for id in table.ids() {
        if res.is_renamed(id) {
            filter.add(res.out_name(id));
        } else {
            filter.add_short(table.get(id).short);
        }
    }
    let shorts: HashSet<u32> = filter.shorts.iter().copied().collect();
    let hidden = |s: u32| filter.may_hold(s) && shorts.contains(&s);
    let mut out_names: Option<HashSet<&str>> = None;
    let mut renames = LabelRenames::default();
    for (mi, m) in modules.iter().enumerate() {
        if !table.included[mi] {
            continue;
        }
        for (ii, item) in m.items.iter().enumerate() {
            let ItemKind::Function(Function {
                body: Some(body), ..
            }) = &item.kind
            else {
                continue;
            };
            let r = ItemRef {
                module: mi,
                item: ii,
            };
            let forward = m
                .forward_labels
                .get(body.forward_labels.start as usize..body.forward_labels.end as usize)
                .unwrap_or(&[]);
            if !live.is_live(r) || !forward.iter().any(|&s| hidden(s)) {
                continue;
            }
            let names =
                out_names.get_or_insert_with(|| table.ids().map(|id| res.out_name(id)).collect());
            // The module's first declaration of the name is this function
            // or comes before it, and ptxas finds it at a branch (not a
            // variable of an `a1<10>`, whose prefix ends in a digit).
            let declared_before = |name: &str| {
                table.scopes[mi].get(name).is_some_and(|&(_, first)| {
                    first <= ii as u32
                        && match &m.items[first as usize].kind {
                            ItemKind::Variable(v) => v
                                .generated
                                .as_ref()
                                .is_none_or(|g| generates(v.name.text, g.count, name)),
                            _ => true,
                        }
                })
            };
            let patches =
                rename_in_function(m, item.span, body.span.start, names, &declared_before);
            if !patches.is_empty() {
                renames.by_item.insert(r, patches);
            }
        }
    }
    renames
}

/// The replacements that rename, in the function whose text is `span` (its
/// body from `body_start`),
/// each label of an instruction that `names` holds and its module does not
/// declare before the function: its declarations, `bra` targets and
/// `.branchtargets` entries, the only places where ptxas takes such a
/// label (the body scan refuses it elsewhere, and a target that names a
/// register or parameter). The new name is in no name of the function
/// (its parameters included) nor in `names`.
#[cold]
fn rename_in_function(
    m: &Module<'_>,
    span: Span,
    body_start: u32,
    names: &HashSet<&str>,
    declared_before: &dyn Fn(&str) -> bool,
) -> Vec<(Span, String)> {
    let base = span.start as usize;
    let Some(text) = m.text.get(base..span.end as usize) else {
        return Vec::new();
    };
    let (toks, _) = lex(m.file, text);
    let roles = roles(text, &toks, body_start.saturating_sub(span.start));
    let idents: HashSet<&str> = toks
        .iter()
        .filter(|t| t.kind == TokKind::Ident)
        .map(|t| t.text(text))
        .collect();
    let mut new_names: HashMap<&str, String> = HashMap::default();
    let mut taken: HashSet<String> = HashSet::default();
    for (t, _) in toks.iter().zip(&roles).filter(|(_, &r)| r == Role::Label) {
        let label = t.text(text);
        if new_names.contains_key(label) || !names.contains(label) || declared_before(label) {
            continue;
        }
        let mut new = format!("{label}{LABEL_MARKER}");
        while names.contains(new.as_str()) || idents.contains(new.as_str()) || taken.contains(&new)
        {
            new.push('_');
        }
        taken.insert(new.clone());
        new_names.insert(label, new);
    }
    if new_names.is_empty() {
        return Vec::new();
    }
    toks.iter()
        .zip(&roles)
        .filter(|(_, &r)| matches!(r, Role::Label | Role::Target))
        .filter_map(|(t, _)| {
            let new = new_names.get(t.text(text))?;
            let at = Span::new(m.file, base + t.start as usize, base + t.end as usize);
            Some((at, new.clone()))
        })
        .collect()
}

/// What an identifier of a function's text is, for [`rename_in_function`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Not an identifier.
    Other,
    /// The declaration of a label of an instruction (`L:`).
    Label,
    /// The label of a `.branchtargets`, `.callprototype` or `.calltargets`
    /// list, which ptxas takes only after its declaration.
    ListLabel,
    /// A `bra` target or a `.branchtargets` entry.
    Target,
    /// An instruction's opcode (`bra`, `ret`).
    Opcode,
    /// Any other identifier: an operand, a guard, a declared name, a
    /// qualifier after `::`.
    Name,
}

/// The role of each token of a function's text, whose body's `{` is at
/// `body_open`. A statement starts after `;`, a block's `{` or `}` (not a
/// vector operand's), a label, a guard (`@p`, `@!p`), or the end of a `.loc`
/// line; its first identifier that is not a label is its opcode.
fn roles(text: &str, toks: &[Token], body_open: u32) -> Vec<Role> {
    let is = |i: usize, c: u8| toks.get(i).is_some_and(|t| t.is(c));
    let list = |i: usize| {
        toks.get(i).is_some_and(|t| {
            t.kind == TokKind::Directive
                && matches!(
                    t.text(text),
                    ".branchtargets" | ".callprototype" | ".calltargets"
                )
        })
    };
    let mut roles = vec![Role::Other; toks.len()];
    let mut start = true;
    let mut guard = false;
    let mut line_directive = false;
    // In a `bra` (its target is next) or a `.branchtargets` list.
    let (mut bra, mut entries) = (false, false);
    // Open braces of vector operands (`{%r1, %r2}`), which start nothing.
    let mut vector = 0u32;
    for (i, t) in toks.iter().enumerate() {
        if line_directive && t.nl_before {
            line_directive = false;
            start = true;
        }
        match t.kind {
            TokKind::Punct(b'{') if t.start == body_open => start = true,
            TokKind::Punct(b'{') if !start => vector += 1,
            TokKind::Punct(b'}') if vector > 0 => vector -= 1,
            TokKind::Punct(b';' | b'{' | b'}') => {
                (start, bra, entries) = (true, false, false);
            }
            TokKind::Punct(b'@') if start => guard = true,
            TokKind::Ident if guard => {
                roles[i] = Role::Name;
                guard = false;
            }
            TokKind::Ident if start && is(i + 1, b':') && !is(i + 2, b':') => {
                roles[i] = if list(i + 2) {
                    Role::ListLabel
                } else {
                    Role::Label
                };
            }
            TokKind::Ident if start => {
                roles[i] = Role::Opcode;
                bra = t.text(text) == "bra";
                start = false;
            }
            TokKind::Ident if bra || entries => {
                roles[i] = Role::Target;
                bra = false;
            }
            TokKind::Ident => roles[i] = Role::Name,
            TokKind::Punct(b':' | b'!') if start || guard => {}
            TokKind::Directive => {
                entries = t.text(text) == ".branchtargets";
                line_directive = start && matches!(t.text(text), ".loc" | ".file");
                start = false;
            }
            _ => {
                start = false;
                bra = false;
            }
        }
    }
    roles
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::FileId;
    use crate::parse::parse;

    const HEAD: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

    /// A kernel `k` whose forward branch (`bra X;` or a `.branchtargets`
    /// entry, `entry`) targets the label `X`.
    fn kernel(name: &str, entry: bool) -> String {
        let jump = if entry {
            "ts: .branchtargets X, Y;\n\tbrx.idx %r1, ts;"
        } else {
            "@%p1 bra X;"
        };
        format!(
            ".visible .entry {name}()\n{{\n\t.reg .pred %p<2>;\n\t.reg .b32 %r<3>;\n\t\
             mov.u32 %r1, 1;\n\tsetp.eq.u32 %p1, %r1, 0;\n\t{jump}\n\tmov.u32 %r1, 2;\nX:\n\t\
             ret;\nY:\n\tret;\n}}\n"
        )
    }

    fn errors(module: &str) -> Vec<String> {
        let src = format!("{HEAD}{module}");
        parse(FileId(0), &src)
            .errors
            .iter()
            .map(|e| e.message.clone())
            .collect()
    }

    #[test]
    fn a_forward_branch_to_a_name_declared_before_is_refused_as_ptxas_does() {
        // Each refused by ptxas 13.5 ("Label expected for argument 0 of
        // instruction 'bra'"; "Illegal branch target, label expected").
        let k = kernel("k", false);
        let refused = [
            format!(".visible .global .u32 X;\n{k}"),
            format!(
                ".global .u32 X<4>;\n{}",
                k.replace(" X", " X2").replace("X:", "X2:")
            ),
            format!(".func X();\n{k}"),
            format!(".visible .entry X() {{ ret; }}\n{k}"),
            format!(".visible .func g() {{ ret; }}\n.visible .func X();\n.alias X, g;\n{k}"),
            kernel("X", false),
            kernel("X", false).replace(".entry", ".func"),
            format!(".visible .global .u32 X;\n{}", kernel("k", true)),
            // From a nested block, and to a label of a nested block.
            format!(
                ".visible .global .u32 X;\n{}",
                k.replace("@%p1 bra X;", "{ @%p1 bra X; }")
            ),
            format!(
                ".visible .global .u32 X;\n{}",
                k.replace("@%p1 bra X;", "{ @%p1 bra X;\nX:\n}")
                    .replace("\nX:\n\tret;", "\n\tret;")
            ),
        ];
        for module in &refused {
            let errs = errors(module);
            assert_eq!(errs.len(), 1, "{module}\n{errs:?}");
            assert!(
                errs[0].ends_with("not the label declared later"),
                "{module}\n{errs:?}"
            );
        }
    }

    #[test]
    fn a_label_before_the_branch_or_a_symbol_after_the_function_is_accepted() {
        // Each assembled by ptxas 13.5.
        let accepted = [
            format!("{}.visible .global .u32 X;\n", kernel("k", false)),
            format!("{}.func X() {{ ret; }}\n", kernel("k", false)),
            ".visible .global .u32 X;\n.visible .entry k()\n{\n\t.reg .pred %p<2>;\n\t\
             .reg .b64 %rd<2>;\n\t.reg .b32 %r<2>;\n\tmov.u64 %rd1, X;\n\t\
             ld.global.u32 %r1, [%rd1];\nX:\n\tsetp.eq.u32 %p1, %r1, 0;\n\t@%p1 bra X;\n\tret;\n}\n"
                .to_string(),
            // An enclosing block's label, declared before, is what the branch
            // finds, though its own block declares one later (a review's case).
            ".visible .global .u32 X;\n.visible .entry k()\n{\n\t.reg .pred %p<2>;\n\t\
             .reg .b32 %r<2>;\n\tsetp.eq.u32 %p1, %r1, 0;\nX:\n\t{\n\t@%p1 bra X;\nX:\n\t\
             ts: .branchtargets X;\n\tbrx.idx %r1, ts;\n\t}\n\tret;\n}\n"
                .to_string(),
        ];
        for module in &accepted {
            assert_eq!(errors(module), Vec::<String>::new(), "{module}");
        }
    }

    #[test]
    fn roles_tell_labels_and_targets_from_opcodes_and_other_names() {
        let text = ".visible .entry k(.param .u32 L) .maxntid 32, 1, 1\n{\nM:\n\t\
                    .reg .b32 x<4>;\n.loc 1 2 3\nL:\n\t@!p bra L;\n\tmov.b64 {a, b}, c;\n\t\
                    st.shared::cta.u32 [s], d;\n\tts: .branchtargets L, M;\n\t\
                    brx.idx x1, ts;\n\tbra.uni M;\n\tret;\n}";
        let (toks, errors) = lex(FileId(0), text);
        assert!(errors.is_empty());
        let body = text.find('{').unwrap() as u32;
        let got: Vec<(&str, Role)> = toks
            .iter()
            .zip(roles(text, &toks, body))
            .filter(|(t, _)| t.kind == TokKind::Ident)
            .map(|(t, r)| (t.text(text), r))
            .collect();
        use Role::*;
        let want = [
            ("k", Name),
            ("L", Name),
            ("M", Label),
            ("x", Name),
            ("L", Label),
            ("p", Name),
            ("bra", Opcode),
            ("L", Target),
            ("mov", Opcode),
            ("a", Name),
            ("b", Name),
            ("c", Name),
            ("st", Opcode),
            ("cta", Name),
            ("s", Name),
            ("d", Name),
            ("ts", ListLabel),
            ("L", Target),
            ("M", Target),
            ("brx", Opcode),
            ("x1", Name),
            ("ts", Name),
            ("bra", Opcode),
            ("M", Target),
            ("ret", Opcode),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn the_name_filter_holds_what_was_added_as_it_grows() {
        let mut f = NameFilter::with_capacity(0);
        let names: Vec<String> = (0..2000).map(|i| format!("sym_{i}")).collect();
        for n in &names {
            f.add(n);
        }
        assert!(names.iter().all(|n| f.may_hold(short_hash(name_hash(n)))));
        // At 16 bits per name, few names that were not added pass.
        let passed = (0..10_000)
            .filter(|i| f.may_hold(short_hash(name_hash(&format!("other_{i}")))))
            .count();
        assert!(passed < 1500, "{passed} of 10000");
    }
}
