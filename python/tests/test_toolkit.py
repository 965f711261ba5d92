"""The toolkit (compute_qparams, dynamic_quantize, dynamic_quantize_linear) against independent oracles.

* compute_qparams: a numpy transcription of docs/semantics.md ("Scales from data"), written with
  numpy's own float32 arithmetic, casts and frexp (the C++ works on bit patterns), per group.
* dynamic_quantize: equal to compute_qparams followed by quantize_linear (itself differential-tested
  against onnx.reference), on the one-pass and the two-pass paths.
* dynamic_quantize_linear: onnx.reference's DynamicQuantizeLinear, bit for bit, edge inputs included.
"""

from __future__ import annotations

import itertools
import math

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

import qdq

SEED = 20261122

INTEGER_TYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int4", "uint4", "int2", "uint2"]
FLOAT_TYPES = ["float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float4_e2m1fn"]
MX_METHODS = ["mx_floor", "mx_ceil", "mx_even", "mx_rceil"]


def dt(name):
    return np.dtype(getattr(ml_dtypes, name, None) or name)


# --------------------------------------------------------------------------------------------
# The oracle


def groups_of(x, axis, block_size):
    """Yields (index into the scale array, the group's values as a flat float32 array)."""
    if axis is None:
        yield (), x.astype(np.float32).reshape(-1)
        return
    axis = axis % x.ndim
    dim = x.shape[axis]
    if block_size == 0:
        moved = np.moveaxis(x, axis, 0)
        for a in range(dim):
            yield (a,), moved[a].astype(np.float32).reshape(-1)
        return
    blocks = -(-dim // block_size)
    scale_shape = list(x.shape)
    scale_shape[axis] = blocks
    for index in itertools.product(*[range(n) for n in scale_shape]):
        b = index[axis]
        sl = list(index)
        sl[axis] = slice(b * block_size, min(dim, (b + 1) * block_size))
        yield index, x[tuple(sl)].astype(np.float32).reshape(-1)


def to_scale_type(value, scale_dtype, finite_range):
    """Rounds a float32 scale to the scale type; finite ranges saturate and never reach zero."""
    with np.errstate(over="ignore"):
        s = np.float32(value).astype(scale_dtype)
    if finite_range:
        info = ml_dtypes.finfo(scale_dtype)
        if np.isinf(s):
            s = np.array(info.max, dtype=scale_dtype)[()]
        if s == 0:
            s = np.array(info.smallest_subnormal, dtype=scale_dtype)[()]
    return s


def mx_exponent(amax, method, qtype):
    """The MX shared exponent with math (frexp / log2 on exact values), not bit patterns."""
    tmax = float(ml_dtypes.finfo(qtype).max)
    emax = math.frexp(tmax)[1] - 1
    mbits = ml_dtypes.finfo(qtype).nmant
    a = float(amax)
    if method == "mx_rceil":
        d = float(np.float32(amax) / np.float32(tmax))
        if d == 0:
            return -127
        m, e = math.frexp(d)  # d = m * 2^e, m in [0.5, 1)
        ceil_log2 = e - 1 if m == 0.5 else e
        return max(ceil_log2, -127)
    if a == 0:
        return -127
    if method == "mx_even":
        m, e = math.frexp(a)
        scaled = m * 2.0 ** (mbits + 1)  # the significand with mbits fraction bits
        a = math.floor(scaled + 0.5) * 2.0 ** (e - mbits - 1)
    m, e = math.frexp(a)
    floor_log2 = e - 1
    if method == "mx_ceil" and m != 0.5:
        floor_log2 += 1
    return min(max(floor_log2 - emax, -127), 127)


def oracle_group(values, qname, scale_name, method):
    """(scale as scale_dtype scalar, zero point as a Python number or None)."""
    qtype, stype = dt(qname), dt(scale_name)
    is_int = "float" not in qname
    nan = bool(np.isnan(values).any())
    clean = values[~np.isnan(values)]
    low = np.float32(min(float(clean.min()), 0.0)) if clean.size else np.float32(0)
    high = np.float32(max(float(clean.max()), 0.0)) if clean.size else np.float32(0)
    if is_int:
        info = ml_dtypes.iinfo(qtype)
        qmin, qmax = int(info.min), int(info.max)
        neutral = qmin if method == "minmax" else (0 if qmin < 0 else (qmax + 1) // 2)
    else:
        neutral = None
    if method in MX_METHODS:
        amax = np.float32(max(-low, high))
        if nan or not np.isfinite(amax):
            scale = np.float32(np.nan)
        else:
            scale = np.float32(2.0 ** mx_exponent(amax, method, qtype))
        return scale.astype(stype), None
    if nan:
        return np.float32(np.nan).astype(stype), neutral
    extent = (high - low) if method == "minmax" else max(-low, high)
    extent = np.float32(extent)
    if extent == 0:
        return np.float32(1).astype(stype), neutral
    if not (np.isfinite(low) and np.isfinite(high)):
        return np.float32(np.inf).astype(stype), neutral
    if not is_int:
        divisor = np.float32(ml_dtypes.finfo(qtype).max)
    elif method == "minmax":
        divisor = np.float32(qmax - qmin)
    elif method == "symmetric":
        divisor = np.float32((qmax - qmin) / 2)
    else:
        divisor = np.float32((qmax - qmin - 1) / 2)
    with np.errstate(over="ignore"):
        scale = to_scale_type(extent / divisor, stype, True)
    if method != "minmax":
        return scale, neutral
    initial = np.float32(qmin) - low / np.float32(scale)
    zp = np.rint(min(max(float(initial), qmin), qmax))
    return scale, int(zp)


def oracle(x, qname, method, axis, block_size, scale_name):
    qtype = dt(qname)
    entries = list(groups_of(x, axis, block_size))
    if axis is None:
        shape = ()
    elif block_size == 0:
        shape = (x.shape[axis % x.ndim],)
    else:
        shape = list(x.shape)
        shape[axis % x.ndim] = -(-x.shape[axis % x.ndim] // block_size)
        shape = tuple(shape)
    scale = np.zeros(shape, dtype=dt(scale_name))
    zp = np.zeros(shape, dtype=qtype) if "float" not in qname else None
    for index, values in entries:
        s, z = oracle_group(values, qname, scale_name, method)
        scale[index] = s
        if zp is not None:
            zp[index] = np.array(z).astype(qtype)
    return scale, zp


def bits(a):
    a = np.asarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


# --------------------------------------------------------------------------------------------
# Data


def data(shape, x_dtype, rng, kind):
    n = int(np.prod(shape))
    if kind == "normal":
        v = rng.standard_normal(n).astype(np.float32) * np.float32(3)
    elif kind == "positive":
        v = np.abs(rng.standard_normal(n).astype(np.float32)) + 1
    elif kind == "negative":
        v = -np.abs(rng.standard_normal(n).astype(np.float32)) - 1
    elif kind == "wide":  # exponents from 2^-140 to 2^120, both signs
        v = (rng.choice([-1, 1], n) * 2.0 ** rng.uniform(-140, 120, n)).astype(np.float32)
    elif kind == "tiny":  # float32 subnormals
        v = (rng.standard_normal(n) * 1e-42).astype(np.float32)
    else:
        raise ValueError(kind)
    v = v.reshape(shape)
    with np.errstate(over="ignore"):
        return v.astype(x_dtype)


def special_groups(x, rng):
    """Puts an all-zero group, a NaN, a +inf and a -inf into distinct places of x (per-tensor off)."""
    x = x.copy()
    flat = x.reshape(-1)
    n = flat.size
    flat[: max(1, n // 8)] = 0
    flat[rng.integers(n // 4, n // 2)] = np.nan
    flat[rng.integers(n // 2, 3 * n // 4)] = np.inf
    flat[rng.integers(3 * n // 4, n)] = -np.inf
    return x


GRANULARITIES = [
    (None, 0),
    (0, 0),
    (1, 0),
    (-1, 0),
    (-1, 32),
    (-1, 7),
    (0, 2),
    (1, 3),
]


def check(x, qname, method, axis, block_size, scale_name):
    scale, zp = qdq.compute_qparams(x, qname, method=method, axis=axis, block_size=block_size, scale_dtype=scale_name)
    want_scale, want_zp = oracle(x, qname, method, axis, block_size, scale_name)
    where = f"{qname} {method} axis={axis} block={block_size} scale={scale_name} x={x.dtype} {x.shape}"
    assert scale.dtype == want_scale.dtype and scale.shape == want_scale.shape, where
    np.testing.assert_array_equal(bits(scale), bits(want_scale), err_msg=where)
    if want_zp is None:
        assert zp is None, where
    else:
        assert zp.dtype == want_zp.dtype, where
        np.testing.assert_array_equal(zp.astype(np.int64), want_zp.astype(np.int64), err_msg=where)


@pytest.mark.parametrize("qname", INTEGER_TYPES)
@pytest.mark.parametrize("method", ["minmax", "symmetric", "symmetric_restricted"])
def test_integer_qparams(qname, method):
    rng = np.random.default_rng(SEED)
    inputs = [(np.float32, "normal"), (np.float16, "positive"), (ml_dtypes.bfloat16, "wide"), (np.float32, "wide")]
    for (axis, block), (x_dtype, kind) in itertools.product(GRANULARITIES, inputs):
        check(data((4, 3, 40), x_dtype, rng, kind), qname, method, axis, block, "float32")
    for scale_name in ["float16", "bfloat16"]:
        for kind in ["normal", "wide", "tiny"]:
            x = data((4, 96), np.float32, rng, kind)
            check(x, qname, method, -1, 32, scale_name)
            check(x, qname, method, None, 0, scale_name)


@pytest.mark.parametrize("qname", INTEGER_TYPES + FLOAT_TYPES)
def test_edge_groups(qname):
    """All-zero groups, NaN, +inf, -inf, subnormal ranges, an empty tensor."""
    rng = np.random.default_rng(SEED + 1)
    methods = ["minmax", "symmetric", "symmetric_restricted"] if "float" not in qname else ["symmetric"] + MX_METHODS
    for method in methods:
        scales = ["float8_e8m0fnu", "float32", "bfloat16"] if method in MX_METHODS else ["float32", "float16"]
        for scale_name, (axis, block) in itertools.product(scales, GRANULARITIES):
            x = special_groups(data((4, 4, 40), np.float32, rng, "normal"), rng)
            check(x, qname, method, axis, block, scale_name)
            if block in (0, 32):
                check(data((4, 4, 40), np.float32, rng, "tiny"), qname, method, axis, block, scale_name)
                check(np.zeros((4, 4, 40), np.float32), qname, method, axis, block, scale_name)
        check(np.zeros((0, 3), np.float32), qname, method, None, 0, scales[0])
        check(np.zeros((2, 0), np.float32), qname, method, 0, 0, scales[0])


@pytest.mark.parametrize("qname", FLOAT_TYPES)
@pytest.mark.parametrize("method", ["symmetric"] + MX_METHODS)
def test_float_qparams(qname, method):
    rng = np.random.default_rng(SEED + 2)
    scales = ["float8_e8m0fnu", "float32", "bfloat16"] if method in MX_METHODS else ["float32", "float16", "bfloat16"]
    for scale_name, (axis, block), kind in itertools.product(scales, GRANULARITIES, ["normal", "wide"]):
        check(data((4, 3, 40), np.float32, rng, kind), qname, method, axis, block, scale_name)


@pytest.mark.parametrize(
    "qname, method, shape, block",
    [
        ("int4", "minmax", (64, 4100), 32),  # tiles of 4096 columns and a short one; both threads
        ("uint4", "symmetric", (40, 2049), 16),  # odd inner (the module's zero points are one a byte)
        ("int2", "minmax", (24, 1032), 8),  # 2-bit codes, rows of 1,032
        ("int8", "symmetric_restricted", (33, 1030), 32),  # a short last block of rows
    ],
)
def test_blocked_along_the_first_axis(qname, method, shape, block):
    """Blocks along a non-last axis wide enough for the column stretches and tiles, with a NaN, +inf
    and -inf in some groups and a column of zeros."""
    rng = np.random.default_rng(SEED + 4)
    x = special_groups(data(shape, np.float32, rng, "normal"), rng)
    x[:, 5] = 0
    check(x, qname, method, 0, block, "float32")
    check(data(shape, ml_dtypes.bfloat16, rng, "wide"), qname, method, 0, block, "float16")


def test_mx_exponent_edges():
    """amax exactly a power of two, just above, and the RCEIL/EVEN rounding boundaries."""
    values = []
    for e in [-130, -127, -126, -20, 0, 1, 8, 9, 100, 127]:
        p = np.float32(2.0**e)
        values += [p, np.nextafter(p, np.float32(np.inf)), np.nextafter(p, np.float32(0))]
    values += [np.float32(448 * 2.0**k) for k in range(-10, 10)]
    values += [np.float32(1.9375), np.float32(1.96875), np.float32(1.984375), np.float32(3.4e38)]
    x = np.array(values, dtype=np.float32).reshape(-1, 1)
    for qname in FLOAT_TYPES:
        for method in MX_METHODS:
            for scale_name in ["float8_e8m0fnu", "float32"]:
                check(x, qname, method, 0, 0, scale_name)  # one group per value


def test_dynamic_quantize_matches_qparams_then_quantize_linear():
    rng = np.random.default_rng(SEED + 3)
    cases = [
        ("int4", "minmax", -1, 32, (64, 4096)),  # one pass, several tasks
        ("uint4", "symmetric", -1, 128, (16, 1000)),  # one pass unless packing forbids
        ("int8", "symmetric", 0, 0, (300, 70)),  # per-axis along the first axis: one pass
        ("uint8", "minmax", 1, 0, (30, 70, 5)),  # per-axis elsewhere: two passes
        ("int8", "minmax", None, 0, (200, 1001)),  # per-tensor: two passes
        ("float8_e4m3fn", "mx_floor", -1, 32, (33, 96)),
        ("float4_e2m1fn", "mx_rceil", -1, 32, (8, 320)),
        ("int2", "minmax", 0, 4, (10, 9)),  # blocked along a non-last axis
        ("uint16", "minmax", -1, 7, (5, 30)),  # odd blocks
    ]
    for qname, method, axis, block, shape in cases:
        x = data(shape, np.float32, rng, "normal")
        scale_name = "float8_e8m0fnu" if method.startswith("mx") else "float32"
        y, scale, zp = qdq.dynamic_quantize(x, qname, method=method, axis=axis, block_size=block, scale_dtype=scale_name)
        want_scale, want_zp = qdq.compute_qparams(
            x, qname, method=method, axis=axis, block_size=block, scale_dtype=scale_name
        )
        np.testing.assert_array_equal(bits(scale), bits(want_scale))
        kwargs = dict(axis=axis if axis is not None else 1, block_size=block)
        if want_zp is None:
            want_y = qdq.quantize_linear(x, want_scale, output_dtype=dt(qname), **kwargs)
        else:
            np.testing.assert_array_equal(zp.astype(np.int64), want_zp.astype(np.int64))
            want_y = qdq.quantize_linear(x, want_scale, want_zp, **kwargs)
        assert y.dtype == dt(qname) and y.shape == x.shape
        np.testing.assert_array_equal(bits(y), bits(want_y), err_msg=f"{qname} {method} {axis} {block}")
        out = np.empty_like(y)
        assert qdq.dynamic_quantize(x, qname, method=method, axis=axis, block_size=block, scale_dtype=scale_name, out=out)[0] is out
        np.testing.assert_array_equal(bits(out), bits(y))


def test_dynamic_quantize_int8_by_numpy():
    """The quantize stage also against numpy's own rint/clip for int8 blocked."""
    rng = np.random.default_rng(SEED + 4)
    x = data((32, 256), np.float32, rng, "normal")
    y, scale, zp = qdq.dynamic_quantize(x, "int8", axis=-1, block_size=64)
    s = np.repeat(scale, 64, axis=-1)
    z = np.repeat(zp.astype(np.float32), 64, axis=-1)
    want = np.clip(np.rint(x / s) + z, -128, 127).astype(np.int8)
    np.testing.assert_array_equal(y, want)


# --------------------------------------------------------------------------------------------
# DynamicQuantizeLinear


def reference_dql(x):
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, list(x.shape))],
        [
            helper.make_tensor_value_info("y", onnx.TensorProto.UINT8, list(x.shape)),
            helper.make_tensor_value_info("s", onnx.TensorProto.FLOAT, []),
            helper.make_tensor_value_info("z", onnx.TensorProto.UINT8, []),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    with np.errstate(all="ignore"):
        return ReferenceEvaluator(model).run(None, {"x": x})


DQL_INPUTS = {
    "normal": lambda rng: rng.standard_normal((3, 1000)).astype(np.float32),
    "positive": lambda rng: np.abs(rng.standard_normal(777)).astype(np.float32) + 1,
    "negative": lambda rng: -np.abs(rng.standard_normal(777)).astype(np.float32) - 1,
    "zeros": lambda rng: np.zeros((4, 5), np.float32),
    "negative_zeros": lambda rng: np.full(9, -0.0, np.float32),
    "one_element": lambda rng: np.array([2.5], np.float32),
    "nan": lambda rng: np.array([1.0, np.nan, -3.0, 4.0] * 10, np.float32),
    "plus_inf": lambda rng: np.array([1.0, np.inf, -3.0, 0.5] * 10, np.float32),
    "minus_inf": lambda rng: np.array([1.0, -np.inf, -3.0, 0.5] * 10, np.float32),
    "both_inf": lambda rng: np.array([np.inf, -np.inf, 2.0], np.float32),
    "huge": lambda rng: np.array([3.4e38, -3.4e38, 1.0, 0.0], np.float32),
    "tiny": lambda rng: (rng.standard_normal(100) * 1e-42).astype(np.float32),
    "wide": lambda rng: (rng.choice([-1, 1], 5000) * 2.0 ** rng.uniform(-100, 100, 5000)).astype(np.float32),
    "large": lambda rng: rng.standard_normal(300_001).astype(np.float32),  # threaded reduction
}


@pytest.mark.parametrize("case", sorted(DQL_INPUTS))
def test_dynamic_quantize_linear_vs_onnx_reference(case):
    x = DQL_INPUTS[case](np.random.default_rng(SEED + 5))
    y, scale, zp = qdq.dynamic_quantize_linear(x)
    want_y, want_scale, want_zp = reference_dql(x)
    assert y.dtype == np.uint8 and scale.dtype == np.float32 and zp.dtype == np.uint8
    np.testing.assert_array_equal(bits(scale), bits(np.asarray(want_scale, np.float32)), err_msg=case)
    assert int(zp) == int(want_zp), case
    np.testing.assert_array_equal(y, want_y, err_msg=case)


# --------------------------------------------------------------------------------------------
# Errors name the value and the rule


@pytest.mark.parametrize(
    "call, text",
    [
        (lambda x: qdq.compute_qparams(x, "int8", method="mx_floor"), "integer type"),
        (lambda x: qdq.compute_qparams(x, "float8_e4m3fn", method="minmax"), "needs an integer quantized_type"),
        (lambda x: qdq.compute_qparams(x, "int8", scale_dtype="float8_e8m0fnu"), "float8_e8m0fnu"),
        (lambda x: qdq.compute_qparams(x, "float8_e4m3fn", method="mx_floor", scale_dtype=np.float16), "2^-127"),
        (lambda x: qdq.compute_qparams(x, "int8", axis=2), "axis 2 is outside [-2, 1]"),
        (lambda x: qdq.compute_qparams(x, "int8", axis=1, block_size=-3), "block_size >= 1"),
        (lambda x: qdq.compute_qparams(x, "int8", block_size=32), "axis is None"),
        (lambda x: qdq.compute_qparams(x, "float32"), "not a quantized type"),
        (lambda x: qdq.compute_qparams(x, "int8", method="minimax"), "'minimax' is not one of"),
        (lambda x: qdq.compute_qparams(x.astype(np.int32), "int8"), "float32, float16 or bfloat16"),
        (lambda x: qdq.dynamic_quantize(x, "int32"), "not an output of QuantizeLinear"),
        (lambda x: qdq.dynamic_quantize_linear(x.astype(np.float16)), "T1 allows float32 only"),
        (lambda x: qdq.dynamic_quantize_linear(x[:0]), "no elements"),
        (lambda x: qdq.dynamic_quantize(x, "int8", out=np.empty(3, np.int8)), "shape"),
    ],
)
def test_errors(call, text):
    x = np.ones((4, 8), np.float32)
    with pytest.raises(qdq.QdqError, match=None) as error:
        call(x)
    assert text in str(error.value), str(error.value)


# --------------------------------------------------------------------------------------------
# ONNX Runtime: ai.qdq DynamicQuantizeLinear (qdq's custom-op library)


def ort_session(node, x_shape, outputs, opset_domain):
    ort = pytest.importorskip("onnxruntime")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, list(x_shape))],
        [helper.make_tensor_value_info(name, code, None) for name, code in outputs],
    )
    opsets = [helper.make_opsetid("", 21), helper.make_opsetid(opset_domain, 1)] if opset_domain else [helper.make_opsetid("", 21)]
    model = helper.make_model(graph, opset_imports=opsets, ir_version=10)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    if opset_domain:
        options.register_custom_ops_library(qdq.ort_library_path())
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("case", ["normal", "zeros", "nan", "plus_inf", "large", "wide"])
def test_ort_dynamic_quantize_linear_onnx_method(case):
    """method "onnx" (the default) is onnx.reference's DynamicQuantizeLinear, bit for bit."""
    x = DQL_INPUTS[case](np.random.default_rng(SEED + 6))
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"], domain="ai.qdq")
    outputs = [("y", onnx.TensorProto.UINT8), ("s", onnx.TensorProto.FLOAT), ("z", onnx.TensorProto.UINT8)]
    y, s, z = ort_session(node, x.shape, outputs, "ai.qdq").run(None, {"x": x})
    want_y, want_s, want_z = reference_dql(x)
    np.testing.assert_array_equal(bits(np.asarray(s, np.float32)), bits(np.asarray(want_s, np.float32)))
    assert int(z) == int(want_z)
    np.testing.assert_array_equal(y, want_y)


@pytest.mark.parametrize(
    "attrs, dtype_name, proto",
    [
        # (ORT's Python API returns no int4 arrays: uint8 stands for the blocked integer case.)
        (dict(method="minmax", granularity="blocked", axis=-1, block_size=32, output_dtype=2), "uint8", onnx.TensorProto.UINT8),
        (dict(method="symmetric", granularity="per_axis", axis=0, output_dtype=3), "int8", onnx.TensorProto.INT8),
        (dict(method="minmax", granularity="per_tensor", output_dtype=4), "uint16", onnx.TensorProto.UINT16),
        (
            # (e8m0 outputs need ORT's type-agnostic outputs to list them; they do not: float32 here.)
            dict(method="mx_floor", granularity="blocked", axis=-1, block_size=32, output_dtype=17, scale_dtype=1),
            "float8_e4m3fn",
            onnx.TensorProto.FLOAT8E4M3FN,
        ),
    ],
)
def test_ort_dynamic_quantize_matches_python(attrs, dtype_name, proto):
    x = np.random.default_rng(SEED + 7).standard_normal((16, 256)).astype(np.float32)
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"], domain="ai.qdq", **attrs)
    scale_proto = attrs.get("scale_dtype", onnx.TensorProto.FLOAT)
    outputs = [("y", proto), ("s", scale_proto), ("z", proto)]
    y, s, z = ort_session(node, x.shape, outputs, "ai.qdq").run(None, {"x": x})
    axis = None if attrs["granularity"] == "per_tensor" else attrs["axis"]
    scale_name = "float32"
    want_y, want_s, want_z = qdq.dynamic_quantize(
        x, dtype_name, method=attrs["method"], axis=axis, block_size=attrs.get("block_size", 0), scale_dtype=scale_name
    )
    np.testing.assert_array_equal(bits(np.asarray(s)), bits(want_s))
    np.testing.assert_array_equal(bits(np.asarray(y)), bits(want_y))
    if want_z is not None:
        np.testing.assert_array_equal(np.asarray(z).astype(np.int64), want_z.astype(np.int64))


def test_ort_dynamic_quantize_rejects_unknown_method():
    ort = pytest.importorskip("onnxruntime")
    x = np.ones((4, 8), np.float32)
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"], domain="ai.qdq", method="median")
    outputs = [("y", onnx.TensorProto.UINT8), ("s", onnx.TensorProto.FLOAT), ("z", onnx.TensorProto.UINT8)]
    with pytest.raises(Exception, match="attribute method is 'median'"):
        ort_session(node, x.shape, outputs, "ai.qdq").run(None, {"x": x})
    assert ort is not None


@pytest.mark.parametrize("case", ["normal", "positive", "negative", "wide", "large", "one_element"])
def test_dynamic_quantize_uint8_minmax_equals_dynamic_quantize_linear_on_ordinary_data(case):
    """docs/semantics.md: the two differ only at DynamicQuantizeLinear's edges (zeros, NaN, inf)."""
    x = DQL_INPUTS[case](np.random.default_rng(SEED + 8))
    y, scale, zp = qdq.dynamic_quantize(x, "uint8")
    want_y, want_scale, want_zp = qdq.dynamic_quantize_linear(x)
    np.testing.assert_array_equal(bits(scale), bits(want_scale))
    assert int(zp) == int(want_zp)
    np.testing.assert_array_equal(y, want_y)
