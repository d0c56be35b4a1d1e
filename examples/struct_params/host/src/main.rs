//! Runs `transform`, whose parameter is a struct with 16-byte aligned fields, checks
//! every point against the CPU, then shows that four wrong host types are refused before
//! any launch: fields in another order, a slice where the kernel writes, an element of
//! the wrong size, and the same fields without the 16-byte alignment.

use std::path::Path;

use anyhow::{bail, Result};
use clap::Parser;
use example_support::{count_mismatches, random_f32, rng, verdict, Options, POISON};
use host_loader::{for_num_elems, open_device, Module, Slice, SliceMut, Struct};
use struct_params_kernels::{apply, Float4, Transform};

/// `Transform` with its fields in another order: same size and alignment, so only the
/// kernel's ABI record tells them apart.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, device_std::KernelStruct)]
struct TransformSwapped {
    t: Float4,
    m: [Float4; 4],
    count: u32,
    pad: [u32; 3],
}

/// `Transform` with plain `[f32; 4]` rows: 96 bytes, but aligned to 4, not 16.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, device_std::KernelStruct)]
struct TransformPacked {
    m: [[f32; 4]; 4],
    t: [f32; 4],
    count: u32,
    pad: [u32; 3],
}

fn float4s(v: &[f32]) -> Vec<Float4> {
    v.chunks_exact(4)
        .map(|c| Float4 {
            x: c[0],
            y: c[1],
            z: c[2],
            w: c[3],
        })
        .collect()
}

/// The device buffers hold `[f32; 4]`: cudarc copies only its own `DeviceRepr` types,
/// which a struct from another crate cannot become (orphan rule). The kernel's ABI record
/// checks the element size, 16 bytes, which is all the kernel relies on (`Float4` is a
/// struct, so its value class is opaque and `[f32; 4]`'s float class is not compared).
fn arrays(v: &[Float4]) -> Vec<[f32; 4]> {
    v.iter().map(|p| [p.x, p.y, p.z, p.w]).collect()
}

fn load(ctx: &std::sync::Arc<cudarc::driver::CudaContext>, ptx: &Path) -> Result<Module> {
    let map = ptx.with_extension("map.json");
    Ok(if map.is_file() {
        Module::from_ptx_file_with_map(ctx, ptx, &map)?
    } else {
        Module::from_ptx_file(ctx, ptx)?
    })
}

fn main() -> Result<()> {
    let opts = Options::parse();
    let (n, seed) = (opts.n, opts.seed());
    if n <= 1000 {
        bail!("--n must be above 1000 (the last 1000 points stay untouched)");
    }
    let (ctx, stream) = open_device(0)?;
    let module = load(&ctx, &opts.ptx_path("struct_params-kernels"))?;
    let transform =
        module.kernel::<(Struct<Transform>, Slice<[f32; 4]>, SliceMut<[f32; 4]>)>("transform")?;

    let mut rng = rng(seed);
    let xs = float4s(&random_f32(&mut rng, 4 * n, -10.0, 10.0));
    let rows = float4s(&random_f32(&mut rng, 20, -2.0, 2.0));
    let tr = Transform {
        m: [rows[0], rows[1], rows[2], rows[3]],
        t: rows[4],
        count: u32::try_from(n - 1000)?,
        pad: [0; 3],
    };
    let poison = [POISON; 4];
    let xs_dev = stream.clone_htod(&arrays(&xs))?;
    let mut out_dev = stream.clone_htod(&vec![poison; n])?;
    let cfg = for_num_elems(u32::try_from(n)?, 256)?;
    // SAFETY: transform writes out[i] only through its DisjointSlice, for
    // i < min(count, out.len()), and reads xs through a bounds-checked slice.
    unsafe { transform.launch(&stream, cfg, (tr, &xs_dev, &mut out_dev)) }?;
    let got = stream.clone_dtoh(&out_dev)?;

    let head = tr.count as usize;
    // The GPU may contract `a * b + c` into FMAs, so compare against an f64 reference
    // with a tolerance scaled by the magnitude of the terms, not of the (possibly
    // cancelling) result.
    let mut bad_head = 0;
    for (i, (p, g)) in xs[..head].iter().zip(&got).enumerate() {
        let pv = [p.x, p.y, p.z, p.w].map(f64::from);
        let rows = [&tr.m[0], &tr.m[1], &tr.m[2], &tr.m[3]];
        let t = [tr.t.x, tr.t.y, tr.t.z, tr.t.w];
        for (k, row) in rows.iter().enumerate() {
            let r = [row.x, row.y, row.z, row.w].map(f64::from);
            let want: f64 = (0..4).map(|j| r[j] * pv[j]).sum::<f64>() + f64::from(t[k]);
            let scale: f64 =
                (0..4).map(|j| (r[j] * pv[j]).abs()).sum::<f64>() + f64::from(t[k]).abs();
            let ok = (f64::from(g[k]) - want).abs() <= 1e-6 * scale.max(1.0);
            if !ok {
                if bad_head < 5 {
                    eprintln!("transform[{i}].{k}: got {}, want {want}", g[k]);
                }
                bad_head += 1;
            }
        }
    }
    // The same values through the shared CPU function, as a second opinion.
    let want = arrays(&xs[..head].iter().map(|p| apply(&tr, p)).collect::<Vec<_>>());
    let got_flat: &[f32] = bytemuck::cast_slice(&got);
    let bad_shared = count_mismatches(
        "transform (f32 reference)",
        &got_flat[..4 * head],
        bytemuck::cast_slice(&want),
        1e-3,
    );
    let bad_tail = got_flat[4 * head..].iter().filter(|x| !x.is_nan()).count();
    let ok = verdict("transform", bad_head + bad_shared + bad_tail, 4 * n, seed);

    let refusals = [
        (
            "fields in another order",
            module
                .kernel::<(
                    Struct<TransformSwapped>,
                    Slice<[f32; 4]>,
                    SliceMut<[f32; 4]>,
                )>("transform")
                .map(drop),
        ),
        (
            "read-only slice for the output",
            module
                .kernel::<(Struct<Transform>, Slice<[f32; 4]>, Slice<[f32; 4]>)>("transform")
                .map(drop),
        ),
        (
            "12-byte element for a 16-byte one",
            module
                .kernel::<(Struct<Transform>, Slice<[f32; 3]>, SliceMut<[f32; 4]>)>("transform")
                .map(drop),
        ),
        (
            "struct aligned to 4, not 16",
            module
                .kernel::<(Struct<TransformPacked>, Slice<[f32; 4]>, SliceMut<[f32; 4]>)>(
                    "transform",
                )
                .map(drop),
        ),
    ];
    let mut accepted = 0;
    for (what, result) in refusals {
        match result {
            Ok(()) => {
                println!("FAIL accepted: {what}");
                accepted += 1;
            }
            Err(err) => println!("refused as expected ({what}): {err}"),
        }
    }
    if !ok || accepted > 0 {
        std::process::exit(1);
    }
    Ok(())
}
