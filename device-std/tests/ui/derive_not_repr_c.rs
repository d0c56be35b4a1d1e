// Without #[repr(C)] the field order is rustc's choice.
#[derive(Clone, Copy, device_std::KernelStruct)]
pub struct Params {
    pub n: u32,
    pub scale: f32,
}

fn main() {}
