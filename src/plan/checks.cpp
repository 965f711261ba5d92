#include "plan/checks.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "types/codec.h"

namespace qdq::plan {
namespace {

// Shapes beyond this many dims are not tensors anyone quantizes; the cap keeps messages short
// and index arithmetic trivially bounded.
constexpr size_t kMaxRank = 64;
constexpr uint64_t kMaxCount = uint64_t{1} << 62;

}  // namespace

std::string format_number(double value) {
  std::ostringstream out;
  out.precision(9);
  out << value;
  return out.str();
}

std::string shape_string(std::span<const int64_t> shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::string type_list(std::span<const ElementType> types) {
  std::string text;
  for (size_t i = 0; i < types.size(); ++i) {
    if (i != 0) text += ", ";
    text += std::string(name(types[i]));
  }
  return text;
}

Status check_view(const std::string& op, std::string_view role, const TensorView& view,
                  uint64_t* element_count) {
  // The message's subject, built only for an error: this check runs on every call of every door.
  const auto where = [&] { return op + ": input '" + std::string(role) + "'"; };
  if (!element_type_from_code(static_cast<int64_t>(view.type))) {
    return Status::invalid_argument(where() + " has unknown element type code " +
                                    std::to_string(static_cast<int64_t>(view.type)) +
                                    " (not a TensorProto type qdq implements)");
  }
  if (view.shape.size() > kMaxRank) {
    return Status::invalid_argument(where() + " has rank " + std::to_string(view.shape.size()) +
                                    "; qdq accepts at most " + std::to_string(kMaxRank) + " dims");
  }
  uint64_t count = 1;
  for (size_t i = 0; i < view.shape.size(); ++i) {
    const int64_t dim = view.shape[i];
    if (dim < 0) {
      return Status::invalid_argument(where() + " has negative dimension " + std::to_string(dim) +
                                      " at index " + std::to_string(i) + " of shape " +
                                      shape_string(view.shape));
    }
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(dim), &count) || count > kMaxCount) {
      return Status::invalid_argument(where() + " has shape " + shape_string(view.shape) +
                                      " whose element count overflows 2^62");
    }
  }
  // The byte size must fit in 63 bits too (2^62 float32 elements would be 2^64 bytes).
  const ElementTypeInfo& row = info(view.type);
  if (!row.is_packed() &&
      count > static_cast<uint64_t>(INT64_MAX) / static_cast<uint64_t>(row.bytes_per_element())) {
    return Status::invalid_argument(where() + " has shape " + shape_string(view.shape) + " of " +
                                    std::string(row.name) + " whose byte size overflows 2^63");
  }
  if (count > 0 && view.data == nullptr) {
    return Status::invalid_argument(where() + " has null data but " + std::to_string(count) +
                                    " elements (shape " + shape_string(view.shape) + ")");
  }
  *element_count = count;
  return {};
}

Status check_type(const std::string& op, std::string_view role, ElementType type,
                  std::span<const ElementType> allowed, std::string_view constraint) {
  for (ElementType candidate : allowed) {
    if (candidate == type) return {};
  }
  // Attributes and the output are named as such; everything else is an input.
  const bool is_input = role.find(' ') == std::string_view::npos && role != "output";
  const std::string what = is_input ? "input '" + std::string(role) + "'" : std::string(role);
  return Status::invalid_argument(op + ": " + what + " has type " +
                                  std::string(name(type)) + ", which " + std::string(constraint) +
                                  " does not allow (allowed: " + type_list(allowed) + ")");
}

Status normalize_axis(const std::string& op, int64_t axis, int rank, int* normalized) {
  if (axis < -static_cast<int64_t>(rank) || axis >= rank) {
    return Status::invalid_argument(op + ": axis " + std::to_string(axis) +
                                    " is outside the accepted range [" + std::to_string(-rank) + ", " +
                                    std::to_string(rank - 1) + "] for an input of rank " +
                                    std::to_string(rank));
  }
  *normalized = static_cast<int>(axis < 0 ? axis + rank : axis);
  return {};
}

bool is_scalar_like(std::span<const int64_t> shape) {
  return shape.empty() || (shape.size() == 1 && shape[0] == 1);
}

Status check_zero_point_shape(const std::string& op, const TensorView& scale,
                              const TensorView& zero_point, std::string_view scale_role,
                              std::string_view zero_point_role) {
  if (is_scalar_like(scale.shape) && is_scalar_like(zero_point.shape)) return {};
  if (std::equal(scale.shape.begin(), scale.shape.end(), zero_point.shape.begin(),
                 zero_point.shape.end())) {
    return {};
  }
  return Status::invalid_argument(op + ": '" + std::string(zero_point_role) + "' has shape " +
                                  shape_string(zero_point.shape) + " but '" + std::string(scale_role) +
                                  "' has shape " + shape_string(scale.shape) +
                                  "; the zero point must have the scale's shape");
}

namespace {
// Whether codes [0, count) of a zero-point tensor of at most 8 bits are all +0 or -0, read a byte at
// a time on the codes' bits; false also where that cannot be told on the bits (the caller's element
// loop then decides, and names the first non-zero element). Decoding each element took 4-5 ms for
// a blocked float8 zero point of 512K elements, as long as the quantization it came with.
bool all_codes_zero(const ElementTypeInfo& type, const TensorView& zp, uint64_t count) {
  if (type.bits > 8 || codec::decode(type, 0) != 0.0) return false;  // e8m0's code 0 is 2^-127
  const auto bits = static_cast<unsigned>(type.bits);
  const uint32_t low = (1u << bits) - 1;
  const uint32_t sign = 1u << (bits - 1);
  // Bits that must be clear in every code: all of them, or all but the sign where the sign bit
  // alone spells -0 (float8 e4m3fn/e5m2, float4e2m1: 0x80 / 0x8; FNUZ's 0x80 is its NaN).
  const uint32_t must_be_clear = codec::decode(type, sign) == 0.0 ? low & ~sign : low;
  const auto* bytes = static_cast<const uint8_t*>(zp.data);
  uint32_t seen = 0;
  if (bits == 8 || zp.layout == SubByteLayout::kOneCodePerByte) {  // a code per byte, high bits ignored
    for (uint64_t i = 0; i < count; ++i) seen |= bytes[i] & must_be_clear;
    return seen == 0;
  }
  const uint64_t per_byte = 8 / bits;  // packed: low bits first
  uint32_t byte_mask = 0;
  for (uint64_t j = 0; j < per_byte; ++j) byte_mask |= must_be_clear << (j * bits);
  const uint64_t whole_bytes = count / per_byte;
  for (uint64_t i = 0; i < whole_bytes; ++i) seen |= bytes[i] & byte_mask;
  for (uint64_t i = whole_bytes * per_byte; i < count; ++i) {  // a last byte's codes (not its padding)
    seen |= codec::load_code(zp.data, type, i, zp.layout) & must_be_clear;
  }
  return seen == 0;
}
}  // namespace

Status check_zero_point_all_zero(const std::string& op, std::string_view role, const TensorView& zp,
                                 uint64_t count, std::string_view why) {
  const ElementTypeInfo& type = info(zp.type);
  if (all_codes_zero(type, zp, count)) return {};
  for (uint64_t i = 0; i < count; ++i) {
    const double value = codec::load_value(zp.data, type, i, zp.layout);
    if (value != 0.0) {  // NaN compares unequal, so it is rejected too
      return Status::invalid_argument(op + ": '" + std::string(role) + "' element " +
                                      std::to_string(i) + " is " + format_number(value) + "; " +
                                      std::string(why));
    }
  }
  return {};
}

Layout per_tensor_layout(uint64_t element_count) {
  Layout layout;
  layout.rank = 1;
  layout.dims[0] = static_cast<int64_t>(element_count);
  return layout;
}

namespace {
int64_t product(std::span<const int64_t> dims) {
  int64_t result = 1;
  for (int64_t d : dims) result *= d;  // fits: the whole shape was checked by check_view
  return result;
}
}  // namespace

Layout per_axis_layout(std::span<const int64_t> x_shape, int axis) {
  Layout layout;
  layout.rank = 3;
  layout.dims[0] = product(x_shape.first(static_cast<size_t>(axis)));
  layout.dims[1] = x_shape[static_cast<size_t>(axis)];
  layout.dims[2] = product(x_shape.subspan(static_cast<size_t>(axis) + 1));
  layout.scale_strides[1] = 1;
  layout.zero_point_strides[1] = 1;
  return layout;
}

Layout blocked_layout(std::span<const int64_t> x_shape, int axis, int64_t scale_axis_dim,
                      int64_t block_size) {
  Layout layout = per_axis_layout(x_shape, axis);
  const int64_t inner = layout.dims[2];
  // scale index = outer * (S_axis * inner) + (i_axis / B) * inner + i_inner
  layout.scale_strides[0] = layout.zero_point_strides[0] = scale_axis_dim * inner;
  layout.scale_strides[1] = layout.zero_point_strides[1] = inner;
  layout.scale_strides[2] = layout.zero_point_strides[2] = 1;
  layout.block_axis = 1;
  layout.block_size = block_size;
  return layout;
}

Status resolve_axis_granularity(const std::string& op, std::span<const int64_t> x_shape,
                                uint64_t element_count, const TensorView& scale,
                                std::string_view scale_role, int64_t axis, int64_t block_size,
                                bool allow_blocked, Plan* plan) {
  const std::string role(scale_role);
  if (block_size < 0) {
    return Status::invalid_argument(op + ": block_size " + std::to_string(block_size) +
                                    " is negative; it must be 0 (not blocked) or a positive integer");
  }
  if (is_scalar_like(scale.shape)) {
    plan->granularity = Granularity::kPerTensor;
    plan->layout = per_tensor_layout(element_count);
    return {};
  }
  const int rank = static_cast<int>(x_shape.size());
  int normalized = 0;
  if (block_size == 0) {
    if (scale.shape.size() != 1) {
      return Status::invalid_argument(
          op + ": '" + role + "' has shape " + shape_string(scale.shape) +
          "; with block_size 0 the scale must be a scalar (per-tensor) or 1-D (per-axis)");
    }
    if (Status s = normalize_axis(op, axis, rank, &normalized); !s.ok()) return s;
    const int64_t axis_dim = x_shape[static_cast<size_t>(normalized)];
    if (scale.shape[0] != axis_dim) {
      return Status::invalid_argument(op + ": per-axis '" + role + "' has length " +
                                      std::to_string(scale.shape[0]) + " but x has " +
                                      std::to_string(axis_dim) + " elements along axis " +
                                      std::to_string(axis) + " (x shape " + shape_string(x_shape) +
                                      "); the lengths must be equal");
    }
    plan->granularity = Granularity::kPerAxis;
    plan->layout = per_axis_layout(x_shape, normalized);
    return {};
  }
  if (!allow_blocked) {
    return Status::invalid_argument(op + ": block_size " + std::to_string(block_size) +
                                    " requests blocked quantization, which this operator does not define");
  }
  if (Status s = normalize_axis(op, axis, rank, &normalized); !s.ok()) return s;
  if (static_cast<int>(scale.shape.size()) != rank) {
    return Status::invalid_argument(op + ": blocked '" + role + "' has rank " +
                                    std::to_string(scale.shape.size()) + " (shape " +
                                    shape_string(scale.shape) + ") but x has rank " +
                                    std::to_string(rank) + " (shape " + shape_string(x_shape) +
                                    "); blocked scales have x's rank");
  }
  for (int d = 0; d < rank; ++d) {
    if (d == normalized) continue;
    if (scale.shape[static_cast<size_t>(d)] != x_shape[static_cast<size_t>(d)]) {
      return Status::invalid_argument(
          op + ": blocked '" + role + "' has shape " + shape_string(scale.shape) + " and x " +
          shape_string(x_shape) + ": dimension " + std::to_string(d) +
          " differs off the blocking axis " + std::to_string(normalized) + " (must be equal)");
    }
  }
  const int64_t axis_dim = x_shape[static_cast<size_t>(normalized)];
  const int64_t scale_dim = scale.shape[static_cast<size_t>(normalized)];
  const int64_t blocks = axis_dim / block_size + (axis_dim % block_size != 0 ? 1 : 0);
  if (blocks != scale_dim) {
    return Status::invalid_argument(
        op + ": blocked '" + role + "' has " + std::to_string(scale_dim) + " entries along axis " +
        std::to_string(normalized) + " but x has " + std::to_string(axis_dim) +
        " there and block_size is " + std::to_string(block_size) + "; ceil(" +
        std::to_string(axis_dim) + " / " + std::to_string(block_size) + ") = " +
        std::to_string(blocks) + " must equal the scale's dimension");
  }
  plan->granularity = Granularity::kBlocked;
  plan->layout = blocked_layout(x_shape, normalized, scale_dim, block_size);
  return {};
}

void set_operands(Plan* plan, const TensorView& x, uint64_t x_count, const TensorView& scale,
                  const TensorView* zero_point) {
  plan->x = x;
  plan->scale = scale;
  plan->has_zero_point = zero_point != nullptr;
  if (plan->has_zero_point) plan->zero_point = *zero_point;
  plan->apply_zero_point = plan->has_zero_point;
  plan->shape.assign(x.shape.begin(), x.shape.end());
  plan->element_count = x_count;
}

}  // namespace qdq::plan
