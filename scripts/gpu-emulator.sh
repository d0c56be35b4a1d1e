#!/usr/bin/env bash
# device-std's CPU emulator against the GPU: `emulator-compare` runs vecadd,
# transpose, histogram, block_sum, warp_reduce and softmax on the H200 and
# under the emulator on the same random inputs (outputs poisoned first), and
# requires bit-identical results for all but softmax (approximate ex2 on the
# GPU: compared with a tolerance). Two sizes, two seeds. Under a minute.
#
# Here (build machine, from the repo root):
#   bash scripts/gpu-emulator.sh --stage        # builds and fills .gpu/emulator/
# On the GPU machine (from the repo root; no Rust needed):
#   bash scripts/gpu-emulator.sh .gpu/emulator LOG_DIR
#
# Prints a summary table last; full logs go to LOG_DIR; exits non-zero on any failure.
set -uo pipefail

KERNELS=(vecadd transpose histogram block_sum warp_reduce softmax)

if [ "${1:-}" = "--stage" ]; then
  set -e
  cd "$(dirname "$0")/.."
  pkgs=(); for k in "${KERNELS[@]}"; do pkgs+=(-p "$k-kernels"); done
  cargo xtask build-ptx --out-dir target/ptx "${pkgs[@]}"
  cargo build --release --quiet -p emulated-tests --bin emulator-compare
  rm -rf .gpu/emulator && mkdir -p .gpu/emulator/ptx
  cp target/release/emulator-compare .gpu/emulator/
  for k in "${KERNELS[@]}"; do cp "target/ptx/$k-kernels.ptx" .gpu/emulator/ptx/; done
  echo "staged: $(du -sh .gpu/emulator | cut -f1) in .gpu/emulator/"
  exit 0
fi

stage=${1:?usage: gpu-emulator.sh STAGED_DIR LOG_DIR (or --stage)}
logs=${2:?usage: gpu-emulator.sh STAGED_DIR LOG_DIR}
mkdir -p "$logs"
: >"$logs/compare.log"
summary=()
fail=0

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$logs/gpu.txt" 2>&1

# compare N SEED: one emulator-compare run; its PASS/FAIL lines join the summary.
compare() {
  local n=$1 seed=$2 start rc
  echo "== emulator-compare --n $n --seed $seed" >>"$logs/compare.log"
  start=$SECONDS
  timeout 100 "$stage/emulator-compare" --ptx-dir "$stage/ptx" --n "$n" --seed "$seed" \
    >"$logs/compare-$n-$seed.log" 2>&1
  rc=$?
  cat "$logs/compare-$n-$seed.log" >>"$logs/compare.log"
  while IFS= read -r line; do
    summary+=("$line  [n=$n seed=$seed]")
  done < <(grep -E "^(PASS|FAIL) " "$logs/compare-$n-$seed.log")
  if [ "$rc" -ne 0 ]; then
    fail=1
    summary+=("FAIL emulator-compare --n $n --seed $seed: exit $rc after $((SECONDS - start)) s; see compare-$n-$seed.log")
  fi
}

compare 1048576 1
compare 300001 2

echo
echo "== summary ($(cat "$logs/gpu.txt")) =="
printf '%s\n' "${summary[@]}"
exit $fail
