//! [`MemoryError`]: everything that can go wrong allocating, copying, migrating or
//! sharing memory through [`memory`](crate::memory).

use std::fmt;

use cudarc::driver::{sys, DriverError};

use crate::message::bytes;

/// An error from an allocation, a copy, a managed-memory call or a pageable-memory check.
///
/// Bad sizes and lengths are found before any CUDA call, so a failed copy never leaves a
/// destination half-written. Messages give the numbers (elements or bytes, as named) and
/// what to change.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemoryError {
    /// `len * size_of::<T>()` does not fit in `isize` (the largest object Rust allows).
    #[error(
        "{len} elements of `{ty}` ({} each) do not fit in memory: {len} × {} overflows \
         isize::MAX",
        bytes(*elem_size as u64),
        bytes(*elem_size as u64)
    )]
    SizeOverflow {
        /// The element type.
        ty: &'static str,
        /// The element count asked for.
        len: usize,
        /// `size_of::<T>()`, in bytes.
        elem_size: usize,
    },

    /// A copy between a source and a destination of different lengths (in elements).
    #[error(
        "{op}: the destination holds {dst} elements and the source {src}; a copy needs \
         equal lengths (take a view of the longer one)"
    )]
    LengthMismatch {
        /// The operation, e.g. `copy_from_host`.
        op: &'static str,
        /// Destination length in elements.
        dst: usize,
        /// Source length in elements.
        src: usize,
    },

    /// A range that does not lie inside a buffer.
    #[error("{op}: range {start}..{end} is out of bounds for {len} elements")]
    OutOfBounds {
        /// The operation, e.g. `view`.
        op: &'static str,
        /// Range start, in elements.
        start: usize,
        /// Range end (exclusive), in elements.
        end: usize,
        /// The buffer's length, in elements.
        len: usize,
    },

    /// The driver could not allocate (`CUDA_ERROR_OUT_OF_MEMORY`).
    #[error(
        "out of memory: {what} of {} failed{}",
        bytes(*requested as u64),
        free_suffix(*free, *total)
    )]
    OutOfMemory {
        /// The kind of allocation, e.g. "device allocation (cuMemAllocAsync)".
        what: &'static str,
        /// Bytes asked for.
        requested: usize,
        /// Free device memory in bytes right after the failure (`cuMemGetInfo`); `None`
        /// for pinned host memory or when the driver cannot say.
        free: Option<usize>,
        /// Total device memory in bytes, if known.
        total: Option<usize>,
    },

    /// A managed allocation larger than free device memory minus a reserve was refused
    /// before calling the driver.
    #[error(
        "managed allocation of {} refused: {} of device memory {} free and {reserve} {} \
         kept in reserve, so at most {} may be managed; managed memory beyond free device \
         memory over-subscribes the GPU (pages thrash between host and device and a shared \
         GPU can stall); allocate less or free memory",
        bytes(*requested as u64),
        bytes(*free as u64),
        if *free == 1 { "is" } else { "are" },
        if *reserve == 1 { "is" } else { "are" },
        bytes(*allowed as u64)
    )]
    ManagedBudget {
        /// Bytes asked for.
        requested: usize,
        /// Free device memory in bytes (`cuMemGetInfo`).
        free: usize,
        /// Bytes kept free ([`managed_reserve`](crate::memory::managed_reserve)).
        reserve: usize,
        /// The largest request that would have been accepted, in bytes.
        allowed: usize,
    },

    /// The device cannot access pageable host memory, so a host reference cannot be
    /// passed to a kernel.
    #[error(
        "device {ordinal} ({name}) cannot read pageable host memory: \
         CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS is 0 (needs HMM: the NVIDIA open kernel \
         modules on Linux 6.1.24+, or a coherent platform such as Grace Hopper); pass the \
         value by value as a KernelStruct, or copy it into a DeviceBuffer"
    )]
    PageableAccessUnsupported {
        /// Device ordinal.
        ordinal: usize,
        /// Device name.
        name: String,
    },

    /// The device lacks a feature a call needs.
    #[error("device {ordinal} does not support {feature} ({attribute} is 0)")]
    Unsupported {
        /// Device ordinal.
        ordinal: usize,
        /// What was asked for, e.g. "prefetching managed memory to the device".
        feature: &'static str,
        /// The device attribute that says so.
        attribute: &'static str,
    },

    /// Two buffers or a buffer and a stream belong to different CUDA contexts.
    #[error(
        "{op}: {what} belongs to the context of device {found}, the stream to device {expected}"
    )]
    ContextMismatch {
        /// The operation.
        op: &'static str,
        /// Which argument, e.g. "the source".
        what: &'static str,
        /// Device ordinal of the stream.
        expected: usize,
        /// Device ordinal of the argument.
        found: usize,
    },

    /// A CUDA driver call failed.
    #[error("{context}: {}", DriverMsg(source))]
    Driver {
        /// The call and its subject, e.g. "cuMemcpyHtoDAsync (copy_from_host)".
        context: String,
        /// The driver's error code.
        source: DriverError,
    },

    /// A kernel launch inside a [`Pipeline`](crate::memory::Pipeline) stage failed.
    #[error("pipeline stage: {0}")]
    Launch(Box<crate::Error>),
}

impl From<crate::Error> for MemoryError {
    fn from(e: crate::Error) -> Self {
        MemoryError::Launch(Box::new(e))
    }
}

/// Wraps an allocation's driver error, turning `CUDA_ERROR_OUT_OF_MEMORY` into
/// [`MemoryError::OutOfMemory`]. For device and managed allocations (`device_memory`)
/// the error carries free and total device memory (`cuMemGetInfo`) when the driver can
/// say; for pinned host memory it does not.
pub(crate) fn alloc_error(
    what: &'static str,
    requested: usize,
    device_memory: bool,
    source: DriverError,
) -> MemoryError {
    if source.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        let (free, total) = match device_memory.then(cudarc::driver::result::mem_get_info) {
            Some(Ok((f, t))) => (Some(f), Some(t)),
            _ => (None, None),
        };
        MemoryError::OutOfMemory {
            what,
            requested,
            free,
            total,
        }
    } else {
        MemoryError::Driver {
            context: format!("{what}, {}", bytes(requested as u64)),
            source,
        }
    }
}

/// A closure that wraps a driver error with a fixed context, for `map_err`.
pub(crate) fn driver(context: &'static str) -> impl Fn(DriverError) -> MemoryError {
    move |source| MemoryError::Driver {
        context: context.to_string(),
        source,
    }
}

fn free_suffix(free: Option<usize>, total: Option<usize>) -> String {
    match (free, total) {
        (Some(f), Some(t)) => format!(" ({f} of {} of device memory are free)", bytes(t as u64)),
        _ => String::new(),
    }
}

/// Renders a driver error as `CUDA_ERROR_NAME (description)`; only the name when the
/// driver cannot describe it.
struct DriverMsg<'a>(&'a DriverError);

impl fmt::Display for DriverMsg<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.error_string() {
            Ok(s) => write!(f, "{:?} ({})", self.0 .0, s.to_string_lossy()),
            Err(_) => write!(f, "{:?}", self.0 .0),
        }
    }
}
