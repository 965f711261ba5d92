// Codecs against independent oracles: every code of every type of 8 bits or less decoded, every
// float16 and bfloat16 value (and every rounding boundary) encoded into every small float type.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>

#include "oracle.h"
#include "types/codec.h"

namespace qdq {
namespace {

const ElementType kSmallFloats[] = {ElementType::kFloat8E4M3FN, ElementType::kFloat8E4M3FNUZ,
                                    ElementType::kFloat8E5M2, ElementType::kFloat8E5M2FNUZ,
                                    ElementType::kFloat4E2M1};

bool same_value(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) && std::signbit(a) == std::signbit(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

TEST(Codec, DecodesEveryCodeOfEveryNarrowType) {
  int checked = 0;
  for (const ElementTypeInfo& type : all_element_types()) {
    if (type.bits > 8) continue;
    for (uint32_t code = 0; code < (1u << type.bits); ++code) {
      const double expected = oracle::spec_decode(type.type, code);
      const double actual = codec::decode(type, code);
      EXPECT_TRUE(same_value(expected, actual))
          << type.name << " code 0x" << std::hex << code << ": expected " << expected << " got " << actual;
      ++checked;
    }
  }
  // 14 types: 7 of 8 bits (int8, uint8, four float8, e8m0), 2 float6, 3 of 4 bits, 2 of 2 bits.
  EXPECT_EQ(checked, 7 * 256 + 2 * 64 + 3 * 16 + 2 * 4);
}

TEST(Codec, TableRangesMatchTheFormatDocuments) {
  for (const ElementTypeInfo& type : all_element_types()) {
    if (!type.is_float() || type.bits > 8) continue;
    EXPECT_EQ(codec::decode(type, codec::max_finite_code(type)), type.max) << type.name;
    EXPECT_EQ(oracle::spec_decode(type.type, codec::max_finite_code(type)), type.max) << type.name;
  }
  // Annotated maxima: 448 = 0.1111.110 (e4m3fn), 240 = 0.1111.111 (e4m3fnuz),
  // 57344 = 0.11110.11 (e5m2) and 0.11111.11 (e5m2fnuz), 6 = 0.11.1, 2^127 = 1111'1110 (e8m0).
  EXPECT_EQ(codec::max_finite_code(info(ElementType::kFloat8E4M3FN)), 0b0'1111'110u);
  EXPECT_EQ(codec::max_finite_code(info(ElementType::kFloat8E4M3FNUZ)), 0b0'1111'111u);
  EXPECT_EQ(codec::max_finite_code(info(ElementType::kFloat8E5M2)), 0b0'11110'11u);
  EXPECT_EQ(codec::max_finite_code(info(ElementType::kFloat8E5M2FNUZ)), 0b0'11111'11u);
  EXPECT_EQ(codec::max_finite_code(info(ElementType::kFloat4E2M1)), 0b0'11'1u);
  EXPECT_EQ(codec::max_finite_code(info(ElementType::kFloat6E2M3)), 0b0'11'111u);
  EXPECT_EQ(codec::max_finite_code(info(ElementType::kFloat6E3M2)), 0b0'111'11u);
  EXPECT_EQ(codec::max_finite_code(info(ElementType::kFloat8E8M0)), 0b1111'1110u);
  EXPECT_EQ(codec::max_finite_code(info(ElementType::kFloat16)), 0x7BFFu);
  EXPECT_EQ(codec::max_finite_code(info(ElementType::kBfloat16)), 0x7F7Fu);
}

TEST(Codec, DecodesEveryFloat16AndBfloat16Code) {
  if (!oracle::have_f16c()) GTEST_SKIP() << "no F16C on this CPU";
  for (uint32_t code = 0; code < 65536; ++code) {
    const double half = oracle::hardware_half_to_float(static_cast<uint16_t>(code));
    const double bf16 = oracle::bfloat16_to_float(static_cast<uint16_t>(code));
    ASSERT_TRUE(same_value(codec::decode(info(ElementType::kFloat16), code), half)) << std::hex << code;
    ASSERT_TRUE(same_value(codec::decode(info(ElementType::kBfloat16), code), bf16)) << std::hex << code;
  }
}

// Encodes `x` with both saturate settings and compares with the brute-force oracle.
void expect_small_float_encoding(ElementType type, const oracle::SmallFloatOracle& oracle, double x) {
  for (bool saturate : {true, false}) {
    const uint32_t expected = oracle.encode(x, saturate);
    const uint32_t actual = codec::encode_float(
        info(type), x, saturate ? codec::Overflow::kSaturate : codec::Overflow::kInfOrNan);
    ASSERT_EQ(actual, expected) << name(type) << " x=" << x << " (bits 0x" << std::hex
                                << std::bit_cast<uint64_t>(x) << ") saturate=" << saturate;
  }
}

TEST(Codec, EncodesEveryFloat16AndBfloat16IntoEverySmallFloat) {
  if (!oracle::have_f16c()) GTEST_SKIP() << "no F16C on this CPU";
  for (ElementType type : kSmallFloats) {
    const oracle::SmallFloatOracle oracle(type);
    for (uint32_t code = 0; code < 65536; ++code) {
      expect_small_float_encoding(type, oracle, oracle::hardware_half_to_float(static_cast<uint16_t>(code)));
      expect_small_float_encoding(type, oracle, oracle::bfloat16_to_float(static_cast<uint16_t>(code)));
    }
  }
}

TEST(Codec, EncodesEveryRoundingBoundaryAndItsNeighbours) {
  // For each pair of adjacent representable values: the midpoint and one float32 ulp either side,
  // both signs, plus each representable value itself.
  for (ElementType type : kSmallFloats) {
    const oracle::SmallFloatOracle oracle(type);
    std::vector<double> values;
    const uint32_t codes = 1u << oracle::code_bits(type);
    for (uint32_t code = 0; code < codes / 2; ++code) {
      const double v = oracle::spec_decode(type, code);
      if (std::isfinite(v)) values.push_back(v);
    }
    std::sort(values.begin(), values.end());
    const double top = values.back() + (values.back() - values[values.size() - 2]);
    values.push_back(top);  // the overflow neighbour
    for (size_t i = 0; i + 1 < values.size(); ++i) {
      const float mid = static_cast<float>((values[i] + values[i + 1]) / 2);
      for (float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY), static_cast<float>(values[i])}) {
        expect_small_float_encoding(type, oracle, x);
        expect_small_float_encoding(type, oracle, -x);
      }
    }
  }
}

TEST(Codec, EncodesRandomFloat32IntoEverySmallFloat) {
  const uint32_t seed = 12345;
  std::mt19937 generator(seed);
  for (ElementType type : kSmallFloats) {
    const oracle::SmallFloatOracle oracle(type);
    for (int i = 0; i < 20000; ++i) {
      // Random bit patterns cover NaN payloads, infinities and every exponent.
      const float x = std::bit_cast<float>(static_cast<uint32_t>(generator()));
      SCOPED_TRACE(testing::Message() << "seed " << seed);
      expect_small_float_encoding(type, oracle, x);
      // And values in the type's own range.
      const float scaled = std::ldexp(static_cast<float>(generator() % 100000) / 100000.0f,
                                      static_cast<int>(generator() % 40) - 20);
      expect_small_float_encoding(type, oracle, scaled);
    }
  }
}

TEST(Codec, Float32ToFloat16MatchesTheHardware) {
  if (!oracle::have_f16c()) GTEST_SKIP() << "no F16C on this CPU";
  const ElementTypeInfo& half = info(ElementType::kFloat16);
  auto check = [&](float x) {
    const uint32_t actual = codec::encode_float(half, x, codec::Overflow::kInfOrNan);
    ASSERT_EQ(actual, oracle::hardware_float_to_half(x)) << "x=" << x << " bits 0x" << std::hex
                                                         << std::bit_cast<uint32_t>(x);
  };
  // Every float16 midpoint and its float32 neighbours (covers subnormal ties and the 65520
  // overflow point), then random float32 bit patterns (seeded).
  for (uint32_t code = 0; code < 0x7C00; ++code) {
    const float lo = oracle::hardware_half_to_float(static_cast<uint16_t>(code));
    const float hi = code + 1 == 0x7C00 ? 65536.0f : oracle::hardware_half_to_float(static_cast<uint16_t>(code + 1));
    const float mid = lo + (hi - lo) / 2;
    for (float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY), lo}) {
      check(x);
      check(-x);
    }
  }
  std::mt19937 generator(777);
  for (int i = 0; i < 1000000; ++i) check(std::bit_cast<float>(static_cast<uint32_t>(generator())));
}

TEST(Codec, Float32ToBfloat16MatchesTheBitTranscription) {
  const ElementTypeInfo& bf16 = info(ElementType::kBfloat16);
  std::mt19937 generator(4242);
  for (int i = 0; i < 1000000; ++i) {
    const float x = std::bit_cast<float>(static_cast<uint32_t>(generator()));
    ASSERT_EQ(codec::encode_float(bf16, x, codec::Overflow::kInfOrNan), oracle::float_to_bfloat16(x))
        << "x=" << x << " bits 0x" << std::hex << std::bit_cast<uint32_t>(x);
  }
  // Every bfloat16 midpoint and neighbours.
  for (uint32_t code = 0; code < 0x7F80; ++code) {
    const uint32_t mid_bits = (code << 16) | 0x8000;
    for (uint32_t bits : {mid_bits, mid_bits - 1, mid_bits + 1, mid_bits | 0x8000'0000u}) {
      const float x = std::bit_cast<float>(bits);
      ASSERT_EQ(codec::encode_float(bf16, x, codec::Overflow::kInfOrNan), oracle::float_to_bfloat16(x))
          << std::hex << bits;
    }
  }
}

TEST(Codec, SaturatingWideFloatsClampToMax) {
  // Quark's float16/bfloat16 targets saturate: 65520 (which rounds to inf) and +inf give 65504.
  const ElementTypeInfo& half = info(ElementType::kFloat16);
  EXPECT_EQ(codec::encode_float(half, 65520.0, codec::Overflow::kSaturate), 0x7BFFu);
  EXPECT_EQ(codec::encode_float(half, 65520.0, codec::Overflow::kInfOrNan), 0x7C00u);
  EXPECT_EQ(codec::encode_float(half, -INFINITY, codec::Overflow::kSaturate), 0xFBFFu);
  EXPECT_EQ(codec::encode_float(half, 65519.99, codec::Overflow::kSaturate), 0x7BFFu);
  const ElementTypeInfo& bf16 = info(ElementType::kBfloat16);
  EXPECT_EQ(codec::encode_float(bf16, INFINITY, codec::Overflow::kSaturate), 0x7F7Fu);
  EXPECT_EQ(codec::encode_float(bf16, 3.4e38, codec::Overflow::kSaturate), 0x7F7Fu);
  EXPECT_EQ(codec::encode_float(bf16, 3.4e38, codec::Overflow::kInfOrNan), 0x7F80u);
  EXPECT_EQ(codec::encode_float(bf16, std::nan(""), codec::Overflow::kSaturate), 0x7FC0u);
}

TEST(Codec, RoundHalfEvenIgnoresTheRoundingMode) {
  const double cases[][2] = {{0.5, 0},   {1.5, 2},   {2.5, 2},     {-0.5, -0.0}, {-1.5, -2},
                             {-2.5, -2}, {0.49999999999999994, 0}, {4503599627370495.5, 4503599627370496.0},
                             {1e300, 1e300}};
  for (const auto& c : cases) {
    EXPECT_EQ(codec::round_half_even(c[0]), c[1]) << c[0];
  }
  EXPECT_TRUE(std::isnan(codec::round_half_even(NAN)));
  EXPECT_EQ(codec::round_half_even(-INFINITY), -INFINITY);
}

TEST(Codec, PackedLoadStoreTouchOnlyTheirOwnBits) {
  for (ElementType type : {ElementType::kInt4, ElementType::kUint4, ElementType::kFloat4E2M1,
                           ElementType::kInt2, ElementType::kUint2}) {
    const ElementTypeInfo& t = info(type);
    for (uint64_t count = 1; count <= 9; ++count) {
      std::vector<unsigned char> bytes(storage_bytes(type, count) + 1, 0xA5);  // last byte: canary
      const uint32_t mask = (1u << t.bits) - 1;
      for (uint64_t i = 0; i < count; ++i) codec::store_code(bytes.data(), t, i, static_cast<uint32_t>(i * 7 + 3));
      for (uint64_t i = 0; i < count; ++i) {
        EXPECT_EQ(codec::load_code(bytes.data(), t, i), (i * 7 + 3) & mask) << t.name << " i=" << i;
        // Low bits first: element i lives at bit offset bits * (i % per_byte).
        const unsigned shift = static_cast<unsigned>((i % static_cast<uint64_t>(t.elements_per_byte())) * t.bits);
        EXPECT_EQ((bytes[i / static_cast<uint64_t>(t.elements_per_byte())] >> shift) & mask, (i * 7 + 3) & mask);
      }
      EXPECT_EQ(bytes.back(), 0xA5) << t.name << " count=" << count << ": wrote past the end";
    }
  }
}

}  // namespace
}  // namespace qdq
