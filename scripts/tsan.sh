#!/usr/bin/env bash
# ThreadSanitizer: builds the library and the concurrency stress test (tests/concurrency_stress.cpp)
# with -fsanitize=thread (build dir build-tsan) and runs it: shared plans executed at once on the
# default pool and through a host parallel-for while set_num_threads changes underneath, and the C
# ABI's per-thread error messages. Any data race report, or any output that differs from the
# serial run, fails the script.
#
# Usage: scripts/tsan.sh [ROUNDS]   rounds per caller thread (default $QDQ_TSAN_ROUNDS or 120)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-${QDQ_TSAN_ROUNDS:-120}}"
bash scripts/install-deps.sh

# -O1 -g1, and one Highway target, the best this CPU runs (-march=native with
# HWY_COMPILE_ONLY_STATIC): what is stressed here is the thread pool and shared plans, which every
# target reaches the same way, and the kernels' other targets cost most of the build (one kernels
# translation unit: 22 s this way, where every target took 479 s under ASan).
flags="-O1 -g1 -DNDEBUG -march=native -DHWY_COMPILE_ONLY_STATIC"
build=build-tsan
start=$SECONDS
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$flags" \
  -DQDQ_BUILD_TOOLS=OFF -DQDQ_BUILD_BENCHMARKS=OFF \
  "-DCMAKE_CXX_FLAGS=-fsanitize=thread -fno-omit-frame-pointer" \
  "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread" >/dev/null
cmake --build "$build" -j2 --target qdq_concurrency_stress >/dev/null
echo "tsan: built in $((SECONDS - start)) s"

begin=$SECONDS
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 history_size=4" \
  "$build/tests/qdq_concurrency_stress" --rounds "$rounds" --callers 4
echo "tsan: ran in $((SECONDS - begin)) s"
