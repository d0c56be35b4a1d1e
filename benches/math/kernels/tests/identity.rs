//! Emulator identity: the host, running the same Rust code as the GPU, gives the hashes
//! the GPU gave, and the kernel lists agree with `benches/math/functions.def`.
//!
//! `benches/math/gpu-hashes.txt` holds `hash <name> <hex>` lines exactly as the GPU
//! harness prints them: after `scripts/gpu-math.sh STAGED LOGS` on a GPU machine, copy
//! `LOGS/gpu-hashes.txt` over it. Every function built (the lists in `src/lib.rs`) must
//! have an entry, and every entry of a built function must match. Without a GPU run,
//! `MATH_HASHES_WRITE=1 cargo test -p math-bench-kernels --test identity` writes the
//! host's own hashes there, labelled host-computed.

use math_bench_kernels::{sample, F32_BINARY, F32_UNARY, F64_BINARY, F64_UNARY};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn bench_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `name -> hash` from `hash <name> <hex>` lines; `#` lines and blank lines skipped.
fn parse_hashes(text: &str) -> BTreeMap<String, u64> {
    let mut map = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let hash = match words[..] {
            ["hash", _, hex] => u64::from_str_radix(hex, 16).ok(),
            _ => None,
        };
        let hash =
            hash.unwrap_or_else(|| panic!("gpu-hashes.txt:{}: not `hash NAME HEX`: {line}", n + 1));
        assert!(
            map.insert(words[1].to_string(), hash).is_none(),
            "gpu-hashes.txt:{}: {} listed twice",
            n + 1,
            words[1]
        );
    }
    map
}

/// Each function built and its host hash, or the panic it raised.
fn host_hashes() -> Vec<(&'static str, Result<u64, String>)> {
    fn run(f: impl FnOnce() -> u64 + std::panic::UnwindSafe) -> Result<u64, String> {
        std::panic::catch_unwind(f).map_err(|e| {
            let msg = e.downcast_ref::<&str>().map(|s| s.to_string());
            msg.or_else(|| e.downcast_ref::<String>().cloned())
                .unwrap_or_default()
        })
    }
    let mut all = Vec::new();
    for &(n, f) in F32_UNARY {
        all.push((n, run(|| sample::hash_f32_unary(f))));
    }
    for &(n, f) in F32_BINARY {
        all.push((n, run(|| sample::hash_f32_binary(f))));
    }
    for &(n, f) in F64_UNARY {
        all.push((n, run(|| sample::hash_f64_unary(f))));
    }
    for &(n, f) in F64_BINARY {
        all.push((n, run(|| sample::hash_f64_binary(f))));
    }
    all
}

#[test]
fn host_hashes_match_the_gpu() {
    let path = bench_dir().join("gpu-hashes.txt");
    if std::env::var_os("MATH_HASHES_WRITE").is_some() {
        let mut text = String::from(
            "# HOST-COMPUTED by `MATH_HASHES_WRITE=1 cargo test -p math-bench-kernels --test identity`,\n\
             # not recorded on a GPU: replace with LOG_DIR/gpu-hashes.txt of scripts/gpu-math.sh\n\
             # so that the test compares the host with the GPU.\n",
        );
        for (name, h) in host_hashes() {
            match h {
                Ok(h) => text += &format!("hash {name} {h:016x}\n"),
                Err(e) => text += &format!("# {name}: the host panicked: {e}\n"),
            }
        }
        std::fs::write(&path, text).unwrap();
        eprintln!("wrote {}", path.display());
        return;
    }
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (see this test's header)", path.display()));
    let want = parse_hashes(&text);
    let mut bad = Vec::new();
    for (name, h) in host_hashes() {
        match (h, want.get(name)) {
            (Err(e), _) => bad.push(format!("{name}: the host panicked: {e}")),
            (Ok(h), None) => bad.push(format!("{name}: no entry (host {h:016x})")),
            (Ok(h), Some(&w)) if w != h => {
                bad.push(format!("{name}: host {h:016x}, file {w:016x}"))
            }
            _ => {}
        }
    }
    assert!(
        bad.is_empty(),
        "{} disagrees with the host:\n  {}\n(after a GPU run, copy its gpu-hashes.txt; see this test's header)",
        path.display(),
        bad.join("\n  ")
    );
}

/// Every function built is in `functions.def` under the same signature.
#[test]
fn lists_agree_with_functions_def() {
    let def = std::fs::read_to_string(bench_dir().join("functions.def")).unwrap();
    let mut groups = BTreeMap::new();
    for line in def.lines() {
        if let Some((group, rest)) = line.split_once('(') {
            if ["F32U", "F32B", "F64U", "F64B"].contains(&group) {
                let name = rest.split(',').next().unwrap().trim();
                assert!(
                    groups.insert(name, group).is_none(),
                    "functions.def: {name} twice"
                );
            }
        }
    }
    let built = [
        ("F32U", F32_UNARY.iter().map(|f| f.0).collect::<Vec<_>>()),
        ("F32B", F32_BINARY.iter().map(|f| f.0).collect()),
        ("F64U", F64_UNARY.iter().map(|f| f.0).collect()),
        ("F64B", F64_BINARY.iter().map(|f| f.0).collect()),
    ];
    let mut pending = groups.clone();
    for (group, names) in built {
        for name in names {
            assert_eq!(
                groups.get(name),
                Some(&group),
                "{name} is built as {group} but functions.def says {:?}",
                groups.get(name)
            );
            pending.remove(name);
        }
    }
    if !pending.is_empty() {
        eprintln!("not built yet: {:?}", pending.keys().collect::<Vec<_>>());
    }
}

/// The sample generators against fixed values (splitmix64's first output from seed 0 is
/// a published constant; the others pin the definitions `reference.cu` shares).
#[test]
fn sample_generators() {
    assert_eq!(sample::sm(0), 0xE220_A839_7B1D_CDAF);
    assert_eq!(sample::f32_unary(65_535).to_bits(), 0xFFFF_FFFF);
    assert_eq!(sample::tame32(0xFFFF_FFFF), 0xBBFF_FFFF); // field 119 + 255 % 17 = 119
    assert_eq!(
        sample::fnv1a(sample::FNV_OFFSET, b"a"),
        0xAF63_DC4C_8601_EC8C
    );
    for j in (1..sample::N).step_by(2) {
        let e = (sample::f64_unary(j).to_bits() >> 52 & 0x7FF) as i32 - 1023;
        assert!((-8..=8).contains(&e), "tamed input {j} has exponent {e}");
    }
}

/// The samples' own bits hashed, as `reference.cu`'s host code gives them (its
/// `sample_*` and `fnv1a` compiled by nvcc 13.5 on the host, 2026-12-06): pins the Rust
/// and CUDA generators together.
#[test]
fn samples_match_reference_cu() {
    let h = |bytes: &mut dyn Iterator<Item = Vec<u8>>| {
        bytes.fold(sample::FNV_OFFSET, |h, b| sample::fnv1a(h, &b))
    };
    let n = 0..sample::N;
    let f32u = h(&mut n
        .clone()
        .map(|j| sample::f32_unary(j).to_bits().to_le_bytes().to_vec()));
    let f32b = h(&mut n.clone().map(|j| {
        let (x, y) = sample::f32_pair(j);
        [x.to_bits().to_le_bytes(), y.to_bits().to_le_bytes()].concat()
    }));
    let f64u = h(&mut n
        .clone()
        .map(|j| sample::f64_unary(j).to_bits().to_le_bytes().to_vec()));
    let f64b = h(&mut n.clone().map(|j| {
        let (x, y) = sample::f64_pair(j);
        [x.to_bits().to_le_bytes(), y.to_bits().to_le_bytes()].concat()
    }));
    assert_eq!(
        [f32u, f32b, f64u, f64b],
        [
            0x6abb_e2f1_2c88_f325,
            0xa5c0_4088_0117_af57,
            0x5a4d_aecf_0572_7564,
            0x4e85_5dd6_1c55_54d5
        ]
    );
}
