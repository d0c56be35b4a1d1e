//! Typed host access to a module's variables: constant memory (`device_std::constant!`,
//! CUDA `__constant__`) and device globals (`device_std::global!`, `__device__`), by
//! name, as `cudaMemcpyToSymbol` / `cudaMemcpyFromSymbol` do in CUDA C++.
//!
//! [`Module::constant`] and [`Module::global`] find the variable (`cuModuleGetGlobal`),
//! then check the Rust type asked for against the module: its size against the
//! variable's, and, where the module has the record device-std writes
//! (`__const_abi_NAME`, `__global_abi_NAME`; see `device_std::module_var`), the state
//! space, size, alignment and value class too. A variable without a record (CUDA C++'s,
//! or a plain `#[no_mangle] static`) is checked by size only.

use std::marker::PhantomData;
use std::mem::{align_of, size_of};
use std::sync::Arc;

use cudarc::driver::{sys, CudaStream};
use device_std::module_var::{
    CONST_RECORD_PREFIX, GLOBAL_RECORD_PREFIX, MAGIC, RECORD_WORDS, SPACE_CONST, SPACE_GLOBAL,
    VERSION,
};
use device_std::{PlainData, ValueClass};

use crate::module::RawModule;
use crate::record_check::class_accepted;
use crate::{Error, Module};

/// Which kind of module variable a handle is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarSpace {
    /// `.const`: `device_std::constant!`, CUDA `__constant__`.
    Const,
    /// `.global`: `device_std::global!`, CUDA `__device__`.
    Global,
}

impl VarSpace {
    fn word(self) -> u32 {
        match self {
            VarSpace::Const => SPACE_CONST,
            VarSpace::Global => SPACE_GLOBAL,
        }
    }

    fn macro_name(self) -> &'static str {
        match self {
            VarSpace::Const => "device_std::constant!",
            VarSpace::Global => "device_std::global!",
        }
    }

    fn record_prefix(self) -> &'static str {
        match self {
            VarSpace::Const => CONST_RECORD_PREFIX,
            VarSpace::Global => GLOBAL_RECORD_PREFIX,
        }
    }
}

/// A module variable of type `T`, checked against the module: [`write`](Self::write)
/// and [`read`](Self::read) copy its `size_of::<T>()` bytes. Made by
/// [`Module::constant`] and [`Module::global`]; keeps the module loaded.
pub struct ModuleVar<T> {
    raw: Arc<RawModule>,
    name: String,
    ptr: sys::CUdeviceptr,
    space: VarSpace,
    _value: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for ModuleVar<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModuleVar")
            .field("name", &self.name)
            .field("space", &self.space)
            .field("type", &std::any::type_name::<T>())
            .finish_non_exhaustive()
    }
}

impl<T: PlainData> ModuleVar<T> {
    /// The variable's name in the module.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its device address (`CUdeviceptr`); for a constant, the address of its bytes in
    /// global memory, which kernels read through the constant cache.
    pub fn device_ptr(&self) -> sys::CUdeviceptr {
        self.ptr
    }

    /// Copies `value` into the variable, in order on `stream` (`cuMemcpyHtoDAsync`),
    /// and waits for the copy: kernels launched on `stream` afterwards see it.
    ///
    /// Errors: [`Error::Driver`] from the copy or the synchronisation.
    pub fn write(&self, stream: &CudaStream, value: &T) -> Result<(), Error> {
        self.bind()?;
        // SAFETY: `ptr` holds size_of::<T>() bytes (checked when the handle was made);
        // `value` stays borrowed until the stream has finished the copy.
        unsafe {
            sys::cuMemcpyHtoDAsync_v2(
                self.ptr,
                (value as *const T).cast(),
                size_of::<T>(),
                stream.cu_stream(),
            )
        }
        .result()
        .map_err(self.driver("cuMemcpyHtoDAsync"))?;
        stream
            .synchronize()
            .map_err(self.driver("synchronizing after the copy"))
    }

    /// Copies the variable's value out, in order on `stream` (after the kernels
    /// launched on it before), and waits for it (`cuMemcpyDtoHAsync`).
    ///
    /// Errors: [`Error::Driver`] from the copy or the synchronisation.
    pub fn read(&self, stream: &CudaStream) -> Result<T, Error> {
        self.bind()?;
        let mut out = std::mem::MaybeUninit::<T>::uninit();
        // SAFETY: as for `write`; `out` has room for a T and outlives the copy.
        unsafe {
            sys::cuMemcpyDtoHAsync_v2(
                out.as_mut_ptr().cast(),
                self.ptr,
                size_of::<T>(),
                stream.cu_stream(),
            )
        }
        .result()
        .map_err(self.driver("cuMemcpyDtoHAsync"))?;
        stream
            .synchronize()
            .map_err(self.driver("synchronizing after the copy"))?;
        // SAFETY: all bytes were written by the copy; any bit pattern is a valid T.
        Ok(unsafe { out.assume_init() })
    }

    fn bind(&self) -> Result<(), Error> {
        self.raw
            .ctx
            .bind_to_thread()
            .map_err(self.driver("making the module's context current"))
    }

    fn driver(&self, what: &str) -> impl FnOnce(cudarc::driver::DriverError) -> Error {
        let context = format!("{what} of module variable `{}`", self.name);
        move |source| Error::Driver { context, source }
    }
}

impl Module {
    /// The constant-memory variable `name` (`device_std::constant!`, CUDA `__constant__`)
    /// as a `T`, for the host to fill before launches ([`ModuleVar::write`]).
    ///
    /// Errors: [`Error::ModuleVar`] when the module has no variable `name`, its size
    /// differs from `size_of::<T>()`, or its record says it is not constant memory or
    /// holds another type (size, alignment, value class: a `[u32; 4]` is refused for an
    /// `[f32; 4]`); [`Error::Driver`] from `cuModuleGetGlobal` otherwise.
    pub fn constant<T: PlainData>(&self, name: &str) -> Result<ModuleVar<T>, Error> {
        self.module_var(name, VarSpace::Const)
    }

    /// The device global `name` (`device_std::global!`, CUDA `__device__`) as a `T`.
    ///
    /// Errors: as for [`Module::constant`], with the `.global` state space.
    pub fn global<T: PlainData>(&self, name: &str) -> Result<ModuleVar<T>, Error> {
        self.module_var(name, VarSpace::Global)
    }

    fn module_var<T: PlainData>(&self, name: &str, space: VarSpace) -> Result<ModuleVar<T>, Error> {
        let refuse = |problem: String| Error::ModuleVar {
            module: self.name().to_string(),
            name: name.to_string(),
            problem,
        };
        let known = self.signatures().module_vars();
        if known.is_some_and(|vars| !vars.names.contains(name)) {
            return Err(refuse(missing(space)));
        }
        let (ptr, bytes) = self
            .global_symbol(name)?
            .ok_or_else(|| refuse(missing(space)))?;
        let want = size_of::<T>();
        if bytes != want {
            return Err(refuse(format!(
                "has {bytes} bytes, the Rust type `{}` has {want}",
                std::any::type_name::<T>()
            )));
        }
        let handle = ModuleVar {
            raw: self.raw().clone(),
            name: name.to_string(),
            ptr,
            space,
            _value: PhantomData,
        };
        for other in [VarSpace::Const, VarSpace::Global] {
            let record_name = format!("{}{name}", other.record_prefix());
            let words = match known {
                // Read from the PTX text: no driver call for a record that is not there.
                Some(vars) => match vars.records.get(&record_name) {
                    Some(words) => words.clone(),
                    None => continue,
                },
                None => match self.global_symbol(&record_name)? {
                    Some((rptr, rbytes)) => self.read_words(rptr, rbytes, &record_name)?,
                    None => continue,
                },
            };
            return check_record::<T>(&words, space)
                .map(|()| handle)
                .map_err(refuse);
        }
        Ok(handle)
    }

    /// `cuModuleGetGlobal(name)`: the address and size, or `None` when the module has no
    /// such variable.
    pub(crate) fn global_symbol(
        &self,
        name: &str,
    ) -> Result<Option<(sys::CUdeviceptr, usize)>, Error> {
        let Ok(c_name) = std::ffi::CString::new(name) else {
            return Ok(None);
        };
        self.raw()
            .ctx
            .bind_to_thread()
            .map_err(|source| Error::Driver {
                context: "making the module's context current".into(),
                source,
            })?;
        let (mut ptr, mut bytes) = (0, 0);
        // SAFETY: a loaded module, a NUL-terminated name, two out-parameters.
        let res = unsafe {
            sys::cuModuleGetGlobal_v2(&mut ptr, &mut bytes, self.raw().cu, c_name.as_ptr())
        };
        match res {
            sys::CUresult::CUDA_SUCCESS => Ok(Some((ptr, bytes))),
            sys::CUresult::CUDA_ERROR_NOT_FOUND => Ok(None),
            other => Err(Error::Driver {
                context: format!("cuModuleGetGlobal(`{name}`)"),
                source: cudarc::driver::DriverError(other),
            }),
        }
    }

    fn read_words(
        &self,
        ptr: sys::CUdeviceptr,
        bytes: usize,
        name: &str,
    ) -> Result<Vec<u32>, Error> {
        let mut words = vec![0u32; bytes.min(4 * RECORD_WORDS) / 4];
        // SAFETY: `ptr` holds `bytes` ≥ 4·len bytes; a synchronous copy into `words`.
        unsafe { sys::cuMemcpyDtoH_v2(words.as_mut_ptr().cast(), ptr, 4 * words.len()) }
            .result()
            .map_err(|source| Error::Driver {
                context: format!("cuMemcpyDtoH of the record `{name}`"),
                source,
            })?;
        Ok(words)
    }
}

/// The refusal for a name the module does not define.
fn missing(space: VarSpace) -> String {
    format!(
        "is not a variable of the module; declare it with `{}`",
        space.macro_name()
    )
}

/// What a record says against the type and space the host asked for: `Err` with the
/// problem in words.
fn check_record<T: PlainData>(words: &[u32], space: VarSpace) -> Result<(), String> {
    let [magic, version, rec_space, size, align, class] = words[..] else {
        return Err(format!(
            "has a record of {} words, not {RECORD_WORDS}",
            words.len()
        ));
    };
    if magic != MAGIC || version != VERSION {
        return Err(format!(
            "has a record of another version (magic {magic:#x}, version {version}); rebuild it with this device-std"
        ));
    }
    if rec_space != space.word() {
        let (declared, asked) = match space {
            VarSpace::Const => ("device_std::global!", "Module::constant"),
            VarSpace::Global => ("device_std::constant!", "Module::global"),
        };
        return Err(format!(
            "is declared with `{declared}`, not found by `{asked}`; use the other one"
        ));
    }
    let host_class = T::VALUE_CLASS;
    let (t, size_t, align_t) = (
        std::any::type_name::<T>(),
        size_of::<T>() as u32,
        align_of::<T>() as u32,
    );
    if size != size_t || align != align_t {
        return Err(format!(
            "is {size} bytes aligned to {align} in the kernel crate, the Rust type `{t}` is {size_t} bytes aligned to {align_t}"
        ));
    }
    let device_class = ValueClass::from_word(class);
    match device_class {
        Some(d) if class_accepted(d, host_class, size) => Ok(()),
        Some(d) => Err(format!(
            "holds {} values in the kernel crate, the Rust type `{t}` holds {} ones",
            d.name(),
            host_class.name()
        )),
        None => Err(format!("has a record with an unknown value class {class}")),
    }
}
