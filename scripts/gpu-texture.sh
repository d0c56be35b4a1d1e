#!/usr/bin/env bash
# Texture and surface objects on a GPU (issue 29, part 4): examples/texture's host
# fetches the 96 sample cases through our kernels and compares them bit for bit with
# nvcc's kernel on the same texture unit (calibrate.cu, run here fresh at 2048 fetches
# per case, and the committed 256-fetch file the emulator's test uses), checks the
# bilinear resize against the CPU rules and the surfaces exactly, shows the refusals;
# compute-sanitizer memcheck; the nvcc twin's resize (texture.cu) must hash the same
# bytes; three timing rounds of both.
#
# Here (build machine, from the repo root):
#   bash scripts/gpu-texture.sh --stage            # builds and fills .gpu/texture/
# On the GPU machine (from the repo root; nvcc on PATH, or NVCC=...):
#   bash scripts/gpu-texture.sh .gpu/texture LOG_DIR
set -uo pipefail

if [ "${1:-}" = "--stage" ]; then
  set -e
  cd "$(dirname "$0")/.."
  cargo xtask build-ptx -p texture-kernels --out-dir target/ptx
  cargo build --release --quiet -p texture-host
  rm -rf .gpu/texture && mkdir -p .gpu/texture
  cp target/release/texture-host target/ptx/texture-kernels.ptx .gpu/texture/
  echo "staged: $(du -sh .gpu/texture | cut -f1) in .gpu/texture/"
  exit 0
fi

dir=${1:?usage: gpu-texture.sh STAGED_DIR LOG_DIR (or --stage)}
logs=${2:?usage: gpu-texture.sh STAGED_DIR LOG_DIR}
mkdir -p "$logs"
host=("$dir/texture-host" --ptx "$dir/texture-kernels.ptx")
nvcc=${NVCC:-nvcc}
fail=0
check() { # NAME LOG COMMAND...: runs it into LOG, prints PASS/FAIL NAME
  local name=$1 log=$2; shift 2
  if "$@" > "$logs/$log" 2>&1; then echo "PASS $name"; else echo "FAIL $name (see $logs/$log)"; tail -5 "$logs/$log"; fail=1; fi
}
check "calibrate build" calibrate-build.log "$nvcc" -O3 -arch=sm_90 -o "$logs/calibrate" examples/texture/calibrate.cu
check "calibrate run" calibrate.log "$logs/calibrate" "$logs/gpu-samples.bin" 2048
check "texture (fresh samples)" full.log "${host[@]}" --samples "$logs/gpu-samples.bin"
check "texture (committed samples)" committed.log "${host[@]}" --samples examples/texture/gpu-samples-256.bin
check "texture small resize" small.log "${host[@]}" --resize 37 23 80 50 --seed 3
check "memcheck" memcheck.log compute-sanitizer --tool memcheck --error-exitcode 99 "${host[@]}" --resize 301 203 640 480
check "nvcc twin build" nvcc.log "$nvcc" -O3 -arch=sm_90 -o "$logs/texture-nvcc" examples/texture/texture.cu
check "nvcc twin" twin.log "$logs/texture-nvcc"
grep -h "PASS\|refused\|differ" "$logs/full.log" "$logs/committed.log"
grep -h "ERROR SUMMARY" "$logs/memcheck.log"
rust_hash=$(grep -o 'hash [0-9a-f]*' "$logs/full.log" | head -1)
nvcc_hash=$(grep -o 'hash [0-9a-f]*' "$logs/twin.log" | head -1)
if [ -n "$rust_hash" ] && [ "$rust_hash" = "$nvcc_hash" ]; then
  echo "PASS resize bits: rust and nvcc outputs identical ($rust_hash)"
else
  echo "FAIL resize bits: rust '$rust_hash', nvcc '$nvcc_hash'"; fail=1
fi
for r in 1 2 3; do
  "${host[@]}" --samples examples/texture/gpu-samples-256.bin | grep '^TIME'
  [ -x "$logs/texture-nvcc" ] && "$logs/texture-nvcc" | grep '^TIME'
done
rm -f "$logs/texture-nvcc" "$logs/calibrate" "$logs/gpu-samples.bin"
[ "$fail" = 0 ] && echo "gpu-texture: all PASS" || echo "gpu-texture: FAILED"
exit "$fail"
