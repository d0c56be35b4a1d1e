//! What the scan refuses as ptxas 13.5 does (most cases through both the
//! AVX2 and the portable scans): names declared twice in one block, labels
//! where ptxas takes none, and branch targets that are no label in scope.

use super::{refs, HEAD};
use crate::diagnostic::FileId;
use crate::parse::parse;

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
    let twice = |n: &str, line: usize| format!("`{n}` is already declared in this block@{line}");
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
    let k = |params: &str, body: &str| errors(&format!(".func k({params})\n{{\n{body}ret;\n}}\n"));
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
    let twice = |n: &str, line: usize| format!("`{n}` is already declared in this block@{line}");
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
