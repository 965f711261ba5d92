// Validation building blocks shared by the front doors. Each check returns a Status whose message
// starts with the operator ("QuantizeLinear-21: ") and names the offending value and the rule.
#pragma once

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include "qdq/qdq.hpp"

namespace qdq::plan {

std::string shape_string(std::span<const int64_t> shape);
// A value for a message: up to 9 significant digits (every float32 exactly), any magnitude.
std::string format_number(double value);
std::string type_list(std::span<const ElementType> types);

// A view is well formed: known type code, non-negative dims, element count and byte size that fit
// in 63 bits, and non-null data when it has elements. `role` is the input's name ("x", "y_scale").
Status check_view(const std::string& op, std::string_view role, const TensorView& view,
                  uint64_t* element_count);

Status check_type(const std::string& op, std::string_view role, ElementType type,
                  std::span<const ElementType> allowed, std::string_view constraint);

// Normalizes axis into [0, rank); error naming the accepted range [-rank, rank-1].
Status normalize_axis(const std::string& op, int64_t axis, int rank, int* normalized);

// One element and rank 0 or 1: a per-tensor scale or zero point.
bool is_scalar_like(std::span<const int64_t> shape);

// The zero point's shape must equal the scale's (a 0-D / [1] mix of one-element tensors is the
// one exception the ONNX backend tests rely on).
Status check_zero_point_shape(const std::string& op, const TensorView& scale,
                              const TensorView& zero_point, std::string_view scale_role,
                              std::string_view zero_point_role);

// Every zero-point element decodes to zero (float8 zero points; NaN and -0 handling per format).
Status check_zero_point_all_zero(const std::string& op, std::string_view role, const TensorView& zp,
                                 uint64_t count, std::string_view why);

// Layouts for the three ONNX granularities, over x's shape.
Layout per_tensor_layout(uint64_t element_count);
Layout per_axis_layout(std::span<const int64_t> x_shape, int axis);
Layout blocked_layout(std::span<const int64_t> x_shape, int axis, int64_t scale_axis_dim,
                      int64_t block_size);

// Resolves per-tensor / per-axis / blocked from the scale's shape (ONNX rules: one element of rank
// <= 1 is per-tensor; block_size 0 is per-axis with a 1-D scale of length D_axis; otherwise
// blocked with the same rank, equal dims off the axis and ceil(D_axis / B) == S_axis) and fills
// plan.granularity and plan.layout. `allow_blocked` false rejects the blocked case.
Status resolve_axis_granularity(const std::string& op, std::span<const int64_t> x_shape,
                                uint64_t element_count, const TensorView& scale,
                                std::string_view scale_role, int64_t axis, int64_t block_size,
                                bool allow_blocked, Plan* plan);

// Records the operands in the plan: x (whose shape is also y's), scale, the optional zero point
// (applied by default when present; front doors narrow that for float8 and float x).
void set_operands(Plan* plan, const TensorView& x, uint64_t x_count, const TensorView& scale,
                  const TensorView* zero_point);

}  // namespace qdq::plan
