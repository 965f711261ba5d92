// qdq._qdq's DirectML door: numpy arrays taken with their own strides as DML_BUFFER_TENSOR_DESCs
// (np.broadcast_to's 0-strides are DirectML's broadcast), planned at one DML_FEATURE_LEVEL and
// executed into `out`, which may itself be a strided view.
#include "directml.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "qdq/directml.hpp"

namespace nb = nanobind;

namespace {

using ReadOnlyArray = nb::ndarray<nb::ro, nb::device::cpu>;
using WritableArray = nb::ndarray<nb::device::cpu>;

// An array's sizes and element strides, kept alive alongside the description that views them.
struct Description {
  std::vector<int64_t> sizes, strides;
  qdq::DmlTensorDesc desc;

  template <class Array>
  Description(const Array& array, int64_t code, const void* data) {
    for (size_t d = 0; d < array.ndim(); ++d) {
      sizes.push_back(static_cast<int64_t>(array.shape(d)));
      strides.push_back(array.stride(d));
    }
    desc.type = static_cast<qdq::ElementType>(code);
    desc.sizes = sizes;
    desc.strides = strides;
    desc.data = data;
  }
};

[[noreturn]] void raise_qdq_error(const nb::object& error_type, const std::string& message) {
  PyErr_SetString(error_type.ptr(), message.c_str());
  throw nb::python_error();
}

}  // namespace

void register_directml(nb::module_& m) {
  const nb::object error_type = m.attr("QdqError");

  m.def("_dml_feature_level", [error_type](const std::string& text) {
    const std::optional<qdq::DmlFeatureLevel> level = qdq::parse_dml_feature_level(text);
    if (!level) {
      raise_qdq_error(error_type, "feature_level '" + text +
                                      "' is not a DML_FEATURE_LEVEL (write it as '6_2', '6.2' or "
                                      "'DML_FEATURE_LEVEL_6_2'; they run from 1_0 to 6_4)");
    }
    return static_cast<int64_t>(*level);
  });

  m.def(
      "directml",
      [error_type](bool quantize, const ReadOnlyArray& input, int64_t input_code, const ReadOnlyArray& scale,
                   int64_t scale_code, const std::optional<std::tuple<ReadOnlyArray, int64_t>>& zero_point,
                   const WritableArray& output, int64_t output_code, int64_t feature_level) {
        const Description in(input, input_code, input.data());
        const Description sc(scale, scale_code, scale.data());
        std::optional<Description> zp;
        if (zero_point) zp.emplace(std::get<0>(*zero_point), std::get<1>(*zero_point), std::get<0>(*zero_point).data());
        const Description out(output, output_code, nullptr);
        const auto level = static_cast<qdq::DmlFeatureLevel>(feature_level);
        const qdq::DmlTensorDesc* zp_desc = zp ? &zp->desc : nullptr;
        const qdq::Result<qdq::Plan> plan =
            quantize ? qdq::plan_directml_quantize_linear(in.desc, sc.desc, zp_desc, out.desc, level)
                     : qdq::plan_directml_dequantize_linear(in.desc, sc.desc, zp_desc, out.desc, level);
        if (!plan.ok()) raise_qdq_error(error_type, plan.status().message());
        qdq::Status status;
        {
          nb::gil_scoped_release release;
          status = qdq::execute(plan.value(), qdq::MutableTensorView{out.desc.type, out.sizes, output.data()});
        }
        if (!status.ok()) raise_qdq_error(error_type, status.message());
      },
      nb::arg("quantize"), nb::arg("input"), nb::arg("input_code"), nb::arg("scale"), nb::arg("scale_code"),
      nb::arg("zero_point").none(), nb::arg("output"), nb::arg("output_code"), nb::arg("feature_level"));
}
