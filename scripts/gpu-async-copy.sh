#!/usr/bin/env bash
# Bulk asynchronous copies on a GPU (sm_90): the async_copy example at several sizes
# and block shapes, then compute-sanitizer memcheck, racecheck and synccheck on it.
#
# Here (build machine, from the repo root):
#   bash scripts/gpu-async-copy.sh --stage        # builds and fills .gpu/async-copy/
# On the GPU machine (from the repo root; no Rust needed):
#   bash scripts/gpu-async-copy.sh .gpu/async-copy LOG_DIR
set -uo pipefail

if [ "${1:-}" = "--stage" ]; then
  set -e
  cd "$(dirname "$0")/.."
  cargo xtask build-ptx -p async_copy-kernels
  cargo build --release --quiet -p async_copy-host
  rm -rf .gpu/async-copy && mkdir -p .gpu/async-copy
  cp target/release/async_copy-host target/ptx/async_copy-kernels.ptx .gpu/async-copy/
  echo "staged: $(du -sh .gpu/async-copy | cut -f1) in .gpu/async-copy/"
  exit 0
fi

bin=${1:?usage: gpu-async-copy.sh STAGED_DIR LOG_DIR (or --stage)}
logs=${2:?usage: gpu-async-copy.sh STAGED_DIR LOG_DIR}
mkdir -p "$logs"
fail=0
run() { "$bin/async_copy-host" --ptx "$bin/async_copy-kernels.ptx" "$@" >>"$logs/run.log" 2>&1 || { echo "FAIL async_copy $*"; fail=1; }; }
run --n $(( (1 << 24) + 7 )) --block 128 --seed 1
run --n $(( 1 << 24 )) --block 256 --seed 2
run --n 1027 --block 32 --seed 3
run --n 3 --block 64 --seed 4
for tool in memcheck racecheck synccheck; do
  compute-sanitizer --tool $tool --error-exitcode 99 "$bin/async_copy-host" --ptx "$bin/async_copy-kernels.ptx" --n 100003 --seed 5 >>"$logs/sanitizer.log" 2>&1 || { echo "FAIL $tool"; fail=1; }
done
grep -E "PASS|FAIL" "$logs/run.log"
grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$logs/sanitizer.log"
exit $fail
