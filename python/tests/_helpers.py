"""Shared helpers for the qdq conformance tests (imported as a plain module, not a conftest)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

FLOAT8_TYPES = [
    ml_dtypes.float8_e4m3fn,
    ml_dtypes.float8_e4m3fnuz,
    ml_dtypes.float8_e5m2,
    ml_dtypes.float8_e5m2fnuz,
]
FLOAT4 = ml_dtypes.float4_e2m1fn
E8M0 = ml_dtypes.float8_e8m0fnu
SMALL_FLOAT_TYPES = FLOAT8_TYPES + [FLOAT4]

# Bits of an element type (ml_dtypes stores every sub-byte type in one byte per element).
BITS = {
    np.dtype(np.uint8): 8, np.dtype(np.int8): 8, np.dtype(np.uint16): 16, np.dtype(np.int16): 16,
    np.dtype(np.int32): 32, np.dtype(np.uint32): 32,
    np.dtype(ml_dtypes.uint4): 4, np.dtype(ml_dtypes.int4): 4,
    np.dtype(ml_dtypes.uint2): 2, np.dtype(ml_dtypes.int2): 2,
    np.dtype(FLOAT4): 4, np.dtype(E8M0): 8,
    **{np.dtype(t): 8 for t in FLOAT8_TYPES},
}


def name(dtype) -> str:
    return np.dtype(dtype).name


def codes(dtype) -> np.ndarray:
    """Every code of a small type (float8: 256, float4: 16) as an array of that dtype."""
    bits = BITS[np.dtype(dtype)]
    return np.arange(1 << bits, dtype=np.uint8).view(dtype)


def raw_bits(a: np.ndarray) -> np.ndarray:
    """The stored bits of every element as an unsigned integer array (sub-byte types masked)."""
    a = np.asarray(a)
    dt = a.dtype
    size = dt.itemsize
    view = a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[size])
    bits = BITS.get(dt)
    if bits is not None and bits < 8:
        view = view & np.uint8((1 << bits) - 1)
    return view


def assert_bits_equal(got: np.ndarray, want: np.ndarray, inputs=None, what: str = "") -> None:
    """Bit-for-bit equality with a readable report of the first mismatches."""
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    g = raw_bits(got).reshape(-1)
    w = raw_bits(want).reshape(-1)
    bad = np.flatnonzero(g != w)
    if bad.size:
        width = 2 * got.dtype.itemsize
        lines = []
        flat_in = None if inputs is None else np.asarray(inputs).reshape(-1)
        for i in bad[:12]:
            src = ""
            if flat_in is not None:
                src = f"input {raw_bits(flat_in[i:i+1])[0]:#x} ({flat_in[i]!r}) "
            lines.append(f"  [{i}] {src}got {int(g[i]):#0{width + 2}x} want {int(w[i]):#0{width + 2}x}")
        raise AssertionError(f"{what}: {bad.size} of {g.size} elements differ\n" + "\n".join(lines))


def finite_max(dtype) -> float:
    return float(ml_dtypes.finfo(dtype).max)
