//! Streaming access for bandwidth-bound kernels: 16-byte vector views of
//! slices and grid-stride witnesses.
//!
//! A warp that loads 16 bytes per thread moves 512 bytes per instruction
//! (`ld.v4.b32`, PTX ISA 9.0 §9.7.9.8 `ld`), four times what scalar loads do,
//! which is what a memory-bound kernel needs to approach the copy bandwidth.
//!
//! ```ignore
//! #[kernel(dims = 1)]
//! pub fn vecadd(a: &[f32], b: &[f32], c: DisjointSlice<f32>) {
//!     let (a_head, a4, a_tail) = vector::split_aligned::<F32x4>(a);
//!     let (b_head, b4, b_tail) = vector::split_aligned::<F32x4>(b);
//!     let (mut c_head, mut c4, mut c_tail) = c.split_aligned_mut::<F32x4>();
//!     for i in vector::grid_stride(c4.len()) {
//!         if let (Some(out), Some(x), Some(y)) = (c4.get_mut(&i), a4.get(i.get()), b4.get(i.get())) {
//!             *out = x.zip_with(*y, |x, y| x + y);
//!         }
//!     }
//!     // ... the same over the scalar heads and tails.
//! }
//! ```
//!
//! The splits:
//! - [`split_vectors_or_tail`] (a read-only slice) tests the alignment with selects,
//!   not a branch; a misaligned slice gets no vectors (all scalar). On an H100 it made
//!   the one-block `reduce_sum` and `histogram` graph nodes 2.5–5 % faster than
//!   [`split_aligned`] (`benches/LOG.md`, issue 30).
//! - [`split_vectors`] and [`DisjointSlice::split_vectors_mut`] return the slice
//!   back when it is misaligned, for a path of the caller's own: where the buffers are
//!   usually aligned (every `cuMemAlloc` buffer is), one test and no head.
//! - [`split_aligned`] and [`DisjointSlice::split_aligned_mut`] peel a scalar head
//!   first, so a misaligned buffer still gets vectors.
//!
//! # Every thread splits an output the same way
//!
//! A witness `i` names vector `i` of a vector part and element `i` of a scalar part, so
//! the parts of a split output keep threads apart only while every thread of the launch
//! makes the same split of it (the same function and `V` on the same slice, such as the
//! kernel's own parameter). Threads that split one output differently (one splits it
//! and another does not) can reach one element from two threads through safe
//! `get_mut`, a data race. Neither the type system nor the emulator checks this yet
//! (`device-std/tests/vector_splits.rs`, the ignored test). Read-only splits
//! ([`split_vectors_or_tail`], [`split_vectors`], [`split_aligned`]) have no such
//! condition.

use crate::disjoint::DisjointSlice;
use crate::index::{Index1D, ThreadIndex};
use core::marker::PhantomData;

/// A 16-byte vector of `LANES` elements of `Elem`, aligned to 16.
///
/// # Safety
/// `Self` is `#[repr(C, align(16))]` over exactly `[Self::Elem; Self::LANES]`
/// (16 bytes), so a 16-byte-aligned run of `LANES` elements is a valid `Self`
/// and the other way round.
pub unsafe trait Vector: Copy {
    /// Element type.
    type Elem: Copy;
    /// Elements per vector: `16 / size_of::<Elem>()`.
    const LANES: usize;
}

macro_rules! vector {
    ($(#[$doc:meta])* $name:ident, $elem:ty, $lanes:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        #[repr(C, align(16))]
        pub struct $name(pub [$elem; $lanes]);

        // SAFETY: repr(C, align(16)) over [$elem; $lanes], 16 bytes.
        unsafe impl Vector for $name {
            type Elem = $elem;
            const LANES: usize = $lanes;
        }

        // SAFETY: plain data of the element type, no padding (16 bytes).
        unsafe impl crate::layout::PlainData for $name {}

        // SAFETY: its bytes are lanes of `$elem`, classed like `[$elem; $lanes]`.
        unsafe impl crate::layout::HasValueClass for $name {
            const VALUE_CLASS: crate::layout::ValueClass =
                <$elem as crate::layout::HasValueClass>::VALUE_CLASS;
        }

        impl $name {
            /// Lane-wise `f(self[k], other[k])`.
            #[inline(always)]
            pub fn zip_with(self, other: Self, f: impl Fn($elem, $elem) -> $elem) -> Self {
                let mut out = self.0;
                let mut k = 0;
                while k < $lanes {
                    out[k] = f(self.0[k], other.0[k]);
                    k += 1;
                }
                $name(out)
            }

            /// Lane-wise `f(self[k])`.
            #[inline(always)]
            pub fn map(self, f: impl Fn($elem) -> $elem) -> Self {
                let mut out = self.0;
                let mut k = 0;
                while k < $lanes {
                    out[k] = f(self.0[k]);
                    k += 1;
                }
                $name(out)
            }
        }
    };
}

vector!(
    /// Four `f32` (`float4`).
    F32x4, f32, 4
);
vector!(
    /// Four `u32` (`uint4`).
    U32x4, u32, 4
);
vector!(
    /// Sixteen bytes.
    U8x16, u8, 16
);
vector!(
    /// Eight `u16` (`ushort8`, e.g. 16-bit histogram keys).
    U16x8, u16, 8
);
vector!(
    /// Eight `bf16` (16 bytes of a `bf16` matrix row, e.g. a tile copied to shared memory).
    Bf16x8, crate::bf16, 8
);

/// Splits `s` into a scalar head, the longest run of 16-byte-aligned
/// vectors, and a scalar tail (`slice::align_to`, made safe by [`Vector`]).
/// A buffer from `cuMemAlloc` (256-byte aligned) has an empty head.
#[inline(always)]
pub fn split_aligned<V: Vector>(s: &[V::Elem]) -> (&[V::Elem], &[V], &[V::Elem]) {
    // SAFETY: `V` is 16 bytes of `LANES` `Elem`s with no invalid bit patterns
    // beyond those of `Elem` (the `Vector` contract), so reinterpreting an
    // aligned run of elements as vectors is sound.
    unsafe { s.align_to::<V>() }
}

/// `s` as whole 16-byte vectors and a scalar tail of fewer than `LANES` elements,
/// when `s` starts 16-byte aligned (every buffer from `cuMemAlloc`, which aligns to
/// 256 bytes); `None` otherwise, or for an empty `s` with a misaligned pointer. The
/// cheap form of [`split_aligned`] for kernels whose buffers are aligned: one test of
/// the pointer, no head. Lengths in elements of `V` and of `V::Elem`. Every target;
/// the 16-byte alignment is what `ld.v4`/`st.v4` require (PTX ISA §9.7.9.8 `ld`).
#[inline(always)]
pub fn split_vectors<V: Vector>(s: &[V::Elem]) -> Option<(&[V], &[V::Elem])> {
    if !vector_aligned(s.as_ptr()) {
        return None;
    }
    let vectors = s.len() / V::LANES;
    let (body, tail) = s.split_at(vectors * V::LANES);
    // SAFETY: `body` starts 16-byte aligned and holds `vectors` whole runs of `LANES`
    // elements, each a valid `V` (the `Vector` contract).
    Some((
        unsafe { core::slice::from_raw_parts(body.as_ptr().cast::<V>(), vectors) },
        tail,
    ))
}

/// Whether `p` is 16-byte aligned: what a vector part's start needs.
#[inline(always)]
fn vector_aligned<T>(p: *const T) -> bool {
    #[allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV
    let aligned = (p as usize) % 16 == 0;
    aligned
}

/// `s` as whole 16-byte vectors and a tail of fewer than `LANES` elements when `s`
/// starts 16-byte aligned (every `cuMemAlloc` buffer does); otherwise no vectors and
/// all of `s` as the tail. [`split_vectors`] without the `Option`: the test compiles
/// to selects, not a branch, and there is no head loop; the one-block `reduce_sum` and
/// `histogram` graph nodes ran 2.5–5 % faster with it than with [`split_aligned`] on an
/// H100 (`benches/LOG.md`, issue 30). A misaligned `s` is read element by element.
/// Lengths in elements of `V` and of `V::Elem`. Never panics.
/// Every target; the 16-byte alignment is what `ld.v4` requires (PTX ISA §9.7.9.8
/// `ld`).
#[inline(always)]
pub fn split_vectors_or_tail<V: Vector>(s: &[V::Elem]) -> (&[V], &[V::Elem]) {
    let aligned = vector_aligned(s.as_ptr());
    let vectors = if aligned { s.len() / V::LANES } else { 0 };
    let p = if aligned {
        s.as_ptr().cast::<V>()
    } else {
        core::ptr::NonNull::<V>::dangling().as_ptr()
    };
    // SAFETY: when `aligned`, the first `vectors * LANES` elements of `s` start
    // 16-byte aligned and are `vectors` valid `V`s (the `Vector` contract); otherwise
    // `vectors` is 0 and `p` an aligned dangling address. The tail is the rest of `s`.
    unsafe {
        (
            core::slice::from_raw_parts(p, vectors),
            s.get_unchecked(vectors * V::LANES..),
        )
    }
}

impl<'a, T> DisjointSlice<'a, T, Index1D> {
    /// Splits the slice like [`split_vectors`]: whole 16-byte vectors and a scalar
    /// tail, each its own `DisjointSlice`, when the slice starts 16-byte aligned;
    /// otherwise the slice back as `Err`, for the general
    /// [`split_aligned_mut`](Self::split_aligned_mut). A witness `i` names vector `i` of
    /// the first part or element `i` of the tail, so every thread of the launch must
    /// split the slice alike ([module docs](self)). Lengths in vectors and in elements.
    /// Never panics. Every target; the 16-byte alignment is what `ld.v4`/`st.v4`
    /// require (PTX ISA §9.7.9.8 `ld`).
    #[inline(always)]
    pub fn split_vectors_mut<V: Vector<Elem = T>>(
        mut self,
    ) -> Result<(DisjointSlice<'a, V>, DisjointSlice<'a, T>), Self> {
        let (ptr, len) = (self.as_mut_ptr(), self.len());
        if !vector_aligned(ptr) {
            return Err(self);
        }
        let vectors = len / V::LANES;
        // SAFETY: the two parts tile `ptr[..len]` without overlap; the first starts
        // 16-byte aligned and holds whole vectors; `self` is consumed, so nothing else
        // accesses the memory except through the parts, whose witness rules are the
        // same as this slice's.
        unsafe {
            Ok((
                DisjointSlice::from_raw_parts(ptr.cast::<V>(), vectors),
                DisjointSlice::from_raw_parts(
                    ptr.add(vectors * V::LANES),
                    len - vectors * V::LANES,
                ),
            ))
        }
    }

    /// Splits the slice like [`split_aligned`]: a scalar head, 16-byte
    /// vectors, a scalar tail, each its own `DisjointSlice` over disjoint
    /// memory. A witness `i` then names element `i` of whichever part it
    /// indexes, so one thread can own vector `i` of the middle part while
    /// another owns element `i` of the head, provided every thread of the launch
    /// splits the slice alike ([module docs](self)). Lengths in elements and vectors.
    /// Never panics. Every target (`slice::align_to`'s split).
    #[inline(always)]
    pub fn split_aligned_mut<V: Vector<Elem = T>>(
        mut self,
    ) -> (
        DisjointSlice<'a, T>,
        DisjointSlice<'a, V>,
        DisjointSlice<'a, T>,
    ) {
        let (ptr, len) = (self.as_mut_ptr(), self.len());
        let size = core::mem::size_of::<T>().max(1);
        let head = ((ptr as usize).wrapping_neg() % 16 / size).min(len);
        let vectors = (len - head) / V::LANES;
        let tail = len - head - vectors * V::LANES;
        // SAFETY: the three parts tile `ptr[..len]` without overlap; the
        // middle part starts 16-byte aligned (or is empty) and holds whole
        // vectors; `self` is consumed, so nothing else accesses the memory
        // except through the parts, whose witness rules are the same as
        // this slice's.
        unsafe {
            (
                DisjointSlice::from_raw_parts(ptr, head),
                DisjointSlice::from_raw_parts(ptr.add(head).cast::<V>(), vectors),
                DisjointSlice::from_raw_parts(ptr.add(head + vectors * V::LANES), tail),
            )
        }
    }
}

/// The calling thread's indices of a grid-stride loop over `0..n`: its
/// [`thread::index_1d`](crate::thread::index_1d) value `g`, then
/// `g + T`, `g + 2T`, … below `n`, where `T` is the number of threads in the
/// launch. Every index in `0..n` belongs to exactly one thread, so each item
/// is a witness like `index_1d`'s. `n` above `isize::MAX` (longer than any slice of
/// non-zero-sized elements) counts as `isize::MAX`: then no step can overflow, and
/// each step is one plain add, as in CUDA's `i += gridDim.x * blockDim.x`
/// (issue 30). A grid of 2^53 blocks or more (`gridDim` x·y·z; no such launch could
/// finish) steps by `isize::MAX`: each thread gets only its first index, so indices
/// from `T` up are nobody's; those first indices are distinct while `T < 2^64`, past
/// which `index_1d`'s `u64` arithmetic wraps (2^54 blocks of 1024 threads). Indices in
/// elements of the slice the loop walks. Never panics. Every target.
#[inline(always)]
pub fn grid_stride<'kernel>(n: usize) -> GridStride<'kernel> {
    let first = crate::thread::index_1d().get();
    use crate::thread::{block_size, gridDim_x, gridDim_y, gridDim_z};
    let blocks = gridDim_x() as u64 * gridDim_y() as u64 * gridDim_z() as u64;
    // At most 1024 threads per block: below 2^53 blocks the product is below 2^63
    // (larger grids: see the docs).
    let threads = if blocks >> 53 == 0 {
        blocks * block_size() as u64
    } else {
        isize::MAX as u64
    };
    GridStride {
        next: first,
        // Both at most isize::MAX, so `next + step` cannot overflow.
        step: threads as usize,
        end: n.min(isize::MAX as usize),
        _kernel: PhantomData,
    }
}

/// `i`, hidden from LLVM's loop strength reduction: on nvptx64 it passes through an
/// empty `mov` (which ptxas removes), so addresses computed from a grid-stride index stay
/// `base + i·size` as nvcc computes them, rather than pointers LSR sets up per buffer
/// before the loop (about 2 % of a one-block `vecadd` node, H100, benches/LOG.md).
#[inline(always)]
fn opaque_index(i: usize) -> usize {
    #[cfg(target_arch = "nvptx64")]
    {
        let mut i = i;
        // SAFETY: a register move, no memory access.
        unsafe {
            core::arch::asm!(
                "mov.b64 {0}, {0};",
                inout(reg64) i,
                options(pure, nomem, nostack, preserves_flags)
            )
        };
        i
    }
    #[cfg(not(target_arch = "nvptx64"))]
    i
}

/// Iterator of [`grid_stride`].
#[derive(Debug)]
pub struct GridStride<'kernel> {
    next: usize,
    step: usize,
    end: usize,
    _kernel: PhantomData<&'kernel mut ()>,
}

impl<'kernel> Iterator for GridStride<'kernel> {
    type Item = ThreadIndex<'kernel, Index1D>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        if self.next < self.end {
            let i = self.next;
            // No overflow: i < end <= isize::MAX and step <= isize::MAX.
            self.next = i + self.step;
            let k = opaque_index(i);
            // SAFETY: `k == i < end`; said again because `k` is opaque to the optimiser.
            unsafe { core::hint::assert_unchecked(k < self.end) };
            Some(ThreadIndex::new(k, 0))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(C, align(16))]
    struct Aligned([f32; 64]);

    #[test]
    fn split_vectors_takes_only_aligned_starts() {
        let a = Aligned(core::array::from_fn(|k| k as f32));
        for off in 0..4 {
            for n in 0..=9 {
                let s = &a.0[off..off + n];
                match split_vectors::<F32x4>(s) {
                    Some((v, t)) => {
                        assert_eq!(off, 0, "offset {off}, n {n}");
                        assert_eq!((v.len(), t.len()), (n / 4, n % 4), "n {n}");
                        let back = v.iter().flat_map(|x| x.0).chain(t.iter().copied());
                        assert!(back.eq(s.iter().copied()), "n {n}");
                    }
                    None => assert_ne!(off, 0, "offset 0, n {n} must split"),
                }
            }
        }
        let b = [7u8; 64];
        let start = (16 - b.as_ptr() as usize % 16) % 16;
        let (v, t) = split_vectors::<U8x16>(&b[start..start + 37]).unwrap();
        assert_eq!((v.len(), t.len()), (2, 5));
        assert!(split_vectors::<U8x16>(&b[start + 1..start + 37]).is_none());
    }

    #[test]
    fn split_vectors_mut_hands_back_misaligned_slices() {
        let mut a = Aligned([0.0; 64]);
        for off in 0..4 {
            for n in [0, 1, 4, 7, 33] {
                let p = a.0[off..].as_mut_ptr();
                // SAFETY: `p[..n]` lies inside `a`, which nothing else touches here.
                let d = unsafe { DisjointSlice::<f32>::from_raw_parts(p, n) };
                match d.split_vectors_mut::<F32x4>() {
                    Ok((v, t)) => {
                        assert_eq!(off, 0);
                        assert_eq!((v.len(), t.len()), (n / 4, n % 4));
                    }
                    Err(back) => {
                        assert_ne!(off, 0);
                        assert_eq!(back.len(), n);
                    }
                }
            }
        }
    }

    #[test]
    fn split_vectors_or_tail_falls_back_to_all_scalars() {
        let a = Aligned(core::array::from_fn(|k| k as f32));
        for off in 0..4 {
            for n in 0..=9 {
                let s = &a.0[off..off + n];
                let (v, t) = split_vectors_or_tail::<F32x4>(s);
                let want = if off == 0 { n / 4 } else { 0 };
                assert_eq!(
                    (v.len(), t.len()),
                    (want, n - 4 * want),
                    "offset {off}, n {n}"
                );
                let back = v.iter().flat_map(|x| x.0).chain(t.iter().copied());
                assert!(back.eq(s.iter().copied()), "offset {off}, n {n}");
            }
        }
    }
}
