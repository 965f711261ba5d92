#!/usr/bin/env python3
"""MXQuantizeDequantize / BFPQuantizeDequantize: qdq's ONNX Runtime library against Quark's own.

Both libraries run the same one-node com.amd.quark model in ONNX Runtime sessions with the same
settings (CPU provider, intra_op_num_threads, sequential execution); each row is the best of
--repeat runs after a warm-up, x float32 of --elements elements (a [rows, 4096] matrix), and the
ratio is Quark's time over qdq's. Checks the outputs are bit-identical before timing.

    /work/main/.venv/bin/python bench/quark_mx_bfp.py --quark-library /work/quark-build/libquark_custom_ops.so
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

import qdq


def session(library: str, op: str, attrs: dict, shape, threads: int):
    node = helper.make_node(op, ["x"], ["y"], domain="com.amd.quark", **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.amd.quark", 1)])
    model.ir_version = 9
    options = ort.SessionOptions()
    options.register_custom_ops_library(library)
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def best_seconds(run, repeat: int) -> float:
    run()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quark-library", required=True)
    parser.add_argument("--qdq-library", default=None, help="qdq's ORT library (default: the installed package's)")
    parser.add_argument("--elements", type=int, default=16 * 1024 * 1024)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    shape = (args.elements // 4096, 4096)
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(shape) * np.exp2(rng.integers(-8, 8, shape))).astype(np.float32)
    rows = [
        ("MXQuantizeDequantize", {"element_dtype": "fp8_e4m3", "axis": 1, "block_size": 32}),
        ("MXQuantizeDequantize", {"element_dtype": "fp4_e2m1", "axis": 1, "block_size": 32}),
        ("MXQuantizeDequantize", {"element_dtype": "fp6_e2m3", "axis": 1, "block_size": 32}),
        ("MXQuantizeDequantize", {"element_dtype": "int8", "axis": 1, "block_size": 32, "rounding_mode": 2}),
        ("MXQuantizeDequantize", {"element_dtype": "fp8_e4m3", "axis": 0, "block_size": 32}),
        ("BFPQuantizeDequantize", {"bfp_method": "to_bfp", "axis": 1, "bit_width": 16, "block_size": 8}),
        ("BFPQuantizeDequantize", {"bfp_method": "to_bfp_prime", "axis": 1, "bit_width": 13, "block_size": 16,
                                   "sub_block_size": 4, "sub_block_shift_bits": 2}),
    ]
    print(f"| operator | attributes | Quark ms | qdq ms | Quark / qdq |  ({args.elements} float32, "
          f"{args.threads} threads, best of {args.repeat})")
    print("|---|---|---:|---:|---:|")
    for op, attrs in rows:
        quark = session(args.quark_library, op, attrs, shape, args.threads)
        ours = session(args.qdq_library or qdq.ort_library_path(), op, attrs, shape, args.threads)
        want = quark.run(None, {"x": x.copy()})[0]
        got = ours.run(None, {"x": x})[0]
        assert np.array_equal(want.view(np.uint32), got.view(np.uint32)), (op, attrs)
        quark_s = best_seconds(lambda: quark.run(None, {"x": x}), args.repeat)
        ours_s = best_seconds(lambda: ours.run(None, {"x": x}), args.repeat)
        described = ", ".join(f"{k}={v}" for k, v in attrs.items())
        print(f"| {op} | {described} | {quark_s * 1e3:.1f} | {ours_s * 1e3:.1f} | {quark_s / ours_s:.1f}x |", flush=True)


if __name__ == "__main__":
    main()
