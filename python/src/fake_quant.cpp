// qdq._qdq's fused fake-quant functions (qdq.quantize_dequantize, qdq.extended_quantize_dequantize).
//
// Tensors cross as in module.cpp: (type code, shape, numpy's bytes), sub-byte zero points one code
// per byte. y (and the mask) go into new arrays or the caller's; the kernels run with the GIL
// released. A qdq Status becomes qdq.QdqError, translated here to the class module.cpp registered.
#include "fake_quant.h"

#include "output_buffers.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "qdq/fake_quant.hpp"

namespace nb = nanobind;

namespace {

struct FakeQuantError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using Bytes = nb::ndarray<const uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using MutableBytes = nb::ndarray<uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Shape = std::vector<int64_t>;
using Tensor = std::tuple<int64_t, Shape, Bytes>;
using OptionalTensor = std::optional<Tensor>;
using OptionalBuffer = std::optional<MutableBytes>;

// A view of one input in numpy's layout, its byte size checked against its shape and type.
qdq::TensorView view_of(const Tensor& tensor, const char* role) {
  const auto& [code, shape, bytes] = tensor;
  const std::optional<qdq::ElementType> type = qdq::element_type_from_code(code);
  if (!type) throw FakeQuantError(std::string("input '") + role + "' has unknown element type code " + std::to_string(code));
  uint64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(count, static_cast<uint64_t>(d), &count)) {
      throw FakeQuantError(std::string("input '") + role + "' has an invalid shape");
    }
  }
  const uint64_t stored = qdq::storage_bytes(*type, count, qdq::SubByteLayout::kOneCodePerByte);
  if (bytes.size() != stored) {
    throw FakeQuantError(std::string("input '") + role + "' has " + std::to_string(bytes.size()) +
                         " bytes but its shape and type need " + std::to_string(stored));
  }
  return {*type, shape, bytes.data(), qdq::SubByteLayout::kOneCodePerByte};
}

// Storage for an output: the caller's buffer (its size checked) or a new array (returned).
uint8_t* output_storage(const OptionalBuffer& given, uint64_t bytes, const std::string& op, const char* role,
                        nb::object* created) {
  if (given) {
    if (given->size() != bytes) {
      throw FakeQuantError(op + ": " + role + " holds " + std::to_string(given->size()) + " bytes but needs " +
                           std::to_string(bytes));
    }
    *created = nb::none();
    return given->data();
  }
  uint8_t* storage;
  *created = new_bytes(bytes, &storage);  // large outputs from the module's cache of released buffers
  return storage;
}

// Executes the plan; returns (y's new bytes or None, y's type code, the mask's new bytes or None).
std::tuple<nb::object, int64_t, nb::object> run(const qdq::Result<qdq::QuantizeDequantizePlan>& planned,
                                                int64_t y_code, const OptionalBuffer& out, bool with_mask,
                                                const OptionalBuffer& mask_out) {
  if (!planned.ok()) throw FakeQuantError(planned.status().message());
  const qdq::QuantizeDequantizePlan& plan = planned.value();
  if (out && y_code != static_cast<int64_t>(plan.output_type)) {
    const auto given = qdq::element_type_from_code(y_code);
    throw FakeQuantError(plan.operator_name + ": out has dtype " +
                         (given ? std::string(qdq::name(*given)) : "code " + std::to_string(y_code)) +
                         " but y has type " + std::string(qdq::name(plan.output_type)));
  }
  nb::object y_array, mask_array = nb::none();
  uint8_t* y = output_storage(out, qdq::storage_bytes(plan.output_type, plan.element_count), plan.operator_name,
                              "out", &y_array);
  uint8_t* mask = nullptr;
  if (with_mask) mask = output_storage(mask_out, plan.element_count, plan.operator_name, "mask_out", &mask_array);
  const qdq::MutableTensorView mask_view{qdq::ElementType::kUint8, plan.shape, mask};
  qdq::Status status;
  {
    nb::gil_scoped_release release;
    status = qdq::execute(plan, {plan.output_type, plan.shape, y}, with_mask ? &mask_view : nullptr);
  }
  if (!status.ok()) throw FakeQuantError(status.message());
  return {y_array, static_cast<int64_t>(plan.output_type), mask_array};
}

}  // namespace

void register_fake_quant(nb::module_& m) {
  // FakeQuantError becomes the module's QdqError (registered by module.cpp before this call); the
  // translator keeps its own reference to the class for the interpreter's lifetime.
  PyObject* qdq_error = m.attr("QdqError").ptr();
  Py_INCREF(qdq_error);
  nb::register_exception_translator(
      [](const std::exception_ptr& p, void* error_class) {
        try {
          std::rethrow_exception(p);
        } catch (const FakeQuantError& e) {
          PyErr_SetString(static_cast<PyObject*>(error_class), e.what());
        }
      },
      qdq_error);

  m.def(
      "quantize_dequantize",
      [](const Tensor& x, const Tensor& scale, const OptionalTensor& zero_point, int64_t axis, int64_t block_size,
         int64_t saturate, int64_t quantized_dtype, int64_t precision, int64_t output_dtype, int64_t opset,
         int64_t out_code, const OptionalBuffer& out, bool with_mask, const OptionalBuffer& mask_out) {
        const qdq::TensorView xv = view_of(x, "x"), sv = view_of(scale, "scale");
        qdq::TensorView zv;
        if (zero_point) zv = view_of(*zero_point, "zero_point");
        const qdq::QuantizeDequantizeAttributes a{axis, block_size, saturate, quantized_dtype, precision, output_dtype, opset};
        return run(qdq::plan_quantize_dequantize_linear(xv, sv, zero_point ? &zv : nullptr, a), out_code, out, with_mask,
                   mask_out);
      },
      nb::arg("x"), nb::arg("scale"), nb::arg("zero_point").none(), nb::arg("axis"), nb::arg("block_size"),
      nb::arg("saturate"), nb::arg("quantized_dtype"), nb::arg("precision"), nb::arg("output_dtype"), nb::arg("opset"),
      nb::arg("out_code"), nb::arg("out").none(), nb::arg("with_mask"), nb::arg("mask_out").none());

  m.def(
      "extended_quantize_dequantize",
      [](const Tensor& x, const Tensor& scale, const OptionalTensor& zero_point, int64_t axis, int64_t out_code,
         const OptionalBuffer& out, bool with_mask, const OptionalBuffer& mask_out) {
        const qdq::TensorView xv = view_of(x, "x"), sv = view_of(scale, "scale");
        qdq::TensorView zv;
        if (zero_point) zv = view_of(*zero_point, "zero_point");
        return run(qdq::plan_extended_quantize_dequantize_linear(xv, sv, zero_point ? &zv : nullptr, axis), out_code, out,
                   with_mask, mask_out);
      },
      nb::arg("x"), nb::arg("scale"), nb::arg("zero_point").none(), nb::arg("axis"), nb::arg("out_code"),
      nb::arg("out").none(), nb::arg("with_mask"), nb::arg("mask_out").none());
}
