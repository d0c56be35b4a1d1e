#!/usr/bin/env bash
# Fused attention on a GPU (mma.sync, sm_80+, and wgmma; built for sm_90a): the attention example
# (head dimensions 64 and 128, causal and not, whole and ragged lengths, two seeds)
# against an f64 CPU reference, then compute-sanitizer memcheck, racecheck and synccheck.
#
# Here (build machine, from the repo root):
#   bash scripts/gpu-attention.sh --stage        # builds and fills .gpu/attention/
# On the GPU machine (from the repo root; no Rust needed):
#   bash scripts/gpu-attention.sh .gpu/attention LOG_DIR
set -uo pipefail

if [ "${1:-}" = "--stage" ]; then
  set -e
  cd "$(dirname "$0")/.."
  cargo xtask build-ptx -p attention-kernels --arch sm_90a
  cargo build --release --quiet -p attention-host
  rm -rf .gpu/attention && mkdir -p .gpu/attention
  cp target/release/attention-host target/ptx/attention-kernels.ptx .gpu/attention/
  echo "staged: $(du -sh .gpu/attention | cut -f1) in .gpu/attention/"
  exit 0
fi

bin=${1:?usage: gpu-attention.sh STAGED_DIR LOG_DIR (or --stage)}
logs=${2:?usage: gpu-attention.sh STAGED_DIR LOG_DIR}
mkdir -p "$logs"
fail=0
run() { "$bin/attention-host" --ptx "$bin/attention-kernels.ptx" "$@" >>"$logs/run.log" 2>&1 || { echo "FAIL attention $*"; fail=1; }; }
run --seed 1
run --seed 2
for tool in memcheck racecheck synccheck; do
  compute-sanitizer --tool $tool --error-exitcode 99 "$bin/attention-host" --ptx "$bin/attention-kernels.ptx" --seed 3 >>"$logs/sanitizer.log" 2>&1 || { echo "FAIL $tool"; fail=1; }
done
grep -E "PASS|FAIL" "$logs/run.log"
grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$logs/sanitizer.log"
exit $fail
