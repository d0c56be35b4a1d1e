//! Kernel signatures: tuples of [`KernelParam`]s, the check against a PTX `.entry`, and
//! the per-launch lowering of an argument tuple.

use std::ffi::c_void;

use cudarc::driver::{result, sys, CudaStream, DriverError, LaunchConfig};
use ptx_linker::EntrySignature;

use crate::error::{Error, LayoutMismatch};
use crate::layout::{ptx_decl, ParamLayout};
use crate::param::KernelParam;

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

    /// The launch argument tuple.
    type Args<'a>
    where
        Self: 'a;

    /// The Rust type name of each parameter, for error messages.
    fn type_names() -> Vec<String>;

    /// Lowers `args` and calls `cuLaunchKernel` on `stream`, without any checks.
    ///
    /// Each argument is lowered into a stack slot (a [`RawSlice`](crate::RawSlice) for a
    /// slice), the slots' addresses go into a fixed-size array on the stack, and the
    /// stream guards drop after the launch is enqueued, recording the reads and writes.
    ///
    /// # Safety
    ///
    /// - `func` is a live function handle whose parameters match [`Self::LAYOUTS`];
    /// - `cfg` is a launch configuration the function accepts;
    /// - the context owning `func` and `stream` is current on this thread;
    /// - the obligations of [`Kernel::launch`](crate::Kernel::launch) hold.
    unsafe fn launch_raw<'a>(
        func: sys::CUfunction,
        stream: &'a CudaStream,
        cfg: &LaunchConfig,
        args: Self::Args<'a>,
    ) -> Result<(), DriverError>;
}

macro_rules! impl_signature {
    ($n:literal; $($T:ident $arg:ident $raw:ident $guard:ident),*) => {
        impl<$($T: KernelParam),*> private::Sealed for ($($T,)*) {}

        // SAFETY: one parameter per tuple element, in order, each lowered by its own
        // `KernelParam::lower`; the slots and guards live until after `launch_kernel`.
        unsafe impl<$($T: KernelParam),*> KernelSignature for ($($T,)*) {
            const LAYOUTS: &'static [ParamLayout] = &[$($T::LAYOUT),*];

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
                args: Self::Args<'a>,
            ) -> Result<(), DriverError> {
                let ($($arg,)*) = args;
                $(let ($raw, $guard) = $T::lower($arg, stream);)*
                let mut params: [*mut c_void; $n] =
                    [$(&$raw as *const $T::Raw as *mut c_void),*];
                // SAFETY: every pointer in `params` points at a live, initialized stack
                // slot of the size the PTX declares (caller's contract); the driver copies
                // the bytes before returning and never writes through them.
                let res = unsafe {
                    result::launch_kernel(
                        func,
                        cfg.grid_dim,
                        cfg.block_dim,
                        cfg.shared_mem_bytes,
                        stream.cu_stream(),
                        &mut params,
                    )
                };
                // The guards record this stream's work on each buffer's events. They must
                // drop after the launch is enqueued, never before.
                $(drop($guard);)*
                res
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
/// Errors: [`Error::ArgCount`] when the parameter counts differ (checked first), else
/// [`Error::LayoutMismatch`] for the first parameter whose layout the PTX does not accept
/// (see [`ParamLayout::accepts`]).
pub fn check_signature<S: KernelSignature>(entry: &EntrySignature) -> Result<(), Error> {
    verify(entry, None, S::LAYOUTS, &|| S::type_names())
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

/// The `.entry` signatures of one PTX module, with the module's display name. Needs no
/// GPU; [`Module`](crate::Module) keeps one of these.
#[derive(Debug, Clone)]
pub struct Signatures {
    module: String,
    entries: Vec<EntrySignature>,
}

impl Signatures {
    /// Reads every `.entry` signature of `text` with [`ptx_linker::entry_signatures`].
    /// `module` is the name used in messages (usually the file path).
    ///
    /// Errors: [`Error::Parse`] when the PTX does not parse.
    pub fn parse(module: &str, text: &str) -> Result<Self, Error> {
        Ok(Signatures {
            module: module.to_string(),
            entries: ptx_linker::entry_signatures(module, text)?,
        })
    }

    /// Wraps signatures obtained elsewhere (e.g. from a link map).
    pub fn new(module: impl Into<String>, entries: Vec<EntrySignature>) -> Self {
        Signatures {
            module: module.into(),
            entries,
        }
    }

    /// The module's display name.
    pub fn module(&self) -> &str {
        &self.module
    }

    /// Every `.entry`, in file order.
    pub fn entries(&self) -> &[EntrySignature] {
        &self.entries
    }

    /// The signature of the kernel `name`.
    ///
    /// Errors: [`Error::NoSuchKernel`], listing the module's kernels.
    pub fn get(&self, name: &str) -> Result<&EntrySignature, Error> {
        self.entries
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| Error::NoSuchKernel {
                module: self.module.clone(),
                name: name.to_string(),
                available: self.entries.iter().map(|e| e.name.clone()).collect(),
            })
    }

    /// Checks the Rust signature `S` against the kernel `name`; returns its PTX
    /// signature when they agree.
    ///
    /// Errors: [`Error::NoSuchKernel`], [`Error::ArgCount`], [`Error::LayoutMismatch`]
    /// (naming this module and the `.entry` line).
    pub fn check<S: KernelSignature>(&self, name: &str) -> Result<&EntrySignature, Error> {
        let entry = self.get(name)?;
        verify(entry, Some(&self.module), S::LAYOUTS, &|| S::type_names())?;
        Ok(entry)
    }
}
