"""DirectML operator descriptions from numpy arrays (qdq.directml_quantize_linear and
qdq.directml_dequantize_linear).

Each array is one DML_BUFFER_TENSOR_DESC with numpy's own strides: every tensor has x's shape
(DirectML's "same DimensionCount and Sizes"), and a scale or zero point repeats along a dimension
by a 0-stride, which is what np.broadcast_to makes. `out` may be a strided view (a slice of a
padded buffer, a transpose); only the elements it addresses are written.
"""

from __future__ import annotations

from typing import Any, Optional, Union

import numpy as np

from . import _CODE_BY_DTYPE, _UINT8, QdqError, _as_array, _attribute, _qdq, code_from_dtype

FeatureLevel = Union[str, int]
DEFAULT_FEATURE_LEVEL = "6_2"  # the highest level the operators' tables name


def _feature_level(value: FeatureLevel) -> int:
    if isinstance(value, str):
        return int(_qdq._dml_feature_level(value))
    return _attribute(value, "feature_level")  # DirectML's value, e.g. 0x6200


def _described(value: Any, role: str, python_int_code: int = _UINT8):
    """(array with its own strides, type code); a non-array is converted as the other doors do."""
    array = _as_array(value, role, python_int_code)
    code = _CODE_BY_DTYPE.get(array.dtype)
    if code is None:
        raise QdqError(f"{role} has dtype {array.dtype}, which no DirectML tensor of qdq's takes")
    return array, code


def _output(out: Optional[np.ndarray], shape, dtype: np.dtype, inputs) -> np.ndarray:
    if out is None:
        return np.empty(shape, dtype=dtype)
    if not isinstance(out, np.ndarray):
        raise QdqError(f"out must be a numpy array, not {type(out).__name__}")
    if not out.flags.writeable:
        raise QdqError("out must be writeable")
    for role, array in inputs:
        if array is not None and np.may_share_memory(out, array):
            raise QdqError(f"out shares memory with {role}; the kernels read inputs while writing out")
    return out


def _run(quantize: bool, x, scale, zero_point, output_dtype, feature_level, out) -> np.ndarray:
    level = _feature_level(feature_level)
    xa, x_code = _described(x, "InputTensor")
    sa, s_code = _described(scale, "ScaleTensor")
    zp = None
    if zero_point is not None:
        int_code = (code_from_dtype(output_dtype) if output_dtype is not None else _UINT8) if quantize else x_code
        zp = _described(zero_point, "ZeroPointTensor", int_code)
    if out is not None:
        dtype = out.dtype if isinstance(out, np.ndarray) else None
    elif output_dtype is not None:
        dtype = np.dtype(output_dtype)
    elif quantize:
        dtype = zp[0].dtype if zp is not None else np.dtype(np.uint8)
    else:
        dtype = sa.dtype
    result = _output(out, xa.shape, dtype, [("InputTensor", xa), ("ScaleTensor", sa), ("ZeroPointTensor", zp and zp[0])])
    out_code = _CODE_BY_DTYPE.get(result.dtype)
    if out_code is None:
        raise QdqError(f"OutputTensor has dtype {result.dtype}, which no DirectML tensor of qdq's takes")
    _qdq.directml(quantize, xa, x_code, sa, s_code, zp, result, out_code, level)
    return result


def directml_quantize_linear(
    x: Any,
    scale: Any,
    zero_point: Any = None,
    *,
    output_dtype: Any = None,
    feature_level: FeatureLevel = DEFAULT_FEATURE_LEVEL,
    out: Optional[np.ndarray] = None,
) -> np.ndarray:
    """DML_ELEMENT_WISE_QUANTIZE_LINEAR as DirectML describes it, checked at `feature_level`.

    Args:
        x: float32, float16 or int32 array (any non-negative strides).
        scale, zero_point: arrays of x's shape, e.g. np.broadcast_to(per_channel[:, None], x.shape)
            (0-strides repeat). zero_point may be None from feature level 6_2.
        output_dtype: int8 or uint8; default: the zero point's dtype (uint8 without one), or out's.
        feature_level: "6_2", "6.2", "DML_FEATURE_LEVEL_6_2" or DirectML's value (0x6200).
        out: optional output array of x's shape, possibly a strided view.

    Raises:
        QdqError: the description breaks a rule at that feature level; the message names the
            tensor, the value, the rule and the lowest feature level that accepts it.
    """
    return _run(True, x, scale, zero_point, output_dtype, feature_level, out)


def directml_dequantize_linear(
    x: Any,
    scale: Any,
    zero_point: Any = None,
    *,
    output_dtype: Any = None,
    feature_level: FeatureLevel = DEFAULT_FEATURE_LEVEL,
    out: Optional[np.ndarray] = None,
) -> np.ndarray:
    """DML_ELEMENT_WISE_DEQUANTIZE_LINEAR as DirectML describes it, checked at `feature_level`.

    Args:
        x: (u)int8/16/32 array (any non-negative strides).
        scale: float32 or float16 array of x's shape; zero_point: x's dtype and shape (None from
            6_2). 0-strides repeat, as np.broadcast_to makes them.
        output_dtype: the scale's dtype (the default), or out's.
        feature_level, out: as in directml_quantize_linear.

    Raises:
        QdqError: the description breaks a rule at that feature level; the message names the
            tensor, the value, the rule and the lowest feature level that accepts it.
    """
    return _run(False, x, scale, zero_point, output_dtype, feature_level, out)
