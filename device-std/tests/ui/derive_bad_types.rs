// Enums, generics and fields that are not plain data are refused.
#[derive(Clone, Copy, device_std::KernelStruct)]
#[repr(C)]
pub enum Mode {
    A,
    B,
}

#[derive(Clone, Copy, device_std::KernelStruct)]
#[repr(C)]
pub struct Generic<T: Copy + 'static> {
    pub x: T,
}

#[derive(Clone, Copy, device_std::KernelStruct)]
#[repr(C)]
pub struct HasBool {
    pub flag: bool,
    pub ptr: *const f32,
}

fn main() {}
