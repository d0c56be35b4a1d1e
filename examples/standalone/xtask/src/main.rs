//! `cargo xtask build-ptx | setup | test | ptxas-path` for this workspace.
fn main() {
    gpu_build::cli::main()
}
