//! The template of a user's project (`examples/standalone`), copied outside this
//! repository with its toolkit paths pointed back here, built the three ways a user
//! would: its own `cargo xtask build-ptx`, the host crate's `build.rs` (stable cargo),
//! and the installed `cargo ptx`. Each output is assembled by ptxas; the host binary
//! passes under `--emulate`; an edit to the device library rebuilds the host crate.
//!
//! A second copy takes the toolkit as a git dependency instead of by path.
//!
//! The copies live in `$TMPDIR/gpu-build-standalone` and keep their `target/` between runs
//! (a first run compiles everything: a few minutes on two cores).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

/// The repository root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// `cargo` as a user's shell runs it: none of the variables this test's own cargo set.
fn cargo(dir: &Path) -> Command {
    let mut cmd = Command::new("cargo");
    cmd.current_dir(dir);
    for (key, _) in std::env::vars_os() {
        let k = key.to_string_lossy();
        let leaked = k.starts_with("CARGO_")
            && !k.starts_with("CARGO_HOME")
            && !k.starts_with("CARGO_NET")
            && !k.starts_with("CARGO_HTTP")
            && !k.starts_with("CARGO_REGISTR");
        if leaked
            || [
                "RUSTUP_TOOLCHAIN",
                "RUSTC",
                "RUSTDOC",
                "RUSTFLAGS",
                "CARGO",
                "OUT_DIR",
            ]
            .contains(&k.as_ref())
        {
            cmd.env_remove(&key);
        }
    }
    cmd
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Copies `from` to `to` (files only; skips `target/` and `Cargo.lock`).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" || name == "Cargo.lock" {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// The template copied to `$TMPDIR/gpu-build-standalone/{name}`, outside the repository,
/// with each toolkit dependency replaced by what `dependency(crate, dir)` returns (the
/// text inside the braces of `crate = { ... }`).
fn copy_template(name: &str, dependency: impl Fn(&str, &str) -> String) -> PathBuf {
    let ws = std::env::temp_dir().join("gpu-build-standalone").join(name);
    assert!(
        !ws.starts_with(repo()),
        "the copy must be outside the repository"
    );
    copy_tree(&repo().join("examples/standalone"), &ws);
    let manifest = ws.join("Cargo.toml");
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    for (krate, dir) in [
        ("device-std", "device-std"),
        ("host-loader", "host-loader"),
        ("gpu-build", "gpu-build"),
    ] {
        let from = format!("{krate} = {{ path = \"../../{dir}\" }}");
        let to = format!("{krate} = {{ {} }}", dependency(krate, dir));
        assert!(text.contains(&from), "the template lost `{from}`");
        text = text.replace(&from, &to);
    }
    assert!(!text.contains("\"../../"), "{text}");
    std::fs::write(&manifest, text).unwrap();
    ws
}

/// The template with absolute paths to this checkout.
fn workspace() -> PathBuf {
    copy_template("ws", |_, dir| {
        format!("path = \"{}\"", repo().join(dir).display())
    })
}

fn ptxas_accepts(ptx: &Path) {
    let ptxas = ptx_linker::ptxas::find().expect(ptx_linker::ptxas::NOT_FOUND_FIX);
    let out = Command::new(ptxas)
        .args(["-arch=sm_90", "-o", "/dev/null"])
        .arg(ptx)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ptxas rejected {}:\n{}",
        ptx.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Both kernels, the device library's non-inlined function defined (not left external),
/// ptxas's approval, and a link map that lists the two kernels.
fn check_module(ptx: &Path) {
    let text = std::fs::read_to_string(ptx).unwrap();
    for entry in [".entry transform(", ".entry clamp_ints("] {
        assert!(text.contains(entry), "{} lacks `{entry}`", ptx.display());
    }
    assert!(
        text.contains("devlib6affine"),
        "devlib::affine is missing from {}",
        ptx.display()
    );
    assert!(
        !text.contains(".extern .func"),
        "an unresolved function in {}",
        ptx.display()
    );
    ptxas_accepts(ptx);
    let map: serde_json::Value =
        serde_json::from_slice(&std::fs::read(ptx.with_extension("map.json")).unwrap()).unwrap();
    let kernels = map["kernels"]
        .as_array()
        .expect("the link map lists kernels");
    assert_eq!(kernels.len(), 2, "{map}");
}

/// `cargo +stable build -p standalone-host` in `ws`; returns the module its build script
/// wrote into the `OUT_DIR` of this build (see [`build_host_for`]).
fn build_host(ws: &Path) -> PathBuf {
    let ptx = build_host_for(ws, None).join("standalone-kernels.ptx");
    assert!(ptx.is_file(), "{} is missing", ptx.display());
    ptx
}

/// `cargo +stable build -p standalone-host` in `ws` with `GPU_BUILD_ARCH` set to `arch`
/// (unset for `None`); returns the `OUT_DIR` of this build (from cargo's
/// `build-script-executed` message, so stale `OUT_DIR`s of earlier builds in a reused
/// copy do not count).
fn build_host_for(ws: &Path, arch: Option<&str>) -> PathBuf {
    let mut cmd = cargo(ws);
    match arch {
        Some(a) => cmd.env("GPU_BUILD_ARCH", a),
        None => cmd.env_remove("GPU_BUILD_ARCH"),
    };
    let out = run(cmd.args([
        "+stable",
        "build",
        "-p",
        "standalone-host",
        "--message-format=json",
    ]));
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "build-script-executed")
        .filter(|m| {
            m["package_id"]
                .as_str()
                .is_some_and(|p| p.contains("standalone-host"))
        })
        .find_map(|m| m["out_dir"].as_str().map(PathBuf::from))
        .expect("cargo reported no build script run for standalone-host")
}

fn modified(path: &Path) -> SystemTime {
    std::fs::metadata(path).unwrap().modified().unwrap()
}

fn emulate(ws: &Path) -> String {
    let out = run(Command::new(ws.join("target/debug/standalone-host")).args([
        "--emulate",
        "--n",
        "100003",
        "--seed",
        "11",
    ]));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The host binary under `--emulate` passes both kernels.
fn assert_emulation_passes(ws: &Path) {
    let stdout = emulate(ws);
    assert!(stdout.contains("PASS transform (emulator"), "{stdout}");
    assert!(stdout.contains("PASS clamp_ints (emulator"), "{stdout}");
    assert!(!stdout.contains("FAIL"), "{stdout}");
}

/// The workspace's own `cargo xtask build-ptx` writes a checked module to `target/ptx/`.
fn build_with_own_xtask(ws: &Path) {
    let ptx = ws.join("target/ptx/standalone-kernels.ptx");
    let _ = std::fs::remove_file(&ptx);
    run(cargo(ws).args(["xtask", "build-ptx"]));
    check_module(&ptx);
}

#[test]
fn template_builds_three_ways_outside_the_repository() {
    let ws = workspace();

    // 1. The workspace's own xtask.
    build_with_own_xtask(&ws);

    // 2. The host crate's build.rs, under stable cargo; then the emulator run.
    let ptx2 = build_host(&ws);
    check_module(&ptx2);
    assert_emulation_passes(&ws);

    // An edit to the device library reruns the build script: new PTX, new binary.
    let lib = ws.join("devlib/src/lib.rs");
    let original = std::fs::read_to_string(&lib).unwrap();
    let edited = original.replace("p.scale * x + p.shift", "p.scale * x - p.shift");
    assert_ne!(
        original, edited,
        "the template's affine changed; update this test"
    );
    let before = std::fs::read_to_string(&ptx2).unwrap();
    let binary = ws.join("target/debug/standalone-host");
    let built_at = modified(&binary);
    std::fs::write(&lib, &edited).unwrap();
    let rebuilt = std::panic::catch_unwind(|| build_host(&ws));
    std::fs::write(&lib, &original).unwrap();
    let after = std::fs::read_to_string(rebuilt.expect("the rebuild after the edit failed"));
    assert_ne!(
        before,
        after.unwrap(),
        "editing devlib left the embedded PTX as it was"
    );
    assert!(
        modified(&binary) > built_at,
        "editing devlib did not relink the host"
    );
    // The original source again: the same PTX as before, and a passing run.
    assert_eq!(std::fs::read_to_string(build_host(&ws)).unwrap(), before);
    assert_emulation_passes(&ws);
    assert!(emulate(&ws).contains("embedded module: standalone-kernels (PTX)"));

    // Two architectures through GPU_BUILD_ARCH: a fatbin with each one's checked module,
    // no single-architecture PTX beside it, and the host embeds the fatbin.
    let out = build_host_for(&ws, Some("sm_80,sm_90"));
    assert!(out.join("standalone-kernels.fatbin").is_file());
    assert!(out.join("standalone-kernels.fatbin.json").is_file());
    assert!(
        !out.join("standalone-kernels.ptx").exists(),
        "a stale PTX module"
    );
    for arch in ["sm_80", "sm_90"] {
        check_module(&out.join(arch).join("standalone-kernels.ptx"));
    }
    assert_emulation_passes(&ws);
    let stdout = emulate(&ws);
    assert!(
        stdout.contains("embedded module: standalone-kernels (fatbin of sm_80, sm_90)"),
        "{stdout}"
    );
    // Back to one: the PTX again, the fatbin and the architecture folders' modules gone.
    let ptx = build_host(&ws);
    assert!(!ptx
        .with_file_name("standalone-kernels.fatbin.json")
        .exists());
    for arch in ["sm_80", "sm_90"] {
        let stale = ptx.with_file_name(arch).join("standalone-kernels.ptx");
        assert!(!stale.exists(), "{} was left behind", stale.display());
    }
    assert_eq!(std::fs::read_to_string(ptx).unwrap(), before);

    // 3. The installed command, with nothing of the toolkit's build side in the workspace's
    // own use.
    let root = std::env::temp_dir().join("gpu-build-standalone/install");
    run(cargo(&ws)
        .args(["install", "--quiet", "--debug", "--force", "--path"])
        .arg(repo().join("gpu-build"))
        .arg("--root")
        .arg(&root)
        .env("CARGO_TARGET_DIR", root.join("target")));
    let path = std::env::join_paths(
        std::iter::once(root.join("bin"))
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let out3 = ws.join("target/ptx-installed");
    let _ = std::fs::remove_dir_all(&out3);
    run(cargo(&ws)
        .env("PATH", path)
        .args(["ptx", "build-ptx", "--out-dir"])
        .arg(&out3));
    check_module(&out3.join("standalone-kernels.ptx"));
}

/// The template with the toolkit as a git dependency, as most users will take it: this
/// repository's committed `HEAD` through a `file://` URL, pinned by `rev` (so the test
/// builds what is committed, not uncommitted edits). Cargo checks the toolkit out into
/// `CARGO_HOME`, so nothing may assume the toolkit's own workspace around the crates:
/// the build script and the workspace's xtask must find device-std, build the kernels
/// with nightly, link, validate and embed them from there.
#[test]
fn template_builds_with_the_toolkit_as_a_git_dependency() {
    let head = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(repo())
        .output()
        .expect("git is needed to take the toolkit as a git dependency");
    assert!(
        head.status.success(),
        "`git rev-parse HEAD` failed in {}: this test needs a git checkout of the toolkit",
        repo().display()
    );
    let rev = String::from_utf8(head.stdout).unwrap().trim().to_string();
    let url = format!("file://{}", repo().display());
    let ws = copy_template("git-ws", |_, _| format!("git = \"{url}\", rev = \"{rev}\""));

    check_module(&build_host(&ws));
    assert_emulation_passes(&ws);
    build_with_own_xtask(&ws);

    // The toolkit's sources really came from cargo's git checkout, not this tree.
    let metadata = run(cargo(&ws).args(["metadata", "--format-version", "1"]));
    let metadata: serde_json::Value = serde_json::from_slice(&metadata.stdout).unwrap();
    let device_std = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "device-std")
        .expect("device-std is a dependency of the template");
    let manifest = device_std["manifest_path"].as_str().unwrap();
    assert!(
        !Path::new(manifest).starts_with(repo()),
        "device-std came from {manifest}, inside the repository"
    );
    assert_eq!(
        device_std["source"]
            .as_str()
            .map(|s| s.starts_with("git+file://")),
        Some(true),
        "{device_std}"
    );
}
