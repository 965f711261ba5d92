// Front door: ONNX QuantizeLinear and DequantizeLinear, versions 10, 13, 19, 21, 23, 24 and 25.
// The version table below is the schema history (onnx/defs/quantization); everything a version
// does not list is rejected with the version's name in the message.
#include <array>
#include <vector>

#include "plan/checks.h"

namespace qdq {
namespace {

using E = ElementType;
using TypeList = std::vector<ElementType>;

const TypeList kFloat32Only = {E::kFloat32};
const TypeList kFloat8 = {E::kFloat8E4M3FN, E::kFloat8E4M3FNUZ, E::kFloat8E5M2, E::kFloat8E5M2FNUZ};

TypeList join(std::initializer_list<TypeList> parts) {
  TypeList all;
  for (const TypeList& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

struct OnnxVersion {
  int since_version;
  // QuantizeLinear
  TypeList q_x;
  TypeList q_scale;           // empty: the scale shares x's type variable (T1)
  TypeList q_zero_point;      // also the output types
  // DequantizeLinear
  TypeList dq_x;              // also the zero point's types
  TypeList dq_scale;
  bool dq_output_dtype;       // DQ `output_dtype` attribute (v23+)
  // Attributes and shapes
  bool axis;                  // v13+
  bool saturate;              // Q v19+
  bool block_size;            // v21+
  bool q_output_dtype;        // Q v21+
  bool precision;             // Q v23+
  bool scale_rank_at_most_1;  // v13..v19 (v10: a single element)
};

const std::vector<OnnxVersion>& onnx_versions() {
  static const std::vector<OnnxVersion> versions = [] {
    const TypeList x19 = {E::kFloat32, E::kFloat16, E::kBfloat16, E::kInt32};
    const TypeList zp10 = {E::kUint8, E::kInt8};
    const TypeList zp19 = join({zp10, kFloat8});
    const TypeList zp21 = join({zp19, {E::kUint16, E::kInt16, E::kUint4, E::kInt4}});
    const TypeList zp23 = join({zp21, {E::kFloat4E2M1}});
    const TypeList zp25 = join({zp23, {E::kUint2, E::kInt2}});
    const TypeList scale23 = {E::kFloat32, E::kFloat16, E::kBfloat16, E::kInt32};
    const TypeList scale24 = join({scale23, {E::kFloat8E8M0}});
    const TypeList dqx10 = {E::kInt8, E::kUint8, E::kInt32};
    const TypeList dqx19 = join({dqx10, kFloat8});
    const TypeList dqx21 = join({dqx19, {E::kInt16, E::kUint16, E::kUint4, E::kInt4}});
    const TypeList dqx23 = join({dqx21, {E::kFloat4E2M1}});
    const TypeList dqx25 = join({dqx23, {E::kUint2, E::kInt2}});
    const TypeList dqscale19 = {E::kFloat32, E::kFloat16, E::kBfloat16};
    const TypeList dqscale24 = join({dqscale19, {E::kFloat8E8M0}});
    //  ver  q_x           q_scale       q_zp   dq_x   dq_scale    dq_odt axis   sat    block  q_odt  prec   rank<=1
    return std::vector<OnnxVersion>{
        {10, {E::kFloat32, E::kInt32}, kFloat32Only, zp10, dqx10, kFloat32Only, false, false, false, false, false, false, false},
        {13, {E::kFloat32, E::kInt32}, kFloat32Only, zp10, dqx10, kFloat32Only, false, true, false, false, false, false, true},
        {19, x19, {}, zp19, dqx19, dqscale19, false, true, true, false, false, false, true},
        {21, x19, {}, zp21, dqx21, dqscale19, false, true, true, true, true, false, false},
        {23, x19, scale23, zp23, dqx23, dqscale19, true, true, true, true, true, true, false},
        {24, x19, scale24, zp23, dqx23, dqscale24, true, true, true, true, true, true, false},
        {25, x19, scale24, zp25, dqx25, dqscale24, true, true, true, true, true, true, false},
    };
  }();
  return versions;
}

// The newest ai.onnx opset qdq knows. Opsets 26 and 27 did not change Q/DQ; version 28 (onnx 1.23)
// only adds float6 e2m3 / e3m2 to T3, which qdq does not implement yet: opset 28 runs version 25's
// rules, so every other input gets version 28's exact result and float6 is refused with a message
// (docs/semantics.md, "Shapes and granularity").
constexpr int64_t kNewestOpset = 28;

Status resolve_version(const char* op_name, int64_t opset, const OnnxVersion** version) {
  const auto& versions = onnx_versions();
  if (opset < versions.front().since_version || opset > kNewestOpset) {
    return Status::invalid_argument(std::string(op_name) + ": opset " + std::to_string(opset) +
                                    " is outside the supported range [10, " +
                                    std::to_string(kNewestOpset) + "]");
  }
  for (const OnnxVersion& candidate : versions) {
    if (candidate.since_version <= opset) *version = &candidate;
  }
  return {};
}

// An attribute the version does not define must keep its schema default.
Status check_undefined_attribute(const std::string& op, bool defined, const char* attribute,
                                 int64_t value, int64_t default_value) {
  if (defined || value == default_value) return {};
  return Status::invalid_argument(op + ": attribute " + attribute + "=" + std::to_string(value) +
                                  " is not defined by this version (leave it at its default " +
                                  std::to_string(default_value) + ")");
}

// Checks shared by Q and DQ once types are settled: scale rank rules of old versions, zero-point
// shape, granularity.
Status resolve_shapes(const std::string& op, const OnnxVersion& version, const TensorView& x,
                      uint64_t x_count, const TensorView& scale, uint64_t scale_count,
                      const TensorView* zero_point, const char* scale_role, const char* zp_role,
                      int64_t axis, int64_t block_size, Plan* plan) {
  if (version.since_version == 10 && !(plan::is_scalar_like(scale.shape) && scale_count == 1)) {
    return Status::invalid_argument(op + ": '" + scale_role + "' has shape " +
                                    plan::shape_string(scale.shape) +
                                    "; version 10 takes a scalar scale (per-tensor only)");
  }
  if (version.scale_rank_at_most_1 && scale.shape.size() > 1) {
    return Status::invalid_argument(op + ": '" + scale_role + "' has shape " +
                                    plan::shape_string(scale.shape) +
                                    "; this version takes a scalar or 1-D scale");
  }
  if (zero_point != nullptr) {
    if (Status s = plan::check_zero_point_shape(op, scale, *zero_point, scale_role, zp_role); !s.ok()) {
      return s;
    }
  }
  return plan::resolve_axis_granularity(op, x.shape, x_count, scale, scale_role, axis, block_size,
                                        version.block_size, plan);
}

Status check_views(const std::string& op, const TensorView& x, const TensorView& scale,
                   const TensorView* zero_point, const char* scale_role, const char* zp_role,
                   uint64_t* x_count, uint64_t* scale_count, uint64_t* zp_count) {
  if (Status s = plan::check_view(op, "x", x, x_count); !s.ok()) return s;
  if (Status s = plan::check_view(op, scale_role, scale, scale_count); !s.ok()) return s;
  *zp_count = 0;
  if (zero_point != nullptr) {
    if (Status s = plan::check_view(op, zp_role, *zero_point, zp_count); !s.ok()) return s;
  }
  return {};
}

Result<ElementType> attribute_type(const std::string& op, const char* attribute, int64_t code) {
  std::optional<ElementType> type = element_type_from_code(code);
  if (!type) {
    return Status::invalid_argument(op + ": attribute " + attribute + "=" + std::to_string(code) +
                                    " is not a TensorProto element type code qdq knows");
  }
  return *type;
}

Precision precision_of(ElementType type) {
  switch (type) {
    case E::kFloat16:
      return Precision::kFloat16;
    case E::kBfloat16:
      return Precision::kBfloat16;
    case E::kInt32:
      return Precision::kFloat64;  // every int32 (and every x type) is exact in float64
    default:
      return Precision::kFloat32;  // float32, and e8m0 (every e8m0 value is exact in float32)
  }
}

}  // namespace

Result<Plan> plan_quantize_linear(const TensorView& x, const TensorView& y_scale,
                                  const TensorView* y_zero_point,
                                  const QuantizeLinearAttributes& attributes) {
  const OnnxVersion* version = nullptr;
  if (Status s = resolve_version("QuantizeLinear", attributes.opset, &version); !s.ok()) return s;
  const std::string op = "QuantizeLinear-" + std::to_string(version->since_version);

  uint64_t x_count = 0, scale_count = 0, zp_count = 0;
  if (Status s = check_views(op, x, y_scale, y_zero_point, "y_scale", "y_zero_point", &x_count,
                             &scale_count, &zp_count);
      !s.ok()) {
    return s;
  }
  // Attributes this version does not define.
  for (Status s : {check_undefined_attribute(op, version->axis, "axis", attributes.axis, 1),
                   check_undefined_attribute(op, version->saturate, "saturate", attributes.saturate, 1),
                   check_undefined_attribute(op, version->block_size, "block_size", attributes.block_size, 0),
                   check_undefined_attribute(op, version->q_output_dtype, "output_dtype", attributes.output_dtype, 0),
                   check_undefined_attribute(op, version->precision, "precision", attributes.precision, 0)}) {
    if (!s.ok()) return s;
  }
  if (attributes.saturate != 0 && attributes.saturate != 1) {
    return Status::invalid_argument(op + ": attribute saturate=" + std::to_string(attributes.saturate) +
                                    " must be 0 or 1");
  }

  // Types.
  if (Status s = plan::check_type(op, "x", x.type, version->q_x, "type constraint T1"); !s.ok()) return s;
  if (version->q_scale.empty()) {
    if (y_scale.type != x.type) {
      return Status::invalid_argument(op + ": 'y_scale' has type " + std::string(name(y_scale.type)) +
                                      " but x has type " + std::string(name(x.type)) +
                                      "; in this version both share type constraint T1");
    }
  } else if (Status s = plan::check_type(op, "y_scale", y_scale.type, version->q_scale,
                                         version->since_version >= 23 ? "type constraint T2"
                                                                      : "the y_scale input (tensor(float))");
             !s.ok()) {
    return s;
  }
  const char* zp_constraint = version->since_version >= 23 ? "type constraint T3" : "type constraint T2";
  ElementType output_type = E::kUint8;  // no zero point and no output_dtype: uint8
  if (y_zero_point != nullptr) {
    if (Status s = plan::check_type(op, "y_zero_point", y_zero_point->type, version->q_zero_point, zp_constraint);
        !s.ok()) {
      return s;
    }
    output_type = y_zero_point->type;
  }
  if (attributes.output_dtype != 0) {
    Result<ElementType> requested = attribute_type(op, "output_dtype", attributes.output_dtype);
    if (!requested.ok()) return requested.status();
    if (y_zero_point != nullptr && requested.value() != y_zero_point->type) {
      return Status::invalid_argument(op + ": output_dtype " + std::string(name(requested.value())) +
                                      " does not match y_zero_point type " +
                                      std::string(name(y_zero_point->type)) +
                                      "; when both are given they must be equal");
    }
    for (ElementType allowed : version->q_zero_point) {
      if (allowed == requested.value()) output_type = allowed;
    }
    if (output_type != requested.value()) {
      return Status::invalid_argument(op + ": output_dtype " + std::string(name(requested.value())) +
                                      " is not a quantized type of this version (allowed: " +
                                      plan::type_list(version->q_zero_point) + ")");
    }
  }
  Precision precision = precision_of(y_scale.type);
  if (attributes.precision != 0) {
    Result<ElementType> requested = attribute_type(op, "precision", attributes.precision);
    if (!requested.ok()) return requested.status();
    const TypeList float_precisions = {E::kFloat32, E::kFloat16, E::kBfloat16};
    if (Status s = plan::check_type(op, "attribute precision", requested.value(), float_precisions,
                                    "the division (a floating-point operation)");
        !s.ok()) {
      return s;
    }
    precision = precision_of(requested.value());
  }

  Plan plan;
  plan.operation = Operation::kQuantize;
  plan.operator_name = op;
  if (Status s = resolve_shapes(op, *version, x, x_count, y_scale, scale_count, y_zero_point,
                                "y_scale", "y_zero_point", attributes.axis, attributes.block_size, &plan);
      !s.ok()) {
    return s;
  }
  const ElementTypeInfo& out = info(output_type);
  const bool float8_output = out.is_float() && out.bits == 8;
  if (y_zero_point != nullptr && float8_output) {
    if (Status s = plan::check_zero_point_all_zero(
            op, "y_zero_point", *y_zero_point, zp_count,
            "float8 zero points must be 0 (the reference ignores them; qdq rejects a non-zero one "
            "rather than silently dropping it)");
        !s.ok()) {
      return s;
    }
  }
  plan::set_operands(&plan, x, x_count, y_scale, y_zero_point);
  plan.output_type = output_type;
  plan.precision = precision;
  // saturate applies to float8 only; float4e2m1 always saturates; integers always clamp.
  plan.saturate = float8_output ? attributes.saturate == 1 : true;
  plan.apply_zero_point = plan.has_zero_point && !float8_output;
  return plan;
}

Result<Plan> plan_dequantize_linear(const TensorView& x, const TensorView& x_scale,
                                    const TensorView* x_zero_point,
                                    const DequantizeLinearAttributes& attributes) {
  const OnnxVersion* version = nullptr;
  if (Status s = resolve_version("DequantizeLinear", attributes.opset, &version); !s.ok()) return s;
  const std::string op = "DequantizeLinear-" + std::to_string(version->since_version);

  uint64_t x_count = 0, scale_count = 0, zp_count = 0;
  if (Status s = check_views(op, x, x_scale, x_zero_point, "x_scale", "x_zero_point", &x_count,
                             &scale_count, &zp_count);
      !s.ok()) {
    return s;
  }
  for (Status s : {check_undefined_attribute(op, version->axis, "axis", attributes.axis, 1),
                   check_undefined_attribute(op, version->block_size, "block_size", attributes.block_size, 0),
                   check_undefined_attribute(op, version->dq_output_dtype, "output_dtype", attributes.output_dtype, 0)}) {
    if (!s.ok()) return s;
  }
  const char* x_constraint = version->since_version >= 19 ? "type constraint T1" : "type constraint T";
  if (Status s = plan::check_type(op, "x", x.type, version->dq_x, x_constraint); !s.ok()) return s;
  if (Status s = plan::check_type(op, "x_scale", x_scale.type, version->dq_scale,
                                  version->since_version >= 19 ? "type constraint T2"
                                                               : "the x_scale input (tensor(float))");
      !s.ok()) {
    return s;
  }
  if (x_zero_point != nullptr && x_zero_point->type != x.type) {
    return Status::invalid_argument(op + ": 'x_zero_point' has type " + std::string(name(x_zero_point->type)) +
                                    " but x has type " + std::string(name(x.type)) +
                                    "; both share one type constraint and must be equal");
  }

  // Output type: float before v19, the scale's type until v21, then output_dtype if set.
  ElementType output_type = version->since_version < 19 ? E::kFloat32 : x_scale.type;
  if (attributes.output_dtype != 0) {
    Result<ElementType> requested = attribute_type(op, "output_dtype", attributes.output_dtype);
    if (!requested.ok()) return requested.status();
    const TypeList outputs = {E::kFloat32, E::kFloat16, E::kBfloat16};
    if (Status s = plan::check_type(op, "attribute output_dtype", requested.value(), outputs,
                                    "type constraint T3");
        !s.ok()) {
      return s;
    }
    output_type = requested.value();
  } else if (x_scale.type == E::kFloat8E8M0) {
    return Status::invalid_argument(op + ": x_scale has type float8_e8m0fnu, which is not an output "
                                    "type; set output_dtype to float32, float16 or bfloat16");
  }

  Plan plan;
  plan.operation = Operation::kDequantize;
  plan.operator_name = op;
  if (Status s = resolve_shapes(op, *version, x, x_count, x_scale, scale_count, x_zero_point,
                                "x_scale", "x_zero_point", attributes.axis, attributes.block_size, &plan);
      !s.ok()) {
    return s;
  }
  const ElementTypeInfo& x_info = info(x.type);
  // Float x (float8 and float4e2m1): the zero point must be 0 and is not subtracted. The reference
  // checks float8 zero points and ignores float4 ones; the doc formula subtracts both. Requiring 0
  // and skipping it (so that -0 stays -0) agrees with both on every accepted input.
  const bool float_input = x_info.is_float();
  if (x_zero_point != nullptr && float_input) {
    if (Status s = plan::check_zero_point_all_zero(
            op, "x_zero_point", *x_zero_point, zp_count,
            std::string(name(x.type)) + " zero points must be 0 (a float x has no zero point to subtract)");
        !s.ok()) {
      return s;
    }
  }
  plan::set_operands(&plan, x, x_count, x_scale, x_zero_point);
  plan.output_type = output_type;
  plan.apply_zero_point = plan.has_zero_point && !float_input;
  return plan;
}

}  // namespace qdq
