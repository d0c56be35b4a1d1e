//! The mistakes a new user makes first, each in a small workspace of its own outside this
//! repository: the build stops with a message that names the crate (or file) and the fix.
//! The cases that need the device build share one device target directory, so `core` is
//! compiled once.

use std::path::{Path, PathBuf};

use gpu_build::{BuildPtx, ErrorKind, Verify};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn scratch() -> PathBuf {
    std::env::temp_dir().join("gpu-build-errors")
}

/// Writes a workspace named `case` from `(relative path, contents)` pairs; `@DEVICE_STD@`
/// in a manifest becomes the path of this repository's device-std.
fn workspace(case: &str, files: &[(&str, &str)]) -> PathBuf {
    let root = scratch().join(case);
    let _ = std::fs::remove_dir_all(&root);
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let text = text.replace(
            "@DEVICE_STD@",
            &repo().join("device-std").display().to_string(),
        );
        std::fs::write(path, text).unwrap();
    }
    root
}

const WORKSPACE: &str = "[workspace]\nresolver = \"2\"\nmembers = [\"k\"]\n";

fn kernel_manifest(gpu: &str, extra_deps: &str) -> String {
    format!(
        "[package]\nname = \"k\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [package.metadata.gpu]\n{gpu}\n\n[dependencies]\n\
         device-std = {{ path = \"@DEVICE_STD@\" }}\n{extra_deps}"
    )
}

const KERNEL: &str = "#![no_std]\n#![cfg_attr(target_arch = \"nvptx64\", feature(abi_ptx))]\n\
    use device_std::{kernel, thread, DisjointSlice};\n\
    #[kernel]\npub fn fill(mut out: DisjointSlice<u32>) {\n\
        let i = thread::index_1d();\n    if let Some(o) = out.get_mut(&i) { *o = 7; }\n}\n";

/// Runs the pipeline on `root` and returns its error.
fn build_error(root: &Path) -> gpu_build::Error {
    let result = BuildPtx::new()
        .manifest_path(root.join("Cargo.toml"))
        .target_dir(scratch().join("device-target"))
        .out_dir(root.join("out"))
        .verify(Verify::Never)
        .run();
    let err = result.expect_err("the build should have failed");
    assert!(
        !root.join("out/k.ptx").exists(),
        "a failed build left a module behind"
    );
    err
}

#[test]
fn a_misspelled_metadata_key_names_the_manifest_and_the_key_meant() {
    let root = workspace(
        "misspelled-key",
        &[
            ("Cargo.toml", WORKSPACE),
            ("k/Cargo.toml", &kernel_manifest("kernel = true", "")),
            ("k/src/lib.rs", KERNEL),
        ],
    );
    let err = build_error(&root);
    assert_eq!(err.kind(), ErrorKind::Config);
    let msg = err.to_string();
    assert!(msg.contains("k/Cargo.toml"), "{msg}");
    assert!(msg.contains("unknown key `kernel`"), "{msg}");
    assert!(msg.contains("did you mean `kernels`?"), "{msg}");
}

#[test]
fn a_non_boolean_metadata_value_is_refused() {
    let root = workspace(
        "string-value",
        &[
            ("Cargo.toml", WORKSPACE),
            ("k/Cargo.toml", &kernel_manifest("kernels = \"yes\"", "")),
            ("k/src/lib.rs", KERNEL),
        ],
    );
    let msg = build_error(&root).to_string();
    assert!(
        msg.contains("`[package.metadata.gpu] kernels` of `k` is `\"yes\"`"),
        "{msg}"
    );
    assert!(msg.contains("fix: write `kernels = true`"), "{msg}");
}

#[test]
fn a_kernel_crate_without_no_std_gets_the_line_to_add() {
    let root = workspace(
        "no-no-std",
        &[
            ("Cargo.toml", WORKSPACE),
            ("k/Cargo.toml", &kernel_manifest("kernels = true", "")),
            ("k/src/lib.rs", &KERNEL.replace("#![no_std]\n", "")),
        ],
    );
    let err = build_error(&root);
    assert_eq!(err.kind(), ErrorKind::Config);
    let msg = err.to_string();
    assert!(msg.contains("k/src/lib.rs"), "{msg}");
    assert!(
        msg.contains("device crate `k` is not `#![no_std]`"),
        "{msg}"
    );
    assert!(msg.contains("fix: add `#![no_std]`"), "{msg}");
}

#[test]
fn extern_crate_std_in_a_no_std_kernel_crate_says_what_is_wrong() {
    // Issue 31, point 5: `#![no_std]` is there; the message must not ask for it.
    let root = workspace(
        "extern-std",
        &[
            ("Cargo.toml", WORKSPACE),
            ("k/Cargo.toml", &kernel_manifest("kernels = true", "")),
            (
                "k/src/lib.rs",
                &KERNEL.replace("use device_std", "extern crate std;\nuse device_std"),
            ),
        ],
    );
    let err = build_error(&root);
    assert_eq!(err.kind(), ErrorKind::Config);
    let msg = err.to_string();
    assert!(msg.contains("k/src/lib.rs:3"), "{msg}");
    assert!(msg.contains("declares `extern crate std;`"), "{msg}");
    assert!(msg.contains("no `std` and no heap"), "{msg}");
    assert!(!msg.contains("add `#![no_std]`"), "{msg}");
}

#[test]
fn a_vec_in_a_kernel_crate_gets_the_no_heap_hint() {
    let root = workspace(
        "uses-vec",
        &[
            ("Cargo.toml", WORKSPACE),
            ("k/Cargo.toml", &kernel_manifest("kernels = true", "")),
            (
                "k/src/lib.rs",
                &format!("{KERNEL}pub fn scratch() -> usize {{ let v: Vec<u32> = Vec::new(); v.len() }}\n"),
            ),
        ],
    );
    let err = build_error(&root);
    assert_eq!(err.kind(), ErrorKind::Compile);
    let msg = err.to_string();
    assert!(msg.contains("device crate `k` needs `alloc`"), "{msg}");
    assert!(msg.contains("device code has no heap"), "{msg}");
    assert!(
        msg.contains("`SharedArray` or `DynamicSharedArray`"),
        "{msg}"
    );
}

#[test]
fn a_kernel_crate_without_the_abi_line_gets_the_line_to_add() {
    let root = workspace(
        "no-abi-ptx",
        &[
            ("Cargo.toml", WORKSPACE),
            ("k/Cargo.toml", &kernel_manifest("kernels = true", "")),
            (
                "k/src/lib.rs",
                &KERNEL.replace(
                    "#![cfg_attr(target_arch = \"nvptx64\", feature(abi_ptx))]\n",
                    "",
                ),
            ),
        ],
    );
    let msg = build_error(&root).to_string();
    assert!(msg.contains("kernel crate `k` does not enable"), "{msg}");
    assert!(
        msg.contains("#![cfg_attr(target_arch = \"nvptx64\", feature(abi_ptx))]"),
        "{msg}"
    );
}

#[test]
fn a_workspace_without_kernel_crates_says_how_to_mark_one() {
    let root = workspace(
        "no-kernel-crates",
        &[
            ("Cargo.toml", WORKSPACE),
            ("k/Cargo.toml", &kernel_manifest("", "")),
            ("k/src/lib.rs", KERNEL),
        ],
    );
    let msg = build_error(&root).to_string();
    assert!(msg.contains("no kernel crates in the workspace"), "{msg}");
    assert!(msg.contains("kernels = true"), "{msg}");
}

#[test]
fn a_missing_toolchain_is_named_with_the_install_command() {
    let root = workspace(
        "no-toolchain",
        &[
            ("Cargo.toml", WORKSPACE),
            ("k/Cargo.toml", &kernel_manifest("kernels = true", "")),
            ("k/src/lib.rs", KERNEL),
        ],
    );
    let err = BuildPtx::new()
        .manifest_path(root.join("Cargo.toml"))
        .toolchain("no-such-toolchain-for-this-test")
        .verify(Verify::Never)
        .run()
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Toolchain);
    let msg = err.to_string();
    assert!(
        msg.contains(
            "rustup toolchain install no-such-toolchain-for-this-test --component rust-src"
        ),
        "{msg}"
    );
}

/// The two cases below run the nightly build (sharing one target directory).
#[test]
fn device_build_failures_name_the_crate_and_the_fix() {
    // A kernel crate whose only function is not a kernel.
    let root = workspace(
        "no-kernels",
        &[
            ("Cargo.toml", WORKSPACE),
            ("k/Cargo.toml", &kernel_manifest("kernels = true", "")),
            (
                "k/src/lib.rs",
                "#![no_std]\n#![cfg_attr(target_arch = \"nvptx64\", feature(abi_ptx))]\n\
                 #[inline(never)]\npub fn helper(x: u32) -> u32 { x + 1 }\n",
            ),
        ],
    );
    let err = build_error(&root);
    assert_eq!(err.kind(), ErrorKind::Config);
    let msg = err.to_string();
    assert!(msg.contains("kernel crate `k` defines no kernels"), "{msg}");
    assert!(msg.contains("device = true"), "{msg}");

    // k → mid (no_std) → leaf (uses std): the chain and the crate to fix.
    let root = workspace(
        "std-leak",
        &[
            (
                "Cargo.toml",
                "[workspace]\nresolver = \"2\"\nmembers = [\"k\", \"mid\", \"leaf\"]\n",
            ),
            (
                "k/Cargo.toml",
                &kernel_manifest("kernels = true", "mid = { path = \"../mid\" }\n"),
            ),
            ("k/src/lib.rs", &format!("{KERNEL}pub use mid::twice;\n")),
            (
                "mid/Cargo.toml",
                "[package]\nname = \"mid\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                 [dependencies]\nleaf = { path = \"../leaf\" }\n",
            ),
            (
                "mid/src/lib.rs",
                "#![no_std]\npub fn twice(x: u32) -> u32 { leaf::len_of(x) * 2 }\n",
            ),
            (
                "leaf/Cargo.toml",
                "[package]\nname = \"leaf\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            (
                "leaf/src/lib.rs",
                "pub fn len_of(x: u32) -> u32 { std::format!(\"{x}\").len() as u32 }\n",
            ),
        ],
    );
    let err = build_error(&root);
    assert_eq!(err.kind(), ErrorKind::Compile);
    let msg = err.to_string();
    assert!(
        msg.contains("device crate `k` pulls in `std` through its dependencies: k → mid → leaf"),
        "{msg}"
    );
    assert!(msg.contains("leaf/src/lib.rs"), "{msg}");
    assert!(msg.contains("fix: add `#![no_std]`"), "{msg}");
}

#[test]
fn a_misspelled_metadata_table_is_named() {
    let root = workspace(
        "misspelled-table",
        &[
            ("Cargo.toml", WORKSPACE),
            (
                "k/Cargo.toml",
                &kernel_manifest("kernels = true", "").replace("metadata.gpu]", "metadata.gpus]"),
            ),
            ("k/src/lib.rs", KERNEL),
        ],
    );
    let msg = build_error(&root).to_string();
    assert!(msg.contains("`[package.metadata.gpus]` of `k`"), "{msg}");
    assert!(
        msg.contains("did you mean `[package.metadata.gpu]`?"),
        "{msg}"
    );
}

#[test]
fn a_package_name_with_underscores_is_pointed_to_its_dashed_name() {
    let root = workspace(
        "dashed-name",
        &[
            ("Cargo.toml", WORKSPACE),
            (
                "k/Cargo.toml",
                &kernel_manifest("kernels = true", "").replace("name = \"k\"", "name = \"my-k\""),
            ),
            ("k/src/lib.rs", KERNEL),
        ],
    );
    let err = BuildPtx::new()
        .manifest_path(root.join("Cargo.toml"))
        .package("my_k")
        .verify(Verify::Never)
        .run()
        .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("no package named `my_k`"), "{msg}");
    assert!(msg.contains("did you mean `my-k`?"), "{msg}");
}

/// Hopper-only device-std modules (`bulk`, `tma`, `cluster`) exist only when building
/// for sm_90 or newer: building for sm_80 stops in rustc, which names the gate, never
/// in ptxas.
#[test]
fn a_hopper_module_used_for_an_older_target_is_a_compile_error_naming_the_gate() {
    let kernel = "#![no_std]\n#![cfg_attr(target_arch = \"nvptx64\", feature(abi_ptx))]\n\
        use device_std::{bulk, kernel, thread, DisjointSlice};\n\
        #[kernel]\npub fn fill(mut out: DisjointSlice<u32>) {\n    bulk::commit_group();\n\
        let i = thread::index_1d();\n    if let Some(o) = out.get_mut(&i) { *o = 7; }\n}\n";
    let root = workspace(
        "hopper-on-sm80",
        &[
            ("Cargo.toml", WORKSPACE),
            ("k/Cargo.toml", &kernel_manifest("kernels = true", "")),
            ("k/src/lib.rs", kernel),
        ],
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cargo-ptx"))
        .args([
            "build-ptx",
            "--arch",
            "sm_80",
            "--no-verify",
            "--manifest-path",
        ])
        .arg(root.join("Cargo.toml"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("unresolved import `device_std::bulk`")
            && stderr.contains("found an item that was configured out")
            && stderr.contains("target_feature = \"sm_90\""),
        "{stderr}"
    );
    assert!(!stderr.contains("ptxas"), "{stderr}");
}
