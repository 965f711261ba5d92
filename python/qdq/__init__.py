"""qdq: exact linear quantization and dequantization.

Bit-for-bit implementations of ONNX QuantizeLinear / DequantizeLinear (versions 10 to 25), AMD
Quark's ExtendedQuantizeLinear / ExtendedDequantizeLinear (com.amd.quark) and DirectML's
element-wise quantize / dequantize linear. Arrays are numpy arrays; bfloat16, float8, float4,
e8m0 and the 4- and 2-bit integer types use the ml_dtypes dtypes, exactly as onnx.reference does.
Deliberate choices where specification and reference differ: docs/semantics.md.
"""

from __future__ import annotations

import pathlib
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from typing import Any, Optional, Union

import ml_dtypes
import numpy as np


def _load_extension():
    """The compiled module qdq._qdq.

    Imported from a source checkout (python/ first on sys.path, as when Python runs inside
    python/), this directory holds no compiled parts; they are then taken from the installed qdq
    further down sys.path, so `import qdq` works from any directory.
    """
    try:
        from . import _qdq as extension

        return extension
    except ImportError:
        pass
    here = pathlib.Path(__file__).resolve().parent
    for entry in sys.path:
        candidate = pathlib.Path(entry or ".").resolve() / "qdq"
        if candidate != here and any((candidate / f"_qdq{suffix}").is_file() for suffix in EXTENSION_SUFFIXES):
            __path__.append(str(candidate))
            from . import _qdq as extension

            return extension
    raise ImportError(
        f"qdq's compiled extension _qdq is not in {here} nor in an installed qdq on sys.path; "
        "install the package first (pip install . at the repository root)"
    )


_qdq = _load_extension()
QdqError = _qdq.QdqError

__version__: str = _qdq.version  # the compiled library's version (CMakeLists.txt project())

__all__ = [
    "__version__",
    "set_num_threads",
    "num_threads",
    "QdqError",
    "quantize_linear",
    "dequantize_linear",
    "extended_quantize_linear",
    "extended_dequantize_linear",
    "elementwise_quantize_linear",
    "elementwise_dequantize_linear",
    "compute_qparams",
    "dynamic_quantize",
    "dynamic_quantize_linear",
    "directml_quantize_linear",
    "directml_dequantize_linear",
    "quantize_dequantize",
    "extended_quantize_dequantize",
    "dtype_from_code",
    "code_from_dtype",
    "ort_library_path",
    "mx_quantize_dequantize",
    "bfp_quantize_dequantize",
]

QdqError.__doc__ = "An input broke an operator's rule; the message names the value and the rule."
QdqError.__module__ = "qdq"


def _dtype_for(name: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, name)) if hasattr(ml_dtypes, name) else np.dtype(name)


# The element-type table of the C++ core, read once: TensorProto code <-> numpy / ml_dtypes dtype.
_DTYPE_BY_CODE = {code: _dtype_for(name) for code, name, _bits in _qdq.element_types()}
_CODE_BY_DTYPE = {dtype: code for code, dtype in _DTYPE_BY_CODE.items()}
_qdq._register_dtypes(list(_CODE_BY_DTYPE.items()))  # the fast door matches plain arrays' dtypes by identity
_UINT8 = 2
_FLOAT32 = 1

DTypeLike = Union[int, str, np.dtype, type]


def set_num_threads(threads: int) -> None:
    """Sets the threads of qdq's pool for later calls: n in 1..1024 fixes the count, 0 restores
    the default (the QDQ_NUM_THREADS environment variable if set, else the hardware thread count).
    Calls made inside ONNX Runtime use ORT's thread pool instead."""
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or not 0 <= threads <= 1024:
        raise QdqError(f"set_num_threads: threads must be an int from 0 (the default) to 1024, got {threads!r}")
    _qdq._set_num_threads(int(threads))


def num_threads() -> int:
    """The threads qdq's pool uses now (see set_num_threads)."""
    return int(_qdq._num_threads())


_DLPACK_CPU = 1  # DLDeviceType kDLCPU


def _from_dlpack(value: Any, role: str) -> np.ndarray:
    """A numpy view (no copy) of a CPU DLPack tensor, e.g. a torch tensor."""
    device = value.__dlpack_device__() if hasattr(value, "__dlpack_device__") else (_DLPACK_CPU, 0)
    if int(device[0]) != _DLPACK_CPU:
        raise QdqError(f"input '{role}' is on DLPack device {tuple(device)}; qdq runs on the CPU: move it there first")
    try:
        return np.from_dlpack(value)
    except (BufferError, TypeError, ValueError, RuntimeError) as numpy_error:
        # numpy has no bfloat16 / float8 / float4: those are read from the DLPack struct directly.
        from ._dlpack import view_ml_dtypes

        array = view_ml_dtypes(value)
        if array is None:
            raise QdqError(f"input '{role}' cannot be read through DLPack: {numpy_error}") from None
        return array


def ort_library_path() -> str:
    """Path of qdq's ONNX Runtime custom-op library, for SessionOptions.register_custom_ops_library.

    It registers com.amd.quark ExtendedQuantizeLinear / ExtendedDequantizeLinear,
    MXQuantizeDequantize / BFPQuantizeDequantize (also as com.vai.quantize VitisQuantizeLinear /
    VitisDequantizeLinear / MXFixNeuron / BFPFixNeuron) and ai.qdq QuantizeLinear /
    DequantizeLinear with ONNX version 25 semantics.
    """
    path = pathlib.Path(_qdq.__file__).with_name("libqdq_ort.so")
    if not path.exists():
        raise QdqError(f"the ONNX Runtime custom-op library is not installed at {path}")
    return str(path)


def dtype_from_code(code: int) -> np.dtype:
    """The numpy / ml_dtypes dtype of an ONNX TensorProto element type code."""
    try:
        return _DTYPE_BY_CODE[int(code)]
    except KeyError:
        raise QdqError(f"element type code {code} is not a TensorProto type qdq implements") from None


def code_from_dtype(dtype: DTypeLike) -> int:
    """The ONNX TensorProto code of a dtype (an int is taken as a code; 0 means unset)."""
    if isinstance(dtype, (int, np.integer)) and not isinstance(dtype, bool):
        return int(dtype)
    try:
        resolved = np.dtype(dtype)
    except TypeError:
        raise QdqError(f"{dtype!r} is not a dtype or TensorProto code") from None
    try:
        return _CODE_BY_DTYPE[resolved]
    except KeyError:
        raise QdqError(f"dtype {resolved} is not an element type qdq implements") from None


def _as_array(value: Any, role: str, python_int_code: int) -> np.ndarray:
    """An ndarray for an input; Python floats become float32, Python ints the given type."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, np.generic):
        return np.asarray(value)
    if isinstance(value, bool):
        raise QdqError(f"input '{role}' is a bool; expected a number or an array")
    if isinstance(value, int):
        return _python_int_as(value, dtype_from_code(python_int_code), role)
    if isinstance(value, float):
        return _python_float_as_float32(value, role)
    if hasattr(value, "__dlpack__"):
        return _from_dlpack(value, role)
    try:
        return np.asarray(value)
    except Exception as error:  # noqa: BLE001 - any conversion failure is a user input error
        raise QdqError(f"input '{role}' cannot be converted to an array: {error}") from None


# ---------------------------------------------------------------------------------------------
# Argument checks at the Python boundary. Nothing reaches _qdq that it could wrap, truncate or
# coerce (its int64 parameters would take 1.7 as 1 and wrap a Python int into uint8), and every
# refusal is a QdqError naming the public argument, never a TypeError or OverflowError showing
# _qdq's private signature.

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _python_int_as(value: int, dtype: np.dtype, role: str) -> np.ndarray:
    """A 0-D array of `dtype` holding exactly `value`, or a QdqError naming the value and type."""
    try:
        limits = ml_dtypes.iinfo(dtype)
    except ValueError:  # a float type: the value must survive the conversion unchanged
        try:
            with np.errstate(all="ignore"):  # overflow to inf or NaN is caught by the comparison
                converted = np.asarray(float(value)).astype(dtype)
            exact = float(converted) == value
        except OverflowError:
            exact = False
        if not exact:
            raise QdqError(f"input '{role}' is {value}, which {dtype.name} cannot represent exactly") from None
        return converted
    if not int(limits.min) <= value <= int(limits.max):
        raise QdqError(
            f"input '{role}' is {value}, outside the range of {dtype.name} [{int(limits.min)}, {int(limits.max)}]"
        )
    return np.asarray(value).astype(dtype)


def _python_float_as_float32(value: float, role: str) -> np.ndarray:
    """A 0-D float32 array; a finite value beyond float32's range is refused, not made infinite."""
    with np.errstate(over="ignore"):
        converted = np.asarray(value, dtype=np.float32)
    if np.isinf(converted) and np.isfinite(value):
        raise QdqError(f"input '{role}' is {value!r}, outside the range of float32")
    return converted


def _attribute(value: Any, name: str) -> int:
    """An integer attribute as a Python int in the int64 range; bool, float, str, ... are refused."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise QdqError(f"attribute '{name}' is {value!r} ({type(value).__name__}); it must be an integer")
    value = int(value)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise QdqError(f"attribute '{name}' is {value}, outside the int64 range [{_INT64_MIN}, {_INT64_MAX}]")
    return value


def _type_attribute(value: DTypeLike, name: str) -> int:
    """A TensorProto code from a dtype-like attribute (output_dtype, precision), naming it on error."""
    if isinstance(value, (bool, np.bool_, float, np.floating)):
        raise QdqError(f"attribute '{name}' is {value!r} ({type(value).__name__}); it must be a dtype or a code")
    if isinstance(value, (int, np.integer)):
        return _attribute(value, name)
    try:
        return code_from_dtype(value)
    except QdqError as error:
        raise QdqError(f"attribute '{name}': {error}") from None


_DTYPE_HINT = (
    "pass a numpy array of float32, float16, bfloat16, (u)int8/16/32 or an ml_dtypes float8 / float4 / "
    "int4 / int2 dtype, a CPU DLPack tensor of one of those (e.g. a torch tensor), or Python numbers"
)


def _dtype_hint(dtype: np.dtype) -> str:
    # Python lists arrive here as numpy made them: floats as float64, ints as int64.
    if dtype.kind == "f":
        return (
            "no qdq operator takes float64; pass float32, e.g. np.asarray(value, dtype=np.float32) "
            "(or float16 / bfloat16)"
        )
    if dtype.kind in "iu":
        return (
            "pass the integer type the operator takes, e.g. np.asarray(value, dtype=np.int32) for x or "
            "dtype=np.uint8 for a zero point"
        )
    return _DTYPE_HINT


def _tensor(value: Any, role: str, python_int_code: int = _UINT8):
    """(type code, shape, raw bytes) for the extension; raw bytes are numpy's own storage."""
    array = _as_array(value, role, python_int_code)
    shape = list(array.shape)  # before ascontiguousarray, which turns a 0-d array into shape (1,)
    array = np.ascontiguousarray(array)
    code = _CODE_BY_DTYPE.get(array.dtype)
    if code is None:
        raise QdqError(
            f"input '{role}' has dtype {array.dtype}, which is not an element type qdq implements: {_dtype_hint(array.dtype)}"
        )
    return code, shape, array.reshape(-1).view(np.uint8)


def _optional_tensor(value: Any, role: str, python_int_code: int):
    return None if value is None else _tensor(value, role, python_int_code)


def _out_tensor(out: Optional[np.ndarray], shape, *inputs):
    """(type code, writable bytes) of a caller's output array, checked; None for a new array."""
    if out is None:
        return None
    # Checked first: np.may_share_memory converts a non-array (a ragged list raises ValueError).
    if not isinstance(out, np.ndarray):
        raise QdqError(f"out must be a numpy array, not {type(out).__name__}")
    for name, tensor in inputs:
        if tensor is not None and np.may_share_memory(out, tensor[2]):
            raise QdqError(f"out shares memory with input '{name}'; the kernels read inputs while writing out")
    if list(out.shape) != list(shape):
        raise QdqError(f"out has shape {tuple(out.shape)} but the output has x's shape {tuple(shape)}")
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise QdqError("out must be C-contiguous and writeable")
    code = _CODE_BY_DTYPE.get(out.dtype)
    if code is None:
        raise QdqError(f"out has dtype {out.dtype}, which is not an element type qdq implements")
    return code, out.reshape(-1).view(np.uint8)


def _result(raw_and_code, shape, out: Optional[np.ndarray] = None) -> np.ndarray:
    if out is not None:
        return out
    raw, code = raw_and_code
    return raw.view(dtype_from_code(code)).reshape(shape)


def quantize_linear(
    x: Any,
    y_scale: Any,
    y_zero_point: Any = None,
    *,
    axis: int = 1,
    block_size: int = 0,
    saturate: int = 1,
    output_dtype: DTypeLike = 0,
    precision: DTypeLike = 0,
    opset: int = 25,
    out: Optional[np.ndarray] = None,
) -> np.ndarray:
    """ONNX QuantizeLinear: y = saturate(round_half_even(x / y_scale) + y_zero_point).

    Args:
        x: float32, float16, bfloat16 or int32 array.
        y_scale: scalar (per-tensor), 1-D of length x.shape[axis] (per-axis), or x's shape with
            ceil(D_axis / block_size) along `axis` (blocked). A Python float is float32.
        y_zero_point: same shape as y_scale; its dtype selects the output type (uint8 if absent).
            A Python int takes `output_dtype` (or uint8).
        axis, block_size, saturate, output_dtype, precision: the ONNX attributes. output_dtype
            and precision take a TensorProto code or a numpy / ml_dtypes dtype; 0 means unset.
        opset: the ai.onnx opset (10..28); attributes and types are checked against its version.
        out: optional preallocated output: a C-contiguous, writeable array of x's shape and the
            output dtype (every function takes it); it is filled and returned.

    Returns:
        The quantized array (ml_dtypes dtypes for float8 / float4 / 4- and 2-bit types).

    Raises:
        QdqError: an input or attribute breaks the operator's rule (the message says which).
    """
    fast = _qdq._plain_quantize_linear(
        x, y_scale, y_zero_point, axis, block_size, saturate, output_dtype, precision, opset, out
    )
    if fast is not None:  # plain numpy arrays and int attributes: run without Python-level conversion
        return fast
    out_code = _type_attribute(output_dtype, "output_dtype")
    xt = _tensor(x, "x")
    st = _tensor(y_scale, "y_scale")
    zt = _optional_tensor(y_zero_point, "y_zero_point", out_code if out_code in _DTYPE_BY_CODE else _UINT8)
    return _result(
        _qdq.quantize_linear(
            *xt,
            *st,
            zt,
            _attribute(axis, "axis"),
            _attribute(block_size, "block_size"),
            _attribute(saturate, "saturate"),
            out_code,
            _type_attribute(precision, "precision"),
            _attribute(opset, "opset"),
            _out_tensor(out, xt[1], ("x", xt), ("y_scale", st), ("y_zero_point", zt)),
        ),
        xt[1],
        out,
    )


def dequantize_linear(
    x: Any,
    x_scale: Any,
    x_zero_point: Any = None,
    *,
    axis: int = 1,
    block_size: int = 0,
    output_dtype: DTypeLike = 0,
    opset: int = 25,
    out: Optional[np.ndarray] = None,
) -> np.ndarray:
    """ONNX DequantizeLinear: y = (x - x_zero_point) * x_scale.

    Computed in float32 and rounded once to the output type: `output_dtype` if set (float32,
    float16 or bfloat16; required for a float8e8m0 scale), else the scale's type.

    Args:
        x: quantized array (int8/uint8/int16/uint16/int32, 4- and 2-bit, float8, float4).
        x_scale: float32, float16, bfloat16 or float8_e8m0fnu; granularity as in quantize_linear.
        x_zero_point: x's dtype, x_scale's shape; float8/float4 zero points must be 0. A Python
            int takes x's dtype.
        axis, block_size, output_dtype, opset: as in quantize_linear.

    Raises:
        QdqError: an input or attribute breaks the operator's rule.
    """
    fast = _qdq._plain_dequantize_linear(x, x_scale, x_zero_point, axis, block_size, output_dtype, opset, out)
    if fast is not None:
        return fast
    xt = _tensor(x, "x")
    st = _tensor(x_scale, "x_scale")
    zt = _optional_tensor(x_zero_point, "x_zero_point", xt[0])
    return _result(
        _qdq.dequantize_linear(
            *xt,
            *st,
            zt,
            _attribute(axis, "axis"),
            _attribute(block_size, "block_size"),
            _type_attribute(output_dtype, "output_dtype"),
            _attribute(opset, "opset"),
            _out_tensor(out, xt[1], ("x", xt), ("x_scale", st), ("x_zero_point", zt)),
        ),
        xt[1],
        out,
    )


def extended_quantize_linear(
    x: Any, y_scale: Any, y_zero_point: Any, *, axis: int = 1, out: Optional[np.ndarray] = None
) -> np.ndarray:
    """AMD Quark ExtendedQuantizeLinear (com.amd.quark, version 1), as documented.

    y = saturate(round_half_even(x / y_scale) + y_zero_point) for (u)int8/16/32 targets and
    saturate(f32(x / y_scale + y_zero_point)) for float16 / bfloat16 targets (±65504 / ±bf16 max).
    x and y_scale are float32; per-tensor or per-axis. The zero point's dtype is the output type
    (None: uint8).

    Raises:
        QdqError: an input breaks the operator's rule.
    """
    fast = _qdq._plain_extended_quantize_linear(x, y_scale, y_zero_point, axis, out)
    if fast is not None:
        return fast
    xt = _tensor(x, "x")
    st = _tensor(y_scale, "y_scale")
    zt = _optional_tensor(y_zero_point, "y_zero_point", _UINT8)
    return _result(
        _qdq.extended_quantize_linear(
            *xt,
            *st,
            zt,
            _attribute(axis, "axis"),
            _out_tensor(out, xt[1], ("x", xt), ("y_scale", st), ("y_zero_point", zt)),
        ),
        xt[1],
        out,
    )


def extended_dequantize_linear(
    x: Any, x_scale: Any, x_zero_point: Any, *, axis: int = 1, out: Optional[np.ndarray] = None
) -> np.ndarray:
    """AMD Quark ExtendedDequantizeLinear (com.amd.quark, version 1): y = (x - zp) * scale, float32.

    Raises:
        QdqError: an input breaks the operator's rule.
    """
    fast = _qdq._plain_extended_dequantize_linear(x, x_scale, x_zero_point, axis, out)
    if fast is not None:
        return fast
    xt = _tensor(x, "x")
    st = _tensor(x_scale, "x_scale")
    zt = _optional_tensor(x_zero_point, "x_zero_point", xt[0])
    return _result(
        _qdq.extended_dequantize_linear(
            *xt,
            *st,
            zt,
            _attribute(axis, "axis"),
            _out_tensor(out, xt[1], ("x", xt), ("x_scale", st), ("x_zero_point", zt)),
        ),
        xt[1],
        out,
    )


def elementwise_quantize_linear(
    x: Any, scale: Any, zero_point: Any = None, *, out: Optional[np.ndarray] = None
) -> np.ndarray:
    """DirectML element-wise quantize linear: clamp(round_half_even(x / scale) + zero_point).

    scale and zero_point have x's rank (1 to 8), each dimension equal to x's or 1 (broadcast).
    x: float32, float16 or int32; scale: x's dtype (float32 for int32 x); zero_point: int8 or
    uint8 (None: uint8 output, zero point 0).

    Raises:
        QdqError: an input breaks the operator's rule.
    """
    fast = _qdq._plain_elementwise_quantize_linear(x, scale, zero_point, out)
    if fast is not None:
        return fast
    xt = _tensor(x, "x")
    st = _tensor(scale, "scale")
    zt = _optional_tensor(zero_point, "zero_point", _UINT8)
    return _result(
        _qdq.elementwise_quantize_linear(
            *xt, *st, zt, _out_tensor(out, xt[1], ("x", xt), ("scale", st), ("zero_point", zt))
        ),
        xt[1],
        out,
    )


def elementwise_dequantize_linear(
    x: Any, scale: Any, zero_point: Any = None, *, output_dtype: DTypeLike = 0, out: Optional[np.ndarray] = None
) -> np.ndarray:
    """DirectML element-wise dequantize linear: (x - zero_point) * scale, broadcast as above.

    x: (u)int8/16/32; scale: float32 or float16; output_dtype: 0 (the scale's dtype) or the
    scale's dtype.

    Raises:
        QdqError: an input breaks the operator's rule.
    """
    fast = _qdq._plain_elementwise_dequantize_linear(x, scale, zero_point, output_dtype, out)
    if fast is not None:
        return fast
    xt = _tensor(x, "x")
    st = _tensor(scale, "scale")
    zt = _optional_tensor(zero_point, "zero_point", xt[0])
    return _result(
        _qdq.elementwise_dequantize_linear(
            *xt,
            *st,
            zt,
            _type_attribute(output_dtype, "output_dtype"),
            _out_tensor(out, xt[1], ("x", xt), ("scale", st), ("zero_point", zt)),
        ),
        xt[1],
        out,
    )


# ---------------------------------------------------------------------------------------------
# The toolkit: scales from data, dynamic quantization, DynamicQuantizeLinear.

_METHODS = {
    "minmax": 0,
    "symmetric": 1,
    "symmetric_restricted": 2,
    "mx_floor": 3,
    "mx_ceil": 4,
    "mx_even": 5,
    "mx_rceil": 6,
}
_PER_TENSOR, _PER_AXIS, _BLOCKED = 0, 1, 2


def _method(method: str) -> int:
    try:
        return _METHODS[method]
    except (KeyError, TypeError):
        raise QdqError(f"method {method!r} is not one of {', '.join(_METHODS)}") from None


def _toolkit_call(x, dtype, method, axis, block_size, scale_dtype, quantize, out):
    method_code = _METHODS.get(method) if isinstance(method, str) else None
    if method_code is not None:
        # Plain numpy arrays and int attributes: no Python-level conversion (the general path below
        # converts the rest and names every refusal).
        fast = _qdq._plain_toolkit(x, dtype, method_code, axis, block_size, scale_dtype, quantize, out)
        if fast is not None:
            return fast if quantize else fast[1:]
    quantized_code = _type_attribute(dtype, "dtype")
    scale_code = _type_attribute(scale_dtype, "scale_dtype")
    method_code = _method(method)
    block = _attribute(block_size, "block_size")  # an int, or refused by name (never truth-tested)
    if axis is None:
        if block:
            raise QdqError("block_size is set but axis is None; blocked scales need the axis they run along")
        granularity, axis_value = _PER_TENSOR, 1
    else:
        granularity = _BLOCKED if block != 0 else _PER_AXIS
        axis_value = _attribute(axis, "axis")
    xt = _tensor(x, "x")
    quantized_dtype = dtype_from_code(quantized_code)
    integer = "float" not in quantized_dtype.name  # the table's float types all say so (bfloat16 too)
    out_arg = _out_tensor(out, xt[1], ("x", xt)) if quantize else None
    y, scale, zero_point, scale_shape = _qdq.compute_qparams(
        *xt,
        quantized_code,
        scale_code,
        method_code,
        granularity,
        axis_value,
        block,
        integer,
        quantize,
        out_arg,
    )
    scale = scale.view(dtype_from_code(scale_code)).reshape(scale_shape)
    if zero_point is not None:
        zero_point = zero_point.view(quantized_dtype).reshape(scale_shape)
    if not quantize:
        return scale, zero_point
    y = out if out is not None else y.view(quantized_dtype).reshape(xt[1])
    return y, scale, zero_point


def compute_qparams(
    x: Any,
    dtype: DTypeLike,
    *,
    method: str = "minmax",
    axis: Optional[int] = None,
    block_size: int = 0,
    scale_dtype: DTypeLike = np.float32,
):
    """Scales and zero points of x for quantizing to `dtype`, as QuantizeLinear takes them.

    Args:
        x: float32, float16 or bfloat16 array.
        dtype: the quantized type (int8, uint8, int16, uint16, int32, uint32, int4, uint4, int2,
            uint2, float8 types, float4_e2m1fn).
        method: "minmax" (asymmetric, integers), "symmetric" (integers: max|x| / ((qmax - qmin) / 2);
            floats: max|x| / max(dtype)), "symmetric_restricted" (integers: max|x| / qmax, codes
            in [-qmax, qmax]), or the OCP MX shared exponents "mx_floor", "mx_ceil", "mx_even",
            "mx_rceil" (float dtypes; power-of-two scales).
        axis: None for one scale (per-tensor); the axis for per-axis or blocked scales.
        block_size: 0 for per-axis; else elements per block along `axis` (last block may be short).
        scale_dtype: float32, float16, bfloat16, or float8_e8m0fnu (mx_* methods).

    Returns:
        (scale, zero_point): scale of scale_dtype, shaped () per-tensor, (D_axis,) per-axis, x's
        shape with ceil(D_axis / block_size) along axis when blocked; zero_point of `dtype` and the
        same shape for integer dtypes, None for float dtypes. Edge cases (all-zero groups, NaN,
        infinities, ranges the scale type cannot hold) are defined in docs/semantics.md.
    """
    return _toolkit_call(x, dtype, method, axis, block_size, scale_dtype, False, None)


def dynamic_quantize(
    x: Any,
    dtype: DTypeLike,
    *,
    method: str = "minmax",
    axis: Optional[int] = None,
    block_size: int = 0,
    scale_dtype: DTypeLike = np.float32,
    out: Optional[np.ndarray] = None,
):
    """compute_qparams, then QuantizeLinear with those scales, in one call (one pass over x where
    each group is a contiguous stretch, e.g. blocks along the last axis).

    Returns:
        (y, scale, zero_point): y of `dtype` and x's shape (or `out`), and compute_qparams' result.
    """
    return _toolkit_call(x, dtype, method, axis, block_size, scale_dtype, True, out)


def dynamic_quantize_linear(x: Any, *, out: Optional[np.ndarray] = None):
    """ONNX DynamicQuantizeLinear-11 (float32 x -> uint8), bit for bit with onnx.reference.

    Returns:
        (y, y_scale, y_zero_point): uint8 y of x's shape (or `out`), a float32 0-D scale and a
        uint8 0-D zero point.
    """
    fast = _qdq._plain_dynamic_quantize_linear(x, out)
    if fast is not None:  # a plain array (and out): no Python-level conversion
        return fast
    xt = _tensor(x, "x")
    out_arg = _out_tensor(out, xt[1], ("x", xt))
    y, scale, zero_point = _qdq.dynamic_quantize_linear(*xt, out_arg)
    y = out if out is not None else y.view(np.uint8).reshape(xt[1])
    return y, np.array(scale, dtype=np.float32), np.array(zero_point, dtype=np.uint8)


# DirectML operator descriptions (strided numpy arrays, feature levels): qdq/_directml.py.
from ._directml import directml_dequantize_linear, directml_quantize_linear  # noqa: E402


# ----------------------------------------------------------------------------- Quark MX / BFP


def _fake_quantize_operands(x: Any, out: Optional[np.ndarray]):
    """(x as a C-contiguous float32/float16 array, out checked or newly allocated)."""
    array = _as_array(x, "x", _UINT8)
    if array.dtype not in (np.dtype(np.float32), np.dtype(np.float16)):
        raise QdqError(f"input 'x' has dtype {array.dtype}; it must be float32 or float16 ({_dtype_hint(array.dtype)})")
    shape = array.shape
    array = np.ascontiguousarray(array)
    if out is None:
        return array, shape, np.empty(shape, array.dtype)
    if not isinstance(out, np.ndarray):
        raise QdqError(f"out must be a numpy array, not {type(out).__name__}")
    if out.dtype != array.dtype or out.shape != shape:
        raise QdqError(f"out has dtype {out.dtype} and shape {out.shape} but the output has x's: {array.dtype}, {shape}")
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise QdqError("out must be C-contiguous and writeable")
    if np.may_share_memory(out, array) and not (out.ctypes.data == array.ctypes.data):
        raise QdqError("out overlaps x without being x itself")
    return array, shape, out


def mx_quantize_dequantize(
    x: Any,
    element_dtype: str = "int8",
    *,
    axis: int = 1,
    block_size: int = 32,
    rounding_mode: int = 0,
    out: Optional[np.ndarray] = None,
) -> np.ndarray:
    """AMD Quark's com.amd.quark MXQuantizeDequantize, bit for bit with Quark's CPU kernel.

    Each block of `block_size` elements along `axis` (ignored for 1-D x) shares the scale
    2^(E - emax): E the largest float32 exponent in the block (inf and NaN ignored), emax the
    element type's. x / scale is rounded to the element type and multiplied back.

    Args:
        x: float32 or float16 array (float16 is computed in float32 and rounded back).
        element_dtype: "fp8_e5m2", "fp8_e4m3", "fp6_e3m2", "fp6_e2m3", "fp4_e2m1" or "int8".
        axis, block_size, rounding_mode: Quark's attributes (rounding_mode matters for int8 only:
            0 half away from zero, 1 half up, 2 half to even).
        out: optional output array of x's dtype and shape (may be x itself).

    Returns:
        The fake-quantized array, x's dtype and shape. A one-element x is returned unchanged.
    """
    array, shape, result = _fake_quantize_operands(x, out)
    if not isinstance(element_dtype, str):
        raise QdqError(f"attribute 'element_dtype' is {element_dtype!r}; it must be a string")
    _qdq.mx_quantize_dequantize(
        _CODE_BY_DTYPE[array.dtype], list(shape), array.reshape(-1).view(np.uint8), element_dtype,
        _attribute(axis, "axis"), _attribute(block_size, "block_size"), _attribute(rounding_mode, "rounding_mode"),
        result.reshape(-1).view(np.uint8))
    return result


def bfp_quantize_dequantize(
    x: Any,
    bfp_method: str = "to_bfp",
    *,
    axis: int = 1,
    bit_width: int = 16,
    block_size: int = 8,
    rounding_mode: int = 0,
    sub_block_size: int = 2,
    sub_block_shift_bits: int = 1,
    convert_to_bfloat_before_bfp: int = 0,
    use_compiler_version_cpu_kernel: int = 0,
    out: Optional[np.ndarray] = None,
) -> np.ndarray:
    """AMD Quark's com.amd.quark BFPQuantizeDequantize, bit for bit with Quark's CPU kernels.

    Block floating point: each block of `block_size` elements along `axis` shares an 8-bit
    exponent; each element keeps bit_width - 9 mantissa bits. bfp_method "to_bfp" (with
    use_compiler_version_cpu_kernel, the compiler's variant) or "to_bfp_prime" (sub-blocks of
    `sub_block_size` shifted down by up to 2^sub_block_shift_bits - 1 binades).

    Args:
        x: float32 or float16 array.
        The rest: Quark's attributes and defaults (rounding_mode 0 half away from zero, 1 half
            up, 2 half to even; convert_to_bfloat_before_bfp rounds x to bfloat16 first).
        out: optional output array of x's dtype and shape (may be x itself).

    Returns:
        The fake-quantized array, x's dtype and shape.
    """
    array, shape, result = _fake_quantize_operands(x, out)
    if not isinstance(bfp_method, str):
        raise QdqError(f"attribute 'bfp_method' is {bfp_method!r}; it must be a string")
    ints = [_attribute(axis, "axis"), _attribute(bit_width, "bit_width"), _attribute(block_size, "block_size"),
            _attribute(rounding_mode, "rounding_mode"), _attribute(sub_block_size, "sub_block_size"),
            _attribute(sub_block_shift_bits, "sub_block_shift_bits"),
            _attribute(convert_to_bfloat_before_bfp, "convert_to_bfloat_before_bfp"),
            _attribute(use_compiler_version_cpu_kernel, "use_compiler_version_cpu_kernel")]
    _qdq.bfp_quantize_dequantize(_CODE_BY_DTYPE[array.dtype], list(shape), array.reshape(-1).view(np.uint8),
                                 bfp_method, ints, result.reshape(-1).view(np.uint8))
    return result


# Fused fake quantization


def _mask_out_tensor(mask_out: Optional[np.ndarray], shape, *inputs):
    """Writable bytes of a caller's bool mask array, checked; None for a new array."""
    if mask_out is None:
        return None
    if not isinstance(mask_out, np.ndarray) or mask_out.dtype != np.bool_:
        raise QdqError(f"mask_out must be a numpy bool array, not {getattr(mask_out, 'dtype', type(mask_out).__name__)}")
    if list(mask_out.shape) != list(shape):
        raise QdqError(f"mask_out has shape {tuple(mask_out.shape)} but the mask has x's shape {tuple(shape)}")
    if not mask_out.flags.c_contiguous or not mask_out.flags.writeable:
        raise QdqError("mask_out must be C-contiguous and writeable")
    for name, tensor in inputs:
        if tensor is not None and np.may_share_memory(mask_out, tensor[2]):
            raise QdqError(f"mask_out shares memory with input '{name}'")
    return mask_out.reshape(-1).view(np.uint8)


def _fake_quant_result(raw, shape, out, return_mask, mask_out):
    y_raw, y_code, mask_raw = raw
    y = out if out is not None else y_raw.view(dtype_from_code(y_code)).reshape(shape)
    if not return_mask:
        return y
    mask = mask_out if mask_out is not None else mask_raw.view(np.bool_).reshape(shape)
    return y, mask


def _fake_quant_outputs(out, mask_out, return_mask, shape, *inputs):
    out_tensor = _out_tensor(out, shape, *inputs)
    if mask_out is not None and not return_mask:
        raise QdqError("mask_out is given but return_mask is False; pass return_mask=True to fill it")
    if out is not None and mask_out is not None and np.may_share_memory(out, mask_out):
        raise QdqError("out and mask_out share memory")
    out_code, out_bytes = out_tensor if out_tensor is not None else (0, None)
    return out_code, out_bytes, _mask_out_tensor(mask_out, shape, *inputs)


def quantize_dequantize(
    x: Any,
    scale: Any,
    zero_point: Any = None,
    *,
    axis: int = 1,
    block_size: int = 0,
    saturate: int = 1,
    quantized_dtype: DTypeLike = 0,
    precision: DTypeLike = 0,
    output_dtype: DTypeLike = 0,
    opset: int = 25,
    out: Optional[np.ndarray] = None,
    return_mask: bool = False,
    mask_out: Optional[np.ndarray] = None,
):
    """Fake quantization: DequantizeLinear(QuantizeLinear(x)) in one pass, bit-identical to the two.

    The codes never exist as an array. Every input and attribute is checked against both ONNX
    operators (at `opset`), with their messages.

    Args:
        x: float32, float16, bfloat16 or int32 array.
        scale, zero_point: as y_scale / y_zero_point of quantize_linear (and x_scale /
            x_zero_point of dequantize_linear); the zero point's dtype is the codes' type.
        axis, block_size, saturate, precision: QuantizeLinear's attributes (and DequantizeLinear's
            axis / block_size).
        quantized_dtype: QuantizeLinear's output_dtype, the codes' type (0: the zero point's
            dtype, else uint8). A Python int zero point takes it.
        output_dtype: y's dtype (float32, float16 or bfloat16); 0: x's dtype, float32 for int32
            x. Before opset 23 y has the scale's dtype, which is that default.
        out: optional preallocated y (x's shape, y's dtype, C-contiguous, writeable).
        return_mask: also return the straight-through mask: a bool array of x's shape, True
            where x / scale (as QuantizeLinear computes it) rounds into the codes' range before
            any clamp (integers: lowest <= round(x / scale) + zero_point <= max; floats: to a
            finite value), False elsewhere and for NaN.
        mask_out: optional preallocated bool mask (needs return_mask=True).

    Returns:
        y, or (y, mask) with return_mask.

    Raises:
        QdqError: an input or attribute breaks either operator's rule.
    """
    if not return_mask and mask_out is None:
        fast = _qdq._plain_quantize_dequantize(
            x, scale, zero_point, axis, block_size, saturate, quantized_dtype, precision, output_dtype, opset, out
        )
        if fast is not None:
            return fast
    codes_code = _type_attribute(quantized_dtype, "quantized_dtype")
    xt = _tensor(x, "x")
    st = _tensor(scale, "scale")
    zt = _optional_tensor(zero_point, "zero_point", codes_code if codes_code in _DTYPE_BY_CODE else _UINT8)
    out_code, out_bytes, mask_bytes = _fake_quant_outputs(
        out, mask_out, return_mask, xt[1], ("x", xt), ("scale", st), ("zero_point", zt)
    )
    raw = _qdq.quantize_dequantize(
        xt,
        st,
        zt,
        _attribute(axis, "axis"),
        _attribute(block_size, "block_size"),
        _attribute(saturate, "saturate"),
        codes_code,
        _type_attribute(precision, "precision"),
        _type_attribute(output_dtype, "output_dtype"),
        _attribute(opset, "opset"),
        out_code,
        out_bytes,
        bool(return_mask),
        mask_bytes,
    )
    return _fake_quant_result(raw, xt[1], out, return_mask, mask_out)


def extended_quantize_dequantize(
    x: Any,
    scale: Any,
    zero_point: Any = None,
    *,
    axis: int = 1,
    out: Optional[np.ndarray] = None,
    return_mask: bool = False,
    mask_out: Optional[np.ndarray] = None,
):
    """AMD Quark ExtendedQuantizeLinear then ExtendedDequantizeLinear in one pass (y float32).

    As quantize_dequantize; the zero point's dtype is the codes' type (None: uint8). The mask
    covers every code type but int32 / uint32.
    """
    if not return_mask and mask_out is None:
        fast = _qdq._plain_extended_quantize_dequantize(x, scale, zero_point, axis, out)
        if fast is not None:
            return fast
    xt = _tensor(x, "x")
    st = _tensor(scale, "scale")
    zt = _optional_tensor(zero_point, "zero_point", _UINT8)
    out_code, out_bytes, mask_bytes = _fake_quant_outputs(
        out, mask_out, return_mask, xt[1], ("x", xt), ("scale", st), ("zero_point", zt)
    )
    raw = _qdq.extended_quantize_dequantize(
        xt, st, zt, _attribute(axis, "axis"), out_code, out_bytes, bool(return_mask), mask_bytes
    )
    return _fake_quant_result(raw, xt[1], out, return_mask, mask_out)
