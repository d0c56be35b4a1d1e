#!/usr/bin/env bash
# GPU machine: build the CUDA C++ references, run the whole benchmark suite
# (correctness first, then timing), ptxas -v for both sides, and
# compute-sanitizer (memcheck, racecheck, synccheck) on every kernel at
# reduced size.
# Usage: scripts/gpu-bench.sh STAGED_DIR LOG_DIR   (STAGED_DIR from scripts/stage-bench.sh)
set -uo pipefail
bin=${1:?STAGED_DIR}; logs=${2:?LOG_DIR}
mkdir -p "$logs"
src=benches/gpu
fail=0
nvcc -O3 -arch=sm_90 -ptx "$src/reference.cu" -o "$logs/reference.ptx" || fail=1
nvcc -O3 -arch=sm_90 "$src/vendor.cu" -o "$logs/vendor" || fail=1
"$logs/vendor" > "$logs/vendor.txt" || { echo "FAIL vendor (CUB)"; fail=1; }
for ptx in "$logs/reference.ptx" "$bin/bench-kernels.ptx" "$bin/attention-kernels.ptx"; do
  echo "== ptxas -v $(basename "$ptx")" >> "$logs/ptxas-v.txt"
  ptxas -arch=sm_90 -v "$ptx" -o /dev/null >> "$logs/ptxas-v.txt" 2>&1 || fail=1
done
echo "== ptxas -v mma_gemm-kernels.ptx (sm_90a)" >> "$logs/ptxas-v.txt"
ptxas -arch=sm_90a -v "$bin/mma_gemm-kernels.ptx" -o /dev/null >> "$logs/ptxas-v.txt" 2>&1 || fail=1
compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/gpu-bench" --quick --rust-ptx "$bin/bench-kernels.ptx" --gemm-ptx "$bin/mma_gemm-kernels.ptx" --attention-ptx "$bin/attention-kernels.ptx" --ref-ptx "$logs/reference.ptx" > "$logs/sanitizer.txt" 2>&1 || { echo "FAIL memcheck"; fail=1; }
for tool in racecheck synccheck; do
  compute-sanitizer --tool $tool --error-exitcode 99 "$bin/gpu-bench" --quick --rust-ptx "$bin/bench-kernels.ptx" --gemm-ptx "$bin/mma_gemm-kernels.ptx" --attention-ptx "$bin/attention-kernels.ptx" --ref-ptx "$logs/reference.ptx" >> "$logs/sanitizer.txt" 2>&1 || { echo "FAIL $tool"; fail=1; }
done
grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$logs/sanitizer.txt"
"$bin/gpu-bench" --rust-ptx "$bin/bench-kernels.ptx" --gemm-ptx "$bin/mma_gemm-kernels.ptx" --attention-ptx "$bin/attention-kernels.ptx" --ref-ptx "$logs/reference.ptx" --vendor "$logs/vendor.txt" 2>&1 | tee "$logs/bench.txt"
[ "${PIPESTATUS[0]}" = 0 ] || fail=1
exit $fail
