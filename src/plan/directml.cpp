// Front door: DirectML DML_ELEMENT_WISE_QUANTIZE_LINEAR / DEQUANTIZE_LINEAR, the numpy-style
// convenience door (the union of the feature levels, i.e. 6.2: optional zero point, float16
// scales, 1 to 8 dimensions). DirectML itself takes scale and zero point already expanded to x's
// sizes with stride-0 broadcasting; this door takes them with x's rank and each dimension equal to
// x's or 1, which is the same thing without the caller building strides. DirectML's own
// descriptions, feature levels included, go through src/plan/directml_desc.cpp.
#include <vector>

#include "plan/checks.h"

namespace qdq {
namespace {

using E = ElementType;
constexpr int kMinRank = 1;
constexpr int kMaxRank = 8;

Status check_broadcast_shape(const std::string& op, const char* role, const TensorView& x,
                             const TensorView& operand) {
  if (operand.shape.size() != x.shape.size()) {
    return Status::invalid_argument(op + ": '" + role + "' has rank " + std::to_string(operand.shape.size()) +
                                    " (shape " + plan::shape_string(operand.shape) + ") but x has rank " +
                                    std::to_string(x.shape.size()) + "; element-wise operands have x's rank");
  }
  for (size_t d = 0; d < x.shape.size(); ++d) {
    if (operand.shape[d] != x.shape[d] && operand.shape[d] != 1) {
      return Status::invalid_argument(op + ": '" + role + "' has shape " + plan::shape_string(operand.shape) +
                                      " and x " + plan::shape_string(x.shape) + ": dimension " +
                                      std::to_string(d) + " must equal x's (" + std::to_string(x.shape[d]) +
                                      ") or be 1 (broadcast)");
    }
  }
  return {};
}

// An explicit output type must be a type code qdq knows (kUndefined means "derive it").
Status check_output_code(const std::string& op, ElementType output_type) {
  if (output_type == ElementType::kUndefined || find_element_type_info(output_type) != nullptr) return {};
  return Status::invalid_argument(op + ": output type has unknown element type code " +
                                  std::to_string(static_cast<int64_t>(output_type)) +
                                  " (not a TensorProto type qdq implements)");
}

// Row-major strides of `operand` over x's index space; 0 where the operand broadcasts.
void broadcast_strides(const TensorView& x, const TensorView& operand, int64_t* strides) {
  int64_t stride = 1;
  for (size_t d = x.shape.size(); d-- > 0;) {
    strides[d] = (operand.shape[d] == 1 && x.shape[d] != 1) ? 0 : stride;
    stride *= operand.shape[d];
  }
}

Result<Plan> plan_elementwise(const std::string& op, Operation operation, const TensorView& x,
                              const TensorView& scale, const TensorView* zero_point) {
  uint64_t x_count = 0, scale_count = 0, zp_count = 0;
  if (Status s = plan::check_view(op, "x", x, &x_count); !s.ok()) return s;
  if (Status s = plan::check_view(op, "scale", scale, &scale_count); !s.ok()) return s;
  if (zero_point != nullptr) {
    if (Status s = plan::check_view(op, "zero_point", *zero_point, &zp_count); !s.ok()) return s;
  }
  const int rank = static_cast<int>(x.shape.size());
  if (rank < kMinRank || rank > kMaxRank) {
    return Status::invalid_argument(op + ": x has rank " + std::to_string(rank) + " (shape " +
                                    plan::shape_string(x.shape) + "); element-wise operators take 1 to 8 dimensions");
  }
  if (Status s = check_broadcast_shape(op, "scale", x, scale); !s.ok()) return s;
  if (zero_point != nullptr) {
    if (Status s = check_broadcast_shape(op, "zero_point", x, *zero_point); !s.ok()) return s;
  }
  Plan plan;
  plan.operation = operation;
  plan.operator_name = op;
  plan.granularity = Granularity::kElementwise;
  plan.layout.rank = rank;
  for (int d = 0; d < rank; ++d) plan.layout.dims[d] = x.shape[static_cast<size_t>(d)];
  broadcast_strides(x, scale, plan.layout.scale_strides);
  if (zero_point != nullptr) broadcast_strides(x, *zero_point, plan.layout.zero_point_strides);
  plan::set_operands(&plan, x, x_count, scale, zero_point);
  return plan;
}

}  // namespace

Result<Plan> plan_elementwise_quantize_linear(const TensorView& x, const TensorView& scale,
                                              const TensorView* zero_point, ElementType output_type) {
  const std::string op = "ElementWiseQuantizeLinear";
  const std::vector<ElementType> x_types = {E::kFloat32, E::kFloat16, E::kInt32};
  const std::vector<ElementType> outputs = {E::kInt8, E::kUint8};
  Result<Plan> plan = plan_elementwise(op, Operation::kQuantize, x, scale, zero_point);
  if (!plan.ok()) return plan;
  if (Status s = check_output_code(op, output_type); !s.ok()) return s;
  if (Status s = plan::check_type(op, "x", x.type, x_types, "InputTensor"); !s.ok()) return s;
  // ScaleTensor: float32 for int32 input, otherwise x's own type.
  const ElementType scale_type = x.type == E::kInt32 ? E::kFloat32 : x.type;
  if (scale.type != scale_type) {
    return Status::invalid_argument(op + ": 'scale' has type " + std::string(name(scale.type)) +
                                    " but x has type " + std::string(name(x.type)) + "; ScaleTensor must be " +
                                    std::string(name(scale_type)) + " (x's type, or float32 for int32 x)");
  }
  if (zero_point != nullptr) {
    if (Status s = plan::check_type(op, "zero_point", zero_point->type, outputs, "ZeroPointTensor"); !s.ok()) {
      return s;
    }
    if (output_type != ElementType::kUndefined && output_type != zero_point->type) {
      return Status::invalid_argument(op + ": output type " + std::string(name(output_type)) +
                                      " differs from the zero point's type " +
                                      std::string(name(zero_point->type)) + "; they must be equal");
    }
    output_type = zero_point->type;
  }
  if (output_type == ElementType::kUndefined) output_type = E::kUint8;
  if (Status s = plan::check_type(op, "output type", output_type, outputs, "OutputTensor"); !s.ok()) return s;
  plan->output_type = output_type;
  plan->precision = scale.type == E::kFloat16 ? Precision::kFloat16 : Precision::kFloat32;
  plan->saturate = true;
  return plan;
}

Result<Plan> plan_elementwise_dequantize_linear(const TensorView& x, const TensorView& scale,
                                                const TensorView* zero_point, ElementType output_type) {
  const std::string op = "ElementWiseDequantizeLinear";
  const std::vector<ElementType> x_types = {E::kInt32, E::kInt16, E::kInt8, E::kUint32, E::kUint16, E::kUint8};
  const std::vector<ElementType> floats = {E::kFloat32, E::kFloat16};
  Result<Plan> plan = plan_elementwise(op, Operation::kDequantize, x, scale, zero_point);
  if (!plan.ok()) return plan;
  if (Status s = check_output_code(op, output_type); !s.ok()) return s;
  if (Status s = plan::check_type(op, "x", x.type, x_types, "InputTensor"); !s.ok()) return s;
  if (Status s = plan::check_type(op, "scale", scale.type, floats, "ScaleTensor"); !s.ok()) return s;
  if (zero_point != nullptr && zero_point->type != x.type) {
    return Status::invalid_argument(op + ": 'zero_point' has type " + std::string(name(zero_point->type)) +
                                    " but x has type " + std::string(name(x.type)) + "; they must be equal");
  }
  if (output_type == ElementType::kUndefined) output_type = scale.type;
  if (Status s = plan::check_type(op, "output type", output_type, floats, "OutputTensor"); !s.ok()) return s;
  if (output_type != scale.type) {
    return Status::invalid_argument(op + ": output type " + std::string(name(output_type)) +
                                    " differs from the scale's type " + std::string(name(scale.type)) +
                                    "; OutputTensor and ScaleTensor must have the same DataType");
  }
  plan->output_type = output_type;
  return plan;
}

}  // namespace qdq
