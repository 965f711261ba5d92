// The C++ API's execute step and the plan-and-execute conveniences.
#include <algorithm>
#include <cctype>
#include <string>

#include "plan/checks.h"
#include "qdq/qdq.hpp"
#include "reference/reference.h"

namespace qdq {

std::optional<ElementType> element_type_from_name(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "float") return ElementType::kFloat32;
  if (lower == "half") return ElementType::kFloat16;
  if (lower == "bf16") return ElementType::kBfloat16;
  for (const ElementTypeInfo& row : kElementTypes) {
    std::string onnx(row.onnx_name);
    std::transform(onnx.begin(), onnx.end(), onnx.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower == row.name || lower == onnx) return row.type;
  }
  return std::nullopt;
}

Status execute(const Plan& plan, const MutableTensorView& y, const ExecuteOptions& options) {
  const std::string& op = plan.operator_name;
  if (y.type != plan.output_type) {
    const std::string given = find_element_type_info(y.type) != nullptr
                                  ? std::string(name(y.type))
                                  : "unknown code " + std::to_string(static_cast<int64_t>(y.type));
    return Status::invalid_argument(op + ": output buffer has type " + given +
                                    " but the operator produces " + std::string(name(plan.output_type)));
  }
  if (!std::equal(y.shape.begin(), y.shape.end(), plan.shape.begin(), plan.shape.end())) {
    return Status::invalid_argument(op + ": output buffer has shape " + plan::shape_string(y.shape) +
                                    " but the output has x's shape " + plan::shape_string(plan.shape));
  }
  if (plan.element_count > 0 && y.data == nullptr) {
    return Status::invalid_argument(op + ": output buffer is null but the output has " +
                                    std::to_string(plan.element_count) + " elements");
  }
  (void)options;  // every path is the reference until the SIMD kernels land
  reference::execute(plan, y.data);
  return {};
}

Status quantize_linear(const TensorView& x, const TensorView& y_scale, const TensorView* y_zero_point,
                       const QuantizeLinearAttributes& attributes, const MutableTensorView& y) {
  Result<Plan> plan = plan_quantize_linear(x, y_scale, y_zero_point, attributes);
  if (!plan.ok()) return plan.status();
  return execute(plan.value(), y);
}

Status dequantize_linear(const TensorView& x, const TensorView& x_scale, const TensorView* x_zero_point,
                         const DequantizeLinearAttributes& attributes, const MutableTensorView& y) {
  Result<Plan> plan = plan_dequantize_linear(x, x_scale, x_zero_point, attributes);
  if (!plan.ok()) return plan.status();
  return execute(plan.value(), y);
}

}  // namespace qdq
