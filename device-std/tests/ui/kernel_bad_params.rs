// Parameter types without a layout the host can build are refused.
use device_std::kernel;

#[kernel]
pub fn takes_vec(v: Vec<u32>) {}

#[kernel]
pub fn takes_string(s: String) {}

#[kernel]
pub fn takes_ref(r: &u32) {}

#[kernel]
pub fn takes_tuple(t: (u32, f32)) {}

#[kernel]
pub fn takes_bool(b: bool) {}

#[derive(Clone, Copy)]
#[repr(C)]
pub struct NotDerived {
    pub a: u32,
}

#[kernel]
pub fn takes_plain_struct(s: NotDerived) {}

// A pointee needs a value class for the ABI record.
#[kernel]
pub unsafe fn takes_ptr_to_unclassed(p: *const NotDerived) {}

fn main() {}
