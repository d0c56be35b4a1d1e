//! What several definitions of one global symbol must agree on, and which
//! one wins: nvlink's rules, so that linking PTX here gives the module that
//! `ptxas -c` on each input and `nvlink` on the objects would give.
//!
//! **Bindings.** `ptxas -c` turns a `.common` variable *with* an
//! initializer into an ordinary definition, so nvlink treats it as
//! `.visible` ([`binding`]); only one without an initializer is common.
//!
//! **The winner.** A `.visible` definition (or initialized `.common`); else
//! the first `.weak` one (in input order); else the largest `.common` one
//! (the first among equals).
//!
//! **What must agree, or the link fails** (checked against the winner):
//! - the kind: function, kernel or variable;
//! - a variable's state space (`.global` vs `.const`);
//! - a variable's size in bytes, unless both are `.common` (then the
//!   largest wins) or a `.common` one is smaller than an initialized
//!   definition (which then holds it);
//! - a sized `.extern` declaration's size (`[]` leaves it open), checked in
//!   [`crate::resolve`];
//! - a function's prototype: the same number of return values and
//!   parameters, each of the same size, float or not float alike (`.f32` vs
//!   `.b32` differ, `.u32` vs `.b32` do not), arrays of the same element size
//!   and count. `.reg` vs `.param` does not matter. Alignment does not matter
//!   to nvlink but does to ptxas on the merged module ("Alignment of argument
//!   does not match formal parameter"), so it must agree too.
//!
//! What need not agree: a variable's element type (`.b8 t[16]` vs
//! `.u32 t[4]`), its initializer and its alignment (the winner's is kept; a
//! losing definition that asked for a larger `.align` gets a warning, since
//! its module's code may rely on it).
//!
//! # The experiments behind these rules
//!
//! Each pair below is `a.ptx` then `b.ptx`, each with a kernel that uses the
//! symbol, compiled with `ptxas -c -arch=sm_90` (CUDA 13.5.37) and linked
//! with `nvlink -arch=sm_90 a.o b.o` and `nvlink -arch=sm_90 b.o a.o`; the
//! winner was read from the linked cubin's symbol table and data sections
//! (`readelf -s`, `readelf -x .nv.global.init`), a function's from the bytes
//! of its `.text` section. "Either order" means the same verdict both ways.
//!
//! | a.ptx | b.ptx | nvlink 13.5 |
//! |---|---|---|
//! | `.weak .global .align 4 .b8 table[8]` | `.weak ... table[16]` | either order: `Size doesn't match for 'table' in 'b.o', first specified in 'a.o'` |
//! | `.weak .global .align 4 .b8 table[16]` | `.weak .global .align 16 .b8 table[16]` | links; the first wins, with its alignment |
//! | `.weak ... table[16] = {1, ..}` | `.weak ... table[16] = {21, ..}` | links; the first's initializer |
//! | `.weak ... table[16]` (no initializer) | `.weak ... table[16] = {21, ..}` | links; the first wins |
//! | `.weak .global ... table[16]` | `.weak .const ... table[16]` | either order: `Memory space doesn't match for 'table' in 'b.o', first specified in 'a.o'` |
//! | `.weak .global .align 4 .b8 table[16]` | `.weak .global .align 4 .u32 table[4]` | links (also `.u32` vs `.f32`) |
//! | `.weak .const .b8 table[8]` | `.weak .const .b8 table[16]` | either order: `Size doesn't match` |
//! | `.common .global .b8 table[8]` | `.common .global .b8 table[16]` | links; 16 bytes either order |
//! | `.common .global .align 4 .b8 table[16]` | `.common ... .align 16 ... table[16]` | links; the first's alignment |
//! | `.common .global .align 16 .b8 table[8]` | `.common .global .align 4 .b8 table[16]` | links; 16 bytes at the *first's* alignment (16, or 4 in the other order) |
//! | `.weak ... table[16]` | `.visible ... table[16]` | links; the `.visible` one either order |
//! | `.weak ... table[8]` | `.visible ... table[16]` (or 16 vs 8) | either order: `Size doesn't match` |
//! | `.visible ... table[16]` | `.visible ... table[16]` | either order: `Multiple definition of 'table' in 'b.o', first defined in 'a.o'` |
//! | `.visible ... table[16] = {..}` | `.common ... table[16]` | links; the `.visible` one either order |
//! | `.visible ... table[16]` | `.common ... table[32]` (or 32 vs 16) | either order: `Size doesn't match` (b, a adds `Common symbol 'table' in file 'b.o' has larger size than initialization`) |
//! | `.weak ... table[16]` (with or without initializer) | `.common ... table[16]` | a, b: links, the `.weak` one; b, a: **nvlink crashes** (segmentation fault) |
//! | `.weak ... table[8]` | `.common ... table[16]` (or 32 vs 16) | either order: `Size doesn't match` |
//! | `.common .global .b8 g[4] = {5}` | `.visible .global .b8 g[4]` | either order: `Multiple definition of 'g'` (an initialized `.common` is a definition) |
//! | `.common ... g[4] = {5}` | `.weak ... g[4]` (with or without initializer) | links; the `.common` one either order |
//! | `.common ... g[4]` | `.visible ... g[8] = {1}` (also `.weak`, `.common ... = {..}`) | links; the initialized 8 bytes either order (`.weak`: b, a only; a, b crashes as above) |
//! | `.common ... g[8]` | `.visible` (or `.weak`) `... g[4] = {1}` | either order: `Common symbol 'g' in file 'a.o' has larger size than initialization` |
//! | `.common ... g[4]` | `.visible ... g[8]` (no initializer; or 8 vs 4) | either order: `Size doesn't match` (or "larger size than initialization") |
//! | `.visible .global .u64 g[2]` (any linkage) | `.extern .global .u64 g[1]` (or `g[3]`, or `g`) | either order: `Size doesn't match` |
//! | `.visible .global .u64 g[2]` | `.extern .global .u64 g[]` (or `.b8 g[16]`) | links |
//! | `.extern .global .u64 g[3]` | `.extern .global .u64 g[1]` (no definition) | either order: `Size doesn't match` |
//! | `.extern .global .u16 g[]`, then `.extern .global .u16 g[3]` (or several sizes) | then `.weak` or `.visible .global .u16 g[2]` (three inputs) | in this order only: links, the 4-byte definition (the sized declarations go unchecked; every other order: `Size doesn't match`); the linker refuses every order |
//! | `.extern .global .align 4 .u32 g`, then `.common .global .align 4 .u32 g` | then `.common ... g[4]`, or `.visible` or `.weak ... g[4] = {..}` (three inputs) | in this order, and with the `.common` first: links, 16 bytes (nvlink holds a sized declaration to the size so far, and a definition after a declaration to its size, then a `.common` may grow); `.extern`, `g[4]`, `g`, or a declaration after `g[4]`: `Size doesn't match`; the linker checks each declaration against the winner and refuses every order |
//! | `.extern .shared .b8 s[4]` | `.extern .shared .b8 s[4]` (no definition) | either order: `Undefined reference to 's'`; only `[]` is dynamic shared memory |
//! | `.extern .shared .b8 s[4]` | `.extern .shared .b8 s[]` | a, b: `Undefined reference`; b, a: links (the linker refuses both orders) |
//! | `.common .u64 g`, then `.weak .u64 g[2]` (with or without initializer) | then `.visible .u64 g = 36` (three inputs) | in this order only: links, the 8-byte `.visible` one (any other order of the three: `Size doesn't match`) |
//! | `.weak .func f(.param .b32 x)` | `.extern .func f();`, its address in `.global .u64 p = f;` | a, b: links; b, a: `Prototype doesn't match` (without `p`: either order) |
//! | `.weak .func (.param .b32 r) f(.param .b32 x)` | the same prototype, another body | links; the first body |
//! | `.weak .func` | `.visible .func`, same prototype | links; the `.visible` body either order |
//! | `.visible .func f` | `.visible .func f` | either order: `Multiple definition of 'f' in 'b.o', first defined in 'a.o'` |
//! | `.weak .func ... f(.param .b32 x)` | `.weak` (or `.visible`) `.func ... f(.param .b64 x)` | either order: `Prototype doesn't match for 'f' in 'b.o', first defined in 'a.o'` |
//! | `f(.param .b32 x)` | `f(.param .f32 x)` | either order: `Prototype doesn't match` |
//! | `f(.param .b32 x)` | `f(.param .u32 y)` | links |
//! | `f(.param .b32 x)` | `f(.param .b32 x, .param .b32 z)` | either order: `Prototype doesn't match` |
//! | `(.param .b32 r) f(..)` | `f(..)` (no return value) | either order: `Prototype doesn't match` |
//! | `f(.param .align 8 .b8 x[8])` | `f(.param .align 4 .b8 x[8])` | links (ptxas refuses the merged module) |
//! | `f(.param .b64 x)` | `f(.param .align 8 .b8 x[8])` | either order: `Prototype doesn't match` |
//! | `(.reg .b32 r) f(.reg .b32 x)` | `(.param .b32 r) f(.param .b32 x)` | links |
//! | `.extern .func ... f(.param .f32 x);` | `.visible .func ... f(.param .b32 x)` | either order: `Prototype doesn't match` |
//!
//! nvlink compares the prototype strings `ptxas -c` writes into `.strtab`
//! (`#ii` for `(.b32) f(.b32)`, `#vf` for `f(.f32)`, `#il` for a `.b64`
//! parameter, `#ib8` for `.align N .b8 x[8]` whatever `N`, `#if2` for
//! `.f32 x[2]`, `#vh` for `.b16` and `.f16` alike).
//!
//! Where the linker differs: with `.weak` and `.common` definitions of one
//! size the `.weak` one wins in either order (nvlink crashes in one); among
//! `.common`s of different sizes the largest wins with its own alignment
//! (nvlink keeps the first one's alignment), and a larger `.align` that
//! loses is reported as a warning; a sized `.extern .shared` array that
//! nothing defines is unresolved whatever other declarations say (nvlink
//! accepts it after a `[]` declaration of the same name, in that order only);
//! a sized `.extern` whose size differs from the definition's is refused even
//! where nvlink, after a `[]` declaration and before the definition, does not
//! check it (that input's code would read past the end);
//! definitions of different sizes are refused even where nvlink, once a
//! `.common` has merged into a `.weak` (initialized or not), forgets that
//! size and takes a later `.visible` of another one (the `.weak` input's
//! code would read past the end);
//! prototypes that differ only in a `.param .align N .b8 x[M]`'s `N` are
//! refused although nvlink links them (its prototype strings leave `N` out),
//! since ptxas refuses the merged module ("Alignment of argument does not
//! match formal parameter");
//! prototypes that differ are refused even where nvlink, in one order, skips
//! the check because a module takes the function's address in an
//! initializer (its calls would pass the wrong arguments, and ptxas refuses
//! them in the merged module);
//! a kernel (`.entry`) without a linkage directive is global: two modules
//! that each define `.entry k` are refused as duplicates, where ptxas makes
//! such a kernel file-local and nvlink links both (the host looks kernels
//! up by name, and one output module cannot hold two of one name);
//! a variable generated by `a<N>` is exported under its plain name (`a2`),
//! where ptxas names the object's symbol after the first spelling a body
//! uses (`a02`), so another module's `.extern a02` resolves here and its
//! `.extern a2` does not under nvlink; a sized `.extern` is checked against
//! the winner's size, where nvlink checks it against the size so far, which
//! a later definition may grow after an uninitialized `.common` of the
//! declared size (see the table; the declaring input only reads less than
//! there is, but nvlink refuses the other orders).
//!
//! `tests/differential` checks these rules against nvlink on random
//! programs; the rows above with `g` came out of it.

use crate::ast::{FnKind, Function, Item, ItemKind, Linkage, Module, Variable};
use crate::diagnostic::{count, Diagnostic};
use crate::resolve::{from, nvlink_same_prototype, proto_diff, what, Words};
use crate::symbols::ItemRef;

/// How `ptxas -c` binds a definition, which is what nvlink resolves by: a
/// `.common` variable with an initializer becomes an ordinary (strong)
/// definition, like `.visible`; without one it stays common.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// `.visible`, file-local, or an initialized `.common`.
    Strong,
    /// `.weak`.
    Weak,
    /// A `.common` variable without initializer.
    Common,
}

/// The binding of a definition.
pub fn binding(item: &Item<'_>) -> Binding {
    match (&item.kind, item.linkage().unwrap_or(Linkage::Local)) {
        (_, Linkage::Weak) => Binding::Weak,
        (ItemKind::Variable(v), Linkage::Common) if v.init.is_none() => Binding::Common,
        _ => Binding::Strong,
    }
}

/// The definition that wins among `defs` (input order), by [`binding`]:
/// a strong one, else the first `.weak`, else the largest `.common`.
pub fn winner(modules: &[Module<'_>], defs: &[ItemRef]) -> Option<ItemRef> {
    let item = |r: &ItemRef| &modules[r.module].items[r.item];
    let bind = |r: &ItemRef| binding(item(r));
    let size = |r: &ItemRef| match &item(r).kind {
        // An oversized one has been reported by the parser.
        ItemKind::Variable(v) => v.size_bytes().unwrap_or(u64::MAX),
        _ => 0,
    };
    let strong = defs.iter().find(|r| bind(r) == Binding::Strong);
    let weak = || defs.iter().find(|r| bind(r) == Binding::Weak);
    // Largest wins; among equals, the first.
    let common = || {
        defs.iter().filter(|r| bind(r) == Binding::Common).fold(
            None,
            |best: Option<&ItemRef>, r| match best {
                Some(b) if size(b) >= size(r) => Some(b),
                _ => Some(r),
            },
        )
    };
    strong
        .or_else(weak)
        .or_else(common)
        .or_else(|| defs.first())
        .copied()
}

/// Checks `other`, a definition that lost, against `def`, the winner of
/// symbol `name`: an error where nvlink refuses the pair, a warning where
/// the winner's alignment is smaller than `other` asked for.
pub fn check_definition(
    modules: &[Module<'_>],
    name: &str,
    def: ItemRef,
    other: ItemRef,
    diags: &mut Vec<Diagnostic>,
) {
    let d = &modules[def.module].items[def.item];
    let o = &modules[other.module].items[other.item];
    let (Some(dn), Some(on)) = (d.symbol_name(), o.symbol_name()) else {
        return;
    };
    if what(&d.kind) != what(&o.kind) {
        diags.push(
            Diagnostic::error(
                on.span,
                format!(
                    "`{name}`{} is {} here but {} elsewhere",
                    from(o),
                    what(&o.kind),
                    what(&d.kind)
                ),
            )
            .with_secondary(dn.span, format!("`{name}` defined here{}", from(d)))
            .with_help(format!("rename one of the two `{name}`s")),
        );
        return;
    }
    match (&o.kind, &d.kind) {
        (ItemKind::Variable(ov), ItemKind::Variable(dv)) => {
            check_variables(name, (o, ov), (d, dv), diags);
        }
        (ItemKind::Function(of), ItemKind::Function(df)) => {
            check_functions(name, of, df, diags);
        }
        _ => {}
    }
}

pub(crate) fn linkage_word(l: Linkage) -> &'static str {
    match l {
        Linkage::Local => "file-local",
        Linkage::Visible => "`.visible`",
        Linkage::Extern => "`.extern`",
        Linkage::Weak => "`.weak`",
        Linkage::Common => "`.common`",
    }
}

fn check_variables(
    name: &str,
    (o, ov): (&Item<'_>, &Variable<'_>),
    (d, dv): (&Item<'_>, &Variable<'_>),
    diags: &mut Vec<Diagnostic>,
) {
    let (on, dn) = (ov.name, dv.name);
    if ov.space != dv.space {
        diags.push(
            Diagnostic::error(
                on.span,
                format!(
                    "`{name}`{} is defined in `.{}` here but in `.{}` elsewhere",
                    from(o),
                    ov.space.as_str(),
                    dv.space.as_str()
                ),
            )
            .with_label(format!("a {} definition in `.{}`", linkage_word(ov.linkage), ov.space.as_str()))
            .with_secondary(
                dn.span,
                format!("the {} definition of `{name}` in `.{}`{}", linkage_word(dv.linkage), dv.space.as_str(), from(d)),
            )
            .with_help(format!(
                "define `{name}` in one state space everywhere (nvlink refuses this pair too: \"Memory space doesn't match\")"
            )),
        );
        return;
    }
    if let (Some(os), Some(ds)) = (ov.size_bytes(), dv.size_bytes()) {
        if let Some(why) = size_conflict((o, os), (d, ds)) {
            let big = os.max(ds);
            diags.push(
                Diagnostic::error(
                    on.span,
                    format!(
                        "`{name}`{} is {} here but {} in another definition",
                        from(o),
                        count(os, "byte", "bytes"),
                        count(ds, "byte", "bytes"),
                    ),
                )
                .with_label(format!("a {} definition of {}", linkage_word(ov.linkage), count(os, "byte", "bytes")))
                .with_secondary(
                    dn.span,
                    format!("the {} definition of `{name}`, {}{}", linkage_word(dv.linkage), count(ds, "byte", "bytes"), from(d)),
                )
                .with_help(format!(
                    "give every definition of `{name}` the same size ({big} bytes holds both), or define it once and declare it `.extern` elsewhere \
                     ({why})"
                )),
            );
            return;
        }
    }
    let (oa, da) = (ov.align_bytes(), dv.align_bytes());
    if oa > da {
        diags.push(
            Diagnostic::error(
                on.span,
                format!(
                    "`{name}`{} asks for `.align {oa}` here, but the definition that is kept has `.align {da}`",
                    from(o)
                ),
            )
            .with_label(format!("this {} definition is dropped", linkage_word(ov.linkage)))
            .with_secondary(dn.span, format!("the {} definition of `{name}` that is kept{}", linkage_word(dv.linkage), from(d)))
            .with_help(format!(
                "give every definition of `{name}` the same `.align` ({oa}), if this input's code relies on it"
            ))
            .warning(),
        );
    }
}

/// Why nvlink refuses two definitions of these sizes (`o` lost to `d`), or
/// `None` when it accepts them. Two uncommon definitions must have one
/// size; a `.common` one (no initializer) may be smaller than an
/// initialized definition, which then holds it, but must otherwise have
/// its size; among `.common`s the largest wins.
fn size_conflict((o, os): (&Item<'_>, u64), (d, ds): (&Item<'_>, u64)) -> Option<&'static str> {
    if os == ds {
        return None;
    }
    let initialized = |i: &Item<'_>| matches!(&i.kind, ItemKind::Variable(v) if v.init.is_some());
    match (binding(o), binding(d)) {
        (Binding::Common, Binding::Common) => None,
        (Binding::Common, _) if os < ds && initialized(d) => None,
        (Binding::Common, _) | (_, Binding::Common) if initialized(d) || initialized(o) => Some(
            "the `.common` one is larger than the initialized one; nvlink refuses this pair too: \
             \"Common symbol has larger size than initialization\"",
        ),
        _ => Some(
            "keeping either one would let the other input's code read past its end; nvlink refuses this pair too: \"Size doesn't match\"",
        ),
    }
}

const DEF_WORDS: Words = Words {
    a_verb: "defined here",
    b_verb: "defined there",
    a_place: "this definition",
    b_place: "the other one",
};

fn check_functions(name: &str, of: &Function<'_>, df: &Function<'_>, diags: &mut Vec<Diagnostic>) {
    if of.kind == FnKind::Entry || df.kind == FnKind::Entry {
        // Two kernels of one name: reported as a duplicate symbol.
        return;
    }
    if let Some(p) = proto_diff(of, df, &DEF_WORDS) {
        let why = if nvlink_same_prototype(of, df) {
            "nvlink would keep one, but ptxas refuses the merged module's calls that follow the other: \"Alignment of argument does not match formal parameter\""
        } else {
            "callers compiled against the other would pass the wrong arguments; nvlink refuses this pair too: \"Prototype doesn't match\""
        };
        diags.push(
            Diagnostic::error(
                of.name.span,
                format!("definitions of `{name}` have different prototypes: {p}"),
            )
            .with_label(format!("a {} definition", linkage_word(of.linkage)))
            .with_secondary(
                df.name.span,
                format!(
                    "the {} definition of `{name}` that is kept",
                    linkage_word(df.linkage)
                ),
            )
            .with_help(format!(
                "give every definition of `{name}` the same prototype ({why})"
            )),
        );
    }
}
