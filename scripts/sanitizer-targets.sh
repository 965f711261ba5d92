#!/usr/bin/env bash
# Prints the compiler flags that choose the Highway targets of the ASan + UBSan suite
# (scripts/test.sh) and the fuzz build (scripts/fuzz.sh): SSE4 and AVX2, one target per vector
# width, plus AVX-512 on a CPU that has it. -march=x86-64-v2 -mpclmul -maes makes SSE4 the static
# baseline, so EMU128 and SSSE3 are not compiled: under the sanitizers they tripled the kernels'
# build (one kernels translation unit with g++: 182 s against 479 s with every target, 2026-11-29).
# The Release suite tests every target, those two included, bit for bit.
flags="-march=x86-64-v2 -mpclmul -maes"
grep -qw avx512f /proc/cpuinfo || flags+=" -DHWY_DISABLED_TARGETS=0x180"  # HWY_AVX3 | HWY_AVX3_DL (hwy/detect_targets.h)
echo "$flags"
