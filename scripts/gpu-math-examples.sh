#!/usr/bin/env bash
# device_std::math on real work: examples/black_scholes (NVIDIA's BlackScholes sample) and
# examples/nbody (NVIDIA's nbody sample, one all-pairs step) on a GPU, each against
# an f64 CPU reference at full size and with a second seed, their nvcc-built CUDA C++
# twins (examples/*/*.cu: same algorithm and launch, CUDA's logf/expf/normcdff/rsqrtf)
# timed the same way, and compute-sanitizer on the Rust hosts at reduced size.
#
# Here (build machine, from the repo root):
#   bash scripts/gpu-math-examples.sh --stage        # builds and fills .gpu/math-examples/
# On the GPU machine (from the repo root; no Rust needed; nvcc on PATH, or NVCC=...):
#   bash scripts/gpu-math-examples.sh .gpu/math-examples LOG_DIR
#
# NVCC_ARCH (default sm_90) is the twins' -arch. Prints the PASS/FAIL lines, a timing
# table with the Rust/nvcc time ratio per example (above 1: Rust slower), and a summary
# last; full logs go to LOG_DIR; exits non-zero on any failure. About a minute of GPU
# time on an H100.
set -uo pipefail

EXAMPLES=(black_scholes nbody)

if [ "${1:-}" = "--stage" ]; then
  set -e
  cd "$(dirname "$0")/.."
  pkgs=(); hosts=()
  for ex in "${EXAMPLES[@]}"; do pkgs+=(-p "$ex-kernels"); hosts+=(-p "$ex-host"); done
  cargo xtask build-ptx "${pkgs[@]}" --out-dir target/ptx
  cargo build --release --quiet "${hosts[@]}"
  rm -rf .gpu/math-examples && mkdir -p .gpu/math-examples/ptx
  for ex in "${EXAMPLES[@]}"; do
    cp "target/release/$ex-host" .gpu/math-examples/
    cp "target/ptx/$ex-kernels.ptx" "target/ptx/$ex-kernels.map.json" .gpu/math-examples/ptx/
  done
  echo "staged: $(du -sh .gpu/math-examples | cut -f1) in .gpu/math-examples/"
  exit 0
fi

bin=${1:?usage: gpu-math-examples.sh STAGED_DIR LOG_DIR (or --stage)}
logs=${2:?usage: gpu-math-examples.sh STAGED_DIR LOG_DIR}
nvcc=${NVCC:-nvcc}
arch=${NVCC_ARCH:-sm_90}
mkdir -p "$logs"
: >"$logs/run.log"; : >"$logs/nvcc.log"; : >"$logs/sanitizer.log"
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

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$logs/gpu.txt" 2>&1 \
  || echo "unknown GPU (nvidia-smi failed)" >"$logs/gpu.txt"

# The CUDA C++ twins, built here with the default flags.
for ex in "${EXAMPLES[@]}"; do
  run "$ex twin: nvcc -O3 -arch=$arch" nvcc.log \
    "$nvcc" -O3 -arch="$arch" -o "$logs/$ex-nvcc" "examples/$ex/$ex.cu"
done

# Full size (timed) and a second seed at a ragged size (checked only).
bs="$bin/black_scholes-host"; bs_ptx="$bin/ptx/black_scholes-kernels.ptx"
nb="$bin/nbody-host"; nb_ptx="$bin/ptx/nbody-kernels.ptx"
run "black_scholes n=2^24 seed 1" run.log "$bs" --n 16777216 --seed 1 --runs 50 --ptx "$bs_ptx"
run "black_scholes n=2^24+77 seed 7" run.log "$bs" --n 16777293 --seed 7 --runs 0 --ptx "$bs_ptx"
run "nbody n=16384 seed 1" run.log "$nb" --n 16384 --seed 1 --runs 20 --ptx "$nb_ptx"
run "nbody n=16384+77 seed 7" run.log "$nb" --n 16461 --seed 7 --runs 0 --ptx "$nb_ptx"
if [ -x "$logs/black_scholes-nvcc" ]; then
  run "black_scholes nvcc twin n=2^24" run.log "$logs/black_scholes-nvcc" --n 16777216 --seed 1 --runs 50
fi
if [ -x "$logs/nbody-nvcc" ]; then
  run "nbody nvcc twin n=16384" run.log "$logs/nbody-nvcc" --n 16384 --seed 1 --runs 20
fi

# compute-sanitizer at reduced size; racecheck and synccheck on nbody's shared tiles.
run "black_scholes memcheck n=2^20" sanitizer.log compute-sanitizer --tool memcheck --error-exitcode 99 \
  "$bs" --n 1048576 --seed 3 --runs 1 --ptx "$bs_ptx"
run "nbody memcheck n=2000" sanitizer.log compute-sanitizer --tool memcheck --error-exitcode 99 \
  "$nb" --n 2000 --seed 3 --runs 1 --ptx "$nb_ptx"
for tool in racecheck synccheck; do
  run "nbody $tool n=1000" sanitizer.log compute-sanitizer --tool $tool --error-exitcode 99 \
    "$nb" --n 1000 --seed 5 --runs 0 --ptx "$nb_ptx"
done

# median_ms WHO: the median of the first "TIME WHO:" line in run.log, or "-".
median_ms() {
  local v; v=$(grep -m1 "^TIME $1:" "$logs/run.log" | awk '{print $5}')
  echo "${v:--}"
}
ratio() {
  if [ "$1" = - ] || [ "$2" = - ]; then echo -; else awk "BEGIN{printf \"%.3f\", $1/$2}"; fi
}

echo
echo "---- results (PASS/FAIL lines of the programs) ----"
grep -E "^(PASS|FAIL)" "$logs/run.log" | cut -c1-200
echo "---- timing: median ms, CUDA events ($(head -1 "$logs/gpu.txt" | cut -d, -f1)) ----"
printf '%-26s %12s %12s %10s\n' example "rust ms" "nvcc ms" rust/nvcc
for row in "black_scholes|black_scholes rust|black_scholes nvcc" \
           "nbody (math::rsqrtf)|nbody rust|nbody nvcc" \
           "nbody (math::fast::rsqrtf)|nbody rust-fast|nbody nvcc"; do
  IFS='|' read -r name rust other <<<"$row"
  r=$(median_ms "$rust"); o=$(median_ms "$other")
  printf '%-26s %12s %12s %10s\n' "$name" "$r" "$o" "$(ratio "$r" "$o")"
done
grep -hE "^TIME" "$logs/run.log"
echo "---- sanitizer summaries ----"
grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$logs/sanitizer.log" | sort | uniq -c
echo "---- commands ----"
printf '%s\n' "${summary[@]}"
if [ $fail -eq 0 ]; then echo "ALL OK"; else echo "SOME FAILED"; fi
exit $fail
