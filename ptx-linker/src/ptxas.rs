//! Where the toolkit finds NVIDIA's `ptxas`, the ground truth for PTX validity.
//!
//! One lookup order serves the `ptx-linker --verify` flag, the build driver
//! (`gpu-build`) and every test in this repository:
//!
//! 1. `$PTXAS`, when set (used as given, even if it does not exist, so a wrong
//!    setting is reported, not silently replaced);
//! 2. the newest copy that `cargo xtask setup` (or `cargo ptx setup`) unpacked from the
//!    `nvidia-cuda-nvcc` wheel into [`cache_dir`];
//! 3. `ptxas` on `PATH` (a CUDA toolkit install).
//!
//! `nvlink`, the ground truth for symbol resolution across modules (the
//! differential tests compare the linker against it), is found the same
//! way by [`find_nvlink`]: `$NVLINK`, else beside that `ptxas`, else `PATH`.

use std::path::{Path, PathBuf};

/// The message a caller shows when [`find`] returns `None`, with the default cache
/// directory; [`not_found_fix`] names the one this process actually searched.
pub const NOT_FOUND_FIX: &str = "ptxas not found: $PTXAS is unset, nothing is installed \
    under ~/.cache/gpu-toolkit, and no ptxas is on PATH.\n  fix: cargo xtask setup   (or \
    `cargo ptx setup`; or set PTXAS=/path/to/ptxas, e.g. from a CUDA toolkit)";

/// [`NOT_FOUND_FIX`] naming the directory [`cache_dir`] gives in this environment
/// (`$XDG_CACHE_HOME/gpu-toolkit` when that is set), or saying that neither
/// `XDG_CACHE_HOME` nor `HOME` is set.
pub fn not_found_fix() -> String {
    not_found_fix_in(cache_dir().as_deref())
}

fn not_found_fix_in(cache: Option<&Path>) -> String {
    let where_ = match cache {
        Some(dir) => format!("nothing is installed under {}", dir.display()),
        None => "neither XDG_CACHE_HOME nor HOME is set (no cache directory)".to_string(),
    };
    format!(
        "ptxas not found: $PTXAS is unset, {where_}, and no ptxas is on PATH.\n  fix: cargo \
         xtask setup   (or `cargo ptx setup`; or set PTXAS=/path/to/ptxas, e.g. from a CUDA \
         toolkit)"
    )
}

/// `$XDG_CACHE_HOME/gpu-toolkit`, else `~/.cache/gpu-toolkit`: where setup unpacks
/// `nvidia-cuda-nvcc-VERSION/nvidia/cu13/bin/ptxas`. `None` when neither variable is set.
pub fn cache_dir() -> Option<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| Some(PathBuf::from(std::env::var_os("HOME")?).join(".cache")))?;
    Some(cache.join("gpu-toolkit"))
}

/// The newest `ptxas` unpacked under [`cache_dir`], if any (versions compare as
/// directory names, `nvidia-cuda-nvcc-13.5.37` after `nvidia-cuda-nvcc-13.0.88`).
pub fn cached() -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(cache_dir()?)
        .ok()?
        .filter_map(|e| Some(e.ok()?.path().join("nvidia/cu13/bin/ptxas")))
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    found.pop()
}

/// The `ptxas` to run: `$PTXAS`, else [`cached`], else `ptxas` on `PATH`; `None` when
/// there is none (show [`not_found_fix`]).
pub fn find() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PTXAS") {
        return Some(PathBuf::from(p));
    }
    cached().or_else(|| {
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|d| d.join("ptxas"))
            .find(|p| p.is_file())
    })
}

/// The message a caller shows when [`find_nvlink`] returns `None`.
pub const NVLINK_NOT_FOUND_FIX: &str = "nvlink not found: $NVLINK is unset, there is no \
    nvlink beside ptxas, and no nvlink is on PATH.\n  fix: cargo xtask setup   (the \
    nvidia-cuda-nvcc wheel ships nvlink beside ptxas; `chmod +x` it if it is not \
    executable), or set NVLINK=/path/to/nvlink";

/// The `nvlink` to run: `$NVLINK` (used as given), else the `nvlink` beside the
/// `ptxas` that [`find`] returns, else `nvlink` on `PATH`; `None` when there is
/// none (show [`NVLINK_NOT_FOUND_FIX`]).
pub fn find_nvlink() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("NVLINK") {
        return Some(PathBuf::from(p));
    }
    find()
        .and_then(|ptxas| Some(ptxas.parent()?.join("nvlink")))
        .filter(|p| p.is_file())
        .or_else(|| {
            std::env::split_paths(&std::env::var_os("PATH")?)
                .map(|d| d.join("nvlink"))
                .find(|p| p.is_file())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_message_names_the_searched_directory() {
        let m = not_found_fix_in(Some(Path::new("/x/cache/gpu-toolkit")));
        assert!(
            m.contains("nothing is installed under /x/cache/gpu-toolkit"),
            "{m}"
        );
        assert!(m.contains("fix: cargo xtask setup"), "{m}");
        let m = not_found_fix_in(None);
        assert!(m.contains("neither XDG_CACHE_HOME nor HOME is set"), "{m}");
    }
}
