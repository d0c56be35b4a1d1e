//! Diagnostic: loads each cubin/fatbin named on the command line twice, through
//! cudarc's `result::module::load_data` and through `Module::from_image`, and
//! prints what each did. Used to narrow down a driver crash on cubin loading.
//!
//! `cargo run --release -p host-loader --example load_image -- A.cubin B.cubin`

use host_loader::{open_device, LoadOptions, Module, Signatures};

fn main() {
    let (ctx, _stream) = match open_device(0) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("no device: {e}");
            std::process::exit(2);
        }
    };
    for path in std::env::args().skip(1) {
        let image = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                println!("{path}: cannot read: {e}");
                continue;
            }
        };
        println!(
            "{path}: {} bytes, magic {:02x?}",
            image.len(),
            &image[..image.len().min(4)]
        );
        let mut words = vec![0u64; image.len() / 8 + 2];
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut words);
        bytes[..image.len()].copy_from_slice(&image);
        // SAFETY: a complete image, 8-byte aligned, zero-padded, outliving the call;
        // the primary context is current (open_device).
        match unsafe { cudarc::driver::result::module::load_data(bytes.as_ptr().cast()) } {
            Ok(m) => {
                println!("{path}: cudarc load_data OK");
                // SAFETY: `m` was just loaded and is not used again.
                let _ = unsafe { cudarc::driver::result::module::unload(m) };
            }
            Err(e) => println!("{path}: cudarc load_data error {e:?}"),
        }
        match Module::from_image(
            &ctx,
            Signatures::new(path.clone(), vec![]),
            &image,
            &LoadOptions::new(),
        ) {
            Ok(_) => println!("{path}: Module::from_image OK"),
            Err(e) => println!("{path}: Module::from_image error: {e}"),
        }
    }
}
