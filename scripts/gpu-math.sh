#!/usr/bin/env bash
# GPU machine, repository root: builds the math harness (benches/math/reference.cu) with
# nvcc, logs ptxas -v of our PTX and of nvcc's kernels (registers.txt, with a side-by-side
# table of the thr_ kernels), runs compute-sanitizer memcheck on --quick, then the full
# run (accuracy, throughput, identity hashes). PASS/FAIL lines, then a summary; exit 1 on
# any failure. Writes LOG_DIR/gpu-hashes.txt, the file benches/math/gpu-hashes.txt takes.
# Usage: scripts/gpu-math.sh STAGED_DIR LOG_DIR [HARNESS OPTIONS]
#   STAGED_DIR from scripts/stage-math.sh (.gpu/math); options go to the full run
#   (e.g. --only sinf, --pairs 2^30; see the header of reference.cu).
set -uo pipefail
export LC_ALL=C  # sort and join agree on the order
staged=${1:?STAGED_DIR}; logs=${2:?LOG_DIR}; shift 2
mkdir -p "$logs"
ptx="$staged/math-bench-kernels.ptx"
bin="$logs/math-bench"
fail=0
pass() { echo "PASS $*"; }
failed() { echo "FAIL $*"; fail=1; }

if nvcc -O3 -arch=sm_90 -Xptxas -v -o "$bin" benches/math/reference.cu -lcuda > "$logs/nvcc.txt" 2>&1; then
  pass "nvcc build"
else
  tail -30 "$logs/nvcc.txt"
  echo "FAIL nvcc build"
  exit 1
fi

# Registers: ours (ptxas -v of the PTX) against nvcc's (its -Xptxas -v above).
{
  echo "== ptxas -arch=sm_90 -v $(basename "$ptx")"
  ptxas -arch=sm_90 -v "$ptx" -o /dev/null 2>&1
} > "$logs/ptxas-ours.txt" && pass "ptxas our PTX" || failed "ptxas our PTX (see $logs/ptxas-ours.txt)"
# 'Function properties for NAME' starts a function's stack/spill and register lines.
props='/Compiling entry function/ { split($0, q, "\x27"); cur = q[2] }
       /Function properties for/ { cur = $NF }
       /bytes stack frame/ { stack[cur] = $1; spill[cur] = $5 }
       /Used [0-9]+ registers/ { for (i = 1; i < NF; i++) if ($(i + 1) ~ /^registers/) regs[cur] = $i }'
awk "$props"'
  END { for (k in regs) printf "%s %s %s %s\n", k, regs[k], stack[k] + 0, spill[k] + 0 }' "$logs/ptxas-ours.txt" | sort > "$logs/regs-ours.txt"
awk "$props"'
  END { for (k in regs) printf "%s %s %s %s\n", k, regs[k], stack[k] + 0, spill[k] + 0 }' "$logs/nvcc.txt" | sort > "$logs/regs-nvcc.txt"
{
  echo "thr_ kernels: registers, stack bytes, spill-store bytes (ours | nvcc's twin)"
  join "$logs/regs-ours.txt" "$logs/regs-nvcc.txt" | awk '$1 ~ /^thr_/ {
    printf "%-16s ours %3d regs %5d stack %5d spill | nvcc %3d regs %5d stack %5d spill\n", $1, $2, $3, $4, $5, $6, $7 }'
  echo
  cat "$logs/ptxas-ours.txt"
  echo "== nvcc -Xptxas -v (twins thr_*, error kernels err_*, generators)"
  grep -v '^$' "$logs/nvcc.txt"
} > "$logs/registers.txt"

# memcheck on small counts (exit 2 only means a function is missing or out of bound).
timeout 300 compute-sanitizer --tool memcheck --error-exitcode 99 "$bin" --ptx "$ptx" --quick \
  > "$logs/sanitizer.txt" 2>&1
rc=$?
summary=$(grep "ERROR SUMMARY" "$logs/sanitizer.txt" | tail -1)
if [ "$rc" -le 2 ] && [ "$rc" -ne 1 ] && [[ "$summary" == *" 0 errors"* ]]; then
  pass "memcheck --quick ($summary)"
else
  tail -30 "$logs/sanitizer.txt"
  failed "memcheck --quick (exit $rc; ${summary:-no summary}; see $logs/sanitizer.txt)"
fi

# The full run.
timeout 540 "$bin" --ptx "$ptx" "$@" 2>&1 | tee "$logs/math.txt"
rc=${PIPESTATUS[0]}
case $rc in
  0) pass "math-bench" ;;
  2) failed "math-bench: a function out of bound, missing, or an output unwritten (see above)" ;;
  124) failed "math-bench: timed out" ;;
  *) failed "math-bench exit $rc" ;;
esac
{
  echo "# Emulator-identity hashes of device_std::math, recorded on the GPU by scripts/gpu-math.sh"
  echo "# ($(grep -m1 '^math-bench:' "$logs/math.txt" | cut -d, -f1 | cut -d' ' -f2-), $(date -u +%Y-%m-%d))."
  echo "# benches/math/kernels/tests/identity.rs checks the host against these."
  grep '^hash ' "$logs/math.txt"
} > "$logs/gpu-hashes.txt"

echo
echo "== summary"
grep -h '^\(PASS\|FAIL\)' "$logs/math.txt" || true
grep -h '^math bars:' "$logs/math.txt" || echo "math bars: no summary (the run did not finish)"
[ "$fail" = 0 ] && echo "gpu-math: all PASS" || echo "gpu-math: FAILED"
exit $fail
