//! The device's memory pool, which [`DeviceBuffer`](super::DeviceBuffer) allocates from
//! (`cuMemAllocAsync`) and frees to (`cuMemFreeAsync`).

use std::ffi::c_void;

use cudarc::driver::{result, sys, CudaContext};

use super::error::{driver, MemoryError};

/// Bytes held by the device's current memory pool (`cuDeviceGetMemPool`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolUsage {
    /// `CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT`: bytes the pool holds from the driver.
    pub reserved: u64,
    /// `CU_MEMPOOL_ATTR_USED_MEM_CURRENT`: bytes handed out to live allocations (freed
    /// memory stops counting once its stream-ordered free has executed).
    pub used: u64,
    /// `CU_MEMPOOL_ATTR_RELEASE_THRESHOLD`: bytes the pool keeps at a synchronization
    /// instead of returning them to the driver.
    pub release_threshold: u64,
}

fn current_pool(ctx: &CudaContext) -> Result<sys::CUmemoryPool, MemoryError> {
    ctx.bind_to_thread().map_err(driver("cuCtxSetCurrent"))?;
    // SAFETY: `cu_device` is the context's live device handle.
    unsafe { result::device::get_mem_pool(ctx.cu_device()) }.map_err(driver("cuDeviceGetMemPool"))
}

/// Reads the current pool's usage.
///
/// Errors: [`MemoryError::Unsupported`] without memory-pool support;
/// [`MemoryError::Driver`].
pub fn pool_usage(ctx: &CudaContext) -> Result<PoolUsage, MemoryError> {
    require_pools(ctx)?;
    let pool = current_pool(ctx)?;
    let get = |attr: sys::CUmemPool_attribute| -> Result<u64, MemoryError> {
        let mut v = 0u64;
        // SAFETY: `pool` is live; these three attributes are `cuuint64_t` values, and `v`
        // is a `u64` that outlives the call.
        unsafe {
            result::mem_pool::get_attribute(pool, attr, (&mut v as *mut u64).cast::<c_void>())
        }
        .map_err(driver("cuMemPoolGetAttribute"))?;
        Ok(v)
    };
    use sys::CUmemPool_attribute as P;
    Ok(PoolUsage {
        reserved: get(P::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?,
        used: get(P::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?,
        release_threshold: get(P::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)?,
    })
}

/// Sets how many freed bytes the current pool keeps across synchronizations
/// (`CU_MEMPOOL_ATTR_RELEASE_THRESHOLD`; the default 0 returns everything unused to the
/// driver at each synchronization, so the next `cuMemAllocAsync` has to map memory again).
/// `u64::MAX` keeps everything.
///
/// Errors: [`MemoryError::Unsupported`] without memory-pool support;
/// [`MemoryError::Driver`].
pub fn set_release_threshold(ctx: &CudaContext, bytes: u64) -> Result<(), MemoryError> {
    require_pools(ctx)?;
    let pool = current_pool(ctx)?;
    let mut v = bytes;
    // SAFETY: `pool` is live; the release threshold is a `cuuint64_t`, and `v` is a `u64`
    // that outlives the call.
    unsafe {
        result::mem_pool::set_attribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut v as *mut u64).cast::<c_void>(),
        )
    }
    .map_err(driver("cuMemPoolSetAttribute(RELEASE_THRESHOLD)"))
}

fn require_pools(ctx: &CudaContext) -> Result<(), MemoryError> {
    if ctx.has_async_alloc() {
        Ok(())
    } else {
        Err(MemoryError::Unsupported {
            ordinal: ctx.ordinal(),
            feature: "stream-ordered allocation (memory pools)",
            attribute: "CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED",
        })
    }
}
