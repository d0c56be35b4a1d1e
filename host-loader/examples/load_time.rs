//! Module load time, PTX against a fatbin (issue 33, point 1): `cuModuleLoadDataEx` of
//! linked PTX (the driver's JIT; run with `CUDA_CACHE_DISABLE=1`, as on a user's first
//! run) and of the fatbin `build-ptx --arch A,B` packs, median of `ROUNDS` each,
//! interleaved. With `--vecadd SIG_PTX` it then launches `vecadd` from the fatbin (the
//! signatures read from the PTX of the image the device runs) on 2^20 random floats,
//! output poisoned, and compares with the CPU.
//!
//! With `--manifest MANIFEST` instead, the same launch goes through
//! `Module::from_fatbin` (the image, its PTX and link map chosen for the device).
//!
//! `load_time PTX FATBIN ROUNDS [--vecadd SIG_PTX | --manifest MANIFEST]`

use std::time::Instant;

use host_loader::{for_num_elems, open_device, LoadOptions, Module, Signatures, Slice, SliceMut};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [ptx_path, fatbin_path, rounds, rest @ ..] = &args[..] else {
        eprintln!("usage: load_time PTX FATBIN ROUNDS [--vecadd SIG_PTX]");
        std::process::exit(2);
    };
    let rounds: usize = rounds.parse().expect("ROUNDS");
    let (ctx, stream) = open_device(0).expect("device 0");
    let ptx = std::fs::read_to_string(ptx_path).expect("reading the PTX");
    let fatbin = std::fs::read(fatbin_path).expect("reading the fatbin");
    println!(
        "CUDA_CACHE_DISABLE={}",
        std::env::var("CUDA_CACHE_DISABLE").unwrap_or_default()
    );
    let (mut t_ptx, mut t_fat) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        let m = Module::from_ptx(&ctx, ptx_path, &ptx).expect("loading the PTX");
        t_ptx.push(t.elapsed().as_secs_f64() * 1e3);
        drop(m);
        let t = Instant::now();
        let m = Module::from_image(
            &ctx,
            Signatures::new(fatbin_path.clone(), vec![]),
            &fatbin,
            &LoadOptions::new(),
        )
        .expect("loading the fatbin");
        t_fat.push(t.elapsed().as_secs_f64() * 1e3);
        drop(m);
    }
    let (p, f) = (median(t_ptx), median(t_fat));
    println!(
        "LOAD {ptx_path}: PTX {p:.3} ms, fatbin {f:.3} ms ({:.0}x), median of {rounds}",
        p / f
    );
    if let [flag, arg] = rest {
        let m = match flag.as_str() {
            "--vecadd" => {
                let text = std::fs::read_to_string(arg).expect("reading the signature PTX");
                let sigs = Signatures::parse(arg, &text).expect("signatures");
                Module::from_image(&ctx, sigs, &fatbin, &LoadOptions::new()).expect("fatbin")
            }
            "--manifest" => Module::from_fatbin(&ctx, arg).expect("Module::from_fatbin"),
            other => panic!("unknown option {other}"),
        };
        println!("loaded for vecadd through {flag}");
        let k = m
            .kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")
            .expect("vecadd");
        let n = 1 << 20;
        let mut s = 12345u64;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        let a: Vec<f32> = (0..n).map(|_| next()).collect();
        let b: Vec<f32> = (0..n).map(|_| next()).collect();
        let (da, db) = (
            stream.clone_htod(&a).unwrap(),
            stream.clone_htod(&b).unwrap(),
        );
        let mut dc = stream.clone_htod(&vec![f32::NAN; n]).unwrap();
        let cfg = for_num_elems(n as u32, 256).unwrap();
        // SAFETY: vecadd writes c[i] for i < c.len() and reads a[i], b[i] there.
        unsafe { k.launch(&stream, cfg, (&da, &db, &mut dc)) }.expect("launch");
        let c = stream.clone_dtoh(&dc).unwrap();
        let bad = (0..n).filter(|&i| c[i] != a[i] + b[i]).count();
        println!(
            "{} vecadd from the fatbin: {bad} of {n} elements differ from the CPU",
            if bad == 0 { "PASS" } else { "FAIL" }
        );
        if bad != 0 {
            std::process::exit(1);
        }
    }
}
