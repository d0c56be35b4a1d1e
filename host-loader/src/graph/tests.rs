//! Tests of the graph module that need no GPU: lowering, tokens, aliasing, messages.

use cudarc::driver::{sys, DriverError};

use super::capture::{capture_failed, node_type_name};
use super::error::{capture_cause, GraphError};
use super::exec::update_result;
use super::params::{check_aliasing, Access, GraphParam, GraphSignature};
use super::tokens::{Binding, BindingTable, Buf, BufMut};
use crate::error::Error;
use crate::param::{Ptr, PtrMut, RawSlice, Slice, SliceMut};

fn table(bindings: &[(u64, u64, bool)]) -> BindingTable {
    BindingTable {
        graph: 7,
        bindings: bindings
            .iter()
            .map(|&(ptr, len, writable)| Binding {
                ptr,
                len,
                bytes: len * 4,
                writable,
            })
            .collect(),
    }
}

#[test]
fn lowering_builds_the_launch_bytes() {
    let t = table(&[(0x1000, 16, false), (0x2000, 8, true)]);
    let a = Buf::<f32>::new(7, 0);
    let c = BufMut::<f32>::new(7, 1);
    let (raw, acc) = <Slice<f32> as GraphParam>::lower_graph(a, &t).unwrap();
    assert_eq!(
        raw,
        RawSlice {
            ptr: 0x1000,
            len: 16
        }
    );
    let acc = acc.unwrap();
    assert_eq!((acc.start, acc.end, acc.writable), (0x1000, 0x1040, false));
    let (raw, acc) = <SliceMut<f32> as GraphParam>::lower_graph(c, &t).unwrap();
    assert_eq!(
        raw,
        RawSlice {
            ptr: 0x2000,
            len: 8
        }
    );
    assert!(acc.unwrap().writable);
    let (p, _) = <PtrMut<f32> as GraphParam>::lower_graph(c, &t).unwrap();
    assert_eq!(p, 0x2000);
    let (p, _) = <Ptr<f32> as GraphParam>::lower_graph(c.read(), &t).unwrap();
    assert_eq!(p, 0x2000);
    assert_eq!(
        <u32 as GraphParam>::lower_graph(5, &t).unwrap().0,
        5,
        "scalars pass by value"
    );
}

#[test]
fn params_point_at_the_lowered_bytes() {
    let t = table(&[(0x1000, 16, false), (0x2000, 16, true)]);
    let args = (
        Buf::<f32>::new(7, 0),
        Buf::new(7, 0),
        BufMut::new(7, 1),
        9u32,
    );
    let seen = <(Slice<f32>, Slice<f32>, SliceMut<f32>, u32) as GraphSignature>::with_params(
        args,
        &t,
        "k",
        0,
        |params| {
            assert_eq!(params.len(), 4);
            // SAFETY: the slots are the lowered `RawSlice`s and the `u32`, alive
            // during the callback.
            unsafe {
                (
                    *(params[0] as *const RawSlice),
                    *(params[2] as *const RawSlice),
                    *(params[3] as *const u32),
                )
            }
        },
    )
    .unwrap();
    assert_eq!(
        seen.0,
        RawSlice {
            ptr: 0x1000,
            len: 16
        }
    );
    assert_eq!(
        seen.1,
        RawSlice {
            ptr: 0x2000,
            len: 16
        }
    );
    assert_eq!(seen.2, 9);
    // The empty signature lowers to no parameters.
    let n = <() as GraphSignature>::with_params((), &t, "empty", 0, |p| p.len()).unwrap();
    assert_eq!(n, 0);
}

#[test]
fn foreign_tokens_are_refused() {
    let t = table(&[(0x1000, 16, false)]);
    let e = <Slice<f32> as GraphParam>::lower_graph(Buf::new(8, 0), &t).unwrap_err();
    assert_eq!(
        e.to_string(),
        "buffer belongs to graph or sequence #8, not to this one (#7): tokens and nodes \
         are only valid in the capture or sequence that made them"
    );
}

#[test]
fn a_writable_buffer_may_not_alias_another_argument() {
    let t = table(&[(0x1000, 16, false), (0x2000, 16, true), (0x1020, 4, false)]);
    let sig = |a, b, c| {
        <(Slice<f32>, Slice<f32>, SliceMut<f32>) as GraphSignature>::with_params(
            (a, b, c),
            &t,
            "vecadd",
            0,
            |_| (),
        )
    };
    let (a, c) = (Buf::<f32>::new(7, 0), BufMut::<f32>::new(7, 1));
    // Reading one buffer twice is fine; reading the written one is not.
    sig(a, a, c).unwrap();
    let e = sig(c.read(), a, c).unwrap_err();
    assert!(matches!(
        e,
        Error::Graph(GraphError::Aliased {
            first: 0,
            second: 2,
            ..
        })
    ));
    assert!(e.to_string().starts_with(
        "kernel `vecadd`: parameters 0 and 2 name overlapping device memory and at least \
         one is writable"
    ));
    // Overlapping ranges of read-only registrations are fine.
    sig(a, Buf::new(7, 2), c).unwrap();
    // Empty ranges overlap nothing.
    check_aliasing(
        "k",
        &[
            Some(Access {
                start: 5,
                end: 5,
                writable: true,
            }),
            Some(Access {
                start: 0,
                end: 10,
                writable: true,
            }),
        ],
    )
    .unwrap();
}

#[test]
fn capture_failures_name_their_cause() {
    use sys::CUresult as R;
    let e = capture_failed(
        "cuStreamEndCapture",
        DriverError(R::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED),
        Some(DriverError(R::CUDA_ERROR_STREAM_CAPTURE_ISOLATION)),
    );
    let msg = e.to_string();
    assert!(
        msg.starts_with("graph capture failed: cuStreamEndCapture: "),
        "{msg}"
    );
    assert!(msg.contains("invalidated the whole capture"), "{msg}");
    assert!(
        msg.contains("cudarc also recorded, without returning it"),
        "{msg}"
    );
    for code in [
        R::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
        R::CUDA_ERROR_STREAM_CAPTURE_MERGE,
        R::CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
        R::CUDA_ERROR_STREAM_CAPTURE_UNJOINED,
        R::CUDA_ERROR_STREAM_CAPTURE_ISOLATION,
        R::CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
        R::CUDA_ERROR_CAPTURED_EVENT,
        R::CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD,
    ] {
        assert_ne!(
            capture_cause(code),
            capture_cause(R::CUDA_ERROR_UNKNOWN),
            "{code:?}"
        );
    }
    assert_eq!(
        GraphError::LegacyStream.to_string(),
        "the legacy default stream cannot be captured (cuStreamBeginCapture refuses it); \
         capture on a stream made with CudaContext::new_stream() or CudaStream::fork()"
    );
    let foreign = GraphError::ForeignNodes {
        kinds: vec!["kernel".into(), "mem free".into()],
    };
    assert!(foreign.to_string().starts_with(
        "the captured graph has 2 nodes not made through the Recorder (kernel, mem free)"
    ));
}

#[test]
fn update_results_are_named() {
    for code in 1..=8 {
        assert!(update_result(code)
            .0
            .starts_with("CU_GRAPH_EXEC_UPDATE_ERROR"));
    }
    assert_eq!(update_result(99).0, "unknown CUgraphExecUpdateResult");
    assert_eq!(node_type_name(11), "mem free");
    assert_eq!(node_type_name(0), "kernel");
}

#[test]
fn tokens_are_small_copy_values() {
    assert_eq!(std::mem::size_of::<Buf<f64>>(), 16);
    let c = BufMut::<u8>::new(3, 4);
    let r: Buf<u8> = c.into();
    assert_eq!((r.graph, r.index), (3, 4));
    assert_eq!(format!("{c:?}"), "BufMut<u8>(graph #3, buffer 4)");
}

#[test]
fn slice_align_refuses_a_misaligned_slice_in_a_graph_or_sequence() {
    // Buffer 1 starts 4 bytes past a 16-byte boundary; buffer 3 is empty there.
    let t = table(&[
        (0x1000, 16, false),
        (0x2004, 8, false),
        (0x3000, 8, true),
        (0x4004, 0, false),
    ]);
    let sig = |a, b, c, align| {
        <(Slice<f32>, Slice<f32>, SliceMut<f32>) as GraphSignature>::with_params(
            (a, b, c),
            &t,
            "vecadd",
            align,
            |p| p.len(),
        )
    };
    let (a, b, c) = (
        Buf::<f32>::new(7, 0),
        Buf::<f32>::new(7, 1),
        BufMut::<f32>::new(7, 2),
    );
    assert_eq!(sig(a, a, c, 16).unwrap(), 3);
    assert_eq!(
        sig(a, b, c, 4).unwrap(),
        3,
        "4-byte aligned is enough for 4"
    );
    assert_eq!(sig(a, b, c, 0).unwrap(), 3, "no declaration, no check");
    let e = sig(a, b, c, 16).unwrap_err().to_string();
    assert!(e.contains("invalid launch of `vecadd`"), "{e}");
    assert!(
        e.contains("parameter 1 (counting from 0), a slice, starts at device address 0x2004"),
        "{e}"
    );
    // An empty slice is passed at an aligned address, wherever its buffer starts.
    let empty = Buf::<f32>::new(7, 3);
    assert_eq!(sig(a, empty, c, 16).unwrap(), 3);
}
