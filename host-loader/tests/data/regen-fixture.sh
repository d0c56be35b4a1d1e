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
