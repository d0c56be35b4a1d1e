//! `constant!` and `global!` in a host build (the emulator's view): the same methods
//! read and write ordinary statics, and the records say what the host checks.

use device_std::module_var::{self, ModuleVar, CONST_RECORD_PREFIX, GLOBAL_RECORD_PREFIX};
use device_std::{KernelStruct, ValueClass};

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, KernelStruct)]
pub struct Pair {
    a: f32,
    b: u32,
}

device_std::constant! {
    /// Taps.
    pub static TAPS: [f32; 5];
    static GAIN: f64 = 2.5;
    static PAIR: Pair = Pair { a: 1.5, b: 7 };
    static BYTES: [u8; 3] = [1, 2, 3];
}

device_std::global! {
    pub static COUNT: u32;
    static TABLE: [i16; 4] = [-1, 2, -3, 4];
}

#[test]
fn constants_read_their_initializers_and_host_writes() {
    assert_eq!(TAPS.len(), 5);
    assert_eq!(TAPS.read(), [0.0; 5]);
    TAPS.write_on_host([1.0, 2.0, 3.0, 4.0, 5.0]);
    assert_eq!((0..5).map(|i| TAPS.get(i)).sum::<f32>(), 15.0);
    assert_eq!(GAIN.read(), 2.5);
    assert_eq!(PAIR.read(), Pair { a: 1.5, b: 7 });
    assert_eq!(BYTES.get(2), 3);
}

#[test]
fn globals_are_read_and_written() {
    COUNT.write(41);
    // SAFETY: the pointer names COUNT; no other thread uses it in this test.
    unsafe { *COUNT.ptr() += 1 };
    assert_eq!(COUNT.read(), 42);
    TABLE.set(1, 20);
    assert_eq!(TABLE.read(), [-1, 20, -3, 4]);
    assert_eq!(TABLE.get(3), 4);
}

#[test]
#[should_panic(expected = "constant index out of bounds")]
fn constant_index_past_the_end_panics() {
    TAPS.get(5);
}

#[test]
fn records_describe_the_type_and_space() {
    let r = module_var::record::<[f32; 5]>(module_var::SPACE_CONST);
    assert_eq!(
        r,
        [module_var::MAGIC, 1, 1, 20, 4, ValueClass::Float.word()]
    );
    let r = module_var::record::<Pair>(module_var::SPACE_GLOBAL);
    assert_eq!(r[2..], [2, 8, 4, ValueClass::Opaque.word()]);
    assert_eq!(module_var::MAGIC.to_le_bytes(), *b"MVAR");
    assert_eq!(
        (CONST_RECORD_PREFIX, GLOBAL_RECORD_PREFIX),
        ("__const_abi_", "__global_abi_")
    );
    // Each declaration's address is its own static's.
    assert_ne!(
        <TAPS as ModuleVar>::address(),
        <COUNT as ModuleVar>::address()
    );
}
