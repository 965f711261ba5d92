"""Fetches ONNX Runtime's C API header for building qdq's custom-op library.

The onnxruntime wheel ships no headers; the amd-quark wheel (MIT, PyPI) carries ONNX Runtime
1.17's, which the C API's ABI stability lets a library built against them load into any newer
ONNX Runtime. The header is downloaded at build time with pip and never committed.

Usage: python fetch_ort_headers.py DESTINATION_DIR   (prints the include directory)
"""

import os
import pathlib
import subprocess
import sys
import tempfile
import zipfile

WHEEL = "amd-quark==0.13"
MEMBER_SUFFIX = "onnxruntime/core/session/onnxruntime_c_api.h"


def pip_environment() -> dict:
    # Inside pip's isolated build, PIP_* variables (no index, no network for builds) are inherited;
    # this download is an ordinary registry fetch, so they are dropped.
    return {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}


def main() -> int:
    destination = pathlib.Path(sys.argv[1]).resolve()
    header = destination / "onnxruntime_c_api.h"
    if not header.exists():
        destination.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as download:
            command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", download, WHEEL]
            result = subprocess.run(command, capture_output=True, text=True, env=pip_environment())
            if result.returncode != 0:
                sys.stderr.write(f"fetch_ort_headers: {' '.join(command)} failed:\n{result.stdout}{result.stderr}")
                return 1
            wheel = next(pathlib.Path(download).glob("*.whl"))
            with zipfile.ZipFile(wheel) as archive:
                member = next(name for name in archive.namelist() if name.endswith(MEMBER_SUFFIX))
                header.write_bytes(archive.read(member))
    print(destination)
    return 0


if __name__ == "__main__":
    sys.exit(main())
