#!/usr/bin/env bash
# Builds qdq and runs its main job: `qdq demo` on the embedded default tensor.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DQDQ_BUILD_TESTS=OFF >/dev/null
cmake --build build -j2 --target qdq_cli >/dev/null
./build/qdq demo
