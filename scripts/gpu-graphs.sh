#!/usr/bin/env bash
# Typed CUDA graphs (host_loader::graph) and launch sequences (host_loader::sequence) on a
# GPU: the graph tests (chain replays, node updates, whole-graph update, capture errors,
# stream-ordered frees), the stream tests (buffers written on one stream, read on another,
# freed on a third, by Kernel::launch and by sequences), compute-sanitizer memcheck on
# them and on the benchmark, then launch-bench (host time of one launch, way by way,
# against the C++ runtime and a bare cuLaunchKernel) and graph-bench: a chain of 1000
# dependent tiny kernels launched one by one (Kernel::launch, a sequence, C++ <<<>>>), as
# our graph and as a CUDA C++ graph, interleaved, three seeds, plus one run at 64 Ki
# elements; node-bench: one small kernel as a graph node, Rust against nvcc (issue 30,
# point 2); threads-bench: 1, 2, 4 and 8 host threads each launching into a stream of
# its own, Rust against C++ (point 3).
#
# Stage (on a build machine, from the repo root; needs Rust, no GPU):
#   bash scripts/gpu-graphs.sh --stage [DEST]           # -> .gpu/graphs/ (self-contained)
# Run (on the GPU machine, from any directory; needs the driver, nvcc, compute-sanitizer):
#   bash .gpu/graphs/gpu-graphs.sh .gpu/graphs LOG_DIR
# Prints a summary last; full logs go to LOG_DIR; exits non-zero on any failure.
set -uo pipefail

if [ "${1:-}" = "--stage" ]; then
  set -e
  cd "$(dirname "$0")/.."
  dest=${2:-.gpu/graphs}
  cargo xtask build-ptx -p bench-kernels
  cargo build --release --quiet -p gpu-bench --bin graph-bench --bin launch-bench \
    --bin node-bench --bin threads-bench
  test_exe() {
    cargo test --release -p host-loader --test "$1" --no-run --message-format=json 2>/dev/null |
      python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == sys.argv[1]:
        print(m["executable"])' "$1"
  }
  exe=$(test_exe graph)
  streams_exe=$(test_exe streams)
  rm -rf "$dest" && mkdir -p "$dest/cu"
  cp "$exe" "$dest/test-graph"
  cp "$streams_exe" "$dest/test-streams"
  cp "${CARGO_TARGET_DIR:-target}/release/"{graph-bench,launch-bench,node-bench,threads-bench} "$dest/"
  cp "${CARGO_TARGET_DIR:-target}/ptx/bench-kernels.ptx" host-loader/tests/data/fixture.ptx "$dest/"
  cp benches/gpu/reference.cu benches/gpu/graph_reference.cu benches/gpu/node_reference.cu "$dest/cu/"
  cp scripts/gpu-graphs.sh "$dest/"
  git rev-parse HEAD > "$dest/commit"
  ls -la "$dest"
  echo "staged: $(du -sh "$dest" | cut -f1) in $dest (commit $(cat "$dest/commit"))"
  exit 0
fi

bin=${1:?STAGED_DIR (e.g. .gpu/graphs)}
logs=${2:?LOG_DIR}
mkdir -p "$logs"
summary=()
fail=0
step() { # name, log, command...
  local name=$1 log=$2; shift 2
  echo "== $name: $*" >>"$logs/$log"
  if timeout 150 "$@" >>"$logs/$log" 2>&1; then
    summary+=("PASS $name")
  else
    summary+=("FAIL $name (exit $?, see $log)")
    fail=1
  fi
}

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$logs/gpu.txt"
echo "staged commit: $(cat "$bin/commit" 2>/dev/null)" | tee -a "$logs/gpu.txt"

step "graph tests (tests/graph.rs)" tests.log \
  "$bin/test-graph" --ignored --test-threads=1 --nocapture
step "stream tests (tests/streams.rs)" tests.log \
  "$bin/test-streams" --ignored --test-threads=1 --nocapture
# Stream-ordered allocation races (a use after cuMemFreeAsync, a use before
# cuMemAllocAsync) too, where this compute-sanitizer can track them.
step "memcheck stream tests" sanitizer.log \
  compute-sanitizer --tool memcheck --error-exitcode 99 \
  "$bin/test-streams" --ignored --test-threads=1
if compute-sanitizer --help 2>/dev/null | grep -q -- --track-stream-ordered-races; then
  step "memcheck stream tests --track-stream-ordered-races all" sanitizer.log \
    compute-sanitizer --tool memcheck --error-exitcode 99 --track-stream-ordered-races all \
    "$bin/test-streams" --ignored --test-threads=1
fi
step "memcheck graph tests (all but the two that make the driver refuse calls, and the 400 x 4 Mi free test)" sanitizer.log \
  compute-sanitizer --tool memcheck --error-exitcode 99 \
  "$bin/test-graph" --ignored --test-threads=1 --skip gpu_frees --skip gpu_capture_errors \
  --skip gpu_whole_graph_update
# The capture-error and whole-graph-update tests make the driver refuse calls on
# purpose: memory errors only, then once more listing the refused API calls (for the
# log, not a failure).
for t in gpu_capture_errors_are_typed gpu_whole_graph_update; do
  step "memcheck $t (memory errors; refused API calls are the test's point)" sanitizer.log \
    compute-sanitizer --tool memcheck --error-exitcode 99 --report-api-errors no \
    "$bin/test-graph" --ignored --exact $t
  compute-sanitizer --tool memcheck --show-backtrace no \
    "$bin/test-graph" --ignored --exact $t >>"$logs/api-errors.log" 2>&1
done

step "nvcc reference.cu -> PTX" build.log \
  nvcc -O3 -arch=sm_90 -ptx "$bin/cu/reference.cu" -o "$logs/reference.ptx"
# With graphref_driver_loop (cuLaunchKernel from C++), linked against libcuda (the
# toolkit's stub when the driver's libcuda.so link is missing); without it otherwise.
stubs="$(dirname "$(command -v nvcc)")/../lib64/stubs"
step "nvcc graph_reference.cu -> libgraphref.so" build.log bash -c '
  nvcc -O3 -arch=sm_90 -Xcompiler -fPIC -shared "$1" -o "$2" -L"$3" -lcuda ||
    nvcc -O3 -arch=sm_90 -Xcompiler -fPIC -shared -DGRAPHREF_NO_DRIVER "$1" -o "$2"' \
  _ "$bin/cu/graph_reference.cu" "$logs/libgraphref.so" "$stubs"
grep -m1 -A5 "\.entry vecadd_ref" "$logs/reference.ptx" >>"$logs/build.log" 2>&1

bench=("$bin/graph-bench" --rust-ptx "$bin/bench-kernels.ptx" --ref-ptx "$logs/reference.ptx" --ref-lib "$logs/libgraphref.so" --simple-ptx "$bin/fixture.ptx")
step "memcheck graph-bench (50 steps, 1 run)" sanitizer.log \
  compute-sanitizer --tool memcheck --error-exitcode 99 "${bench[@]}" --steps 50 --runs 1
for run in 1 2; do
  step "launch-bench (host time per launch), run $run" "launch-$run.txt" \
    "$bin/launch-bench" --rust-ptx "$bin/bench-kernels.ptx" --ref-ptx "$logs/reference.ptx" \
    --ref-lib "$logs/libgraphref.so"
done
for seed in 1 2 3; do
  step "graph-bench 1000 x 1024 floats, seed $seed" "bench-$seed.txt" "${bench[@]}" --seed $seed
done
step "graph-bench 1000 x 65536 floats, seed 4" bench-64k.txt "${bench[@]}" --seed 4 --n 65536

# One small kernel as a graph node, Rust against nvcc, one block (issue 30, point 2).
step "nvcc node_reference.cu -> PTX" build.log \
  nvcc -O3 -arch=sm_90 -ptx "$bin/cu/node_reference.cu" -o "$logs/node_reference.ptx"
ref=$logs/node_reference.ptx bk=$bin/bench-kernels.ptx
nodes=(--variant "nvcc vecadd (float4)=$ref:vecadd_ref:raw:4"
  --variant "rust vecadd (float4)=$bk:vecadd:slices:4"
  --variant "nvcc vecadd_each=$ref:vecadd_each_ref:raw:1"
  --variant "rust vecadd_each (a[k] + b[k])=$bk:vecadd_each:slices:1"
  --variant "rust vecadd_each_get (get)=$bk:vecadd_each_get:slices:1"
  --variant "rust vecadd_each_nocheck=$bk:vecadd_each_nocheck:slices:1")
for seed in 1 2 3; do
  step "node-bench 1000 nodes x 1024 floats, one block, seed $seed" "nodes-$seed.txt" \
    "$bin/node-bench" "${nodes[@]}" --seed $seed
done
# The other benchmark kernels at one block, each against its nvcc twin (reference.cu).
step "nvcc reference.cu -> PTX (node cases)" build.log \
  nvcc -O3 -arch=sm_90 -ptx "$bin/cu/reference.cu" -o "$logs/reference-nodes.ptx"
step "node-bench --cases all, seed 1" nodes-cases.txt \
  "$bin/node-bench" --cases all --rust-ptx "$bk" --ref-ptx "$logs/reference-nodes.ptx" --seed 1
# Host threads each launching into a stream of its own (issue 30, point 3).
step "threads-bench 1, 2, 4, 8 threads" threads.txt \
  "$bin/threads-bench" --rust-ptx "$bin/bench-kernels.ptx" --ref-lib "$logs/libgraphref.so"

echo
echo "graphs GPU summary ($(head -1 "$logs/gpu.txt"))"
grep -hE "^test .* \.\.\. (ok|FAILED)$" "$logs/tests.log" | sed 's/^/  /'
grep -h "ERROR SUMMARY" "$logs/sanitizer.log" | sed 's/^/  /'
echo "  API calls the capture-error test makes the driver refuse (compute-sanitizer):"
grep -h "Program hit" "$logs/api-errors.log" | sort | uniq -c | sed 's/^/   /'
for f in "$logs"/launch-*.txt; do
  echo "-- $(basename "$f")"
  sed -n '/^way/,$p' "$f"
done
for f in "$logs"/bench-*.txt; do
  echo "-- $(basename "$f")"
  sed -n '/^variant/,$p' "$f"
done
for f in "$logs"/nodes-*.txt; do
  echo "-- $(basename "$f")"
  grep -h "^NODE" "$f"
done
echo "-- threads.txt"
grep -hE "^THREADS|bar" "$logs/threads.txt"
printf '%s\n' "${summary[@]}"
exit $fail
