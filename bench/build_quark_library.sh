#!/usr/bin/env bash
# Builds AMD Quark's own CPU custom-op library (com.amd.quark ExtendedQuantizeLinear / ...) from the
# amd-quark wheel on PyPI, for bench/compare.py --quark-library. Everything goes into DIR, outside
# this repository: Quark's sources are never copied here.
#
# amd-quark normally compiles these sources on import through torch.utils.cpp_extension. This
# script compiles the same source list with the same flags directly, without torch: the list of
# Quark's torch-free CPU build (onnx_ort_cpu_sources() in
# quark/common/torch_cpp_build_specs/onnx_ops.py, less the Windows-only Python init stub) and the
# flags of its compose_compile_flags (-O3 -std=c++17 -DNO_GPU), against the ONNX Runtime 1.17
# headers the wheel carries.
#
# Usage: bash bench/build_quark_library.sh [DIR] [PYTHON]   (DIR default /tmp/quark-build)
# Prints the library's path. Needs g++ (C++17) and pip's access to PyPI.
set -euo pipefail
dir="${1:-/tmp/quark-build}"
python="${2:-python3}"
version="0.13"
mkdir -p "$dir"
cd "$dir"
wheel="amd_quark-${version}-py3-none-any.whl"
if [ ! -f "$wheel" ]; then
  "$python" -m pip download --quiet --no-deps -d . "amd-quark==${version}"
fi
rm -rf wheel
"$python" - "$wheel" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as archive:
    members = [n for n in archive.namelist() if n.startswith("quark/onnx/operators/custom_ops/")]
    archive.extractall("wheel", members)
EOF
ops=wheel/quark/onnx/operators/custom_ops
src=$ops/src
inc=$ops/include
g++ -O3 -std=c++17 -fPIC -shared -DNO_GPU \
  -I"$inc" -I"$src" -I"$inc/onnxruntime-1.17.0/onnxruntime" \
  -I"$inc/onnxruntime-1.17.0/onnxruntime/core/session" -I"$inc/gsl-4.0.0" \
  "$src/custom_op_library.cc" "$src/custom_op_qdq.cc" "$src/custom_op_in.cc" "$src/custom_op_bfp.cc" \
  "$src/custom_op_mx.cc" "$src/custom_op_lstm.cc" "$src/bfp/cpu/bfp.cc" "$src/mx/cpu/mx.cc" \
  "$src/bfp/cpu/bfp_kernel.cc" "$src/mx/cpu/mx_kernel.cc" \
  -o libquark_custom_ops.so
echo "$dir/libquark_custom_ops.so"
