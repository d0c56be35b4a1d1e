//! The one error type of this crate.

use std::fmt;

use cudarc::driver::DriverError;

use crate::abi_record::{AbiField, AbiKind, AbiRecordProblem};
use crate::graph::error::GraphError;
use crate::layout::LayoutMismatch;
use crate::message::{article, bytes, location, DriverMsg};
use device_std::ValueClass;

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

/// The details of [`Error::AbiMismatch`]: one parameter whose Rust type the kernel's ABI
/// record refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbiMismatch {
    /// Module display name (file path), when known.
    pub module: Option<String>,
    /// 1-based line of the `.entry` in the module (0 when unknown).
    pub line: u32,
    /// The kernel (`.entry`) name.
    pub kernel: String,
    /// 0-based parameter index.
    pub param_index: usize,
    /// The PTX parameter name.
    pub param_name: String,
    /// The Rust argument type, e.g. `Slice<f64>` or `Struct<Affine>`.
    pub rust_type: String,
    /// What differs.
    pub detail: AbiMismatchDetail,
}

/// What differs between a kernel's ABI record and a Rust argument type.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AbiMismatchDetail {
    /// A different kind of parameter, e.g. `Slice<T>` for a `DisjointSlice<T>`.
    Kind {
        /// What the kernel takes.
        device: AbiKind,
        /// What the Rust type stands for.
        host: AbiKind,
    },
    /// A pointer's or slice's element type has a different size.
    ElemSize {
        /// `size_of` of the device element type, in bytes.
        device: u32,
        /// `size_of` of the Rust element type, in bytes.
        host: u32,
    },
    /// The structs have a different number of fields.
    FieldCount {
        /// Fields of the device struct.
        device: usize,
        /// Fields of the Rust struct.
        host: usize,
    },
    /// A struct field sits at a different offset or has a different size.
    Field {
        /// 0-based field index, in declaration order.
        index: usize,
        /// The Rust field's name.
        host_name: &'static str,
        /// The device field.
        device: AbiField,
        /// The Rust field.
        host: AbiField,
    },
    /// A scalar, or a pointer's or slice's element type, has the same size but another
    /// value class (e.g. `u32` for `f32`, `u32` for `i32`).
    ElemClass {
        /// What the parameter is (both sides agree).
        kind: AbiKind,
        /// Size in bytes of the scalar or element type (both sides agree).
        size: u32,
        /// The device class.
        device: ValueClass,
        /// The Rust class.
        host: ValueClass,
    },
    /// A tensor map of another rank or box: the extents, innermost first.
    TensorBox {
        /// The kernel's box (`TensorMap<T, RANK, B0, ...>`).
        device: Vec<u32>,
        /// The Rust argument's box.
        host: Vec<u32>,
    },
    /// A texture or surface object of another dimension count.
    TextureDims {
        /// The kernel's `D`.
        device: u32,
        /// The Rust argument's `D`.
        host: u32,
    },
    /// A tensor map with another shared-memory swizzle, in bytes (0: none).
    TensorSwizzle {
        /// The kernel's `SWIZZLE`.
        device: u32,
        /// The Rust argument's `SWIZZLE`.
        host: u32,
    },
    /// A struct field has the same offset and size but another value class (two
    /// equal-size fields of different types swapped, or `f32` for `i32`).
    FieldClass {
        /// 0-based field index, in declaration order.
        index: usize,
        /// The Rust field's name.
        host_name: &'static str,
        /// The device field.
        device: AbiField,
        /// The Rust field.
        host: AbiField,
    },
}

impl fmt::Display for AbiMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}kernel `{}` parameter {} (`{}`): ",
            location(&self.module, self.line),
            self.kernel,
            self.param_index,
            self.param_name
        )?;
        let ty = &self.rust_type;
        match &self.detail {
            AbiMismatchDetail::Kind { device, host } => write!(
                f,
                "the kernel takes {device}, the Rust argument `{ty}` is {host}; use {}",
                device.host_form()
            ),
            AbiMismatchDetail::TensorBox { device, host } => write!(
                f,
                "the kernel's tensor map copies boxes of {device:?} elements (rank {}), the \
                 Rust argument `{ty}` boxes of {host:?} (rank {}); encode the map with the \
                 kernel's rank and box",
                device.len(),
                host.len()
            ),
            AbiMismatchDetail::TextureDims { device, host } => write!(
                f,
                "the kernel's object has {device} dimensions, the Rust argument `{ty}` has \
                 {host}; make it over a {device}D array"
            ),
            AbiMismatchDetail::TensorSwizzle { device, host } => write!(
                f,
                "the kernel's tensor map swizzles shared memory by {device} bytes (0: none), \
                 the Rust argument `{ty}` by {host}; a copy with another swizzle scrambles \
                 the tile: encode the map with SWIZZLE = {device}"
            ),
            AbiMismatchDetail::ElemSize { device, host } => write!(
                f,
                "the kernel's element type is {}, the element type of the Rust argument \
                 `{ty}` is {}",
                bytes(u64::from(*device)),
                bytes(u64::from(*host))
            ),
            AbiMismatchDetail::FieldCount { device, host } => write!(
                f,
                "the kernel's struct has {device} fields, the Rust argument `{ty}` has {host}; \
                 the two struct definitions differ"
            ),
            AbiMismatchDetail::Field {
                index,
                host_name,
                device,
                host,
            } => write!(
                f,
                "field {index} of the kernel's struct is {} at byte offset {}, field \
                 {index} (`{host_name}`) of the Rust argument `{ty}` is {} at byte offset {}; \
                 the two struct definitions differ (fields in another order?)",
                bytes(u64::from(device.size)),
                device.offset,
                bytes(u64::from(host.size)),
                host.offset
            ),
            AbiMismatchDetail::ElemClass {
                kind,
                size,
                device,
                host,
            } => {
                let (what, pre, post) = match kind {
                    AbiKind::Scalar => ("classes", article(*size), ""),
                    AbiKind::Pointer => ("pointee classes", "a raw pointer to ", " data"),
                    AbiKind::Slice => ("element classes", "a read-only slice of ", " elements"),
                    AbiKind::DisjointSlice => {
                        ("element classes", "a writable slice of ", " elements")
                    }
                    AbiKind::Struct => ("classes", "a struct of ", " data"),
                    AbiKind::TensorMap => ("element classes", "a tensor map of ", " elements"),
                    AbiKind::Texture => ("texel classes", "a texture of ", " texels"),
                    AbiKind::Surface => ("texel classes", "a surface of ", " texels"),
                    AbiKind::OptionalSlice => (
                        "element classes",
                        "an optional read-only slice of ",
                        " elements",
                    ),
                    AbiKind::OptionalDisjointSlice => (
                        "element classes",
                        "an optional writable slice of ",
                        " elements",
                    ),
                };
                write!(
                    f,
                    "the kernel takes {pre}{size}-byte {device}{post}, the Rust argument `{ty}` \
                     is {pre}{size}-byte {host}{post}; {what} differ: {device} vs {host}{}",
                    class_hint(*device, *host)
                )
            }
            AbiMismatchDetail::FieldClass {
                index,
                host_name,
                device,
                host,
            } => write!(
                f,
                "field {index} of the kernel's struct is {}{}-byte {} at byte offset {}, field \
                 {index} (`{host_name}`) of the Rust argument `{ty}` is {}{}-byte {} at byte \
                 offset {}; field classes differ: {} vs {} (the two struct definitions differ: \
                 fields of equal size in another order?){}",
                article(device.size),
                device.size,
                device.class,
                device.offset,
                article(host.size),
                host.size,
                host.class,
                host.offset,
                device.class,
                host.class,
                class_hint(device.class, host.class)
            ),
        }
    }
}

impl std::error::Error for AbiMismatch {}

/// Why two classes that look alike differ, for the pairs that need it: a device address
/// on the host is a `u64`; a `bool` is not a byte.
fn class_hint(device: ValueClass, host: ValueClass) -> &'static str {
    match (device, host) {
        (ValueClass::Pointer, _) => "; a device address on the host is a `u64` (`CUdeviceptr`)",
        (ValueClass::Bool, _) | (_, ValueClass::Bool) => {
            "; `bool` is a class of its own: a `bool` must be 0 or 1, a byte need not be"
        }
        (ValueClass::BFloat16 | ValueClass::Float16, _)
        | (_, ValueClass::BFloat16 | ValueClass::Float16) => {
            "; `bf16`, `f16` and `u16` read the same 16 bits as different numbers"
        }
        _ => "",
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
