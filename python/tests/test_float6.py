"""float6 e2m3 / e3m2: qdq's table-driven codec against ml_dtypes, exhaustively.

Every one of the 64 codes decodes to ml_dtypes' value; every float16 value and a float32 sweep
across every tie (the midpoints and one float32 ulp either side), the subnormals and past the
maximum encode to ml_dtypes' code (saturating). The one rule that differs by design: NaN encodes
to +max (the ONNX float4 rule, docs/semantics.md), where ml_dtypes gives a zero of the opposite
sign. The dtypes map through the element-type table (codes 27, 28, ONNX's).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import qdq

TYPES = [(ml_dtypes.float6_e2m3fn, 27), (ml_dtypes.float6_e3m2fn, 28)]


def encode(code: int, values: np.ndarray, saturate: bool = True) -> np.ndarray:
    out = np.empty(values.size, np.uint8)
    qdq._qdq._encode_small_float(code, np.ascontiguousarray(values, np.float64).reshape(-1), saturate, out)
    return out


def decode(code: int, codes: np.ndarray) -> np.ndarray:
    out = np.empty(codes.size, np.float64)
    qdq._qdq._decode_small_float(code, np.ascontiguousarray(codes, np.uint8), out)
    return out


@pytest.mark.parametrize("dtype, code", TYPES)
def test_dtype_maps_to_the_onnx_code(dtype, code):
    assert qdq.code_from_dtype(dtype) == code
    assert qdq.dtype_from_code(code) == np.dtype(dtype)


@pytest.mark.parametrize("dtype, code", TYPES)
def test_every_code_decodes_like_ml_dtypes(dtype, code):
    codes = np.arange(64, dtype=np.uint8)
    want = codes.view(dtype).astype(np.float64)
    got = decode(code, codes)
    assert np.array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))


def float32_sweep(dtype) -> np.ndarray:
    """Every midpoint between neighbouring values, one float32 ulp either side, both signs, the
    subnormal range densely, and magnitudes past the maximum."""
    values = np.unique(np.arange(32, dtype=np.uint8).view(dtype).astype(np.float32))
    middles = ((values[:-1].astype(np.float64) + values[1:]) / 2).astype(np.float32)
    near = np.concatenate([middles, np.nextafter(middles, np.float32(0)), np.nextafter(middles, np.float32(np.inf)), values])
    tiny = np.linspace(0, float(values[2]) * 2, 4097, dtype=np.float32)
    large = np.geomspace(float(values[-1]), 3e38, 2000).astype(np.float32)
    sweep = np.concatenate([near, tiny, large, [np.float32(np.inf)]])
    return np.concatenate([sweep, -sweep])


@pytest.mark.parametrize("dtype, code", TYPES)
def test_encode_matches_ml_dtypes_over_every_float16_and_the_ties(dtype, code):
    every_half = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32)
    inputs = np.concatenate([every_half, float32_sweep(dtype)])
    finite_or_inf = ~np.isnan(inputs)
    want = inputs[finite_or_inf].astype(dtype).view(np.uint8)
    got = encode(code, inputs[finite_or_inf].astype(np.float64))
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [(float(inputs[finite_or_inf][i]), int(got[i]), int(want[i])) for i in bad[:5]]
    # NaN: +max by qdq's rule (ml_dtypes: a signed zero).
    assert set(encode(code, np.array([np.nan, -np.nan]))) == {0x1F}


@pytest.mark.parametrize("dtype, code", TYPES)
def test_quantize_linear_rejects_float6(dtype, code):
    x = np.ones(4, np.float32)
    with pytest.raises(qdq.QdqError):
        qdq.quantize_linear(x, np.float32(1), np.zeros((), dtype))
    with pytest.raises(qdq.QdqError):
        qdq.dequantize_linear(np.zeros(4, dtype), np.float32(1))
    with pytest.raises(qdq.QdqError):
        qdq.extended_quantize_linear(x, np.float32(1), np.zeros((), dtype))
    with pytest.raises(qdq.QdqError):
        qdq.elementwise_dequantize_linear(np.zeros(4, dtype), np.ones(4, np.float32))
