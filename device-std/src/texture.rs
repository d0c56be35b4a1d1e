//! Bindless texture and surface objects: reads through the texture unit (hardware
//! filtering, normalized coordinates, address modes) and typed reads and writes of
//! a CUDA array through its surface.
//!
//! A kernel takes a [`Texture<T, D>`] or [`Surface<T, D>`] parameter (`D` = 1, 2 or 3
//! dimensions, `T` the texel type); the host makes it with `host_loader::texture`
//! (`cuTexObjectCreate`, `cuSurfObjectCreate`) and the launch checks the texel type
//! and the dimension count against the kernel's ABI record ([`crate::abi::TEXTURE`],
//! [`crate::abi::SURFACE`]). Under the emulator the same parameters come from
//! `emulator::TextureDesc::as_param` and `emulator::SurfaceDesc::as_param`.
//!
//! ```ignore
//! #[kernel]
//! pub fn resize(src: Texture2d<[u8; 4]>, mut dst: DisjointSlice<[u8; 4]>, w: u32, h: u32) {
//!     let i = thread::index_1d();
//!     let (x, y) = (i.get() as u32 % w, i.get() as u32 / w);
//!     // Normalized coordinates: the texel centre of output pixel (x, y). `u8` texels
//!     // read as floats in [0, 1]; back to 8 bits, rounded to nearest.
//!     let v = src.fetch((x as f32 + 0.5) / w as f32, (y as f32 + 0.5) / h as f32);
//!     if let Some(out) = dst.get_mut(&i) {
//!         *out = v.map(|c| device_std::math::fmaf(c, 255.0, 0.5) as u8);
//!     }
//! }
//! ```
//!
//! # What a fetch returns (CUDA C++ Programming Guide, "Texture Fetching")
//!
//! Coordinates are `f32`. With normalized coordinates (`Sampler::normalized`) a
//! coordinate `u` addresses texel space at `x = u · N` (`N` the extent, the product
//! rounded to `f32`). Point filtering reads texel `floor(x)`; linear filtering reads
//! texels `i = floor(x − 0.5)` and `i + 1` in each dimension, weighted `1 − α` and `α`
//! with `α = frac(x − 0.5)` rounded to 8 fraction bits (the texture unit's 9-bit
//! fixed-point weights). An index outside the extent is clamped
//! ([`AddressMode::Clamp`]), taken modulo `N` ([`AddressMode::Wrap`]), mirrored with
//! period `2N` ([`AddressMode::Mirror`]: `0, 1, …, N−1, N−1, …, 0`), or reads the
//! border colour ([`AddressMode::Border`]). `u8` texels read as `b / 255`
//! (`cudaReadModeNormalizedFloat`).
//!
//! The emulator follows these rules. Measured against an H100 (`examples/texture`'s
//! reference samples: 96 cases, 61,440 values, coordinates uniform over 1.7 times the
//! extent): point filtering with every address mode, and 1D linear filtering of `f32`
//! texels on texel coordinates, give the GPU's bits (the filtered value rounds to
//! `f32` with ties away from zero). The texture unit decides texel boundaries in a
//! fixed-point form of its own: for normalized coordinates within an `f32` ulp or two
//! of a boundary (`u = k/N` rounded), wrap and mirror chose the neighbouring texel in
//! 3–7% of such probes (N = 3, 5, 7; |u| up to 3·10⁷) where the emulator did not. The GPU filters
//! a 1D texture as a 2D texture one row high fetched at row coordinate 0, so with
//! [`AddressMode::Border`] every weight is halved against the border row; the
//! emulator does the same. Elsewhere linear filtering (2D, 3D, normalized
//! coordinates, `u8` texels) differs from the GPU's in low bits, by at most 1.1/256 of
//! the spread of the texels involved: the texture unit rounds weight products and
//! filters 8-bit channels with a precision the emulator does not reproduce.
//!
//! Surfaces address texels by integer coordinates; an access outside the array
//! traps on the GPU (`.trap` mode) and panics under the emulator.
//!
//! Requires sm_30 or newer (every target this crate builds for). Source: PTX ISA
//! 9.0 §9.7.10 "Texture Instructions" (`tex`), §9.7.11 "Surface Instructions"
//! (`suld`, `sust`); CUDA Driver API "Texture Object Management", "Surface Object
//! Management".

use core::marker::PhantomData;

use crate::abi::{KernelParam, ParamAbi, SURFACE, TEXTURE};
use crate::host::on_device;
use crate::layout::{FieldLayout, HasValueClass, PlainData};

/// How an index outside the extent is mapped back into it, per dimension. The
/// values are CUDA's `CUaddress_mode`. Source: CUDA Driver API `CUaddress_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum AddressMode {
    /// Repeat: index `i` reads `i mod N`. Normalized coordinates only.
    Wrap = 0,
    /// Clamp to the edge texel (the default).
    Clamp = 1,
    /// Repeat mirrored: `0, 1, …, N−1, N−1, …, 0, 0, 1, …`. Normalized coordinates only.
    Mirror = 2,
    /// Outside the extent reads [`Sampler::border_color`].
    Border = 3,
}

/// How texels are combined. Source: CUDA Driver API `CUfilter_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum FilterMode {
    /// The texel the coordinate falls in.
    Point = 0,
    /// Linear interpolation of the 2, 4 or 8 nearest texels (1D, 2D, 3D), weights
    /// with 8 fraction bits.
    Linear = 1,
}

/// How a texture is read: filtering, coordinates, address modes. The host's
/// `host_loader::texture::Texture` and the emulator's `TextureDesc` take the same
/// value. Source: CUDA Driver API `CUDA_TEXTURE_DESC`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampler {
    /// Address mode per dimension, dimension 0 (x) first.
    pub address: [AddressMode; 3],
    /// Point or linear filtering.
    pub filter: FilterMode,
    /// Coordinates in `[0, 1)` across the extent rather than in texels.
    pub normalized_coords: bool,
    /// What [`AddressMode::Border`] reads, as the fetch returns it (channels past the
    /// texel's count are ignored).
    pub border_color: [f32; 4],
}

impl Default for Sampler {
    fn default() -> Self {
        Sampler::POINT
    }
}

/// Why a [`Sampler`] cannot describe a texture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SamplerError {
    /// [`AddressMode::Wrap`] or [`AddressMode::Mirror`] without normalized
    /// coordinates: CUDA silently clamps instead.
    NeedsNormalizedCoords {
        /// The dimension, 0 = x.
        dim: usize,
        /// Its mode.
        mode: AddressMode,
    },
}

impl core::fmt::Display for SamplerError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SamplerError::NeedsNormalizedCoords { dim, mode } => write!(
                f,
                "address mode {mode:?} in dimension {dim} needs normalized coordinates (the \
                 texture unit would clamp instead); use Sampler::normalized() or \
                 AddressMode::Clamp / Border"
            ),
        }
    }
}

impl Sampler {
    /// Point filtering, unnormalized coordinates (texels), clamp to edge, border 0.
    pub const POINT: Sampler = Sampler {
        address: [AddressMode::Clamp; 3],
        filter: FilterMode::Point,
        normalized_coords: false,
        border_color: [0.0; 4],
    };

    /// [`POINT`](Self::POINT) with linear filtering.
    pub const LINEAR: Sampler = Sampler {
        filter: FilterMode::Linear,
        ..Sampler::POINT
    };

    /// The same sampler with normalized coordinates.
    pub const fn normalized(mut self) -> Self {
        self.normalized_coords = true;
        self
    }

    /// The same sampler with `mode` in every dimension.
    pub const fn address_mode(mut self, mode: AddressMode) -> Self {
        self.address = [mode; 3];
        self
    }

    /// The same sampler with border colour `color`.
    pub const fn border(mut self, color: [f32; 4]) -> Self {
        self.border_color = color;
        self
    }

    /// Checks the combination for a texture of `dims` dimensions.
    ///
    /// # Errors
    /// [`SamplerError::NeedsNormalizedCoords`] for wrap or mirror on unnormalized
    /// coordinates.
    pub fn check(&self, dims: usize) -> Result<(), SamplerError> {
        for (dim, &mode) in self.address.iter().enumerate().take(dims) {
            if !self.normalized_coords && matches!(mode, AddressMode::Wrap | AddressMode::Mirror) {
                return Err(SamplerError::NeedsNormalizedCoords { dim, mode });
            }
        }
        Ok(())
    }
}

mod private {
    pub trait Sealed {}
}

/// The layout of a texel as the texture unit reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelKind {
    /// 32-bit float channels, read as they are.
    Float,
    /// 8-bit unsigned channels read as `b / 255` (`cudaReadModeNormalizedFloat`).
    UnormU8,
}

/// A texel type a [`Texture`] can hold: `f32`, `[f32; 2]`, `[f32; 4]`, `u8` and
/// `[u8; 4]` (the two read as normalized floats). Sealed.
pub trait Texel: PlainData + private::Sealed {
    /// What a fetch returns: `f32` or `[f32; N]`.
    type Fetch: Copy;
    /// Channels per texel: 1, 2 or 4.
    const CHANNELS: usize;
    /// How each channel is stored and read.
    const KIND: ChannelKind;
    /// The fetch's value from the four channels the instruction returns.
    fn from_channels(v: [f32; 4]) -> Self::Fetch;
}

macro_rules! texels {
    ($($t:ty => $fetch:ty, $n:literal, $kind:ident, |$v:ident| $conv:expr;)*) => {$(
        impl private::Sealed for $t {}
        impl Texel for $t {
            type Fetch = $fetch;
            const CHANNELS: usize = $n;
            const KIND: ChannelKind = ChannelKind::$kind;
            #[inline(always)]
            fn from_channels($v: [f32; 4]) -> $fetch {
                $conv
            }
        }
    )*};
}
texels! {
    f32 => f32, 1, Float, |v| v[0];
    [f32; 2] => [f32; 2], 2, Float, |v| [v[0], v[1]];
    [f32; 4] => [f32; 4], 4, Float, |v| v;
    u8 => f32, 1, UnormU8, |v| v[0];
    [u8; 4] => [f32; 4], 4, UnormU8, |v| v;
}

/// A texture object of `D` dimensions (1, 2 or 3) holding `T` texels: the
/// `CUtexObject` handle (8 bytes, `.u64` parameter). Read it with `fetch`; the
/// sampler (filtering, coordinates, address modes) is the host's, fixed when the
/// object was made. See the [module docs](self). sm_30.
#[repr(transparent)]
pub struct Texture<T: Texel, const D: usize> {
    handle: u64,
    _texel: PhantomData<T>,
}

/// A 1D [`Texture`].
pub type Texture1d<T> = Texture<T, 1>;
/// A 2D [`Texture`].
pub type Texture2d<T> = Texture<T, 2>;
/// A 3D [`Texture`].
pub type Texture3d<T> = Texture<T, 3>;

impl<T: Texel, const D: usize> Clone for Texture<T, D> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Texel, const D: usize> Copy for Texture<T, D> {}

impl<T: Texel, const D: usize> Texture<T, D> {
    const VALID: () = assert!(D >= 1 && D <= 3, "Texture: D must be 1, 2 or 3");
    const FIELDS: [FieldLayout; 1] = crate::abi::texture_dims_field::<D>();

    /// Wraps a texture object handle.
    ///
    /// # Safety
    /// On the GPU `handle` is a live `CUtexObject` of `D` dimensions over `T` texels
    /// for the whole launch; under the emulator it comes from
    /// `emulator::TextureDesc::as_param` (use that instead).
    #[inline(always)]
    pub const unsafe fn from_handle(handle: u64) -> Self {
        Texture {
            handle,
            _texel: PhantomData,
        }
    }

    /// The handle.
    #[inline(always)]
    pub const fn handle(self) -> u64 {
        self.handle
    }

    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    fn fetch_n(self, c: [f32; 3]) -> T::Fetch {
        let () = Self::VALID;
        let v: [f32; 4] = on_device!("Texture::fetch", {
            tex_asm::fetch::<D>(self.handle, c)
        }, emulated: {
            crate::emulator::texture::fetch(self.handle, D, c)
        });
        T::from_channels(v)
    }
}

impl<T: Texel> Texture<T, 1> {
    /// The texture at `x` (texels, or `[0, 1)` across with normalized coordinates),
    /// filtered and addressed as the sampler says. `tex.1d.v4.f32.f32`.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn fetch(self, x: f32) -> T::Fetch {
        self.fetch_n([x, 0.0, 0.0])
    }
}

impl<T: Texel> Texture<T, 2> {
    /// The texture at `(x, y)`; see [`Texture::<T, 1>::fetch`]. `tex.2d.v4.f32.f32`.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn fetch(self, x: f32, y: f32) -> T::Fetch {
        self.fetch_n([x, y, 0.0])
    }
}

impl<T: Texel> Texture<T, 3> {
    /// The texture at `(x, y, z)`; see [`Texture::<T, 1>::fetch`]. `tex.3d.v4.f32.f32`.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn fetch(self, x: f32, y: f32, z: f32) -> T::Fetch {
        self.fetch_n([x, y, z])
    }
}

// SAFETY: `#[repr(transparent)]` over a `u64`: rustc passes it as one `.u64`; any value
// is a valid `u64` (a fetch through a bad handle is the host's contract, and the
// host only makes live objects).
unsafe impl<T: Texel, const D: usize> KernelParam for Texture<T, D> {
    const ABI: ParamAbi = {
        let () = Self::VALID;
        ParamAbi {
            kind: TEXTURE,
            size: 8,
            align: 8,
            elem_size: core::mem::size_of::<T>() as u32,
            elem_class: <T as HasValueClass>::VALUE_CLASS,
            fields: &Self::FIELDS,
        }
    };
}

/// A texel type a CUDA array, and so a [`Surface`], can hold: `f32`, `[f32; 2]`,
/// `[f32; 4]`, `u8`, `[u8; 2]`, `[u8; 4]`, `u16`, `u32`, `[u32; 2]`, `[u32; 4]`, `i32`
/// (CUDA's array formats with 1, 2 or 4 channels; `host_loader::texture::Array` takes
/// the same list). Sealed.
pub trait SurfaceTexel: PlainData + private::Sealed {}

macro_rules! surface_texels {
    ($($t:ty),*) => {$(
        impl SurfaceTexel for $t {}
    )*};
}
// f32, [f32; 4], u8 and [u8; 4] are sealed by `texels!` already.
impl private::Sealed for [u8; 2] {}
impl private::Sealed for u16 {}
impl private::Sealed for u32 {}
impl private::Sealed for [u32; 2] {}
impl private::Sealed for [u32; 4] {}
impl private::Sealed for i32 {}
surface_texels!(f32, [f32; 2], [f32; 4], u8, [u8; 2], [u8; 4], u16, u32, [u32; 2], [u32; 4], i32);

/// A surface object of `D` dimensions (1, 2 or 3) over a CUDA array of `T`: the
/// `CUsurfObject` handle (8 bytes, `.u64` parameter). Reads and writes whole texels
/// at integer coordinates (elements, not bytes as CUDA C++'s `surf2Dread` takes
/// them); `T` is a [`SurfaceTexel`]. sm_30.
#[repr(transparent)]
pub struct Surface<T: SurfaceTexel, const D: usize> {
    handle: u64,
    _texel: PhantomData<T>,
}

/// A 1D [`Surface`].
pub type Surface1d<T> = Surface<T, 1>;
/// A 2D [`Surface`].
pub type Surface2d<T> = Surface<T, 2>;
/// A 3D [`Surface`].
pub type Surface3d<T> = Surface<T, 3>;

impl<T: SurfaceTexel, const D: usize> Clone for Surface<T, D> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: SurfaceTexel, const D: usize> Copy for Surface<T, D> {}

impl<T: SurfaceTexel, const D: usize> Surface<T, D> {
    const VALID: () = {
        assert!(D >= 1 && D <= 3, "Surface: D must be 1, 2 or 3");
        let s = core::mem::size_of::<T>();
        assert!(
            s == 1 || s == 2 || s == 4 || s == 8 || s == 16,
            "Surface: a texel must be 1, 2, 4, 8 or 16 bytes"
        );
    };
    const FIELDS: [FieldLayout; 1] = crate::abi::texture_dims_field::<D>();

    /// Wraps a surface object handle.
    ///
    /// # Safety
    /// On the GPU `handle` is a live `CUsurfObject` of `D` dimensions over a CUDA
    /// array of `T` for the whole launch; under the emulator it comes from
    /// `emulator::SurfaceDesc::as_param` (use that instead).
    #[inline(always)]
    pub const unsafe fn from_handle(handle: u64) -> Self {
        Surface {
            handle,
            _texel: PhantomData,
        }
    }

    /// The handle.
    #[inline(always)]
    pub const fn handle(self) -> u64 {
        self.handle
    }

    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    fn read_n(self, c: [u32; 3]) -> T {
        let () = Self::VALID;
        on_device!("Surface::read", {
            let bits = surf_asm::load::<D>(self.handle, core::mem::size_of::<T>(), c);
            // SAFETY: `T` is plain data of the loaded size (checked by VALID).
            unsafe { core::mem::transmute_copy::<[u32; 4], T>(&bits) }
        }, emulated: {
            let bytes = crate::emulator::texture::surface_read(self.handle, D, c, core::mem::size_of::<T>());
            // SAFETY: as above; `bytes` holds at least `size_of::<T>()` bytes.
            unsafe { core::ptr::read_unaligned(bytes.as_ptr().cast::<T>()) }
        })
    }

    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    fn write_n(self, c: [u32; 3], v: T) {
        let () = Self::VALID;
        let mut bits = [0u32; 4];
        // SAFETY: `T` fits the 16 bytes (VALID) and is plain data.
        unsafe { core::ptr::write_unaligned(bits.as_mut_ptr().cast::<T>(), v) };
        on_device!("Surface::write", {
            surf_asm::store::<D>(self.handle, core::mem::size_of::<T>(), c, bits)
        }, emulated: {
            crate::emulator::texture::surface_write(self.handle, D, c, core::mem::size_of::<T>(), bits)
        })
    }
}

impl<T: SurfaceTexel> Surface<T, 1> {
    /// Texel `x`. Out of range traps (GPU) or panics (emulator). `suld.b.1d.trap`.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn read(self, x: u32) -> T {
        self.read_n([x, 0, 0])
    }

    /// Writes texel `x`. Out of range traps (GPU) or panics (emulator). `sust.b.1d.trap`.
    ///
    /// # Safety
    /// No other thread of the launch reads or writes texel `x` unless a barrier
    /// orders the two accesses (the emulator does not check surface races), and no
    /// texture over the same array is read in this launch (the texture cache is not
    /// coherent with surface writes).
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub unsafe fn write(self, x: u32, v: T) {
        self.write_n([x, 0, 0], v)
    }
}

impl<T: SurfaceTexel> Surface<T, 2> {
    /// Texel `(x, y)`. Out of range traps (GPU) or panics (emulator). `suld.b.2d.trap`.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn read(self, x: u32, y: u32) -> T {
        self.read_n([x, y, 0])
    }

    /// Writes texel `(x, y)`; `sust.b.2d.trap`.
    ///
    /// # Safety
    /// As [`Surface::<T, 1>::write`].
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub unsafe fn write(self, x: u32, y: u32, v: T) {
        self.write_n([x, y, 0], v)
    }
}

impl<T: SurfaceTexel> Surface<T, 3> {
    /// Texel `(x, y, z)`. Out of range traps (GPU) or panics (emulator). `suld.b.3d.trap`.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn read(self, x: u32, y: u32, z: u32) -> T {
        self.read_n([x, y, z])
    }

    /// Writes texel `(x, y, z)`; `sust.b.3d.trap`.
    ///
    /// # Safety
    /// As [`Surface::<T, 1>::write`].
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub unsafe fn write(self, x: u32, y: u32, z: u32, v: T) {
        self.write_n([x, y, z], v)
    }
}

// SAFETY: as for `Texture`: one `.u64`, any value valid.
unsafe impl<T: SurfaceTexel, const D: usize> KernelParam for Surface<T, D> {
    const ABI: ParamAbi = {
        let () = Self::VALID;
        ParamAbi {
            kind: SURFACE,
            size: 8,
            align: 8,
            elem_size: core::mem::size_of::<T>() as u32,
            elem_class: <T as HasValueClass>::VALUE_CLASS,
            fields: &Self::FIELDS,
        }
    };
}

/// `tex` with float coordinates and four float results.
#[cfg(target_arch = "nvptx64")]
mod tex_asm {
    use core::arch::asm;

    #[inline(always)]
    pub(super) fn fetch<const D: usize>(t: u64, c: [f32; 3]) -> [f32; 4] {
        let (a, b, e, d): (f32, f32, f32, f32);
        // SAFETY: `tex` reads through the texture unit only; the handle is the
        // caller's live texture object (the `Texture` contract).
        unsafe {
            match D {
                1 => asm!("tex.1d.v4.f32.f32 {{{a}, {b}, {e}, {d}}}, [{t}, {{{x}}}];",
                    a = out(reg32) a, b = out(reg32) b, e = out(reg32) e, d = out(reg32) d,
                    t = in(reg64) t, x = in(reg32) c[0], options(pure, readonly, nostack, preserves_flags)),
                2 => asm!("tex.2d.v4.f32.f32 {{{a}, {b}, {e}, {d}}}, [{t}, {{{x}, {y}}}];",
                    a = out(reg32) a, b = out(reg32) b, e = out(reg32) e, d = out(reg32) d,
                    t = in(reg64) t, x = in(reg32) c[0], y = in(reg32) c[1], options(pure, readonly, nostack, preserves_flags)),
                _ => {
                    asm!("tex.3d.v4.f32.f32 {{{a}, {b}, {e}, {d}}}, [{t}, {{{x}, {y}, {z}, {z}}}];",
                    a = out(reg32) a, b = out(reg32) b, e = out(reg32) e, d = out(reg32) d,
                    t = in(reg64) t, x = in(reg32) c[0], y = in(reg32) c[1], z = in(reg32) c[2], options(pure, readonly, nostack, preserves_flags))
                }
            }
        }
        [a, b, e, d]
    }
}

/// `suld.b` / `sust.b` by texel size, coordinates in bytes along x.
#[cfg(target_arch = "nvptx64")]
mod surf_asm {
    use core::arch::asm;

    /// Expands `$mac!` with the dimension's form, its coordinate vector and a comment
    /// naming the unused coordinate operands (asm! refuses unused operands).
    macro_rules! by_dims {
        ($d:expr, $h:expr, $x:expr, $y:expr, $z:expr, $mac:ident) => {
            match $d {
                1 => $mac!("1d", "{{{x}}}", " // {y} {z}", $h, $x, $y, $z),
                2 => $mac!("2d", "{{{x}, {y}}}", " // {z}", $h, $x, $y, $z),
                _ => $mac!("3d", "{{{x}, {y}, {z}, {z}}}", "", $h, $x, $y, $z),
            }
        };
    }

    #[inline(always)]
    pub(super) fn load<const D: usize>(h: u64, size: usize, c: [u32; 3]) -> [u32; 4] {
        // Bytes along x; an index too large for 32 bits still traps (no surface is
        // 2^32 bytes wide).
        let x = c[0].checked_mul(size as u32).unwrap_or(u32::MAX);
        let (y, z) = (c[1], c[2]);
        let mut r = [0u32; 4];
        macro_rules! ld {
            ($dim:literal, $coords:literal, $tail:literal, $h:expr, $x:expr, $y:expr, $z:expr) => {
                // SAFETY: `suld` reads the surface only (the `Surface` contract makes
                // the handle live); out of range traps.
                unsafe {
                    match size {
                        1 => { let v: u16; asm!(concat!("suld.b.", $dim, ".b8.trap {{{v}}}, [{h}, ", $coords, "];", $tail),
                            v = out(reg16) v, h = in(reg64) $h, x = in(reg32) $x, y = in(reg32) $y, z = in(reg32) $z, options(readonly, nostack, preserves_flags)); r[0] = u32::from(v); }
                        2 => { let v: u16; asm!(concat!("suld.b.", $dim, ".b16.trap {{{v}}}, [{h}, ", $coords, "];", $tail),
                            v = out(reg16) v, h = in(reg64) $h, x = in(reg32) $x, y = in(reg32) $y, z = in(reg32) $z, options(readonly, nostack, preserves_flags)); r[0] = u32::from(v); }
                        4 => asm!(concat!("suld.b.", $dim, ".b32.trap {{{a}}}, [{h}, ", $coords, "];", $tail),
                            a = out(reg32) r[0], h = in(reg64) $h, x = in(reg32) $x, y = in(reg32) $y, z = in(reg32) $z, options(readonly, nostack, preserves_flags)),
                        8 => asm!(concat!("suld.b.", $dim, ".v2.b32.trap {{{a}, {b}}}, [{h}, ", $coords, "];", $tail),
                            a = out(reg32) r[0], b = out(reg32) r[1], h = in(reg64) $h, x = in(reg32) $x, y = in(reg32) $y, z = in(reg32) $z, options(readonly, nostack, preserves_flags)),
                        _ => asm!(concat!("suld.b.", $dim, ".v4.b32.trap {{{a}, {b}, {c}, {d}}}, [{h}, ", $coords, "];", $tail),
                            a = out(reg32) r[0], b = out(reg32) r[1], c = out(reg32) r[2], d = out(reg32) r[3], h = in(reg64) $h, x = in(reg32) $x, y = in(reg32) $y, z = in(reg32) $z, options(readonly, nostack, preserves_flags)),
                    }
                }
            };
        }
        by_dims!(D, h, x, y, z, ld);
        r
    }

    #[inline(always)]
    pub(super) fn store<const D: usize>(h: u64, size: usize, c: [u32; 3], v: [u32; 4]) {
        let x = c[0].checked_mul(size as u32).unwrap_or(u32::MAX); // as in `load`
        let (y, z) = (c[1], c[2]);
        macro_rules! st {
            ($dim:literal, $coords:literal, $tail:literal, $h:expr, $x:expr, $y:expr, $z:expr) => {
                // SAFETY: `sust` writes the texel only (the `Surface::write` contract);
                // out of range traps.
                unsafe {
                    match size {
                        1 => asm!(concat!("sust.b.", $dim, ".b8.trap [{h}, ", $coords, "], {{{a}}};", $tail),
                            a = in(reg16) v[0] as u16, h = in(reg64) $h, x = in(reg32) $x, y = in(reg32) $y, z = in(reg32) $z, options(nostack, preserves_flags)),
                        2 => asm!(concat!("sust.b.", $dim, ".b16.trap [{h}, ", $coords, "], {{{a}}};", $tail),
                            a = in(reg16) v[0] as u16, h = in(reg64) $h, x = in(reg32) $x, y = in(reg32) $y, z = in(reg32) $z, options(nostack, preserves_flags)),
                        4 => asm!(concat!("sust.b.", $dim, ".b32.trap [{h}, ", $coords, "], {{{a}}};", $tail),
                            a = in(reg32) v[0], h = in(reg64) $h, x = in(reg32) $x, y = in(reg32) $y, z = in(reg32) $z, options(nostack, preserves_flags)),
                        8 => asm!(concat!("sust.b.", $dim, ".v2.b32.trap [{h}, ", $coords, "], {{{a}, {b}}};", $tail),
                            a = in(reg32) v[0], b = in(reg32) v[1], h = in(reg64) $h, x = in(reg32) $x, y = in(reg32) $y, z = in(reg32) $z, options(nostack, preserves_flags)),
                        _ => asm!(concat!("sust.b.", $dim, ".v4.b32.trap [{h}, ", $coords, "], {{{a}, {b}, {c}, {d}}};", $tail),
                            a = in(reg32) v[0], b = in(reg32) v[1], c = in(reg32) v[2], d = in(reg32) v[3], h = in(reg64) $h, x = in(reg32) $x, y = in(reg32) $y, z = in(reg32) $z, options(nostack, preserves_flags)),
                    }
                }
            };
        }
        by_dims!(D, h, x, y, z, st);
    }
}
