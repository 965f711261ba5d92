// Compile-time float-format descriptions for the SIMD codecs, derived from the element-type table
// (one source of truth: a new float type is a new table row and one line here).
#pragma once

#include <cstdint>

#include "qdq/element_type.h"
#include "types/codec.h"

namespace qdq::kernels {

struct Format {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  uint32_t max_code;  // largest finite magnitude code
  NanStyle nan_style;
  bool has_infinity;
  bool has_negative_zero;
  bool keeps_nan_payload;
  bool widening_keeps_nan_payload;

  constexpr int sign_shift() const { return exponent_bits + mantissa_bits; }
  // All-ones exponent, zero mantissa: infinity where the format has one (e5m2 0x7C), e8m0's NaN.
  constexpr uint32_t exponent_ones() const { return ((1u << exponent_bits) - 1u) << mantissa_bits; }
  // The magnitude code a NaN encodes to: IEEE's quiet NaN (all-ones exponent, top mantissa bit
  // set: e5m2 0x7E, float16 0x7E00), all ones (e4m3fn 0x7F), FNUZ's 1000...0 (0x80, the spelling
  // of -0) or e8m0's 0xFF. float4e2m1 has no NaN: 0 here, and the encoders write its NaN as +max.
  constexpr uint32_t nan_code() const {
    switch (nan_style) {
      case NanStyle::kIeee: return exponent_ones() | (1u << (mantissa_bits - 1));
      case NanStyle::kAllOnes: return (1u << sign_shift()) - 1u;
      case NanStyle::kNegativeZero: return 1u << sign_shift();
      case NanStyle::kExponentOnly: return exponent_ones();  // e8m0: 0xFF
      case NanStyle::kNone: return 0;
    }
  }
  // The magnitude code of a finite value past max_code when not saturating: infinity where the
  // format has one, else its NaN code, which is max_code + 1.
  constexpr uint32_t overflow_code() const { return has_infinity ? exponent_ones() : nan_code(); }
};

constexpr Format format_of(ElementType type) {
  const ElementTypeInfo& row = info(type);
  return {row.exponent_bits,   row.mantissa_bits,    row.exponent_bias,    codec::max_finite_code(row),
          row.nan_style,       row.has_infinity,     row.has_negative_zero, row.keeps_nan_payload,
          row.widening_keeps_nan_payload};
}

inline constexpr Format kFloat16Format = format_of(ElementType::kFloat16);
inline constexpr Format kBfloat16Format = format_of(ElementType::kBfloat16);
inline constexpr Format kE4M3FN = format_of(ElementType::kFloat8E4M3FN);
inline constexpr Format kE4M3FNUZ = format_of(ElementType::kFloat8E4M3FNUZ);
inline constexpr Format kE5M2 = format_of(ElementType::kFloat8E5M2);
inline constexpr Format kE5M2FNUZ = format_of(ElementType::kFloat8E5M2FNUZ);
inline constexpr Format kE2M1 = format_of(ElementType::kFloat4E2M1);

constexpr uint32_t low_mask(int bits) { return bits >= 32 ? 0xFFFF'FFFFu : (1u << bits) - 1u; }

// 2^e as a float, for e in the float32 normal range.
constexpr float exp2f_exact(int e) {
  float value = 1.0f;
  for (; e > 0; --e) value *= 2.0f;
  for (; e < 0; ++e) value *= 0.5f;
  return value;
}

// The value of a magnitude code (no sign bit) of format f; subnormal when its exponent field is 0.
constexpr float magnitude_value(const Format& f, uint32_t code) {
  const uint32_t exponent = code >> f.mantissa_bits;
  const uint32_t mantissa = code & low_mask(f.mantissa_bits);
  if (exponent == 0) return static_cast<float>(mantissa) * exp2f_exact(1 - f.bias - f.mantissa_bits);
  return static_cast<float>((1u << f.mantissa_bits) + mantissa) *
         exp2f_exact(static_cast<int>(exponent) - f.bias - f.mantissa_bits);
}

}  // namespace qdq::kernels
