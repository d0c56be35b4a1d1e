//! [`SharedArray`]: a static allocation in the `.shared` state space.

use core::marker::PhantomData;

/// `N` elements of `T` in the CTA's shared memory, aligned to `ALIGN` bytes.
///
/// [`SharedArray::new`] declares one `.shared .align ALIGN .b8 NAME[N * size_of::<T>()]`
/// at its call site (PTX ISA 9.0 §5.1.5), through inline assembly, since
/// stock rustc places every `static` in `.global`. Each call site that
/// survives inlining is its own allocation, so two arrays never alias; a call
/// site executed again (in a loop, or by a second call of the same function)
/// yields the same memory. Declare arrays at the top of the kernel, outside
/// branches and loops.
///
/// The memory starts uninitialised and is shared by every thread of the CTA.
/// Access goes through [`read`](Self::read) / [`write`](Self::write) or raw
/// pointers, never through a `&mut [T]` over the whole array, since other
/// threads access it concurrently; order accesses with
/// [`sync_threads`](crate::thread::sync_threads).
///
/// `ALIGN` must be a power of two from 4 to 1024 and at least `align_of::<T>()`;
/// other values fail to compile.
#[derive(Debug)]
pub struct SharedArray<T, const N: usize, const ALIGN: usize = 16> {
    ptr: *mut T,
    _not_send_sync: PhantomData<*mut T>,
}

impl<T: Copy, const N: usize, const ALIGN: usize> SharedArray<T, N, ALIGN> {
    /// Size of the allocation in bytes.
    pub const BYTES: usize = N * core::mem::size_of::<T>();

    #[cfg_attr(not(target_arch = "nvptx64"), allow(dead_code))]
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
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::VALID;
        let addr: u64;
        // SAFETY: declares a fresh function-scope `.shared` variable named
        // after the output register (unique within the function) and takes
        // its generic address. Not `pure`: identical declarations must not
        // be merged.
        unsafe {
            core::arch::asm!(
                ".shared .align {align} .b8 {r}_smem[{bytes}];",
                "cvta.shared.u64 {r}, {r}_smem;",
                r = out(reg64) addr,
                align = const ALIGN,
                bytes = const Self::BYTES,
                options(nostack),
            );
        }
        SharedArray {
            ptr: addr as *mut T,
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

    /// Reads element `i`. Panics (traps) when `i >= N`.
    ///
    /// Reading an element no thread has written yields an unspecified value.
    #[inline(always)]
    pub fn read(&self, i: usize) -> T {
        assert!(i < N, "SharedArray index out of bounds");
        // SAFETY: in bounds of a live allocation aligned for T.
        unsafe { self.ptr.add(i).read() }
    }

    /// Writes element `i`. Panics (traps) when `i >= N`.
    #[inline(always)]
    pub fn write(&self, i: usize, value: T) {
        assert!(i < N, "SharedArray index out of bounds");
        // SAFETY: in bounds of a live allocation aligned for T; no reference
        // to the element exists (the type hands out none).
        unsafe { self.ptr.add(i).write(value) }
    }

    /// Generic-address pointer to element 0, aligned to `ALIGN`.
    #[inline(always)]
    pub fn as_ptr(&self) -> *const T {
        self.ptr
    }

    /// Mutable generic-address pointer to element 0, aligned to `ALIGN`.
    #[inline(always)]
    pub fn as_mut_ptr(&self) -> *mut T {
        self.ptr
    }
}
