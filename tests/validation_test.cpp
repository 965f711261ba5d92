// Validation: every invalid input is rejected with a message that names the operator (and its
// version), the offending value and the rule; every valid corner case is accepted.
//
// The expected type sets below are written from the operators' specification tables (the ONNX,
// Quark and DirectML operator documents docs/semantics.md cites), not read from src/.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qdq/qdq.hpp"

namespace {

using qdq::ElementType;
using E = ElementType;

// A tensor that owns its shape and bytes; view() borrows them.
struct Tensor {
  ElementType type = E::kUndefined;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  bool null_data = false;

  qdq::TensorView view() const {
    return {type, shape, null_data || bytes.empty() ? nullptr : bytes.data()};
  }
};

uint64_t element_count(const std::vector<int64_t>& shape) {
  uint64_t count = 1;
  for (int64_t d : shape) count *= static_cast<uint64_t>(d);
  return count;
}

// All-zero bytes for `shape` (0 in every integer and float type qdq knows; 2^-127 for e8m0). An
// unknown type code gets 8 bytes per element so that only the code can be wrong.
Tensor zeros(ElementType type, std::vector<int64_t> shape) {
  Tensor t;
  t.type = type;
  t.shape = std::move(shape);
  const uint64_t count = element_count(t.shape);
  const uint64_t bytes = qdq::find_element_type_info(type) ? qdq::storage_bytes(type, count) : count * 8;
  t.bytes.assign(std::max<uint64_t>(bytes, 1), 0);
  return t;
}

// A tensor whose dims are too large to allocate: data points at a small dummy buffer, which
// validation must never read.
Tensor huge(ElementType type, std::vector<int64_t> shape) {
  Tensor t;
  t.type = type;
  t.shape = std::move(shape);
  t.bytes.assign(16, 0);
  return t;
}

Tensor f32(std::vector<float> values, std::vector<int64_t> shape) {
  Tensor t = zeros(E::kFloat32, std::move(shape));
  t.bytes.assign(values.size() * 4, 0);
  std::memcpy(t.bytes.data(), values.data(), values.size() * 4);
  return t;
}

Tensor scalar_f32(float value) { return f32({value}, {}); }

// A tensor of raw byte codes (8-bit types).
Tensor codes(ElementType type, std::vector<uint8_t> values, std::vector<int64_t> shape) {
  Tensor t;
  t.type = type;
  t.shape = std::move(shape);
  t.bytes = std::move(values);
  return t;
}

qdq::QuantizeLinearAttributes q_attrs(int64_t opset) {
  qdq::QuantizeLinearAttributes a;
  a.opset = opset;
  return a;
}

qdq::DequantizeLinearAttributes dq_attrs(int64_t opset) {
  qdq::DequantizeLinearAttributes a;
  a.opset = opset;
  return a;
}

qdq::Result<qdq::Plan> Q(const Tensor& x, const Tensor& scale, const Tensor* zp,
                         const qdq::QuantizeLinearAttributes& attributes = {}) {
  qdq::TensorView zv;
  if (zp != nullptr) zv = zp->view();
  return qdq::plan_quantize_linear(x.view(), scale.view(), zp != nullptr ? &zv : nullptr, attributes);
}

qdq::Result<qdq::Plan> DQ(const Tensor& x, const Tensor& scale, const Tensor* zp,
                          const qdq::DequantizeLinearAttributes& attributes = {}) {
  qdq::TensorView zv;
  if (zp != nullptr) zv = zp->view();
  return qdq::plan_dequantize_linear(x.view(), scale.view(), zp != nullptr ? &zv : nullptr, attributes);
}

qdq::Result<qdq::Plan> XQ(const Tensor& x, const Tensor& scale, const Tensor* zp, int64_t axis = 1) {
  qdq::TensorView zv;
  if (zp != nullptr) zv = zp->view();
  return qdq::plan_extended_quantize_linear(x.view(), scale.view(), zp != nullptr ? &zv : nullptr, axis);
}

qdq::Result<qdq::Plan> XDQ(const Tensor& x, const Tensor& scale, const Tensor* zp, int64_t axis = 1) {
  qdq::TensorView zv;
  if (zp != nullptr) zv = zp->view();
  return qdq::plan_extended_dequantize_linear(x.view(), scale.view(), zp != nullptr ? &zv : nullptr, axis);
}

qdq::Result<qdq::Plan> EQ(const Tensor& x, const Tensor& scale, const Tensor* zp,
                          ElementType output = E::kUndefined) {
  qdq::TensorView zv;
  if (zp != nullptr) zv = zp->view();
  return qdq::plan_elementwise_quantize_linear(x.view(), scale.view(), zp != nullptr ? &zv : nullptr, output);
}

qdq::Result<qdq::Plan> EDQ(const Tensor& x, const Tensor& scale, const Tensor* zp,
                           ElementType output = E::kUndefined) {
  qdq::TensorView zv;
  if (zp != nullptr) zv = zp->view();
  return qdq::plan_elementwise_dequantize_linear(x.view(), scale.view(), zp != nullptr ? &zv : nullptr,
                                                 output);
}

// A non-OK kInvalidArgument Status whose message contains every needle.
::testing::AssertionResult Rejected(const qdq::Status& status, std::initializer_list<std::string_view> needles) {
  if (status.ok()) return ::testing::AssertionFailure() << "accepted; expected a rejection";
  if (status.code() != qdq::StatusCode::kInvalidArgument) {
    return ::testing::AssertionFailure() << "code " << static_cast<int>(status.code())
                                         << " instead of kInvalidArgument: " << status.message();
  }
  for (std::string_view needle : needles) {
    if (status.message().find(needle) == std::string::npos) {
      return ::testing::AssertionFailure() << "message \"" << status.message() << "\" lacks \"" << needle << "\"";
    }
  }
  return ::testing::AssertionSuccess() << status.message();
}

::testing::AssertionResult Rejected(const qdq::Result<qdq::Plan>& result,
                                    std::initializer_list<std::string_view> needles) {
  if (result.ok()) {
    return ::testing::AssertionFailure() << "accepted as " << result->operator_name << "; expected a rejection";
  }
  return Rejected(result.status(), needles);
}

::testing::AssertionResult Accepted(const qdq::Result<qdq::Plan>& result) {
  if (!result.ok()) return ::testing::AssertionFailure() << "rejected: " << result.status().message();
  return ::testing::AssertionSuccess();
}

std::string qname(int version) { return "QuantizeLinear-" + std::to_string(version); }
std::string dqname(int version) { return "DequantizeLinear-" + std::to_string(version); }

const int kVersions[] = {10, 13, 19, 21, 23, 24, 25};

// ------------------------------------------------------------------------------------------------
// Section 3 of the digest, case by case.

// Case 2: a type the version does not allow.
TEST(ValidationSection3, Case2TypeNotAllowedForVersion) {
  const Tensor x_i8 = zeros(E::kInt8, {4});
  EXPECT_TRUE(Rejected(Q(x_i8, zeros(E::kInt8, {}), nullptr, q_attrs(21)), {"QuantizeLinear-21", "'x'", "int8", "T1"}));
  EXPECT_TRUE(Rejected(DQ(zeros(E::kFloat32, {4}), scalar_f32(1), nullptr, dq_attrs(21)),
                       {"DequantizeLinear-21", "'x'", "float32", "T1"}));
  const Tensor zp_i16 = zeros(E::kInt16, {});
  EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {4}), scalar_f32(1), &zp_i16, q_attrs(13)),
                       {"QuantizeLinear-13", "y_zero_point", "int16"}));
  EXPECT_TRUE(Rejected(DQ(zeros(E::kInt8, {4}), zeros(E::kInt32, {}), nullptr, dq_attrs(19)),
                       {"DequantizeLinear-19", "x_scale", "int32", "T2"}));
}

// Case 3: one type variable, two different types.
TEST(ValidationSection3, Case3SameTypeVariableMismatch) {
  for (int version : {19, 21}) {
    EXPECT_TRUE(Rejected(Q(zeros(E::kFloat16, {4}), scalar_f32(1), nullptr, q_attrs(version)),
                         {qname(version), "y_scale", "float32", "float16", "T1"}));
    EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {4}), zeros(E::kBfloat16, {}), nullptr, q_attrs(version)),
                         {qname(version), "y_scale", "bfloat16", "float32"}));
  }
  // From v23 on the scale has its own type variable.
  EXPECT_TRUE(Accepted(Q(zeros(E::kFloat16, {4}), scalar_f32(1), nullptr, q_attrs(23))));

  const Tensor zp_i8 = zeros(E::kInt8, {});
  EXPECT_TRUE(Rejected(DQ(zeros(E::kUint8, {4}), scalar_f32(1), &zp_i8),
                       {"DequantizeLinear-25", "x_zero_point", "int8", "uint8"}));
  const Tensor zp_e5m2 = zeros(E::kFloat8E5M2, {});
  EXPECT_TRUE(Rejected(DQ(zeros(E::kFloat8E4M3FN, {4}), scalar_f32(1), &zp_e5m2, dq_attrs(19)),
                       {"DequantizeLinear-19", "float8_e5m2", "float8_e4m3fn"}));
  const Tensor zp_i32 = zeros(E::kInt32, {});
  EXPECT_TRUE(Rejected(DQ(zeros(E::kInt8, {4}), scalar_f32(1), &zp_i32, dq_attrs(10)),
                       {"DequantizeLinear-10", "int32", "int8"}));
}

// Case 4: output_dtype and the zero point's type disagree.
TEST(ValidationSection3, Case4OutputDtypeDiffersFromZeroPoint) {
  const Tensor zp = zeros(E::kUint8, {});
  for (int version : {21, 23, 24, 25}) {
    qdq::QuantizeLinearAttributes a = q_attrs(version);
    a.output_dtype = 3;  // INT8
    EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {4}), scalar_f32(1), &zp, a),
                         {qname(version), "output_dtype", "int8", "uint8"}));
    a.output_dtype = 2;  // UINT8: equal, accepted
    qdq::Result<qdq::Plan> plan = Q(zeros(E::kFloat32, {4}), scalar_f32(1), &zp, a);
    ASSERT_TRUE(Accepted(plan));
    EXPECT_EQ(plan->output_type, E::kUint8);
  }
}

// Case 5: output_dtype (or precision) is not a type code qdq knows.
TEST(ValidationSection3, Case5OutputDtypeNotAKnownCode) {
  for (int64_t code : {99, 7, 11, -1}) {
    const std::string text = "output_dtype=" + std::to_string(code);
    qdq::QuantizeLinearAttributes qa;
    qa.output_dtype = code;
    EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {4}), scalar_f32(1), nullptr, qa), {"QuantizeLinear-25", text}));
    qdq::DequantizeLinearAttributes da;
    da.output_dtype = code;
    EXPECT_TRUE(Rejected(DQ(zeros(E::kUint8, {4}), scalar_f32(1), nullptr, da), {"DequantizeLinear-25", text}));
    qdq::QuantizeLinearAttributes pa;
    pa.precision = code;
    EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {4}), scalar_f32(1), nullptr, pa),
                         {"QuantizeLinear-25", "precision=" + std::to_string(code)}));
  }
}

// Case 6: Q output_dtype is a real type but not a quantized one.
TEST(ValidationSection3, Case6QuantizeOutputDtypeNotQuantized) {
  for (int64_t code : {10 /* FLOAT16 */, 1 /* FLOAT */, 6 /* INT32 */, 24 /* FLOAT8E8M0 */}) {
    qdq::QuantizeLinearAttributes a;
    a.output_dtype = code;
    const std::string type(qdq::name(static_cast<ElementType>(code)));
    EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {4}), scalar_f32(1), nullptr, a),
                         {"QuantizeLinear-25", "output_dtype", type, "not a quantized type"}));
  }
  // A type of a newer version: int2 exists from v25 on.
  qdq::QuantizeLinearAttributes a = q_attrs(24);
  a.output_dtype = 26;  // INT2
  EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {4}), scalar_f32(1), nullptr, a), {"QuantizeLinear-24", "int2"}));
  a.opset = 25;
  qdq::Result<qdq::Plan> plan = Q(zeros(E::kFloat32, {4}), scalar_f32(1), nullptr, a);
  ASSERT_TRUE(Accepted(plan));
  EXPECT_EQ(plan->output_type, E::kInt2);
}

// Case 7: DQ output_dtype outside T3, and an e8m0 scale without output_dtype.
TEST(ValidationSection3, Case7DequantizeOutputDtype) {
  for (int version : {23, 24, 25}) {
    qdq::DequantizeLinearAttributes a = dq_attrs(version);
    a.output_dtype = 3;  // INT8
    EXPECT_TRUE(Rejected(DQ(zeros(E::kInt8, {4}), scalar_f32(1), nullptr, a),
                         {dqname(version), "output_dtype", "int8", "T3"}));
    a.output_dtype = 10;  // FLOAT16: accepted
    qdq::Result<qdq::Plan> plan = DQ(zeros(E::kInt8, {4}), scalar_f32(1), nullptr, a);
    ASSERT_TRUE(Accepted(plan));
    EXPECT_EQ(plan->output_type, E::kFloat16);
  }
  for (int version : {24, 25}) {
    const Tensor scale = codes(E::kFloat8E8M0, {127}, {});
    EXPECT_TRUE(Rejected(DQ(zeros(E::kInt8, {4}), scale, nullptr, dq_attrs(version)),
                         {dqname(version), "float8_e8m0fnu", "output_dtype"}));
    qdq::DequantizeLinearAttributes a = dq_attrs(version);
    a.output_dtype = 16;  // BFLOAT16
    qdq::Result<qdq::Plan> plan = DQ(zeros(E::kInt8, {4}), scale, nullptr, a);
    ASSERT_TRUE(Accepted(plan));
    EXPECT_EQ(plan->output_type, E::kBfloat16);
  }
}

// Case 8: scale rank > 1 where the version takes a scalar or a vector.
TEST(ValidationSection3, Case8ScaleRankTooHighForOldVersions) {
  const Tensor x = zeros(E::kFloat32, {1, 3});
  const Tensor scale = zeros(E::kFloat32, {1, 3});
  for (int version : {10, 13, 19}) {
    EXPECT_TRUE(Rejected(Q(x, scale, nullptr, q_attrs(version)), {qname(version), "y_scale", "[1, 3]"}));
    EXPECT_TRUE(
        Rejected(DQ(zeros(E::kUint8, {1, 3}), scale, nullptr, dq_attrs(version)), {dqname(version), "x_scale", "[1, 3]"}));
  }
  // Version 10 takes only a scalar: a per-axis vector is rejected too.
  qdq::QuantizeLinearAttributes a10 = q_attrs(10);
  EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {2, 3}), zeros(E::kFloat32, {3}), nullptr, a10),
                       {"QuantizeLinear-10", "y_scale", "[3]", "scalar"}));
  EXPECT_TRUE(Rejected(DQ(zeros(E::kUint8, {2, 3}), zeros(E::kFloat32, {3}), nullptr, dq_attrs(10)),
                       {"DequantizeLinear-10", "x_scale", "[3]", "scalar"}));
  // v13 takes the vector.
  EXPECT_TRUE(Accepted(Q(zeros(E::kFloat32, {2, 3}), zeros(E::kFloat32, {3}), nullptr, q_attrs(13))));
}

// Case 9: block_size 0 and a scale that is neither one element nor 1-D.
TEST(ValidationSection3, Case9PerAxisScaleNotOneDimensional) {
  const Tensor scale = zeros(E::kFloat32, {2, 3});
  EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {2, 3}), scale, nullptr, q_attrs(21)),
                       {"QuantizeLinear-21", "y_scale", "[2, 3]", "block_size 0"}));
  EXPECT_TRUE(Rejected(DQ(zeros(E::kUint8, {2, 3}), scale, nullptr, dq_attrs(25)),
                       {"DequantizeLinear-25", "x_scale", "[2, 3]", "block_size 0"}));
  // A [1, 1] scale has one element but is neither 0-D nor [1]: not per-tensor.
  EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {2, 3}), zeros(E::kFloat32, {1, 1}), nullptr),
                       {"QuantizeLinear-25", "[1, 1]"}));
}

// Case 10: axis outside [-r, r-1] when the scale is not per-tensor.
TEST(ValidationSection3, Case10AxisOutOfRange) {
  const Tensor x = zeros(E::kFloat32, {2, 3});
  const Tensor scale = zeros(E::kFloat32, {3});
  for (int64_t axis : {2, 7, -3, -100}) {
    qdq::QuantizeLinearAttributes a;
    a.axis = axis;
    const std::string text = "axis " + std::to_string(axis);
    EXPECT_TRUE(Rejected(Q(x, scale, nullptr, a), {"QuantizeLinear-25", text, "[-2, 1]"}));
    qdq::DequantizeLinearAttributes d;
    d.axis = axis;
    EXPECT_TRUE(Rejected(DQ(zeros(E::kInt8, {2, 3}), scale, nullptr, d), {"DequantizeLinear-25", text, "[-2, 1]"}));
  }
  // Blocked quantization checks the axis too.
  qdq::QuantizeLinearAttributes b;
  b.axis = 5;
  b.block_size = 2;
  EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {2, 4}), zeros(E::kFloat32, {2, 2}), nullptr, b),
                       {"QuantizeLinear-25", "axis 5", "[-2, 1]"}));
  // In range, negative: accepted.
  qdq::QuantizeLinearAttributes ok;
  ok.axis = -1;
  qdq::Result<qdq::Plan> plan = Q(x, scale, nullptr, ok);
  ASSERT_TRUE(Accepted(plan));
  EXPECT_EQ(plan->granularity, qdq::Granularity::kPerAxis);
}

// Case 11: per-axis length differs from D_axis (including D_axis == 1, which NumPy would
// broadcast silently).
TEST(ValidationSection3, Case11PerAxisLengthMismatch) {
  EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {2, 3}), zeros(E::kFloat32, {2}), nullptr),
                       {"QuantizeLinear-25", "length 2", "3 elements along axis 1", "[2, 3]"}));
  const Tensor zp = zeros(E::kUint8, {4});
  EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {3, 1}), zeros(E::kFloat32, {4}), &zp),
                       {"QuantizeLinear-25", "length 4", "1 elements along axis 1"}));
  qdq::DequantizeLinearAttributes d = dq_attrs(13);
  d.axis = 0;
  EXPECT_TRUE(Rejected(DQ(zeros(E::kUint8, {2, 3}), zeros(E::kFloat32, {3}), nullptr, d),
                       {"DequantizeLinear-13", "length 3", "2 elements along axis 0"}));
}

// Case 12: negative block_size.
TEST(ValidationSection3, Case12NegativeBlockSize) {
  qdq::QuantizeLinearAttributes a;
  a.block_size = -2;
  EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {2, 4}), zeros(E::kFloat32, {2, 2}), nullptr, a),
                       {"QuantizeLinear-25", "block_size -2", "negative"}));
  // Even with a per-tensor scale the attribute itself is invalid.
  a.block_size = -1;
  EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {2, 4}), scalar_f32(1), nullptr, a),
                       {"QuantizeLinear-25", "block_size -1", "negative"}));
  qdq::DequantizeLinearAttributes d = dq_attrs(21);
  d.block_size = -3;
  EXPECT_TRUE(Rejected(DQ(zeros(E::kInt8, {2, 4}), zeros(E::kFloat32, {2, 2}), nullptr, d),
                       {"DequantizeLinear-21", "block_size -3", "negative"}));
}

// Case 13: blocked scale of another rank, or with a different dimension off the axis.
TEST(ValidationSection3, Case13BlockedRankAndOffAxisMismatch) {
  qdq::QuantizeLinearAttributes a;
  a.block_size = 2;
  EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {2, 4}), zeros(E::kFloat32, {2}), nullptr, a),
                       {"QuantizeLinear-25", "rank 1", "[2]", "rank 2", "[2, 4]"}));
  EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {2, 4}), zeros(E::kFloat32, {1, 2, 2}), nullptr, a),
                       {"QuantizeLinear-25", "rank 3", "[1, 2, 2]", "[2, 4]"}));
  EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {2, 4}), zeros(E::kFloat32, {3, 2}), nullptr, a),
                       {"QuantizeLinear-25", "[3, 2]", "[2, 4]", "dimension 0", "blocking axis 1"}));
  qdq::DequantizeLinearAttributes d = dq_attrs(21);
  d.axis = 0;
  d.block_size = 2;
  EXPECT_TRUE(Rejected(DQ(zeros(E::kInt8, {4, 3}), zeros(E::kFloat32, {2, 2}), nullptr, d),
                       {"DequantizeLinear-21", "[2, 2]", "[4, 3]", "dimension 1", "blocking axis 0"}));
}

// Case 14: ceil(D / B) != S, both when the scale is too short and when the reference's looser
// S * B >= D test would pass.
TEST(ValidationSection3, Case14BlockCountMismatch) {
  qdq::QuantizeLinearAttributes a;
  a.block_size = 3;
  const Tensor x = zeros(E::kFloat32, {2, 8});
  EXPECT_TRUE(Rejected(Q(x, zeros(E::kFloat32, {2, 2}), nullptr, a),
                       {"QuantizeLinear-25", "2 entries along axis 1", "ceil(8 / 3) = 3"}));
  EXPECT_TRUE(Rejected(Q(x, zeros(E::kFloat32, {2, 4}), nullptr, a),
                       {"QuantizeLinear-25", "4 entries along axis 1", "ceil(8 / 3) = 3"}));
  qdq::Result<qdq::Plan> plan = Q(x, zeros(E::kFloat32, {2, 3}), nullptr, a);
  ASSERT_TRUE(Accepted(plan));
  EXPECT_EQ(plan->granularity, qdq::Granularity::kBlocked);
  EXPECT_EQ(plan->layout.block_size, 3);

  // Rank-1 x, blocked (the reference's own test: arange(6), scale [2], B=3).
  qdq::QuantizeLinearAttributes r1;
  r1.axis = 0;
  r1.block_size = 3;
  EXPECT_TRUE(Accepted(Q(zeros(E::kFloat32, {6}), zeros(E::kFloat32, {2}), nullptr, r1)));
  r1.block_size = 4;  // ceil(6/4) = 2 as well
  EXPECT_TRUE(Accepted(Q(zeros(E::kFloat32, {6}), zeros(E::kFloat32, {2}), nullptr, r1)));
  r1.block_size = 6;  // ceil(6/6) = 1 != 2
  EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {6}), zeros(E::kFloat32, {2}), nullptr, r1), {"ceil(6 / 6) = 1"}));

  qdq::DequantizeLinearAttributes d = dq_attrs(23);
  d.block_size = 3;
  EXPECT_TRUE(Rejected(DQ(zeros(E::kUint8, {2, 8}), zeros(E::kFloat32, {2, 4}), nullptr, d),
                       {"DequantizeLinear-23", "ceil(8 / 3) = 3"}));
}

// Case 15: zero point and scale shapes.
TEST(ValidationSection3, Case15ZeroPointShapeMismatch) {
  const Tensor x = zeros(E::kFloat32, {2, 3});
  const Tensor scale = zeros(E::kFloat32, {3});
  const Tensor zp_wrong = zeros(E::kUint8, {1, 3});
  EXPECT_TRUE(Rejected(Q(x, scale, &zp_wrong), {"QuantizeLinear-25", "y_zero_point", "[1, 3]", "[3]"}));
  const Tensor zp_short = zeros(E::kUint8, {2});
  EXPECT_TRUE(Rejected(Q(x, scale, &zp_short), {"QuantizeLinear-25", "y_zero_point", "[2]", "[3]"}));
  const Tensor zp_scalar = zeros(E::kUint8, {});
  EXPECT_TRUE(Rejected(Q(x, scale, &zp_scalar), {"QuantizeLinear-25", "y_zero_point", "[]", "[3]"}));
  const Tensor dq_zp = zeros(E::kUint8, {3, 1});
  EXPECT_TRUE(Rejected(DQ(zeros(E::kUint8, {2, 3}), scale, &dq_zp), {"DequantizeLinear-25", "x_zero_point", "[3, 1]"}));

  // Blocked: the zero point must have the scale's full shape.
  qdq::QuantizeLinearAttributes b;
  b.block_size = 2;
  const Tensor zp_blocked = zeros(E::kUint8, {2, 1});
  EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {2, 4}), zeros(E::kFloat32, {2, 2}), &zp_blocked, b),
                       {"QuantizeLinear-25", "[2, 1]", "[2, 2]"}));

  // The accepted one-element mix: 0-D vs [1], either way round.
  const Tensor zp1 = zeros(E::kUint8, {1});
  EXPECT_TRUE(Accepted(Q(x, scalar_f32(1), &zp1)));
  EXPECT_TRUE(Accepted(Q(x, zeros(E::kFloat32, {1}), &zp_scalar)));
  EXPECT_TRUE(Accepted(DQ(zeros(E::kUint8, {2, 3}), scalar_f32(1), &zp1)));
  // But a [1, 1] zero point is not part of that mix.
  const Tensor zp11 = zeros(E::kUint8, {1, 1});
  EXPECT_TRUE(Rejected(Q(x, scalar_f32(1), &zp11), {"QuantizeLinear-25", "[1, 1]", "[]"}));
}

// Case 16: float8 zero points must be 0 (Q and DQ), NaN included.
TEST(ValidationSection3, Case16Float8ZeroPointNonZero) {
  const Tensor x = zeros(E::kFloat32, {4});
  const Tensor one = codes(E::kFloat8E4M3FN, {0x38}, {});  // 1.0
  EXPECT_TRUE(Rejected(Q(x, scalar_f32(1), &one), {"QuantizeLinear-25", "y_zero_point", "element 0", "is 1", "0"}));
  EXPECT_TRUE(Rejected(DQ(zeros(E::kFloat8E4M3FN, {4}), scalar_f32(1), &one, dq_attrs(19)),
                       {"DequantizeLinear-19", "x_zero_point", "element 0", "is 1"}));
  const Tensor nan = codes(E::kFloat8E4M3FN, {0x7F}, {});
  EXPECT_TRUE(Rejected(Q(x, scalar_f32(1), &nan), {"QuantizeLinear-25", "y_zero_point", "nan"}));
  EXPECT_TRUE(Rejected(DQ(zeros(E::kFloat8E4M3FN, {4}), scalar_f32(1), &nan), {"DequantizeLinear-25", "nan"}));
  // FNUZ: 0x80 is NaN, not -0.
  const Tensor fnuz_nan = codes(E::kFloat8E5M2FNUZ, {0x80}, {});
  EXPECT_TRUE(Rejected(Q(x, scalar_f32(1), &fnuz_nan), {"QuantizeLinear-25", "nan"}));
  EXPECT_TRUE(Rejected(DQ(zeros(E::kFloat8E5M2FNUZ, {4}), scalar_f32(1), &fnuz_nan), {"DequantizeLinear-25", "nan"}));
  // -0 is zero where it exists.
  const Tensor minus_zero = codes(E::kFloat8E5M2, {0x80}, {});
  EXPECT_TRUE(Accepted(Q(x, scalar_f32(1), &minus_zero)));
  EXPECT_TRUE(Accepted(DQ(zeros(E::kFloat8E5M2, {4}), scalar_f32(1), &minus_zero)));
  // Per-axis: the offending element is named.
  const Tensor per_axis = codes(E::kFloat8E4M3FN, {0x00, 0x00, 0xB8}, {3});  // [0, 0, -1]
  qdq::QuantizeLinearAttributes a;
  a.axis = 0;
  EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {3, 2}), zeros(E::kFloat32, {3}), &per_axis, a),
                       {"QuantizeLinear-25", "element 2", "is -1"}));
}

// The all-zero check of float8 and float4 zero points reads the codes' bytes: every code at the
// first, a middle and the last of 67 per-axis elements (float4 also the last whole byte's), against the rule written out (+0, and -0
// where the format spells it with the sign bit alone; FNUZ's 0x80 is NaN), float4 in both layouts
// with the packed tensor's padding nibble and the high bits of one code per byte set.
TEST(ValidationSection3, ZeroPointAllZeroCheckEveryCodeAtEveryPosition) {
  const Tensor x = zeros(E::kFloat32, {2, 67});
  const Tensor scale = f32(std::vector<float>(67, 1.0f), {67});
  struct Float8 {
    E type;
    bool has_negative_zero;
  };
  for (const Float8 f : {Float8{E::kFloat8E4M3FN, true}, Float8{E::kFloat8E4M3FNUZ, false},
                         Float8{E::kFloat8E5M2, true}, Float8{E::kFloat8E5M2FNUZ, false}}) {
    for (const uint64_t position : {0u, 33u, 66u}) {
      for (uint32_t code = 0; code < 256; ++code) {
        Tensor zp = zeros(f.type, {67});
        zp.bytes[position] = static_cast<uint8_t>(code);
        const bool zero = code == 0 || (f.has_negative_zero && code == 0x80);
        EXPECT_EQ(Q(x, scale, &zp).ok(), zero) << "code 0x" << std::hex << code << " at " << std::dec << position;
      }
    }
  }
  const Tensor x4 = zeros(E::kFloat4E2M1, {2, 67});
  const std::vector<int64_t> shape = {67};
  qdq::DequantizeLinearAttributes d;
  d.axis = 1;
  for (const uint64_t position : {0u, 33u, 65u, 66u}) {  // 65: the last whole byte; 66: the partial one
    for (uint32_t code = 0; code < 16; ++code) {
      const bool zero = code == 0 || code == 0x8;  // +0 and -0
      std::vector<uint8_t> packed(34, 0);
      packed[33] = 0x50;  // the padding nibble past element 66
      packed[position / 2] |= static_cast<uint8_t>(code << (4 * (position % 2)));
      std::vector<uint8_t> one_per_byte(67, 0xA0);  // high bits, ignored
      one_per_byte[position] |= static_cast<uint8_t>(code);
      for (const auto& [bytes, layout] : {std::pair{&packed, qdq::SubByteLayout::kPacked},
                                          std::pair{&one_per_byte, qdq::SubByteLayout::kOneCodePerByte}}) {
        const qdq::TensorView zv{E::kFloat4E2M1, shape, bytes->data(), layout};
        EXPECT_EQ(qdq::plan_dequantize_linear(x4.view(), scale.view(), &zv, d).ok(), zero)
            << "float4 code 0x" << std::hex << code << " at " << std::dec << position << " layout "
            << static_cast<int>(layout);
      }
    }
  }
}

// DQ with float4e2m1 x: the reference ignores the zero point, the formula subtracts it; qdq
// requires it to be 0 so that both agree.
TEST(ValidationSection3, Float4DequantizeZeroPointMustBeZero) {
  Tensor x = zeros(E::kFloat4E2M1, {4});
  Tensor one = zeros(E::kFloat4E2M1, {});
  one.bytes[0] = 0x2;  // 1.0
  EXPECT_TRUE(Rejected(DQ(x, scalar_f32(1), &one, dq_attrs(23)),
                       {"DequantizeLinear-23", "x_zero_point", "element 0", "is 1", "float4_e2m1fn"}));
  const Tensor zero = zeros(E::kFloat4E2M1, {});
  qdq::Result<qdq::Plan> plan = DQ(x, scalar_f32(1), &zero, dq_attrs(23));
  ASSERT_TRUE(Accepted(plan));
  EXPECT_FALSE(plan->apply_zero_point);
  // The Q side adds a float4 zero point (reference: added in float), so it stays accepted.
  EXPECT_TRUE(Accepted(Q(zeros(E::kFloat32, {4}), scalar_f32(1), &one, q_attrs(23))));
}

// Case 17: block_size > 0 with a one-element scale is per-tensor.
TEST(ValidationSection3, Case17BlockSizeWithOneElementScaleIsPerTensor) {
  qdq::QuantizeLinearAttributes a;
  a.block_size = 2;
  for (const Tensor& scale : {scalar_f32(1), f32({1}, {1})}) {
    qdq::Result<qdq::Plan> plan = Q(zeros(E::kFloat32, {2, 4}), scale, nullptr, a);
    ASSERT_TRUE(Accepted(plan));
    EXPECT_EQ(plan->granularity, qdq::Granularity::kPerTensor);
  }
  qdq::DequantizeLinearAttributes d;
  d.block_size = 3;
  qdq::Result<qdq::Plan> plan = DQ(zeros(E::kInt8, {2, 4}), scalar_f32(1), nullptr, d);
  ASSERT_TRUE(Accepted(plan));
  EXPECT_EQ(plan->granularity, qdq::Granularity::kPerTensor);
}

// Case 18: no zero point: uint8 output (or output_dtype), zero point absent.
TEST(ValidationSection3, Case18AbsentZeroPoint) {
  for (int version : kVersions) {
    qdq::Result<qdq::Plan> plan = Q(zeros(E::kFloat32, {4}), scalar_f32(1), nullptr, q_attrs(version));
    ASSERT_TRUE(Accepted(plan)) << version;
    EXPECT_EQ(plan->output_type, E::kUint8);
    EXPECT_FALSE(plan->has_zero_point);
    EXPECT_FALSE(plan->apply_zero_point);
    EXPECT_EQ(plan->operator_name, qname(version));
  }
  qdq::QuantizeLinearAttributes a;
  a.output_dtype = 3;
  qdq::Result<qdq::Plan> plan = Q(zeros(E::kFloat32, {4}), scalar_f32(1), nullptr, a);
  ASSERT_TRUE(Accepted(plan));
  EXPECT_EQ(plan->output_type, E::kInt8);
}

// ------------------------------------------------------------------------------------------------
// Axis and rank-1 input.

TEST(ValidationAxis, RankOneWithVectorScaleNeedsAxisZero) {
  const Tensor x = zeros(E::kFloat32, {4});
  const Tensor scale = zeros(E::kFloat32, {4});
  EXPECT_TRUE(Rejected(Q(x, scale, nullptr), {"QuantizeLinear-25", "axis 1", "[-1, 0]", "rank 1"}));
  EXPECT_TRUE(Rejected(DQ(zeros(E::kUint8, {4}), scale, nullptr), {"DequantizeLinear-25", "axis 1", "[-1, 0]"}));
  for (int64_t axis : {0, -1}) {
    qdq::QuantizeLinearAttributes a;
    a.axis = axis;
    qdq::Result<qdq::Plan> plan = Q(x, scale, nullptr, a);
    ASSERT_TRUE(Accepted(plan));
    EXPECT_EQ(plan->granularity, qdq::Granularity::kPerAxis);
    qdq::DequantizeLinearAttributes d;
    d.axis = axis;
    EXPECT_TRUE(Accepted(DQ(zeros(E::kUint8, {4}), scale, nullptr, d)));
  }
  // A per-tensor scale ignores the axis, even for a 0-D x.
  EXPECT_TRUE(Accepted(Q(x, scalar_f32(1), nullptr)));
  EXPECT_TRUE(Accepted(Q(zeros(E::kFloat32, {}), scalar_f32(1), nullptr)));
}

// ------------------------------------------------------------------------------------------------
// Tensor views: shapes, data pointers, type codes.

TEST(ValidationViews, ShapeProductOverflow) {
  const std::vector<int64_t> dims = {int64_t{1} << 31, int64_t{1} << 31, 4};
  const std::string shape = "[2147483648, 2147483648, 4]";
  EXPECT_TRUE(Rejected(Q(huge(E::kFloat32, dims), scalar_f32(1), nullptr), {"QuantizeLinear-25", "'x'", shape, "overflow"}));
  EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {4}), huge(E::kFloat32, dims), nullptr),
                       {"QuantizeLinear-25", "'y_scale'", shape, "overflow"}));
  const Tensor zp = huge(E::kUint8, dims);
  EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {4}), scalar_f32(1), &zp), {"QuantizeLinear-25", "'y_zero_point'", shape}));
  EXPECT_TRUE(Rejected(DQ(huge(E::kUint8, dims), scalar_f32(1), nullptr), {"DequantizeLinear-25", "'x'", shape}));
  EXPECT_TRUE(Rejected(XQ(huge(E::kFloat32, dims), scalar_f32(1), nullptr), {"ExtendedQuantizeLinear-1", shape}));
  EXPECT_TRUE(Rejected(EQ(huge(E::kFloat32, dims), scalar_f32(1), nullptr), {"ElementWiseQuantizeLinear", shape}));
  // INT64_MAX * 2: the product wraps in 64 bits.
  const std::vector<int64_t> wrap = {INT64_MAX, 2};
  EXPECT_TRUE(Rejected(Q(huge(E::kFloat32, wrap), scalar_f32(1), nullptr), {"QuantizeLinear-25", "overflow"}));
  // 2^61 float32 elements fit the element limit but are 2^63 bytes.
  const std::vector<int64_t> bytes = {int64_t{1} << 31, int64_t{1} << 30};
  EXPECT_TRUE(Rejected(Q(huge(E::kFloat32, bytes), scalar_f32(1), nullptr),
                       {"QuantizeLinear-25", "'x'", "[2147483648, 1073741824]", "byte size"}));
}

TEST(ValidationViews, NegativeDimension) {
  EXPECT_TRUE(Rejected(Q(huge(E::kFloat32, {2, -1}), scalar_f32(1), nullptr),
                       {"QuantizeLinear-25", "'x'", "negative dimension -1", "index 1", "[2, -1]"}));
  EXPECT_TRUE(Rejected(DQ(zeros(E::kInt8, {4}), huge(E::kFloat32, {-3}), nullptr),
                       {"DequantizeLinear-25", "'x_scale'", "negative dimension -3", "[-3]"}));
  EXPECT_TRUE(Rejected(XDQ(huge(E::kInt8, {-1, 0}), scalar_f32(1), nullptr), {"ExtendedDequantizeLinear-1", "-1"}));
  EXPECT_TRUE(Rejected(EDQ(huge(E::kInt8, {1, -2}), huge(E::kFloat32, {1, 1}), nullptr),
                       {"ElementWiseDequantizeLinear", "negative dimension -2"}));
}

TEST(ValidationViews, TooManyDimensions) {
  const std::vector<int64_t> dims(65, 1);
  EXPECT_TRUE(Rejected(Q(huge(E::kFloat32, dims), scalar_f32(1), nullptr), {"QuantizeLinear-25", "rank 65"}));
}

TEST(ValidationViews, NullDataWithElements) {
  Tensor x = zeros(E::kFloat32, {2, 2});
  x.null_data = true;
  EXPECT_TRUE(Rejected(Q(x, scalar_f32(1), nullptr), {"QuantizeLinear-25", "'x'", "null data", "4 elements", "[2, 2]"}));
  Tensor scale = scalar_f32(1);
  scale.null_data = true;  // a 0-D tensor has one element
  EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {4}), scale, nullptr), {"QuantizeLinear-25", "'y_scale'", "null data", "1 elements"}));
  Tensor zp = zeros(E::kInt8, {});
  zp.null_data = true;
  EXPECT_TRUE(Rejected(DQ(zeros(E::kInt8, {4}), scalar_f32(1), &zp), {"DequantizeLinear-25", "'x_zero_point'", "null data"}));
  EXPECT_TRUE(Rejected(XQ(x, scalar_f32(1), nullptr), {"ExtendedQuantizeLinear-1", "null data"}));
  EXPECT_TRUE(Rejected(EQ(x, f32({1}, {1, 1}), nullptr), {"ElementWiseQuantizeLinear", "null data"}));
}

TEST(ValidationViews, ZeroSizeTensorsWithNullDataAreValid) {
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{0}, std::vector<int64_t>{3, 0, 2}}) {
    Tensor x = zeros(E::kFloat32, shape);
    x.null_data = true;
    const Tensor scale = scalar_f32(1);
    qdq::Result<qdq::Plan> plan = Q(x, scale, nullptr);
    ASSERT_TRUE(Accepted(plan));
    EXPECT_EQ(plan->element_count, 0u);
    const qdq::MutableTensorView y{E::kUint8, shape, nullptr};
    EXPECT_TRUE(qdq::execute(plan.value(), y).ok());

    Tensor qx = zeros(E::kInt4, shape);
    qx.null_data = true;
    qdq::Result<qdq::Plan> dq = DQ(qx, scale, nullptr);
    ASSERT_TRUE(Accepted(dq));
    EXPECT_TRUE(qdq::execute(dq.value(), qdq::MutableTensorView{E::kFloat32, shape, nullptr}).ok());
  }
  // A zero-length per-axis scale over a zero-length axis.
  Tensor x = zeros(E::kFloat32, {0});
  x.null_data = true;
  Tensor scale = zeros(E::kFloat32, {0});
  scale.null_data = true;
  qdq::QuantizeLinearAttributes a;
  a.axis = 0;
  EXPECT_TRUE(Accepted(Q(x, scale, nullptr, a)));
  Tensor ex = zeros(E::kFloat32, {0, 2});
  ex.null_data = true;
  EXPECT_TRUE(Accepted(EQ(ex, f32({1}, {1, 1}), nullptr)));
  EXPECT_TRUE(Accepted(XQ(ex, scalar_f32(1), nullptr)));
}

TEST(ValidationViews, UnknownTypeCodes) {
  for (int32_t code : {99, 7 /* INT64 */, 11 /* DOUBLE */, 0 /* UNDEFINED */, -5}) {
    const ElementType bad = static_cast<ElementType>(code);
    const std::string text = "unknown element type code " + std::to_string(code);
    EXPECT_TRUE(Rejected(Q(zeros(bad, {4}), scalar_f32(1), nullptr), {"QuantizeLinear-25", "'x'", text}));
    EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {4}), zeros(bad, {}), nullptr), {"QuantizeLinear-25", "'y_scale'", text}));
    const Tensor zp = zeros(bad, {});
    EXPECT_TRUE(Rejected(Q(zeros(E::kFloat32, {4}), scalar_f32(1), &zp), {"QuantizeLinear-25", "'y_zero_point'", text}));
    EXPECT_TRUE(Rejected(DQ(zeros(bad, {4}), scalar_f32(1), nullptr), {"DequantizeLinear-25", "'x'", text}));
    EXPECT_TRUE(Rejected(DQ(zeros(E::kInt8, {4}), zeros(bad, {}), nullptr), {"DequantizeLinear-25", "'x_scale'", text}));
    EXPECT_TRUE(Rejected(DQ(zeros(E::kInt8, {4}), scalar_f32(1), &zp), {"DequantizeLinear-25", "'x_zero_point'", text}));
    EXPECT_TRUE(Rejected(XQ(zeros(bad, {4}), scalar_f32(1), nullptr), {"ExtendedQuantizeLinear-1", "'x'", text}));
    EXPECT_TRUE(Rejected(XDQ(zeros(E::kInt8, {4}), scalar_f32(1), &zp), {"ExtendedDequantizeLinear-1", text}));
    EXPECT_TRUE(Rejected(EQ(zeros(bad, {4}), f32({1}, {1}), nullptr), {"ElementWiseQuantizeLinear", "'x'", text}));
    EXPECT_TRUE(Rejected(EDQ(zeros(E::kInt8, {4}), zeros(bad, {1}), nullptr), {"ElementWiseDequantizeLinear", text}));
    if (code != 0) {  // 0 means "derive the output type"
      EXPECT_TRUE(Rejected(EQ(zeros(E::kFloat32, {4}), f32({1}, {1}), nullptr, bad),
                           {"ElementWiseQuantizeLinear", "output", text}));
      EXPECT_TRUE(Rejected(EDQ(zeros(E::kInt8, {4}), f32({1}, {1}), nullptr, bad),
                           {"ElementWiseDequantizeLinear", "output", text}));
    }
  }
}

// ------------------------------------------------------------------------------------------------
// The output buffer handed to execute.

TEST(ValidationExecute, OutputBufferMustMatchPlan) {
  const Tensor x = f32({1, 2, 3, 4}, {4});
  const Tensor scale = scalar_f32(1);  // the plan borrows x and the scale until execute returns
  qdq::Result<qdq::Plan> plan = Q(x, scale, nullptr, q_attrs(21));
  ASSERT_TRUE(Accepted(plan));
  std::vector<uint8_t> out(16, 0xAA);
  const std::vector<int64_t> shape = {4};
  EXPECT_TRUE(Rejected(qdq::execute(plan.value(), {E::kInt8, shape, out.data()}),
                       {"QuantizeLinear-21", "output buffer", "int8", "uint8"}));
  const std::vector<int64_t> wrong = {2, 2};
  EXPECT_TRUE(Rejected(qdq::execute(plan.value(), {E::kUint8, wrong, out.data()}),
                       {"QuantizeLinear-21", "output buffer", "[2, 2]", "[4]"}));
  const std::vector<int64_t> longer = {5};
  EXPECT_TRUE(Rejected(qdq::execute(plan.value(), {E::kUint8, longer, out.data()}), {"[5]", "[4]"}));
  EXPECT_TRUE(Rejected(qdq::execute(plan.value(), {E::kUint8, shape, nullptr}),
                       {"QuantizeLinear-21", "output buffer", "null", "4 elements"}));
  // Nothing was written by the rejected calls.
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](uint8_t b) { return b == 0xAA; }));
  // The convenience entry points report the same.
  EXPECT_TRUE(Rejected(qdq::quantize_linear(x.view(), scalar_f32(1).view(), nullptr, {}, {E::kInt8, shape, out.data()}),
                       {"QuantizeLinear-25", "int8", "uint8"}));
  const Tensor qx = zeros(E::kUint8, {4});
  EXPECT_TRUE(Rejected(qdq::dequantize_linear(qx.view(), scalar_f32(1).view(), nullptr, {},
                                              {E::kFloat16, shape, out.data()}),
                       {"DequantizeLinear-25", "float16", "float32"}));
  EXPECT_TRUE(Rejected(qdq::dequantize_linear(qx.view(), scalar_f32(1).view(), nullptr, {}, {E::kFloat32, wrong, out.data()}),
                       {"DequantizeLinear-25", "[2, 2]", "[4]"}));
  // And the right buffer works.
  EXPECT_TRUE(qdq::execute(plan.value(), {E::kUint8, shape, out.data()}).ok());
  EXPECT_EQ(std::vector<uint8_t>(out.begin(), out.begin() + 4), (std::vector<uint8_t>{1, 2, 3, 4}));
}

// ------------------------------------------------------------------------------------------------
// Attributes.

TEST(ValidationAttributes, UndefinedAttributesMustStayAtDefault) {
  const Tensor x = zeros(E::kFloat32, {4});
  const Tensor s = scalar_f32(1);
  qdq::QuantizeLinearAttributes a = q_attrs(10);
  a.axis = 0;
  EXPECT_TRUE(Rejected(Q(x, s, nullptr, a), {"QuantizeLinear-10", "attribute axis=0", "not defined"}));
  a = q_attrs(13);
  a.saturate = 0;
  EXPECT_TRUE(Rejected(Q(x, s, nullptr, a), {"QuantizeLinear-13", "attribute saturate=0", "not defined"}));
  a = q_attrs(19);
  a.block_size = 2;
  EXPECT_TRUE(Rejected(Q(x, s, nullptr, a), {"QuantizeLinear-19", "attribute block_size=2", "not defined"}));
  a = q_attrs(19);
  a.output_dtype = 2;
  EXPECT_TRUE(Rejected(Q(x, s, nullptr, a), {"QuantizeLinear-19", "attribute output_dtype=2", "not defined"}));
  a = q_attrs(21);
  a.precision = 1;
  EXPECT_TRUE(Rejected(Q(x, s, nullptr, a), {"QuantizeLinear-21", "attribute precision=1", "not defined"}));

  const Tensor qx = zeros(E::kUint8, {4});
  qdq::DequantizeLinearAttributes d = dq_attrs(10);
  d.axis = 0;
  EXPECT_TRUE(Rejected(DQ(qx, s, nullptr, d), {"DequantizeLinear-10", "attribute axis=0", "not defined"}));
  d = dq_attrs(19);
  d.block_size = 2;
  EXPECT_TRUE(Rejected(DQ(qx, s, nullptr, d), {"DequantizeLinear-19", "attribute block_size=2", "not defined"}));
  d = dq_attrs(21);
  d.output_dtype = 1;
  EXPECT_TRUE(Rejected(DQ(qx, s, nullptr, d), {"DequantizeLinear-21", "attribute output_dtype=1", "not defined"}));

  // The defaults themselves, spelled out, are fine on every version.
  for (int version : kVersions) {
    qdq::QuantizeLinearAttributes defaults = q_attrs(version);
    defaults.axis = 1;
    defaults.saturate = 1;
    defaults.block_size = 0;
    defaults.output_dtype = 0;
    defaults.precision = 0;
    EXPECT_TRUE(Accepted(Q(x, s, nullptr, defaults))) << version;
    EXPECT_TRUE(Accepted(DQ(qx, s, nullptr, dq_attrs(version)))) << version;
  }
}

TEST(ValidationAttributes, Saturate) {
  const Tensor x = zeros(E::kFloat32, {4});
  for (int64_t value : {2, -1}) {
    qdq::QuantizeLinearAttributes a;
    a.saturate = value;
    EXPECT_TRUE(Rejected(Q(x, scalar_f32(1), nullptr, a),
                         {"QuantizeLinear-25", "saturate=" + std::to_string(value), "0 or 1"}));
  }
  qdq::QuantizeLinearAttributes a = q_attrs(19);
  a.saturate = 0;
  const Tensor zp = zeros(E::kFloat8E4M3FN, {});
  qdq::Result<qdq::Plan> plan = Q(x, scalar_f32(1), &zp, a);
  ASSERT_TRUE(Accepted(plan));
  EXPECT_FALSE(plan->saturate);
}

TEST(ValidationAttributes, Precision) {
  const Tensor x = zeros(E::kFloat32, {4});
  qdq::QuantizeLinearAttributes a = q_attrs(23);
  a.precision = 6;  // INT32: not a floating-point division
  EXPECT_TRUE(Rejected(Q(x, scalar_f32(1), nullptr, a), {"QuantizeLinear-23", "precision", "int32"}));
  a.precision = 3;  // INT8
  EXPECT_TRUE(Rejected(Q(x, scalar_f32(1), nullptr, a), {"QuantizeLinear-23", "precision", "int8"}));
  a.precision = 17;  // FLOAT8E4M3FN
  EXPECT_TRUE(Rejected(Q(x, scalar_f32(1), nullptr, a), {"QuantizeLinear-23", "precision", "float8_e4m3fn"}));
  a.precision = 10;  // FLOAT16
  qdq::Result<qdq::Plan> plan = Q(x, scalar_f32(1), nullptr, a);
  ASSERT_TRUE(Accepted(plan));
  EXPECT_EQ(plan->precision, qdq::Precision::kFloat16);
  a.precision = 16;  // BFLOAT16
  plan = Q(x, scalar_f32(1), nullptr, a);
  ASSERT_TRUE(Accepted(plan));
  EXPECT_EQ(plan->precision, qdq::Precision::kBfloat16);
  a.opset = 21;
  a.precision = 10;
  EXPECT_TRUE(Rejected(Q(x, scalar_f32(1), nullptr, a), {"QuantizeLinear-21", "precision=10", "not defined"}));
}

TEST(ValidationAttributes, OpsetResolution) {
  const Tensor x = zeros(E::kFloat32, {4});
  const Tensor qx = zeros(E::kUint8, {4});
  for (int64_t opset : {9, 29, 0, -1, 1000}) {
    const std::string text = "opset " + std::to_string(opset);
    EXPECT_TRUE(Rejected(Q(x, scalar_f32(1), nullptr, q_attrs(opset)), {"QuantizeLinear", text, "[10, 28]"}));
    EXPECT_TRUE(Rejected(DQ(qx, scalar_f32(1), nullptr, dq_attrs(opset)), {"DequantizeLinear", text, "[10, 28]"}));
  }
  const std::pair<int64_t, int> expected[] = {{10, 10}, {11, 10}, {12, 10}, {13, 13}, {18, 13}, {19, 19}, {20, 19},
                                              {21, 21}, {22, 21}, {23, 23}, {24, 24}, {25, 25}, {26, 25}, {28, 25}};
  for (const auto& [opset, version] : expected) {
    qdq::Result<qdq::Plan> q = Q(x, scalar_f32(1), nullptr, q_attrs(opset));
    ASSERT_TRUE(Accepted(q)) << opset;
    EXPECT_EQ(q->operator_name, qname(version)) << opset;
    qdq::Result<qdq::Plan> dq = DQ(qx, scalar_f32(1), nullptr, dq_attrs(opset));
    ASSERT_TRUE(Accepted(dq)) << opset;
    EXPECT_EQ(dq->operator_name, dqname(version)) << opset;
  }
  // A failure under opset 11 names the version it resolved to.
  qdq::QuantizeLinearAttributes a = q_attrs(11);
  a.axis = 0;
  EXPECT_TRUE(Rejected(Q(x, scalar_f32(1), nullptr, a), {"QuantizeLinear-10", "axis=0"}));
  // Opset 28 resolves to v25: int2 is there.
  const Tensor zp = zeros(E::kInt2, {});
  qdq::Result<qdq::Plan> plan = Q(x, scalar_f32(1), &zp, q_attrs(28));
  ASSERT_TRUE(Accepted(plan));
  EXPECT_EQ(plan->operator_name, "QuantizeLinear-25");
  EXPECT_EQ(plan->output_type, E::kInt2);
}

// ------------------------------------------------------------------------------------------------
// Type gates of each version, table-driven, from the spec tables.

using TypeSet = std::set<ElementType>;

const TypeSet kF8 = {E::kFloat8E4M3FN, E::kFloat8E4M3FNUZ, E::kFloat8E5M2, E::kFloat8E5M2FNUZ};

TypeSet unite(TypeSet a, const TypeSet& b) {
  a.insert(b.begin(), b.end());
  return a;
}

// QuantizeLinear T1 (x).
TypeSet q_x_types(int version) {
  if (version <= 13) return {E::kFloat32, E::kInt32};
  return {E::kFloat32, E::kFloat16, E::kBfloat16, E::kInt32};
}

// QuantizeLinear y_scale; for v19/v21 it shares T1 with x (checked separately).
TypeSet q_scale_types(int version) {
  if (version <= 13) return {E::kFloat32};
  if (version <= 21) return q_x_types(version);
  const TypeSet t2 = {E::kFloat32, E::kFloat16, E::kBfloat16, E::kInt32};
  return version == 23 ? t2 : unite(t2, {E::kFloat8E8M0});
}

// QuantizeLinear zero point / output.
TypeSet q_zp_types(int version) {
  TypeSet t = {E::kInt8, E::kUint8};
  if (version >= 19) t = unite(t, kF8);
  if (version >= 21) t = unite(t, {E::kInt16, E::kUint16, E::kInt4, E::kUint4});
  if (version >= 23) t = unite(t, {E::kFloat4E2M1});
  if (version >= 25) t = unite(t, {E::kInt2, E::kUint2});
  return t;
}

// DequantizeLinear x / zero point.
TypeSet dq_x_types(int version) {
  TypeSet t = {E::kInt8, E::kUint8, E::kInt32};
  if (version >= 19) t = unite(t, kF8);
  if (version >= 21) t = unite(t, {E::kInt16, E::kUint16, E::kInt4, E::kUint4});
  if (version >= 23) t = unite(t, {E::kFloat4E2M1});
  if (version >= 25) t = unite(t, {E::kInt2, E::kUint2});
  return t;
}

// DequantizeLinear x_scale.
TypeSet dq_scale_types(int version) {
  if (version <= 13) return {E::kFloat32};
  if (version <= 23) return {E::kFloat32, E::kFloat16, E::kBfloat16};
  return {E::kFloat32, E::kFloat16, E::kBfloat16, E::kFloat8E8M0};
}

// Checks one accept/reject decision; a rejection must name the operator and the type.
void expect_gate(const qdq::Result<qdq::Plan>& result, bool allowed, const std::string& op, ElementType type,
                 const std::string& what) {
  const std::string type_name(qdq::name(type));
  SCOPED_TRACE(op + " " + what + " " + type_name);
  if (allowed) {
    EXPECT_TRUE(Accepted(result));
  } else {
    EXPECT_TRUE(Rejected(result, {op, type_name, "type"}));
  }
}

TEST(ValidationTypeGates, QuantizeX) {
  for (int version : kVersions) {
    for (const qdq::ElementTypeInfo& row : qdq::all_element_types()) {
      // v19/v21: the scale shares x's type; elsewhere a float32 scale is always valid.
      const ElementType scale_type = (version == 19 || version == 21) ? row.type : E::kFloat32;
      expect_gate(Q(zeros(row.type, {4}), zeros(scale_type, {}), nullptr, q_attrs(version)),
                  q_x_types(version).count(row.type) > 0, qname(version), row.type, "x");
    }
  }
}

TEST(ValidationTypeGates, QuantizeScale) {
  for (int version : kVersions) {
    for (const qdq::ElementTypeInfo& row : qdq::all_element_types()) {
      // With a float32 x: v19/v21 accept only a float32 scale (same type variable).
      const bool allowed = (version == 19 || version == 21) ? row.type == E::kFloat32
                                                            : q_scale_types(version).count(row.type) > 0;
      expect_gate(Q(zeros(E::kFloat32, {4}), zeros(row.type, {}), nullptr, q_attrs(version)), allowed,
                  qname(version), row.type, "y_scale");
    }
  }
}

TEST(ValidationTypeGates, QuantizeScaleSharesXTypeInV19AndV21) {
  for (int version : {19, 21}) {
    for (const qdq::ElementTypeInfo& x_row : qdq::all_element_types()) {
      if (q_x_types(version).count(x_row.type) == 0) continue;
      for (const qdq::ElementTypeInfo& s_row : qdq::all_element_types()) {
        SCOPED_TRACE(std::string(x_row.name) + " / " + std::string(s_row.name));
        qdq::Result<qdq::Plan> plan = Q(zeros(x_row.type, {4}), zeros(s_row.type, {}), nullptr, q_attrs(version));
        if (s_row.type == x_row.type) {
          EXPECT_TRUE(Accepted(plan));
        } else {
          EXPECT_TRUE(Rejected(plan, {qname(version), "y_scale", s_row.name, x_row.name}));
        }
      }
    }
  }
}

TEST(ValidationTypeGates, QuantizeZeroPointAndOutput) {
  for (int version : kVersions) {
    for (const qdq::ElementTypeInfo& row : qdq::all_element_types()) {
      const bool allowed = q_zp_types(version).count(row.type) > 0;
      const Tensor zp = zeros(row.type, {});
      qdq::Result<qdq::Plan> plan = Q(zeros(E::kFloat32, {4}), scalar_f32(1), &zp, q_attrs(version));
      expect_gate(plan, allowed, qname(version), row.type, "y_zero_point");
      if (allowed && plan.ok()) {
        EXPECT_EQ(plan->output_type, row.type);
      }
      if (version >= 21) {  // output_dtype alone selects the same set
        qdq::QuantizeLinearAttributes a = q_attrs(version);
        a.output_dtype = static_cast<int64_t>(row.type);
        qdq::Result<qdq::Plan> by_attribute = Q(zeros(E::kFloat32, {4}), scalar_f32(1), nullptr, a);
        expect_gate(by_attribute, allowed, qname(version), row.type, "output_dtype");
        if (allowed && by_attribute.ok()) {
          EXPECT_EQ(by_attribute->output_type, row.type);
        }
      }
    }
  }
}

TEST(ValidationTypeGates, DequantizeX) {
  for (int version : kVersions) {
    for (const qdq::ElementTypeInfo& row : qdq::all_element_types()) {
      const bool allowed = dq_x_types(version).count(row.type) > 0;
      qdq::Result<qdq::Plan> plan = DQ(zeros(row.type, {4}), scalar_f32(1), nullptr, dq_attrs(version));
      expect_gate(plan, allowed, dqname(version), row.type, "x");
      if (allowed && plan.ok()) {
        EXPECT_EQ(plan->output_type, E::kFloat32);
      }
      // The zero point, of x's type, is accepted with it.
      if (allowed) {
        const Tensor zp = zeros(row.type, {});
        EXPECT_TRUE(Accepted(DQ(zeros(row.type, {4}), scalar_f32(1), &zp, dq_attrs(version))));
      }
    }
  }
}

TEST(ValidationTypeGates, DequantizeScale) {
  for (int version : kVersions) {
    for (const qdq::ElementTypeInfo& row : qdq::all_element_types()) {
      const bool allowed = dq_scale_types(version).count(row.type) > 0;
      qdq::DequantizeLinearAttributes a = dq_attrs(version);
      if (version >= 23) a.output_dtype = 1;  // so that an e8m0 scale is judged by its type alone
      qdq::Result<qdq::Plan> plan = DQ(zeros(E::kInt8, {4}), zeros(row.type, {}), nullptr, a);
      expect_gate(plan, allowed, dqname(version), row.type, "x_scale");
      if (allowed && plan.ok()) {  // float32 before v19 and by output_dtype from v23; the scale's type between
        EXPECT_EQ(plan->output_type, version == 19 || version == 21 ? row.type : E::kFloat32);
      }
      // Without output_dtype the output is float32 before v19 and the scale's type after.
      if (allowed && row.type != E::kFloat8E8M0) {
        qdq::Result<qdq::Plan> derived = DQ(zeros(E::kInt8, {4}), zeros(row.type, {}), nullptr, dq_attrs(version));
        ASSERT_TRUE(Accepted(derived));
        EXPECT_EQ(derived->output_type, version < 19 ? E::kFloat32 : row.type);
      }
    }
  }
}

// ------------------------------------------------------------------------------------------------
// AMD Quark ExtendedQuantizeLinear / ExtendedDequantizeLinear.

TEST(ValidationQuark, BlockedOrTwoDimensionalScaleRejected) {
  const Tensor scale = zeros(E::kFloat32, {2, 2});
  const Tensor zp = zeros(E::kUint8, {2, 2});
  EXPECT_TRUE(Rejected(XQ(zeros(E::kFloat32, {2, 4}), scale, &zp), {"ExtendedQuantizeLinear-1", "y_scale", "[2, 2]"}));
  EXPECT_TRUE(Rejected(XDQ(zeros(E::kUint8, {2, 4}), scale, &zp), {"ExtendedDequantizeLinear-1", "x_scale", "[2, 2]"}));
  // Even the shape of x itself (which is not a blocking) is not a Quark scale.
  EXPECT_TRUE(Rejected(XQ(zeros(E::kFloat32, {2, 2}), scale, nullptr), {"ExtendedQuantizeLinear-1", "[2, 2]"}));
}

TEST(ValidationQuark, TypeRules) {
  const Tensor zp = zeros(E::kUint8, {});
  for (ElementType bad : {E::kFloat16, E::kBfloat16, E::kInt32, E::kUint8}) {
    const std::string type(qdq::name(bad));
    EXPECT_TRUE(Rejected(XQ(zeros(bad, {4}), scalar_f32(1), &zp), {"ExtendedQuantizeLinear-1", "'x'", type, "T1"}));
  }
  for (ElementType bad : {E::kFloat16, E::kBfloat16, E::kInt32, E::kFloat8E8M0}) {
    const std::string type(qdq::name(bad));
    EXPECT_TRUE(Rejected(XQ(zeros(E::kFloat32, {4}), zeros(bad, {}), &zp),
                         {"ExtendedQuantizeLinear-1", "'y_scale'", type, "T2"}));
    EXPECT_TRUE(Rejected(XDQ(zeros(E::kUint8, {4}), zeros(bad, {}), &zp),
                         {"ExtendedDequantizeLinear-1", "'x_scale'", type, "T2"}));
  }
  for (ElementType bad : {E::kInt4, E::kUint4, E::kFloat8E4M3FN, E::kFloat32, E::kInt2}) {
    const std::string type(qdq::name(bad));
    const Tensor bad_zp = zeros(bad, {});
    EXPECT_TRUE(Rejected(XQ(zeros(E::kFloat32, {4}), scalar_f32(1), &bad_zp),
                         {"ExtendedQuantizeLinear-1", "'y_zero_point'", type, "T3"}));
    EXPECT_TRUE(Rejected(XDQ(zeros(bad, {4}), scalar_f32(1), nullptr), {"ExtendedDequantizeLinear-1", "'x'", type, "T3"}));
  }
  // DQ zero point of another type than x.
  const Tensor zp_i8 = zeros(E::kInt8, {});
  EXPECT_TRUE(Rejected(XDQ(zeros(E::kUint8, {4}), scalar_f32(1), &zp_i8),
                       {"ExtendedDequantizeLinear-1", "x_zero_point", "int8", "uint8"}));
  const Tensor zp_bf16 = zeros(E::kBfloat16, {});
  EXPECT_TRUE(Rejected(XDQ(zeros(E::kFloat16, {4}), scalar_f32(1), &zp_bf16),
                       {"ExtendedDequantizeLinear-1", "bfloat16", "float16"}));
  // Every documented T3 type works both ways.
  for (ElementType good : {E::kInt32, E::kInt16, E::kInt8, E::kUint32, E::kUint16, E::kUint8, E::kFloat16, E::kBfloat16}) {
    const Tensor good_zp = zeros(good, {});
    qdq::Result<qdq::Plan> q = XQ(zeros(E::kFloat32, {4}), scalar_f32(1), &good_zp);
    ASSERT_TRUE(Accepted(q));
    EXPECT_EQ(q->output_type, good);
    qdq::Result<qdq::Plan> dq = XDQ(zeros(good, {4}), scalar_f32(1), &good_zp);
    ASSERT_TRUE(Accepted(dq));
    EXPECT_EQ(dq->output_type, E::kFloat32);
  }
}

TEST(ValidationQuark, ShapesAndAxis) {
  const Tensor x = zeros(E::kFloat32, {2, 3});
  const Tensor scale = zeros(E::kFloat32, {3});
  const Tensor zp = zeros(E::kInt8, {3});
  qdq::Result<qdq::Plan> q = XQ(x, scale, &zp);
  ASSERT_TRUE(Accepted(q));
  EXPECT_EQ(q->granularity, qdq::Granularity::kPerAxis);
  EXPECT_EQ(q->output_type, E::kInt8);
  qdq::Result<qdq::Plan> dq = XDQ(zeros(E::kInt8, {2, 3}), scale, &zp, -1);
  ASSERT_TRUE(Accepted(dq));
  EXPECT_EQ(dq->granularity, qdq::Granularity::kPerAxis);
  // Per-axis length, axis range, zero point shape.
  EXPECT_TRUE(Rejected(XQ(x, scale, &zp, 0), {"ExtendedQuantizeLinear-1", "length 3", "2 elements along axis 0"}));
  EXPECT_TRUE(Rejected(XQ(x, scale, &zp, 2), {"ExtendedQuantizeLinear-1", "axis 2", "[-2, 1]"}));
  EXPECT_TRUE(Rejected(XDQ(zeros(E::kInt8, {2, 3}), scale, &zp, -3), {"ExtendedDequantizeLinear-1", "axis -3"}));
  const Tensor zp2 = zeros(E::kInt8, {2});
  EXPECT_TRUE(Rejected(XQ(x, scale, &zp2), {"ExtendedQuantizeLinear-1", "y_zero_point", "[2]", "[3]"}));
  // No zero point: uint8.
  qdq::Result<qdq::Plan> plain = XQ(x, scalar_f32(1), nullptr);
  ASSERT_TRUE(Accepted(plain));
  EXPECT_EQ(plain->output_type, E::kUint8);
  EXPECT_EQ(plain->granularity, qdq::Granularity::kPerTensor);
}

// ------------------------------------------------------------------------------------------------
// DirectML element-wise quantize / dequantize.

TEST(ValidationDirectML, Rank) {
  EXPECT_TRUE(Rejected(EQ(zeros(E::kFloat32, {}), scalar_f32(1), nullptr), {"ElementWiseQuantizeLinear", "rank 0", "1 to 8"}));
  const std::vector<int64_t> nine(9, 1);
  EXPECT_TRUE(Rejected(EQ(zeros(E::kFloat32, nine), zeros(E::kFloat32, nine), nullptr),
                       {"ElementWiseQuantizeLinear", "rank 9", "1 to 8"}));
  EXPECT_TRUE(Rejected(EDQ(zeros(E::kInt8, nine), zeros(E::kFloat32, nine), nullptr),
                       {"ElementWiseDequantizeLinear", "rank 9"}));
  const std::vector<int64_t> eight(8, 1);
  EXPECT_TRUE(Accepted(EQ(zeros(E::kFloat32, eight), zeros(E::kFloat32, eight), nullptr)));
}

TEST(ValidationDirectML, BroadcastShapes) {
  const Tensor x = zeros(E::kFloat32, {2, 3});
  EXPECT_TRUE(Rejected(EQ(x, zeros(E::kFloat32, {3}), nullptr), {"ElementWiseQuantizeLinear", "'scale'", "rank 1", "[3]", "rank 2"}));
  EXPECT_TRUE(Rejected(EQ(x, scalar_f32(1), nullptr), {"ElementWiseQuantizeLinear", "'scale'", "rank 0"}));
  EXPECT_TRUE(Rejected(EQ(x, zeros(E::kFloat32, {2, 2}), nullptr),
                       {"ElementWiseQuantizeLinear", "'scale'", "[2, 2]", "[2, 3]", "dimension 1"}));
  const Tensor zp = zeros(E::kUint8, {3, 3});
  EXPECT_TRUE(Rejected(EQ(x, zeros(E::kFloat32, {1, 1}), &zp),
                       {"ElementWiseQuantizeLinear", "'zero_point'", "[3, 3]", "dimension 0"}));
  const Tensor dq_zp = zeros(E::kInt8, {2});
  EXPECT_TRUE(Rejected(EDQ(zeros(E::kInt8, {2, 3}), zeros(E::kFloat32, {1, 3}), &dq_zp),
                       {"ElementWiseDequantizeLinear", "'zero_point'", "rank 1"}));

  // Valid broadcasts, with stride 0 where the operand has 1.
  const Tensor x3 = zeros(E::kFloat32, {2, 3, 4});
  const Tensor zp3 = zeros(E::kInt8, {2, 1, 4});
  qdq::Result<qdq::Plan> plan = EQ(x3, zeros(E::kFloat32, {1, 3, 1}), &zp3);
  ASSERT_TRUE(Accepted(plan));
  EXPECT_EQ(plan->granularity, qdq::Granularity::kElementwise);
  EXPECT_EQ(plan->output_type, E::kInt8);
  EXPECT_EQ(plan->layout.rank, 3);
  EXPECT_EQ(std::vector<int64_t>(plan->layout.scale_strides, plan->layout.scale_strides + 3),
            (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(std::vector<int64_t>(plan->layout.zero_point_strides, plan->layout.zero_point_strides + 3),
            (std::vector<int64_t>{4, 0, 1}));
  EXPECT_TRUE(Accepted(EQ(x3, zeros(E::kFloat32, {2, 3, 4}), nullptr)));
  EXPECT_TRUE(Accepted(EQ(x3, zeros(E::kFloat32, {1, 1, 1}), nullptr)));
  EXPECT_TRUE(Accepted(EDQ(zeros(E::kUint16, {2, 3, 4}), zeros(E::kFloat16, {2, 1, 1}), nullptr)));
}

TEST(ValidationDirectML, QuantizeTypes) {
  EXPECT_TRUE(Rejected(EQ(zeros(E::kInt32, {4}), zeros(E::kFloat16, {1}), nullptr),
                       {"ElementWiseQuantizeLinear", "'scale'", "float16", "int32", "float32"}));
  EXPECT_TRUE(Rejected(EQ(zeros(E::kFloat16, {4}), zeros(E::kFloat32, {1}), nullptr),
                       {"ElementWiseQuantizeLinear", "'scale'", "float32", "float16"}));
  EXPECT_TRUE(Rejected(EQ(zeros(E::kBfloat16, {4}), zeros(E::kBfloat16, {1}), nullptr),
                       {"ElementWiseQuantizeLinear", "'x'", "bfloat16"}));
  EXPECT_TRUE(Rejected(EQ(zeros(E::kFloat32, {4}), zeros(E::kFloat32, {1}), nullptr, E::kInt16),
                       {"ElementWiseQuantizeLinear", "output", "int16"}));
  const Tensor zp_i16 = zeros(E::kInt16, {1});
  EXPECT_TRUE(Rejected(EQ(zeros(E::kFloat32, {4}), zeros(E::kFloat32, {1}), &zp_i16),
                       {"ElementWiseQuantizeLinear", "zero_point", "int16"}));
  const Tensor zp_u8 = zeros(E::kUint8, {1});
  EXPECT_TRUE(Rejected(EQ(zeros(E::kFloat32, {4}), zeros(E::kFloat32, {1}), &zp_u8, E::kInt8),
                       {"ElementWiseQuantizeLinear", "int8", "uint8"}));
  // Valid combinations and the derived output type.
  qdq::Result<qdq::Plan> p = EQ(zeros(E::kInt32, {4}), zeros(E::kFloat32, {1}), nullptr);
  ASSERT_TRUE(Accepted(p));
  EXPECT_EQ(p->output_type, E::kUint8);
  p = EQ(zeros(E::kFloat16, {4}), zeros(E::kFloat16, {1}), &zp_u8, E::kUint8);
  ASSERT_TRUE(Accepted(p));
  EXPECT_EQ(p->output_type, E::kUint8);
  p = EQ(zeros(E::kFloat32, {4}), zeros(E::kFloat32, {1}), nullptr, E::kInt8);
  ASSERT_TRUE(Accepted(p));
  EXPECT_EQ(p->output_type, E::kInt8);
}

TEST(ValidationDirectML, DequantizeTypes) {
  EXPECT_TRUE(Rejected(EDQ(zeros(E::kFloat32, {4}), zeros(E::kFloat32, {1}), nullptr),
                       {"ElementWiseDequantizeLinear", "'x'", "float32", "InputTensor"}));
  EXPECT_TRUE(Rejected(EDQ(zeros(E::kInt4, {4}), zeros(E::kFloat32, {1}), nullptr),
                       {"ElementWiseDequantizeLinear", "'x'", "int4"}));
  EXPECT_TRUE(Rejected(EDQ(zeros(E::kInt8, {4}), zeros(E::kFloat32, {1}), nullptr, E::kBfloat16),
                       {"ElementWiseDequantizeLinear", "output", "bfloat16"}));
  EXPECT_TRUE(Rejected(EDQ(zeros(E::kInt8, {4}), zeros(E::kBfloat16, {1}), nullptr),
                       {"ElementWiseDequantizeLinear", "'scale'", "bfloat16"}));
  const Tensor zp = zeros(E::kUint8, {1});
  EXPECT_TRUE(Rejected(EDQ(zeros(E::kInt8, {4}), zeros(E::kFloat32, {1}), &zp),
                       {"ElementWiseDequantizeLinear", "zero_point", "uint8", "int8"}));
  // OutputTensor and ScaleTensor must have the same DataType.
  EXPECT_TRUE(Rejected(EDQ(zeros(E::kInt8, {4}), zeros(E::kFloat16, {1}), nullptr, E::kFloat32),
                       {"ElementWiseDequantizeLinear", "float32", "float16"}));
  EXPECT_TRUE(Rejected(EDQ(zeros(E::kInt8, {4}), zeros(E::kFloat32, {1}), nullptr, E::kFloat16),
                       {"ElementWiseDequantizeLinear", "float16", "float32"}));
  for (ElementType x_type : {E::kInt32, E::kInt16, E::kInt8, E::kUint32, E::kUint16, E::kUint8}) {
    for (ElementType scale_type : {E::kFloat32, E::kFloat16}) {
      const Tensor x_zp = zeros(x_type, {1});
      qdq::Result<qdq::Plan> p = EDQ(zeros(x_type, {4}), zeros(scale_type, {1}), &x_zp);
      ASSERT_TRUE(Accepted(p));
      EXPECT_EQ(p->output_type, scale_type);
      EXPECT_TRUE(Accepted(EDQ(zeros(x_type, {4}), zeros(scale_type, {1}), nullptr, scale_type)));
    }
  }
}

}  // namespace
