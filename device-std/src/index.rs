//! [`ThreadIndex`]: a witness that names the calling thread's own index.

use core::marker::PhantomData;

/// An index space: how a [`ThreadIndex`] was computed. Sealed.
pub trait IndexSpace: sealed::Sealed {}

/// The 1D global space: one index per thread of the launch
/// (see [`thread::index_1d`](crate::thread)).
#[derive(Debug)]
pub enum Index1D {}
impl IndexSpace for Index1D {}

/// The block space: one index per block of the launch, held only by the
/// block's leader thread (see [`thread::block_leader_index`](crate::thread)).
/// Use it for per-block outputs such as partial sums.
#[derive(Debug)]
pub enum BlockIndex1D {}
impl IndexSpace for BlockIndex1D {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Index1D {}
    impl Sealed for super::BlockIndex1D {}
}

/// The calling thread's index in `Space`, as an unforgeable witness.
///
/// Only this crate constructs one (e.g. [`thread::index_1d`](crate::thread)),
/// from the thread's own special registers, so two threads of a launch never
/// hold witnesses with the same value. It is `!Send`, `!Sync`, `!Copy` and
/// `!Clone`: it cannot be handed to another thread or duplicated. The
/// `'kernel` lifetime ties it to the kernel body that created it.
#[derive(Debug)]
pub struct ThreadIndex<'kernel, Space: IndexSpace> {
    value: usize,
    _not_send_sync: PhantomData<(*mut (), &'kernel mut (), Space)>,
}

impl<Space: IndexSpace> ThreadIndex<'_, Space> {
    #[cfg_attr(not(target_arch = "nvptx64"), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn new(value: usize) -> Self {
        ThreadIndex {
            value,
            _not_send_sync: PhantomData,
        }
    }

    /// The index value, in elements of the space.
    #[inline(always)]
    pub fn get(&self) -> usize {
        self.value
    }
}
