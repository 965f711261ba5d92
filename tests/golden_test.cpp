// Golden tables: the ONNX backend test vectors, edge cases written out one per row, granularity
// indexing against an independent coordinate computation, Quark and DirectML semantics, packed
// tails.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "oracle.h"
#include "qdq/qdq.hpp"
#include "types/codec.h"

namespace qdq {
namespace {

using E = ElementType;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A small owning tensor for tests: values are encoded into `type` codes (integers by value).
struct Tensor {
  ElementType type = E::kUndefined;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;

  Tensor() = default;
  Tensor(ElementType t, std::vector<int64_t> s, const std::vector<double>& values) : type(t), shape(std::move(s)) {
    bytes.assign(storage_bytes(t, values.size()) + 1, 0);
    for (size_t i = 0; i < values.size(); ++i) {
      const ElementTypeInfo& row = info(t);
      const uint32_t code = row.is_integer() ? static_cast<uint32_t>(static_cast<int64_t>(values[i]))
                                             : codec::encode_float(row, values[i], codec::Overflow::kInfOrNan);
      codec::store_code(bytes.data(), row, i, code);
    }
  }
  static Tensor codes(ElementType t, std::vector<int64_t> s, const std::vector<uint32_t>& codes) {
    Tensor out;
    out.type = t;
    out.shape = std::move(s);
    out.bytes.assign(storage_bytes(t, codes.size()) + 1, 0);
    for (size_t i = 0; i < codes.size(); ++i) codec::store_code(out.bytes.data(), info(t), i, codes[i]);
    return out;
  }
  uint64_t count() const {
    uint64_t n = 1;
    for (int64_t d : shape) n *= static_cast<uint64_t>(d);
    return n;
  }
  TensorView view() const { return {type, shape, bytes.data()}; }
  std::vector<uint32_t> all_codes() const {
    std::vector<uint32_t> out;
    for (uint64_t i = 0; i < count(); ++i) out.push_back(codec::load_code(bytes.data(), info(type), i));
    return out;
  }
  std::vector<double> values() const {
    std::vector<double> out;
    for (uint64_t i = 0; i < count(); ++i) out.push_back(codec::load_value(bytes.data(), info(type), i));
    return out;
  }
};

Tensor run_plan(const Result<Plan>& plan) {
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  if (!plan.ok()) return {};
  Tensor y;
  y.type = plan->output_type;
  y.shape = plan->shape;
  y.bytes.assign(storage_bytes(y.type, plan->element_count) + 1, 0xEE);  // canary after the end
  const Status status = execute(plan.value(), {y.type, y.shape, y.bytes.data()});
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(y.bytes.back(), 0xEE) << "wrote past the end of y";
  return y;
}

Tensor quantize(const Tensor& x, const Tensor& scale, const Tensor* zp, QuantizeLinearAttributes a = {}) {
  TensorView zv;
  if (zp) zv = zp->view();
  return run_plan(plan_quantize_linear(x.view(), scale.view(), zp ? &zv : nullptr, a));
}

Tensor dequantize(const Tensor& x, const Tensor& scale, const Tensor* zp, DequantizeLinearAttributes a = {}) {
  TensorView zv;
  if (zp) zv = zp->view();
  return run_plan(plan_dequantize_linear(x.view(), scale.view(), zp ? &zv : nullptr, a));
}

std::vector<double> as_doubles(std::initializer_list<double> v) { return v; }

// --- ONNX backend node test vectors (onnx/backend/test/case/node/{de,}quantizelinear.py) -------

TEST(Golden, BackendQuantizeLinear) {
  const Tensor x(E::kFloat32, {6}, {0, 2, 3, 1000, -254, -1000});
  const Tensor s(E::kFloat32, {}, {2});
  const Tensor zp(E::kUint8, {}, {128});
  EXPECT_EQ(quantize(x, s, &zp).values(), as_doubles({128, 129, 130, 255, 1, 0}));
}

TEST(Golden, BackendQuantizeLinearAxis) {
  const Tensor x(E::kFloat32, {1, 3, 3, 2},
                 {-162, 10, -100, 232, -20, -50, -76, 0, 0, 252, 32, -44, 245, -485, -960, -270, -375, -470});
  const Tensor s(E::kFloat32, {3}, {2, 4, 5});
  const Tensor zp(E::kUint8, {3}, {84, 24, 196});
  EXPECT_EQ(quantize(x, s, &zp).values(),
            as_doubles({3, 89, 34, 200, 74, 59, 5, 24, 24, 87, 32, 13, 245, 99, 4, 142, 121, 102}));
}

TEST(Golden, BackendQuantizeLinearBlocked) {
  const Tensor x(E::kFloat32, {3, 4}, {6, 12, 50, 5, 1, 8, 4, 5, 0, 20, 10, 4});
  const Tensor s(E::kFloat32, {3, 2}, {1.5, 2.5, 3, 4.9, 5.1, 6.9});
  const Tensor zp(E::kUint8, {3, 2}, {0, 1, 1, 0, 2, 3});
  QuantizeLinearAttributes a;
  a.axis = 1;
  a.block_size = 2;
  EXPECT_EQ(quantize(x, s, &zp, a).values(), as_doubles({4, 8, 21, 3, 1, 4, 1, 1, 2, 6, 4, 4}));
  const Tensor xs(E::kFloat32, {3, 4}, {6, -8, -10, 5, 1, 8, 4, 5, 0, 20, 10, 4});
  a.output_dtype = static_cast<int64_t>(E::kInt16);
  const Tensor y = quantize(xs, s, nullptr, a);
  EXPECT_EQ(y.type, E::kInt16);
  EXPECT_EQ(y.values(), as_doubles({4, -5, -4, 2, 0, 3, 1, 1, 0, 4, 1, 1}));
}

TEST(Golden, BackendQuantizeLinearFloat8) {
  const Tensor x(E::kFloat32, {5}, {0, 1, 2, 100000, 200});
  const Tensor s(E::kFloat32, {}, {2});
  const Tensor zp8(E::kFloat8E4M3FN, {1}, {0});
  // 50000 saturates to 448; 100 is the tie between 96 and 104 and goes to 96 (even mantissa).
  EXPECT_EQ(quantize(x, s, &zp8).all_codes(), (std::vector<uint32_t>{0x00, 0x30, 0x38, 0x7E, 0x6C}));
  const Tensor zp5(E::kFloat8E5M2, {1}, {0});
  EXPECT_EQ(quantize(x, s, &zp5).all_codes(), (std::vector<uint32_t>{0x00, 0x38, 0x3C, 0x7A, 0x56}));
}

TEST(Golden, BackendQuantizeLinear16Bit) {
  const Tensor s(E::kFloat32, {}, {2});
  const Tensor xu(E::kFloat32, {12}, {0, -128, 3, -3, 2.9, -2.9, 3.1, -3.1, 65536, -65534, 70000, -70000});
  const Tensor zpu(E::kUint16, {}, {32767});
  EXPECT_EQ(quantize(xu, s, &zpu).values(),
            as_doubles({32767, 32703, 32769, 32765, 32768, 32766, 32769, 32765, 65535, 0, 65535, 0}));
  const Tensor xi(E::kFloat32, {16}, {0, -514, 3, -3, 2.9, -2.9, 3.1, -3.1, 65022, -66046, 65023, -66047, 65024,
                                      -66048, 70000, -70000});
  const Tensor zpi(E::kInt16, {}, {256});
  EXPECT_EQ(quantize(xi, s, &zpi).values(), as_doubles({256, -1, 258, 254, 257, 255, 258, 254, 32767, -32767, 32767,
                                                        -32768, 32767, -32768, 32767, -32768}));
}

TEST(Golden, BackendQuantizeLinearSubByte) {
  QuantizeLinearAttributes a;
  a.axis = 0;
  const Tensor s(E::kFloat32, {3}, {2, 3, 4});
  const Tensor x(E::kFloat32, {3, 4}, {0, 2.5, 4.8, 8.6, -30, -20, 6, 9, 12, 15, 16, 40});
  const Tensor zpu4(E::kUint4, {3}, {1, 1, 1});
  EXPECT_EQ(quantize(x, s, &zpu4, a).values(), as_doubles({1, 2, 3, 5, 0, 0, 3, 4, 4, 5, 5, 11}));
  const Tensor zpi4(E::kInt4, {3}, {1, 1, 1});
  EXPECT_EQ(quantize(x, s, &zpi4, a).values(), as_doubles({1, 2, 3, 5, -8, -6, 3, 4, 4, 5, 5, 7}));
  const Tensor xu2(E::kFloat32, {3, 4}, {0, 2.5, 4.8, 8.6, -2, -1, 1, 3, 4, 5, 6, 7});
  const Tensor zpu2(E::kUint2, {3}, {0, 0, 0});
  EXPECT_EQ(quantize(xu2, s, &zpu2, a).values(), as_doubles({0, 1, 2, 3, 0, 0, 0, 1, 1, 1, 2, 2}));
  const Tensor xi2(E::kFloat32, {3, 4}, {0, 2.5, 4.8, 8.6, -4, -3, 1, 2, -0.0, -2.5, -4.8, -8.6});
  const Tensor zpi2(E::kInt2, {3}, {0, 0, 0});
  EXPECT_EQ(quantize(xi2, s, &zpi2, a).values(), as_doubles({0, 1, 1, 1, -1, -1, 0, 1, 0, -1, -1, -2}));
  // float4e2m1: 1.25 ties to 1 (even); -0 + 0 = +0; packed bytes as in the test's output_0.pb.
  const Tensor xf4(E::kFloat32, {3, 4}, {0, 2.5, 4.8, 8.6, -30, -20, 6, 9, -0.0, -2.5, -4.8, -8.6});
  const Tensor zpf4(E::kFloat4E2M1, {3}, {0, 0, 0});
  const Tensor yf4 = quantize(xf4, s, &zpf4, a);
  EXPECT_EQ(std::vector<unsigned char>(yf4.bytes.begin(), yf4.bytes.begin() + 6),
            (std::vector<unsigned char>{0x20, 0x64, 0xFF, 0x54, 0x90, 0xCA}));
}

TEST(Golden, BackendDequantizeLinear) {
  const Tensor s(E::kFloat32, {}, {2});
  const Tensor x(E::kUint8, {4}, {0, 3, 128, 255});
  const Tensor zp(E::kUint8, {}, {128});
  EXPECT_EQ(dequantize(x, s, &zp).values(), as_doubles({-256, -250, 0, 254}));

  const Tensor xb(E::kUint8, {1, 4, 3, 2}, {3, 89, 34, 200, 74, 59, 5, 24, 24, 87, 32, 13,
                                            5, 12, 12, 5, 24, 24, 87, 32, 13, 12, 45, 11});
  const Tensor sb(E::kFloat32, {1, 2, 3, 2}, {2, 4, 5, 2, 4, 5, 3, 2, 4, 2, 3, 3});
  const Tensor zb(E::kUint8, {1, 2, 3, 2}, {0, 1, 2, 1, 1, 1, 1, 3, 4, 1, 2, 2});
  DequantizeLinearAttributes a;
  a.axis = 1;
  a.block_size = 2;
  // y = (x - zp[:, i//2]) * s[:, i//2], computed independently here.
  const std::vector<double> xv = xb.values(), sv = sb.values(), zv = zb.values();
  std::vector<double> expected;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j) {
      const int k = (i / 2) * 6 + j;
      expected.push_back((xv[static_cast<size_t>(i * 6 + j)] - zv[static_cast<size_t>(k)]) * sv[static_cast<size_t>(k)]);
    }
  EXPECT_EQ(dequantize(xb, sb, &zb, a).values(), expected);

  const Tensor x8 = Tensor::codes(E::kFloat8E4M3FN, {5}, {0x00, 0x30, 0x38, 0x7E, 0xED});
  EXPECT_EQ(dequantize(x8, s, nullptr).values(), as_doubles({0, 1, 2, 896, -208}));
  const Tensor zp8(E::kFloat8E4M3FN, {1}, {0});
  EXPECT_EQ(dequantize(x8, s, &zp8).values(), as_doubles({0, 1, 2, 896, -208}));
  const Tensor s16(E::kFloat16, {}, {2});
  const Tensor y16 = dequantize(x8, s16, nullptr);
  EXPECT_EQ(y16.type, E::kFloat16);
  EXPECT_EQ(y16.values(), as_doubles({0, 1, 2, 896, -208}));
  const Tensor x5 = Tensor::codes(E::kFloat8E5M2, {5}, {0x00, 0x38, 0x3C, 0x7A, 0xD6});
  EXPECT_EQ(dequantize(x5, s, nullptr).values(), as_doubles({0, 1, 2, 98304, -192}));

  const Tensor xu16(E::kUint16, {4}, {30000, 31000, 32768, 33000});
  const Tensor zu16(E::kUint16, {}, {32767});
  EXPECT_EQ(dequantize(xu16, s, &zu16).values(), as_doubles({-5534, -3534, 2, 466}));
  const Tensor xi16(E::kInt16, {4}, {-300, -30, -1025, 1270});
  const Tensor zi16(E::kInt16, {}, {-1024});
  EXPECT_EQ(dequantize(xi16, s, &zi16).values(), as_doubles({1448, 1988, -2, 4588}));
  const Tensor xu4(E::kUint4, {5}, {0, 1, 7, 10, 15});
  const Tensor zu4(E::kUint4, {1}, {1});
  EXPECT_EQ(dequantize(xu4, s, &zu4).values(), as_doubles({-2, 0, 12, 18, 28}));
  const Tensor xi4(E::kInt4, {5}, {0, 1, 7, -4, -8});
  const Tensor zi4(E::kInt4, {1}, {1});
  EXPECT_EQ(dequantize(xi4, s, &zi4).values(), as_doubles({-2, 0, 12, -10, -18}));
  const Tensor xu2(E::kUint2, {4}, {0, 1, 2, 3});
  const Tensor zu2(E::kUint2, {1}, {1});
  EXPECT_EQ(dequantize(xu2, s, &zu2).values(), as_doubles({-2, 0, 2, 4}));
  const Tensor xi2(E::kInt2, {4}, {0, 1, -1, -2});
  const Tensor zi2(E::kInt2, {1}, {1});
  EXPECT_EQ(dequantize(xi2, s, &zi2).values(), as_doubles({-2, 0, -4, -6}));
  const Tensor xf4(E::kFloat4E2M1, {5}, {0, 1, -1, 1.5, -4});
  const Tensor zf4(E::kFloat4E2M1, {1}, {0});
  EXPECT_EQ(dequantize(xf4, s, &zf4).values(), as_doubles({0, 2, -2, 3, -8}));
}

// --- Edge rows -----------------------------------------------------------------------------

struct EdgeRow {
  const char* why;
  ElementType target;
  double x;
  double scale;
  double zero_point;
  int64_t saturate;
  uint32_t expected_code;
};

TEST(Golden, QuantizeEdgeTable) {
  const EdgeRow rows[] = {
      {"0.5 ties to 0 (even)", E::kInt8, 0.5, 1, 0, 1, 0},
      {"1.5 ties to 2", E::kInt8, 1.5, 1, 0, 1, 2},
      {"2.5 ties to 2", E::kInt8, 2.5, 1, 0, 1, 2},
      {"-2.5 ties to -2", E::kInt8, -2.5, 1, 0, 1, 0xFE},
      {"rounding before the zero point: 0.5 + 1 = 1, not 2", E::kUint8, 0.5, 1, 1, 1, 1},
      {"+inf saturates to max", E::kUint8, kInf, 1, 0, 1, 255},
      {"-inf saturates to lowest", E::kInt8, -kInf, 1, 0, 1, 0x80},
      {"NaN gives lowest (int8)", E::kInt8, kNaN, 1, 0, 1, 0x80},
      {"NaN gives lowest (uint8) even with a zero point", E::kUint8, kNaN, 1, 5, 1, 0},
      {"beyond int32: 3e9 -> int16 max", E::kInt16, 3e9, 1, 0, 1, 0x7FFF},
      {"beyond int32: -3e9 -> uint16 0", E::kUint16, -3e9, 1, 0, 1, 0},
      {"int4 saturates at 7", E::kInt4, 7.5, 1, 0, 1, 7},
      {"uint2 saturates at 3", E::kUint2, 100, 1, 0, 1, 3},
      {"int2 lowest is -2", E::kInt2, -100, 1, 0, 1, 0b10},
      {"division by 0: +x -> max", E::kUint8, 1, 0, 0, 1, 255},
      {"0/0 is NaN -> lowest", E::kUint8, 0, 0, 0, 1, 0},
      {"e4m3fn 464 is the tie 448|480, even 448 stays", E::kFloat8E4M3FN, 464, 1, 0, 0, 0x7E},
      {"e4m3fn just above 464 overflows to NaN", E::kFloat8E4M3FN, 464.00003, 1, 0, 0, 0x7F},
      {"e4m3fn just above 464 saturates", E::kFloat8E4M3FN, 464.00003, 1, 0, 1, 0x7E},
      {"e4m3fnuz 248 ties up (240 is odd) and overflows to NaN", E::kFloat8E4M3FNUZ, 248, 1, 0, 0, 0x80},
      {"e4m3fnuz just below 248 stays 240", E::kFloat8E4M3FNUZ, 247.99998, 1, 0, 0, 0x7F},
      {"e5m2 61440 overflows to inf", E::kFloat8E5M2, 61440, 1, 0, 0, 0x7C},
      {"e5m2 -61440 overflows to -inf", E::kFloat8E5M2, -61440, 1, 0, 0, 0xFC},
      {"e5m2 just below 61440 stays 57344", E::kFloat8E5M2, 61439.996, 1, 0, 0, 0x7B},
      {"e5m2fnuz 61440 overflows to NaN", E::kFloat8E5M2FNUZ, 61440, 1, 0, 0, 0x80},
      {"e5m2 +inf saturates to max", E::kFloat8E5M2, kInf, 1, 0, 1, 0x7B},
      {"e4m3fnuz -inf saturates to -max (Cast-24 table)", E::kFloat8E4M3FNUZ, -kInf, 1, 0, 1, 0xFF},
      {"e4m3fn -inf without saturation is -NaN", E::kFloat8E4M3FN, -kInf, 1, 0, 0, 0xFF},
      {"e4m3fn -0 keeps its sign", E::kFloat8E4M3FN, -0.0, 1, 0, 1, 0x80},
      {"e4m3fnuz has no -0", E::kFloat8E4M3FNUZ, -0.0, 1, 0, 1, 0x00},
      {"e4m3fn smallest subnormal 2^-9", E::kFloat8E4M3FN, 0x1p-9, 1, 0, 1, 0x01},
      {"e4m3fn half the smallest subnormal ties to 0", E::kFloat8E4M3FN, 0x1p-10, 1, 0, 1, 0x00},
      {"e4m3fn negative underflow is -0", E::kFloat8E4M3FN, -0x1p-11, 1, 0, 1, 0x80},
      {"e5m2fnuz negative underflow is +0", E::kFloat8E5M2FNUZ, -0x1p-19, 1, 0, 1, 0x00},
      {"e5m2 subnormal 3 * 2^-16", E::kFloat8E5M2, 3 * 0x1p-16, 1, 0, 1, 0x03},
      {"e4m3fn NaN", E::kFloat8E4M3FN, kNaN, 1, 0, 1, 0x7F},
      {"e5m2 NaN is 0x7E", E::kFloat8E5M2, kNaN, 1, 0, 0, 0x7E},
      {"e5m2fnuz NaN is 0x80", E::kFloat8E5M2FNUZ, -kNaN, 1, 0, 1, 0x80},
      {"float4 7 -> 6 (always saturating)", E::kFloat4E2M1, 7, 1, 0, 0, 0x7},
      {"float4 5 ties to 4 (even)", E::kFloat4E2M1, 5, 1, 0, 1, 0x6},
      {"float4 0.25 ties to 0", E::kFloat4E2M1, 0.25, 1, 0, 1, 0x0},
      {"float4 -inf -> -6", E::kFloat4E2M1, -kInf, 1, 0, 1, 0xF},
      {"float4 NaN -> +6 (ONNX float4 document)", E::kFloat4E2M1, -kNaN, 1, 0, 1, 0x7},
      {"float4 zero point added in float: 1 + 1.5 = 2.5 ties to 2", E::kFloat4E2M1, 1, 1, 1.5, 1, 0x4},
      {"float4 -0 + zero point 0 = +0", E::kFloat4E2M1, -0.0, 1, 0, 1, 0x0},
  };
  for (const EdgeRow& row : rows) {
    const Tensor x(E::kFloat32, {1}, {row.x});
    const Tensor s(E::kFloat32, {}, {row.scale});
    const Tensor zp(row.target, {}, {row.zero_point});
    QuantizeLinearAttributes a;
    a.saturate = row.saturate;
    const Tensor y = quantize(x, s, &zp, a);
    ASSERT_FALSE(y.bytes.empty()) << row.why;
    EXPECT_EQ(y.all_codes()[0], row.expected_code) << row.why;
  }
}

TEST(Golden, Float4WithoutZeroPointKeepsNegativeZero) {
  const Tensor x(E::kFloat32, {2}, {-0.0, 0.0});
  const Tensor s(E::kFloat32, {}, {1});
  QuantizeLinearAttributes a;
  a.output_dtype = static_cast<int64_t>(E::kFloat4E2M1);
  EXPECT_EQ(quantize(x, s, nullptr, a).all_codes(), (std::vector<uint32_t>{0x8, 0x0}));
}

TEST(Golden, DivisionPrecision) {
  // f16 x 15.5 with f32 scale 1.0003: the division is float32 (the scale's type) -> 15.4953... -> 15;
  // a float16 division would round the scale to 1.0 and give 16 (ORT PR #32735's example).
  const Tensor x(E::kFloat16, {1}, {15.5});
  const Tensor s(E::kFloat32, {}, {1.0003});
  const Tensor zp(E::kInt8, {}, {0});
  EXPECT_EQ(quantize(x, s, &zp).values()[0], 15);
  QuantizeLinearAttributes a;
  a.precision = static_cast<int64_t>(E::kFloat16);
  EXPECT_EQ(quantize(x, s, &zp, a).values()[0], 16);
  // f32 x with a float16 scale divides in float16 (the scale's type): 15.4999 -> 15.5 -> 16.
  const Tensor x32(E::kFloat32, {1}, {15.4999});
  const Tensor s16(E::kFloat16, {}, {1.0});
  EXPECT_EQ(quantize(x32, s16, &zp).values()[0], 16);
  a.precision = static_cast<int64_t>(E::kFloat32);
  EXPECT_EQ(quantize(x32, s16, &zp, a).values()[0], 15);
  // int32 x with a float32 scale: x is rounded to float32 first: 34603009 -> 34603008, / 2^21 = 16.5 -> 16.
  const Tensor xi(E::kInt32, {1}, {34603009});
  const Tensor s21(E::kFloat32, {}, {2097152});
  const Tensor zp16(E::kInt16, {}, {0});
  EXPECT_EQ(quantize(xi, s21, &zp16).values()[0], 16);
  // An int32 scale divides in float64: 25165824 / 16777217 = 1.4999999 -> 1.
  const Tensor xf(E::kFloat32, {1}, {25165824});
  const Tensor si(E::kInt32, {}, {16777217});
  EXPECT_EQ(quantize(xf, si, &zp16).values()[0], 1);
  // An e8m0 scale (2^-8) divides in float32: 1000 * 256 = 256000 -> int16 max.
  const Tensor xh(E::kFloat16, {1}, {1000});
  const Tensor se = Tensor::codes(E::kFloat8E8M0, {}, {127 - 8});
  EXPECT_EQ(quantize(xh, se, &zp16).values()[0], 32767);
}

TEST(Golden, DequantizeEdges) {
  // int32 with a zero point: x - zp exact in int64 (16777217 - 1 = 16777216), then float32.
  const Tensor x(E::kInt32, {1}, {16777217});
  const Tensor s(E::kFloat32, {}, {1});
  const Tensor zp(E::kInt32, {}, {1});
  EXPECT_EQ(dequantize(x, s, &zp).all_codes()[0], 0x4B800000u);
  EXPECT_EQ(dequantize(x, s, nullptr).all_codes()[0], 0x4B800000u);  // f32(16777217) rounds to even
  // Double rounding to float16 exactly as the reference: int16 -14483 * f16 0x3D9B -> 0xF4F4.
  const Tensor x16(E::kInt16, {1}, {-14483});
  const Tensor s16 = Tensor::codes(E::kFloat16, {}, {0x3D9B});
  EXPECT_EQ(dequantize(x16, s16, nullptr).all_codes()[0], 0xF4F4u);
  // NaN codes: e4m3fn 0xFF -> -qNaN; FNUZ 0x80 -> -qNaN (ml_dtypes); to f16 / bf16.
  const Tensor nan8 = Tensor::codes(E::kFloat8E4M3FN, {2}, {0x7F, 0xFF});
  EXPECT_EQ(dequantize(nan8, s, nullptr).all_codes(), (std::vector<uint32_t>{0x7FC00000u, 0xFFC00000u}));
  const Tensor half_scale(E::kFloat16, {}, {2});
  EXPECT_EQ(dequantize(nan8, half_scale, nullptr).all_codes(), (std::vector<uint32_t>{0x7E00u, 0xFE00u}));
  const Tensor bf_scale(E::kBfloat16, {}, {2});
  EXPECT_EQ(dequantize(nan8, bf_scale, nullptr).all_codes(), (std::vector<uint32_t>{0x7FC0u, 0xFFC0u}));
  const Tensor fnuz = Tensor::codes(E::kFloat8E5M2FNUZ, {1}, {0x80});
  EXPECT_EQ(dequantize(fnuz, s, nullptr).all_codes()[0], 0xFFC00000u);
  // uint8 [0, 255], zp 128, bf16 scale 1 -> -128 (0xC300), 127 (0x42FE).
  const Tensor xu(E::kUint8, {2}, {0, 255});
  const Tensor zu(E::kUint8, {}, {128});
  const Tensor one_bf(E::kBfloat16, {}, {1});
  EXPECT_EQ(dequantize(xu, one_bf, &zu).all_codes(), (std::vector<uint32_t>{0xC300u, 0x42FEu}));
  // e8m0 scale with output_dtype; code 0x00 = 2^-127 (a float32 subnormal 0x00400000).
  const Tensor one(E::kUint8, {1}, {1});
  const Tensor tiny = Tensor::codes(E::kFloat8E8M0, {}, {0x00});
  DequantizeLinearAttributes a;
  a.output_dtype = static_cast<int64_t>(E::kFloat32);
  EXPECT_EQ(dequantize(one, tiny, nullptr, a).all_codes()[0], 0x00400000u);
  const Tensor e8nan = Tensor::codes(E::kFloat8E8M0, {}, {0xFF});
  EXPECT_TRUE(std::isnan(dequantize(one, e8nan, nullptr, a).values()[0]));
}

// --- Granularity: indexing against an independent coordinate computation ----------------------

// Expected uint8 output for x (shape) with scales chosen per element by `scale_of(coords)`.
template <class ScaleOf>
std::vector<double> expected_by_coordinates(const std::vector<int64_t>& shape, const std::vector<double>& x,
                                            ScaleOf scale_of) {
  std::vector<double> out;
  std::vector<int64_t> coords(shape.size(), 0);
  for (size_t i = 0; i < x.size(); ++i) {
    const double q = std::nearbyint(static_cast<double>(static_cast<float>(x[i]) / static_cast<float>(scale_of(coords))));
    out.push_back(std::min(std::max(q + 100.0, 0.0), 255.0));
    for (size_t d = shape.size(); d-- > 0;) {
      if (++coords[d] < shape[d]) break;
      coords[d] = 0;
    }
  }
  return out;
}

TEST(Golden, PerAxisOnEveryAxis) {
  const std::vector<int64_t> shape = {3, 4, 5};
  std::vector<double> xv;
  for (int i = 0; i < 60; ++i) xv.push_back((i * 37 % 61) - 30);
  const Tensor x(E::kFloat32, shape, xv);
  for (int64_t axis : {0, 1, 2, -1, -2, -3}) {
    const int64_t a = axis < 0 ? axis + 3 : axis;
    std::vector<double> scales;
    for (int64_t k = 0; k < shape[static_cast<size_t>(a)]; ++k) scales.push_back(0.5 + 0.25 * static_cast<double>(k));
    const Tensor s(E::kFloat32, {shape[static_cast<size_t>(a)]}, scales);
    const Tensor zp(E::kUint8, {shape[static_cast<size_t>(a)]}, std::vector<double>(scales.size(), 100));
    QuantizeLinearAttributes attrs;
    attrs.axis = axis;
    EXPECT_EQ(quantize(x, s, &zp, attrs).values(),
              expected_by_coordinates(shape, xv, [&](const std::vector<int64_t>& c) { return scales[static_cast<size_t>(c[static_cast<size_t>(a)])]; }))
        << "axis " << axis;
  }
}

TEST(Golden, BlockedOnEveryAxisWithUnevenBlocks) {
  const std::vector<int64_t> shape = {5, 7, 3};
  std::vector<double> xv;
  for (int i = 0; i < 105; ++i) xv.push_back((i * 53 % 101) - 50);
  const Tensor x(E::kFloat32, shape, xv);
  for (int64_t axis : {0, 1, 2, -1}) {
    const size_t a = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
    for (int64_t block : {1, 2, 3, 4, 7, 8}) {
      std::vector<int64_t> scale_shape = shape;
      scale_shape[a] = (shape[a] + block - 1) / block;
      int64_t scale_count = 1;
      for (int64_t d : scale_shape) scale_count *= d;
      std::vector<double> scales;
      for (int64_t k = 0; k < scale_count; ++k) scales.push_back(0.25 + 0.125 * static_cast<double>(k % 13));
      const Tensor s(E::kFloat32, scale_shape, scales);
      const Tensor zp(E::kUint8, scale_shape, std::vector<double>(scales.size(), 100));
      QuantizeLinearAttributes attrs;
      attrs.axis = axis;
      attrs.block_size = block;
      const auto scale_of = [&](const std::vector<int64_t>& c) {
        std::vector<int64_t> sc = c;
        sc[a] /= block;
        const int64_t index = (sc[0] * scale_shape[1] + sc[1]) * scale_shape[2] + sc[2];
        return scales[static_cast<size_t>(index)];
      };
      if (scale_shape == shape && block != 1) continue;
      EXPECT_EQ(quantize(x, s, &zp, attrs).values(), expected_by_coordinates(shape, xv, scale_of))
          << "axis " << axis << " block " << block;
    }
  }
}

TEST(Golden, BlockedRankOneFromTheReferenceTests) {
  // x = arange(6), scale [0.25, 0.5], zp [-1, -2], axis 0, B = 3 -> int8 [-1, 3, 7, 4, 6, 8].
  const Tensor x(E::kFloat32, {6}, {0, 1, 2, 3, 4, 5});
  const Tensor s(E::kFloat32, {2}, {0.25, 0.5});
  const Tensor zp(E::kInt8, {2}, {-1, -2});
  QuantizeLinearAttributes a;
  a.axis = 0;
  a.block_size = 3;
  EXPECT_EQ(quantize(x, s, &zp, a).values(), as_doubles({-1, 3, 7, 4, 6, 8}));
}

// --- Packed tails ------------------------------------------------------------------------------

TEST(Golden, PackedOutputTailsAreZeroPaddedAndBounded) {
  for (ElementType type : {E::kInt4, E::kUint4, E::kFloat4E2M1, E::kInt2, E::kUint2}) {
    for (int64_t n = 1; n <= 13; ++n) {
      std::vector<double> xv;
      for (int64_t i = 0; i < n; ++i) xv.push_back(static_cast<double>(i % 2));  // 0 and 1 fit every type
      const Tensor x(E::kFloat32, {n}, xv);
      const Tensor s(E::kFloat32, {}, {1});
      QuantizeLinearAttributes a;
      a.output_dtype = static_cast<int64_t>(type);
      const Tensor y = quantize(x, s, nullptr, a);  // checks the canary byte after the end
      const ElementTypeInfo& t = info(type);
      const int per_byte = t.elements_per_byte();
      const int used_bits = static_cast<int>((n % per_byte) * t.bits);
      if (used_bits != 0) {
        EXPECT_EQ(y.bytes[static_cast<size_t>(n / per_byte)] >> used_bits, 0) << t.name << " n=" << n;
      }
      // The values read back (dequantized) equal the inputs.
      const Tensor back = dequantize(y, s, nullptr);
      EXPECT_EQ(back.values(), xv) << t.name << " n=" << n;
    }
  }
}

// --- Quark ---------------------------------------------------------------------------------

TEST(Golden, QuarkExtendedQuantize) {
  const Tensor x(E::kFloat32, {2, 3}, {1, -2, 100000, 3e9, -kInf, kNaN});
  const Tensor s(E::kFloat32, {}, {0.5});
  const auto q = [&](const Tensor& zp) {
    const TensorView zv = zp.view();
    return run_plan(plan_extended_quantize_linear(x.view(), s.view(), &zv, 1));
  };
  // int32: 3e9 / 0.5 = 6e9 saturates; NaN -> lowest.
  EXPECT_EQ(q(Tensor(E::kInt32, {}, {1})).values(),
            as_doubles({3, -3, 200001, 2147483647, -2147483648.0, -2147483648.0}));
  EXPECT_EQ(q(Tensor(E::kUint32, {}, {7})).values(), as_doubles({9, 3, 200007, 4294967295.0, 0, 0}));
  // float16: y = f16(x / s + zp) saturated to +-65504; NaN stays NaN.
  const Tensor y16 = q(Tensor(E::kFloat16, {}, {0.5}));
  EXPECT_EQ(y16.all_codes(), (std::vector<uint32_t>{0x4100, 0xC300, 0x7BFF, 0x7BFF, 0xFBFF, 0x7E00}));
  // bfloat16: saturated to +-max, zero point added in float32.
  const Tensor ybf = q(Tensor(E::kBfloat16, {}, {1}));
  EXPECT_EQ(ybf.values()[0], 3);
  EXPECT_EQ(ybf.values()[2], 199680);  // 200001 rounded to bfloat16 (spacing 1024 there)
  EXPECT_EQ(ybf.all_codes()[4], 0xFF7Fu);
  // Per-axis really is per-axis (as in Quark 0.13's runtime, which indexes scale[c] too).
  const Tensor xa(E::kFloat32, {2, 2}, {10, 10, 10, 10});
  const Tensor sa(E::kFloat32, {2}, {1, 2});
  const Tensor za(E::kInt8, {2}, {0, 0});
  const TensorView zav = za.view();
  EXPECT_EQ(run_plan(plan_extended_quantize_linear(xa.view(), sa.view(), &zav, 1)).values(), as_doubles({10, 5, 10, 5}));
}

TEST(Golden, QuarkExtendedDequantize) {
  const Tensor s(E::kFloat32, {}, {0.5});
  const Tensor x(E::kUint32, {2}, {4294967295.0, 0});
  const Tensor zp(E::kUint32, {}, {1});
  const TensorView zv = zp.view();
  EXPECT_EQ(run_plan(plan_extended_dequantize_linear(x.view(), s.view(), &zv, 1)).values(),
            as_doubles({2147483648.0, -0.5}));  // f32(4294967294) = 4294967296, * 0.5
  const Tensor xh(E::kFloat16, {2}, {3, -1});
  const Tensor zh(E::kFloat16, {}, {1});
  const TensorView zhv = zh.view();
  EXPECT_EQ(run_plan(plan_extended_dequantize_linear(xh.view(), s.view(), &zhv, 1)).values(), as_doubles({1, -1}));
}

// --- DirectML ------------------------------------------------------------------------------

TEST(Golden, DirectMLBroadcast) {
  // x [2, 3], scale [1, 3] (per column), zero point [2, 1] (per row).
  const Tensor x(E::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor s(E::kFloat32, {1, 3}, {1, 2, 4});
  const Tensor zp(E::kInt8, {2, 1}, {10, -10});
  const TensorView zv = zp.view();
  const Tensor y = run_plan(plan_elementwise_quantize_linear(x.view(), s.view(), &zv));
  // round(x / s) + zp: [1, 1, 0.75->1] + 10, [4, 2.5->2, 1.5->2] - 10
  EXPECT_EQ(y.values(), as_doubles({11, 11, 11, -6, -8, -8}));
  EXPECT_EQ(y.type, E::kInt8);
  const Tensor back = run_plan(plan_elementwise_dequantize_linear(y.view(), s.view(), &zv));
  EXPECT_EQ(back.values(), as_doubles({1, 2, 4, 4, 4, 8}));
  // Without a zero point: uint8 output, zero point 0.
  const Tensor yu = run_plan(plan_elementwise_quantize_linear(x.view(), s.view(), nullptr));
  EXPECT_EQ(yu.type, E::kUint8);
  EXPECT_EQ(yu.values(), as_doubles({1, 1, 1, 4, 2, 2}));
  // Rank 8 with every dimension broadcast but the last.
  const std::vector<int64_t> shape8 = {2, 1, 2, 1, 2, 1, 2, 3};
  std::vector<double> xv8;
  for (int i = 0; i < 48; ++i) xv8.push_back(i);
  const Tensor x8(E::kFloat32, shape8, xv8);
  const Tensor s8(E::kFloat32, {1, 1, 1, 1, 1, 1, 1, 3}, {1, 2, 3});
  const Tensor y8 = run_plan(plan_elementwise_quantize_linear(x8.view(), s8.view(), nullptr));
  for (int i = 0; i < 48; ++i) {
    EXPECT_EQ(y8.values()[static_cast<size_t>(i)], std::min(255.0, static_cast<double>(std::nearbyint(static_cast<float>(i) / static_cast<float>(1 + i % 3)))));
  }
}

TEST(Golden, DirectMLFloat16DividesInFloat16) {
  // float16 x and scale divide in float16: 3.541015625 / 0.1287841796875 = 27.4957... rounds to
  // 27.5 in float16, which ties to 28; a float32 division would give 27.
  const Tensor x(E::kFloat16, {1}, {3.541015625});
  const Tensor s(E::kFloat16, {1}, {0.1287841796875});
  EXPECT_EQ(run_plan(plan_elementwise_quantize_linear(x.view(), s.view(), nullptr)).values()[0], 28);
  // int32 x takes a float32 scale and divides in float32.
  const Tensor xi(E::kInt32, {2}, {7, -7});
  const Tensor sf(E::kFloat32, {1}, {2});
  EXPECT_EQ(run_plan(plan_elementwise_quantize_linear(xi.view(), sf.view(), nullptr)).values(), as_doubles({4, 0}));
}

}  // namespace
}  // namespace qdq
