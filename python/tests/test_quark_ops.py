"""Quark's MXQuantizeDequantize / BFPQuantizeDequantize through Python and ONNX Runtime.

Golden vectors: tests/data/quark_mx_bfp_golden.bin, Quark's own CPU kernels' outputs recorded by
scripts/make_quark_mx_bfp_golden.py. qdq.mx_quantize_dequantize / bfp_quantize_dequantize and
qdq's ORT library (com.amd.quark) must reproduce them bit for bit. When Quark's library is
present (QUARK_CUSTOM_OPS_LIBRARY, default /work/quark-build/libquark_custom_ops.so) a live
comparison on fresh random tensors runs too; CI, without it, skips that.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np
import pytest

import qdq

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "quark_mx_bfp_golden.bin"
QUARK_LIBRARY = os.environ.get("QUARK_CUSTOM_OPS_LIBRARY", "/work/quark-build/libquark_custom_ops.so")
BFP_KEYS = ["axis", "bit_width", "block_size", "rounding_mode", "sub_block_size", "sub_block_shift_bits",
            "convert_to_bfloat_before_bfp", "use_compiler_version_cpu_kernel"]


def load_golden():
    raw = DATA.read_bytes()
    assert raw[:8] == b"QDQMXBFP"
    (count,) = struct.unpack_from("<I", raw, 8)
    offset = 12
    cases = []
    for _ in range(count):
        op, code, length = struct.unpack_from("<III", raw, offset)
        offset += 12
        name = raw[offset:offset + length].decode()
        offset += length
        ints = list(struct.unpack_from("<8q", raw, offset))
        offset += 64
        (rank,) = struct.unpack_from("<I", raw, offset)
        offset += 4
        shape = struct.unpack_from(f"<{rank}q", raw, offset)
        offset += 8 * rank
        dtype = np.dtype(np.float16 if code == 10 else np.float32)
        n = int(np.prod(shape)) * dtype.itemsize
        x = np.frombuffer(raw, dtype, int(np.prod(shape)), offset).reshape(shape)
        y = np.frombuffer(raw, dtype, int(np.prod(shape)), offset + n).reshape(shape)
        offset += 2 * n
        cases.append(("MX" if op == 0 else "BFP", name, ints, x, y))
    assert offset == len(raw)
    return cases


CASES = load_golden()


def attributes(op: str, name: str, ints: list) -> dict:
    if op == "MX":
        return {"element_dtype": name, "axis": ints[0], "block_size": ints[1], "rounding_mode": ints[2]}
    return {"bfp_method": name, **dict(zip(BFP_KEYS, ints))}


def run_python(op: str, attrs: dict, x: np.ndarray, out=None) -> np.ndarray:
    attrs = dict(attrs)
    if op == "MX":
        return qdq.mx_quantize_dequantize(x, attrs.pop("element_dtype"), out=out, **attrs)
    return qdq.bfp_quantize_dequantize(x, attrs.pop("bfp_method"), out=out, **attrs)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    unsigned = np.uint16 if a.dtype == np.float16 else np.uint32
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a.view(unsigned), b.view(unsigned))


def test_golden_vectors_cover_every_attribute():
    mx = {(name, ints[2]) for op, name, ints, _, _ in CASES if op == "MX"}
    assert {name for name, _ in mx} == {"fp8_e5m2", "fp8_e4m3", "fp6_e3m2", "fp6_e2m3", "fp4_e2m1", "int8"}
    assert {("int8", 0), ("int8", 1), ("int8", 2)} <= mx
    bfp = {(name, ints[1], ints[3], ints[6], ints[7]) for op, name, ints, _, _ in CASES if op == "BFP"}
    assert {b[0] for b in bfp} == {"to_bfp", "to_bfp_prime", "to_bfp_prime_shared"} and {b[2] for b in bfp} == {0, 1, 2}
    assert {b[3] for b in bfp} == {0, 1} and {b[4] for b in bfp} == {0, 1}
    assert {x.dtype for *_, x, _ in CASES} == {np.dtype(np.float32), np.dtype(np.float16)}


def test_python_functions_match_quark_bit_for_bit():
    for op, name, ints, x, want in CASES:
        got = run_python(op, attributes(op, name, ints), x)
        assert same_bits(got, want), (op, name, ints, x.shape)
        inplace = x.copy()
        assert run_python(op, attributes(op, name, ints), inplace, out=inplace) is inplace
        assert same_bits(inplace, want), ("in place", op, name, ints)


ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402


def session(library: str, op: str, attrs: dict, x: np.ndarray, threads: int = 2):
    elem = TensorProto.FLOAT16 if x.dtype == np.float16 else TensorProto.FLOAT
    node = helper.make_node(f"{op}QuantizeDequantize", ["x"], ["y"], domain="com.amd.quark", **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", elem, list(x.shape))],
                              [helper.make_tensor_value_info("y", elem, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.amd.quark", 1)])
    model.ir_version = 9
    options = ort.SessionOptions()
    options.register_custom_ops_library(library)
    options.intra_op_num_threads = threads
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def test_ort_library_matches_quark_bit_for_bit():
    for op, name, ints, x, want in CASES:
        got = session(qdq.ort_library_path(), op, attributes(op, name, ints), x).run(None, {"x": x})[0]
        assert same_bits(got, want), (op, name, ints, x.shape)


def test_ort_library_defaults_and_legacy_names():
    x = np.linspace(-3, 3, 2 * 64, dtype=np.float32).reshape(2, 64)
    for op, legacy in (("MX", "MXFixNeuron"), ("BFP", "BFPFixNeuron")):
        want = run_python(op, {"element_dtype": "int8"} if op == "MX" else {"bfp_method": "to_bfp"}, x)
        node = helper.make_node(legacy, ["x"], ["y"], domain="com.vai.quantize")  # every attribute defaulted
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 64])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.vai.quantize", 1)])
        model.ir_version = 9
        options = ort.SessionOptions()
        options.register_custom_ops_library(qdq.ort_library_path())
        got = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        assert same_bits(got, want), legacy


def test_ort_library_reports_attribute_errors():
    x = np.ones((2, 8), np.float32)
    with pytest.raises(Exception, match="element_dtype 'fp5'"):
        session(qdq.ort_library_path(), "MX", {"element_dtype": "fp5"}, x).run(None, {"x": x})
    with pytest.raises(Exception, match="sub_block_size 3 must be positive and divide block_size 8"):
        session(qdq.ort_library_path(), "BFP", {"bfp_method": "to_bfp_prime", "sub_block_size": 3}, x).run(None, {"x": x})


@pytest.mark.skipif(not Path(QUARK_LIBRARY).is_file(), reason="Quark's custom-op library is not built here")
def test_live_against_quarks_library():
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((6, 96, 40)) * np.exp2(rng.integers(-30, 30, (6, 96, 40)))).astype(np.float32)
    x.reshape(-1)[::97] = 0.0
    x.reshape(-1)[5::1013] = np.inf
    configs = [("MX", {"element_dtype": e, "axis": axis, "block_size": 32, "rounding_mode": r})
               for e in ("fp8_e5m2", "fp8_e4m3", "fp6_e3m2", "fp6_e2m3", "fp4_e2m1", "int8") for axis in (1, 2) for r in (0, 2)]
    configs += [("BFP", {"bfp_method": m, "axis": axis, "bit_width": 16, "block_size": 8, "rounding_mode": r,
                         "use_compiler_version_cpu_kernel": c})
                for m in ("to_bfp", "to_bfp_prime") for axis in (0, 2) for r in (0, 1, 2) for c in (0, 1)]
    for op, attrs in configs:
        want = session(QUARK_LIBRARY, op, attrs, x).run(None, {"x": x.copy()})[0]
        assert same_bits(run_python(op, attrs, x), want), (op, attrs)
        assert same_bits(session(qdq.ort_library_path(), op, attrs, x).run(None, {"x": x})[0], want), (op, attrs)


def test_python_errors_name_the_value():
    with pytest.raises(qdq.QdqError, match="must be float32 or float16"):
        qdq.mx_quantize_dequantize(np.ones(4, np.int8))
    with pytest.raises(qdq.QdqError, match="bit_width 40 must be in"):
        qdq.bfp_quantize_dequantize(np.ones(4, np.float32), bit_width=40)
    with pytest.raises(qdq.QdqError, match="out has dtype float16"):
        qdq.mx_quantize_dequantize(np.ones(4, np.float32), out=np.empty(4, np.float16))


def test_bfloat16_first_keeps_nans_nan():
    """convert_to_bfloat_before_bfp: finite values round as Quark's bit arithmetic does; a NaN becomes the
    quiet NaN with its sign, where Quark's carries 0x7F808000 into +inf and 0x7FFF8001 into -0
    (docs/semantics.md). With Quark's library present, its outputs are checked to be exactly that."""
    bits = np.array([0x7F808000, 0x7FFF8001, 0xFFC00001, 0x3F800000, 0x40000000, 0x3F812345, 0xBF800000, 0x41000000],
                    np.uint32)
    x = bits.view(np.float32).reshape(1, 8)
    attrs = {"bfp_method": "to_bfp", "axis": 1, "bit_width": 16, "block_size": 8, "convert_to_bfloat_before_bfp": 1}
    got = run_python("BFP", attrs, x).view(np.uint32).ravel()
    assert list(got[:3]) == [0x7FC00000, 0x7FC00000, 0xFFC00000]
    assert list(got[3:]) == [0x3F800000, 0x40000000, 0x3F800000, 0xBF800000, 0x41000000]
    if Path(QUARK_LIBRARY).is_file():
        quark = session(QUARK_LIBRARY, "BFP", attrs, x).run(None, {"x": x.copy()})[0].view(np.uint32).ravel()
        assert list(quark[:3]) == [0x7F800000, 0x80000000, 0xFFC00000]
        assert np.array_equal(quark[3:], got[3:])
