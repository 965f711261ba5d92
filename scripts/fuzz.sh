#!/usr/bin/env bash
# Fuzzing: builds the libFuzzer targets in fuzz/ with clang under AddressSanitizer +
# UndefinedBehaviorSanitizer (build dir build-fuzz) and runs them one after the other for a bounded
# time (c_api: SECONDS, toolkit: half as long, directml: three tenths), each starting from its committed seed corpus
# (fuzz/corpus/<target>/, never modified here; new inputs go to build-fuzz/corpus/<target>/).
# Beside them, on the other core, the atheris target over the Python package for as long as all three,
# if the package is installed in .venv. Any finding (a sanitizer report, a crash, a kernel/reference mismatch, an
# exception other than QdqError) fails the script; its reproducer is saved under
# build-fuzz/findings/<target>/ and the command that replays it is printed.
#
# Usage: scripts/fuzz.sh [SECONDS]   seconds the c_api target runs (default $QDQ_FUZZ_SECONDS or 300)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-${QDQ_FUZZ_SECONDS:-300}}"
toolkit_seconds=$((seconds / 2))
directml_seconds=$((seconds * 3 / 10))

# clang and its runtime libraries (libFuzzer, ASan, UBSan), installed only if missing.
missing=()
for package in clang libclang-rt-14-dev; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if ((${#missing[@]})); then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# -O1 with line tables only (the SIMD translation units at -O0, see fuzz/CMakeLists.txt), and the
# Highway targets of scripts/sanitizer-targets.sh: SSE4 and AVX2 on an AVX2 machine, which halves
# the build and the work per input. The fuzzer still compares every target it has with the
# reference, at both vector widths (16 and 32 bytes).
flags="-O1 -gline-tables-only -DNDEBUG $(bash scripts/sanitizer-targets.sh)"
build=build-fuzz
start=$SECONDS
CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$flags" \
  -DQDQ_SANITIZE=ON -DQDQ_BUILD_FUZZERS=ON -DQDQ_BUILD_TESTS=OFF -DQDQ_BUILD_TOOLS=OFF \
  -DQDQ_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$build" -j2 --target qdq_fuzz_c_api qdq_fuzz_toolkit qdq_fuzz_directml >/dev/null
echo "fuzz: built in $((SECONDS - start)) s"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# run_target NAME COMMAND...: runs a fuzzer whose artifacts go to $build/findings/NAME/.
run_target() {
  local name=$1
  shift
  local findings="$build/findings/$name" corpus="$build/corpus/$name" log="$build/fuzz-$name.log"
  rm -rf "$findings"  # a reproducer stays until the next run
  mkdir -p "$findings" "$corpus"
  local begin=$SECONDS status=0
  "$@" -artifact_prefix="$findings/" -print_final_stats=1 "$corpus" "fuzz/corpus/$name" >"$log" 2>&1 || status=$?
  local executions
  executions=$(grep -o 'number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
  echo "fuzz: $name: ${executions:-?} executions in $((SECONDS - begin)) s, exit $status"
  # libFuzzer also saves slow-unit-* inputs, which are no finding; crashes, leaks, timeouts and
  # out-of-memory inputs are.
  if ((status != 0)) || compgen -G "$findings/crash-*" >/dev/null || compgen -G "$findings/leak-*" >/dev/null ||
    compgen -G "$findings/timeout-*" >/dev/null || compgen -G "$findings/oom-*" >/dev/null; then
    tail -n 60 "$log"
    echo "fuzz: FINDING in $name; reproducer(s):"
    for artifact in "$findings"/*; do
      echo "  $artifact   (replay: $* $artifact)"
    done
    return 1
  fi
}

# The C targets run one after the other on one core, the atheris target beside them on the other.
rm -f "$build"/fuzz-*.log
failed=0
python_pid=
# atheris (a wheel on PyPI for this Python) goes into the venv scripts/test.sh made, if missing.
if [ -x .venv/bin/python ] && ! .venv/bin/python -c "import atheris" 2>/dev/null; then
  .venv/bin/python -m pip install -q "$(grep "^atheris==" python/requirements-test.txt)" || echo "fuzz: could not install atheris"
fi
if [ -x .venv/bin/python ] && .venv/bin/python -c "import qdq, atheris" 2>/dev/null; then
  run_target python_api .venv/bin/python fuzz/python_api_fuzzer.py -max_total_time="$((seconds + toolkit_seconds + directml_seconds))" \
    -max_len=512 -timeout=20 &
  python_pid=$!
else
  echo "fuzz: python_api skipped (.venv lacks qdq or atheris; scripts/test.sh installs both)"
fi
run_target c_api "$build/fuzz/qdq_fuzz_c_api" -max_total_time="$seconds" -max_len=2048 -timeout=20 \
  -rss_limit_mb=2048 || failed=1
run_target toolkit "$build/fuzz/qdq_fuzz_toolkit" -max_total_time="$toolkit_seconds" -max_len=2048 -timeout=20 \
  -rss_limit_mb=2048 || failed=1
run_target directml "$build/fuzz/qdq_fuzz_directml" -max_total_time="$directml_seconds" -max_len=2048 -timeout=20 \
  -rss_limit_mb=2048 || failed=1
if [ -n "$python_pid" ]; then
  wait "$python_pid" || failed=1
fi
total=0
for log in "$build"/fuzz-*.log; do
  count=$(grep -o 'number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
  total=$((total + ${count:-0}))
done
echo "fuzz: $total executions in total, $((SECONDS - start)) s including the build"
exit $failed
