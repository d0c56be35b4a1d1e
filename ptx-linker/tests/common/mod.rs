//! Shared test helpers: finding and running ptxas.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The ptxas to validate with ([`ptx_linker::ptxas::find`]: `$PTXAS`, the one `cargo xtask
/// setup` installed, `PATH`). `None` only when `PTX_LINKER_SKIP_PTXAS=1`; otherwise a
/// missing ptxas fails the test with the fix.
pub fn ptxas() -> Option<PathBuf> {
    if let Some(p) = ptx_linker::ptxas::find() {
        return Some(p);
    }
    if std::env::var("PTX_LINKER_SKIP_PTXAS").as_deref() == Ok("1") {
        eprintln!("ptxas not found; skipping ptxas checks because PTX_LINKER_SKIP_PTXAS=1");
        return None;
    }
    panic!(
        "{}\n  (or set PTX_LINKER_SKIP_PTXAS=1 to skip these checks on purpose)",
        ptx_linker::ptxas::NOT_FOUND_FIX
    );
}

/// Runs ptxas on `ptx`; returns `Ok(())` or ptxas' stderr.
pub fn run_ptxas(
    ptxas: &Path,
    ptx: &str,
    arch: &str,
    compile_only: bool,
    tag: &str,
) -> Result<(), String> {
    run_ptxas_with(ptxas, ptx, arch, compile_only, tag, &[])
}

/// [`run_ptxas`] with extra ptxas options (`-O0` to only check validity).
pub fn run_ptxas_with(
    ptxas: &Path,
    ptx: &str,
    arch: &str,
    compile_only: bool,
    tag: &str,
    extra: &[&str],
) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("ptx-linker-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{tag}.ptx"));
    std::fs::write(&file, ptx).unwrap();
    let mut cmd = Command::new(ptxas);
    cmd.arg(format!("-arch={arch}"))
        .arg(&file)
        .arg("-o")
        .arg(dir.join(format!("{tag}.cubin")));
    if compile_only {
        cmd.arg("-c");
    }
    cmd.args(extra);
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", ptxas.display()))?;
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_file(dir.join(format!("{tag}.cubin")));
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// `max(sm, 75)` as ptxas 13 wants it, keeping an `a` suffix.
pub fn ptxas_arch(target: &str) -> String {
    let digits: String = target
        .trim_start_matches("sm_")
        .trim_start_matches("compute_")
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let sm: u32 = digits.parse().unwrap_or(75);
    if sm < 75 {
        "sm_75".to_string()
    } else {
        target.replace("compute_", "sm_")
    }
}

/// `f` over `items` on every available core, results in input order.
pub fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<R>>> =
        items.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                *results[i].lock().unwrap() = Some(r);
            });
        }
    });
    results
        .into_iter()
        .map(|m| m.into_inner().unwrap().expect("every item ran"))
        .collect()
}
