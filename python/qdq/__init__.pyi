from typing import Any, Optional, Tuple, Union

import numpy as np

DTypeLike = Union[int, str, np.dtype, type]

__version__: str

class QdqError(ValueError): ...

def set_num_threads(threads: int) -> None: ...
def num_threads() -> int: ...

def ort_library_path() -> str: ...
def dtype_from_code(code: int) -> np.dtype: ...
def code_from_dtype(dtype: DTypeLike) -> int: ...
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
) -> np.ndarray: ...
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
) -> np.ndarray: ...
def extended_quantize_linear(
    x: Any, y_scale: Any, y_zero_point: Any, *, axis: int = 1, out: Optional[np.ndarray] = None
) -> np.ndarray: ...
def extended_dequantize_linear(
    x: Any, x_scale: Any, x_zero_point: Any, *, axis: int = 1, out: Optional[np.ndarray] = None
) -> np.ndarray: ...
def elementwise_quantize_linear(
    x: Any, scale: Any, zero_point: Any = None, *, out: Optional[np.ndarray] = None
) -> np.ndarray: ...
def elementwise_dequantize_linear(
    x: Any, scale: Any, zero_point: Any = None, *, output_dtype: DTypeLike = 0, out: Optional[np.ndarray] = None
) -> np.ndarray: ...
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
) -> Union[np.ndarray, Tuple[np.ndarray, np.ndarray]]: ...
def extended_quantize_dequantize(
    x: Any,
    scale: Any,
    zero_point: Any = None,
    *,
    axis: int = 1,
    out: Optional[np.ndarray] = None,
    return_mask: bool = False,
    mask_out: Optional[np.ndarray] = None,
) -> Union[np.ndarray, Tuple[np.ndarray, np.ndarray]]: ...
