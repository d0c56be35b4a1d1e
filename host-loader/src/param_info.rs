//! The driver's view of a kernel's parameters (`cuFuncGetParamInfo`, CUDA 12.4+), compared
//! with the signature a handle was checked against.
//!
//! The PTX (or link map) the layouts came from and the code the driver loaded are two
//! different things when a module is loaded from a cubin with a link map, or with
//! signatures from elsewhere. The driver knows each parameter's offset and size in the
//! kernel's parameter buffer; this module asks it once per handle.

use std::sync::OnceLock;

use cudarc::driver::sys;
use ptx_linker::EntrySignature;

use crate::error::Error;

/// Whether the loaded driver exports `symbol` (a NUL-terminated name). cudarc panics
/// when a missing symbol is called, so look first.
fn exported(symbol: &[u8]) -> bool {
    // SAFETY: only called after a module was loaded, so libcuda is loaded; `get` looks
    // the symbol up (`dlsym`) without calling it, and the signature type is only used
    // for that lookup.
    unsafe { sys::culib().get::<unsafe extern "C" fn()>(symbol).is_ok() }
}

/// `cuFuncGetParamInfo` (drivers for CUDA 12.4 and newer).
fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| exported(b"cuFuncGetParamInfo\0"))
}

/// `cuFuncGetParamCount(func, &count)`, looked up in the loaded driver (newer drivers
/// export it; cudarc binds it only for CUDA 13.2 and later, above this crate's 13.0
/// bindings), or `None` where it is missing.
type ParamCountFn = unsafe extern "C" fn(sys::CUfunction, *mut usize) -> sys::CUresult;
fn param_count_fn() -> Option<ParamCountFn> {
    static FUNC: OnceLock<Option<ParamCountFn>> = OnceLock::new();
    *FUNC.get_or_init(|| {
        // SAFETY: libcuda is loaded (a module was); the symbol, where present, has this
        // signature (CUDA Driver API, "Execution Control").
        unsafe {
            sys::culib()
                .get::<ParamCountFn>(b"cuFuncGetParamCount\0")
                .ok()
                .map(|f| *f)
        }
    })
}

/// The byte offset and size of each parameter of `entry` in the kernel's parameter
/// buffer: each starts at the previous one's end rounded up to its alignment (PTX ISA
/// 9.0, section 5.1.6.1 "Kernel Function Parameters").
pub(crate) fn expected_offsets(entry: &EntrySignature) -> Vec<(usize, usize)> {
    let mut end = 0usize;
    entry
        .params
        .iter()
        .map(|p| {
            let align = (p.align as usize).max(1);
            let offset = end.div_ceil(align) * align;
            end = offset + p.size as usize;
            (offset, p.size as usize)
        })
        .collect()
}

fn driver_error(entry: &EntrySignature, call: &str, res: sys::CUresult) -> Error {
    Error::Driver {
        context: format!("{call} for `{}`", entry.name),
        source: cudarc::driver::DriverError(res),
    }
}

/// Compares the number of parameters (`cuFuncGetParamCount`, where the driver has it)
/// and the offset and size of each (`cuFuncGetParamInfo`), as the driver reports them,
/// with `entry`. A driver without `cuFuncGetParamCount` is asked, when `probe_past_end`,
/// for one parameter past the end instead, which must not exist: that query fails by
/// design, and compute-sanitizer lists the failing call (and fails a program run with
/// `--error-exitcode`). [`Module`](crate::Module) runs this check only when the
/// signatures did not come from the very PTX text the driver compiled, and probes only
/// when they did not come packed with the fatbin either
/// ([`SignatureSource`](crate::module::SignatureSource)).
/// Returns `Ok(false)` when the driver cannot say (no `cuFuncGetParamInfo`), `Ok(true)`
/// when everything agrees. The function's context must be current.
///
/// Errors: [`Error::ParamInfoMismatch`], [`Error::ParamCountMismatch`], or
/// [`Error::Driver`] for a driver failure.
pub(crate) fn cross_check(
    func: sys::CUfunction,
    entry: &EntrySignature,
    probe_past_end: bool,
) -> Result<bool, Error> {
    if !available() {
        return Ok(false);
    }
    let expected = expected_offsets(entry);
    let count_fn = param_count_fn();
    if let Some(param_count) = count_fn {
        let mut count = 0usize;
        // SAFETY: `func` is a live function handle of the current context; the
        // out-pointer is valid.
        match unsafe { param_count(func, &mut count) } {
            sys::CUresult::CUDA_SUCCESS if count != expected.len() => {
                return Err(Error::ParamCountMismatch {
                    kernel: entry.name.clone(),
                    expected: expected.len(),
                    driver: count,
                })
            }
            sys::CUresult::CUDA_SUCCESS => {}
            sys::CUresult::CUDA_ERROR_NOT_SUPPORTED => return Ok(false),
            other => return Err(driver_error(entry, "cuFuncGetParamCount", other)),
        }
    }
    let query = |index: usize| {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: `func` is a live function handle of the current context; the symbol
        // exists (checked above); both out-pointers are valid.
        let res = unsafe { sys::cuFuncGetParamInfo(func, index, &mut offset, &mut size) };
        (res, offset, size)
    };
    for (index, &(e_off, e_size)) in expected.iter().enumerate() {
        match query(index) {
            (sys::CUresult::CUDA_SUCCESS, offset, size) if (offset, size) == (e_off, e_size) => {}
            (sys::CUresult::CUDA_SUCCESS, offset, size) => {
                return Err(Error::ParamInfoMismatch {
                    kernel: entry.name.clone(),
                    param_index: index,
                    expected_offset: e_off,
                    expected_size: e_size,
                    driver_offset: offset,
                    driver_size: size,
                })
            }
            // The loaded code has fewer parameters than the signature.
            (sys::CUresult::CUDA_ERROR_INVALID_VALUE, ..) => {
                return Err(Error::ParamCountMismatch {
                    kernel: entry.name.clone(),
                    expected: expected.len(),
                    driver: index,
                })
            }
            (sys::CUresult::CUDA_ERROR_NOT_SUPPORTED, ..) => return Ok(false),
            (other, ..) => return Err(driver_error(entry, "cuFuncGetParamInfo", other)),
        }
    }
    // One more than expected must not exist; if it does, count the driver's.
    if count_fn.is_none()
        && probe_past_end
        && query(expected.len()).0 == sys::CUresult::CUDA_SUCCESS
    {
        let mut driver = expected.len() + 1;
        while driver < 4096 && query(driver).0 == sys::CUresult::CUDA_SUCCESS {
            driver += 1;
        }
        return Err(Error::ParamCountMismatch {
            kernel: entry.name.clone(),
            expected: expected.len(),
            driver,
        });
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptx_linker::{Param, ParamKind};

    fn p(size: u32, align: u32) -> Param {
        Param {
            name: "k".into(),
            kind: ParamKind::Aggregate { elem: "b8".into() },
            size,
            align,
        }
    }

    #[test]
    fn offsets_follow_alignment() {
        let e = EntrySignature {
            name: "k".into(),
            line: 1,
            params: vec![p(1, 1), p(16, 8), p(4, 4), p(16, 16), p(2, 2)],
        };
        assert_eq!(
            expected_offsets(&e),
            [(0, 1), (8, 16), (24, 4), (32, 16), (48, 2)]
        );
        let none = EntrySignature {
            name: "k".into(),
            line: 1,
            params: vec![],
        };
        assert!(expected_offsets(&none).is_empty());
    }
}
