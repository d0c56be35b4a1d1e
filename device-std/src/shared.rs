//! [`SharedArray`]: a static allocation in the `.shared` state space, and
//! [`SharedPtr`], an address in the shared window.

use crate::host::on_device;
use core::marker::PhantomData;

/// `N` elements of `T` in the CTA's shared memory, aligned to `ALIGN` bytes.
///
/// [`SharedArray::new`] declares one
/// `.shared .align ALIGN .b8 %rK_smem[N * size_of::<T>()]` at its call site
/// (PTX ISA 9.0 §5.1.5 "Shared State Space"), through inline assembly, since
/// stock rustc places every `static` in `.global`. The name comes from the
/// register that receives the array's 32-bit shared address, which is unique
/// within the function, and the assembly is not `pure`, so two declarations
/// are never merged: **each call site that survives inlining is its own
/// allocation**, and two arrays never alias. A call site executed again (in a
/// loop, or by a second call of the same function) yields the same memory.
/// Declare arrays at the top of the kernel, outside branches and loops.
///
/// Element accesses ([`read`](Self::read), [`write`](Self::write)) are
/// `ld.shared`/`st.shared` on the 32-bit shared address for elements of 1, 2,
/// 4 or 8 bytes (when `ALIGN` keeps them naturally aligned), and generic
/// loads and stores otherwise.
///
/// The memory starts uninitialised and is shared by every thread of the CTA.
/// Access goes through `read`/`write`, [`SharedPtr`]s or raw pointers, never
/// through a `&mut [T]` over the whole array, since other threads access it
/// concurrently; order accesses with [`sync_threads`](crate::thread::sync_threads).
///
/// `ALIGN` must be a power of two from 4 to 1024 and at least
/// `align_of::<T>()`; other values fail to compile.
///
/// # `tile[tid]`
///
/// CUDA C++ indexes a `__shared__` array directly. Safe `IndexMut` cannot be
/// sound here: it hands out a `&mut T`, and safe code in every thread of the
/// CTA could take `&mut tile[0]` at once, which is undefined behaviour in Rust
/// (not merely a data race the hardware resolves). So the safe form is one
/// call per access, which compiles to the same single `st.shared`/`ld.shared`:
///
/// ```no_run
/// use device_std::{thread, SharedArray};
/// fn body() -> f32 {
///     let tile = SharedArray::<f32, 256>::new();
///     let tid = thread::threadIdx_x() as usize;
///     tile.write(tid, tid as f32);          // tile[tid] = x
///     thread::sync_threads();
///     tile.read(tid.saturating_sub(1))      // tile[tid - 1]
/// }
/// ```
///
/// The static shared form, `static mut TILE: SharedArray<f32, 256> =
/// SharedArray::UNINIT;` ([`UNINIT`](Self::UNINIT)), is indexed as CUDA's is,
/// inside `unsafe` (every access to a `static mut` is), where the caller takes
/// on what safe code could not: `unsafe { TILE[tid] = x; }`. Indexing a handle
/// panics (traps on the GPU, as does a local copy of `UNINIT`) instead of handing
/// out a reference.
///
/// `read` and `write` check the index (a trap past `N`); [`ptr`](Self::ptr)
/// and [`SharedPtr::add`] give addresses for unchecked or atomic access.
#[derive(Debug)]
pub struct SharedArray<T, const N: usize, const ALIGN: usize = 16> {
    /// Address of element 0 in the shared window; in [`UNINIT`](Self::UNINIT), the
    /// size and alignment for the linker instead.
    addr: u32,
    /// 0, or [`STATIC_TAG`] in [`UNINIT`](Self::UNINIT) (read by the emulator; the
    /// GPU build's linker reads it from the initializer).
    #[cfg_attr(not(emulated), allow(dead_code))]
    tag: u32,
    _not_send_sync: PhantomData<*mut T>,
}

/// Word 1 of [`SharedArray::UNINIT`] (`"SHST"` in memory order): with word 0 =
/// `bytes | log2(ALIGN) << 24`, the 8-byte initializer by which ptx-linker finds a
/// `static` of the static shared form and makes it a `.shared` allocation.
pub const STATIC_TAG: u32 = u32::from_le_bytes(*b"SHST");

impl<T: Copy, const N: usize, const ALIGN: usize> SharedArray<T, N, ALIGN> {
    /// Size of the allocation in bytes.
    pub const BYTES: usize = N * core::mem::size_of::<T>();

    const VALID: () = {
        assert!(
            ALIGN.is_power_of_two() && ALIGN >= 4 && ALIGN <= 1024,
            "ALIGN must be a power of two in 4..=1024"
        );
        assert!(
            ALIGN >= core::mem::align_of::<T>(),
            "ALIGN must be at least align_of::<T>()"
        );
        assert!(N > 0, "a SharedArray needs at least one element");
    };

    /// Declares the allocation at this call site; see the type's docs.
    ///
    /// Under the emulator, the call site (`#[track_caller]`) names the
    /// allocation: every thread of a block that runs this call gets the same
    /// memory, each block its own.
    #[inline(always)]
    #[allow(clippy::new_without_default)]
    #[cfg_attr(emulated, track_caller)]
    pub fn new() -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::VALID;
        let addr: u32 = on_device!("SharedArray::new", {
            let addr: u32;
            // SAFETY: declares a fresh function-scope `.shared` variable
            // named after the output register (unique within the function)
            // and takes its shared-window address. Not `pure`: identical
            // declarations must not be merged.
            unsafe {
                core::arch::asm!(
                    ".shared .align {align} .b8 {r}_smem[{bytes}];",
                    "mov.u32 {r}, {r}_smem;",
                    r = out(reg32) addr,
                    align = const ALIGN,
                    bytes = const Self::BYTES,
                    options(nostack, preserves_flags),
                );
            }
            addr
        }, emulated: {
            crate::emulator::shared_mem::static_alloc(core::panic::Location::caller(), Self::BYTES, ALIGN)
        });
        SharedArray {
            addr,
            tag: 0,
            _not_send_sync: PhantomData,
        }
    }

    /// The static shared form: `static mut TILE: SharedArray<f32, 256> =
    /// SharedArray::UNINIT;` declares one array of the CTA's shared memory, as
    /// CUDA's `__shared__ float tile[256];` at file scope does, indexed inside
    /// `unsafe` (`unsafe { TILE[tid] = x; }`, `unsafe { TILE[tid - 1] }`).
    ///
    /// Stock rustc puts a `static` in `.global`; ptx-linker finds this
    /// initializer (`bytes | log2(ALIGN) << 24`, then [`STATIC_TAG`]) and makes the
    /// variable a `.shared .align ALIGN .b8 NAME[BYTES]` allocation, each CTA its
    /// own, uninitialised, at most 16 MiB (a compile error above; ptxas refuses more
    /// than the target's shared memory). Only indexing works on it
    /// (`Index`/`IndexMut`, which find the array from the static's address); `read`,
    /// `write`, `ptr`, `part` and `cast` belong to the handles [`new`](Self::new)
    /// returns, and the linker refuses a build that uses the static's bytes any
    /// other way (naming the static).
    ///
    /// Every thread of the CTA indexes the same memory: order accesses with
    /// [`sync_threads`](crate::thread::sync_threads); two threads holding `&mut`
    /// to one element at once is undefined behaviour, which the `unsafe` block
    /// takes on. Under the emulator each block gets its own copy, as on the GPU.
    /// Minimum `sm_XX`: any. Source: CUDA `__shared__` variables; PTX ISA 9.0
    /// §5.1.5.
    pub const UNINIT: Self = {
        #[allow(clippy::let_unit_value)]
        let () = Self::VALID;
        // The size shares its word with log2(ALIGN) in the initializer.
        assert!(
            Self::BYTES < 1 << 24,
            "a static shared array must be smaller than 16 MiB"
        );
        SharedArray {
            addr: Self::BYTES as u32 | (ALIGN.trailing_zeros() << 24),
            tag: STATIC_TAG,
            _not_send_sync: PhantomData,
        }
    };

    /// The generic address of element `i` of a static of the static shared form
    /// ([`UNINIT`](Self::UNINIT)), for `Index`/`IndexMut`. Panics (traps) when
    /// `i >= N`. On the GPU the linker has made the static the array
    /// itself, so its generic address lies in shared memory (`isspacep.shared`).
    /// A handle from [`new`](Self::new) is refused (and on the GPU a local copy of
    /// `UNINIT`): indexing hands out references, which only the `unsafe` access to a
    /// `static mut` may.
    #[inline(always)]
    #[track_caller]
    fn indexed_element(&self, i: usize) -> *mut T {
        if i >= N {
            crate::bounds::out_of_bounds(c"SharedArray", i, N);
        }
        const WRONG: &str = "SharedArray indexing works only on a `static mut` of the static shared form \
             (`static mut TILE: SharedArray<T, N> = SharedArray::UNINIT;`); use read/write/ptr on handles";
        let (ok, base): (bool, u32) = on_device!("SharedArray indexing", {
            let (ok, base): (u32, u32);
            // SAFETY: tests and converts an address; touches no memory.
            unsafe {
                core::arch::asm!(
                    "{{",
                    ".reg .pred %is;",
                    ".reg .u64 %t;",
                    "isspacep.shared %is, {p};",
                    "cvta.to.shared.u64 %t, {p};",
                    "cvt.u32.u64 {a}, %t;",
                    "selp.u32 {ok}, 1, 0, %is;",
                    "}}",
                    a = out(reg32) base,
                    ok = out(reg32) ok,
                    p = in(reg64) self as *const Self as u64,
                    options(pure, nomem, nostack),
                );
            }
            (ok != 0, base)
        }, emulated: {
            if self.tag == STATIC_TAG {
                let base = crate::emulator::shared_mem::static_alloc_keyed(
                    self as *const Self as usize,
                    core::panic::Location::caller(),
                    Self::BYTES,
                    ALIGN,
                );
                (true, base)
            } else {
                (false, 0)
            }
        });
        assert!(ok, "{}", WRONG);
        SharedPtr::<T>::from_addr(base).add(i).to_generic()
    }

    /// The array at shared address `addr`, which the caller has checked holds `N`
    /// elements aligned to `ALIGN` (a view of memory allocated elsewhere, e.g. the
    /// dynamic shared memory: `DynamicSharedArray::array`).
    #[inline(always)]
    pub(crate) fn at_addr(addr: u32) -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::VALID;
        SharedArray {
            addr,
            tag: 0,
            _not_send_sync: PhantomData,
        }
    }

    /// Number of elements, `N`.
    #[inline(always)]
    pub const fn len(&self) -> usize {
        N
    }

    /// `true` when `N == 0` (never, since `N == 0` fails to compile).
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        N == 0
    }

    /// Reads element `i` (`ld.shared`). Panics (traps) when `i >= N`.
    ///
    /// Reading an element no thread has written yields an unspecified value.
    #[inline(always)]
    #[track_caller]
    pub fn read(&self, i: usize) -> T {
        if i >= N {
            crate::bounds::out_of_bounds(c"SharedArray", i, N);
        }
        // SAFETY: in bounds of a live allocation aligned for T.
        unsafe { self.ptr(i).read() }
    }

    /// Writes element `i` (`st.shared`). Panics (traps) when `i >= N`.
    #[inline(always)]
    #[track_caller]
    pub fn write(&self, i: usize, value: T) {
        if i >= N {
            crate::bounds::out_of_bounds(c"SharedArray", i, N);
        }
        // SAFETY: in bounds of a live allocation aligned for T; the type
        // hands out no reference to an element.
        unsafe { self.ptr(i).write(value) }
    }

    /// The shared-window address of element `i`, for [`atomic`](crate::atomic)
    /// operations on shared memory. Panics (traps) when `i >= N`.
    #[inline(always)]
    #[track_caller]
    pub fn ptr(&self, i: usize) -> SharedPtr<T> {
        if i >= N {
            crate::bounds::out_of_bounds(c"SharedArray", i, N);
        }
        SharedPtr::<T> {
            addr: self.addr + (i * core::mem::size_of::<T>()) as u32,
            _marker: PhantomData,
        }
    }

    /// Part `i` of the array cut into `N / M` consecutive parts of `M` elements,
    /// as an array of its own (the same memory, not a new allocation): e.g. one
    /// box-sized part of a ring of tensor-copy stages. `M` must divide `N`, and
    /// `M * size_of::<T>()` be a multiple of `ALIGN`, so every part keeps the
    /// alignment (compile errors otherwise). Panics (traps) when `i >= N / M`.
    #[inline(always)]
    #[track_caller]
    #[allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV
    pub fn part<const M: usize>(&self, i: usize) -> SharedArray<T, M, ALIGN> {
        const {
            assert!(M > 0 && N % M == 0, "SharedArray::part: M must divide N");
            assert!(
                (M * core::mem::size_of::<T>()) % ALIGN == 0,
                "SharedArray::part: each part must span a multiple of ALIGN bytes"
            );
        }
        if i >= N / M {
            crate::bounds::out_of_bounds(c"SharedArray::part", i, N / M);
        }
        SharedArray {
            addr: self.addr + (i * M * core::mem::size_of::<T>()) as u32,
            tag: 0,
            _not_send_sync: PhantomData,
        }
    }

    /// The same memory as an array of `M` elements of `U` (not a new allocation): e.g.
    /// a `bf16` tile that `cp_async` fills in 16-byte chunks (`[u32; 4]`). The sizes
    /// must match (`M * size_of::<U>() == N * size_of::<T>()`) and `ALIGN` be at least
    /// `align_of::<U>()` (compile errors otherwise).
    #[inline(always)]
    pub fn cast<U: Copy, const M: usize>(&self) -> SharedArray<U, M, ALIGN> {
        const {
            assert!(
                M * core::mem::size_of::<U>() == N * core::mem::size_of::<T>(),
                "SharedArray::cast: the byte sizes must match"
            );
            assert!(
                ALIGN >= core::mem::align_of::<U>(),
                "SharedArray::cast: ALIGN must be at least align_of::<U>()"
            );
        }
        SharedArray {
            addr: self.addr,
            tag: 0,
            _not_send_sync: PhantomData,
        }
    }

    /// Generic-address pointer to element 0, aligned to `ALIGN`.
    #[inline(always)]
    pub fn as_ptr(&self) -> *const T {
        self.as_mut_ptr()
    }

    /// Mutable generic-address pointer to element 0, aligned to `ALIGN`.
    #[inline(always)]
    pub fn as_mut_ptr(&self) -> *mut T {
        SharedPtr::<T> {
            addr: self.addr,
            _marker: PhantomData,
        }
        .to_generic()
    }
}

/// `TILE[i]` for the static shared form ([`SharedArray::UNINIT`]): a reference to
/// element `i` through its generic address. Panics (traps) when `i >= N`, and on
/// anything but such a static (a handle: use `read`/`write`). The emulator does not
/// check accesses through the reference for races or uninitialised reads, as it does
/// `read`/`write`.
impl<T: Copy, const N: usize, const ALIGN: usize> core::ops::Index<usize>
    for SharedArray<T, N, ALIGN>
{
    type Output = T;

    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    fn index(&self, i: usize) -> &T {
        // SAFETY: element i of a live CTA allocation, aligned for T; see UNINIT for
        // what the caller's `unsafe` (a `static mut` access) takes on.
        unsafe { &*self.indexed_element(i) }
    }
}

/// `TILE[i] = x` for the static shared form; see [`core::ops::Index`].
impl<T: Copy, const N: usize, const ALIGN: usize> core::ops::IndexMut<usize>
    for SharedArray<T, N, ALIGN>
{
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        // SAFETY: as for `index`.
        unsafe { &mut *self.indexed_element(i) }
    }
}

/// An address in the shared window (32 bits), pointing at a `T`.
///
/// Loads and stores through it are `ld.shared`/`st.shared` (for 1, 2, 4 and
/// 8-byte `T` that the known alignment allows; a generic access otherwise),
/// and [`atomic::shared`](crate::atomic::shared) operates on it. Made by
/// [`SharedArray::ptr`] and [`DynamicSharedArray::ptr`](crate::DynamicSharedArray::ptr).
#[derive(Debug)]
pub struct SharedPtr<T> {
    addr: u32,
    _marker: PhantomData<*mut T>,
}

impl<T> Clone for SharedPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SharedPtr<T> {}

impl<T> SharedPtr<T> {
    /// Wraps a shared-window address.
    #[inline(always)]
    pub(crate) fn from_addr(addr: u32) -> Self {
        SharedPtr {
            addr,
            _marker: PhantomData,
        }
    }

    /// The shared-window address of a generic pointer into shared memory
    /// (`cvta.to.shared.u64`). For a pointer outside shared memory the
    /// result is unspecified (using it is `unsafe` anyway).
    #[inline(always)]
    pub fn from_generic(ptr: *mut T) -> Self {
        let addr: u32 = on_device!("SharedPtr::from_generic", {
            let shared: u64;
            // SAFETY: converts an address; touches no memory.
            unsafe {
                core::arch::asm!(
                    "cvta.to.shared.u64 {s}, {g};",
                    s = out(reg64) shared,
                    g = in(reg64) ptr,
                    options(pure, nomem, nostack, preserves_flags),
                );
            }
            shared as u32
        }, emulated: {
            crate::emulator::shared_mem::from_generic(ptr.cast())
        });
        Self::from_addr(addr)
    }
}

impl<T: Copy> SharedPtr<T> {
    /// The raw shared-window address, in bytes.
    #[inline(always)]
    pub fn addr(self) -> u32 {
        self.addr
    }

    /// The same address as a pointer to `U` (like `pointer::cast`); reading
    /// or writing through it needs the address aligned for `U`.
    #[inline(always)]
    pub fn cast<U>(self) -> SharedPtr<U> {
        SharedPtr::from_addr(self.addr)
    }

    /// The pointer `count` elements further on (like `pointer::add`).
    #[inline(always)]
    #[allow(clippy::should_implement_trait)]
    pub fn add(self, count: usize) -> Self {
        SharedPtr {
            addr: self.addr + (count * core::mem::size_of::<T>()) as u32,
            _marker: PhantomData,
        }
    }

    /// The same location as a generic address (`cvta.shared.u64`).
    #[inline(always)]
    pub fn to_generic(self) -> *mut T {
        on_device!("SharedPtr::to_generic", {
            let generic: u64;
            // SAFETY: converts an address; touches no memory.
            unsafe {
                core::arch::asm!(
                    "cvta.shared.u64 {g}, {s};",
                    g = out(reg64) generic,
                    s = in(reg64) self.addr as u64,
                    options(pure, nomem, nostack, preserves_flags),
                );
            }
            generic as *mut T
        }, emulated: {
            crate::emulator::shared_mem::to_generic(self.addr).cast()
        })
    }

    /// Reads the `T` at this address: one `ld.shared` for a `T` of 1, 2, 4,
    /// 8 or 16 bytes aligned to its size (every primitive, and the 16-byte
    /// [`vector`](crate::vector) types), a generic load otherwise.
    ///
    /// # Safety
    /// The address lies in a live shared allocation of the calling CTA, is
    /// aligned for `T`, and holds a valid `T`; no other thread writes it
    /// concurrently (unordered by a barrier or fence).
    #[inline(always)]
    pub unsafe fn read(self) -> T {
        on_device!("SharedPtr::read", {
            if natural_width::<T>() {
                // SAFETY: the caller's contract; `T` is 1, 2, 4 or 8 bytes
                // and the address, aligned for `T`, is aligned to its size.
                unsafe { ld_shared::<T>(self.addr) }
            } else {
                // SAFETY: the caller's contract.
                unsafe { self.to_generic().read() }
            }
        }, emulated: {
            crate::emulator::shared_mem::load::<T>(self.addr)
        })
    }

    /// Writes `value` at this address (`st.shared.bN`, as for [`read`](Self::read)).
    ///
    /// # Safety
    /// The address lies in a live shared allocation of the calling CTA and is
    /// aligned for `T`; no other thread accesses it concurrently.
    #[inline(always)]
    pub unsafe fn write(self, value: T) {
        on_device!("SharedPtr::write", {
            if natural_width::<T>() {
                // SAFETY: as in `read`.
                unsafe { st_shared::<T>(self.addr, value) }
            } else {
                // SAFETY: the caller's contract.
                unsafe { self.to_generic().write(value) }
            }
        }, emulated: {
            crate::emulator::shared_mem::store::<T>(self.addr, value)
        })
    }
}

/// `true` when `T` is 1, 2, 4, 8 or 16 bytes and aligned to its size, so an
/// address aligned for `T` suits one `ld.shared`/`st.shared` of that width
/// (16 bytes: `.v4.b32`, e.g. [`F32x4`](crate::vector::F32x4)).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
const fn natural_width<T>() -> bool {
    let size = core::mem::size_of::<T>();
    matches!(size, 1 | 2 | 4 | 8 | 16) && core::mem::align_of::<T>() == size
}

/// `ld.shared.bN` of a 1/2/4/8-byte `T`, `ld.shared.v4.b32` of a 16-byte one.
///
/// # Safety
/// `size_of::<T>()` is 1, 2, 4, 8 or 16; `addr` is a shared address aligned to it
/// holding a valid `T`.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
unsafe fn ld_shared<T: Copy>(addr: u32) -> T {
    use core::arch::asm;
    use core::mem::transmute_copy;
    // SAFETY (all arms): the caller's contract; the asm reads `size_of::<T>()`
    // bytes at `addr` and nothing else, and `transmute_copy` reinterprets the
    // bits, which hold a valid `T`.
    unsafe {
        match core::mem::size_of::<T>() {
            1 => {
                let v: u16;
                asm!("ld.shared.u8 {v}, [{a}];", v = out(reg16) v, a = in(reg32) addr, options(nostack, readonly, preserves_flags));
                transmute_copy(&(v as u8))
            }
            2 => {
                let v: u16;
                asm!("ld.shared.b16 {v}, [{a}];", v = out(reg16) v, a = in(reg32) addr, options(nostack, readonly, preserves_flags));
                transmute_copy(&v)
            }
            4 => {
                let v: u32;
                asm!("ld.shared.b32 {v}, [{a}];", v = out(reg32) v, a = in(reg32) addr, options(nostack, readonly, preserves_flags));
                transmute_copy(&v)
            }
            8 => {
                let v: u64;
                asm!("ld.shared.b64 {v}, [{a}];", v = out(reg64) v, a = in(reg32) addr, options(nostack, readonly, preserves_flags));
                transmute_copy(&v)
            }
            _ => {
                let (x, y, z, w): (u32, u32, u32, u32);
                asm!(
                    "ld.shared.v4.b32 {{{x}, {y}, {z}, {w}}}, [{a}];",
                    x = out(reg32) x, y = out(reg32) y, z = out(reg32) z, w = out(reg32) w,
                    a = in(reg32) addr, options(nostack, readonly, preserves_flags),
                );
                transmute_copy(&[x, y, z, w])
            }
        }
    }
}

/// `st.shared.bN` of a 1/2/4/8-byte `T`, `st.shared.v4.b32` of a 16-byte one.
///
/// # Safety
/// As for [`ld_shared`], minus "holding a valid `T`".
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
unsafe fn st_shared<T: Copy>(addr: u32, value: T) {
    use core::arch::asm;
    use core::mem::transmute_copy;
    // SAFETY (all arms): the caller's contract; `transmute_copy` reads the
    // `size_of::<T>()` bytes of `value` as an integer of the same size.
    unsafe {
        match core::mem::size_of::<T>() {
            1 => {
                let v: u8 = transmute_copy(&value);
                asm!("st.shared.u8 [{a}], {v};", v = in(reg16) v as u16, a = in(reg32) addr, options(nostack, preserves_flags));
            }
            2 => {
                let v: u16 = transmute_copy(&value);
                asm!("st.shared.b16 [{a}], {v};", v = in(reg16) v, a = in(reg32) addr, options(nostack, preserves_flags));
            }
            4 => {
                let v: u32 = transmute_copy(&value);
                asm!("st.shared.b32 [{a}], {v};", v = in(reg32) v, a = in(reg32) addr, options(nostack, preserves_flags));
            }
            8 => {
                let v: u64 = transmute_copy(&value);
                asm!("st.shared.b64 [{a}], {v};", v = in(reg64) v, a = in(reg32) addr, options(nostack, preserves_flags));
            }
            _ => {
                let v: [u32; 4] = transmute_copy(&value);
                asm!(
                    "st.shared.v4.b32 [{a}], {{{x}, {y}, {z}, {w}}};",
                    x = in(reg32) v[0], y = in(reg32) v[1], z = in(reg32) v[2], w = in(reg32) v[3],
                    a = in(reg32) addr, options(nostack, preserves_flags),
                );
            }
        }
    }
}

/// Shared memory an asynchronous copy (`cp_async`, `bulk`) may read or write: [`SharedArray`] and
/// [`DynamicSharedArray`](crate::DynamicSharedArray). Sealed.
pub trait SharedRegion<T>: sealed::Sealed {
    /// Number of elements.
    fn region_len(&self) -> usize;
    /// Shared-window address of element `i` (`i <= len`), in bytes.
    fn region_addr(&self, i: usize) -> u32;
}

mod sealed {
    pub trait Sealed {}
    impl<T, const N: usize, const A: usize> Sealed for crate::SharedArray<T, N, A> {}
    impl<T, const A: usize> Sealed for crate::DynamicSharedArray<T, A> {}
}

impl<T: Copy, const N: usize, const A: usize> SharedRegion<T> for SharedArray<T, N, A> {
    #[inline(always)]
    fn region_len(&self) -> usize {
        N
    }
    #[inline(always)]
    fn region_addr(&self, i: usize) -> u32 {
        self.ptr(0).addr() + (i * core::mem::size_of::<T>()) as u32
    }
}

impl<T: Copy, const A: usize> SharedRegion<T> for crate::DynamicSharedArray<T, A>
where
    crate::dynamic_shared::Align<A>: crate::dynamic_shared::AlignUnit,
{
    #[inline(always)]
    fn region_len(&self) -> usize {
        self.len()
    }
    #[inline(always)]
    fn region_addr(&self, i: usize) -> u32 {
        crate::SharedPtr::from_generic(self.add(i)).addr()
    }
}

/// Whether a generic address lies in the global window (`isspacep.global`, PTX ISA 9.0
/// §9.7.9.23): what the asynchronous copies need of their sources, since a local array
/// (the thread's stack) or a shared one passed as a `&[T]` would fault the copy or, the
/// copy being asynchronous, be read after it is gone. Always `true` off the device.
#[inline(always)]
pub(crate) fn is_global<T>(ptr: *const T) -> bool {
    crate::host::on_device!("is_global", {
        let global: u32;
        // SAFETY: classifies an address; reads no memory.
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred %p; isspacep.global %p, {a}; selp.u32 {g}, 1, 0, %p; }}",
                a = in(reg64) ptr,
                g = out(reg32) global,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        global != 0
    }, emulated: {
        let _ = ptr;
        true
    })
}
