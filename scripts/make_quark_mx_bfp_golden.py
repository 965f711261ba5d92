#!/usr/bin/env python3
"""Records the golden vectors of Quark's com.amd.quark MXQuantizeDequantize / BFPQuantizeDequantize.

Runs each case through Quark's own CPU custom-op library in ONNX Runtime and writes inputs and
outputs to tests/data/quark_mx_bfp_golden.bin, which tests/quark_ops_test.cpp and
python/tests/test_quark_ops.py compare qdq against. Run it once when the cases change:

    /work/main/.venv/bin/python scripts/make_quark_mx_bfp_golden.py \
        --quark-library /work/quark-build/libquark_custom_ops.so

(the library comes from the amd-quark wheel's C++ sources; bench/build_quark_library.sh builds it).

File format, little-endian:
    b"QDQMXBFP" magic, u32 case count, then per case
    u32 op (0 = MX, 1 = BFP), u32 x type (TensorProto code: 1 float32, 10 float16),
    u32 n + n bytes: element_dtype (MX) or bfp_method (BFP),
    8 x i64 attributes: MX  axis, block_size, rounding_mode, 0...
                        BFP axis, bit_width, block_size, rounding_mode, sub_block_size,
                            sub_block_shift_bits, convert_to_bfloat_before_bfp,
                            use_compiler_version_cpu_kernel,
    u32 rank, rank x i64 dims, x bytes, y bytes (Quark's output).
Inputs are fixed-seed random draws mixed with edge values (zeros, -0, all-zero blocks, +-inf,
NaN, subnormals, the largest finites, ties at the element grid, values past the element maximum).
"""
from __future__ import annotations

import argparse
import struct
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

MX_ELEMENTS = ["fp8_e5m2", "fp8_e4m3", "fp6_e3m2", "fp6_e2m3", "fp4_e2m1", "int8"]
EMAX = {"fp8_e5m2": 15, "fp8_e4m3": 8, "fp6_e3m2": 4, "fp6_e2m3": 2, "fp4_e2m1": 2, "int8": 0}
MBITS = {"fp8_e5m2": 2, "fp8_e4m3": 3, "fp6_e3m2": 2, "fp6_e2m3": 3, "fp4_e2m1": 1, "int8": 6}


def edge_values(rng: np.random.Generator, count: int, emax: int, mbits: int) -> np.ndarray:
    """float32 values: random magnitudes over many binades, with ties and specials sprinkled in."""
    exponents = rng.integers(-20, 20, count)
    x = (rng.uniform(1.0, 2.0, count) * np.exp2(exponents.astype(np.float64))).astype(np.float32)
    x *= np.where(rng.random(count) < 0.5, -1, 1).astype(np.float32)
    # Ties and near-ties of the element grid relative to a block whose largest exponent is 0
    # (scale 2^-emax): k + 0.5 steps of 2^-mbits in the top binade and below.
    step = np.float32(2.0 ** (-mbits))
    ties = ((rng.integers(0, 2 ** (mbits + 1), count) + 0.5) * step * np.exp2(-rng.integers(0, 4, count))).astype(np.float32)
    pick = rng.random(count)
    x = np.where(pick < 0.25, ties * np.where(rng.random(count) < 0.5, -1, 1), x).astype(np.float32)
    toward = np.where(rng.random(count) < 0.5, -np.inf, np.inf).astype(np.float32)  # one ulp off a tie
    x = np.where((pick >= 0.25) & (pick < 0.32), np.nextafter(ties, toward), x).astype(np.float32)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 3e-39, -1.1754942e-38,
                         1.17549435e-38, 3.4028235e38, -3.4028235e38, 1.7014118e38, 2.0 ** (emax + 1) * 0.999,
                         -(2.0 ** (emax + 1)) * 0.97, 0.5, -0.5, 1.5, -2.5, 127.5, -128.5], np.float32)
    where = rng.random(count) < 0.08
    x[where] = specials[rng.integers(0, len(specials), int(where.sum()))]
    return x


def shaped_input(rng: np.random.Generator, shape: tuple, block_axis: int, block: int, emax: int, mbits: int) -> np.ndarray:
    x = edge_values(rng, int(np.prod(shape)), emax, mbits).reshape(shape)
    if len(shape) >= 1 and shape[block_axis] >= block:
        # One all-zero block, one block of subnormals only, one block with a single huge value.
        moved = np.moveaxis(x, block_axis, -1)
        moved[(0,) * (moved.ndim - 1)][:block] = 0.0
        if moved.shape[-1] >= 2 * block:
            moved[(0,) * (moved.ndim - 1)][block:2 * block] = (rng.integers(-2**20, 2**20, block) * np.float32(2.0 ** -149)).astype(np.float32)
        if moved.ndim >= 2 and moved.shape[-2] >= 2:
            row = moved[(0,) * (moved.ndim - 2) + (1,)]
            row[:block] = rng.uniform(-1, 1, block).astype(np.float32) * np.float32(1e-3)
            row[block // 2] = np.float32(3.0e38)
    return x


def run_quark(library: str, op: str, attributes: dict, x: np.ndarray) -> np.ndarray:
    elem = TensorProto.FLOAT16 if x.dtype == np.float16 else TensorProto.FLOAT
    node = helper.make_node(op, ["x"], ["y"], domain="com.amd.quark", **attributes)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", elem, list(x.shape))],
                              [helper.make_tensor_value_info("y", elem, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.amd.quark", 1)])
    model.ir_version = 9
    options = ort.SessionOptions()
    options.register_custom_ops_library(library)
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    # Quark's BFP kernel rounds its input in place when convert_to_bfloat_before_bfp is set: a copy.
    return session.run(None, {"x": x.copy()})[0]


def cases(rng: np.random.Generator):
    # Shapes: rank 1 (axis ignored) with a partial last block, rank 2 and 3 with the block axis
    # first, middle and last (negative too), one element (passed through), empty.
    mx_shapes = [((70,), 0), ((3, 45), 1), ((40, 3), 0), ((2, 33, 2), -2), ((2, 3, 20), -1), ((1,), 0), ((0,), 0), ((2, 1), 0)]
    for element in MX_ELEMENTS:
        rounding_modes = [0, 1, 2] if element == "int8" else [0, 2]
        for rounding_mode in rounding_modes:
            for shape, axis in mx_shapes:
                for block in ([32] if shape != (3, 45) else [32, 8, 3]):
                    x = shaped_input(rng, shape, axis, block, EMAX[element], MBITS[element])
                    yield "MX", element, [axis, block, rounding_mode, 0, 0, 0, 0, 0], x
    # float16 input (computed in float32 and cast back by ORT, as Quark's kernel does).
    for element in ["fp8_e4m3", "fp4_e2m1", "int8"]:
        with np.errstate(over="ignore"):  # the largest float32 values become float16 infinities
            x = shaped_input(rng, (4, 40), 1, 32, EMAX[element], MBITS[element]).astype(np.float16)
        yield "MX", element, [1, 32, 2, 0, 0, 0, 0, 0], x
    bfp_shapes = [((37,), 0), ((3, 21), 1), ((20, 3), 0), ((2, 9, 2), 1), ((1,), 0), ((0,), 0)]
    for method in ["to_bfp", "to_bfp_prime"]:
        for bit_width in [16, 13, 10, 32]:
            for rounding_mode in [0, 1, 2]:
                for shape, axis in bfp_shapes:
                    for compiler in ([0, 1] if method == "to_bfp" else [0]):
                        for convert in [0, 1]:
                            if convert and rounding_mode != 2:
                                continue
                            block, sub_block, shift_bits = (8, 2, 1) if bit_width != 13 else (16, 4, 2)
                            if method == "to_bfp" and bit_width == 10:
                                block = 4
                            x = shaped_input(rng, shape, axis, block, 0, bit_width - 9)
                            yield "BFP", method, [axis, bit_width, block, rounding_mode, sub_block, shift_bits, convert,
                                                  compiler], x
    # Attribute extremes: one-element blocks, a block as long as the row, sub-blocks of 1 and of the
    # whole block, shift limits 0 (no sub-block shift) and 9 (every shift allowed).
    for element in ["fp8_e5m2", "int8"]:
        for block in [1, 256]:
            x = shaped_input(rng, (300,), 0, block, EMAX[element], MBITS[element])
            yield "MX", element, [0, block, 0, 0, 0, 0, 0, 0], x
    for sub_block, shift_bits in [(1, 0), (16, 9), (2, 3), (4, 0)]:
        x = shaped_input(rng, (5, 37), 1, 16, 0, 7)
        yield "BFP", "to_bfp_prime", [1, 16, 16, 2, sub_block, shift_bits, 0, 0], x
    x = shaped_input(rng, (4, 9), 0, 1, 0, 7)
    yield "BFP", "to_bfp", [0, 16, 1, 0, 2, 1, 0, 1], x
    x = shaped_input(rng, (4, 30), 1, 8, 0, 7)
    yield "BFP", "to_bfp_prime_shared", [1, 16, 8, 0, 2, 1, 0, 0], x
    for method in ["to_bfp", "to_bfp_prime"]:
        with np.errstate(over="ignore"):
            x = shaped_input(rng, (3, 24), 1, 8, 0, 7).astype(np.float16)
        yield "BFP", method, [1, 16, 8, 2, 2, 1, 1 if method == "to_bfp" else 0, 0], x


def attributes_of(op: str, name: str, ints: list) -> dict:
    if op == "MX":
        return {"element_dtype": name, "axis": ints[0], "block_size": ints[1], "rounding_mode": ints[2]}
    keys = ["axis", "bit_width", "block_size", "rounding_mode", "sub_block_size", "sub_block_shift_bits",
            "convert_to_bfloat_before_bfp", "use_compiler_version_cpu_kernel"]
    return {"bfp_method": name, **dict(zip(keys, ints))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quark-library", required=True)
    parser.add_argument("--output", default=str(Path(__file__).resolve().parent.parent / "tests/data/quark_mx_bfp_golden.bin"))
    args = parser.parse_args()
    rng = np.random.default_rng(20261122)
    records = []
    for op, name, ints, x in cases(rng):
        y = run_quark(args.quark_library, f"{op}QuantizeDequantize", attributes_of(op, name, ints), x)
        assert y.dtype == x.dtype and y.shape == x.shape, (op, name, ints, x.shape, y.shape)
        code = 10 if x.dtype == np.float16 else 1
        record = struct.pack("<II", 0 if op == "MX" else 1, code)
        record += struct.pack("<I", len(name)) + name.encode()
        record += struct.pack("<8q", *ints) + struct.pack("<I", x.ndim) + struct.pack(f"<{x.ndim}q", *x.shape)
        record += np.ascontiguousarray(x).tobytes() + np.ascontiguousarray(y).tobytes()
        records.append(record)
    with open(args.output, "wb") as f:
        f.write(b"QDQMXBFP" + struct.pack("<I", len(records)) + b"".join(records))
    print(f"{len(records)} cases -> {args.output} ({Path(args.output).stat().st_size} bytes)")


if __name__ == "__main__":
    main()
