//! The `ptx-linker` binary: exit codes, outputs, no partial files.

use std::path::PathBuf;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_ptx-linker");
const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ptx-linker-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn success_writes_ptx_and_map() {
    let d = scratch("ok");
    let out = d.join("k.ptx");
    let map = d.join("k.map.json");
    let st = Command::new(BIN)
        .args([
            "-o",
            out.to_str().unwrap(),
            "--map",
            map.to_str().unwrap(),
            "--gc",
        ])
        .arg(format!("{DATA}/k_extern.s"))
        .args(["--lib", &format!("{DATA}/dev_extern.s")])
        .output()
        .unwrap();
    assert_eq!(
        st.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let ptx = std::fs::read_to_string(&out).unwrap();
    assert!(ptx.contains(".visible .entry kern("));
    let m: ptx_linker::LinkMap =
        serde_json::from_str(&std::fs::read_to_string(&map).unwrap()).unwrap();
    assert_eq!(m.kernels[0].name, "kern");
    assert_eq!(m.target, "sm_90");
    // Only the two outputs: no temporary files left over.
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 2);
}

#[test]
fn link_error_exits_1_and_leaves_no_output() {
    let d = scratch("err");
    let out = d.join("k.ptx");
    let st = Command::new(BIN)
        .args(["-o", out.to_str().unwrap()])
        .arg(format!("{DATA}/k_extern.s"))
        .output()
        .unwrap();
    assert_eq!(st.status.code(), Some(1));
    let err = String::from_utf8_lossy(&st.stderr);
    assert!(err.contains("error: unresolved symbol `dev_axpy`"), "{err}");
    assert!(err.contains("k_extern.s:59:22"), "{err}");
    assert!(
        err.contains("help: link the PTX file that defines `dev_axpy`"),
        "{err}"
    );
    assert!(!out.exists());
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0);
}

#[test]
fn usage_and_io_errors_exit_2() {
    let d = scratch("usage");
    let out = d.join("k.ptx");
    let st = Command::new(BIN)
        .args(["-o", out.to_str().unwrap(), "/nonexistent/x.ptx"])
        .output()
        .unwrap();
    assert_eq!(st.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&st.stderr).contains("cannot read `/nonexistent/x.ptx`"));
    let st = Command::new(BIN)
        .args(["-o", out.to_str().unwrap(), "--arch", "sm90"])
        .arg(format!("{DATA}/k.s"))
        .output()
        .unwrap();
    assert_eq!(st.status.code(), Some(2));
    let st = Command::new(BIN)
        .arg(format!("{DATA}/k.s"))
        .output()
        .unwrap();
    assert_eq!(st.status.code(), Some(2), "missing -o is a usage error");
    assert!(!out.exists());
}
