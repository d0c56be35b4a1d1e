//! Where status lines go. The library never prints on its own: a front end chooses
//! [`Progress::Stderr`] (cargo-style lines) or a callback.

use std::fmt;
use std::io::IsTerminal;
use std::sync::Arc;

/// A status-line callback: `(verb, text)`.
pub type StatusFn = Arc<dyn Fn(&str, &str) + Send + Sync>;

/// How the pipeline reports its phases (`Compiling`, `Linking`, `Verifying`, `Finished`).
///
/// Compiler diagnostics of the device build always go to stderr, as cargo's do.
#[derive(Clone, Default)]
pub enum Progress {
    /// No status lines; the nightly cargo runs with `--quiet`. The default.
    #[default]
    Quiet,
    /// Cargo-style lines on stderr: a right-aligned verb, then text.
    Stderr,
    /// Each line goes to this callback as `(verb, text)`.
    Callback(StatusFn),
}

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Progress::Quiet => "Quiet",
            Progress::Stderr => "Stderr",
            Progress::Callback(_) => "Callback(..)",
        })
    }
}

impl Progress {
    /// Reports one phase.
    pub fn status(&self, verb: &str, text: &str) {
        match self {
            Progress::Quiet => {}
            Progress::Stderr => status_line(verb, text),
            Progress::Callback(f) => f(verb, text),
        }
    }

    pub(crate) fn is_quiet(&self) -> bool {
        matches!(self, Progress::Quiet)
    }
}

/// Prints `   Verb text`, the verb right-aligned to 12 columns as cargo does.
pub(crate) fn status_line(verb: &str, text: &str) {
    if std::io::stderr().is_terminal() {
        eprintln!("\x1b[1;32m{verb:>12}\x1b[0m {text}");
    } else {
        eprintln!("{verb:>12} {text}");
    }
}

/// Prints `error: message`.
pub(crate) fn error_line(message: &str) {
    if std::io::stderr().is_terminal() {
        eprintln!("\x1b[1;31merror\x1b[0m: {message}");
    } else {
        eprintln!("error: {message}");
    }
}
