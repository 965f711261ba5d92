#!/usr/bin/env bash
# The whole test suite: the C++ suite (Release), the C++ suite again under AddressSanitizer +
# UndefinedBehaviorSanitizer, then the Python package's conformance suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

echo "== C++ suite (Release)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2
ctest --test-dir build --output-on-failure -j2

echo "== C++ suite (AddressSanitizer + UndefinedBehaviorSanitizer)"
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQDQ_SANITIZE=ON >/dev/null
cmake --build build-sanitize -j2
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-sanitize --output-on-failure -j2

echo "== Python package and conformance suite"
venv=.venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q ".[test]"
# pytest exits 5 when it collects nothing; that is a failure here too.
"$venv/bin/python" -m pytest -q python/tests

echo "== Consumer projects (find_package, add_subdirectory, pkg-config C) against cmake --install"
bash scripts/consumer-test.sh build
