#!/usr/bin/env python3
"""Every qdq cell through every door, against memcpy, ONNX Runtime and (optionally) Quark's own kernels.

The cells are generated, not listed: for every operator family (ONNX QuantizeLinear /
DequantizeLinear, AMD Quark ExtendedQuantizeLinear / ExtendedDequantizeLinear, DirectML element-wise
quantize / dequantize), every combination of element types from qdq's element-type table
(qdq._qdq.element_types()) and every granularity is tried on a tiny tensor, and a combination is a
cell if qdq's front door accepts it (a QdqError means the operator's rules reject it). So a type
added to the table, or a rule changed in a front door, changes the cells without an edit here.

Which combinations (see enumerate_cells):
  - every accepted (x type, output type) pair at every granularity, with the canonical scale type
    (Q: x's own type, or float32 for int32 x and for Quark; DQ: the output type, output_dtype unset);
  - with --variants per-tensor, every other accepted scale type (and, for DQ, output_dtype beside
    another scale type) at per-tensor granularity; --variants all, at every granularity.
Granularities: per-tensor, per-axis on the last and on the first axis, blocked B=32 on the first and
on the last axis (ONNX only), and for DirectML the broadcast scale shapes [1,1], [1,N] and [M,1].
Sizes: 16M ([4096, 4096]), 64K ([64, 1024]) and 64Kx4 ([16384, 4]: rows of 4 elements, where each
granularity's operands change every few elements; blocked-last there is one partial block per row).
ONNX cells pass no zero point (Q names its output type with output_dtype); with --zero-points each
canonical ONNX cell is also timed with a zero-point tensor (granularity shown as e.g.
"per-axis-last+zp"), as models before opset 21 carry one.

Doors timed for every cell, in alternating rounds on the same inputs:
  kernel   qdq::execute into a preallocated buffer, timed in C++ (qdq._qdq._bench_*; ONNX cells
           without a zero point), else the Python call with out= (marked "o" in the table);
  py out=  the Python function with a preallocated out= (feature-detected; absent: n/a);
  py       the Python function as users call it, allocating its result;
  8-bit py for a 4-bit, 2-bit or float4 cell, the Python call of its 8-bit neighbour (uint4/uint2 ->
           uint8, int4/int2 -> int8, float4e2m1 -> float8e4m3fn), for the sub-byte / 8-bit ratio;
  memcpy   qdq._qdq._parallel_copy of the kernel's bytes (64K cells) or of at least 128 MiB (16M
           cells: the DRAM bandwidth whatever the cell's size);
  ORT      onnxruntime's built-in QuantizeLinear / DequantizeLinear at the lowest opset (21, 23, 24,
           25) ORT accepts for the cell: session.run from Python (outputs ORT cannot hand to numpy
           are read through run_with_ort_values), and the node's kernel time from ORT's profiler;
  qdq-ORT  qdq's custom-op library (qdq.ort_library_path()): ai.qdq QuantizeLinear /
           DequantizeLinear for ONNX cells, com.amd.quark Extended* for Quark cells; session.run and
           the profiler's kernel time;
  Quark    with --quark-library PATH, Quark's own CPU custom-op library on the same com.amd.quark
           nodes (docs/performance.md says how to build it).
Every door is warmed once before the rounds (the Python doors with out= and without, so that out's
pages are touched and a released buffer waits in qdq's output cache, as in a caller's loop). Each
door keeps its best time per round; ratios are medians over rounds of the ratio within a round
(the machine's DRAM bandwidth moves within minutes). ORT's pool threads spin after a run and would
take a core from whatever runs next, so every ORT door is followed by a 50 ms pause. On some
machines memory-bound work runs slower for its first tens of milliseconds after any pause, so in
16M cells every door is preceded by 60 ms of the cell's own Python call, untimed (RAMP_SECONDS).
A cell past 4 s after a round takes no more rounds.

Usage: python bench/compare.py [--threads 2] [--quick] [--sizes 16M,64K,64Kx4] [--cells 'onnx/Q/*->int4/*/*,...'] [--zero-points]
                              [--variants none|per-tensor|all] [--quark-library libquark_custom_ops.so]
                              [--json out.json] [--from-json out.json] [--list] [--write docs/performance.md]
"""

from __future__ import annotations

import argparse
import atexit
import ctypes
import datetime
import fnmatch
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import ml_dtypes
import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import qdq
from qdq import _qdq

BLOCK = 32
SIZES = {"16M": (4096, 4096), "64K": (64, 1024), "64Kx4": (16384, 4)}
PROBE_SHAPE = (64, 64)
ORT_OPSETS = (21, 23, 24, 25)
ORT_SPIN_SETTLE_SECONDS = 0.05
# Memory-bound work that follows a pause of 50 ms or more runs up to 2.5x slower until about 30 ms
# of it has run (measured on the Intel Xeon VM of sessions 10-13: Q float32 -> int8 at 16M took
# 4.9, 4.7, 4.2, 3.3, 2.9 ... 2.1 ms in consecutive calls after a 50 ms sleep, 2.0-2.2 ms
# throughout without the pause). So before each door of a 16M cell the cell's own Python call runs
# untimed for this long: every door starts from the same state, whatever ran before it.
RAMP_SECONDS = 0.06
CELL_BUDGET_SECONDS = 4.0  # after one round, a cell stops taking rounds past this
BIG = 1 << 20

# The element-type table: code -> (name, bits), and the numpy / ml_dtypes dtype of each code.
TABLE = {int(code): (name, int(bits)) for code, name, bits in _qdq.element_types()}
NAME = {code: name for code, (name, _bits) in TABLE.items()}
CODE = {name: code for code, name in NAME.items()}
BITS = {code: bits for code, (_name, bits) in TABLE.items()}
SUB_BYTE_NEIGHBOUR = {"uint4": "uint8", "int4": "int8", "uint2": "uint8", "int2": "int8",
                      "float4e2m1": "float8e4m3fn"}


def dtype(code: int) -> np.dtype:
    return qdq.dtype_from_code(code)


def is_float(code: int) -> bool:
    d = dtype(code)
    return d.kind == "f" or (d.kind == "V" and "float" in d.name)


def storage_bytes(code: int, count: int, dense: bool) -> int:
    """Bytes of a tensor: dense = qdq's packed layout, else numpy's (one sub-byte code per byte)."""
    bits = BITS[code]
    if bits < 8:
        return (count * bits + 7) // 8 if dense else count
    return count * bits // 8


# ----------------------------------------------------------------------------------------------
# Cells


@dataclass(frozen=True)
class Cell:
    family: str  # onnx, quark, dml
    op: str  # Q, DQ
    x: int  # x's element type
    scale: int
    y: int  # output type
    zp: Optional[int]  # zero-point type, or None (no zero point input)
    out_attr: int  # ONNX output_dtype attribute (0 = unset)
    grain: str
    canonical: bool  # canonical scale / output type (timed at every granularity)

    @property
    def q(self) -> int:
        return self.y if self.op == "Q" else self.x

    @property
    def label(self) -> str:
        """The granularity as shown: "+zp" marks an ONNX cell given a zero-point tensor."""
        return self.grain + ("+zp" if self.family == "onnx" and self.zp is not None else "")

    def key(self) -> str:
        return f"{self.family}/{self.op}/{NAME[self.x]}->{NAME[self.y]}/{NAME[self.scale]}/{self.label}"


FAMILY_GRAINS = {
    "onnx": ["per-tensor", "per-axis-last", "per-axis-first", "blocked-first", "blocked-last"],
    "quark": ["per-tensor", "per-axis-last", "per-axis-first"],
    "dml": ["per-tensor", "broadcast-1xN", "broadcast-Mx1"],
}


def scale_layout(family: str, grain: str, shape):
    """(scale shape, axis, block size) of a granularity on a 2-D shape."""
    rows, cols = shape
    if family == "dml":
        return {"per-tensor": ((1, 1), 0, 0), "broadcast-1xN": ((1, cols), 0, 0),
                "broadcast-Mx1": ((rows, 1), 0, 0)}[grain]
    return {
        "per-tensor": ((), 1, 0),
        "per-axis-last": ((cols,), 1, 0),
        "per-axis-first": ((rows,), 0, 0),
        "blocked-first": ((-(-rows // BLOCK), cols), 0, BLOCK),
        "blocked-last": ((rows, -(-cols // BLOCK)), 1, BLOCK),
    }[grain]


_ARRAY_CACHE: dict = {}


def make_array(code: int, shape, role: str, seed: int = 7) -> np.ndarray:
    """Deterministic test data of an element type: finite values, no NaN codes."""
    key = (code, tuple(shape), role, seed)
    if key in _ARRAY_CACHE:
        return _ARRAY_CACHE[key]
    rng = np.random.default_rng(seed)
    count = int(np.prod(shape, dtype=np.int64))
    d = dtype(code)
    name = NAME[code]
    if role == "scale":
        if d.kind in "iu":
            a = rng.integers(1, 5, size=shape).astype(d)
        elif name.startswith("float8e8m0"):
            a = np.exp2(rng.integers(-8, -3, size=shape)).astype(np.float32).astype(d)
        else:
            a = (0.02 + rng.random(shape, dtype=np.float32) * 0.05).astype(d)
    elif role == "zp":
        a = np.zeros(shape, d) if is_float(code) else np.full(shape, 1, np.int8).astype(d)
    elif role == "float-x":  # x of a quantize: a float (or int32) tensor
        if d.kind in "iu":
            a = rng.integers(-1000, 1000, size=shape, dtype=np.int64).astype(d)
        else:
            a = (rng.standard_normal(shape, dtype=np.float32) * 3).astype(d)
    else:  # quantized x of a dequantize: random codes
        bits = BITS[code]
        if d.kind in "iu" and bits >= 8:
            info = np.iinfo(d)
            low, high = max(info.min, -(1 << 20)), min(info.max, 1 << 20)
            a = rng.integers(low, high, size=shape, dtype=np.int64, endpoint=True).astype(d)
        elif d.kind == "f" or name == "bfloat16":
            a = (rng.standard_normal(shape, dtype=np.float32) * 3).astype(d)
        elif bits == 8:  # float8: positive codes without NaN / inf
            a = (rng.integers(0, 256, size=count, dtype=np.uint16).astype(np.uint8) & 0x77).view(d).reshape(shape)
        else:  # 4- and 2-bit codes, one per byte
            codes = rng.integers(0, 1 << bits, size=count, dtype=np.uint16).astype(np.uint8)
            if is_float(code):
                codes &= 0x7
            a = codes.view(d).reshape(shape)
    a = np.ascontiguousarray(a)
    _ARRAY_CACHE[key] = a
    return a


def cell_inputs(cell: Cell, shape):
    """(x, scale, zero point or None) of a cell at a shape."""
    scale_shape, _axis, _block = scale_layout(cell.family, cell.grain, shape)
    x = make_array(cell.x, shape, "float-x" if cell.op == "Q" else "codes")
    scale = make_array(cell.scale, scale_shape, "scale")
    zp = None if cell.zp is None else make_array(cell.zp, scale_shape, "zp")
    return x, scale, zp


def python_call(cell: Cell, shape) -> Callable:
    """The qdq Python function a user calls for this cell, bound to its inputs: fn() or fn(out=array).

    Every argument is passed by name as a user writes it; out= too, never through **kwargs, whose
    dict would add its own cost (0.3 us a call, measured) to the Python door's time.
    """
    return python_call_on(cell, shape, *cell_inputs(cell, shape))


def python_call_on(cell: Cell, shape, x: np.ndarray, scale: np.ndarray, zp: Optional[np.ndarray]) -> Callable:
    """python_call on the given arrays (bench/cli_door.py passes the ones it read back from files)."""
    _shape, axis, block = scale_layout(cell.family, cell.grain, shape)
    if cell.family == "onnx" and cell.op == "Q":
        return lambda out=None: qdq.quantize_linear(x, scale, zp, axis=axis, block_size=block,
                                                    output_dtype=cell.out_attr, out=out)
    if cell.family == "onnx":
        return lambda out=None: qdq.dequantize_linear(x, scale, zp, axis=axis, block_size=block,
                                                      output_dtype=cell.out_attr, out=out)
    if cell.family == "quark" and cell.op == "Q":
        return lambda out=None: qdq.extended_quantize_linear(x, scale, zp, axis=axis, out=out)
    if cell.family == "quark":
        return lambda out=None: qdq.extended_dequantize_linear(x, scale, zp, axis=axis, out=out)
    if cell.op == "Q":
        return lambda out=None: qdq.elementwise_quantize_linear(x, scale, zp, out=out)
    return lambda out=None: qdq.elementwise_dequantize_linear(x, scale, zp, output_dtype=cell.out_attr, out=out)


def neighbour_cell(cell: Cell) -> Optional[Cell]:
    """The 8-bit cell a 4-bit, 2-bit or float4 cell is held against (SUB_BYTE_NEIGHBOUR), or None.

    Every operand of the quantized type (x of a DQ, y and its output_dtype of a Q, a zero point of
    that type) takes the neighbour's type; scale, granularity and the other side stay.
    """
    if NAME[cell.q] not in SUB_BYTE_NEIGHBOUR:
        return None
    neighbour = CODE[SUB_BYTE_NEIGHBOUR[NAME[cell.q]]]

    def swap(code):
        return neighbour if code == cell.q else code

    return Cell(cell.family, cell.op, swap(cell.x) if cell.op == "DQ" else cell.x, cell.scale,
                swap(cell.y) if cell.op == "Q" else cell.y, None if cell.zp is None else swap(cell.zp),
                swap(cell.out_attr) if cell.op == "Q" else cell.out_attr, cell.grain, cell.canonical)


def accepted(cell: Cell) -> Optional[np.dtype]:
    """The output dtype if qdq's front door accepts the cell on a tiny tensor, else None."""
    try:
        y = python_call(cell, PROBE_SHAPE)()
    except qdq.QdqError:
        return None
    return y.dtype


def enumerate_cells(variants: str, zero_points: bool = False) -> list[Cell]:
    """Every (family, op, x type, output type) the front doors accept, at every granularity.

    The candidates are every combination of element types from the table; one is accepted if qdq's
    Python function takes it on a tiny tensor. Of the accepted scale types for an (x, output) pair,
    the canonical one (Q: x's own type, or float32 when x is int32 or for Quark; DQ: the output
    type, with output_dtype unset) is timed at every granularity; the others are variants.
    zero_points: also every canonical ONNX cell given a zero-point tensor (Q: of the output type,
    naming it, as models before opset 21 must; DQ: of x's type), where the front door accepts it.
    """
    codes = sorted(TABLE)
    float_types = {CODE["float32"], CODE["float16"], CODE["bfloat16"]}
    groups: dict = {}
    for family in ("onnx", "quark", "dml"):
        for op in ("Q", "DQ"):
            for x in codes:
                for q in ([x] if op == "DQ" else codes):
                    for scale in codes:
                        for out_attr in ([0] if family == "quark" or op == "Q" else [0] + codes):
                            if family == "onnx" and op == "Q":
                                zp, y, out_attr = None, q, q  # output type through output_dtype
                            elif op == "Q":
                                zp, y = q, q  # Quark and DirectML: the zero point's type is the output's
                            else:
                                zp, y = (None if family == "onnx" else x), (out_attr or scale)
                            if out_attr and op == "DQ" and out_attr == scale:
                                continue  # the same cell as output_dtype unset
                            cell = Cell(family, op, x, scale, y, zp, out_attr, "per-tensor", False)
                            if accepted(cell) != dtype(cell.y):
                                continue
                            preferred = (x if x in float_types and family != "quark" else CODE["float32"]) \
                                if op == "Q" else y
                            rank = (scale != preferred, out_attr != 0 and op == "DQ", scale, out_attr)
                            groups.setdefault((family, op, x, y), []).append((rank, cell))
    cells: list[Cell] = []
    for members in groups.values():
        members.sort(key=lambda m: m[0])
        for index, (_rank, cell) in enumerate(members):
            canonical = index == 0
            if not canonical and variants == "none":
                continue
            for grain in (FAMILY_GRAINS[cell.family] if canonical or variants == "all" else ["per-tensor"]):
                candidate = Cell(**{**cell.__dict__, "grain": grain, "canonical": canonical})
                if grain == "per-tensor" or accepted(candidate) == dtype(candidate.y):
                    cells.append(candidate)
                if zero_points and canonical and cell.family == "onnx":
                    with_zp = Cell(**{**candidate.__dict__, "zp": cell.y if cell.op == "Q" else cell.x,
                                      "out_attr": 0 if cell.op == "Q" else cell.out_attr})
                    if accepted(with_zp) == dtype(with_zp.y):
                        cells.append(with_zp)
    order = {f: i for i, f in enumerate(FAMILY_GRAINS)}
    grain_order = {g: i for f in FAMILY_GRAINS.values() for i, g in enumerate(f)}
    cells.sort(key=lambda c: (order[c.family], c.op != "Q", not c.canonical, c.x, c.y, c.scale,
                              c.family == "onnx" and c.zp is not None, c.out_attr, grain_order[c.grain]))
    return cells


# ----------------------------------------------------------------------------------------------
# ONNX Runtime sessions


def numpy_native(array: np.ndarray) -> bool:
    """Whether ORT's session.run takes this array as a feed (ml_dtypes types it does not)."""
    # ml_dtypes' float8_e5m2 has numpy kind "f" too: the type's module tells them apart.
    return array.dtype.kind in "biuf" and array.dtype.type.__module__ == "numpy"


def build_model(cell: Cell, shape, domain: str, opset: int, with_zp: bool) -> bytes:
    """One node; x is a graph input if ORT can be fed it from numpy, else an initializer."""
    x, scale, zp = cell_inputs(cell, shape)
    _s, axis, block = scale_layout(cell.family, cell.grain, shape)
    inits = [numpy_helper.from_array(scale, "s")]
    inputs = [helper.make_tensor_value_info("x", cell.x, list(shape))]
    if not numpy_native(x):
        inits.append(numpy_helper.from_array(x, "x"))
        inputs = []
    names = ["x", "s"]
    if with_zp and zp is not None:
        inits.append(numpy_helper.from_array(zp, "zp"))
        names.append("zp")
    attrs = {"axis": axis}
    if block:
        attrs["block_size"] = block
    if cell.out_attr:
        attrs["output_dtype"] = cell.out_attr
    if cell.family == "quark":
        op_type = "ExtendedQuantizeLinear" if cell.op == "Q" else "ExtendedDequantizeLinear"
    else:
        op_type = "QuantizeLinear" if cell.op == "Q" else "DequantizeLinear"
    node = helper.make_node(op_type, names, ["y"], domain=domain, **attrs)
    graph = helper.make_graph([node], "bench", inputs,
                              [helper.make_tensor_value_info("y", cell.y, list(shape))], inits)
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    return helper.make_model(graph, opset_imports=opsets, ir_version=10).SerializeToString()


@dataclass
class OrtDoor:
    """One ONNX Runtime way of running a cell: a plain session (Python door) and a profiled one."""
    name: str
    session: object
    profiled: object
    feed: dict
    binding: object
    numpy_output: bool
    note: str = ""
    shared: bool = False  # the Python door runs in the profiled session

    def run_python(self):
        if self.numpy_output:
            return self.session.run(None, self.feed)
        feed = {name: ort.OrtValue.ortvalue_from_numpy(value) for name, value in self.feed.items()}
        return self.session.run_with_ort_values(["y"], feed)

    def run_profiled(self):
        self.profiled.run_with_iobinding(self.binding)

    def kernel_seconds(self) -> list[float]:
        with open(self.profiled.end_profiling()) as f:
            events = json.load(f)
        os.unlink(f.name)
        return [e["dur"] / 1e6 for e in events if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time")]


_PROFILE_DIRECTORY: list[str] = []


def profile_directory() -> str:
    """This run's own directory for ORT's profile files, removed when the run ends: a session that
    fails or is dropped before end_profiling writes its file when it is destroyed (a full run left
    about 1,900 such files in the temporary directory before)."""
    if not _PROFILE_DIRECTORY:
        _PROFILE_DIRECTORY.append(tempfile.mkdtemp(prefix="qdq_compare_"))
        atexit.register(shutil.rmtree, _PROFILE_DIRECTORY[0], True)
    return _PROFILE_DIRECTORY[0]


def make_ort_door(name: str, cell: Cell, shape, threads: int, library: Optional[str], opsets,
                  shared: bool = False) -> Optional[OrtDoor]:
    """An ORT door, or None. shared: one profiled session serves both the Python door and the
    kernel time (16M cells, where the profiler's few microseconds per run do not count), else a
    plain session for the Python door and a profiled one run through IOBinding."""
    domain = {"onnx": "" if library is None else "ai.qdq", "quark": "com.amd.quark"}.get(cell.family)
    if domain is None or (domain == "com.amd.quark" and library is None):
        return None
    x, _scale, _zp = cell_inputs(cell, shape)
    last_error = ""
    for opset in opsets:
        try:
            # Quark's runtime requires the zero point; qdq's library and ONNX take the cell as is.
            model = build_model(cell, shape, domain, opset, with_zp=True)
            sessions = []
            for profile in ((True,) if shared else (False, True)):
                options = ort.SessionOptions()
                options.intra_op_num_threads = threads
                options.inter_op_num_threads = 1
                options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
                if library:
                    options.register_custom_ops_library(library)
                if profile:
                    options.enable_profiling = True
                    options.profile_file_prefix = os.path.join(profile_directory(), "ort")
                sessions.append(ort.InferenceSession(model, options, providers=["CPUExecutionProvider"]))
            feed = {"x": x} if numpy_native(x) else {}
            binding = sessions[-1].io_binding()
            if feed:
                value = ort.OrtValue.ortvalue_from_numpy(x)
                binding.bind_ortvalue_input("x", value)
            binding.bind_output("y")
            door = OrtDoor(name, sessions[0], sessions[-1], feed, binding, numpy_output=True,
                           note="" if opset == opsets[0] else f"opset {opset}", shared=shared)
            if feed:
                door._keep = value
            try:
                door.run_python()
            except Exception:  # noqa: BLE001 - ORT cannot hand this output type to numpy
                door.numpy_output = False
                door.run_python()
            if not shared:
                door.run_profiled()
            return door
        except Exception as error:  # noqa: BLE001 - an unsupported cell is reported, not fatal
            last_error = str(error).splitlines()[0][:80]
    print(f"  {name}: n/a ({last_error})", file=sys.stderr)
    return None


# ----------------------------------------------------------------------------------------------
# Measurement


_KERNEL_DOOR_ERRORS: set = set()


def kernel_door(cell: Cell, shape):
    """(fn(repeat) -> best seconds, bytes moved) through qdq._qdq._bench_*, or None."""
    if cell.family != "onnx" or cell.zp is not None:
        return None
    x, scale, _zp = cell_inputs(cell, shape)
    scale_shape, axis, block = scale_layout(cell.family, cell.grain, shape)
    count = x.size

    def dense(a, code):
        raw = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
        bits = BITS[code]
        if bits >= 8:
            return raw
        per = 8 // bits
        codes = raw & ((1 << bits) - 1)
        codes = np.concatenate([codes, np.zeros((-len(codes)) % per, np.uint8)]).reshape(-1, per)
        packed = np.zeros(len(codes), np.uint8)
        for i in range(per):
            packed |= (codes[:, i] << (i * bits)).astype(np.uint8)
        return packed

    x_raw, s_raw = dense(x, cell.x), dense(scale, cell.scale)
    out = np.empty(storage_bytes(cell.y, count, dense=True), np.uint8)
    try:
        if cell.op == "Q":
            fn = lambda repeat: _qdq._bench_quantize_linear(cell.x, list(shape), x_raw, cell.scale, list(scale_shape),
                                                            s_raw, axis, block, cell.out_attr, out, repeat)
        elif cell.out_attr == 0:
            fn = lambda repeat: _qdq._bench_dequantize_linear(cell.x, list(shape), x_raw, cell.scale, list(scale_shape),
                                                              s_raw, axis, block, out, repeat)
        else:
            return None
        fn(1)
    except Exception as error:  # noqa: BLE001 - the entry point's signature changed or it lacks the cell
        message = f"{type(error).__name__}: {str(error).splitlines()[0][:100]}" if str(error) else type(error).__name__
        if message not in _KERNEL_DOOR_ERRORS:
            _KERNEL_DOOR_ERRORS.add(message)
            print(f"  kernel entry point failed ({cell.key()}): {message}; timing the Python call with out= instead",
                  file=sys.stderr)
        return None
    moved = x_raw.nbytes + out.nbytes + s_raw.nbytes
    return fn, moved


_HAS_OUT: dict = {}


def out_supported(cell: Cell) -> bool:
    """Whether the Python function takes out= (feature-detected once per function)."""
    key = (cell.family, cell.op)
    if key not in _HAS_OUT:
        call = python_call(cell, PROBE_SHAPE)
        y = call()
        buffer = np.empty_like(y)
        try:
            result = call(out=buffer)
            _HAS_OUT[key] = result is buffer or np.shares_memory(result, buffer)
        except TypeError:
            _HAS_OUT[key] = False
    return _HAS_OUT[key]


_COPY_BUFFERS: list = []


def copy_buffers(size: int):
    """Source and destination of the memcpy baseline: one pair of buffers, grown as needed."""
    if not _COPY_BUFFERS or _COPY_BUFFERS[0].nbytes < size:
        _COPY_BUFFERS[:] = [np.ones(size, np.uint8), np.ones(size, np.uint8)]
    return _COPY_BUFFERS[0][:size], _COPY_BUFFERS[1][:size]


def best_of(fn: Callable, repeat: int) -> float:
    best = 1e30
    for _ in range(max(repeat, 1)):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


@dataclass
class Result:
    cell: Cell
    size: str
    moved: int  # bytes the kernel door moves
    py_moved: int  # bytes the Python door moves (numpy storage)
    times: dict = field(default_factory=dict)  # door -> best seconds over rounds
    ratios: dict = field(default_factory=dict)  # name -> median over rounds of a within-round ratio
    kernel_door: str = ""  # "k" (C++ entry point) or "o" (Python call with out=)
    notes: list = field(default_factory=list)


def measure(cell: Cell, size: str, threads: int, quick: bool, quark_library: Optional[str]) -> Result:
    shape = SIZES[size]
    count = shape[0] * shape[1]
    big = count >= BIG
    rounds = 2 if quick else 3
    per_round = (2 if quick else 3) if big else (5 if quick else 20)  # best of per_round calls
    x, scale, zp = cell_inputs(cell, shape)
    call = python_call(cell, shape)
    y = call()
    py_moved = x.nbytes + y.nbytes + scale.nbytes + (0 if zp is None else zp.nbytes)
    doors: dict[str, Callable[[], float]] = {}
    has_out = out_supported(cell)
    out = np.empty_like(y) if has_out else None
    # Warm-up outside the rounds, as the kernel door and the ORT sessions get theirs: out's pages
    # are touched once, and a second call without out= (y is still alive) leaves a released
    # buffer in the module's output cache, which is where a caller's loop takes its outputs from.
    if has_out:
        call(out=out)
    call()
    kernel = kernel_door(cell, shape)
    result = Result(cell, size, kernel[1] if kernel else py_moved, py_moved)
    if kernel:
        result.kernel_door = "k"
        doors["kernel"] = lambda: kernel[0](per_round)
    elif has_out:
        result.kernel_door = "o"
    if has_out:
        doors["py_out"] = lambda: best_of(lambda: call(out=out), per_round)
    doors["py"] = lambda: best_of(call, per_round)
    # A sub-byte cell's 8-bit neighbour is timed through its Python call in the same rounds: the
    # two cells measured minutes apart differed by up to 2x through the machine's bandwidth alone
    # (the same 16M cell took 1,258 and 2,536 us in consecutive runs on the Zen 5 VM).
    neighbour = neighbour_cell(cell)
    if neighbour is not None and accepted(neighbour) is not None:
        neighbour_call = python_call(neighbour, shape)
        neighbour_call()
        neighbour_call()
        doors["neighbour_py"] = lambda: best_of(neighbour_call, per_round)
    copy_bytes = result.moved // 2 if not big else max(result.moved // 2, 128 << 20)
    source, destination = copy_buffers(copy_bytes)
    doors["memcpy"] = lambda: _qdq._parallel_copy(destination, source, per_round) * result.moved / (2 * copy_bytes)

    ort_doors = {}
    if cell.family == "onnx":
        ort_doors["ort"] = make_ort_door("ORT", cell, shape, threads, None, ORT_OPSETS, big)
        ort_doors["lib"] = make_ort_door("qdq-ORT", cell, shape, threads, qdq.ort_library_path(), (21,), big)
    elif cell.family == "quark":
        ort_doors["lib"] = make_ort_door("qdq-ORT", cell, shape, threads, qdq.ort_library_path(), (21,), big)
        if quark_library:
            ort_doors["quark"] = make_ort_door("Quark", cell, shape, threads, quark_library, (21,), big)
    ort_doors = {k: v for k, v in ort_doors.items() if v is not None}
    for name, door in ort_doors.items():
        if door.note:
            result.notes.append(f"{name} {door.note}")

    warm_call = (lambda: call(out=out)) if has_out else call

    def ramp():
        if big:
            started = time.perf_counter()
            while time.perf_counter() - started < RAMP_SECONDS:
                warm_call()

    per_round_times: dict[str, list[float]] = {}
    cell_started = time.perf_counter()
    rounds_done = 0
    for _ in range(rounds):
        if rounds_done and time.perf_counter() - cell_started > CELL_BUDGET_SECONDS:
            # A slow cell (a scalar path, seconds per call) is 10x or more off any target: more
            # rounds would not change what it says, and they would dominate the run's time.
            result.notes.append(f"{rounds_done} round{'s' if rounds_done > 1 else ''}")
            break
        rounds_done += 1
        for name, fn in doors.items():
            ramp()
            per_round_times.setdefault(name, []).append(fn())
        for name, door in ort_doors.items():
            ramp()
            per_round_times.setdefault(name + "_py", []).append(best_of(door.run_python, per_round))
            if not door.shared:
                # The plain session's pool threads are still spinning: a node that runs tasks on
                # the profiled session's pool would share the cores with them (a user has one
                # session), where a single-threaded custom op would not.
                time.sleep(ORT_SPIN_SETTLE_SECONDS)
            for _ in range(0 if door.shared else per_round):
                door.run_profiled()
            time.sleep(ORT_SPIN_SETTLE_SECONDS)
    for name, door in ort_doors.items():
        runs = door.kernel_seconds()
        runs = runs[len(runs) - rounds_done * per_round:]  # the warm-up runs at creation are dropped
        per_round_times[name + "_kernel"] = [min(runs[r * per_round:(r + 1) * per_round])
                                             for r in range(rounds_done)]
    if "kernel" not in per_round_times and "py_out" in per_round_times:
        per_round_times["kernel"] = per_round_times["py_out"]

    result.times = {name: min(values) for name, values in per_round_times.items()}

    def ratio(a: str, b: str) -> Optional[float]:
        if a not in per_round_times or b not in per_round_times:
            return None
        return float(np.median([p / q for p, q in zip(per_round_times[a], per_round_times[b])]))

    result.ratios = {
        "memcpy": ratio("memcpy", "kernel"),  # kernel bandwidth as a fraction of memcpy's
        "py_out/kernel": ratio("py_out", "kernel") if result.kernel_door == "k" else None,
        "py/kernel": ratio("py", "kernel"),
        "sub/8bit": ratio("py", "neighbour_py"),
        "ort_py/py": ratio("ort_py", "py"),
        "ort_kernel/kernel": ratio("ort_kernel", "kernel"),
        "ort_memcpy": ratio("memcpy", "ort_kernel"),  # ORT's bandwidth as a fraction of memcpy's
        "lib_py/py": ratio("lib_py", "py"),
        "lib_kernel/kernel": ratio("lib_kernel", "kernel"),
        "quark_kernel/lib_kernel": ratio("quark_kernel", "lib_kernel"),
        "quark_py/py": ratio("quark_py", "py"),
    }
    return result


# ----------------------------------------------------------------------------------------------
# Report


def fmt(value: Optional[float], spec: str = ".2f", suffix: str = "") -> str:
    return "n/a" if value is None else f"{value:{spec}}{suffix}"


def us(seconds: Optional[float]) -> str:
    if seconds is None:
        return "n/a"
    return f"{seconds * 1e6:.0f}" if seconds >= 1e-4 else f"{seconds * 1e6:.1f}"


def derived(results: list[Result]) -> None:
    """Cross-cell ratios: against the best cell, and sub-byte against the 8-bit neighbour."""
    # Bandwidths are compared as fractions of memcpy's in the same rounds, so that a cell measured
    # while the shared machine's DRAM bandwidth was low is not counted as a slow cell.
    best, best_ort = {}, {}
    for r in results:
        if "ort_memcpy" not in r.ratios and "ort_kernel" in r.times:  # a saved run from before the ratio
            r.ratios["ort_memcpy"] = r.times["memcpy"] / r.times["ort_kernel"]
        if r.ratios.get("memcpy") is not None:
            best[r.size] = max(best.get(r.size, 0.0), r.ratios["memcpy"])
        if r.ratios.get("ort_memcpy") is not None:
            best_ort[r.size] = max(best_ort.get(r.size, 0.0), r.ratios["ort_memcpy"])
    by_key = {(r.size, r.cell.key()): r for r in results}
    for r in results:
        r.ratios["of_best"] = r.ratios["memcpy"] / best[r.size] if r.ratios.get("memcpy") is not None else None
        # ORT is "scalar" in a cell where its kernel reaches below a quarter of the bandwidth of
        # ORT's fastest cell of the same size: a vectorized ORT path runs near that best.
        r.ratios["ort_of_best"] = (r.ratios["ort_memcpy"] / best_ort[r.size]
                                   if r.ratios.get("ort_memcpy") is not None else None)
        # Measured in the same rounds since session 45; a saved run from before takes the two
        # cells' best times, measured apart.
        if r.ratios.get("sub/8bit") is None:
            other = neighbour_cell(r.cell)
            n = by_key.get((r.size, other.key())) if other is not None else None
            r.ratios["sub/8bit"] = r.times["py"] / n.times["py"] if n is not None else None
    # Whether ORT's kernel is scalar is judged on the same cell at 16M where that was measured
    # (memory-bound there, so a vectorized kernel runs near ORT's best), else at the cell's own
    # size: at 64K a call's fixed costs dominate, and ORT's vectorized per-tensor Q float32 ->
    # uint8 was flagged scalar in some runs and not in others.
    for r in results:
        large = by_key.get(("16M", r.cell.key()))
        judged = large if large is not None and large.ratios.get("ort_of_best") is not None else r
        r.ratios["ort_scalar_of_best"] = judged.ratios.get("ort_of_best")


HEADER = ("| size | family | op | x → y | scale | granularity | kernel µs | kernel GB/s | of best | of memcpy "
          "| py µs | py out= / kernel | py / kernel | sub-byte / 8-bit | ORT py µs | ORT py / qdq py | ORT kernel / qdq "
          "| qdq-ORT py µs | Quark kernel / qdq-ORT kernel |\n"
          "|---|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")


def ort_scalar(r: Result) -> bool:
    """Whether ORT's kernel for the cell is scalar (derived(): "ort_scalar_of_best")."""
    return r.ratios.get("ort_scalar_of_best") is not None and r.ratios["ort_scalar_of_best"] < 0.25


def row(r: Result) -> str:
    c, t, q = r.cell, r.times, r.ratios
    kernel_us = us(t.get("kernel")) + (" o" if r.kernel_door == "o" else "")
    rate = fmt(r.moved / t["kernel"] / 1e9) if "kernel" in t else "n/a"
    ort_speedup = fmt(q["ort_py/py"], ".2f", "x") if q.get("ort_py/py") is not None else "n/a"
    if ort_scalar(r) and q.get("ort_py/py") is not None:
        ort_speedup += " s"
    notes = f" ({'; '.join(r.notes)})" if r.notes else ""
    return (f"| {r.size} | {c.family} | {c.op} | {NAME[c.x]} → {NAME[c.y]} | {NAME[c.scale]} | {c.label} | {kernel_us} "
            f"| {rate} | {fmt(q.get('of_best'))} | {fmt(q.get('memcpy'))} | {us(t.get('py'))} | {fmt(q.get('py_out/kernel'))} "
            f"| {fmt(q.get('py/kernel'))} | {fmt(q.get('sub/8bit'))} | {us(t.get('ort_py'))}{notes} | {ort_speedup} "
            f"| {fmt(q.get('ort_kernel/kernel'), '.2f', 'x')} | {us(t.get('lib_py'))} "
            f"| {fmt(q.get('quark_kernel/lib_kernel'), '.2f', 'x')} |")


GROUPS_SHOWN = 12


def summary(results: list[Result]) -> str:
    """Where every cell stands against the issue's targets, worst cells named."""
    lines = []

    def target(title: str, values, ok, worst_first, fmt_value, limit_text):
        values = [(r, v) for r, v in values if v is not None]
        if not values:
            lines.append(f"- **{title}** ({limit_text}): no cells measured.")
            return
        met = [v for r, v in values if ok(r, v)]
        bad = sorted([(r, v) for r, v in values if not ok(r, v)], key=lambda rv: rv[1], reverse=not worst_first)
        median = float(np.median([v for _r, v in values]))
        text = (f"- **{title}** ({limit_text}): {len(met)} of {len(values)} cells meet it; median "
                f"{fmt_value(median)}.")
        if bad:
            # The misses grouped by (size, family, op, x -> y), worst group first, with their range.
            groups: dict = {}
            for r, v in bad:
                c = r.cell
                groups.setdefault((r.size, c.family, c.op, NAME[c.x], NAME[c.y]), []).append(v)
            ordered = sorted(groups.items(), key=lambda kv: (min(kv[1]) if worst_first else -max(kv[1])))
            shown = []
            for (size, family, op, x, y), vs in ordered[:GROUPS_SHOWN]:
                low, high = min(vs), max(vs)
                span = fmt_value(low) if low == high else f"{fmt_value(low)}–{fmt_value(high)}"
                shown.append(f"{size} {family} {op} {x}→{y} ({len(vs)}): {span}")
            more = len(ordered) - GROUPS_SHOWN
            text += " Misses by cell group (cells), worst first: " + "; ".join(shown) + (
                f"; and {more} more groups." if more > 0 else ".")
        lines.append(text)

    big = [r for r in results if r.size == "16M"]
    target("16M kernel bandwidth against the best cell", [(r, r.ratios.get("of_best")) for r in big],
           lambda r, v: v >= 0.8, True, lambda v: f"{v:.2f}", "≥ 0.8 of the best cell's bandwidth, both as fractions of memcpy's")
    target("16M kernel bandwidth against memcpy", [(r, r.ratios.get("memcpy")) for r in big],
           lambda r, v: v >= 0.8, True, lambda v: f"{v:.2f}", "for reference, ≥ 0.8 of memcpy")
    target("Python call with out=", [(r, r.ratios.get("py_out/kernel")) for r in results],
           lambda r, v: v <= 1.15, False, lambda v: f"{v:.2f}", "≤ 1.15× the kernel's time")
    target("Python call without out=", [(r, r.ratios.get("py/kernel")) for r in results],
           lambda r, v: v <= 1.5, False, lambda v: f"{v:.2f}", "≤ 1.5× the kernel's time")
    target("Sub-byte types through Python", [(r, r.ratios.get("sub/8bit")) for r in results],
           lambda r, v: v <= 1.25, False, lambda v: f"{v:.2f}", "≤ 1.25× the 8-bit neighbour's time")

    def ort_ok(r, v):
        return v >= (4.0 if ort_scalar(r) else 1.0)

    target("qdq Python against ORT's Python session", [(r, r.ratios.get("ort_py/py")) for r in results],
           ort_ok, True, lambda v: f"{v:.2f}x",
           "≥ 1.0×; ≥ 4× where ORT is scalar, marked s: its kernel below 1/4 of ORT's best cell's bandwidth, "
           "judged at 16M where the cell was measured there")
    target("Quark cells against Quark's own CPU kernels", [(r, r.ratios.get("quark_kernel/lib_kernel"))
                                                           for r in results],
           lambda r, v: v >= 1.0, True, lambda v: f"{v:.2f}x",
           "≥ 1.0×, qdq's custom-op kernel against Quark's on the same node in ORT")
    kernel_doors = {r.kernel_door for r in results}
    if "o" in kernel_doors:
        lines.append("- Cells marked `o` have no C++ timing entry point; their kernel time is the Python call "
                     "with out=, so their Python/kernel ratios are not shown.")
    if not any("py_out" in r.times for r in results):  # (cells marked o time their kernel through out=)
        lines.append("- The Python functions do not take `out=` in this build: the out= column is n/a.")
    return "\n".join(lines)


def machine_description(threads: int, quark_library: Optional[str]) -> str:
    cpu = "unknown CPU"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout.splitlines():
            if line.startswith("Model name:"):
                cpu = line.split(":", 1)[1].strip()
    except OSError:
        pass
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
        flags = ", ".join(f for f in ("avx512f", "avx512bw", "avx2", "f16c") if f" {f}" in text)
    except OSError:
        pass
    quark = f"; Quark library {os.path.basename(quark_library)}" if quark_library else "; no Quark library"
    return (f"{cpu} ({os.cpu_count()} cores; {flags}), {platform.system()} {platform.release()}; "
            f"qdq SIMD target {_qdq._simd_target()}, {threads} threads; onnxruntime {ort.__version__} "
            f"({threads} intra-op threads); numpy {np.__version__}{quark}")


def save_json(path: str, machine: str, minutes: float, quick: bool, results: list[Result]) -> None:
    with open(path + ".tmp", "w") as f:
        json.dump({"machine": machine, "minutes": minutes, "quick": quick, "results": [
                   {"size": r.size, "cell": r.cell.key(), "fields": r.cell.__dict__, "moved": r.moved,
                    "py_moved": r.py_moved, "kernel_door": r.kernel_door, "times": r.times,
                    "ratios": r.ratios, "notes": r.notes} for r in results]}, f, indent=1)
    os.replace(path + ".tmp", path)


def replace_block(text: str, name: str, body: str) -> str:
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    block = f"{begin}\n{body}\n{end}"
    if begin in text:
        return text[: text.index(begin)] + block + text[text.index(end) + len(end):]
    return text + "\n" + block + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="fewer rounds and repetitions")
    parser.add_argument("--sizes", default="16M,64K,64Kx4")
    parser.add_argument("--cells", default="", help="comma-separated glob patterns over cell keys "
                        "family/op/x->y/scale/granularity, e.g. 'onnx/Q/float32->int4/*/*,quark/*'")
    parser.add_argument("--variants", choices=["none", "per-tensor", "all"], default="none",
                        help="the other accepted scale types (and DQ output_dtype with another scale type): "
                        "none, at per-tensor only, or at every granularity")
    parser.add_argument("--zero-points", action="store_true",
                        help="also time every canonical ONNX cell given a zero-point tensor (granularity '...+zp')")
    parser.add_argument("--quark-library", metavar="PATH", help="Quark's CPU custom-op library (.so)")
    parser.add_argument("--list", action="store_true", help="print the cell keys and exit")
    parser.add_argument("--json", metavar="FILE", help="write every measurement as JSON")
    parser.add_argument("--from-json", metavar="FILE", help="report a saved --json run instead of measuring")
    parser.add_argument("--write", metavar="FILE", help="replace the summary and the table in this markdown file")
    args = parser.parse_args()
    _qdq._set_num_threads(args.threads)

    cells = enumerate_cells(args.variants, args.zero_points)
    if args.cells:
        patterns = [p.strip() for p in args.cells.split(",") if p.strip()]
        cells = [c for c in cells if any(fnmatch.fnmatchcase(c.key(), p) for p in patterns)]
    if args.list:
        for c in cells:
            print(c.key() + ("" if c.canonical else "  (scale/output variant)"))
        print(f"{len(cells)} cells", file=sys.stderr)
        return 0

    started = time.time()
    results: list[Result] = []
    print(HEADER)
    machine = machine_description(args.threads, args.quark_library)
    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        for item in saved["results"]:
            result = Result(Cell(**item["fields"]), item["size"], item["moved"], item["py_moved"], item["times"],
                            item["ratios"], item["kernel_door"], item["notes"])
            results.append(result)
        machine, minutes, args.quick = saved["machine"], saved["minutes"], saved["quick"]
    else:
        for size in [s for s in args.sizes.split(",") if s]:
            for cell in cells:
                result = measure(cell, size, args.threads, args.quick, args.quark_library)
                results.append(result)
                derived(results)
                print(row(result), flush=True)
                if args.json:  # after every cell, so that a long run interrupted still reports
                    save_json(args.json, machine, (time.time() - started) / 60, args.quick, results)
        minutes = (time.time() - started) / 60
    derived(results)
    if args.from_json:
        print("\n".join(row(r) for r in results))
    text_summary = summary(results)
    print("\n" + text_summary + f"\n\n{machine}; {len(results)} cells in {minutes:.1f} min")
    if args.json:
        save_json(args.json, machine, minutes, args.quick, results)
    if args.write:
        stamp = datetime.date.today().isoformat()
        with open(args.write) as f:
            text = f.read()
        run = (f"Measured {stamp} on: {machine}. {len(results)} cells"
               f"{' (--quick)' if args.quick else ''}, {minutes:.0f} min.")
        text = replace_block(text, "summary", f"{run}\n\n{text_summary}")
        text = replace_block(text, "table", f"{run}\n\n" + "\n".join([HEADER] + [row(r) for r in results]))
        with open(args.write, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
