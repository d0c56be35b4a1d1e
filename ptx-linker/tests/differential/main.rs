//! Differential testing against the ground truth (issue #13): random
//! multi-module programs ([`gen`]) linked by this linker and by `nvlink`
//! ([`compare`]) must get the same verdict, and where both link, the same
//! definitions must win (space, size, bytes and address relocations of
//! every global data symbol in the two cubins).
//!
//! `cargo test -p gpu-ptx-linker --test differential` runs 64 cases. A longer run:
//! `PTX_DIFF_CASES=5000 cargo test -p gpu-ptx-linker --test differential -- --nocapture`.
//! Case `i` is generated from seed `PTX_DIFF_SEED + i` (default seed
//! [`DEFAULT_SEED`]); a disagreement prints its seed and modules, and
//! `PTX_DIFF_SEED=<seed> PTX_DIFF_CASES=1` runs that case alone.
//!
//! Where nvlink and the linker differ on purpose (see `ptx_linker::agree`),
//! [`documented`] names the reason and the case is counted, not failed.

#[path = "../common/mod.rs"]
mod common;
mod compare;
mod cubin;
mod gen;

use std::path::Path;

use compare::{image_differences, Class, Tools, Verdict};
use gen::{Link, Program, Space, VarRole};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// The first seed when `PTX_DIFF_SEED` is unset.
const DEFAULT_SEED: u64 = 0x5eed13;
/// Cases when `PTX_DIFF_CASES` is unset.
const DEFAULT_CASES: u64 = 64;

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => {
            let v = v.trim();
            let parsed = match v.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => v.parse(),
            };
            parsed.unwrap_or_else(|_| panic!("{name}={v} is not a number"))
        }
        Err(_) => default,
    }
}

/// The program of one seed: the same seed gives the same program.
fn generate(seed: u64) -> Program {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let mut program = gen::program()
        .new_tree(&mut runner)
        .expect("the generator never rejects")
        .current();
    let labels = gen::labels(program.modules.len())
        .new_tree(&mut runner)
        .expect("the generator never rejects")
        .current();
    for (m, label) in program.modules.iter_mut().zip(labels) {
        m.label = label;
    }
    program
}

fn tools() -> Tools {
    let ptxas = common::ptxas().expect("the differential test needs ptxas");
    let nvlink = ptx_linker::ptxas::find_nvlink()
        .unwrap_or_else(|| panic!("{}", ptx_linker::ptxas::NVLINK_NOT_FOUND_FIX));
    Tools { ptxas, nvlink }
}

/// How a case came out.
enum Outcome {
    Agree,
    /// Both refuse, for reasons with no class in common (each tool stops
    /// at different errors: nvlink at its first fatal one).
    OtherReason(String),
    /// A documented difference, with the reason.
    Documented(&'static str),
    /// A disagreement, described.
    Disagree(String),
}

/// Whether some symbol has both a `.weak` and a `.common` definition
/// without initializer, the `.common` one first: the order in which nvlink
/// 13.5 crashes.
fn common_before_weak(p: &Program) -> bool {
    (0..gen::VARS.len()).any(|i| {
        let links: Vec<Link> = p
            .modules
            .iter()
            .filter_map(|m| match &m.vars[i] {
                VarRole::Define {
                    link: Link::Common, ..
                } if m.initialized(i) => None,
                VarRole::Define { link, .. } => Some(*link),
                _ => None,
            })
            .collect();
        let common = links.iter().position(|l| *l == Link::Common);
        let weak = links.iter().rposition(|l| *l == Link::Weak);
        matches!((common, weak), (Some(c), Some(w)) if c < w)
    })
}

/// Whether `r` defines its variable for other modules too: a file-local
/// definition resolves nothing elsewhere.
fn defines_for_all(r: &VarRole) -> bool {
    matches!(r, VarRole::Define { link, .. } if *link != Link::Local)
}

/// Whether some variable that no module defines (file-local definitions
/// aside) is declared `.extern .shared`
/// with `[]` in one module and sized in a later one: nvlink takes the pair
/// as dynamic shared memory in that order only.
fn open_then_sized_shared(p: &Program) -> bool {
    (0..gen::VARS.len()).any(|i| {
        let roles: Vec<&VarRole> = p.modules.iter().map(|m| &m.vars[i]).collect();
        let shared = |r: &VarRole, want_open: bool| {
            matches!(r, VarRole::Extern { shape, open } if shape.space == Space::Shared && *open == want_open)
        };
        let first_open = roles.iter().position(|r| shared(r, true));
        let last_sized = roles.iter().rposition(|r| shared(r, false));
        !roles.iter().any(|r| defines_for_all(r))
            && matches!((first_open, last_sized), (Some(o), Some(s)) if o < s)
    })
}

/// Whether some variable is declared `.extern` with `[]` first, then sized
/// (`.extern` with a size) in one or more later modules, and defined (not
/// file-locally) only after those: nvlink then checks none of the sized
/// declarations against the definition (nvlink 13.5, by hand: `[]`, `[3]`,
/// `[1]`, then a 2-element definition links; any other order of them is
/// refused with "Size doesn't match").
fn open_then_sized_then_defined(p: &Program) -> bool {
    (0..gen::VARS.len()).any(|i| {
        let roles: Vec<&VarRole> = p.modules.iter().map(|m| &m.vars[i]).collect();
        let open = roles
            .iter()
            .position(|r| matches!(r, VarRole::Extern { open: true, .. }));
        let sized = |r: &&VarRole| matches!(r, VarRole::Extern { open: false, .. });
        let (first_sized, last_sized) =
            (roles.iter().position(sized), roles.iter().rposition(sized));
        let defined = roles.iter().position(|r| defines_for_all(r));
        matches!((open, first_sized, last_sized, defined),
            (Some(o), Some(s0), Some(s1), Some(d)) if o < s0 && s1 < d)
    })
}

/// Whether the prototypes some function is declared or defined with (not
/// file-locally) differ, but only in a `.param .align N .b8 x[8]`'s `N`:
/// nvlink's prototype strings leave the alignment out (`#ib8`), so it
/// links; ptxas refuses the merged module ("Alignment of argument does not
/// match formal parameter").
fn protos_differ_only_in_align(p: &Program) -> bool {
    let plain = |t: &gen::ParamTy| match t {
        gen::ParamTy::Bytes8 { .. } => gen::ParamTy::Bytes8 { align: 0 },
        other => *other,
    };
    let key = |proto: &gen::Proto| {
        (
            proto.ret.as_ref().map(plain),
            proto.params.iter().map(plain).collect::<Vec<_>>(),
        )
    };
    (0..gen::FUNCS.len()).any(|j| {
        let protos: Vec<&gen::Proto> = p
            .modules
            .iter()
            .filter_map(|m| match &m.funcs[j] {
                gen::FuncRole::Extern(proto) => Some(proto),
                gen::FuncRole::Define { link, proto, .. } if *link != Link::Local => Some(proto),
                _ => None,
            })
            .collect();
        protos.windows(2).any(|w| w[0] != w[1]) && protos.windows(2).all(|w| key(w[0]) == key(w[1]))
    })
}

/// Whether some variable has an uninitialized `.common` definition, then
/// a `.weak` one (with or without initializer), then a strong one: after
/// the first merge nvlink no longer checks the `.weak` one's size.
fn common_weak_strong(p: &Program) -> bool {
    (0..gen::VARS.len()).any(|i| {
        let mut stage = 0;
        for m in &p.modules {
            let VarRole::Define { link, .. } = &m.vars[i] else {
                continue;
            };
            stage = match (stage, link, m.initialized(i)) {
                (0, Link::Common, false) => 1,
                (1, Link::Weak, _) => 2,
                (2, Link::Visible, _) | (2, Link::Common, true) => 3,
                (s, _, _) => s,
            };
        }
        stage == 3
    })
}

/// Whether some variable is declared `.extern` with a size, first defined
/// by an uninitialized `.common` of that size, and grown by a later
/// definition, every sized declaration coming before the growth. nvlink
/// holds a declaration to the size so far, and lets a later `.common` or
/// initialized definition grow a `.common` (nvlink 13.5, by hand: `.extern
/// .u32 g`, `.common .u32 g`, then `.common .u32 g[4]` or `.visible .u32 g[4]
/// = {..}` links, as with the `.common .u32 g` first; a declaration after
/// the growth, or the larger definition first, is refused with "Size doesn't
/// match"). The linker checks each declaration against the winner's size and
/// refuses every order.
fn sized_extern_before_growth(p: &Program) -> bool {
    (0..gen::VARS.len()).any(|i| {
        // Each global occurrence: (a sized declaration, an uninitialized
        // `.common`, size).
        let mut seen = Vec::new();
        for m in &p.modules {
            match &m.vars[i] {
                VarRole::Extern { open: true, .. } => return false,
                VarRole::Extern { shape, .. } => seen.push((true, false, shape.size())),
                VarRole::Define { link, shape, .. } if *link != Link::Local => {
                    let common = *link == Link::Common && !m.initialized(i);
                    seen.push((false, common, shape.size()));
                }
                _ => {}
            }
        }
        let Some(&(_, _, size)) = seen.first() else {
            return false;
        };
        let first_def = seen.iter().find(|o| !o.0);
        let growth = seen.iter().position(|o| o.2 != size);
        let last_decl = seen.iter().rposition(|o| o.0);
        matches!(first_def, Some(&(_, true, s)) if s == size)
            && matches!((growth, last_decl), (Some(g), Some(d)) if d < g)
    })
}

/// The reason for a difference `ptx_linker::agree` documents, if this is one.
fn documented(p: &Program, ours: &Verdict, theirs: &Verdict) -> Option<&'static str> {
    let refused_only_for = |classes: &[Class]| matches!(ours, Verdict::Refused(c, _) if c.iter().all(|c| classes.contains(c)));
    let linked = matches!(theirs, Verdict::Linked(_));
    match theirs {
        Verdict::Crashed(_) if common_before_weak(p) => {
            Some("nvlink crashes on a .common definition followed by a .weak one")
        }
        _ if linked
            && refused_only_for(&[Class::Prototype])
            && p.modules.iter().any(gen::ModuleSpec::takes_function_address) =>
        {
            Some("nvlink skips a prototype check after a module takes the function's address (in one order)")
        }
        _ if linked && refused_only_for(&[Class::Size]) && common_weak_strong(p) => {
            Some("nvlink forgets a .weak size after merging a .common into it (in one order of three)")
        }
        _ if linked
            && refused_only_for(&[Class::Size, Class::Undefined])
            && open_then_sized_shared(p) =>
        {
            Some("nvlink accepts a sized .extern .shared after a [] one (in that order only)")
        }
        _ if linked && refused_only_for(&[Class::Prototype]) && protos_differ_only_in_align(p) => {
            Some("nvlink ignores a .param's alignment in prototypes (ptxas refuses the merged module)")
        }
        _ if linked && refused_only_for(&[Class::Size]) && sized_extern_before_growth(p) => {
            Some("nvlink checks a sized .extern against the size so far, which a later definition may grow (in some orders)")
        }
        _ if linked && refused_only_for(&[Class::Size]) && open_then_sized_then_defined(p) => {
            Some("nvlink skips a sized .extern's size after a [] one, before the definition (in that order only)")
        }
        _ => None,
    }
}

fn judge(p: &Program, ours: &Verdict, theirs: &Verdict) -> Outcome {
    if let Some(why) = documented(p, ours, theirs) {
        return Outcome::Documented(why);
    }
    match (ours, theirs) {
        (Verdict::Linked(a), Verdict::Linked(b)) => {
            let diffs = image_differences(a, b, &gen::FUNCS, &p.const_address_holders());
            if diffs.is_empty() {
                Outcome::Agree
            } else {
                Outcome::Disagree(format!(
                    "both link, with other definitions:\n  {}",
                    diffs.join("\n  ")
                ))
            }
        }
        (Verdict::Refused(a, _), Verdict::Refused(b, _)) => {
            // Each tool reports what it finds in its own order and may stop
            // early: one reason in common is the same refusal.
            if a.intersection(b).next().is_some() || b.contains(&Class::Other) {
                Outcome::Agree
            } else {
                Outcome::OtherReason(format!("ours {a:?}, nvlink {b:?}"))
            }
        }
        _ => Outcome::Disagree("one links, the other refuses".to_string()),
    }
}

fn describe(v: &Verdict) -> String {
    match v {
        Verdict::Linked(image) => format!("links: {image:?}"),
        Verdict::Refused(classes, message) => format!("refuses {classes:?}:\n{message}"),
        Verdict::Crashed(why) => format!("crashes: {why}"),
    }
}

fn run_case(tools: &Tools, seed: u64, dir: &Path) -> Outcome {
    let program = generate(seed);
    let modules = program.render();
    let theirs = compare::reference(tools, &modules, dir).unwrap_or_else(|e| {
        panic!(
            "seed {seed:#x}: generated program is not well-formed: {e}\n{}",
            show(&modules)
        )
    });
    let ours = compare::ours(tools, &modules, dir);
    let outcome = judge(&program, &ours, &theirs);
    if let Outcome::Disagree(why) = &outcome {
        eprintln!(
            "=== disagreement, seed {seed:#x}: {why}\n--- ours: {}\n--- nvlink: {}\n{}",
            describe(&ours),
            describe(&theirs),
            show(&modules)
        );
    }
    outcome
}

fn show(modules: &[(String, String)]) -> String {
    modules
        .iter()
        .map(|(name, text)| format!("--- {name}\n{text}"))
        .collect()
}

#[test]
fn linker_agrees_with_nvlink() {
    let tools = tools();
    let first = env_u64("PTX_DIFF_SEED", DEFAULT_SEED);
    let cases = env_u64("PTX_DIFF_CASES", DEFAULT_CASES);
    let dir = std::env::temp_dir().join(format!("ptx-linker-differential-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (mut agree, mut disagree, mut other_reason) = (0u64, Vec::new(), Vec::new());
    let mut documented: std::collections::BTreeMap<&str, u64> = Default::default();
    for seed in first..first + cases {
        match run_case(&tools, seed, &dir) {
            Outcome::Agree => agree += 1,
            Outcome::OtherReason(why) => other_reason.push(format!("{seed:#x}: {why}")),
            Outcome::Documented(why) => *documented.entry(why).or_default() += 1,
            Outcome::Disagree(_) => disagree.push(seed),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "differential: {cases} cases from seed {first:#x}: {agree} agree, {} both refuse for other reasons, \
         {} documented differences {documented:?}, {} disagreements",
        other_reason.len(),
        documented.values().sum::<u64>(),
        disagree.len()
    );
    for why in &other_reason {
        eprintln!("  both refuse, for other reasons: {why}");
    }
    assert!(
        disagree.is_empty(),
        "{} of {cases} cases disagree with nvlink; seeds: {:#x?} (rerun one with PTX_DIFF_SEED=<seed> PTX_DIFF_CASES=1 -- --nocapture)",
        disagree.len(),
        disagree
    );
}

/// Seeds whose programs once came out as disagreements through faults of this test
/// (its cubin reader credited a relocation inside a file-local symbol to the global
/// symbol of the same name; two classifiers missed file-local definitions and `.weak`
/// definitions without initializer) or through a difference not yet documented
/// (`0x1abe22ea`), each with the outcome it must have now: `None`
/// for agreement, else the documented difference. The programs come from `gen`: after
/// a change there, rerun these seeds with `--nocapture` and record what they became.
#[test]
fn seeds_that_once_disagreed_come_out_as_recorded() {
    let tools = tools();
    let dir = std::env::temp_dir().join(format!(
        "ptx-linker-differential-seeds-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let cases: [(u64, Option<&str>); 6] = [
        (
            0x20261733,
            Some("nvlink accepts a sized .extern .shared after a [] one (in that order only)"),
        ),
        (
            0x202617b7,
            Some("nvlink forgets a .weak size after merging a .common into it (in one order of three)"),
        ),
        (0x20261ccd, None),
        (
            0x7e57cc5b,
            Some("nvlink skips a sized .extern's size after a [] one, before the definition (in that order only)"),
        ),
        (
            0x7e57cf02,
            Some("nvlink ignores a .param's alignment in prototypes (ptxas refuses the merged module)"),
        ),
        (
            0x1abe22ea,
            Some("nvlink checks a sized .extern against the size so far, which a later definition may grow (in some orders)"),
        ),
    ];
    for (seed, want) in cases {
        let got = match run_case(&tools, seed, &dir) {
            Outcome::Agree => None,
            Outcome::Documented(why) => Some(why),
            Outcome::OtherReason(why) => {
                panic!("seed {seed:#x}: both refuse, for other reasons: {why}")
            }
            Outcome::Disagree(why) => panic!("seed {seed:#x}: disagreement: {why}"),
        };
        assert_eq!(got, want, "seed {seed:#x}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
