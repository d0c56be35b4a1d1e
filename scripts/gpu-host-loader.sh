#!/usr/bin/env bash
# host-loader on a GPU: the verdict matrix with real launches, struct parameters,
# dynamic shared memory above 48 KiB, the cuFuncGetParamInfo cross-check, JIT options,
# cubin loading, and the launch-overhead benchmark (typed vs raw cudarc, 100 000
# launches each, three runs).
#
# Stage (on a build machine, from the repo root; needs Rust, no GPU):
#   bash scripts/gpu-host-loader.sh --stage            # -> .gpu/host-loader/
# Run (on the GPU machine, from the repo root; needs the driver, ptxas, compute-sanitizer):
#   bash scripts/gpu-host-loader.sh .gpu/host-loader LOG_DIR
# Prints a summary table last; full logs go to LOG_DIR; exits non-zero on any failure.
set -uo pipefail

if [ "${1:-}" = "--stage" ]; then
  set -e
  cd "$(dirname "$0")/.."
  dest=.gpu/host-loader
  cargo xtask build-ptx -p struct_params-kernels -p linked_math-kernels
  cargo build --release --quiet -p struct_params-host -p linked_math-host
  cargo build --release --quiet -p host-loader --example launch_overhead
  bins=$(cargo test --release -p host-loader --test device --test gpu_fixture --no-run \
           --message-format=json 2>/dev/null |
         python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] in ("device", "gpu_fixture"):
        print(m["target"]["name"], m["executable"])')
  rm -rf "$dest" && mkdir -p "$dest/ptx"
  while read -r name exe; do cp "$exe" "$dest/test-$name"; done <<<"$bins"
  cp target/release/{struct_params,linked_math}-host target/release/examples/launch_overhead "$dest/"
  cp target/ptx/{struct_params,linked_math}-kernels.{ptx,map.json} "$dest/ptx/"
  cp host-loader/tests/data/fixture.ptx "$dest/"
  ls -la "$dest"
  echo "staged: $(du -sh "$dest" | cut -f1) in $dest"
  exit 0
fi

bin=${1:?STAGED_DIR (e.g. .gpu/host-loader)}
logs=${2:?LOG_DIR}
mkdir -p "$logs"
summary=()
fail=0
step() { # name, log, command...
  local name=$1 log=$2; shift 2
  echo "== $name: $*" >>"$logs/$log"
  if timeout 120 "$@" >>"$logs/$log" 2>&1; then
    summary+=("PASS $name")
  else
    summary+=("FAIL $name (exit $?, see $log)")
    fail=1
  fi
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$logs/gpu.txt"

# A cubin of the fixture for this GPU, assembled by this machine's ptxas (gpu_cubin).
if ptxas -arch=sm_90 "$bin/fixture.ptx" -o "$logs/fixture.cubin" >>"$logs/ptxas.log" 2>&1; then
  export HOST_LOADER_TEST_CUBIN="$logs/fixture.cubin"
else
  summary+=("FAIL ptxas fixture.ptx -> cubin (see ptxas.log)"); fail=1
fi

step "tests: PTX-only launches (device.rs)" tests.log \
  "$bin/test-device" --ignored --test-threads=1
step "tests: record matrix, >48K smem, param info, JIT, bindings, cubin (gpu_fixture.rs)" tests.log \
  "$bin/test-gpu_fixture" --ignored --test-threads=1
step "struct_params n=2^24" examples.log \
  "$bin/struct_params-host" --n 16777216 --ptx "$bin/ptx/struct_params-kernels.ptx"
step "struct_params n=2^20+77 seed 7" examples.log \
  "$bin/struct_params-host" --n 1048653 --seed 7 --ptx "$bin/ptx/struct_params-kernels.ptx"
step "linked_math n=2^24 (Struct<Affine>)" examples.log \
  "$bin/linked_math-host" --n 16777216 --ptx "$bin/ptx/linked_math-kernels.ptx"
step "memcheck struct_params" sanitizer.log \
  compute-sanitizer --tool memcheck --error-exitcode 99 \
  "$bin/struct_params-host" --n 1048576 --ptx "$bin/ptx/struct_params-kernels.ptx"
step "memcheck >48K dynamic shared memory" sanitizer.log \
  compute-sanitizer --tool memcheck --error-exitcode 99 \
  "$bin/test-gpu_fixture" --ignored --exact gpu_dynamic_shared_above_48k

# Launch overhead: three runs of 100 000 launches per way; the median ratio is the figure.
ratios=()
for run in 1 2 3; do
  echo "== launch_overhead run $run" >>"$logs/bench.log"
  timeout 120 "$bin/launch_overhead" >"$logs/bench-$run.txt" 2>&1
  cat "$logs/bench-$run.txt" >>"$logs/bench.log"
  r=$(sed -n 's/^ratio typed \/ cudarc launch_builder = \([0-9.]*\).*/\1/p' "$logs/bench-$run.txt")
  [ -n "$r" ] && ratios+=("$r")
done
if [ ${#ratios[@]} -eq 3 ]; then
  median=$(printf '%s\n' "${ratios[@]}" | sort -g | sed -n 2p)
  ns=$(grep -h "ns/launch" "$logs"/bench-*.txt | awk '{n[$1" "$2]+=$(NF-3); c[$1" "$2]++}
        END {for (k in n) printf "%s %.1f ns; ", k, n[k]/c[k]}')
  if awk -v m="$median" 'BEGIN {exit !(m <= 1.02)}'; then
    summary+=("PASS launch overhead typed/raw cudarc: median ratio $median (runs ${ratios[*]}; bar <= 1.02)")
  else
    summary+=("FAIL launch overhead typed/raw cudarc: median ratio $median (runs ${ratios[*]}; bar <= 1.02)")
    fail=1
  fi
  summary+=("     mean host time per launch: $ns")
  bare=$(sed -n 's/^ratio typed \/ bare cuLaunchKernel   = \([0-9.]*\)/\1/p' "$logs"/bench-*.txt | tr '\n' ' ')
  summary+=("     typed / bare cuLaunchKernel per run: $bare")
else
  summary+=("FAIL launch overhead: the benchmark did not finish (see bench.log)"); fail=1
fi

echo
echo "host-loader GPU summary ($(cut -d, -f1 "$logs/gpu.txt"))"
grep -hE "^test .* \.\.\. (ok|FAILED)$" "$logs/tests.log" | sed 's/^/  /'
grep -hE "^(PASS|FAIL|refused)" "$logs/examples.log" | sed 's/^/  /' | cut -c1-160
grep -h "ERROR SUMMARY" "$logs/sanitizer.log" | sed 's/^/  /'
printf '%s\n' "${summary[@]}"
exit $fail
