//! Pageable host memory read by kernels (HMM, heterogeneous memory management): a host
//! reference to a small read-only value as a kernel argument, on devices that can access
//! pageable memory.

use std::fmt;
use std::marker::PhantomData;

use bytemuck::Pod;
use cudarc::driver::{sys, CudaContext, CudaStream, SyncOnDrop};

use super::error::{driver, MemoryError};
use crate::{AbiKind, HasValueClass, HostAbi, KernelParam, ParamLayout};

/// Whether `ctx`'s device can read and write pageable host memory (plain `malloc`,
/// stack, `Box`) through its host address: `CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS`.
///
/// It is 1 with HMM (Linux 6.1.24+ with the NVIDIA open kernel modules) and on
/// coherent platforms (Grace Hopper, where
/// `CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES` is 1 too).
///
/// Errors: [`MemoryError::Driver`] when the attribute cannot be read.
pub fn pageable_memory_access(ctx: &CudaContext) -> Result<bool, MemoryError> {
    ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS)
        .map(|v| v != 0)
        .map_err(driver("cuDeviceGetAttribute(PAGEABLE_MEMORY_ACCESS)"))
}

/// A shared reference to a host value that a kernel may read through its host address,
/// checked once against the device's pageable-memory support.
///
/// Made by [`HostRef::new`]; passed for a [`HostPtr<T>`] kernel parameter. The device side
/// declares `*const T` (or `&T`) for it and reads the value in place: no copy, no
/// allocation. Meant for small read-only configuration values; bulk data is faster in a
/// [`DeviceBuffer`](super::DeviceBuffer) or [`ManagedBuffer`](super::ManagedBuffer).
pub struct HostRef<'a, T> {
    value: &'a T,
}

impl<T> Clone for HostRef<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for HostRef<'_, T> {}

impl<T> fmt::Debug for HostRef<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostRef")
            .field("type", &std::any::type_name::<T>())
            .field("address", &(self.value as *const T))
            .finish()
    }
}

impl<'a, T: Pod> HostRef<'a, T> {
    /// Borrows `value` for kernels of `ctx`'s device.
    ///
    /// Errors: [`MemoryError::PageableAccessUnsupported`] when the device cannot access
    /// pageable host memory ([`pageable_memory_access`] is false): a launch would fault,
    /// so it is refused here instead; [`MemoryError::Driver`] when the attribute or the
    /// device name cannot be read.
    pub fn new(ctx: &CudaContext, value: &'a T) -> Result<Self, MemoryError> {
        if pageable_memory_access(ctx)? {
            Ok(HostRef { value })
        } else {
            Err(MemoryError::PageableAccessUnsupported {
                ordinal: ctx.ordinal(),
                name: ctx.name().map_err(driver("cuDeviceGetName"))?,
            })
        }
    }

    /// The referenced value.
    pub fn get(&self) -> &'a T {
        self.value
    }

    /// The host address the kernel receives.
    pub fn address(&self) -> u64 {
        self.value as *const T as usize as u64
    }
}

/// A kernel parameter that is a pointer to pageable host memory: the kernel takes
/// `*const T` (or `&T`) and the host passes a [`HostRef<T>`].
///
/// PTX: `.param .u64 .ptr` (8 bytes aligned to 8), like [`Ptr<T>`](crate::Ptr). `T`'s
/// [`HasValueClass`] is the pointee class compared with the kernel's ABI record; a host
/// struct of your own says `unsafe impl host_loader::HasValueClass for T {}` (opaque:
/// only its size is compared) or derives `KernelStruct`.
///
/// **A launch with a `HostPtr` argument returns only after the kernel has finished**
/// (`cuStreamSynchronize` when the argument's guard drops): the host value is borrowed
/// for the launch call only, so the kernel must be done reading it before the borrow
/// ends. Errors of that synchronization are stored in the context
/// (`CudaContext::check_err`) and reappear at the next synchronizing call.
///
/// A marker type: it names a parameter in a kernel signature and is never constructed.
pub struct HostPtr<T>(PhantomData<fn() -> T>);

impl<T> fmt::Debug for HostPtr<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HostPtr<{}>", std::any::type_name::<T>())
    }
}

// SAFETY: `Raw` is the value's host address, a `u64` (8 bytes aligned to 8), the PTX
// `.u64 .ptr` form. `HostRef::new` checked that the device can dereference pageable host
// addresses. The guard synchronizes the launch stream when it drops (right after the
// launch is enqueued), so the kernel has finished reading before the `&'a T` borrow ends;
// `T: Pod` has no interior mutability, so the value cannot change during the read.
unsafe impl<T: Pod + HasValueClass> KernelParam for HostPtr<T> {
    const LAYOUT: ParamLayout = ParamLayout::pointer();
    const ABI: HostAbi = HostAbi::elements::<T>(AbiKind::Pointer);
    type Arg<'a>
        = HostRef<'a, T>
    where
        Self: 'a;
    type Raw = u64;
    type Guard<'a>
        = SyncOnDrop<'a>
    where
        Self: 'a;
    #[inline(always)]
    fn lower<'a>(arg: HostRef<'a, T>, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
        (arg.address(), SyncOnDrop::sync_stream(stream))
    }
}
