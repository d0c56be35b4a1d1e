//! The one error type of this crate, [`Error`], which wraps the error types of the modules
//! below it.
//!
//! Those sit in the modules that make them, and none of those modules uses this one:
//! [`LayoutMismatch`] in [`crate::layout`], [`AbiRecordProblem`] in [`crate::abi_record`],
//! [`AbiMismatch`] and the record check's refusal in `record_check`, [`GraphError`] in
//! `graph::error`, the shared pieces of messages in `message`. Every other module returns
//! this [`Error`].

use cudarc::driver::DriverError;

use crate::abi_record::AbiRecordProblem;
use crate::graph::error::GraphError;
use crate::layout::LayoutMismatch;
use crate::message::{bytes, location, DriverMsg};
use crate::record_check::{AbiMismatch, RecordRefusal};

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

    /// The kernel's ABI record (emitted by `#[kernel]`) disagrees with the Rust argument
    /// types: a different kind of parameter, element size or value class, or struct field
    /// layout or class (details boxed, as for [`Error::LayoutMismatch`]).
    #[error("{0}")]
    AbiMismatch(Box<AbiMismatch>),

    /// The kernel's ABI record (`__kernel_abi_<kernel>`) cannot be read, has a version
    /// this crate does not read, or contradicts the PTX it sits in: the module was not
    /// built by a matching device-std, or was edited.
    #[error("{module}: the ABI record of kernel `{kernel}` (`__kernel_abi_{kernel}`) {problem}")]
    AbiRecord {
        /// Module display name.
        module: String,
        /// The kernel.
        kernel: String,
        /// What is wrong.
        problem: AbiRecordProblem,
    },

    /// `cuFuncGetParamInfo` (CUDA 12.4+) reports a parameter offset or size that differs
    /// from the layout the handle was checked against: the module the driver loaded is not
    /// the one the signatures describe (e.g. a cubin and a link map of another build).
    #[error(
        "kernel `{kernel}` parameter {param_index}: the loaded module has it at byte offset \
         {driver_offset} with {} (cuFuncGetParamInfo), the signature the handle was checked \
         against has offset {expected_offset} with {}",
        bytes(*driver_size as u64),
        bytes(*expected_size as u64)
    )]
    ParamInfoMismatch {
        /// The kernel.
        kernel: String,
        /// 0-based parameter index.
        param_index: usize,
        /// Offset in bytes the checked layouts give.
        expected_offset: usize,
        /// Size in bytes the checked layouts give.
        expected_size: usize,
        /// Offset in bytes the driver reports.
        driver_offset: usize,
        /// Size in bytes the driver reports.
        driver_size: usize,
    },

    /// The loaded kernel has a different number of parameters than its signature
    /// (`cuFuncGetParamInfo` answered for an index past the end, or failed before it).
    #[error(
        "kernel `{kernel}`: the loaded module has {driver} parameters (cuFuncGetParamInfo), \
         the signature the handle was checked against has {expected}"
    )]
    ParamCountMismatch {
        /// The kernel.
        kernel: String,
        /// Parameters in the checked signature.
        expected: usize,
        /// Parameters the driver reports.
        driver: usize,
    },

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

    /// A module loaded from a multi-architecture fatbin ([`Module::from_fatbin`]) has
    /// no kernel `name` in the image this device runs; other architectures' images do.
    ///
    /// [`Module::from_fatbin`]: crate::Module::from_fatbin
    #[error(
        "kernel `{name}` of `{module}` is built only for {}; this device runs the \
         `{device_arch}` image, which lacks it; fix: add this device's architecture to \
         the kernel crate's build (`--arch`) where the kernel compiles for it, or choose \
         another kernel on this device",
        built_for.join(", ")
    )]
    KernelNotForDevice {
        /// The fatbin's display name.
        module: String,
        /// The kernel asked for.
        name: String,
        /// The architecture of the image the device runs (`sm_80`).
        device_arch: String,
        /// The architectures whose images have the kernel.
        built_for: Vec<String>,
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

    /// A module variable (`Module::constant`, `Module::global`) is missing or is not
    /// of the Rust type asked for.
    #[error("{module}: module variable `{name}` {problem}")]
    ModuleVar {
        /// Module display name.
        module: String,
        /// The variable.
        name: String,
        /// What is wrong, with the fix.
        problem: String,
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

    /// Capturing, instantiating, launching or updating a CUDA graph failed
    /// ([`crate::graph`]).
    #[error("{0}")]
    Graph(#[from] GraphError),

    /// The launch's block has more threads than the kernel can run with: its
    /// `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`, which the driver sets from the entry's
    /// `.maxntid` (device-std's `#[kernel(max_threads = N)]`, CUDA's `__launch_bounds__`;
    /// PTX ISA 9.0 §11.4.2; every target) or lowers below 1024 when the kernel uses many
    /// registers. Found before the driver sees the launch (which would fail with
    /// `CUDA_ERROR_INVALID_VALUE`); a block beyond the device's own limits is
    /// [`Error::InvalidLaunch`] instead.
    #[error(
        "launch of `{kernel}` refused: block {block:?} has {threads} threads, more than the \
         kernel's bound of {max_threads} threads per block (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: \
         `.maxntid` from `#[kernel(max_threads = ...)]`, or its register use); launch with \
         smaller blocks"
    )]
    ExceedsMaxThreads {
        /// The kernel.
        kernel: String,
        /// The launch's block, in threads along x, y, z.
        block: (u32, u32, u32),
        /// Threads in that block (`x * y * z`, saturating).
        threads: u64,
        /// The kernel's bound, in threads per block.
        max_threads: u32,
    },

    /// The launch configuration is invalid: a zero dimension, too many threads per block,
    /// a grid larger than the device allows, more dynamic shared memory than the device
    /// allows next to the kernel's static shared memory, or a stream of another context.
    #[error("invalid launch{}: {reason}", kernel_suffix(kernel))]
    InvalidLaunch {
        /// The kernel, when the check was made for one.
        kernel: Option<String>,
        /// What is wrong and the limit that applies.
        reason: String,
    },
}

impl From<RecordRefusal> for Error {
    /// [`Error::AbiRecord`] for a stale record, [`Error::AbiMismatch`] for a Rust type the
    /// record refuses.
    fn from(refusal: RecordRefusal) -> Self {
        match refusal {
            RecordRefusal::Stale {
                module,
                kernel,
                problem,
            } => Error::AbiRecord {
                module,
                kernel,
                problem,
            },
            RecordRefusal::Mismatch(m) => Error::AbiMismatch(m),
        }
    }
}

impl Error {
    /// Whether the error says the kernel asked for is not in the loaded module:
    /// [`Error::NoSuchKernel`], or [`Error::KernelNotForDevice`] (a fatbin whose other
    /// architectures have it). For code that treats a kernel as optional.
    pub fn is_missing_kernel(&self) -> bool {
        matches!(
            self,
            Error::NoSuchKernel { .. } | Error::KernelNotForDevice { .. }
        )
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
