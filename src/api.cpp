// The C++ API's plan-and-execute conveniences and name lookup (execute() is in execute/).
#include <algorithm>
#include <cctype>
#include <string>

#include "qdq/qdq.hpp"

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
