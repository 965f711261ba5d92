"""The package around the operators: version, thread control, the `qdq` console command, DLPack
inputs (torch tensors without a numpy detour), the hints for float64 and Python lists, and
`import qdq` from inside the source checkout."""

from __future__ import annotations

import ctypes
import gc
import os
import pathlib
import re
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import qdq

REPO = pathlib.Path(__file__).resolve().parents[2]


def _cmake_project_version() -> str:
    text = (REPO / "CMakeLists.txt").read_text()
    return re.search(r"project\(qdq VERSION ([0-9]+\.[0-9]+\.[0-9]+)", text).group(1)


# ----------------------------------------------------------------------------- version


def test_version_is_cmake_project_version():
    assert qdq.__version__ == _cmake_project_version()
    assert "__version__" in qdq.__all__


def test_version_matches_installed_distribution():
    from importlib import metadata

    assert metadata.version("qdq") == qdq.__version__


# ----------------------------------------------------------------------------- threads


@pytest.fixture
def restore_threads():
    yield
    qdq.set_num_threads(0)


def test_set_num_threads_fixes_the_count_and_zero_restores_default(restore_threads):
    qdq.set_num_threads(0)
    default = qdq.num_threads()
    assert default >= 1
    qdq.set_num_threads(3)
    assert qdq.num_threads() == 3
    qdq.set_num_threads(1)
    assert qdq.num_threads() == 1
    qdq.set_num_threads(0)
    assert qdq.num_threads() == default


def test_results_do_not_depend_on_thread_count(restore_threads):
    x = np.random.default_rng(12).standard_normal((64, 4099)).astype(np.float32) * 40
    outputs = []
    for threads in (1, 2, 5):
        qdq.set_num_threads(threads)
        outputs.append(qdq.quantize_linear(x, np.float32(0.25), np.int8(3)))
    assert outputs[0].dtype == np.int8
    for other in outputs[1:]:
        np.testing.assert_array_equal(outputs[0], other)


@pytest.mark.parametrize("bad", [-1, 1025, 2.0, True, "4"])
def test_set_num_threads_rejects_bad_values(bad, restore_threads):
    with pytest.raises(qdq.QdqError, match="set_num_threads"):
        qdq.set_num_threads(bad)


def test_environment_variable_sets_the_default():
    code = "import qdq; print(qdq.num_threads())"
    env = dict(os.environ, QDQ_NUM_THREADS="2")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "2"


# ----------------------------------------------------------------------------- console command


def _console_script() -> pathlib.Path:
    return pathlib.Path(sys.executable).with_name("qdq")


def test_console_command_prints_version():
    script = _console_script()
    if not script.is_file():
        pytest.skip(f"no qdq console script beside {sys.executable} (package not pip-installed here)")
    result = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"qdq {qdq.__version__}"


def test_console_command_runs_the_tool(tmp_path):
    script = _console_script()
    if not script.is_file():
        pytest.skip(f"no qdq console script beside {sys.executable} (package not pip-installed here)")
    x = np.float32([[0, 2, 3, 1000, -254, -1000]])
    np.save(tmp_path / "x.npy", x)
    result = subprocess.run(
        [str(script), "quantize", str(tmp_path / "x.npy"), str(tmp_path / "y.npy"), "--type", "uint8",
         "--scale", "2", "--zero-point", "128"],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), np.uint8([[128, 129, 130, 255, 1, 0]]))
    # A usage error keeps the tool's exit status through the wrapper.
    result = subprocess.run([str(script), "quantize"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.startswith("qdq: error: ")


# ----------------------------------------------------------------------------- DLPack


class DLPackOnly:
    """A tensor that speaks DLPack and nothing else (no __array__), as a torch tensor would be
    seen by a consumer that uses only the protocol."""

    def __init__(self, array: np.ndarray, device=(1, 0)):
        self._array = array
        self._device = device

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._device


def test_dlpack_input_quantizes_like_numpy():
    x = np.random.default_rng(1).standard_normal((3, 17)).astype(np.float32)
    scale = np.float32([0.5, 0.25, 0.125])
    expected = qdq.quantize_linear(x, scale, np.int8([0, 1, -1]), axis=0)
    got = qdq.quantize_linear(DLPackOnly(x), DLPackOnly(scale), DLPackOnly(np.int8([0, 1, -1])), axis=0)
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.int8
    back = qdq.dequantize_linear(DLPackOnly(got), DLPackOnly(scale), np.int8([0, 1, -1]), axis=0)
    np.testing.assert_array_equal(back, qdq.dequantize_linear(expected, scale, np.int8([0, 1, -1]), axis=0))


def test_dlpack_input_is_not_copied():
    x = np.arange(12, dtype=np.float16).reshape(3, 4)
    view = qdq._as_array(DLPackOnly(x), "x", 2)
    assert view.dtype == np.float16
    assert np.shares_memory(view, x)


def test_dlpack_input_on_another_device_is_refused():
    with pytest.raises(qdq.QdqError, match=r"input 'x' is on DLPack device \(2, 0\).*CPU"):
        qdq.quantize_linear(DLPackOnly(np.float32([1.0]), device=(2, 0)), np.float32(1.0))


class _LegacyDLPackProducer:
    """Exports an ml_dtypes array as a legacy DLPack capsule with a given type code, as torch
    does for bfloat16 / float8 tensors; records when the consumer returns the tensor."""

    def __init__(self, array: np.ndarray, code: int, bits: int):
        from qdq import _dlpack

        self.array = np.ascontiguousarray(array)
        self.deleted = 0
        self._shape = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
        self._deleter = _dlpack.Deleter(self._on_delete)
        managed = _dlpack.ManagedTensor()
        managed.dl_tensor.data = self.array.ctypes.data
        managed.dl_tensor.device.device_type = 1
        managed.dl_tensor.ndim = array.ndim
        managed.dl_tensor.dtype.code, managed.dl_tensor.dtype.bits, managed.dl_tensor.dtype.lanes = code, bits, 1
        managed.dl_tensor.shape = ctypes.cast(self._shape, ctypes.POINTER(ctypes.c_int64))
        managed.deleter = self._deleter
        self._managed = managed

    def _on_delete(self, _pointer):
        self.deleted += 1

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, **_kwargs):
        new_capsule = ctypes.pythonapi.PyCapsule_New
        new_capsule.restype = ctypes.py_object
        new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new_capsule(ctypes.addressof(self._managed), b"dltensor", None)


@pytest.mark.parametrize(
    "dtype, code, bits",
    [(ml_dtypes.bfloat16, 4, 16), (ml_dtypes.float8_e4m3fn, 10, 8), (ml_dtypes.float8_e5m2, 12, 8)],
)
def test_dlpack_types_numpy_lacks_are_viewed_with_ml_dtypes(dtype, code, bits):
    source = (np.arange(-6, 6, dtype=np.float32) * 0.75).reshape(3, 4).astype(dtype)
    producer = _LegacyDLPackProducer(source, code, bits)
    view = qdq._as_array(producer, "x", 2)
    assert view.dtype == np.dtype(dtype)
    assert np.shares_memory(view, producer.array)
    np.testing.assert_array_equal(view.view(np.uint8), producer.array.view(np.uint8))
    assert producer.deleted == 0  # still in use by the view
    del view
    gc.collect()
    assert producer.deleted == 1


def test_bfloat16_dlpack_tensor_quantizes_like_the_numpy_array():
    source = (np.arange(-8, 8, dtype=np.float32) * 3.5).reshape(2, 8).astype(ml_dtypes.bfloat16)
    producer = _LegacyDLPackProducer(source, 4, 16)
    got = qdq.quantize_linear(producer, ml_dtypes.bfloat16(2.0), np.uint8(100))
    np.testing.assert_array_equal(got, qdq.quantize_linear(source, ml_dtypes.bfloat16(2.0), np.uint8(100)))
    gc.collect()
    assert producer.deleted == 1


# ----------------------------------------------------------------------------- lists and float64


def test_float64_array_error_says_what_to_pass():
    with pytest.raises(qdq.QdqError, match=r"input 'x' has dtype float64.*np\.asarray\(value, dtype=np\.float32\)"):
        qdq.quantize_linear(np.float64([1.0, 2.0]), np.float32(1.0))


def test_python_list_of_floats_error_says_what_to_pass():
    # numpy makes a list of floats float64; qdq does not round it to float32 silently.
    with pytest.raises(qdq.QdqError, match=r"input 'y_scale' has dtype float64.*dtype=np\.float32"):
        qdq.quantize_linear(np.float32([1.0, 2.0]), [0.5, 0.25], axis=0)


def test_int64_zero_point_error_says_what_to_pass():
    with pytest.raises(qdq.QdqError, match=r"input 'y_zero_point' has dtype int64.*dtype=np\.uint8"):
        qdq.quantize_linear(np.float32([1.0]), np.float32(1.0), [3], axis=0)


def test_list_of_strings_error_says_what_to_pass():
    with pytest.raises(qdq.QdqError, match=r"has dtype <U1.*a CPU DLPack tensor"):
        qdq.quantize_linear(["a", "b"], 1.0)


# ----------------------------------------------------------------------------- import from the checkout


def test_import_from_inside_the_source_package_directory():
    # python/ holds the source package qdq/ without its compiled parts; the import must find them.
    code = (
        "import qdq, numpy as np, pathlib; "
        "assert pathlib.Path(qdq.__file__).parent == pathlib.Path('qdq').resolve(), qdq.__file__; "
        "print(qdq.__version__, qdq.quantize_linear(np.float32([2, 4]), np.float32(2)).tolist(), "
        "pathlib.Path(qdq.ort_library_path()).is_file())"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO / "python", capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [qdq.__version__, "[1,", "2]", "True"]


# ----------------------------------------------------------------------------- ORT header fetch


FETCH_SCRIPT = REPO / "cmake" / "fetch_ort_headers.py"
HEADER_MEMBER = "quark/onnx/operators/custom_ops/include/onnxruntime/core/session/onnxruntime_c_api.h"


def _local_quark_wheel(directory: pathlib.Path, header_text: str) -> None:
    """A stand-in amd-quark 0.13 wheel holding only the header, for an offline wheelhouse."""
    import zipfile

    name = "amd_quark-0.13"
    with zipfile.ZipFile(directory / f"{name}-py3-none-any.whl", "w") as wheel:
        wheel.writestr(f"{name}.dist-info/METADATA", "Metadata-Version: 2.1\nName: amd-quark\nVersion: 0.13\n")
        wheel.writestr(f"{name}.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        wheel.writestr(f"{name}.dist-info/RECORD", "")
        wheel.writestr(HEADER_MEMBER, header_text)


def _fetch(destination: pathlib.Path, **pip_env) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(pip_env)
    return subprocess.run([sys.executable, str(FETCH_SCRIPT), str(destination)], env=env, capture_output=True,
                          text=True, timeout=300)


def test_ort_header_fetch_honours_pip_offline_configuration(tmp_path):
    # PIP_NO_INDEX + PIP_FIND_LINKS: pip's own offline setup; the fetch must use it, not PyPI.
    wheelhouse = tmp_path / "wheelhouse"
    wheelhouse.mkdir()
    _local_quark_wheel(wheelhouse, "/* the offline copy */\n")
    result = _fetch(tmp_path / "headers", PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheelhouse))
    assert result.returncode == 0, result.stderr
    assert pathlib.Path(result.stdout.strip()) == (tmp_path / "headers").resolve()
    assert (tmp_path / "headers" / "onnxruntime_c_api.h").read_text() == "/* the offline copy */\n"


def test_ort_header_fetch_offline_without_the_wheel_says_what_to_do(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = _fetch(tmp_path / "headers", PIP_NO_INDEX="1", PIP_FIND_LINKS=str(empty))
    assert result.returncode == 1
    assert "PIP_FIND_LINKS" in result.stderr and "QDQ_ORT_INCLUDE_DIR" in result.stderr
    assert not (tmp_path / "headers" / "onnxruntime_c_api.h").exists()
