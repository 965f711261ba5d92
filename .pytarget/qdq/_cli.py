"""The `qdq` console command of the wheel: runs the qdq command-line tool shipped inside the package.

The tool is the same C++ program CMake builds as build/qdq (installed here as qdq/bin/qdq); this
wrapper only finds it and replaces the Python process with it, so arguments, output, signals and
the exit status are the tool's own.
"""

from __future__ import annotations

import os
import pathlib
import sys


def executable() -> pathlib.Path:
    """Path of the packaged qdq command-line tool."""
    return pathlib.Path(__file__).resolve().with_name("bin") / "qdq"


def main() -> None:
    tool = executable()
    if not tool.is_file():
        sys.stderr.write(f"qdq: error: the command-line tool is not installed at {tool}\n")
        sys.exit(1)
    os.execv(tool, [str(tool), *sys.argv[1:]])


if __name__ == "__main__":
    main()
