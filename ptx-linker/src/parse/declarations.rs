//! What ptxas 13.5 checks across one module's declarations of a name: a
//! function declared and defined with consistent linkages
//! ([`check_redefinition`]), a variable or a parameterized prefix defined
//! twice, an `.alias` and the linkage it takes ([`alias_linkage`]); and the
//! module-scope names declared so far, which the bodies that follow see.

use super::Cursor;
use crate::ast::{FnKind, ItemKind, Linkage, Module, Name};
use crate::diagnostic::{Diagnostic, Span};

/// The linkage a function or variable `name` declared here has, given the
/// module's earlier declarations, as ptxas 13.5 decides (each pair checked
/// with readelf on `ptxas -c` objects). `defines`: a function with a body, a
/// variable not `.extern`. A function defined after a declaration without a
/// body: a definition with no linkage directive takes a `.visible` or
/// `.weak` declaration's linkage; otherwise both must say the same, and an
/// `.extern` declaration takes no definition in its module ("Inconsistent
/// redefinition"). A variable defined without a linkage directive after an
/// `.extern` declaration is refused too ("'.extern' variable cannot be
/// resolved by a '.static'"). Reports a refused pair (and returns `linkage`).
pub(super) fn check_redefinition<'src>(
    c: &mut Cursor<'_, 'src>,
    name: Name<'src>,
    linkage: Linkage,
    function: bool,
    defines: bool,
) -> Linkage {
    let Some(&FirstDeclaration {
        linkage: first,
        function: first_is_function,
        name: decl,
        defined,
    }) = c.declared.get(name.text)
    else {
        // Functions always (a declaration after a definition is refused),
        // variables when declared `.extern`.
        if function || !defines {
            let first = FirstDeclaration {
                linkage,
                function,
                name,
                defined: function && defines,
            };
            c.declared.insert(name.text, first);
        }
        return linkage;
    };
    if first_is_function != function {
        return linkage;
    }
    if function && !defines {
        // ptxas: "Duplicate definition of function" after a definition,
        // "Inconsistent redefinition" for two declarations of different linkage.
        let inherits =
            linkage == Linkage::Local && matches!(first, Linkage::Visible | Linkage::Weak);
        if defined || (first != linkage && !inherits) {
            let msg = if defined {
                format!("function `{}` is declared after its definition", name.text)
            } else {
                format!(
                    "function `{}` is declared again with another linkage",
                    name.text
                )
            };
            c.errors.push(
                Diagnostic::error(name.span, msg)
                    .with_label("this declaration")
                    .with_secondary(decl.span, "first declared or defined here")
                    .with_help(
                        "declare a function once, before its definition, with the \
                         definition's linkage; ptxas refuses this module",
                    ),
            );
        }
        return linkage;
    }
    if let (true, Some(e)) = (function, c.declared.get_mut(name.text)) {
        e.defined = true;
    } else if !defines {
        return linkage;
    }
    let agrees = if function {
        match (first, linkage) {
            (Linkage::Visible | Linkage::Weak, Linkage::Local) => return first,
            (a, b) => a == b && a != Linkage::Extern,
        }
    } else {
        !(first == Linkage::Extern && linkage == Linkage::Local)
    };
    if !agrees {
        let word = |l: Linkage| match l {
            Linkage::Local => "no linkage directive (file-local)",
            _ => crate::agree::linkage_word(l),
        };
        c.errors.push(
            Diagnostic::error(
                name.span,
                format!(
                    "{} `{}` is defined with {} after a declaration with {}",
                    if function { "function" } else { "variable" },
                    name.text,
                    word(linkage),
                    word(first)
                ),
            )
            .with_label("this definition")
            .with_secondary(decl.span, "declared here")
            .with_help(
                "give the declaration and the definition the same linkage (a definition \
                 without one takes a `.visible` or `.weak` declaration's); ptxas refuses \
                 this module",
            ),
        );
    }
    linkage
}

/// Where the module-scope symbol `name` was first declared, if it has been
/// so far.
pub(crate) fn module_declaration(c: &Cursor<'_, '_>, name: &str) -> Option<Span> {
    let first = c.declared.get(name).map(|d| d.name.span);
    first
        .or_else(|| c.defined_vars.get(name).map(|(_, n)| n.span))
        .or_else(|| c.module_names.declaration(name))
}

/// The first declaration or definition of a name in a module
/// ([`check_redefinition`]).
#[derive(Clone, Copy)]
pub(super) struct FirstDeclaration<'src> {
    linkage: Linkage,
    /// A function's (else a variable's).
    function: bool,
    name: Name<'src>,
    /// A function's definition has come (this one or a later one).
    defined: bool,
}

/// A variable `name` defined with `linkage`: reports a second definition in
/// the module when either is `.weak` or `.common` (ptxas 13.5: "Duplicate
/// definition of variable"; the symbol table reports the other repeats).
pub(super) fn check_defined_twice<'src>(
    c: &mut Cursor<'_, 'src>,
    name: Name<'src>,
    linkage: Linkage,
) {
    let shared = |l: Linkage| matches!(l, Linkage::Weak | Linkage::Common);
    let earlier = c.defined_vars.get(name.text).copied();
    if let Some((first_linkage, first)) = earlier {
        if !shared(first_linkage) && !shared(linkage) {
            return;
        }
        c.errors.push(
            Diagnostic::error(
                name.span,
                format!("variable `{}` is defined twice in this module", name.text),
            )
            .with_label("a second definition")
            .with_secondary(first.span, "first defined here")
            .with_help(
                "remove one definition; ptxas refuses two in one module, `.weak` and \
                 `.common` ones too",
            ),
        );
    } else {
        c.defined_vars.insert(name.text, (linkage, name));
    }
}

/// Whether the parameterized variables `prefix<N>` defined here repeat a
/// prefix this module defined before (reported: ptxas refuses it); else
/// records it.
pub(super) fn prefix_defined_twice<'src>(c: &mut Cursor<'_, 'src>, prefix: Name<'src>) -> bool {
    let Some(first) = c.defined_prefixes.get(prefix.text).copied() else {
        c.defined_prefixes.insert(prefix.text, prefix);
        return false;
    };
    c.errors.push(
        Diagnostic::error(
            prefix.span,
            format!(
                "parameterized variables `{}<…>` are defined twice in this module",
                prefix.text
            ),
        )
        .with_label("a second definition of this prefix")
        .with_secondary(first.span, "first defined here")
        .with_help(format!(
            "remove one definition, or give it another prefix; ptxas refuses two \
             definitions of one prefix in a module, whatever their counts and linkages \
             (\"Duplicate definition of variable '{}<'\")",
            prefix.text
        )),
    );
    true
}

/// Records a module-scope symbol's name (`count`: the variables
/// `name<count>` declares, which the caller records) for the bodies that
/// follow; for bodies before and after it, when it starts with `%`, and
/// whether a body came before it.
pub(super) fn add_module_symbol<'src>(
    c: &mut Cursor<'_, 'src>,
    name: &'src str,
    count: Option<u32>,
) {
    if count.is_none() {
        c.module_names.add(name);
    }
    if name.starts_with('%') {
        c.late_percent |= c.after_body && !c.percent_symbols.contains(name);
        c.percent_symbols.add(name, count);
    }
}

/// The linkage of `.alias alias, target;`: the aliasee's, as ptxas 13.5 gives
/// it (a file-local function's alias is file-local whatever its own
/// declaration says); for an alias of an alias, its own declaration's.
/// Reports what ptxas refuses: an alias or aliasee not
/// declared as a function before the `.alias` ("Unknown symbol"), and a
/// `.weak` or `.extern` aliasee ("cannot be aliased"); `.visible` then.
pub(super) fn alias_linkage(
    c: &mut Cursor<'_, '_>,
    m: &Module<'_>,
    span: Span,
    alias: Name<'_>,
    target: Name<'_>,
) -> Linkage {
    let declared = |name: &str| {
        m.items.iter().rev().find_map(|i| match &i.kind {
            ItemKind::Function(f) if f.name.text == name && f.kind == FnKind::Func => {
                Some(f.linkage)
            }
            _ => None,
        })
    };
    let help = "declare both functions before the `.alias` (the alias with the aliasee's \
                prototype), and alias a file-local or `.visible` function";
    for name in [target, alias] {
        if declared(name.text).is_none() {
            c.errors.push(
                Diagnostic::error(
                    name.span,
                    format!(
                        "`.alias`: no function `{}` is declared before it",
                        name.text
                    ),
                )
                .with_help(help),
            );
            return Linkage::Visible;
        }
    }
    // An alias of an alias: ptxas gives it its own declaration's linkage
    // (`.extern` as `.visible`) and refuses one without a directive
    // ("Internal error: alias to unknown symbol").
    let of_alias = m
        .items
        .iter()
        .any(|i| matches!(&i.kind, ItemKind::Alias { alias: a, .. } if a.text == target.text));
    if of_alias {
        return match declared(alias.text) {
            Some(Linkage::Visible | Linkage::Extern) => Linkage::Visible,
            Some(Linkage::Weak) => Linkage::Weak,
            _ => {
                c.errors.push(
                    Diagnostic::error(
                        span,
                        format!(
                            "`.alias {}, {}`: `{}` is an alias, and an alias of an alias needs \
                             a linkage directive on its own declaration",
                            alias.text, target.text, target.text
                        ),
                    )
                    .with_help(
                        "declare the alias `.visible` or `.weak`, or alias the function itself; \
                         ptxas refuses this (\"alias to unknown symbol\")",
                    ),
                );
                Linkage::Visible
            }
        };
    }
    match declared(target.text) {
        Some(l @ (Linkage::Weak | Linkage::Extern | Linkage::Common)) => {
            c.errors.push(
                Diagnostic::error(
                    span,
                    format!(
                        "`.alias {}, {}`: `{}` is {}, which ptxas does not alias",
                        alias.text,
                        target.text,
                        target.text,
                        crate::agree::linkage_word(l)
                    ),
                )
                .with_help(help),
            );
            Linkage::Visible
        }
        Some(l) => l,
        None => Linkage::Visible,
    }
}
