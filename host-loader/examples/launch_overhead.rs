//! Host-side cost of one launch: `Kernel::launch` against cudarc's launch builder and a
//! bare `cuLaunchKernel`, for the 3-slice `vecadd` of `tests/data/gpu.ptx`.
//!
//! Each round enqueues `BATCH` launches (below the driver's queue depth, so enqueueing
//! does not block on the GPU), timing only the enqueue loop, then synchronizes.
//!
//! Run on a GPU machine: `cargo run --release -p host-loader --example launch_overhead`.

use std::time::Instant;

use cudarc::driver::{result, LaunchConfig, PushKernelArg};
use host_loader::{
    open_device, EntrySignature, Module, Param, ParamKind, RawSlice, Signatures, Slice, SliceMut,
};

const BATCH: usize = 256;
const ROUNDS: usize = 200;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (ctx, stream) = open_device(0)?;
    let params = (0..3)
        .map(|i| Param {
            name: format!("vecadd_param_{i}"),
            kind: ParamKind::Aggregate { elem: "b8".into() },
            size: 16,
            align: 8,
        })
        .collect();
    let sigs = Signatures::new(
        "gpu.ptx",
        vec![EntrySignature {
            name: "vecadd".into(),
            line: 0,
            params,
        }],
    );
    let module =
        Module::from_ptx_with_signatures(&ctx, sigs, include_str!("../tests/data/gpu.ptx"))?;
    let k = module.kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")?;
    let n = 256usize;
    let a = stream.clone_htod(&vec![1.0f32; n])?;
    let b = stream.clone_htod(&vec![2.0f32; n])?;
    let mut c = stream.alloc_zeros::<f32>(n)?;
    let cfg = LaunchConfig::for_num_elems(n as u32);

    let time = |label: &str, f: &mut dyn FnMut()| {
        let mut best = f64::MAX;
        let mut total = 0.0;
        for _ in 0..ROUNDS {
            let t = Instant::now();
            for _ in 0..BATCH {
                f();
            }
            let us = t.elapsed().as_secs_f64() * 1e6 / BATCH as f64;
            best = best.min(us);
            total += us;
            stream.synchronize().unwrap();
        }
        println!(
            "{label:<28} best {best:6.3} us/launch, mean {:6.3}",
            total / ROUNDS as f64
        );
    };

    for _ in 0..2 {
        time("host_loader Kernel::launch", &mut || {
            // SAFETY: vecadd stays within n elements.
            unsafe { k.launch(&stream, cfg, (&a, &b, &mut c)) }.unwrap();
        });
        let f = module.cuda_module().load_function("vecadd")?;
        let (pa, pb, pc) = {
            use cudarc::driver::DevicePtr;
            (
                a.device_ptr(&stream).0,
                b.device_ptr(&stream).0,
                c.device_ptr(&stream).0,
            )
        };
        let len = n as u64;
        time("cudarc launch_builder", &mut || {
            // cudarc would pass a `&CudaSlice` as a bare pointer; vecadd takes (ptr, len)
            // pairs, so push them as `[u64; 2]` values (no event tracking here).
            let (ra, rb, rc) = ([pa, len], [pb, len], [pc, len]);
            let mut l = stream.launch_builder(&f);
            l.arg(&ra).arg(&rb).arg(&rc);
            // SAFETY: vecadd's three (ptr, len) parameters, buffers of n elements.
            unsafe { l.launch(cfg) }.unwrap();
        });
        time("bare cuLaunchKernel", &mut || {
            let ra = RawSlice {
                ptr: pa,
                len: n as u64,
            };
            let rb = RawSlice {
                ptr: pb,
                len: n as u64,
            };
            let rc = RawSlice {
                ptr: pc,
                len: n as u64,
            };
            let mut p = [
                &ra as *const RawSlice as *mut std::ffi::c_void,
                &rb as *const RawSlice as *mut _,
                &rc as *const RawSlice as *mut _,
            ];
            // SAFETY: vecadd's three (ptr, len) parameters, buffers of n elements.
            unsafe {
                result::launch_kernel(
                    f.cu_function(),
                    cfg.grid_dim,
                    cfg.block_dim,
                    0,
                    stream.cu_stream(),
                    &mut p,
                )
            }
            .unwrap();
        });
    }
    let out = stream.clone_dtoh(&c)?;
    assert!(out.iter().all(|&x| x == 3.0));
    Ok(())
}
