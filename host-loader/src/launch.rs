//! Launch configurations: building and validating grid and block sizes.

pub use cudarc::driver::LaunchConfig;

use crate::error::Error;

/// Most threads in one block on every GPU CUDA 13 supports (sm_75 and newer).
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;
/// Largest block size in x and y, in threads.
pub const MAX_BLOCK_DIM_XY: u32 = 1024;
/// Largest block size in z, in threads.
pub const MAX_BLOCK_DIM_Z: u32 = 64;
/// Largest grid size in x, in blocks (2³¹ − 1).
pub const MAX_GRID_DIM_X: u32 = i32::MAX as u32;
/// Largest grid size in y and z, in blocks.
pub const MAX_GRID_DIM_YZ: u32 = 65535;

/// A 1D configuration that covers `n` elements with one thread each: `block` threads per
/// block and `ceil(n / block)` blocks, no dynamic shared memory.
///
/// Unlike cudarc's `LaunchConfig::for_num_elems`, the block size is the caller's choice.
///
/// Errors: [`Error::InvalidLaunch`] when `n` is 0 (a grid of zero blocks cannot be
/// launched) or `block` is 0 or above [`MAX_THREADS_PER_BLOCK`].
///
/// ```
/// let cfg = host_loader::for_num_elems(1000, 256).unwrap();
/// assert_eq!(cfg.grid_dim, (4, 1, 1));
/// assert_eq!(cfg.block_dim, (256, 1, 1));
/// assert!(host_loader::for_num_elems(0, 256).is_err());
/// ```
pub fn for_num_elems(n: u32, block: u32) -> Result<LaunchConfig, Error> {
    if n == 0 {
        return Err(invalid(
            None,
            "0 elements: a grid of zero blocks cannot be launched; skip the launch instead".into(),
        ));
    }
    let cfg = LaunchConfig {
        grid_dim: (n.div_ceil(block.max(1)), 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    };
    validate_config(&cfg, MAX_THREADS_PER_BLOCK).map_err(|e| match e {
        Error::InvalidLaunch { reason, .. } => invalid(None, reason),
        other => other,
    })?;
    Ok(cfg)
}

/// Checks `cfg` against CUDA's launch limits: every grid and block dimension non-zero,
/// block at most 1024 × 1024 × 64 threads per axis and at most `max_threads_per_block`
/// (and 1024) threads in total, grid at most (2³¹ − 1) × 65535 × 65535 blocks.
///
/// Dynamic shared memory is not checked here; the driver reports it
/// (`CUDA_ERROR_INVALID_VALUE`) if it is above the kernel's limit.
///
/// Errors: [`Error::InvalidLaunch`] saying which limit was broken.
pub fn validate_config(cfg: &LaunchConfig, max_threads_per_block: u32) -> Result<(), Error> {
    let (bx, by, bz) = cfg.block_dim;
    let (gx, gy, gz) = cfg.grid_dim;
    if bx == 0 || by == 0 || bz == 0 {
        return Err(invalid(
            None,
            format!("block {:?} has a zero dimension", cfg.block_dim),
        ));
    }
    if gx == 0 || gy == 0 || gz == 0 {
        return Err(invalid(
            None,
            format!("grid {:?} has a zero dimension", cfg.grid_dim),
        ));
    }
    if bx > MAX_BLOCK_DIM_XY || by > MAX_BLOCK_DIM_XY || bz > MAX_BLOCK_DIM_Z {
        return Err(invalid(
            None,
            format!(
                "block {:?} exceeds the per-axis limit ({MAX_BLOCK_DIM_XY}, \
                 {MAX_BLOCK_DIM_XY}, {MAX_BLOCK_DIM_Z})",
                cfg.block_dim
            ),
        ));
    }
    let threads = bx as u64 * by as u64 * bz as u64;
    let limit = max_threads_per_block.min(MAX_THREADS_PER_BLOCK);
    if threads > limit as u64 {
        return Err(invalid(
            None,
            format!(
                "block {:?} has {threads} threads; the limit is {limit}",
                cfg.block_dim
            ),
        ));
    }
    if gx > MAX_GRID_DIM_X || gy > MAX_GRID_DIM_YZ || gz > MAX_GRID_DIM_YZ {
        return Err(invalid(
            None,
            format!(
                "grid {:?} exceeds the limit ({MAX_GRID_DIM_X}, {MAX_GRID_DIM_YZ}, \
                 {MAX_GRID_DIM_YZ})",
                cfg.grid_dim
            ),
        ));
    }
    Ok(())
}

pub(crate) fn invalid(kernel: Option<&str>, reason: String) -> Error {
    Error::InvalidLaunch {
        kernel: kernel.map(str::to_string),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(grid: (u32, u32, u32), block: (u32, u32, u32)) -> LaunchConfig {
        LaunchConfig {
            grid_dim: grid,
            block_dim: block,
            shared_mem_bytes: 0,
        }
    }

    #[test]
    fn for_num_elems_rounds_up() {
        let c = for_num_elems(1025, 1024).unwrap();
        assert_eq!(c.grid_dim, (2, 1, 1));
        assert_eq!(c.block_dim, (1024, 1, 1));
        assert_eq!(c.shared_mem_bytes, 0);
        let c = for_num_elems(u32::MAX, 1).unwrap_err();
        assert!(
            c.to_string().contains("grid (4294967295, 1, 1) exceeds"),
            "{c}"
        );
    }

    #[test]
    fn for_num_elems_rejects_bad_input() {
        assert_eq!(
            for_num_elems(0, 256).unwrap_err().to_string(),
            "invalid launch: 0 elements: a grid of zero blocks cannot be launched; skip the \
             launch instead"
        );
        assert_eq!(
            for_num_elems(10, 0).unwrap_err().to_string(),
            "invalid launch: block (0, 1, 1) has a zero dimension"
        );
        assert_eq!(
            for_num_elems(10, 2048).unwrap_err().to_string(),
            "invalid launch: block (2048, 1, 1) exceeds the per-axis limit (1024, 1024, 64)"
        );
    }

    #[test]
    fn validate_limits() {
        assert!(validate_config(&cfg((1, 1, 1), (1024, 1, 1)), 1024).is_ok());
        assert!(validate_config(&cfg((MAX_GRID_DIM_X, 65535, 65535), (32, 32, 1)), 1024).is_ok());
        assert_eq!(
            validate_config(&cfg((1, 1, 1), (32, 32, 2)), 1024)
                .unwrap_err()
                .to_string(),
            "invalid launch: block (32, 32, 2) has 2048 threads; the limit is 1024"
        );
        assert_eq!(
            validate_config(&cfg((1, 1, 1), (512, 1, 1)), 256)
                .unwrap_err()
                .to_string(),
            "invalid launch: block (512, 1, 1) has 512 threads; the limit is 256"
        );
        assert!(validate_config(&cfg((1, 1, 1), (1, 1, 65)), 1024).is_err());
        assert!(validate_config(&cfg((0, 1, 1), (1, 1, 1)), 1024).is_err());
        assert!(validate_config(&cfg((1, 65536, 1), (1, 1, 1)), 1024).is_err());
        assert!(validate_config(&cfg((1, 1, 1), (1, 0, 1)), 1024).is_err());
    }
}
