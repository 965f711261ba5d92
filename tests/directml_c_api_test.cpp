// The C ABI's DirectML descriptions (qdq_directml_quantize_linear / _dequantize_linear,
// qdq_dml_calc_buffer_tensor_size): results equal the C++ planner's through the reference, errors
// come back as status plus message, malformed structs are reported rather than followed.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "qdq/directml.hpp"
#include "qdq/qdq.h"

namespace {

constexpr int32_t kFloat = 1, kUint8 = 2, kInt8 = 3;

std::string last_error() { return qdq_last_error(); }

qdq_dml_tensor_desc desc(int32_t type, const std::vector<int64_t>& sizes, const std::vector<int64_t>* strides,
                         const void* data) {
  return qdq_dml_tensor_desc{type, static_cast<int32_t>(sizes.size()), sizes.data(),
                             strides ? strides->data() : nullptr, 0, data};
}

TEST(DirectMLCApi, PerAxisByZeroStridesIntoAPaddedOutput) {
  const std::vector<int64_t> sizes = {2, 3, 4};
  const std::vector<int64_t> per_axis = {0, 1, 0};  // one scale and zero point per dimension-1 index
  const std::vector<int64_t> padded = {16, 5, 1};   // rows of 4 in rows of 5, planes of 16
  std::vector<float> x(24);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 1.7f - 20.0f;
  const float scales[3] = {0.5f, 2.0f, 3.0f};
  const int8_t zero_points[3] = {-3, 0, 7};
  const qdq_dml_tensor_desc input = desc(kFloat, sizes, nullptr, x.data());
  const qdq_dml_tensor_desc scale = desc(kFloat, sizes, &per_axis, scales);
  const qdq_dml_tensor_desc zero_point = desc(kInt8, sizes, &per_axis, zero_points);
  const qdq_dml_tensor_desc output = desc(kInt8, sizes, &padded, nullptr);
  const uint64_t bytes = qdq_dml_calc_buffer_tensor_size(&output);
  ASSERT_EQ(bytes, 32u);  // last element at 16 + 2 * 5 + 3 = 29, 30 bytes, rounded up to 32
  std::vector<int8_t> y(bytes, 99);
  ASSERT_EQ(qdq_directml_quantize_linear(&input, &scale, &zero_point, &output, QDQ_DML_FEATURE_LEVEL_DEFAULT, y.data()),
            QDQ_OK)
      << last_error();

  // The same through the C++ planner on the reference path, into a packed output.
  const std::vector<int64_t> sizes_cc = sizes;
  const qdq::DmlTensorDesc x_cc{qdq::ElementType::kFloat32, sizes_cc, {}, 0, x.data()};
  const qdq::DmlTensorDesc scale_cc{qdq::ElementType::kFloat32, sizes_cc, per_axis, 0, scales};
  const qdq::DmlTensorDesc zp_cc{qdq::ElementType::kInt8, sizes_cc, per_axis, 0, zero_points};
  const qdq::DmlTensorDesc y_cc{qdq::ElementType::kInt8, sizes_cc, {}, 0, nullptr};
  const qdq::Result<qdq::Plan> plan = qdq::plan_directml_quantize_linear(x_cc, scale_cc, &zp_cc, y_cc);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  std::vector<int8_t> expected(24);
  ASSERT_TRUE(qdq::execute(plan.value(), qdq::MutableTensorView{qdq::ElementType::kInt8, sizes_cc, expected.data()},
                           qdq::ExecuteOptions{qdq::ExecutionPath::kReference, {}})
                  .ok());
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 3; ++c) {
      for (int w = 0; w < 4; ++w) EXPECT_EQ(y[n * 16 + c * 5 + w], expected[(n * 3 + c) * 4 + w]) << n << c << w;
      EXPECT_EQ(y[n * 16 + c * 5 + 4], 99);  // padding untouched
    }
  }
}

TEST(DirectMLCApi, FeatureLevelErrorsNameTheLevelThatAccepts) {
  const std::vector<int64_t> sizes = {6};
  const float x[6] = {1, 2, 3, 4, 5, 6};
  const float one = 1.0f;
  const std::vector<int64_t> broadcast = {0};
  const qdq_dml_tensor_desc input = desc(kFloat, sizes, nullptr, x);
  const qdq_dml_tensor_desc scale = desc(kFloat, sizes, &broadcast, &one);
  const qdq_dml_tensor_desc output = desc(kUint8, sizes, nullptr, nullptr);
  uint8_t y[8] = {};
  // No zero point: 6_2; one dimension: 3_0 with a zero point.
  EXPECT_EQ(qdq_directml_quantize_linear(&input, &scale, nullptr, &output, 0x6000, y), QDQ_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("ZeroPointTensor is null"), std::string::npos) << last_error();
  EXPECT_NE(last_error().find("DML_FEATURE_LEVEL_6_2 accepts this description"), std::string::npos) << last_error();
  const uint8_t zero = 0;
  const qdq_dml_tensor_desc zero_point = desc(kUint8, sizes, &broadcast, &zero);
  EXPECT_EQ(qdq_directml_quantize_linear(&input, &scale, &zero_point, &output, 0x2100, y), QDQ_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("InputTensor has DimensionCount 1"), std::string::npos) << last_error();
  EXPECT_NE(last_error().find("DML_FEATURE_LEVEL_3_0 accepts this description"), std::string::npos) << last_error();
  EXPECT_EQ(qdq_directml_quantize_linear(&input, &scale, &zero_point, &output, 0x3000, y), QDQ_OK) << last_error();
  EXPECT_EQ(std::vector<uint8_t>(y, y + 6), (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(qdq_directml_quantize_linear(&input, &scale, &zero_point, &output, 0x3000, nullptr), QDQ_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("output_data"), std::string::npos) << last_error();
}

TEST(DirectMLCApi, MalformedStructsAreReported) {
  const std::vector<int64_t> sizes = {4};
  const float x[4] = {};
  qdq_dml_tensor_desc input = desc(kFloat, sizes, nullptr, x);
  const qdq_dml_tensor_desc output = desc(kFloat, sizes, nullptr, nullptr);
  float y[4];
  EXPECT_EQ(qdq_directml_dequantize_linear(nullptr, &input, nullptr, &output, 0x6200, y), QDQ_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("'InputTensor' is NULL"), std::string::npos) << last_error();
  qdq_dml_tensor_desc no_sizes = input;
  no_sizes.sizes = nullptr;
  EXPECT_EQ(qdq_directml_dequantize_linear(&no_sizes, &input, nullptr, &output, 0x6200, y), QDQ_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("sizes pointer NULL"), std::string::npos) << last_error();
  qdq_dml_tensor_desc huge_rank = input;
  huge_rank.dimension_count = 1 << 30;
  EXPECT_EQ(qdq_directml_dequantize_linear(&huge_rank, &input, nullptr, &output, 0x6200, y), QDQ_INVALID_ARGUMENT);
  EXPECT_EQ(qdq_dml_calc_buffer_tensor_size(&huge_rank), 0u);
  EXPECT_NE(last_error().find("DimensionCount 1073741824"), std::string::npos) << last_error();
  // float32 InputTensor is not an integer type for dequantize.
  EXPECT_EQ(qdq_directml_dequantize_linear(&input, &input, nullptr, &output, 0x6200, y), QDQ_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("InputTensor has DataType FLOAT32"), std::string::npos) << last_error();
  EXPECT_NE(last_error().find("no DML_FEATURE_LEVEL accepts"), std::string::npos) << last_error();
}

}  // namespace
