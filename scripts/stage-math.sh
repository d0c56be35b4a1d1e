#!/usr/bin/env bash
# Builds the math kernels' PTX (benches/math/kernels) here and stages it in .gpu/math/
# (git-ignored) for scripts/gpu-math.sh on a GPU machine; the harness source
# (benches/math/reference.cu, functions.def) travels with the work tree.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo xtask build-ptx -p math-bench-kernels
rm -rf .gpu/math && mkdir -p .gpu/math
cp target/ptx/math-bench-kernels.ptx target/ptx/math-bench-kernels.map.json .gpu/math/
echo "staged .gpu/math: $(du -sh .gpu/math | cut -f1), $(grep -c '^\.visible \.entry' .gpu/math/math-bench-kernels.ptx) kernels"
