// Front door: AMD Quark com.amd.quark ExtendedQuantizeLinear / ExtendedDequantizeLinear,
// version 1, as documented. Quark's own CPU runtime (amd-quark 0.13, custom_op_qdq.cc and
// qdq/cpu/quantize_linear.h in its wheel) differs, and docs/semantics.md lists how: a missing
// axis is 0 there (1 here, as documented); the zero point is required there; +inf, NaN and
// values beyond int64 become the lowest integer there (an int64 conversion); float16 ignores
// scale and zero point there; bfloat16 does not saturate there and spells NaN 0x7FC1. Per-axis
// scales are indexed per channel in both.
#include <vector>

#include "plan/checks.h"

namespace qdq {
namespace {

using E = ElementType;

// T3: the zero point's and the quantized tensor's types.
const std::vector<ElementType> kQuarkQuantized = {E::kInt32,  E::kInt16,  E::kInt8,    E::kUint32,
                                                  E::kUint16, E::kUint8,  E::kFloat16, E::kBfloat16};
const std::vector<ElementType> kFloat32Only = {E::kFloat32};

Status check_inputs(const std::string& op, const TensorView& x, const TensorView& scale,
                    const TensorView* zero_point, const char* scale_role, const char* zp_role,
                    uint64_t* x_count) {
  uint64_t scale_count = 0, zp_count = 0;
  if (Status s = plan::check_view(op, "x", x, x_count); !s.ok()) return s;
  if (Status s = plan::check_view(op, scale_role, scale, &scale_count); !s.ok()) return s;
  if (zero_point != nullptr) {
    if (Status s = plan::check_view(op, zp_role, *zero_point, &zp_count); !s.ok()) return s;
    if (Status s = plan::check_zero_point_shape(op, scale, *zero_point, scale_role, zp_role); !s.ok()) {
      return s;
    }
  }
  return plan::check_type(op, scale_role, scale.type, kFloat32Only, "type constraint T2");
}

}  // namespace

Result<Plan> plan_extended_quantize_linear(const TensorView& x, const TensorView& y_scale,
                                           const TensorView* y_zero_point, int64_t axis) {
  const std::string op = "ExtendedQuantizeLinear-1";
  uint64_t x_count = 0;
  if (Status s = check_inputs(op, x, y_scale, y_zero_point, "y_scale", "y_zero_point", &x_count); !s.ok()) {
    return s;
  }
  if (Status s = plan::check_type(op, "x", x.type, kFloat32Only, "type constraint T1"); !s.ok()) return s;
  ElementType output_type = E::kUint8;  // documented default without a zero point (Quark's runtime requires one)
  if (y_zero_point != nullptr) {
    if (Status s = plan::check_type(op, "y_zero_point", y_zero_point->type, kQuarkQuantized,
                                    "type constraint T3");
        !s.ok()) {
      return s;
    }
    output_type = y_zero_point->type;
  }
  Plan plan;
  plan.operation = Operation::kQuantize;
  plan.operator_name = op;
  if (Status s = plan::resolve_axis_granularity(op, x.shape, x_count, y_scale, "y_scale", axis, 0,
                                                /*allow_blocked=*/false, &plan);
      !s.ok()) {
    return s;
  }
  plan::set_operands(&plan, x, x_count, y_scale, y_zero_point);
  plan.output_type = output_type;
  plan.precision = Precision::kFloat32;
  // float16 to +-65504, bfloat16 to +-max, integers to their range (+inf -> max, NaN -> lowest).
  plan.saturate = true;
  return plan;
}

Result<Plan> plan_extended_dequantize_linear(const TensorView& x, const TensorView& x_scale,
                                             const TensorView* x_zero_point, int64_t axis) {
  const std::string op = "ExtendedDequantizeLinear-1";
  uint64_t x_count = 0;
  if (Status s = check_inputs(op, x, x_scale, x_zero_point, "x_scale", "x_zero_point", &x_count); !s.ok()) {
    return s;
  }
  if (Status s = plan::check_type(op, "x", x.type, kQuarkQuantized, "type constraint T3"); !s.ok()) return s;
  if (x_zero_point != nullptr && x_zero_point->type != x.type) {
    return Status::invalid_argument(op + ": 'x_zero_point' has type " + std::string(name(x_zero_point->type)) +
                                    " but x has type " + std::string(name(x.type)) +
                                    "; both share type constraint T3 and must be equal");
  }
  Plan plan;
  plan.operation = Operation::kDequantize;
  plan.operator_name = op;
  if (Status s = plan::resolve_axis_granularity(op, x.shape, x_count, x_scale, "x_scale", axis, 0,
                                                /*allow_blocked=*/false, &plan);
      !s.ok()) {
    return s;
  }
  plan::set_operands(&plan, x, x_count, x_scale, x_zero_point);
  plan.output_type = E::kFloat32;
  return plan;
}

}  // namespace qdq
