//! A toolchain that has `rust-src` but is not a nightly (a stable `rustc`) is refused
//! with the reason: the device build needs a nightly (issue 31, point 8). The toolchain
//! is a fake one, linked into a private `RUSTUP_HOME` (this test binary's own process,
//! which runs only this test, so no other test sees the variable).

use std::process::Command;

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

    std::env::set_var("RUSTUP_HOME", &home);
    let err = gpu_build::toolchain::check_nightly("fake-stable").unwrap_err();
    assert_eq!(err.kind(), gpu_build::ErrorKind::Toolchain);
    let msg = err.to_string();
    assert!(
        msg.contains("is `rustc 1.85.0 (4d91de4e4 2025-02-17)`, not a nightly"),
        "{msg}"
    );
    assert!(
        msg.contains("fix: rustup toolchain install nightly --component rust-src"),
        "{msg}"
    );
    let _ = std::fs::remove_dir_all(&base);
}
