#!/usr/bin/env bash
# A broad check in one device call of under ten minutes, for a session whose GPU time is
# scarce: the math harness (identity hashes, accuracy, speed), the gpu-bench cases of
# issue 32 (gemm_fp8, histogram_wide, attention) with their neighbours (gemm_bf16,
# saxpy, vecadd), the FP8 conversion bits and GEMMs (mma_gemm-host), the attention
# example, one node-bench seed, then memcheck on the three programs. Each step has its
# own timeout; the logs are tarred into $OUT/logs.tgz after every step, so a call cut
# short still returns what ran.
#
# Here (build machine, from the repo root; for the math of a branch, check it out first):
#   bash scripts/gpu-pending.sh --stage      # fills .gpu/{math,mma,attention,bench,graphs}
# On the GPU machine (carry those five folders):
#   bash scripts/gpu-pending.sh
#   SKIP=math,nodes bash scripts/gpu-pending.sh   # leave steps out (names as in step calls)
#   NCU=1 bash scripts/gpu-pending.sh             # also profile attention_d128 with ncu
set -uo pipefail

if [ "${1:-}" = "--stage" ]; then
  set -e
  cd "$(dirname "$0")/.."
  bash scripts/stage-math.sh
  bash scripts/gpu-mma.sh --stage
  bash scripts/gpu-attention.sh --stage
  bash scripts/stage-bench.sh
  bash scripts/gpu-graphs.sh --stage
  exit 0
fi

L=/tmp/pending
mkdir -p "$L"
B=.gpu/bench G=.gpu/graphs
out=${OUT:-$L}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$L/gpu.txt"
step() { # name, timeout (s), command...
  local name=$1 t=$2 t0
  shift 2
  if [[ ",${SKIP:-}," == *",$name,"* ]]; then echo "$name skipped" | tee -a "$L/summary.txt"; return; fi
  t0=$(date +%s)
  timeout "$t" "$@" >"$L/$name.out" 2>&1
  echo "$name rc=$? $(($(date +%s) - t0))s" | tee -a "$L/summary.txt"
  tar czf "$out/logs.tgz" -C /tmp pending
}
step math 180 bash scripts/gpu-math.sh .gpu/math "$L/math"
nvcc -O3 -arch=sm_90 -ptx benches/gpu/reference.cu -o "$L/reference.ptx" || echo "FAIL nvcc reference.cu"
A=(--rust-ptx $B/bench-kernels.ptx --gemm-ptx $B/mma_gemm-kernels.ptx
  --attention-ptx $B/attention-kernels.ptx --ref-ptx "$L/reference.ptx")
ONLY=gemm_fp8,histogram_wide,attention,saxpy,vecadd,gemm_bf16
step bench 100 $B/gpu-bench "${A[@]}" --only $ONLY
step mma 30 .gpu/mma/mma_gemm-host --ptx .gpu/mma/mma_gemm-kernels.ptx --wgmma --seed 1
step attention 30 .gpu/attention/attention-host --ptx .gpu/attention/attention-kernels.ptx --seed 1
nvcc -O3 -arch=sm_90 -ptx $G/cu/node_reference.cu -o "$L/node_reference.ptx"
ref=$L/node_reference.ptx bk=$G/bench-kernels.ptx
step nodes 30 $G/node-bench --seed 1 \
  --variant "nvcc vecadd (float4)=$ref:vecadd_ref:raw:4" \
  --variant "rust vecadd (float4)=$bk:vecadd:slices:4" \
  --variant "nvcc vecadd_each=$ref:vecadd_each_ref:raw:1" \
  --variant "rust vecadd_each=$bk:vecadd_each:slices:1"
S=(compute-sanitizer --tool memcheck --error-exitcode 99)
step memcheck-bench 50 "${S[@]}" $B/gpu-bench --quick "${A[@]}" --only $ONLY
step memcheck-mma 30 "${S[@]}" .gpu/mma/mma_gemm-host --ptx .gpu/mma/mma_gemm-kernels.ptx --wgmma --seed 3
step memcheck-attention 30 "${S[@]}" .gpu/attention/attention-host \
  --ptx .gpu/attention/attention-kernels.ptx --seed 3
if [ "${NCU:-0}" = 1 ]; then
  step ncu-attention 150 ncu --clock-control none -k regex:attention_d128 --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --section SchedulerStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
    $B/gpu-bench --quick "${A[@]}" --only attention
fi
cat "$L/summary.txt"
tail -12 "$L/math.out"
grep -hE "PASS|FAIL" "$L/mma.out" "$L/attention.out" | tail -20
tail -25 "$L/bench.out"
grep NODE "$L/nodes.out"
grep -h "ERROR SUMMARY" "$L"/memcheck-*.out
! grep -q "rc=[^0]" "$L/summary.txt"
