// Front doors of the fused fake-quant: the quantize operator's front door, then the dequantize
// operator's over a tensor of the codes it produces (same scale, zero point, axis and block), so
// that every rule and message is the two operators' own.
#include <string>

#include "plan/checks.h"
#include "qdq/fake_quant.hpp"

namespace qdq {
namespace {

using E = ElementType;

// The dequantize front door sees the codes as x's shape of the quantized type, one code per byte
// for sub-byte types (the layout of the per-thread buffers). Its data pointer is only a stand-in
// for the checks (non-null when there are elements); execution supplies each chunk's buffer.
TensorView codes_view(const TensorView& x, ElementType code_type) {
  return {code_type, x.shape, x.data, SubByteLayout::kOneCodePerByte};
}

QuantizeDequantizePlan combine(Plan quantize, Plan dequantize) {
  QuantizeDequantizePlan plan;
  plan.operator_name = "QuantizeDequantizeLinear (" + quantize.operator_name + ", " + dequantize.operator_name + ")";
  plan.output_type = dequantize.output_type;
  plan.shape = quantize.shape;
  plan.element_count = quantize.element_count;
  dequantize.x.data = nullptr;  // never read: every chunk names its buffer
  plan.quantize = std::move(quantize);
  plan.dequantize = std::move(dequantize);
  return plan;
}

}  // namespace

Result<QuantizeDequantizePlan> plan_quantize_dequantize_linear(const TensorView& x, const TensorView& scale,
                                                               const TensorView* zero_point,
                                                               const QuantizeDequantizeAttributes& attributes) {
  QuantizeLinearAttributes q;
  q.axis = attributes.axis;
  q.block_size = attributes.block_size;
  q.saturate = attributes.saturate;
  q.output_dtype = attributes.quantized_dtype;
  q.precision = attributes.precision;
  q.opset = attributes.opset;
  Result<Plan> quantize = plan_quantize_linear(x, scale, zero_point, q);
  if (!quantize.ok()) return quantize.status();

  // y's type: as asked, else x's (int32 x: float32).
  ElementType y_type = x.type == E::kFloat16 || x.type == E::kBfloat16 ? x.type : E::kFloat32;
  if (attributes.output_dtype != 0) {
    std::optional<ElementType> requested = element_type_from_code(attributes.output_dtype);
    if (!requested) {
      return Status::invalid_argument("QuantizeDequantizeLinear: attribute output_dtype=" +
                                      std::to_string(attributes.output_dtype) +
                                      " is not a TensorProto element type code qdq knows");
    }
    y_type = *requested;
  }
  DequantizeLinearAttributes dq;
  dq.axis = attributes.axis;
  dq.block_size = attributes.block_size;
  dq.opset = attributes.opset;
  constexpr int64_t kFirstOpsetWithOutputDtype = 23;
  if (attributes.opset >= kFirstOpsetWithOutputDtype) dq.output_dtype = static_cast<int64_t>(y_type);
  Result<Plan> dequantize =
      plan_dequantize_linear(codes_view(x, quantize->output_type), scale, zero_point, dq);
  if (!dequantize.ok()) return dequantize.status();
  if (dequantize->output_type != y_type) {
    return Status::invalid_argument(
        "QuantizeDequantizeLinear: y of type " + std::string(name(y_type)) + " needs opset 23 or later; " +
        dequantize->operator_name + " gives the scale's type " + std::string(name(dequantize->output_type)) +
        " (leave output_dtype unset or equal to it)");
  }
  return combine(std::move(quantize.value()), std::move(dequantize.value()));
}

Result<QuantizeDequantizePlan> plan_extended_quantize_dequantize_linear(const TensorView& x, const TensorView& scale,
                                                                        const TensorView* zero_point, int64_t axis) {
  Result<Plan> quantize = plan_extended_quantize_linear(x, scale, zero_point, axis);
  if (!quantize.ok()) return quantize.status();
  Result<Plan> dequantize =
      plan_extended_dequantize_linear(codes_view(x, quantize->output_type), scale, zero_point, axis);
  if (!dequantize.ok()) return dequantize.status();
  return combine(std::move(quantize.value()), std::move(dequantize.value()));
}

Status quantize_dequantize_linear(const TensorView& x, const TensorView& scale, const TensorView* zero_point,
                                  const QuantizeDequantizeAttributes& attributes, const MutableTensorView& y,
                                  const MutableTensorView* mask) {
  Result<QuantizeDequantizePlan> plan = plan_quantize_dequantize_linear(x, scale, zero_point, attributes);
  if (!plan.ok()) return plan.status();
  return execute(plan.value(), y, mask);
}

}  // namespace qdq
