//! End-to-end: `cargo xtask build-ptx` builds, links and validates every
//! example for sm_90 and sm_80, and each output is accepted by `ptxas`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn ptxas() -> PathBuf {
    ptx_linker::ptxas::find().expect(ptx_linker::ptxas::NOT_FOUND_FIX)
}

fn xtask(args: &[&str]) -> Output {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    Command::new(cargo)
        .current_dir(workspace_root())
        .args(["xtask"])
        .args(args)
        .output()
        .expect("running cargo xtask")
}

fn assemble(module: &Path, arch: &str) {
    let out = Command::new(ptxas())
        .arg(format!("-arch={arch}"))
        .arg(module)
        .args(["-o", "/dev/null"])
        .output()
        .expect("running ptxas");
    assert!(
        out.status.success(),
        "ptxas -arch={arch} rejected {}:\n{}",
        module.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

const MODULES: &[(&str, &[&str])] = &[
    ("vecadd-kernels", &["vecadd"]),
    ("block_sum-kernels", &["block_sum"]),
    ("linked_math-kernels", &["poly_eval", "affine"]),
    ("transpose-kernels", &["transpose"]),
    ("histogram-kernels", &["histogram"]),
    ("softmax-kernels", &["softmax"]),
    ("warp_reduce-kernels", &["warp_reduce"]),
    ("dependent_launch-kernels", &["step"]),
    ("black_scholes-kernels", &["black_scholes"]),
    ("nbody-kernels", &["nbody_step", "nbody_step_fast"]),
    (
        "intrinsics-kernels",
        &[
            "thread_ids",
            "index_2d_fill",
            "index_2d_runtime_fill",
            "warp_ops",
            "warp_shuffle_widths",
            "atomics",
            "barriers",
            "dyn_shared",
            "message_passing",
            "block_ids",
            "hello",
            "shared_index",
        ],
    ),
    (
        "module_vars-kernels",
        &["conv_const", "conv_global", "count_above", "reverse_blocks"],
    ),
    ("grid_sync-kernels", &["sum_grid"]),
    (
        "texture-kernels",
        &[
            "resize_bilinear",
            "sample_1d_f32",
            "sample_2d_f32",
            "sample_3d_f32",
            "sample_1d_rgba8",
            "sample_2d_rgba8",
            "sample_3d_rgba8",
            "invert_rgba8",
            "swap_pairs_3d",
        ],
    ),
];

fn build_and_check(arch: &str) {
    let out_dir = tempfile::tempdir().unwrap();
    let out = xtask(&[
        "build-ptx",
        "--arch",
        arch,
        "--out-dir",
        out_dir.path().to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "build-ptx --arch {arch} failed:\n{stderr}"
    );
    assert!(
        stderr.contains("Verifying"),
        "build-ptx did not run ptxas:\n{stderr}"
    );

    for (module, kernels) in MODULES {
        let ptx_path = out_dir.path().join(format!("{module}.ptx"));
        let ptx = std::fs::read_to_string(&ptx_path).unwrap();
        assert!(
            ptx.contains(&format!(".target {arch}")),
            "{module}: wrong .target"
        );
        // Only the driver-provided functions (PTX ISA "System Calls") may stay external.
        for line in ptx.lines().filter(|l| l.starts_with(".extern .func")) {
            let name = line.split_whitespace().last().unwrap_or("");
            assert!(
                ["vprintf", "malloc", "free", "__assertfail"].contains(&name),
                "{module}: unresolved extern `{name}` left:\n{ptx}"
            );
        }
        assemble(&ptx_path, arch);

        let map: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out_dir.path().join(format!("{module}.map.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(map["target"], arch);
        let names: Vec<&str> = map["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["name"].as_str().unwrap())
            .collect();
        let mut expected = kernels.to_vec();
        expected.sort();
        let mut got = names.clone();
        got.sort();
        assert_eq!(got, expected, "{module}: kernels in the map");
    }
}

#[test]
fn builds_links_and_assembles_every_example() {
    build_and_check("sm_90");
    build_and_check("sm_80");
}

#[test]
fn linked_math_needs_the_linker() {
    // The kernel crate's own PTX declares mathlib's functions `.extern`;
    // only the linked module defines them.
    let out = xtask(&["build-ptx", "-p", "linked_math-kernels", "--no-verify"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let deps = workspace_root().join("target/device/sm_90/nvptx64-nvidia-cuda/release/deps");
    let own = std::fs::read_dir(&deps)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with("linked_math_kernels-") && name.ends_with(".s")
        })
        .max_by_key(|p| std::fs::metadata(p).unwrap().modified().unwrap())
        .expect("the kernel crate's own PTX");
    let unlinked = std::fs::read_to_string(own).unwrap();
    assert!(
        unlinked.contains(".extern .func"),
        "expected extern declarations:\n{unlinked}"
    );
    assert!(unlinked.contains("mathlib6horner"));

    let linked =
        std::fs::read_to_string(workspace_root().join("target/ptx/linked_math-kernels.ptx"))
            .unwrap();
    assert!(!linked.contains(".extern"));
    assert!(linked.contains(".func") && linked.contains("mathlib6horner"));
}

#[test]
fn unknown_package_is_a_clear_error() {
    let out = xtask(&["build-ptx", "-p", "no-such-crate", "--no-verify"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no package named `no-such-crate`"),
        "{stderr}"
    );
    assert!(stderr.contains("vecadd-kernels"), "{stderr}");
}

#[test]
fn a_debug_build_links_and_assembles() {
    // The dev profile keeps overflow checks and debug assertions; its PTX
    // must still link (no DWARF sections) and pass ptxas.
    let out_dir = tempfile::tempdir().unwrap();
    let out = xtask(&[
        "build-ptx",
        "--debug",
        "-p",
        "vecadd-kernels",
        "--out-dir",
        out_dir.path().to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "build-ptx --debug failed:\n{stderr}");
    assert!(stderr.contains("(debug,"), "{stderr}");
    let ptx = out_dir.path().join("vecadd-kernels.ptx");
    let text = std::fs::read_to_string(&ptx).unwrap();
    assert!(text.contains(".entry vecadd("), "{text}");
    assemble(&ptx, "sm_90");
}

#[test]
fn an_architecture_rustc_cannot_target_is_refused_before_building() {
    let out = xtask(&["build-ptx", "--arch", "sm_61", "--no-verify"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("sm_61") && stderr.contains("sm_70 or newer"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("Compiling"),
        "built before refusing:\n{stderr}"
    );
}
