//! Input containers (archives, ELF, fatbins): nothing may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ptx_linker::load_input("f", data.to_vec(), ptx_linker::InputKind::Object, Some(90));
});
