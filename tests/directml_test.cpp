// DirectML operator descriptions (include/qdq/directml.hpp):
//  - every DML_FEATURE_LEVEL x tensor x data type x rank 1..9 against this file's own transcription
//    of the two operators' "Tensor support" tables and "Tensor constraints" (docs/semantics.md
//    gives the sources), each rejection naming the lowest level that accepts the description;
//  - strided and 0-stride descriptions against the same computation on dense, broadcast-expanded
//    tensors through the reference, bit for bit, on every SIMD target, with every buffer exactly
//    as large as its description and y's unaddressed bytes left alone;
//  - DML_BUFFER_TENSOR_DESC rules (Strides, TotalTensorSizeInBytes, overlapping outputs).
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "qdq/directml.hpp"
#include "types/codec.h"

namespace qdq {
namespace {

using E = ElementType;
using L = DmlFeatureLevel;

// ---- The tables, transcribed independently of src/plan/directml_desc.cpp -------------------------

enum Role { kInput, kScale, kZeroPoint, kOutput };
const char* const kRoleNames[] = {"InputTensor", "ScaleTensor", "ZeroPointTensor", "OutputTensor"};

// One "DML_FEATURE_LEVEL_x_y and above" table: types per role, the dimension counts, whether the
// zero point may be null.
struct Row {
  int level;  // DirectML's value, 0x6200 = 6.2
  bool four_dims_only;
  std::vector<E> types[4];
  bool optional_zero_point;
};

const std::vector<E> kInts = {E::kInt32, E::kInt16, E::kInt8, E::kUint32, E::kUint16, E::kUint8};

const std::vector<Row>& quantize_table() {  // DML_ELEMENT_WISE_QUANTIZE_LINEAR_OPERATOR_DESC
  static const std::vector<Row> rows = {
      {0x6200, false, {{E::kFloat32, E::kFloat16, E::kInt32}, {E::kFloat32, E::kFloat16}, {E::kInt8, E::kUint8}, {E::kInt8, E::kUint8}}, true},
      {0x6000, false, {{E::kFloat32, E::kFloat16, E::kInt32}, {E::kFloat32, E::kFloat16}, {E::kInt8, E::kUint8}, {E::kInt8, E::kUint8}}, false},
      {0x3000, false, {{E::kFloat32, E::kInt32}, {E::kFloat32}, {E::kInt8, E::kUint8}, {E::kInt8, E::kUint8}}, false},
      {0x2100, true, {{E::kFloat32, E::kInt32}, {E::kFloat32}, {E::kInt8, E::kUint8}, {E::kInt8, E::kUint8}}, false},
      {0x1000, true, {{E::kFloat32}, {E::kFloat32}, {E::kUint8}, {E::kUint8}}, false},
  };
  return rows;
}

const std::vector<Row>& dequantize_table() {  // DML_ELEMENT_WISE_DEQUANTIZE_LINEAR_OPERATOR_DESC
  static const std::vector<Row> rows = {
      {0x6200, false, {kInts, {E::kFloat32, E::kFloat16}, kInts, {E::kFloat32, E::kFloat16}}, true},
      {0x6000, false, {kInts, {E::kFloat32, E::kFloat16}, kInts, {E::kFloat32, E::kFloat16}}, false},
      {0x3000, false, {kInts, {E::kFloat32}, kInts, {E::kFloat32}}, false},
      {0x2100, true, {kInts, {E::kFloat32}, kInts, {E::kFloat32}}, false},
      {0x1000, true, {{E::kUint8}, {E::kFloat32}, {E::kUint8}, {E::kFloat32}}, false},
  };
  return rows;
}

bool has(const std::vector<E>& types, E type) { return std::find(types.begin(), types.end(), type) != types.end(); }

// types[kZeroPoint] == kUndefined: no zero point.
bool oracle_accepts(bool quantize, int level, int rank, const E types[4]) {
  const std::vector<Row>& table = quantize ? quantize_table() : dequantize_table();
  const Row* row = nullptr;
  for (const Row& r : table) {  // highest first: the first not above the level
    if (r.level <= level) {
      row = &r;
      break;
    }
  }
  if (row == nullptr) return false;
  if (row->four_dims_only ? rank != 4 : (rank < 1 || rank > 8)) return false;
  const bool zero_point = types[kZeroPoint] != E::kUndefined;
  if (!zero_point && !row->optional_zero_point) return false;
  for (int role = 0; role < 4; ++role) {
    if (role == kZeroPoint && !zero_point) continue;
    if (!has(row->types[role], types[role])) return false;
  }
  if (quantize) {
    // ScaleTensor: FLOAT32 for an INT32 input, else the input's type; OutputTensor and
    // ZeroPointTensor of one DataType.
    if (types[kScale] != (types[kInput] == E::kInt32 ? E::kFloat32 : types[kInput])) return false;
    if (zero_point && types[kZeroPoint] != types[kOutput]) return false;
  } else {
    if (zero_point && types[kZeroPoint] != types[kInput]) return false;
    if (types[kOutput] != types[kScale]) return false;
  }
  return true;
}

std::string level_text(int level) {
  return "DML_FEATURE_LEVEL_" + std::to_string(level >> 12) + "_" + std::to_string((level >> 8) & 0xF);
}

// The other tensors' types when `role` takes `type`: the partners the constraints pair it with.
void partner_types(bool quantize, Role role, E type, E types[4]) {
  if (quantize) {
    types[kInput] = E::kFloat32;
    types[kScale] = E::kFloat32;
    types[kZeroPoint] = types[kOutput] = E::kUint8;
    if (role == kInput || role == kScale) types[kInput] = types[kScale] = type == E::kFloat16 ? E::kFloat16 : E::kFloat32;
    if (role == kZeroPoint || role == kOutput) types[kZeroPoint] = types[kOutput] = type;
  } else {
    types[kInput] = types[kZeroPoint] = E::kUint8;
    types[kScale] = types[kOutput] = E::kFloat32;
    if (role == kInput || role == kZeroPoint) types[kInput] = types[kZeroPoint] = type;
    if (role == kScale || role == kOutput) types[kScale] = types[kOutput] = type;
  }
  types[role] = type;
}

Result<Plan> plan_for(bool quantize, L level, int rank, const E types[4], const void* data) {
  static const std::vector<int64_t> sizes_of_rank = {2, 1, 3, 1, 2, 1, 1, 2, 1};
  const std::span<const int64_t> sizes(sizes_of_rank.data(), static_cast<size_t>(rank));
  const DmlTensorDesc input{types[kInput], sizes, {}, 0, data};
  const DmlTensorDesc scale{types[kScale], sizes, {}, 0, data};
  const DmlTensorDesc zero_point{types[kZeroPoint], sizes, {}, 0, data};
  const DmlTensorDesc output{types[kOutput], sizes, {}, 0, nullptr};
  const DmlTensorDesc* zp = types[kZeroPoint] == E::kUndefined ? nullptr : &zero_point;
  return quantize ? plan_directml_quantize_linear(input, scale, zp, output, level)
                  : plan_directml_dequantize_linear(input, scale, zp, output, level);
}

// Checks one description: accepted iff the transcription says so; a rejection names the requested
// level, a tensor, and the lowest level that accepts (or that none does).
void check_description(bool quantize, L level, int rank, const E types[4], const void* data, int* checked) {
  const Result<Plan> plan = plan_for(quantize, level, rank, types, data);
  const bool expected = oracle_accepts(quantize, static_cast<int>(level), rank, types);
  const std::string where = std::string(quantize ? "quantize" : "dequantize") + " at " +
                            level_text(static_cast<int>(level)) + ", rank " + std::to_string(rank) + ", types " +
                            std::string(name(types[0])) + "/" + std::string(name(types[1])) + "/" +
                            (types[2] == E::kUndefined ? std::string("none") : std::string(name(types[2]))) + "/" +
                            std::string(name(types[3]));
  ++*checked;
  ASSERT_EQ(plan.ok(), expected) << where << ": " << plan.status().message();
  if (expected) {
    EXPECT_EQ(plan->output_type, types[kOutput]) << where;
    return;
  }
  const std::string& message = plan.status().message();
  EXPECT_NE(message.find("(" + level_text(static_cast<int>(level)) + ")"), std::string::npos) << where << ": " << message;
  bool names_tensor = false;
  for (const char* role : kRoleNames) names_tensor |= message.find(role) != std::string::npos;
  EXPECT_TRUE(names_tensor) << where << ": " << message;
  std::string verdict = "no DML_FEATURE_LEVEL accepts this description";
  for (DmlFeatureLevel other : dml_feature_levels()) {
    if (oracle_accepts(quantize, static_cast<int>(other), rank, types)) {
      verdict = level_text(static_cast<int>(other)) + " accepts this description";
      break;
    }
  }
  EXPECT_NE(message.find(verdict), std::string::npos) << where << ": " << message << "\nexpected: " << verdict;
}

TEST(DirectMLFeatureLevels, EveryLevelTensorTypeAndRankAgainstTheTables) {
  static const uint8_t data[4096] = {};
  int checked = 0, accepted_somewhere = 0;
  for (bool quantize : {true, false}) {
    for (DmlFeatureLevel level : dml_feature_levels()) {
      for (int rank = 1; rank <= 9; ++rank) {
        for (Role role : {kInput, kScale, kZeroPoint, kOutput}) {
          for (const ElementTypeInfo& type : all_element_types()) {
            E types[4];
            partner_types(quantize, role, type.type, types);
            check_description(quantize, level, rank, types, data, &checked);
            accepted_somewhere += oracle_accepts(quantize, static_cast<int>(level), rank, types);
          }
        }
        // No zero point, with each output type the tables name.
        for (E output : {E::kUint8, E::kInt8, E::kFloat32, E::kFloat16}) {
          E types[4];
          partner_types(quantize, kOutput, output, types);
          types[kZeroPoint] = E::kUndefined;
          check_description(quantize, level, rank, types, data, &checked);
        }
      }
    }
  }
  EXPECT_EQ(checked, 2 * 15 * 9 * (4 * static_cast<int>(all_element_types().size()) + 4));
  EXPECT_GT(accepted_somewhere, 0);
}

TEST(DirectMLFeatureLevels, ConstraintsBetweenTensors) {
  static const uint8_t data[4096] = {};
  int checked = 0;
  // Quantize: INT32 input needs FLOAT32 scale; FLOAT16 input needs FLOAT16 scale; zero point and
  // output of one type. Dequantize: zero point of the input's type, output of the scale's.
  const E quantize_cases[][4] = {{E::kInt32, E::kFloat16, E::kUint8, E::kUint8},
                                 {E::kFloat16, E::kFloat32, E::kUint8, E::kUint8},
                                 {E::kFloat32, E::kFloat16, E::kUint8, E::kUint8},
                                 {E::kFloat32, E::kFloat32, E::kInt8, E::kUint8},
                                 {E::kInt32, E::kFloat32, E::kInt8, E::kInt8}};
  const E dequantize_cases[][4] = {{E::kUint8, E::kFloat32, E::kInt8, E::kFloat32},
                                   {E::kInt16, E::kFloat16, E::kInt16, E::kFloat32},
                                   {E::kUint32, E::kFloat16, E::kUint32, E::kFloat16}};
  for (DmlFeatureLevel level : dml_feature_levels()) {
    for (const auto& types : quantize_cases) check_description(true, level, 4, types, data, &checked);
    for (const auto& types : dequantize_cases) check_description(false, level, 4, types, data, &checked);
  }
  EXPECT_EQ(checked, 15 * 8);
}

TEST(DirectMLFeatureLevels, NamesAndParsing) {
  EXPECT_EQ(dml_feature_level_name(L::k6_2), "DML_FEATURE_LEVEL_6_2");
  EXPECT_EQ(dml_feature_level_name(L::k1_0), "DML_FEATURE_LEVEL_1_0");
  EXPECT_EQ(parse_dml_feature_level("6.2"), L::k6_2);
  EXPECT_EQ(parse_dml_feature_level("2_1"), L::k2_1);
  EXPECT_EQ(parse_dml_feature_level("DML_FEATURE_LEVEL_3_0"), L::k3_0);
  EXPECT_FALSE(parse_dml_feature_level("2.2").has_value());
  EXPECT_FALSE(parse_dml_feature_level("7.0").has_value());
  EXPECT_FALSE(parse_dml_feature_level("").has_value());
  EXPECT_EQ(dml_feature_levels().size(), 15u);
  const std::vector<int64_t> sizes = {2, 3};
  const uint8_t data[8] = {};
  const DmlTensorDesc x{E::kFloat32, sizes, {}, 0, data};
  const DmlTensorDesc y{E::kUint8, sizes, {}, 0, nullptr};
  const Result<Plan> bad = plan_directml_quantize_linear(x, x, nullptr, y, static_cast<L>(0x6250));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("0x6250"), std::string::npos) << bad.status().message();
}

// ---- DML_BUFFER_TENSOR_DESC rules ----------------------------------------------------------------

TEST(DirectMLBufferTensors, CalcBufferTensorSizeAsDirectMLDefinesIt) {
  const std::vector<int64_t> sizes = {1, 1, 3, 3};
  EXPECT_EQ(dml_calc_buffer_tensor_size(E::kFloat16, sizes, {}), 20u);  // 18 bytes, rounded up to 4
  EXPECT_EQ(dml_calc_buffer_tensor_size(E::kUint8, sizes, {}), 12u);    // 9 -> 12
  const std::vector<int64_t> padded = {9, 9, 4, 1};                     // rows of 4 in a row of 3 elements
  EXPECT_EQ(dml_calc_buffer_tensor_size(E::kFloat32, sizes, padded), (2 * 4 + 2 + 1) * 4u);
  const std::vector<int64_t> broadcast = {0, 0, 0, 0};
  EXPECT_EQ(dml_calc_buffer_tensor_size(E::kUint8, sizes, broadcast), 4u);
  // Beyond DirectML's limits: 0, never an overflowed size.
  const std::vector<int64_t> too_many = {int64_t{1} << 31, 4};
  EXPECT_EQ(dml_calc_buffer_tensor_size(E::kUint8, too_many, {}), 0u);
  const std::vector<int64_t> huge = {4294967295, 4294967295, 4294967295, 4294967295,
                                     4294967295, 4294967295, 4294967295, 4294967295};
  EXPECT_EQ(dml_calc_buffer_tensor_size(E::kFloat32, huge, {}), 0u);
  EXPECT_EQ(dml_calc_buffer_tensor_size(E::kFloat32, huge, huge), 0u);
  const std::vector<int64_t> negative = {-1, 1, 1, 1};
  EXPECT_EQ(dml_calc_buffer_tensor_size(E::kUint8, sizes, negative), 0u);
  const std::vector<int64_t> three = {1, 1, 1};
  EXPECT_EQ(dml_calc_buffer_tensor_size(E::kUint8, sizes, three), 0u);
  EXPECT_EQ(dml_calc_buffer_tensor_size(static_cast<E>(99), sizes, {}), 0u);
}

std::string plan_error(const DmlTensorDesc& x, const DmlTensorDesc& scale, const DmlTensorDesc* zp,
                       const DmlTensorDesc& y, L level = L::k6_2) {
  const Result<Plan> plan = plan_directml_quantize_linear(x, scale, zp, y, level);
  return plan.ok() ? std::string("accepted") : plan.status().message();
}

TEST(DirectMLBufferTensors, RejectsWhatDirectMLRejects) {
  const std::vector<int64_t> sizes = {2, 3};
  const std::vector<int64_t> zeros = {0, 0};
  const std::vector<float> values(6, 1.0f);
  const DmlTensorDesc x{E::kFloat32, sizes, {}, 0, values.data()};
  const DmlTensorDesc scale{E::kFloat32, sizes, zeros, 0, values.data()};
  const DmlTensorDesc y{E::kUint8, sizes, {}, 0, nullptr};
  EXPECT_EQ(plan_error(x, scale, nullptr, y), "accepted");

  const std::vector<int64_t> three = {0, 0, 0};
  DmlTensorDesc wrong_count = scale;
  wrong_count.strides = three;
  EXPECT_NE(plan_error(x, wrong_count, nullptr, y).find("ScaleTensor has 3 Strides"), std::string::npos);

  const std::vector<int64_t> negative = {-3, 1};
  DmlTensorDesc negative_stride = x;
  negative_stride.strides = negative;
  EXPECT_NE(plan_error(negative_stride, scale, nullptr, y).find("stride -3; DirectML strides are unsigned"),
            std::string::npos);

  // TotalTensorSizeInBytes: at least DMLCalcBufferTensorSize (6 float32: 24) and a multiple of 4.
  const std::pair<uint64_t, std::string> total_sizes[] = {
      {20, "TotalTensorSizeInBytes 20 but its Sizes and Strides need 24"}, {26, "multiples of 4"}, {64, "accepted"}};
  for (const auto& [bytes, verdict] : total_sizes) {
    DmlTensorDesc sized = x;
    sized.total_tensor_size_in_bytes = bytes;
    EXPECT_NE(plan_error(sized, scale, nullptr, y).find(verdict), std::string::npos) << plan_error(sized, scale, nullptr, y);
  }
  // Output strides: each element its own location ({1, 1} puts (0, 1) and (1, 0) at offset 1; {2, 1}
  // interleaves the two rows at offsets 0, 1, 2 and 2, 3, 4).
  const std::pair<std::vector<int64_t>, std::string> output_strides[] = {
      {{1, 1}, "gives output elements [0, 1] and [1, 0] the same location (element offset 1)"},
      {{0, 0}, "gives output elements [0, 0] and [1, 0] the same location (element offset 0)"},
      {{3, 0}, "gives output elements [0, 0] and [0, 1] the same location (element offset 0)"},
      {{2, 1}, "gives output elements [0, 2] and [1, 0] the same location (element offset 2)"},
      {{1, 2}, "accepted"},
      {{4, 1}, "accepted"}};
  for (const auto& [strides, verdict] : output_strides) {
    DmlTensorDesc strided = y;
    strided.strides = strides;
    EXPECT_NE(plan_error(x, scale, nullptr, strided).find(verdict), std::string::npos) << plan_error(x, scale, nullptr, strided);
  }
  // Past 2^20 elements an interleaved output is not checked offset by offset: refused, saying so.
  const std::vector<int64_t> large = {1025, 1024}, large_strides = {1, 1024};
  const DmlTensorDesc large_x{E::kFloat32, large, {}, 0, values.data()};
  const DmlTensorDesc large_scale{E::kFloat32, large, zeros, 0, values.data()};
  const DmlTensorDesc large_y{E::kUint8, large, large_strides, 0, nullptr};
  EXPECT_NE(plan_error(large_x, large_scale, nullptr, large_y)
                .find("qdq cannot show that each output element has its own location: ordered by stride, dimension "
                      "1's stride 1024 does not pass the offset the smaller strides reach (1024)"),
            std::string::npos)
      << plan_error(large_x, large_scale, nullptr, large_y);

  const std::vector<int64_t> zero_size = {2, 0};
  DmlTensorDesc empty = x;
  empty.sizes = zero_size;
  EXPECT_NE(plan_error(empty, scale, nullptr, y).find("a size of zero is invalid"), std::string::npos);

  const std::vector<int64_t> broadcast_shape = {1, 3};
  DmlTensorDesc numpy_style = scale;
  numpy_style.sizes = broadcast_shape;
  numpy_style.strides = {};
  EXPECT_NE(plan_error(x, numpy_style, nullptr, y).find("same DimensionCount and Sizes (broadcast with a stride of 0)"),
            std::string::npos);

  DmlTensorDesc output_with_data = y;
  output_with_data.data = values.data();
  EXPECT_NE(plan_error(x, scale, nullptr, output_with_data).find("must be null"), std::string::npos);
  DmlTensorDesc no_data = x;
  no_data.data = nullptr;
  EXPECT_NE(plan_error(no_data, scale, nullptr, y).find("InputTensor has a null data pointer"), std::string::npos);

  const std::vector<int64_t> huge = {1 << 20, 1 << 13};  // 2^33 elements
  DmlTensorDesc too_many = x;
  too_many.sizes = huge;
  DmlTensorDesc huge_scale = scale;
  huge_scale.sizes = huge;
  DmlTensorDesc huge_y = y;
  huge_y.sizes = huge;
  EXPECT_NE(plan_error(too_many, huge_scale, nullptr, huge_y).find("2^32 - 1"), std::string::npos);
  const std::vector<int64_t> eight_huge(8, 4294967295);  // packed strides would overflow int64
  DmlTensorDesc huge_x = x, huge_s = scale, huge_out = y;
  huge_x.sizes = huge_s.sizes = huge_out.sizes = eight_huge;
  huge_s.strides = {};
  EXPECT_NE(plan_error(huge_x, huge_s, nullptr, huge_out).find("more than 2^32 - 1 elements"), std::string::npos)
      << plan_error(huge_x, huge_s, nullptr, huge_out);
}

// ---- Arithmetic: strided descriptions against dense, broadcast-expanded tensors ---------------------

// One tensor of a description: sizes shared, its own strides, a buffer exactly as large as
// DMLCalcBufferTensorSize says.
struct Buffer {
  std::vector<int64_t> strides;  // empty: packed
  std::vector<uint8_t> bytes;
};

std::vector<int64_t> packed_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t stride = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= sizes[d];
  }
  return strides;
}

uint64_t offset_of(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, uint64_t i) {
  uint64_t offset = 0;
  for (size_t d = sizes.size(); d-- > 0;) {
    offset += (i % static_cast<uint64_t>(sizes[d])) * static_cast<uint64_t>(strides[d]);
    i /= static_cast<uint64_t>(sizes[d]);
  }
  return offset;
}

struct Case {
  const char* what;
  std::vector<int64_t> sizes;
  std::vector<int64_t> x, scale, zero_point, y;  // strides; empty = packed
  bool has_zero_point = true;
};

// Codes per type: positive, well-scaled scales; x of every kind of value.
uint32_t random_code(E type, bool is_scale, std::mt19937& g) {
  if (is_scale) {
    const float scale = std::ldexp(1.0f + static_cast<float>(g() % 1000) / 1000.0f, static_cast<int>(g() % 12) - 6);
    return type == E::kFloat32 ? std::bit_cast<uint32_t>(scale)
                               : codec::encode_float(info(type), scale, codec::Overflow::kInfOrNan);
  }
  if (type == E::kFloat32) {
    return g() % 16 == 0 ? static_cast<uint32_t>(g())
                         : std::bit_cast<uint32_t>(static_cast<float>(static_cast<int>(g() % 20001) - 10000) / 37.0f);
  }
  if (type == E::kFloat16) {
    return codec::encode_float(info(type), static_cast<float>(static_cast<int>(g() % 2001) - 1000) / 7.0f,
                               codec::Overflow::kInfOrNan);
  }
  const int bits = info(type).bits;
  return static_cast<uint32_t>(g()) & (bits == 32 ? 0xFFFFFFFFu : (1u << bits) - 1u);
}

void fill(Buffer* buffer, E type, const std::vector<int64_t>& sizes, bool is_scale, std::mt19937& g) {
  buffer->bytes.assign(dml_calc_buffer_tensor_size(type, sizes, buffer->strides), 0);
  const uint64_t elements = buffer->bytes.size() / static_cast<uint64_t>(info(type).bytes_per_element());
  for (uint64_t i = 0; i < elements; ++i) codec::store_code(buffer->bytes.data(), info(type), i, random_code(type, is_scale, g));
}

// The same tensor packed at full size: element i from its strided location.
std::vector<uint8_t> expanded(const Buffer& buffer, E type, const std::vector<int64_t>& sizes, uint64_t count) {
  const std::vector<int64_t> strides = buffer.strides.empty() ? packed_strides(sizes) : buffer.strides;
  std::vector<uint8_t> bytes(storage_bytes(type, count));
  for (uint64_t i = 0; i < count; ++i) {
    codec::store_code(bytes.data(), info(type), i, codec::load_code(buffer.bytes.data(), info(type), offset_of(sizes, strides, i)));
  }
  return bytes;
}

int g_gathered_plans = 0;  // plans that ran through the gathered path

void check_case(const Case& c, bool quantize, E x_type, E scale_type, E y_type, std::mt19937& g, int* compared) {
  const E zp_type = quantize ? y_type : x_type;
  uint64_t count = 1;
  for (int64_t s : c.sizes) count *= static_cast<uint64_t>(s);
  Buffer x{c.x, {}}, scale{c.scale, {}}, zp{c.zero_point, {}}, y{c.y, {}};
  fill(&x, x_type, c.sizes, false, g);
  fill(&scale, scale_type, c.sizes, true, g);
  fill(&zp, zp_type, c.sizes, false, g);
  y.bytes.assign(dml_calc_buffer_tensor_size(y_type, c.sizes, y.strides), 0xA5);  // 0xA5: never written

  const DmlTensorDesc x_desc{x_type, c.sizes, c.x, 0, x.bytes.data()};
  const DmlTensorDesc scale_desc{scale_type, c.sizes, c.scale, 0, scale.bytes.data()};
  const DmlTensorDesc zp_desc{zp_type, c.sizes, c.zero_point, 0, zp.bytes.data()};
  const DmlTensorDesc y_desc{y_type, c.sizes, c.y, 0, nullptr};
  const DmlTensorDesc* zp_or_null = c.has_zero_point ? &zp_desc : nullptr;
  const Result<Plan> plan = quantize ? plan_directml_quantize_linear(x_desc, scale_desc, zp_or_null, y_desc)
                                     : plan_directml_dequantize_linear(x_desc, scale_desc, zp_or_null, y_desc);
  ASSERT_TRUE(plan.ok()) << c.what << ": " << plan.status().message();
  g_gathered_plans += !plan->x_strides.empty();

  // The dense computation: every operand expanded to x's size, through the numpy-style door and the
  // scalar reference.
  const std::vector<uint8_t> x_dense = expanded(x, x_type, c.sizes, count);
  const std::vector<uint8_t> scale_dense = expanded(scale, scale_type, c.sizes, count);
  const std::vector<uint8_t> zp_dense = expanded(zp, zp_type, c.sizes, count);
  const TensorView x_view{x_type, c.sizes, x_dense.data()};
  const TensorView scale_view{scale_type, c.sizes, scale_dense.data()};
  const TensorView zp_view{zp_type, c.sizes, zp_dense.data()};
  const TensorView* zp_view_or_null = c.has_zero_point ? &zp_view : nullptr;
  const Result<Plan> dense = quantize ? plan_elementwise_quantize_linear(x_view, scale_view, zp_view_or_null, y_type)
                                      : plan_elementwise_dequantize_linear(x_view, scale_view, zp_view_or_null, y_type);
  ASSERT_TRUE(dense.ok()) << dense.status().message();
  std::vector<uint8_t> expected(storage_bytes(y_type, count));
  ASSERT_TRUE(execute(dense.value(), MutableTensorView{y_type, c.sizes, expected.data()},
                      ExecuteOptions{ExecutionPath::kReference, {}}).ok());

  const std::vector<int64_t> y_strides = c.y.empty() ? packed_strides(c.sizes) : c.y;
  std::vector<bool> addressed(y.bytes.size(), false);
  const size_t y_bytes = static_cast<size_t>(info(y_type).bytes_per_element());
  for (uint64_t i = 0; i < count; ++i) {
    for (size_t b = 0; b < y_bytes; ++b) addressed[offset_of(c.sizes, y_strides, i) * y_bytes + b] = true;
  }
  auto check_output = [&](const char* path) {
    for (uint64_t i = 0; i < count; ++i) {
      const uint32_t got = codec::load_code(y.bytes.data(), info(y_type), offset_of(c.sizes, y_strides, i));
      const uint32_t want = codec::load_code(expected.data(), info(y_type), i);
      ASSERT_EQ(got, want) << c.what << " (" << path << ", " << name(x_type) << " -> " << name(y_type)
                           << "), element " << i;
    }
    for (size_t b = 0; b < y.bytes.size(); ++b) {
      if (!addressed[b]) ASSERT_EQ(y.bytes[b], 0xA5) << c.what << " (" << path << "): wrote unaddressed byte " << b;
    }
    ++*compared;
  };
  const MutableTensorView y_view{y_type, c.sizes, y.bytes.data()};
  ASSERT_TRUE(execute(plan.value(), y_view, ExecuteOptions{ExecutionPath::kReference, {}}).ok());
  check_output("reference");
  for (int64_t target : kernels::supported_targets()) {
    kernels::force_target(target);
    std::fill(y.bytes.begin(), y.bytes.end(), 0xA5);
    const Status status = execute(plan.value(), y_view);
    kernels::force_target(0);
    ASSERT_TRUE(status.ok()) << status.message();
    check_output(kernels::target_name(target).c_str());
  }
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"per-tensor by 0-strides", {4, 5, 6, 7}, {}, {0, 0, 0, 0}, {0, 0, 0, 0}, {}},
      {"per-axis by 0-strides", {2, 3, 4, 5}, {}, {0, 1, 0, 0}, {0, 1, 0, 0}, {}},
      {"per-axis, innermost", {6, 67}, {}, {0, 1}, {0, 1}, {}},
      {"blocked by 0-strides (rows of 8 blocks of 4)", {3, 8, 4}, {}, {8, 1, 0}, {8, 1, 0}, {}},
      {"blocked, no zero point", {5, 6, 3}, {}, {6, 1, 0}, {}, {}, false},
      {"zero point per-tensor, scale per-element transposed", {6, 9}, {}, {1, 6}, {0, 0}, {}},
      {"padded x and y rows (in place)", {3, 300}, {310, 1}, {0, 0}, {0, 0}, {305, 1}},
      {"padded short rows (gathered)", {7, 5}, {8, 1}, {0, 1}, {0, 1}, {6, 1}},
      {"transposed x", {5, 7}, {1, 5}, {0, 1}, {0, 1}, {}},
      {"x repeated by a 0-stride", {4, 6}, {0, 1}, {1, 0}, {1, 0}, {}},
      {"transposed y", {9, 4}, {}, {0, 0}, {0, 0}, {1, 9}},
      {"rank 8, every tensor strided", {2, 1, 3, 2, 1, 2, 3, 2}, {144, 7, 48, 24, 5, 12, 4, 2}, {0, 0, 1, 0, 0, 0, 0, 0},
       {0, 0, 0, 0, 0, 1, 0, 0}, {1, 9, 2, 6, 3, 12, 24, 72}},
      {"many tasks: 400 x 600 transposed x, per-axis", {400, 600}, {1, 400}, {1, 0}, {1, 0}, {}},
      // Offsets 0, 3, 2, 5, 4, 7: one to one, though dimension 1's stride does not pass the 4
      // dimension 0 reaches (the planner checks such outputs offset by offset).
      {"interleaved y", {3, 2}, {}, {0, 1}, {0, 1}, {2, 3}},
  };
  return all;
}

TEST(DirectMLArithmetic, StridedDescriptionsEqualDenseExpandedOnEveryTarget) {
  std::mt19937 g(20261122);
  int compared = 0;
  const int targets = static_cast<int>(kernels::supported_targets().size());
  for (const Case& c : cases()) {
    check_case(c, true, E::kFloat32, E::kFloat32, E::kUint8, g, &compared);
    check_case(c, true, E::kFloat16, E::kFloat16, E::kInt8, g, &compared);
    check_case(c, true, E::kInt32, E::kFloat32, E::kInt8, g, &compared);
    check_case(c, false, E::kUint8, E::kFloat32, E::kFloat32, g, &compared);
    check_case(c, false, E::kInt16, E::kFloat16, E::kFloat16, g, &compared);
    check_case(c, false, E::kUint32, E::kFloat32, E::kFloat32, g, &compared);
    check_case(c, false, E::kInt32, E::kFloat16, E::kFloat16, g, &compared);
  }
  EXPECT_EQ(compared, static_cast<int>(cases().size()) * 7 * (1 + targets));
  EXPECT_EQ(g_gathered_plans, 9 * 7);  // the cases from "zero point per-tensor, ..." on
}

// 0-stride per-tensor, per-axis and blocked descriptions become the ONNX doors' runs, not the
// gathered path.
TEST(DirectMLArithmetic, BroadcastsByStrideBecomeRuns) {
  const uint8_t data[4096] = {};
  auto layout_of = [&](std::vector<int64_t> sizes, std::vector<int64_t> scale_strides) {
    const DmlTensorDesc x{E::kUint8, sizes, {}, 0, data};
    const DmlTensorDesc scale{E::kFloat32, sizes, scale_strides, 0, data};
    const DmlTensorDesc y{E::kFloat32, sizes, {}, 0, nullptr};
    Result<Plan> plan = plan_directml_dequantize_linear(x, scale, nullptr, y);
    EXPECT_TRUE(plan.ok()) << plan.status().message();
    EXPECT_TRUE(plan->x_strides.empty() && plan->y_strides.empty());
    return plan->layout;
  };
  const Layout per_tensor = layout_of({4, 5, 6}, {0, 0, 0});
  EXPECT_EQ(per_tensor.rank, 1);
  EXPECT_EQ(per_tensor.dims[0], 120);
  EXPECT_EQ(per_tensor.scale_strides[0], 0);
  const Layout per_axis = layout_of({4, 5, 600}, {0, 1, 0});
  EXPECT_EQ(per_axis.rank, 3);
  EXPECT_EQ(per_axis.scale_strides[1], 1);
  const Layout blocked = layout_of({4, 8, 32}, {8, 1, 0});
  EXPECT_EQ(blocked.rank, 1);
  EXPECT_EQ(blocked.block_axis, 0);
  EXPECT_EQ(blocked.block_size, 32);
  EXPECT_EQ(blocked.dims[0], 4 * 8 * 32);
}

}  // namespace
}  // namespace qdq

namespace qdq {
namespace {

// Rows run in place past the streaming threshold (16 MiB of output): the kernels' non-temporal
// stores into a padded output, against the dense plan of the same values (whose kernels the
// suites above check against the reference).
TEST(DirectMLArithmetic, LargePaddedRowsStreamLikeDensePlans) {
  const int64_t rows = 4096, cols = 1024, pitch = 1040;
  const std::vector<int64_t> sizes = {rows, cols};
  const std::vector<int64_t> padded = {pitch, 1};
  const std::vector<int64_t> per_axis = {0, 1};
  std::mt19937 g(7);
  std::vector<uint8_t> x(static_cast<size_t>(rows * pitch));
  for (uint8_t& v : x) v = static_cast<uint8_t>(g());
  std::vector<float> scale(static_cast<size_t>(cols));
  for (float& s : scale) s = 0.01f + static_cast<float>(g() % 1000) / 997.0f;
  std::vector<float> y(static_cast<size_t>(rows * pitch), -1.0f);
  const DmlTensorDesc x_desc{E::kUint8, sizes, padded, 0, x.data()};
  const DmlTensorDesc scale_desc{E::kFloat32, sizes, per_axis, 0, scale.data()};
  const DmlTensorDesc y_desc{E::kFloat32, sizes, padded, 0, nullptr};
  const Result<Plan> plan = plan_directml_dequantize_linear(x_desc, scale_desc, nullptr, y_desc);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_TRUE(execute(plan.value(), MutableTensorView{E::kFloat32, sizes, y.data()}).ok());

  std::vector<uint8_t> x_dense(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) std::memcpy(&x_dense[r * cols], &x[r * pitch], cols);
  const std::vector<int64_t> scale_shape = {1, cols};
  const TensorView x_view{E::kUint8, sizes, x_dense.data()};
  const TensorView scale_view{E::kFloat32, scale_shape, scale.data()};
  const Result<Plan> dense = plan_elementwise_dequantize_linear(x_view, scale_view, nullptr);
  ASSERT_TRUE(dense.ok()) << dense.status().message();
  std::vector<float> expected(static_cast<size_t>(rows * cols));
  ASSERT_TRUE(execute(dense.value(), MutableTensorView{E::kFloat32, sizes, expected.data()}).ok());
  for (int64_t r = 0; r < rows; ++r) {
    ASSERT_EQ(std::memcmp(&y[r * pitch], &expected[r * cols], cols * sizeof(float)), 0) << "row " << r;
    for (int64_t c = cols; c < pitch; ++c) ASSERT_EQ(y[r * pitch + c], -1.0f) << "padding of row " << r;
  }
}

}  // namespace
}  // namespace qdq
