#!/usr/bin/env bash
# Builds and runs the consumer projects in tests/consumers/ against qdq as a user gets it:
#   1. `cmake --install BUILD_DIR` into a temporary prefix (BUILD_DIR: the first argument,
#      default build/, configured and built here if it has no libqdq.so yet);
#   2. find_package(qdq) against that prefix: links qdq::qdq and qdq::qdq_shared;
#   3. add_subdirectory() of this source tree: links the qdq::qdq alias;
#   4. a plain C program built with `pkg-config --cflags --libs qdq` from that prefix.
# Each program checks a result and exits non-zero on any difference.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${1:-build}
bash scripts/install-deps.sh
command -v pkg-config >/dev/null || { echo "qdq: pkg-config not found; install the Debian package pkgconf" >&2; exit 1; }

if [ ! -e "$build/libqdq.so" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j2 --target qdq qdq_shared qdq_cli
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
echo "installed into $prefix: $(cd "$prefix" && find . -type f | sort | tr '\n' ' ')"

echo "-- find_package(qdq) against the install prefix"
cmake -S tests/consumers/find_package -B "$work/find_package" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/find_package" -j2 >/dev/null
"$work/find_package/check_static"
"$work/find_package/check_shared"
# The shared consumer must resolve libqdq.so.0.1 from the prefix (CMake's build RPATH), not elsewhere.
# ldd's output is read whole before grep: in `ldd | grep -q` grep can exit at the match while ldd
# still writes, and under pipefail ldd's SIGPIPE failed the check on a correct binary.
shared_libraries=$(ldd "$work/find_package/check_shared")
grep -qF "$prefix/lib/libqdq.so.0.1" <<<"$shared_libraries" ||
  { echo "check_shared does not load the installed libqdq.so.0.1:"; echo "$shared_libraries"; exit 1; }

echo "-- add_subdirectory(qdq)"
# This compiles qdq again inside the consumer, for Highway's static target only
# (HWY_COMPILE_ONLY_STATIC): what is checked here is the sub-project's wiring, and the suites test
# every target's kernels. One target builds in 2 minutes on the 2-core CI machine, where a Release
# build of every target takes about 8.
cmake -S tests/consumers/subdirectory -B "$work/subdirectory" -DQDQ_SOURCE_DIR="$root" \
  -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS=-DHWY_COMPILE_ONLY_STATIC=1" >/dev/null
cmake --build "$work/subdirectory" -j2 >/dev/null
"$work/subdirectory/check_subdirectory"

echo "-- C program with pkg-config"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
flags=$(pkg-config --cflags --libs qdq)
echo "pkg-config --cflags --libs qdq: $flags"
# shellcheck disable=SC2086  # the flags are words
cc -std=c99 -Wall -Wextra -Werror tests/consumers/pkg_config_c/main.c $flags -o "$work/check_c"
LD_LIBRARY_PATH="$prefix/lib" "$work/check_c"
echo "consumer projects: ok"
