"""The `qdq` command-line tool, run as a subprocess on .npy files made with numpy / ml_dtypes.

Outputs of `qdq quantize` / `qdq dequantize` must equal the qdq Python package bit for bit (both
run the same C++ core, so any difference is a bug in the tool's .npy or argument handling);
calibration outputs are checked against an independent numpy computation of the documented
formulas; every error path must end in one "qdq: error:" line and a non-zero exit.

The binary is $QDQ_CLI, default <repo>/build/qdq (built by scripts/test.sh).
"""

from __future__ import annotations

import io
import os
import re
import subprocess
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import qdq

REPO = Path(__file__).resolve().parents[2]
CLI = Path(os.environ.get("QDQ_CLI", str(REPO / "build" / "qdq")))

if not CLI.is_file():
    pytest.skip(f"qdq CLI binary not found at {CLI} (build target qdq_cli or set QDQ_CLI)", allow_module_level=True)

RNG_SEED = 20240601


# ------------------------------------------------------------------------------------------------
# helpers


def run(*args, expect: int = 0) -> subprocess.CompletedProcess:
    result = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=120)
    assert result.returncode == expect, (
        f"qdq {' '.join(map(str, args))}: exit {result.returncode}, expected {expect}\n"
        f"stdout: {result.stdout}\nstderr: {result.stderr}"
    )
    return result


def run_error(*args, expect: int = 1) -> str:
    """Runs a failing command; asserts one 'qdq: error:' line on stderr and returns it."""
    result = run(*args, expect=expect)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, f"expected one stderr line, got {lines!r}"
    assert lines[0].startswith("qdq: error: "), lines[0]
    return lines[0]


def save(path: Path, array: np.ndarray) -> Path:
    np.save(path, array)
    return path


def codes(array: np.ndarray) -> np.ndarray:
    """The stored code of every element as an unsigned integer array (what qdq writes)."""
    width = array.dtype.itemsize
    return np.ascontiguousarray(array).view({1: np.uint8, 2: np.uint16, 4: np.uint32}[width])


def load_as(path: Path, dtype) -> np.ndarray:
    """A qdq output file viewed as `dtype`, the documented way (np.load(path).view(dtype))."""
    return np.load(path).view(dtype)


def sample(shape, spread: float = 2.0, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(RNG_SEED + seed)
    x = (rng.standard_normal(shape) * spread).astype(np.float32)
    x.reshape(-1)[:: 7] = 0.0  # exact zeros, and ties below, exercise rounding
    return x


NATIVE = {"uint8", "int8", "uint16", "int16", "int32", "uint32", "float16", "float32"}


def is_float_type(dtype: np.dtype) -> bool:
    # ml_dtypes' kinds vary ('V' for most, 'f' for float8_e5m2), so go by name.
    return "float" in np.dtype(dtype).name


DTYPES = {name: np.dtype(getattr(ml_dtypes, name, None) or name) for name in [
    "uint8", "int8", "uint16", "int16", "uint4", "int4", "uint2", "int2",
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float4_e2m1fn",
]}


# ------------------------------------------------------------------------------------------------
# help, demo, bench


@pytest.mark.parametrize("command", [[], ["demo"], ["quantize"], ["dequantize"], ["roundtrip"], ["bench"], ["directml"]])
def test_help_exits_zero(command):
    out = run(*command, "--help").stdout
    assert "Usage:" in out


def test_help_documents_storage_and_calibration():
    quantize_help = run("quantize", "--help").stdout
    assert "np.load(path).view(ml_dtypes.float8_e4m3fn)" in quantize_help
    assert "--calibrate" in quantize_help and "--per-axis" in quantize_help and "OUT.scale.npy" in quantize_help
    assert "bench/compare.py" in run("bench", "--help").stdout


def test_highway_timer_calibration_skipped_at_start():
    # libhwy 1.0.3 (Debian 12, what scripts/install-deps.sh installs) measures its benchmark timer
    # in a static initializer, 2.5 ms of every start; tools/hwy_startup.cpp defines the function in
    # the executable, and the dynamic linker must bind libhwy's call to that definition. A libhwy
    # that no longer calls it at load fails the first assertion: then the definition can go.
    result = subprocess.run([str(CLI), "--version"], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "LD_DEBUG": "bindings"})
    assert result.returncode == 0
    bindings = [line for line in result.stderr.splitlines() if "_ZN3hwy8platform15TimerResolutionEv" in line]
    assert bindings, "libhwy did not call TimerResolution at load"
    assert all(line.split(" to ")[1].split(" [")[0].endswith(CLI.name) for line in bindings), bindings


def test_ml_dtypes_int4_views_low_nibble():
    # The documented loading recipe relies on this: a code byte views directly as ml_dtypes.int4.
    assert np.array([15], np.uint8).view(ml_dtypes.int4)[0] == -1


def test_demo_runs():
    out = run("demo").stdout
    assert "qdq demo" in out and "SQNR" in out


def test_bench_small():
    out = run("bench", "--elements", 4096, "--threads", 1).stdout
    rows = [line for line in out.splitlines() if re.match(r"^(Q|DQ)\s", line)]
    assert len(rows) == 2 * 5 * 3
    for row in rows:
        fields = row.split()
        assert len(fields) == 6, row
        assert all(float(f) > 0 for f in fields[3:]), row
    assert "1 threads" in out


# ------------------------------------------------------------------------------------------------
# quantize: bit-for-bit against the Python package

# The tool runs an operator over x a chunk of rows at a time (tools/commands.cpp, run_in_chunks),
# slicing the scale and zero point to each chunk's rows. The bit-for-bit tests run with its default
# chunk (one chunk at these sizes) and with chunks of 5 and 64 elements: one row or a few per
# chunk, chunks of whole blocks along the first axis, a short last chunk.
CHUNKS = [None, 5, 64]


@pytest.fixture(params=CHUNKS, ids=lambda c: f"chunk-{c or 'default'}")
def chunk(request, monkeypatch):
    if request.param is None:
        monkeypatch.delenv("QDQ_CLI_CHUNK_ELEMENTS", raising=False)
    else:
        monkeypatch.setenv("QDQ_CLI_CHUNK_ELEMENTS", str(request.param))
    return request.param



QUANTIZE_CASES = [
    # id, type, x shape, granularity (None / ("axis", a) / ("block", a, B)), zero point, extra
    ("uint8-tensor-zp", "uint8", (5, 7), None, 128, {}),
    ("int8-tensor", "int8", (3, 4, 5), None, None, {}),
    ("int8-axis0", "int8", (6, 9), ("axis", 0), "file", {}),
    ("uint16-axis1", "uint16", (4, 10), ("axis", 1), "file", {}),
    ("int16-tensor-zp", "int16", (33,), None, -7, {}),
    ("int4-block", "int4", (4, 16), ("block", 1, 4), "file", {}),
    ("int4-block-first-axis", "int4", (10, 3), ("block", 0, 4), "file", {}),
    ("uint4-odd-count", "uint4", (3, 5), None, 3, {}),
    ("int2-axis", "int2", (4, 6), ("axis", 0), None, {}),
    ("uint2-tensor", "uint2", (7,), None, 1, {}),
    ("e4m3fn-tensor", "float8_e4m3fn", (8, 8), None, None, {}),
    ("e4m3fn-nosat", "float8_e4m3fn", (8, 8), None, None, {"saturate": 0}),
    ("e4m3fnuz-axis", "float8_e4m3fnuz", (5, 6), ("axis", 1), None, {}),
    ("e5m2-block", "float8_e5m2", (4, 64), ("block", 1, 32), None, {}),
    ("e5m2fnuz-tensor", "float8_e5m2fnuz", (9,), None, 0, {}),
    ("fp4-block", "float4_e2m1fn", (6, 32), ("block", 1, 16), None, {}),
    ("fp4-tensor-odd", "float4_e2m1fn", (5, 3), None, None, {}),
    ("uint8-opset13", "uint8", (4, 4), None, None, {"opset": 13}),
    ("int8-opset19-no-zp", "int8", (4, 4), None, None, {"opset": 19}),
    ("int8-precision-fp16", "int8", (4, 4), None, None, {"precision": "float16"}),
    # Rank 1: the scale's rows are sliced with x's (chunks of whole blocks, a partial last block).
    ("int8-rank1-block", "int8", (13,), ("block", 0, 4), "file", {}),
    ("uint8-rank1-axis", "uint8", (11,), ("axis", 0), "file", {}),
    ("int4-block-first-axis-3", "int4", (7, 5), ("block", 0, 3), "file", {}),
]


def _scale_for(x: np.ndarray, granularity, rng) -> np.ndarray:
    if granularity is None:
        return np.float32(0.0375)
    if granularity[0] == "axis":
        return (0.02 + rng.random(x.shape[granularity[1]]) * 0.1).astype(np.float32)
    _, axis, block = granularity
    shape = list(x.shape)
    shape[axis] = -(-shape[axis] // block)
    return (0.02 + rng.random(shape) * 0.1).astype(np.float32)


def _zero_point_for(dtype: np.dtype, shape, rng) -> np.ndarray:
    if is_float_type(dtype):
        return np.zeros(shape, dtype)  # float zero points must be 0
    info = np.iinfo(dtype) if dtype.name in NATIVE else ml_dtypes.iinfo(dtype)
    return rng.integers(int(info.min), int(info.max) + 1, size=shape).astype(dtype)


@pytest.mark.parametrize("case", QUANTIZE_CASES, ids=[c[0] for c in QUANTIZE_CASES])
def test_quantize_matches_python(tmp_path, chunk, case):
    _, type_name, shape, granularity, zero_point, extra = case
    dtype = DTYPES[type_name]
    rng = np.random.default_rng(RNG_SEED)
    x = sample(shape, spread=3.0)
    if extra.get("saturate") == 0:
        x.reshape(-1)[:3] = [1e6, -1e6, 100.0]  # beyond the type's range
    scale = _scale_for(x, granularity, rng)
    args = ["quantize", save(tmp_path / "x.npy", x), tmp_path / "y.npy", "--type", type_name]
    kwargs = {"opset": extra.get("opset", 25)}
    if granularity is None:
        args += ["--scale", "0.0375"]
    else:
        args += ["--scale", save(tmp_path / "scale.npy", scale), "--axis", granularity[1]]
        kwargs["axis"] = granularity[1]
        if granularity[0] == "block":
            args += ["--block-size", granularity[2]]
            kwargs["block_size"] = granularity[2]
    zp = None
    if zero_point == "file":
        zp = _zero_point_for(dtype, np.shape(scale), rng)
        args += ["--zero-point", save(tmp_path / "zp.npy", zp)]  # ml_dtypes types save as '<V1'
    elif zero_point is not None:
        zp = np.array(zero_point).astype(dtype)
        args += ["--zero-point", zero_point]
    for key in ("saturate", "opset", "precision"):
        if key in extra:
            args += [f"--{key}", extra[key]]
    if "saturate" in extra:
        kwargs["saturate"] = extra["saturate"]
    if "precision" in extra:
        kwargs["precision"] = extra["precision"]
    if zp is None and type_name != "uint8":
        kwargs["output_dtype"] = dtype
        if kwargs["opset"] < 21:  # no output_dtype before v21: the tool passes a zero zero point
            del kwargs["output_dtype"]
            zp = np.zeros(np.shape(scale), dtype)

    out = run(*args).stdout
    assert f"wrote {tmp_path / 'y.npy'}" in out
    expected = qdq.quantize_linear(x, scale, zp, **kwargs)
    stored = np.load(tmp_path / "y.npy")
    if dtype.name not in NATIVE:
        assert stored.dtype == np.dtype("V1")  # one code per element, raw bytes as ml_dtypes saves them
    else:
        assert stored.dtype == dtype
    got = stored.view(dtype)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(codes(got), codes(expected))


def test_dequantize_reads_ml_dtypes_e5m2_file(tmp_path):
    # np.save files ml_dtypes.float8_e5m2 as '<f1' (which np.load itself cannot read back) and the
    # other 1-byte ml_dtypes types as '<V1'; qdq reads both, given --type.
    x = np.array([[1.0, -2.0, 0.5], [57344.0, -0.0, 0.25]], ml_dtypes.float8_e5m2)
    np.save(tmp_path / "x.npy", x)
    assert b"'descr': '<f1'" in (tmp_path / "x.npy").read_bytes()[:64]
    assert "'|f1'" in run_error("dequantize", tmp_path / "x.npy", tmp_path / "y.npy", "-s", 2)
    run("dequantize", tmp_path / "x.npy", tmp_path / "y.npy", "-s", 2, "-t", "float8_e5m2")
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), qdq.dequantize_linear(x, np.float32(2)))


def test_quantize_uint8_codes_zero_point_file(tmp_path):
    # A zero point saved as plain uint8 codes (not ml_dtypes) is read as codes of --type.
    x = sample((4, 8))
    scale = np.full(4, 0.25, np.float32)
    zp = np.array([-8, -1, 0, 7], ml_dtypes.int4)
    np.save(tmp_path / "zp.npy", zp.view(np.uint8))
    run("quantize", save(tmp_path / "x.npy", x), tmp_path / "y.npy", "-t", "int4", "-s",
        save(tmp_path / "s.npy", scale), "-z", tmp_path / "zp.npy", "-a", 0)
    expected = qdq.quantize_linear(x, scale, zp, axis=0)
    np.testing.assert_array_equal(codes(load_as(tmp_path / "y.npy", ml_dtypes.int4)), codes(expected))


@pytest.mark.parametrize("how", ["ml_dtypes", "uint16-codes"])
def test_quantize_bfloat16_input(tmp_path, how):
    x = sample((6, 10), spread=4.0).astype(ml_dtypes.bfloat16)
    args = ["quantize", tmp_path / "x.npy", tmp_path / "y.npy", "-t", "int8", "-s", "0.0625"]
    if how == "ml_dtypes":
        np.save(tmp_path / "x.npy", x)  # '<V2': read as bfloat16 without a flag
    else:
        np.save(tmp_path / "x.npy", x.view(np.uint16))
        args += ["--input-type", "bfloat16"]
    run(*args)
    expected = qdq.quantize_linear(x, np.float32(0.0625), output_dtype=np.int8)
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), expected)


@pytest.mark.parametrize("x_dtype", [np.float16, np.int32])
def test_quantize_float16_and_int32_input(tmp_path, x_dtype):
    x = (sample((5, 5), spread=50.0)).astype(x_dtype)
    run("quantize", save(tmp_path / "x.npy", x), tmp_path / "y.npy", "-t", "uint8", "-s", "0.75", "-z", 100)
    expected = qdq.quantize_linear(x, np.float32(0.75), np.uint8(100))
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), expected)


def test_quantize_zero_d_and_empty(tmp_path, chunk):
    for shape in [(), (0,), (3, 0)]:
        x = np.full(shape, 1.5, np.float32)
        run("quantize", save(tmp_path / "x.npy", x), tmp_path / "y.npy", "-t", "int4", "-s", 0.5)
        got = load_as(tmp_path / "y.npy", ml_dtypes.int4)
        assert got.shape == shape
        np.testing.assert_array_equal(codes(got), codes(qdq.quantize_linear(x, np.float32(0.5), output_dtype=ml_dtypes.int4)))


def test_npy_version_2_input_and_version_1_output(tmp_path):
    x = sample((3, 4))
    with open(tmp_path / "x.npy", "wb") as f:
        np.lib.format.write_array(f, x, version=(2, 0))
    run("quantize", tmp_path / "x.npy", tmp_path / "y.npy", "-t", "uint8", "-s", 0.1)
    with open(tmp_path / "y.npy", "rb") as f:
        assert np.lib.format.read_magic(f) == (1, 0)
        f.seek(0)
        raw = f.read()
    header_end = raw.index(b"\n") + 1
    assert header_end % 64 == 0  # numpy's alignment
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), qdq.quantize_linear(x, np.float32(0.1)))


def test_large_file_read_and_written_whole(tmp_path):
    # 2^21 + 3 elements: a body of more than one huge page (the tool's buffers from 2 MiB up are
    # aligned to 2 MiB and advised as huge pages), an odd size, and an output rewritten in place.
    x = sample(((1 << 21) + 3,), spread=40.0, seed=5)
    x_path = save(tmp_path / "x.npy", x)
    for _ in range(2):  # the second run truncates and rewrites y.npy
        run("quantize", x_path, tmp_path / "y.npy", "-t", "int4", "-s", 0.5)
        got = load_as(tmp_path / "y.npy", ml_dtypes.int4)
        np.testing.assert_array_equal(codes(got), codes(qdq.quantize_linear(x, np.float32(0.5), output_dtype=ml_dtypes.int4)))
    run("dequantize", tmp_path / "y.npy", tmp_path / "x2.npy", "-t", "int4", "-s", 0.5)
    np.testing.assert_array_equal(np.load(tmp_path / "x2.npy"),
                                  qdq.dequantize_linear(load_as(tmp_path / "y.npy", ml_dtypes.int4), np.float32(0.5)))


def run_on_stdin(data: bytes, *args) -> subprocess.CompletedProcess:
    """The CLI reading x from a pipe (/dev/stdin), which has no size to read ahead by."""
    return subprocess.run([str(CLI), *map(str, args)], input=data, capture_output=True, timeout=120)


def test_input_from_a_pipe(tmp_path):
    # 3 MiB of float32 through a pipe: more than the first 1 MiB piece the reader takes from a stream.
    x = sample((768, 1024), seed=6)
    np.save(tmp_path / "x.npy", x)
    raw = (tmp_path / "x.npy").read_bytes()
    result = run_on_stdin(raw, "quantize", "/dev/stdin", tmp_path / "y.npy", "-t", "int8", "-s", 0.05)
    assert result.returncode == 0, result.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"),
                                  qdq.quantize_linear(x, np.float32(0.05), output_dtype=np.int8))


@pytest.mark.parametrize("kind", ["truncated", "trailing", "header-too-long", "garbage", "empty"])
def test_malformed_input_from_a_pipe(tmp_path, kind):
    x = sample((64, 1024), seed=7)
    np.save(tmp_path / "x.npy", x)
    raw = (tmp_path / "x.npy").read_bytes()
    data = {"truncated": raw[:-5], "trailing": raw + b"xyz", "header-too-long": b"\x93NUMPY\x01\x00\xff\xff{'descr'",
            "garbage": b"not numpy at all", "empty": b""}[kind]
    result = run_on_stdin(data, "quantize", "/dev/stdin", tmp_path / "y.npy", "-t", "int8", "-s", 1)
    assert result.returncode == 1
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("qdq: error: '/dev/stdin'"), lines
    body = len(raw) - 128  # np.save's preamble and header are 128 bytes here
    expected = {"truncated": f"needs {body} data bytes, the file has {body - 5}",
                "trailing": f"needs {body} data bytes, the file has {body + 3}",
                "header-too-long": "header length 65535 runs past the end of the file",
                "garbage": "not a .npy file", "empty": "not a .npy file"}[kind]
    assert expected in lines[0]
    assert not (tmp_path / "y.npy").exists()


def test_regular_file_sizes_in_messages(tmp_path):
    # The same messages from a regular file, where the size is known before the body is read.
    x = sample((8, 8))
    np.save(tmp_path / "x.npy", x)
    raw = (tmp_path / "x.npy").read_bytes()
    (tmp_path / "t.npy").write_bytes(raw + b"xyz")
    line = run_error("quantize", tmp_path / "t.npy", tmp_path / "y.npy", "-t", "int8", "-s", 1)
    assert f"needs {len(raw) - 128} data bytes, the file has {len(raw) - 125}" in line


def test_output_to_a_pipe(tmp_path):
    # /dev/stdout as the output: a file whose blocks cannot be reserved (fallocate fails), written anyway.
    x = sample((16, 16), seed=8)
    result = subprocess.run([str(CLI), "quantize", str(save(tmp_path / "x.npy", x)), "/dev/stdout", "-t", "int8",
                             "-s", "0.1"], capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr
    got = np.load(io.BytesIO(result.stdout[:128 + x.size]))
    np.testing.assert_array_equal(got, qdq.quantize_linear(x, np.float32(0.1), output_dtype=np.int8))


# ------------------------------------------------------------------------------------------------
# dequantize: bit-for-bit against the Python package


def _random_codes(dtype: np.dtype, shape, rng) -> np.ndarray:
    if dtype.name in NATIVE:
        info = np.iinfo(dtype)
        return rng.integers(int(info.min), int(info.max) + 1, size=shape, dtype=np.int64).astype(dtype)
    bits = {1: 8}[dtype.itemsize] if "float8" in dtype.name else (4 if dtype.name in ("int4", "uint4", "float4_e2m1fn") else 2)
    raw = rng.integers(0, 1 << bits, size=shape, dtype=np.uint8)
    if "float8" in dtype.name:
        raw &= 0x77  # finite values (no NaN codes: NaN propagation is not what this test is about)
    return raw.view(dtype)


DEQUANTIZE_CASES = [
    # id, type, shape, granularity, zero point, file form, output type
    ("uint8-tensor-zp", "uint8", (4, 6), None, 7, "native", None),
    ("int8-axis0", "int8", (6, 5), ("axis", 0), "file", "native", None),
    ("int16-block", "int16", (4, 12), ("block", 1, 4), "file", "native", None),
    ("uint16-tensor", "uint16", (10,), None, None, "native", None),
    ("int32-tensor-zp", "int32", (3, 3), None, -5, "native", None),
    ("int4-block-codes", "int4", (4, 16), ("block", 1, 8), "file", "uint8", None),
    ("int4-ml_dtypes", "int4", (5, 3), None, -2, "ml_dtypes", None),
    ("uint4-axis", "uint4", (3, 7), ("axis", 1), "file", "ml_dtypes", None),
    ("int2-tensor", "int2", (9,), None, None, "uint8", None),
    ("uint2-axis", "uint2", (4, 2), ("axis", 0), "file", "ml_dtypes", None),
    ("e4m3fn-tensor", "float8_e4m3fn", (8, 8), None, None, "ml_dtypes", None),
    ("e4m3fnuz-axis", "float8_e4m3fnuz", (4, 6), ("axis", 1), None, "uint8", None),
    ("e5m2-block", "float8_e5m2", (4, 64), ("block", 1, 32), None, "ml_dtypes", None),
    ("e5m2fnuz-tensor", "float8_e5m2fnuz", (11,), None, 0, "uint8", None),
    ("fp4-block", "float4_e2m1fn", (6, 32), ("block", 1, 16), None, "ml_dtypes", None),
    ("int8-to-fp16", "int8", (4, 4), None, 3, "native", "float16"),
    ("uint4-to-bf16", "uint4", (4, 4), ("axis", 0), "file", "uint8", "bfloat16"),
    ("int8-block-first-axis", "int8", (7, 5), ("block", 0, 3), "file", "native", None),
    ("uint8-rank1-block", "uint8", (13,), ("block", 0, 4), "file", "native", None),
]


@pytest.mark.parametrize("case", DEQUANTIZE_CASES, ids=[c[0] for c in DEQUANTIZE_CASES])
def test_dequantize_matches_python(tmp_path, chunk, case):
    _, type_name, shape, granularity, zero_point, form, output_type = case
    dtype = DTYPES.get(type_name, np.dtype(type_name))
    rng = np.random.default_rng(RNG_SEED + 1)
    x = _random_codes(dtype, shape, rng)
    scale = _scale_for(x, granularity, rng)
    if form == "uint8":
        np.save(tmp_path / "x.npy", x.view(np.uint8))
    else:
        np.save(tmp_path / "x.npy", x)
    args = ["dequantize", tmp_path / "x.npy", tmp_path / "y.npy"]
    if form != "native":
        args += ["--type", type_name]
    kwargs = {}
    if granularity is None:
        args += ["--scale", "0.0375"]
    else:
        args += ["--scale", save(tmp_path / "scale.npy", scale), "--axis", granularity[1]]
        kwargs["axis"] = granularity[1]
        if granularity[0] == "block":
            args += ["--block-size", granularity[2]]
            kwargs["block_size"] = granularity[2]
    zp = None
    if zero_point == "file":
        zp = _random_codes(dtype, np.shape(scale), rng) if dtype.name in NATIVE else \
            _zero_point_for(dtype, np.shape(scale), rng)
        np.save(tmp_path / "zp.npy", zp.view(np.uint8) if form == "uint8" else zp)
        args += ["--zero-point", tmp_path / "zp.npy"]
    elif zero_point is not None:
        zp = np.array(zero_point).astype(dtype)
        args += ["--zero-point", zero_point]
    out_dtype = np.dtype(np.float32)
    if output_type:
        args += ["--output-type", output_type]
        out_dtype = DTYPES.get(output_type) or np.dtype(getattr(ml_dtypes, output_type, output_type))
        kwargs["output_dtype"] = out_dtype

    run(*args)
    expected = qdq.dequantize_linear(x, scale, zp, **kwargs)
    stored = np.load(tmp_path / "y.npy")
    if output_type == "bfloat16":
        assert stored.dtype == np.dtype("V2")  # bfloat16 codes, as ml_dtypes saves them
    got = stored.view(out_dtype)
    assert got.shape == expected.shape and expected.dtype == out_dtype
    np.testing.assert_array_equal(codes(got), codes(expected))


def test_quantize_then_dequantize_files_chain(tmp_path, chunk):
    # The quantize output ('|V1' codes) feeds dequantize directly when --type is named.
    x = sample((4, 32))
    run("quantize", save(tmp_path / "x.npy", x), tmp_path / "q.npy", "-t", "float4_e2m1fn", "--calibrate", "minmax",
        "-b", 16)
    run("dequantize", tmp_path / "q.npy", tmp_path / "d.npy", "-t", "float4_e2m1fn", "-s", tmp_path / "q.scale.npy",
        "-z", tmp_path / "q.zero_point.npy", "-b", 16)
    scale = np.load(tmp_path / "q.scale.npy")
    y = qdq.quantize_linear(x, scale, np.zeros(scale.shape, ml_dtypes.float4_e2m1fn), block_size=16)
    np.testing.assert_array_equal(np.load(tmp_path / "d.npy"), qdq.dequantize_linear(y, scale, block_size=16))


# ------------------------------------------------------------------------------------------------
# calibration: against numpy


def numpy_calibration(x: np.ndarray, dtype: np.dtype, method: str, granularity):
    """What the CLI must write: qdq.compute_qparams through the Python door (the formulas themselves
    are tested against an independent numpy transcription in test_toolkit.py)."""
    if is_float_type(dtype) and method == "minmax":
        method = "symmetric"  # the CLI's historical spelling for float types
    axis = None if granularity is None else granularity[1]
    block = granularity[2] if granularity is not None and granularity[0] == "block" else 0
    scale_dtype = ml_dtypes.float8_e8m0fnu if method.startswith("mx_") else np.float32
    scale, zp = qdq.compute_qparams(x, dtype, method=method, axis=axis, block_size=block, scale_dtype=scale_dtype)
    if zp is None:
        zp = np.zeros(scale.shape, dtype)
    return scale, zp


CALIBRATION_CASES = [
    ("int8", "minmax", None),
    ("int8", "symmetric", ("axis", 0)),
    ("uint8", "minmax", ("axis", 1)),
    ("uint8", "symmetric", None),
    ("int4", "minmax", ("block", 1, 8)),
    ("uint4", "minmax", ("block", 0, 3)),
    ("int16", "minmax", ("axis", -1)),
    ("int2", "symmetric", ("block", 1, 4)),
    ("float8_e4m3fn", "minmax", ("axis", 0)),
    ("float8_e5m2", "symmetric", None),
    ("float4_e2m1fn", "minmax", ("block", 1, 8)),
    ("uint8", "symmetric_restricted", ("axis", 0)),
    ("float8_e4m3fn", "mx_floor", ("block", 1, 8)),
    ("float4_e2m1fn", "mx_rceil", ("block", 1, 8)),
]


@pytest.mark.parametrize("type_name,method,granularity", CALIBRATION_CASES,
                         ids=[f"{t}-{m}-{g[0] + str(g[1:]) if g else 'tensor'}" for t, m, g in CALIBRATION_CASES])
def test_calibration_matches_numpy(tmp_path, chunk, type_name, method, granularity):
    dtype = DTYPES[type_name]
    x = sample((6, 24), spread=1.5, seed=3)
    x[1] *= 40.0          # rows of different spread
    x[2] = np.abs(x[2])   # all >= 0: the range is widened to include 0
    x[3] = 0.0            # a zero range -> scale 1
    x[4] = -np.abs(x[4]) - 0.5
    args = ["quantize", save(tmp_path / "x.npy", x), tmp_path / "out.npy", "-t", type_name, "--calibrate", method]
    kwargs = {}
    if granularity is not None:
        args += ["--axis", granularity[1]]
        kwargs["axis"] = granularity[1]
        if granularity[0] == "axis":
            args += ["--per-axis"]
        else:
            args += ["--block-size", granularity[2]]
            kwargs["block_size"] = granularity[2]
    out = run(*args).stdout
    assert str(tmp_path / "out.scale.npy") in out and str(tmp_path / "out.zero_point.npy") in out

    want_scale, want_zp = numpy_calibration(x, dtype, method, granularity)
    scale = np.load(tmp_path / "out.scale.npy")
    zp = load_as(tmp_path / "out.zero_point.npy", dtype)
    if method.startswith("mx_"):
        scale = scale.view(ml_dtypes.float8_e8m0fnu) if scale.dtype != ml_dtypes.float8_e8m0fnu else scale
    assert scale.dtype == want_scale.dtype and scale.shape == want_scale.shape, (scale.dtype, want_scale.dtype)
    np.testing.assert_array_equal(codes(scale), codes(want_scale))
    np.testing.assert_array_equal(codes(zp), codes(want_zp))
    # And the output is exactly QuantizeLinear with those parameters.
    expected = qdq.quantize_linear(x, want_scale, want_zp, **kwargs)
    np.testing.assert_array_equal(codes(load_as(tmp_path / "out.npy", dtype)), codes(expected))


def test_calibration_non_finite_groups(tmp_path):
    """A NaN makes its group's scale NaN, an infinity infinite (docs/semantics.md); others are finite."""
    x = np.array([[1.0, -3.0, np.nan], [np.inf, 2.0, 1.0], [1.0, -3.0, 0.5]], np.float32)
    run("quantize", save(tmp_path / "x.npy", x), tmp_path / "o.npy", "-t", "int8", "--calibrate", "symmetric",
        "--per-axis", "--axis", "0")
    scale = np.load(tmp_path / "o.scale.npy")
    assert np.isnan(scale[0]) and scale[1] == np.inf and scale[2] == np.float32(3.0) / np.float32(127.5)
    assert (np.load(tmp_path / "o.zero_point.npy") == 0).all()


def test_calibration_output_without_npy_suffix(tmp_path):
    x = sample((2, 4))
    out = run("quantize", save(tmp_path / "x.npy", x), tmp_path / "q", "-t", "uint8", "--calibrate", "minmax").stdout
    assert (tmp_path / "q.scale.npy").is_file() and (tmp_path / "q.zero_point.npy").is_file()
    assert "q.scale.npy" in out


# ------------------------------------------------------------------------------------------------
# roundtrip


def _stats(out: str) -> dict:
    values = {}
    for key, label in [("max", "max abs error"), ("mean", "mean abs error"), ("rmse", "RMSE"), ("sqnr", "SQNR dB")]:
        match = re.search(rf"^{label}:\s+(\S+)$", out, re.M)
        assert match, f"no '{label}' line in:\n{out}"
        values[key] = float(match.group(1))
    match = re.search(r"^changed:\s+(\d+) of (\d+) elements$", out, re.M)
    assert match, out
    values["changed"], values["total"] = int(match.group(1)), int(match.group(2))
    return values


@pytest.mark.parametrize("type_name,extra", [
    ("int8", ["--scale", "0.05"]),
    ("int4", ["--calibrate", "minmax", "--per-axis", "--axis", "0"]),
    ("float8_e4m3fn", ["--calibrate", "symmetric", "--block-size", "8"]),
    ("uint8", ["--calibrate", "minmax"]),
])
def test_roundtrip_statistics(tmp_path, chunk, type_name, extra):
    dtype = DTYPES[type_name]
    x = sample((8, 32), spread=1.0, seed=5)
    out = run("roundtrip", save(tmp_path / "x.npy", x), "-t", type_name, *extra, "-o", tmp_path / "r.npy").stdout
    stats = _stats(out)

    # Recompute with the Python package from the same parameters.
    if "--scale" in extra:
        scale, zp, kwargs = np.float32(0.05), None, {"output_dtype": dtype}
        y = qdq.quantize_linear(x, scale, zp, **kwargs)
        restored = qdq.dequantize_linear(y, scale)
    else:
        granularity = ("axis", 0) if "--per-axis" in extra else ("block", 1, 8) if "--block-size" in extra else None
        scale, zp = numpy_calibration(x, dtype, extra[1], granularity)
        kwargs = {}
        if granularity:
            kwargs["axis"] = granularity[1]
            if granularity[0] == "block":
                kwargs["block_size"] = granularity[2]
        y = qdq.quantize_linear(x, scale, zp, **kwargs)
        restored = qdq.dequantize_linear(y, scale, zp, **kwargs)
    np.testing.assert_array_equal(np.load(tmp_path / "r.npy"), restored)
    if "--calibrate" in extra:  # written beside --output
        np.testing.assert_array_equal(np.load(tmp_path / "r.scale.npy"), scale)
        np.testing.assert_array_equal(codes(load_as(tmp_path / "r.zero_point.npy", dtype)), codes(zp))
    error = np.abs(restored.astype(np.float64) - x.astype(np.float64))
    assert stats["max"] == pytest.approx(error.max(), rel=1e-7, abs=1e-12)
    assert stats["mean"] == pytest.approx(error.mean(), rel=1e-7, abs=1e-12)
    assert stats["rmse"] == pytest.approx(np.sqrt((error ** 2).mean()), rel=1e-7, abs=1e-12)
    sqnr = 10 * np.log10((x.astype(np.float64) ** 2).sum() / (error ** 2).sum())
    assert stats["sqnr"] == pytest.approx(sqnr, abs=1e-3)
    assert stats["changed"] == int((restored != x).sum())
    assert stats["total"] == x.size


def test_roundtrip_exact_values_report_zero_error(tmp_path, chunk):
    x = np.array([0.0, 0.5, -1.0, 2.0], np.float32)  # multiples of the scale: exact
    stats = _stats(run("roundtrip", save(tmp_path / "x.npy", x), "-t", "int8", "-s", "0.5").stdout)
    assert stats["max"] == 0 and stats["changed"] == 0
    assert "inf" in run("roundtrip", tmp_path / "x.npy", "-t", "int8", "-s", "0.5").stdout


# ------------------------------------------------------------------------------------------------
# errors: one line, non-zero exit


def _malformed_files(tmp_path: Path) -> dict:
    files = {}
    files["garbage"] = tmp_path / "garbage.npy"
    files["garbage"].write_bytes(b"this is not numpy")
    x = sample((4, 4))
    np.save(tmp_path / "good.npy", x)
    raw = (tmp_path / "good.npy").read_bytes()
    files["truncated"] = tmp_path / "truncated.npy"
    files["truncated"].write_bytes(raw[:-5])
    files["trailing"] = tmp_path / "trailing.npy"
    files["trailing"].write_bytes(raw + b"xx")
    header = b"{'descr': '<f4', 'fortran_order': False, }"
    files["no-shape"] = tmp_path / "noshape.npy"
    files["no-shape"].write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header)
    files["header-too-long"] = tmp_path / "hlen.npy"
    files["header-too-long"].write_bytes(b"\x93NUMPY\x01\x00\xff\xff{'descr'")
    files["bad-version"] = tmp_path / "v9.npy"
    files["bad-version"].write_bytes(b"\x93NUMPY\x09\x00" + raw[8:])
    files["fortran"] = save(tmp_path / "fortran.npy", np.asfortranarray(sample((3, 5))))
    files["big-endian"] = save(tmp_path / "big.npy", x.astype(">f4"))
    np.save(tmp_path / "object.npy", np.array([1, "a"], dtype=object), allow_pickle=True)
    files["object"] = tmp_path / "object.npy"
    files["structured"] = save(tmp_path / "rec.npy", np.zeros(3, dtype=[("a", "<f4"), ("b", "<i4")]))
    files["float64"] = save(tmp_path / "f64.npy", x.astype(np.float64))
    files["string"] = save(tmp_path / "str.npy", np.array(["ab", "c"]))
    files["directory"] = tmp_path
    return files


MALFORMED = ["garbage", "truncated", "trailing", "no-shape", "header-too-long", "bad-version", "fortran",
             "big-endian", "object", "structured", "float64", "string", "directory"]
EXPECTED_WORDS = {"fortran": "Fortran", "big-endian": "big-endian", "object": "object", "structured": "structured",
                  "float64": "float64", "truncated": "data bytes", "trailing": "data bytes"}


@pytest.mark.parametrize("kind", MALFORMED)
def test_malformed_npy_input(tmp_path, kind):
    path = _malformed_files(tmp_path)[kind]
    line = run_error("quantize", path, tmp_path / "y.npy", "-t", "int8", "-s", 1)
    assert str(path) in line
    if kind in EXPECTED_WORDS:
        assert EXPECTED_WORDS[kind] in line
    assert not (tmp_path / "y.npy").exists()


@pytest.mark.parametrize("kind", ["truncated", "fortran", "object"])
def test_malformed_npy_scale_and_dequantize(tmp_path, kind):
    path = _malformed_files(tmp_path)[kind]
    x = save(tmp_path / "x.npy", sample((4, 4)))
    run_error("quantize", x, tmp_path / "y.npy", "-t", "int8", "-s", path)
    run_error("dequantize", path, tmp_path / "y.npy", "-s", 1)


def test_missing_files(tmp_path):
    missing = tmp_path / "nope.npy"
    assert "No such file" in run_error("quantize", missing, tmp_path / "y.npy", "-t", "int8", "-s", 1)
    assert "No such file" in run_error("dequantize", missing, tmp_path / "y.npy", "-s", 1)
    assert "No such file" in run_error("roundtrip", missing, "-t", "int8", "--calibrate", "minmax")
    x = save(tmp_path / "x.npy", sample((4, 4)))
    run_error("quantize", x, tmp_path / "y.npy", "-t", "int8", "-s", missing)
    run_error("quantize", x, tmp_path / "y.npy", "-t", "int8", "-s", 1, "-z", missing)
    # An output that cannot be created.
    assert "cannot create" in run_error("quantize", x, tmp_path / "no_dir" / "y.npy", "-t", "int8", "-s", 1)


@pytest.mark.parametrize("args", [
    ["quantize", "X", "Y", "-t", "int9", "-s", 1],
    ["quantize", "X", "Y", "-t", "float64", "-s", 1],
    ["dequantize", "X", "Y", "-t", "bogus", "-s", 1],
    ["dequantize", "X", "Y", "-s", 1, "--output-type", "int8"],
    ["roundtrip", "X", "-t", "e4m3", "-s", 1],
    ["quantize", "X", "Y", "-t", "int8", "-s", 1, "--precision", "int8"],
    ["quantize", "X", "Y", "-t", "int8", "-s", 1, "--input-type", "float8_e4m3fn"],
])
def test_unknown_type_is_usage_error(tmp_path, args):
    args = [str(tmp_path / "x.npy") if a == "X" else str(tmp_path / "y.npy") if a == "Y" else a for a in args]
    save(tmp_path / "x.npy", sample((2, 2)))
    line = run_error(*args, expect=2)
    assert "type '" in line and "expected one of" in line


@pytest.mark.parametrize("args", [
    [],                                                        # no command
    ["frobnicate"],                                            # unknown command
    ["quantize", "X", "Y", "-s", 1],                           # --type missing
    ["quantize", "X", "Y", "-t", "int8"],                      # neither --scale nor --calibrate
    ["quantize", "X", "Y", "-t", "int8", "-s", 1, "--calibrate", "minmax"],
    ["quantize", "X", "Y", "-t", "int8", "--calibrate", "median"],
    ["quantize", "X", "Y", "-t", "int8", "--calibrate", "minmax", "--per-axis"],   # --per-axis needs --axis
    ["quantize", "X", "Y", "-t", "int8", "-s", 1, "--per-axis", "--axis", 0],      # needs --calibrate
    ["quantize", "X", "Y", "-t", "int8", "-s", 1, "--saturate", 2],
    ["quantize", "X", "Y", "-t", "int8", "-s", 1, "--block-size", -4],
    ["quantize", "X", "-t", "int8", "-s", 1],                  # OUT missing
    ["dequantize", "X", "Y"],                                  # --scale missing
    ["bench", "--elements", 0],
    ["quantize", "X", "Y", "-t", "int8", "-s", 1, "--axis", "one"],
])
def test_usage_errors(tmp_path, args):
    args = [str(tmp_path / "x.npy") if a == "X" else str(tmp_path / "y.npy") if a == "Y" else a for a in args]
    save(tmp_path / "x.npy", sample((2, 2)))
    run_error(*args, expect=2)
    assert not (tmp_path / "y.npy").exists()


def test_operator_errors(tmp_path):
    x = save(tmp_path / "x.npy", sample((4, 6)))
    y = tmp_path / "y.npy"
    # Invalid axis for a per-axis scale (the core's message names the rule).
    line = run_error("quantize", x, y, "-t", "int8", "-s", save(tmp_path / "s4.npy", np.ones(4, np.float32)), "-a", 5)
    assert "axis" in line
    run_error("quantize", x, y, "-t", "int8", "--calibrate", "minmax", "--per-axis", "-a", 2)
    run_error("quantize", x, y, "-t", "int8", "--calibrate", "minmax", "-b", 4, "-a", -3)
    # Bad scale shapes: wrong per-axis length, wrong blocked shape, a rank-3 scale.
    assert "QuantizeLinear" in run_error("quantize", x, y, "-t", "int8", "-s", tmp_path / "s4.npy", "-a", 1)
    run_error("quantize", x, y, "-t", "int8", "-s", save(tmp_path / "sb.npy", np.ones((4, 3), np.float32)), "-b", 4)
    run_error("quantize", x, y, "-t", "int8", "-s", save(tmp_path / "s3.npy", np.ones((1, 1, 1), np.float32)))
    # Zero point shape differs from the scale's.
    run_error("quantize", x, y, "-t", "int8", "-s", save(tmp_path / "s6.npy", np.ones(6, np.float32)), "-z",
              save(tmp_path / "z4.npy", np.zeros(4, np.int8)))
    # Zero point of the wrong dtype, not representable, or non-zero for float8.
    assert "int16" in run_error("quantize", x, y, "-t", "int8", "-s", 1, "-z", save(tmp_path / "z16.npy", np.int16(3)))
    assert "not a value of int8" in run_error("quantize", x, y, "-t", "int8", "-s", 1, "-z", 3.5)
    assert "not a value of uint4" in run_error("quantize", x, y, "-t", "uint4", "-s", 1, "-z", 16)
    run_error("quantize", x, y, "-t", "float8_e4m3fn", "-s", 1, "-z", 1)
    # x dtype the operator does not take, an opset it does not know, a type an old opset lacks.
    run_error("quantize", save(tmp_path / "xu8.npy", np.zeros(4, np.uint8)), y, "-t", "int8", "-s", 1)
    run_error("quantize", x, y, "-t", "int8", "-s", 1, "--opset", 9)
    run_error("quantize", x, y, "-t", "int4", "-s", 1, "--opset", 19)
    # A scale out of float32 range.
    assert "float32 range" in run_error("quantize", x, y, "-t", "int8", "-s", "1e300")
    assert not y.exists()


def test_dequantize_errors(tmp_path):
    y = tmp_path / "y.npy"
    f8 = save(tmp_path / "f8.npy", np.zeros((2, 3), ml_dtypes.float8_e4m3fn))
    assert "--type" in run_error("dequantize", f8, y, "-s", 1)  # '<V1' needs a type
    codes_file = save(tmp_path / "c.npy", np.array([1, 2, 0x1F], np.uint8))
    assert "0x1f" in run_error("dequantize", codes_file, y, "-t", "int4", "-s", 1)  # not a 4-bit code
    assert "int8" in run_error("dequantize", save(tmp_path / "i8.npy", np.zeros(3, np.int8)), y, "-t", "int4", "-s", 1)
    run_error("dequantize", save(tmp_path / "f32.npy", np.zeros(3, np.float32)), y, "-s", 1)  # float x
    run_error("dequantize", save(tmp_path / "u8.npy", np.zeros((2, 3), np.uint8)), y, "-s",
              save(tmp_path / "s5.npy", np.ones(5, np.float32)), "-a", 1)
    run_error("dequantize", tmp_path / "u8.npy", y, "-s", 1, "--output-type", "float16", "--opset", 21)
    assert not y.exists()


def _bad_later_code(tmp_path: Path, monkeypatch, chunk_size=8) -> Path:
    """A 4-bit codes file with a bad byte at flat index 73, read in chunks of `chunk_size` (None: the default)."""
    if chunk_size is not None:
        monkeypatch.setenv("QDQ_CLI_CHUNK_ELEMENTS", str(chunk_size))
    values = np.arange(100, dtype=np.uint8) % 16
    values[73] = 0x20
    return save(tmp_path / "c.npy", values.reshape(25, 4))


def test_failed_output_through_a_symbolic_link(tmp_path, monkeypatch):
    # The command fails after writing part of its output: the file behind a symbolic link is
    # emptied (no partial array), and the link, which the user made, is left alone.
    codes_file = _bad_later_code(tmp_path, monkeypatch)
    real = tmp_path / "real.npy"
    real.write_bytes(b"old")
    link = tmp_path / "link.npy"
    link.symlink_to(real)
    run_error("dequantize", codes_file, link, "-t", "uint4", "-s", 1)
    assert link.is_symlink() and real.exists() and real.stat().st_size == 0


def test_failed_output_with_another_hard_link(tmp_path, monkeypatch):
    codes_file = _bad_later_code(tmp_path, monkeypatch)
    y = tmp_path / "y.npy"
    y.write_bytes(b"old")
    os.link(y, tmp_path / "y_link.npy")
    run_error("dequantize", codes_file, y, "-t", "uint4", "-s", 1)
    assert not y.exists() and (tmp_path / "y_link.npy").stat().st_size == 0


def test_block_as_long_as_int64_and_odd_chunk_settings(tmp_path, monkeypatch):
    # A block size near INT64_MAX is one block (ceil(4 / B) = 1), and chunk settings that are no
    # positive number fall back to the default; none of them may overflow the chunk arithmetic.
    x = sample((4, 1), seed=10)
    scale = np.full((1, 1), 0.05, np.float32)
    expected = qdq.quantize_linear(x, scale, axis=0, block_size=(1 << 63) - 1, output_dtype=np.int8)
    for setting in ["-1", "18446744073709551615", "99999999999999999999999", "x", "", "1"]:
        monkeypatch.setenv("QDQ_CLI_CHUNK_ELEMENTS", setting)
        run("quantize", save(tmp_path / "x.npy", x), tmp_path / "y.npy", "-t", "int8", "-s",
            save(tmp_path / "s.npy", scale), "--axis", 0, "--block-size", (1 << 63) - 1)
        np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), expected)


def test_stream_that_never_ends(tmp_path):
    # x followed by /dev/zero through a pipe: the bytes past the body are counted up to 1 MiB, then
    # refused, rather than read for ever.
    x = save(tmp_path / "x.npy", sample((4, 4)))
    result = subprocess.run(f"cat {x} /dev/zero | {CLI} quantize /dev/stdin {tmp_path / 'y.npy'} -t int8 -s 1",
                            shell=True, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "needs 64 data bytes, the file has more than" in result.stderr
    assert not (tmp_path / "y.npy").exists()


def test_output_over_its_own_input(tmp_path, chunk):
    # x streams from its file a chunk at a time, unless the output is the same file: then x is read
    # whole before the output truncates it (a hard link is the same file under another name).
    x = sample((40, 7), seed=9)
    path = save(tmp_path / "x.npy", x)
    os.link(path, tmp_path / "x_link.npy")
    run("quantize", path, tmp_path / "x_link.npy", "-t", "int8", "-s", 0.05)
    expected = qdq.quantize_linear(x, np.float32(0.05), output_dtype=np.int8)
    np.testing.assert_array_equal(np.load(path), expected)
    run("dequantize", path, path, "-s", 0.05)
    np.testing.assert_array_equal(np.load(path), qdq.dequantize_linear(expected, np.float32(0.05)))


@pytest.mark.parametrize("chunk_size", [None, 8])
def test_bad_code_in_a_later_chunk(tmp_path, monkeypatch, chunk_size):
    # A 4-bit x streams from its file and is checked a chunk at a time: a bad byte past the first
    # chunk is reported with its flat index in the whole tensor, and the output, written up to that
    # chunk, is removed rather than left looking like a result.
    codes_file = _bad_later_code(tmp_path, monkeypatch, chunk_size)
    y = tmp_path / "y.npy"
    line = run_error("dequantize", codes_file, y, "-t", "uint4", "-s", 1)
    assert "byte 0x20 at flat index 73, which is not a 4-bit uint4 code" in line
    assert not y.exists()


# ------------------------------------------------------------------------------------------------
# Issue 13, finding 5: a round trip through files never changes meaning, and every operator family
# the help names runs.


def test_round_trip_without_type_is_refused_not_reinterpreted(tmp_path):
    # quantize --type int4 used to write uint8 codes that dequantize, given no --type, read as
    # uint8: exit 0 and 5.035 where -1.162 is right. The codes are raw bytes now, which say no type.
    rng = np.random.default_rng(RNG_SEED + 13)
    x = rng.standard_normal((2, 64)).astype(np.float32)
    scale = np.full((2, 2), 0.16, np.float32)
    x[0, 0] = -1.162
    run("quantize", save(tmp_path / "x.npy", x), tmp_path / "y.npy", "--type", "int4", "--scale",
        save(tmp_path / "s.npy", scale), "--axis", 1, "--block-size", 32)
    assert np.load(tmp_path / "y.npy").dtype == np.dtype("V1")
    line = run_error("dequantize", tmp_path / "y.npy", tmp_path / "o.npy", "--scale", tmp_path / "s.npy", "--axis", 1,
                     "--block-size", 32)
    assert "--type" in line and "'|V1'" in line
    assert not (tmp_path / "o.npy").exists()
    run("dequantize", tmp_path / "y.npy", tmp_path / "o.npy", "--type", "int4", "--scale", tmp_path / "s.npy",
        "--axis", 1, "--block-size", 32)
    expected = qdq.dequantize_linear(qdq.quantize_linear(x, scale, axis=1, block_size=32, output_dtype=ml_dtypes.int4),
                                     scale, axis=1, block_size=32)
    restored = np.load(tmp_path / "o.npy")
    np.testing.assert_array_equal(restored, expected)
    assert abs(restored[0, 0] - -1.162) < 0.08  # within half a step of x, not the uint8 reading 5.035


@pytest.mark.parametrize("type_name", ["uint4", "int2", "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn"])
def test_code_outputs_are_raw_bytes_and_need_a_type(tmp_path, type_name):
    x = sample((3, 5))
    run("quantize", save(tmp_path / "x.npy", x), tmp_path / "y.npy", "-t", type_name, "-s", "0.5")
    stored = np.load(tmp_path / "y.npy")
    assert stored.dtype == np.dtype("V1")
    np.testing.assert_array_equal(codes(stored.view(DTYPES[type_name])),
                                  codes(qdq.quantize_linear(x, np.float32(0.5), output_dtype=DTYPES[type_name])))
    assert "--type" in run_error("dequantize", tmp_path / "y.npy", tmp_path / "o.npy", "-s", "0.5")
    # The scale and zero point a calibration writes beside the output are read back the same way.
    run("quantize", tmp_path / "x.npy", tmp_path / "q.npy", "-t", type_name, "--calibrate", "symmetric")
    run("dequantize", tmp_path / "q.npy", tmp_path / "d.npy", "-t", type_name, "-s", tmp_path / "q.scale.npy", "-z",
        tmp_path / "q.zero_point.npy")


def test_help_names_and_documents_every_operator_family():
    for command in ("quantize", "dequantize", "roundtrip"):
        text = run(command, "--help").stdout
        assert "--operator" in text and "extended" in text and "elementwise" in text


@pytest.mark.parametrize("type_name", ["uint8", "int8", "int16", "uint16", "int32", "uint32", "float16", "bfloat16"])
def test_operator_extended_matches_python(tmp_path, chunk, type_name):
    dtype = np.dtype(getattr(ml_dtypes, type_name, None) or type_name)
    rng = np.random.default_rng(RNG_SEED + 3)
    x = sample((4, 6), spread=40.0)
    scale = rng.uniform(0.05, 0.5, 6).astype(np.float32)
    zp = np.zeros(6, dtype) if type_name in ("float16", "bfloat16") else (np.arange(6) % 3).astype(dtype)
    run("quantize", "--operator", "extended", save(tmp_path / "x.npy", x), tmp_path / "y.npy", "-t", type_name,
        "-s", save(tmp_path / "s.npy", scale), "-z", save(tmp_path / "z.npy", zp), "-a", 1)
    expected = qdq.extended_quantize_linear(x, scale, zp, axis=1)
    stored = np.load(tmp_path / "y.npy")
    got = stored if type_name in NATIVE else stored.view(dtype)
    np.testing.assert_array_equal(codes(got), codes(expected))
    # bfloat16 travels as '<V2', which can only be bfloat16: dequantize needs no --type for it.
    run("dequantize", "--operator", "extended", tmp_path / "y.npy", tmp_path / "d.npy", "-s", tmp_path / "s.npy", "-z",
        tmp_path / "z.npy", "-a", 1)
    np.testing.assert_array_equal(np.load(tmp_path / "d.npy"), qdq.extended_dequantize_linear(expected, scale, zp, axis=1))
    # Per-axis along the first axis: the scale's rows follow x's chunks.
    scale0 = rng.uniform(0.05, 0.5, 4).astype(np.float32)
    zp0 = np.zeros(4, dtype) if type_name in ("float16", "bfloat16") else (np.arange(4) % 3).astype(dtype)
    run("quantize", "--operator", "extended", tmp_path / "x.npy", tmp_path / "ya.npy", "-t", type_name,
        "-s", save(tmp_path / "s0.npy", scale0), "-z", save(tmp_path / "z0.npy", zp0), "-a", 0)
    stored = np.load(tmp_path / "ya.npy")
    got = stored if type_name in NATIVE else stored.view(dtype)
    np.testing.assert_array_equal(codes(got), codes(qdq.extended_quantize_linear(x, scale0, zp0, axis=0)))
    # Without a zero point the output type is --type's (Quark takes it from the zero point).
    run("quantize", "--operator", "extended", tmp_path / "x.npy", tmp_path / "y0.npy", "-t", type_name, "-s", "0.25")
    got0 = np.load(tmp_path / "y0.npy")
    expected0 = qdq.extended_quantize_linear(x, np.float32(0.25), np.zeros((), dtype))
    np.testing.assert_array_equal(codes(got0 if type_name in NATIVE else got0.view(dtype)), codes(expected0))


def test_operator_elementwise_matches_python(tmp_path, chunk):
    rng = np.random.default_rng(RNG_SEED + 5)
    x = sample((3, 4, 5), spread=5.0)
    scale = rng.uniform(0.02, 0.3, (1, 4, 1)).astype(np.float32)
    zp = rng.integers(-20, 20, (3, 1, 5)).astype(np.int8)
    # DirectML broadcasts: the scale and zero point shapes differ from each other and from x's.
    run("quantize", "--operator", "elementwise", save(tmp_path / "x.npy", x), tmp_path / "y.npy", "-t", "int8",
        "-s", save(tmp_path / "s.npy", scale), "-z", save(tmp_path / "z.npy", zp))
    expected = qdq.elementwise_quantize_linear(x, scale, zp)
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), expected)
    run("dequantize", "--operator", "elementwise", tmp_path / "y.npy", tmp_path / "d.npy", "-s", tmp_path / "s.npy",
        "-z", tmp_path / "z.npy")
    np.testing.assert_array_equal(np.load(tmp_path / "d.npy"), qdq.elementwise_dequantize_linear(expected, scale, zp))
    # A number is one value broadcast everywhere; a 1-D file lies along --axis.
    run("quantize", "--operator", "elementwise", tmp_path / "x.npy", tmp_path / "n.npy", "-t", "uint8", "-s", "0.1",
        "-z", 7)
    np.testing.assert_array_equal(np.load(tmp_path / "n.npy"),
                                  qdq.elementwise_quantize_linear(x, np.full((1, 1, 1), 0.1, np.float32),
                                                                  np.full((1, 1, 1), 7, np.uint8)))
    run("quantize", "--operator", "elementwise", tmp_path / "x.npy", tmp_path / "a.npy", "-t", "uint8", "-s",
        save(tmp_path / "s1.npy", scale.reshape(4)), "-a", 1)
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), qdq.elementwise_quantize_linear(x, scale))
    out = run("roundtrip", "--operator", "elementwise", tmp_path / "x.npy", "-t", "int8", "-s",
              tmp_path / "s.npy").stdout
    assert "SQNR" in out


@pytest.mark.parametrize("operator", ["extended", "elementwise"])
@pytest.mark.parametrize("flag", [["--block-size", 4], ["--saturate", 0], ["--opset", 21], ["--precision", "float16"]])
def test_onnx_only_attributes_are_refused_elsewhere(tmp_path, operator, flag):
    x = save(tmp_path / "x.npy", sample((2, 8)))
    line = run_error("quantize", "--operator", operator, x, tmp_path / "y.npy", "-t", "uint8", "-s", 1, *flag,
                     expect=2)
    assert flag[0] in line and operator in line
    if flag[0] in ("--block-size", "--opset"):
        u8 = save(tmp_path / "u8.npy", np.zeros((2, 8), np.uint8))
        assert flag[0] in run_error("dequantize", "--operator", operator, u8, tmp_path / "d.npy", "-s", 1, *flag,
                                    expect=2)
    assert not (tmp_path / "y.npy").exists()


def test_extended_dequantize_refuses_output_type(tmp_path):
    u8 = save(tmp_path / "u8.npy", np.zeros(4, np.uint8))
    assert "float32" in run_error("dequantize", "--operator", "extended", u8, tmp_path / "d.npy", "-s", 1,
                                  "--output-type", "float16", expect=2)


# ------------------------------------------------------------------------------------------------
# directml: an operator description checked per feature level


def test_directml_every_level():
    out = run("directml", "quantize", "--sizes", "1,3,8,8", "--input", "FLOAT16", "--scale", "float16",
              "--scale-strides", "0,1,0,0", "--zero-point", "INT8", "--zero-point-strides", "0,1,0,0",
              "--output", "INT8").stdout.splitlines()
    verdicts = dict(line.split(None, 1) for line in out)
    assert len(verdicts) == 15
    assert verdicts["DML_FEATURE_LEVEL_6_0"] == "accepted" and verdicts["DML_FEATURE_LEVEL_6_4"] == "accepted"
    assert "InputTensor has DataType FLOAT16" in verdicts["DML_FEATURE_LEVEL_3_0"]
    assert verdicts["DML_FEATURE_LEVEL_3_0"].endswith("DML_FEATURE_LEVEL_6_0 accepts this description")


def test_directml_one_level_rejects_with_exit_1():
    out = run("directml", "dequantize", "--sizes", "5", "--input", "int8", "--scale", "float32", "--scale-strides", "0",
              "--zero-point", "int8", "--output", "float32", "--feature-level", "2.1", expect=1).stdout
    assert "InputTensor has DimensionCount 1" in out and "DML_FEATURE_LEVEL_3_0 accepts this description" in out
    assert "qdq: error:" in run_error("directml", "quantize", "--sizes", "4", "--input", "float32", "--scale",
                                      "float32", "--output", "uint8", "--feature-level", "9_9")


def test_elementwise_feature_level_runs_the_directml_door(tmp_path, chunk):
    rng = np.random.default_rng(14)
    x = save(tmp_path / "x.npy", (rng.standard_normal((2, 3, 4, 5)) * 40).astype(np.float32))
    scale = save(tmp_path / "s.npy", np.array([0.5, 1.0, 2.0], np.float32).reshape(1, 3, 1, 1))
    zp = save(tmp_path / "z.npy", np.array([1, -2, 3], np.int8).reshape(1, 3, 1, 1))
    run("quantize", "--operator", "elementwise", x, tmp_path / "a.npy", "--type", "int8", "--scale", scale,
        "--zero-point", zp, "--feature-level", "2_1")
    run("quantize", "--operator", "elementwise", x, tmp_path / "b.npy", "--type", "int8", "--scale", scale,
        "--zero-point", zp)
    expected = qdq.directml_quantize_linear(np.load(x), np.broadcast_to(np.load(scale), (2, 3, 4, 5)),
                                            np.broadcast_to(np.load(zp), (2, 3, 4, 5)), feature_level="2_1")
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), expected)
    np.testing.assert_array_equal(np.load(tmp_path / "b.npy"), expected)
    # A scale and zero point that vary along the first axis: each chunk's description takes its rows.
    scale2 = save(tmp_path / "s2.npy", np.array([0.25, 4.0], np.float32).reshape(2, 1, 1, 1))
    zp2 = save(tmp_path / "z2.npy", np.array([5, -6], np.int8).reshape(2, 1, 1, 1))
    run("quantize", "--operator", "elementwise", x, tmp_path / "e.npy", "--type", "int8", "--scale", scale2,
        "--zero-point", zp2, "--feature-level", "2_1")
    expected2 = qdq.directml_quantize_linear(np.load(x), np.broadcast_to(np.load(scale2), (2, 3, 4, 5)),
                                             np.broadcast_to(np.load(zp2), (2, 3, 4, 5)), feature_level="2_1")
    np.testing.assert_array_equal(np.load(tmp_path / "e.npy"), expected2)
    error = run_error("quantize", "--operator", "elementwise", x, tmp_path / "c.npy", "--type", "int8", "--scale",
                      scale, "--zero-point", zp, "--feature-level", "1_0")
    assert "ZeroPointTensor has DataType INT8" in error and "DML_FEATURE_LEVEL_2_1 accepts" in error
    assert "needs --operator elementwise" in run_error("quantize", x, tmp_path / "d.npy", "--type", "int8", "--scale",
                                                       "1", "--feature-level", "6_2", expect=2)
