#!/usr/bin/env bash
# node-bench on a GPU (issue 30, point 2): one small kernel as a CUDA graph node, Rust
# kernels (as built, and with their generic loads and stores moved to the global state
# space by benches/gpu/ptx_global.py) against nvcc's, all in one process.
#
# Stage (build machine, repo root):  bash scripts/gpu-nodes.sh --stage   # -> .gpu/nodes
# Run (GPU machine, repo root):      bash scripts/gpu-nodes.sh .gpu/nodes LOG_DIR
set -euo pipefail

if [ "${1:-}" = "--stage" ]; then
  cd "$(dirname "$0")/.."
  dest=.gpu/nodes
  cargo xtask build-ptx -p bench-kernels
  cargo build --release --quiet -p gpu-bench --bin node-bench
  rm -rf "$dest" && mkdir -p "$dest"
  cp target/release/node-bench target/ptx/bench-kernels.ptx benches/gpu/reference.cu \
    benches/gpu/node_reference.cu "$dest/"
  kernels=(vecadd vecadd_each vecadd_each_nocheck vecadd_each_flat)
  python3 benches/gpu/ptx_global.py "$dest/bench-kernels.ptx" "$dest/global.ptx" "${kernels[@]}"
  python3 benches/gpu/ptx_global.py "$dest/bench-kernels.ptx" "$dest/global-nc.ptx" --nc "${kernels[@]}"
  git rev-parse --short HEAD >"$dest/commit"
  ls -la "$dest"
  exit 0
fi

bin=${1:?STAGED_DIR}
logs=${2:?LOG_DIR}
mkdir -p "$logs"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$logs/gpu.txt"
nvcc -O3 -arch=sm_90 -ptx "$bin/node_reference.cu" -o "$logs/node_reference.ptx"
ref=$logs/node_reference.ptx bk=$bin/bench-kernels.ptx g=$bin/global.ptx gnc=$bin/global-nc.ptx
variants=(
  "nvcc float4=$ref:vecadd_ref:raw:4"
  "rust float4=$bk:vecadd:slices:4"
  "rust float4, global=$g:vecadd:slices:4"
  "rust float4, global.nc=$gnc:vecadd:slices:4"
  "nvcc each=$ref:vecadd_each_ref:raw:1"
  "nvcc each, no restrict=$ref:vecadd_each_plain_ref:raw:1"
  "rust each=$bk:vecadd_each:slices:1"
  "rust each, global=$g:vecadd_each:slices:1"
  "rust each, global.nc=$gnc:vecadd_each:slices:1"
  "rust each nocheck=$bk:vecadd_each_nocheck:slices:1"
  "rust each nocheck, global.nc=$gnc:vecadd_each_nocheck:slices:1"
  "rust each flat=$bk:vecadd_each_flat:slices:1"
  "rust each flat, global.nc=$gnc:vecadd_each_flat:slices:1"
  "rust each select=$bk:vecadd_each_select:slices:1"
  "rust each hoisted=$bk:vecadd_each_hoisted:slices:1"
  "rust each sliced=$bk:vecadd_each_sliced:slices:1"
  "rust each arith=$bk:vecadd_each_arith:slices:1"
  "rust each get=$bk:vecadd_each_get:slices:1"
)
args=()
for v in "${variants[@]}"; do args+=(--variant "$v"); done
for seed in 1 2 3; do
  echo "== seed $seed (commit $(cat "$bin/commit"))"
  "$bin/node-bench" "${args[@]}" --seed "$seed"
done 2>&1 | tee "$logs/nodes.txt"
