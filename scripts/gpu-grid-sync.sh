#!/usr/bin/env bash
# Cooperative launch and grid-wide sync on a GPU (issue 29, part 3): examples/grid_sync's
# host runs the one-launch reduction as a cooperative launch on as many blocks as are
# resident, checks the exact sum at 2^24 and at a ragged small size, shows a grid one
# block too large refused, and times it; compute-sanitizer memcheck at reduced size; the
# nvcc-built cooperative-groups twin (examples/grid_sync/grid_sync.cu) checked and timed
# beside it, three rounds.
#
# Here (build machine, from the repo root):
#   bash scripts/gpu-grid-sync.sh --stage            # builds and fills .gpu/grid_sync/
# On the GPU machine (from the repo root; nvcc on PATH, or NVCC=...):
#   bash scripts/gpu-grid-sync.sh .gpu/grid_sync LOG_DIR
set -uo pipefail

if [ "${1:-}" = "--stage" ]; then
  set -e
  cd "$(dirname "$0")/.."
  cargo xtask build-ptx -p grid_sync-kernels --out-dir target/ptx
  cargo build --release --quiet -p grid_sync-host
  rm -rf .gpu/grid_sync && mkdir -p .gpu/grid_sync
  cp target/release/grid_sync-host target/ptx/grid_sync-kernels.ptx .gpu/grid_sync/
  echo "staged: $(du -sh .gpu/grid_sync | cut -f1) in .gpu/grid_sync/"
  exit 0
fi

dir=${1:?usage: gpu-grid-sync.sh STAGED_DIR LOG_DIR (or --stage)}
logs=${2:?usage: gpu-grid-sync.sh STAGED_DIR LOG_DIR}
mkdir -p "$logs"
host=("$dir/grid_sync-host" --ptx "$dir/grid_sync-kernels.ptx")
fail=0
check() { # NAME LOG COMMAND...: runs it into LOG, prints PASS/FAIL NAME
  local name=$1 log=$2; shift 2
  if "$@" > "$logs/$log" 2>&1; then echo "PASS $name"; else echo "FAIL $name (see $logs/$log)"; tail -5 "$logs/$log"; fail=1; fi
}
check "grid_sync n=2^24" full.log "${host[@]}" --seed 1
check "grid_sync n=777" small.log "${host[@]}" --n 777 --seed 2
check "memcheck n=100000" memcheck.log compute-sanitizer --tool memcheck --error-exitcode 99 "${host[@]}" --n 100000 --seed 3
check "nvcc twin build" nvcc.log "${NVCC:-nvcc}" -O3 -arch=sm_90 -o "$logs/grid_sync-nvcc" examples/grid_sync/grid_sync.cu
check "nvcc twin" twin.log "$logs/grid_sync-nvcc"
grep -h "PASS\|refused" "$logs/full.log"
grep -h "ERROR SUMMARY" "$logs/memcheck.log"
for r in 1 2 3; do
  "${host[@]}" --seed "$r" | grep '^TIME'
  [ -x "$logs/grid_sync-nvcc" ] && "$logs/grid_sync-nvcc" | grep '^TIME'
done
rm -f "$logs/grid_sync-nvcc"
[ "$fail" = 0 ] && echo "gpu-grid-sync: all PASS" || echo "gpu-grid-sync: FAILED"
exit "$fail"
