//! Loading a module (PTX text, PTX embedded in the binary, a cubin or a fatbin) into a
//! CUDA context, with JIT options, and making typed kernel handles from it.

use std::ffi::{c_void, CString};
use std::fmt;
use std::mem::MaybeUninit;
use std::path::Path;
use std::sync::Arc;

use cudarc::driver::sys::{self, CUjit_option};
use cudarc::driver::{CudaContext, DriverError};
use ptx_linker::{EntrySignature, LinkMap};

use crate::error::Error;
use crate::kernel::Kernel;
use crate::launch::DeviceLimits;
use crate::signature::{KernelSignature, Signatures};

/// Options for the driver's PTX JIT compiler (`cuModuleLoadDataEx`). They apply to PTX
/// text only; a cubin or fatbin is loaded with `cuModuleLoadData`, without options.
///
/// ```
/// let opts = host_loader::LoadOptions::new().opt_level(3).max_registers(64);
/// assert_eq!(opts.get_max_registers(), Some(64));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadOptions {
    opt_level: Option<u32>,
    max_registers: Option<u32>,
}

impl LoadOptions {
    /// The driver's defaults: optimization level 4, no register limit.
    pub fn new() -> Self {
        Self::default()
    }

    /// `CU_JIT_OPTIMIZATION_LEVEL`: 0 (none) to 4 (the default, most). The driver does
    /// not reject larger values (driver 580.159, CUDA 13.0, accepted 9), so stay in
    /// range.
    pub fn opt_level(mut self, level: u32) -> Self {
        self.opt_level = Some(level);
        self
    }

    /// `CU_JIT_MAX_REGISTERS`: most registers per thread the JIT may use.
    pub fn max_registers(mut self, registers: u32) -> Self {
        self.max_registers = Some(registers);
        self
    }

    /// The optimization level set, if any.
    pub fn get_opt_level(&self) -> Option<u32> {
        self.opt_level
    }

    /// The register limit set, if any.
    pub fn get_max_registers(&self) -> Option<u32> {
        self.max_registers
    }
}

/// PTX (and optionally its link map) compiled into the host binary, made by
/// [`include_ptx!`](crate::include_ptx), or a multi-architecture build's fatbin with each
/// architecture's PTX and link map. Load it with [`Module::from_embedded`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmbeddedPtx {
    /// The kernel crate, e.g. `vecadd-kernels`; names the module in messages.
    pub name: &'static str,
    /// The linked PTX text (`target/ptx/<crate>.ptx`); of a fatbin build, the first
    /// architecture's.
    pub ptx: &'static str,
    /// The link map (`target/ptx/<crate>.map.json`), when it was there at compile time;
    /// of a fatbin build, the first architecture's.
    pub map: Option<&'static str>,
    /// The fatbin of a build for several architectures (`<crate>.fatbin` and its
    /// manifest), `None` for a build for one.
    pub fatbin: Option<EmbeddedFatbin>,
}

/// A multi-architecture build compiled into the host binary by
/// [`include_ptx!`](crate::include_ptx) when the folder holds `<crate>.fatbin.json`
/// (`gpu_build::BuildScript::arch("sm_80,sm_90a")`, `cargo xtask build-ptx --arch …`):
/// the fatbin, its manifest and every architecture's linked PTX and link map, so
/// [`Module::from_embedded`] checks launches against the image the device runs, as
/// [`Module::from_fatbin`] does for files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmbeddedFatbin {
    /// `<crate>.fatbin`: every architecture's cubin and PTX.
    pub image: &'static [u8],
    /// `<crate>.fatbin.json` ([`crate::fatbin::FatbinManifest`]).
    pub manifest: &'static str,
    /// Each architecture's module, in the manifest's order.
    pub archs: &'static [EmbeddedArch],
}

/// One architecture of an [`EmbeddedFatbin`]: the linked module its cubin was assembled
/// from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmbeddedArch {
    /// `sm_80`, `sm_90a`, …, as the manifest names it.
    pub arch: &'static str,
    /// `<arch>/<crate>.ptx`.
    pub ptx: &'static str,
    /// `<arch>/<crate>.map.json`.
    pub map: &'static str,
}

/// A `CUmodule` this crate loaded and unloads.
pub(crate) struct RawModule {
    pub(crate) cu: sys::CUmodule,
    pub(crate) ctx: Arc<CudaContext>,
    /// Where the signatures came from, which decides how much of the driver's view of
    /// each kernel's parameters is asked for ([`crate::param_info::cross_check`]).
    pub(crate) signatures: SignatureSource,
}

/// Where a module's signatures came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SignatureSource {
    /// The very PTX text the driver compiled: `cuFuncGetParamInfo` has nothing to add.
    LoadedText,
    /// The PTX and link map packed with a fatbin, whose manifest's hash they matched:
    /// each parameter's offset and size is cross-checked, but no parameter past the end
    /// is probed (that query fails by design, and compute-sanitizer would fail the
    /// user's program for it); the count is checked where the driver has
    /// `cuFuncGetParamCount`.
    PackedWith,
    /// Elsewhere (a cubin or fatbin with signatures the caller gives): everything.
    Elsewhere,
}

// SAFETY: a CUmodule is a driver handle, not thread-local state; the driver API may be
// called with it from any thread once its context is current, which every use here
// (function lookup, unload) ensures first.
unsafe impl Send for RawModule {}
// SAFETY: as for `Send`; nothing here mutates through `&RawModule`.
unsafe impl Sync for RawModule {}

impl Drop for RawModule {
    fn drop(&mut self) {
        // Errors cannot be returned from drop; cudarc keeps them for the context's next
        // checked call, as it does for its own modules.
        self.ctx.record_err(self.ctx.bind_to_thread());
        // SAFETY: `cu` was loaded by `load_raw` and nothing else unloads it; every
        // `Kernel` made from it holds an `Arc` to this, so no function handle outlives it.
        let res = unsafe { sys::cuModuleUnload(self.cu) }.result();
        self.ctx.record_err(res);
    }
}

/// A module loaded into a CUDA context, with what the host knows about its kernels
/// ([`Signatures`]: `.entry` parameter lists, ABI records, dynamic shared memory
/// alignments) and the device's launch limits.
///
/// Made by one of the `from_*` constructors; hands out typed kernel handles with
/// [`Module::kernel`]. The driver module is unloaded (`cuModuleUnload`) when this and
/// every [`Kernel`] made from it are dropped.
pub struct Module {
    signatures: Signatures,
    raw: Arc<RawModule>,
    limits: DeviceLimits,
}

impl fmt::Debug for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Module")
            .field("name", &self.name())
            .field(
                "kernels",
                &self
                    .signatures
                    .entries()
                    .iter()
                    .map(|e| e.name.as_str())
                    .collect::<Vec<_>>(),
            )
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// What the driver is given.
enum Image<'a> {
    /// NUL-terminated PTX text.
    Ptx(&'a CString),
    /// A cubin or fatbin.
    Binary(&'a [u8]),
}

impl Module {
    /// Reads the PTX file at `path` and loads it; see [`Module::from_ptx`]. Messages name
    /// the module by `path`.
    ///
    /// Errors: [`Error::Io`] when the file cannot be read or is not UTF-8, then those of
    /// [`Module::from_ptx`].
    pub fn from_ptx_file(ctx: &Arc<CudaContext>, path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let text = read_text(path)?;
        Self::from_ptx(ctx, &path.display().to_string(), &text)
    }

    /// Reads linked PTX and its link map (`cargo xtask build-ptx` writes
    /// `target/ptx/<crate>.ptx` and `<crate>.map.json`) and loads the PTX. Signatures and
    /// each kernel's dynamic shared memory alignment come from the map
    /// ([`Signatures::from_link_map`]), ABI records from the PTX.
    ///
    /// Errors: [`Error::Io`] when a file cannot be read; [`Error::InvalidPtx`] when the
    /// map is not a link map; then those of [`Module::from_ptx_with_signatures`].
    pub fn from_ptx_file_with_map(
        ctx: &Arc<CudaContext>,
        ptx_path: impl AsRef<Path>,
        map_path: impl AsRef<Path>,
    ) -> Result<Self, Error> {
        let (ptx_path, map_path) = (ptx_path.as_ref(), map_path.as_ref());
        let text = read_text(ptx_path)?;
        let map = parse_map(&map_path.display().to_string(), &read_text(map_path)?)?;
        let name = ptx_path.display().to_string();
        let signatures = Signatures::from_link_map(&name, &map, &text)?;
        map_matches_text(&signatures, &text)?;
        let c_text = nul_free(&name, &text)?;
        Self::load(
            ctx,
            signatures,
            Image::Ptx(&c_text),
            &LoadOptions::default(),
            SignatureSource::LoadedText,
        )
    }

    /// Reads the `.entry` signatures, ABI records and dynamic shared memory alignment of
    /// `text` ([`Signatures::parse`]) and loads it into `ctx` (`cuModuleLoadDataEx`; the
    /// driver JIT-compiles the PTX for the device). `display_name` names the module in
    /// messages.
    ///
    /// Errors: [`Error::InvalidPtx`] when `text` contains a NUL byte; [`Error::Parse`]
    /// when it does not parse; [`Error::ModuleLoad`] when the driver rejects it, with
    /// the JIT compiler's log; [`Error::Driver`] when the device limits cannot be read.
    pub fn from_ptx(ctx: &Arc<CudaContext>, display_name: &str, text: &str) -> Result<Self, Error> {
        Self::from_ptx_with_options(ctx, display_name, text, &LoadOptions::default())
    }

    /// [`Module::from_ptx`] with JIT options (optimization level, register limit).
    ///
    /// Errors: those of [`Module::from_ptx`]; a bad option value is an
    /// [`Error::ModuleLoad`] (`CUDA_ERROR_INVALID_VALUE`).
    pub fn from_ptx_with_options(
        ctx: &Arc<CudaContext>,
        display_name: &str,
        text: &str,
        options: &LoadOptions,
    ) -> Result<Self, Error> {
        let c_text = nul_free(display_name, text)?;
        let signatures = Signatures::parse(display_name, text)?;
        Self::load(
            ctx,
            signatures,
            Image::Ptx(&c_text),
            options,
            SignatureSource::LoadedText,
        )
    }

    /// Loads `text` into `ctx` like [`Module::from_ptx`], but takes the signatures from
    /// the caller (e.g. [`Signatures::from_link_map`]) instead of parsing them. Messages
    /// name the module by `signatures.module()`.
    ///
    /// The signatures must be those of `text`: a kernel missing from them cannot be
    /// fetched, and a wrong parameter list defeats the layout check (the
    /// `cuFuncGetParamInfo` cross-check in [`Module::kernel`] catches wrong sizes and
    /// offsets where the driver has it). Each kernel's `#[kernel(dims = N)]` and
    /// `#[kernel(slice_align = N)]` declarations are read from the loaded module's
    /// globals when the module is loaded, so signatures built by hand
    /// ([`Signatures::new`]) still get those launches checked.
    ///
    /// Errors: [`Error::InvalidPtx`] when `text` contains a NUL byte;
    /// [`Error::ModuleLoad`] when the driver rejects it; [`Error::Driver`].
    pub fn from_ptx_with_signatures(
        ctx: &Arc<CudaContext>,
        signatures: Signatures,
        text: &str,
    ) -> Result<Self, Error> {
        let c_text = nul_free(signatures.module(), text)?;
        Self::load(
            ctx,
            signatures,
            Image::Ptx(&c_text),
            &LoadOptions::default(),
            SignatureSource::Elsewhere,
        )
    }

    /// Loads PTX compiled into the binary by [`include_ptx!`](crate::include_ptx): with
    /// its link map when one was embedded ([`Signatures::from_link_map`]), else from the
    /// PTX alone ([`Signatures::parse`]). An embedded fatbin ([`EmbeddedPtx::fatbin`]) is
    /// loaded as [`Module::from_fatbin`] loads one from files: the driver runs the image
    /// for this device, no JIT on a device one of its cubins was built for, and the
    /// launches are checked against that image's PTX and link map.
    ///
    /// Errors: [`Error::InvalidPtx`] when the embedded map is not a link map, then those
    /// of [`Module::from_ptx`]; for a fatbin those of [`Module::from_fatbin`].
    pub fn from_embedded(ctx: &Arc<CudaContext>, embedded: &EmbeddedPtx) -> Result<Self, Error> {
        Self::from_embedded_with_options(ctx, embedded, &LoadOptions::default())
    }

    /// [`Module::from_embedded`] with JIT options.
    ///
    /// Errors: those of [`Module::from_embedded`].
    pub fn from_embedded_with_options(
        ctx: &Arc<CudaContext>,
        embedded: &EmbeddedPtx,
        options: &LoadOptions,
    ) -> Result<Self, Error> {
        let name = format!("{} (embedded)", embedded.name);
        if let Some(fatbin) = &embedded.fatbin {
            return Self::from_embedded_fatbin(ctx, &name, fatbin, options);
        }
        let c_text = nul_free(&name, embedded.ptx)?;
        let signatures = match embedded.map {
            Some(map) => {
                let map = parse_map(&format!("{} link map", embedded.name), map)?;
                let signatures = Signatures::from_link_map(&name, &map, embedded.ptx)?;
                map_matches_text(&signatures, embedded.ptx)?;
                signatures
            }
            None => Signatures::parse(&name, embedded.ptx)?,
        };
        Self::load(
            ctx,
            signatures,
            Image::Ptx(&c_text),
            options,
            SignatureSource::LoadedText,
        )
    }

    /// Loads a cubin or fatbin (`cuModuleLoadDataEx`, e.g. the output of
    /// `ptxas -arch=sm_90` or `nvcc -fatbin`). A binary image carries no PTX to read
    /// signatures from, so they come from the caller, usually the link map of the PTX the
    /// image was assembled from ([`Signatures::from_link_map`], which also carries each
    /// kernel's declared launch dimensions and slice alignment); [`Module::kernel`] cross-checks them with
    /// `cuFuncGetParamInfo` where the driver has it. Each kernel's `#[kernel(dims = N)]`
    /// and `#[kernel(slice_align = N)]` declarations are read from the image's globals
    /// when the module is loaded, so signatures built by hand
    /// ([`Signatures::new`]) still get those launches checked.
    ///
    /// Errors: [`Error::InvalidPtx`] when `image` starts with neither the ELF (cubin) nor
    /// the fatbin magic, or when a header, section or entry it names lies outside it
    /// (the driver takes no length and would read past the buffer); [`Error::ModuleLoad`] when the driver rejects it (e.g. `CUDA_ERROR_NO_BINARY_FOR_GPU` for another
    /// architecture); [`Error::Driver`].
    pub fn from_image(
        ctx: &Arc<CudaContext>,
        signatures: Signatures,
        image: &[u8],
        options: &LoadOptions,
    ) -> Result<Self, Error> {
        Self::from_image_with(ctx, signatures, image, options, SignatureSource::Elsewhere)
    }

    /// [`Module::from_image`] with signatures from `source`.
    pub(crate) fn from_image_with(
        ctx: &Arc<CudaContext>,
        signatures: Signatures,
        image: &[u8],
        options: &LoadOptions,
        source: SignatureSource,
    ) -> Result<Self, Error> {
        const ELF: [u8; 4] = *b"\x7fELF";
        const FATBIN: [u8; 4] = 0xBA55_ED50u32.to_le_bytes();
        if !(image.starts_with(&ELF) || image.starts_with(&FATBIN)) {
            return Err(Error::InvalidPtx {
                module: signatures.module().to_string(),
                reason: format!(
                    "not a cubin (ELF magic 7f 45 4c 46) or a fatbin (magic 50 ed 55 ba): the \
                     image starts with {:02x?}; load PTX text with Module::from_ptx",
                    &image[..image.len().min(4)]
                ),
            });
        }
        crate::image::check_image(image).map_err(|why| Error::InvalidPtx {
            module: signatures.module().to_string(),
            reason: format!(
                "{why}; the driver takes no length and would read past the image, so it is \
                 refused here (a truncated or corrupt cubin/fatbin: rebuild it)"
            ),
        })?;
        // The driver takes no length and reads the ELF/fatbin headers in place: give it
        // an 8-byte-aligned copy with zero padding after the image, so a reader that
        // runs past a malformed header stays inside the buffer.
        let mut words = vec![0u64; image.len() / 8 + 2];
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut words);
        bytes[..image.len()].copy_from_slice(image);
        Self::load(ctx, signatures, Image::Binary(bytes), options, source)
    }

    fn load(
        ctx: &Arc<CudaContext>,
        signatures: Signatures,
        image: Image<'_>,
        options: &LoadOptions,
        source: SignatureSource,
    ) -> Result<Self, Error> {
        ctx.bind_to_thread().map_err(|source| Error::Driver {
            context: format!(
                "making the context current to load `{}` (cuCtxSetCurrent)",
                signatures.module()
            ),
            source,
        })?;
        let cu = load_raw(image, options).map_err(|(source, jit_log)| Error::ModuleLoad {
            module: signatures.module().to_string(),
            source,
            jit_log,
        })?;
        let raw = Arc::new(RawModule {
            cu,
            ctx: ctx.clone(),
            signatures: source,
        });
        let limits = DeviceLimits::query(ctx)?;
        let module = Module {
            signatures,
            raw,
            limits,
        };
        // Signatures not read from the loaded text may lack what the kernels declare.
        match source {
            SignatureSource::Elsewhere => module.read_declarations(),
            SignatureSource::LoadedText | SignatureSource::PackedWith => Ok(module),
        }
    }

    /// The loaded driver module this handle shares with its kernels and variables.
    pub(crate) fn raw(&self) -> &Arc<RawModule> {
        &self.raw
    }

    /// The name used in messages (the path for [`Module::from_ptx_file`]).
    pub fn name(&self) -> &str {
        self.signatures.module()
    }

    /// What the host knows about every kernel of the module.
    pub fn signatures(&self) -> &Signatures {
        &self.signatures
    }

    pub(crate) fn signatures_mut(&mut self) -> &mut Signatures {
        &mut self.signatures
    }

    /// The PTX signature of kernel `name`.
    ///
    /// Errors: [`Error::NoSuchKernel`], listing the module's kernels.
    pub fn signature(&self, name: &str) -> Result<&EntrySignature, Error> {
        self.signatures.get(name)
    }

    /// The raw driver module handle, valid while `self` lives.
    pub fn cu_module(&self) -> sys::CUmodule {
        self.raw.cu
    }

    /// The context the module is loaded in.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.raw.ctx
    }

    /// The device's launch limits, read when the module was loaded.
    pub fn device_limits(&self) -> &DeviceLimits {
        &self.limits
    }

    /// A typed handle to kernel `name` with Rust signature `S`, a tuple of
    /// [`KernelParam`](crate::KernelParam)s.
    ///
    /// The checks happen here, once:
    /// 1. against the PTX `.entry`: parameter count, then each parameter's byte size,
    ///    alignment and class;
    /// 2. when the kernel has an ABI record (kernels built with `#[kernel]`): each
    ///    parameter's kind (scalar, raw pointer, `&[T]`, `DisjointSlice<T>`/`&mut [T]`,
    ///    struct), element size and value class, and a struct's field offsets, sizes and
    ///    classes (see [`ValueClass`](crate::ValueClass)). Hand-written PTX
    ///    has no record; then only step 1 applies;
    /// 3. on the GPU, where the driver has `cuFuncGetParamInfo` (CUDA 12.4+): each
    ///    parameter's byte offset and size as the loaded code has them (see
    ///    [`Kernel::param_info_checked`]).
    ///
    /// It then reads what each launch is checked against: the kernel's thread limit and
    /// static shared memory (`cuFuncGetAttribute`). No synchronous copy: a kernel can be
    /// fetched during a stream capture.
    ///
    /// Errors: [`Error::NoSuchKernel`], [`Error::ArgCount`], [`Error::LayoutMismatch`],
    /// [`Error::AbiRecord`], [`Error::AbiMismatch`], [`Error::ParamInfoMismatch`],
    /// [`Error::ParamCountMismatch`], [`Error::InvalidPtx`] for a malformed
    /// `__kernel_slice_align_K` (read from the text or, for signatures from elsewhere, at
    /// load), [`Error::Driver`].
    pub fn kernel<S: KernelSignature>(&self, name: &str) -> Result<Kernel<S>, Error> {
        let entry = self.signatures.check::<S>(name)?;
        let align = self.signatures.dynamic_shared_align(name)?;
        let dynamic = self.signatures.dynamic_shared(name)?;
        let dims = self.signatures.launch_dims(name)?;
        let slice_align = self.signatures.slice_align(name)?;
        Kernel::new(
            &self.raw,
            self.limits,
            entry,
            align,
            dynamic,
            dims,
            slice_align,
        )
    }
}

fn read_text(path: &Path) -> Result<String, Error> {
    std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.display().to_string(),
        source,
    })
}

pub(crate) fn parse_map(name: &str, text: &str) -> Result<LinkMap, Error> {
    serde_json::from_str(text).map_err(|e| Error::InvalidPtx {
        module: name.to_string(),
        reason: format!("not a ptx-linker link map: {e}"),
    })
}

/// `text` as a C string, or [`Error::InvalidPtx`] naming the first NUL byte (the driver
/// takes PTX as a NUL-terminated string).
fn nul_free(module: &str, text: &str) -> Result<CString, Error> {
    CString::new(text).map_err(|e| Error::InvalidPtx {
        module: module.to_string(),
        reason: format!(
            "PTX text contains a NUL byte at byte offset {}",
            e.nul_position()
        ),
    })
}

/// Bytes of the JIT error log buffer.
const LOG_BYTES: usize = 16 * 1024;

/// Loads `image` with `cuModuleLoadDataEx`, always with an error-log buffer so a failure
/// carries the JIT log, plus the JIT options asked for. The context must be current.
///
/// Errors: the driver's error and the log (empty when the driver wrote none).
/// Checks that a link map's kernels and parameter lists are those of the PTX text it
/// came with, so the driver, which compiles that text, has nothing to add.
///
/// Errors: [`Error::InvalidPtx`] naming the first kernel that differs, with the fix.
fn map_matches_text(signatures: &Signatures, text: &str) -> Result<(), Error> {
    let parsed = Signatures::parse(signatures.module(), text)?;
    let key = |e: &EntrySignature| (e.name.clone(), e.params.clone());
    let mut from_map: Vec<_> = signatures.entries().iter().map(key).collect();
    let mut from_text: Vec<_> = parsed.entries().iter().map(key).collect();
    from_map.sort_by(|a, b| a.0.cmp(&b.0));
    from_text.sort_by(|a, b| a.0.cmp(&b.0));
    if from_map == from_text {
        return Ok(());
    }
    let differs = from_map
        .iter()
        .zip(&from_text)
        .find(|(a, b)| a != b)
        .map_or_else(
            || "the kernel list".to_string(),
            |(a, _)| format!("kernel `{}`", a.0),
        );
    Err(Error::InvalidPtx {
        module: signatures.module().to_string(),
        reason: format!(
            "the link map does not describe this PTX ({differs} differs); the map is stale: \
             rebuild both with `cargo xtask build-ptx`"
        ),
    })
}

fn load_raw(
    image: Image<'_>,
    options: &LoadOptions,
) -> Result<sys::CUmodule, (DriverError, String)> {
    if let Image::Binary(bytes) = image {
        // A cubin or fatbin needs no JIT, so no options or log: plain cuModuleLoadData.
        let mut module = MaybeUninit::<sys::CUmodule>::uninit();
        // SAFETY: `bytes` is a cubin/fatbin image (magic checked) that outlives the
        // call; the caller made the context current.
        let res = unsafe { sys::cuModuleLoadData(module.as_mut_ptr(), bytes.as_ptr().cast()) };
        return match res.result() {
            // SAFETY: the call succeeded, so it wrote a live module handle.
            Ok(()) => Ok(unsafe { module.assume_init() }),
            Err(e) => Err((e, String::new())),
        };
    }
    let mut log = vec![0u8; LOG_BYTES];
    let mut keys = vec![
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    // Integer options travel in the pointer slot by value, as the driver API specifies.
    let mut values: Vec<*mut c_void> = vec![log.as_mut_ptr().cast(), LOG_BYTES as *mut c_void];
    if let Some(level) = options.opt_level {
        keys.push(CUjit_option::CU_JIT_OPTIMIZATION_LEVEL);
        values.push(level as usize as *mut c_void);
    }
    if let Some(regs) = options.max_registers {
        keys.push(CUjit_option::CU_JIT_MAX_REGISTERS);
        values.push(regs as usize as *mut c_void);
    }
    let data: *const c_void = match image {
        Image::Ptx(text) => text.as_ptr().cast(),
        Image::Binary(bytes) => bytes.as_ptr().cast(),
    };
    let mut module = MaybeUninit::<sys::CUmodule>::uninit();
    // SAFETY: `data` is NUL-terminated PTX or a cubin/fatbin image that outlives the call;
    // `keys` and `values` have the same length, each value is the type its key asks for
    // (a buffer pointer, or an integer by value); the log buffer is `LOG_BYTES` long and
    // outlives the call; the caller made the context current.
    let res = unsafe {
        sys::cuModuleLoadDataEx(
            module.as_mut_ptr(),
            data,
            keys.len() as u32,
            keys.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    match res.result() {
        // SAFETY: the call succeeded, so it wrote a live module handle.
        Ok(()) => Ok(unsafe { module.assume_init() }),
        Err(e) => {
            // On return the size slot holds the bytes the driver wrote.
            let written = (values[1] as usize).min(LOG_BYTES);
            let end = log[..written]
                .iter()
                .position(|&b| b == 0)
                .unwrap_or(written);
            Err((e, String::from_utf8_lossy(&log[..end]).into_owned()))
        }
    }
}
