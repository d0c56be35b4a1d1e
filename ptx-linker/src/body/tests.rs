//! Tests of the whole scan, through the parser: which names are
//! references, scopes, the fast paths against the token-by-token scan,
//! function-scope `.shared` sizes. What it refuses is in `checks.rs`.

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

mod checks;

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
    let src = format!("{HEAD}.visible .entry k()\n{{\nmov.u32 %r1, \"open;\nret;\n// trailing\n");
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
    use super::opcode::{word, Opcode};
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

#[test]
fn labels_hide_module_symbols_either_side_of_the_listed_limit() {
    // (Labels among operands are refused, but what they hide shows.)
    // Around `LABELS_SEARCHED` labels the list moves into the map at the
    // use: a label named like a module symbol hides it from its line on,
    // in a run of plain statements (4 names, one passed) and token by
    // token (5 names), through the AVX2 and portable operand passes.
    for portable in [false, true] {
        for labels in super::scopes::LABELS_SEARCHED - 1..=super::scopes::LABELS_SEARCHED + 2 {
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
