//! [`DisjointSlice`]: an output buffer that each thread writes only at the
//! index its [`ThreadIndex`] witness names.

use crate::abi::{KernelParam, ParamAbi, DISJOINT_SLICE};
use crate::index::{Index1D, IndexSpace, ThreadIndex};
use crate::layout::PlainData;
use core::marker::PhantomData;
use core::ptr::NonNull;

/// A kernel's mutable output slice, shared by all threads of a launch.
///
/// ABI: `#[repr(C)]` `(ptr: NonNull<T>, len: usize)`, 16 bytes aligned to 8. As a
/// kernel parameter it arrives as one `.param .align 8 .b8 NAME[16]`, the
/// same form as `&[T]`; `len` counts elements. The address is never null (the host
/// passes an aligned dangling one for an empty buffer), so `Option<DisjointSlice<T>>`
/// has the same form, `None` being a null address: an optional output
/// (CUDA's `int *partial_sums = NULL`).
///
/// Safe access goes through a witness of the slice's own `Space`: distinct
/// threads hold distinct [`ThreadIndex`] values, so the `&mut T` they get
/// never alias. A witness of another space (or, for
/// [`Index2D`](crate::Index2D), another row stride) does not type-check:
///
/// ```compile_fail
/// fn f(out: &mut device_std::DisjointSlice<'_, f32, device_std::Index2D<32>>) {
///     if let Some(i) = device_std::thread::index_2d::<64>() {
///         out.get_mut(&i); // stride 64 witness, stride 32 slice
///     }
/// }
/// ```
///
/// # In-place kernels
///
/// CUDA kernels that update a buffer in place come in four shapes; the closest form
/// of each here:
///
/// 1. **Each thread reads and writes its own element** (`x[i] = f(x[i])`): safe,
///    [`get_mut`](Self::get_mut) gives the thread's `&mut T` to read and write.
/// 2. **Each thread reads its neighbours and writes its own element** (a stencil):
///    racy in CUDA too unless a barrier separates the reads from the writes. Within a
///    block, stage the values in a `SharedArray`, `sync_threads`, then write through
///    `get_mut`; across the grid, read a `&[T]` and write another buffer, swapping
///    the two between launches (or across `grid::sync` in a cooperative launch).
/// 3. **One thread owns a pair of elements** (bitonic sort's compare-exchange, a
///    butterfly of a Walsh or Fourier transform): take the partner with
///    `unsafe { get_unchecked_mut(j) }`, the `SAFETY` argument being that the pairs
///    of one step are disjoint and each is handled by one thread. Under the emulator
///    that argument is checked: two threads of one launch taking the same element
///    are a reported error (`examples/emulated-tests`, `faults.rs`).
/// 4. **Several threads combine into one element** (histograms, sums): atomics
///    ([`atomic`](crate::atomic)) on a raw pointer parameter, not a `DisjointSlice`.
#[repr(C)]
#[derive(Debug)]
pub struct DisjointSlice<'a, T, Space: IndexSpace = Index1D> {
    ptr: NonNull<T>,
    len: usize,
    _marker: PhantomData<(&'a mut [T], Space)>,
}

// SAFETY: rustc passes this `#[repr(C)] (ptr, len)` pair like `&mut [T]`: one
// 16-byte aggregate aligned to 8. `T: PlainData`, so whatever bytes the host
// left in the buffer are valid `T`s; the host never passes a null address for it
// (`host_loader` substitutes an aligned dangling one for an empty buffer).
unsafe impl<T: PlainData, Space: IndexSpace> KernelParam for DisjointSlice<'_, T, Space> {
    const ABI: ParamAbi = ParamAbi::indirect::<T>(DISJOINT_SLICE, 16);

    #[inline(always)]
    fn slice_span(&self) -> Option<(usize, usize)> {
        Some((self.ptr.as_ptr() as usize, self.len))
    }
}

// SAFETY: `DisjointSlice`'s address is `NonNull`, so the option is the same 16-byte
// `(ptr, len)` aggregate with `None` as a null address, which is what the host passes
// for an absent buffer.
unsafe impl<T: PlainData, Space: IndexSpace> KernelParam for Option<DisjointSlice<'_, T, Space>> {
    const ABI: ParamAbi = ParamAbi::indirect::<T>(crate::abi::OPTIONAL_DISJOINT_SLICE, 16);

    #[inline(always)]
    fn slice_span(&self) -> Option<(usize, usize)> {
        self.as_ref().map(|s| (s.ptr.as_ptr() as usize, s.len))
    }
}

impl<'a, T, Space: IndexSpace> DisjointSlice<'a, T, Space> {
    /// Wraps `len` elements at `ptr` (a null `ptr` is taken as an aligned dangling one,
    /// which only an empty slice may have).
    ///
    /// # Safety
    /// - `ptr` is valid for reads and writes of `len` elements of `T` and
    ///   aligned for `T`, for `'a` (so not null unless `len` is 0);
    /// - nothing else reads or writes that memory during `'a` except through
    ///   this slice's witness-checked accessors.
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: *mut T, len: usize) -> Self {
        DisjointSlice {
            ptr: NonNull::new(ptr).unwrap_or(NonNull::dangling()),
            len,
            _marker: PhantomData,
        }
    }

    /// Wraps a host slice, on the host only: one thread's view, to call a
    /// kernel body directly. The emulator gives every thread of a launch its
    /// own slice through `emulator::GlobalMut::disjoint` (feature `emulator`).
    #[cfg(not(target_arch = "nvptx64"))]
    pub fn from_mut_slice(slice: &'a mut [T]) -> Self {
        let len = slice.len();
        DisjointSlice {
            ptr: NonNull::from(slice).cast(),
            len,
            _marker: PhantomData,
        }
    }

    /// Length in elements.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` when the slice has no elements.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The element at the witness's index, or `None` when it is out of
    /// bounds (the usual tail guard `if i < n`). The witness goes in by
    /// reference (`out.get_mut(&idx)`, keeping it for reading inputs) or by
    /// value (`out.get_mut(idx)`):
    ///
    /// ```no_run
    /// use device_std::{thread, DisjointSlice};
    /// fn body(xs: &[f32], mut out: DisjointSlice<f32>) {
    ///     let idx = thread::index_1d();
    ///     let x = xs[idx.get()];
    ///     if let Some(o) = out.get_mut(idx) {
    ///         *o = 2.0 * x;
    ///     }
    /// }
    /// ```
    #[inline(always)]
    pub fn get_mut<I: AsThreadIndex<Space>>(&mut self, index: I) -> Option<&mut T> {
        let i = index.thread_index();
        if i < self.len {
            // SAFETY: in bounds; witnesses of one space are unique per
            // thread, so no other thread forms a reference to element `i`.
            Some(unsafe { &mut *self.ptr.as_ptr().add(i) })
        } else {
            None
        }
    }

    /// The element at index `i` with no bounds check and no witness.
    ///
    /// # Safety
    /// - `i < self.len()`;
    /// - no other thread accesses element `i` while the reference lives.
    ///
    /// Under the emulator, an index past the end, and two threads of one
    /// launch taking the same element, are reported errors.
    #[inline(always)]
    pub unsafe fn get_unchecked_mut(&mut self, i: usize) -> &mut T {
        #[cfg(emulated)]
        crate::emulator::global::claim(
            self.ptr.as_ptr() as usize,
            i,
            core::mem::size_of::<T>(),
            self.len,
        );
        // SAFETY: the caller guarantees bounds and exclusivity.
        unsafe { &mut *self.ptr.as_ptr().add(i) }
    }

    /// Raw pointer to element 0.
    #[inline(always)]
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr.as_ptr()
    }
}

impl<'a, T> DisjointSlice<'a, T, Index1D> {
    /// The calling thread's own element, at
    /// [`thread::index_1d`](crate::thread::index_1d), together with that
    /// witness, or `None` past the end: one call claims the output slot and
    /// says which input index to read.
    ///
    /// ```no_run
    /// use device_std::DisjointSlice;
    /// fn body(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
    ///     if let Some((out, idx)) = c.get_mut_indexed() {
    ///         let i = idx.get();
    ///         *out = a[i] + b[i];
    ///     }
    /// }
    /// ```
    #[inline(always)]
    pub fn get_mut_indexed(&mut self) -> Option<(&mut T, ThreadIndex<'a, Index1D>)> {
        let index = crate::thread::index_1d();
        let out = self.get_mut(&index)?;
        Some((out, index))
    }
}

/// A thread's index witness of space `Space`, by value or by reference: what
/// [`DisjointSlice::get_mut`] takes. Sealed: only [`ThreadIndex`] (whose
/// constructor is private) implements it, so the index stays unforgeable.
pub trait AsThreadIndex<Space: IndexSpace>: sealed::Sealed {
    /// The linear index the witness names.
    fn thread_index(&self) -> usize;
}

impl<Space: IndexSpace> AsThreadIndex<Space> for ThreadIndex<'_, Space> {
    #[inline(always)]
    fn thread_index(&self) -> usize {
        self.get()
    }
}

impl<Space: IndexSpace> AsThreadIndex<Space> for &ThreadIndex<'_, Space> {
    #[inline(always)]
    fn thread_index(&self) -> usize {
        self.get()
    }
}

mod sealed {
    use crate::index::{IndexSpace, ThreadIndex};
    pub trait Sealed {}
    impl<Space: IndexSpace> Sealed for ThreadIndex<'_, Space> {}
    impl<Space: IndexSpace> Sealed for &ThreadIndex<'_, Space> {}
}
