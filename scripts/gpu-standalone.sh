#!/usr/bin/env bash
# The standalone template (examples/standalone), built as a user would build it: copied
# outside this repository, toolkit paths pointed back here, the host crate's build.rs
# compiling, linking and embedding its kernels. Then, on the GPU, the same host binary
# at 2^24 elements and a second seed, under --emulate, and under compute-sanitizer.
#
# Here (build machine, from the repo root):
#   bash scripts/gpu-standalone.sh --stage        # fills .gpu/standalone/
# On the GPU machine (from the repo root; no Rust needed):
#   bash scripts/gpu-standalone.sh .gpu/standalone LOG_DIR
set -uo pipefail

if [ "${1:-}" = "--stage" ]; then
  set -e
  repo=$(cd "$(dirname "$0")/.." && pwd)
  ws=${TMPDIR:-/tmp}/gpu-standalone-stage
  mkdir -p "$ws"
  (cd "$repo/examples/standalone" && tar --exclude=./target --exclude=./Cargo.lock -cf - .) | (cd "$ws" && tar -xf -)
  sed -i -e "s|path = \"../../device-std\"|path = \"$repo/device-std\"|" \
         -e "s|path = \"../../host-loader\"|path = \"$repo/host-loader\"|" \
         -e "s|path = \"../../gpu-build\"|path = \"$repo/gpu-build\"|" "$ws/Cargo.toml"
  if grep -q '"\.\./\.\./' "$ws/Cargo.toml"; then echo "unrewritten path in $ws/Cargo.toml" >&2; exit 1; fi
  (cd "$ws" && cargo build --release --quiet -p standalone-host)
  rm -rf "$repo/.gpu/standalone" && mkdir -p "$repo/.gpu/standalone"
  cp "$ws/target/release/standalone-host" "$repo/.gpu/standalone/"
  echo "staged: $(du -sh "$repo/.gpu/standalone" | cut -f1) in .gpu/standalone/ (built in $ws)"
  exit 0
fi

bin=${1:?usage: gpu-standalone.sh STAGED_DIR LOG_DIR (or --stage)}
logs=${2:?usage: gpu-standalone.sh STAGED_DIR LOG_DIR}
mkdir -p "$logs"
: >"$logs/standalone.log"
summary=()
fail=0
run() {
  local name=$1; shift
  echo "=== $name: $*" >>"$logs/standalone.log"
  if timeout 300 "$@" >>"$logs/standalone.log" 2>&1; then summary+=("ok    $name"); else summary+=("FAIL  $name (exit $?)"); fail=1; fi
}
run "gpu n=2^24 seed 1" "$bin/standalone-host" --n 16777216 --seed 1
run "gpu n=2^24+77 seed 7" "$bin/standalone-host" --n 16777293 --seed 7
run "emulator n=100003" "$bin/standalone-host" --emulate --n 100003 --seed 3
run "memcheck n=2^20" compute-sanitizer --tool memcheck --error-exitcode 1 "$bin/standalone-host" --n 1048576 --seed 5
grep -E "^(PASS|FAIL)" "$logs/standalone.log"
printf '%s\n' "${summary[@]}"
n_ok=$(printf '%s\n' "${summary[@]}" | grep -c '^ok'); n_fail=$(printf '%s\n' "${summary[@]}" | grep -c '^FAIL')
echo "$n_ok passed, $n_fail failed"
exit $fail
