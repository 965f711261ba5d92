"""Every validation rule raises qdq.QdqError (a ValueError) with a message naming the rule and value,
and no malformed call crashes the interpreter."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

import qdq

F32 = np.float32
F16 = np.float16
X = np.ones((2, 8), F32)
S = F32(1.0)


def test_qdqerror_is_valueerror():
    assert issubclass(qdq.QdqError, ValueError)
    assert qdq.QdqError.__module__ == "qdq"
    with pytest.raises(ValueError):
        qdq.quantize_linear(np.ones(3), S)


def _zeros(dtype, shape=3):
    return np.zeros(shape, dtype=dtype)


# (id, callable, regex the message must match)
CASES = [
    # ------------------------------------------------------------------ unknown / unsupported dtypes
    ("float64 x", lambda: qdq.quantize_linear(np.ones(3), S), r"'x'.*float64.*not an element type"),
    ("bool x", lambda: qdq.quantize_linear(np.ones(3, bool), S), r"'x'.*bool"),
    ("complex x", lambda: qdq.quantize_linear(np.ones(3, np.complex64), S), r"'x'.*complex64"),
    ("int64 x DQ", lambda: qdq.dequantize_linear(np.ones(3, np.int64), S), r"'x'.*int64"),
    ("bool scale", lambda: qdq.quantize_linear(X, True), r"'y_scale' is a bool"),
    ("float64 scale", lambda: qdq.quantize_linear(X, np.float64(1.0)), r"'y_scale'.*float64"),
    ("int8 x to Q", lambda: qdq.quantize_linear(X.astype(np.int8), S), r"'x' has type int8.*T1"),
    ("float32 x to DQ", lambda: qdq.dequantize_linear(X, S), r"'x' has type float32.*T1"),
    ("int32 scale DQ", lambda: qdq.dequantize_linear(_zeros(np.int8), np.int32(1)), r"'x_scale' has type int32.*T2"),
    ("float zp Q", lambda: qdq.quantize_linear(X, S, F32(0)), r"'y_zero_point' has type float32.*T3"),
    ("DQ zp type != x", lambda: qdq.dequantize_linear(_zeros(np.int8), S, np.uint8(0)), r"'x_zero_point' has type uint8 but x has type int8"),
    ("output_dtype code unknown", lambda: qdq.quantize_linear(X, S, output_dtype=99), r"output_dtype=99"),
    ("output_dtype string unknown", lambda: qdq.quantize_linear(X, S, output_dtype="nope"), r"'nope' is not a dtype"),
    ("output_dtype float64", lambda: qdq.quantize_linear(X, S, output_dtype=np.float64), r"float64"),
    # ------------------------------------------------------------------ scale shapes and granularity
    ("per-axis length", lambda: qdq.quantize_linear(X, np.ones(3, F32), axis=1), r"per-axis 'y_scale' has length 3 but x has 8 elements along axis 1"),
    ("per-axis length DQ", lambda: qdq.dequantize_linear(_zeros(np.uint8, (2, 8)), np.ones(2, F32), axis=1), r"per-axis 'x_scale' has length 2"),
    ("axis too large", lambda: qdq.quantize_linear(X, np.ones(8, F32), axis=2), r"axis 2 is outside the accepted range \[-2, 1\]"),
    ("axis too small", lambda: qdq.quantize_linear(X, np.ones(8, F32), axis=-3), r"axis -3 is outside"),
    ("rank-1 x default axis", lambda: qdq.quantize_linear(np.ones(8, F32), np.ones(8, F32)), r"axis 1 is outside the accepted range \[-1, 0\]"),
    ("blocked D=8 B=3 S=4", lambda: qdq.quantize_linear(X, np.ones((2, 4), F32), axis=1, block_size=3), r"ceil\(8 / 3\) = 3 must equal"),
    ("blocked D=8 B=3 S=2", lambda: qdq.quantize_linear(X, np.ones((2, 2), F32), axis=1, block_size=3), r"has 2 entries along axis 1.*ceil\(8 / 3\) = 3"),
    ("blocked DQ D=8 B=3 S=4", lambda: qdq.dequantize_linear(_zeros(np.int8, (2, 8)), np.ones((2, 4), F32), axis=1, block_size=3), r"ceil\(8 / 3\) = 3"),
    ("blocked rank", lambda: qdq.quantize_linear(X, np.ones(2, F32), axis=1, block_size=4), r"blocked 'y_scale' has rank 1.*x has rank 2"),
    ("blocked off-axis dim", lambda: qdq.quantize_linear(X, np.ones((1, 2), F32), axis=1, block_size=4), r"dimension 0 differs off the blocking axis 1"),
    ("block_size negative", lambda: qdq.quantize_linear(X, np.ones((2, 2), F32), axis=1, block_size=-1), r"block_size -1 is negative"),
    ("block_size negative DQ", lambda: qdq.dequantize_linear(_zeros(np.int8, (2, 8)), np.ones((2, 2), F32), axis=1, block_size=-4), r"block_size -4 is negative"),
    ("rank-2 scale without block_size", lambda: qdq.quantize_linear(X, np.ones((2, 8), F32), opset=13), r"scalar or 1-D scale"),
    ("v10 per-axis", lambda: qdq.quantize_linear(X, np.ones(8, F32), opset=10), r"QuantizeLinear-10.*scalar scale \(per-tensor only\)"),
    # ------------------------------------------------------------------ zero point
    ("zp shape != scale shape", lambda: qdq.quantize_linear(X, np.ones(8, F32), np.zeros(2, np.uint8)), r"'y_zero_point' has shape \[2\] but 'y_scale' has shape \[8\]"),
    ("zp rank != scale rank", lambda: qdq.quantize_linear(X, np.ones(8, F32), np.zeros((1, 8), np.uint8)), r"'y_zero_point' has shape \[1, 8\]"),
    ("zp shape DQ", lambda: qdq.dequantize_linear(_zeros(np.int8, (2, 8)), np.ones(8, F32), np.zeros(2, np.int8)), r"'x_zero_point' has shape \[2\]"),
    ("output_dtype != zp type", lambda: qdq.quantize_linear(X, S, np.uint8(0), output_dtype=np.int8), r"output_dtype int8 does not match y_zero_point type uint8"),
    ("output_dtype float32", lambda: qdq.quantize_linear(X, S, output_dtype=np.float32), r"output_dtype float32 is not a quantized type"),
    ("output_dtype float16", lambda: qdq.quantize_linear(X, S, output_dtype=F16), r"output_dtype float16 is not a quantized type"),
    ("output_dtype int32", lambda: qdq.quantize_linear(X, S, output_dtype=np.int32), r"output_dtype int32 is not a quantized type"),
    ("float8 zp non-zero Q", lambda: qdq.quantize_linear(X, S, np.array(1, ml_dtypes.float8_e4m3fn)), r"'y_zero_point' element 0 is 1; float8 zero points must be 0"),
    ("float8 zp NaN Q", lambda: qdq.quantize_linear(X, S, np.array(np.nan, ml_dtypes.float8_e5m2)), r"element 0 is nan; float8 zero points must be 0"),
    ("float8 zp non-zero DQ", lambda: qdq.dequantize_linear(_zeros(ml_dtypes.float8_e5m2fnuz), S, np.array(-2, ml_dtypes.float8_e5m2fnuz)), r"'x_zero_point' element 0 is -2; float8_e5m2fnuz zero points must be 0"),
    ("float8 per-axis zp element 1", lambda: qdq.dequantize_linear(_zeros(ml_dtypes.float8_e4m3fn, (2, 8)), np.ones(2, F32), np.array([0, 0.5], ml_dtypes.float8_e4m3fn), axis=0), r"element 1 is 0.5"),
    ("float4 zp non-zero DQ", lambda: qdq.dequantize_linear(_zeros(ml_dtypes.float4_e2m1fn), S, np.array(1, ml_dtypes.float4_e2m1fn)), r"float4_e2m1fn zero points must be 0"),
    # ------------------------------------------------------------------ version gates
    ("float16 x at opset 13", lambda: qdq.quantize_linear(X.astype(F16), F16(1), opset=13), r"QuantizeLinear-13: input 'x' has type float16"),
    ("int4 at opset 19", lambda: qdq.quantize_linear(X, S, np.array(0, ml_dtypes.int4), opset=19), r"QuantizeLinear-19: input 'y_zero_point' has type int4"),
    ("int4 DQ at opset 19", lambda: qdq.dequantize_linear(_zeros(ml_dtypes.int4), S, opset=19), r"DequantizeLinear-19: input 'x' has type int4"),
    ("int16 at opset 19", lambda: qdq.quantize_linear(X, S, np.int16(0), opset=19), r"QuantizeLinear-19.*int16"),
    ("float8 at opset 13", lambda: qdq.quantize_linear(X, S, np.array(0, ml_dtypes.float8_e4m3fn), opset=13), r"QuantizeLinear-13.*float8_e4m3fn"),
    ("float4 at opset 21", lambda: qdq.quantize_linear(X, S, output_dtype=ml_dtypes.float4_e2m1fn, opset=21), r"QuantizeLinear-21: output_dtype float4_e2m1fn is not a quantized type"),
    ("float4 DQ at opset 21", lambda: qdq.dequantize_linear(_zeros(ml_dtypes.float4_e2m1fn), S, opset=21), r"DequantizeLinear-21: input 'x' has type float4_e2m1fn"),
    ("int2 at opset 24", lambda: qdq.quantize_linear(X, S, np.array(0, ml_dtypes.int2), opset=24), r"QuantizeLinear-24: input 'y_zero_point' has type int2"),
    ("uint2 DQ at opset 24", lambda: qdq.dequantize_linear(_zeros(ml_dtypes.uint2), S, opset=24), r"DequantizeLinear-24: input 'x' has type uint2"),
    ("e8m0 scale DQ at opset 23", lambda: qdq.dequantize_linear(_zeros(np.int8), np.array(1, ml_dtypes.float8_e8m0fnu), output_dtype=F32, opset=23), r"DequantizeLinear-23: input 'x_scale' has type float8_e8m0fnu"),
    ("e8m0 scale Q at opset 23", lambda: qdq.quantize_linear(X, np.array(1, ml_dtypes.float8_e8m0fnu), opset=23), r"QuantizeLinear-23: input 'y_scale' has type float8_e8m0fnu"),
    ("bfloat16 x at opset 13", lambda: qdq.quantize_linear(X.astype(ml_dtypes.bfloat16), np.array(1, ml_dtypes.bfloat16), opset=13), r"QuantizeLinear-13: input 'x' has type bfloat16"),
    ("precision at opset 21", lambda: qdq.quantize_linear(X, S, precision=F16, opset=21), r"QuantizeLinear-21: attribute precision=10 is not defined by this version"),
    ("precision int8", lambda: qdq.quantize_linear(X, S, precision=np.int8), r"precision.*int8.*\(allowed: float32, float16, bfloat16\)"),
    ("block_size at opset 19", lambda: qdq.quantize_linear(X, np.ones((2, 2), F32), block_size=4, opset=19), r"QuantizeLinear-19: attribute block_size=4 is not defined"),
    ("block_size DQ at opset 19", lambda: qdq.dequantize_linear(_zeros(np.int8, (2, 8)), np.ones((2, 2), F32), block_size=4, opset=19), r"DequantizeLinear-19: attribute block_size=4"),
    ("saturate at opset 13", lambda: qdq.quantize_linear(X, S, saturate=0, opset=13), r"QuantizeLinear-13: attribute saturate=0 is not defined"),
    ("saturate 2", lambda: qdq.quantize_linear(X, S, saturate=2), r"saturate=2 must be 0 or 1"),
    ("axis at opset 10", lambda: qdq.quantize_linear(X, S, axis=0, opset=10), r"QuantizeLinear-10: attribute axis=0 is not defined"),
    ("output_dtype at opset 19", lambda: qdq.quantize_linear(X, S, output_dtype=np.uint8, opset=19), r"QuantizeLinear-19: attribute output_dtype=2"),
    ("DQ output_dtype at opset 21", lambda: qdq.dequantize_linear(_zeros(np.int8), S, output_dtype=F32, opset=21), r"DequantizeLinear-21: attribute output_dtype=1"),
    ("DQ output_dtype int8", lambda: qdq.dequantize_linear(_zeros(np.int8), S, output_dtype=np.int8), r"output_dtype.*int8.*\(allowed: float32, float16, bfloat16\)"),
    ("opset 9", lambda: qdq.quantize_linear(X, S, opset=9), r"opset 9 is outside the supported range \[10, 28\]"),
    ("opset 29", lambda: qdq.quantize_linear(X, S, opset=29), r"opset 29 is outside the supported range \[10, 28\]"),
    ("DQ opset 9", lambda: qdq.dequantize_linear(_zeros(np.int8), S, opset=9), r"DequantizeLinear: opset 9 is outside"),
    ("DQ opset 29", lambda: qdq.dequantize_linear(_zeros(np.int8), S, opset=29), r"DequantizeLinear: opset 29 is outside"),
    ("e8m0 DQ without output_dtype", lambda: qdq.dequantize_linear(_zeros(np.int8), np.array(1, ml_dtypes.float8_e8m0fnu)), r"float8_e8m0fnu, which is not an output type; set output_dtype"),
    # ------------------------------------------------------------------ AMD Quark
    ("Quark blocked scale", lambda: qdq.extended_quantize_linear(X, np.ones((2, 2), F32), np.zeros((2, 2), np.uint8)), r"ExtendedQuantizeLinear-1: 'y_scale' has shape \[2, 2\]"),
    ("Quark DQ blocked scale", lambda: qdq.extended_dequantize_linear(_zeros(np.uint8, (2, 8)), np.ones((2, 2), F32), np.zeros((2, 2), np.uint8)), r"ExtendedDequantizeLinear-1: 'x_scale' has shape \[2, 2\]"),
    ("Quark float16 x", lambda: qdq.extended_quantize_linear(X.astype(F16), S, np.uint8(0)), r"ExtendedQuantizeLinear-1: input 'x' has type float16.*\(allowed: float32\)"),
    ("Quark bfloat16 x", lambda: qdq.extended_quantize_linear(X.astype(ml_dtypes.bfloat16), S, np.uint8(0)), r"'x' has type bfloat16"),
    ("Quark float16 scale", lambda: qdq.extended_quantize_linear(X, F16(1), np.uint8(0)), r"'y_scale' has type float16"),
    ("Quark per-axis length", lambda: qdq.extended_quantize_linear(X, np.ones(3, F32), np.zeros(3, np.uint8), axis=1), r"length 3"),
    ("Quark int4 zp", lambda: qdq.extended_quantize_linear(X, S, np.array(0, ml_dtypes.int4)), r"int4"),
    # ------------------------------------------------------------------ DirectML
    ("DirectML rank 9", lambda: qdq.elementwise_quantize_linear(np.ones((1,) * 9, F32), np.ones((1,) * 9, F32)), r"rank 9.*1 to 8 dimensions"),
    ("DirectML DQ rank 9", lambda: qdq.elementwise_dequantize_linear(np.ones((1,) * 9, np.uint8), np.ones((1,) * 9, F32)), r"rank 9"),
    ("DirectML broadcast mismatch", lambda: qdq.elementwise_quantize_linear(X, np.ones((2, 4), F32)), r"'scale' has shape \[2, 4\] and x \[2, 8\]: dimension 1 must equal x's \(8\) or be 1"),
    ("DirectML zp broadcast mismatch", lambda: qdq.elementwise_quantize_linear(X, np.ones((1, 1), F32), np.zeros((2, 3), np.uint8)), r"'zero_point' has shape \[2, 3\]"),
    ("DirectML rank mismatch", lambda: qdq.elementwise_quantize_linear(X, np.ones(8, F32)), r"'scale' has rank 1.*element-wise operands have x's rank"),
    ("DirectML DQ zp dtype", lambda: qdq.elementwise_dequantize_linear(_zeros(np.int8, (2, 8)), np.ones((1, 1), F32), np.zeros((1, 1), np.uint8)), r"'zero_point' has type uint8 but x has type int8"),
    ("DirectML Q zp dtype", lambda: qdq.elementwise_quantize_linear(X, np.ones((1, 1), F32), np.zeros((1, 1), np.int16)), r"'zero_point' has type int16.*\(allowed: int8, uint8\)"),
    ("DirectML Q scale dtype", lambda: qdq.elementwise_quantize_linear(X, np.ones((1, 1), F16)), r"'scale' has type float16 but x has type float32"),
    ("DirectML DQ output != scale", lambda: qdq.elementwise_dequantize_linear(_zeros(np.int8, (2, 8)), np.ones((1, 1), F32), output_dtype=F16), r"output type float16 differs from the scale's type float32"),
    ("DirectML DQ int4 x", lambda: qdq.elementwise_dequantize_linear(_zeros(ml_dtypes.int4, (2, 8)), np.ones((1, 1), F32)), r"int4"),
]


@pytest.mark.parametrize("call,pattern", [pytest.param(c, p, id=i) for i, c, p in CASES])
def test_rule_raises_qdqerror(call, pattern):
    with pytest.raises(qdq.QdqError, match=pattern) as info:
        call()
    assert isinstance(info.value, ValueError)
    assert str(info.value)  # never an empty message


def test_blocked_ceil_rule_accepts_exact():
    """The accepted neighbour of the rejected D=8, B=3, S=4 case: S = ceil(8/3) = 3."""
    y = qdq.quantize_linear(X, np.ones((2, 3), F32), axis=1, block_size=3)
    assert y.shape == X.shape and y.dtype == np.uint8


def test_error_messages_name_the_operator_version():
    """opset resolves to the newest version <= opset; the message names it (docs: opset 20 -> v19)."""
    with pytest.raises(qdq.QdqError, match=r"QuantizeLinear-19:"):
        qdq.quantize_linear(X, S, np.array(0, ml_dtypes.int4), opset=20)
    with pytest.raises(qdq.QdqError, match=r"QuantizeLinear-10:"):
        qdq.quantize_linear(X, np.ones(8, F32), opset=12)
    with pytest.raises(qdq.QdqError, match=r"QuantizeLinear-25:"):
        qdq.quantize_linear(X, S, saturate=3, opset=28)


# ---------------------------------------------------------------------------------------------
# Malformed calls never crash the interpreter: each returns or raises QdqError / TypeError.

_DTYPES = [
    np.float32, np.float16, ml_dtypes.bfloat16, np.float64, np.int32, np.int8, np.uint8, np.int16, np.uint16,
    np.uint32, np.int64, np.bool_, ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.int2, ml_dtypes.uint2,
    ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2fnuz, ml_dtypes.float4_e2m1fn, ml_dtypes.float8_e8m0fnu,
]


def _random_array(rng):
    rank = int(rng.integers(0, 4))
    shape = tuple(int(d) for d in rng.integers(0, 5, size=rank))
    dt = _DTYPES[int(rng.integers(len(_DTYPES)))]
    a = (rng.standard_normal(shape) * 4).astype(np.float32)
    with np.errstate(all="ignore"):
        arr = a.astype(dt)
    if rng.random() < 0.2 and arr.ndim >= 2:
        arr = arr.T  # non-contiguous
    if rng.random() < 0.1 and arr.ndim >= 1:
        arr = arr[::2]
    return arr


def _random_value(rng):
    r = rng.random()
    if r < 0.6:
        return _random_array(rng)
    if r < 0.7:
        return None
    if r < 0.8:
        return float(rng.standard_normal())
    if r < 0.85:
        return int(rng.integers(-3, 300))
    if r < 0.9:
        return "abc"
    if r < 0.95:
        return [1.0, 2.0]
    return object()


def test_random_malformed_calls_never_crash():
    rng = np.random.default_rng(2024)
    outcomes = {"ok": 0, "QdqError": 0, "TypeError": 0}
    funcs = [
        qdq.quantize_linear, qdq.dequantize_linear, qdq.extended_quantize_linear,
        qdq.extended_dequantize_linear, qdq.elementwise_quantize_linear, qdq.elementwise_dequantize_linear,
    ]
    for i in range(400):
        f = funcs[i % len(funcs)]
        args = [_random_value(rng) for _ in range(3)]
        if i % 2 == 0:
            # Near-valid: a well-formed call with one part replaced by something random.
            is_q = f in (qdq.quantize_linear, qdq.extended_quantize_linear, qdq.elementwise_quantize_linear)
            shape = tuple(int(d) for d in rng.integers(1, 5, size=int(rng.integers(1, 4))))
            x = (rng.standard_normal(shape) * 50).astype(np.float32)
            if not is_q:
                x = x.astype(np.int8)
            one = np.ones((1,) * x.ndim, F32) if f in (qdq.elementwise_quantize_linear, qdq.elementwise_dequantize_linear) else F32(0.5)
            good = [x, one, None if f not in (qdq.extended_quantize_linear, qdq.extended_dequantize_linear) else (np.uint8(0) if is_q else np.int8(0))]
            k = int(rng.integers(0, 4))
            if k < 3 and i % 4 == 0:
                good[k] = args[k]
            args = good
        kwargs = {}
        if f in (qdq.quantize_linear, qdq.dequantize_linear):
            kwargs["axis"] = int(rng.integers(-4, 4))
            if rng.random() < 0.4:
                kwargs["block_size"] = int(rng.integers(-2, 5))
            if rng.random() < 0.3:
                kwargs["opset"] = int(rng.integers(8, 30))
            if rng.random() < 0.3:
                kwargs["output_dtype"] = [0, 1, 2, 3, 10, 16, 17, 21, 23, 24, 99, -1, np.float32, ml_dtypes.int4][
                    int(rng.integers(14))
                ]
            if f is qdq.quantize_linear and rng.random() < 0.2:
                kwargs["saturate"] = int(rng.integers(-1, 3))
            if f is qdq.quantize_linear and rng.random() < 0.2:
                kwargs["precision"] = [0, 1, 10, 16, 3, 6, 99][int(rng.integers(7))]
        elif f in (qdq.extended_quantize_linear, qdq.extended_dequantize_linear):
            kwargs["axis"] = int(rng.integers(-3, 3))
        elif f is qdq.elementwise_dequantize_linear and rng.random() < 0.3:
            kwargs["output_dtype"] = [0, 1, 10, 2][int(rng.integers(4))]
        try:
            out = f(*args, **kwargs)
        except qdq.QdqError:
            outcomes["QdqError"] += 1
        except TypeError:
            outcomes["TypeError"] += 1
        else:
            assert isinstance(out, np.ndarray)
            x = args[0]
            assert out.shape == np.shape(x)
            outcomes["ok"] += 1
    assert outcomes["QdqError"] > 100 and outcomes["ok"] > 0, outcomes


def test_valid_shapes_after_malformed_calls():
    """The extension is still healthy after the storm above."""
    y = qdq.quantize_linear(np.array([0.5, 1.5, 2.5, -1.0], F32), F32(1.0), np.int8(0))
    assert y.tolist() == [0, 2, 2, -1]


@pytest.mark.parametrize(
    "call",
    [
        lambda: qdq.quantize_linear(X, S, axis="one"),
        lambda: qdq.quantize_linear(X, S, opset=None),
        lambda: qdq.dequantize_linear(_zeros(np.int8), S, block_size=1.5j),
    ],
    ids=["axis str", "opset None", "block_size complex"],
)
def test_bad_attribute_types_raise_type_or_qdq_error(call):
    with pytest.raises((TypeError, qdq.QdqError, ValueError)):
        call()


def test_zero_dim_and_empty_inputs():
    """Empty tensors are valid inputs (shape kept); no error, no crash."""
    y = qdq.quantize_linear(np.zeros((0, 3), F32), F32(1.0), np.array(0, ml_dtypes.int4))
    assert y.shape == (0, 3) and y.dtype == np.dtype(ml_dtypes.int4)
    y = qdq.dequantize_linear(np.zeros((4, 0), ml_dtypes.uint2), np.ones(0, F32), axis=1)
    assert y.shape == (4, 0) and y.dtype == np.float32


def test_message_mentions_value_for_float8_zero_point_per_element():
    zp = np.zeros(8, ml_dtypes.float8_e4m3fn)
    zp[5] = 2.0
    with pytest.raises(qdq.QdqError, match=re.escape("element 5 is 2")):
        qdq.quantize_linear(X, np.ones(8, F32), zp, axis=1)
