#!/usr/bin/env bash
# device-std on a GPU: every example at full size, the intrinsics suite, and
# compute-sanitizer (memcheck on every example; racecheck and synccheck on
# the shared-memory ones, at reduced size).
#
# Here (build machine, from the repo root):
#   bash scripts/gpu-device-std.sh --stage        # builds and fills .gpu/device-std/
# On the GPU machine (from the repo root; no Rust needed):
#   bash scripts/gpu-device-std.sh .gpu/device-std LOG_DIR
#
# Prints a summary table last; full logs go to LOG_DIR; exits non-zero on any failure.
set -uo pipefail

EXAMPLES=(vecadd block_sum linked_math transpose histogram softmax warp_reduce intrinsics)
SHARED_MEMORY_EXAMPLES=(transpose histogram softmax block_sum intrinsics)

if [ "${1:-}" = "--stage" ]; then
  set -e
  cd "$(dirname "$0")/.."
  cargo xtask build-ptx --out-dir target/ptx
  pkgs=(); for ex in "${EXAMPLES[@]}"; do pkgs+=(-p "$ex-host"); done
  cargo build --release --quiet "${pkgs[@]}"
  rm -rf .gpu/device-std && mkdir -p .gpu/device-std/ptx
  for ex in "${EXAMPLES[@]}"; do
    cp "target/release/$ex-host" .gpu/device-std/
    cp "target/ptx/$ex-kernels.ptx" "target/ptx/$ex-kernels.map.json" .gpu/device-std/ptx/
  done
  # The intrinsics kernels again with core's panic path, for the panic demo.
  cargo xtask build-ptx --panic abort -p intrinsics-kernels --out-dir target/ptx-abort
  mkdir -p .gpu/device-std/ptx-abort
  cp target/ptx-abort/intrinsics-kernels.ptx .gpu/device-std/ptx-abort/
  echo "staged: $(du -sh .gpu/device-std | cut -f1) in .gpu/device-std/"
  exit 0
fi

bin=${1:?usage: gpu-device-std.sh STAGED_DIR LOG_DIR (or --stage)}
logs=${2:?usage: gpu-device-std.sh STAGED_DIR LOG_DIR}
mkdir -p "$logs"
: >"$logs/run.log"; : >"$logs/sanitizer.log"; : >"$logs/panic.log"
summary=()
fail=0

# run NAME LOG COMMAND...: records ok/FAIL with the wall time.
run() {
  local name=$1 log=$2; shift 2
  local start end rc
  start=$(date +%s.%N)
  echo "=== $name: $*" >>"$logs/$log"
  timeout 120 "$@" >>"$logs/$log" 2>&1; rc=$?
  end=$(date +%s.%N)
  local secs; secs=$(awk "BEGIN{printf \"%.1f\", $end-$start}")
  if [ $rc -eq 0 ]; then
    summary+=("ok    ${secs}s  $name")
  else
    summary+=("FAIL  ${secs}s  $name (exit $rc, see $log)")
    fail=1
  fi
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$logs/gpu.txt" 2>&1

for ex in "${EXAMPLES[@]}"; do
  ptx="$bin/ptx/$ex-kernels.ptx"
  run "$ex n=2^24" run.log "$bin/$ex-host" --n 16777216 --seed 1 --ptx "$ptx"
  if [ "$ex" != intrinsics ]; then
    run "$ex n=2^24+77 seed 7" run.log "$bin/$ex-host" --n 16777293 --seed 7 --ptx "$ptx"
  else
    run "$ex seed 7" run.log "$bin/$ex-host" --seed 7 --ptx "$ptx"
  fi
done

# expect NAME LOG PATTERN: the log holds a line matching PATTERN.
expect() {
  if grep -qE "$3" "$logs/$2"; then summary+=("ok          $1"); else summary+=("FAIL        $1 (no '$3' in $2)"); fail=1; fi
}
# device_println!: each of the 3 blocks of `hello` prints one line.
for b in 0 1 2; do
  expect "device_println! block $b" run.log "^hello from block $b of 3, tag 42$"
done
# A panic in a --panic abort build prints its message and location, then traps.
run "panic demo (--panic abort build)" panic.log "$bin/intrinsics-host" --panic-demo --ptx "$bin/ptx-abort/intrinsics-kernels.ptx"
expect "panic message printed" panic.log "panicked at .*lib.rs:[0-9]+:[0-9]+: tag 13 is refused"
# An index past a SharedArray's end names the index, the length and the kernel's line,
# in the default build too (issue 31, point 4).
run "oob demo (default build)" oob.log "$bin/intrinsics-host" --oob-demo --ptx "$bin/ptx/intrinsics-kernels.ptx"
expect "out-of-bounds message printed" oob.log "SharedArray index 64 out of bounds for length 64 at .*lib.rs:[0-9]+:[0-9]+"

for ex in "${EXAMPLES[@]}"; do
  run "$ex memcheck n=2^20" sanitizer.log compute-sanitizer --tool memcheck --error-exitcode 99 \
    "$bin/$ex-host" --n 1048576 --seed 3 --ptx "$bin/ptx/$ex-kernels.ptx"
done
for ex in "${SHARED_MEMORY_EXAMPLES[@]}"; do
  for tool in racecheck synccheck; do
    run "$ex $tool n=2^18" sanitizer.log compute-sanitizer --tool $tool --error-exitcode 99 \
      "$bin/$ex-host" --n 262144 --seed 5 --ptx "$bin/ptx/$ex-kernels.ptx"
  done
done

echo
echo "---- results (PASS/FAIL lines of the programs) ----"
grep -E "^(PASS|FAIL)" "$logs/run.log" | sort | uniq -c | sort -rn | sed 's/^ *//' | cut -c1-160
echo "---- sanitizer summaries ----"
grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$logs/sanitizer.log" | sort | uniq -c
echo "---- commands ----"
printf '%s\n' "${summary[@]}"
if [ $fail -eq 0 ]; then echo "ALL OK"; else echo "SOME FAILED"; fi
exit $fail
