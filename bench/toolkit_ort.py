"""DynamicQuantizeLinear through every door, in one run: ONNX Runtime's built-in operator, qdq's
ai.qdq DynamicQuantizeLinear in an ORT session, qdq.dynamic_quantize_linear from Python (with and
without out=), and a memcpy of the same bytes (numpy copy into a preallocated array) as the
bandwidth yardstick. Also qdq.dynamic_quantize (int4 blocked 32, int8 per-axis) against
quantize_linear with the same scales given.

    python bench/toolkit_ort.py [--elements 16777216] [--threads 2] [--repeat 15]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper

import qdq


def best(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def session(domain, shape, threads):
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"], domain=domain)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, list(shape))],
        [
            helper.make_tensor_value_info("y", onnx.TensorProto.UINT8, list(shape)),
            helper.make_tensor_value_info("s", onnx.TensorProto.FLOAT, []),
            helper.make_tensor_value_info("z", onnx.TensorProto.UINT8, []),
        ],
    )
    opsets = [helper.make_opsetid("", 21)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    if domain:
        options.register_custom_ops_library(qdq.ort_library_path())
    model = helper.make_model(graph, opset_imports=opsets, ir_version=10)
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--elements", type=int, default=1 << 24)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    qdq.set_num_threads(args.threads)
    n = args.elements
    shape = (n // 4096, 4096)
    x = np.random.default_rng(0).standard_normal(shape, dtype=np.float32)
    copy_out = np.empty_like(x)
    y8 = np.empty(shape, np.uint8)

    rows = []
    memcpy = best(lambda: np.copyto(copy_out, x), args.repeat) * (5 / 8)  # 5 bytes/element of 8
    rows.append(("memcpy of the same bytes (5 B/element)", memcpy))
    builtin = session("", shape, args.threads)
    rows.append(("ORT built-in DynamicQuantizeLinear (session.run)", best(lambda: builtin.run(None, {"x": x}), args.repeat)))
    custom = session("ai.qdq", shape, args.threads)
    rows.append(("qdq ai.qdq DynamicQuantizeLinear (session.run)", best(lambda: custom.run(None, {"x": x}), args.repeat)))
    rows.append(("qdq.dynamic_quantize_linear (Python)", best(lambda: qdq.dynamic_quantize_linear(x), args.repeat)))
    rows.append(("qdq.dynamic_quantize_linear (Python, out=)", best(lambda: qdq.dynamic_quantize_linear(x, out=y8), args.repeat)))
    print(f"DynamicQuantizeLinear, float32 {shape} -> uint8, {args.threads} threads, best of {args.repeat}")
    ort_time = rows[1][1]
    for label, seconds in rows:
        print(f"  {label:52s} {seconds * 1e3:8.2f} ms   ORT/this {ort_time / seconds:5.2f}x   memcpy/this {memcpy / seconds:5.2f}")

    print("\ndynamic_quantize vs quantize_linear with the scales given (Python, out=)")
    for dtype, method, axis, block in [("int4", "minmax", -1, 32), ("int8", "symmetric", 0, 0), ("uint8", "minmax", None, 0)]:
        y, scale, zp = qdq.dynamic_quantize(x, dtype, method=method, axis=axis, block_size=block)
        out = np.empty_like(y)
        dynamic = best(lambda: qdq.dynamic_quantize(x, dtype, method=method, axis=axis, block_size=block, out=out), args.repeat)
        plain = best(
            lambda: qdq.quantize_linear(x, scale, zp, axis=axis if axis is not None else 1, block_size=block, out=out),
            args.repeat,
        )
        label = f"{dtype} {method} axis={axis} block={block}"
        print(f"  {label:40s} dynamic {dynamic * 1e3:7.2f} ms  plain Q {plain * 1e3:7.2f} ms  plain/dynamic {plain / dynamic:5.2f}")


if __name__ == "__main__":
    main()
