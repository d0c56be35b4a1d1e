#!/usr/bin/env bash
# Module variables on a GPU (issue 29, parts 1 and 2): examples/module_vars' host checks
# the constant-memory filter, the same filter with its taps in a global buffer and the
# device counters against the CPU, and the type refusals; compute-sanitizer memcheck and
# racecheck on it at reduced size; the nvcc-built twin (examples/module_vars/module_vars.cu,
# __constant__ taps and global taps) checked and timed beside it, three rounds.
#
# Here (build machine, from the repo root):
#   bash scripts/gpu-module-vars.sh --stage          # builds and fills .gpu/module_vars/
# On the GPU machine (from the repo root; nvcc on PATH, or NVCC=...):
#   bash scripts/gpu-module-vars.sh .gpu/module_vars LOG_DIR
# Prints PASS/FAIL lines and the timings; exits non-zero on any failure.
set -uo pipefail

if [ "${1:-}" = "--stage" ]; then
  set -e
  cd "$(dirname "$0")/.."
  cargo xtask build-ptx -p module_vars-kernels --out-dir target/ptx
  cargo build --release --quiet -p module_vars-host
  rm -rf .gpu/module_vars && mkdir -p .gpu/module_vars
  cp target/release/module_vars-host target/ptx/module_vars-kernels.ptx .gpu/module_vars/
  echo "staged: $(du -sh .gpu/module_vars | cut -f1) in .gpu/module_vars/"
  exit 0
fi

dir=${1:?usage: gpu-module-vars.sh STAGED_DIR LOG_DIR (or --stage)}
logs=${2:?usage: gpu-module-vars.sh STAGED_DIR LOG_DIR}
mkdir -p "$logs"
host=("$dir/module_vars-host" --ptx "$dir/module_vars-kernels.ptx")
fail=0
check() { # NAME LOG COMMAND...: runs it into LOG, prints PASS/FAIL NAME
  local name=$1 log=$2; shift 2
  if "$@" > "$logs/$log" 2>&1; then echo "PASS $name"; else echo "FAIL $name (see $logs/$log)"; fail=1; fi
}
check "module_vars n=2^24" full.log "${host[@]}" --seed 1
check "module_vars n=1000 (partial block)" small.log "${host[@]}" --n 1000 --seed 2
check "memcheck n=100000" memcheck.log compute-sanitizer --tool memcheck --error-exitcode 99 "${host[@]}" --n 100000 --seed 3
check "racecheck n=10000" racecheck.log compute-sanitizer --tool racecheck --error-exitcode 99 "${host[@]}" --n 10000 --seed 5
check "nvcc twin build" nvcc.log "${NVCC:-nvcc}" -O3 -arch=sm_90 -o "$logs/module_vars-nvcc" examples/module_vars/module_vars.cu
check "nvcc twin" twin.log "$logs/module_vars-nvcc"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$logs"/memcheck.log "$logs"/racecheck.log
for r in 1 2 3; do
  "${host[@]}" --seed "$r" | grep '^timing'
  [ -x "$logs/module_vars-nvcc" ] && "$logs/module_vars-nvcc" | grep '^TIME'
done
[ "$fail" = 0 ] && echo "gpu-module-vars: all PASS" || echo "gpu-module-vars: FAILED"
exit "$fail"
