//! A toolchain without `rust-src` is named with the command that adds it. The toolchain
//! is a fake one, linked into a private `RUSTUP_HOME` (this test's own process, so no
//! other test sees the variable, and the user's rustup is not touched).

use std::path::Path;
use std::process::Command;

#[test]
fn a_toolchain_without_rust_src_gets_the_component_command() {
    let base = std::env::temp_dir().join(format!("gpu-build-toolchain-{}", std::process::id()));
    let bin = base.join("fake/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(base.join("fake/lib")).unwrap();
    // A `rustc` that answers `--print sysroot` with a sysroot that has no rust-src.
    let rustc = bin.join("rustc");
    std::fs::write(
        &rustc,
        format!("#!/bin/sh\necho {}\n", base.join("fake").display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&rustc, std::fs::Permissions::from_mode(0o755)).unwrap();
    let home = base.join("rustup-home");
    let linked = Command::new("rustup")
        .env("RUSTUP_HOME", &home)
        .args(["toolchain", "link", "fake-no-src"])
        .arg(base.join("fake"))
        .output()
        .expect("running rustup");
    assert!(
        linked.status.success(),
        "{}",
        String::from_utf8_lossy(&linked.stderr)
    );

    std::env::set_var("RUSTUP_HOME", &home);
    let err = gpu_build::toolchain::check_nightly("fake-no-src").unwrap_err();
    assert_eq!(err.kind(), gpu_build::ErrorKind::Toolchain);
    let msg = err.to_string();
    assert!(msg.contains("has no `rust-src` component"), "{msg}");
    assert!(
        msg.contains("fix: rustup component add rust-src --toolchain fake-no-src"),
        "{msg}"
    );
    assert!(
        msg.contains(
            &Path::new("lib/rustlib/src/rust/library/core/Cargo.toml")
                .display()
                .to_string()
        ),
        "{msg}"
    );
    let _ = std::fs::remove_dir_all(&base);
}

/// A toolchain that has `rust-src` but is not a nightly (a stable `rustc`) is refused
/// with the reason: the device build needs a nightly (issue 31, point 8).
#[test]
fn a_stable_toolchain_is_refused_as_not_a_nightly() {
    let base = std::env::temp_dir().join(format!("gpu-build-stable-{}", std::process::id()));
    let sysroot = base.join("fake");
    let bin = sysroot.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(sysroot.join("lib")).unwrap();
    let core = sysroot.join("lib/rustlib/src/rust/library/core");
    std::fs::create_dir_all(&core).unwrap();
    std::fs::write(core.join("Cargo.toml"), "[package]\nname = \"core\"\n").unwrap();
    let rustc = bin.join("rustc");
    std::fs::write(
        &rustc,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'rustc 1.85.0 (4d91de4e4 2025-02-17)'; else echo {}; fi\n",
            sysroot.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&rustc, std::fs::Permissions::from_mode(0o755)).unwrap();
    let home = base.join("rustup-home");
    let linked = Command::new("rustup")
        .env("RUSTUP_HOME", &home)
        .args(["toolchain", "link", "fake-stable"])
        .arg(&sysroot)
        .output()
        .expect("running rustup");
    assert!(
        linked.status.success(),
        "{}",
        String::from_utf8_lossy(&linked.stderr)
    );
    // This test binary's own process: no other test sees the variable.
    let out = Command::new(std::env::current_exe().unwrap())
        .env("RUSTUP_HOME", &home)
        .env("GPU_BUILD_CHECK_TOOLCHAIN", "fake-stable")
        .args(["--exact", "check_toolchain_from_env", "--nocapture"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("is `rustc 1.85.0 (4d91de4e4 2025-02-17)`, not a nightly"),
        "{text}"
    );
    assert!(
        text.contains("fix: rustup toolchain install nightly --component rust-src"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&base);
}

/// Helper for the test above: checks the toolchain `GPU_BUILD_CHECK_TOOLCHAIN` names
/// (when set) and prints the error.
#[test]
fn check_toolchain_from_env() {
    if let Ok(name) = std::env::var("GPU_BUILD_CHECK_TOOLCHAIN") {
        match gpu_build::toolchain::check_nightly(&name) {
            Ok(()) => println!("accepted"),
            Err(e) => println!("{e}"),
        }
    }
}
