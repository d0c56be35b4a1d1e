#!/usr/bin/env bash
# Builds gpu-bench and the Rust benchmark kernels here and stages them in
# .gpu/bench/ (git-ignored) for scripts/gpu-bench.sh on a GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo xtask build-ptx -p bench-kernels
# The tensor-core GEMM case times examples/mma_gemm's gemm_wgmma, which needs sm_90a.
cargo xtask build-ptx -p mma_gemm-kernels --arch sm_90a
# The fused attention case (examples/attention).
cargo xtask build-ptx -p attention-kernels --arch sm_90a
cargo build --release --quiet -p gpu-bench
rm -rf .gpu/bench && mkdir -p .gpu/bench
cp target/release/gpu-bench target/ptx/bench-kernels.ptx target/ptx/mma_gemm-kernels.ptx target/ptx/attention-kernels.ptx .gpu/bench/
echo "staged .gpu/bench: $(du -sh .gpu/bench | cut -f1)"
