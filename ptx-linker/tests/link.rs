//! Link behaviour checked through the public API, with real values.

mod common;

use ptx_linker::{
    entry_signatures, link, link_to, LinkError, LinkInput, LinkOptions, LinkOutput, LinkToError,
    Param, ParamKind,
};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

fn data(name: &str) -> LinkInput {
    let text = std::fs::read_to_string(format!("{DATA}/{name}")).unwrap();
    LinkInput::object(name, text)
}

/// Links the objects `a.ptx` and `b.ptx`, in that order.
fn link_ab(a: &str, b: &str, options: &LinkOptions) -> Result<LinkOutput, LinkError> {
    link(
        &[LinkInput::object("a.ptx", a), LinkInput::object("b.ptx", b)],
        options,
    )
}

#[test]
fn rustc_kernel_and_device_crate_link_and_pass_ptxas() {
    let out = link(&[data("k.s"), data("dev.s")], &LinkOptions::default()).unwrap();
    assert_eq!(out.map.kernels.len(), 1);
    assert_eq!(out.map.kernels[0].name, "kern");
    // Two 1024-byte function-scope arrays at 1024-byte alignment.
    assert_eq!(out.map.kernels[0].static_shared_bytes, 2048);
    if let Some(ptxas) = common::ptxas() {
        common::run_ptxas(&ptxas, &out.ptx, "sm_90", false, "rustc_k_dev").unwrap();
    }
}

#[test]
fn rustc_extern_func_and_global_resolve_across_crates() {
    let out = link(
        &[data("k_extern.s"), data("dev_extern.s")],
        &LinkOptions::default(),
    )
    .unwrap();
    assert!(!out.ptx.contains(".extern"), "{}", out.ptx);
    let decl = out
        .ptx
        .find(".visible .func  (.param .b32 func_retval0) dev_axpy(")
        .unwrap();
    let call = out.ptx.find("call.uni (retval0), dev_axpy").unwrap();
    assert!(decl < call, "dev_axpy must be declared before its call");
    let table = out
        .map
        .symbols
        .iter()
        .find(|s| s.name == "DEV_TABLE")
        .unwrap();
    assert_eq!(
        (&*table.kind, table.defined_in.as_str()),
        ("global", "dev_extern.s")
    );
    assert_eq!(out.map.kernels[0].static_shared_bytes, 1024);
    if let Some(ptxas) = common::ptxas() {
        common::run_ptxas(&ptxas, &out.ptx, "sm_90", false, "rustc_extern").unwrap();
    }
}

#[test]
fn rustc_extern_alone_is_unresolved_with_file_and_line() {
    let err = link(&[data("k_extern.s")], &LinkOptions::default()).unwrap_err();
    assert_eq!(
        err.message,
        "k_extern.s:42:17: error: unresolved symbol `DEV_TABLE`\n\
         help: link the PTX file that defines `DEV_TABLE` (as an input or with `--lib`), or pass `--allow-unresolved` to leave it external\n\
         k_extern.s:59:22: error: unresolved symbol `dev_axpy`\n\
         help: link the PTX file that defines `dev_axpy` (as an input or with `--lib`), or pass `--allow-unresolved` to leave it external"
    );
    // The rich form shows the snippet.
    assert!(
        err.rendered.contains("call.uni (retval0), dev_axpy"),
        "{}",
        err.rendered
    );
    // Allowed, the declarations stay and ptxas -c accepts the module.
    let opts = LinkOptions {
        allow_unresolved: true,
        ..Default::default()
    };
    let out = link(&[data("k_extern.s")], &opts).unwrap();
    assert!(out
        .ptx
        .contains(".extern .func  (.param .b32 func_retval0) dev_axpy"));
    assert!(out
        .ptx
        .contains(".extern .global .align 4 .b8 DEV_TABLE[16];"));
}

#[test]
fn library_is_pulled_only_when_needed() {
    let mut lib = data("dev_extern.s");
    lib.kind = ptx_linker::InputKind::Library;
    // k.s needs nothing from dev: the library stays out.
    let out = link(&[data("k.s"), lib.clone()], &LinkOptions::default()).unwrap();
    assert!(!out.ptx.contains("dev_axpy"));
    assert!(out.map.symbols.iter().all(|s| s.defined_in == "k.s"));
    // k_extern.s needs dev_axpy and DEV_TABLE: pulled in, the panic handler dropped.
    let out = link(&[data("k_extern.s"), lib], &LinkOptions::default()).unwrap();
    let names: Vec<&str> = out.map.symbols.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["DEV_TABLE", "kern", "dev_axpy"]);
}

#[test]
fn local_collisions_are_renamed_in_bodies_and_initializers() {
    let a = ".version 7.8\n.target sm_90\n.address_size 64\n.global .u32 x = 1;\n\
             .global .u64 p = generic(x);\n.visible .entry ka()\n{\n\tld.global.u32 %r1, [x+4];\n\tret;\n}\n";
    let b = ".version 7.8\n.target sm_90\n.address_size 64\n.global .u32 x = 2;\n\
             .global .u64 p = generic(x);\n.visible .entry kb()\n{\n\tld.global.u32 %r1, [x+4];\n\tret;\n}\n";
    let out = link_ab(a, b, &Default::default()).unwrap();
    assert!(out.ptx.contains(".global .u32 x__ptxlink2 = 2;"));
    assert!(out
        .ptx
        .contains(".global .u64 p__ptxlink2 = generic(x__ptxlink2);"));
    assert!(out.ptx.contains("ld.global.u32 %r1, [x__ptxlink2+4];"));
    assert!(out.ptx.contains(".global .u64 p = generic(x);"));
    let r = out
        .map
        .symbols
        .iter()
        .find(|s| s.name == "p__ptxlink2")
        .unwrap();
    assert_eq!(r.renamed_from.as_deref(), Some("p"));
    assert_eq!(r.defined_in, "b.ptx");
}

#[test]
fn symbols_named_with_a_percent_are_references_in_bodies() {
    // ptxas 13.5 takes `%` names for module-scope variables and functions, and in a body
    // `%g` then names the variable unless a register of that name hides it. a.ptx's
    // file-local `%g` and `%f` collide with b.ptx's visible ones: every use in a.ptx must
    // follow the rename (before the fix a.ptx's kernel silently read b.ptx's `%g` and called
    // b.ptx's `%f`).
    let a = ".version 8.5\n.target sm_90\n.address_size 64\n\
             .global .align 8 .u64 %g[4];\n.global .u64 p = %g;\n\
             .func (.reg .u32 r) %f()\n{\n  mov.u32 r, 1;\n  ret;\n}\n\
             .visible .entry ka(.param .u64 o)\n{\n  .reg .u64 %rd<5>;\n  .reg .u32 %r<3>;\n\
             \x20 mov.u64 %rd1, %g;\n  ld.global.u64 %rd2, [%g+8];\n  call (%r1), %f, ();\n\
             \x20 mov.u64 %rd3, %f;\n  st.global.u64 [%rd1], %rd2;\n  {\n  .reg .u64 %g;\n\
             \x20 mov.u64 %g, 0;\n  }\n  ret;\n}\n";
    let b = ".version 8.5\n.target sm_90\n.address_size 64\n\
             .visible .global .align 8 .u64 %g[4];\n\
             .visible .func (.reg .u32 r) %f()\n{\n  mov.u32 r, 2;\n  ret;\n}\n\
             .visible .entry kb()\n{\n  .reg .u64 %rd<2>;\n  .reg .u32 %r<2>;\n\
             \x20 mov.u64 %rd1, %g;\n  call (%r1), %f, ();\n  ret;\n}\n";
    for gc in [false, true] {
        let opts = LinkOptions {
            gc,
            ..LinkOptions::default()
        };
        let out = link_ab(a, b, &opts).unwrap();
        let ka = &out.ptx[out.ptx.find(".entry ka").unwrap()..out.ptx.find(".entry kb").unwrap()];
        for want in [
            "mov.u64 %rd1, %g__ptxlink1;",
            "ld.global.u64 %rd2, [%g__ptxlink1+8];",
            "call (%r1), %f__ptxlink1, ();",
            "mov.u64 %rd3, %f__ptxlink1;",
            // The nested block's register hides the variable.
            ".reg .u64 %g;\n  mov.u64 %g, 0;",
        ] {
            assert!(ka.contains(want), "gc {gc}: `{want}` missing in\n{ka}");
        }
        assert!(out.ptx.contains(".global .align 8 .u64 %g__ptxlink1[4];"));
        assert!(out.ptx.contains(".func (.reg .u32 r) %f__ptxlink1()"));
        let kb = &out.ptx[out.ptx.find(".entry kb").unwrap()..];
        assert!(kb.contains("mov.u64 %rd1, %g;") && kb.contains("call (%r1), %f, ();"));
        if let Some(ptxas) = common::ptxas() {
            common::run_ptxas(&ptxas, &out.ptx, "sm_90", false, "percent_symbols").unwrap();
        }
    }
    // Alone and with `--gc`: the kernel keeps the variable it uses.
    let out = link(
        &[LinkInput::object("a.ptx", a)],
        &LinkOptions {
            gc: true,
            ..LinkOptions::default()
        },
    )
    .unwrap();
    assert!(out.ptx.contains(".global .align 8 .u64 %g[4];"));
    assert!(out.ptx.contains("%f()"));
}

#[test]
fn a_symbol_declared_after_its_use_is_refused_with_a_percent_name_too() {
    // ptxas refuses b.ptx ("Unknown symbol": the use comes before the
    // declaration). Once, kb's `%s` stayed a register-like `%s` and silently
    // named a.ptx's visible `%s` in the merged module; then it bound to b.ptx's
    // own variable, as a plain name did. Now both are refused, as ptxas does.
    for name in ["%s", "s"] {
        let a = format!(
            ".version 8.5\n.target sm_90\n.address_size 64\n.visible .global .u64 {name};\n"
        );
        let b = format!(
            ".version 8.5\n.target sm_90\n.address_size 64\n.visible .entry kb()\n{{\n  \
             .reg .b64 %rd<3>;\n  mov.u64 %rd1, {name};\n  ret;\n}}\n.global .u64 {name};\n"
        );
        let err = link_ab(&a, &b, &Default::default()).unwrap_err();
        let r = &err.rendered;
        assert!(
            r.contains(&format!("error: `{name}` is used before its declaration")),
            "{r}"
        );
        assert!(
            r.contains("b.ptx:7:17") && r.contains("declared here, after the use"),
            "{r}"
        );
    }
}

#[test]
fn rename_suffix_skips_names_already_taken() {
    let a = ".version 7.8\n.target sm_90\n.global .u32 x;\n.global .u32 x__ptxlink2;\n";
    let b = ".version 7.8\n.target sm_90\n.global .u32 x;\n";
    let out = link_ab(a, b, &Default::default()).unwrap();
    let names: Vec<&str> = out.map.symbols.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["x", "x__ptxlink2", "x__ptxlink3"]);
}

#[test]
fn rename_suffix_skips_names_a_body_declares() {
    // a.ptx's kernel declares `x__ptxlink1` (a register, an `x<N>`, a nested label, a parameter):
    // had a.ptx's `x` been renamed to that, `mov.u64 %rd1, x` would have named the register
    // (ptxas accepts it). The stem grows instead: `x__ptxlink_1`.
    let decls = [
        ("", "  .reg .u64 x__ptxlink1;\n  mov.u64 x__ptxlink1, 0;\n"),
        (
            "",
            "  .reg .u64 x__ptxlink<4>;\n  mov.u64 x__ptxlink1, 0;\n",
        ),
        ("", "  {\n  x__ptxlink1:\n  }\n"),
        (", .param .u64 x__ptxlink1", ""),
    ];
    for (param, decl) in decls {
        let a = format!(
            ".version 8.5\n.target sm_90\n.address_size 64\n.global .align 8 .u64 x = 1;\n\
             .visible .entry ka(.param .u64 o{param})\n{{\n  .reg .u64 %rd<3>;\n{decl}\
             \x20 mov.u64 %rd1, x;\n  ld.param.u64 %rd2, [o];\n  st.global.u64 [%rd2], %rd1;\n  \
             ret;\n}}\n"
        );
        let b = ".version 8.5\n.target sm_90\n.address_size 64\n.visible .global .align 8 .u64 x = 2;\n";
        let out = link_ab(&a, b, &Default::default()).unwrap();
        assert!(
            out.ptx.contains(".global .align 8 .u64 x__ptxlink_1 = 1;"),
            "{decl}: {}",
            out.ptx
        );
        assert!(out.ptx.contains("mov.u64 %rd1, x__ptxlink_1;"), "{decl}");
        if let Some(ptxas) = common::ptxas() {
            common::run_ptxas(&ptxas, &out.ptx, "sm_90", false, "suffix_in_body").unwrap();
        }
    }
    // A declaration of that form for another name leaves the usual stem.
    let a = ".version 8.5\n.target sm_90\n.address_size 64\n.global .u32 x;\n\
             .visible .entry ka()\n{\n  .reg .u64 %rd<2>;\n  y__ptxlink1:\n  mov.u64 %rd1, x;\n  ret;\n}\n";
    let b = ".version 8.5\n.target sm_90\n.address_size 64\n.visible .global .u32 x;\n";
    let out = link_ab(a, b, &Default::default()).unwrap();
    assert!(
        out.ptx.contains("mov.u64 %rd1, x__ptxlink1;"),
        "{}",
        out.ptx
    );
}

#[test]
fn an_alias_takes_the_linkage_of_the_function_it_names() {
    // ptxas 13.5 gives `.alias h, f` the linkage of `f` whatever `h`'s declaration says:
    // file-local here, so b.ptx's `h` is another function, and a b.ptx that only declares
    // `h` is left unresolved (nvlink: "Undefined reference to 'h' in 'b.o'"); before, the
    // alias was always `.visible` (a duplicate `h` with b.ptx's definition, and b.ptx's
    // declaration silently bound to a.ptx's file-local function).
    let head = ".version 8.5\n.target sm_90\n.address_size 64\n";
    let a = |f_linkage: &str| {
        format!(
            "{head}{f_linkage}.func (.reg .u32 r) f()\n{{\n  mov.u32 r, 1;\n  ret;\n}}\n\
             .visible .func (.reg .u32 r) h();\n.alias h, f;\n\
             .visible .entry ka()\n{{\n  .reg .u32 %r<2>;\n  call (%r1), h, ();\n  ret;\n}}\n"
        )
    };
    let kb = ".visible .entry kb()\n{\n  .reg .u32 %r<2>;\n  call (%r1), h, ();\n  ret;\n}\n";
    let b_defines =
        format!("{head}.visible .func (.reg .u32 r) h()\n{{\n  mov.u32 r, 2;\n  ret;\n}}\n{kb}");
    let b_declares = format!("{head}.extern .func (.reg .u32 r) h();\n{kb}");
    let out = link_ab(&a(""), &b_defines, &Default::default()).unwrap();
    let ka = &out.ptx[out.ptx.find(".entry ka").unwrap()..out.ptx.find(".entry kb").unwrap()];
    assert!(ka.contains("call (%r1), h__ptxlink1, ();"), "{ka}");
    assert!(out.ptx.contains(".alias h__ptxlink1, f;"));
    let kb_out = &out.ptx[out.ptx.find(".entry kb").unwrap()..];
    assert!(kb_out.contains("call (%r1), h, ();"));
    if let Some(ptxas) = common::ptxas() {
        common::run_ptxas(&ptxas, &out.ptx, "sm_90", false, "alias_local").unwrap();
    }
    let err = link_ab(&a(""), &b_declares, &Default::default()).unwrap_err();
    assert!(
        err.message
            .starts_with("b.ptx:8:15: error: unresolved symbol `h`"),
        "{}",
        err.message
    );
    // A `.visible` function's alias is `.visible`: it defines `h` for b.ptx.
    let out = link_ab(&a(".visible "), &b_declares, &Default::default()).unwrap();
    assert!(out.ptx.contains(".alias h, f;"));
    let err = link_ab(&a(".visible "), &b_defines, &Default::default()).unwrap_err();
    assert!(err.message.contains("`h`"), "{}", err.message);
}

#[test]
fn a_definition_without_linkage_after_a_visible_declaration_is_visible() {
    // ptxas 13.5 (and so nvlink) make `f` global here; the output writes `.visible` on the
    // definition, so that ptxas sees the linkage the link gave it.
    let head = ".version 8.5\n.target sm_90\n.address_size 64\n";
    let a = format!(
        "{head}.visible .func (.reg .u32 r) f();\n.func (.reg .u32 r) f()\n{{\n  mov.u32 r, 1;\n  \
         ret;\n}}\n.visible .entry ka()\n{{\n  .reg .u32 %r<2>;\n  call (%r1), f, ();\n  ret;\n}}\n"
    );
    let b = format!(
        "{head}.extern .func (.reg .u32 r) f();\n.visible .entry kb()\n{{\n  .reg .u32 %r<2>;\n  \
         call (%r1), f, ();\n  ret;\n}}\n"
    );
    let out = link_ab(&a, &b, &Default::default()).unwrap();
    assert!(
        out.ptx.contains(".visible .func (.reg .u32 r) f()\n{"),
        "{}",
        out.ptx
    );
    let f = out.map.symbols.iter().find(|s| s.name == "f").unwrap();
    assert_eq!(f.defined_in, "a.ptx");
    if let Some(ptxas) = common::ptxas() {
        common::run_ptxas(&ptxas, &out.ptx, "sm_90", false, "inherited_linkage").unwrap();
    }
}

#[test]
fn all_errors_are_collected() {
    let a = ".version 7.8\n.target sm_90\n.visible .func f()\n{\n\tret;\n}\n.visible .func g()\n{\n\tret;\n}\n";
    let b = ".version 7.8\n.target sm_90\n.visible .func f()\n{\n\tret;\n}\n.visible .func g()\n{\n\tret;\n}\n";
    let err = link_ab(a, b, &Default::default()).unwrap_err();
    assert_eq!(err.diagnostics.len(), 2);
    assert!(err
        .message
        .contains("b.ptx:3:16: error: duplicate symbol `f`"));
    assert!(err
        .message
        .contains("b.ptx:7:16: error: duplicate symbol `g`"));
    assert!(err
        .message
        .contains("a.ptx:7:16: note: `g` first defined here"));
}

#[test]
fn param_space_limit() {
    let a = ".version 7.8\n.target sm_90\n.visible .entry k(.param .align 8 .b8 big[5000])\n{\n\tret;\n}\n";
    let err = link(&[LinkInput::object("a.ptx", a)], &Default::default()).unwrap_err();
    assert_eq!(
        err.message,
        "a.ptx:3:17: error: kernel `k` takes 5000 bytes of parameters; `sm_90` allows at most 4096\n\
         help: pass large data through a pointer to global memory instead of by value"
    );
}

#[test]
fn output_is_deterministic() {
    let inputs = [data("k_extern.s"), data("dev_extern.s")];
    let a = link(&inputs, &Default::default()).unwrap();
    let b = link(&inputs, &Default::default()).unwrap();
    assert_eq!(a.ptx, b.ptx);
    assert_eq!(a.map, b.map);
}

#[test]
fn file_tables_are_merged_and_locs_renumbered() {
    let a = ".version 7.8\n.target sm_90\n.file 1 \"a.cu\"\n.file 2 \"common.h\"\n\
             .visible .entry ka()\n{\n\t.loc 2 10 1\n\tret;\n}\n";
    let b = ".version 7.8\n.target sm_90\n.file 1 \"common.h\"\n.file 2 \"b.cu\"\n\
             .visible .entry kb()\n{\n\t.loc 1 20 1\n\t.loc 2 5 1\n\tret;\n}\n";
    let out = link_ab(a, b, &Default::default()).unwrap();
    assert!(out
        .ptx
        .contains("\t.file\t1 \"a.cu\"\n\t.file\t2 \"common.h\"\n\t.file\t3 \"b.cu\"\n"));
    assert!(out.ptx.contains(".loc 2 10 1"));
    assert!(out.ptx.contains(".loc 2 20 1"));
    assert!(out.ptx.contains(".loc 3 5 1"));
}

#[test]
fn entry_signatures_for_every_param_form() {
    let src = ".version 7.8\n.target sm_90\n.address_size 64\n\n\
        .visible .entry k(\n\
        \t.param .u32 n,\n\
        \t.param .u64 .ptr .align 1 p,\n\
        \t.param .u64 .ptr .global .align 16 g,\n\
        \t.param .align 8 .b8 s[16],\n\
        \t.param .b32 w[4],\n\
        \t.param .v2 .f32 v,\n\
        \t.param .f64 d\n)\n{\n\tret;\n}\n\
        .entry legacy (.param .s32 __cudaparm_x)\n{\n\texit;\n}\n";
    let sigs = entry_signatures("k.ptx", src).unwrap();
    assert_eq!(sigs.len(), 2);
    assert_eq!((sigs[0].name.as_str(), sigs[0].line), ("k", 5));
    let p = |name: &str, kind: ParamKind, size, align| Param {
        name: name.into(),
        kind,
        size,
        align,
    };
    let scalar = |ty: &str| ParamKind::Scalar { ty: ty.into() };
    assert_eq!(
        sigs[0].params,
        [
            p("n", scalar("u32"), 4, 4),
            p(
                "p",
                ParamKind::Pointer {
                    space: None,
                    pointee_align: 1
                },
                8,
                8
            ),
            p(
                "g",
                ParamKind::Pointer {
                    space: Some("global".into()),
                    pointee_align: 16
                },
                8,
                8
            ),
            p("s", ParamKind::Aggregate { elem: "b8".into() }, 16, 8),
            p("w", ParamKind::Aggregate { elem: "b32".into() }, 16, 4),
            p("v", scalar("v2.f32"), 8, 8),
            p("d", scalar("f64"), 8, 8),
        ]
    );
    assert_eq!((sigs[1].name.as_str(), sigs[1].line), ("legacy", 17));
    assert_eq!(sigs[1].params, [p("__cudaparm_x", scalar("s32"), 4, 4)]);
}

#[test]
fn entry_signatures_of_rustc_output() {
    let text = std::fs::read_to_string(format!("{DATA}/k_extern.s")).unwrap();
    let sigs = entry_signatures("k_extern.s", &text).unwrap();
    assert_eq!(sigs.len(), 1);
    assert_eq!(sigs[0].name, "kern");
    assert_eq!(sigs[0].line, 19);
    assert_eq!(
        sigs[0].params[0].kind,
        ParamKind::Pointer {
            space: None,
            pointee_align: 1
        }
    );
    assert_eq!((sigs[0].params[1].size, sigs[0].params[1].align), (4, 4));
}

#[test]
fn entry_signatures_reports_parse_errors() {
    let err = entry_signatures(
        "bad.ptx",
        ".version 7.8\n.target sm_90\n.entry k(.param .u32 x\n",
    )
    .unwrap_err();
    assert_eq!(
        err.message,
        "bad.ptx:3:9: error: unterminated parameter list\nhelp: close the list with `)`"
    );
}

#[test]
fn entry_signatures_refuse_parameters_past_32_bits() {
    // `.b8 p[4294967296]` used to read as 0 bytes; `[2^32][2^32]` overflowed.
    let err = entry_signatures(
        "big.ptx",
        ".version 7.8\n.target sm_90\n.entry k(.param .b8 p[4294967296], .param .b8 q[4294967296][4294967296])\n{\nret;\n}\n",
    )
    .unwrap_err();
    assert_eq!(
        err.message,
        "big.ptx:3:21: error: parameter `p` (`.b8[4294967296]`) is 4294967296 bytes; a parameter's size must fit 32 bits\n\
         help: pass large data through a pointer to global memory instead of by value\n\
         big.ptx:3:47: error: parameter `q` (`.b8[4294967296][4294967296]`) is 18446744073709551616 bytes; a parameter's size must fit 32 bits\n\
         help: pass large data through a pointer to global memory instead of by value"
    );
}

#[test]
fn size_arithmetic_saturates_instead_of_overflowing() {
    use ptx_linker::signature::align_up;
    assert_eq!(align_up(13, 8), 16);
    assert_eq!(align_up(13, 0), 13);
    assert_eq!(align_up(u64::MAX - 1, 4), u64::MAX);
}

#[test]
fn counts_in_messages_agree_with_their_nouns() {
    let head = ".version 7.8\n.target sm_90\n.address_size 64\n";
    let a = LinkInput::object(
        "a.ptx",
        format!(
            "{head}.extern .func f(.param .b32 x);\n.extern .func (.param .b32 r) g();\n\
             .visible .entry k()\n{{\ncall.uni f, (1);\ncall.uni (r), g, ();\nret;\n}}\n"
        ),
    );
    let b = LinkInput::object(
        "b.ptx",
        format!(
            "{head}.visible .func f(.param .b32 x, .param .b32 y)\n{{\nret;\n}}\n\
             .visible .func g()\n{{\nret;\n}}\n"
        ),
    );
    let err = link(&[a, b], &LinkOptions::default()).unwrap_err();
    assert!(
        err.message
            .contains("does not match its definition: 1 parameter declared, 2 defined"),
        "{}",
        err.message
    );
    assert!(
        err.message
            .contains("does not match its definition: 1 return parameter declared, 0 defined"),
        "{}",
        err.message
    );
}

#[test]
fn never_panics_on_truncated_or_garbled_input() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus/ptx-wild");
    let mut texts = Vec::new();
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| {
        panic!("cannot read {dir}: {e} (the corpus is the repository's sibling `shared/corpus/ptx-wild`)")
    });
    for e in entries {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "ptx") {
            let t = std::fs::read_to_string(&p).unwrap();
            if t.len() < 20_000 {
                texts.push(t);
            }
        }
    }
    let opts = LinkOptions {
        gc: true,
        ..Default::default()
    };
    for t in &texts {
        for cut in (0..t.len()).step_by(97) {
            if !t.is_char_boundary(cut) {
                continue;
            }
            let _ = link(&[LinkInput::object("t.ptx", &t[..cut])], &opts);
            let mut garbled = t[..cut].to_string();
            garbled.push_str("\u{e9}}{)(;\"/*");
            garbled.push_str(&t[cut..]);
            let _ = link(&[LinkInput::object("g.ptx", garbled.clone())], &opts);
            let _ = entry_signatures("g.ptx", &garbled);
        }
    }
}

#[test]
fn debug_sections_from_two_inputs_are_dropped_with_a_warning() {
    let m = |k: &str| {
        format!(
            ".version 7.8\n.target sm_90, debug\n.address_size 64\n.file 1 \"{k}.cu\"\n\
             .visible .entry {k}()\n{{\n$L__func_begin0:\n\t.loc 1 1 0, function_name $L__info_string0, inlined_at 1 2 3\n\tret;\n}}\n\
             .section .debug_str\n{{\n$L__info_string0:\n.b8 0\n}}\n"
        )
    };
    let out = link(
        &[
            LinkInput::object("a.ptx", m("ka")),
            LinkInput::object("b.ptx", m("kb")),
        ],
        &Default::default(),
    )
    .unwrap();
    assert!(!out.ptx.contains(".section"));
    assert!(
        out.ptx.contains(".target sm_90\n"),
        "the debug option goes with the sections"
    );
    assert!(out.ptx.contains("\t.loc 2 1 0\n"), "{}", out.ptx);
    assert_eq!(out.warnings.len(), 1);
    assert!(out.warnings[0].starts_with(
        "a.ptx:11:1: warning: debug sections dropped: more than one input carries debug sections"
    ));
    if let Some(ptxas) = common::ptxas() {
        common::run_ptxas(&ptxas, &out.ptx, "sm_90", false, "two_debug").unwrap();
    }
}

/// a.ptx defines `.visible a<4>` (and uses `a0` and `a2`, the variables ptxas
/// keeps) and a file-local `t<2>`; b.ptx declares `a2` and defines its own
/// file-local `t1`.
const PARAM_A: &str = ".version 7.8\n.target sm_90\n.address_size 64\n\
    .visible .global .align 4 .u32 a<4>;\n.global .u32 t<2>;\n\
    .visible .entry ka()\n{\n\t.reg .b32 %r<2>;\n\tld.global.u32 %r1, [t1];\n\tst.global.u32 [a0], %r1;\n\
    \tst.global.u32 [a2], %r1;\n\tret;\n}\n";
const PARAM_B: &str = ".version 7.8\n.target sm_90\n.address_size 64\n\
    .extern .global .align 4 .u32 a2;\n.global .u32 t1;\n\
    .visible .entry kb()\n{\n\t.reg .b32 %r<2>;\n\tld.global.u32 %r1, [a2];\n\tst.global.u32 [t1], %r1;\n\tret;\n}\n";

#[test]
fn parameterized_variables_link_across_modules_and_pass_ptxas() {
    let inputs = [
        LinkInput::object("a.ptx", PARAM_A),
        LinkInput::object("b.ptx", PARAM_B),
    ];
    let out = link(&inputs, &LinkOptions::default()).unwrap();
    // b.ptx's `.extern a2` binds to a.ptx's `a<4>`: defined once, declared nowhere.
    assert!(!out.ptx.contains(".extern"), "{}", out.ptx);
    // The variables a.ptx uses, once each; ptxas keeps no other.
    for (i, n) in [(0, 1), (1, 0), (2, 1), (3, 0)] {
        let decl = format!(".visible .global .align 4 .u32 a{i};\n");
        assert_eq!(out.ptx.matches(&decl).count(), n, "{decl}in\n{}", out.ptx);
    }
    assert!(!out.ptx.contains("a<4>"));
    // b.ptx's file-local `t1` collides with a.ptx's and is renamed, in its body too.
    assert!(out
        .ptx
        .contains(".global .u32 t1;\n.global .u32 t1__ptxlink2;\n"));
    assert!(out
        .ptx
        .contains("ld.global.u32 %r1, [a2];\n\tst.global.u32 [t1__ptxlink2], %r1;"));
    assert!(out
        .ptx
        .contains("ld.global.u32 %r1, [t1];\n\tst.global.u32 [a0], %r1;"));
    let sym = |n: &str| out.map.symbols.iter().find(|s| s.name == n).unwrap();
    let a2 = sym("a2");
    assert_eq!(
        (&*a2.kind, &*a2.linkage, a2.defined_in.as_str()),
        ("global", "visible", "a.ptx")
    );
    assert_eq!(sym("t1__ptxlink2").renamed_from.as_deref(), Some("t1"));
    assert_eq!(sym("t1__ptxlink2").defined_in, "b.ptx");
    // The host reads `a2` like any variable: four zero bytes.
    assert_eq!(
        ptx_linker::global_initializer("out.ptx", &out.ptx, "a2").unwrap(),
        Some(vec![0; 4])
    );
    if let Some(ptxas) = common::ptxas() {
        common::run_ptxas(&ptxas, &out.ptx, "sm_90", false, "param_names").unwrap();
    }

    // With gc, `.visible` variables stay (host-visible roots; of `a<4>`,
    // those a.ptx uses); of the file-local `t<2>`, only the used `t1`.
    let gc = LinkOptions {
        gc: true,
        ..LinkOptions::default()
    };
    let out = link(&inputs, &gc).unwrap();
    let names: Vec<&str> = out.map.symbols.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a0", "a2", "t1", "t1__ptxlink2", "ka", "kb"]);
    if let Some(ptxas) = common::ptxas() {
        common::run_ptxas(&ptxas, &out.ptx, "sm_90", false, "param_names_gc").unwrap();
    }
}

#[test]
fn parameterized_variables_resolve_in_either_input_order() {
    let out = link(
        &[
            LinkInput::object("b.ptx", PARAM_B),
            LinkInput::object("a.ptx", PARAM_A),
        ],
        &LinkOptions::default(),
    )
    .unwrap();
    assert!(!out.ptx.contains(".extern"), "{}", out.ptx);
    let a2 = out.map.symbols.iter().find(|s| s.name == "a2").unwrap();
    assert_eq!(a2.defined_in, "a.ptx");
    // Now b.ptx's `t1` comes first and keeps its name; a.ptx's is renamed.
    let t = out
        .map
        .symbols
        .iter()
        .find(|s| s.name == "t1__ptxlink2")
        .unwrap();
    assert_eq!(t.defined_in, "a.ptx");
    // Alone, b.ptx leaves `a2` unresolved, named with file and line.
    let err = link(
        &[LinkInput::object("b.ptx", PARAM_B)],
        &LinkOptions::default(),
    )
    .unwrap_err();
    assert!(
        err.message
            .starts_with("b.ptx:9:22: error: unresolved symbol `a2`"),
        "{}",
        err.message
    );
}

/// `tests/cases/weak_align_first_wins`: nvlink keeps the first `.weak`
/// definition with its alignment; the linker does too, and warns when the
/// dropped one asked for more.
#[test]
fn weak_variable_with_a_larger_dropped_alignment_warns() {
    let case = |f: &str| {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/cases/weak_align_first_wins/"
        );
        LinkInput::object(f, std::fs::read_to_string(format!("{path}{f}")).unwrap())
    };
    let out = link(&[case("a.ptx"), case("b.ptx")], &Default::default()).unwrap();
    assert!(out.ptx.contains(".weak .global .align 4 .b8 table[16];"));
    assert!(!out.ptx.contains(".align 16"), "{}", out.ptx);
    assert_eq!(
        out.warnings,
        ["b.ptx:5:29: warning: `table` asks for `.align 16` here, but the definition that is kept has `.align 4`\n\
          a.ptx:5:28: note: the `.weak` definition of `table` that is kept\n\
          help: give every definition of `table` the same `.align` (16), if this input's code relies on it\n"]
    );
    // In the other order the first one asks for 16 and is kept: no warning.
    let out = link(&[case("b.ptx"), case("a.ptx")], &Default::default()).unwrap();
    assert!(out.ptx.contains(".weak .global .align 16 .b8 table[16];"));
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
}

/// A kernel that declares `bytes` of static shared memory, for `target`.
fn shared_kernel(target: &str, version: &str, bytes: u32) -> String {
    format!(
        ".version {version}\n.target {target}\n.address_size 64\n\n\
         .visible .entry k(.param .u64 out)\n{{\n\t.shared .align 4 .b8 s[{bytes}];\n\
         \t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [out];\n\tmov.u64 %rd2, s;\n\
         \tst.global.u64 [%rd1], %rd2;\n\tret;\n}}\n"
    )
}

/// Every target ptxas 13.5 knows: the linker accepts a kernel with exactly
/// the static shared memory ptxas allows and refuses one byte more, and
/// ptxas (when present) agrees on both.
#[test]
fn static_shared_limit_of_every_target_is_ptxas_limit() {
    let ptxas = common::ptxas();
    let mut checked = Vec::new();
    for info in targets::ARCHES.iter().filter(|i| i.sm >= 75) {
        let target = format!("sm_{}{}", info.sm, info.variant.suffix());
        let limit = info.max_static_shared_bytes;
        let version = info.min_ptx.to_string();
        let ok = shared_kernel(&target, &version, limit);
        let over = shared_kernel(&target, &version, limit + 1);
        let out = link(
            &[LinkInput::object("k.ptx", ok.clone())],
            &Default::default(),
        )
        .unwrap_or_else(|e| panic!("{target}: {limit} bytes refused:\n{e}"));
        assert_eq!(out.map.kernels[0].static_shared_bytes, u64::from(limit));
        let err = link(
            &[LinkInput::object("k.ptx", over.clone())],
            &Default::default(),
        )
        .expect_err(&target)
        .message;
        assert!(
            err.starts_with(&format!(
                "k.ptx:5:17: error: kernel `k` uses {} bytes of static shared memory; `{target}` allows at most {limit}\n",
                limit + 1
            )),
            "{err}"
        );
        if let Some(ptxas) = &ptxas {
            let tag = format!("smem_{target}");
            common::run_ptxas(ptxas, &ok, &target, false, &tag)
                .unwrap_or_else(|e| panic!("ptxas refuses {limit} bytes for {target}: {e}"));
            let e = common::run_ptxas(ptxas, &over, &target, false, &tag)
                .expect_err(&format!("ptxas accepts {} bytes for {target}", limit + 1));
            assert!(e.contains("uses too much shared data"), "{target}: {e}");
        }
        checked.push(format!("{target}={limit}"));
    }
    assert_eq!(
        checked.join(" "),
        "sm_75=49152 sm_80=49152 sm_86=49152 sm_87=49152 sm_89=49152 sm_90=49152 \
         sm_90a=232448 sm_100=49152 sm_100a=232448 sm_100f=49152 sm_103=49152 \
         sm_103a=232448 sm_103f=49152 sm_107=49152 sm_107a=232448 sm_107f=49152 \
         sm_110=49152 sm_110a=232448 sm_110f=49152 sm_120=49152 sm_120a=101376 \
         sm_120f=49152 sm_121=49152 sm_121a=101376 sm_121f=49152"
    );
}

#[test]
fn over_the_generic_limit_the_help_names_the_arch_specific_target() {
    let err = link(
        &[LinkInput::object(
            "k.ptx",
            shared_kernel("sm_90", "7.8", 60000),
        )],
        &Default::default(),
    )
    .unwrap_err()
    .message;
    assert_eq!(
        err,
        "k.ptx:5:17: error: kernel `k` uses 60000 bytes of static shared memory; `sm_90` allows at most 49152\n\
         help: move the large arrays to dynamic shared memory (`.extern .shared`, sized at launch), or make them smaller; \
         or, for code that runs only on that architecture, build for `sm_90a`, which allows 232448"
    );
}

/// `tests/cases/param_name_weak`: b.ptx stores to `w2` without declaring
/// it. ptxas refuses b.ptx alone ("Unknown symbol 'w2'"), so nvlink never
/// sees it: the link fails in either order, although a.ptx defines `w2`.
#[test]
fn a_name_only_another_input_declares_is_an_error() {
    let case = |f: &str| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cases/param_name_weak/");
        LinkInput::object(f, std::fs::read_to_string(format!("{path}{f}")).unwrap())
    };
    let expected = "b.ptx:11:17: error: `w2` is used here but not declared in this input";
    for (first, second) in [("a.ptx", "b.ptx"), ("b.ptx", "a.ptx")] {
        for gc in [false, true] {
            let opts = LinkOptions {
                gc,
                ..LinkOptions::default()
            };
            let err = link(&[case(first), case(second)], &opts).unwrap_err();
            assert_eq!(
                err.message.lines().next(),
                Some(expected),
                "{first} {second} gc={gc}"
            );
        }
    }
}

#[test]
fn link_to_writes_the_same_bytes_as_link_and_nothing_on_error() {
    let inputs = [data("k.s"), data("dev.s")];
    let options = LinkOptions::default();
    let whole = link(&inputs, &options).unwrap();
    let mut streamed = Vec::new();
    let report = link_to(&inputs, &options, &mut streamed).unwrap();
    assert_eq!(String::from_utf8(streamed).unwrap(), whole.ptx);
    assert_eq!(report.map, whole.map);
    assert_eq!(report.external, whole.external);
    // A link error is found before the first byte is written.
    let mut out = Vec::new();
    match link_to(&[data("k_extern.s")], &options, &mut out) {
        Err(LinkToError::Link(e)) => assert!(e.message.contains("unresolved"), "{e}"),
        other => panic!("expected a link error, got {other:?}"),
    }
    assert!(out.is_empty());
    // A write error comes back as such.
    struct Full;
    impl std::io::Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk full"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    match link_to(&inputs, &options, &mut Full) {
        Err(LinkToError::Write(e)) => assert_eq!(e.to_string(), "disk full"),
        other => panic!("expected a write error, got {other:?}"),
    }
}

/// Entry lines counted from one entry to the next equal lines counted from the start,
/// with functions and variables between the entries; the parsed form gives the same.
#[test]
fn entry_signature_lines_over_many_entries() {
    let mut src = String::from(".version 7.8\n.target sm_90\n.address_size 64\n");
    for k in 0..50 {
        src.push_str(&format!(
            "\n.global .u32 v{k};\n.func f{k}()\n{{\n\tret;\n}}\n\n.visible .entry k{k}(.param .u32 n)\n{{\n\tret;\n}}\n"
        ));
    }
    let sigs = entry_signatures("m.ptx", &src).unwrap();
    assert_eq!(sigs.len(), 50);
    for (k, s) in sigs.iter().enumerate() {
        let at = src.find(&format!(".visible .entry k{k}(")).unwrap();
        let want = src[..at].matches('\n').count() as u32 + 1;
        assert_eq!((s.name.as_str(), s.line), (format!("k{k}").as_str(), want));
    }
    let parsed = ptx_linker::parse::parse(ptx_linker::diagnostic::FileId(0), &src);
    let again = ptx_linker::entry_signatures_parsed("m.ptx", &src, &parsed).unwrap();
    assert_eq!(again, sigs);
}
