// Front door: DirectML element-wise quantize / dequantize operator descriptions as DirectML states
// them (include/qdq/directml.hpp). The rules are the operators' "Tensor support" tables per
// DML_FEATURE_LEVEL and their "Tensor constraints", plus DML_BUFFER_TENSOR_DESC's own rules for
// Sizes, Strides and TotalTensorSizeInBytes (sources in docs/semantics.md).
//
// A rejected description names the tensor, the value, the rule and the lowest feature level that
// would accept the whole description (found by checking it at every level), or says none would.
#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>
#include <optional>

#include "execute/runs.h"
#include "plan/checks.h"
#include "qdq/directml.hpp"

namespace qdq {
namespace {

using E = ElementType;

constexpr std::array<DmlFeatureLevel, 15> kLevels = {
    DmlFeatureLevel::k1_0, DmlFeatureLevel::k2_0, DmlFeatureLevel::k2_1, DmlFeatureLevel::k3_0,
    DmlFeatureLevel::k3_1, DmlFeatureLevel::k4_0, DmlFeatureLevel::k4_1, DmlFeatureLevel::k5_0,
    DmlFeatureLevel::k5_1, DmlFeatureLevel::k5_2, DmlFeatureLevel::k6_0, DmlFeatureLevel::k6_1,
    DmlFeatureLevel::k6_2, DmlFeatureLevel::k6_3, DmlFeatureLevel::k6_4};

// DirectML's Sizes and Strides are UINT; a buffer tensor holds at most 2^32 - 1 elements.
constexpr int64_t kMaxUint = std::numeric_limits<uint32_t>::max();
constexpr uint64_t kMaxBufferElements = std::numeric_limits<uint32_t>::max();

// One "DML_FEATURE_LEVEL_x_y and above" table of an operator.
struct SupportTable {
  DmlFeatureLevel from;
  int min_rank, max_rank;
  std::vector<ElementType> input, scale, zero_point, output;
  bool zero_point_optional;
};

struct OperatorRules {
  const char* name;  // DirectML's operator name, used in every message
  Operation operation;
  std::vector<SupportTable> tables;  // lowest level first
};

const OperatorRules& quantize_rules() {
  static const OperatorRules rules{
      "DML_OPERATOR_ELEMENT_WISE_QUANTIZE_LINEAR",
      Operation::kQuantize,
      {
          {DmlFeatureLevel::k1_0, 4, 4, {E::kFloat32}, {E::kFloat32}, {E::kUint8}, {E::kUint8}, false},
          {DmlFeatureLevel::k2_1, 4, 4, {E::kFloat32, E::kInt32}, {E::kFloat32}, {E::kInt8, E::kUint8},
           {E::kInt8, E::kUint8}, false},
          {DmlFeatureLevel::k3_0, 1, 8, {E::kFloat32, E::kInt32}, {E::kFloat32}, {E::kInt8, E::kUint8},
           {E::kInt8, E::kUint8}, false},
          {DmlFeatureLevel::k6_0, 1, 8, {E::kFloat32, E::kFloat16, E::kInt32}, {E::kFloat32, E::kFloat16},
           {E::kInt8, E::kUint8}, {E::kInt8, E::kUint8}, false},
          {DmlFeatureLevel::k6_2, 1, 8, {E::kFloat32, E::kFloat16, E::kInt32}, {E::kFloat32, E::kFloat16},
           {E::kInt8, E::kUint8}, {E::kInt8, E::kUint8}, true},
      }};
  return rules;
}

const OperatorRules& dequantize_rules() {
  const std::vector<ElementType> integers = {E::kInt32, E::kInt16, E::kInt8, E::kUint32, E::kUint16, E::kUint8};
  static const OperatorRules rules{
      "DML_OPERATOR_ELEMENT_WISE_DEQUANTIZE_LINEAR",
      Operation::kDequantize,
      {
          {DmlFeatureLevel::k1_0, 4, 4, {E::kUint8}, {E::kFloat32}, {E::kUint8}, {E::kFloat32}, false},
          {DmlFeatureLevel::k2_1, 4, 4, integers, {E::kFloat32}, integers, {E::kFloat32}, false},
          {DmlFeatureLevel::k3_0, 1, 8, integers, {E::kFloat32}, integers, {E::kFloat32}, false},
          {DmlFeatureLevel::k6_0, 1, 8, integers, {E::kFloat32, E::kFloat16}, integers, {E::kFloat32, E::kFloat16},
           false},
          {DmlFeatureLevel::k6_2, 1, 8, integers, {E::kFloat32, E::kFloat16}, integers, {E::kFloat32, E::kFloat16},
           true},
      }};
  return rules;
}

// The table in force at `level`: the highest one whose level is not above it.
const SupportTable& table_at(const OperatorRules& rules, DmlFeatureLevel level) {
  const SupportTable* found = &rules.tables.front();
  for (const SupportTable& table : rules.tables) {
    if (static_cast<int32_t>(table.from) <= static_cast<int32_t>(level)) found = &table;
  }
  return *found;
}

// DML_TENSOR_DATA_TYPE's spelling of a type; qdq's own name for types DirectML lacks.
std::string dml_type_name(ElementType type) {
  switch (type) {
    case E::kFloat32: return "FLOAT32";
    case E::kFloat16: return "FLOAT16";
    case E::kInt32: return "INT32";
    case E::kInt16: return "INT16";
    case E::kInt8: return "INT8";
    case E::kUint32: return "UINT32";
    case E::kUint16: return "UINT16";
    case E::kUint8: return "UINT8";
    case E::kInt4: return "INT4";
    case E::kUint4: return "UINT4";
    default: break;
  }
  if (find_element_type_info(type) != nullptr) return std::string(name(type)) + " (no DML_TENSOR_DATA_TYPE)";
  return "unknown type code " + std::to_string(static_cast<int64_t>(type));
}

std::string dml_type_list(const std::vector<ElementType>& types) {
  std::string text;
  for (size_t i = 0; i < types.size(); ++i) text += (i ? ", " : "") + dml_type_name(types[i]);
  return text;
}

bool contains(const std::vector<ElementType>& types, ElementType type) {
  return std::find(types.begin(), types.end(), type) != types.end();
}

std::string rank_range(const SupportTable& table) {
  return table.min_rank == table.max_rank ? std::to_string(table.min_rank)
                                          : std::to_string(table.min_rank) + " to " + std::to_string(table.max_rank);
}

struct Tensor {
  const char* role;  // "InputTensor", ...
  const DmlTensorDesc* desc;
};

// The strides DirectML uses: the given ones, or packed row-major when none are given.
std::vector<int64_t> effective_strides(const DmlTensorDesc& desc) {
  if (!desc.strides.empty()) return {desc.strides.begin(), desc.strides.end()};
  std::vector<int64_t> strides(desc.sizes.size());
  int64_t stride = 1;
  for (size_t d = desc.sizes.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= desc.sizes[d];
  }
  return strides;
}

// Outputs checked element by element when the stride order does not settle it (8 bytes each).
constexpr uint64_t kMostOutputsCheckedByOffset = uint64_t{1} << 20;

// Empty when distinct output elements get distinct locations, else why not (or why qdq cannot
// tell). First the stride order: with the dimensions ordered by stride, each stride passing the
// largest offset the smaller ones reach is sufficient, and packed, padded and transposed layouts
// all satisfy it. Interleaved layouts that fail it may still be one to one, so up to
// kMostOutputsCheckedByOffset elements every offset is computed and a repeated one is named.
std::string output_overlap(std::span<const int64_t> sizes, const std::vector<int64_t>& strides) {
  std::vector<size_t> order;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] > 1) order.push_back(d);
  }
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return strides[a] != strides[b] ? strides[a] < strides[b] : a < b; });
  uint64_t reach = 0;  // largest offset of the dimensions so far
  size_t failing = sizes.size();
  for (size_t d : order) {
    if (static_cast<uint64_t>(strides[d]) <= reach) {
      failing = d;
      break;
    }
    reach += static_cast<uint64_t>(strides[d]) * static_cast<uint64_t>(sizes[d] - 1);
  }
  if (failing == sizes.size()) return {};
  const auto position = [&](uint64_t element) {  // element's index (row-major), as [i0, i1, ...]
    std::vector<int64_t> at(sizes.size());
    for (size_t d = sizes.size(); d-- > 0;) {
      at[d] = static_cast<int64_t>(element % static_cast<uint64_t>(sizes[d]));
      element /= static_cast<uint64_t>(sizes[d]);
    }
    return plan::shape_string(at);
  };
  const auto same_location = [&](const std::string& a, const std::string& b, uint64_t offset) {
    return "gives output elements " + a + " and " + b + " the same location (element offset " +
           std::to_string(offset) + "); qdq requires each output element its own";
  };
  if (strides[failing] == 0) {  // the first two elements along that dimension
    std::vector<int64_t> second(sizes.size(), 0);
    second[failing] = 1;
    return same_location(plan::shape_string(std::vector<int64_t>(sizes.size(), 0)), plan::shape_string(second), 0);
  }
  uint64_t count = 1;  // sizes are checked to hold at most 2^32 - 1 elements before this
  for (int64_t size : sizes) count *= static_cast<uint64_t>(size);
  if (count > kMostOutputsCheckedByOffset) {
    return "qdq cannot show that each output element has its own location: ordered by stride, dimension " +
           std::to_string(failing) + "'s stride " + std::to_string(strides[failing]) +
           " does not pass the offset the smaller strides reach (" + std::to_string(reach) +
           "), and the output has more than 2^20 elements to check one by one";
  }
  std::vector<std::pair<uint64_t, uint64_t>> offsets(count);  // (offset, element index)
  std::vector<int64_t> index(sizes.size(), 0);
  uint64_t offset = 0;
  for (uint64_t i = 0; i < count; ++i) {
    offsets[i] = {offset, i};
    for (size_t d = sizes.size(); d-- > 0;) {  // the next index, row-major, and its offset
      if (++index[d] < sizes[d]) {
        offset += static_cast<uint64_t>(strides[d]);
        break;
      }
      offset -= static_cast<uint64_t>(strides[d]) * static_cast<uint64_t>(sizes[d] - 1);
      index[d] = 0;
    }
  }
  std::sort(offsets.begin(), offsets.end());
  for (size_t i = 1; i < offsets.size(); ++i) {
    if (offsets[i].first != offsets[i - 1].first) continue;
    return same_location(position(offsets[i - 1].second), position(offsets[i].second), offsets[i].first);
  }
  return {};
}

class Checker {
 public:
  // overlap_cache: output_overlap() of the output, shared by the checkers of every level and
  // filled by the first that gets that far (it does not depend on the level, and may take a pass
  // over a million offsets).
  Checker(const OperatorRules& rules, DmlFeatureLevel level, const std::array<Tensor, 4>& tensors,
          std::optional<std::string>& overlap_cache)
      : rules_(rules), level_(level), table_(table_at(rules, level)), tensors_(tensors),
        overlap_cache_(overlap_cache) {}

  // Every rule of the description at this level; the first broken one's text (no prefix).
  std::string first_violation() const {
    const Tensor& input = tensors_[0];
    const Tensor& scale = tensors_[1];
    const Tensor& zero_point = tensors_[2];
    const Tensor& output = tensors_[3];
    const std::string level_name = dml_feature_level_name(level_);
    if (zero_point.desc == nullptr && !table_.zero_point_optional) {
      return "ZeroPointTensor is null; it is required at " + level_name + " (optional from DML_FEATURE_LEVEL_6_2)";
    }
    // DimensionCount per the table, then equal Sizes.
    for (const Tensor& t : tensors_) {
      if (t.desc == nullptr) continue;
      const int rank = static_cast<int>(t.desc->sizes.size());
      if (rank < table_.min_rank || rank > table_.max_rank) {
        return std::string(t.role) + " has DimensionCount " + std::to_string(rank) + " (Sizes " +
               plan::shape_string(t.desc->sizes) + "); " + level_name + " supports " + rank_range(table_);
      }
    }
    for (const Tensor& t : tensors_) {
      if (t.desc == nullptr) continue;
      for (int64_t size : t.desc->sizes) {
        if (size < 1 || size > kMaxUint) {
          return std::string(t.role) + " has Sizes " + plan::shape_string(t.desc->sizes) + " with size " +
                 std::to_string(size) + "; DirectML sizes are 1 to 2^32 - 1 (a size of zero is invalid)";
        }
      }
    }
    for (const Tensor& t : tensors_) {
      if (t.desc == nullptr || t.desc == input.desc) continue;
      if (!std::equal(t.desc->sizes.begin(), t.desc->sizes.end(), input.desc->sizes.begin(),
                      input.desc->sizes.end())) {
        return std::string(t.role) + " has Sizes " + plan::shape_string(t.desc->sizes) + " but InputTensor " +
               plan::shape_string(input.desc->sizes) +
               "; all four tensors must have the same DimensionCount and Sizes (broadcast with a stride of 0)";
      }
    }
    // Data types per the table, then the constraints between tensors.
    const std::array<const std::vector<ElementType>*, 4> allowed = {&table_.input, &table_.scale,
                                                                     &table_.zero_point, &table_.output};
    for (size_t i = 0; i < tensors_.size(); ++i) {
      const Tensor& t = tensors_[i];
      if (t.desc == nullptr || contains(*allowed[i], t.desc->type)) continue;
      return std::string(t.role) + " has DataType " + dml_type_name(t.desc->type) + "; " + level_name +
             " supports " + dml_type_list(*allowed[i]);
    }
    if (rules_.operation == Operation::kQuantize) {
      const ElementType scale_type = input.desc->type == E::kInt32 ? E::kFloat32 : input.desc->type;
      if (scale.desc->type != scale_type) {
        return "ScaleTensor has DataType " + dml_type_name(scale.desc->type) + " and InputTensor " +
               dml_type_name(input.desc->type) + "; ScaleTensor must be " + dml_type_name(scale_type) +
               " (FLOAT32 for an INT32 InputTensor, otherwise InputTensor's DataType)";
      }
      if (zero_point.desc != nullptr && zero_point.desc->type != output.desc->type) {
        return "ZeroPointTensor has DataType " + dml_type_name(zero_point.desc->type) + " and OutputTensor " +
               dml_type_name(output.desc->type) + "; OutputTensor and ZeroPointTensor must have the same DataType";
      }
    } else {
      if (zero_point.desc != nullptr && zero_point.desc->type != input.desc->type) {
        return "ZeroPointTensor has DataType " + dml_type_name(zero_point.desc->type) + " and InputTensor " +
               dml_type_name(input.desc->type) + "; InputTensor and ZeroPointTensor must have the same DataType";
      }
      if (output.desc->type != scale.desc->type) {
        return "OutputTensor has DataType " + dml_type_name(output.desc->type) + " and ScaleTensor " +
               dml_type_name(scale.desc->type) + "; OutputTensor and ScaleTensor must have the same DataType";
      }
    }
    // DML_BUFFER_TENSOR_DESC: Strides, TotalTensorSizeInBytes.
    for (const Tensor& t : tensors_) {
      if (t.desc == nullptr) continue;
      if (std::string s = buffer_violation(t); !s.empty()) return s;
    }
    if (!overlap_cache_) overlap_cache_ = output_overlap(output.desc->sizes, effective_strides(*output.desc));
    if (!overlap_cache_->empty()) {
      return "OutputTensor with Strides " + plan::shape_string(output.desc->strides) + " over Sizes " +
             plan::shape_string(output.desc->sizes) + " " + *overlap_cache_;
    }
    return {};
  }

 private:
  static std::string buffer_violation(const Tensor& t) {
    const DmlTensorDesc& desc = *t.desc;
    const std::string role = t.role;
    uint64_t logical = 1;  // saturates past the limit: sizes are below 2^32 here
    for (int64_t size : desc.sizes) logical = std::min(logical * static_cast<uint64_t>(size), kMaxBufferElements + 1);
    if (!desc.strides.empty()) {
      if (desc.strides.size() != desc.sizes.size()) {
        return role + " has " + std::to_string(desc.strides.size()) + " Strides " +
               plan::shape_string(desc.strides) + " for DimensionCount " + std::to_string(desc.sizes.size()) +
               "; Strides has one entry per dimension";
      }
      for (int64_t stride : desc.strides) {
        if (stride < 0 || stride > kMaxUint) {
          return role + " has Strides " + plan::shape_string(desc.strides) + " with stride " + std::to_string(stride) +
                 "; DirectML strides are unsigned 32-bit element counts (0 to 2^32 - 1)";
        }
      }
    }
    if (logical > kMaxBufferElements) {  // before packed strides are computed: they stay below 2^32
      return role + " has Sizes " + plan::shape_string(desc.sizes) + ", more than 2^32 - 1 elements; a buffer "
             "tensor holds at most 2^32 - 1";
    }
    // Overflow-safe: each term is below 2^64 (sizes and strides below 2^32), the sum below 2^32.
    uint64_t last = 0;
    const std::vector<int64_t> strides = effective_strides(desc);
    for (size_t d = 0; d < desc.sizes.size(); ++d) {
      if (desc.sizes[d] > 1 && strides[d] > 0) {
        const uint64_t term = static_cast<uint64_t>(desc.sizes[d] - 1) * static_cast<uint64_t>(strides[d]);
        if (term > kMaxBufferElements || last + term >= kMaxBufferElements) {
          return role + " has Sizes " + plan::shape_string(desc.sizes) + " and Strides " +
                 plan::shape_string(strides) + " that address past 2^32 - 1 elements, the most a buffer tensor holds";
        }
        last += term;
      }
    }
    const uint64_t implied = dml_calc_buffer_tensor_size(desc.type, desc.sizes, desc.strides);
    if (desc.total_tensor_size_in_bytes != 0) {
      if (desc.total_tensor_size_in_bytes < implied) {
        return role + " has TotalTensorSizeInBytes " + std::to_string(desc.total_tensor_size_in_bytes) +
               " but its Sizes and Strides need " + std::to_string(implied) +
               " (DMLCalcBufferTensorSize: the last element's end, rounded up to 4 bytes)";
      }
      if (desc.total_tensor_size_in_bytes % 4 != 0) {
        return role + " has TotalTensorSizeInBytes " + std::to_string(desc.total_tensor_size_in_bytes) +
               "; DirectML buffer sizes are multiples of 4 bytes";
      }
    }
    return {};
  }

  const OperatorRules& rules_;
  DmlFeatureLevel level_;
  const SupportTable& table_;
  std::array<Tensor, 4> tensors_;
  std::optional<std::string>& overlap_cache_;
};

bool is_known_level(DmlFeatureLevel level) {
  return std::find(kLevels.begin(), kLevels.end(), level) != kLevels.end();
}

// Zero strides where the operand repeats, its own strides elsewhere: the Layout the runs follow.
// Without a zero point its strides are the scale's (never read), so that canonical_layout merges
// and blocks the dimensions as it does for the ONNX doors' layouts.
Layout operand_layout(std::span<const int64_t> sizes, const std::vector<int64_t>& scale_strides,
                      const std::vector<int64_t>* zero_point_strides) {
  Layout layout;
  layout.rank = static_cast<int>(sizes.size());
  for (int d = 0; d < layout.rank; ++d) {
    layout.dims[d] = sizes[static_cast<size_t>(d)];
    layout.scale_strides[d] = scale_strides[static_cast<size_t>(d)];
    layout.zero_point_strides[d] = (zero_point_strides ? *zero_point_strides : scale_strides)[static_cast<size_t>(d)];
  }
  return layout;
}

// Whether the runs (execute/runs.h) can follow the operands: innermost strides of 0 or 1, or a
// blocked innermost dimension.
bool runs_follow(const Layout& canonical) {
  const int last = canonical.rank - 1;
  if (canonical.block_axis == last) return true;
  return canonical.scale_strides[last] <= 1 && canonical.zero_point_strides[last] <= 1;
}

bool is_packed(const DmlTensorDesc& desc) {
  if (desc.strides.empty()) return true;
  const std::vector<int64_t> packed = effective_strides(DmlTensorDesc{desc.type, desc.sizes, {}, 0, nullptr});
  for (size_t d = 0; d < desc.sizes.size(); ++d) {
    if (desc.sizes[d] != 1 && desc.strides[d] != packed[d]) return false;
  }
  return true;
}

Result<Plan> plan_directml(const OperatorRules& rules, const DmlTensorDesc& input, const DmlTensorDesc& scale,
                           const DmlTensorDesc* zero_point, const DmlTensorDesc& output, DmlFeatureLevel level) {
  const std::string op = rules.name;
  if (!is_known_level(level)) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%X", static_cast<unsigned>(level));
    return Status::invalid_argument(op + ": feature level " + hex + " is not a DML_FEATURE_LEVEL (0x1000 for 1_0 to " +
                                    "0x6400 for 6_4, as DirectML numbers them)");
  }
  const std::array<Tensor, 4> tensors = {Tensor{"InputTensor", &input}, Tensor{"ScaleTensor", &scale},
                                         Tensor{"ZeroPointTensor", zero_point}, Tensor{"OutputTensor", &output}};
  const std::string prefix = op + " (" + dml_feature_level_name(level) + "): ";
  std::optional<std::string> overlap;
  if (std::string violation = Checker(rules, level, tensors, overlap).first_violation(); !violation.empty()) {
    std::string verdict = "; no DML_FEATURE_LEVEL accepts this description";
    for (DmlFeatureLevel other : kLevels) {
      if (Checker(rules, other, tensors, overlap).first_violation().empty()) {
        verdict = "; " + dml_feature_level_name(other) + " accepts this description";
        break;
      }
    }
    return Status::invalid_argument(prefix + violation + verdict);
  }
  // The binding: inputs have buffers, the output's comes with execute().
  for (const Tensor& t : tensors) {
    if (t.desc == nullptr) continue;
    const bool is_output = t.desc == &output;
    if (is_output && t.desc->data != nullptr) {
      return Status::invalid_argument(prefix + "OutputTensor has a data pointer; the output buffer is given to "
                                               "execute(), so the description's must be null");
    }
    if (!is_output && t.desc->data == nullptr) {
      return Status::invalid_argument(prefix + t.role + " has a null data pointer");
    }
  }

  Plan plan;
  plan.operation = rules.operation;
  plan.operator_name = op;
  plan.granularity = Granularity::kElementwise;
  plan.shape.assign(input.sizes.begin(), input.sizes.end());
  plan.element_count = 1;
  for (int64_t size : input.sizes) plan.element_count *= static_cast<uint64_t>(size);
  plan.x = TensorView{input.type, input.sizes, input.data};
  plan.scale = TensorView{scale.type, scale.sizes, scale.data};
  plan.has_zero_point = zero_point != nullptr;
  plan.apply_zero_point = plan.has_zero_point;
  if (zero_point != nullptr) plan.zero_point = TensorView{zero_point->type, zero_point->sizes, zero_point->data};
  plan.output_type = output.type;
  if (rules.operation == Operation::kQuantize) {
    plan.precision = scale.type == E::kFloat16 ? Precision::kFloat16 : Precision::kFloat32;
    plan.saturate = true;
  }

  const std::vector<int64_t> scale_strides = effective_strides(scale);
  const std::vector<int64_t> zero_point_strides = zero_point ? effective_strides(*zero_point) : std::vector<int64_t>{};
  const Layout layout = operand_layout(input.sizes, scale_strides, zero_point ? &zero_point_strides : nullptr);
  const Layout runs = exec::canonical_layout(layout);
  if (is_packed(input) && is_packed(output) && runs_follow(runs)) {
    plan.layout = runs;  // the same runs as the ONNX doors' per-tensor, per-axis and blocked plans
  } else {
    plan.layout = layout;
    plan.x_strides = effective_strides(input);
    plan.y_strides = effective_strides(output);
  }
  return plan;
}

}  // namespace

std::span<const DmlFeatureLevel> dml_feature_levels() { return kLevels; }

std::string dml_feature_level_name(DmlFeatureLevel level) {
  const auto value = static_cast<uint32_t>(level);
  if (!is_known_level(level)) return "feature level " + std::to_string(static_cast<int32_t>(level));
  return "DML_FEATURE_LEVEL_" + std::to_string(value >> 12) + "_" + std::to_string((value >> 8) & 0xF);
}

std::optional<DmlFeatureLevel> parse_dml_feature_level(std::string_view text) {
  constexpr std::string_view kPrefix = "DML_FEATURE_LEVEL_";
  if (text.substr(0, kPrefix.size()) == kPrefix) text.remove_prefix(kPrefix.size());
  if (text.size() != 3 || (text[1] != '_' && text[1] != '.') || text[0] < '0' || text[0] > '9' || text[2] < '0' ||
      text[2] > '9') {
    return std::nullopt;
  }
  const auto level = static_cast<DmlFeatureLevel>(((text[0] - '0') << 12) | ((text[2] - '0') << 8));
  if (!is_known_level(level)) return std::nullopt;
  return level;
}

uint64_t dml_calc_buffer_tensor_size(ElementType type, std::span<const int64_t> sizes,
                                     std::span<const int64_t> strides) {
  const ElementTypeInfo* type_info = find_element_type_info(type);
  if (type_info == nullptr || (!strides.empty() && strides.size() != sizes.size())) return 0;
  // Every step stays below 2^64: sizes and strides below 2^32, the running totals below 2^32.
  uint64_t last = 0, packed = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    const int64_t stride = strides.empty() ? static_cast<int64_t>(packed) : strides[d];
    if (sizes[d] < 1 || sizes[d] > kMaxUint || stride < 0 || stride > kMaxUint) return 0;
    last += static_cast<uint64_t>(sizes[d] - 1) * static_cast<uint64_t>(stride);
    packed *= static_cast<uint64_t>(sizes[d]);
    if (last >= kMaxBufferElements || packed > kMaxBufferElements) return 0;
  }
  const uint64_t bytes = storage_bytes(type, last + 1);
  return (bytes + 3) / 4 * 4;
}

Result<Plan> plan_directml_quantize_linear(const DmlTensorDesc& input, const DmlTensorDesc& scale,
                                           const DmlTensorDesc* zero_point, const DmlTensorDesc& output,
                                           DmlFeatureLevel level) {
  return plan_directml(quantize_rules(), input, scale, zero_point, output, level);
}

Result<Plan> plan_directml_dequantize_linear(const DmlTensorDesc& input, const DmlTensorDesc& scale,
                                             const DmlTensorDesc* zero_point, const DmlTensorDesc& output,
                                             DmlFeatureLevel level) {
  return plan_directml(dequantize_rules(), input, scale, zero_point, output, level);
}

}  // namespace qdq
