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

/// `(kind, sm)` of every entry of a fatbin: kind 1 PTX, 2 ELF (cubin); read from the
/// container and entry headers, independently of the tool that wrote them.
fn fatbin_entries(bytes: &[u8]) -> Vec<(u16, u32)> {
    let u16_at = |o: usize| u16::from_le_bytes(bytes[o..o + 2].try_into().unwrap());
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap());
    assert_eq!(u32_at(0), 0xBA55_ED50, "fatbin magic");
    let header = u16_at(6) as usize;
    let end = header + u64_at(8) as usize;
    assert_eq!(end, bytes.len(), "one container, spanning the file");
    let mut at = header;
    let mut entries = Vec::new();
    while at < end {
        let (kind, entry_header, payload) = (u16_at(at), u32_at(at + 4), u64_at(at + 8));
        entries.push((kind, u32_at(at + 28)));
        at += entry_header as usize + payload as usize;
    }
    assert_eq!(at, end, "the entries tile the container");
    entries
}

#[test]
fn several_architectures_pack_into_one_fatbin() {
    let root = tempfile::tempdir().unwrap();
    // A comma in the output path: fatbinary splits its image arguments on commas.
    let dir = root.path().join("out,dir");
    let out = dir.to_str().unwrap();
    let o = xtask(&[
        "build-ptx",
        "-p",
        "vecadd-kernels",
        "-p",
        "mma_gemm-kernels",
        "--arch",
        "sm_80,sm_90a",
        "--out-dir",
        out,
    ]);
    assert!(
        o.status.success(),
        "multi-architecture build failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for package in ["vecadd-kernels", "mma_gemm-kernels"] {
        let manifest: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("{package}.fatbin.json"))).unwrap(),
        )
        .unwrap();
        let images = manifest["images"].as_array().unwrap();
        let archs: Vec<&str> = images.iter().map(|i| i["arch"].as_str().unwrap()).collect();
        assert_eq!(archs, ["sm_80", "sm_90a"], "{package}");
        for image in images {
            for key in ["ptx", "map", "cubin"] {
                let p = dir.join(image[key].as_str().unwrap());
                assert!(p.is_file(), "{package}: {} missing", p.display());
            }
            // The loader's fingerprint of the PTX and map equals the one packed.
            let read = |key: &str| std::fs::read(dir.join(image[key].as_str().unwrap())).unwrap();
            assert_eq!(
                host_loader::fatbin::content_hash(&[&read("ptx"), &read("map")]),
                image["hash"].as_str().unwrap(),
                "{package}"
            );
        }
        let fatbin = std::fs::read(dir.join(format!("{package}.fatbin"))).unwrap();
        let mut entries = fatbin_entries(&fatbin);
        entries.sort();
        assert_eq!(entries, [(1, 80), (1, 90), (2, 80), (2, 90)], "{package}");
    }
    // The wgmma kernels exist for sm_90a only, and the manifest says so.
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("mma_gemm-kernels.fatbin.json")).unwrap(),
    )
    .unwrap();
    let has = |i: usize, k: &str| {
        manifest["images"][i]["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == k)
    };
    assert!(has(0, "gemm_mma") && has(1, "gemm_mma"));
    assert!(!has(0, "gemm_wgmma") && has(1, "gemm_wgmma"));
    // The loader reads the same manifest and picks the image a device runs.
    let m = host_loader::fatbin::read_manifest(&dir.join("mma_gemm-kernels.fatbin.json")).unwrap();
    assert_eq!(m.archs_with("gemm_wgmma"), ["sm_90a"]);
    let pick = |sm| host_loader::fatbin::choose_image(&m, sm).map(|i| i.arch.clone());
    assert_eq!(pick(90).unwrap(), "sm_90a");
    assert_eq!(pick(86).unwrap(), "sm_80");
    assert!(pick(75).is_err());
    // One layout replaces the other's outputs of the same crate: no stale module stays.
    let single = xtask(&["build-ptx", "-p", "vecadd-kernels", "--out-dir", out]);
    assert!(
        single.status.success(),
        "{}",
        String::from_utf8_lossy(&single.stderr)
    );
    assert!(dir.join("vecadd-kernels.ptx").is_file());
    assert!(!dir.join("vecadd-kernels.fatbin").exists());
    assert!(!dir.join("vecadd-kernels.fatbin.json").exists());
    assert!(
        dir.join("mma_gemm-kernels.fatbin.json").is_file(),
        "another crate's is kept"
    );
    let multi = xtask(&[
        "build-ptx",
        "-p",
        "vecadd-kernels",
        "--arch",
        "sm_80,sm_90a",
        "--out-dir",
        out,
    ]);
    assert!(
        multi.status.success(),
        "{}",
        String::from_utf8_lossy(&multi.stderr)
    );
    assert!(dir.join("vecadd-kernels.fatbin.json").is_file());
    assert!(!dir.join("vecadd-kernels.ptx").exists());
    assert!(!dir.join("vecadd-kernels.map.json").exists());
}

#[test]
fn a_repeated_architecture_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let o = xtask(&[
        "build-ptx",
        "-p",
        "vecadd-kernels",
        "--arch",
        "sm_80,sm_80",
        "--out-dir",
        dir.path().to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--arch lists sm_80 twice"), "{err}");
    // Two cubins for one GPU: refused before anything is built.
    let o = xtask(&[
        "build-ptx",
        "-p",
        "vecadd-kernels",
        "--arch",
        "sm_90,sm_90a",
        "--out-dir",
        dir.path().to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("two cubins for the same GPU (sm_90)"), "{err}");
    assert!(
        !err.contains("Compiling"),
        "refused after building started: {err}"
    );
}
