#!/usr/bin/env bash
# Builds qdq and runs its main job: `qdq demo` on the embedded default tensor.
# The build directory `build` belongs to this script (test.sh uses its own), so the README's
# commands work in either order.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DQDQ_BUILD_TOOLS=ON -DQDQ_BUILD_TESTS=OFF \
  -DQDQ_BUILD_BENCHMARKS=OFF -DQDQ_SANITIZE=OFF >/dev/null
cmake --build build -j2 --target qdq_cli >/dev/null
./build/qdq demo
