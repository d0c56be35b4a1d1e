//! A kernel ABI record declared far longer than any record can be
//! (`.b8 __kernel_abi_k[17179869184]`) is refused from its declaration, before its bytes
//! are asked for: `ptx_linker::global_initializer` zero-pads an initializer up to the
//! declared length, which here would be 16 GiB. No GPU.
//!
//! This test binary's allocator refuses any single allocation above 256 MiB (the process
//! aborts with "memory allocation of N bytes failed"), so a regression fails at once
//! instead of paging 16 GiB in.

use std::alloc::{GlobalAlloc, Layout, System};

use host_loader::{AbiRecordError, AbiRecordProblem, Error, Signatures};

/// The system allocator, refusing single allocations above [`CAP`].
struct Capped;

const CAP: usize = 256 << 20;

// SAFETY: forwards to `System`, or returns null (allocation failure) above the cap.
unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > CAP {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() > CAP {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > CAP {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Capped = Capped;

const FIXTURE: &str = include_str!("data/fixture.ptx");
const FIXTURE_MAP: &str = include_str!("data/fixture.map.json");
const NAME: &str = "tests/data/fixture.ptx";

/// A module with one kernel `k(u32)` whose record is declared `decl` (e.g. `[16]`), holding
/// the words of `k`'s real record as its initializer unless `init` is false.
fn declared_record_module(decl: &str, init: bool) -> String {
    let words = [0x4B41_4249u32, 2, 1, 1, 4, 4, 4, 1, 0];
    let bytes: Vec<String> = words
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .map(|b| b.to_string())
        .collect();
    let init = if init {
        format!(" = {{{}}}", bytes.join(", "))
    } else {
        String::new()
    };
    format!(
        ".version 7.8\n.target sm_90\n.address_size 64\n\n\
         .visible .global .align 4 .b8 __kernel_abi_k{decl}{init};\n\n\
         .visible .entry k(\n\t.param .u32 k_param_0\n)\n{{\n\tret;\n}}\n"
    )
}

#[test]
fn huge_declared_record_is_refused_before_its_bytes_are_read() {
    // The reviewer's repro: 16 GiB declared, 36 bytes initialized. Padding the initializer
    // to the declared length would allocate 16 GiB; the declaration alone refuses it.
    let text = declared_record_module("[17179869184]", true);
    let started = std::time::Instant::now();
    let sigs = Signatures::parse("huge.ptx", &text).unwrap();
    let e = sigs.check::<(u32,)>("k").unwrap_err();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        e.to_string(),
        "huge.ptx: the ABI record of kernel `k` (`__kernel_abi_k`) is malformed: the record is \
         17179869184 bytes long, more than the 1179516 bytes any kernel's record can take \
         (3 words, plus at most 9 per byte of the 32764 bytes of parameters a kernel can \
         take); it was not written by `#[kernel]` and is refused unread"
    );
    assert!(
        matches!(
            &e,
            Error::AbiRecord {
                module,
                kernel,
                problem: AbiRecordProblem::Malformed(AbiRecordError::TooLong { len: 17179869184 }),
            } if module == "huge.ptx" && kernel == "k"
        ),
        "{e:?}"
    );
    assert!(matches!(
        sigs.record("k").unwrap_err(),
        Error::AbiRecord { .. }
    ));

    // Without an initializer (all zeros, `vec![0; declared]`), with a declared size that
    // overflows `u64` (saturated), just past the bound, and through a link map: the same
    // refusal.
    for (decl, init, len) in [
        ("[17179869184]", false, 17179869184),
        ("[4294967296][4294967296]", true, u64::MAX),
        ("[1179520]", true, 1179520),
    ] {
        let text = declared_record_module(decl, init);
        let sigs = match Signatures::parse("huge.ptx", &text) {
            Ok(sigs) => sigs,
            // A ptx-linker that refuses a declaration whose size overflows 64 bits
            // refuses the module first; that is a refusal too.
            Err(Error::Parse(_)) if len == u64::MAX => continue,
            Err(e) => panic!("{decl}: {e}"),
        };
        let e = sigs.check::<(u32,)>("k").unwrap_err();
        assert!(
            matches!(
                &e,
                Error::AbiRecord {
                    problem: AbiRecordProblem::Malformed(AbiRecordError::TooLong { len: l }),
                    ..
                } if *l == len
            ),
            "{decl}: {e:?}"
        );
    }
    let map: ptx_linker::LinkMap = serde_json::from_str(FIXTURE_MAP).unwrap();
    let huge = FIXTURE.replace(
        "__kernel_abi_empty[12] = {73, 66, 65, 75, 2}",
        "__kernel_abi_empty[17179869184] = {73, 66, 65, 75, 2}",
    );
    assert_ne!(huge, FIXTURE);
    let e = Signatures::from_link_map(NAME, &map, &huge)
        .unwrap()
        .check::<()>("empty")
        .unwrap_err();
    assert!(
        e.to_string().starts_with(
            "tests/data/fixture.ptx: the ABI record of kernel `empty` (`__kernel_abi_empty`) is \
             malformed: the record is 17179869184 bytes long, more than the 1179516 bytes"
        ),
        "{e}"
    );

    // Up to the bound, the zero padding is read and accepted.
    let text = declared_record_module("[1179516]", true);
    let sigs = Signatures::parse("edge.ptx", &text).unwrap();
    sigs.check::<(u32,)>("k").unwrap();
    assert_eq!(sigs.record("k").unwrap().unwrap().params.len(), 1);
    assert!(sigs.check::<(i32,)>("k").is_err());
}
