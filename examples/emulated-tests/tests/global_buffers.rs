//! Emulated global buffers live across launches, as device buffers do (issue 31,
//! point 6): one `GlobalMut` serves a loop of launches, one launch at a time.

use device_std::emulator::{self, GlobalMut, LaunchConfig};
use device_std::{kernel, thread, DisjointSlice};

/// `out[i] += i + 1`.
#[kernel]
pub fn accumulate(mut out: DisjointSlice<u32>) {
    let i = thread::index_1d();
    let k = i.get() as u32;
    if let Some(o) = out.get_mut(&i) {
        *o += k + 1;
    }
}

#[test]
fn one_handle_serves_a_loop_of_launches() {
    let n = 1000;
    let mut data = vec![0u32; n];
    {
        let out = GlobalMut::new(&mut data);
        for _ in 0..5 {
            emulator::launch(LaunchConfig::for_num_elems(n as u32, 128), || {
                accumulate(out.disjoint())
            })
            .unwrap();
        }
    }
    let want: Vec<u32> = (0..n as u32).map(|k| 5 * (k + 1)).collect();
    assert_eq!(data, want);
}

#[test]
fn a_second_slice_in_one_thread_is_still_refused() {
    let mut data = vec![0u32; 64];
    let out = GlobalMut::new(&mut data);
    let err = emulator::launch(LaunchConfig::for_num_elems(64, 64), || {
        let _a: DisjointSlice<u32> = out.disjoint();
        let _b: DisjointSlice<u32> = out.disjoint();
    })
    .unwrap_err();
    assert!(
        format!("{err}").contains("called twice by one thread"),
        "{err}"
    );
}
