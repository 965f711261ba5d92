#!/usr/bin/env bash
# Builds qdq and runs its main job: `qdq demo` on the embedded default tensor.
# The build directory `build` is shared with test.sh's Release suite; each script configures it
# with every option it relies on, and none of them changes how the library compiles, so the
# README's commands work in either order and the second compiles only what the first did not.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DQDQ_BUILD_TOOLS=ON -DQDQ_BUILD_TESTS=OFF \
  -DQDQ_BUILD_BENCHMARKS=OFF -DQDQ_SANITIZE=OFF >/dev/null
cmake --build build -j2 --target qdq_cli >/dev/null
./build/qdq demo
