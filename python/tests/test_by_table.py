"""Per-tensor calls large enough to run by table (src/execute/by_table.cpp) against onnx.reference.

Every finite float16 / bfloat16 code (below 1000 in magnitude for integer outputs), repeated to
2^20 elements (the table's threshold), quantized per-tensor, and every finite float8 code dequantized to float16 / bfloat16, bit for bit with a
single-node QuantizeLinear-25 / DequantizeLinear-25 model. NaN and infinities are left out: where
they go into integers docs/semantics.md declares qdq's own choice (test_reference_diff.py covers it).
"""

from __future__ import annotations

import ml_dtypes as md
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import qdq  # noqa: E402

from _helpers import assert_bits_equal  # noqa: E402


def onnx_type(dtype) -> int:
    return qdq.code_from_dtype(np.dtype(dtype))


def _single_node(op, x, scale, zero_point, y_type, **attributes):
    graph = helper.make_graph(
        [helper.make_node(op, ["x", "s", "zp"], ["y"], **attributes)], "by_table",
        [helper.make_tensor_value_info("x", onnx_type(x.dtype), list(x.shape)),
         helper.make_tensor_value_info("s", onnx_type(scale.dtype), []),
         helper.make_tensor_value_info("zp", onnx_type(zero_point.dtype), [])],
        [helper.make_tensor_value_info("y", onnx_type(y_type), list(x.shape))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)], ir_version=11)
    return ReferenceEvaluator(model).run(None, {"x": x, "s": scale, "zp": zero_point})[0]


def _every_finite_code(dtype, elements, below=np.inf):
    """Every code of x's type whose magnitude is finite and below `below`, repeated to `elements`."""
    bits = np.dtype(dtype).itemsize * 8
    codes = np.arange(1 << bits, dtype=np.uint16 if bits == 16 else np.uint8).view(dtype)
    magnitude = np.abs(codes.astype(np.float32))
    return np.resize(codes[magnitude < below], elements)


@pytest.mark.parametrize("x_dtype", [np.float16, md.bfloat16])
@pytest.mark.parametrize("y_dtype", [np.uint8, np.int8, np.int16, md.float8_e4m3fn, md.float8_e5m2, md.int4])
def test_quantize_by_table_equals_reference(x_dtype, y_dtype):
    integer = np.dtype(y_dtype).kind in "iu" or y_dtype is md.int4
    # Integers: quotients finite in x's precision (float16 ends at 65504) and within int32, where
    # the reference's cast is defined (beyond, qdq saturates: a documented divergence).
    x = _every_finite_code(x_dtype, 1 << 20, below=1000.0 if integer else np.inf)
    scale = np.array(0.0625 * 1.37, dtype=x_dtype)
    zero_point = np.array(3 if integer else 0, dtype=y_dtype)
    want = _single_node("QuantizeLinear", x, scale, zero_point, y_dtype)
    got = qdq.quantize_linear(x, scale, zero_point)
    assert_bits_equal(got, want, x, f"{np.dtype(x_dtype).name} -> {np.dtype(y_dtype).name}")


@pytest.mark.parametrize("x_dtype", [md.float8_e4m3fn, md.float8_e4m3fnuz, md.float8_e5m2, md.float8_e5m2fnuz, np.int8])
@pytest.mark.parametrize("y_dtype", [np.float16, md.bfloat16])
def test_dequantize_by_table_equals_reference(x_dtype, y_dtype):
    x = _every_finite_code(x_dtype, 1 << 16)
    scale = np.array(0.37, dtype=y_dtype)
    zero_point = np.array(-5 if x_dtype is np.int8 else 0, dtype=x_dtype)
    want = _single_node("DequantizeLinear", x, scale, zero_point, y_dtype)
    got = qdq.dequantize_linear(x, scale, zero_point)
    assert_bits_equal(got, want, x, f"{np.dtype(x_dtype).name} -> {np.dtype(y_dtype).name}")
