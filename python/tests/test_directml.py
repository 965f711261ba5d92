"""qdq.directml_quantize_linear / directml_dequantize_linear: numpy arrays as DirectML tensor
descriptions (their own strides; np.broadcast_to's 0-strides broadcast), checked per feature level.

Oracle: the DirectML formulas in numpy on dense copies (quantize: clamp(rint(x / scale) + zp) in
float32, numpy's rint being round-half-even; dequantize: float32(x - zp) * scale), and, for the
float16 paths, qdq's numpy-style elementwise door on dense, broadcast-expanded arrays, whose
results the backend tests pin to onnx.reference."""

from __future__ import annotations

import numpy as np
import pytest

import qdq

SEED = 20261122


def quantize_oracle(x, scale, zero_point, dtype):
    info = np.iinfo(dtype)
    quotient = np.rint(np.ascontiguousarray(x, np.float32) / np.ascontiguousarray(scale, np.float32))
    shifted = quotient.astype(np.float64) + np.ascontiguousarray(zero_point).astype(np.float64)
    return np.clip(np.nan_to_num(shifted, nan=info.min), info.min, info.max).astype(dtype)


def dequantize_oracle(x, scale, zero_point):
    difference = np.ascontiguousarray(x).astype(np.int64) - np.ascontiguousarray(zero_point).astype(np.int64)
    return difference.astype(np.float32) * np.ascontiguousarray(scale, np.float32)


def finite_x(rng, shape):
    return (rng.standard_normal(shape) * 300).astype(np.float32)


def test_per_tensor_and_per_axis_by_broadcast_views():
    rng = np.random.default_rng(SEED)
    x = finite_x(rng, (2, 3, 4, 5))
    per_channel = rng.uniform(0.05, 4, 3).astype(np.float32)
    zero_points = rng.integers(-20, 20, 3).astype(np.int8)
    scale = np.broadcast_to(per_channel[None, :, None, None], x.shape)  # strides (0, 4, 0, 0)
    zp = np.broadcast_to(zero_points[None, :, None, None], x.shape)
    assert scale.strides == (0, 4, 0, 0)
    y = qdq.directml_quantize_linear(x, scale, zp)
    assert y.dtype == np.int8
    np.testing.assert_array_equal(y, quantize_oracle(x, scale, zp, np.int8))

    per_tensor = np.broadcast_to(np.float32(0.75), x.shape)
    y = qdq.directml_quantize_linear(x, per_tensor, np.broadcast_to(np.uint8(128), x.shape))
    np.testing.assert_array_equal(y, quantize_oracle(x, per_tensor, np.full(x.shape, 128, np.uint8), np.uint8))

    codes = rng.integers(-(2**31), 2**31 - 1, x.shape, dtype=np.int64).astype(np.int32)
    wide_zp = np.broadcast_to(rng.integers(-1000, 1000, 5).astype(np.int32), x.shape)
    y = qdq.directml_dequantize_linear(codes, scale, wide_zp)
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, dequantize_oracle(codes, scale, wide_zp))


def test_strided_inputs_and_outputs():
    rng = np.random.default_rng(SEED + 1)
    base = finite_x(rng, (6, 20))
    x = base[:, ::3]  # element strides (20, 3)
    xt = finite_x(rng, (7, 6)).T  # transposed
    scale = np.broadcast_to(rng.uniform(0.1, 2, 7).astype(np.float32), x.shape)
    zp = np.broadcast_to(np.uint8(100), x.shape)
    padded = np.full((6, 9), 0xEE, np.uint8)
    out = padded[:, :7]  # rows of 7 in rows of 9: the padding must stay
    result = qdq.directml_quantize_linear(x, scale, zp, out=out)
    assert result is out
    np.testing.assert_array_equal(out, quantize_oracle(x, scale, zp, np.uint8))
    assert (padded[:, 7:] == 0xEE).all()
    y = qdq.directml_quantize_linear(xt, scale, zp)
    np.testing.assert_array_equal(y, quantize_oracle(xt, scale, zp, np.uint8))
    transposed_out = np.empty((7, 6), np.uint8).T
    qdq.directml_quantize_linear(xt, scale, zp, out=transposed_out)
    np.testing.assert_array_equal(transposed_out, y)
    repeated_x = np.broadcast_to(base[0, :7], x.shape)  # a 0-stride input
    np.testing.assert_array_equal(qdq.directml_quantize_linear(repeated_x, scale, zp),
                                  quantize_oracle(repeated_x, scale, zp, np.uint8))


@pytest.mark.parametrize("x_dtype", [np.uint8, np.int16, np.uint32])
def test_float16_dequantize_equals_the_dense_door(x_dtype):
    rng = np.random.default_rng(SEED + 2)
    info = np.iinfo(x_dtype)
    codes = rng.integers(info.min, info.max, (4, 10, 3), dtype=np.int64, endpoint=True).astype(x_dtype)[:, ::2]
    scale = np.broadcast_to(rng.uniform(0.01, 2, 5).astype(np.float16)[None, :, None], codes.shape)
    zp = np.broadcast_to(rng.integers(info.min, info.max, 3, dtype=np.int64).astype(x_dtype), codes.shape)
    y = qdq.directml_dequantize_linear(codes, scale, zp)
    dense = qdq.elementwise_dequantize_linear(np.ascontiguousarray(codes), np.ascontiguousarray(scale),
                                              np.ascontiguousarray(zp))
    assert y.dtype == np.float16
    assert y.tobytes() == dense.tobytes()


def test_feature_levels():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    scale = np.broadcast_to(np.float32(2), x.shape)
    zp = np.broadcast_to(np.uint8(1), x.shape)
    with pytest.raises(qdq.QdqError, match="DimensionCount 2.*DML_FEATURE_LEVEL_3_0 accepts this description"):
        qdq.directml_quantize_linear(x, scale, zp, feature_level="2_1")
    assert qdq.directml_quantize_linear(x, scale, zp, feature_level="3.0").tolist() == \
        quantize_oracle(x, scale, zp, np.uint8).tolist()
    assert qdq.directml_quantize_linear(x, scale, zp, feature_level=0x3000).dtype == np.uint8
    with pytest.raises(qdq.QdqError, match="ZeroPointTensor is null.*DML_FEATURE_LEVEL_6_2 accepts"):
        qdq.directml_quantize_linear(x, scale, feature_level="DML_FEATURE_LEVEL_6_1")
    half = x.astype(np.float16)
    with pytest.raises(qdq.QdqError, match=r"InputTensor has DataType FLOAT16.*DML_FEATURE_LEVEL_6_0 accepts"):
        qdq.directml_quantize_linear(half, np.broadcast_to(np.float16(2), x.shape), zp, feature_level="3_0")
    with pytest.raises(qdq.QdqError, match="is not a DML_FEATURE_LEVEL"):
        qdq.directml_quantize_linear(x, scale, zp, feature_level="6.5")


def test_descriptions_directml_rejects():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    scale = np.broadcast_to(np.float32(2), x.shape)
    with pytest.raises(qdq.QdqError, match=r"Sizes \[1, 4\] but InputTensor \[3, 4\].*same DimensionCount and Sizes"):
        qdq.directml_quantize_linear(x, np.ones((1, 4), np.float32))  # size-1 broadcasting is the elementwise door's
    with pytest.raises(qdq.QdqError, match="ScaleTensor has DimensionCount 0"):
        qdq.directml_quantize_linear(x, np.float32(2))
    with pytest.raises(qdq.QdqError, match="DirectML strides are unsigned"):
        qdq.directml_quantize_linear(x[::-1], scale)
    rows_on_one_row = np.lib.stride_tricks.as_strided(np.zeros(4, np.uint8), x.shape, (0, 1))
    with pytest.raises(qdq.QdqError, match=r"gives output elements \[0, 0\] and \[1, 0\] the same location \(element offset 0\)"):
        qdq.directml_quantize_linear(x, scale, out=rows_on_one_row)
    with pytest.raises(qdq.QdqError, match="ZeroPointTensor has DataType INT8 and OutputTensor UINT8"):
        qdq.directml_quantize_linear(x, scale, np.broadcast_to(np.int8(0), x.shape), out=np.empty(x.shape, np.uint8))
