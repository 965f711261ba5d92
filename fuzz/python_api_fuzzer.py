"""atheris target over the qdq Python package's public functions.

Each input decodes into one call with arguments of any kind: arrays of every dtype qdq knows (and
some it does not) with random shapes and bytes, Python ints of any size, floats, bools, strings,
None, nested lists. A Q/DQ call must return an ndarray of x's shape, a toolkit call (compute_qparams,
dynamic_quantize, dynamic_quantize_linear) its tuple of arrays (y of x's shape), or either must
raise qdq.QdqError whose message names no private _qdq detail; any other exception is a finding
(atheris saves the input).

Run by scripts/fuzz.sh: .venv/bin/python fuzz/python_api_fuzzer.py [libFuzzer flags] CORPUS...
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports(include=["qdq"]):
    import qdq

import ml_dtypes
import numpy as np

DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16, np.int32, np.uint32, np.int16, np.uint16, np.int8, np.uint8,
          ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.int2, ml_dtypes.uint2, ml_dtypes.float8_e4m3fn,
          ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2fnuz, ml_dtypes.float4_e2m1fn,
          ml_dtypes.float8_e8m0fnu, np.float64, np.int64, np.bool_, np.complex64]

FUNCTIONS = [
    (qdq.quantize_linear, ["axis", "block_size", "saturate", "output_dtype", "precision", "opset"]),
    (qdq.dequantize_linear, ["axis", "block_size", "output_dtype", "opset"]),
    (qdq.extended_quantize_linear, ["axis"]),
    (qdq.extended_dequantize_linear, ["axis"]),
    (qdq.elementwise_quantize_linear, []),
    (qdq.elementwise_dequantize_linear, ["output_dtype"]),
]


def array(fdp: atheris.FuzzedDataProvider, x_shape=None) -> np.ndarray:
    dtype = np.dtype(DTYPES[fdp.ConsumeIntInRange(0, len(DTYPES) - 1)])
    if x_shape is not None and fdp.ConsumeBool():
        shape = tuple(x_shape)  # x's shape or a per-axis / blocked / broadcast cousin of it
        if shape and fdp.ConsumeBool():
            axis = fdp.ConsumeIntInRange(0, len(shape) - 1)
            shape = (shape[axis],) if fdp.ConsumeBool() else shape[:axis] + (max(1, shape[axis] // 2),) + shape[axis + 1:]
    else:
        shape = tuple(fdp.ConsumeIntInRange(0, 6) for _ in range(fdp.ConsumeIntInRange(0, 3)))
    count = int(np.prod(shape, dtype=np.int64))
    raw = fdp.ConsumeBytes(count * dtype.itemsize)
    raw += bytes(count * dtype.itemsize - len(raw))
    return np.frombuffer(raw, dtype=np.uint8).view(dtype).reshape(shape) if count else np.zeros(shape, dtype)


def value(fdp: atheris.FuzzedDataProvider, x_shape=None):
    kind = fdp.ConsumeIntInRange(0, 9)
    if kind <= 3:
        return array(fdp, x_shape)
    if kind == 4:
        return fdp.ConsumeIntInRange(-300, 300)
    if kind == 5:
        return fdp.ConsumeInt(fdp.ConsumeIntInRange(1, 12))  # up to 96-bit ints
    if kind == 6:
        return fdp.ConsumeFloat()
    if kind == 7:
        return [None, True, False, "1", "float32", b"x", [1, [2]], object()][fdp.ConsumeIntInRange(0, 7)]
    if kind == 8:
        return np.dtype(DTYPES[fdp.ConsumeIntInRange(0, len(DTYPES) - 1)]).type(0)
    return None


def attribute(fdp: atheris.FuzzedDataProvider):
    kind = fdp.ConsumeIntInRange(0, 5)
    if kind <= 2:
        return fdp.ConsumeIntInRange(-4, 30)
    if kind == 3:
        return fdp.ConsumeInt(fdp.ConsumeIntInRange(1, 10))
    return value(fdp)


REFUSED = object()


def call(function, args, kwargs):
    """The call's result, or REFUSED when it raised a QdqError that names no private detail."""
    try:
        return function(*args, **kwargs)
    except qdq.QdqError as error:
        if "_qdq" in str(error) or "incompatible function arguments" in str(error):
            raise AssertionError(f"QdqError shows a private detail: {error}") from None
        return REFUSED


# The toolkit: (function, keyword names, whether y comes first in the result).
TOOLKIT = [
    (qdq.compute_qparams, ["method", "axis", "block_size", "scale_dtype"], False),
    (qdq.dynamic_quantize, ["method", "axis", "block_size", "scale_dtype", "out"], True),
    (qdq.dynamic_quantize_linear, ["out"], True),
]
METHODS = ["minmax", "symmetric", "symmetric_restricted", "mx_floor", "mx_ceil", "mx_even", "mx_rceil"]


def toolkit_call(fdp: atheris.FuzzedDataProvider) -> None:
    function, names, returns_y = TOOLKIT[fdp.ConsumeIntInRange(0, len(TOOLKIT) - 1)]
    x = value(fdp)
    x_shape = x.shape if isinstance(x, np.ndarray) else None
    args = [x] if function is qdq.dynamic_quantize_linear else [x, attribute(fdp)]
    kwargs = {}
    for name in names:
        if fdp.ConsumeIntInRange(0, 2) != 0:
            continue
        if name == "method" and fdp.ConsumeBool():
            kwargs[name] = METHODS[fdp.ConsumeIntInRange(0, len(METHODS) - 1)]
        elif name == "out":
            kwargs[name] = value(fdp, x_shape)
        else:
            kwargs[name] = attribute(fdp)
    result = call(function, args, kwargs)
    if result is REFUSED:
        return
    if not isinstance(result, tuple) or not all(r is None or isinstance(r, np.ndarray) for r in result):
        raise AssertionError(f"{function.__name__} returned {type(result)}")
    if returns_y and isinstance(x, np.ndarray) and result[0].shape != x.shape:
        raise AssertionError(f"{function.__name__} returned y of shape {result[0].shape} for x of {x.shape}")


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    if fdp.ConsumeIntInRange(0, 3) == 0:
        toolkit_call(fdp)
        return
    function, names = FUNCTIONS[fdp.ConsumeIntInRange(0, len(FUNCTIONS) - 1)]
    x = value(fdp)
    x_shape = x.shape if isinstance(x, np.ndarray) else None
    args = [x, value(fdp, x_shape), value(fdp, x_shape) if fdp.ConsumeBool() else None]
    kwargs = {name: attribute(fdp) for name in names if fdp.ConsumeIntInRange(0, 3) == 0}
    result = call(function, args, kwargs)
    if result is REFUSED:
        return
    if not isinstance(result, np.ndarray) or (isinstance(x, np.ndarray) and result.shape != x.shape):
        raise AssertionError(f"{function.__name__} returned {type(result)} of the wrong shape")


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
