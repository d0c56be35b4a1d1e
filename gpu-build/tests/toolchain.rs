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
