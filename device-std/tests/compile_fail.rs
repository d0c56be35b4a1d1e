//! Misuse that must not compile: forging, duplicating, sending or leaking a
//! `ThreadIndex`; indexing a slice of another space or stride; kernel
//! parameters without a stable layout; `KernelStruct` on types the host
//! cannot mirror. Runs on the host (stable), where the same types and trait
//! bounds exist. `TRYBUILD=overwrite` rewrites the expected messages.

#[test]
fn misuse_is_a_compile_error() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
