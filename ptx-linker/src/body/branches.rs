//! `bra` targets and `.branchtargets` entries ([`Branch`]), looked for as
//! ptxas 13.5 looks them up: at the branch, when the branch's block closes
//! ([`Scopes::close_branches`]) and when the body ends
//! ([`Scopes::check_branches`]); and the errors for a target that is no
//! label in scope.

use rustc_hash::FxHashMap as HashMap;

use super::names::name_hash;
use super::scopes::{Decl, Kind, Mark, Scopes};
use crate::ast::Name;
use crate::diagnostic::Diagnostic;
use crate::labels;

/// A `bra` target or a `.branchtargets` entry: a label in scope, to be
/// found ([`Scopes::branches`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Branch<'src> {
    pub(super) name: Name<'src>,
    /// An entry of a `.branchtargets` list. It takes a label of an
    /// instruction, as `bra` does: ptxas 13.5 refuses a `.branchtargets`
    /// or `.callprototype` label ("Illegal branch target, label expected"),
    /// except the list's own (`ts: .branchtargets ts;`), which is not
    /// collected (ptxas finds it before the list gives it its kind).
    pub(super) entry: bool,
    /// Passed from the nested block that holds it to an enclosing one (not
    /// found when its own block closed).
    pub(super) nested: bool,
}

impl Branch<'_> {
    /// Whether a name of kind `kind` is a target here.
    fn takes(self, kind: Kind) -> bool {
        kind == Kind::Label
    }
}

impl<'src> Scopes<'src> {
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
    pub(super) fn close_branches(&mut self, mark: Mark, depth: u32, errors: &mut Vec<Diagnostic>) {
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

    /// The `bra` targets left when the scan ends must be labels of the
    /// outermost block (ptxas: "Unknown symbol", or "Label expected" for a
    /// variable, a parameter or a `.branchtargets`/`.callprototype` label).
    pub(super) fn check_branches(
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
