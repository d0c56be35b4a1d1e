#!/usr/bin/env bash
# The memory chapter on a GPU: host-loader's memory GPU tests, examples/memory_tour,
# compute-sanitizer memcheck on a small tour, and the CUDA C++ reference
# (benches/memory/memory_bench.cu, built here with nvcc) for the bandwidth and overlap
# figures. Prints a summary table last; full logs go to LOG_DIR; exits non-zero on any
# failure. About a minute on an H200 (every step has a timeout, 4 minutes in all); at
# most about 2 GB of host and device memory; managed allocations are 4 MB and checked
# against free device memory first.
#
# On the build machine (Rust, no GPU), from the repository root:
#   bash scripts/gpu-memory.sh --stage      # -> .gpu/memory/{memory_tour,memory_gpu,memory_tour-kernels.ptx}
# On the GPU machine (CUDA 13, no Rust), from the repository root:
#   bash scripts/gpu-memory.sh .gpu/memory LOG_DIR
set -uo pipefail

if [ "${1:-}" = --stage ] || [ "${1:-}" = stage ]; then
  set -e
  cd "$(dirname "$0")/.."
  cargo xtask build-ptx -p memory_tour-kernels
  cargo build --release --quiet -p memory_tour-host
  exe=$(cargo test --release -p host-loader --test memory_gpu --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("executable"): print(m["executable"])' | tail -1)
  rm -rf .gpu/memory && mkdir -p .gpu/memory
  cp target/release/memory_tour .gpu/memory/
  cp "$exe" .gpu/memory/memory_gpu
  cp target/ptx/memory_tour-kernels.ptx .gpu/memory/
  echo "staged: $(du -sh .gpu/memory | cut -f1) in .gpu/memory/"
  exit 0
fi

stage=${1:?usage: gpu-memory.sh STAGED_DIR LOG_DIR   (or: gpu-memory.sh --stage)}
logs=${2:?usage: gpu-memory.sh STAGED_DIR LOG_DIR}
mkdir -p "$logs"
ptx="$stage/memory_tour-kernels.ptx"
fail=0
results=()
step() { # name, log, timeout seconds, command...
  local name=$1 log=$2 limit=$3; shift 3
  echo "== $name: $*" >>"$logs/$log"
  if timeout "$limit" "$@" >>"$logs/$log" 2>&1; then
    results+=("PASS $name")
  else
    results+=("FAIL $name (exit $?, see $log)")
    fail=1
  fi
}

nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv,noheader | tee "$logs/gpu.txt"

step "nvcc memory_bench.cu" build.log 60 \
  nvcc -O3 -arch=sm_90 -o "$logs/memory_bench" benches/memory/memory_bench.cu
step "host-loader memory GPU tests" tests.log 40 \
  env MEMORY_TOUR_PTX="$ptx" "$stage/memory_gpu" --ignored --test-threads=1 --nocapture
step "memory_tour" tour.log 40 "$stage/memory_tour" --ptx "$ptx"
if [ -x "$logs/memory_bench" ]; then
  step "memory_bench (CUDA C++)" cpp.log 30 "$logs/memory_bench"
else
  results+=("FAIL memory_bench (CUDA C++) (not built)"); fail=1
fi
# Memcheck on a small tour, HMM chapter skipped (the sanitizer need not follow kernels
# into pageable host memory): only the sanitizer's verdict counts here (its
# instrumentation may slow the timed checks, which the full run above judges).
echo "== memcheck" >>"$logs/sanitizer.log"
timeout 60 compute-sanitizer --tool memcheck "$stage/memory_tour" --ptx "$ptx" \
  --mib 16 --reps 2 --pipeline-mib 16 --chunk-mib 2 --n 65536 --skip-hmm >>"$logs/sanitizer.log" 2>&1
if grep -q "ERROR SUMMARY: 0 errors" "$logs/sanitizer.log"; then
  results+=("PASS memcheck memory_tour (0 errors)")
else
  results+=("FAIL memcheck memory_tour (see sanitizer.log)"); fail=1
fi

echo
echo "== details =="
grep -E "^CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS|^  CU_DEVICE_ATTRIBUTE_(MEMORY_POOLS|ASYNC_ENGINE|CONCURRENT_MANAGED|PAGEABLE)" "$logs/tour.log" | sort -u
grep -E "^test result|FAILED|panicked" "$logs/tests.log" | cut -c1-160 | tail -14
sed -n '/^== summary ==/,$p' "$logs/tour.log" | grep -E "^(PASS|FAIL|total)"
grep -E "^(PASS|FAIL) " "$logs/cpp.log" 2>/dev/null

echo
echo "== summary: host memory and data movement (Rust = host-loader, C++ = CUDA runtime) =="
python3 - "$logs/tour.log" "$logs/cpp.log" <<'PY' || fail=1
import sys
def read(path):
    figs = {}
    try:
        for line in open(path):
            p = line.split()
            if len(p) == 4 and p[0] == "BENCH":
                figs[p[1]] = float(p[2])
    except OSError:
        pass
    return figs
rust, cpp = read(sys.argv[1]), read(sys.argv[2])
rows = [  # name, unit, bar on the Rust/C++ ratio, bar on the Rust figure
    ("h2d_pageable_gbps", "GB/s", None, None),
    ("d2h_pageable_gbps", "GB/s", None, None),
    ("h2d_pinned_gbps", "GB/s", 0.95, None),
    ("d2h_pinned_gbps", "GB/s", 0.95, None),
    ("chunk_h2d_ms", "ms", None, None),
    ("chunk_kernel_ms", "ms", None, None),
    ("chunk_d2h_ms", "ms", None, None),
    ("pipeline_depth1_ms", "ms", None, None),
    ("pipeline_depth2_ms", "ms", None, None),
    ("pipeline_depth3_ms", "ms", None, None),
    ("pipeline_speedup_depth2", "x", None, 1.6),
    ("pipeline_speedup_depth3", "x", None, None),
    ("drop_unrelated_us", "us", None, None),
    ("drop_in_use_us", "us", None, None),
    ("cumemfree_during_kernel_ms", "ms", None, None),
    ("pageable_memory_access", "flag", None, None),
]
ok = True
print(f"{'metric':34} {'Rust':>10} {'CUDA C++':>10} {'Rust/C++':>9}  verdict")
for name, unit, ratio_bar, abs_bar in rows:
    r, c = rust.get(name), cpp.get(name)
    rs = f"{r:10.3f}" if r is not None else f"{'-':>10}"
    cs = f"{c:10.3f}" if c is not None else f"{'-':>10}"
    ratio = r / c if r is not None and c else None
    qs = f"{ratio:9.3f}" if ratio is not None else f"{'-':>9}"
    verdict = ""
    if ratio_bar is not None:
        good = ratio is not None and ratio >= ratio_bar
        verdict = f"{'PASS' if good else 'FAIL'} (bar >= {ratio_bar} x C++)"
        ok &= good
    if abs_bar is not None:
        good = r is not None and r >= abs_bar
        verdict = f"{'PASS' if good else 'FAIL'} (bar >= {abs_bar})"
        ok &= good
    print(f"{name + ' (' + unit + ')':34} {rs} {cs} {qs}  {verdict}")
sys.exit(0 if ok else 1)
PY
for r in "${results[@]}"; do echo "$r"; done
echo "overall: $([ $fail -eq 0 ] && echo PASS || echo FAIL)"
exit $fail
