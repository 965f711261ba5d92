// The scalar reference executor: the specification transcribed one element at a time.
//
// All values travel as doubles (every qdq element type converts to double exactly) and every
// rounding the specification implies is written out as one explicit call:
//   QuantizeLinear:   q = P(P(x) / P(s))                 P = the division precision
//                     integer y:  clamp(round_half_even(q) + zp)   NaN -> lowest
//                     float8 y:   encode(q)                        (zero point required 0)
//                     other float y (float4, Quark float16/bfloat16): encode(f32(q + zp))
//   DequantizeLinear: y = out(f32(f32(x - zp) * f32(s)))   x - zp exact for integers
// A double quotient of two P-values rounded to P equals P's own IEEE division for P = float32,
// float16 and bfloat16 (53 >= 2p + 2, so the double rounding is innocuous).
#include "reference/reference.h"

#include <cmath>

#include "types/codec.h"

namespace qdq::reference {
namespace {

using codec::Overflow;

double round_to_precision(Precision precision, double value) {
  switch (precision) {
    case Precision::kFloat32:
      return static_cast<double>(static_cast<float>(value));
    case Precision::kFloat16:
      return codec::round_to_float_type(info(ElementType::kFloat16), value, Overflow::kInfOrNan);
    case Precision::kBfloat16:
      return codec::round_to_float_type(info(ElementType::kBfloat16), value, Overflow::kInfOrNan);
    case Precision::kFloat64:
      return value;
  }
  return value;
}

// Saturating conversion of an integer-valued double into an integer type: +inf and values above
// the range give max, -inf and values below give lowest, NaN gives lowest (docs/semantics.md).
uint32_t saturate_integer(const ElementTypeInfo& type, double value) {
  if (std::isnan(value) || value <= type.lowest) value = type.lowest;
  if (value >= type.max) value = type.max;
  // In range now, so the conversion is defined; the code is the two's complement bit pattern.
  return static_cast<uint32_t>(static_cast<int64_t>(value));
}

// Walks the layout in row-major order, calling visit(element_index, scale_index, zp_index).
template <class Visit>
void for_each_element(const Layout& layout, Visit&& visit) {
  int64_t coords[kMaxLayoutRank] = {};
  uint64_t total = 1;
  for (int d = 0; d < layout.rank; ++d) total *= static_cast<uint64_t>(layout.dims[d]);
  for (uint64_t index = 0; index < total; ++index) {
    int64_t scale_index = 0, zp_index = 0;
    for (int d = 0; d < layout.rank; ++d) {
      const int64_t coordinate = d == layout.block_axis ? coords[d] / layout.block_size : coords[d];
      scale_index += coordinate * layout.scale_strides[d];
      zp_index += coordinate * layout.zero_point_strides[d];
    }
    visit(index, static_cast<uint64_t>(scale_index), static_cast<uint64_t>(zp_index));
    for (int d = layout.rank - 1; d >= 0; --d) {  // odometer step
      if (++coords[d] < layout.dims[d]) break;
      coords[d] = 0;
    }
  }
}

}  // namespace

uint32_t quantize_value(const Plan& plan, double x, double scale, double zero_point) {
  const ElementTypeInfo& out = info(plan.output_type);
  // An int32 x reaches a float precision through float32, as numpy converts it (one more rounding
  // only beyond 2^24); float64 holds it exactly.
  if (info(plan.x.type).is_integer() && plan.precision != Precision::kFloat64) x = static_cast<float>(x);
  const double quotient = round_to_precision(
      plan.precision, round_to_precision(plan.precision, x) / round_to_precision(plan.precision, scale));
  if (out.is_integer()) {
    double rounded = codec::round_half_even(quotient);
    if (plan.apply_zero_point) rounded += zero_point;  // exact below 2^53; beyond, it saturates anyway
    return saturate_integer(out, rounded);
  }
  double value = quotient;
  if (plan.apply_zero_point) {
    // The zero point of a float output is added in float32 (float64 when the division was).
    // NaN + NaN gives the quotient's NaN, written out because a compiler may commute the addition.
    if (!std::isnan(value)) {
      value = plan.precision == Precision::kFloat64
                  ? value + zero_point
                  : static_cast<double>(static_cast<float>(value) + static_cast<float>(zero_point));
    }
  }
  // A float64 value reaches float8/float4 through float32, as ml_dtypes converts it.
  if (plan.precision == Precision::kFloat64) value = static_cast<float>(value);
  return codec::encode_float(out, value, plan.saturate ? Overflow::kSaturate : Overflow::kInfOrNan);
}

uint32_t dequantize_value(const Plan& plan, uint32_t x_code, double scale, uint32_t zp_code) {
  const ElementTypeInfo& x_type = info(plan.x.type);
  float difference;
  if (x_type.is_integer()) {
    // x - zp exactly in int64, then one rounding to float32 (matters only beyond 2^24).
    int64_t exact = static_cast<int64_t>(codec::decode(x_type, x_code));
    if (plan.apply_zero_point) exact -= static_cast<int64_t>(codec::decode(x_type, zp_code));
    difference = static_cast<float>(exact);
  } else {
    difference = static_cast<float>(codec::decode(x_type, x_code));
    if (plan.apply_zero_point) difference -= static_cast<float>(codec::decode(x_type, zp_code));
  }
  // NaN x NaN: the scale's NaN, as numpy (so onnx.reference) computes it; written out because a
  // compiler may commute the multiplication and so change which NaN propagates.
  const float scale_value = static_cast<float>(scale);
  const float product = std::isnan(scale_value) ? scale_value : difference * scale_value;
  return codec::encode_float(info(plan.output_type), static_cast<double>(product), Overflow::kInfOrNan);
}

uint32_t element_code(const Plan& plan, uint64_t i, uint64_t scale_index, uint64_t zp_index) {
  const ElementTypeInfo& x_type = info(plan.x.type);
  const double scale = codec::load_value(plan.scale.data, info(plan.scale.type), scale_index, plan.scale.layout);
  const ElementTypeInfo* zp_type = plan.has_zero_point ? &info(plan.zero_point.type) : nullptr;
  const TensorView& zp_view = plan.zero_point;
  if (plan.operation == Operation::kQuantize) {
    const double zp = zp_type ? codec::load_value(zp_view.data, *zp_type, zp_index, zp_view.layout) : 0.0;
    return quantize_value(plan, codec::load_value(plan.x.data, x_type, i, plan.x.layout), scale, zp);
  }
  const uint32_t zp = zp_type ? codec::load_code(zp_view.data, *zp_type, zp_index, zp_view.layout) : 0u;
  return dequantize_value(plan, codec::load_code(plan.x.data, x_type, i, plan.x.layout), scale, zp);
}

// Element offset of row-major element i of `shape` in a tensor with these strides (DirectML
// descriptions); i itself when the tensor is packed (no strides).
uint64_t strided_offset(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, uint64_t i) {
  if (strides.empty()) return i;
  uint64_t offset = 0;
  for (size_t d = shape.size(); d-- > 0;) {
    offset += (i % static_cast<uint64_t>(shape[d])) * static_cast<uint64_t>(strides[d]);
    i /= static_cast<uint64_t>(shape[d]);
  }
  return offset;
}

void execute(const Plan& plan, void* y, SubByteLayout y_layout) {
  if (plan.element_count == 0) return;
  const ElementTypeInfo& y_type = info(plan.output_type);
  for_each_element(plan.layout, [&](uint64_t i, uint64_t scale_index, uint64_t zp_index) {
    const uint64_t x_offset = strided_offset(plan.shape, plan.x_strides, i);
    const uint64_t y_offset = strided_offset(plan.shape, plan.y_strides, i);
    codec::store_code(y, y_type, y_offset, element_code(plan, x_offset, scale_index, zp_index), y_layout);
  });
}

}  // namespace qdq::reference
