//! Kernel signatures: tuples of [`KernelParam`]s, the check against a PTX `.entry`, and
//! the per-launch lowering of an argument tuple.

use std::ffi::c_void;

use cudarc::driver::{sys, CudaStream, LaunchConfig};
use ptx_linker::ast::{ItemKind, Module as PtxModule, Space, Variable};
use ptx_linker::diagnostic::FileId;
use ptx_linker::{EntrySignature, LinkMap};

use crate::abi_record::{
    record_symbol, AbiRecord, AbiRecordError, AbiRecordProblem, MAX_RECORD_BYTES,
};
use crate::error::Error;
use crate::launch::{DynamicShared, LaunchAttributes};
use crate::layout::{ptx_decl, LayoutMismatch, ParamLayout};
use crate::param::{HostAbi, KernelParam};
use crate::record_check::verify_record;

mod private {
    pub trait Sealed {}
}

/// The Rust signature of a kernel: a tuple of [`KernelParam`]s, `()` to 12 elements.
///
/// [`Args`](Self::Args) is the matching tuple of launch arguments, one
/// [`KernelParam::Arg`] per element: for
/// `(Slice<f32>, Slice<f32>, SliceMut<f32>, u32)` it is
/// `(&CudaSlice<f32>, &CudaSlice<f32>, &mut CudaSlice<f32>, u32)`.
///
/// Sealed: implemented for tuples only.
///
/// # Safety
///
/// [`launch_raw`](Self::launch_raw) passes one parameter per element of
/// [`LAYOUTS`](Self::LAYOUTS), in order, each with the bytes its [`KernelParam`]
/// promises.
pub unsafe trait KernelSignature: private::Sealed {
    /// The layout of each parameter, in order.
    const LAYOUTS: &'static [ParamLayout];

    /// What each parameter is on the device side (kind, element size and class, struct
    /// fields), in order; compared with the kernel's ABI record when there is one.
    const ABIS: &'static [HostAbi];

    /// The launch argument tuple.
    type Args<'a>
    where
        Self: 'a;

    /// The Rust type name of each parameter, for error messages.
    fn type_names() -> Vec<String>;

    /// Lowers `args` and calls `cuLaunchKernel` on `stream`, with no check but the slice
    /// alignment below.
    ///
    /// Each argument is lowered into a stack slot (a [`RawSlice`](crate::RawSlice) for a
    /// slice), the slots' addresses go into a fixed-size array on the stack, and the
    /// stream guards drop after the launch is enqueued, recording the reads and writes.
    ///
    /// # Safety
    ///
    /// - `func` is a live function handle whose parameters match [`Self::LAYOUTS`];
    /// - `cfg` is a launch configuration the function accepts, in the shape its
    ///   `#[kernel(dims = N)]` declares, if any;
    /// - the context owning `func` and `stream` is current on this thread;
    /// - the obligations of [`Kernel::launch`](crate::Kernel::launch) hold.
    ///
    /// `slice_align` (0 or 1: none) is the kernel's `#[kernel(slice_align = N)]`: a
    /// slice argument that does not start at a multiple of it is refused before the
    /// driver is called ([`RawLaunchError::Refused`](crate::RawLaunchError::Refused), an
    /// [`Error::InvalidLaunch`] naming `kernel`).
    unsafe fn launch_raw<'a>(
        func: sys::CUfunction,
        stream: &'a CudaStream,
        cfg: &LaunchConfig,
        attrs: &LaunchAttributes,
        args: Self::Args<'a>,
        kernel: &str,
        slice_align: u32,
    ) -> Result<(), crate::RawLaunchError>;
}

macro_rules! impl_signature {
    ($n:literal; $($T:ident $arg:ident $raw:ident $guard:ident),*) => {
        impl<$($T: KernelParam),*> private::Sealed for ($($T,)*) {}

        // SAFETY: one parameter per tuple element, in order, each lowered by its own
        // `KernelParam::lower`; the slots and guards live until after `launch_kernel`.
        unsafe impl<$($T: KernelParam),*> KernelSignature for ($($T,)*) {
            const LAYOUTS: &'static [ParamLayout] = &[$($T::LAYOUT),*];
            const ABIS: &'static [HostAbi] = &[$($T::ABI),*];

            type Args<'a> = ($($T::Arg<'a>,)*) where Self: 'a;

            fn type_names() -> Vec<String> {
                vec![$($T::type_name()),*]
            }

            #[inline(always)]
            #[allow(unused_variables, clippy::unused_unit)]
            unsafe fn launch_raw<'a>(
                func: sys::CUfunction,
                stream: &'a CudaStream,
                cfg: &LaunchConfig,
                attrs: &LaunchAttributes,
                args: Self::Args<'a>,
                kernel: &str,
                slice_align: u32,
            ) -> Result<(), crate::RawLaunchError> {
                let ($($arg,)*) = args;
                $(let ($raw, $guard) = $T::lower($arg, stream);)*
                if slice_align > 1 {
                    let starts = [$($T::slice_start(&$raw)),*];
                    crate::launch::check_slice_align(kernel, slice_align, &starts)
                        .map_err(crate::RawLaunchError::Refused)?;
                }
                let mut params: [*mut c_void; $n] =
                    [$(&$raw as *const $T::Raw as *mut c_void),*];
                // SAFETY: every pointer in `params` points at a live, initialized stack
                // slot of the size the PTX declares (caller's contract); the driver copies
                // the bytes before returning and never writes through them.
                let res = unsafe {
                    crate::launch::launch_kernel(func, stream, cfg, attrs, &mut params)
                };
                // The guards record this stream's work on each buffer's events. They must
                // drop after the launch is enqueued, never before.
                $(drop($guard);)*
                res.map_err(crate::RawLaunchError::Driver)
            }
        }
    };
}

impl_signature!(0;);
impl_signature!(1; A a ra ga);
impl_signature!(2; A a ra ga, B b rb gb);
impl_signature!(3; A a ra ga, B b rb gb, C c rc gc);
impl_signature!(4; A a ra ga, B b rb gb, C c rc gc, D d rd gd);
impl_signature!(5; A a ra ga, B b rb gb, C c rc gc, D d rd gd, E e re ge);
impl_signature!(6; A a ra ga, B b rb gb, C c rc gc, D d rd gd, E e re ge, F f rf gf);
impl_signature!(7; A a ra ga, B b rb gb, C c rc gc, D d rd gd, E e re ge, F f rf gf,
    G g rg gg);
impl_signature!(8; A a ra ga, B b rb gb, C c rc gc, D d rd gd, E e re ge, F f rf gf,
    G g rg gg, H h rh gh);
impl_signature!(9; A a ra ga, B b rb gb, C c rc gc, D d rd gd, E e re ge, F f rf gf,
    G g rg gg, H h rh gh, I i ri gi);
impl_signature!(10; A a ra ga, B b rb gb, C c rc gc, D d rd gd, E e re ge, F f rf gf,
    G g rg gg, H h rh gh, I i ri gi, J j rj gj);
impl_signature!(11; A a ra ga, B b rb gb, C c rc gc, D d rd gd, E e re ge, F f rf gf,
    G g rg gg, H h rh gh, I i ri gi, J j rj gj, K k rk gk);
impl_signature!(12; A a ra ga, B b rb gb, C c rc gc, D d rd gd, E e re ge, F f rf gf,
    G g rg gg, H h rh gh, I i ri gi, J j rj gj, K k rk gk, L l rl gl);

/// Checks the Rust signature `S` against a PTX `.entry` signature. Needs no GPU.
///
/// This is the PTX-only verdict (no ABI record): see [`check_signature_with_record`].
///
/// Errors: [`Error::ArgCount`] when the parameter counts differ (checked first), else
/// [`Error::LayoutMismatch`] for the first parameter whose layout the PTX does not accept
/// (see [`ParamLayout::accepts`]).
pub fn check_signature<S: KernelSignature>(entry: &EntrySignature) -> Result<(), Error> {
    verify(entry, None, S::LAYOUTS, &|| S::type_names())
}

/// Checks the Rust signature `S` against a PTX `.entry` signature and then against the
/// kernel's ABI record. Needs no GPU. `module` names the module in messages.
///
/// Errors: those of [`check_signature`], then [`Error::AbiRecord`] when the record
/// contradicts the `.entry`, then [`Error::AbiMismatch`] for the first parameter whose
/// kind (scalar, pointer, slice, writable slice, struct), element size, element value
/// class or struct fields (offset, size, class) differ.
pub fn check_signature_with_record<S: KernelSignature>(
    module: &str,
    entry: &EntrySignature,
    record: &AbiRecord,
) -> Result<(), Error> {
    verify(entry, Some(module), S::LAYOUTS, &|| S::type_names())?;
    Ok(verify_record(entry, module, record, S::ABIS, &|| {
        S::type_names()
    })?)
}

/// Checks a list of Rust parameter layouts against a PTX `.entry` signature. Needs no GPU.
///
/// The same verdict as [`check_signature`], for callers that have layouts rather than
/// types; errors describe each Rust argument by its class ("integer", "aggregate", …).
pub fn verify_layouts(entry: &EntrySignature, layouts: &[ParamLayout]) -> Result<(), Error> {
    verify(entry, None, layouts, &|| {
        layouts.iter().map(|l| l.class_name().to_string()).collect()
    })
}

pub(crate) fn verify(
    entry: &EntrySignature,
    module: Option<&str>,
    layouts: &[ParamLayout],
    names: &dyn Fn() -> Vec<String>,
) -> Result<(), Error> {
    if entry.params.len() != layouts.len() {
        let names = names();
        let rust_signature = if names.len() == 1 {
            format!("({},)", names[0])
        } else {
            format!("({})", names.join(", "))
        };
        return Err(Error::ArgCount {
            module: module.map(str::to_string),
            line: entry.line,
            kernel: entry.name.clone(),
            expected: entry.params.len(),
            found: layouts.len(),
            rust_signature,
        });
    }
    for (index, (param, rust)) in entry.params.iter().zip(layouts).enumerate() {
        let expected = ParamLayout::from_ptx(param);
        if !expected.accepts(rust) {
            return Err(Error::LayoutMismatch(Box::new(LayoutMismatch {
                module: module.map(str::to_string),
                line: entry.line,
                kernel: entry.name.clone(),
                param_index: index,
                param_name: param.name.clone(),
                expected,
                found: *rust,
                ptx_decl: ptx_decl(param),
                rust_type: names().swap_remove(index),
            })));
        }
    }
    Ok(())
}

/// What a module says about one kernel besides its `.entry` line.
#[derive(Debug, Clone, Default, PartialEq)]
struct KernelFacts {
    /// The ABI record: `None` without one, `Some(Err)` when it cannot be used.
    record: Option<Result<AbiRecord, AbiRecordProblem>>,
    /// Alignment in bytes of the kernel's dynamic shared memory, when it declares any.
    dynamic_shared_align: Option<u32>,
    /// The dynamic shared memory `#[kernel(dynamic_shared = ...)]` declares.
    dynamic_shared: Option<DynamicShared>,
    /// The launch dimensions `#[kernel(dims = N)]` declares, 1 or 2.
    launch_dims: Option<u32>,
    /// The slice alignment `#[kernel(slice_align = N)]` declares, in bytes.
    slice_align: Option<u32>,
    /// Why `__kernel_slice_align_K` could not be read, when it is there but malformed:
    /// the kernel is refused rather than launched unchecked.
    slice_align_error: Option<String>,
}

/// What the host knows about one module's kernels without a GPU: every `.entry`
/// signature, each kernel's ABI record (when `#[kernel]` emitted one) and the alignment of
/// its dynamic shared memory. [`Module`](crate::Module) keeps one of these.
#[derive(Debug, Clone)]
pub struct Signatures {
    module: String,
    entries: Vec<EntrySignature>,
    facts: Vec<KernelFacts>,
    vars: Option<ModuleVars>,
    /// For a fatbin's module: the image the device runs and the other images' kernels.
    other_images: Option<(String, OtherImages)>,
}

/// The other images of a fatbin: (architecture, kernels) each.
type OtherImages = Vec<(String, Vec<String>)>;

/// The module-scope variables a PTX text defines and the module-variable records among
/// them (`__const_abi_NAME`, `__global_abi_NAME`; `device_std::module_var`), so that
/// `Module::constant`/`Module::global` ask the driver only for what exists.
#[derive(Debug, Clone, Default)]
pub(crate) struct ModuleVars {
    /// Every defined variable's name.
    pub(crate) names: std::collections::HashSet<String>,
    /// Record symbol → its words (little-endian `u32`s).
    pub(crate) records: std::collections::HashMap<String, Vec<u32>>,
}

impl ModuleVars {
    fn read(module: &str, text: &str, parsed: &PtxModule<'_>) -> Self {
        use device_std::module_var::{CONST_RECORD_PREFIX, GLOBAL_RECORD_PREFIX};
        let mut vars = ModuleVars::default();
        for item in &parsed.items {
            let ItemKind::Variable(v) = &item.kind else {
                continue;
            };
            if !item.is_definition() {
                continue;
            }
            let name = v.symbol();
            vars.names.insert(name.to_string());
            let is_record =
                name.starts_with(CONST_RECORD_PREFIX) || name.starts_with(GLOBAL_RECORD_PREFIX);
            // A record is 24 bytes; anything much longer is not one (and is not read).
            if is_record && declared_bytes(v) <= 64 {
                if let Ok(Some(bytes)) =
                    ptx_linker::global_initializer_parsed(module, text, parsed, name)
                {
                    let words = bytes
                        .chunks_exact(4)
                        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
                        .collect();
                    vars.records.insert(name.to_string(), words);
                }
            }
        }
        vars
    }
}

impl Signatures {
    /// Reads every `.entry` signature of `text` with [`ptx_linker::entry_signatures`],
    /// each kernel `K`'s ABI record from the initializer of `__kernel_abi_K`
    /// ([`ptx_linker::global_initializer`]), and the dynamic shared memory alignment.
    /// `module` is the name used in messages (usually the file path).
    ///
    /// Without a link map the loader cannot tell which kernel uses which dynamic shared
    /// array, so every kernel gets the largest `.align` of any `.extern .shared` array
    /// (`NAME[]`) the module declares; [`Signatures::from_link_map`] is per kernel.
    ///
    /// A record that cannot be read does not fail here: it fails
    /// [`check`](Self::check) for its kernel only. A record declared longer than
    /// [`MAX_RECORD_BYTES`] (`.b8 __kernel_abi_K[17179869184]`) is
    /// [`AbiRecordError::TooLong`] without its bytes being read.
    ///
    /// Errors: [`Error::Parse`] when the PTX does not parse.
    pub fn parse(module: &str, text: &str) -> Result<Self, Error> {
        let parsed = ptx_linker::parse::parse(FileId(0), text);
        let entries = ptx_linker::entry_signatures_parsed(module, text, &parsed)?;
        let dynamic_shared_align = module_dynamic_shared_align(&parsed);
        let vars = ModuleVars::read(module, text, &parsed);
        let facts = entries
            .iter()
            .map(|e| {
                let (slice_align, slice_align_error) = read_slice_align(text, &parsed, &e.name);
                KernelFacts {
                    record: read_record(module, text, &parsed, &record_symbol(&e.name)),
                    dynamic_shared_align,
                    dynamic_shared: read_dynamic_shared(module, text, &parsed, &e.name),
                    launch_dims: read_launch_dims(text, &parsed, &e.name),
                    slice_align,
                    slice_align_error,
                }
            })
            .collect();
        Ok(Signatures {
            module: module.to_string(),
            entries,
            facts,
            vars: Some(vars),
            other_images: None,
        })
    }

    /// The kernels of a link map (`<crate>.map.json`, written by `cargo xtask build-ptx`
    /// next to `<crate>.ptx`): signatures, dynamic shared memory alignment and declared
    /// size from the map, ABI records read from `text`, the linked PTX the map describes.
    ///
    /// A kernel's launch dimensions (`#[kernel(dims = N)]`) come from the map and from
    /// `__kernel_dims_K` in `text`; when both have one, the stricter (the smaller `N`)
    /// holds, so a stale map cannot allow launches the folded code does not expect. Its
    /// slice alignment (`#[kernel(slice_align = N)]`) comes from `__kernel_slice_align_K`
    /// in `text`, like its ABI record.
    ///
    /// Errors: [`Error::InvalidPtx`] when the map gives a kernel launch dimensions other
    /// than 1 or 2 (no link writes them). A record that cannot be read (or is declared
    /// longer than [`MAX_RECORD_BYTES`]) fails [`check`](Self::check) for its kernel.
    pub fn from_link_map(module: &str, map: &LinkMap, text: &str) -> Result<Self, Error> {
        let parsed = ptx_linker::parse::parse(FileId(0), text);
        let vars = ModuleVars::read(module, text, &parsed);
        let mut entries = Vec::with_capacity(map.kernels.len());
        let mut facts = Vec::with_capacity(map.kernels.len());
        for k in &map.kernels {
            entries.push(EntrySignature {
                name: k.name.clone(),
                line: 0,
                params: k.params.clone(),
            });
            let (slice_align, slice_align_error) = read_slice_align(text, &parsed, &k.name);
            facts.push(KernelFacts {
                record: k
                    .abi_record
                    .as_deref()
                    .and_then(|sym| read_record(module, text, &parsed, sym)),
                dynamic_shared_align: k.dynamic_shared_align,
                // Maps written before the field existed carry no declaration: read it.
                dynamic_shared: k
                    .dynamic_shared
                    .map(DynamicShared::from)
                    .or_else(|| read_dynamic_shared(module, text, &parsed, &k.name)),
                launch_dims: map_launch_dims(module, k, text, &parsed)?,
                slice_align,
                slice_align_error,
            });
        }
        Ok(Signatures {
            module: module.to_string(),
            entries,
            facts,
            vars: Some(vars),
            other_images: None,
        })
    }

    /// Wraps signatures obtained elsewhere, without ABI records or dynamic shared memory
    /// alignments (add them with [`with_record`](Self::with_record) and
    /// [`with_dynamic_shared_align`](Self::with_dynamic_shared_align)), and without the
    /// dynamic shared memory a kernel declares.
    ///
    /// A kernel's `#[kernel(dims = N)]` and `#[kernel(slice_align = N)]` declarations are
    /// read back from the loaded module's globals when it is loaded ([`Module::from_ptx_with_signatures`](crate::Module::from_ptx_with_signatures),
    /// [`Module::from_image`](crate::Module::from_image)), so the launches are checked
    /// without [`with_launch_dims`](Self::with_launch_dims) or
    /// [`with_slice_align`](Self::with_slice_align); a value given here that is stricter
    /// holds. Prefer [`from_link_map`](Self::from_link_map), which knows the rest.
    pub fn new(module: impl Into<String>, entries: Vec<EntrySignature>) -> Self {
        let facts = vec![KernelFacts::default(); entries.len()];
        Signatures {
            module: module.into(),
            entries,
            facts,
            vars: None,
            other_images: None,
        }
    }

    /// Sets kernel `kernel`'s ABI record (e.g. one parsed from elsewhere). Does nothing
    /// when the module has no such kernel.
    pub fn with_record(mut self, kernel: &str, record: AbiRecord) -> Self {
        if let Some(i) = self.index(kernel) {
            self.facts[i].record = Some(Ok(record));
        }
        self
    }

    /// Sets the alignment in bytes of kernel `kernel`'s dynamic shared memory. Does
    /// nothing when the module has no such kernel.
    pub fn with_dynamic_shared_align(mut self, kernel: &str, align: Option<u32>) -> Self {
        if let Some(i) = self.index(kernel) {
            self.facts[i].dynamic_shared_align = align;
        }
        self
    }

    /// Sets the launch dimensions kernel `kernel` declares (`#[kernel(dims = N)]`, the
    /// link map's `launch_dims`): with 1 or 2, every launch whose grid or block has an
    /// extent other than 1 past the first `N` dimensions is refused
    /// ([`Error::InvalidLaunch`]); `None`, or any other value (three dimensions
    /// constrain nothing), declares none. Does nothing when the module has no such
    /// kernel.
    pub fn with_launch_dims(mut self, kernel: &str, dims: Option<u32>) -> Self {
        if let Some(i) = self.index(kernel) {
            self.facts[i].launch_dims = dims.filter(|&d| crate::declared::valid_launch_dims(d));
        }
        self
    }

    /// Declarations read from a loaded image (`crate::declared`): each the stricter of it
    /// and what is known; a malformed slice alignment refuses the kernel.
    pub(crate) fn add_declarations(
        &mut self,
        kernel: &str,
        dims: Option<u32>,
        align: Result<Option<u32>, String>,
    ) {
        let Some(i) = self.index(kernel) else {
            return;
        };
        let facts = &mut self.facts[i];
        facts.launch_dims = crate::declared::stricter_dims(facts.launch_dims, dims);
        match align {
            Ok(align) => {
                facts.slice_align = crate::declared::stricter_align(facts.slice_align, align)
            }
            Err(reason) => facts.slice_align_error = Some(reason),
        }
    }

    /// Declares that kernel `name` assumes every slice argument starts at a multiple of
    /// `align` bytes (`#[kernel(slice_align = N)]`), for signatures built by hand: every
    /// launch with a slice starting elsewhere is then refused ([`Error::InvalidLaunch`]).
    /// `None`, or a value that is not a power of two from 2 to 256, adds nothing. A
    /// declaration already known (read from the PTX) is never weakened: the larger of
    /// the two holds. Does nothing when the module has no such kernel.
    pub fn with_slice_align(mut self, kernel: &str, align: Option<u32>) -> Self {
        let align = align.filter(|&n| crate::declared::valid_slice_align(n));
        if let Some(i) = self.index(kernel) {
            let known = self.facts[i].slice_align;
            self.facts[i].slice_align = crate::declared::stricter_align(known, align);
        }
        self
    }

    /// The module-scope variables, when the signatures were read from PTX text.
    pub(crate) fn module_vars(&self) -> Option<&ModuleVars> {
        self.vars.as_ref()
    }

    /// The module's display name.
    pub fn module(&self) -> &str {
        &self.module
    }

    /// Every `.entry`, in file order.
    pub fn entries(&self) -> &[EntrySignature] {
        &self.entries
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.entries.iter().position(|e| e.name == name)
    }

    /// Records that these signatures are the `device_arch` image of a fatbin whose
    /// other images (architecture, kernels) are `others`, so that a kernel only they
    /// have is reported as [`Error::KernelNotForDevice`].
    pub(crate) fn with_other_images(mut self, device_arch: String, others: OtherImages) -> Self {
        self.other_images = Some((device_arch, others));
        self
    }

    fn find(&self, name: &str) -> Result<usize, Error> {
        if let (None, Some((device_arch, others))) = (self.index(name), &self.other_images) {
            let built_for: Vec<String> = others
                .iter()
                .filter(|(_, kernels)| kernels.iter().any(|k| k == name))
                .map(|(arch, _)| arch.clone())
                .collect();
            if !built_for.is_empty() {
                return Err(Error::KernelNotForDevice {
                    module: self.module.clone(),
                    name: name.to_string(),
                    device_arch: device_arch.clone(),
                    built_for,
                });
            }
        }
        self.index(name).ok_or_else(|| Error::NoSuchKernel {
            module: self.module.clone(),
            name: name.to_string(),
            available: self.entries.iter().map(|e| e.name.clone()).collect(),
        })
    }

    /// The signature of the kernel `name`.
    ///
    /// Errors: [`Error::NoSuchKernel`], listing the module's kernels.
    pub fn get(&self, name: &str) -> Result<&EntrySignature, Error> {
        self.find(name).map(|i| &self.entries[i])
    }

    /// Kernel `name`'s ABI record: `Ok(None)` when the module has none for it
    /// (hand-written PTX, or kernels not built with `#[kernel]`).
    ///
    /// Errors: [`Error::NoSuchKernel`]; [`Error::AbiRecord`] when the record exists but
    /// cannot be read.
    pub fn record(&self, name: &str) -> Result<Option<&AbiRecord>, Error> {
        let i = self.find(name)?;
        match &self.facts[i].record {
            None => Ok(None),
            Some(Ok(r)) => Ok(Some(r)),
            Some(Err(problem)) => Err(Error::AbiRecord {
                module: self.module.clone(),
                kernel: name.to_string(),
                problem: problem.clone(),
            }),
        }
    }

    /// Alignment in bytes the kernel `name` declares for its dynamic shared memory
    /// (`.extern .shared .align A .b8 NAME[]`), `None` when it declares none. See
    /// [`Signatures::parse`] for how precise this is without a link map.
    ///
    /// Errors: [`Error::NoSuchKernel`].
    pub fn dynamic_shared_align(&self, name: &str) -> Result<Option<u32>, Error> {
        self.find(name).map(|i| self.facts[i].dynamic_shared_align)
    }

    /// The dynamic shared memory kernel `name` declares (`#[kernel(dynamic_shared = N,
    /// dynamic_shared_per_thread = M)]`, read from `__kernel_dynamic_shared_NAME`), if any.
    ///
    /// Errors: [`Error::NoSuchKernel`].
    pub fn dynamic_shared(&self, name: &str) -> Result<Option<DynamicShared>, Error> {
        self.find(name).map(|i| self.facts[i].dynamic_shared)
    }

    /// The launch dimensions kernel `name` declares (`#[kernel(dims = N)]`, read from
    /// `__kernel_dims_NAME`), 1 or 2, if any: every launch's grid and block extents past
    /// the first `N` must be 1.
    ///
    /// Errors: [`Error::NoSuchKernel`].
    pub fn launch_dims(&self, name: &str) -> Result<Option<u32>, Error> {
        self.find(name).map(|i| self.facts[i].launch_dims)
    }

    /// The alignment kernel `name` declares for its slice parameters
    /// (`#[kernel(slice_align = N)]`, read from `__kernel_slice_align_NAME`), in bytes, if
    /// any: every launch's slice arguments must start at a multiple of it.
    ///
    /// Errors: [`Error::NoSuchKernel`]; [`Error::InvalidPtx`] when the module has the
    /// variable but not as `#[kernel]` writes it (4 bytes holding a power of two from 2
    /// to 256): the kernel's code may assume an alignment this loader cannot check.
    pub fn slice_align(&self, name: &str) -> Result<Option<u32>, Error> {
        let i = self.find(name)?;
        match &self.facts[i].slice_align_error {
            Some(reason) => Err(Error::InvalidPtx {
                module: self.module.clone(),
                reason: reason.clone(),
            }),
            None => Ok(self.facts[i].slice_align),
        }
    }

    /// Checks the Rust signature `S` against the kernel `name`; returns its PTX
    /// signature when they agree.
    ///
    /// First against the PTX `.entry` (count, then each parameter's size, alignment and
    /// class), then, when the module has the kernel's ABI record, against the record
    /// (each parameter's kind, element size and value class, and struct fields with their
    /// classes). Without a record, slices and writable slices, element types and struct
    /// field orders are not checked: the PTX cannot tell them apart.
    ///
    /// Errors: [`Error::NoSuchKernel`], [`Error::ArgCount`], [`Error::LayoutMismatch`],
    /// [`Error::AbiRecord`], [`Error::AbiMismatch`] (naming this module and, when known,
    /// the `.entry` line).
    pub fn check<S: KernelSignature>(&self, name: &str) -> Result<&EntrySignature, Error> {
        let i = self.find(name)?;
        let entry = &self.entries[i];
        verify(entry, Some(&self.module), S::LAYOUTS, &|| S::type_names())?;
        if let Some(record) = self.record(name)? {
            verify_record(entry, &self.module, record, S::ABIS, &|| S::type_names())?;
        }
        Ok(entry)
    }
}

/// The `[bytes, bytes per thread]` of `__kernel_dynamic_shared_<kernel>` when the module
/// defines it with exactly those 8 bytes; anything else is no declaration.
fn read_dynamic_shared(
    module: &str,
    text: &str,
    parsed: &PtxModule<'_>,
    kernel: &str,
) -> Option<DynamicShared> {
    let symbol = format!("{}{kernel}", device_std::abi::DYNAMIC_SHARED_PREFIX);
    definition(parsed, &symbol).filter(|v| declared_bytes(v) == 8)?;
    let init = ptx_linker::global_initializer_parsed(module, text, parsed, &symbol).ok()??;
    ptx_linker::DeclaredDynamicShared::from_le_bytes(&init).map(DynamicShared::from)
}

/// The `N` of `__kernel_dims_<kernel>` when the module defines it with exactly 4 bytes
/// holding 1 or 2; anything else is no declaration (ptx-linker refuses such a variable,
/// so no entry it linked was folded for one). Reads the initializer from `parsed`
/// (`text`'s parse) without parsing `text` again: a module with many kernels is read once.
fn read_launch_dims(text: &str, parsed: &PtxModule<'_>, kernel: &str) -> Option<u32> {
    let symbol = format!(
        "{}{kernel}",
        ptx_linker::entry_directives::LAUNCH_DIMS_PREFIX
    );
    let var = definition(parsed, &symbol).filter(|v| declared_bytes(v) == 4)?;
    let init = ptx_linker::init::initializer_bytes(FileId(0), text, var).ok()?;
    let dims = u32::from_le_bytes(init.as_slice().try_into().ok()?);
    crate::declared::valid_launch_dims(dims).then_some(dims)
}

/// The `N` of `__kernel_slice_align_<kernel>`, and why it could not be read: `(None,
/// None)` when the module has no such variable; `(None, Some(reason))` when it has one
/// that is not 4 bytes holding a power of two from 2 to 256 (a kernel whose code may
/// assume an alignment that cannot be read must not be launched unchecked).
fn read_slice_align(
    text: &str,
    parsed: &PtxModule<'_>,
    kernel: &str,
) -> (Option<u32>, Option<String>) {
    let symbol = format!("{}{kernel}", device_std::abi::SLICE_ALIGN_PREFIX);
    let Some(var) = definition(parsed, &symbol) else {
        return (None, None);
    };
    let n = (declared_bytes(var) == 4)
        .then(|| ptx_linker::init::initializer_bytes(FileId(0), text, var).ok())
        .flatten()
        .and_then(|init| Some(u32::from_le_bytes(init.as_slice().try_into().ok()?)));
    match n {
        Some(n) if crate::declared::valid_slice_align(n) => (Some(n), None),
        Some(n) => (
            None,
            Some(crate::declared::malformed_slice_align(
                kernel,
                &n.to_string(),
            )),
        ),
        None => (
            None,
            Some(crate::declared::malformed_slice_align(
                kernel,
                &match declared_bytes(var) {
                    4 => "no value".to_string(),
                    bytes => format!("{bytes} bytes"),
                },
            )),
        ),
    }
}

/// Kernel `k`'s launch dimensions from its link map entry and from `text` (`parsed`):
/// the stricter of the two when both have one.
///
/// Errors: [`Error::InvalidPtx`] when the map gives a value other than 1 or 2.
fn map_launch_dims(
    module: &str,
    k: &ptx_linker::KernelInfo,
    text: &str,
    parsed: &PtxModule<'_>,
) -> Result<Option<u32>, Error> {
    if let Some(dims) = k
        .launch_dims
        .filter(|&d| !crate::declared::valid_launch_dims(d))
    {
        return Err(Error::InvalidPtx {
            module: module.to_string(),
            reason: format!(
                "the link map gives kernel `{}` launch_dims {dims}, but launch dimensions are \
                 1 or 2 (`#[kernel(dims = N)]`); the map was not written by ptx-linker or was \
                 edited: rebuild it with `cargo xtask build-ptx`",
                k.name
            ),
        });
    }
    let in_text = read_launch_dims(text, parsed, &k.name);
    Ok(crate::declared::stricter_dims(k.launch_dims, in_text))
}

/// Reads and parses the record in variable `symbol` of `text` (`parsed` is its parse);
/// `None` when the module has no such variable.
///
/// A variable declared longer than [`MAX_RECORD_BYTES`] is refused from its declaration
/// alone, before [`ptx_linker::global_initializer`] is asked for its bytes: that call pads
/// the initializer with zeros up to the declared length, so a declared
/// `.b8 __kernel_abi_K[17179869184]` would allocate 16 GiB.
fn read_record(
    module: &str,
    text: &str,
    parsed: &PtxModule<'_>,
    symbol: &str,
) -> Option<Result<AbiRecord, AbiRecordProblem>> {
    let declared = definition(parsed, symbol).map(declared_bytes);
    if let Some(len) = declared.filter(|&len| len > MAX_RECORD_BYTES) {
        return Some(Err(AbiRecordProblem::from(AbiRecordError::TooLong { len })));
    }
    match ptx_linker::global_initializer_parsed(module, text, parsed, symbol) {
        Ok(None) => None,
        Ok(Some(bytes)) => Some(AbiRecord::parse(&bytes).map_err(AbiRecordProblem::from)),
        Err(e) => Some(Err(AbiRecordProblem::Unreadable(e.to_string()))),
    }
}

/// The first definition of module-scope variable `symbol` in `parsed` (an `.extern`
/// declaration is not one), as `ptx_linker::global_initializer` finds it.
fn definition<'m, 'src>(parsed: &'m PtxModule<'src>, symbol: &str) -> Option<&'m Variable<'src>> {
    parsed.items.iter().find_map(|item| match &item.kind {
        ItemKind::Variable(v) if item.is_definition() && v.symbol() == symbol => Some(v),
        _ => None,
    })
}

/// The bytes variable `v` declares: element size times element count, an unsized `[]`
/// dimension counting its initializer (0 without one), a zero dimension making it 0, as
/// `ptx_linker` counts them, but computed here with checked arithmetic so that a
/// declaration such as `.b8 x[4294967296][4294967296]` cannot overflow: it is `u64::MAX`.
fn declared_bytes(v: &Variable<'_>) -> u64 {
    let known: Vec<u64> = v.dims.iter().flatten().copied().collect();
    let product = if known.contains(&0) {
        Some(0)
    } else {
        known.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d))
    };
    let elems = if v.dims.iter().any(Option::is_none) {
        match v.init_len {
            Some(n) => product.map(|k| n.max(k)),
            None => Some(0),
        }
    } else {
        product
    };
    elems
        .and_then(|n| n.checked_mul(v.elem_size()))
        .unwrap_or(u64::MAX)
}

/// The largest alignment in bytes of the module-scope dynamic shared arrays
/// (`.shared` with an unsized dimension) `module` declares, `None` without any. A
/// declaration without `.align` has its element's natural alignment (PTX ISA 9.0,
/// section 5.4.5 "Alignment").
fn module_dynamic_shared_align(module: &PtxModule<'_>) -> Option<u32> {
    module
        .items
        .iter()
        .filter_map(|item| match &item.kind {
            ItemKind::Variable(v)
                if v.space == Space::Shared && v.dims.iter().any(Option::is_none) =>
            {
                Some(v.align.unwrap_or_else(|| v.elem_size() as u32))
            }
            _ => None,
        })
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `declared_bytes` of the first variable of `decl` (a module-scope declaration), with
    /// its dimensions replaced by `dims` when given.
    fn declared(decl: &str, dims: Option<Vec<Option<u64>>>) -> u64 {
        let text = format!(".version 7.8\n.target sm_90\n.address_size 64\n{decl}\n");
        let mut module = ptx_linker::parse::parse(FileId(0), &text);
        let item = module
            .items
            .iter_mut()
            .find(|i| matches!(i.kind, ItemKind::Variable(_)))
            .expect("a variable");
        let ItemKind::Variable(v) = &mut item.kind else {
            unreachable!()
        };
        if let Some(dims) = dims {
            v.dims = dims;
        }
        declared_bytes(v)
    }

    #[test]
    fn slice_align_is_read_from_its_variable_and_checked() {
        let ptx = |init: &str, size: u32| {
            format!(
                ".version 7.8\n.target sm_90\n.address_size 64\n\
                 .visible .global .align 4 .b8 __kernel_slice_align_k[{size}] = {{{init}}};\n\
                 .visible .entry k(.param .u64 k_param_0)\n{{\n\tret;\n}}\n"
            )
        };
        let read = |text: &str| {
            let sigs = Signatures::parse("m.ptx", text).unwrap();
            sigs.slice_align("k").unwrap()
        };
        assert_eq!(read(&ptx("16, 0, 0, 0", 4)), Some(16));
        assert_eq!(read(&ptx("0, 1, 0, 0", 4)), Some(256));
        // Not a power of two from 2 to 256, or not 4 bytes: the kernel is refused.
        for (init, size) in [
            ("12, 0, 0, 0", 4),
            ("0, 2, 0, 0", 4),
            ("1, 0, 0, 0", 4),
            ("16, 0", 2),
        ] {
            let sigs = Signatures::parse("m.ptx", &ptx(init, size)).unwrap();
            let err = sigs.slice_align("k").unwrap_err().to_string();
            assert!(
                err.contains("__kernel_slice_align_k"),
                "{init} / {size}: {err}"
            );
        }
        let sigs = Signatures::parse("m.ptx", &ptx("16, 0, 0, 0", 4)).unwrap();
        // Never weakened: the larger holds; an invalid value or none adds nothing.
        let got = |s: Signatures| s.slice_align("k").unwrap();
        assert_eq!(got(sigs.clone().with_slice_align("k", Some(8))), Some(16));
        assert_eq!(got(sigs.clone().with_slice_align("k", Some(64))), Some(64));
        assert_eq!(got(sigs.clone().with_slice_align("k", Some(3))), Some(16));
        assert_eq!(got(sigs.with_slice_align("k", None)), Some(16));
    }

    /// The PTX-text reader and the loaded-image reader (`crate::declared`) accept and
    /// refuse the same 4-byte values with the same message.
    #[test]
    fn text_and_image_read_slice_align_alike() {
        for n in [0u32, 1, 2, 3, 12, 16, 24, 256, 512, 4096] {
            let b = n.to_le_bytes();
            let text = format!(
                ".version 7.8\n.target sm_90\n.address_size 64\n\
                 .visible .global .align 4 .b8 __kernel_slice_align_k[4] = {{{}, {}, {}, {}}};\n\
                 .visible .entry k(.param .u64 k_param_0)\n{{\n\tret;\n}}\n",
                b[0], b[1], b[2], b[3]
            );
            let from_text = Signatures::parse("m.ptx", &text)
                .unwrap()
                .slice_align("k")
                .map_err(|e| match e {
                    Error::InvalidPtx { reason, .. } => reason,
                    other => panic!("{other}"),
                });
            let from_image = crate::declared::image_slice_align("k", 4, n).map(Some);
            assert_eq!(from_text, from_image, "n = {n}");
        }
    }

    /// Declarations read from an image tighten, never loosen, what the signatures know;
    /// a malformed alignment refuses the kernel.
    #[test]
    fn image_declarations_are_added_strictly() {
        let ptx = ".version 7.8\n.target sm_90\n.address_size 64\n\
                   .visible .entry k(.param .u64 k_param_0)\n{\n\tret;\n}\n";
        let bare = Signatures::new(
            "hand",
            Signatures::parse("m.ptx", ptx).unwrap().entries().to_vec(),
        );
        let mut s = bare
            .clone()
            .with_launch_dims("k", Some(2))
            .with_slice_align("k", Some(64));
        s.add_declarations("k", Some(1), Ok(Some(16)));
        assert_eq!(s.launch_dims("k").unwrap(), Some(1));
        assert_eq!(s.slice_align("k").unwrap(), Some(64));
        let mut s = bare.clone();
        s.add_declarations("k", None, Ok(Some(16)));
        assert_eq!(
            (s.launch_dims("k").unwrap(), s.slice_align("k").unwrap()),
            (None, Some(16))
        );
        let mut s = bare.clone();
        s.add_declarations("k", None, Err("bad".into()));
        assert!(s.slice_align("k").is_err());
        let mut s = bare;
        s.add_declarations("other", Some(1), Err("bad".into()));
        assert_eq!(
            (s.launch_dims("k").unwrap(), s.slice_align("k").unwrap()),
            (None, None)
        );
    }

    #[test]
    fn declared_sizes_never_overflow() {
        let g = ".visible .global .align 4 .b8 r[16] = {1, 2};";
        assert_eq!(declared(g, None), 16);
        assert_eq!(declared(".global .u32 w[3][5];", None), 60);
        assert_eq!(declared(".global .v4 .f32 v[2];", None), 32);
        assert_eq!(declared(".global .b8 u[] = {1, 2, 3};", None), 3);
        assert_eq!(declared(g, Some(vec![Some(1 << 34)])), 1 << 34);
        // 2^32 × 2^32 elements, and 2^62 elements of 4 bytes: past u64, saturated.
        assert_eq!(
            declared(g, Some(vec![Some(1 << 32), Some(1 << 32)])),
            u64::MAX
        );
        assert_eq!(
            declared(".global .u32 w[1];", Some(vec![Some(1 << 62)])),
            u64::MAX
        );
        // A zero dimension is zero bytes, whatever the others.
        assert_eq!(
            declared(g, Some(vec![Some(1 << 40), Some(1 << 40), Some(0)])),
            0
        );
    }
}
