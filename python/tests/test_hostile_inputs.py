"""Hostile arguments at the Python boundary (issue 13, findings 1-3).

Python ints become the type the operator gives them (a zero point the output type, x uint8, ...);
a value that type cannot hold must be refused, never wrapped. Attributes must be integers: bool,
float, str and the like are refused, never truncated or parsed. And whatever is passed, the only
exception to escape is qdq.QdqError, whose message names the public argument.

The property test at the end draws arguments with hypothesis under a fixed seed; atheris drives
the same entry points (fuzz/python_api_fuzzer.py) in scripts/fuzz.sh.
"""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import qdq

F32 = np.float32
X = np.zeros((2, 4), F32)


def raises_naming(argument: str, *more: str):
    """pytest.raises(QdqError) whose message must name `argument` (quoted) and each of `more`."""
    pattern = "'" + re.escape(argument) + "'" + "".join(f"(?=.*{re.escape(m)})" for m in more)
    return pytest.raises(qdq.QdqError, match=pattern)


# ---------------------------------------------------------------------------------------------
# Finding 1: Python ints are range-checked against the type they become.


def test_quantize_zero_point_minus_one_is_not_uint8_255():
    with raises_naming("y_zero_point", "-1", "uint8"):
        qdq.quantize_linear(F32([0]), F32(1), -1)


def test_dequantize_zero_point_200_is_not_int8_minus_56():
    with raises_naming("x_zero_point", "200", "int8"):
        qdq.dequantize_linear(np.int8([0]), F32(1), 200)


def test_dequantize_python_int_x_300_is_not_uint8_44():
    with raises_naming("x", "300", "uint8"):
        qdq.dequantize_linear(300, 0.5)


def test_zero_point_9_does_not_become_int4_minus_7():
    with raises_naming("y_zero_point", "9", "int4"):
        qdq.quantize_linear(F32([0]), F32(1), 9, output_dtype=ml_dtypes.int4)


@pytest.mark.parametrize(
    "dtype, low, high",
    [(np.uint8, 0, 255), (np.int8, -128, 127), (np.int16, -32768, 32767), (np.uint16, 0, 65535),
     (ml_dtypes.int4, -8, 7), (ml_dtypes.uint4, 0, 15), (ml_dtypes.int2, -2, 1), (ml_dtypes.uint2, 0, 3)],
)
def test_python_int_zero_point_bounds(dtype, low, high):
    # The bounds themselves are accepted and mean what they say ...
    for value in (low, high):
        y = qdq.quantize_linear(F32([0]), F32(1), value, output_dtype=dtype)
        assert y.dtype == np.dtype(dtype) and int(y[0]) == value
    # ... one past either bound is refused.
    for value in (low - 1, high + 1):
        with raises_naming("y_zero_point", str(value), np.dtype(dtype).name):
            qdq.quantize_linear(F32([0]), F32(1), value, output_dtype=dtype)


def test_python_int_zero_point_of_dequantize_takes_x_type():
    x = np.array([-8, 7], ml_dtypes.int4)
    assert qdq.dequantize_linear(x, F32(1), -8).tolist() == [0.0, 15.0]
    with raises_naming("x_zero_point", "8", "int4"):
        qdq.dequantize_linear(x, F32(1), 8)


def test_python_int_for_float8_zero_point_must_be_exact():
    # 0 is the only zero point float8 accepts, and it converts exactly; a value the type
    # cannot represent exactly is refused at the boundary, naming it.
    assert qdq.quantize_linear(F32([1.0]), F32(1), 0, output_dtype=ml_dtypes.float8_e4m3fn).tolist() == [1.0]
    with raises_naming("y_zero_point", "1000", "float8_e4m3fn"):
        qdq.quantize_linear(F32([1.0]), F32(1), 1000, output_dtype=ml_dtypes.float8_e4m3fn)


def test_python_float_beyond_float32_is_refused_not_infinite():
    with raises_naming("y_scale", "1e+300", "float32"):
        qdq.quantize_linear(X, 1e300)
    assert qdq.quantize_linear(F32([1.0]), float("inf"))[0] == 0  # inf itself is a value: 1/inf = 0


def test_python_int_scale_beyond_its_type():
    with raises_naming("y_scale", "256", "uint8"):
        qdq.quantize_linear(X, 256)


# ---------------------------------------------------------------------------------------------
# Finding 2: attributes must be integers.

ATTRIBUTE_CALLS = {
    "quantize_linear": (lambda **a: qdq.quantize_linear(X, F32(1), **a), ["axis", "block_size", "saturate", "opset"]),
    "dequantize_linear": (lambda **a: qdq.dequantize_linear(X.astype(np.uint8), F32(1), **a), ["axis", "block_size", "opset"]),
    "extended_quantize_linear": (lambda **a: qdq.extended_quantize_linear(X, F32(1), np.uint8(0), **a), ["axis"]),
    "extended_dequantize_linear": (
        lambda **a: qdq.extended_dequantize_linear(X.astype(np.uint8), F32(1), np.uint8(0), **a), ["axis"]),
}
NOT_INTEGERS = [1.7, 1.0, "1", True, False, None, [1], np.float32(1), np.bool_(True)]


@pytest.mark.parametrize("function", sorted(ATTRIBUTE_CALLS))
@pytest.mark.parametrize("value", NOT_INTEGERS, ids=repr)
def test_attribute_must_be_an_integer(function, value):
    call, attributes = ATTRIBUTE_CALLS[function]
    for attribute in attributes:
        with raises_naming(attribute, "integer"):
            call(**{attribute: value})


def test_axis_1_point_7_is_not_axis_1():
    # Today's (fixed) behaviour: refused; before, it silently ran as axis 1.
    with raises_naming("axis", "1.7"):
        qdq.quantize_linear(X, np.ones(4, F32), axis=1.7)


def test_numpy_integer_attributes_are_integers():
    y = qdq.quantize_linear(X, np.ones(4, F32), axis=np.int64(1), block_size=np.int32(0), opset=np.int16(21))
    assert y.dtype == np.uint8 and y.shape == X.shape


@pytest.mark.parametrize("value", [1.0, "1", True])
def test_dtype_attributes_refuse_floats_and_bools(value):
    for attribute in ("output_dtype", "precision"):
        with raises_naming(attribute):
            qdq.quantize_linear(X, F32(1), **{attribute: value})
    with raises_naming("output_dtype"):
        qdq.dequantize_linear(X.astype(np.uint8), F32(1), output_dtype=value)


# ---------------------------------------------------------------------------------------------
# Finding 3: no foreign exceptions; messages name the public argument, never _qdq.


def test_zero_point_two_to_the_seventy_is_a_qdq_error():
    with raises_naming("y_zero_point", str(2**70)):
        qdq.quantize_linear(X, F32(1), 2**70)


@pytest.mark.parametrize("value", [2**63, 2**64, -(2**63) - 1, 2**200])
def test_attribute_beyond_int64_is_a_qdq_error(value):
    with raises_naming("axis", str(value), "int64") as caught:
        qdq.quantize_linear(X, F32(1), axis=value)
    assert "_qdq" not in str(caught.value)


def test_attribute_at_int64_bounds_reaches_the_operator_rule():
    # Not a conversion problem: the operator's own range rule, with the value intact.
    with pytest.raises(qdq.QdqError, match=r"axis 9223372036854775807 is outside the accepted range"):
        qdq.quantize_linear(X, np.ones(4, F32), axis=2**63 - 1)
    with pytest.raises(qdq.QdqError, match=r"axis -9223372036854775808 is outside the accepted range"):
        qdq.quantize_linear(X, np.ones(4, F32), axis=-(2**63))


# ---------------------------------------------------------------------------------------------
# Property: whatever the arguments, the result is an array or a QdqError naming an argument.

ARGUMENT_NAMES = {"x", "y_scale", "y_zero_point", "x_scale", "x_zero_point", "scale", "zero_point",
                  "axis", "block_size", "saturate", "output_dtype", "precision", "opset"}

hostile_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.integers(min_value=-10, max_value=300),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4),
    st.sampled_from([np.float32(0.5), np.float16(2), np.int8(-3), np.uint8(7), np.int64(1), np.float64(1.0),
                     F32([0.5, 1.0]), np.zeros(4, np.uint8), np.zeros((2, 4), np.int8), np.ones((2, 1), F32),
                     np.zeros(2, ml_dtypes.int4), np.zeros(3, ml_dtypes.float8_e4m3fn), np.zeros(2, np.complex64),
                     np.array(["a"]), np.array([None], dtype=object), [1, 2], [[1], [2, 3]], object()]),
)

FUNCTIONS = [
    (qdq.quantize_linear, ["axis", "block_size", "saturate", "output_dtype", "precision", "opset"]),
    (qdq.dequantize_linear, ["axis", "block_size", "output_dtype", "opset"]),
    (qdq.extended_quantize_linear, ["axis"]),
    (qdq.extended_dequantize_linear, ["axis"]),
    (qdq.elementwise_quantize_linear, []),
    (qdq.elementwise_dequantize_linear, ["output_dtype"]),
]


@seed(13)
@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(
    function_index=st.integers(0, len(FUNCTIONS) - 1),
    x=hostile_values,
    scale=hostile_values,
    zero_point=hostile_values,
    attribute_values=st.lists(hostile_values, min_size=6, max_size=6),
    attribute_mask=st.integers(0, 63),
)
def test_any_arguments_give_an_array_or_a_named_qdq_error(function_index, x, scale, zero_point, attribute_values,
                                                          attribute_mask):
    function, attribute_names = FUNCTIONS[function_index]
    attributes = {name: value for i, (name, value) in enumerate(zip(attribute_names, attribute_values))
                  if attribute_mask >> i & 1}
    try:
        result = function(x, scale, zero_point, **attributes)
    except qdq.QdqError as error:
        message = str(error)
        assert "_qdq" not in message, message
        assert any(f"'{name}'" in message or f"{name}=" in message or f"{name} " in message
                   for name in ARGUMENT_NAMES), message
    else:
        assert isinstance(result, np.ndarray)


# ---------------------------------------------------------------------------------------------
# The toolkit's functions: any dtype, method, axis, block size or scale dtype gives arrays or a
# QdqError, never another exception or a crash.

TOOLKIT_DTYPES = st.sampled_from(
    ["int8", "uint8", "int4", "uint2", "int32", "float8_e4m3fn", "float4_e2m1fn", "float32", "float8_e8m0fnu",
     "bfloat16", "bool", "complex64", 0, 3, 22, 99, -1, 2**40, 1.5, None, np.float16]
)
TOOLKIT_METHODS = st.sampled_from(
    ["minmax", "symmetric", "symmetric_restricted", "mx_floor", "mx_ceil", "mx_even", "mx_rceil", "", "MINMAX", 3, None]
)
TOOLKIT_INTS = st.one_of(st.integers(-3, 70), st.sampled_from([2**31, -(2**63), 2**63 - 1, 2**64, True, 1.0, "1"]))


@seed(11)
@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(
    dtype=TOOLKIT_DTYPES,
    method=TOOLKIT_METHODS,
    axis=st.one_of(st.none(), TOOLKIT_INTS),
    block_size=TOOLKIT_INTS,
    scale_dtype=TOOLKIT_DTYPES,
    shape=st.lists(st.integers(0, 5), min_size=0, max_size=3),
    which=st.integers(0, 2),
)
def test_toolkit_any_arguments_give_arrays_or_a_qdq_error(dtype, method, axis, block_size, scale_dtype, shape, which):
    x = np.linspace(-3, 3, int(np.prod(shape)), dtype=np.float32).reshape(shape)
    try:
        if which == 0:
            scale, zp = qdq.compute_qparams(x, dtype, method=method, axis=axis, block_size=block_size, scale_dtype=scale_dtype)
            assert isinstance(scale, np.ndarray)
        elif which == 1:
            y, scale, zp = qdq.dynamic_quantize(x, dtype, method=method, axis=axis, block_size=block_size,
                                                scale_dtype=scale_dtype)
            assert y.shape == x.shape
        else:
            y, scale, zp = qdq.dynamic_quantize_linear(x)
            assert y.dtype == np.uint8 and y.shape == x.shape
    except qdq.QdqError as error:
        assert "_qdq" not in str(error), str(error)
