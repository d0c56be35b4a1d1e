#!/usr/bin/env bash
# Builds the example host programs and the linked PTX here and stages them in
# .gpu/ (git-ignored) for a GPU machine that has no Rust.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo xtask build-ptx
cargo xtask build-ptx --panic abort --out-dir target/ptx-abort
cargo build --release --quiet -p vecadd-host -p block_sum-host -p linked_math-host
rm -rf .gpu && mkdir -p .gpu/ptx
cp target/release/{vecadd,block_sum,linked_math}-host .gpu/
mkdir -p .gpu/ptx-abort
cp target/ptx/*.ptx target/ptx/*.map.json .gpu/ptx/
cp target/ptx-abort/*.ptx .gpu/ptx-abort/
cp scripts/gpu-check.sh .gpu/
echo "staged: $(du -sh .gpu | cut -f1) in .gpu/"
