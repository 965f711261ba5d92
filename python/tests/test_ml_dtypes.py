"""qdq's float8 / float4 conversions against ml_dtypes' own astype, bit for bit.

QuantizeLinear with scale 1.0 is a pure rounding float -> small float, so ml_dtypes' astype is
the oracle (it is what onnx.reference uses). ml_dtypes never saturates; for saturate=1 the
oracle is np.clip(x, -max, max).astype(T), which is what onnx.reference computes.

Documented divergence (docs/semantics.md, "QuantizeLinear: float4e2m1 outputs"): qdq sends NaN
of either sign to +6 (0x7); ml_dtypes gives a sign-inverted zero. Those inputs are asserted
against qdq's documented value instead.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import qdq
from _helpers import E8M0, FLOAT4, FLOAT8_TYPES, SMALL_FLOAT_TYPES, assert_bits_equal, codes, finite_max, name

F32 = np.float32

# Overflowing products (scale 1e30, e8m0 2^127) are intended; numpy warns about them.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
FLOAT4_NAN_CODE = 0x7  # docs/semantics.md: float4 NaN -> +6


def _oracle(x: np.ndarray, dtype, saturate: int) -> np.ndarray:
    """ml_dtypes' rounding of x (float32, float16 or bfloat16) to dtype, with qdq's documented NaN rule."""
    wide = x.astype(F32)  # exact for float16 / bfloat16
    clip = dtype is FLOAT4 or saturate == 1
    if clip:
        m = F32(finite_max(dtype))
        wide = np.clip(wide, -m, m)  # NaN passes through, as in onnx.reference
    want = wide.astype(dtype)
    if dtype is FLOAT4:
        want = want.copy()
        want.view(np.uint8)[np.isnan(wide)] = FLOAT4_NAN_CODE
    return want


def _quantize(x: np.ndarray, dtype, saturate: int) -> np.ndarray:
    one = np.ones((), dtype=x.dtype)
    return qdq.quantize_linear(x, one, output_dtype=dtype, saturate=saturate)


def _saturate_values(dtype):
    # float4 ignores saturate (always saturating); run it once.
    return [1] if dtype is FLOAT4 else [0, 1]


CASES = [(t, s) for t in SMALL_FLOAT_TYPES for s in _saturate_values(t)]
CASE_IDS = [f"{name(t)}-sat{s}" for t, s in CASES]


def _boundary_points(dtype) -> np.ndarray:
    """Every representable value, every midpoint between neighbours and one float32 ulp either side,
    the overflow midpoint past max, both signs, plus zeros, infinities, NaNs and float32 subnormals."""
    values = codes(dtype).astype(F32)
    finite = np.unique(values[np.isfinite(values)].astype(np.float64))  # sorted, -0 merged with +0
    step_at_max = finite[-1] - finite[-2]
    finite = np.concatenate([finite, [finite[-1] + step_at_max, -finite[-1] - step_at_max]])
    finite = np.unique(finite)
    mids = ((finite[:-1] + finite[1:]) / 2).astype(F32)
    assert np.all(mids.astype(np.float64) == (finite[:-1] + finite[1:]) / 2), "midpoints must be exact"
    pts = [finite.astype(F32), mids, np.nextafter(mids, F32(np.inf)), np.nextafter(mids, F32(-np.inf))]
    pts.append(np.nextafter(finite.astype(F32), F32(np.inf)))
    pts.append(np.nextafter(finite.astype(F32), F32(-np.inf)))
    specials = np.array(
        [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFBFFFFF,
         0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF],
        dtype=np.uint32,
    ).view(F32)
    pts.append(specials)
    x = np.concatenate(pts)
    return np.concatenate([x, -x])


@pytest.mark.parametrize("dtype,saturate", CASES, ids=CASE_IDS)
def test_quantize_rounding_boundaries(dtype, saturate):
    x = _boundary_points(dtype)
    assert x.size > 100
    got = _quantize(x, dtype, saturate)
    assert_bits_equal(got, _oracle(x, dtype, saturate), x, f"{name(dtype)} sat={saturate} boundaries")


@pytest.mark.parametrize("dtype,saturate", CASES, ids=CASE_IDS)
def test_quantize_random_float32_bits(dtype, saturate):
    seed = 1000 + SMALL_FLOAT_TYPES.index(dtype) * 2 + saturate
    rng = np.random.default_rng(seed)
    # (1) Uniform over all 2^32 float32 bit patterns (NaNs, infinities, subnormals included).
    raw = rng.integers(0, 1 << 32, size=250_000, dtype=np.uint64).astype(np.uint32).view(F32)
    # (2) Uniform bit patterns with the exponent restricted to around the type's range, so most
    # values land on interesting roundings (subnormals of the type, normals, overflow).
    tiny_exp = int(np.floor(np.log2(float(ml_dtypes.finfo(dtype).smallest_subnormal))))
    max_exp = int(np.floor(np.log2(finite_max(dtype))))
    exps = rng.integers(tiny_exp - 3 + 127, max_exp + 3 + 127, size=150_000, dtype=np.uint32)
    mant = rng.integers(0, 1 << 23, size=exps.size, dtype=np.uint32)
    sign = rng.integers(0, 2, size=exps.size, dtype=np.uint32) << np.uint32(31)
    ranged = (sign | (exps << np.uint32(23)) | mant).view(F32)
    x = np.concatenate([raw, ranged])
    got = _quantize(x, dtype, saturate)
    assert_bits_equal(got, _oracle(x, dtype, saturate), x, f"{name(dtype)} sat={saturate} random")


@pytest.mark.parametrize("src", [np.float16, ml_dtypes.bfloat16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("dtype,saturate", CASES, ids=CASE_IDS)
def test_quantize_16bit_exhaustive(src, dtype, saturate):
    x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(src)
    got = _quantize(x, dtype, saturate)
    assert_bits_equal(got, _oracle(x, dtype, saturate), x, f"{np.dtype(src).name} -> {name(dtype)} sat={saturate}")


def test_float4_nan_is_plus_six():
    """The documented divergence itself: NaN of either sign -> 0x7 (+6); ml_dtypes gives 0x8 / 0x0."""
    x = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF], dtype=np.uint32).view(F32)
    for sat in (0, 1):
        got = qdq.quantize_linear(x, F32(1.0), output_dtype=FLOAT4, saturate=sat)
        assert got.dtype == np.dtype(FLOAT4)
        assert got.view(np.uint8).tolist() == [0x7] * 4
    assert x.astype(FLOAT4).view(np.uint8).tolist() == [0x8, 0x0, 0x8, 0x0]  # ml_dtypes, for the record


# ---------------------------------------------------------------------------------------------
# DequantizeLinear: every code, against ml_dtypes' decode times the scale (float32 product).

DQ_SCALES = [1.0, 2.0, 0.1, 3.0517578e-05, 7.5, 1e30, 1.4e-45]


@pytest.mark.parametrize("dtype", SMALL_FLOAT_TYPES, ids=name)
@pytest.mark.parametrize("scale", DQ_SCALES)
def test_dequantize_every_code_float32_scale(dtype, scale):
    x = codes(dtype)
    s = F32(scale)
    want = x.astype(F32) * s
    got = qdq.dequantize_linear(x, s)
    assert_bits_equal(got, want, x, f"DQ {name(dtype)} * {scale}")
    # Narrowed outputs: float32 product rounded once more (docs: "rounded to float32 and then once").
    for out in (np.float16, ml_dtypes.bfloat16):
        got = qdq.dequantize_linear(x, s, output_dtype=out)
        assert_bits_equal(got, want.astype(out), x, f"DQ {name(dtype)} * {scale} -> {np.dtype(out).name}")


@pytest.mark.parametrize("dtype", SMALL_FLOAT_TYPES, ids=name)
@pytest.mark.parametrize("stype", [np.float16, ml_dtypes.bfloat16], ids=["float16", "bfloat16"])
def test_dequantize_every_code_16bit_scale(dtype, stype):
    x = codes(dtype)
    for scale in (1.0, 0.375, 3.0e-3, 240.0):
        s = np.asarray(scale, dtype=stype)
        want = (x.astype(F32) * s.astype(F32)).astype(stype)
        got = qdq.dequantize_linear(x, s)
        assert_bits_equal(got, want, x, f"DQ {name(dtype)} * {np.dtype(stype).name} {scale}")


def test_dequantize_nan_sign_kept():
    """NaN codes decode to the quiet NaN with the code's sign (ml_dtypes)."""
    cases = {
        ml_dtypes.float8_e4m3fn: {0x7F: 0x7FC00000, 0xFF: 0xFFC00000},
        ml_dtypes.float8_e4m3fnuz: {0x80: 0xFFC00000},
        ml_dtypes.float8_e5m2: {0x7D: 0x7FC00000, 0x7F: 0x7FC00000, 0xFD: 0xFFC00000, 0xFF: 0xFFC00000},
        ml_dtypes.float8_e5m2fnuz: {0x80: 0xFFC00000},
    }
    for dtype, table in cases.items():
        x = np.array(list(table), dtype=np.uint8).view(dtype)
        got = qdq.dequantize_linear(x, F32(1.0)).view(np.uint32).tolist()
        assert got == list(table.values()), name(dtype)


@pytest.mark.parametrize("out", [np.float32, np.float16, ml_dtypes.bfloat16], ids=["float32", "float16", "bfloat16"])
def test_dequantize_e8m0_scale_every_code(out):
    """Every e8m0 code as a (per-axis) scale, output_dtype set: ml_dtypes decode x float32 product."""
    scales = codes(E8M0)  # 256 scales, 0xFF is NaN, 0x00 is 2^-127
    xs = np.array([1, -1, 3, 127, -128, 0], dtype=np.int8)
    x = np.broadcast_to(xs, (256, xs.size)).copy()
    want = (x.astype(F32) * scales.astype(F32)[:, None]).astype(out)
    got = qdq.dequantize_linear(x, scales, axis=0, output_dtype=out)
    assert_bits_equal(got, want, None, f"int8 * e8m0 -> {np.dtype(out).name}")
    # Per-tensor e8m0 scales against every float8 / float4 code.
    for dtype in SMALL_FLOAT_TYPES:
        c = codes(dtype)
        for sc in (0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF):
            s = np.array(sc, dtype=np.uint8).view(E8M0)
            want = (c.astype(F32) * s.astype(F32)).astype(out)
            got = qdq.dequantize_linear(c, s, output_dtype=out)
            assert_bits_equal(got, want, c, f"{name(dtype)} * e8m0 {sc:#x} -> {np.dtype(out).name}")


# NaN x NaN keeps the scale's NaN, as numpy does (docs/semantics.md).
def test_dequantize_nan_code_times_nan_scale():
    scales = [np.array(b, np.uint32).view(F32) for b in (0x7FC00000, 0xFFC00000)]
    scales.append(np.array(0xFF, np.uint8).view(E8M0))  # e8m0 NaN (positive)
    for dtype in FLOAT8_TYPES:
        c = codes(dtype)
        nan_codes = c[np.isnan(c.astype(F32))]
        x = np.resize(nan_codes, 64)  # long enough for any vector path
        for s in scales:
            want = x.astype(F32) * s.astype(F32)
            got = qdq.dequantize_linear(x, s, output_dtype=F32)
            assert_bits_equal(got, want, x, f"{name(dtype)} NaN * NaN scale {s.view(np.uint8 if s.dtype.itemsize == 1 else np.uint32)}")


def test_e8m0_decode_matches_facts():
    """Sanity of the oracle itself (docs/semantics.md, float8e8m0): 0x00 is 2^-127 (subnormal), 0xFF NaN."""
    v = codes(E8M0)[[0x00, 0x01, 0x7F, 0xFE, 0xFF]].astype(F32).view(np.uint32).tolist()
    assert v == [0x00400000, 0x00800000, 0x3F800000, 0x7F000000, 0x7FC00000]


@pytest.mark.parametrize("dtype", FLOAT8_TYPES, ids=name)
def test_quantize_then_dequantize_every_code_round_trips(dtype):
    """Every non-NaN code decoded by ml_dtypes and re-quantized by qdq gives the code back."""
    c = codes(dtype)
    v = c.astype(F32)
    keep = ~np.isnan(v)
    for sat in (0, 1):
        got = qdq.quantize_linear(v[keep], F32(1.0), output_dtype=dtype, saturate=sat)
        want = c[keep].copy()
        if sat == 1 and dtype is ml_dtypes.float8_e5m2:  # +-inf saturate to +-max
            want = np.where(np.isinf(v[keep]), np.sign(v[keep]) * F32(57344.0), v[keep]).astype(dtype)
        assert_bits_equal(got, want, v[keep], f"{name(dtype)} sat={sat} code round trip")
