//! Kernel timing for the example hosts that report speed.

use host_loader::cudarc::driver::{sys::CUevent_flags::CU_EVENT_DEFAULT, CudaStream, DriverError};

/// Median milliseconds of `runs` calls of `launch` (`runs` at least 1), each between two
/// CUDA events recorded on `stream`, after 3 untimed calls.
pub fn median_ms<E: From<DriverError>>(
    stream: &CudaStream,
    runs: usize,
    mut launch: impl FnMut() -> Result<(), E>,
) -> Result<f64, E> {
    for _ in 0..3 {
        launch()?;
    }
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = stream.record_event(Some(CU_EVENT_DEFAULT))?;
        launch()?;
        let end = stream.record_event(Some(CU_EVENT_DEFAULT))?;
        times.push(f64::from(start.elapsed_ms(&end)?));
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}
