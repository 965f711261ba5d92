"""Fetches ONNX Runtime's C API header for building qdq's custom-op library.

The onnxruntime wheel ships no headers; the amd-quark wheel (MIT, PyPI) carries ONNX Runtime
1.17's, which the C API's ABI stability lets a library built against them load into any newer
ONNX Runtime. The header is downloaded at build time with pip and never committed.

The download runs with the caller's environment and pip configuration (PIP_INDEX_URL,
PIP_EXTRA_INDEX_URL, PIP_FIND_LINKS, PIP_NO_INDEX, pip.conf, proxies), so an index mirror or a
local wheel directory is used as for any other package. Offline, point PIP_FIND_LINKS at a
directory holding the amd-quark wheel, or skip this script: set QDQ_ORT_INCLUDE_DIR (a CMake
variable or an environment variable) to a directory containing onnxruntime_c_api.h.

Usage: python fetch_ort_headers.py DESTINATION_DIR   (prints the include directory)
"""

import pathlib
import subprocess
import sys
import tempfile
import zipfile

WHEEL = "amd-quark==0.13"
MEMBER_SUFFIX = "onnxruntime/core/session/onnxruntime_c_api.h"


def main() -> int:
    destination = pathlib.Path(sys.argv[1]).resolve()
    header = destination / "onnxruntime_c_api.h"
    if not header.exists():
        destination.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as download:
            command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet", "-d", download, WHEEL]
            result = subprocess.run(command, capture_output=True, text=True)
            if result.returncode != 0:
                sys.stderr.write(
                    f"fetch_ort_headers: {' '.join(command)} failed:\n{result.stdout}{result.stderr}"
                    "(offline: set PIP_FIND_LINKS to a directory with that wheel, or QDQ_ORT_INCLUDE_DIR to a"
                    " directory containing onnxruntime_c_api.h)\n"
                )
                return 1
            wheel = next(pathlib.Path(download).glob("*.whl"))
            with zipfile.ZipFile(wheel) as archive:
                member = next(name for name in archive.namelist() if name.endswith(MEMBER_SUFFIX))
                header.write_bytes(archive.read(member))
    print(destination)
    return 0


if __name__ == "__main__":
    sys.exit(main())
