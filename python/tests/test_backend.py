"""ONNX's own backend node tests for QuantizeLinear / DequantizeLinear, run through qdq bit for bit.

The onnx wheel ships no node test data, so the cases are generated in-process by
onnx.backend.test.case.node.collect_testcases() (called with no argument: a filter argument only
works on the first call in a process) and filtered by the node's op_type. There are 27 Q/DQ cases
(13 QuantizeLinear + 14 DequantizeLinear); the count is asserted so a silent collection failure
cannot pass.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import helper, numpy_helper  # noqa: E402

import qdq  # noqa: E402

OPS = ("QuantizeLinear", "DequantizeLinear")
EXPECTED_COUNTS = {"QuantizeLinear": 13, "DequantizeLinear": 14}


def _collect():
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # other operators' generators warn about overflow
        cases = [c for c in collect_testcases() if c.model.graph.node[0].op_type in OPS]
    return {c.name: c for c in cases}


CASES = _collect()


def _array(value) -> np.ndarray:
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    return np.asarray(value)


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def _model_opset(model) -> int:
    return next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


def test_collected_count():
    counts = {op: sum(c.model.graph.node[0].op_type == op for c in CASES.values()) for op in OPS}
    assert counts == EXPECTED_COUNTS, sorted(CASES)
    assert len(CASES) == 27


@pytest.mark.parametrize("name", sorted(CASES))
def test_backend_case(name):
    case = CASES[name]
    node = case.model.graph.node[0]
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    assert len(case.data_sets) >= 1
    model_opset = _model_opset(case.model)
    for inputs, outputs in case.data_sets:
        # Inputs are given in node order for the provided (non-empty) inputs.
        provided = [n for n in node.input if n]
        assert len(inputs) == len(provided)
        arrays = [_array(v) for v in inputs]
        x, scale = arrays[0], arrays[1]
        zero_point = arrays[2] if len(arrays) > 2 else None
        (expected,) = [_array(v) for v in outputs]
        # The models are stamped with the newest opset (28); qdq resolves 26..28 to v25. Run at the
        # model's opset and at 25 explicitly.
        for opset in sorted({model_opset, 25}):
            if node.op_type == "QuantizeLinear":
                got = qdq.quantize_linear(x, scale, zero_point, opset=opset, **attrs)
            else:
                got = qdq.dequantize_linear(x, scale, zero_point, opset=opset, **attrs)
            assert got.dtype == expected.dtype, (opset, got.dtype, expected.dtype)
            assert got.shape == expected.shape, (opset, got.shape, expected.shape)
            assert np.array_equal(_bits(got), _bits(expected)), (
                f"{name} opset {opset}: qdq {_bits(got).ravel().tolist()} "
                f"expected {_bits(expected).ravel().tolist()}"
            )
