// QuantizeLinear and DequantizeLinear through the public API against an independent transcription
// that uses the CPU's own float32 arithmetic (IEEE division, nearbyint, F16C) and the brute-force
// small-float oracle: all 65,536 float16 and bfloat16 inputs, several scales and zero points, every
// target; every code of every quantized type dequantized.
#include <gtest/gtest.h>

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstring>
#include <random>

#include "oracle.h"
#include "qdq/qdq.hpp"
#include "types/codec.h"

namespace qdq {
namespace {

const ElementType kOnnxTargets[] = {
    ElementType::kUint8,        ElementType::kInt8,           ElementType::kUint16,     ElementType::kInt16,
    ElementType::kUint4,        ElementType::kInt4,           ElementType::kUint2,      ElementType::kInt2,
    ElementType::kFloat8E4M3FN, ElementType::kFloat8E4M3FNUZ, ElementType::kFloat8E5M2, ElementType::kFloat8E5M2FNUZ,
    ElementType::kFloat4E2M1};

// --- The transcription ---------------------------------------------------------------------------

// x / s in precision `p` using native float32 division; float16 and bfloat16 results are the
// float32 quotient of the operands rounded to p, then rounded to p (correct: 24 >= 2*11+2).
float divide_in(ElementType p, float x, float s) {
  switch (p) {
    case ElementType::kFloat16: {
      const float xh = oracle::hardware_half_to_float(oracle::hardware_float_to_half(x));
      const float sh = oracle::hardware_half_to_float(oracle::hardware_float_to_half(s));
      return oracle::hardware_half_to_float(oracle::hardware_float_to_half(xh / sh));
    }
    case ElementType::kBfloat16: {
      const float xb = oracle::bfloat16_to_float(oracle::float_to_bfloat16(x));
      const float sb = oracle::bfloat16_to_float(oracle::float_to_bfloat16(s));
      return oracle::bfloat16_to_float(oracle::float_to_bfloat16(xb / sb));
    }
    default:
      return x / s;
  }
}

uint32_t expected_quantize(ElementType target, float quotient, double zero_point, bool saturate) {
  const ElementTypeInfo& t = info(target);
  if (t.is_integer()) {
    if (std::isnan(quotient)) return static_cast<uint32_t>(static_cast<int64_t>(t.lowest)) & ((1u << t.bits) - 1);
    double r = std::nearbyint(static_cast<double>(quotient)) + zero_point;
    r = std::min(std::max(r, t.lowest), t.max);
    return static_cast<uint32_t>(static_cast<int64_t>(r)) & (t.bits == 32 ? 0xFFFFFFFFu : ((1u << t.bits) - 1));
  }
  const oracle::SmallFloatOracle& oracle = oracle::small_float_oracle(target);
  if (target == ElementType::kFloat4E2M1) return oracle.encode(quotient + static_cast<float>(zero_point), true);
  return oracle.encode(quotient, saturate);
}

// Stores one value of `type` (integer zero points, float scales) into a byte buffer.
std::vector<unsigned char> single_element(ElementType type, double value) {
  std::vector<unsigned char> bytes(4, 0);
  const ElementTypeInfo& t = info(type);
  uint32_t code = 0;
  if (t.is_integer()) code = static_cast<uint32_t>(static_cast<int64_t>(value));
  else code = codec::encode_float(t, value, codec::Overflow::kInfOrNan);
  codec::store_code(bytes.data(), t, 0, code);
  return bytes;
}

struct Case {
  ElementType x_type;
  ElementType scale_type;
  double scale;
  ElementType target;
  double zero_point;
  bool saturate;
};

std::string describe(const Case& c) {
  std::ostringstream out;
  out << "x " << name(c.x_type) << ", scale " << name(c.scale_type) << " " << c.scale << ", target "
      << name(c.target) << ", zp " << c.zero_point << ", saturate " << c.saturate;
  return out.str();
}

// Runs QuantizeLinear-25 over all 65,536 codes of a 16-bit x type and compares every output code.
void check_all_16bit_inputs(const Case& c) {
  std::vector<uint16_t> x(65536);
  for (uint32_t i = 0; i < 65536; ++i) x[i] = static_cast<uint16_t>(i);
  const std::vector<int64_t> shape = {65536};
  const std::vector<unsigned char> scale = single_element(c.scale_type, c.scale);
  const std::vector<unsigned char> zp = single_element(c.target, c.zero_point);
  const TensorView x_view{c.x_type, shape, x.data()};
  const TensorView scale_view{c.scale_type, {}, scale.data()};
  const TensorView zp_view{c.target, {}, zp.data()};
  std::vector<unsigned char> y(storage_bytes(c.target, 65536));
  QuantizeLinearAttributes attributes;
  attributes.saturate = c.saturate ? 1 : 0;
  const Status status = quantize_linear(x_view, scale_view, &zp_view, attributes, {c.target, shape, y.data()});
  ASSERT_TRUE(status.ok()) << status.message();

  const float scale_value = static_cast<float>(codec::decode(info(c.scale_type), codec::load_code(scale.data(), info(c.scale_type), 0)));
  const ElementType precision = c.scale_type;
  int mismatches = 0;
  for (uint32_t i = 0; i < 65536 && mismatches < 5; ++i) {
    const float xv = c.x_type == ElementType::kFloat16 ? oracle::hardware_half_to_float(static_cast<uint16_t>(i))
                                                       : oracle::bfloat16_to_float(static_cast<uint16_t>(i));
    const uint32_t expected = expected_quantize(c.target, divide_in(precision, xv, scale_value), c.zero_point, c.saturate);
    const uint32_t actual = codec::load_code(y.data(), info(c.target), i);
    if (expected != actual) {
      ++mismatches;
      ADD_FAILURE() << describe(c) << ": x code 0x" << std::hex << i << " (" << xv << ") expected 0x" << expected
                    << " got 0x" << actual;
    }
  }
}

class QuantizeAll16BitInputs : public testing::TestWithParam<ElementType> {};

TEST_P(QuantizeAll16BitInputs, MatchesTheTranscription) {
  if (!oracle::have_f16c()) GTEST_SKIP() << "no F16C on this CPU";
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  const ElementType target = GetParam();
  const ElementTypeInfo& t = info(target);
  // Scales: exact powers of two, a non-power of two, inexact decimals, tiny and huge.
  const double scales[] = {1.0, 0.5, 3.0, 0.1, 1e-3, 300.0};
  std::vector<double> zero_points = {0.0};
  if (t.is_integer()) zero_points.push_back(t.is_signed ? t.lowest + 1 : std::floor(t.max / 2));
  if (target == ElementType::kFloat4E2M1) zero_points.push_back(1.5);
  for (ElementType x_type : {ElementType::kFloat16, ElementType::kBfloat16}) {
    for (ElementType scale_type : {x_type, ElementType::kFloat32}) {
      for (double scale : scales) {
        for (double zp : zero_points) {
          for (bool saturate : {true, false}) {
            if (!saturate && !(t.is_float() && t.bits == 8)) continue;  // saturate matters for float8 only
            check_all_16bit_inputs({x_type, scale_type, scale, target, zp, saturate});
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryOnnxTarget, QuantizeAll16BitInputs, testing::ValuesIn(kOnnxTargets),
                         [](const testing::TestParamInfo<ElementType>& info) { return std::string(name(info.param)); });

TEST(Quantize, RandomFloat32InputsMatchTheTranscription) {
  const uint32_t seed = 2026;
  std::mt19937 generator(seed);
  const int64_t n = 4096;
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) {
    // Half of the values in a useful range, half arbitrary bit patterns (NaN, inf, huge, tiny).
    v = generator() % 2 ? std::bit_cast<float>(static_cast<uint32_t>(generator()))
                        : static_cast<float>(static_cast<int32_t>(generator() % 200001) - 100000) / 37.0f;
  }
  const std::vector<int64_t> shape = {n};
  for (ElementType target : kOnnxTargets) {
    for (float scale : {1.0f, 0.37f, 1e-5f, 1e5f}) {
      const TensorView x_view{ElementType::kFloat32, shape, x.data()};
      const TensorView scale_view{ElementType::kFloat32, {}, &scale};
      std::vector<unsigned char> y(storage_bytes(target, static_cast<uint64_t>(n)));
      QuantizeLinearAttributes attributes;
      attributes.output_dtype = static_cast<int64_t>(target);
      ASSERT_TRUE(quantize_linear(x_view, scale_view, nullptr, attributes, {target, shape, y.data()}).ok());
      for (int64_t i = 0; i < n; ++i) {
        const uint32_t expected = expected_quantize(target, x[static_cast<size_t>(i)] / scale, 0.0, true);
        ASSERT_EQ(codec::load_code(y.data(), info(target), static_cast<uint64_t>(i)), expected)
            << "seed " << seed << " " << name(target) << " x=" << x[static_cast<size_t>(i)] << " scale " << scale;
      }
    }
  }
}

// --- Dequantize: every code of every quantized type --------------------------------------------

float expected_dequantize(ElementType x_type, uint32_t code, double zero_point, float scale) {
  const double x = oracle::spec_decode(x_type, code);
  const ElementTypeInfo& t = info(x_type);
  // float8 / float4: the zero point is required to be 0 and is not subtracted (so -0 stays -0).
  const float difference = t.is_float() ? static_cast<float>(x) : static_cast<float>(x) - static_cast<float>(zero_point);
  return difference * scale;
}

TEST(Dequantize, EveryCodeOfEveryQuantizedTypeMatchesTheTranscription) {
  if (!oracle::have_f16c()) GTEST_SKIP() << "no F16C on this CPU";
  for (ElementType x_type : kOnnxTargets) {
    const ElementTypeInfo& t = info(x_type);
    const uint32_t codes = 1u << t.bits;
    std::vector<unsigned char> x(storage_bytes(x_type, codes));
    for (uint32_t c = 0; c < codes; ++c) codec::store_code(x.data(), t, c, c);
    const std::vector<int64_t> shape = {static_cast<int64_t>(codes)};
    std::vector<double> zero_points = {0.0};
    if (t.is_integer()) zero_points.push_back(t.is_signed ? -1.0 : 1.0);
    for (double zp_value : zero_points) {
      for (float scale : {1.0f, 0.125f, 3.3f, 65504.0f, 1e-30f}) {
        for (ElementType out : {ElementType::kFloat32, ElementType::kFloat16, ElementType::kBfloat16}) {
          const std::vector<unsigned char> zp = single_element(x_type, zp_value);
          const TensorView x_view{x_type, shape, x.data()};
          const TensorView scale_view{ElementType::kFloat32, {}, &scale};
          const TensorView zp_view{x_type, {}, zp.data()};
          std::vector<unsigned char> y(storage_bytes(out, codes));
          DequantizeLinearAttributes attributes;
          attributes.output_dtype = static_cast<int64_t>(out);
          const Status status = dequantize_linear(x_view, scale_view, &zp_view, attributes, {out, shape, y.data()});
          ASSERT_TRUE(status.ok()) << status.message();
          for (uint32_t c = 0; c < codes; ++c) {
            const float product = expected_dequantize(x_type, c, zp_value, scale);
            uint32_t expected = std::bit_cast<uint32_t>(product);
            if (out == ElementType::kFloat16) expected = oracle::hardware_float_to_half(product);
            if (out == ElementType::kBfloat16) expected = oracle::float_to_bfloat16(product);
            ASSERT_EQ(codec::load_code(y.data(), info(out), c), expected)
                << name(x_type) << " code 0x" << std::hex << c << " zp " << zp_value << " scale " << scale << " -> "
                << name(out);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace qdq
