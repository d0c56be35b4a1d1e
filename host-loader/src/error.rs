//! The one error type of this crate.

use std::fmt;

use cudarc::driver::DriverError;

use crate::layout::ParamLayout;

/// Everything that can go wrong while opening a device, loading a module, checking a
/// kernel signature or launching.
///
/// Messages name the module, the PTX line and the kernel where they are known, and say
/// what to change. Nothing in this crate panics on bad input; it returns one of these.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A Rust argument's layout differs from the PTX parameter's (details boxed to keep
    /// `Result<_, Error>` small on the launch path).
    #[error("{0}")]
    LayoutMismatch(Box<LayoutMismatch>),

    /// The Rust signature has a different number of parameters than the PTX `.entry`.
    #[error(
        "{}kernel `{kernel}` takes {expected} parameter{} in the PTX, the Rust signature \
         `{rust_signature}` has {found}",
        location(module, *line),
        if *expected == 1 { "" } else { "s" }
    )]
    ArgCount {
        /// Module display name (file path), when known.
        module: Option<String>,
        /// 1-based line of the `.entry` in the module (0 when unknown).
        line: u32,
        /// The kernel (`.entry`) name.
        kernel: String,
        /// Number of `.param`s in the PTX.
        expected: usize,
        /// Number of parameters in the Rust signature tuple.
        found: usize,
        /// The Rust signature tuple, e.g. `(Slice<f32>, u32)`.
        rust_signature: String,
    },

    /// The module has no `.entry` of that name.
    #[error(
        "module `{module}` has no kernel `{name}`; its kernels are: {}",
        list_or_none(available)
    )]
    NoSuchKernel {
        /// Module display name.
        module: String,
        /// The name asked for.
        name: String,
        /// Every `.entry` in the module, in file order.
        available: Vec<String>,
    },

    /// The PTX text could not be read for signatures (a `ptx-linker` diagnostic).
    #[error("cannot read kernel signatures: {0}")]
    Parse(#[from] ptx_linker::LinkError),

    /// The PTX text cannot be handed to the driver at all.
    #[error("{module}: {reason}")]
    InvalidPtx {
        /// Module display name.
        module: String,
        /// What is wrong.
        reason: String,
    },

    /// The driver refused to load the module (`cuModuleLoadData`). `jit_log` is the PTX
    /// JIT compiler's error log when the driver gave one.
    #[error(
        "loading module `{module}` (cuModuleLoadData) failed: {}{}",
        DriverMsg(source),
        jit_suffix(jit_log)
    )]
    ModuleLoad {
        /// Module display name.
        module: String,
        /// The driver's error code.
        source: DriverError,
        /// The JIT error log (`CU_JIT_ERROR_LOG_BUFFER`), empty when none.
        jit_log: String,
    },

    /// A CUDA driver call failed.
    #[error("{context}: {}", DriverMsg(source))]
    Driver {
        /// The call and its subject, e.g. "cuLaunchKernel(`vecadd`)".
        context: String,
        /// The driver's error code.
        source: DriverError,
    },

    /// The CUDA driver library could not be loaded or lacks a needed symbol.
    #[error("{detail}")]
    NoDriver {
        /// What is missing and what to install.
        detail: String,
    },

    /// A file could not be read.
    #[error("cannot read `{path}`: {source}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },

    /// The launch configuration is invalid: a zero dimension, too many threads per block,
    /// a grid larger than CUDA allows, or a stream of another context.
    #[error("invalid launch{}: {reason}", kernel_suffix(kernel))]
    InvalidLaunch {
        /// The kernel, when the check was made for one.
        kernel: Option<String>,
        /// What is wrong and the limit that applies.
        reason: String,
    },
}

/// The details of [`Error::LayoutMismatch`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{}kernel `{kernel}` parameter {param_index} (`{param_name}`): the PTX expects {} bytes \
     aligned to {} ({ptx_decl}), the Rust argument `{rust_type}` is {found}; use {}",
    location(module, *line),
    expected.size,
    expected.align,
    expected.rust_hint()
)]
pub struct LayoutMismatch {
    /// Module display name (file path), when known.
    pub module: Option<String>,
    /// 1-based line of the `.entry` in the module (0 when unknown).
    pub line: u32,
    /// The kernel (`.entry`) name.
    pub kernel: String,
    /// 0-based parameter index, as in rustc's `NAME_param_N`.
    pub param_index: usize,
    /// The PTX parameter name.
    pub param_name: String,
    /// The layout the PTX declares.
    pub expected: ParamLayout,
    /// The layout of the Rust argument type.
    pub found: ParamLayout,
    /// The PTX declaration, e.g. `.u64` or `.align 8 .b8 [16]`.
    pub ptx_decl: String,
    /// The Rust argument type, e.g. `u32` or `Slice<f32>`.
    pub rust_type: String,
}

fn location(module: &Option<String>, line: u32) -> String {
    match (module, line) {
        (Some(m), 0) => format!("{m}: "),
        (Some(m), l) => format!("{m}:{l}: "),
        (None, 0) => String::new(),
        (None, l) => format!("line {l}: "),
    }
}

fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "(none)".into()
    } else {
        names.join(", ")
    }
}

fn jit_suffix(log: &str) -> String {
    let log = log.trim();
    if log.is_empty() {
        String::new()
    } else {
        format!("\nJIT log:\n{log}")
    }
}

fn kernel_suffix(kernel: &Option<String>) -> String {
    match kernel {
        Some(k) => format!(" of `{k}`"),
        None => String::new(),
    }
}

/// Renders a driver error as `CUDA_ERROR_NAME (description)`.
///
/// Only constructed for errors the driver returned, so libcuda is loaded and
/// `cuGetErrorString` is callable.
struct DriverMsg<'a>(&'a DriverError);

impl fmt::Display for DriverMsg<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.error_string() {
            Ok(s) => write!(f, "{:?} ({})", self.0 .0, s.to_string_lossy()),
            Err(_) => write!(f, "{:?}", self.0 .0),
        }
    }
}
