#!/usr/bin/env python3
"""Every qdq cell through the command-line door: `qdq quantize` / `qdq dequantize` on .npy files.

The cells are compare.py's, generated from the element-type table (enumerate_cells): every operator
family, (x type, output type) pair and granularity the front doors accept. Each is run as a user
runs it, a new `qdq` process reading x, the scale and the zero point from .npy files and writing y,
and timed against what such a command cannot avoid, measured in the same rounds:

  cli      the `qdq` command's wall time (subprocess, output discarded);
  start    `qdq --version`: starting the process (loading libqdq's dependencies, the thread pool);
  io       reading x's file and writing y's bytes to a file (its blocks reserved first with
           posix_fallocate, as the command and np.save do), in this process, through buffers that are
           already mapped: the system calls' own cost, with no page faults;
  kernel   the Python call with out= on the same arrays (the computation, in a warm process);
  py file  the same task in a Python script: np.load, the qdq function, np.save (without the
           interpreter's start).

floor = start + io + kernel, each its best in the round. The table gives cli / floor (target: at
most 1.25, the command's own cost at most a quarter of what it cannot avoid) and cli / py file (the
command against the script a user would write instead), as medians over rounds of the ratio within
a round. Before the rounds each cell's command runs once and its output is compared with the Python
call's bit for bit, so a cell whose flags this script spells wrongly fails instead of timing an
error.

Usage: python bench/cli_door.py [--cli build/qdq] [--sizes 16M,64K] [--cells 'onnx/Q/*'] [--quick]
                                [--json out.json] [--write docs/performance.md]
"""

from __future__ import annotations

import argparse
import ast
import datetime
import fnmatch
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare  # noqa: E402  (the cells, their inputs and the machine's description)
from compare import NAME, SIZES, Cell, best_of  # noqa: E402

import qdq  # noqa: E402
from qdq import _qdq  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TARGET = 1.25


def cli_arguments(cell: Cell, shape, files: dict) -> list[str]:
    """The command line that runs `cell` on the files (x, y, s, zp), as `qdq COMMAND --help` documents it."""
    _scale_shape, axis, block = compare.scale_layout(cell.family, cell.grain, shape)
    command = "quantize" if cell.op == "Q" else "dequantize"
    args = [command, files["x"], files["y"], "--scale", files["s"], "--scale-type", NAME[cell.scale]]
    args += ["--type", NAME[cell.y] if cell.op == "Q" else NAME[cell.x]]
    if files.get("zp"):
        args += ["--zero-point", files["zp"]]
    if cell.op == "DQ" and cell.out_attr:
        args += ["--output-type", NAME[cell.out_attr]]
    if cell.family == "onnx":
        args += ["--axis", str(axis)] + (["--block-size", str(block)] if block else [])
    elif cell.family == "quark":
        args += ["--operator", "extended", "--axis", str(axis)]
    else:
        args += ["--operator", "elementwise"]
    return [str(a) for a in args]


class Files:
    """The cell inputs as .npy files in one temporary directory, each array written once."""

    def __init__(self, directory: str):
        self.directory = directory
        self.written: dict = {}

    def path_of(self, array: np.ndarray, role: str) -> str:
        key = id(array)  # compare.make_array caches its arrays, so one array is one file
        if key not in self.written:
            path = os.path.join(self.directory, f"{role}{len(self.written)}.npy")
            np.save(path, array)
            self.written[key] = (path, array)
        return self.written[key][0]


def load(path: str, dtype: np.dtype) -> np.ndarray:
    """np.load, for every dtype np.save writes: np.load refuses ml_dtypes' float8_e5m2 files ('<f1'),
    so the header is read here and the body as the dtype's codes, in one read as np.load does."""
    with open(path, "rb") as f:
        major = f.read(8)[6]
        length = int.from_bytes(f.read(2 if major == 1 else 4), "little")
        header = ast.literal_eval(f.read(length).decode("latin1"))
        codes = np.fromfile(f, dtype={1: np.uint8, 2: np.uint16, 4: np.uint32}[dtype.itemsize])
    return codes.view(dtype).reshape(header["shape"])


def run_quietly(argv: list[str]) -> None:
    result = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {result.returncode}: {result.stderr.decode().strip()}")


def measure(cli: str, cell: Cell, size: str, files: Files, quick: bool) -> dict:
    shape = SIZES[size]
    x, scale, zp = compare.cell_inputs(cell, shape)
    paths = {"x": files.path_of(x, "x"), "s": files.path_of(scale, "s"),
             "zp": None if zp is None else files.path_of(zp, "zp"),
             "y": os.path.join(files.directory, "y.npy")}
    argv = [cli] + cli_arguments(cell, shape, paths)
    call = compare.python_call(cell, shape)
    expected = call()
    run_quietly(argv)
    written = load(paths["y"], expected.dtype)
    if written.shape != expected.shape or written.tobytes() != np.ascontiguousarray(expected).tobytes():
        raise RuntimeError(f"{cell.key()}: the command's output differs from the Python call's ({' '.join(argv)})")

    out = np.empty_like(expected)
    call(out=out)
    y_bytes = expected.nbytes
    x_size = os.path.getsize(paths["x"])
    read_buffer = bytearray(x_size)  # mapped once, here: the io door times the system calls only
    write_buffer = np.ones(y_bytes, np.uint8)
    io_path = os.path.join(files.directory, "io.npy")

    def io():
        with open(paths["x"], "rb", buffering=0) as f:
            f.readinto(read_buffer)
        with open(io_path, "wb", buffering=0) as f:
            os.posix_fallocate(f.fileno(), 0, y_bytes)  # blocks reserved first, as the command does
            f.write(write_buffer)

    def py_file():
        zero_point = None if paths["zp"] is None else load(paths["zp"], zp.dtype)
        y = compare.python_call_on(cell, shape, load(paths["x"], x.dtype), load(paths["s"], scale.dtype), zero_point)()
        np.save(paths["y"], y)

    rounds = 2 if quick else 3
    repeat = 2 if quick else 3
    if size != "16M":
        repeat *= 3
    doors = {
        "cli": lambda: best_of(lambda: run_quietly(argv), repeat),
        "start": lambda: best_of(lambda: run_quietly([cli, "--version"]), repeat),
        "io": lambda: best_of(io, repeat),
        "kernel": lambda: best_of(lambda: call(out=out), repeat),
        "py_file": lambda: best_of(py_file, repeat),
    }
    per_round: dict = {name: [] for name in doors}
    for _ in range(rounds):
        for name, fn in doors.items():
            per_round[name].append(fn())
    floor = [s + i + k for s, i, k in zip(per_round["start"], per_round["io"], per_round["kernel"])]
    return {
        "cell": cell.key(), "size": size, "argv": argv[1:],
        "times": {name: min(values) for name, values in per_round.items()} | {"floor": min(floor)},
        "cli/floor": float(np.median([c / f for c, f in zip(per_round["cli"], floor)])),
        "cli/py_file": float(np.median([c / p for c, p in zip(per_round["cli"], per_round["py_file"])])),
    }


HEADER = ("| size | cell | cli ms | start ms | io ms | kernel ms | floor ms | cli / floor | py file ms | cli / py file |\n"
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f}" if seconds >= 1e-3 else f"{seconds * 1e3:.2f}"


def row(r: dict) -> str:
    t = r["times"]
    return (f"| {r['size']} | {r['cell']} | {ms(t['cli'])} | {ms(t['start'])} | {ms(t['io'])} | {ms(t['kernel'])} "
            f"| {ms(t['floor'])} | {r['cli/floor']:.2f} | {ms(t['py_file'])} | {r['cli/py_file']:.2f} |")


def summary(results: list[dict]) -> str:
    lines = []
    for size in dict.fromkeys(r["size"] for r in results):
        of_size = [r for r in results if r["size"] == size]
        ratios = [r["cli/floor"] for r in of_size]
        met = sum(v <= TARGET for v in ratios)
        worst = sorted(of_size, key=lambda r: -r["cli/floor"])[:5]
        versus_py = [r["cli/py_file"] for r in of_size]
        lines.append(
            f"- **{size}, the command against its floor** (≤ {TARGET}): {met} of {len(of_size)} cells; median "
            f"{np.median(ratios):.2f}, worst " + ", ".join(f"{r['cell']} {r['cli/floor']:.2f}" for r in worst) + ".")
        lines.append(
            f"- **{size}, the command against the same task in a Python script**: median {np.median(versus_py):.2f}× "
            f"its time (range {min(versus_py):.2f}–{max(versus_py):.2f}; the script has no interpreter start in it).")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", default=str(REPO / "build" / "qdq"), help="the qdq binary (default build/qdq)")
    parser.add_argument("--threads", type=int, default=2, help="QDQ_NUM_THREADS for the command and this process")
    parser.add_argument("--sizes", default="16M,64K")
    parser.add_argument("--cells", default="", help="comma-separated glob patterns over compare.py's cell keys")
    parser.add_argument("--quick", action="store_true", help="2 rounds of 2 runs (16M) instead of 3 of 3")
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--from-json", metavar="FILE", help="report a saved --json run instead of measuring")
    parser.add_argument("--write", metavar="FILE", help="replace the cli-summary and cli-table blocks of this file")
    args = parser.parse_args()
    os.environ["QDQ_NUM_THREADS"] = str(args.threads)
    _qdq._set_num_threads(args.threads)

    results: list[dict] = []
    measured_on = datetime.date.today().isoformat()
    started = time.time()
    machine = compare.machine_description(args.threads, None)
    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        results, machine, minutes, args.quick = saved["results"], saved["machine"], saved["minutes"], saved["quick"]
        measured_on = saved.get("date", measured_on)
        print(HEADER + "\n" + "\n".join(row(r) for r in results))
    else:
        cells = compare.enumerate_cells("none")
        if args.cells:
            patterns = [p.strip() for p in args.cells.split(",") if p.strip()]
            cells = [c for c in cells if any(fnmatch.fnmatchcase(c.key(), p) for p in patterns)]
        print(HEADER)
        with tempfile.TemporaryDirectory(prefix="qdq_cli_door_") as directory:
            for size in [s for s in args.sizes.split(",") if s]:
                files = Files(directory)
                for cell in cells:
                    results.append(measure(args.cli, cell, size, files, args.quick))
                    print(row(results[-1]), flush=True)
                for path, _array in files.written.values():
                    os.unlink(path)
                compare._ARRAY_CACHE.clear()
        minutes = (time.time() - started) / 60
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"machine": machine, "minutes": minutes, "quick": args.quick,
                           "date": datetime.date.today().isoformat(), "results": results}, f, indent=1)
    text = summary(results)
    print("\n" + text + f"\n\n{machine}; {len(results)} cells in {minutes:.1f} min")
    if args.write:
        with open(args.write) as f:
            document = f.read()
        run = (f"Measured {measured_on} on: {machine}. {len(results)} cells"
               f"{' (--quick)' if args.quick else ''}, {minutes:.0f} min.")
        document = compare.replace_block(document, "cli-summary", f"{run}\n\n{text}")
        document = compare.replace_block(document, "cli-table", f"{run}\n\n" + "\n".join([HEADER] + [row(r) for r in results]))
        with open(args.write, "w") as f:
            f.write(document)
    return 0


if __name__ == "__main__":
    sys.exit(main())
