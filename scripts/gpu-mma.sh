#!/usr/bin/env bash
# Tensor cores on a GPU (mma.sync, sm_80+; mma.sync fed by tensor copies, gemm_mma_tma,
# sm_90+; wgmma, sm_90a): the mma_gemm example (square
# and ragged sizes, two seeds) against an f64 CPU reference, then compute-sanitizer memcheck,
# racecheck and synccheck on it.
#
# Here (build machine, from the repo root):
#   bash scripts/gpu-mma.sh --stage        # builds and fills .gpu/mma/
# On the GPU machine (from the repo root; no Rust needed):
#   bash scripts/gpu-mma.sh .gpu/mma LOG_DIR
set -uo pipefail

if [ "${1:-}" = "--stage" ]; then
  set -e
  cd "$(dirname "$0")/.."
  # sm_90a: gemm_wgmma needs wgmma (the mma.sync kernels build for it too).
  cargo xtask build-ptx -p mma_gemm-kernels --arch sm_90a
  cargo build --release --quiet -p mma_gemm-host
  rm -rf .gpu/mma && mkdir -p .gpu/mma
  cp target/release/mma_gemm-host target/ptx/mma_gemm-kernels.ptx .gpu/mma/
  echo "staged: $(du -sh .gpu/mma | cut -f1) in .gpu/mma/"
  exit 0
fi

bin=${1:?usage: gpu-mma.sh STAGED_DIR LOG_DIR (or --stage)}
logs=${2:?usage: gpu-mma.sh STAGED_DIR LOG_DIR}
mkdir -p "$logs"
fail=0
run() { "$bin/mma_gemm-host" --ptx "$bin/mma_gemm-kernels.ptx" --wgmma "$@" >>"$logs/run.log" 2>&1 || { echo "FAIL mma_gemm $*"; fail=1; }; }
run --seed 1
run --seed 2
for tool in memcheck racecheck synccheck; do
  compute-sanitizer --tool $tool --error-exitcode 99 "$bin/mma_gemm-host" --ptx "$bin/mma_gemm-kernels.ptx" --wgmma --seed 3 >>"$logs/sanitizer.log" 2>&1 || { echo "FAIL $tool"; fail=1; }
done
grep -E "PASS|FAIL" "$logs/run.log"
grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$logs/sanitizer.log"
exit $fail
