// qdq: DirectML DML_ELEMENT_WISE_QUANTIZE_LINEAR / DML_ELEMENT_WISE_DEQUANTIZE_LINEAR operator
// descriptions, taken as DirectML states them (docs/semantics.md, "DirectML descriptions").
//
// Each of the four tensors is a DML_BUFFER_TENSOR_DESC: a data type, Sizes (all four equal, 1 to 8
// dimensions by feature level), optional Strides in elements (0 repeats an element: that is how
// DirectML broadcasts a scale or zero point) and TotalTensorSizeInBytes. The planner checks the
// description against the operator's "Tensor support" table for one DML_FEATURE_LEVEL and returns
// a Plan for execute(); the output buffer is bound there, as DirectML binds it at dispatch.
//
// plan_elementwise_quantize_linear (qdq.hpp) is the numpy-style convenience door: size-1 dimensions
// broadcast, every tensor packed, no feature level.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qdq/qdq.hpp"

namespace qdq {

// DML_FEATURE_LEVEL, with DirectML's own values (a caller's DML_FEATURE_LEVEL converts as is).
enum class DmlFeatureLevel : int32_t {
  k1_0 = 0x1000,
  k2_0 = 0x2000,
  k2_1 = 0x2100,
  k3_0 = 0x3000,
  k3_1 = 0x3100,
  k4_0 = 0x4000,
  k4_1 = 0x4100,
  k5_0 = 0x5000,
  k5_1 = 0x5100,
  k5_2 = 0x5200,
  k6_0 = 0x6000,
  k6_1 = 0x6100,
  k6_2 = 0x6200,
  k6_3 = 0x6300,
  k6_4 = 0x6400,
};

// The highest level the element-wise operators' tables name; the default everywhere.
inline constexpr DmlFeatureLevel kDmlDefaultFeatureLevel = DmlFeatureLevel::k6_2;

// Every DML_FEATURE_LEVEL, lowest first.
QDQ_API std::span<const DmlFeatureLevel> dml_feature_levels();
// "DML_FEATURE_LEVEL_6_2"; an unknown value as its number.
QDQ_API std::string dml_feature_level_name(DmlFeatureLevel level);
// Parses "6_2", "6.2" or "DML_FEATURE_LEVEL_6_2".
QDQ_API std::optional<DmlFeatureLevel> parse_dml_feature_level(std::string_view text);

// A DML_BUFFER_TENSOR_DESC plus the buffer it describes. Sizes and strides count elements.
struct DmlTensorDesc {
  ElementType type = ElementType::kUndefined;  // DML_TENSOR_DATA_TYPE as the TensorProto code
  std::span<const int64_t> sizes;
  std::span<const int64_t> strides;  // empty: packed row-major ("Strides" NULL)
  // The buffer's size in bytes; at least DMLCalcBufferTensorSize (the last addressed element's
  // end, rounded up to 4 bytes). 0: exactly that.
  uint64_t total_tensor_size_in_bytes = 0;
  // The input's buffer; must stay null for OutputTensor, whose buffer execute() receives.
  const void* data = nullptr;
};

// DMLCalcBufferTensorSize: (1 + sum((size_d - 1) * stride_d)) * element bytes, rounded up to a
// multiple of 4. 0 for what DirectML cannot describe: an unknown type, strides of another count,
// a size outside 1..2^32-1, a stride outside 0..2^32-1, more than 2^32-1 elements.
QDQ_API uint64_t dml_calc_buffer_tensor_size(ElementType type, std::span<const int64_t> sizes,
                                             std::span<const int64_t> strides);

// zero_point may be null from DML_FEATURE_LEVEL_6_2 (no zero point: 0). y for execute(): the
// output's type, `sizes` as shape, and a buffer of output's TotalTensorSizeInBytes.
QDQ_API Result<Plan> plan_directml_quantize_linear(const DmlTensorDesc& input, const DmlTensorDesc& scale,
                                                   const DmlTensorDesc* zero_point, const DmlTensorDesc& output,
                                                   DmlFeatureLevel level = kDmlDefaultFeatureLevel);
QDQ_API Result<Plan> plan_directml_dequantize_linear(const DmlTensorDesc& input, const DmlTensorDesc& scale,
                                                     const DmlTensorDesc* zero_point, const DmlTensorDesc& output,
                                                     DmlFeatureLevel level = kDmlDefaultFeatureLevel);

}  // namespace qdq
