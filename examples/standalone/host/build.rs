//! Builds `../kernels` for the GPU (nightly, through rustup), links it with `devlib`,
//! validates it with ptxas when one is found, and writes the PTX, its link map and the
//! typed bindings into OUT_DIR.
fn main() {
    gpu_build::BuildScript::new("../kernels").run();
}
