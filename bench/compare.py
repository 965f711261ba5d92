#!/usr/bin/env python3
"""qdq against memcpy and ONNX Runtime, in one process and one run, on the same inputs.

For every cell (QuantizeLinear float32 -> T and DequantizeLinear T -> float32, for T in uint8, int8,
uint16, int16, uint4, int4, float8e4m3fn, float8e5m2, float4e2m1; per-tensor, per-axis on the last
axis, blocked B=32 on the first and on the last axis; 16M and 64K elements) it times:
  qdq      qdq::execute into a preallocated buffer, timed in C++ (qdq._qdq._bench_*): the kernels
           and qdq's thread dispatch, no Python;
  memcpy   a copy split over qdq's thread pool the way qdq splits its work: of the bytes the cell
           moves (read + write) for 64K cells; of at least 128 MiB for 16M cells, so that the
           baseline is the DRAM bandwidth whatever the cell's size (a copy of 36 MiB partly hits
           the 32 MiB L3 and would flatter memcpy);
  ORT      onnxruntime's CPU QuantizeLinear / DequantizeLinear with 2 intra-op threads: the node's
           kernel time from ORT's own profiler (so no session.run overhead is counted either).
The three are measured in alternating rounds (qdq, memcpy, ORT, qdq, ...), each round keeping its best
time. The GB/s columns are the best over all rounds; the two ratio columns are the median over rounds of
the ratio within a round, so that a change in the machine's memory bandwidth during a cell (it is
shared, and its DRAM bandwidth moves between about 40 and 75 GB/s) reaches both sides of a ratio alike.
It prints a markdown table of GB/s, the fraction of
memcpy bandwidth and the speed-up over ORT, and with --write updates docs/performance.md.

Usage: python bench/compare.py [--threads 2] [--quick] [--sizes 16M,64K] [--cells Q/int8/per-tensor,...]
                              [--write docs/performance.md]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import time

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

import qdq
from qdq import _qdq

TYPES = [
    ("uint8", TensorProto.UINT8),
    ("int8", TensorProto.INT8),
    ("uint16", TensorProto.UINT16),
    ("int16", TensorProto.INT16),
    ("uint4", TensorProto.UINT4),
    ("int4", TensorProto.INT4),
    ("float8_e4m3fn", TensorProto.FLOAT8E4M3FN),
    ("float8_e5m2", TensorProto.FLOAT8E5M2),
    ("float4_e2m1fn", TensorProto.FLOAT4E2M1),
]
GRAINS = ["per-tensor", "per-axis", "blocked-first", "blocked-last"]
SIZES = [("16M", (4096, 4096)), ("64K", (64, 1024))]
BLOCK = 32
ORT_OPSET = 21


def bits_of(code: int) -> int:
    return {TensorProto.UINT16: 16, TensorProto.INT16: 16, TensorProto.UINT4: 4, TensorProto.INT4: 4,
            TensorProto.FLOAT4E2M1: 4}.get(code, 8)


def packed_bytes(code: int, count: int) -> int:
    return (count * bits_of(code) + 7) // 8


def scale_layout(grain: str, shape):
    rows, cols = shape
    return {
        "per-tensor": ((), 1, 0),
        "per-axis": ((cols,), 1, 0),
        "blocked-first": ((-(-rows // BLOCK), cols), 0, BLOCK),
        "blocked-last": ((rows, -(-cols // BLOCK)), 1, BLOCK),
    }[grain]


ROUNDS = 5
ORT_SPIN_SETTLE_SECONDS = 0.05


def ort_kernel_seconds(session) -> list[float]:
    """Kernel times of the session's one node, run by run, from ORT's profiler."""
    import json

    with open(session.end_profiling()) as f:
        events = json.load(f)
    times = [e["dur"] for e in events if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time")]
    return [t / 1e6 for t in times]


def ort_session(op: str, shape, scale: np.ndarray, attrs: dict, x_code: int, y_code: int, x_init, threads: int):
    inits = [helper.make_tensor("s", TensorProto.FLOAT, list(scale.shape), scale.reshape(-1).tolist())]
    inputs = []
    if x_init is None:
        inputs.append(helper.make_tensor_value_info("x", x_code, list(shape)))
    else:
        inits.append(x_init)
    node = helper.make_node(op, ["x", "s"], ["y"], **attrs)
    graph = helper.make_graph([node], "bench", inputs, [helper.make_tensor_value_info("y", y_code, list(shape))], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", ORT_OPSET)], ir_version=10)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Keep DequantizeLinear of a constant from being folded away at load time.
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.enable_profiling = True
    options.profile_file_prefix = "/tmp/qdq_compare_ort"
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def measure_cell(op: str, type_name: str, code: int, grain: str, shape, threads: int, quick: bool):
    rng = np.random.default_rng(7)
    count = shape[0] * shape[1]
    scale_shape, axis, block = scale_layout(grain, shape)
    scale = (0.02 + rng.random(scale_shape, dtype=np.float32) * 0.05).astype(np.float32)
    scale_raw = scale.reshape(-1).view(np.uint8)
    reps = (5 if quick else 20) if count >= 1 << 20 else (50 if quick else 400)
    attrs = {"axis": axis}
    if block:
        attrs["block_size"] = block
    if op == "Q":
        x = (rng.standard_normal(shape, dtype=np.float32) * 3).astype(np.float32)
        out = np.empty(packed_bytes(code, count), np.uint8)
        moved = x.nbytes + out.nbytes + scale.nbytes
        qdq_fn = lambda repeat: _qdq._bench_quantize_linear(1, list(shape), x.reshape(-1).view(np.uint8), 1,
                                                             list(scale_shape), scale_raw, axis, block, code, out,
                                                             repeat)
        attrs["output_dtype"] = code
        x_code, y_code, x_init = TensorProto.FLOAT, code, None
        feed = ort.OrtValue.ortvalue_from_numpy(x)
    else:
        # Quantized x in qdq's packed layout (random codes, finite for the float types).
        dtype = qdq.dtype_from_code(code)
        codes = rng.integers(0, 1 << min(bits_of(code), 8), size=count, dtype=np.uint16)
        if dtype.kind == "V" and "float" in dtype.name:
            codes &= 0x77 if bits_of(code) == 8 else 0x7  # positive, no NaN/inf codes
        x_unpacked = codes.astype(np.uint8 if bits_of(code) <= 8 else np.uint16).view(dtype).reshape(shape)
        x_raw = np.ascontiguousarray(x_unpacked).reshape(-1).view(np.uint8)
        if bits_of(code) == 4:
            x_raw = (x_raw[0::2] & 0x0F) | (x_raw[1::2] << 4)
        out = np.empty(count * 4, np.uint8)
        moved = x_raw.nbytes + out.nbytes + scale.nbytes
        qdq_fn = lambda repeat: _qdq._bench_dequantize_linear(code, list(shape), x_raw, 1, list(scale_shape),
                                                               scale_raw, axis, block, out, repeat)
        x_code, y_code = code, TensorProto.FLOAT
        x_init = onnx.numpy_helper.from_array(x_unpacked, "x")
        feed = None
    copy_bytes = moved // 2 if count < 1 << 20 else max(moved // 2, 128 << 20)
    source = np.ones(copy_bytes, np.uint8)
    destination = np.ones_like(source)

    session, binding, ort_note = None, None, ""
    try:
        session = ort_session("QuantizeLinear" if op == "Q" else "DequantizeLinear", shape, scale, attrs,
                              x_code, y_code, x_init, threads)
        binding = session.io_binding()
        if feed is not None:
            binding.bind_ortvalue_input("x", feed)
        binding.bind_output("y")
    except Exception as error:  # noqa: BLE001 - an unsupported cell is reported, not fatal
        session, ort_note = None, str(error).splitlines()[0][:60]

    per_round = max(1, reps // ROUNDS)
    qdq_times, copy_times = [], []
    for _ in range(ROUNDS):
        qdq_times.append(qdq_fn(per_round))
        copy_times.append(_qdq._parallel_copy(destination, source, per_round))
        if session is not None:
            try:
                for _ in range(per_round):
                    session.run_with_iobinding(binding)
            except Exception as error:  # noqa: BLE001
                session, ort_note = None, str(error).splitlines()[0][:60]
            # ORT's pool threads spin for a while after a run (over 10 ms here), taking a core from
            # whatever runs next on this 2-core machine: let them go to sleep first.
            time.sleep(ORT_SPIN_SETTLE_SECONDS)
    copy_rates = [2 * copy_bytes / t for t in copy_times]
    memcpy_ratio = float(np.median([moved / q / c for q, c in zip(qdq_times, copy_rates)]))
    ort_seconds = ort_ratio = None
    if session is not None:
        runs = ort_kernel_seconds(session)
        if len(runs) >= ROUNDS * per_round:  # one round of ORT runs after each round of qdq
            ort_times = [min(runs[r * per_round:(r + 1) * per_round]) for r in range(ROUNDS)]
            ort_seconds = min(ort_times)
            ort_ratio = float(np.median([o / q for o, q in zip(ort_times, qdq_times)]))
    return moved, min(qdq_times), max(copy_rates), memcpy_ratio, ort_seconds, ort_ratio, ort_note


def machine_description(threads: int) -> str:
    cpu = "unknown CPU"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout.splitlines():
            if line.startswith("Model name:"):
                cpu = line.split(":", 1)[1].strip()
    except OSError:
        pass
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
        flags = ", ".join(f for f in ("avx512f", "avx512bw", "avx2", "f16c") if f" {f}" in text)
    except OSError:
        pass
    return (f"{cpu} ({os.cpu_count()} cores; {flags}), {platform.system()} {platform.release()}; "
            f"qdq SIMD target {_qdq._simd_target()}, {threads} threads; onnxruntime {ort.__version__} "
            f"({threads} intra-op threads); numpy {np.__version__}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--sizes", default="16M,64K")
    parser.add_argument("--cells", default="", help="only these cells, e.g. Q/uint8/per-tensor,DQ/int4/per-axis")
    parser.add_argument("--write", metavar="FILE", help="replace the table in this markdown file")
    args = parser.parse_args()
    _qdq._set_num_threads(args.threads)

    rows = []
    header = ("| size | op | type | granularity | qdq GB/s | memcpy GB/s | qdq / memcpy | ORT GB/s | qdq / ORT |\n"
              "|---|---|---|---|---:|---:|---:|---:|---:|")
    print(header)
    for size_name, shape in SIZES:
        if size_name not in args.sizes.split(","):
            continue
        for op in ("Q", "DQ"):
            for type_name, code in TYPES:
                for grain in GRAINS:
                    if args.cells and f"{op}/{type_name}/{grain}" not in args.cells.split(","):
                        continue
                    moved, q, copy_rate, memcpy_ratio, o, ort_ratio, note = measure_cell(
                        op, type_name, code, grain, shape, args.threads, args.quick)
                    qdq_rate, copy_rate = moved / q / 1e9, copy_rate / 1e9
                    ort_text = f"{moved / o / 1e9:.2f}" if o else "n/a"
                    ratio = f"{ort_ratio:.1f}x" if o else ("n/a (" + note + ")" if note else "n/a")
                    row = (f"| {size_name} | {op} | {type_name} | {grain} | {qdq_rate:.2f} | {copy_rate:.2f} | "
                           f"{memcpy_ratio:.2f} | {ort_text} | {ratio} |")
                    rows.append(row)
                    print(row, flush=True)
    machine = machine_description(args.threads)
    print("\n" + machine)
    if args.write:
        stamp = datetime.date.today().isoformat()
        table = "\n".join([header] + rows)
        with open(args.write) as f:
            text = f.read()
        begin, end = "<!-- table:begin -->", "<!-- table:end -->"
        block = f"{begin}\nMeasured {stamp} on: {machine}.\n\n{table}\n{end}"
        if begin in text:
            text = text[: text.index(begin)] + block + text[text.index(end) + len(end):]
        else:
            text += "\n" + block + "\n"
        with open(args.write, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
