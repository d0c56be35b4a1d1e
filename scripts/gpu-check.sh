#!/usr/bin/env bash
# Runs every example on a GPU machine: a full-size correctness run, a second
# seed, and compute-sanitizer (memcheck everywhere; racecheck and synccheck on
# the shared-memory kernel). Usage, from a folder holding the host binaries
# and ptx/<crate>.ptx (see scripts/stage-gpu.sh):
#   scripts/gpu-check.sh BIN_DIR LOG_DIR
set -uo pipefail
bin=${1:?BIN_DIR}; logs=${2:?LOG_DIR}
mkdir -p "$logs"
fail=0
run() { # name, log, command...
  local name=$1 log=$2; shift 2
  if "$@" >>"$logs/$log" 2>&1; then echo "ok   $name"; else echo "FAIL $name (exit $?)"; fail=1; fi
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$logs/gpu.txt"
for ex in vecadd block_sum linked_math; do
  ptx="$bin/ptx/$ex-kernels.ptx"
  run "$ex n=2^24" run.log "$bin/$ex-host" --n 16777216 --ptx "$ptx"
  run "$ex n=2^24+77 seed 7" run.log "$bin/$ex-host" --n 16777293 --seed 7 --ptx "$ptx"
  run "$ex memcheck" sanitizer.log compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/$ex-host" --n 1048576 --ptx "$ptx"
done
# The same kernels built with --panic abort (core's panic path linked in).
if [ -d "$bin/ptx-abort" ]; then
  for ex in vecadd block_sum linked_math; do
    run "$ex panic=abort build" run.log "$bin/$ex-host" --n 16777216 --ptx "$bin/ptx-abort/$ex-kernels.ptx"
  done
fi
for tool in racecheck synccheck; do
  run "block_sum $tool" sanitizer.log compute-sanitizer --tool $tool --error-exitcode 99 "$bin/block_sum-host" --n 1048576 --ptx "$bin/ptx/block_sum-kernels.ptx"
done
grep -E "^(PASS|FAIL|refused|total)" "$logs/run.log"
grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$logs/sanitizer.log"
exit $fail
