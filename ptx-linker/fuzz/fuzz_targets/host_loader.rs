//! host-loader's readers, no GPU needed: the first byte picks one, the rest is
//! its input. 0: `check_image` (cubin/fatbin structure, host-loader's own
//! `image.rs` compiled in here, as it is crate-private); 1: `AbiRecord::parse`;
//! 2: a link map (JSON) and its PTX, split at the first `\0`, read with
//! `Signatures::from_link_map`; 3: `Signatures::parse` of PTX. Nothing may
//! panic; bad input gets an error.
#![no_main]

use host_loader::{AbiRecord, Signatures};
use libfuzzer_sys::fuzz_target;

#[path = "../../../host-loader/src/image.rs"]
#[allow(dead_code)]
mod image;

/// What `image.rs` uses from host-loader's `error` module.
mod error {
    pub(crate) fn bytes(n: u64) -> String {
        if n == 1 {
            "1 byte".to_string()
        } else {
            format!("{n} bytes")
        }
    }
}

/// Every kernel's record and alignment, as `Module::kernel` asks for them.
fn read_all(s: &Signatures) {
    let names: Vec<String> = s.entries().iter().map(|e| e.name.clone()).collect();
    for n in names {
        let _ = s.record(&n);
        let _ = s.dynamic_shared_align(&n);
        let _ = s.get(&n);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    match pick % 4 {
        0 => {
            let _ = image::check_image(rest);
        }
        1 => {
            if let Ok(r) = AbiRecord::parse(rest) {
                let _ = format!("{r:?}");
            }
        }
        2 => {
            let Ok(text) = std::str::from_utf8(rest) else {
                return;
            };
            let (map, ptx) = text.split_once('\0').unwrap_or((text, ""));
            if let Ok(map) = serde_json::from_str::<ptx_linker::LinkMap>(map) {
                if let Ok(s) = Signatures::from_link_map("m.ptx", &map, ptx) {
                    read_all(&s);
                }
            }
        }
        _ => {
            let Ok(text) = std::str::from_utf8(rest) else {
                return;
            };
            if let Ok(s) = Signatures::parse("m.ptx", text) {
                read_all(&s);
            }
        }
    }
});
