#!/usr/bin/env bash
# Rebuilds fixture.ptx and fixture.map.json (the kernels of tests/fixtures/kernels, with
# their ABI records) from the workspace root. Commit the result with the source change.
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cargo xtask build-ptx -p host-loader-fixture-kernels --out-dir "$out"
cp "$out/host-loader-fixture-kernels.ptx" host-loader/tests/data/fixture.ptx
cp "$out/host-loader-fixture-kernels.map.json" host-loader/tests/data/fixture.map.json
# The same kernels for sm_80 and sm_90 in one fatbin (multi/: the manifest, the fatbin,
# each architecture's PTX and link map; the cubins are inside the fatbin).
cargo xtask build-ptx -p host-loader-fixture-kernels --arch sm_80,sm_90 --out-dir "$out/multi"
rm -rf host-loader/tests/data/multi
mkdir -p host-loader/tests/data/multi/sm_80 host-loader/tests/data/multi/sm_90
cp "$out"/multi/host-loader-fixture-kernels.fatbin* host-loader/tests/data/multi/
for a in sm_80 sm_90; do
  cp "$out/multi/$a"/host-loader-fixture-kernels.{ptx,map.json} host-loader/tests/data/multi/$a/
done
