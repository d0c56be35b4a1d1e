//! [`MemoryCaps`]: what a device supports for each kind of memory, read from its
//! attributes (`cuDeviceGetAttribute`) and `cuMemGetInfo`.

use std::fmt;

use cudarc::driver::{sys, CudaContext};

use super::error::{driver, MemoryError};

/// The memory-related capabilities of one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryCaps {
    /// Device ordinal.
    pub ordinal: usize,
    /// Device name.
    pub name: String,
    /// Free device memory in bytes, when queried.
    pub free_bytes: usize,
    /// Total device memory in bytes.
    pub total_bytes: usize,
    /// `CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED`: `cuMemAllocAsync`/`cuMemFreeAsync`
    /// work, so [`DeviceBuffer`](super::DeviceBuffer) drops never block.
    pub memory_pools: bool,
    /// `CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT`: copy engines; 2 or more let a
    /// host-to-device and a device-to-host copy run at the same time.
    pub async_engines: i32,
    /// `CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY`: `cuMemAllocManaged` works.
    pub managed_memory: bool,
    /// `CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS`: host and device may touch managed
    /// memory concurrently; prefetch and advice are available.
    pub concurrent_managed_access: bool,
    /// `CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS`: kernels may dereference pageable
    /// host addresses (HMM); [`HostRef`](super::HostRef) works.
    pub pageable_memory_access: bool,
    /// `CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES`: that access
    /// goes through the host's page tables (ATS, e.g. Grace Hopper) rather than HMM.
    pub pageable_uses_host_page_tables: bool,
    /// `CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST`: the host reads managed
    /// memory resident on the device without migrating it.
    pub direct_managed_access_from_host: bool,
    /// `CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY`: pinned memory can be mapped into the
    /// device's address space.
    pub can_map_host_memory: bool,
    /// `CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED`: `cuMemHostRegister` works.
    pub host_register: bool,
}

impl MemoryCaps {
    /// Reads every field for `ctx`'s device.
    ///
    /// Errors: [`MemoryError::Driver`] when an attribute or `cuMemGetInfo` fails.
    pub fn query(ctx: &CudaContext) -> Result<Self, MemoryError> {
        use sys::CUdevice_attribute as A;
        let attr = |a: A| -> Result<i32, MemoryError> {
            ctx.attribute(a).map_err(|source| MemoryError::Driver {
                context: format!("cuDeviceGetAttribute({a:?})"),
                source,
            })
        };
        let on = |a: A| attr(a).map(|v| v != 0);
        let (free_bytes, total_bytes) = ctx.mem_get_info().map_err(driver("cuMemGetInfo"))?;
        Ok(MemoryCaps {
            ordinal: ctx.ordinal(),
            name: ctx.name().map_err(driver("cuDeviceGetName"))?,
            free_bytes,
            total_bytes,
            memory_pools: on(A::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED)?,
            async_engines: attr(A::CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT)?,
            managed_memory: on(A::CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY)?,
            concurrent_managed_access: on(A::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS)?,
            pageable_memory_access: on(A::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS)?,
            pageable_uses_host_page_tables: on(
                A::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES,
            )?,
            direct_managed_access_from_host: on(
                A::CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST,
            )?,
            can_map_host_memory: on(A::CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY)?,
            host_register: on(A::CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED)?,
        })
    }
}

impl fmt::Display for MemoryCaps {
    /// One `name = value` line per capability, attribute names as in the driver API.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = |v: bool| if v { 1 } else { 0 };
        writeln!(f, "device {} ({})", self.ordinal, self.name)?;
        writeln!(
            f,
            "  memory: {} free of {}",
            self.free_bytes,
            crate::message::bytes(self.total_bytes as u64)
        )?;
        let rows = [
            ("MEMORY_POOLS_SUPPORTED", b(self.memory_pools)),
            ("ASYNC_ENGINE_COUNT", self.async_engines),
            ("MANAGED_MEMORY", b(self.managed_memory)),
            (
                "CONCURRENT_MANAGED_ACCESS",
                b(self.concurrent_managed_access),
            ),
            ("PAGEABLE_MEMORY_ACCESS", b(self.pageable_memory_access)),
            (
                "PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES",
                b(self.pageable_uses_host_page_tables),
            ),
            (
                "DIRECT_MANAGED_MEM_ACCESS_FROM_HOST",
                b(self.direct_managed_access_from_host),
            ),
            ("CAN_MAP_HOST_MEMORY", b(self.can_map_host_memory)),
            ("HOST_REGISTER_SUPPORTED", b(self.host_register)),
        ];
        for (name, v) in rows {
            writeln!(f, "  CU_DEVICE_ATTRIBUTE_{name} = {v}")?;
        }
        Ok(())
    }
}
