#!/usr/bin/env bash
# Builds the example host programs and the linked PTX here and stages them in
# .gpu/ (git-ignored) for a GPU machine that has no Rust.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo xtask build-ptx
cargo build --release --quiet -p vecadd-host -p block_sum-host -p linked_math-host
rm -rf .gpu && mkdir -p .gpu/ptx
cp target/release/{vecadd,block_sum,linked_math}-host .gpu/
cp target/ptx/*.ptx target/ptx/*.map.json .gpu/ptx/
cp scripts/gpu-check.sh .gpu/
echo "staged: $(du -sh .gpu | cut -f1) in .gpu/"
