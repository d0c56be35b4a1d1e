//! [`ThreadIndex`]: a witness that names the calling thread's own index, and
//! the index spaces it can belong to.
//!
//! | space | made by | value | unique because |
//! |---|---|---|---|
//! | [`Index1D`] | [`thread::index_1d`](crate::thread::index_1d) | the launch linearised, x fastest: `block_in_grid * block_size + thread_in_block` | the map from (block, thread) to the value is a bijection onto `0..total_threads`, in 1D, 2D and 3D launches alike |
//! | [`Index2D<S>`] | [`thread::index_2d::<S>`](crate::thread::index_2d) | `row * S + col`, `col` = global x, `row` = global y (+ global z × grid height) | threads with `col >= S` get no witness, so `(row, col)` ↦ value is injective |
//! | [`Runtime2DIndex`] | [`thread::index_2d_runtime`](crate::thread::index_2d_runtime) (`unsafe`) | `row * stride + col`, as above with a run-time stride | as above, provided every thread passes the same stride (the `unsafe` contract) |
//! | [`WarpIndex1D`] | [`thread::warp_leader_index`](crate::thread::warp_leader_index) | the warp's linear index in the launch: `block_in_grid * warps_per_block + warp_id` | only lane 0 of each warp gets one; `warps_per_block = ceil(block_size / 32)` |
//! | [`BlockIndex1D`] | [`thread::block_leader_index`](crate::thread::block_leader_index) | the block's linear index in the grid | only thread 0 of each block gets one |
//!
//! A [`DisjointSlice`](crate::DisjointSlice) of one space accepts only
//! witnesses of that space (and, for [`Index2D`], of the same stride `S`):
//!
//! ```compile_fail
//! fn f(out: &mut device_std::DisjointSlice<'_, f32, device_std::Index2D<64>>) {
//!     let i = device_std::thread::index_1d();
//!     out.get_mut(&i); // a 1D witness cannot index a 2D slice
//! }
//! ```

use core::marker::PhantomData;

/// An index space: how a [`ThreadIndex`] was computed. Sealed.
pub trait IndexSpace: sealed::Sealed {}

/// The 1D global space: one index per thread of the launch.
#[derive(Debug)]
pub enum Index1D {}
impl IndexSpace for Index1D {}

/// The 2D space of a row-major matrix with `S` elements per row.
#[derive(Debug)]
pub enum Index2D<const S: usize> {}
impl<const S: usize> IndexSpace for Index2D<S> {}

/// The 2D space of a row-major matrix whose row stride is known only at run
/// time.
#[derive(Debug)]
pub enum Runtime2DIndex {}
impl IndexSpace for Runtime2DIndex {}

/// The block space: one index per block of the launch, held only by the
/// block's leader thread. Use it for per-block outputs such as partial sums.
#[derive(Debug)]
pub enum BlockIndex1D {}
impl IndexSpace for BlockIndex1D {}

/// The warp space: one index per warp of the launch, held only by lane 0
/// of each warp. Use it for per-warp outputs such as warp sums.
#[derive(Debug)]
pub enum WarpIndex1D {}
impl IndexSpace for WarpIndex1D {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::WarpIndex1D {}
    impl Sealed for super::Index1D {}
    impl<const S: usize> Sealed for super::Index2D<S> {}
    impl Sealed for super::Runtime2DIndex {}
    impl Sealed for super::BlockIndex1D {}
}

/// The calling thread's index in `Space`, as an unforgeable witness.
///
/// Only this crate constructs one, from the thread's own special registers
/// (see [`thread`](crate::thread)), so two threads of a launch never hold
/// witnesses with the same value (the [module docs](self) give the argument
/// for each space). It is `!Send`, `!Sync`, `!Copy` and `!Clone`: it cannot
/// be handed to another thread, stored in a `static`, or duplicated; a
/// `#[kernel]` returns nothing, so it cannot leave the kernel either. The
/// `'kernel` lifetime ties borrowed uses to the kernel body.
///
/// ```compile_fail
/// fn f() {
///     let i = device_std::thread::index_1d();
///     let j = i.clone(); // not Clone
/// }
/// ```
///
/// ```compile_fail
/// // A witness cannot be made outside device-std.
/// let i: device_std::ThreadIndex<'static, device_std::Index1D> =
///     device_std::ThreadIndex { value: 0, stride: 0, _not_send_sync: core::marker::PhantomData };
/// ```
#[derive(Debug)]
pub struct ThreadIndex<'kernel, Space: IndexSpace> {
    value: usize,
    stride: usize,
    _not_send_sync: PhantomData<(*mut (), &'kernel mut (), Space)>,
}

impl<Space: IndexSpace> ThreadIndex<'_, Space> {
    /// Called only by [`thread`](crate::thread) with values that are
    /// unique per thread in `Space`.
    #[cfg_attr(not(target_arch = "nvptx64"), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn new(value: usize, stride: usize) -> Self {
        ThreadIndex {
            value,
            stride,
            _not_send_sync: PhantomData,
        }
    }

    /// The linear index value, in elements of the space.
    #[inline(always)]
    pub fn get(&self) -> usize {
        self.value
    }
}

impl<const S: usize> ThreadIndex<'_, Index2D<S>> {
    /// Row (`value / S`).
    #[inline(always)]
    pub fn row(&self) -> usize {
        self.value / S
    }

    /// Column (`value % S`), always `< S`.
    #[inline(always)]
    pub fn col(&self) -> usize {
        self.value % S
    }
}

impl ThreadIndex<'_, Runtime2DIndex> {
    /// Row (`value / stride`).
    #[inline(always)]
    pub fn row(&self) -> usize {
        self.value / self.stride
    }

    /// Column (`value % stride`), always `< stride`.
    #[inline(always)]
    pub fn col(&self) -> usize {
        self.value % self.stride
    }

    /// The row stride the witness was made with, in elements.
    #[inline(always)]
    pub fn stride(&self) -> usize {
        self.stride
    }
}
