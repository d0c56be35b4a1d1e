//! CUDA arrays, texture objects and surface objects for kernels that take
//! `device_std::texture::Texture<T, D>` or `Surface<T, D>` parameters.
//!
//! [`Array`] is a `D`-dimensional CUDA array of `T` (`cuArray3DCreate`, made
//! surface-capable), filled and read back from the host on a stream. [`Texture`]
//! reads an array, or pitched 2D device memory, through the texture unit with a
//! [`Sampler`] (`cuTexObjectCreate`); [`Surface`] reads and writes an array's texels
//! (`cuSurfObjectCreate`). A launch passes `&Texture` / `&Surface`, and the kernel's
//! ABI record is checked against the texel type and dimension count.
//!
//! ```no_run
//! # fn demo(stream: &std::sync::Arc<host_loader::cudarc::driver::CudaStream>) -> Result<(), Box<dyn std::error::Error>> {
//! use host_loader::texture::{Array, Sampler, Texture, AddressMode};
//! // A 640 x 480 RGBA8 image, read with bilinear filtering at normalized coordinates.
//! let pixels = vec![[0u8; 4]; 640 * 480];
//! let image = Array::<[u8; 4], 2>::from_host(stream, [640, 480], &pixels)?;
//! let sampler = Sampler::LINEAR.normalized().address_mode(AddressMode::Clamp);
//! let tex = Texture::new(&image, sampler)?;
//! // kernel.launch(stream, cfg, (&tex, ...)) for a kernel taking `Texture2d<[u8; 4]>`
//! # Ok(()) }
//! ```
//!
//! Source: CUDA Driver API "Array Management" (`cuArray3DCreate`, `cuMemcpy3DAsync`),
//! "Texture Object Management", "Surface Object Management". sm_30.

#![allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV

use std::marker::PhantomData;
use std::mem::size_of;
use std::sync::Arc;

use cudarc::driver::sys::{
    self, CUaddress_mode, CUarray, CUarray_format, CUfilter_mode, CUmemorytype, CUresourcetype,
};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, SyncOnDrop};
pub use device_std::texture::{
    AddressMode, FilterMode, Sampler, SamplerError, SurfaceTexel, Texel,
};
use device_std::{FieldLayout, HasValueClass};

use crate::abi_record::AbiKind;
use crate::layout::ParamLayout;
use crate::param::{HostAbi, KernelParam};

/// Why an array, texture or surface could not be made or copied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TextureError {
    /// An extent of 0 in some dimension, or past the device's limit for arrays of
    /// this dimension count.
    #[error("array extent {extent:?}: {reason}")]
    Extent {
        /// The extent asked for, texels per dimension.
        extent: Vec<usize>,
        /// What is wrong with it.
        reason: String,
    },
    /// A host slice whose length is not the array's texel count.
    #[error("{what}: {given} texels for an array of {expected} (extent {extent:?})")]
    Length {
        /// Which copy.
        what: &'static str,
        /// Texels given.
        given: usize,
        /// Texels the array holds.
        expected: usize,
        /// The array's extent.
        extent: Vec<usize>,
    },
    /// The sampler cannot describe the texture.
    #[error("sampler: {0}")]
    Sampler(String),
    /// Pitched memory that breaks the texture unit's rules (alignment, pitch, size).
    #[error("pitched texture: {0}")]
    Pitched(String),
    /// A driver call failed.
    #[error("{what} failed: {source}")]
    Driver {
        /// The call and what it was for.
        what: String,
        /// The driver's error.
        source: cudarc::driver::DriverError,
    },
}

fn driver(what: &str) -> impl FnOnce(cudarc::driver::DriverError) -> TextureError + '_ {
    move |source| TextureError::Driver {
        what: what.to_string(),
        source,
    }
}

/// Types a CUDA array can hold (`device_std::texture::SurfaceTexel`'s list): the array
/// format and channel count of each. Sealed.
pub trait ArrayElement: SurfaceTexel + private::Sealed {
    /// `CUarray_format` of one channel.
    const FORMAT: CUarray_format;
    /// Channels per texel: 1, 2 or 4.
    const CHANNELS: u32;
}

mod private {
    pub trait Sealed {}
}

macro_rules! array_elements {
    ($($t:ty => $f:ident, $n:literal;)*) => {$(
        impl private::Sealed for $t {}
        impl ArrayElement for $t {
            const FORMAT: CUarray_format = CUarray_format::$f;
            const CHANNELS: u32 = $n;
        }
    )*};
}
array_elements! {
    f32 => CU_AD_FORMAT_FLOAT, 1;
    [f32; 2] => CU_AD_FORMAT_FLOAT, 2;
    [f32; 4] => CU_AD_FORMAT_FLOAT, 4;
    u8 => CU_AD_FORMAT_UNSIGNED_INT8, 1;
    [u8; 2] => CU_AD_FORMAT_UNSIGNED_INT8, 2;
    [u8; 4] => CU_AD_FORMAT_UNSIGNED_INT8, 4;
    u16 => CU_AD_FORMAT_UNSIGNED_INT16, 1;
    u32 => CU_AD_FORMAT_UNSIGNED_INT32, 1;
    [u32; 2] => CU_AD_FORMAT_UNSIGNED_INT32, 2;
    [u32; 4] => CU_AD_FORMAT_UNSIGNED_INT32, 4;
    i32 => CU_AD_FORMAT_SIGNED_INT32, 1;
}

/// A `D`-dimensional (1, 2 or 3) CUDA array of `T` texels, x fastest. Usable by
/// textures and surfaces alike (`CUDA_ARRAY3D_SURFACE_LDST`), so its extent is held to
/// the device's surface limits (`CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE{1,2,3}D_*`, on an
/// H100 e.g. 32,768 texels for 1D where a texture-only array could have 131,072).
/// Freed on drop, after the context's work has finished.
pub struct Array<T: ArrayElement, const D: usize> {
    raw: CUarray,
    extent: [usize; D],
    ctx: Arc<CudaContext>,
    _texel: PhantomData<T>,
}

impl<T: ArrayElement, const D: usize> std::fmt::Debug for Array<T, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Array<{}, {D}>{:?}",
            std::any::type_name::<T>(),
            self.extent
        )
    }
}

// SAFETY: a CUarray handle may be used from any thread with its context bound.
unsafe impl<T: ArrayElement, const D: usize> Send for Array<T, D> {}
// SAFETY: as above; `&Array` only reads the handle.
unsafe impl<T: ArrayElement, const D: usize> Sync for Array<T, D> {}

/// The device's largest array extent per dimension for `D` dimensions.
fn max_extent(ctx: &CudaContext, d: usize) -> Result<[usize; 3], TextureError> {
    use sys::CUdevice_attribute::*;
    let attrs = match d {
        1 => [CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH; 3],
        2 => [
            CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH,
            CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT,
            CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT,
        ],
        _ => [
            CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH,
            CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT,
            CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH,
        ],
    };
    let mut out = [0usize; 3];
    for (o, a) in out.iter_mut().zip(attrs) {
        *o = ctx
            .attribute(a)
            .map_err(driver("cuDeviceGetAttribute (array limits)"))? as usize;
    }
    Ok(out)
}

impl<T: ArrayElement, const D: usize> Array<T, D> {
    const VALID: () = assert!(D >= 1 && D <= 3, "Array: D must be 1, 2 or 3");

    /// An uninitialized array of extent `extent` (texels per dimension) on `stream`'s
    /// context.
    ///
    /// # Errors
    /// [`TextureError::Extent`] for a zero extent or one past the device's surface
    /// limits (`CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE{1,2,3}D_*`); the driver's error.
    pub fn new(stream: &Arc<CudaStream>, extent: [usize; D]) -> Result<Self, TextureError> {
        let () = Self::VALID;
        let ctx = stream.context().clone();
        ctx.bind_to_thread()
            .map_err(driver("making the context current"))?;
        let bad = |reason: String| TextureError::Extent {
            extent: extent.to_vec(),
            reason,
        };
        if extent.contains(&0) {
            return Err(bad("every dimension needs at least one texel".into()));
        }
        let max = max_extent(&ctx, D)?;
        for (a, (&e, &m)) in extent.iter().zip(&max).enumerate() {
            if e > m {
                return Err(bad(format!(
                    "dimension {a} has {e} texels; this device allows at most {m} for a \
                     {D}D surface-capable array"
                )));
            }
        }
        let desc = sys::CUDA_ARRAY3D_DESCRIPTOR {
            Width: extent[0],
            Height: if D >= 2 { extent[1] } else { 0 },
            Depth: if D == 3 { extent[2] } else { 0 },
            Format: T::FORMAT,
            NumChannels: T::CHANNELS,
            Flags: sys::CUDA_ARRAY3D_SURFACE_LDST,
        };
        let mut raw: CUarray = std::ptr::null_mut();
        // SAFETY: `desc` is a valid descriptor; `raw` receives the handle.
        unsafe { sys::cuArray3DCreate_v2(&mut raw, &desc) }
            .result()
            .map_err(driver("cuArray3DCreate"))?;
        Ok(Array {
            raw,
            extent,
            ctx,
            _texel: PhantomData,
        })
    }

    /// A new array holding `texels` (x fastest).
    ///
    /// # Errors
    /// As [`new`](Self::new) and [`copy_from_host`](Self::copy_from_host).
    pub fn from_host(
        stream: &Arc<CudaStream>,
        extent: [usize; D],
        texels: &[T],
    ) -> Result<Self, TextureError> {
        let a = Self::new(stream, extent)?;
        a.copy_from_host(stream, texels)?;
        Ok(a)
    }

    /// Extent in texels per dimension.
    pub fn extent(&self) -> [usize; D] {
        self.extent
    }

    /// Texels the array holds.
    pub fn len(&self) -> usize {
        self.extent.iter().product()
    }

    /// Whether the array holds no texel (never: extents are at least 1).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `CUarray` handle.
    pub fn cu_array(&self) -> CUarray {
        self.raw
    }

    fn check_len(&self, what: &'static str, given: usize) -> Result<(), TextureError> {
        if given != self.len() {
            return Err(TextureError::Length {
                what,
                given,
                expected: self.len(),
                extent: self.extent.to_vec(),
            });
        }
        Ok(())
    }

    /// Copies `texels` (x fastest, exactly [`len`](Self::len) of them) into the
    /// array, in order on `stream`, and waits for the copy (`cuMemcpy3DAsync`).
    ///
    /// # Errors
    /// [`TextureError::Length`]; the driver's error.
    pub fn copy_from_host(&self, stream: &CudaStream, texels: &[T]) -> Result<(), TextureError> {
        self.check_len("Array::copy_from_host", texels.len())?;
        let p = copy_desc(self.raw, &self.extent, texels.as_ptr().cast_mut(), true);
        self.run_copy(stream, &p)
    }

    /// The array's texels (x fastest), copied in order on `stream` (after the kernels
    /// launched on that stream before; work on other streams is the caller's to order)
    /// and waited for.
    ///
    /// # Errors
    /// The driver's error.
    pub fn copy_to_host(&self, stream: &CudaStream) -> Result<Vec<T>, TextureError> {
        let mut out = Vec::<T>::with_capacity(self.len());
        let p = copy_desc(self.raw, &self.extent, out.as_mut_ptr(), false);
        self.run_copy(stream, &p)?;
        // SAFETY: the finished copy wrote all `len` texels; any bit pattern is a valid
        // `T` (plain data).
        unsafe { out.set_len(self.len()) };
        Ok(out)
    }

    fn run_copy(&self, stream: &CudaStream, p: &sys::CUDA_MEMCPY3D) -> Result<(), TextureError> {
        self.ctx
            .bind_to_thread()
            .map_err(driver("making the context current"))?;
        // SAFETY: `p` names this live array and a host buffer of `len` texels that
        // outlives the copy (we wait for it below).
        unsafe { sys::cuMemcpy3DAsync_v2(p, stream.cu_stream()) }
            .result()
            .map_err(driver("cuMemcpy3DAsync"))?;
        stream
            .synchronize()
            .map_err(driver("synchronizing after the array copy"))
    }
}

/// The copy descriptor between the array `raw` of extent `extent` and host memory at
/// `host` (rows packed, x fastest), in the direction `to_array` says.
fn copy_desc<T>(
    raw: CUarray,
    extent: &[usize],
    host: *mut T,
    to_array: bool,
) -> sys::CUDA_MEMCPY3D {
    let row = extent[0] * size_of::<T>();
    let height = extent.get(1).copied().unwrap_or(1);
    let depth = extent.get(2).copied().unwrap_or(1);
    let (host_side, array_side) = (
        CUmemorytype::CU_MEMORYTYPE_HOST,
        CUmemorytype::CU_MEMORYTYPE_ARRAY,
    );
    sys::CUDA_MEMCPY3D {
        srcXInBytes: 0,
        srcY: 0,
        srcZ: 0,
        srcLOD: 0,
        srcMemoryType: if to_array { host_side } else { array_side },
        srcHost: if to_array {
            host.cast_const().cast()
        } else {
            std::ptr::null()
        },
        srcDevice: 0,
        srcArray: if to_array { std::ptr::null_mut() } else { raw },
        reserved0: std::ptr::null_mut(),
        srcPitch: if to_array { row } else { 0 },
        srcHeight: if to_array { height } else { 0 },
        dstXInBytes: 0,
        dstY: 0,
        dstZ: 0,
        dstLOD: 0,
        dstMemoryType: if to_array { array_side } else { host_side },
        dstHost: if to_array {
            std::ptr::null_mut()
        } else {
            host.cast()
        },
        dstDevice: 0,
        dstArray: if to_array { raw } else { std::ptr::null_mut() },
        reserved1: std::ptr::null_mut(),
        dstPitch: if to_array { 0 } else { row },
        dstHeight: if to_array { 0 } else { height },
        WidthInBytes: row,
        Height: height,
        Depth: depth,
    }
}

impl<T: ArrayElement, const D: usize> Drop for Array<T, D> {
    fn drop(&mut self) {
        // Kernels queued on any stream may still read or write the array (the driver does
        // not order the destroy after them): wait for the context's work first. Errors
        // cannot be reported from drop; a failed destroy leaks the array.
        if self.ctx.bind_to_thread().is_ok() && self.ctx.synchronize().is_ok() {
            // SAFETY: `raw` is this array's live handle, destroyed once. Textures and
            // surfaces over it borrow it, so none outlives it.
            let _ = unsafe { sys::cuArrayDestroy(self.raw) };
        }
    }
}

/// What a texture reads: an array, or pitched device memory (whose stream events
/// the launch waits on, as for a slice argument).
enum Source<'a, T> {
    Array,
    Pitched(&'a CudaSlice<T>),
}

/// A texture object over an [`Array`] or pitched 2D device memory, read with a
/// [`Sampler`]; the kernel's `Texture<T, D>` parameter. Borrows what it reads;
/// destroyed on drop, after the context's work has finished.
pub struct Texture<'a, T: Texel, const D: usize> {
    obj: sys::CUtexObject,
    ctx: Arc<CudaContext>,
    source: Source<'a, T>,
}

impl<T: Texel, const D: usize> std::fmt::Debug for Texture<'_, T, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Texture<{}, {D}>({:#x})",
            std::any::type_name::<T>(),
            self.obj
        )
    }
}

/// The driver's texture descriptor for `sampler`.
fn texture_desc(sampler: &Sampler) -> sys::CUDA_TEXTURE_DESC {
    let mode = |m: AddressMode| match m {
        AddressMode::Wrap => CUaddress_mode::CU_TR_ADDRESS_MODE_WRAP,
        AddressMode::Clamp => CUaddress_mode::CU_TR_ADDRESS_MODE_CLAMP,
        AddressMode::Mirror => CUaddress_mode::CU_TR_ADDRESS_MODE_MIRROR,
        AddressMode::Border => CUaddress_mode::CU_TR_ADDRESS_MODE_BORDER,
    };
    // SAFETY: an all-zero CUDA_TEXTURE_DESC is valid (no mipmaps, no anisotropy).
    let mut t: sys::CUDA_TEXTURE_DESC = unsafe { std::mem::zeroed() };
    t.addressMode = sampler.address.map(mode);
    t.filterMode = match sampler.filter {
        FilterMode::Point => CUfilter_mode::CU_TR_FILTER_MODE_POINT,
        FilterMode::Linear => CUfilter_mode::CU_TR_FILTER_MODE_LINEAR,
    };
    // Integer channels read as normalized floats (no READ_AS_INTEGER): `Texel`'s rule.
    t.flags = if sampler.normalized_coords {
        sys::CU_TRSF_NORMALIZED_COORDINATES
    } else {
        0
    };
    t.borderColor = sampler.border_color;
    t
}

impl<'a, T: Texel + ArrayElement, const D: usize> Texture<'a, T, D> {
    /// A texture reading `array` with `sampler`.
    ///
    /// # Errors
    /// [`TextureError::Sampler`] for wrap or mirror on unnormalized coordinates (CUDA
    /// would clamp silently); the driver's error.
    pub fn new(array: &'a Array<T, D>, sampler: Sampler) -> Result<Self, TextureError> {
        sampler
            .check(D)
            .map_err(|e| TextureError::Sampler(e.to_string()))?;
        // SAFETY: zeroed then set: resType ARRAY with the array's live handle.
        let mut res: sys::CUDA_RESOURCE_DESC = unsafe { std::mem::zeroed() };
        res.resType = CUresourcetype::CU_RESOURCE_TYPE_ARRAY;
        res.res.array.hArray = array.raw;
        Self::create(&array.ctx, &res, &sampler, Source::Array)
    }

    fn create(
        ctx: &Arc<CudaContext>,
        res: &sys::CUDA_RESOURCE_DESC,
        sampler: &Sampler,
        source: Source<'a, T>,
    ) -> Result<Self, TextureError> {
        ctx.bind_to_thread()
            .map_err(driver("making the context current"))?;
        let desc = texture_desc(sampler);
        let mut obj: sys::CUtexObject = 0;
        // SAFETY: valid descriptors; the resource outlives the object (borrowed `'a`).
        unsafe { sys::cuTexObjectCreate(&mut obj, res, &desc, std::ptr::null()) }
            .result()
            .map_err(driver("cuTexObjectCreate"))?;
        Ok(Texture {
            obj,
            ctx: ctx.clone(),
            source,
        })
    }

    /// The `CUtexObject` handle.
    pub fn handle(&self) -> u64 {
        self.obj
    }
}

impl<'a, T: Texel + ArrayElement> Texture<'a, T, 2> {
    /// A 2D texture over pitched device memory: `height` rows of `width` texels, row
    /// `y` starting at element `y * pitch` of `buf` (`CU_RESOURCE_TYPE_PITCH2D`).
    ///
    /// # Errors
    /// [`TextureError::Pitched`] when `buf`'s address is not a multiple of the
    /// device's texture alignment, the pitch in bytes not a multiple of its pitch
    /// alignment, `width > pitch`, or the rows past `buf`'s end; as [`new`](Self::new).
    pub fn from_pitched(
        stream: &CudaStream,
        buf: &'a CudaSlice<T>,
        [width, height]: [usize; 2],
        pitch: usize,
        sampler: Sampler,
    ) -> Result<Self, TextureError> {
        use sys::CUdevice_attribute::*;
        sampler
            .check(2)
            .map_err(|e| TextureError::Sampler(e.to_string()))?;
        let ctx = stream.context().clone();
        let attr = |a| {
            ctx.attribute(a)
                .map(|v| v as u64)
                .map_err(driver("cuDeviceGetAttribute (texture alignment)"))
        };
        let align = attr(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT)?;
        let pitch_align = attr(CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT)?;
        let (addr, _sync) = buf.device_ptr(stream);
        let bad = |m: String| Err(TextureError::Pitched(m));
        let Some(pitch_bytes) = pitch.checked_mul(size_of::<T>()).map(|b| b as u64) else {
            return bad(format!("a pitch of {pitch} texels overflows"));
        };
        if width == 0 || height == 0 {
            return bad(format!("extent {width} x {height} has a zero dimension"));
        }
        let (max_w, max_h, max_pitch) = (
            attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH)?,
            attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT)?,
            attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH)?,
        );
        if width as u64 > max_w || height as u64 > max_h || pitch_bytes > max_pitch {
            return bad(format!(
                "{width} x {height} texels with a {pitch_bytes}-byte pitch; this device allows \
                 at most {max_w} x {max_h} and {max_pitch} bytes \
                 (CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_*)"
            ));
        }
        if addr % align != 0 {
            return bad(format!(
                "the buffer's address {addr:#x} is not a multiple of {align} bytes \
                 (CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT); allocate it on its own"
            ));
        }
        if width > pitch || pitch_bytes % pitch_align != 0 {
            return bad(format!(
                "a pitch of {pitch} texels ({pitch_bytes} bytes) for rows of {width}: the \
                 pitch must be at least the width and a multiple of {pitch_align} bytes \
                 (CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT)"
            ));
        }
        let needed = (height - 1)
            .checked_mul(pitch)
            .and_then(|v| v.checked_add(width));
        if needed.is_none_or(|n| n > buf.len()) {
            return bad(format!(
                "{height} rows of pitch {pitch} and width {width} need {} texels; the buffer \
                 holds {}",
                needed.map_or_else(|| "more than usize::MAX".to_string(), |n| n.to_string()),
                buf.len()
            ));
        }
        // SAFETY: zeroed then set: a PITCH2D resource inside `buf` (checked above).
        let mut res: sys::CUDA_RESOURCE_DESC = unsafe { std::mem::zeroed() };
        res.resType = CUresourcetype::CU_RESOURCE_TYPE_PITCH2D;
        res.res.pitch2D.devPtr = addr;
        res.res.pitch2D.format = <T as ArrayElement>::FORMAT;
        res.res.pitch2D.numChannels = <T as ArrayElement>::CHANNELS;
        res.res.pitch2D.width = width;
        res.res.pitch2D.height = height;
        res.res.pitch2D.pitchInBytes = pitch_bytes as usize;
        Self::create(&ctx, &res, &sampler, Source::Pitched(buf))
    }
}

impl<T: Texel, const D: usize> Drop for Texture<'_, T, D> {
    fn drop(&mut self) {
        // As for `Array`: a queued launch may still use the object.
        if self.ctx.bind_to_thread().is_ok() && self.ctx.synchronize().is_ok() {
            // SAFETY: this object's live handle, destroyed once.
            let _ = unsafe { sys::cuTexObjectDestroy(self.obj) };
        }
    }
}

/// A surface object over an [`Array`]; the kernel's `Surface<T, D>` parameter.
/// Borrows the array; destroyed on drop, after the context's work has finished.
pub struct Surface<'a, T: ArrayElement, const D: usize> {
    obj: sys::CUsurfObject,
    ctx: Arc<CudaContext>,
    _array: PhantomData<&'a Array<T, D>>,
}

impl<T: ArrayElement, const D: usize> std::fmt::Debug for Surface<'_, T, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Surface<{}, {D}>({:#x})",
            std::any::type_name::<T>(),
            self.obj
        )
    }
}

impl<'a, T: ArrayElement, const D: usize> Surface<'a, T, D> {
    /// A surface over `array`.
    ///
    /// # Errors
    /// The driver's error.
    pub fn new(array: &'a Array<T, D>) -> Result<Self, TextureError> {
        array
            .ctx
            .bind_to_thread()
            .map_err(driver("making the context current"))?;
        // SAFETY: zeroed then set: resType ARRAY with the array's live handle.
        let mut res: sys::CUDA_RESOURCE_DESC = unsafe { std::mem::zeroed() };
        res.resType = CUresourcetype::CU_RESOURCE_TYPE_ARRAY;
        res.res.array.hArray = array.raw;
        let mut obj: sys::CUsurfObject = 0;
        // SAFETY: a valid descriptor of a surface-capable array that outlives the object.
        unsafe { sys::cuSurfObjectCreate(&mut obj, &res) }
            .result()
            .map_err(driver("cuSurfObjectCreate"))?;
        Ok(Surface {
            obj,
            ctx: array.ctx.clone(),
            _array: PhantomData,
        })
    }

    /// The `CUsurfObject` handle.
    pub fn handle(&self) -> u64 {
        self.obj
    }
}

impl<T: ArrayElement, const D: usize> Drop for Surface<'_, T, D> {
    fn drop(&mut self) {
        // As for `Array`: a queued launch may still use the object.
        if self.ctx.bind_to_thread().is_ok() && self.ctx.synchronize().is_ok() {
            // SAFETY: this object's live handle, destroyed once.
            let _ = unsafe { sys::cuSurfObjectDestroy(self.obj) };
        }
    }
}

/// Keeps a pitched texture's buffer ordered for the launch (its `SyncOnDrop`).
pub struct TextureGuard<'a>(#[allow(dead_code)] Option<SyncOnDrop<'a>>);

impl std::fmt::Debug for TextureGuard<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TextureGuard")
    }
}

// SAFETY: the kernel's `device_std::texture::Texture` is a `#[repr(transparent)]` u64:
// one `.u64` parameter; `Raw` is the live `CUtexObject`, which lives as long as the
// argument borrow; for pitched memory the guard orders the launch after the buffer's
// writes, as a slice argument's does.
unsafe impl<T: Texel + ArrayElement, const D: usize> KernelParam for Texture<'static, T, D> {
    const LAYOUT: ParamLayout = ParamLayout::int(8);
    const ABI: HostAbi = {
        let fields: &'static [FieldLayout; 1] = &Self::FIELDS;
        HostAbi {
            kind: AbiKind::Texture,
            elem_size: size_of::<T>() as u32,
            elem_class: <T as HasValueClass>::VALUE_CLASS,
            fields,
        }
    };
    type Arg<'b>
        = &'b Texture<'b, T, D>
    where
        Self: 'b;
    type Raw = u64;
    type Guard<'b>
        = TextureGuard<'b>
    where
        Self: 'b;
    #[inline(always)]
    fn lower<'b>(arg: Self::Arg<'b>, stream: &'b CudaStream) -> (u64, TextureGuard<'b>) {
        let guard = match arg.source {
            Source::Array => None,
            Source::Pitched(buf) => Some(buf.device_ptr(stream).1),
        };
        (arg.obj, TextureGuard(guard))
    }
}

impl<T: Texel + ArrayElement, const D: usize> Texture<'static, T, D> {
    const FIELDS: [FieldLayout; 1] = device_std::abi::texture_dims_field::<D>();
}

impl<T: ArrayElement, const D: usize> Surface<'static, T, D> {
    const FIELDS: [FieldLayout; 1] = device_std::abi::texture_dims_field::<D>();
}

// SAFETY: as for `Texture`: one `.u64`, the live `CUsurfObject`. Surface accesses
// from kernels on other streams are the caller's to order, as in CUDA.
unsafe impl<T: ArrayElement, const D: usize> KernelParam for Surface<'static, T, D> {
    const LAYOUT: ParamLayout = ParamLayout::int(8);
    const ABI: HostAbi = {
        let fields: &'static [FieldLayout; 1] = &Self::FIELDS;
        HostAbi {
            kind: AbiKind::Surface,
            elem_size: size_of::<T>() as u32,
            elem_class: <T as HasValueClass>::VALUE_CLASS,
            fields,
        }
    };
    type Arg<'b>
        = &'b Surface<'b, T, D>
    where
        Self: 'b;
    type Raw = u64;
    type Guard<'b>
        = ()
    where
        Self: 'b;
    #[inline(always)]
    fn lower<'b>(arg: Self::Arg<'b>, _stream: &'b CudaStream) -> (u64, ()) {
        (arg.obj, ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_descriptors_are_built_without_zeroed_enums() {
        let mut host = vec![[0u8; 4]; 6 * 5 * 2];
        let raw = 0x10 as CUarray;
        let up = copy_desc(raw, &[6, 5, 2], host.as_mut_ptr(), true);
        assert_eq!(up.srcMemoryType, CUmemorytype::CU_MEMORYTYPE_HOST);
        assert_eq!(up.dstMemoryType, CUmemorytype::CU_MEMORYTYPE_ARRAY);
        assert_eq!((up.WidthInBytes, up.Height, up.Depth), (24, 5, 2));
        assert_eq!((up.srcPitch, up.srcHeight, up.dstArray), (24, 5, raw));
        let down = copy_desc(raw, &[7], host.as_mut_ptr(), false);
        assert_eq!(down.srcMemoryType, CUmemorytype::CU_MEMORYTYPE_ARRAY);
        assert_eq!((down.WidthInBytes, down.Height, down.Depth), (28, 1, 1));
        assert_eq!((down.dstPitch, down.srcArray), (28, raw));
    }

    #[test]
    fn texture_descriptors_follow_the_sampler() {
        let t = texture_desc(
            &Sampler::LINEAR
                .normalized()
                .address_mode(AddressMode::Mirror),
        );
        assert_eq!(t.filterMode, CUfilter_mode::CU_TR_FILTER_MODE_LINEAR);
        assert_eq!(t.flags, sys::CU_TRSF_NORMALIZED_COORDINATES);
        assert_eq!(
            t.addressMode,
            [CUaddress_mode::CU_TR_ADDRESS_MODE_MIRROR; 3]
        );
        let t = texture_desc(
            &Sampler::POINT
                .border([1.0, 0.5, 0.0, 1.0])
                .address_mode(AddressMode::Border),
        );
        assert_eq!((t.flags, t.borderColor), (0, [1.0, 0.5, 0.0, 1.0]));
    }
}
