"""The numpy fast door (python/src/module.cpp): plain arrays run without Python-level conversion.

Two things are checked for quantize_linear, dequantize_linear and Quark's Extended pair:
- the door takes what it is meant to take (plain, C-contiguous, native-order arrays of a qdq dtype
  and int attributes): a silent fall-back would not change a result, only the speed users get;
- it computes the same bytes as the general path, which is forced here by handing the same values
  as an ndarray subclass (the door takes exact np.ndarray only), and every input it declines
  reaches the general path's checks, so refusals name the same rule either way.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import qdq
from qdq import _qdq

SEED = 20261123


class _Subclass(np.ndarray):
    """An ndarray subclass: same storage and dtype, but not a plain array for the fast door."""


def _general(array):
    return None if array is None else array.view(_Subclass)


def _bytes(array):
    return np.ascontiguousarray(array).view(np.uint8).tobytes()


# (x dtype, output dtype) pairs over every family of element type the door serves.
Q_CASES = [
    (np.float32, np.uint8),
    (np.float32, np.int8),
    (np.float32, np.int16),
    (np.float32, ml_dtypes.int4),
    (np.float32, ml_dtypes.uint2),
    (np.float32, ml_dtypes.float8_e4m3fn),
    (np.float32, ml_dtypes.float4_e2m1fn),
    (np.float16, np.uint16),
    (ml_dtypes.bfloat16, np.int8),
    (np.int32, np.uint8),
]


def _zero_point(dtype, shape, rng):
    if np.dtype(dtype).kind == "V" or np.dtype(dtype) in (
        np.dtype(ml_dtypes.float8_e4m3fn),
        np.dtype(ml_dtypes.float4_e2m1fn),
    ):
        return np.zeros(shape, dtype)
    info = ml_dtypes.iinfo(dtype)
    return rng.integers(int(info.min), int(info.max) + 1, size=shape).astype(dtype)


def _x(dtype, shape, rng):
    if np.dtype(dtype) == np.int32:
        return rng.integers(-1000, 1000, size=shape).astype(np.int32)
    return (rng.standard_normal(shape) * 4).astype(dtype)


@pytest.mark.parametrize("grain", ["per-tensor", "per-axis", "blocked"])
@pytest.mark.parametrize("x_dtype,y_dtype", Q_CASES)
def test_quantize_linear_door_matches_general_path(x_dtype, y_dtype, grain):
    rng = np.random.default_rng(SEED)
    x = _x(x_dtype, (6, 10), rng)
    scale_dtype = np.float32 if np.dtype(x_dtype) == np.int32 else x_dtype
    scale_shape, kwargs = {"per-tensor": ((), {}), "per-axis": ((10,), {"axis": 1}),
                           "blocked": ((6, 3), {"axis": 1, "block_size": 4})}[grain]
    scale = (rng.random(scale_shape) * 0.5 + 0.05).astype(scale_dtype)
    zp = _zero_point(y_dtype, scale_shape, rng)
    fast = _qdq._plain_quantize_linear(x, scale, zp, kwargs.get("axis", 1), kwargs.get("block_size", 0), 1, 0, 0, 25,
                                       None)
    assert fast is not None, "the fast door declined plain arrays"
    general = qdq.quantize_linear(_general(x), _general(scale), _general(zp), **kwargs)
    assert fast.dtype == general.dtype and fast.shape == general.shape
    assert _bytes(fast) == _bytes(general)
    out = np.empty_like(general)
    assert qdq.quantize_linear(x, scale, zp, out=out, **kwargs) is out
    assert _bytes(out) == _bytes(general)


@pytest.mark.parametrize("grain", ["per-tensor", "per-axis", "blocked"])
@pytest.mark.parametrize("float_dtype,code_dtype", Q_CASES)
def test_dequantize_linear_door_matches_general_path(float_dtype, code_dtype, grain):
    rng = np.random.default_rng(SEED + 1)
    if np.dtype(float_dtype) == np.int32:
        float_dtype = np.float32  # int32 x is a Q input; int32 codes have their own test below
    codes = qdq.quantize_linear(_x(np.float32, (6, 10), rng), np.array(0.25, np.float32), np.zeros((), code_dtype))
    scale_shape, kwargs = {"per-tensor": ((), {}), "per-axis": ((10,), {"axis": 1}),
                           "blocked": ((6, 3), {"axis": 1, "block_size": 4})}[grain]
    scale = (rng.random(scale_shape) * 0.5 + 0.05).astype(float_dtype)
    zp = _zero_point(code_dtype, scale_shape, rng)
    fast = _qdq._plain_dequantize_linear(codes, scale, zp, kwargs.get("axis", 1), kwargs.get("block_size", 0), 0, 25,
                                         None)
    assert fast is not None, "the fast door declined plain arrays"
    general = qdq.dequantize_linear(_general(codes), _general(scale), _general(zp), **kwargs)
    assert fast.dtype == general.dtype and fast.shape == general.shape
    assert _bytes(fast) == _bytes(general)


def test_dequantize_int32_codes_door_matches_general_path():
    rng = np.random.default_rng(SEED + 2)
    codes = rng.integers(-(2**31), 2**31, size=(5, 7), dtype=np.int64).astype(np.int32)
    scale = np.float32(0.001) * np.ones((), np.float32)
    zp = np.array(-12345, np.int32)
    fast = _qdq._plain_dequantize_linear(codes, scale, zp, 1, 0, 0, 25, None)
    assert fast is not None
    assert _bytes(fast) == _bytes(qdq.dequantize_linear(_general(codes), _general(scale), _general(zp)))


@pytest.mark.parametrize("y_dtype", [np.uint8, np.int16, np.int32, np.uint32, np.float16, ml_dtypes.bfloat16])
def test_extended_pair_door_matches_general_path(y_dtype):
    rng = np.random.default_rng(SEED + 3)
    x = _x(np.float32, (4, 9), rng) * 100
    scale = (rng.random(9) * 0.5 + 0.05).astype(np.float32)
    zp = np.zeros(9, y_dtype) if np.dtype(y_dtype).kind not in "iu" else _zero_point(y_dtype, (9,), rng)
    fast_q = _qdq._plain_extended_quantize_linear(x, scale, zp, 1, None)
    assert fast_q is not None
    general_q = qdq.extended_quantize_linear(_general(x), _general(scale), _general(zp), axis=1)
    assert _bytes(fast_q) == _bytes(general_q)
    fast_dq = _qdq._plain_extended_dequantize_linear(fast_q, scale, zp, 1, None)
    assert fast_dq is not None
    general_dq = qdq.extended_dequantize_linear(_general(fast_q), _general(scale), _general(zp), axis=1)
    assert _bytes(fast_dq) == _bytes(general_dq)


def test_zero_dimensional_x_keeps_its_shape():
    x = np.array(1.7, np.float32)
    y = qdq.quantize_linear(x, np.array(0.5, np.float32), np.array(3, np.uint8))
    assert y.shape == () and y.dtype == np.uint8 and int(y) == 6  # round_half_even(3.4) + 3


def test_declined_inputs_take_the_general_path():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    scale = np.array(0.5, np.float32)
    zp = np.array(0, np.uint8)
    declined = {
        "non-contiguous x": (x[:, ::2], scale, zp, 1),
        "Python float beyond float32": (x, 1e39, zp, 1),
        "Python int zero point out of uint8": (x, scale, 256, 1),
        "byte-swapped scale": (x, scale.astype(">f4"), zp, 1),
        "numpy integer attribute": (x, scale, zp, np.int64(1)),
        "bool attribute": (x, scale, zp, True),
    }
    for name, (xx, ss, zz, axis) in declined.items():
        assert _qdq._plain_quantize_linear(xx, ss, zz, axis, 0, 1, 0, 0, 25, None) is None, name
    # The general path takes the same values (or refuses them by name) as before the door existed.
    expected = qdq.quantize_linear(x[:, ::2].copy(), scale, zp)
    assert _bytes(qdq.quantize_linear(x[:, ::2], scale, zp)) == _bytes(expected)
    assert _bytes(qdq.quantize_linear(np.ascontiguousarray(x), 0.5, 0)) == _bytes(qdq.quantize_linear(x, scale, zp))
    with pytest.raises(qdq.QdqError, match="attribute 'axis' is True"):
        qdq.quantize_linear(x, scale, zp, axis=True)
    with pytest.raises(qdq.QdqError, match="outside the range of float32"):
        qdq.quantize_linear(x, 1e39, zp)
    with pytest.raises(qdq.QdqError, match=r"is 256, outside the range of uint8 \[0, 255\]"):
        qdq.quantize_linear(x, scale, 256)


@pytest.mark.parametrize("output_dtype,zero_point", [(0, 7), (np.int8, -3), (np.uint16, 60000), (np.int16, -32768)])
def test_python_numbers_run_through_the_door(output_dtype, zero_point):
    x = np.linspace(-50, 50, 24, dtype=np.float32).reshape(2, 12)
    code = qdq.code_from_dtype(output_dtype) if output_dtype else 0
    fast = _qdq._plain_quantize_linear(x, 0.37, zero_point, 1, 0, 1, code, 0, 25, None)
    assert fast is not None, "the door declined a Python float scale and an in-range Python int zero point"
    typed_zp = np.array(zero_point, output_dtype or np.uint8)
    assert _bytes(fast) == _bytes(qdq.quantize_linear(_general(x), _general(np.array(0.37, np.float32)), _general(typed_zp)))
    dq = _qdq._plain_dequantize_linear(fast, 0.37, zero_point, 1, 0, 0, 25, None)  # the int takes x's type
    assert dq is not None
    assert _bytes(dq) == _bytes(qdq.dequantize_linear(_general(fast), _general(np.array(0.37, np.float32)),
                                                      _general(typed_zp)))


def test_out_the_door_cannot_use_is_refused_by_name():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    scale = np.array(0.5, np.float32)
    zp = np.array(0, np.uint8)
    with pytest.raises(qdq.QdqError, match="out has dtype int8 but the operator produces uint8"):
        qdq.quantize_linear(x, scale, zp, out=np.empty((3, 4), np.int8))
    with pytest.raises(qdq.QdqError, match="out has shape"):
        qdq.quantize_linear(x, scale, zp, out=np.empty((4, 3), np.uint8))
    storage = np.zeros(48, np.uint8)  # a DQ output whose storage begins with its own input codes
    codes, aliased_out = storage[:12].reshape(3, 4), storage.view(np.float32).reshape(3, 4)
    with pytest.raises(qdq.QdqError, match="shares memory with input 'x'"):
        qdq.dequantize_linear(codes, scale, zp, out=aliased_out)
    read_only = np.empty((3, 4), np.uint8)
    read_only.flags.writeable = False
    with pytest.raises(qdq.QdqError, match="C-contiguous and writeable"):
        qdq.quantize_linear(x, scale, zp, out=read_only)



def test_elementwise_pair_door_matches_general_path():
    rng = np.random.default_rng(SEED + 4)
    x = (rng.standard_normal((3, 5, 4)) * 20).astype(np.float32)
    scale = (rng.random((3, 1, 4)) * 0.5 + 0.05).astype(np.float32)
    zp = rng.integers(-20, 20, size=(3, 1, 4)).astype(np.int8)
    fast_q = _qdq._plain_elementwise_quantize_linear(x, scale, zp, None)
    assert fast_q is not None
    assert _bytes(fast_q) == _bytes(qdq.elementwise_quantize_linear(_general(x), _general(scale), _general(zp)))
    fast_dq = _qdq._plain_elementwise_dequantize_linear(fast_q, scale, zp, 0, None)
    assert fast_dq is not None
    general_dq = qdq.elementwise_dequantize_linear(_general(fast_q), _general(scale), _general(zp))
    assert _bytes(fast_dq) == _bytes(general_dq)


@pytest.mark.parametrize("codes", [np.uint8, np.int8, ml_dtypes.int4, ml_dtypes.float8_e4m3fn])
def test_fused_fake_quant_door_matches_general_path(codes):
    rng = np.random.default_rng(SEED + 5)
    x = (rng.standard_normal((4, 16)) * 3).astype(np.float32)
    scale = (rng.random((4, 2)) * 0.2 + 0.05).astype(np.float32)
    zp = _zero_point(codes, (4, 2), rng)
    fast = _qdq._plain_quantize_dequantize(x, scale, zp, 1, 8, 1, 0, 0, 0, 25, None)
    assert fast is not None
    general = qdq.quantize_dequantize(_general(x), _general(scale), _general(zp), axis=1, block_size=8)
    assert fast.dtype == general.dtype and _bytes(fast) == _bytes(general)
    # The mask is the general path's: it comes back with y there.
    y, mask = qdq.quantize_dequantize(x, scale, zp, axis=1, block_size=8, return_mask=True)
    assert _bytes(y) == _bytes(general) and mask.dtype == np.bool_


def test_extended_fake_quant_door_matches_general_path():
    rng = np.random.default_rng(SEED + 6)
    x = (rng.standard_normal((4, 6)) * 300).astype(np.float32)
    scale = np.float32(0.5)
    zp = np.int16(-7)
    fast = _qdq._plain_extended_quantize_dequantize(x, scale, zp, 1, None)
    assert fast is not None
    general = qdq.extended_quantize_dequantize(_general(x), np.array(scale).view(_Subclass), np.array(zp).view(_Subclass))
    assert _bytes(fast) == _bytes(general)


# --- Property: on any plain arguments, valid or not, the door and the general path agree -------

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16, np.int32, np.uint32, np.int16, np.uint16, np.int8, np.uint8,
           ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.int2, ml_dtypes.uint2, ml_dtypes.float8_e4m3fn,
           ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2fnuz, ml_dtypes.float4_e2m1fn,
           ml_dtypes.float8_e8m0fnu]


@st.composite
def _plain_call(draw):
    """A call on plain arrays with random bytes (NaNs, codes with high bits, anything), shapes that
    may or may not fit, and attributes inside and outside their rules."""
    rank = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=rank, max_size=rank)))

    def tensor(shape_):
        dtype = np.dtype(draw(st.sampled_from(_DTYPES)))
        count = int(np.prod(shape_, dtype=np.int64))
        raw = draw(st.binary(min_size=count * dtype.itemsize, max_size=count * dtype.itemsize))
        return np.frombuffer(raw, np.uint8).view(dtype).reshape(shape_).copy()

    scale_shape = draw(st.sampled_from([(), shape, shape[:1], (shape[-1],) if shape else (), (2,)]))
    x, scale = tensor(shape), tensor(scale_shape)
    zero_point = draw(st.one_of(st.none(), st.just(scale_shape).map(tensor)))
    codes = [0, 1, 2, 3, 4, 5, 10, 16, 17, 21, 22, 23, 25, 26, 99, np.int8, ml_dtypes.int4, np.dtype(np.uint16),
             np.float64, "int8"]
    attributes = {
        "axis": draw(st.integers(-4, 4)),
        "block_size": draw(st.sampled_from([0, 0, 1, 2, 3, -1])),
        "opset": draw(st.sampled_from([10, 13, 19, 21, 23, 24, 25])),
        "output_dtype": draw(st.sampled_from(codes)),
    }
    op = draw(st.sampled_from(["Q", "DQ", "FQ"]))
    if op in ("Q", "FQ"):
        attributes["saturate"] = draw(st.sampled_from([0, 1]))
        attributes["precision"] = draw(st.sampled_from([0, 0, 1, 10, 16]))
    if op == "FQ":
        attributes["quantized_dtype"] = draw(st.sampled_from(codes))
        attributes["output_dtype"] = draw(st.sampled_from([0, 0, 1, 10, 16, 3, np.float16, ml_dtypes.bfloat16]))
    return op, x, scale, zero_point, attributes


def _outcome(function, *args, **kwargs):
    try:
        y = function(*args, **kwargs)
    except qdq.QdqError as error:
        return ("error", str(error))
    return ("value", y.dtype, y.shape, _bytes(y))


@seed(20261123)
@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(_plain_call())
def test_door_and_general_path_agree_on_any_plain_call(call):
    op, x, scale, zero_point, attributes = call
    function = {"Q": qdq.quantize_linear, "DQ": qdq.dequantize_linear, "FQ": qdq.quantize_dequantize}[op]
    through_door = _outcome(function, x, scale, zero_point, **attributes)
    through_general = _outcome(function, _general(x), _general(scale), _general(zero_point), **attributes)
    assert through_door == through_general


@pytest.mark.parametrize("output_dtype", [ml_dtypes.int4, np.dtype(np.int8), np.uint16, ml_dtypes.float8_e4m3fn])
def test_dtype_attributes_run_through_the_door(output_dtype):
    """README's `output_dtype=ml_dtypes.int4` spelling (a scalar type or a dtype) is taken as its code."""
    x = np.linspace(-3, 3, 16, dtype=np.float32)
    code = qdq.code_from_dtype(output_dtype)
    fast = _qdq._plain_quantize_linear(x, np.float32(0.25), None, 1, 0, 1, output_dtype, 0, 25, None)
    assert fast is not None
    by_code = _qdq._plain_quantize_linear(x, np.float32(0.25), None, 1, 0, 1, code, 0, 25, None)
    assert fast.dtype == np.dtype(output_dtype) and _bytes(fast) == _bytes(by_code)
    assert _bytes(fast) == _bytes(qdq.quantize_linear(_general(x), 0.25, output_dtype=output_dtype))


def test_output_cache_keeps_the_most_recent_sizes():
    """Released outputs of 2 MiB or more are cached (four at most); when full, the oldest go, so a
    loop whose sizes change keeps its current sizes. Each result is still correct."""
    mib = 1 << 20
    codes = {n: np.full(n * mib // 4, 7, np.uint8) for n in (4, 6, 8, 10, 12)}  # float32 outputs of n MiB
    scale = np.float32(0.5)
    for n, x in codes.items():
        y = qdq.dequantize_linear(x, scale)
        assert y.nbytes == n * mib and float(y[0]) == 3.5 and float(y[-1]) == 3.5
        del y
    sizes = [s // mib for s in _qdq._cached_output_sizes()]
    assert sizes[-4:] == [6, 8, 10, 12]  # 4 MiB, the oldest, was evicted
    y = qdq.dequantize_linear(codes[8], scale)  # taken from the cache ...
    assert 8 not in [s // mib for s in _qdq._cached_output_sizes()]
    assert float(y[123]) == 3.5
    del y  # ... and given back, now the newest
    assert [s // mib for s in _qdq._cached_output_sizes()][-1] == 8


def test_output_cache_takes_outputs_from_64_kib_in_powers_of_two():
    """A 64K-element float32 output (256 KiB) is cached at 256 KiB and taken again by the next call
    of its size; a 300 KiB one rounds to 512 KiB; outputs under 64 KiB are malloc's."""
    kib = 1 << 10
    scale = np.float32(0.25)
    for elements, cached in ((65536, 256 * kib), (75 * 1024, 512 * kib)):
        x = np.full(elements, 9, np.uint8)
        y = qdq.dequantize_linear(x, scale)
        assert y.nbytes == 4 * elements and float(y[0]) == 2.25 and float(y[-1]) == 2.25
        del y
        sizes = _qdq._cached_output_sizes()
        assert sizes[-1] == cached
        y = qdq.dequantize_linear(x, scale)  # taken again
        assert _qdq._cached_output_sizes().count(cached) == sizes.count(cached) - 1
        assert float(y[elements // 2]) == 2.25
        del y
    before = _qdq._cached_output_sizes()
    small = qdq.dequantize_linear(np.full(1000, 9, np.uint8), scale)  # 4,000 bytes
    del small
    assert _qdq._cached_output_sizes() == before


# (x dtype, quantized dtype, method, axis, block size, scale dtype): the toolkit's families.
TOOLKIT_CASES = [
    (np.float32, np.uint8, "minmax", None, 0, np.float32),
    (np.float32, np.int8, "symmetric", 0, 0, np.float32),
    (np.float32, ml_dtypes.int4, "minmax", 1, 32, np.float32),
    (np.float16, ml_dtypes.uint4, "symmetric_restricted", 1, 16, np.float16),
    (ml_dtypes.bfloat16, np.uint16, "minmax", 0, 3, ml_dtypes.bfloat16),
    (np.float32, ml_dtypes.float8_e4m3fn, "mx_floor", 1, 32, ml_dtypes.float8_e8m0fnu),
    (np.float32, ml_dtypes.float4_e2m1fn, "mx_rceil", 1, 32, ml_dtypes.float8_e8m0fnu),
    (np.float32, ml_dtypes.float8_e5m2, "symmetric", None, 0, np.float32),
]


@pytest.mark.parametrize("x_dtype,dtype,method,axis,block_size,scale_dtype", TOOLKIT_CASES)
def test_toolkit_door_matches_general_path(x_dtype, dtype, method, axis, block_size, scale_dtype):
    rng = np.random.default_rng(SEED + 7)
    x = (rng.standard_normal((6, 64)) * 3).astype(x_dtype)
    x[1, 5] = np.nan  # a NaN group takes the NaN scale either way
    kwargs = {"method": method, "axis": axis, "block_size": block_size, "scale_dtype": scale_dtype}
    code = qdq._METHODS[method]
    for quantize in (False, True):
        fast = _qdq._plain_toolkit(x, dtype, code, axis, block_size, scale_dtype, quantize, None)
        assert fast is not None, "the fast door declined plain arrays"
        if quantize:
            general = qdq.dynamic_quantize(_general(x), dtype, **kwargs)
        else:
            general = (None, *qdq.compute_qparams(_general(x), dtype, **kwargs))
        for got, want in zip(fast, general):
            assert (got is None) == (want is None)
            if want is not None:
                assert got.dtype == want.dtype and got.shape == want.shape
                assert _bytes(got) == _bytes(want)
    y, scale, zero_point = qdq.dynamic_quantize(x, dtype, **kwargs)
    out = np.empty_like(y)
    got = qdq.dynamic_quantize(x, dtype, out=out, **kwargs)
    assert got[0] is out and _bytes(out) == _bytes(y)
    assert _bytes(got[1]) == _bytes(scale)
    assert (got[2] is None) == (zero_point is None)


def test_toolkit_door_declines_what_the_general_path_names():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    declined = {
        "float64 x": (x.astype(np.float64), np.uint8, 0, 1, 0, np.float32, None),
        "non-contiguous x": (x[:, ::2], np.uint8, 0, 1, 0, np.float32, None),
        "string dtype": (x, "uint8", 0, 1, 0, np.float32, None),
        "block size without an axis": (x, np.uint8, 0, None, 2, np.float32, None),
        "numpy integer axis": (x, np.uint8, 0, np.int64(1), 0, np.float32, None),
        "out of another dtype": (x, np.uint8, 0, 1, 0, np.float32, np.empty((4, 6), np.int8)),
        "out of another shape": (x, np.uint8, 0, 1, 0, np.float32, np.empty((6, 4), np.uint8)),
    }
    for name, (xx, dtype, method, axis, block, scale_dtype, out) in declined.items():
        assert _qdq._plain_toolkit(xx, dtype, method, axis, block, scale_dtype, out is not None, out) is None, name
    with pytest.raises(qdq.QdqError, match="block_size is set but axis is None"):
        qdq.compute_qparams(x, np.uint8, block_size=2)
    with pytest.raises(qdq.QdqError, match="attribute 'block_size' is array"):  # found by the fuzzer
        qdq.compute_qparams(x, np.uint8, block_size=np.array([1, 2]))
    with pytest.raises(qdq.QdqError, match="out must be a numpy array, not list"):  # found by the fuzzer
        qdq.dynamic_quantize_linear(x, out=[1, [2]])
    with pytest.raises(qdq.QdqError, match="out must be a numpy array, not list"):
        qdq.quantize_linear(x, np.float32(0.5), out=[1, [2]])
    with pytest.raises(qdq.QdqError, match="method 'max' is not one of"):
        qdq.compute_qparams(x, np.uint8, method="max")
    with pytest.raises(qdq.QdqError):
        qdq.dynamic_quantize(x, np.uint8, axis=1, out=np.empty((4, 6), np.int8))
    # The C++ checks speak the same words through either path.
    with pytest.raises(qdq.QdqError) as through_door:
        qdq.dynamic_quantize(x, np.int32)
    with pytest.raises(qdq.QdqError) as through_general:
        qdq.dynamic_quantize(_general(x), np.int32)
    assert str(through_door.value) == str(through_general.value)


def test_dynamic_quantize_linear_door_matches_general_path():
    rng = np.random.default_rng(SEED + 8)
    for x in ((rng.standard_normal((5, 33)) * 7).astype(np.float32), np.array(2.5, np.float32),
              np.array([np.nan, 1.0, -3.0], np.float32)):
        fast = _qdq._plain_dynamic_quantize_linear(x, None)
        assert fast is not None, "the fast door declined a plain float32 array"
        general = qdq.dynamic_quantize_linear(_general(x))
        for got, want in zip(fast, general):
            assert got.dtype == want.dtype and got.shape == want.shape
            assert _bytes(got) == _bytes(want)
        out = np.empty(x.shape, np.uint8)
        got = qdq.dynamic_quantize_linear(x, out=out)
        assert got[0] is out and _bytes(out) == _bytes(general[0])
    assert _qdq._plain_dynamic_quantize_linear(np.zeros(4, np.float32), np.empty(4, np.int8)) is None
    for refused in (np.zeros(4, np.float16), np.zeros((0, 4), np.float32)):  # the C++ checks, either path
        with pytest.raises(qdq.QdqError) as through_door:
            qdq.dynamic_quantize_linear(refused)
        with pytest.raises(qdq.QdqError) as through_general:
            qdq.dynamic_quantize_linear(_general(refused))
        assert str(through_door.value) == str(through_general.value)
