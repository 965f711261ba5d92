// float6 e2m3 / e3m2 (OCP MX FP6): the table rows and the table-driven codec, against an
// independent transcription of the formats (S EE MMM bias 1 and S EEE MM bias 3, no inf, no NaN),
// every code and every tie; storage one code per byte; and the Q/DQ front doors, whose versions
// 10..25 do not list the types, rejecting them. python/tests/test_float6.py checks the same codec
// against ml_dtypes over every float16 value and a float32 sweep.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "qdq/qdq.hpp"
#include "types/codec.h"

namespace qdq {
namespace {

struct Format6 {
  ElementType type;
  int exponent_bits, mantissa_bits, bias;
  double max, smallest_subnormal;
};
const Format6 kFormats[] = {{ElementType::kFloat6E2M3, 2, 3, 1, 7.5, 0.125},
                            {ElementType::kFloat6E3M2, 3, 2, 3, 28.0, 0.0625}};

// Value of a 6-bit code written from the OCP MX definition, not from the table.
double spec_value(const Format6& f, uint32_t code) {
  const int m = f.mantissa_bits;
  const double sign = (code >> 5) & 1 ? -1.0 : 1.0;
  const uint32_t exponent = (code >> m) & ((1u << f.exponent_bits) - 1);
  const uint32_t mantissa = code & ((1u << m) - 1);
  if (exponent == 0) return sign * std::ldexp(mantissa, 1 - f.bias - m);
  return sign * std::ldexp((1u << m) + mantissa, static_cast<int>(exponent) - f.bias - m);
}

TEST(Float6, TableRows) {
  for (const Format6& f : kFormats) {
    const ElementTypeInfo& t = info(f.type);
    EXPECT_EQ(t.bits, 6);
    EXPECT_FALSE(t.is_packed());
    EXPECT_EQ(t.bytes_per_element(), 1);
    EXPECT_EQ(storage_bytes(f.type, 5), 5u);
    EXPECT_EQ(storage_bytes(f.type, 5, SubByteLayout::kOneCodePerByte), 5u);
    EXPECT_EQ(t.max, f.max);
    EXPECT_EQ(t.lowest, -f.max);
    EXPECT_EQ(element_type_from_code(static_cast<int64_t>(f.type)), f.type);
    EXPECT_EQ(element_type_from_name(t.name), f.type);
    EXPECT_EQ(element_type_from_name(t.onnx_name), f.type);
  }
  EXPECT_EQ(static_cast<int>(ElementType::kFloat6E2M3), 27);  // onnx.proto's FLOAT6E2M3
  EXPECT_EQ(static_cast<int>(ElementType::kFloat6E3M2), 28);  // onnx.proto's FLOAT6E3M2
}

TEST(Float6, EveryCodeDecodesAndRoundTrips) {
  for (const Format6& f : kFormats) {
    const ElementTypeInfo& t = info(f.type);
    for (uint32_t code = 0; code < 64; ++code) {
      const double value = codec::decode(t, code);
      ASSERT_EQ(value, spec_value(f, code)) << t.name << " code " << code;
      ASSERT_EQ(std::signbit(value), (code & 0x20) != 0) << t.name << " code " << code;
      ASSERT_EQ(codec::encode_float(t, value, codec::Overflow::kSaturate), code) << t.name << " code " << code;
      // The high bits of a stored byte are ignored when read.
      const uint8_t byte = static_cast<uint8_t>(code | 0xC0);
      ASSERT_EQ(codec::load_code(&byte, t, 0), code);
    }
    EXPECT_EQ(codec::decode(t, 0x1F), f.max);
    EXPECT_EQ(codec::decode(t, 0x01), f.smallest_subnormal);
  }
}

// Every midpoint between neighbouring codes rounds to the even code, one double ulp either side to
// the nearer; past the maximum, infinities included, saturates; NaN gives +max (the float4 rule).
TEST(Float6, EncodeRoundsHalfToEvenAndSaturates) {
  for (const Format6& f : kFormats) {
    const ElementTypeInfo& t = info(f.type);
    for (uint32_t code = 0; code < 0x1F; ++code) {
      const double low = spec_value(f, code), high = spec_value(f, code + 1);
      const double middle = (low + high) / 2;
      const uint32_t even = code % 2 == 0 ? code : code + 1;
      for (double sign : {1.0, -1.0}) {
        const uint32_t sign_bit = sign < 0 ? 0x20 : 0;
        ASSERT_EQ(codec::encode_float(t, sign * middle, codec::Overflow::kSaturate), sign_bit | even) << t.name << " " << middle;
        ASSERT_EQ(codec::encode_float(t, sign * std::nextafter(middle, 0.0), codec::Overflow::kSaturate), sign_bit | code);
        ASSERT_EQ(codec::encode_float(t, sign * std::nextafter(middle, 1e9), codec::Overflow::kSaturate),
                  sign_bit | (code + 1));
      }
    }
    for (codec::Overflow overflow : {codec::Overflow::kSaturate, codec::Overflow::kInfOrNan}) {
      EXPECT_EQ(codec::encode_float(t, f.max * 1.2, overflow), 0x1Fu);
      EXPECT_EQ(codec::encode_float(t, -std::numeric_limits<double>::infinity(), overflow), 0x3Fu);
      EXPECT_EQ(codec::encode_float(t, std::numeric_limits<double>::quiet_NaN(), overflow), 0x1Fu);
    }
    EXPECT_EQ(codec::encode_float(t, -0.0, codec::Overflow::kSaturate), 0x20u);
    EXPECT_EQ(codec::encode_float(t, -f.smallest_subnormal / 2, codec::Overflow::kSaturate), 0x20u);  // tie to -0
  }
}

// No QuantizeLinear / DequantizeLinear version qdq implements lists float6, nor do Quark's and
// DirectML's operators.
TEST(Float6, QdqFrontDoorsRejectIt) {
  const std::vector<int64_t> shape = {4};
  std::vector<float> x(4, 1.0f);
  const float one = 1.0f;
  std::vector<uint8_t> codes(4, 0);
  const TensorView xv{ElementType::kFloat32, shape, x.data()};
  const TensorView scale{ElementType::kFloat32, {}, &one};
  for (const Format6& f : kFormats) {
    const TensorView zero_point{f.type, {}, codes.data()};
    const TensorView q{f.type, shape, codes.data()};
    for (int64_t opset : {10, 13, 19, 21, 23, 24, 25}) {
      QuantizeLinearAttributes qa;
      qa.opset = opset;
      EXPECT_FALSE(plan_quantize_linear(xv, scale, &zero_point, qa).ok()) << opset;
      if (opset >= 21) {
        qa.output_dtype = static_cast<int64_t>(f.type);
        EXPECT_FALSE(plan_quantize_linear(xv, scale, nullptr, qa).ok()) << opset;
      }
      DequantizeLinearAttributes da;
      da.opset = opset;
      EXPECT_FALSE(plan_dequantize_linear(q, scale, nullptr, da).ok()) << opset;
    }
    EXPECT_FALSE(plan_extended_quantize_linear(xv, scale, &zero_point).ok());
    EXPECT_FALSE(plan_extended_dequantize_linear(q, scale, &zero_point).ok());
    EXPECT_FALSE(plan_elementwise_quantize_linear(xv, scale, nullptr, f.type).ok());
    EXPECT_FALSE(plan_elementwise_dequantize_linear(q, scale, nullptr).ok());
  }
}

}  // namespace
}  // namespace qdq
