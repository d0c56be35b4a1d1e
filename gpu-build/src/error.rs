//! The one error type of the build library: a kind to match on and a message that names
//! the crate, file or symbol and ends with the fix.

/// What failed, for callers that react differently (a build script may tell a missing
/// toolchain apart from a compile error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// nightly, its `rust-src`, `rustup`, `ptxas` or `pip` is missing or failed.
    Toolchain,
    /// The workspace or a manifest is not set up as the toolkit needs
    /// (`[package.metadata.gpu]`, `#![no_std]`, the `abi_ptx` line, crate selection).
    Config,
    /// The nightly `cargo build` of the device crates failed.
    Compile,
    /// `ptx-linker` refused the crates' PTX.
    Link,
    /// `ptxas` refused a linked module.
    Verify,
    /// Reading or writing a file failed.
    Io,
}

/// An error of the build pipeline. Its message is complete: it names what failed and,
/// where there is one, the fix.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
        }
    }

    pub(crate) fn config(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Config, message)
    }

    pub(crate) fn toolchain(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Toolchain, message)
    }

    pub(crate) fn io(what: impl std::fmt::Display, err: std::io::Error) -> Self {
        Self::new(ErrorKind::Io, format!("{what}: {err}"))
    }

    /// What failed.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
