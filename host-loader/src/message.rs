//! Pieces of messages that every layer's errors share: byte and word counts, the article
//! before a number, a place in a module, a driver error code.
//!
//! The bottom layer: it uses nothing else of this crate, so any module's error type can
//! use it without reaching `error.rs`.

use std::fmt;

use cudarc::driver::DriverError;

/// `n` bytes, singular for 1: "1 byte", "16 bytes".
pub(crate) fn bytes(n: u64) -> String {
    count(n, "byte")
}

/// `n` of `unit`, singular for 1: "1 word", "3 words".
pub(crate) fn count(n: u64, unit: &str) -> String {
    if n == 1 {
        format!("1 {unit}")
    } else {
        format!("{n} {unit}s")
    }
}

/// "a " or "an " before the number `n` spelled in digits ("an 8-byte", "a 16-byte").
pub(crate) fn article(n: u32) -> &'static str {
    let digits = n.to_string();
    if digits.starts_with('8') || digits == "11" || digits == "18" {
        "an "
    } else {
        "a "
    }
}

/// Where a message is about: "`module`:`line`: ", "`module`: ", "line `line`: " or
/// nothing (a line of 0 is unknown).
pub(crate) fn location(module: &Option<String>, line: u32) -> String {
    match (module, line) {
        (Some(m), 0) => format!("{m}: "),
        (Some(m), l) => format!("{m}:{l}: "),
        (None, 0) => String::new(),
        (None, l) => format!("line {l}: "),
    }
}

/// Renders a driver error as `CUDA_ERROR_NAME (description)`.
///
/// Only constructed for errors the driver returned, so libcuda is loaded and
/// `cuGetErrorString` is callable.
pub(crate) struct DriverMsg<'a>(pub(crate) &'a DriverError);

impl fmt::Display for DriverMsg<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A code made up without a driver (tests, a driver-less machine) is shown bare:
        // `cuGetErrorString` would panic in cudarc's loader.
        // SAFETY: only probes `dlopen` on libcuda's candidate names.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return write!(f, "{:?}", self.0 .0);
        }
        match self.0.error_string() {
            Ok(s) => write!(f, "{:?} ({})", self.0 .0, s.to_string_lossy()),
            Err(_) => write!(f, "{:?}", self.0 .0),
        }
    }
}
