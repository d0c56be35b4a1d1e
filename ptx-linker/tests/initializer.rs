//! `global_initializer`: a variable's bytes as the host sees them after load.

use ptx_linker::global_initializer;

fn module(decls: &str) -> String {
    format!(".version 7.8\n.target sm_90\n.address_size 64\n{decls}\n")
}

fn bytes(decls: &str, name: &str) -> Vec<u8> {
    global_initializer("m.ptx", &module(decls), name)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("`{name}` not found"))
}

fn error(decls: &str, name: &str) -> String {
    global_initializer("m.ptx", &module(decls), name)
        .unwrap_err()
        .message
}

#[test]
fn llvm_abi_record_is_padded_to_its_declared_size() {
    let b = bytes(
        ".visible .global .align 4 .b8 __kernel_abi_k[16] = {16, 0, 0, 0, 8};",
        "__kernel_abi_k",
    );
    assert_eq!(b, [16, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn element_width_follows_the_type() {
    assert_eq!(
        bytes(".global .u32 a[3] = {1, 0x10, -1};", "a"),
        [1, 0, 0, 0, 0x10, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]
    );
    assert_eq!(
        bytes(".global .b64 a = 0x0102030405060708;", "a"),
        [8, 7, 6, 5, 4, 3, 2, 1]
    );
    assert_eq!(
        bytes(".const .s16 a[2] = {-2, 3};", "a"),
        [0xfe, 0xff, 3, 0]
    );
    assert_eq!(bytes(".global .u8 a[] = {1, 2, 3};", "a"), [1, 2, 3]);
}

#[test]
fn floats_from_bits_and_decimals() {
    assert_eq!(
        bytes(".global .f32 a[2] = {0f3F800000, 2.5};", "a"),
        [0, 0, 0x80, 0x3f, 0, 0, 0x20, 0x40]
    );
    assert_eq!(
        bytes(".global .f64 a = 0d3FF0000000000000;", "a"),
        1.0f64.to_le_bytes()
    );
    assert_eq!(bytes(".global .f64 a = 3;", "a"), 3.0f64.to_le_bytes());
}

#[test]
fn vectors_nested_lists_and_constant_expressions() {
    assert_eq!(
        bytes(".global .v2 .u16 a[2] = {{1, 2}, {3}};", "a"),
        [1, 0, 2, 0, 3, 0, 0, 0]
    );
    assert_eq!(
        bytes(".global .u8 a[2][3] = {{1}, {4, 5, 6}};", "a"),
        [1, 0, 0, 4, 5, 6]
    );
    assert_eq!(
        bytes(".global .u32 a = (1 << 4) + 2 * 3 - (8 / 2);", "a"),
        18u32.to_le_bytes()
    );
}

#[test]
fn every_declarator_of_a_declaration_is_found() {
    let decls = ".global .align 4 .u32 a, b = 5, c[2] = {1, 2};";
    assert_eq!(bytes(decls, "a"), [0, 0, 0, 0]);
    assert_eq!(bytes(decls, "b"), [5, 0, 0, 0]);
    assert_eq!(bytes(decls, "c"), [1, 0, 0, 0, 2, 0, 0, 0]);
}

#[test]
fn missing_symbols_and_declarations_give_none() {
    let text = module(".extern .global .u32 e;\n.global .u32 d = 1;");
    assert_eq!(global_initializer("m.ptx", &text, "nope").unwrap(), None);
    assert_eq!(global_initializer("m.ptx", &text, "e").unwrap(), None);
}

#[test]
fn address_initializers_are_errors_naming_file_and_line() {
    assert_eq!(
        error(
            ".global .u32 x;\n.global .u64 p[2] = {0, generic(x)};",
            "p"
        ),
        "m.ptx:5:25: error: initializer holds the address of `x` (`generic(x)`), which is known only once the module is loaded\n\
         help: address initializers have no value in the PTX text; read the variable after loading the module (cuModuleGetGlobal)"
    );
    assert!(error(".global .u32 x;\n.global .u64 p = x + 4;", "p")
        .starts_with("m.ptx:5:18: error: initializer holds the address of `x` (`x`)"));
}

#[test]
fn malformed_initializers_are_errors() {
    assert_eq!(
        error(".global .u8 a[2] = {1, 2, 3};", "a"),
        "m.ptx:4:20: error: initializer holds 3 bytes but the array holds 2"
    );
    assert_eq!(
        error(".global .u32 a = 1.5;", "a"),
        "m.ptx:4:18: error: a floating-point value cannot initialize a `.u32` element; write its bits as an integer"
    );
    assert_eq!(
        error(".global .u32 a = 1 / 0;", "a"),
        "m.ptx:4:20: error: cannot evaluate `/` here (division by zero or a float operand)"
    );
    assert!(
        global_initializer("m.ptx", ".version 7.8\n.target sm_90\n.global .u32 ;", "a").is_err()
    );
}

#[test]
fn oversized_arrays_are_errors_not_panics() {
    // Past 64 bits: refused where it is declared.
    assert_eq!(
        error(".global .u64 a[4611686018427387904];", "a"),
        "m.ptx:4:14: error: variable `a` is too large: 4611686018427387904 elements of 8 bytes are 36893488147419103232 bytes, more than 64 bits can count\n\
         help: declare `a` smaller: no state space holds 2^64 bytes"
    );
    // A zero dimension makes the array empty, but the rows of the others
    // still multiply past 64 bits.
    assert_eq!(
        error(".global .u8 a[0][4294967296][4294967296] = {{1}};", "a"),
        "m.ptx:4:44: error: the array is larger than 2^64 bytes"
    );
    // Representable, but more than this host can allocate.
    assert_eq!(
        error(".global .u8 a[9223372036854775807];", "a"),
        "m.ptx:4:13: error: 9223372036854775807 bytes of initial value: more than this host can allocate"
    );
}

/// `global_initializer_parsed` on a module parsed once gives what `global_initializer`
/// gives for every variable, the missing one and the errors included.
#[test]
fn parsed_once_gives_the_same_bytes_and_errors() {
    use ptx_linker::diagnostic::FileId;
    use ptx_linker::global_initializer_parsed;
    let text = module(
        ".global .u32 a[3] = {1, 2, 3};\n.global .b8 r[8] = {7};\n.global .u64 p = generic(a);",
    );
    let parsed = ptx_linker::parse::parse(FileId(0), &text);
    for name in ["a", "r", "missing"] {
        assert_eq!(
            global_initializer_parsed("m.ptx", &text, &parsed, name).unwrap(),
            global_initializer("m.ptx", &text, name).unwrap(),
            "{name}"
        );
    }
    let once = global_initializer_parsed("m.ptx", &text, &parsed, "p").unwrap_err();
    let again = global_initializer("m.ptx", &text, "p").unwrap_err();
    assert_eq!(once.message, again.message);
    // A module that does not parse is an error for every name, as before.
    let broken = module(".global .u32 a = {;");
    let parsed = ptx_linker::parse::parse(FileId(0), &broken);
    assert!(global_initializer_parsed("m.ptx", &broken, &parsed, "a").is_err());
    assert!(global_initializer("m.ptx", &broken, "a").is_err());
}
