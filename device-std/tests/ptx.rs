//! What device-std makes rustc emit, read from real PTX: `cargo xtask
//! build-ptx` builds the fixture crate (`tests/fixture`) and the examples
//! that use device-std, and these tests read the linked modules.
//!
//! Needs the nightly toolchain and `ptxas` (`cargo xtask setup`); run with
//! `cargo xtask test`, which sets `PTXAS`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("device-std sits in the workspace")
        .to_path_buf()
}

/// Kernel crates these tests read.
const CRATES: &[&str] = &[
    "device-std-fixture-kernels",
    "vecadd-kernels",
    "block_sum-kernels",
    "linked_math-kernels",
    "transpose-kernels",
    "histogram-kernels",
    "softmax-kernels",
    "warp_reduce-kernels",
    "intrinsics-kernels",
];

/// Builds every crate of [`CRATES`] once per test binary; returns the folder
/// holding `<crate>.ptx`.
fn built() -> &'static Path {
    static DIR: OnceLock<tempfile_dir::Dir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile_dir::Dir::new();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.current_dir(workspace_root())
            .args(["xtask", "build-ptx"])
            .args(["--out-dir", dir.path().to_str().expect("utf-8 temp path")]);
        for c in CRATES {
            cmd.args(["-p", c]);
        }
        let out = cmd.output().expect("running cargo xtask build-ptx");
        assert!(
            out.status.success(),
            "build-ptx failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    })
    .path()
}

/// The output folder: `target/device-std-tests/ptx`, rewritten by each run.
mod tempfile_dir {
    use std::path::{Path, PathBuf};

    pub struct Dir(PathBuf);

    impl Dir {
        pub fn new() -> Self {
            let dir = super::workspace_root().join("target/device-std-tests/ptx");
            std::fs::create_dir_all(&dir).expect("creating the output folder");
            Dir(dir)
        }

        pub fn path(&self) -> &Path {
            &self.0
        }
    }
}

fn module(krate: &str) -> String {
    std::fs::read_to_string(built().join(format!("{krate}.ptx"))).expect("linked PTX")
}

fn fixture() -> String {
    module("device-std-fixture-kernels")
}

/// The body of `.entry name`, from its line to the closing `}` at column 0.
fn entry_body<'a>(ptx: &'a str, name: &str) -> &'a str {
    let start = ptx
        .find(&format!(".entry {name}("))
        .unwrap_or_else(|| panic!("no .entry {name}"));
    let rest = &ptx[start..];
    let end = rest.find("\n}\n").expect("end of entry");
    &rest[..end]
}

fn ptxas() -> PathBuf {
    ptx_linker::ptxas::find().expect(ptx_linker::ptxas::NOT_FOUND_FIX)
}

/// `ptxas -v`: static shared bytes per entry.
fn smem_per_entry(krate: &str) -> HashMap<String, u64> {
    let out = Command::new(ptxas())
        .args(["-arch=sm_90", "-v", "-o", "/dev/null"])
        .arg(built().join(format!("{krate}.ptx")))
        .output()
        .expect("running ptxas");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stderr);
    let mut result = HashMap::new();
    let mut current = None;
    for line in text.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            current = rest.split('\'').next().map(str::to_string);
        }
        if line.contains("Used") {
            if let Some(name) = current.clone() {
                let smem = line
                    .split(", ")
                    .find_map(|p| p.strip_suffix(" bytes smem"))
                    .map_or(0, |n| n.trim().parse().expect("smem bytes"));
                result.insert(name, smem);
            }
        }
    }
    result
}

#[test]
fn each_shared_array_is_its_own_allocation_with_its_alignment() {
    let ptx = fixture();
    let body = entry_body(&ptx, "two_arrays");
    let decls: Vec<&str> = body
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with(".shared"))
        .collect();
    assert_eq!(decls.len(), 2, "two arrays, two allocations:\n{body}");
    assert!(decls
        .iter()
        .any(|d| d.starts_with(".shared .align 16 .b8") && d.ends_with("[256];")));
    assert!(decls
        .iter()
        .any(|d| d.starts_with(".shared .align 128 .b8") && d.ends_with("[256];")));
    let names: HashSet<&str> = decls
        .iter()
        .map(|d| d.rsplit(' ').next().unwrap().split('[').next().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "distinct names: {decls:?}");

    let body = entry_body(&ptx, "aligned_1024");
    assert!(
        body.contains(".shared .align 1024 .b8") && body.contains("[96];"),
        "{body}"
    );
}

#[test]
fn shared_array_accesses_use_the_shared_state_space() {
    let ptx = fixture();
    // These kernels read only shared memory and write one output element
    // through a `DisjointSlice` (a generic store: rustc does not tell LLVM
    // that a slice parameter points to global memory).
    for kernel in [
        "two_arrays",
        "aligned_1024",
        "dynamic",
        "barrier_between_branches",
    ] {
        let body = entry_body(&ptx, kernel);
        let accesses: Vec<&str> = body
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("ld.") || l.starts_with("st."))
            .collect();
        let space = |l: &str| l[3..].split(['.', ' ', '\t']).next().unwrap().to_string();
        let shared_ld = accesses
            .iter()
            .filter(|l| l.starts_with("ld.shared"))
            .count();
        let shared_st = accesses
            .iter()
            .filter(|l| l.starts_with("st.shared"))
            .count();
        assert!(
            shared_ld >= 1 && shared_st >= 1,
            "{kernel}: expected ld.shared and st.shared:\n{body}"
        );
        let generic: Vec<&&str> = accesses
            .iter()
            .filter(|l| !matches!(space(l).as_str(), "shared" | "global" | "param"))
            .collect();
        assert!(
            generic.len() <= 1 && generic.iter().all(|l| l.starts_with("st.")),
            "{kernel}: generic accesses besides the output store: {generic:?}"
        );
    }
}

#[test]
fn launch_bounds_become_maxntid_on_the_entry() {
    // `#[kernel(max_threads = 256)]`: the static and, between the parameter list and
    // the body, the directive ptx-linker writes from it.
    let ptx = module("block_sum-kernels");
    assert!(
        ptx.contains(".visible .global .align 4 .b8 __kernel_bounds_block_sum[8] = {0, 1};"),
        "{ptx}"
    );
    let entry = ptx.find(".visible .entry block_sum(").expect("the entry");
    let head = &ptx[entry..entry + ptx[entry..].find('{').expect("a body")];
    assert!(head.ends_with(")\n.maxntid 256, 1, 1\n"), "{head}");
    assert!(!head.contains(".minnctapersm"), "{head}");
}

#[test]
fn ptxas_reports_the_static_shared_bytes_of_each_kernel() {
    let smem = smem_per_entry("device-std-fixture-kernels");
    // 64 u32 + 64 u32, the second aligned to 128: 256 + 256.
    assert_eq!(smem["two_arrays"], 512);
    // 256 f32.
    assert_eq!(smem["tree_reduce"], 1024);
    assert_eq!(smem["barrier_between_branches"], 1024);
    // 96 bytes, rounded up to the module's dynamic shared alignment (128,
    // from `dynamic`), so that the dynamic area that follows is aligned.
    assert_eq!(smem["aligned_1024"], 128);
    assert_eq!(smem.get("dynamic").copied().unwrap_or(0), 0);
    assert_eq!(smem.get("every_kind").copied().unwrap_or(0), 0);

    let smem = smem_per_entry("block_sum-kernels");
    assert_eq!(smem["block_sum"], 1024);
    let smem = smem_per_entry("transpose-kernels");
    assert_eq!(smem["transpose"], 32 * 33 * 4);
}

#[test]
fn dynamic_shared_memory_is_one_module_scope_extern_with_the_largest_alignment() {
    let ptx = fixture();
    let decls: Vec<&str> = ptx
        .lines()
        .filter(|l| l.starts_with(".extern .shared"))
        .collect();
    assert_eq!(
        decls,
        [".extern .shared .align 128 .b8 gpu_launch_sized_workgroup_mem[];"]
    );
    let ptx = module("intrinsics-kernels");
    assert!(ptx.contains(".extern .shared .align 1024 .b8 gpu_launch_sized_workgroup_mem[];"));
    let map: serde_json_lite::Map = serde_json_lite::read(
        &std::fs::read_to_string(built().join("device-std-fixture-kernels.map.json")).unwrap(),
    );
    assert_eq!(map.dynamic_align("dynamic"), Some(128));
}

/// Just enough JSON reading for the link map's per-kernel fields, without a
/// dependency: finds `"name": "K"` and the `dynamic_shared_align` after it.
mod serde_json_lite {
    pub struct Map(String);

    pub fn read(text: &str) -> Map {
        Map(text.to_string())
    }

    impl Map {
        pub fn dynamic_align(&self, kernel: &str) -> Option<u32> {
            let at = self.0.find(&format!("\"name\": \"{kernel}\""))?;
            let rest = &self.0[at..];
            let field = rest.find("\"dynamic_shared_align\":")?;
            let value = rest[field + 23..].trim_start();
            value.split([',', '\n', '}']).next()?.trim().parse().ok()
        }
    }
}

/// Basic blocks of one entry: each block's lines and successors (`None` =
/// kernel exit). Blocks ending in `trap` have no successor: they abort.
struct Cfg {
    blocks: Vec<(Vec<String>, Vec<Option<usize>>)>,
}

impl Cfg {
    fn build(body: &str) -> Cfg {
        let lines: Vec<&str> = body
            .lines()
            .map(str::trim)
            .skip_while(|l| !l.starts_with('{'))
            .skip(1)
            .filter(|l| !l.is_empty() && !l.starts_with("//") && !l.starts_with('.'))
            .collect();
        // Split into blocks at labels and after branches / returns / traps.
        let mut raw: Vec<(Option<String>, Vec<String>)> = vec![(None, Vec::new())];
        for l in lines {
            if let Some(label) = l.strip_suffix(':') {
                raw.push((Some(label.to_string()), Vec::new()));
                continue;
            }
            raw.last_mut().unwrap().1.push(l.to_string());
            if l.contains("bra")
                || l.starts_with("ret")
                || l.starts_with("trap")
                || l.starts_with("exit")
            {
                raw.push((None, Vec::new()));
            }
        }
        let index: HashMap<String, usize> = raw
            .iter()
            .enumerate()
            .filter_map(|(i, (l, _))| l.clone().map(|l| (l, i)))
            .collect();
        let mut blocks = Vec::new();
        for (i, (_, body)) in raw.iter().enumerate() {
            let last = body.last().map(String::as_str).unwrap_or("");
            let target = |l: &str| {
                let label = l.rsplit([' ', '\t']).next().unwrap().trim_end_matches(';');
                Some(index[label])
            };
            let next = if i + 1 < raw.len() { Some(i + 1) } else { None };
            let succ = if last.starts_with("trap") || last.starts_with("exit") {
                vec![]
            } else if last.starts_with("ret") {
                vec![None]
            } else if last.starts_with("bra") {
                vec![target(last)]
            } else if last.starts_with('@') && last.contains("bra") {
                vec![target(last), next]
            } else {
                vec![next]
            };
            blocks.push((body.clone(), succ));
        }
        Cfg { blocks }
    }

    /// Whether the kernel can reach `ret` from the entry without passing
    /// through block `avoid`.
    fn exit_reachable_avoiding(&self, avoid: usize) -> bool {
        let mut seen = vec![false; self.blocks.len()];
        let mut stack = vec![0];
        while let Some(b) = stack.pop() {
            if b == avoid || seen[b] {
                continue;
            }
            seen[b] = true;
            for s in &self.blocks[b].1 {
                match s {
                    None => return true,
                    Some(n) => stack.push(*n),
                }
            }
        }
        false
    }
}

/// Every block holding a barrier post-dominates the entry: no path to
/// `ret` skips it, so no thread can leave the others waiting. A barrier
/// duplicated into both arms of a branch (the JumpThreading miscompile)
/// fails this, since each copy can be skipped.
fn assert_barriers_convergent(ptx: &str, kernel: &str, expected_barriers: usize) {
    let body = entry_body(ptx, kernel);
    let cfg = Cfg::build(body);
    let mut barriers = 0;
    for (i, (lines, _)) in cfg.blocks.iter().enumerate() {
        let here = lines
            .iter()
            .filter(|l| l.starts_with("bar.") || l.starts_with("barrier."))
            .count();
        if here > 0 {
            barriers += here;
            assert!(
                !cfg.exit_reachable_avoiding(i),
                "{kernel}: a barrier in block {i} can be skipped (divergent control flow):\n{body}"
            );
        }
    }
    assert_eq!(
        barriers, expected_barriers,
        "{kernel}: barriers in the PTX:\n{body}"
    );
}

#[test]
fn no_barrier_ends_up_in_divergent_control_flow() {
    let ptx = fixture();
    assert_barriers_convergent(&ptx, "barrier_between_branches", 1);
    assert_barriers_convergent(&ptx, "two_arrays", 1);
    assert_barriers_convergent(&ptx, "tree_reduce", 9);
    assert_barriers_convergent(&ptx, "dynamic", 1);
    assert_barriers_convergent(&module("block_sum-kernels"), "block_sum", 9);
    assert_barriers_convergent(&module("transpose-kernels"), "transpose", 1);
    assert_barriers_convergent(&module("histogram-kernels"), "histogram", 2);
    assert_barriers_convergent(&module("softmax-kernels"), "softmax", 4);
}

#[test]
fn the_cfg_check_catches_a_duplicated_barrier() {
    // The shape JumpThreading produces: the barrier copied into each arm.
    let body = "\
.entry k()
{
\t@%p1 bra $L__A;
\tst.shared.b32 [%r1], %r2;
\tbar.sync 0;
\tbra.uni $L__B;
$L__A:
\tbar.sync 0;
$L__B:
\tret;
}";
    let cfg = Cfg::build(body);
    let with_barrier: Vec<usize> = (0..cfg.blocks.len())
        .filter(|&i| cfg.blocks[i].0.iter().any(|l| l.starts_with("bar.")))
        .collect();
    assert_eq!(with_barrier.len(), 2);
    assert!(with_barrier.iter().all(|&b| cfg.exit_reachable_avoiding(b)));
}

/// The bytes of `.visible .global .align 4 .b8 NAME[N] = {…}` as `u32`
/// words, with the trailing zero bytes LLVM drops restored.
fn record_words(ptx: &str, symbol: &str) -> Vec<u32> {
    let line = ptx
        .lines()
        .find(|l| l.contains(&format!(" {symbol}[")))
        .unwrap_or_else(|| panic!("no {symbol}"));
    assert!(line.starts_with(".visible .global .align 4 .b8 "), "{line}");
    let size: usize = line
        .split('[')
        .nth(1)
        .unwrap()
        .split(']')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let mut bytes: Vec<u8> = line
        .split('{')
        .nth(1)
        .unwrap()
        .trim_end_matches("};")
        .split(',')
        .map(|b| b.trim().parse().unwrap())
        .collect();
    bytes.resize(size, 0);
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn abi_records_are_in_the_linked_module_with_the_documented_words() {
    let ptx = fixture();
    let words = record_words(&ptx, "__kernel_abi_every_kind");
    #[rustfmt::skip]
    let want = [
        0x4B41_4249, 2, 5,
        // Params: struct, opaque, 3 fields (offset, size, class)
        5, 24, 8, 0, 0, 3, 0, 4, 1, 8, 8, 3, 16, 6, 1,
        3, 16, 8, 4, 3, 0,                 // &[f32]: float
        4, 16, 8, 4, 3, 0,                 // DisjointSlice<f32>: float
        1, 4, 4, 4, 1, 0,                  // u32: unsigned
        2, 8, 8, 2, 1, 0,                  // *const u16: unsigned
    ];
    assert_eq!(words, want);
    // The host computes the same words from the same definitions.
    assert_eq!(
        device_std_fixture_kernels::__KERNEL_ABI_every_kind.as_slice(),
        &want
    );

    // Classes: 0 opaque, 1 unsigned, 2 signed, 3 float, 4 raw pointer, 5 bool.
    let words = record_words(&ptx, "__kernel_abi_value_classes");
    #[rustfmt::skip]
    let want = [
        0x4B41_4249, 2, 11,
        // Classes: 56 bytes aligned to 8, 7 fields
        5, 56, 8, 0, 0, 7,
        0, 4, 3,   4, 4, 1,   8, 4, 2,     // f32, u32, i32
        12, 4, 2,  16, 8, 1,  24, 8, 2,    // [i16; 2], u64, isize
        32, 24, 0,                         // Params, nested: opaque
        3, 16, 8, 4, 3, 0,                 // &[f32]
        3, 16, 8, 4, 1, 0,                 // &[u32]
        3, 16, 8, 4, 2, 0,                 // &[i32]
        3, 16, 8, 8, 1, 0,                 // &[u64]
        1, 4, 4, 4, 2, 0,                  // i32
        1, 8, 8, 8, 1, 0,                  // usize
        2, 8, 8, 4, 1, 0,                  // *const u32
        2, 8, 8, 8, 2, 0,                  // *mut i64
        2, 8, 8, 8, 4, 0,                  // *const *const f32
        4, 16, 8, 4, 2, 0,                 // DisjointSlice<i32>
    ];
    assert_eq!(words, want);
    assert_eq!(
        device_std_fixture_kernels::__KERNEL_ABI_value_classes.as_slice(),
        &want
    );

    // Pointees: bool is class 5, `c_void` is untyped (element size 0, class 0), a
    // pointer to a pointer has an 8-byte raw-pointer pointee.
    let words = record_words(&ptx, "__kernel_abi_pointees");
    #[rustfmt::skip]
    let want = [
        0x4B41_4249, 2, 5,
        2, 8, 8, 1, 5, 0,                  // *mut bool
        2, 8, 8, 1, 1, 0,                  // *const u8
        2, 8, 8, 0, 0, 0,                  // *mut c_void
        2, 8, 8, 8, 4, 0,                  // *const *const f32
        1, 4, 4, 4, 1, 0,                  // u32
    ];
    assert_eq!(words, want);
    assert_eq!(
        device_std_fixture_kernels::__KERNEL_ABI_pointees.as_slice(),
        &want
    );

    for (krate, kernels) in [
        ("vecadd-kernels", &["vecadd"][..]),
        ("block_sum-kernels", &["block_sum"]),
        ("linked_math-kernels", &["poly_eval", "affine"]),
        ("transpose-kernels", &["transpose"]),
        ("histogram-kernels", &["histogram"]),
        ("softmax-kernels", &["softmax"]),
        ("warp_reduce-kernels", &["warp_reduce"]),
        (
            "intrinsics-kernels",
            &[
                "thread_ids",
                "warp_ops",
                "atomics",
                "barriers",
                "dyn_shared",
            ],
        ),
    ] {
        let text = module(krate);
        for k in kernels {
            let words = record_words(&text, &format!("__kernel_abi_{k}"));
            assert_eq!(words[..2], [0x4B41_4249, 2], "{krate}::{k}");
        }
    }
}

#[test]
fn host_signatures_for_special_pointees_against_real_ptx() {
    use host_loader::{Ptr, PtrMut, Signatures};
    let sigs = Signatures::parse("fixture", &fixture()).expect("parses");
    // `bool` data, any element behind `c_void`, `u64` device addresses for the table.
    sigs.check::<(PtrMut<bool>, Ptr<u8>, PtrMut<u32>, Ptr<u64>, u32)>("pointees")
        .unwrap();
    sigs.check::<(PtrMut<bool>, Ptr<u8>, PtrMut<f32>, Ptr<usize>, u32)>("pointees")
        .unwrap();
    sigs.check::<(PtrMut<bool>, Ptr<u8>, PtrMut<[u8; 3]>, Ptr<*const f32>, u32)>("pointees")
        .unwrap();
    let err = |e: host_loader::Error| {
        let s = e.to_string();
        s[s.find("parameter").expect("a parameter")..].to_string()
    };
    // A `u8` buffer for `*mut bool`, and a `bool` buffer for `*const u8`.
    assert_eq!(
        err(sigs
            .check::<(PtrMut<u8>, Ptr<u8>, PtrMut<u32>, Ptr<u64>, u32)>("pointees")
            .unwrap_err()),
        "parameter 0 (`pointees_param_0`): the kernel takes a raw pointer to 1-byte bool \
         data, the Rust argument `PtrMut<u8>` is a raw pointer to 1-byte unsigned integer \
         data; pointee classes differ: bool vs unsigned integer; `bool` is a class of its \
         own: a `bool` must be 0 or 1, a byte need not be"
    );
    assert!(sigs
        .check::<(PtrMut<bool>, Ptr<bool>, PtrMut<u32>, Ptr<u64>, u32)>("pointees")
        .is_err());
    // Signed 8-byte elements are not device addresses.
    assert_eq!(
        err(sigs
            .check::<(PtrMut<bool>, Ptr<u8>, PtrMut<u32>, Ptr<i64>, u32)>("pointees")
            .unwrap_err()),
        "parameter 3 (`pointees_param_3`): the kernel takes a raw pointer to 8-byte raw \
         pointer data, the Rust argument `Ptr<i64>` is a raw pointer to 8-byte signed integer \
         data; pointee classes differ: raw pointer vs signed integer; a device address on the \
         host is a `u64` (`CUdeviceptr`)"
    );
}

#[test]
fn host_signatures_of_the_examples_match_their_ptx_and_records() {
    use host_loader::{PtrMut, Signatures, Slice, SliceMut};
    let check = |krate: &str| Signatures::parse(krate, &module(krate)).expect("parses");
    let s = check("transpose-kernels");
    s.check::<(Slice<f32>, SliceMut<f32>, u32, u32)>("transpose")
        .unwrap();
    assert!(s
        .check::<(Slice<f32>, SliceMut<f32>, u64, u32)>("transpose")
        .is_err());
    check("histogram-kernels")
        .check::<(Slice<u8>, PtrMut<u32>)>("histogram")
        .unwrap();
    check("softmax-kernels")
        .check::<(Slice<f32>, SliceMut<f32>, u32)>("softmax")
        .unwrap();
    check("warp_reduce-kernels")
        .check::<(
            Slice<f32>,
            Slice<u32>,
            Slice<i64>,
            SliceMut<f32>,
            SliceMut<u32>,
            SliceMut<i64>,
        )>("warp_reduce")
        .unwrap();
    // Same element sizes, other value classes: refused by the record.
    let e = check("warp_reduce-kernels")
        .check::<(
            Slice<f32>,
            Slice<i32>,
            Slice<i64>,
            SliceMut<f32>,
            SliceMut<u32>,
            SliceMut<u64>,
        )>("warp_reduce")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(
            "parameter 1 (`warp_reduce_param_1`): the kernel takes a read-only slice of \
             4-byte unsigned integer elements, the Rust argument `Slice<i32>` is a read-only \
             slice of 4-byte signed integer elements; element classes differ: unsigned \
             integer vs signed integer"
        ),
        "{e}"
    );
    let s = check("intrinsics-kernels");
    s.check::<(PtrMut<u32>,)>("thread_ids").unwrap();
    s.check::<(SliceMut<u32>,)>("index_2d_fill").unwrap();
    s.check::<(SliceMut<u32>, u32)>("index_2d_runtime_fill")
        .unwrap();
    s.check::<(Slice<u32>, PtrMut<u64>)>("warp_ops").unwrap();
    s.check::<(Slice<u32>, PtrMut<u64>)>("atomics").unwrap();
    s.check::<(Slice<u32>, PtrMut<u32>, SliceMut<u32>, SliceMut<u32>)>("barriers")
        .unwrap();
    s.check::<(PtrMut<u32>,)>("dyn_shared").unwrap();
    s.check::<(PtrMut<u32>, PtrMut<u32>, PtrMut<u32>)>("message_passing")
        .unwrap();
    s.check::<(SliceMut<u32>,)>("block_ids").unwrap();
}

#[test]
fn warp_and_atomic_families_lower_to_their_ptx_instructions() {
    let ptx = module("intrinsics-kernels");
    for needle in [
        "shfl.sync.idx.b32",
        "shfl.sync.up.b32",
        "shfl.sync.down.b32",
        "shfl.sync.bfly.b32",
        // `*_width` shuffles (`b, c, mask`; c = (32 - width) << 8 | clamp):
        // up width 1, down width 16, bfly width 8, idx width 4.
        "3, 7936, -1;",
        "5, 4127, -1;",
        "9, 6175, -1;",
        "70, 7199, -1;",
        "vote.sync.all.pred",
        "vote.sync.any.pred",
        "vote.sync.ballot.b32",
        "match.any.sync.b32",
        "match.any.sync.b64",
        "redux.sync.add",
        "redux.sync.min.s32",
        "redux.sync.max.u32",
        "activemask.b32",
        "bar.red.popc.u32",
        "bar.red.and.pred",
        "bar.red.or.pred",
        "bar.warp.sync",
        "membar.cta",
        "membar.sys",
        "nanosleep.u32",
        "atom.relaxed.gpu.add.u32",
        "atom.acq_rel.gpu.add.u64",
        "atom.release.sys.add.s32",
        "atom.acquire.gpu.add.u64",
        "atom.relaxed.gpu.add.f32",
        "atom.relaxed.sys.add.f64",
        "atom.relaxed.sys.min.u32",
        "atom.acq_rel.gpu.min.s32",
        "atom.relaxed.gpu.max.s64",
        "atom.relaxed.gpu.or.b32",
        "atom.relaxed.gpu.and.b32",
        "atom.relaxed.gpu.xor.b64",
        "atom.acq_rel.gpu.exch.b32",
        "atom.acq_rel.gpu.cas.b32",
        "atom.acq_rel.gpu.cas.b64",
        "atom.relaxed.cta.shared.add.u32",
        "atom.relaxed.cta.shared.add.f64",
        "atom.acq_rel.cta.shared.cas.b32",
        "red.relaxed.gpu.global.add.u32",
        "red.release.sys.add.u64",
        "red.relaxed.gpu.global.add.f64",
        "atom.acquire.gpu.add.s32",
        "red.relaxed.cta.shared.add.u32",
        "red.relaxed.gpu.global.add.u64",
        "%dynamic_smem_size",
    ] {
        assert!(ptx.contains(needle), "intrinsics-kernels has no `{needle}`");
    }
}

/// `#[kernel(instances(...))]` (issue 31, point 11): each instance of the generic
/// `block_reduce` is an entry of its own, with its own static shared array (`BLOCK`
/// elements of `T`) and its own ABI record (the element's value class: `f32` is 3,
/// `u32` 1, the record's last word).
#[test]
fn a_generic_kernel_emits_one_entry_per_instance() {
    let ptx = fixture();
    for name in ["block_reduce_f32_256", "block_reduce_u32_128"] {
        assert!(
            ptx.contains(&format!(".visible .entry {name}(")),
            "no entry {name}"
        );
    }
    assert!(
        !ptx.contains(".entry block_reduce("),
        "the generic function is no entry"
    );
    let smem = smem_per_entry("device-std-fixture-kernels");
    assert_eq!(smem["block_reduce_f32_256"], 256 * 4);
    assert_eq!(smem["block_reduce_u32_128"], 128 * 4);
    let record = |name: &str| {
        let line = ptx
            .lines()
            .find(|l| l.contains(&format!(" __kernel_abi_{name}[")))
            .unwrap_or_else(|| panic!("no ABI record for {name}"));
        line.rsplit(", ")
            .next()
            .unwrap()
            .trim_end_matches("};")
            .to_string()
    };
    assert_eq!(record("block_reduce_f32_256"), "3");
    assert_eq!(record("block_reduce_u32_128"), "1");
}

/// `Option<&[T]>` and `Option<DisjointSlice<T>>` (issue 31, point 12) cross as the
/// slice's own 16-byte `(ptr, len)` aggregate, with record kinds 9 and 10.
#[test]
fn optional_slices_are_the_slice_aggregate_with_their_own_kinds() {
    let ptx = fixture();
    let entry = ptx
        .split(".visible .entry optional_buffers(")
        .nth(1)
        .expect("the optional_buffers entry");
    let params: Vec<&str> = entry
        .split(')')
        .next()
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(params.len(), 4, "{params:?}");
    for p in &params {
        assert!(
            p.starts_with(".param .align 8 .b8 optional_buffers_param_"),
            "{p}"
        );
        assert!(p.trim_end_matches(',').ends_with("[16]"), "{p}");
    }
    let record = ptx
        .lines()
        .find(|l| l.contains(" __kernel_abi_optional_buffers["))
        .expect("the record");
    let bytes: Vec<u32> = record
        .split('{')
        .nth(1)
        .unwrap()
        .trim_end_matches("};")
        .split(',')
        .map(|b| b.trim().parse().unwrap())
        .collect();
    // Words: magic, version, count, then per parameter (kind, size, align, elem size,
    // elem class, field count); each word little-endian.
    let words: Vec<u32> = bytes
        .chunks(4)
        .map(|c| c.iter().rev().fold(0, |w, &b| (w << 8) | b))
        .collect();
    let kinds: Vec<u32> = (0..4).map(|p| words[3 + 6 * p]).collect();
    assert_eq!(kinds, [3, 9, 4, 10]);
}

/// The host checks optional slices against the record: `OptSlice`/`OptSliceMut` for
/// `Option<&[T]>`/`Option<DisjointSlice<T>>`, and a plain `Slice` there is refused with
/// the form to use.
#[test]
fn host_signatures_of_optional_slices() {
    use host_loader::{OptSlice, OptSliceMut, Signatures, Slice, SliceMut};
    let sigs = Signatures::parse("fixture", &fixture()).expect("parses");
    sigs.check::<(Slice<f32>, OptSlice<f32>, SliceMut<f32>, OptSliceMut<f32>)>("optional_buffers")
        .unwrap();
    let e = sigs
        .check::<(Slice<f32>, Slice<f32>, SliceMut<f32>, OptSliceMut<f32>)>("optional_buffers")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("optional read-only slice") && e.contains("OptSlice<T>"),
        "{e}"
    );
    assert!(sigs
        .check::<(Slice<f32>, OptSlice<u32>, SliceMut<f32>, OptSliceMut<f32>)>("optional_buffers")
        .is_err());
}

/// The tests of a 64-bit register against 0 in `entry` (`setp.eq.b64 %p, %rd, 0;`,
/// `.ne`, `.s64`, `.u64`): what a null test of an address compiles to.
fn null_tests(entry: &str) -> usize {
    entry
        .lines()
        .map(str::trim)
        .filter(|l| {
            let mut words = l.split_whitespace();
            let op = words.next().unwrap_or("");
            let is_setp = ["setp.eq.", "setp.ne."].iter().any(|p| op.starts_with(p))
                && ["b64", "s64", "u64"].iter().any(|t| op.ends_with(t));
            is_setp && l.ends_with(", 0;") && l.contains("%rd")
        })
        .count()
}

/// `#[kernel]` tells LLVM that a slice parameter's address is not null (the ABI never
/// passes null for one), so `DisjointSlice::get_mut` builds its `Option<&mut T>`
/// without testing the address: `vecadd` has no null test. An optional slice keeps its
/// own: `optional_buffers` tests `scale` and `firsts`, not `xs` or `out`.
#[test]
fn slice_parameters_are_not_tested_against_null() {
    let vecadd = module("vecadd-kernels");
    assert_eq!(null_tests(entry_body(&vecadd, "vecadd")), 0);
    assert_eq!(null_tests(entry_body(&fixture(), "optional_buffers")), 2);
}
