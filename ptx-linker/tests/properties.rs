//! Properties of linking, over generated modules: associativity (up to
//! symbol order and local renames), self-links reporting every strong
//! definition, consistent renames of colliding file-local symbols, and
//! parameterized names (`a<4>`) linking exactly like the names spelled out.

use std::collections::BTreeSet;

use proptest::prelude::*;
use ptx_linker::{link, LinkInput, LinkOptions, LinkOutput};

/// Functions per module: module `m` defines `g{m}_0` .. `g{m}_{FUNCS-1}`.
const FUNCS: usize = 2;
/// File-local variable names; modules share them, so they collide.
const LOCALS: [&str; 3] = ["a", "b", "c"];

/// One generated function: the locals it loads, the `(module, function)`s it calls.
type GenFunc = (Vec<usize>, Vec<(usize, usize)>);

/// One generated module.
#[derive(Debug, Clone)]
struct Gen {
    /// Which of `LOCALS` it defines (file-local `.global .u32`).
    locals: Vec<bool>,
    /// Per function: the locals it loads, and the `(module, function)`s it calls.
    funcs: Vec<GenFunc>,
    /// `.weak` instead of `.visible` functions.
    weak: bool,
}

fn gen_module(modules: usize) -> impl Strategy<Value = Gen> {
    (
        proptest::collection::vec(any::<bool>(), LOCALS.len()),
        proptest::collection::vec(
            (
                proptest::collection::vec(0..LOCALS.len(), 0..3),
                proptest::collection::vec((0..modules, 0..FUNCS), 0..3),
            ),
            FUNCS,
        ),
        any::<bool>(),
    )
        .prop_map(|(locals, funcs, weak)| Gen {
            locals,
            funcs,
            weak,
        })
}

fn text(m: usize, g: &Gen) -> String {
    let mut s = String::from(".version 7.8\n.target sm_90\n.address_size 64\n\n");
    for (i, &on) in g.locals.iter().enumerate() {
        if on {
            s.push_str(&format!(
                ".global .align 4 .u32 {} = {};\n",
                LOCALS[i],
                m * 10 + i
            ));
        }
    }
    let mut externs = BTreeSet::new();
    for (_, calls) in &g.funcs {
        for &(tm, tf) in calls {
            if tm != m {
                externs.insert((tm, tf));
            }
        }
    }
    for (tm, tf) in externs {
        s.push_str(&format!(".extern .func g{tm}_{tf}();\n"));
    }
    let linkage = if g.weak { ".weak" } else { ".visible" };
    for f in 0..FUNCS {
        s.push_str(&format!("{linkage} .func g{m}_{f}();\n"));
    }
    for (f, (loads, calls)) in g.funcs.iter().enumerate() {
        s.push_str(&format!(
            "{linkage} .func g{m}_{f}()\n{{\n\t.reg .b32 %r<2>;\n"
        ));
        for &l in loads {
            if g.locals[l] {
                s.push_str(&format!("\tld.global.u32 %r1, [{}];\n", LOCALS[l]));
            }
        }
        for &(tm, tf) in calls {
            s.push_str(&format!("\tcall.uni g{tm}_{tf};\n"));
        }
        s.push_str("\tret;\n}\n");
    }
    s.push_str(&format!(
        ".visible .entry k{m}()\n{{\n\tcall.uni g{m}_0;\n\tret;\n}}\n"
    ));
    s
}

fn partial() -> LinkOptions {
    LinkOptions {
        allow_unresolved: true,
        ..LinkOptions::default()
    }
}

fn link2(a: (&str, &str), b: (&str, &str)) -> LinkOutput {
    link(
        &[LinkInput::object(a.0, a.1), LinkInput::object(b.0, b.1)],
        &partial(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Global symbols (name, kind, linkage) and the count of file-local ones.
fn shape(out: &LinkOutput) -> (BTreeSet<(String, String, String)>, usize) {
    let mut globals = BTreeSet::new();
    let mut locals = 0;
    for s in &out.map.symbols {
        if s.linkage == "local" {
            locals += 1;
        } else {
            globals.insert((s.name.clone(), s.kind.to_string(), s.linkage.to_string()));
        }
    }
    (globals, locals)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn merging_is_associative_up_to_symbol_order(
        ga in gen_module(3), gb in gen_module(3), gc in gen_module(3)
    ) {
        let (a, b, c) = (text(0, &ga), text(1, &gb), text(2, &gc));
        let all = link(
            &[LinkInput::object("a", &a), LinkInput::object("b", &b), LinkInput::object("c", &c)],
            &partial(),
        ).unwrap_or_else(|e| panic!("{e}"));
        let ab = link2(("a", &a), ("b", &b));
        let left = link2(("ab", &ab.ptx), ("c", &c));
        let bc = link2(("b", &b), ("c", &c));
        let right = link2(("a", &a), ("bc", &bc.ptx));
        prop_assert_eq!(shape(&left), shape(&all));
        prop_assert_eq!(shape(&right), shape(&all));
        // Every call is resolved in all three: nothing stays external.
        prop_assert!(all.external.is_empty());
        prop_assert!(left.external.is_empty() && right.external.is_empty());
    }

    #[test]
    fn self_link_reports_every_strong_definition(g in gen_module(1)) {
        let m = text(0, &g);
        let err = link(&[LinkInput::object("x.ptx", &m), LinkInput::object("y.ptx", &m)], &partial())
            .expect_err("a module linked with itself defines everything twice");
        let reported: BTreeSet<String> = err
            .diagnostics
            .iter()
            .filter_map(|d| d.message.strip_prefix("duplicate symbol `"))
            .map(|s| s.trim_end_matches('`').to_string())
            .collect();
        // Kernels always; `.visible` functions; never `.weak` ones or file-local variables.
        let mut strong: BTreeSet<String> = ["k0".to_string()].into();
        if !g.weak {
            strong.extend((0..FUNCS).map(|f| format!("g0_{f}")));
        }
        prop_assert_eq!(reported, strong);
        prop_assert_eq!(err.diagnostics.len(), err.diagnostics.iter().filter(|d| d.message.starts_with("duplicate symbol")).count());
    }

    #[test]
    fn renames_are_consistent(ga in gen_module(2), gb in gen_module(2)) {
        let (a, b) = (text(0, &ga), text(1, &gb));
        let out = link2(("a", &a), ("b", &b));
        // Each input's locals survive under distinct names ...
        let expected_locals = ga.locals.iter().chain(&gb.locals).filter(|&&on| on).count();
        prop_assert_eq!(shape(&out).1, expected_locals);
        // ... and the output links alone: every renamed reference names a definition.
        let again = link(&[LinkInput::object("out", &out.ptx)], &LinkOptions::default());
        prop_assert!(again.is_ok(), "{}", again.err().map(|e| e.message).unwrap_or_default());
        // A load of `x` in module b's functions reads b's `x`, under its output name.
        for (f, (loads, _)) in gb.funcs.iter().enumerate() {
            let body_start = out.ptx.find(&format!(".func g1_{f}()\n{{")).unwrap();
            let body = &out.ptx[body_start..body_start + out.ptx[body_start..].find("\n}").unwrap()];
            for &l in loads {
                if !gb.locals[l] {
                    continue;
                }
                let name = &out.map.symbols.iter()
                    .find(|s| s.linkage == "local" && s.defined_in == "b"
                        && s.renamed_from.as_deref().unwrap_or(&s.name) == LOCALS[l])
                    .unwrap().name;
                let load = format!("[{name}]");
                prop_assert!(body.contains(&load), "{} lacks {}", body, load);
            }
        }
    }
}

/// A module declaring `decl` whose kernel loads `a{i}` for each `i` in `used`.
fn param_module(decl: &str, used: &[u32]) -> String {
    let mut s = format!(
        ".version 7.8\n.target sm_90\n.address_size 64\n\n{decl}\n\
         .visible .entry k()\n{{\n\t.reg .b32 %r<2>;\n"
    );
    for i in used {
        s.push_str(&format!("\tld.global.u32 %r1, [a{i}];\n"));
    }
    s.push_str("\tret;\n}\n");
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn parameterized_names_link_like_the_names_spelled_out(
        n in 1u32..6,
        linkage in 0usize..3,
        used in proptest::collection::vec(0u32..6, 0..4),
        other in proptest::collection::vec(0u32..6, 0..3),
        gc in any::<bool>(),
    ) {
        let linkage = ["", ".visible ", ".weak "][linkage];
        let used: Vec<u32> = used.into_iter().filter(|&i| i < n).collect();
        // ptxas keeps only the variables of `a<n>` the module uses: spelled
        // out, those are the declared names.
        let mut kept = used.clone();
        kept.sort_unstable();
        kept.dedup();
        let names: Vec<String> = kept.iter().map(|i| format!("a{i}")).collect();
        let param = param_module(&format!("{linkage}.global .align 4 .u32 a<{n}>;"), &used);
        let spelled = if names.is_empty() {
            param_module("", &used)
        } else {
            param_module(
                &format!("{linkage}.global .align 4 .u32 {};", names.join(", ")),
                &used,
            )
        };
        // A second module with file-local `a{i}`s of its own: they collide.
        let mut b = String::from(".version 7.8\n.target sm_90\n.address_size 64\n\n");
        for i in &other {
            b.push_str(&format!(".global .u32 a{i};\n"));
        }
        b.push_str(".visible .entry kb()\n{\n\t.reg .b32 %r<2>;\n");
        for i in &other {
            b.push_str(&format!("\tst.global.u32 [a{i}], %r1;\n"));
        }
        b.push_str("\tret;\n}\n");
        let opts = LinkOptions { gc, ..LinkOptions::default() };
        let run = |a: &str| {
            let inputs = [LinkInput::object("a.ptx", a), LinkInput::object("b.ptx", &b)];
            link(&inputs, &opts).map(|o| (o.ptx, serde_json::to_string(&o.map).unwrap()))
        };
        let (p, s) = (run(&param), run(&spelled));
        match (p, s) {
            (Ok(p), Ok(s)) => prop_assert_eq!(p, s),
            (Err(p), Err(s)) => prop_assert_eq!(
                p.message.lines().next().map(|l| l.to_string()),
                s.message.lines().next().map(|l| l.to_string())
            ),
            (p, s) => prop_assert!(false, "one linked, one failed: {:?} / {:?}", p.err(), s.err()),
        }
    }
}
