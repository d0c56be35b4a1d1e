//! The ABI descriptors and record words `#[kernel]` writes for pointees whose class is
//! special: `bool` (its own class, not `u8`), raw pointers (pointer tables), `c_void`
//! (untyped), and the bound on a record's length. Host-side, no GPU, no nightly.

use core::ffi::c_void;

use device_std::abi::{
    self, record, record_words, ParamAbi, MAX_PARAM_BYTES, MAX_RECORD_BYTES, MAX_RECORD_WORDS,
    POINTER,
};
use device_std::{FieldLayout, HasValueClass, KernelParam, ValueClass};

/// `(kind, size, align, elem_size, elem_class word)` of a parameter type.
fn words<T: KernelParam>() -> (u32, u32, u32, u32, u32) {
    let a = T::ABI;
    (a.kind, a.size, a.align, a.elem_size, a.elem_class.word())
}

#[test]
fn bool_has_its_own_class() {
    assert_eq!(<bool as HasValueClass>::VALUE_CLASS, ValueClass::Bool);
    assert_eq!(ValueClass::Bool.word(), 5);
    assert_eq!(ValueClass::Bool.name(), "bool");
    assert_eq!(<u8 as HasValueClass>::VALUE_CLASS, ValueClass::Unsigned);
    assert!(ValueClass::Bool.conflicts_with(ValueClass::Unsigned));
    assert!(ValueClass::Unsigned.conflicts_with(ValueClass::Bool));
    assert!(ValueClass::Bool.conflicts_with(ValueClass::Signed));
    assert!(!ValueClass::Bool.conflicts_with(ValueClass::Opaque));
    // `*mut bool`: a pointer to 1-byte data of class 5; `*mut u8`: class 1.
    assert_eq!(words::<*mut bool>(), (POINTER, 8, 8, 1, 5));
    assert_eq!(words::<*const bool>(), (POINTER, 8, 8, 1, 5));
    assert_eq!(words::<*mut u8>(), (POINTER, 8, 8, 1, 1));
    assert_eq!(words::<*mut i8>(), (POINTER, 8, 8, 1, 2));
    assert_eq!(<[bool; 4] as HasValueClass>::VALUE_CLASS, ValueClass::Bool);
}

#[test]
fn class_words_round_trip() {
    for w in 0..=9 {
        assert_eq!(ValueClass::from_word(w).unwrap().word(), w);
    }
    assert_eq!(ValueClass::from_word(10), None);
    let names: Vec<&str> = (0..=9)
        .map(|w| ValueClass::from_word(w).unwrap().name())
        .collect();
    assert_eq!(
        names,
        [
            "opaque",
            "unsigned integer",
            "signed integer",
            "float",
            "raw pointer",
            "bool",
            "bfloat16",
            "float16",
            "e4m3",
            "e5m2"
        ]
    );
}

#[test]
fn pointer_tables_record_an_8_byte_raw_pointer_pointee() {
    assert_eq!(words::<*const *const f32>(), (POINTER, 8, 8, 8, 4));
    assert_eq!(words::<*mut *mut u8>(), (POINTER, 8, 8, 8, 4));
    assert_eq!(words::<*const *mut c_void>(), (POINTER, 8, 8, 8, 4));
    assert_eq!(
        <[*const f32; 2] as HasValueClass>::VALUE_CLASS,
        ValueClass::Pointer
    );
}

#[test]
fn c_void_pointees_are_untyped() {
    // Element size 0 and class opaque: the host skips size and class.
    assert_eq!(words::<*mut c_void>(), (POINTER, 8, 8, 0, 0));
    assert_eq!(words::<*const c_void>(), (POINTER, 8, 8, 0, 0));
    const _: () = assert!(<c_void as HasValueClass>::UNTYPED);
    const _: () = assert!(!<u8 as HasValueClass>::UNTYPED);
    const _: () = assert!(!<*mut c_void as HasValueClass>::UNTYPED);
    // A zero-sized typed pointee is not untyped: its class stays.
    assert_eq!(words::<*const [u32; 0]>(), (POINTER, 8, 8, 0, 1));
}

#[test]
fn record_length_bound() {
    assert_eq!(MAX_PARAM_BYTES, 32_764);
    assert_eq!(MAX_RECORD_WORDS, 3 + 9 * 32_764);
    assert_eq!(MAX_RECORD_BYTES, 1_179_516);
    // The densest record: one-byte structs with one one-byte field each, 9 words a byte.
    const FIELD: &[FieldLayout] = &[FieldLayout {
        name: "b",
        offset: 0,
        size: 1,
        class: ValueClass::Unsigned,
    }];
    let one_byte_struct = ParamAbi {
        kind: abi::STRUCT,
        size: 1,
        align: 1,
        elem_size: 0,
        elem_class: ValueClass::Opaque,
        fields: FIELD,
    };
    let densest = vec![one_byte_struct; MAX_PARAM_BYTES as usize];
    assert_eq!(record_words(&densest), MAX_RECORD_WORDS as usize);
}

/// Runs `record::<W>` for `params` on a thread with room for a `[u32; W]` in a debug
/// build; returns its panic message, if it panicked.
fn record_panic<const W: usize>(params: &'static [ParamAbi]) -> Option<String> {
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || {
            std::panic::catch_unwind(|| {
                let r = record::<W>(params);
                assert_eq!(r[..2], [abi::MAGIC, abi::VERSION]);
            })
            .err()
            .map(|e| match e.downcast::<&str>() {
                Ok(s) => s.to_string(),
                Err(e) => *e.downcast::<String>().expect("a string panic"),
            })
        })
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn a_record_longer_than_the_bound_does_not_build() {
    // One struct with F zero-sized fields: 3 + 6 + 3 F words. F = 98_290 is exactly the
    // bound; one more field is 3 words over it.
    fn zero_sized_fields(n: usize) -> &'static [ParamAbi] {
        let fields = vec![
            FieldLayout {
                name: "z",
                offset: 0,
                size: 0,
                class: ValueClass::Unsigned,
            };
            n
        ];
        let p = ParamAbi {
            kind: abi::STRUCT,
            size: 8,
            align: 8,
            elem_size: 0,
            elem_class: ValueClass::Opaque,
            fields: Vec::leak(fields),
        };
        Vec::leak(vec![p])
    }
    const AT: usize = MAX_RECORD_WORDS as usize;
    let at = zero_sized_fields(98_290);
    assert_eq!(record_words(at), AT);
    assert_eq!(record_panic::<AT>(at), None);
    let over = zero_sized_fields(98_291);
    assert_eq!(record_words(over), AT + 3);
    let msg = record_panic::<{ AT + 3 }>(over).expect("a record over the bound panics");
    assert!(
        msg.starts_with(
            "the kernel's ABI record would be longer than device_std::abi::MAX_RECORD_WORDS"
        ),
        "{msg}"
    );
}
