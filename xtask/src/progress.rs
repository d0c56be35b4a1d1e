//! Cargo-style status lines on stderr: a right-aligned green verb, then text.

use std::io::IsTerminal;

/// Prints `   Verb text`, the verb right-aligned to 12 columns as cargo does.
pub fn status(verb: &str, text: &str) {
    if std::io::stderr().is_terminal() {
        eprintln!("\x1b[1;32m{verb:>12}\x1b[0m {text}");
    } else {
        eprintln!("{verb:>12} {text}");
    }
}

/// Prints `error: message`.
pub fn error(message: &str) {
    if std::io::stderr().is_terminal() {
        eprintln!("\x1b[1;31merror\x1b[0m: {message}");
    } else {
        eprintln!("error: {message}");
    }
}
