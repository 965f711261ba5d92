"""qdq.quantize_dequantize (fused fake quantization) against its independent oracles.

1. onnx.reference: QuantizeLinear then DequantizeLinear (opset 25) as a two-node model, bit for
   bit, for every quantized type, granularity (per-tensor, per-axis first / middle / last, blocked
   with a partial last block), precision and saturate, on inputs where docs/semantics.md declares
   no divergence from the reference (x and scale of one type, no NaN or infinity into integers,
   no NaN into float4).
2. qdq's own two calls composed, on every input (NaN, infinities, huge values included).
3. The straight-through mask against a numpy transcription of its definition.
The seed is fixed (SEED) and printed in failure messages.
"""

from __future__ import annotations

import ml_dtypes as md
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import qdq  # noqa: E402

SEED = 20261122

CODES = {
    "uint8": np.uint8, "int8": np.int8, "uint16": np.uint16, "int16": np.int16,
    "uint4": md.uint4, "int4": md.int4, "uint2": md.uint2, "int2": md.int2,
    "float8_e4m3fn": md.float8_e4m3fn, "float8_e4m3fnuz": md.float8_e4m3fnuz,
    "float8_e5m2": md.float8_e5m2, "float8_e5m2fnuz": md.float8_e5m2fnuz, "float4_e2m1fn": md.float4_e2m1fn,
}
X_TYPES = {"float32": np.float32, "float16": np.float16, "bfloat16": md.bfloat16}

# (name, x shape, scale shape, axis, block_size)
GRANULARITIES = [
    ("per-tensor", (3, 4, 37), (), 1, 0),
    ("per-axis first", (3, 4, 37), (3,), 0, 0),
    ("per-axis middle", (3, 4, 37), (4,), 1, 0),
    ("per-axis last", (3, 4, 37), (37,), 2, 0),
    ("blocked last (8 of 37)", (3, 4, 37), (3, 4, 5), 2, 8),
    ("blocked first (2 of 3)", (3, 4, 37), (2, 4, 37), 0, 2),
]


def code_of(dtype) -> int:
    return qdq.code_from_dtype(np.dtype(dtype))


def is_float(dtype) -> bool:
    return np.dtype(dtype).kind == "V" or np.issubdtype(np.dtype(dtype), np.floating) or dtype in (
        md.float8_e4m3fn, md.float8_e4m3fnuz, md.float8_e5m2, md.float8_e5m2fnuz, md.float4_e2m1fn)


def integer_code(dtype) -> bool:
    try:
        md.iinfo(dtype)
        return True
    except ValueError:
        return False


def inputs(rng, x_dtype, scale_shape, x_shape, code_dtype, specials: bool):
    """x: half-integers times powers of two (exact ties), some beyond the codes' range; scale:
    powers of two and arbitrary values from 0.05 (|q| stays below float16's max, so a float16
    division never overflows into the reference's documented inf quirk); integer zero points
    anywhere in range."""
    halves = rng.integers(-300, 301, size=x_shape) + 0.5
    x = (halves * np.exp2(rng.integers(-8, 4, size=x_shape))).astype(np.float32)
    if specials:
        flat = x.reshape(-1)
        picks = rng.choice(flat.size, size=min(12, flat.size), replace=False)
        flat[picks] = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 3e38, -3e38, 1e-40, 65520.0, 7.0, -7.0],
                               np.float32)[: len(picks)]
    x = x.astype(x_dtype)
    scale = np.where(rng.random(scale_shape) < 0.5, np.exp2(rng.integers(-4, 3, size=scale_shape)),
                     rng.uniform(0.05, 2.0, size=scale_shape)).astype(np.float32).astype(x_dtype)
    if integer_code(code_dtype):
        info = md.iinfo(code_dtype)
        zero_point = rng.integers(int(info.min), int(info.max) + 1, size=scale_shape).astype(code_dtype)
    else:
        zero_point = np.zeros(scale_shape, np.float32).astype(code_dtype)
    return x, np.asarray(scale), np.asarray(zero_point)


def reference_composed(x, scale, zero_point, axis, block_size, saturate, precision, code_dtype):
    """QuantizeLinear-25 then DequantizeLinear-25 (y as x's type) in onnx.reference."""
    y_type = code_of(x.dtype)
    q_attrs = {"axis": axis, "block_size": block_size}
    if is_float(code_dtype) and np.dtype(code_dtype).itemsize == 1 and not integer_code(code_dtype):
        q_attrs["saturate"] = saturate
    if precision:
        q_attrs["precision"] = precision
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"], **q_attrs),
        helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["y"], axis=axis, block_size=block_size,
                         output_dtype=y_type),
    ]
    graph = helper.make_graph(
        nodes, "fake_quant",
        [helper.make_tensor_value_info("x", code_of(x.dtype), list(x.shape)),
         helper.make_tensor_value_info("s", code_of(scale.dtype), list(scale.shape)),
         helper.make_tensor_value_info("zp", code_of(zero_point.dtype), list(zero_point.shape))],
        [helper.make_tensor_value_info("y", y_type, list(x.shape))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)], ir_version=11)
    return ReferenceEvaluator(model).run(None, {"x": x, "s": scale, "zp": zero_point})[0]


def bits(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array).view(np.uint8)


@pytest.mark.parametrize("code_name", list(CODES))
@pytest.mark.parametrize("x_name", list(X_TYPES))
def test_fused_equals_onnx_reference_composed(code_name, x_name):
    code_dtype, x_dtype = CODES[code_name], X_TYPES[x_name]
    rng = np.random.default_rng([SEED, list(CODES).index(code_name), list(X_TYPES).index(x_name)])
    compared = 0
    for name, x_shape, scale_shape, axis, block_size in GRANULARITIES:
        for precision in (0, TP.FLOAT16, TP.BFLOAT16):
            saturates = (1, 0) if np.dtype(code_dtype).itemsize == 1 and not integer_code(code_dtype) and \
                code_dtype is not md.float4_e2m1fn else (1,)
            for saturate in saturates:
                x, scale, zp = inputs(rng, x_dtype, scale_shape, x_shape, code_dtype, specials=False)
                want = reference_composed(x, scale, zp, axis, block_size, saturate, precision, code_dtype)
                got = qdq.quantize_dequantize(x, scale, zp, axis=axis, block_size=block_size, saturate=saturate,
                                              precision=precision)
                assert got.dtype == want.dtype == x.dtype
                np.testing.assert_array_equal(
                    bits(got), bits(want),
                    err_msg=f"seed {SEED}: {x_name} -> {code_name} {name} precision {precision} saturate {saturate}")
                compared += got.size
    assert compared > 0


@pytest.mark.parametrize("code_name", list(CODES))
def test_fused_equals_qdq_composed_and_the_mask_its_definition(code_name):
    code_dtype = CODES[code_name]
    rng = np.random.default_rng([SEED, 99, list(CODES).index(code_name)])
    for name, x_shape, scale_shape, axis, block_size in GRANULARITIES:
        x, scale, zp = inputs(rng, np.float32, scale_shape, x_shape, code_dtype, specials=True)
        codes = qdq.quantize_linear(x, scale, zp, axis=axis, block_size=block_size)
        composed = qdq.dequantize_linear(codes, scale, zp, axis=axis, block_size=block_size, output_dtype=np.float32)
        y, mask = qdq.quantize_dequantize(x, scale, zp, axis=axis, block_size=block_size, return_mask=True)
        np.testing.assert_array_equal(bits(y), bits(composed), err_msg=f"seed {SEED}: {code_name} {name}")
        assert mask.dtype == np.bool_ and mask.shape == x.shape

        # The mask's definition, transcribed: q = x / scale in float32 (scale broadcast per granularity).
        s = np.asarray(scale, np.float32)
        z = np.asarray(zp).astype(np.float64)
        if scale_shape == ():
            s_full, z_full = np.broadcast_to(s, x_shape), np.broadcast_to(z, x_shape)
        elif block_size:
            s_full = np.repeat(s, block_size, axis=axis).take(range(x_shape[axis]), axis=axis)
            z_full = np.repeat(z, block_size, axis=axis).take(range(x_shape[axis]), axis=axis)
        else:
            view = [1] * len(x_shape)
            view[axis] = -1
            s_full, z_full = s.reshape(view), z.reshape(view)
        with np.errstate(all="ignore"):
            q = (x / s_full).astype(np.float64)
            if integer_code(code_dtype):
                info = md.iinfo(code_dtype)
                r = np.rint(q) + z_full
                want = ~np.isnan(q) & (r >= int(info.min)) & (r <= int(info.max))
            else:
                finfo = md.finfo(code_dtype)
                mantissa_bits = int(finfo.nmant)
                fraction, exponent = np.frexp(np.abs(q))
                rounded = np.ldexp(np.rint(np.ldexp(fraction, mantissa_bits + 1)), exponent - mantissa_bits - 1)
                rounded = np.where(np.isfinite(q), rounded, np.abs(q))
                want = ~np.isnan(q) & (rounded <= float(finfo.max))
        np.testing.assert_array_equal(mask, np.broadcast_to(want, x_shape), err_msg=f"seed {SEED}: {code_name} {name}")
        assert mask.any() and not mask.all()


def test_defaults_out_and_errors():
    x = np.array([[1.0, -2.0, 300.0, np.nan]], np.float32)
    y = qdq.quantize_dequantize(x, np.float32(1.0))  # uint8 codes
    np.testing.assert_array_equal(y, np.array([[1.0, 0.0, 255.0, 0.0]], np.float32))
    # y's dtype follows x (bfloat16), or output_dtype.
    xb = x.astype(md.bfloat16)
    assert qdq.quantize_dequantize(xb, md.bfloat16(1.0)).dtype == md.bfloat16
    assert qdq.quantize_dequantize(xb, md.bfloat16(1.0), output_dtype=np.float32).dtype == np.float32
    out = np.empty_like(x)
    mask_out = np.ones(x.shape, np.bool_)
    got, mask = qdq.quantize_dequantize(x, np.float32(1.0), np.int8(0), out=out, return_mask=True, mask_out=mask_out)
    assert got is out and mask is mask_out
    np.testing.assert_array_equal(mask, [[True, True, False, False]])
    with pytest.raises(qdq.QdqError, match="DequantizeLinear-25"):  # float4 zero point 1.0: DQ refuses it
        qdq.quantize_dequantize(x, np.float32(1.0), md.float4_e2m1fn(1.0))
    with pytest.raises(qdq.QdqError, match="needs opset 23"):
        qdq.quantize_dequantize(x, np.float32(1.0), output_dtype=np.float16, opset=21)
    with pytest.raises(qdq.QdqError, match="out has dtype float16"):
        qdq.quantize_dequantize(x, np.float32(1.0), out=np.empty(x.shape, np.float16))
    with pytest.raises(qdq.QdqError, match="return_mask"):
        qdq.quantize_dequantize(x, np.float32(1.0), mask_out=mask_out)
    with pytest.raises(qdq.QdqError, match="bool"):
        qdq.quantize_dequantize(x, np.float32(1.0), return_mask=True, mask_out=np.zeros(x.shape, np.uint8))


def test_extended_pair():
    rng = np.random.default_rng(SEED)
    x = (rng.standard_normal((4, 33)) * 500).astype(np.float32)
    scale = np.float32(0.5)
    for zp in (np.int8(3), np.uint16(700), np.int32(-5), np.float16(2.5)):
        codes = qdq.extended_quantize_linear(x, scale, zp)
        composed = qdq.extended_dequantize_linear(codes, scale, zp)
        np.testing.assert_array_equal(bits(qdq.extended_quantize_dequantize(x, scale, zp)), bits(composed))
    with pytest.raises(qdq.QdqError, match="no straight-through mask for int32"):
        qdq.extended_quantize_dequantize(x, scale, np.int32(0), return_mask=True)
