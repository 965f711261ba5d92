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
def directml_quantize_linear(
    x: Any,
    scale: Any,
    zero_point: Any = None,
    *,
    output_dtype: Optional[DTypeLike] = None,
    feature_level: Union[str, int] = "6_2",
    out: Optional[np.ndarray] = None,
) -> np.ndarray: ...
def directml_dequantize_linear(
    x: Any,
    scale: Any,
    zero_point: Any = None,
    *,
    output_dtype: Optional[DTypeLike] = None,
    feature_level: Union[str, int] = "6_2",
    out: Optional[np.ndarray] = None,
) -> np.ndarray: ...
def mx_quantize_dequantize(
    x: Any,
    element_dtype: str = "int8",
    *,
    axis: int = 1,
    block_size: int = 32,
    rounding_mode: int = 0,
    out: Optional[np.ndarray] = None,
) -> np.ndarray: ...
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
) -> np.ndarray: ...
def compute_qparams(
    x: Any,
    dtype: DTypeLike,
    *,
    method: str = "minmax",
    axis: Optional[int] = None,
    block_size: int = 0,
    scale_dtype: DTypeLike = ...,
) -> tuple[np.ndarray, Optional[np.ndarray]]: ...
def dynamic_quantize(
    x: Any,
    dtype: DTypeLike,
    *,
    method: str = "minmax",
    axis: Optional[int] = None,
    block_size: int = 0,
    scale_dtype: DTypeLike = ...,
    out: Optional[np.ndarray] = None,
) -> tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]: ...
def dynamic_quantize_linear(x: Any, *, out: Optional[np.ndarray] = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
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
