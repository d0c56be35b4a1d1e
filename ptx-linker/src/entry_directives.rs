//! Entry directives from device-std statics: rustc cannot write performance-tuning
//! directives on an `.entry`, so device-std's `#[kernel(...)]` emits a small
//! `#[no_mangle]` static per kernel and the linker turns it into the directives on
//! that kernel's `.entry`:
//!
//! | static (written by) | words | directives on `.entry K` |
//! |---|---|---|
//! | `__kernel_cluster_K` (`#[kernel(cluster = (x, y, z))]`) | `[x, y, z]`, CTAs | `.explicitcluster` and `.reqnctapercluster x, y, z` (PTX ISA 9.0 §11.4.11-12; sm_90, PTX 7.8) |
//! | `__kernel_bounds_K` (`#[kernel(max_threads = N, min_blocks = M)]`) | `[N, M]`, threads and CTAs per SM; `M` 0 when not given | `.maxntid N, 1, 1` and, when `M > 0`, `.minnctapersm M` (PTX ISA 9.0 §11.4.2 and §11.4.4; every target) |
//! | `__kernel_dims_K` (`#[kernel(dims = N)]`) | `[N]`, 1 or 2 | none: in `K`'s body, each `mov` from a special register of a dimension past `N` (`%tid`, `%ntid`, `%ctaid`, `%nctaid` `.y`/`.z`) becomes a `mov` of its value in such a launch, 0 or 1 ([`fold_launch_dims`]) |
//!
//! A cluster shape makes every launch of `K` run in clusters of that shape, with or
//! without a launch attribute, and the driver refuses any other shape. Launch bounds
//! cap the block at `N` threads (the driver refuses a larger block), let ptxas budget
//! registers for `N` threads (and for `M` resident CTAs per SM), and give the kernel the
//! register cap at entry that Hopper's `setmaxnreg` needs.
//!
//! A declared launch dimension lets ptxas drop the index arithmetic of the other
//! dimensions; host-loader and the emulator refuse every launch of another shape, so the
//! constants are the values the registers would hold.
//!
//! Each static is read as little-endian `u32` words from its initializer
//! ([`init::initializer_bytes`]); a malformed one, one without its kernel, and one for
//! an entry that already carries the directives it would write (hand-written PTX:
//! ptxas refuses them twice) are errors.

use rustc_hash::FxHashMap as HashMap;
use std::fmt::Write;

use crate::ast::{FnKind, ItemKind, Module};
use crate::diagnostic::Diagnostic;
use crate::gc::Liveness;
use crate::init;
use crate::merge::Header;
use crate::symbols::{SymbolId, SymbolTable};

/// Prefix of the variables that carry a kernel's cluster shape.
pub const CLUSTER_SHAPE_PREFIX: &str = "__kernel_cluster_";

/// Prefix of the variables that carry a kernel's launch bounds.
pub const LAUNCH_BOUNDS_PREFIX: &str = "__kernel_bounds_";

/// Prefix of the variables that carry a kernel's launch dimensions.
pub const LAUNCH_DIMS_PREFIX: &str = "__kernel_dims_";

/// Most threads one block can have on any target (`.maxntid` may not exceed it).
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;

/// A kernel's launch bounds: CUDA's `__launch_bounds__(max_threads, min_blocks)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LaunchBounds {
    /// Most threads per block, 1..=1024 (`.maxntid max_threads, 1, 1`).
    pub max_threads: u32,
    /// Fewest CTAs ptxas should make resident per SM (`.minnctapersm`), if given.
    pub min_blocks: Option<u32>,
}

/// The directives the linker writes on one `.entry`, from device-std statics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct EntryDirectives {
    /// Cluster shape in CTAs (`.explicitcluster`, `.reqnctapercluster`).
    pub cluster: Option<[u32; 3]>,
    /// Launch bounds (`.maxntid`, `.minnctapersm`).
    pub bounds: Option<LaunchBounds>,
    /// Launch dimensions, 1 or 2: the body's special registers of the other dimensions
    /// are folded ([`fold_launch_dims`]).
    pub dims: Option<u32>,
}

impl EntryDirectives {
    /// Appends the directives, each on a line of its own preceded by a newline, in
    /// the order cluster, bounds; nothing when there are none.
    pub fn write_to(&self, out: &mut String) {
        if let Some([x, y, z]) = self.cluster {
            let _ = write!(out, "\n.explicitcluster\n.reqnctapercluster {x}, {y}, {z}");
        }
        if let Some(b) = self.bounds {
            let _ = write!(out, "\n.maxntid {}, 1, 1", b.max_threads);
            if let Some(m) = b.min_blocks {
                let _ = write!(out, "\n.minnctapersm {m}");
            }
        }
    }
}

/// One kind of static: how it is named, read, checked and described.
struct Kind {
    prefix: &'static str,
    /// Its length in `u32` words.
    words: usize,
    /// What it gives, with an article where English wants one: "a cluster shape".
    what: &'static str,
    /// What a valid one is (the label of the "is not" error).
    expected: &'static str,
    /// How to declare one (the help of the "is not" error).
    declare: &'static str,
    /// What the static is called in help texts: "shape", "bounds".
    short: &'static str,
    /// Directives an entry must not already have.
    conflicts: &'static [&'static str],
    /// What the "is not" error says about the static: "is not a cluster shape".
    not_one: &'static str,
    /// The directives the words give, or what is out of range.
    parse: fn(&[u32]) -> Result<EntryDirectives, String>,
}

const CLUSTER: Kind = Kind {
    prefix: CLUSTER_SHAPE_PREFIX,
    words: 3,
    what: "a cluster shape",
    expected: "expected three u32 extents in 1..=8 whose product is at most 8",
    declare: "declare the shape with `#[kernel(cluster = (x, y, z))]`",
    short: "shape",
    conflicts: &[".reqnctapercluster", ".explicitcluster"],
    not_one: "is not a cluster shape",
    parse: |w| {
        let [x, y, z] = [w[0], w[1], w[2]];
        if let Some(d) = [x, y, z].into_iter().find(|d| !(1..=8).contains(d)) {
            return Err(format!("({x}, {y}, {z}) has the extent {d}, not in 1..=8"));
        }
        let ctas = x * y * z;
        if ctas > 8 {
            return Err(format!("({x}, {y}, {z}) is {ctas} CTAs, more than 8"));
        }
        Ok(EntryDirectives {
            cluster: Some([x, y, z]),
            ..EntryDirectives::default()
        })
    },
};

const BOUNDS: Kind = Kind {
    prefix: LAUNCH_BOUNDS_PREFIX,
    words: 2,
    what: "launch bounds",
    expected: "expected two u32s: max threads per block in 1..=1024, then min blocks per SM (0: none)",
    declare: "declare the bounds with `#[kernel(max_threads = N)]` or `#[kernel(max_threads = N, min_blocks = M)]`",
    short: "bounds",
    conflicts: &[".maxntid", ".reqntid", ".minnctapersm"],
    not_one: "does not hold launch bounds",
    parse: |w| {
        let (n, m) = (w[0], w[1]);
        if !(1..=MAX_THREADS_PER_BLOCK).contains(&n) {
            return Err(format!(
                "max threads per block is {n}, not in 1..={MAX_THREADS_PER_BLOCK}"
            ));
        }
        Ok(EntryDirectives {
            bounds: Some(LaunchBounds {
                max_threads: n,
                min_blocks: (m > 0).then_some(m),
            }),
            ..EntryDirectives::default()
        })
    },
};

const DIMS: Kind = Kind {
    prefix: LAUNCH_DIMS_PREFIX,
    words: 1,
    what: "launch dimensions",
    expected: "expected one u32, 1 or 2: the dimensions of every launch's grid and blocks",
    declare: "declare them with `#[kernel(dims = 1)]` or `#[kernel(dims = 2)]`",
    short: "dimensions",
    conflicts: &[],
    not_one: "does not hold launch dimensions",
    parse: |w| {
        if !(1..=2).contains(&w[0]) {
            return Err(format!("the dimensions are {}, not 1 or 2", w[0]));
        }
        Ok(EntryDirectives {
            dims: Some(w[0]),
            ..EntryDirectives::default()
        })
    },
};

/// The special registers whose value a launch of `dims` dimensions fixes, with that
/// value: the y (for `dims == 1`) and z extents are 1 and the indices along them 0.
fn fixed_registers(dims: u32) -> &'static [(&'static str, &'static str)] {
    const ONE_D: &[(&str, &str)] = &[
        ("%tid.y", "0"),
        ("%ctaid.y", "0"),
        ("%ntid.y", "1"),
        ("%nctaid.y", "1"),
        ("%tid.z", "0"),
        ("%ctaid.z", "0"),
        ("%ntid.z", "1"),
        ("%nctaid.z", "1"),
    ];
    if dims == 1 {
        ONE_D
    } else {
        &ONE_D[4..]
    }
}

/// Appends `body` (a kernel's text after its prototype) to `out` with each line of the
/// form `mov.u32 %r, %tid.y;` (`.u32`, `.b32` or `.s32`; any register; a special
/// register of a dimension a launch of `dims` dimensions fixes) written as
/// `mov.u32 %r, 0;` with that value, keeping its indentation. Every other line is
/// copied as it is: reads of these registers in another form stay reads, which is
/// correct, only not folded.
pub fn fold_launch_dims(body: &str, dims: u32, out: &mut String) {
    let fixed = fixed_registers(dims);
    for line in body.split_inclusive('\n') {
        match fold_line(line, fixed) {
            Some((head, value, tail)) => {
                out.push_str(head);
                out.push_str(value);
                out.push_str(tail);
            }
            None => out.push_str(line),
        }
    }
}

/// `line` split around the special register it moves, with the register's fixed value,
/// when it is `[ws]mov.{u32,b32,s32}[ws]%reg,[ws]%special;[rest]` and `%special` is in
/// `fixed`.
fn fold_line<'l>(
    line: &'l str,
    fixed: &[(&str, &'static str)],
) -> Option<(&'l str, &'static str, &'l str)> {
    let rest = line.trim_start();
    let rest = ["mov.u32", "mov.b32", "mov.s32"]
        .iter()
        .find_map(|op| rest.strip_prefix(op))?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let (dest, rest) = rest.trim_start().split_once(',')?;
    let dest_ok = dest.strip_prefix('%').is_some_and(|d| {
        !d.is_empty()
            && d.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
    });
    if !dest_ok {
        return None;
    }
    let src = rest.trim_start();
    let (reg, _) = src.split_once(';')?;
    let value = fixed.iter().find(|(r, _)| *r == reg.trim_end())?.1;
    let start = line.len() - src.len();
    Some((&line[..start], value, &line[start + reg.len()..]))
}

/// The directives each live kernel gets from the statics of this link, by the
/// kernel's symbol.
///
/// Errors: a static that is not what its kind needs (a cluster shape: three `u32`s in
/// 1..=8 with a product of at most 8; launch bounds: two `u32`s, the first in
/// 1..=1024), one without its kernel, one for an entry that already has one of the
/// directives it would write, a cluster shape on a target older than sm_90 or PTX 7.8.
pub fn entry_directives(
    modules: &[Module<'_>],
    table: &SymbolTable<'_>,
    live: &Liveness,
    header: &Header,
    diags: &mut Vec<Diagnostic>,
) -> HashMap<SymbolId, EntryDirectives> {
    let mut out: HashMap<SymbolId, EntryDirectives> = HashMap::default();
    let mut refs: Vec<_> = live.live.iter().collect();
    refs.sort();
    for r in refs {
        let m = &modules[r.module];
        let item = &m.items[r.item];
        let ItemKind::Variable(v) = &item.kind else {
            continue;
        };
        let Some((kind, kernel)) = [&CLUSTER, &BOUNDS, &DIMS]
            .into_iter()
            .find_map(|k| Some((k, v.symbol().strip_prefix(k.prefix)?)))
        else {
            continue;
        };
        if !item.is_definition() {
            continue;
        }
        let bytes = match init::initializer_bytes(m.file, m.text, v) {
            Ok(b) => b,
            Err(d) => {
                diags.push(d);
                continue;
            }
        };
        let value = if bytes.len() == 4 * kind.words {
            let words: Vec<u32> = bytes
                .chunks_exact(4)
                .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
                .collect();
            (kind.parse)(&words)
        } else {
            Err(format!(
                "it holds {} bytes, not {} (`[u32; {}]`)",
                bytes.len(),
                4 * kind.words,
                kind.words
            ))
        };
        let value = match value {
            Ok(v) => v,
            Err(why) => {
                diags.push(
                    Diagnostic::error(
                        v.name.span,
                        format!("`{}` {}: {why}", v.symbol(), kind.not_one),
                    )
                    .with_label(kind.expected)
                    .with_help(kind.declare),
                );
                continue;
            }
        };
        let entry = table.lookup(r.module, kernel).filter(|&id| {
            table.defs(id).iter().any(|d| {
                matches!(&modules[d.module].items[d.item].kind, ItemKind::Function(f) if f.kind == FnKind::Entry)
            })
        });
        // An entry that already carries these directives (hand-written PTX) would get
        // them twice, which ptxas refuses: say so here.
        let existing = entry.and_then(|id| {
            table.defs(id).iter().find_map(|d| {
                let em = &modules[d.module];
                let ItemKind::Function(f) = &em.items[d.item].kind else {
                    return None;
                };
                let after = &em.text[f.proto_end as usize..];
                let head = &after[..after.find('{').unwrap_or(after.len())];
                kind.conflicts.iter().find(|dir| head.contains(*dir))
            })
        });
        if let Some(dir) = existing {
            diags.push(
                Diagnostic::error(
                    v.name.span,
                    format!(
                        "`{}` gives {} for `{kernel}`, whose `.entry` already has `{dir}`",
                        v.symbol(),
                        kind.what
                    ),
                )
                .with_help(format!(
                    "keep one of the two: the directive in the PTX or the {} variable",
                    kind.short
                )),
            );
            continue;
        }
        let Some(entry) = entry else {
            diags.push(
                Diagnostic::error(
                    v.name.span,
                    format!(
                        "`{}` gives {} for `{kernel}`, which is not a kernel of this link",
                        v.symbol(),
                        kind.what
                    ),
                )
                .with_help(format!(
                    "define the `.entry {kernel}`, or remove the {}",
                    kind.short
                )),
            );
            continue;
        };
        if let Some(shape) = value.cluster {
            let min_version = targets::PtxVersion { major: 7, minor: 8 };
            let new_enough =
                header.info.is_some_and(|i| i.sm >= 90) && header.version >= min_version;
            if !new_enough {
                diags.push(
                    Diagnostic::error(
                        v.name.span,
                        format!(
                            "kernel `{kernel}` declares a cluster shape ({}, {}, {}), but the link targets `{}` with `.version {}`; clusters need sm_90 and PTX ISA 7.8 or newer",
                            shape[0], shape[1], shape[2], header.arch, header.version
                        ),
                    )
                    .with_help("build for sm_90 or newer, or remove the cluster shape"),
                );
                continue;
            }
        }
        let slot = out.entry(entry).or_default();
        slot.cluster = slot.cluster.or(value.cluster);
        slot.bounds = slot.bounds.or(value.bounds);
        slot.dims = slot.dims.or(value.dims);
    }
    out
}
