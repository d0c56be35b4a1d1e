//! [`DynamicSharedArray`]: the launch-sized (dynamic) shared memory, carved
//! into typed arrays by byte offset.

use crate::host::on_device;
use crate::shared::SharedPtr;
use core::marker::PhantomData;

/// Elements of `T` in the CTA's dynamic shared memory (the
/// `shared_mem_bytes` of the launch), starting at a byte offset that is a
/// multiple of `ALIGN`.
///
/// # What the PTX says
///
/// The base is `core::intrinsics::gpu::gpu_launch_sized_workgroup_mem`, which
/// rustc lowers to **one module-scope declaration**
///
/// ```text
/// .extern .shared .align A .b8 gpu_launch_sized_workgroup_mem[];
/// ```
///
/// where `A` is the largest `ALIGN` any `DynamicSharedArray` in the module
/// asks for (PTX ISA 9.0 §5.1.5; CUDA C++'s `extern __shared__`). `ptx-linker`
/// merges these declarations across crates to the largest alignment and
/// reports it per kernel in the link map (`dynamic_shared_align`), which is
/// how the host sees what a kernel needs. Accesses through the array compile
/// to `ld.shared`/`st.shared` on that symbol.
///
/// # Carving one allocation
///
/// [`get`](Self::get) is the array at offset 0; [`offset`](Self::offset)
/// starts one `byte_offset` bytes further, so one launch-sized allocation
/// holds several arrays:
///
/// ```no_run
/// use device_std::DynamicSharedArray;
/// fn body(n: usize) {
///     let values = DynamicSharedArray::<f32>::get();          // bytes 0..4*n
///     let flags = DynamicSharedArray::<u32>::offset(4 * n);   // bytes 4*n..; traps
///     # let _ = (values, flags);                            // unless 4*n % 16 == 0
/// }
/// ```
///
/// The length of an array is what the launch provided past its offset
/// (`%dynamic_smem_size`), so [`read`](Self::read) and [`write`](Self::write)
/// are bounds-checked against the real allocation. Two arrays made with
/// overlapping byte ranges do alias; keep the ranges apart.
///
/// `ALIGN` is a power of two from 16 to 1024 (default 16), at least
/// `align_of::<T>()`; other values fail to compile.
#[derive(Debug)]
pub struct DynamicSharedArray<T, const ALIGN: usize = 16> {
    base: *mut T,
    len: usize,
    _not_send_sync: PhantomData<*mut T>,
}

/// Types whose alignment is `N` bytes, to ask rustc for a dynamic shared
/// memory base of that alignment.
#[doc(hidden)]
pub trait AlignUnit {
    /// A type aligned to the requested bytes.
    type Unit;
}

/// The alignment `N` in bytes, as a type.
#[doc(hidden)]
#[derive(Debug)]
pub struct Align<const N: usize>;

macro_rules! align_units {
    ($($n:literal => $name:ident),*) => {$(
        #[doc(hidden)]
        #[repr(C, align($n))]
        #[derive(Debug)]
        pub struct $name(u8);
        impl AlignUnit for Align<$n> {
            type Unit = $name;
        }
    )*};
}
align_units!(16 => A16, 32 => A32, 64 => A64, 128 => A128, 256 => A256, 512 => A512, 1024 => A1024);

impl<T: Copy, const ALIGN: usize> DynamicSharedArray<T, ALIGN>
where
    Align<ALIGN>: AlignUnit,
{
    const VALID: () = assert!(
        ALIGN >= core::mem::align_of::<T>(),
        "ALIGN must be at least align_of::<T>()"
    );

    /// The array at byte offset 0 of the dynamic shared memory.
    #[inline(always)]
    pub fn get() -> Self {
        Self::offset(0)
    }

    /// The array starting `byte_offset` bytes into the dynamic shared memory.
    /// Panics (traps) when `byte_offset` is not a multiple of `ALIGN`.
    /// Its length is `(dynamic_smem_size - byte_offset) / size_of::<T>()`
    /// elements, 0 when the offset is past the end.
    #[inline(always)]
    pub fn offset(byte_offset: usize) -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::VALID;
        #[allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV
        let aligned = byte_offset % ALIGN == 0;
        assert!(
            aligned,
            "DynamicSharedArray offset is not a multiple of ALIGN"
        );
        let (base, total): (*mut u8, usize) = on_device!("DynamicSharedArray::offset", {
            let base = core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<
                <Align<ALIGN> as AlignUnit>::Unit,
            >() as *mut u8;
            (base, dynamic_smem_size() as usize)
        }, emulated: {
            crate::emulator::shared_mem::dynamic()
        });
        let size = core::mem::size_of::<T>().max(1);
        DynamicSharedArray {
            // SAFETY: only an address computation; `wrapping_add` keeps it
            // defined even past the end, where `len` is 0.
            base: base.wrapping_add(byte_offset) as *mut T,
            len: total.saturating_sub(byte_offset) / size,
            _not_send_sync: PhantomData,
        }
    }

    /// Number of elements that fit between the offset and the end of the
    /// launch's dynamic shared memory.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` when no element fits.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Reads element `i` (`ld.shared`). Panics (traps) when `i >= len()`.
    #[inline(always)]
    #[track_caller]
    pub fn read(&self, i: usize) -> T {
        if i >= self.len {
            crate::bounds::out_of_bounds(c"DynamicSharedArray", i, self.len);
        }
        // The emulator checks the access through the shared window.
        #[cfg(emulated)]
        // SAFETY: as below; the emulated load checks bounds and alignment.
        let value = unsafe { SharedPtr::from_generic(self.base.wrapping_add(i)).read() };
        #[cfg(not(emulated))]
        // SAFETY: in bounds of the launch's dynamic shared memory, aligned
        // for T (ALIGN >= align_of::<T>() and i * size_of::<T>() keeps it).
        let value = unsafe { self.base.add(i).read() };
        value
    }

    /// Writes element `i` (`st.shared`). Panics (traps) when `i >= len()`.
    #[inline(always)]
    #[track_caller]
    pub fn write(&self, i: usize, value: T) {
        if i >= self.len {
            crate::bounds::out_of_bounds(c"DynamicSharedArray", i, self.len);
        }
        #[cfg(emulated)]
        // SAFETY: as below; the emulated store checks bounds and alignment.
        unsafe {
            SharedPtr::from_generic(self.base.wrapping_add(i)).write(value)
        };
        #[cfg(not(emulated))]
        // SAFETY: as in `read`; the type hands out no reference to an element.
        unsafe {
            self.base.add(i).write(value)
        };
    }

    /// Generic-address pointer to element 0, aligned to `ALIGN`.
    ///
    /// Under the emulator, accesses through it are not seen, so the dynamic
    /// shared memory is only bounds-checked for the rest of the block.
    #[inline(always)]
    pub fn as_mut_ptr(&self) -> *mut T {
        #[cfg(emulated)]
        crate::emulator::shared_mem::to_generic(crate::emulator::shared_mem::from_generic(
            self.base.cast(),
        ));
        self.base
    }

    /// The generic-address pointer to element `i`, as `*mut T::add` forms it
    /// (`as_mut_ptr().wrapping_add(i)`), so the array is used like the pointer
    /// CUDA C++'s `extern __shared__ float smem[]` gives:
    ///
    /// ```no_run
    /// use device_std::{thread, DynamicSharedArray};
    /// fn body() {
    ///     let smem = DynamicSharedArray::<f32>::get();
    ///     let t = thread::threadIdx_x() as usize;
    ///     assert!(t < smem.len());
    ///     // SAFETY: t < len(), and only thread t writes element t before the barrier.
    ///     unsafe { *smem.add(t) = t as f32 };
    ///     thread::sync_threads();
    /// }
    /// ```
    ///
    /// Forming the pointer is safe; dereferencing it is `unsafe` as for any raw
    /// pointer: `i < len()`, and no other thread writes element `i` between
    /// the same two barriers. [`read`](Self::read) and [`write`](Self::write)
    /// are the bounds-checked forms. Under the emulator, accesses through the
    /// pointer are not race-checked (as with [`as_mut_ptr`](Self::as_mut_ptr)).
    #[inline(always)]
    #[allow(clippy::should_implement_trait)]
    pub fn add(&self, i: usize) -> *mut T {
        self.as_mut_ptr().wrapping_add(i)
    }

    /// The `M` elements from element `i` on as a [`SharedArray`](crate::SharedArray) of
    /// their own (the same memory, not a new allocation), for what takes a `SharedArray`:
    /// e.g. the stages of a ring of tensor-copy destinations
    /// ([`TensorMap::load`](crate::tma::TensorMap::load), whose compile-time checks then
    /// apply to `M` and `ALIGN`) carved from the launch-sized memory, which holds more
    /// than the 48 KiB of static shared memory most targets allow. Panics (traps) unless
    /// `i + M <= len()` and element `i`'s shared address is a multiple of `ALIGN` (the
    /// base is, when the driver honours the declared alignment; the check makes sure).
    #[inline(always)]
    #[allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV
    pub fn array<const M: usize>(&self, i: usize) -> crate::SharedArray<T, M, ALIGN> {
        assert!(
            i <= self.len && M <= self.len - i,
            "DynamicSharedArray::array out of bounds"
        );
        let addr = SharedPtr::from_generic(self.base.wrapping_add(i)).addr();
        assert!(
            addr as usize % ALIGN == 0,
            "DynamicSharedArray::array: the address is not a multiple of ALIGN"
        );
        crate::SharedArray::at_addr(addr)
    }

    /// The shared-window address of element `i`, for
    /// [`atomic::shared`](crate::atomic::shared). Panics (traps) when `i >= len()`.
    #[inline(always)]
    #[track_caller]
    pub fn ptr(&self, i: usize) -> SharedPtr<T> {
        if i >= self.len {
            crate::bounds::out_of_bounds(c"DynamicSharedArray", i, self.len);
        }
        SharedPtr::from_generic(self.base.wrapping_add(i))
    }
}

/// `%dynamic_smem_size`: bytes of dynamic shared memory the launch provided
/// (PTX ISA 9.0 "Special Registers", PTX 4.1+).
#[inline(always)]
pub fn dynamic_smem_size() -> u32 {
    on_device!("dynamic_smem_size", {
        let bytes: u32;
        // SAFETY: reads a special register that is constant for the launch.
        unsafe {
            core::arch::asm!(
                "mov.u32 {b}, %dynamic_smem_size;",
                b = out(reg32) bytes,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        bytes
    }, emulated: {
        crate::emulator::context::dynamic_smem_size()
    })
}
