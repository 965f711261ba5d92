// The C ABI: converts C structs to views, runs the C++ API, and turns every outcome (including an
// exception from the standard library, e.g. bad_alloc) into a status code plus a thread-local
// message. Nothing propagates across extern "C".
#include "qdq/qdq.h"

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "qdq/directml.hpp"
#include "qdq/fake_quant.hpp"
#include "qdq/qdq.hpp"
#include "qdq/toolkit.hpp"
#include "qdq/quark_ops.hpp"

namespace {

thread_local std::string g_last_error;

qdq_status_code report(const qdq::Status& status) {
  if (status.ok()) {
    g_last_error.clear();
    return QDQ_OK;
  }
  g_last_error = status.message();
  return status.code() == qdq::StatusCode::kInvalidArgument ? QDQ_INVALID_ARGUMENT : QDQ_INTERNAL;
}

qdq::Status null_argument(const char* function, const char* argument) {
  return qdq::Status::invalid_argument(std::string(function) + ": argument '" + argument + "' is NULL");
}

// The largest rank any tensor may declare: the planners' own cap (plan/checks.cpp). Checked here,
// before a dim is read, for every tensor alike (x, scale, zero point and y), so that a huge rank
// can never make anything, a message included, walk past the caller's shape array.
constexpr int32_t kMaxRank = 64;

// Views over C structs. A negative or too large rank, or a null shape with rank > 0, is reported,
// not followed.
qdq::Status to_view(const char* function, const char* role, const qdq_tensor* tensor, qdq::TensorView* view) {
  if (tensor == nullptr) return null_argument(function, role);
  if (tensor->rank < 0 || (tensor->rank > 0 && tensor->shape == nullptr)) {
    return qdq::Status::invalid_argument(std::string(function) + ": tensor '" + role + "' has rank " +
                                         std::to_string(tensor->rank) + " and shape pointer " +
                                         (tensor->shape ? "set" : "NULL") + "; rank must be >= 0 with a shape of that length");
  }
  if (tensor->rank > kMaxRank) {
    return qdq::Status::invalid_argument(std::string(function) + ": tensor '" + role + "' has rank " +
                                         std::to_string(tensor->rank) + "; qdq accepts at most " +
                                         std::to_string(kMaxRank) + " dims");
  }
  view->type = static_cast<qdq::ElementType>(tensor->type);
  view->shape = {tensor->shape, static_cast<size_t>(tensor->rank)};
  view->data = tensor->data;
  return {};
}

qdq::Status to_view(const char* function, const char* role, const qdq_mutable_tensor* tensor,
                    qdq::MutableTensorView* view) {
  if (tensor == nullptr) return null_argument(function, role);
  qdq_tensor readonly{tensor->type, tensor->rank, tensor->shape, tensor->data};
  qdq::TensorView converted;
  if (qdq::Status s = to_view(function, role, &readonly, &converted); !s.ok()) return s;
  view->type = converted.type;
  view->shape = converted.shape;
  view->data = tensor->data;
  return {};
}

struct Inputs {
  qdq::TensorView x, scale, zero_point;
  bool has_zero_point = false;
  const qdq::TensorView* zero_point_or_null() const { return has_zero_point ? &zero_point : nullptr; }
};

// The roles are the C parameters' names ("y_scale", "x_zero_point", ...), so that a message names
// the argument the caller actually passed.
struct Roles {
  const char* scale;
  const char* zero_point;
};
constexpr Roles kQuantizeRoles{"y_scale", "y_zero_point"};
constexpr Roles kDequantizeRoles{"x_scale", "x_zero_point"};
constexpr Roles kElementwiseRoles{"scale", "zero_point"};

qdq::Status to_inputs(const char* function, const Roles& roles, const qdq_tensor* x,
                      const qdq_tensor* scale, const qdq_tensor* zero_point, Inputs* inputs) {
  if (qdq::Status s = to_view(function, "x", x, &inputs->x); !s.ok()) return s;
  if (qdq::Status s = to_view(function, roles.scale, scale, &inputs->scale); !s.ok()) return s;
  inputs->has_zero_point = zero_point != nullptr;
  if (zero_point != nullptr) return to_view(function, roles.zero_point, zero_point, &inputs->zero_point);
  return {};
}

qdq::QuantizeLinearAttributes to_attributes(const qdq_quantize_attributes* a) {
  qdq::QuantizeLinearAttributes out;
  if (a != nullptr) {
    out.axis = a->axis;
    out.block_size = a->block_size;
    out.saturate = a->saturate;
    out.output_dtype = a->output_dtype;
    out.precision = a->precision;
    out.opset = a->opset;
  }
  return out;
}

qdq::DequantizeLinearAttributes to_attributes(const qdq_dequantize_attributes* a) {
  qdq::DequantizeLinearAttributes out;
  if (a != nullptr) {
    out.axis = a->axis;
    out.block_size = a->block_size;
    out.output_dtype = a->output_dtype;
    out.opset = a->opset;
  }
  return out;
}

// Runs `body` (returning qdq::Status) with every exception turned into QDQ_INTERNAL.
template <class Body>
qdq_status_code guarded(const char* function, Body&& body) {
  try {
    return report(body());
  } catch (const std::exception& e) {
    return report(qdq::Status::internal(std::string(function) + ": " + e.what()));
  } catch (...) {
    return report(qdq::Status::internal(std::string(function) + ": unknown exception"));
  }
}

// An output's rank before its dims: they are read (by execute's shape check and its message) only
// when the output declares x's rank, so a shape array shorter than the rank it claims is never
// walked past.
qdq::Status check_output_rank(const std::string& op, const char* function, const char* role,
                              const qdq::MutableTensorView& out, const std::vector<int64_t>& shape) {
  if (out.shape.size() == shape.size()) return {};
  std::string x_shape = "[";
  for (size_t i = 0; i < shape.size(); ++i) x_shape += (i ? ", " : "") + std::to_string(shape[i]);
  return qdq::Status::invalid_argument(op + ": output buffer '" + role + "' has rank " + std::to_string(out.shape.size()) +
                                       " but the output has x's shape " + x_shape + "] (" + function + ")");
}

// The toolkit's outputs: a rank other than the one the output must have is refused from the rank
// alone, before anything (a message that formats the shape included) reads the caller's dims, of
// which there are only `rank`.
qdq::Status check_toolkit_rank(const char* function, const char* role, const qdq::MutableTensorView& out,
                               size_t rank, const char* whose) {
  if (out.shape.size() == rank) return {};
  return qdq::Status::invalid_argument(std::string(function) + ": output '" + role + "' has rank " +
                                       std::to_string(out.shape.size()) + " but must have rank " + std::to_string(rank) +
                                       " (" + whose + ")");
}

// Plans with `planner`, then executes into y.
template <class Planner>
qdq_status_code plan_and_run(const char* function, const Roles& roles, const qdq_tensor* x,
                             const qdq_tensor* scale, const qdq_tensor* zero_point,
                             const qdq_mutable_tensor* y, Planner&& planner) {
  return guarded(function, [&]() -> qdq::Status {
    Inputs in;
    if (qdq::Status s = to_inputs(function, roles, x, scale, zero_point, &in); !s.ok()) return s;
    qdq::MutableTensorView out;
    if (qdq::Status s = to_view(function, "y", y, &out); !s.ok()) return s;
    qdq::Result<qdq::Plan> plan = planner(in, out);
    if (!plan.ok()) return plan.status();
    if (qdq::Status s = check_output_rank(plan->operator_name, function, "y", out, plan->shape); !s.ok()) return s;
    return qdq::execute(plan.value(), out);
  });
}

template <class Planner>
qdq_status_code output_type_of(const char* function, const Roles& roles, const qdq_tensor* x,
                               const qdq_tensor* scale, const qdq_tensor* zero_point,
                               int32_t* output_type, Planner&& planner) {
  return guarded(function, [&]() -> qdq::Status {
    if (output_type == nullptr) return null_argument(function, "output_type");
    Inputs in;
    if (qdq::Status s = to_inputs(function, roles, x, scale, zero_point, &in); !s.ok()) return s;
    qdq::Result<qdq::Plan> plan = planner(in);
    if (!plan.ok()) return plan.status();
    *output_type = static_cast<int32_t>(plan->output_type);
    return {};
  });
}

// The toolkit's options and tensors, checked.
qdq::Status to_qparams_options(const char* function, const qdq_qparams_options* options, qdq::QparamsOptions* out) {
  if (options == nullptr) return null_argument(function, "options");
  if (options->method < 0 || options->method > QDQ_SCALE_MX_RCEIL) {
    return qdq::Status::invalid_argument(std::string(function) + ": options->method is " + std::to_string(options->method) +
                                         "; it must be a qdq_scale_method (0.." + std::to_string(QDQ_SCALE_MX_RCEIL) + ")");
  }
  if (options->granularity < 0 || options->granularity > QDQ_BLOCKED) {
    return qdq::Status::invalid_argument(std::string(function) + ": options->granularity is " +
                                         std::to_string(options->granularity) +
                                         "; it must be QDQ_PER_TENSOR, QDQ_PER_AXIS or QDQ_BLOCKED (0..2)");
  }
  out->quantized_type = static_cast<qdq::ElementType>(options->quantized_type);
  out->scale_type = static_cast<qdq::ElementType>(options->scale_type);
  out->method = static_cast<qdq::ScaleMethod>(options->method);
  out->granularity = static_cast<qdq::Granularity>(options->granularity);
  out->axis = options->axis;
  out->block_size = options->block_size;
  return {};
}

struct Toolkit {
  qdq::TensorView x;
  qdq::QparamsOptions options;
  qdq::MutableTensorView y, scale, zero_point;
  bool has_zero_point = false;
  const qdq::MutableTensorView* zero_point_or_null() const { return has_zero_point ? &zero_point : nullptr; }
};

qdq::Status to_toolkit(const char* function, const qdq_tensor* x, const qdq_qparams_options* options,
                       const qdq_mutable_tensor* y, const qdq_mutable_tensor* scale,
                       const qdq_mutable_tensor* zero_point, Toolkit* t) {
  if (qdq::Status s = to_view(function, "x", x, &t->x); !s.ok()) return s;
  if (qdq::Status s = to_qparams_options(function, options, &t->options); !s.ok()) return s;
  if (y != nullptr) {
    if (qdq::Status s = to_view(function, "y", y, &t->y); !s.ok()) return s;
  }
  if (qdq::Status s = to_view(function, "scale", scale, &t->scale); !s.ok()) return s;
  t->has_zero_point = zero_point != nullptr;
  if (zero_point != nullptr) {
    if (qdq::Status s = to_view(function, "zero_point", zero_point, &t->zero_point); !s.ok()) return s;
  }
  if (y != nullptr) {
    if (qdq::Status s = check_toolkit_rank(function, "y", t->y, t->x.shape.size(), "x's"); !s.ok()) return s;
  }
  const qdq::Result<std::vector<int64_t>> groups = qdq::qparams_shape(t->x.shape, t->options);
  if (!groups.ok()) return groups.status();
  const char* whose = "the scales' shape for x and the options";
  if (qdq::Status s = check_toolkit_rank(function, "scale", t->scale, groups->size(), whose); !s.ok()) return s;
  if (zero_point != nullptr) return check_toolkit_rank(function, "zero_point", t->zero_point, groups->size(), whose);
  return {};
}

// A DirectML description over the C struct. The count is checked before sizes or strides are
// read, so no array is walked past the length the caller declares.
qdq::Status to_dml_desc(const char* function, const char* role, const qdq_dml_tensor_desc* desc,
                        qdq::DmlTensorDesc* out) {
  if (desc == nullptr) return null_argument(function, role);
  if (desc->dimension_count < 0 || desc->dimension_count > kMaxRank ||
      (desc->dimension_count > 0 && desc->sizes == nullptr)) {
    return qdq::Status::invalid_argument(std::string(function) + ": " + role + " has DimensionCount " +
                                         std::to_string(desc->dimension_count) + " and sizes pointer " +
                                         (desc->sizes ? "set" : "NULL") + "; it must be 0 to " +
                                         std::to_string(kMaxRank) + " with sizes of that length");
  }
  const auto count = static_cast<size_t>(desc->dimension_count);
  out->type = static_cast<qdq::ElementType>(desc->type);
  out->sizes = {desc->sizes, count};
  out->strides = desc->strides == nullptr ? std::span<const int64_t>{} : std::span<const int64_t>{desc->strides, count};
  out->total_tensor_size_in_bytes = desc->total_tensor_size_in_bytes;
  out->data = desc->data;
  return {};
}

template <class Planner>
qdq_status_code directml_run(const char* function, const qdq_dml_tensor_desc* input, const qdq_dml_tensor_desc* scale,
                             const qdq_dml_tensor_desc* zero_point, const qdq_dml_tensor_desc* output,
                             int32_t feature_level, void* output_data, Planner&& planner) {
  return guarded(function, [&]() -> qdq::Status {
    qdq::DmlTensorDesc in, sc, zp, out;
    if (qdq::Status s = to_dml_desc(function, "InputTensor", input, &in); !s.ok()) return s;
    if (qdq::Status s = to_dml_desc(function, "ScaleTensor", scale, &sc); !s.ok()) return s;
    if (zero_point != nullptr) {
      if (qdq::Status s = to_dml_desc(function, "ZeroPointTensor", zero_point, &zp); !s.ok()) return s;
    }
    if (qdq::Status s = to_dml_desc(function, "OutputTensor", output, &out); !s.ok()) return s;
    qdq::Result<qdq::Plan> plan = planner(in, sc, zero_point ? &zp : nullptr, out,
                                          static_cast<qdq::DmlFeatureLevel>(feature_level));
    if (!plan.ok()) return plan.status();
    if (output_data == nullptr && plan->element_count > 0) return null_argument(function, "output_data");
    return qdq::execute(plan.value(), qdq::MutableTensorView{out.type, out.sizes, output_data});
  });
}

qdq::QuantizeDequantizeAttributes to_attributes(const qdq_quantize_dequantize_attributes* a) {
  qdq::QuantizeDequantizeAttributes out;
  if (a != nullptr) {
    out.axis = a->axis;
    out.block_size = a->block_size;
    out.saturate = a->saturate;
    out.quantized_dtype = a->quantized_dtype;
    out.precision = a->precision;
    out.output_dtype = a->output_dtype;
    out.opset = a->opset;
  }
  return out;
}

// Plans the fused fake-quant with `planner`, then executes into y and the optional mask.
template <class Planner>
qdq_status_code fake_quant_and_run(const char* function, const qdq_tensor* x, const qdq_tensor* scale,
                                   const qdq_tensor* zero_point, const qdq_mutable_tensor* y,
                                   const qdq_mutable_tensor* mask, Planner&& planner) {
  return guarded(function, [&]() -> qdq::Status {
    Inputs in;
    if (qdq::Status s = to_inputs(function, kElementwiseRoles, x, scale, zero_point, &in); !s.ok()) return s;
    qdq::MutableTensorView out, mask_view;
    if (qdq::Status s = to_view(function, "y", y, &out); !s.ok()) return s;
    if (mask != nullptr) {
      if (qdq::Status s = to_view(function, "mask", mask, &mask_view); !s.ok()) return s;
    }
    qdq::Result<qdq::QuantizeDequantizePlan> plan = planner(in);
    if (!plan.ok()) return plan.status();
    if (qdq::Status s = check_output_rank(plan->operator_name, function, "y", out, plan->shape); !s.ok()) return s;
    if (mask != nullptr) {
      if (qdq::Status s = check_output_rank(plan->operator_name, function, "mask", mask_view, plan->shape); !s.ok()) {
        return s;
      }
    }
    return qdq::execute(plan.value(), out, mask != nullptr ? &mask_view : nullptr);
  });
}

}  // namespace

extern "C" {

qdq_status_code qdq_directml_quantize_linear(const qdq_dml_tensor_desc* input, const qdq_dml_tensor_desc* scale,
                                             const qdq_dml_tensor_desc* zero_point, const qdq_dml_tensor_desc* output,
                                             int32_t feature_level, void* output_data) {
  return directml_run("qdq_directml_quantize_linear", input, scale, zero_point, output, feature_level, output_data,
                      [](auto&&... args) { return qdq::plan_directml_quantize_linear(args...); });
}

qdq_status_code qdq_directml_dequantize_linear(const qdq_dml_tensor_desc* input, const qdq_dml_tensor_desc* scale,
                                               const qdq_dml_tensor_desc* zero_point,
                                               const qdq_dml_tensor_desc* output, int32_t feature_level,
                                               void* output_data) {
  return directml_run("qdq_directml_dequantize_linear", input, scale, zero_point, output, feature_level, output_data,
                      [](auto&&... args) { return qdq::plan_directml_dequantize_linear(args...); });
}

uint64_t qdq_dml_calc_buffer_tensor_size(const qdq_dml_tensor_desc* desc) {
  uint64_t bytes = 0;
  guarded("qdq_dml_calc_buffer_tensor_size", [&]() -> qdq::Status {
    qdq::DmlTensorDesc view;
    if (qdq::Status s = to_dml_desc("qdq_dml_calc_buffer_tensor_size", "desc", desc, &view); !s.ok()) return s;
    if (view.sizes.size() > 8) {
      return qdq::Status::invalid_argument("qdq_dml_calc_buffer_tensor_size: DimensionCount " +
                                           std::to_string(view.sizes.size()) + "; DirectML tensors have 1 to 8");
    }
    bytes = qdq::dml_calc_buffer_tensor_size(view.type, view.sizes, view.strides);
    if (bytes == 0) {
      return qdq::Status::invalid_argument(
          "qdq_dml_calc_buffer_tensor_size: type code " + std::to_string(desc->type) +
          " with these sizes and strides is outside DirectML's limits (a known type; sizes 1 to 2^32 - 1; strides 0 "
          "to 2^32 - 1; at most 2^32 - 1 elements)");
    }
    return {};
  });
  return bytes;
}


void qdq_quantize_attributes_init(qdq_quantize_attributes* attributes) {
  if (attributes != nullptr) *attributes = qdq_quantize_attributes{1, 0, 1, 0, 0, 25};
}

void qdq_dequantize_attributes_init(qdq_dequantize_attributes* attributes) {
  if (attributes != nullptr) *attributes = qdq_dequantize_attributes{1, 0, 0, 25};
}

const char* qdq_version(void) { return QDQ_VERSION_STRING; }

const char* qdq_last_error(void) { return g_last_error.c_str(); }

qdq_status_code qdq_quantize_linear_output_type(const qdq_tensor* x, const qdq_tensor* y_scale,
                                                const qdq_tensor* y_zero_point,
                                                const qdq_quantize_attributes* attributes,
                                                int32_t* output_type) {
  return output_type_of("qdq_quantize_linear_output_type", kQuantizeRoles, x, y_scale, y_zero_point, output_type,
                        [&](const Inputs& in) {
                          return qdq::plan_quantize_linear(in.x, in.scale, in.zero_point_or_null(),
                                                           to_attributes(attributes));
                        });
}

qdq_status_code qdq_dequantize_linear_output_type(const qdq_tensor* x, const qdq_tensor* x_scale,
                                                  const qdq_tensor* x_zero_point,
                                                  const qdq_dequantize_attributes* attributes,
                                                  int32_t* output_type) {
  return output_type_of("qdq_dequantize_linear_output_type", kDequantizeRoles, x, x_scale, x_zero_point, output_type,
                        [&](const Inputs& in) {
                          return qdq::plan_dequantize_linear(in.x, in.scale, in.zero_point_or_null(),
                                                             to_attributes(attributes));
                        });
}

qdq_status_code qdq_quantize_linear(const qdq_tensor* x, const qdq_tensor* y_scale,
                                    const qdq_tensor* y_zero_point, const qdq_quantize_attributes* attributes,
                                    const qdq_mutable_tensor* y) {
  return plan_and_run("qdq_quantize_linear", kQuantizeRoles, x, y_scale, y_zero_point, y,
                      [&](const Inputs& in, const qdq::MutableTensorView&) {
                        return qdq::plan_quantize_linear(in.x, in.scale, in.zero_point_or_null(),
                                                         to_attributes(attributes));
                      });
}

qdq_status_code qdq_dequantize_linear(const qdq_tensor* x, const qdq_tensor* x_scale,
                                      const qdq_tensor* x_zero_point,
                                      const qdq_dequantize_attributes* attributes, const qdq_mutable_tensor* y) {
  return plan_and_run("qdq_dequantize_linear", kDequantizeRoles, x, x_scale, x_zero_point, y,
                      [&](const Inputs& in, const qdq::MutableTensorView&) {
                        return qdq::plan_dequantize_linear(in.x, in.scale, in.zero_point_or_null(),
                                                           to_attributes(attributes));
                      });
}

qdq_status_code qdq_extended_quantize_linear(const qdq_tensor* x, const qdq_tensor* y_scale,
                                             const qdq_tensor* y_zero_point, int64_t axis,
                                             const qdq_mutable_tensor* y) {
  return plan_and_run("qdq_extended_quantize_linear", kQuantizeRoles, x, y_scale, y_zero_point, y,
                      [&](const Inputs& in, const qdq::MutableTensorView&) {
                        return qdq::plan_extended_quantize_linear(in.x, in.scale, in.zero_point_or_null(), axis);
                      });
}

qdq_status_code qdq_extended_dequantize_linear(const qdq_tensor* x, const qdq_tensor* x_scale,
                                               const qdq_tensor* x_zero_point, int64_t axis,
                                               const qdq_mutable_tensor* y) {
  return plan_and_run("qdq_extended_dequantize_linear", kDequantizeRoles, x, x_scale, x_zero_point, y,
                      [&](const Inputs& in, const qdq::MutableTensorView&) {
                        return qdq::plan_extended_dequantize_linear(in.x, in.scale, in.zero_point_or_null(), axis);
                      });
}

qdq_status_code qdq_elementwise_quantize_linear(const qdq_tensor* x, const qdq_tensor* scale,
                                                const qdq_tensor* zero_point, const qdq_mutable_tensor* y) {
  return plan_and_run("qdq_elementwise_quantize_linear", kElementwiseRoles, x, scale, zero_point, y,
                      [&](const Inputs& in, const qdq::MutableTensorView& out) {
                        return qdq::plan_elementwise_quantize_linear(in.x, in.scale, in.zero_point_or_null(),
                                                                     out.type);
                      });
}

qdq_status_code qdq_elementwise_dequantize_linear(const qdq_tensor* x, const qdq_tensor* scale,
                                                  const qdq_tensor* zero_point, const qdq_mutable_tensor* y) {
  return plan_and_run("qdq_elementwise_dequantize_linear", kElementwiseRoles, x, scale, zero_point, y,
                      [&](const Inputs& in, const qdq::MutableTensorView& out) {
                        return qdq::plan_elementwise_dequantize_linear(in.x, in.scale, in.zero_point_or_null(),
                                                                       out.type);
                      });
}

void qdq_qparams_options_init(qdq_qparams_options* options) {
  if (options == nullptr) return;
  const qdq::QparamsOptions defaults;
  options->quantized_type = static_cast<int32_t>(defaults.quantized_type);
  options->scale_type = static_cast<int32_t>(defaults.scale_type);
  options->method = static_cast<int32_t>(defaults.method);
  options->granularity = static_cast<int32_t>(defaults.granularity);
  options->axis = defaults.axis;
  options->block_size = defaults.block_size;
}

qdq_status_code qdq_qparams_shape(const qdq_tensor* x, const qdq_qparams_options* options, int32_t* rank,
                                  int64_t* shape) {
  constexpr const char* function = "qdq_qparams_shape";
  return guarded(function, [&]() -> qdq::Status {
    qdq::TensorView xv;
    if (qdq::Status s = to_view(function, "x", x, &xv); !s.ok()) return s;
    qdq::QparamsOptions o;
    if (qdq::Status s = to_qparams_options(function, options, &o); !s.ok()) return s;
    if (rank == nullptr) return null_argument(function, "rank");
    const qdq::Result<std::vector<int64_t>> result = qdq::qparams_shape(xv.shape, o);
    if (!result.ok()) return result.status();
    if (!result.value().empty() && shape == nullptr) return null_argument(function, "shape");
    *rank = static_cast<int32_t>(result.value().size());
    std::copy(result.value().begin(), result.value().end(), shape);
    return {};
  });
}

void qdq_quantize_dequantize_attributes_init(qdq_quantize_dequantize_attributes* attributes) {
  if (attributes != nullptr) *attributes = qdq_quantize_dequantize_attributes{1, 0, 1, 0, 0, 0, 25};
}

qdq_status_code qdq_quantize_dequantize_linear_output_type(const qdq_tensor* x, const qdq_tensor* scale,
                                                           const qdq_tensor* zero_point,
                                                           const qdq_quantize_dequantize_attributes* attributes,
                                                           int32_t* output_type) {
  const char* function = "qdq_quantize_dequantize_linear_output_type";
  return guarded(function, [&]() -> qdq::Status {
    if (output_type == nullptr) return null_argument(function, "output_type");
    Inputs in;
    if (qdq::Status s = to_inputs(function, kElementwiseRoles, x, scale, zero_point, &in); !s.ok()) return s;
    qdq::Result<qdq::QuantizeDequantizePlan> plan = qdq::plan_quantize_dequantize_linear(
        in.x, in.scale, in.zero_point_or_null(), to_attributes(attributes));
    if (!plan.ok()) return plan.status();
    *output_type = static_cast<int32_t>(plan->output_type);
    return {};
  });
}

qdq_status_code qdq_compute_qparams(const qdq_tensor* x, const qdq_qparams_options* options,
                                    const qdq_mutable_tensor* scale, const qdq_mutable_tensor* zero_point) {
  constexpr const char* function = "qdq_compute_qparams";
  return guarded(function, [&]() -> qdq::Status {
    Toolkit t;
    if (qdq::Status s = to_toolkit(function, x, options, nullptr, scale, zero_point, &t); !s.ok()) return s;
    return qdq::compute_qparams(t.x, t.options, t.scale, t.zero_point_or_null());
  });
}

qdq_status_code qdq_dynamic_quantize(const qdq_tensor* x, const qdq_qparams_options* options,
                                     const qdq_mutable_tensor* y, const qdq_mutable_tensor* scale,
                                     const qdq_mutable_tensor* zero_point) {
  constexpr const char* function = "qdq_dynamic_quantize";
  return guarded(function, [&]() -> qdq::Status {
    Toolkit t;
    if (qdq::Status s = to_toolkit(function, x, options, y, scale, zero_point, &t); !s.ok()) return s;
    return qdq::dynamic_quantize(t.x, t.options, t.y, t.scale, t.zero_point_or_null());
  });
}

qdq_status_code qdq_dynamic_quantize_linear(const qdq_tensor* x, const qdq_mutable_tensor* y, float* y_scale,
                                            uint8_t* y_zero_point) {
  constexpr const char* function = "qdq_dynamic_quantize_linear";
  return guarded(function, [&]() -> qdq::Status {
    qdq::TensorView xv;
    qdq::MutableTensorView yv;
    if (qdq::Status s = to_view(function, "x", x, &xv); !s.ok()) return s;
    if (qdq::Status s = to_view(function, "y", y, &yv); !s.ok()) return s;
    if (y_scale == nullptr) return null_argument(function, "y_scale");
    if (y_zero_point == nullptr) return null_argument(function, "y_zero_point");
    if (qdq::Status s = check_toolkit_rank(function, "y", yv, xv.shape.size(), "x's"); !s.ok()) return s;
    return qdq::dynamic_quantize_linear(xv, yv, y_scale, y_zero_point);
  });
}

void qdq_mx_attributes_init(qdq_mx_attributes* attributes) {
  if (attributes != nullptr) *attributes = qdq_mx_attributes{"int8", 1, 32, 0};
}

void qdq_bfp_attributes_init(qdq_bfp_attributes* attributes) {
  if (attributes != nullptr) *attributes = qdq_bfp_attributes{"to_bfp", 1, 16, 8, 0, 2, 1, 0, 0};
}

qdq_status_code qdq_mx_quantize_dequantize(const qdq_tensor* x, const qdq_mx_attributes* attributes,
                                           const qdq_mutable_tensor* y) {
  constexpr const char* kFunction = "qdq_mx_quantize_dequantize";
  return guarded(kFunction, [&]() -> qdq::Status {
    if (attributes == nullptr) return null_argument(kFunction, "attributes");
    if (attributes->element_dtype == nullptr) return null_argument(kFunction, "attributes->element_dtype");
    qdq::TensorView in;
    qdq::MutableTensorView out;
    if (qdq::Status s = to_view(kFunction, "x", x, &in); !s.ok()) return s;
    if (qdq::Status s = to_view(kFunction, "y", y, &out); !s.ok()) return s;
    if (qdq::Status s = check_toolkit_rank(kFunction, "y", out, in.shape.size(), "x's"); !s.ok()) return s;
    qdq::MxQuantizeDequantizeAttributes a;
    a.element_dtype = attributes->element_dtype;
    a.axis = attributes->axis;
    a.block_size = attributes->block_size;
    a.rounding_mode = attributes->rounding_mode;
    return qdq::mx_quantize_dequantize(in, a, out);
  });
}

qdq_status_code qdq_bfp_quantize_dequantize(const qdq_tensor* x, const qdq_bfp_attributes* attributes,
                                            const qdq_mutable_tensor* y) {
  constexpr const char* kFunction = "qdq_bfp_quantize_dequantize";
  return guarded(kFunction, [&]() -> qdq::Status {
    if (attributes == nullptr) return null_argument(kFunction, "attributes");
    if (attributes->bfp_method == nullptr) return null_argument(kFunction, "attributes->bfp_method");
    qdq::TensorView in;
    qdq::MutableTensorView out;
    if (qdq::Status s = to_view(kFunction, "x", x, &in); !s.ok()) return s;
    if (qdq::Status s = to_view(kFunction, "y", y, &out); !s.ok()) return s;
    if (qdq::Status s = check_toolkit_rank(kFunction, "y", out, in.shape.size(), "x's"); !s.ok()) return s;
    qdq::BfpQuantizeDequantizeAttributes a;
    a.bfp_method = attributes->bfp_method;
    a.axis = attributes->axis;
    a.bit_width = attributes->bit_width;
    a.block_size = attributes->block_size;
    a.rounding_mode = attributes->rounding_mode;
    a.sub_block_size = attributes->sub_block_size;
    a.sub_block_shift_bits = attributes->sub_block_shift_bits;
    a.convert_to_bfloat_before_bfp = attributes->convert_to_bfloat_before_bfp;
    a.use_compiler_version_cpu_kernel = attributes->use_compiler_version_cpu_kernel;
    return qdq::bfp_quantize_dequantize(in, a, out);
  });
}

qdq_status_code qdq_quantize_dequantize_linear(const qdq_tensor* x, const qdq_tensor* scale,
                                               const qdq_tensor* zero_point,
                                               const qdq_quantize_dequantize_attributes* attributes,
                                               const qdq_mutable_tensor* y, const qdq_mutable_tensor* mask) {
  return fake_quant_and_run("qdq_quantize_dequantize_linear", x, scale, zero_point, y, mask, [&](const Inputs& in) {
    return qdq::plan_quantize_dequantize_linear(in.x, in.scale, in.zero_point_or_null(), to_attributes(attributes));
  });
}

qdq_status_code qdq_extended_quantize_dequantize_linear(const qdq_tensor* x, const qdq_tensor* scale,
                                                        const qdq_tensor* zero_point, int64_t axis,
                                                        const qdq_mutable_tensor* y, const qdq_mutable_tensor* mask) {
  return fake_quant_and_run("qdq_extended_quantize_dequantize_linear", x, scale, zero_point, y, mask,
                            [&](const Inputs& in) {
                              return qdq::plan_extended_quantize_dequantize_linear(in.x, in.scale,
                                                                                   in.zero_point_or_null(), axis);
                            });
}

}  // extern "C"
