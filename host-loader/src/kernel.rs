//! Typed kernel handles: what is read once when one is made, and the launch, which only
//! compares integers before `cuLaunchKernel`.

use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use cudarc::driver::sys::{self, CUfunction_attribute};
use cudarc::driver::{CudaStream, DriverError};
use ptx_linker::EntrySignature;

use crate::error::Error;
use crate::launch::{
    check_launch_dims, check_max_threads, invalid, DeviceLimits, DynamicShared, LaunchAttributes,
    LaunchConfig,
};
use crate::module::{RawModule, SignatureSource};
use crate::signature::KernelSignature;

/// What every clone of one kernel handle shares.
pub(crate) struct Shared {
    func: sys::CUfunction,
    /// `module.ctx.cu_ctx()`, kept here so that a launch compares it without following
    /// three pointers.
    cu_ctx: sys::CUcontext,
    module: Arc<RawModule>,
    name: String,
    limits: DeviceLimits,
    max_threads_per_block: u32,
    static_shared_bytes: u32,
    dynamic_shared_align: Option<u32>,
    /// The dynamic shared memory the kernel declares (`#[kernel(dynamic_shared = ...)]`).
    dynamic_shared: Option<DynamicShared>,
    /// The launch dimensions the kernel declares (`#[kernel(dims = N)]`), 1 or 2.
    launch_dims: Option<u32>,
    /// The alignment the kernel assumes of every slice argument
    /// (`#[kernel(slice_align = N)]`), in bytes; 0 for none.
    slice_align: u32,
    /// The cluster shape the kernel was compiled for (`.reqnctapercluster`, from
    /// `#[kernel(cluster = ...)]`), if any.
    required_cluster: Option<(u32, u32, u32)>,
    param_info_checked: bool,
    /// The function's current `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`, in bytes.
    /// Only grows; a launch asking for at most this much does one load and one compare.
    dynamic_shared_limit: AtomicU32,
}

// SAFETY: `func` is a driver handle, not thread-local state; it stays valid while
// `module` (an `Arc`) lives, and the driver API may be called with it from any thread
// once its context is current, which every use here ensures. The rest is plain data and
// an atomic.
unsafe impl Send for Shared {}
// SAFETY: as for `Send`; the only mutation through `&Shared` is the atomic.
unsafe impl Sync for Shared {}

/// A kernel whose Rust signature `S` was checked against its PTX `.entry` and, when the
/// module has one, its ABI record.
///
/// Made by [`Module::kernel`](crate::Module::kernel); cheap to clone (clones share the
/// function handle and its cached limits). A launch checks the configuration against
/// limits read when the handle was made (a few integer compares), makes the context
/// current, and calls `cuLaunchKernel` with the argument bytes on the stack.
pub struct Kernel<S> {
    shared: Arc<Shared>,
    _sig: PhantomData<fn(S)>,
}

impl<S> fmt::Debug for Kernel<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.shared;
        f.debug_struct("Kernel")
            .field("name", &s.name)
            .field("signature", &std::any::type_name::<S>())
            .field("max_threads_per_block", &s.max_threads_per_block)
            .field("static_shared_bytes", &s.static_shared_bytes)
            .field("dynamic_shared_align", &s.dynamic_shared_align)
            .field("launch_dims", &s.launch_dims)
            .field("param_info_checked", &s.param_info_checked)
            .finish_non_exhaustive()
    }
}

impl<S> Clone for Kernel<S> {
    fn clone(&self) -> Self {
        Kernel {
            shared: self.shared.clone(),
            _sig: PhantomData,
        }
    }
}

fn attr(func: sys::CUfunction, name: &str, a: CUfunction_attribute) -> Result<u32, Error> {
    let mut v = 0i32;
    // SAFETY: `func` is a live function handle of the current context; `v` is a valid
    // out-pointer.
    unsafe { sys::cuFuncGetAttribute(&mut v, a, func) }
        .result()
        .map_err(|source| Error::Driver {
            context: format!("cuFuncGetAttribute({a:?}) of `{name}`"),
            source,
        })?;
    Ok(v.max(0) as u32)
}

impl<S: KernelSignature> Kernel<S> {
    /// Fetches the function and reads its limits. `entry` is the signature `S` was
    /// checked against.
    pub(crate) fn new(
        module: &Arc<RawModule>,
        limits: DeviceLimits,
        entry: &EntrySignature,
        dynamic_shared_align: Option<u32>,
        dynamic_shared: Option<DynamicShared>,
        launch_dims: Option<u32>,
        slice_align: Option<u32>,
    ) -> Result<Self, Error> {
        let name = entry.name.as_str();
        module
            .ctx
            .bind_to_thread()
            .map_err(|source| Error::Driver {
                context: format!("making the context current for `{name}` (cuCtxSetCurrent)"),
                source,
            })?;
        // `name` equals an `.entry` name read from NUL-free text.
        let c_name = std::ffi::CString::new(name).map_err(|_| Error::InvalidPtx {
            module: String::new(),
            reason: format!("kernel name `{name}` contains a NUL byte"),
        })?;
        let mut func = std::mem::MaybeUninit::<sys::CUfunction>::uninit();
        // SAFETY: `module.cu` is a live module of the current context; `c_name` is
        // NUL-terminated; `func` is a valid out-pointer.
        unsafe { sys::cuModuleGetFunction(func.as_mut_ptr(), module.cu, c_name.as_ptr()) }
            .result()
            .map_err(|source| Error::Driver {
                context: format!("cuModuleGetFunction(`{name}`)"),
                source,
            })?;
        // SAFETY: the call succeeded, so it wrote a live function handle.
        let func = unsafe { func.assume_init() };
        use CUfunction_attribute as A;
        let max_threads = attr(func, name, A::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?;
        let static_shared = attr(func, name, A::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?;
        let dyn_limit = attr(
            func,
            name,
            A::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        )?;
        // 0 (or an error, before CUDA 12 / sm_90) means no compile-time cluster shape.
        let cluster = |a| attr(func, name, a).unwrap_or(0);
        let required_cluster = match (
            cluster(A::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH),
            cluster(A::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT),
            cluster(A::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH),
        ) {
            (0, _, _) => None,
            (x, y, z) => Some((x, y.max(1), z.max(1))),
        };
        let param_info_checked = match module.signatures {
            SignatureSource::LoadedText => false,
            SignatureSource::PackedWith => crate::param_info::cross_check(func, entry, false)?,
            SignatureSource::Elsewhere => crate::param_info::cross_check(func, entry, true)?,
        };
        Ok(Kernel {
            shared: Arc::new(Shared {
                func,
                cu_ctx: module.ctx.cu_ctx(),
                module: module.clone(),
                name: name.to_string(),
                limits,
                max_threads_per_block: max_threads,
                static_shared_bytes: static_shared,
                dynamic_shared_align,
                dynamic_shared,
                launch_dims,
                slice_align: slice_align.unwrap_or(0),
                required_cluster,
                param_info_checked,
                dynamic_shared_limit: AtomicU32::new(dyn_limit),
            }),
            _sig: PhantomData,
        })
    }

    /// The kernel (`.entry`) name.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// The most threads per block this kernel can be launched with, read once when the
    /// handle was made (`CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`): the entry's `.maxntid`
    /// when it declares one (device-std's `#[kernel(max_threads = N)]` gives `N`; PTX ISA
    /// 9.0 §11.4.2, every target), below 1024 when the kernel uses many registers,
    /// else 1024. A launch with a larger block is refused with
    /// [`Error::ExceedsMaxThreads`] before the driver sees it.
    pub fn max_threads_per_block(&self) -> u32 {
        self.shared.max_threads_per_block
    }

    /// Bytes of static shared memory the kernel declares
    /// (`CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES`), as the driver compiled it.
    ///
    /// The loader does not limit it further: the driver's JIT (CUDA 13.0, H200) loads and
    /// runs PTX with up to 232448 bytes of static `.shared` for `.target sm_90a` *and*
    /// plain `sm_90`, with no function attribute. ptxas 13.5, and so ptx-linker and
    /// `gpu-build`, allow more than 49152 bytes only on arch-specific targets (`sm_90a`:
    /// 232448; `sm_120a`: 101376), so modules built by this toolkit that need more than
    /// 48 KiB of static shared memory say `--arch sm_90a`; a plain-`sm_90` module from
    /// elsewhere with more still loads, as the driver allows.
    pub fn static_shared_bytes(&self) -> u32 {
        self.shared.static_shared_bytes
    }

    /// The most dynamic shared memory, in bytes, a launch of this kernel can ask for: the
    /// device's opt-in maximum per block minus the kernel's static shared memory.
    pub fn max_dynamic_shared_bytes(&self) -> u32 {
        self.shared
            .limits
            .max_shared_per_block_optin
            .saturating_sub(self.shared.static_shared_bytes)
    }

    /// The cluster shape the kernel was compiled for (`#[kernel(cluster = (x, y, z))]`,
    /// PTX `.reqnctapercluster`; `CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_*`), if any. Launches
    /// run in clusters of this shape with or without a cluster attribute; one with
    /// another shape, or a grid that is not whole clusters, is refused before the driver.
    pub fn required_cluster(&self) -> Option<(u32, u32, u32)> {
        self.shared.required_cluster
    }

    /// The alignment in bytes the kernel declared for its dynamic shared memory
    /// (`.extern .shared .align A .b8 NAME[]`, e.g. from `DynamicSharedArray<T, A>`), or
    /// `None` when it declares none. From the link map when the module was loaded with
    /// one (per kernel), else the largest such alignment in the module. The driver places
    /// dynamic shared memory at least 16-byte aligned; offsets the host computes into it
    /// should be multiples of this.
    pub fn dynamic_shared_align(&self) -> Option<u32> {
        self.shared.dynamic_shared_align
    }

    /// The dynamic shared memory the kernel declares (`#[kernel(dynamic_shared = N,
    /// dynamic_shared_per_thread = M)]`), which every launch fills in or checks; `None`
    /// for a kernel that declares none (then `cfg.shared_mem_bytes` is taken as given).
    pub fn dynamic_shared(&self) -> Option<DynamicShared> {
        self.shared.dynamic_shared
    }

    /// The launch dimensions the kernel declares (`#[kernel(dims = N)]`, device-std), 1
    /// or 2: every launch (`Kernel::launch`, the bindings, graphs, sequences) whose grid
    /// or block has an extent other than 1 past the first `N` is refused with
    /// [`Error::InvalidLaunch`], as the kernel's code reads those indices as 0. `None`
    /// for a kernel that declares none (any shape). Read from the PTX text, the link
    /// map, or (for signatures from elsewhere) the loaded module's `__kernel_dims_K`.
    pub fn launch_dims(&self) -> Option<u32> {
        self.shared.launch_dims
    }

    /// The alignment, in bytes, the kernel assumes of every slice argument
    /// (`#[kernel(slice_align = N)]`, device-std): every launch (`Kernel::launch`, the
    /// bindings, graphs, sequences) with a slice argument that starts elsewhere is
    /// refused with [`Error::InvalidLaunch`] before the driver sees it. `None` for a
    /// kernel that declares none. Read from the PTX text (beside a link map too), or,
    /// for signatures from elsewhere, from the loaded module's `__kernel_slice_align_K`.
    pub fn slice_align(&self) -> Option<u32> {
        Some(self.shared.slice_align).filter(|&n| n > 1)
    }

    /// Whether the parameter offsets and sizes were cross-checked with
    /// `cuFuncGetParamInfo` when the handle was made: only when the signatures did not
    /// come from the very PTX text the driver compiled (a cubin with a link map,
    /// signatures from elsewhere), and the driver has the call (CUDA 12.4+).
    pub fn param_info_checked(&self) -> bool {
        self.shared.param_info_checked
    }

    /// The raw driver function handle, valid while `self` lives. A launch through it
    /// (`cuLaunchKernel`, a graph node made by hand) skips every check of
    /// [`launch`](Self::launch): the launch shape of a kernel with declared
    /// [`launch_dims`](Self::launch_dims) included, whose code reads the indices past
    /// those dimensions as 0, and the slice alignment of one with a declared
    /// [`slice_align`](Self::slice_align), whose code assumes it.
    pub fn cu_function(&self) -> sys::CUfunction {
        self.shared.func
    }

    /// Enqueues the kernel on `stream` with `cfg` and `args` (`cuLaunchKernel`).
    ///
    /// Returns when the launch is enqueued, not when the kernel has run; synchronize the
    /// stream (or copy results back) to wait. Before the launch, `stream` waits for
    /// earlier work on every buffer argument (writes, and reads for mutable arguments);
    /// after it, the launch is recorded as a read of every `Slice`/`Ptr` argument and a
    /// write of every `SliceMut`/`PtrMut` argument, so later work on other streams is
    /// ordered after it. This is cudarc's event tracking, the same as `launch_builder`:
    /// with more than one stream in the context, one `cuStreamWaitEvent` per buffer
    /// argument (two for a writable one) and one `cuEventRecord` per buffer argument,
    /// beside the `cuLaunchKernel`. For many launches on one stream,
    /// [`sequence::run`](crate::sequence::run) does that once per buffer instead of once
    /// per launch.
    ///
    /// `cfg.shared_mem_bytes` is the dynamic shared memory in bytes. Above 48 KiB the
    /// kernel must opt in: the first launch that asks for more than the kernel's current
    /// limit sets `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` to the amount asked
    /// (`cuFuncSetAttribute`), and later launches up to that amount compare one integer.
    ///
    /// Errors: [`Error::ExceedsMaxThreads`] when the block has more threads than
    /// [`max_threads_per_block`](Self::max_threads_per_block) (the kernel's `.maxntid`
    /// from `#[kernel(max_threads = N)]`, or its register use) but fits the device;
    /// [`Error::InvalidLaunch`] when `cfg` has a zero dimension, a block or grid beyond
    /// the device's limits, more dynamic shared memory than
    /// [`max_dynamic_shared_bytes`](Self::max_dynamic_shared_bytes), or `stream` belongs
    /// to another context, or (`#[kernel(slice_align = N)]`) a non-empty slice argument
    /// does not start at a multiple of [`slice_align`](Self::slice_align) bytes;
    /// [`Error::Driver`] when the driver refuses the
    /// attribute or the launch. Errors from the kernel's execution appear later, at the
    /// next synchronizing call.
    ///
    /// # Safety
    ///
    /// What the handle checked: the argument layouts (count, sizes, alignments and, with
    /// an ABI record, slice kinds, element sizes and value classes, and struct fields with
    /// their classes), and that the launch configuration fits the device. What it cannot
    /// check is the kernel body, which the host never sees, so the caller guarantees:
    /// 1. **Bounds.** The kernel accesses only memory inside its buffer arguments:
    ///    within `len` elements for a `Slice`/`SliceMut`, and within the buffer for a
    ///    `Ptr`/`PtrMut`, which carries no length. With the grid `cfg` describes, no
    ///    thread reads or writes out of bounds (a bounds-checked `&[T]` or a
    ///    `DisjointSlice` traps instead; raw pointers and `get_unchecked_mut` do not).
    /// 2. **Mutability.** The kernel writes only through `SliceMut`/`PtrMut` arguments.
    ///    A write through a `Slice`/`Ptr` mutates memory the host holds a shared borrow
    ///    of, and cudarc records it as a read, so other streams are not ordered after it.
    /// 3. **Races.** Threads of the kernel do not race on the same element (e.g. two
    ///    threads writing one element of a `&mut [T]`), except through atomics.
    /// 4. **Types without a record.** When the module has no ABI record for this kernel
    ///    (hand-written PTX), the PTX showed only byte sizes: the device-side element type
    ///    of each slice or pointer has the host `T`'s layout, each `Slice`/`SliceMut` is
    ///    what the kernel takes, an `OptSlice`/`OptSliceMut` is an `Option` of a slice
    ///    there (an absent one arrives as a null address, which a `#[kernel]` assumes a
    ///    plain `&[T]` or `DisjointSlice` never is), and each `Struct<T>` has the same
    ///    field order and offsets on both sides. With a record, what is opaque on either side (a nested struct, a
    ///    type whose `HasValueClass` says nothing) was compared by size only: its
    ///    contents agree on both sides.
    /// 5. **Kernel preconditions.** Anything else the kernel assumes holds: the grid
    ///    covers the elements it expects, `cfg.shared_mem_bytes` is what it uses as
    ///    dynamic shared memory, scalar arguments are in its accepted range. A kernel
    ///    whose code assumes one-dimensional (or two-dimensional) launches or aligned
    ///    slices without its module declaring so is launched accordingly. A `#[kernel(dims
    ///    = N)]` or `#[kernel(slice_align = N)]` kernel declares it in its module
    ///    (`__kernel_dims_K`, `__kernel_slice_align_K`), which the handle reads however
    ///    its signatures were made ([`launch_dims`](Self::launch_dims),
    ///    [`slice_align`](Self::slice_align)), and then the launch checks it.
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
        // SAFETY: the caller's contract, unchanged.
        unsafe { self.launch_with(stream, cfg, &LaunchAttributes::default(), args) }
    }

    /// [`launch`](Self::launch) with launch attributes (`cuLaunchKernelEx`): programmatic
    /// dependent launch, priority. With [`LaunchAttributes::default`] it is exactly
    /// `launch`.
    ///
    /// Errors: those of [`launch`](Self::launch).
    ///
    /// # Safety
    ///
    /// The obligations of [`launch`](Self::launch), and with
    /// [`programmatic_stream_serialization`](LaunchAttributes::programmatic_stream_serialization):
    /// the kernel calls `device_std::grid_dependency::wait` before it touches memory the
    /// previous kernel on `stream` writes, or that reads what it writes (the launch can
    /// start while that kernel still runs).
    #[inline]
    pub unsafe fn launch_with<'a>(
        &self,
        stream: &'a CudaStream,
        cfg: LaunchConfig,
        attrs: &LaunchAttributes,
        args: S::Args<'a>,
    ) -> Result<(), Error>
    where
        S: 'a,
    {
        let cfg = self.prepare_launch(stream, &cfg, attrs)?;
        // SAFETY: `S` was checked against this function's signature when `self` was made;
        // `cfg` was validated above against the device and the function (threads, dynamic
        // shared memory); the stream's context is the function's and is current; the
        // caller upholds the kernel's own obligations (see `# Safety`).
        let s = &*self.shared;
        unsafe { S::launch_raw(s.func, stream, &cfg, attrs, args, &s.name, s.slice_align) }.map_err(
            |e| match e {
                crate::RawLaunchError::Refused(e) => e,
                crate::RawLaunchError::Driver(source) => self.launch_error(attrs, source),
            },
        )
    }

    /// Everything [`launch_with`](Self::launch_with) checks before the driver sees the
    /// launch: [`prepare`](Self::prepare), then the cluster and cooperative checks when
    /// `attrs` asks for them. Returns the configuration to launch (the dynamic shared
    /// memory filled in, see [`prepare_config`](Self::prepare_config)).
    #[inline]
    pub(crate) fn prepare_launch(
        &self,
        stream: &CudaStream,
        cfg: &LaunchConfig,
        attrs: &LaunchAttributes,
    ) -> Result<LaunchConfig, Error> {
        let cfg = self.prepare(stream, cfg)?;
        self.prepare_attributes(stream, &cfg, attrs)?;
        Ok(cfg)
    }

    /// The cluster and cooperative checks `attrs` asks for.
    #[inline]
    fn prepare_attributes(
        &self,
        stream: &CudaStream,
        cfg: &LaunchConfig,
        attrs: &LaunchAttributes,
    ) -> Result<(), Error> {
        if let Some(cluster) = attrs.cluster() {
            self.check_cluster(stream, cfg, cluster)?;
        }
        if attrs.is_cooperative() {
            self.check_cooperative(stream, cfg)?;
        }
        Ok(())
    }

    /// The error of a launch the driver refused.
    #[cold]
    pub(crate) fn launch_error(&self, attrs: &LaunchAttributes, source: DriverError) -> Error {
        Error::Driver {
            context: format!("cuLaunchKernel(`{}`, {attrs:?})", self.shared.name),
            source,
        }
    }

    /// What every launch checks before it reaches the driver: `stream` in the kernel's
    /// context, `cfg` within the device's and the kernel's limits (raising the dynamic
    /// shared memory limit on first need), the context current. Returns the
    /// configuration to launch. Also used for graph nodes ([`crate::graph`]).
    #[inline]
    pub(crate) fn prepare(
        &self,
        stream: &CudaStream,
        cfg: &LaunchConfig,
    ) -> Result<LaunchConfig, Error> {
        if stream.context().cu_ctx() != self.shared.cu_ctx {
            return Err(self.wrong_context(stream));
        }
        let cfg = self.prepare_config(cfg)?;
        stream
            .context()
            .bind_to_thread()
            .map_err(|source| self.bind_error(source))?;
        Ok(cfg)
    }

    /// [`prepare_launch`](Self::prepare_launch) for a launch sequence on `stream`, whose
    /// context is `cu_ctx`: the same checks, but the context is made current only when
    /// `cuCtxGetCurrent` says it is not (without taking cudarc's deferred error, which a
    /// sequence takes at registration and when it ends).
    #[inline]
    pub(crate) fn prepare_in_sequence(
        &self,
        cu_ctx: sys::CUcontext,
        stream: &CudaStream,
        cfg: &LaunchConfig,
        attrs: &LaunchAttributes,
    ) -> Result<LaunchConfig, Error> {
        if cu_ctx != self.shared.cu_ctx {
            return Err(self.wrong_context(stream));
        }
        let cfg = self.prepare_config(cfg)?;
        let mut current: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: an out-pointer.
        let got = unsafe { sys::cuCtxGetCurrent(&mut current) };
        if got != sys::CUresult::CUDA_SUCCESS || current != cu_ctx {
            stream
                .context()
                .bind_to_thread()
                .map_err(|source| self.bind_error(source))?;
        }
        if attrs.cluster().is_some() || attrs.is_cooperative() {
            self.prepare_attributes(stream, &cfg, attrs)?;
        }
        Ok(cfg)
    }

    /// The configuration half of [`prepare`](Self::prepare): the dynamic shared memory
    /// the kernel declares filled in or checked ([`DynamicShared::apply`]), then `cfg`
    /// within the device's and the kernel's limits, the dynamic shared memory limit
    /// raised on first need. Returns the configuration to launch.
    #[inline]
    pub(crate) fn prepare_config(&self, cfg: &LaunchConfig) -> Result<LaunchConfig, Error> {
        let s = &*self.shared;
        let cfg = &match s.dynamic_shared {
            Some(d) => d.apply(&s.name, *cfg)?,
            None => *cfg,
        };
        // The device's limits first (a block no GPU runs is an invalid launch), then the
        // kernel's own bound, with an error of its own.
        s.limits
            .validate(cfg, u32::MAX)
            .map_err(|e| self.name_error(e))?;
        check_max_threads(&s.name, cfg, s.max_threads_per_block)?;
        if let Some(dims) = s.launch_dims {
            check_launch_dims(&s.name, cfg, dims)?;
        }
        if let Some((x, y, z)) = s.required_cluster {
            let g = cfg.grid_dim;
            #[allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV
            let whole = g.0 % x == 0 && g.1 % y == 0 && g.2 % z == 0;
            if !whole {
                return Err(invalid(
                    Some(&s.name),
                    format!(
                        "the kernel runs in clusters of ({x}, {y}, {z}) (`#[kernel(cluster = ...)]`, \
                         `.reqnctapercluster`), and grid {g:?} is not a whole number of them"
                    ),
                ));
            }
        }
        if cfg.shared_mem_bytes > s.dynamic_shared_limit.load(Ordering::Relaxed) {
            self.raise_dynamic_shared_limit(cfg.shared_mem_bytes)?;
        }
        Ok(*cfg)
    }

    /// The most blocks of `block_threads` threads with `dynamic_shared_bytes` of dynamic
    /// shared memory that can be resident at once on `stream`'s device: the largest grid
    /// of a cooperative launch ([`LaunchAttributes::cooperative`]), CUDA's
    /// `cudaOccupancyMaxActiveBlocksPerMultiprocessor` times the multiprocessor count.
    ///
    /// Errors: [`Error::Driver`] from the occupancy or attribute query.
    pub fn max_cooperative_blocks(
        &self,
        stream: &CudaStream,
        block_threads: u32,
        dynamic_shared_bytes: u32,
    ) -> Result<u32, Error> {
        use cudarc::driver::sys;
        let ctx = stream.context();
        ctx.bind_to_thread()
            .map_err(|source| self.bind_error(source))?;
        let sms = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(|source| Error::Driver {
                context: "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)".into(),
                source,
            })?;
        let mut per_sm: std::ffi::c_int = 0;
        // SAFETY: a live function of a current context; an out-parameter.
        unsafe {
            sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(
                &mut per_sm,
                self.shared.func,
                block_threads as std::ffi::c_int,
                dynamic_shared_bytes as usize,
            )
        }
        .result()
        .map_err(|source| Error::Driver {
            context: format!(
                "cuOccupancyMaxActiveBlocksPerMultiprocessor(`{}`)",
                self.shared.name
            ),
            source,
        })?;
        Ok((per_sm.max(0) as u32).saturating_mul(sms.max(0) as u32))
    }

    /// A cooperative launch's grid must be resident at once.
    pub(crate) fn check_cooperative(
        &self,
        stream: &CudaStream,
        cfg: &LaunchConfig,
    ) -> Result<(), Error> {
        let (b, g) = (cfg.block_dim, cfg.grid_dim);
        let threads = b.0 * b.1 * b.2;
        let most = self.max_cooperative_blocks(stream, threads, cfg.shared_mem_bytes)?;
        let blocks = u64::from(g.0) * u64::from(g.1) * u64::from(g.2);
        if blocks > u64::from(most) {
            return Err(invalid(
                Some(&self.shared.name),
                format!(
                    "a cooperative launch of {blocks} blocks, but at most {most} blocks of {threads} \
                     threads with {} bytes of dynamic shared memory are resident at once on this \
                     device (cuOccupancyMaxActiveBlocksPerMultiprocessor × multiprocessors); use a \
                     grid of at most {most} blocks (Kernel::max_cooperative_blocks)",
                    cfg.shared_mem_bytes
                ),
            ));
        }
        Ok(())
    }

    /// The checks [`LaunchAttributes::cluster_dim`] promises, before the driver sees the
    /// launch: each dimension at least 1 and dividing the grid's, at most 8 CTAs, compute
    /// capability 9.0 or newer, and no more CTAs than `cuOccupancyMaxPotentialClusterSize`
    /// allows for this kernel, block shape and dynamic shared memory.
    #[cold]
    #[allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV
    fn check_cluster(
        &self,
        stream: &CudaStream,
        cfg: &LaunchConfig,
        (x, y, z): (u32, u32, u32),
    ) -> Result<(), Error> {
        use cudarc::driver::sys;
        let name = Some(self.shared.name.as_str());
        let grid = cfg.grid_dim;
        if let Some(required) = self.shared.required_cluster {
            if required != (x, y, z) {
                return Err(invalid(
                    name,
                    format!(
                        "the launch asks for clusters of ({x}, {y}, {z}), but the kernel was \
                         compiled for clusters of {required:?} (`#[kernel(cluster = ...)]`, \
                         `.reqnctapercluster`); launch without a cluster attribute, or with that shape"
                    ),
                ));
            }
        }
        if x == 0 || y == 0 || z == 0 {
            return Err(invalid(
                name,
                format!("cluster ({x}, {y}, {z}) has a zero dimension"),
            ));
        }
        if grid.0 % x != 0 || grid.1 % y != 0 || grid.2 % z != 0 {
            return Err(invalid(
                name,
                format!(
                    "grid {grid:?} is not a whole number of clusters ({x}, {y}, {z}): each grid \
                     dimension must be a multiple of the cluster's"
                ),
            ));
        }
        let size = x as u64 * y as u64 * z as u64;
        if size > 8 {
            return Err(invalid(
                name,
                format!(
                    "cluster ({x}, {y}, {z}) has {size} CTAs; the portable maximum is 8 (larger \
                     clusters need CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, which \
                     host-loader does not set)"
                ),
            ));
        }
        let ctx = stream.context();
        let major = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
            .map_err(|source| Error::Driver {
                context: "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)".into(),
                source,
            })?;
        if major < 9 {
            return Err(invalid(
                name,
                format!("thread-block clusters need compute capability 9.0 or newer; this device is {major}.x"),
            ));
        }
        let mut list = LaunchAttributes::new()
            .cluster_dim(x, y, z)
            .to_driver_list();
        let config = crate::launch::driver_config(cfg, stream, &mut list);
        let mut fit: std::ffi::c_int = 0;
        // SAFETY: `config` and `list` outlive the call; the function is live and its
        // context current (`prepare` bound it).
        unsafe { sys::cuOccupancyMaxPotentialClusterSize(&mut fit, self.shared.func, &config) }
            .result()
            .map_err(|source| Error::Driver {
                context: format!("cuOccupancyMaxPotentialClusterSize(`{}`)", self.shared.name),
                source,
            })?;
        if size > fit.max(0) as u64 {
            return Err(invalid(
                name,
                format!(
                    "cluster ({x}, {y}, {z}) has {size} CTAs, but at most {fit} CTAs of this \
                     kernel with blocks {:?} and {} bytes of dynamic shared memory fit in one \
                     cluster on this device (cuOccupancyMaxPotentialClusterSize)",
                    cfg.block_dim, cfg.shared_mem_bytes
                ),
            ));
        }
        Ok(())
    }

    /// What every clone of this handle shares (the function, its module, its limits).
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// A handle of signature `S` over `shared`, which was checked against `S` when the
    /// handle it came from was made.
    pub(crate) fn from_shared(shared: Arc<Shared>) -> Self {
        Kernel {
            shared,
            _sig: PhantomData,
        }
    }

    /// Lets the kernel use `bytes` of dynamic shared memory: checks them against the
    /// device's opt-in maximum, then sets `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`.
    #[cold]
    #[inline(never)]
    fn raise_dynamic_shared_limit(&self, bytes: u32) -> Result<(), Error> {
        let s = &*self.shared;
        let max = self.max_dynamic_shared_bytes();
        if bytes > max {
            return Err(invalid(
                Some(&s.name),
                format!(
                    "{} of dynamic shared memory asked; the kernel declares {} of static \
                     shared memory and the device allows {} per block \
                     (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN), so at most {max}",
                    crate::message::bytes(u64::from(bytes)),
                    crate::message::bytes(u64::from(s.static_shared_bytes)),
                    crate::message::bytes(u64::from(s.limits.max_shared_per_block_optin))
                ),
            ));
        }
        s.module
            .ctx
            .bind_to_thread()
            .map_err(|source| self.bind_error(source))?;
        // SAFETY: `func` is live (its module is held) and its context is current; the
        // value is within the device's opt-in limit checked above.
        unsafe {
            sys::cuFuncSetAttribute(
                s.func,
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                bytes as i32,
            )
        }
        .result()
        .map_err(|source| Error::Driver {
            context: format!(
                "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, {bytes}) of `{}`",
                s.name
            ),
            source,
        })?;
        s.dynamic_shared_limit.fetch_max(bytes, Ordering::Relaxed);
        Ok(())
    }

    #[cold]
    fn wrong_context(&self, stream: &CudaStream) -> Error {
        invalid(
            Some(&self.shared.name),
            format!(
                "the stream belongs to the context of device {}, the kernel's module to the \
                 context of device {}",
                stream.context().ordinal(),
                self.shared.module.ctx.ordinal()
            ),
        )
    }

    #[cold]
    fn name_error(&self, e: Error) -> Error {
        match e {
            Error::InvalidLaunch { reason, .. } => invalid(Some(&self.shared.name), reason),
            other => other,
        }
    }

    #[cold]
    fn bind_error(&self, source: DriverError) -> Error {
        Error::Driver {
            context: format!(
                "making the context current for `{}` (cuCtxSetCurrent), or an earlier \
                 deferred stream error",
                self.shared.name
            ),
            source,
        }
    }
}
