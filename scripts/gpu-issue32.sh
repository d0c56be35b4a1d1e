#!/usr/bin/env bash
# Issue 32's table from one run: the BF16 GEMMs at 4096³ and 8192³ and on the sweep of
# shapes, the FP8 GEMM, fused attention and the cluster softmax, each interleaved with
# its reference (cuBLAS, cuBLASLt, the best non-cluster softmax) in one gpu-bench call;
# then ptxas -v of the GEMM and attention modules and compute-sanitizer on the quick sizes.
# Usage: scripts/gpu-issue32.sh STAGED_DIR LOG_DIR   (STAGED_DIR from scripts/stage-bench.sh)
set -uo pipefail
bin=${1:?STAGED_DIR}; logs=${2:?LOG_DIR}
mkdir -p "$logs"
fail=0
nvcc -O3 -arch=sm_90 -ptx benches/gpu/reference.cu -o "$logs/reference.ptx" || exit 1
bench=("$bin/gpu-bench" --rust-ptx "$bin/bench-kernels.ptx" --gemm-ptx "$bin/mma_gemm-kernels.ptx"
  --attention-ptx "$bin/attention-kernels.ptx" --ref-ptx "$logs/reference.ptx"
  --only gemm_bf16,gemm_fp8,gemm_sweep,attention,softmax_wide)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$logs/gpu.txt"
"${bench[@]}" --runs 21 > "$logs/table.txt" 2>&1 || { echo "FAIL table"; fail=1; }
for ptx in mma_gemm-kernels attention-kernels; do
  echo "== ptxas -v $ptx.ptx (sm_90a)" >> "$logs/ptxas-v.txt"
  ptxas -arch=sm_90a -v "$bin/$ptx.ptx" -o /dev/null >> "$logs/ptxas-v.txt" 2>&1 || fail=1
done
for tool in memcheck racecheck synccheck; do
  compute-sanitizer --tool $tool --error-exitcode 99 "${bench[@]}" --quick >> "$logs/sanitizer.txt" 2>&1 || { echo "FAIL $tool"; fail=1; }
done
grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$logs/sanitizer.txt"
grep -vE "^\s*$" "$logs/table.txt"
exit $fail
