// qdq._qdq: the nanobind bridge between numpy buffers and the C++ API.
//
// Tensors cross as (type code, shape, raw bytes). The Python layer hands over numpy's storage
// unchanged, which for ml_dtypes' 4- and 2-bit types is one element per byte (the code in the low
// bits): the core reads and writes that layout itself (SubByteLayout::kOneCodePerByte), so no
// element is touched here. Operators run with the GIL released, into a new array or the caller's
// `out`. Every qdq Status becomes qdq.QdqError (a ValueError).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

// numpy's C API, for the fast door below only (inputs read and outputs made without Python-level
// work). Built against numpy >= 2 headers, which run on numpy 1.x and 2.x alike.
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "directml.h"
#include "fake_quant.h"
#include "output_buffers.h"
#include "qdq/fake_quant.hpp"
#include "qdq/qdq.h"
#include "qdq/qdq.hpp"
#include "qdq/toolkit.hpp"

namespace nb = nanobind;

void register_quark_ops(nb::module_& m);  // quark_ops.cpp

namespace {

struct QdqError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using Bytes = nb::ndarray<const uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Shape = std::vector<int64_t>;

// One input tensor as it arrives from Python: numpy's bytes, in numpy's layout.
struct InputTensor {
  qdq::ElementType type = qdq::ElementType::kUndefined;
  Shape shape;
  const void* data = nullptr;
  qdq::SubByteLayout layout = qdq::SubByteLayout::kOneCodePerByte;

  qdq::TensorView view() const { return {type, shape, data, layout}; }
};

qdq::ElementType checked_type(int64_t code, const char* role) {
  std::optional<qdq::ElementType> type = qdq::element_type_from_code(code);
  if (!type) throw QdqError(std::string("input '") + role + "' has unknown element type code " + std::to_string(code));
  return *type;
}

uint64_t element_count(const Shape& shape, const char* role) {
  uint64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(count, static_cast<uint64_t>(d), &count)) {
      throw QdqError(std::string("input '") + role + "' has an invalid shape");
    }
  }
  return count;
}

// `layout`: numpy's one code per byte, or qdq's packed layout (the benchmarks' kernel timings).
InputTensor make_input(int64_t code, Shape shape, const Bytes& bytes, const char* role,
                       qdq::SubByteLayout layout = qdq::SubByteLayout::kOneCodePerByte) {
  InputTensor tensor;
  tensor.type = checked_type(code, role);
  tensor.shape = std::move(shape);
  tensor.data = bytes.data();
  tensor.layout = layout;
  const qdq::ElementTypeInfo& row = qdq::info(tensor.type);
  const uint64_t stored = qdq::storage_bytes(tensor.type, element_count(tensor.shape, role), layout);
  if (bytes.size() != stored) {
    throw QdqError(std::string("input '") + role + "' has " + std::to_string(bytes.size()) + " bytes but its shape and " +
                   std::string(row.name) + " need " + std::to_string(stored));
  }
  return tensor;
}

using MutableBytes = nb::ndarray<uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
// The caller's output array, as (type code, its bytes); None for a new array.
using OptionalOut = std::optional<std::tuple<int64_t, MutableBytes>>;
using Output = std::tuple<nb::object, int64_t>;

// Executes a plan (qdq::Plan or qdq::QuantizeDequantizePlan) into `storage`, in numpy's layout,
// with the GIL released; a failure becomes QdqError.
template <class PlanT>
void execute_into(const PlanT& plan, uint8_t* storage) {
  qdq::Status status;
  {
    nb::gil_scoped_release release;
    status = qdq::execute(plan, {plan.output_type, plan.shape, storage, qdq::SubByteLayout::kOneCodePerByte});
  }
  if (!status.ok()) throw QdqError(status.message());
}

// Executes the plan into `out` (checked against the plan) or a new array, and returns (its bytes
// in numpy's layout, output type code).
Output run(const qdq::Result<qdq::Plan>& plan, const OptionalOut& out) {
  if (!plan.ok()) throw QdqError(plan.status().message());
  const qdq::Plan& p = plan.value();
  const qdq::SubByteLayout layout = qdq::SubByteLayout::kOneCodePerByte;
  const uint64_t bytes = qdq::storage_bytes(p.output_type, p.element_count, layout);
  uint8_t* storage;
  nb::object result;
  if (out) {
    const auto& [code, buffer] = *out;
    if (code != static_cast<int64_t>(p.output_type)) {
      const auto given = qdq::element_type_from_code(code);
      throw QdqError(p.operator_name + ": out has dtype " +
                     (given ? std::string(qdq::name(*given)) : "code " + std::to_string(code)) +
                     " but the operator produces " + std::string(qdq::name(p.output_type)));
    }
    if (buffer.size() != bytes) {
      throw QdqError(p.operator_name + ": out holds " + std::to_string(buffer.size()) + " bytes but the output needs " +
                     std::to_string(bytes));
    }
    storage = buffer.data();
    result = nb::none();  // the Python layer returns the caller's array itself
  } else {
    result = new_bytes(bytes, &storage);
  }
  execute_into(p, storage);
  return {result, static_cast<int64_t>(p.output_type)};
}

// The optional zero point arrives as None or (code, shape, bytes).
using OptionalTensor = std::optional<std::tuple<int64_t, Shape, Bytes>>;

struct Inputs {
  InputTensor x, scale, zero_point;
  bool has_zero_point = false;
  qdq::TensorView zero_point_view;
  const qdq::TensorView* zero_point_or_null() {
    if (!has_zero_point) return nullptr;
    zero_point_view = zero_point.view();
    return &zero_point_view;
  }
};

Inputs make_inputs(int64_t x_code, Shape x_shape, const Bytes& x, int64_t scale_code, Shape scale_shape,
                   const Bytes& scale, const OptionalTensor& zero_point, const char* scale_role, const char* zp_role) {
  Inputs in;
  in.x = make_input(x_code, std::move(x_shape), x, "x");
  in.scale = make_input(scale_code, std::move(scale_shape), scale, scale_role);
  if (zero_point) {
    in.has_zero_point = true;
    in.zero_point = make_input(std::get<0>(*zero_point), std::get<1>(*zero_point), std::get<2>(*zero_point), zp_role);
  }
  return in;
}

// Best wall-clock seconds of `repeat` executions of a plan (the first one warms caches and pages
// and is not counted), timed in C++ so that no Python overhead is included.
double time_executions(const qdq::Plan& plan, void* out, int64_t repeat) {
  nb::gil_scoped_release release;
  double best = 1e30;
  for (int64_t r = -1; r < std::max<int64_t>(repeat, 1); ++r) {
    const auto start = std::chrono::steady_clock::now();
    const qdq::Status status = qdq::execute(plan, {plan.output_type, plan.shape, out});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!status.ok()) {
      nb::gil_scoped_acquire acquire;
      throw QdqError(status.message());
    }
    if (r >= 0) best = std::min(best, seconds);
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// The numpy fast door. The Python functions first offer their arguments here. When every tensor
// is a plain numpy array (exactly np.ndarray, C-contiguous, aligned, native byte order, of a dtype
// qdq implements), every attribute a Python int and `out` (if given) a plain writeable array of
// the output's dtype and shape sharing no memory with an input, the operator runs from here: no
// Python-level conversion, and the output array is made by numpy's C API around qdq's storage.
// Anything else returns None and the Python layer takes its general path, which converts, checks
// and names every refusal; so both paths plan and execute through the same C++ calls, and an
// error raised by the planner reads the same from either.

// The dtype objects of the element types, registered once by the Python layer at import (ml_dtypes'
// types have no fixed type number, so dtypes are matched by identity, numpy's own singletons).
struct DtypeRow {
  PyArray_Descr* descr;
  qdq::ElementType type;
};
std::vector<DtypeRow>& dtype_rows() {
  static auto* rows = new std::vector<DtypeRow>();  // never destroyed, as the dtypes are not
  return *rows;
}

std::optional<qdq::ElementType> registered_type(PyArray_Descr* descr) {
  for (const DtypeRow& row : dtype_rows()) {
    if (row.descr == descr) return row.type;
  }
  return std::nullopt;
}

PyArray_Descr* registered_descr(qdq::ElementType type) {
  for (const DtypeRow& row : dtype_rows()) {
    if (row.type == type) return row.descr;
  }
  return nullptr;
}

// A plain array (see above) with its storage's byte range, or false for the general path.
struct PlainArray {
  PyArrayObject* array = nullptr;
  qdq::ElementType type = qdq::ElementType::kUndefined;
  const uint8_t* begin = nullptr;
  const uint8_t* end = nullptr;
};

// `holder` keeps alive the 0-d array a numpy scalar (np.float32(0.1), ml_dtypes.bfloat16(2)) becomes.
bool plain_array(nb::handle object, PlainArray* plain, nb::object* holder) {
  if (PyArray_IsScalar(object.ptr(), Generic)) {
    PyObject* array = PyArray_FromScalar(object.ptr(), nullptr);
    if (array == nullptr) {
      PyErr_Clear();
      return false;
    }
    *holder = nb::steal(array);
    object = *holder;
  }
  if (!PyArray_CheckExact(object.ptr())) return false;
  auto* array = reinterpret_cast<PyArrayObject*>(object.ptr());
  if (!PyArray_ISCARRAY_RO(array)) return false;  // C-contiguous and aligned
  const std::optional<qdq::ElementType> type = registered_type(PyArray_DESCR(array));
  if (!type) return false;  // byte-swapped, float64, object, ... : the general path refuses them by name
  plain->array = array;
  plain->type = *type;
  plain->begin = static_cast<const uint8_t*>(PyArray_DATA(array));
  plain->end = plain->begin + PyArray_NBYTES(array);
  return true;
}

InputTensor plain_input(const PlainArray& plain) {
  InputTensor tensor;
  tensor.type = plain.type;
  tensor.shape.assign(PyArray_DIMS(plain.array), PyArray_DIMS(plain.array) + PyArray_NDIM(plain.array));
  tensor.data = plain.begin;
  tensor.layout = qdq::SubByteLayout::kOneCodePerByte;
  return tensor;
}

// An attribute that is exactly a Python int in the int64 range.
bool plain_int(nb::handle object, int64_t* value) {
  if (!PyLong_CheckExact(object.ptr())) return false;
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(object.ptr(), &overflow);
  if (overflow != 0 || (v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return false;
  }
  *value = v;
  return true;
}

// A type attribute (output_dtype, precision, quantized_dtype) as its TensorProto code: a Python int,
// a numpy dtype of a qdq type, or a numpy / ml_dtypes scalar type (np.int8, ml_dtypes.int4).
// Anything else (strings, instances, other types) is left to the general path.
bool plain_type_code(nb::handle object, int64_t* code) {
  if (plain_int(object, code)) return true;
  PyObject* o = object.ptr();
  std::optional<qdq::ElementType> type;
  if (PyArray_DescrCheck(o)) {
    type = registered_type(reinterpret_cast<PyArray_Descr*>(o));
  } else if (PyType_Check(o) && PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(o), &PyGenericArrType_Type)) {
    PyArray_Descr* descr = PyArray_DescrFromTypeObject(o);
    if (descr == nullptr) {
      PyErr_Clear();
      return false;
    }
    type = registered_type(descr);
    Py_DECREF(descr);
  }
  if (!type) return false;
  *code = static_cast<int64_t>(*type);
  return true;
}

// A new 0-d array of a registered type holding `bytes` (native order); null if it cannot be made.
nb::object scalar_array(qdq::ElementType type, const void* bytes, size_t size) {
  PyArray_Descr* descr = registered_descr(type);
  if (descr == nullptr) return nb::object();
  Py_INCREF(descr);  // PyArray_NewFromDescr steals it
  PyObject* array = PyArray_NewFromDescr(&PyArray_Type, descr, 0, nullptr, nullptr, nullptr, 0, nullptr);
  if (array == nullptr) {
    PyErr_Clear();
    return nb::object();
  }
  std::memcpy(PyArray_DATA(reinterpret_cast<PyArrayObject*>(array)), bytes, size);
  return nb::steal(array);
}

// A Python float operand as the general path takes it: float32, and a finite value beyond float32's
// range is declined here (the general path refuses it by name).
bool python_float_operand(nb::handle object, PlainArray* plain, nb::object* holder) {
  if (!PyFloat_CheckExact(object.ptr())) return false;
  const double value = PyFloat_AS_DOUBLE(object.ptr());
  const float narrowed = static_cast<float>(value);  // defined for every double (IEEE conversion)
  if (std::isinf(narrowed) && std::isfinite(value)) return false;
  *holder = scalar_array(qdq::ElementType::kFloat32, &narrowed, sizeof narrowed);
  return holder->is_valid() && plain_array(*holder, plain, holder);
}

// A Python int operand (a zero point) as a 0-d array of `type`, for the 8-, 16- and 32-bit integer
// types when the value is in range; anything else (out of range, sub-byte or float targets) is
// declined and the general path converts or refuses it.
bool python_int_operand(nb::handle object, qdq::ElementType type, PlainArray* plain, nb::object* holder) {
  if (!PyLong_CheckExact(object.ptr())) return false;  // bool is not exactly int
  const qdq::ElementTypeInfo& row = qdq::info(type);
  if (row.kind != qdq::ValueKind::kInteger || (row.bits != 8 && row.bits != 16 && row.bits != 32)) return false;
  int64_t value = 0;
  if (!plain_int(object, &value) || value < static_cast<int64_t>(row.lowest) || value > static_cast<int64_t>(row.max)) {
    return false;
  }
  uint8_t bytes[4];
  const uint32_t bits = static_cast<uint32_t>(value);  // two's complement; the low row.bits/8 bytes are the value
  std::memcpy(bytes, &bits, sizeof bits);                // little-endian hosts only (as the whole library)
  *holder = scalar_array(type, bytes, row.bits / 8);
  return holder->is_valid() && plain_array(*holder, plain, holder);
}

bool overlaps(const PlainArray& a, const PlainArray& b) { return a.begin < b.end && b.begin < a.end; }

// The operands of one call: x, the scale, the optional zero point and the optional out.
struct PlainOperands {
  PlainArray x, scale, zero_point, out;
  nb::object scalars[3];  // 0-d arrays made from numpy scalars, alive for the call
  bool has_zero_point = false, has_out = false;
  InputTensor x_tensor, scale_tensor, zero_point_tensor;
  qdq::TensorView zero_point_view;

  // `int_zero_point_type`: the type a Python int zero point takes (the general path's rule for the
  // operator); kUndefined: x's type.
  bool take(nb::handle x_object, nb::handle scale_object, nb::handle zero_point_object, nb::handle out_object,
            qdq::ElementType int_zero_point_type) {
    if (!plain_array(x_object, &x, &scalars[0])) return false;
    if (!plain_array(scale_object, &scale, &scalars[1]) && !python_float_operand(scale_object, &scale, &scalars[1])) {
      return false;
    }
    has_zero_point = !zero_point_object.is_none();
    if (int_zero_point_type == qdq::ElementType::kUndefined) int_zero_point_type = x.type;
    if (has_zero_point && !plain_array(zero_point_object, &zero_point, &scalars[2]) &&
        !python_int_operand(zero_point_object, int_zero_point_type, &zero_point, &scalars[2])) {
      return false;
    }
    has_out = !out_object.is_none();
    if (has_out) {
      nb::object not_taken;  // out must be an array: a scalar out is refused by the general path
      if (!PyArray_CheckExact(out_object.ptr()) || !plain_array(out_object, &out, &not_taken) ||
          !PyArray_ISWRITEABLE(out.array)) {
        return false;
      }
      if (overlaps(out, x) || overlaps(out, scale) || (has_zero_point && overlaps(out, zero_point))) return false;
    }
    x_tensor = plain_input(x);
    scale_tensor = plain_input(scale);
    if (has_zero_point) {
      zero_point_tensor = plain_input(zero_point);
      zero_point_view = zero_point_tensor.view();
    }
    return true;
  }
  const qdq::TensorView* zero_point_or_null() const { return has_zero_point ? &zero_point_view : nullptr; }
};

// A plain, writeable `out` of `type` and `shape` holding `bytes`, sharing no memory with x: its
// storage, or false for the general path (which names what is wrong with it).
bool plain_out(nb::handle out, qdq::ElementType type, const Shape& shape, uint64_t bytes, const PlainArray& x,
               uint8_t** storage) {
  PlainArray o;
  nb::object not_taken;  // out must be an array: a scalar out is refused by the general path
  if (!PyArray_CheckExact(out.ptr()) || !plain_array(out, &o, &not_taken) || !PyArray_ISWRITEABLE(o.array) ||
      o.type != type || static_cast<uint64_t>(PyArray_NBYTES(o.array)) != bytes ||
      PyArray_NDIM(o.array) != static_cast<int>(shape.size()) ||
      !std::equal(PyArray_DIMS(o.array), PyArray_DIMS(o.array) + PyArray_NDIM(o.array), shape.begin()) || overlaps(o, x)) {
    return false;
  }
  *storage = static_cast<uint8_t*>(PyArray_DATA(o.array));
  return true;
}

// compute_qparams, or dynamic_quantize into y_storage (x's shape, one code per byte), with the
// GIL released; a failure becomes QdqError.
void run_toolkit(const InputTensor& xt, const qdq::QparamsOptions& options, bool quantize, uint8_t* y_storage,
                 const qdq::MutableTensorView& scale, const qdq::MutableTensorView* zero_point) {
  qdq::Status status;
  {
    nb::gil_scoped_release release;
    status = quantize ? qdq::dynamic_quantize(xt.view(), options,
                                              {options.quantized_type, xt.shape, y_storage, qdq::SubByteLayout::kOneCodePerByte},
                                              scale, zero_point)
                      : qdq::compute_qparams(xt.view(), options, scale, zero_point);
  }
  if (!status.ok()) throw QdqError(status.message());
}

// DynamicQuantizeLinear-11 into `storage` (uint8, x's shape) with the GIL released; a failure
// becomes QdqError.
void run_dynamic_quantize_linear(const InputTensor& xt, uint8_t* storage, float* scale, uint8_t* zero_point) {
  qdq::Status status;
  {
    nb::gil_scoped_release release;
    status = qdq::dynamic_quantize_linear(xt.view(), {qdq::ElementType::kUint8, xt.shape, storage}, scale, zero_point);
  }
  if (!status.ok()) throw QdqError(status.message());
}

// A new C-contiguous array of a registered type and `shape` around fresh storage (large sizes from
// the output cache); a null object when the type has no registered dtype.
nb::object new_array(qdq::ElementType type, const Shape& shape, uint64_t bytes, uint8_t** storage) {
  PyArray_Descr* descr = registered_descr(type);
  if (descr == nullptr) return nb::object();
  nb::capsule owner = new_storage(bytes, storage);
  std::vector<npy_intp> dims(shape.begin(), shape.end());
  Py_INCREF(descr);  // PyArray_NewFromDescr steals it
  PyObject* array = PyArray_NewFromDescr(&PyArray_Type, descr, static_cast<int>(dims.size()), dims.data(), nullptr,
                                         *storage, NPY_ARRAY_CARRAY, nullptr);
  if (array == nullptr) throw nb::python_error();
  nb::object result = nb::steal(array);
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(array), owner.release().ptr()) < 0) {
    throw nb::python_error();  // the base reference was consumed; result releases the array
  }
  return result;
}

// Executes a plan into the caller's plain `out` or a new array of the output dtype and x's shape.
// None when `out` does not fit the plan: the general path then names what is wrong with it.
// PlanT: qdq::Plan or qdq::QuantizeDequantizePlan (fused fake-quant, run without its mask).
template <class PlanT>
nb::object run_plain(const qdq::Result<PlanT>& plan, const PlainOperands& operands) {
  if (!plan.ok()) throw QdqError(plan.status().message());
  const PlanT& p = plan.value();
  const uint64_t bytes = qdq::storage_bytes(p.output_type, p.element_count, qdq::SubByteLayout::kOneCodePerByte);
  uint8_t* storage = nullptr;
  nb::object result;
  if (operands.has_out) {
    PyArrayObject* out = operands.out.array;
    const int rank = PyArray_NDIM(out);
    if (operands.out.type != p.output_type || static_cast<uint64_t>(PyArray_NBYTES(out)) != bytes ||
        rank != static_cast<int>(operands.x_tensor.shape.size()) ||
        !std::equal(PyArray_DIMS(out), PyArray_DIMS(out) + rank, operands.x_tensor.shape.begin())) {
      return nb::none();
    }
    storage = static_cast<uint8_t*>(PyArray_DATA(out));
    result = nb::borrow(reinterpret_cast<PyObject*>(out));
  } else {
    result = new_array(p.output_type, operands.x_tensor.shape, bytes, &storage);
    if (!result.is_valid()) return nb::none();
  }
  execute_into(p, storage);
  return result;
}

// One door call: the operands taken (else None, for the general path), planned by
// plan(x, scale, zero point or null) and run.
template <class Planner>
nb::object run_door(nb::handle x, nb::handle scale, nb::handle zero_point, nb::handle out,
                    qdq::ElementType int_zero_point_type, const Planner& plan) {
  PlainOperands o;
  if (!o.take(x, scale, zero_point, out, int_zero_point_type)) return nb::none();
  return run_plain(plan(o.x_tensor.view(), o.scale_tensor.view(), o.zero_point_or_null()), o);
}

// Quark's Extended operators: (x, scale, zero point, axis, out), a Python int zero point taking
// `int_zero_point_type` (kUndefined: x's type).
template <class Planner>
void register_extended_door(nb::module_& m, const char* name, Planner plan, qdq::ElementType int_zero_point_type) {
  m.def(
      name,
      [plan, int_zero_point_type](nb::handle x, nb::handle scale, nb::handle zero_point, nb::handle axis,
                                  nb::handle out) -> nb::object {
        int64_t a = 0;
        if (!plain_int(axis, &a)) return nb::none();
        return run_door(x, scale, zero_point, out, int_zero_point_type,
                        [&](const qdq::TensorView& xv, const qdq::TensorView& sv, const qdq::TensorView* zv) {
                          return plan(xv, sv, zv, a);
                        });
      },
      nb::arg("x").none(), nb::arg("scale").none(), nb::arg("zero_point").none(), nb::arg("axis").none(),
      nb::arg("out").none());
}

// QuantizeLinear's Python int zero point takes output_dtype's type when that is a type, else uint8.
qdq::ElementType int_zero_point_type_of_quantize(int64_t output_dtype) {
  const std::optional<qdq::ElementType> type = qdq::element_type_from_code(output_dtype);
  return type ? *type : qdq::ElementType::kUint8;
}

void register_numpy_door(nb::module_& m) {
  if (_import_array() < 0) throw nb::python_error();
  m.def("_register_dtypes", [](const std::vector<std::tuple<nb::object, int64_t>>& rows) {
    for (const auto& [dtype, code] : rows) {
      PyArray_Descr* descr = nullptr;
      if (!PyArray_DescrCheck(dtype.ptr())) throw QdqError("_register_dtypes: not a dtype");
      descr = reinterpret_cast<PyArray_Descr*>(dtype.ptr());
      Py_INCREF(descr);  // kept for the life of the process
      dtype_rows().push_back({descr, checked_type(code, "dtype")});
    }
  });
  // Every argument may be None or any object (.none()): the door itself decides what it takes.
  using View = const qdq::TensorView&;
  using ZeroPoint = const qdq::TensorView*;
  m.def(
      "_plain_quantize_linear",
      [](nb::handle x, nb::handle scale, nb::handle zero_point, nb::handle axis, nb::handle block_size,
         nb::handle saturate, nb::handle output_dtype, nb::handle precision, nb::handle opset,
         nb::handle out) -> nb::object {
        qdq::QuantizeLinearAttributes a;
        if (!plain_int(axis, &a.axis) || !plain_int(block_size, &a.block_size) || !plain_int(saturate, &a.saturate) ||
            !plain_type_code(output_dtype, &a.output_dtype) || !plain_type_code(precision, &a.precision) ||
            !plain_int(opset, &a.opset)) {
          return nb::none();
        }
        return run_door(x, scale, zero_point, out, int_zero_point_type_of_quantize(a.output_dtype),
                        [&](View xv, View sv, ZeroPoint zv) { return qdq::plan_quantize_linear(xv, sv, zv, a); });
      },
      nb::arg("x").none(), nb::arg("scale").none(), nb::arg("zero_point").none(), nb::arg("axis").none(),
      nb::arg("block_size").none(), nb::arg("saturate").none(), nb::arg("output_dtype").none(),
      nb::arg("precision").none(), nb::arg("opset").none(), nb::arg("out").none());
  m.def(
      "_plain_dequantize_linear",
      [](nb::handle x, nb::handle scale, nb::handle zero_point, nb::handle axis, nb::handle block_size,
         nb::handle output_dtype, nb::handle opset, nb::handle out) -> nb::object {
        qdq::DequantizeLinearAttributes a;
        if (!plain_int(axis, &a.axis) || !plain_int(block_size, &a.block_size) ||
            !plain_type_code(output_dtype, &a.output_dtype) || !plain_int(opset, &a.opset)) {
          return nb::none();
        }
        return run_door(x, scale, zero_point, out, qdq::ElementType::kUndefined,
                        [&](View xv, View sv, ZeroPoint zv) { return qdq::plan_dequantize_linear(xv, sv, zv, a); });
      },
      nb::arg("x").none(), nb::arg("scale").none(), nb::arg("zero_point").none(), nb::arg("axis").none(),
      nb::arg("block_size").none(), nb::arg("output_dtype").none(), nb::arg("opset").none(), nb::arg("out").none());
  m.def(
      "_plain_elementwise_quantize_linear",
      [](nb::handle x, nb::handle scale, nb::handle zero_point, nb::handle out) -> nb::object {
        return run_door(x, scale, zero_point, out, qdq::ElementType::kUint8, [](View xv, View sv, ZeroPoint zv) {
          return qdq::plan_elementwise_quantize_linear(xv, sv, zv);
        });
      },
      nb::arg("x").none(), nb::arg("scale").none(), nb::arg("zero_point").none(), nb::arg("out").none());
  m.def(
      "_plain_elementwise_dequantize_linear",
      [](nb::handle x, nb::handle scale, nb::handle zero_point, nb::handle output_dtype, nb::handle out) -> nb::object {
        int64_t code = 0;
        if (!plain_type_code(output_dtype, &code)) return nb::none();
        return run_door(x, scale, zero_point, out, qdq::ElementType::kUndefined, [&](View xv, View sv, ZeroPoint zv) {
          const qdq::ElementType output_type = code != 0 ? checked_type(code, "output_dtype") : qdq::ElementType::kUndefined;
          return qdq::plan_elementwise_dequantize_linear(xv, sv, zv, output_type);
        });
      },
      nb::arg("x").none(), nb::arg("scale").none(), nb::arg("zero_point").none(), nb::arg("output_dtype").none(),
      nb::arg("out").none());
  // Fused fake-quant without the mask (qdq.quantize_dequantize with return_mask=False).
  m.def(
      "_plain_quantize_dequantize",
      [](nb::handle x, nb::handle scale, nb::handle zero_point, nb::handle axis, nb::handle block_size,
         nb::handle saturate, nb::handle quantized_dtype, nb::handle precision, nb::handle output_dtype, nb::handle opset,
         nb::handle out) -> nb::object {
        qdq::QuantizeDequantizeAttributes a;
        if (!plain_int(axis, &a.axis) || !plain_int(block_size, &a.block_size) || !plain_int(saturate, &a.saturate) ||
            !plain_type_code(quantized_dtype, &a.quantized_dtype) || !plain_type_code(precision, &a.precision) ||
            !plain_type_code(output_dtype, &a.output_dtype) || !plain_int(opset, &a.opset)) {
          return nb::none();
        }
        return run_door(x, scale, zero_point, out, int_zero_point_type_of_quantize(a.quantized_dtype),
                        [&](View xv, View sv, ZeroPoint zv) { return qdq::plan_quantize_dequantize_linear(xv, sv, zv, a); });
      },
      nb::arg("x").none(), nb::arg("scale").none(), nb::arg("zero_point").none(), nb::arg("axis").none(),
      nb::arg("block_size").none(), nb::arg("saturate").none(), nb::arg("quantized_dtype").none(),
      nb::arg("precision").none(), nb::arg("output_dtype").none(), nb::arg("opset").none(), nb::arg("out").none());
  // The toolkit (compute_qparams, and dynamic_quantize when `quantize`): (y or None, scale, zero
  // point or None) as arrays, or None for the general path. method is the code the Python layer
  // looked up; x must be a plain float32/float16/bfloat16 array (other types are refused by name
  // there); axis None is per-tensor (a block size with it is refused there).
  m.def(
      "_plain_toolkit",
      [](nb::handle x, nb::handle dtype, int64_t method, nb::handle axis, nb::handle block_size, nb::handle scale_dtype,
         bool quantize, nb::handle out) -> nb::object {
        PlainArray xa;
        nb::object x_holder;
        if (!plain_array(x, &xa, &x_holder) || (xa.type != qdq::ElementType::kFloat32 &&
                                                xa.type != qdq::ElementType::kFloat16 &&
                                                xa.type != qdq::ElementType::kBfloat16)) {
          return nb::none();
        }
        int64_t quantized_code = 0, scale_code = 0, axis_value = 1, block = 0;
        if (!plain_type_code(dtype, &quantized_code) || !plain_type_code(scale_dtype, &scale_code) ||
            !plain_int(block_size, &block) || method < 0 || method > static_cast<int64_t>(qdq::ScaleMethod::kMxRceil)) {
          return nb::none();
        }
        qdq::QparamsOptions options;
        if (axis.is_none()) {
          if (block != 0) return nb::none();
          options.granularity = qdq::Granularity::kPerTensor;
        } else {
          if (!plain_int(axis, &axis_value)) return nb::none();
          options.granularity = block != 0 ? qdq::Granularity::kBlocked : qdq::Granularity::kPerAxis;
        }
        const std::optional<qdq::ElementType> quantized = qdq::element_type_from_code(quantized_code);
        const std::optional<qdq::ElementType> scale_type = qdq::element_type_from_code(scale_code);
        if (!quantized || !scale_type) return nb::none();
        options.quantized_type = *quantized;
        options.scale_type = *scale_type;
        options.method = static_cast<qdq::ScaleMethod>(method);
        options.axis = axis_value;
        options.block_size = block;
        const InputTensor xt = plain_input(xa);
        const qdq::Result<Shape> shape = qdq::qparams_shape(xt.shape, options);
        if (!shape.ok()) throw QdqError(shape.status().message());
        const qdq::SubByteLayout layout = qdq::SubByteLayout::kOneCodePerByte;
        uint64_t count = 1;
        for (int64_t d : xt.shape) count *= static_cast<uint64_t>(d);
        nb::object y = nb::none();
        uint8_t* y_storage = nullptr;
        if (quantize) {
          const uint64_t bytes = qdq::storage_bytes(options.quantized_type, count, layout);
          if (!out.is_none()) {
            if (!plain_out(out, options.quantized_type, xt.shape, bytes, xa, &y_storage)) return nb::none();
            y = nb::borrow(out);
          } else {
            y = new_array(options.quantized_type, xt.shape, bytes, &y_storage);
            if (!y.is_valid()) return nb::none();
          }
        }
        uint64_t groups = 1;
        for (int64_t d : shape.value()) groups *= static_cast<uint64_t>(d);
        uint8_t* scale_storage = nullptr;
        const nb::object scale =
            new_array(options.scale_type, shape.value(), qdq::storage_bytes(options.scale_type, groups, layout), &scale_storage);
        if (!scale.is_valid()) return nb::none();
        const bool with_zero_point = qdq::info(options.quantized_type).is_integer();
        nb::object zero_point = nb::none();
        uint8_t* zero_point_storage = nullptr;
        if (with_zero_point) {
          zero_point = new_array(options.quantized_type, shape.value(),
                                 qdq::storage_bytes(options.quantized_type, groups, layout), &zero_point_storage);
          if (!zero_point.is_valid()) return nb::none();
        }
        const qdq::MutableTensorView scale_view{options.scale_type, shape.value(), scale_storage, layout};
        const qdq::MutableTensorView zero_point_view{options.quantized_type, shape.value(), zero_point_storage, layout};
        run_toolkit(xt, options, quantize, y_storage, scale_view, with_zero_point ? &zero_point_view : nullptr);
        return nb::make_tuple(y, scale, zero_point);
      },
      nb::arg("x").none(), nb::arg("dtype").none(), nb::arg("method"), nb::arg("axis").none(),
      nb::arg("block_size").none(), nb::arg("scale_dtype").none(), nb::arg("quantize"), nb::arg("out").none());
  // DynamicQuantizeLinear-11: (y, 0-d float32 scale, 0-d uint8 zero point), or None for the general
  // path. x may be any plain array (the C++ check names a type other than float32 either way).
  m.def(
      "_plain_dynamic_quantize_linear",
      [](nb::handle x, nb::handle out) -> nb::object {
        PlainArray xa;
        nb::object x_holder;
        if (!plain_array(x, &xa, &x_holder)) return nb::none();
        const InputTensor xt = plain_input(xa);
        uint64_t count = 1;
        for (int64_t d : xt.shape) count *= static_cast<uint64_t>(d);
        uint8_t* storage = nullptr;
        nb::object y;
        if (!out.is_none()) {
          if (!plain_out(out, qdq::ElementType::kUint8, xt.shape, count, xa, &storage)) return nb::none();
          y = nb::borrow(out);
        } else {
          y = new_array(qdq::ElementType::kUint8, xt.shape, count, &storage);
          if (!y.is_valid()) return nb::none();
        }
        float scale = 0.0f;
        uint8_t zero_point = 0;
        run_dynamic_quantize_linear(xt, storage, &scale, &zero_point);
        const nb::object scale_array = scalar_array(qdq::ElementType::kFloat32, &scale, sizeof scale);
        const nb::object zero_point_array = scalar_array(qdq::ElementType::kUint8, &zero_point, sizeof zero_point);
        if (!scale_array.is_valid() || !zero_point_array.is_valid()) throw QdqError("DynamicQuantizeLinear-11: no result arrays");
        return nb::make_tuple(y, scale_array, zero_point_array);
      },
      nb::arg("x").none(), nb::arg("out").none());
  register_extended_door(m, "_plain_extended_quantize_linear", &qdq::plan_extended_quantize_linear,
                         qdq::ElementType::kUint8);
  register_extended_door(m, "_plain_extended_dequantize_linear", &qdq::plan_extended_dequantize_linear,
                         qdq::ElementType::kUndefined);
  register_extended_door(m, "_plain_extended_quantize_dequantize", &qdq::plan_extended_quantize_dequantize_linear,
                         qdq::ElementType::kUint8);
}

}  // namespace

NB_MODULE(_qdq, m) {
  m.doc() = "qdq core bindings (use the qdq package, not this module)";
  nb::exception<QdqError>(m, "QdqError", PyExc_ValueError);
  register_fake_quant(m);  // qdq.quantize_dequantize (fake_quant.cpp)
  register_numpy_door(m);  // qdq's functions on plain numpy arrays

  m.def(
      "quantize_linear",
      [](int64_t x_code, Shape x_shape, const Bytes& x, int64_t s_code, Shape s_shape, const Bytes& s,
         const OptionalTensor& zp, int64_t axis, int64_t block_size, int64_t saturate, int64_t output_dtype,
         int64_t precision, int64_t opset, const OptionalOut& out) {
        Inputs in = make_inputs(x_code, std::move(x_shape), x, s_code, std::move(s_shape), s, zp, "y_scale", "y_zero_point");
        qdq::QuantizeLinearAttributes a{axis, block_size, saturate, output_dtype, precision, opset};
        return run(qdq::plan_quantize_linear(in.x.view(), in.scale.view(), in.zero_point_or_null(), a), out);
      },
      nb::arg("x_code"), nb::arg("x_shape"), nb::arg("x"), nb::arg("scale_code"), nb::arg("scale_shape"),
      nb::arg("scale"), nb::arg("zero_point").none(), nb::arg("axis"), nb::arg("block_size"), nb::arg("saturate"),
      nb::arg("output_dtype"), nb::arg("precision"), nb::arg("opset"), nb::arg("out").none());

  m.def(
      "dequantize_linear",
      [](int64_t x_code, Shape x_shape, const Bytes& x, int64_t s_code, Shape s_shape, const Bytes& s,
         const OptionalTensor& zp, int64_t axis, int64_t block_size, int64_t output_dtype, int64_t opset, const OptionalOut& out) {
        Inputs in = make_inputs(x_code, std::move(x_shape), x, s_code, std::move(s_shape), s, zp, "x_scale", "x_zero_point");
        qdq::DequantizeLinearAttributes a{axis, block_size, output_dtype, opset};
        return run(qdq::plan_dequantize_linear(in.x.view(), in.scale.view(), in.zero_point_or_null(), a), out);
      },
      nb::arg("x_code"), nb::arg("x_shape"), nb::arg("x"), nb::arg("scale_code"), nb::arg("scale_shape"),
      nb::arg("scale"), nb::arg("zero_point").none(), nb::arg("axis"), nb::arg("block_size"), nb::arg("output_dtype"),
      nb::arg("opset"), nb::arg("out").none());

  m.def(
      "extended_quantize_linear",
      [](int64_t x_code, Shape x_shape, const Bytes& x, int64_t s_code, Shape s_shape, const Bytes& s,
         const OptionalTensor& zp, int64_t axis, const OptionalOut& out) {
        Inputs in = make_inputs(x_code, std::move(x_shape), x, s_code, std::move(s_shape), s, zp, "y_scale", "y_zero_point");
        return run(qdq::plan_extended_quantize_linear(in.x.view(), in.scale.view(), in.zero_point_or_null(), axis), out);
      },
      nb::arg("x_code"), nb::arg("x_shape"), nb::arg("x"), nb::arg("scale_code"), nb::arg("scale_shape"),
      nb::arg("scale"), nb::arg("zero_point").none(), nb::arg("axis"), nb::arg("out").none());

  m.def(
      "extended_dequantize_linear",
      [](int64_t x_code, Shape x_shape, const Bytes& x, int64_t s_code, Shape s_shape, const Bytes& s,
         const OptionalTensor& zp, int64_t axis, const OptionalOut& out) {
        Inputs in = make_inputs(x_code, std::move(x_shape), x, s_code, std::move(s_shape), s, zp, "x_scale", "x_zero_point");
        return run(qdq::plan_extended_dequantize_linear(in.x.view(), in.scale.view(), in.zero_point_or_null(), axis), out);
      },
      nb::arg("x_code"), nb::arg("x_shape"), nb::arg("x"), nb::arg("scale_code"), nb::arg("scale_shape"),
      nb::arg("scale"), nb::arg("zero_point").none(), nb::arg("axis"), nb::arg("out").none());

  m.def(
      "elementwise_quantize_linear",
      [](int64_t x_code, Shape x_shape, const Bytes& x, int64_t s_code, Shape s_shape, const Bytes& s,
         const OptionalTensor& zp, const OptionalOut& out) {
        Inputs in = make_inputs(x_code, std::move(x_shape), x, s_code, std::move(s_shape), s, zp, "scale", "zero_point");
        return run(qdq::plan_elementwise_quantize_linear(in.x.view(), in.scale.view(), in.zero_point_or_null()), out);
      },
      nb::arg("x_code"), nb::arg("x_shape"), nb::arg("x"), nb::arg("scale_code"), nb::arg("scale_shape"),
      nb::arg("scale"), nb::arg("zero_point").none(), nb::arg("out").none());

  m.def(
      "elementwise_dequantize_linear",
      [](int64_t x_code, Shape x_shape, const Bytes& x, int64_t s_code, Shape s_shape, const Bytes& s,
         const OptionalTensor& zp, int64_t output_dtype, const OptionalOut& out) {
        Inputs in = make_inputs(x_code, std::move(x_shape), x, s_code, std::move(s_shape), s, zp, "scale", "zero_point");
        const qdq::ElementType output_type =
            output_dtype != 0 ? checked_type(output_dtype, "output_dtype") : qdq::ElementType::kUndefined;
        return run(qdq::plan_elementwise_dequantize_linear(in.x.view(), in.scale.view(), in.zero_point_or_null(), output_type),
                   out);
      },
      nb::arg("x_code"), nb::arg("x_shape"), nb::arg("x"), nb::arg("scale_code"), nb::arg("scale_shape"),
      nb::arg("scale"), nb::arg("zero_point").none(), nb::arg("output_dtype"), nb::arg("out").none());

  // The toolkit (qdq/toolkit.hpp). Results come back as numpy bytes in numpy's layout, with the
  // scale's shape: (y or None, scale bytes, zero-point bytes or None, scale shape).
  m.def(
      "compute_qparams",
      [](int64_t x_code, Shape x_shape, const Bytes& x, int64_t quantized_code, int64_t scale_code, int64_t method,
         int64_t granularity, int64_t axis, int64_t block_size, bool with_zero_point, bool quantize, const OptionalOut& out) {
        const InputTensor xt = make_input(x_code, std::move(x_shape), x, "x");
        if (method < 0 || method > static_cast<int64_t>(qdq::ScaleMethod::kMxRceil)) throw QdqError("unknown method");
        if (granularity < 0 || granularity > static_cast<int64_t>(qdq::Granularity::kBlocked)) {
          throw QdqError("unknown granularity");
        }
        qdq::QparamsOptions options;
        options.quantized_type = checked_type(quantized_code, "dtype");
        options.scale_type = checked_type(scale_code, "scale_dtype");
        options.method = static_cast<qdq::ScaleMethod>(method);
        options.granularity = static_cast<qdq::Granularity>(granularity);
        options.axis = axis;
        options.block_size = block_size;
        const qdq::Result<Shape> shape = qdq::qparams_shape(xt.shape, options);
        if (!shape.ok()) throw QdqError(shape.status().message());
        const uint64_t groups = element_count(shape.value(), "scale");
        const qdq::SubByteLayout layout = qdq::SubByteLayout::kOneCodePerByte;
        uint8_t* scale_storage;
        nb::object scale = new_bytes(qdq::storage_bytes(options.scale_type, groups, layout), &scale_storage);
        uint8_t* zero_point_storage = nullptr;
        nb::object zero_point = nb::none();
        if (with_zero_point) {
          zero_point = new_bytes(qdq::storage_bytes(options.quantized_type, groups, layout), &zero_point_storage);
        }
        const qdq::MutableTensorView scale_view{options.scale_type, shape.value(), scale_storage, layout};
        const qdq::MutableTensorView zero_point_view{options.quantized_type, shape.value(), zero_point_storage, layout};
        nb::object y = nb::none();
        uint8_t* y_storage = nullptr;
        if (quantize) {
          const uint64_t bytes = qdq::storage_bytes(options.quantized_type, element_count(xt.shape, "x"), layout);
          if (out) {
            const auto& [code, buffer] = *out;
            if (code != quantized_code) throw QdqError("dynamic_quantize: out has a dtype other than dtype");
            if (buffer.size() != bytes) {
              throw QdqError("dynamic_quantize: out holds " + std::to_string(buffer.size()) + " bytes but the output needs " +
                             std::to_string(bytes));
            }
            y_storage = buffer.data();
          } else {
            y = new_bytes(bytes, &y_storage);
          }
        }
        run_toolkit(xt, options, quantize, y_storage, scale_view, with_zero_point ? &zero_point_view : nullptr);
        return std::make_tuple(y, scale, zero_point, shape.value());
      },
      nb::arg("x_code"), nb::arg("x_shape"), nb::arg("x"), nb::arg("quantized_code"), nb::arg("scale_code"),
      nb::arg("method"), nb::arg("granularity"), nb::arg("axis"), nb::arg("block_size"), nb::arg("with_zero_point"),
      nb::arg("quantize"), nb::arg("out").none());

  m.def(
      "dynamic_quantize_linear",
      [](int64_t x_code, Shape x_shape, const Bytes& x, const OptionalOut& out) {
        const InputTensor xt = make_input(x_code, std::move(x_shape), x, "x");
        const uint64_t bytes = element_count(xt.shape, "x");
        uint8_t* storage;
        nb::object y = nb::none();
        if (out) {
          const auto& [code, buffer] = *out;
          if (code != static_cast<int64_t>(qdq::ElementType::kUint8) || buffer.size() != bytes) {
            throw QdqError("DynamicQuantizeLinear-11: out must be a uint8 array of x's shape");
          }
          storage = buffer.data();
        } else {
          y = new_bytes(bytes, &storage);
        }
        float scale = 0.0f;
        uint8_t zero_point = 0;
        run_dynamic_quantize_linear(xt, storage, &scale, &zero_point);
        return std::make_tuple(y, scale, zero_point);
      },
      nb::arg("x_code"), nb::arg("x_shape"), nb::arg("x"), nb::arg("out").none());

  // Benchmark entry points (bench/compare.py): tensors in qdq's dense layout, output written into
  // a caller-owned byte buffer, so that only the kernels are timed.
  m.def("_bench_quantize_linear", [](int64_t x_code, Shape x_shape, const Bytes& x, int64_t s_code, Shape s_shape,
                                     const Bytes& s, int64_t axis, int64_t block_size, int64_t output_dtype,
                                     MutableBytes out, int64_t repeat) {
    InputTensor xt = make_input(x_code, std::move(x_shape), x, "x", qdq::SubByteLayout::kPacked);
    InputTensor st = make_input(s_code, std::move(s_shape), s, "y_scale", qdq::SubByteLayout::kPacked);
    qdq::QuantizeLinearAttributes a;
    a.axis = axis;
    a.block_size = block_size;
    a.output_dtype = output_dtype;
    qdq::Result<qdq::Plan> plan = qdq::plan_quantize_linear(xt.view(), st.view(), nullptr, a);
    if (!plan.ok()) throw QdqError(plan.status().message());
    if (out.size() < qdq::storage_bytes(plan->output_type, plan->element_count)) throw QdqError("out is too small");
    return time_executions(plan.value(), out.data(), repeat);
  });
  m.def("_bench_dequantize_linear", [](int64_t x_code, Shape x_shape, const Bytes& x, int64_t s_code, Shape s_shape,
                                       const Bytes& s, int64_t axis, int64_t block_size, MutableBytes out,
                                       int64_t repeat) {
    InputTensor xt = make_input(x_code, std::move(x_shape), x, "x", qdq::SubByteLayout::kPacked);
    InputTensor st = make_input(s_code, std::move(s_shape), s, "x_scale", qdq::SubByteLayout::kPacked);
    qdq::DequantizeLinearAttributes a;
    a.axis = axis;
    a.block_size = block_size;
    qdq::Result<qdq::Plan> plan = qdq::plan_dequantize_linear(xt.view(), st.view(), nullptr, a);
    if (!plan.ok()) throw QdqError(plan.status().message());
    if (out.size() < qdq::storage_bytes(plan->output_type, plan->element_count)) throw QdqError("out is too small");
    return time_executions(plan.value(), out.data(), repeat);
  });
  // memcpy split over qdq's default thread pool: the bandwidth baseline of the benchmarks.
  m.def("_parallel_copy", [](MutableBytes destination, const Bytes& source, int64_t repeat) {
    // Best seconds of `repeat` copies, split over qdq's pool: the benchmarks' bandwidth baseline.
    if (destination.size() < source.size()) throw QdqError("destination is too small");
    nb::gil_scoped_release release;
    double best = 1e30;
    for (int64_t r = 0; r < std::max<int64_t>(repeat, 1); ++r) {
      const auto start = std::chrono::steady_clock::now();
      qdq::parallel_copy(destination.data(), source.data(), source.size());
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return best;
  });
  m.def("_cached_output_sizes", &cached_output_sizes);
  m.def("_set_num_threads", &qdq::set_num_threads);
  m.def("_num_threads", &qdq::num_threads);
  m.def("_simd_target", &qdq::active_simd_target);
  register_directml(m);  // DirectML operator descriptions (python/src/directml.cpp)
  m.attr("version") = qdq_version();  // the compiled library's, which qdq.__version__ reports

  // The element-type table, for the Python layer's dtype mapping: (code, name, bits).
  register_quark_ops(m);

  m.def("element_types", [] {
    std::vector<std::tuple<int64_t, std::string, int>> rows;
    for (const qdq::ElementTypeInfo& row : qdq::all_element_types()) {
      rows.emplace_back(static_cast<int64_t>(row.type), std::string(row.name), row.bits);
    }
    return rows;
  });
}
