//! Device libraries from anywhere: a kernel crate whose libraries are a path dependency
//! outside its workspace (no `[package.metadata.gpu]` at all) and a git dependency
//! (`device = true`) links like one whose libraries are members. Non-inlined functions
//! are resolved by the linker; generic ones are instantiated in the kernel crate.

use std::path::{Path, PathBuf};
use std::process::Command;

use gpu_build::{BuildPtx, Verify};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn write(root: &Path, files: &[(&str, String)]) {
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

fn library(name: &str, gpu: &str, body: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "Cargo.toml",
            format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n{gpu}"),
        ),
        ("src/lib.rs", format!("#![no_std]\n{body}")),
    ]
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .output()
        .expect("running git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn path_and_git_libraries_outside_the_workspace_link_like_members() {
    let base = std::env::temp_dir().join("gpu-build-deps");
    let _ = std::fs::remove_dir_all(&base);

    // A plain crate beside the workspace, not a member, saying nothing about GPUs.
    let pathlib = base.join("pathlib");
    let files = library(
        "pathlib",
        "",
        "#[inline(never)]\npub fn triple(x: u32) -> u32 { x.wrapping_mul(3) }\n\
         #[inline(never)]\npub fn larger<T: PartialOrd>(a: T, b: T) -> T { if a > b { a } else { b } }\n",
    );
    write(&pathlib, &files);

    // A device library in a git repository.
    let gitlib = base.join("gitlib");
    let files = library(
        "gitlib",
        "\n[package.metadata.gpu]\ndevice = true\n",
        "#[inline(never)]\npub fn add_seven(x: u32) -> u32 { x.wrapping_add(7) }\n",
    );
    write(&gitlib, &files);
    git(&gitlib, &["init", "-q"]);
    git(&gitlib, &["add", "."]);
    git(&gitlib, &["commit", "-q", "-m", "gitlib"]);

    let ws = base.join("ws");
    write(
        &ws,
        &[
            (
                "Cargo.toml",
                "[workspace]\nresolver = \"2\"\nmembers = [\"k\"]\n".to_string(),
            ),
            (
                "k/Cargo.toml",
                format!(
                    "[package]\nname = \"k\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                     [package.metadata.gpu]\nkernels = true\n\n[dependencies]\n\
                     device-std = {{ path = \"{}\" }}\n\
                     pathlib = {{ path = \"{}\" }}\n\
                     gitlib = {{ git = \"file://{}\" }}\n",
                    repo().join("device-std").display(),
                    pathlib.display(),
                    gitlib.display()
                ),
            ),
            (
                "k/src/lib.rs",
                "#![no_std]\n#![cfg_attr(target_arch = \"nvptx64\", feature(abi_ptx))]\n\
                 use device_std::{kernel, thread, DisjointSlice};\n\
                 #[kernel]\npub fn mix(xs: &[u32], mut out: DisjointSlice<u32>) {\n\
                     let i = thread::index_1d();\n    let k = i.get();\n\
                     if let Some(o) = out.get_mut(&i) {\n\
                         *o = pathlib::larger(pathlib::triple(xs[k]), gitlib::add_seven(xs[k]));\n\
                     }\n}\n"
                    .to_string(),
            ),
        ],
    );

    let built = BuildPtx::new()
        .manifest_path(ws.join("Cargo.toml"))
        .target_dir(std::env::temp_dir().join("gpu-build-errors/device-target"))
        .verify(Verify::Always)
        .run()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(built.modules.len(), 1);
    let module = &built.modules[0];
    assert!(module.verified, "ptxas did not assemble the module");
    let ptx = std::fs::read_to_string(&module.ptx).unwrap();
    assert!(ptx.contains(".entry mix("), "{ptx}");
    assert!(!ptx.contains(".extern .func"), "unresolved:\n{ptx}");
    for f in ["pathlib6triple", "gitlib9add_seven"] {
        let defined = ptx
            .lines()
            .any(|l| l.contains(".func") && l.contains(f) && !l.contains(".extern"));
        assert!(defined, "`{f}` is not defined in the linked module:\n{ptx}");
    }
    // The generic `larger` is defined in the linked module, yet pathlib's own PTX has no
    // instance of it: the kernel crate instantiated it.
    assert!(
        ptx.lines()
            .any(|l| l.contains(".func") && l.contains("6larger")),
        "{ptx}"
    );
    let deps = std::env::temp_dir()
        .join("gpu-build-errors/device-target/nvptx64-nvidia-cuda/release/deps");
    let own: Vec<PathBuf> = std::fs::read_dir(&deps)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("pathlib-") && n.ends_with(".s")
        })
        .collect();
    assert!(!own.is_empty(), "no PTX of pathlib in {}", deps.display());
    for p in own {
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains("6triple"), "{}", p.display());
        assert!(
            !text.contains("6larger"),
            "{} instantiates larger",
            p.display()
        );
    }
    // The inputs the module was built from include the out-of-workspace library's source.
    assert!(
        module
            .inputs
            .iter()
            .any(|p| p.ends_with("pathlib/src/lib.rs")),
        "{:?}",
        module.inputs
    );
}
