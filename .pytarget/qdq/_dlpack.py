"""Zero-copy numpy views of CPU DLPack tensors whose element type numpy lacks.

numpy's from_dlpack reads integer and IEEE float tensors; a torch bfloat16 or float8 tensor is
refused there. Their DLPack type codes name the format exactly, so this module reads the legacy
DLPack struct (dlpack.h, "dltensor" capsule) with ctypes and views the memory with the matching
ml_dtypes dtype. The producer's deleter runs when the last view of that memory is released.
"""

from __future__ import annotations

import ctypes
from typing import Any, Optional

import ml_dtypes
import numpy as np


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _Device),
        ("ndim", ctypes.c_int32),
        ("dtype", _DataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),  # in elements; NULL means C-contiguous
        ("byte_offset", ctypes.c_uint64),
    ]


class ManagedTensor(ctypes.Structure):
    pass


Deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(ManagedTensor))
ManagedTensor._fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", Deleter)]

CAPSULE_NAME = b"dltensor"
_USED_CAPSULE_NAME = b"used_dltensor"  # tells the producer's capsule destructor not to free it
_CPU = 1

# (DLPack type code, bits) -> ml_dtypes dtype, for the formats numpy cannot represent.
_ML_DTYPES = {
    (4, 16): ml_dtypes.bfloat16,  # kDLBfloat
    (10, 8): ml_dtypes.float8_e4m3fn,  # kDLFloat8_e4m3fn
    (11, 8): ml_dtypes.float8_e4m3fnuz,
    (12, 8): ml_dtypes.float8_e5m2,
    (13, 8): ml_dtypes.float8_e5m2fnuz,
    (14, 8): ml_dtypes.float8_e8m0fnu,
}

_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_is_valid.restype = ctypes.c_int
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_pointer.restype = ctypes.c_void_p
_capsule_set_name = ctypes.pythonapi.PyCapsule_SetName
_capsule_set_name.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_set_name.restype = ctypes.c_int


class _Owner:
    """Holds a consumed DLManagedTensor; returns it to its producer when no view needs it."""

    def __init__(self, managed: ctypes.POINTER(ManagedTensor)):
        self._managed = managed

    def __del__(self):
        deleter = self._managed.contents.deleter
        if deleter:
            deleter(self._managed)


def view_ml_dtypes(value: Any) -> Optional[np.ndarray]:
    """An ml_dtypes view of `value`'s DLPack tensor, or None if its type is not one of _ML_DTYPES."""
    capsule = value.__dlpack__()
    if not _capsule_is_valid(capsule, CAPSULE_NAME):
        return None
    managed = ctypes.cast(_capsule_pointer(capsule, CAPSULE_NAME), ctypes.POINTER(ManagedTensor))
    tensor = managed.contents.dl_tensor
    dtype = _ML_DTYPES.get((tensor.dtype.code, tensor.dtype.bits))
    if dtype is None or tensor.dtype.lanes != 1 or tensor.device.device_type != _CPU:
        return None  # the capsule stays unconsumed; its destructor releases the tensor
    _capsule_set_name(capsule, _USED_CAPSULE_NAME)
    owner = _Owner(managed)

    dtype = np.dtype(dtype)
    shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
    if tensor.strides:
        strides = tuple(tensor.strides[i] * dtype.itemsize for i in range(tensor.ndim))
    else:
        strides, step = [], dtype.itemsize
        for extent in reversed(shape):
            strides.insert(0, step)
            step *= extent
        strides = tuple(strides)
    if any(extent == 0 for extent in shape):
        return np.empty(shape, dtype=dtype)
    if any(stride < 0 for stride in strides):
        return None  # no producer of these types emits negative strides; refuse rather than guess
    span = sum((extent - 1) * stride for extent, stride in zip(shape, strides)) + dtype.itemsize
    memory = (ctypes.c_char * span).from_address(tensor.data + tensor.byte_offset)
    memory._qdq_dlpack_owner = owner  # the view below keeps `memory`, which keeps the owner
    return np.ndarray(shape, dtype=dtype, buffer=memory, strides=strides)
