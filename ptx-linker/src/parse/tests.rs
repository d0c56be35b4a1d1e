//! Tests of the parser on whole modules: items, recovery, linkages and
//! aliases as ptxas takes them, parameterized names.

use super::*;

#[test]
fn parses_header_and_items() {
    let src = ".version 7.8\n.target sm_52, texmode_independent, debug\n.address_size 64\n\
               .extern .func (.param .b32 r) f(.param .b32 a);\n\
               .global .align 8 .u64 t[2] = {generic(g), 15};\n\
               .visible .entry k(.param .u64 .ptr .global .align 16 p)\n.maxntid 128, 1, 1\n{\n ret;\n}\n";
    let m = parse(FileId(0), src);
    assert!(m.errors.is_empty(), "{:?}", m.errors);
    assert_eq!(m.version.unwrap().0.to_string(), "7.8");
    let t = m.target.clone().unwrap();
    assert_eq!((t.arch, t.sm), ("sm_52", 52));
    assert_eq!(t.options, ["texmode_independent", "debug"]);
    assert_eq!(m.address_size.unwrap().0, 64);
    assert_eq!(m.items.len(), 3);
    let ItemKind::Variable(v) = &m.items[1].kind else {
        panic!()
    };
    assert_eq!((v.size_bytes(), v.align_bytes()), (Some(16), 8));
    assert_eq!(m.item_refs(&m.items[1])[0].text, "g");
}

#[test]
fn recovers_and_reports() {
    let src = ".version 7.8\n.target sm_90\n.global .u32 ;\n.bogus x;\n.global .u32 ok;\n";
    let m = parse(FileId(0), src);
    assert_eq!(m.errors.len(), 2);
    assert_eq!(m.errors[0].message, "expected a variable name, found `;`");
    assert_eq!(
        m.errors[1].message,
        "unknown module-scope directive `.bogus`"
    );
    assert_eq!(m.items.len(), 1);
}

#[test]
fn never_panics() {
    for src in [
        "",
        "{",
        "}",
        ".entry",
        ".func (",
        ".version",
        ".global .b8 x[",
        ".entry k(.param",
        ".entry k() {",
        ".section .a {",
        ".file",
        ".alias a",
        ".visible",
        ".global .u32 x = {{1,2},{3",
        ".global .u32 a<",
        ".global .u32 a<4",
        ".global .u32 a<4>",
        ".global .u32 a<4>[",
        ".global .u32 a<4> =",
        ".entry k() { .shared .u32 s<",
        ".entry k() { .local .u32 x<4",
        "\u{1F600}",
    ] {
        let _ = parse(FileId(0), src);
    }
}

const HEAD: &str = ".version 7.8\n.target sm_90\n.address_size 64\n";

fn vars<'a>(m: &'a Module<'_>) -> Vec<&'a Variable<'a>> {
    m.items
        .iter()
        .filter_map(|i| match &i.kind {
            ItemKind::Variable(v) => Some(v),
            _ => None,
        })
        .collect()
}

#[test]
fn a_declaration_and_a_definition_agree_on_linkage_as_ptxas_requires() {
    // Every pair checked with ptxas 13.5 (readelf for the linkage it gives): a function
    // declared, then defined ("Inconsistent redefinition" where refused); a variable
    // declared or defined, then defined ("Duplicate definition of variable", "'.extern'
    // variable 'x' cannot be resolved by a '.static'"). `V`: accepted, the definition's
    // linkage; `v` / `w`: accepted, `.visible` / `.weak` taken from the declaration.
    let l = ["", ".visible ", ".extern ", ".weak ", ".common "];
    let functions = [
        ("", "", "V"),
        ("", ".visible ", "x"),
        ("", ".weak ", "x"),
        (".visible ", "", "v"),
        (".visible ", ".visible ", "V"),
        (".visible ", ".weak ", "x"),
        (".extern ", "", "x"),
        (".extern ", ".visible ", "x"),
        (".extern ", ".weak ", "x"),
        (".weak ", "", "w"),
        (".weak ", ".visible ", "x"),
        (".weak ", ".weak ", "V"),
    ];
    for (decl, def, want) in functions {
        let src = format!(
            "{HEAD}{decl}.func (.reg .u32 r) f();\n{def}.func (.reg .u32 r) f()\n{{\nret;\n}}\n"
        );
        let m = parse(FileId(0), &src);
        let f = match &m.items.last().unwrap().kind {
            ItemKind::Function(f) => f,
            _ => panic!("not a function"),
        };
        match want {
            "x" => assert!(
                errors(&src).contains("function `f` is defined with"),
                "{decl:?} {def:?}: {:?}",
                m.errors
            ),
            _ => {
                assert!(m.errors.is_empty(), "{decl:?} {def:?}: {:?}", m.errors);
                let (linkage, inherited) = match want {
                    "v" => (Linkage::Visible, true),
                    "w" => (Linkage::Weak, true),
                    _ => (f.linkage, false),
                };
                assert_eq!((f.linkage, f.linkage_inherited), (linkage, inherited));
            }
        }
    }
    // A declaration after the definition ("Duplicate definition of function"), and
    // two declarations of different linkage ("Inconsistent redefinition").
    let body = "{\nret;\n}\n";
    for (src, want) in [
        (
            format!("{HEAD}.visible .func f()\n{body}.visible .func f();\n"),
            "function `f` is declared after its definition",
        ),
        (
            format!("{HEAD}.func f();\n.visible .func f();\n.func f()\n{body}"),
            "function `f` is declared again with another linkage",
        ),
    ] {
        assert!(errors(&src).contains(want), "{src:?}: {}", errors(&src));
    }
    for first in ["", ".visible ", ".weak "] {
        let src = format!("{HEAD}{first}.func f();\n.func f();\n.func f()\n{body}");
        assert_eq!(errors(&src), "", "{first:?}");
    }
    // Variables: the parser refuses `.extern` then file-local, and a second definition
    // when either is `.weak` or `.common` (the symbol table refuses the other repeats).
    for first in l {
        for second in l {
            let src = format!("{HEAD}{first}.global .u32 x;\n{second}.global .u32 x;\n");
            let e = errors(&src);
            let refused = match (first, second) {
                (".extern ", "") => e.contains("variable `x` is defined with no linkage"),
                (".extern ", _) | (_, ".extern ") => e.is_empty(),
                (a, b) if [a, b].iter().any(|l| [".weak ", ".common "].contains(l)) => {
                    e.contains("variable `x` is defined twice in this module")
                }
                _ => e.is_empty(),
            };
            assert!(refused, "{first:?} {second:?}: {e}");
        }
    }
}

#[test]
fn the_sink_cannot_name_a_symbol() {
    // ptxas 13.5: "Parsing error near '_'"; `_x` and `__` are names.
    for src in [
        format!("{HEAD}.global .u32 a, _;\n"),
        format!("{HEAD}.func _()\n{{\nret;\n}}\n"),
    ] {
        assert!(
            errors(&src).contains("`_` cannot name a variable or function"),
            "{src:?}"
        );
    }
    assert_eq!(errors(&format!("{HEAD}.global .u32 _x, __;\n")), "");
}

#[test]
fn an_alias_is_refused_where_ptxas_refuses_it() {
    // ptxas 13.5: "Function 'f' with .weak scope cannot be aliased" (`.extern` too),
    // "Unknown symbol 'f'" when the aliasee or the alias is not declared before.
    let f = |l: &str| format!("{l}.func (.reg .u32 r) f()\n{{\n  ret;\n}}\n");
    let h = ".func (.reg .u32 r) h();\n";
    let cases = [
        (
            format!("{HEAD}{}{h}.alias h, f;\n", f(".weak ")),
            "`.alias h, f`: `f` is `.weak`",
        ),
        (
            format!("{HEAD}.extern .func (.reg .u32 r) f();\n{h}.alias h, f;\n"),
            "`.alias h, f`: `f` is `.extern`",
        ),
        (
            format!("{HEAD}{h}.alias h, f;\n{}", f("")),
            "no function `f` is declared",
        ),
        (
            format!("{HEAD}{}.alias h, f;\n", f("")),
            "no function `h` is declared",
        ),
    ];
    for (src, want) in cases {
        let e = errors(&src);
        assert!(e.contains(want), "{src:?}: {e}");
    }
    for l in ["", ".visible "] {
        let src = format!("{HEAD}{}{h}.alias h, f;\n", f(l));
        let m = parse(FileId(0), &src);
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        let want = if l.is_empty() {
            Linkage::Local
        } else {
            Linkage::Visible
        };
        assert_eq!(m.items.last().unwrap().linkage(), Some(want));
        // An alias of that alias takes its own declaration's linkage (`.extern` as
        // `.visible`), and needs one ("Internal error: alias to unknown symbol").
        for (l2, want) in [
            (".visible ", Linkage::Visible),
            (".extern ", Linkage::Visible),
            (".weak ", Linkage::Weak),
        ] {
            let src = format!(
                "{HEAD}{}{h}.alias h, f;\n{l2}.func (.reg .u32 r) h2();\n.alias h2, h;\n",
                f(l)
            );
            let m = parse(FileId(0), &src);
            assert!(m.errors.is_empty(), "{:?}", m.errors);
            assert_eq!(
                m.items.last().unwrap().linkage(),
                Some(want),
                "{l:?} {l2:?}"
            );
        }
        let src = format!(
            "{HEAD}{}{h}.alias h, f;\n.func (.reg .u32 r) h2();\n.alias h2, h;\n",
            f(l)
        );
        assert!(
            errors(&src).contains("an alias of an alias needs"),
            "{src:?}"
        );
    }
}

#[test]
fn parameterized_names_expand_to_one_item_each() {
    let src =
        format!("{HEAD}.visible .global .align 8 .u32 x, a<3>, y;\n.extern .shared .b8 s<2>;\n");
    let m = parse(FileId(0), &src);
    assert!(m.errors.is_empty(), "{:?}", m.errors);
    let names: Vec<&str> = m.items.iter().filter_map(|i| i.symbol()).collect();
    assert_eq!(names, ["x", "a0", "a1", "a2", "y", "s0", "s1"]);
    let v = vars(&m);
    // `a2`: the prefix `a`, spanning `a<3>`; index 2 of 3; no array, no initializer.
    let a2 = v[3];
    assert_eq!(a2.name.text, "a");
    assert_eq!(&src[a2.name.span.range()], "a<3>");
    let g = a2.generated.as_ref().unwrap();
    assert_eq!((&*g.name, g.index, g.count), ("a2", 2, 3));
    assert_eq!(
        (a2.linkage, a2.space, a2.align, a2.ty),
        (Linkage::Visible, Space::Global, Some(8), "u32")
    );
    assert_eq!(
        (a2.size_bytes(), a2.align_bytes(), a2.init),
        (Some(4), 8, None)
    );
    assert_eq!(a2.parameterized().as_deref(), Some("a<3>"));
    assert_eq!(v[0].parameterized(), None);
    // The items share the declaration's text; the prefix is everything up to the names.
    assert_eq!(m.items[0].span, m.items[2].span);
    assert_eq!(
        &src[m.items[2].span.start as usize..a2.prefix_end as usize],
        ".visible .global .align 8 .u32"
    );
    let s1 = v[6];
    assert_eq!(
        (s1.linkage, s1.space, s1.symbol()),
        (Linkage::Extern, Space::Shared, "s1")
    );
    assert!(!m.items[6].is_definition());
}

#[test]
fn parameterized_name_forms_ptxas_takes() {
    // Spaces inside `< >`, a hex count, and `<0>` (declares nothing).
    let src = format!("{HEAD}.global .u32 a < 2 >, h<0x2>, z<0>;\n");
    let m = parse(FileId(0), &src);
    assert!(m.errors.is_empty(), "{:?}", m.errors);
    let names: Vec<&str> = m.items.iter().filter_map(|i| i.symbol()).collect();
    assert_eq!(names, ["a0", "a1", "h0", "h1"]);
}

/// The one-line rendering of a module's errors.
fn errors(src: &str) -> String {
    let m = parse(FileId(0), src);
    crate::diagnostic::render_short(
        crate::diagnostic::Sources {
            files: &[("a.ptx", src)],
        },
        &m.errors,
    )
}

#[test]
fn parameterized_name_misuse_is_reported_with_the_fix() {
    assert_eq!(
        errors(&format!("{HEAD}.global .u32 a<4>[2];\n")),
        "a.ptx:4:14: error: parameterized variable name `a<4>` cannot be an array\n\
         a.ptx:4:18: note: not allowed after a parameterized name\n\
         help: declare the arrays one by one (`a0[..], a1[..]`), or drop the `<4>`\n"
    );
    assert_eq!(
        errors(&format!("{HEAD}.global .u32 a<2> = {{1, 2}};\n")),
        "a.ptx:4:14: error: parameterized variable name `a<2>` cannot have an initializer\n\
         a.ptx:4:19: note: not allowed after a parameterized name\n\
         help: declare the variables one by one to initialize them (`a0 = .., a1 = ..`)\n"
    );
    assert_eq!(
        errors(&format!("{HEAD}.global .u32 a<n>;\n")),
        "a.ptx:4:16: error: expected a count and `>` after `a<`\n\
         help: write how many variables to declare: `a<4>` declares `a0` .. `a3`\n"
    );
    assert_eq!(
        errors(&format!("{HEAD}.global .u32 a<4294967296>;\n")),
        "a.ptx:4:14: error: parameterized variable name `a<4294967296>`: the count does not fit 32 bits\n\
         help: declare an array `a[4294967296]` instead\n"
    );
    // Recovery: the next declaration still parses.
    let src = format!("{HEAD}.global .u32 a<4>[2];\n.global .u32 b<2>;\n");
    let m = parse(FileId(0), &src);
    assert_eq!(m.errors.len(), 1);
    assert_eq!(m.items.len(), 2);
}

#[test]
fn generated_names_are_capped_per_module() {
    let half = MAX_GENERATED_NAMES / 2;
    let ok = format!("{HEAD}.global .u8 a<{half}>;\n.global .u8 b<{half}>;\n");
    let m = parse(FileId(0), &ok);
    assert!(m.errors.is_empty(), "{:?}", m.errors);
    assert_eq!(m.items.len(), MAX_GENERATED_NAMES as usize);
    assert_eq!(
        m.items.last().unwrap().symbol(),
        Some(&*format!("b{}", half - 1))
    );
    // One more name is too many: that declaration is refused, the others stay.
    let over = format!(
        "{HEAD}.global .u8 a<{half}>;\n.global .u8 b<{}>;\n.global .u8 c;\n",
        half + 1
    );
    assert_eq!(
        errors(&over),
        format!(
            "a.ptx:5:13: error: parameterized variable name `b<{n}>` brings the module's \
             generated variables from {half} to {total}; the linker takes at most \
             {MAX_GENERATED_NAMES} per module\n\
             help: declare an array `b[{n}]` instead and address its elements as `[b+OFFSET]`\n",
            n = half + 1,
            total = MAX_GENERATED_NAMES + 1
        )
    );
    let m = parse(FileId(0), &over);
    assert_eq!(m.items.len(), half as usize + 1);
    assert_eq!(m.items.last().unwrap().symbol(), Some("c"));
}

/// The rich rendering (with labels) of a module's errors.
fn rich_errors(src: &str) -> String {
    let m = parse(FileId(0), src);
    crate::diagnostic::render_rich(
        crate::diagnostic::Sources {
            files: &[("a.ptx", src)],
        },
        &m.errors,
    )
}

#[test]
fn generated_names_cap_names_the_declaration_that_crosses_it() {
    let max = MAX_GENERATED_NAMES;
    // A full module, then one name more: the running total is what is over.
    let src = format!("{HEAD}.global .u32 a<{max}>;\n.global .u32 b<1>;\n");
    let short = errors(&src);
    assert_eq!(
        short,
        format!(
            "a.ptx:5:14: error: parameterized variable name `b<1>` brings the module's \
             generated variables from {max} to {}; the linker takes at most {max} per module\n\
             help: declare an array `b[1]` instead and address its elements as `[b+OFFSET]`\n",
            max + 1
        )
    );
    let rich = rich_errors(&src);
    assert!(
        rich.contains(&format!(
            "1 variable here, after {max} variables from the module's earlier parameterized names"
        )),
        "{rich}"
    );
    assert!(!rich.contains("1 variables"), "{rich}");
    // One declaration alone over the cap says so.
    let src = format!("{HEAD}.global .u32 a<{}>;\n", max + 1);
    assert_eq!(
        errors(&src),
        format!(
            "a.ptx:4:14: error: parameterized variable name `a<{n}>` declares {n} variables; \
             the linker takes at most {max} per module\n\
             help: declare an array `a[{n}]` instead and address its elements as `[a+OFFSET]`\n",
            n = max + 1
        )
    );
}

#[test]
fn function_scope_parameterized_names_shadow_module_symbols() {
    let src = format!(
        "{HEAD}.visible .entry k()\n{{\n.local .u32 x<4>;\n.reg .b32 r<2>;\n.shared .align 8 .u32 s<3>;\n\
         ld.local.u32 r1, [x3];\nld.local.u32 r1, [x03];\nst.shared.u32 [s2], r1;\n\
         st.global.u32 [x4], r1;\nst.global.u32 [s], r1;\nst.global.u32 [r01], r1;\nret;\n}}\n"
    );
    let m = parse(FileId(0), &src);
    assert!(m.errors.is_empty(), "{:?}", m.errors);
    let refs: Vec<&str> = m.item_refs(&m.items[0]).iter().map(|n| n.text).collect();
    // `x3`, `x03`, `s2`, `r1`, `r01` are the function's own; `x4` and `s` are not generated.
    assert_eq!(refs, ["x4", "s"]);
    let ItemKind::Function(f) = &m.items[0].kind else {
        panic!()
    };
    // `s2` is the one name used: ptxas allocates it and one element for
    // the declaration, each at 8-byte alignment: 8 + 4 bytes.
    assert_eq!(f.body.as_ref().unwrap().shared, [(12, 8)]);
}
