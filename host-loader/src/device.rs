//! Opening a device without panicking when the driver is missing.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use cudarc::driver::sys;
use cudarc::driver::{CudaContext, CudaStream, DriverError};

use crate::error::Error;

/// The library names cudarc tries for libcuda on this OS, each once, in its order.
fn tried_names() -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for n in cudarc::get_lib_name_candidates("cuda") {
        let platform_ok = if cfg!(windows) {
            n.ends_with(".dll")
        } else {
            !n.ends_with(".dll")
        };
        if platform_ok && !names.contains(&n) {
            names.push(n);
        }
    }
    names
}

/// Opens GPU `ordinal` (0-based): loads the CUDA driver library, initializes it
/// (`cuInit`), retains the device's primary context (`cuDevicePrimaryCtxRetain`) and
/// returns it with its default stream (the legacy NULL stream).
///
/// cudarc loads `libcuda` lazily and panics when it is missing; this function checks
/// first and turns that case, and any panic inside cudarc's start-up, into an error.
///
/// Errors: [`Error::NoDriver`] when `libcuda.so` cannot be loaded or lacks a symbol (it
/// says what to install); [`Error::Driver`]
/// when `cuInit` fails (e.g. `CUDA_ERROR_NO_DEVICE`) or `ordinal` is not a device.
pub fn open_device(ordinal: usize) -> Result<(Arc<CudaContext>, Arc<CudaStream>), Error> {
    // SAFETY: `is_culib_present` only tries `dlopen` on the candidate library names and
    // closes what it opened; it runs no library code besides initializers of libcuda.
    if !unsafe { sys::is_culib_present() } {
        return Err(Error::NoDriver {
            detail: format!(
                "libcuda.so not found: install the NVIDIA driver (it provides libcuda.so.1; \
                 the CUDA toolkit is not needed), or add its directory to LD_LIBRARY_PATH. \
                 Tried: {}",
                tried_names().join(", ")
            ),
        });
    }
    let count = guard_panic(CudaContext::device_count)?.map_err(|source| Error::Driver {
        context: "cuInit / cuDeviceGetCount (is a GPU visible? check nvidia-smi and \
                  CUDA_VISIBLE_DEVICES)"
            .into(),
        source,
    })?;
    if ordinal >= count.max(0) as usize {
        return Err(Error::Driver {
            context: format!(
                "device {ordinal} does not exist; this machine has {count} CUDA devices"
            ),
            source: DriverError(sys::CUresult::CUDA_ERROR_INVALID_DEVICE),
        });
    }
    let ctx = guard_panic(|| CudaContext::new(ordinal))?.map_err(|source| Error::Driver {
        context: format!("opening device {ordinal} (cuDevicePrimaryCtxRetain)"),
        source,
    })?;
    let stream = ctx.default_stream();
    Ok((ctx, stream))
}

/// Runs `f`, turning a panic inside cudarc (a missing driver symbol) into an error.
pub(crate) fn guard_panic<T>(f: impl FnOnce() -> T) -> Result<T, Error> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        let msg = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("unknown panic");
        Error::NoDriver {
            detail: format!(
                "the CUDA driver library could not be used: {msg}. Install an NVIDIA driver \
                 that supports CUDA 13.0 or newer"
            ),
        }
    })
}
