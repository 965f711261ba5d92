"""The Python API surface: signatures, docstrings, stubs, dtype arguments, scalar inputs, output
dtypes and shapes, fresh outputs, and the GIL released during kernels."""

from __future__ import annotations

import ast
import re
import inspect
import pathlib
import threading
import time

import ml_dtypes
import numpy as np
import pytest

import qdq

F32 = np.float32
P = inspect.Parameter
POS = P.POSITIONAL_OR_KEYWORD
KW = P.KEYWORD_ONLY
_REQ = P.empty

# name -> [(parameter, kind, default)]
SIGNATURES = {
    "quantize_linear": [
        ("x", POS, _REQ), ("y_scale", POS, _REQ), ("y_zero_point", POS, None),
        ("axis", KW, 1), ("block_size", KW, 0), ("saturate", KW, 1), ("output_dtype", KW, 0),
        ("precision", KW, 0), ("opset", KW, 25), ("out", KW, None),
    ],
    "dequantize_linear": [
        ("x", POS, _REQ), ("x_scale", POS, _REQ), ("x_zero_point", POS, None),
        ("axis", KW, 1), ("block_size", KW, 0), ("output_dtype", KW, 0), ("opset", KW, 25), ("out", KW, None),
    ],
    "extended_quantize_linear": [
        ("x", POS, _REQ), ("y_scale", POS, _REQ), ("y_zero_point", POS, _REQ), ("axis", KW, 1), ("out", KW, None),
    ],
    "extended_dequantize_linear": [
        ("x", POS, _REQ), ("x_scale", POS, _REQ), ("x_zero_point", POS, _REQ), ("axis", KW, 1), ("out", KW, None),
    ],
    "elementwise_quantize_linear": [
        ("x", POS, _REQ), ("scale", POS, _REQ), ("zero_point", POS, None), ("out", KW, None),
    ],
    "elementwise_dequantize_linear": [
        ("x", POS, _REQ), ("scale", POS, _REQ), ("zero_point", POS, None), ("output_dtype", KW, 0), ("out", KW, None),
    ],
    "directml_quantize_linear": [
        ("x", POS, _REQ), ("scale", POS, _REQ), ("zero_point", POS, None), ("output_dtype", KW, None),
        ("feature_level", KW, "6_2"), ("out", KW, None),
    ],
    "directml_dequantize_linear": [
        ("x", POS, _REQ), ("scale", POS, _REQ), ("zero_point", POS, None), ("output_dtype", KW, None),
        ("feature_level", KW, "6_2"), ("out", KW, None),
    ],
}


@pytest.mark.parametrize("fname", list(SIGNATURES))
def test_signature(fname):
    sig = inspect.signature(getattr(qdq, fname))
    got = [(p.name, p.kind, p.default) for p in sig.parameters.values()]
    assert got == SIGNATURES[fname]


@pytest.mark.parametrize("fname", list(SIGNATURES))
def test_docstring(fname):
    doc = inspect.getdoc(getattr(qdq, fname))
    assert doc and len(doc) > 40
    assert "QdqError" in doc and "Raises" in doc


def test_module_exports():
    assert set(SIGNATURES) <= set(qdq.__all__)
    assert "QdqError" in qdq.__all__
    assert qdq.__doc__ and "QuantizeLinear" in qdq.__doc__
    assert inspect.getdoc(qdq.QdqError)
    for fname in qdq.__all__:
        assert hasattr(qdq, fname)


def _installed_dir() -> pathlib.Path:
    return pathlib.Path(qdq.__file__).parent


def test_stub_and_py_typed_shipped():
    d = _installed_dir()
    assert (d / "py.typed").is_file()
    assert (d / "__init__.pyi").is_file()


def _stub_signatures():
    tree = ast.parse((_installed_dir() / "__init__.pyi").read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            a = node.args
            pos = [x.arg for x in a.args]
            pos_defaults = [None] * (len(pos) - len(a.defaults)) + [ast.literal_eval(d) for d in a.defaults]
            params = [(n, POS, _REQ if i < len(pos) - len(a.defaults) else d) for i, (n, d) in enumerate(zip(pos, pos_defaults))]
            params += [(x.arg, KW, ast.literal_eval(d)) for x, d in zip(a.kwonlyargs, a.kw_defaults)]
            out[node.name] = params
    return out


@pytest.mark.parametrize("fname", list(SIGNATURES))
def test_stub_matches_runtime(fname):
    assert _stub_signatures()[fname] == SIGNATURES[fname]


def test_stub_declares_qdqerror_as_valueerror():
    tree = ast.parse((_installed_dir() / "__init__.pyi").read_text())
    classes = {n.name: [ast.unparse(b) for b in n.bases] for n in tree.body if isinstance(n, ast.ClassDef)}
    assert classes.get("QdqError") == ["ValueError"]


# ----------------------------------------------------------------------------- dtype arguments

Q_OUT_TYPES = [
    np.uint8, np.int8, np.uint16, np.int16, ml_dtypes.uint4, ml_dtypes.int4, ml_dtypes.uint2, ml_dtypes.int2,
    ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2fnuz,
    ml_dtypes.float4_e2m1fn,
]


@pytest.mark.parametrize("dtype", Q_OUT_TYPES, ids=lambda t: np.dtype(t).name)
def test_output_dtype_int_code_or_dtype(dtype):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((3, 5, 7)) * 10).astype(F32)
    code = qdq.code_from_dtype(dtype)
    assert isinstance(code, int) and code > 0
    assert qdq.dtype_from_code(code) == np.dtype(dtype)
    by_code = qdq.quantize_linear(x, F32(0.5), output_dtype=code)
    by_type = qdq.quantize_linear(x, F32(0.5), output_dtype=dtype)
    by_dtype = qdq.quantize_linear(x, F32(0.5), output_dtype=np.dtype(dtype))
    by_name = qdq.quantize_linear(x, F32(0.5), output_dtype=np.dtype(dtype).name)
    for y in (by_code, by_type, by_dtype, by_name):
        assert y.dtype == np.dtype(dtype)
        assert y.shape == x.shape
        assert y.tobytes() == by_code.tobytes()
    # The zero point's dtype selects the same type.
    y = qdq.quantize_linear(x, F32(0.5), np.zeros((), dtype))
    assert y.dtype == np.dtype(dtype) and y.tobytes() == by_code.tobytes()


@pytest.mark.parametrize("prec", [np.float16, ml_dtypes.bfloat16, np.float32], ids=["float16", "bfloat16", "float32"])
def test_precision_int_code_or_dtype(prec):
    x = np.array([15.4999, 2.50012, -3.49995, 1e5, 7.0], F32)
    a = qdq.quantize_linear(x, F32(1.0), np.int32(0).astype(np.int16), precision=qdq.code_from_dtype(prec))
    b = qdq.quantize_linear(x, F32(1.0), np.int32(0).astype(np.int16), precision=prec)
    assert a.tobytes() == b.tobytes()
    if prec is np.float16:
        assert a.tolist()[:3] == [16, 2, -4]  # divided in float16: 15.5, 2.5, -3.5 are ties
    if prec is np.float32:
        assert a.tolist()[:3] == [15, 3, -3]


@pytest.mark.parametrize("out", [np.float32, np.float16, ml_dtypes.bfloat16], ids=["float32", "float16", "bfloat16"])
def test_dequantize_output_dtype_int_code_or_dtype(out):
    x = np.arange(-128, 128, dtype=np.int8)
    a = qdq.dequantize_linear(x, F32(0.37), output_dtype=qdq.code_from_dtype(out))
    b = qdq.dequantize_linear(x, F32(0.37), output_dtype=out)
    assert a.dtype == b.dtype == np.dtype(out)
    assert a.tobytes() == b.tobytes()
    e = qdq.dequantize_linear(x, np.array(0x7C, np.uint8).view(ml_dtypes.float8_e8m0fnu), output_dtype=out)
    assert e.dtype == np.dtype(out)


def test_code_from_dtype_roundtrip_all_types():
    for code, nm, _bits in qdq._qdq.element_types():
        dt = qdq.dtype_from_code(code)
        assert dt.name == nm
        assert qdq.code_from_dtype(dt) == code
    assert qdq.code_from_dtype(0) == 0
    with pytest.raises(qdq.QdqError):
        qdq.dtype_from_code(7)  # int64: not a qdq type
    with pytest.raises(qdq.QdqError):
        qdq.code_from_dtype(np.float64)


# ----------------------------------------------------------------------------- scalar inputs


def test_python_scalars_and_0d_arrays():
    x = np.array([[0.5, 1.5, 2.5, -3.0], [100.0, -100.0, 7.25, 0.0]], F32)
    ref = qdq.quantize_linear(x, np.array(0.5, F32), np.array(3, np.uint8))
    assert ref.dtype == np.uint8
    for scale in (0.5, F32(0.5), np.array(0.5, F32), np.array([0.5], F32)):
        for zp in (3, np.uint8(3), np.array(3, np.uint8), np.array([3], np.uint8)):
            y = qdq.quantize_linear(x, scale, zp)
            assert y.dtype == np.uint8 and y.shape == x.shape
            assert np.array_equal(y, ref), (scale, zp)
    # A Python int zero point takes output_dtype.
    y = qdq.quantize_linear(x, 0.5, -3, output_dtype=np.int8)
    assert y.dtype == np.int8
    assert np.array_equal(y, qdq.quantize_linear(x, 0.5, np.int8(-3)))
    # Python float scale is float32 (not float64): same as the float32 scale, bit for bit.
    x2 = np.random.default_rng(0).standard_normal(1000).astype(F32)
    assert np.array_equal(qdq.quantize_linear(x2, 0.1), qdq.quantize_linear(x2, F32(0.1)))
    # DequantizeLinear: Python int zero point takes x's dtype.
    q = np.array([0, 10, 255], np.uint8)
    assert np.array_equal(qdq.dequantize_linear(q, 0.5, 10), qdq.dequantize_linear(q, F32(0.5), np.uint8(10)))
    qi = np.array([-8, 0, 7], ml_dtypes.int4)
    d = qdq.dequantize_linear(qi, 2.0, 1)
    assert d.dtype == np.float32 and d.tolist() == [-18.0, -2.0, 12.0]
    # Quark and DirectML take Python scalars too.
    assert np.array_equal(qdq.extended_quantize_linear(x, 0.5, np.uint8(3)), ref)
    assert qdq.elementwise_quantize_linear(x, np.full((1, 1), 0.5, F32), np.full((1, 1), 3, np.uint8)).tolist() == ref.tolist()


def test_python_list_x_is_rejected_or_converted_consistently():
    # A list of floats becomes float64 in numpy: not an element type, so QdqError (never silently float32).
    with pytest.raises(qdq.QdqError, match="float64"):
        qdq.quantize_linear([1.0, 2.0], 1.0)


# ----------------------------------------------------------------------------- output shapes and dtypes

SUB_BYTE = [ml_dtypes.uint4, ml_dtypes.int4, ml_dtypes.uint2, ml_dtypes.int2, ml_dtypes.float4_e2m1fn]


@pytest.mark.parametrize("dtype", SUB_BYTE, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("shape", [(), (1,), (3,), (5, 3), (2, 3, 5), (7, 1, 3)], ids=str)
def test_sub_byte_outputs_have_ml_dtypes_and_x_shape(dtype, shape):
    rng = np.random.default_rng(len(shape))
    x = (rng.standard_normal(shape) * 3).astype(F32)
    y = qdq.quantize_linear(x, F32(1.0), output_dtype=dtype)
    assert y.dtype == np.dtype(dtype)
    assert y.shape == x.shape
    assert y.flags.c_contiguous
    # Values survive the packed round trip through C++ (checked against an independent decode).
    back = qdq.dequantize_linear(y, F32(1.0))
    assert back.shape == x.shape and back.dtype == np.float32
    assert np.array_equal(back, y.astype(F32))


def test_zero_dim_x_keeps_shape():
    """A 0-d x gives a 0-d output (the Python layer once returned shape (1,): np.ascontiguousarray
    promotes 0-d arrays to 1-d; fixed in python/qdq/__init__.py)."""
    y = qdq.quantize_linear(np.float32(1.5), 1.0)
    assert y.shape == () and y.dtype == np.uint8 and int(y) == 2
    y = qdq.quantize_linear(np.array(-2.5, F32), np.array(1.0, F32), np.array(0, np.int8))
    assert y.shape == () and int(y) == -2
    d = qdq.dequantize_linear(np.array(3, np.int8), np.array(0.5, F32))
    assert d.shape == () and float(d) == 1.5
    d = qdq.extended_dequantize_linear(np.array(3, np.uint8), F32(0.5), np.uint8(1))
    assert d.shape == () and float(d) == 1.0
    # DirectML takes ranks 1 to 8: a 0-d x is rejected, not silently treated as [1].
    with pytest.raises(qdq.QdqError, match="rank 0"):
        qdq.elementwise_quantize_linear(np.float32(1.5), np.float32(1.0))


def test_non_contiguous_inputs():
    rng = np.random.default_rng(3)
    base = (rng.standard_normal((6, 8)) * 20).astype(F32)
    xt = base.T
    xs = base[:, ::2]
    for x in (xt, xs):
        y = qdq.quantize_linear(x, F32(0.5), np.int8(1))
        assert y.shape == x.shape
        assert np.array_equal(y, qdq.quantize_linear(np.ascontiguousarray(x), F32(0.5), np.int8(1)))
    scale = np.linspace(0.1, 1, 8).astype(F32)[::-1]  # negative stride per-axis scale
    y = qdq.quantize_linear(base, scale, axis=1)
    assert np.array_equal(y, qdq.quantize_linear(base, np.ascontiguousarray(scale), axis=1))


def test_output_is_fresh_array():
    x = np.arange(16, dtype=F32)
    y = qdq.quantize_linear(x, F32(1.0), np.uint8(0))
    assert not np.shares_memory(y, x)
    y2 = qdq.quantize_linear(x, F32(1.0), np.uint8(0))
    assert not np.shares_memory(y, y2)
    y[:] = 0
    assert x.tolist() == list(range(16))
    assert y2.tolist() == list(range(16))
    q = np.arange(16, dtype=np.uint8)
    d = qdq.dequantize_linear(q, F32(1.0))
    assert not np.shares_memory(d, q)
    d[:] = -1
    assert q.tolist() == list(range(16))
    # Same-size dtypes are the dangerous case for aliasing: int32 -> (dq) float32.
    qi = np.arange(16, dtype=np.int32)
    di = qdq.dequantize_linear(qi, F32(1.0))
    assert not np.shares_memory(di, qi)
    e = qdq.elementwise_dequantize_linear(qi, np.ones(1, F32))
    assert not np.shares_memory(e, qi)
    assert y.flags.writeable


# ----------------------------------------------------------------------------- GIL


def test_gil_released_during_kernel():
    """A 2^24-element quantize runs in a worker thread; the main thread keeps running Python while
    the worker is inside the kernel. Robust to timing: we only require that the main thread ran at
    some point strictly inside the middle half of the worker's call."""
    x = np.random.default_rng(0).standard_normal(1 << 24).astype(F32)
    window = {}

    def worker():
        window["t0"] = time.perf_counter()
        qdq.quantize_linear(x, F32(0.01), np.int8(0))
        qdq.dequantize_linear(np.zeros(1 << 24, np.int16), F32(0.5))
        window["t1"] = time.perf_counter()

    samples = []
    t = threading.Thread(target=worker)
    t.start()
    while t.is_alive():
        samples.append(time.perf_counter())
    t.join()
    t0, t1 = window["t0"], window["t1"]
    lo, hi = t0 + 0.25 * (t1 - t0), t0 + 0.75 * (t1 - t0)
    inside = sum(lo < s < hi for s in samples)
    assert inside > 0, f"main thread never ran during the kernel ({len(samples)} samples, call {t1 - t0:.3f}s)"


def test_concurrent_calls_agree():
    rng = np.random.default_rng(9)
    x = (rng.standard_normal(1 << 18) * 100).astype(F32)
    want = qdq.quantize_linear(x, F32(0.7), np.int8(-3))
    results = [None] * 4

    def run(i):
        results[i] = qdq.quantize_linear(x, F32(0.7), np.int8(-3))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for r in results:
        assert np.array_equal(r, want)


# ----------------------------------------------------------------------------- out=

# One call of each function on small inputs: (function, args, kwargs).
_OUT_CALLS = {
    "quantize_linear": lambda x: ((x, F32(0.5), np.int8(3)), {}),
    "dequantize_linear": lambda x: ((np.int8([[1, -2, 3], [4, 5, -6]]), F32(0.5), np.int8(1)), {}),
    "extended_quantize_linear": lambda x: ((x, F32(0.25), np.int32(-7)), {}),
    "extended_dequantize_linear": lambda x: ((np.uint32([[1, 2, 3], [4, 5, 4000000000]]), F32(0.5), np.uint32(1)), {}),
    "elementwise_quantize_linear": lambda x: ((x, np.full((1, 3), 0.5, F32), np.int8([[1, 2, 3]])), {}),
    "elementwise_dequantize_linear": lambda x: ((np.int16([[1, 2, 3], [4, 5, 6]]), np.full((2, 1), 0.5, F32)), {}),
}


@pytest.mark.parametrize("fname", list(_OUT_CALLS))
def test_out_is_filled_and_returned(fname):
    x = np.array([[0.1, -2.0, 7.5], [100.0, -3.25, 0.0]], F32)
    args, kwargs = _OUT_CALLS[fname](x)
    fn = getattr(qdq, fname)
    want = fn(*args, **kwargs)
    out = np.zeros_like(want)
    got = fn(*args, **kwargs, out=out)
    assert got is out
    np.testing.assert_array_equal(out.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("dtype", [ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.int2, ml_dtypes.uint2, ml_dtypes.float4_e2m1fn])
def test_out_sub_byte_is_one_code_per_byte(dtype):
    x = np.random.default_rng(3).normal(0, 3, size=(7, 33)).astype(F32)
    want = qdq.quantize_linear(x, F32(0.5), output_dtype=dtype)
    out = np.full(x.shape, 0xFF, np.uint8).view(dtype)  # high bits set: must come back zero
    qdq.quantize_linear(x, F32(0.5), output_dtype=dtype, out=out)
    np.testing.assert_array_equal(out.view(np.uint8), want.view(np.uint8))
    bits = 2 if "2" in np.dtype(dtype).name and "e2m1" not in np.dtype(dtype).name else 4
    assert (out.view(np.uint8) >> bits).max() == 0
    # Dequantize reads numpy's bytes directly: high bits are ignored, as ml_dtypes ignores them.
    noisy = (want.view(np.uint8) | np.uint8(0xF0 if bits == 4 else 0xFC)).view(dtype)
    np.testing.assert_array_equal(qdq.dequantize_linear(noisy, F32(0.5)), qdq.dequantize_linear(want, F32(0.5)))


@pytest.mark.parametrize(
    "out, message",
    [
        (np.zeros((2, 3), np.int8), "out has dtype int8 but the operator produces uint8"),
        (np.zeros((3, 2), np.uint8), "out has shape (3, 2)"),
        (np.zeros((2, 6), np.uint8)[:, ::2], "C-contiguous"),
        ([0] * 6, "numpy array"),
        (np.zeros((2, 3), np.float64), "dtype float64"),
    ],
)
def test_out_is_checked(out, message):
    x = np.ones((2, 3), F32)
    with pytest.raises(qdq.QdqError, match=re.escape(message)):
        qdq.quantize_linear(x, F32(1), out=out)


def test_out_read_only_is_refused():
    out = np.zeros((2, 3), np.uint8)
    out.flags.writeable = False
    with pytest.raises(qdq.QdqError, match="writeable"):
        qdq.quantize_linear(np.ones((2, 3), F32), F32(1), out=out)


def test_out_sharing_an_input_is_refused():
    buffer = np.zeros(1000, np.float32)
    x = buffer.view(np.int8)[:1000]  # the bytes of out's first 250 elements
    with pytest.raises(qdq.QdqError, match="out shares memory with input 'x'"):
        qdq.dequantize_linear(x, F32(0.5), out=buffer)


def test_large_outputs_reuse_released_buffers_safely():
    """Large results come from a cache of buffers Python released (no OS zeroing on reuse): a live
    array is never handed out again, and a reused buffer is fully overwritten."""
    x = np.random.default_rng(11).integers(0, 255, (1024, 4096), dtype=np.uint8)  # 16 MiB of float32 out
    a = qdq.dequantize_linear(x, np.float32(0.5))
    b = qdq.dequantize_linear(x, np.float32(0.5))
    assert a.ctypes.data != b.ctypes.data
    address = a.ctypes.data
    del a
    c = qdq.dequantize_linear(x, np.float32(2.0))  # may take a's buffer
    d = qdq.dequantize_linear(x, np.float32(4.0))
    assert len({c.ctypes.data, d.ctypes.data, b.ctypes.data}) == 3
    np.testing.assert_array_equal(b, x.astype(np.float32) * np.float32(0.5))
    np.testing.assert_array_equal(c, x.astype(np.float32) * np.float32(2.0))
    np.testing.assert_array_equal(d, x.astype(np.float32) * np.float32(4.0))
    assert address in {c.ctypes.data, d.ctypes.data}  # the released buffer was reused
