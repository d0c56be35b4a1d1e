//! Opening a device, loading a PTX module, making typed kernel handles and launching.

use std::ffi::{c_void, CString};
use std::fmt;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::Arc;

use cudarc::driver::sys::{self, CUfunction_attribute, CUjit_option};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream, DriverError};
use cudarc::nvrtc::Ptx;
use ptx_linker::EntrySignature;

use crate::error::Error;
use crate::launch::{invalid, validate_config, LaunchConfig};
use crate::signature::{KernelSignature, Signatures};

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
                cudarc::get_lib_name_candidates("cuda").join(", ")
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
fn guard_panic<T>(f: impl FnOnce() -> T) -> Result<T, Error> {
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

/// A PTX module loaded into a CUDA context, with the parameter list of every `.entry`.
///
/// Made by [`Module::from_ptx_file`] or [`Module::from_ptx`]; hands out typed kernel
/// handles with [`Module::kernel`]. The driver module is unloaded (`cuModuleUnload`)
/// when this and every [`Kernel`] made from it are dropped.
#[derive(Debug)]
pub struct Module {
    signatures: Signatures,
    cu: Arc<CudaModule>,
    ctx: Arc<CudaContext>,
}

impl Module {
    /// Reads the PTX file at `path` and loads it; see [`Module::from_ptx`]. Messages name
    /// the module by `path`.
    ///
    /// Errors: [`Error::Io`] when the file cannot be read or is not UTF-8, then those of
    /// [`Module::from_ptx`].
    pub fn from_ptx_file(ctx: &Arc<CudaContext>, path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_ptx(ctx, &path.display().to_string(), &text)
    }

    /// Reads the `.entry` signatures of `text` (with `ptx_linker`) and loads it into
    /// `ctx` (`cuModuleLoadData`; the driver JIT-compiles the PTX for the device).
    /// `display_name` names the module in messages.
    ///
    /// Errors: [`Error::InvalidPtx`] when `text` contains a NUL byte; [`Error::Parse`]
    /// when it does not parse; [`Error::ModuleLoad`] when the driver rejects it, with
    /// the JIT compiler's log.
    pub fn from_ptx(ctx: &Arc<CudaContext>, display_name: &str, text: &str) -> Result<Self, Error> {
        let c_text = nul_free(display_name, text)?;
        let signatures = Signatures::parse(display_name, text)?;
        Self::load(ctx, signatures, text, c_text)
    }

    /// Loads `text` into `ctx` like [`Module::from_ptx`], but takes the `.entry`
    /// signatures from the caller (e.g. from the linker's link map) instead of parsing
    /// them. Messages name the module by `signatures.module()`.
    ///
    /// The signatures must be those of `text`: a kernel missing from them cannot be
    /// fetched, and a wrong parameter list defeats the layout check.
    ///
    /// Errors: [`Error::InvalidPtx`] when `text` contains a NUL byte;
    /// [`Error::ModuleLoad`] when the driver rejects it.
    pub fn from_ptx_with_signatures(
        ctx: &Arc<CudaContext>,
        signatures: Signatures,
        text: &str,
    ) -> Result<Self, Error> {
        let c_text = nul_free(signatures.module(), text)?;
        Self::load(ctx, signatures, text, c_text)
    }

    fn load(
        ctx: &Arc<CudaContext>,
        signatures: Signatures,
        text: &str,
        c_text: CString,
    ) -> Result<Self, Error> {
        let cu = match ctx.load_module(Ptx::from_src(text)) {
            Ok(cu) => cu,
            Err(source) => {
                return Err(Error::ModuleLoad {
                    module: signatures.module().to_string(),
                    source,
                    jit_log: jit_error_log(&c_text),
                })
            }
        };
        Ok(Module {
            signatures,
            cu,
            ctx: ctx.clone(),
        })
    }

    /// The name used in messages (the path for [`Module::from_ptx_file`]).
    pub fn name(&self) -> &str {
        self.signatures.module()
    }

    /// Every `.entry` signature, in file order.
    pub fn signatures(&self) -> &Signatures {
        &self.signatures
    }

    /// The PTX signature of kernel `name`.
    ///
    /// Errors: [`Error::NoSuchKernel`], listing the module's kernels.
    pub fn signature(&self, name: &str) -> Result<&EntrySignature, Error> {
        self.signatures.get(name)
    }

    /// The underlying cudarc module.
    pub fn cuda_module(&self) -> &Arc<CudaModule> {
        &self.cu
    }

    /// The context the module is loaded in.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// A typed handle to kernel `name` with Rust signature `S`, a tuple of
    /// [`KernelParam`](crate::KernelParam)s.
    ///
    /// The check happens here, once: parameter count, then each parameter's byte size,
    /// alignment and class against the PTX. Then the function handle is fetched
    /// (`cuModuleGetFunction`) and its thread limit read
    /// (`cuFuncGetAttribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)`).
    ///
    /// Errors: [`Error::NoSuchKernel`], [`Error::ArgCount`], [`Error::LayoutMismatch`],
    /// [`Error::Driver`].
    pub fn kernel<S: KernelSignature>(&self, name: &str) -> Result<Kernel<S>, Error> {
        // `name` now equals an `.entry` name read from NUL-free text, so cudarc's
        // `CString::new(name).unwrap()` inside `load_function` cannot panic.
        self.signatures.check::<S>(name)?;
        let func = self
            .cu
            .load_function(name)
            .map_err(|source| Error::Driver {
                context: format!("cuModuleGetFunction(`{name}`) in `{}`", self.name()),
                source,
            })?;
        let max = func
            .get_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
            .map_err(|source| Error::Driver {
                context: format!("cuFuncGetAttribute(MAX_THREADS_PER_BLOCK) of `{name}`"),
                source,
            })?;
        Ok(Kernel {
            func,
            ctx: self.ctx.clone(),
            name: name.to_string(),
            max_threads_per_block: max.max(0) as u32,
            _sig: PhantomData,
        })
    }
}

/// `text` as a C string, or [`Error::InvalidPtx`] naming the first NUL byte (the driver
/// takes PTX as a NUL-terminated string; cudarc would panic on it).
fn nul_free(module: &str, text: &str) -> Result<CString, Error> {
    CString::new(text).map_err(|e| Error::InvalidPtx {
        module: module.to_string(),
        reason: format!(
            "PTX text contains a NUL byte at byte offset {}",
            e.nul_position()
        ),
    })
}

/// Asks the driver to JIT `c_text` again with an error-log buffer
/// (`cuModuleLoadDataEx` with `CU_JIT_ERROR_LOG_BUFFER`) and returns the log. Only called
/// after a load failed, so the happy path never pays for it.
fn jit_error_log(c_text: &CString) -> String {
    const LOG_BYTES: usize = 16 * 1024;
    let mut log = vec![0u8; LOG_BYTES];
    let mut options = [
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values: [*mut c_void; 2] = [log.as_mut_ptr().cast(), LOG_BYTES as *mut c_void];
    let mut module = MaybeUninit::<sys::CUmodule>::uninit();
    // SAFETY: `c_text` is NUL-terminated PTX; `options` and `values` have 2 entries each;
    // the log buffer is `LOG_BYTES` long and outlives the call; the size option is passed
    // by value in the pointer slot, as the driver API specifies. The context was made
    // current by the failed `load_module` call just before.
    let res = unsafe {
        sys::cuModuleLoadDataEx(
            module.as_mut_ptr(),
            c_text.as_ptr().cast(),
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    if res == sys::CUresult::CUDA_SUCCESS {
        // SAFETY: the call succeeded, so `module` was written and is a live module that
        // nothing else refers to.
        unsafe {
            let _ = sys::cuModuleUnload(module.assume_init());
        }
        return String::new();
    }
    let written = (values[1] as usize).min(LOG_BYTES);
    let end = log[..written]
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(written);
    String::from_utf8_lossy(&log[..end]).into_owned()
}

/// A kernel whose Rust signature `S` was checked against its PTX `.entry`.
///
/// Made by [`Module::kernel`]. Launching costs what cudarc's launch builder costs minus
/// its allocations: the argument bytes and the array of pointers to them live on the
/// stack, and nothing is checked again except the launch configuration (a few integer
/// comparisons) and that the stream belongs to the module's context.
pub struct Kernel<S> {
    func: CudaFunction,
    ctx: Arc<CudaContext>,
    name: String,
    max_threads_per_block: u32,
    _sig: PhantomData<fn(S)>,
}

impl<S> fmt::Debug for Kernel<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernel")
            .field("name", &self.name)
            .field("signature", &std::any::type_name::<S>())
            .field("max_threads_per_block", &self.max_threads_per_block)
            .finish_non_exhaustive()
    }
}

impl<S> Clone for Kernel<S> {
    fn clone(&self) -> Self {
        Kernel {
            func: self.func.clone(),
            ctx: self.ctx.clone(),
            name: self.name.clone(),
            max_threads_per_block: self.max_threads_per_block,
            _sig: PhantomData,
        }
    }
}

impl<S: KernelSignature> Kernel<S> {
    /// The kernel (`.entry`) name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The most threads per block this kernel can be launched with
    /// (`CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`; below 1024 when it uses many
    /// registers or declares `.maxntid`).
    pub fn max_threads_per_block(&self) -> u32 {
        self.max_threads_per_block
    }

    /// The underlying cudarc function, e.g. to set attributes or query occupancy.
    pub fn function(&self) -> &CudaFunction {
        &self.func
    }

    /// Enqueues the kernel on `stream` with `cfg` and `args` (`cuLaunchKernel`).
    ///
    /// Returns when the launch is enqueued, not when the kernel has run; synchronize the
    /// stream (or copy results back) to wait. Before the launch, `stream` waits for
    /// earlier work on every buffer argument (writes, and reads for mutable arguments);
    /// after it, the launch is recorded as a read of every `Slice`/`Ptr` argument and a
    /// write of every `SliceMut`/`PtrMut` argument, so later work on other streams is
    /// ordered after it. This is cudarc's event tracking, the same as `launch_builder`.
    ///
    /// Errors: [`Error::InvalidLaunch`] when `cfg` has a zero dimension, more threads per
    /// block than [`max_threads_per_block`](Self::max_threads_per_block), a grid beyond
    /// CUDA's limits, or `stream` belongs to another context; [`Error::Driver`] when the
    /// driver refuses the launch (e.g. too much dynamic shared memory). Errors from the
    /// kernel's execution appear later, at the next synchronizing call.
    ///
    /// # Safety
    ///
    /// The argument layouts were checked when this handle was made; what the kernel does
    /// with its arguments cannot be checked. The caller guarantees:
    /// 1. **Bounds.** The kernel accesses only memory inside its buffer arguments:
    ///    within `len` elements for a `Slice`/`SliceMut`, and within the buffer for a
    ///    `Ptr`/`PtrMut`, which carries no length. With the grid `cfg` describes, no
    ///    thread reads or writes out of bounds.
    /// 2. **Mutability.** The kernel writes only through `SliceMut`/`PtrMut` arguments.
    ///    A write through a `Slice`/`Ptr` mutates memory the host holds a shared borrow
    ///    of, and cudarc records it as a read, so other streams are not ordered after it.
    /// 3. **Races.** Threads of the kernel do not race on the same element (e.g. two
    ///    threads writing one element of a `&mut [T]`), except through atomics.
    /// 4. **Element and field types.** The PTX shows only byte sizes: the device-side
    ///    element type of each slice or pointer has the host `T`'s layout, and each
    ///    `KernelStruct` has the same field order and offsets on both sides.
    /// 5. **Kernel preconditions.** Anything else the kernel assumes holds: the grid
    ///    covers the elements it expects, `cfg.shared_mem_bytes` is what it uses as
    ///    dynamic shared memory, scalar arguments are in its accepted range.
    /// 6. **Context.** Every buffer argument was allocated in this kernel's context.
    #[inline]
    pub unsafe fn launch<'a>(
        &self,
        stream: &'a CudaStream,
        cfg: LaunchConfig,
        args: S::Args<'a>,
    ) -> Result<(), Error>
    where
        S: 'a,
    {
        self.check_launch(stream, &cfg)?;
        stream
            .context()
            .bind_to_thread()
            .map_err(|source| Error::Driver {
                context: format!(
                    "making the context current for `{}` (cuCtxSetCurrent), or an earlier \
                     deferred stream error",
                    self.name
                ),
                source,
            })?;
        // SAFETY: `S` was checked against this function's PTX signature when `self` was
        // made; `cfg` was validated above; the stream's context is the function's and is
        // current; the caller upholds the kernel's own obligations (see `# Safety`).
        unsafe { S::launch_raw(self.func.cu_function(), stream, &cfg, args) }.map_err(|source| {
            Error::Driver {
                context: format!("cuLaunchKernel(`{}`)", self.name),
                source,
            }
        })
    }

    fn check_launch(&self, stream: &CudaStream, cfg: &LaunchConfig) -> Result<(), Error> {
        if stream.context().cu_ctx() != self.ctx.cu_ctx() {
            return Err(invalid(
                Some(&self.name),
                format!(
                    "the stream belongs to the context of device {}, the kernel's module to \
                     the context of device {}",
                    stream.context().ordinal(),
                    self.ctx.ordinal()
                ),
            ));
        }
        validate_config(cfg, self.max_threads_per_block).map_err(|e| match e {
            Error::InvalidLaunch { reason, .. } => invalid(Some(&self.name), reason),
            other => other,
        })
    }
}
