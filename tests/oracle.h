// Independent oracles for the tests. Nothing here reads src/ or the element-type table: each
// format is transcribed from its defining document (ONNX float8.md, float4.md, the e8m0 text, IEEE
// 754 for float16/bfloat16), rounding is a nearest search over the sorted values of every code, and float16
// conversions come from the CPU's F16C instructions.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "qdq/element_type.h"

namespace qdq::oracle {

inline double nan_with_sign(bool negative) {
  return negative ? -std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::quiet_NaN();
}

// Value of an 8-bit-or-narrower code, straight from the format documents.
inline double spec_decode(ElementType type, uint32_t code) {
  const auto pow2 = [](int e) { return std::ldexp(1.0, e); };
  switch (type) {
    case ElementType::kFloat8E4M3FN: {  // S EEEE MMM, bias 7, S.1111.111 = NaN, no inf
      const bool s = code >> 7;
      const int e = (code >> 3) & 15, m = code & 7;
      if (e == 15 && m == 7) return nan_with_sign(s);
      const double v = e == 0 ? pow2(-6) * m / 8.0 : pow2(e - 7) * (1 + m / 8.0);
      return s ? -v : v;
    }
    case ElementType::kFloat8E4M3FNUZ: {  // bias 8, 0x80 = NaN, no -0, no inf
      if (code == 0x80) return nan_with_sign(true);
      const bool s = code >> 7;
      const int e = (code >> 3) & 15, m = code & 7;
      const double v = e == 0 ? pow2(-7) * m / 8.0 : pow2(e - 8) * (1 + m / 8.0);
      return s ? -v : v;
    }
    case ElementType::kFloat8E5M2: {  // S EEEEE MM, bias 15, IEEE-like inf/NaN
      const bool s = code >> 7;
      const int e = (code >> 2) & 31, m = code & 3;
      if (e == 31) return m == 0 ? (s ? -INFINITY : INFINITY) : nan_with_sign(s);
      const double v = e == 0 ? pow2(-14) * m / 4.0 : pow2(e - 15) * (1 + m / 4.0);
      return s ? -v : v;
    }
    case ElementType::kFloat8E5M2FNUZ: {  // bias 16, 0x80 = NaN
      if (code == 0x80) return nan_with_sign(true);
      const bool s = code >> 7;
      const int e = (code >> 2) & 31, m = code & 3;
      const double v = e == 0 ? pow2(-15) * m / 4.0 : pow2(e - 16) * (1 + m / 4.0);
      return s ? -v : v;
    }
    case ElementType::kFloat4E2M1: {  // S EE M, bias 1: 0, 0.5, 1, 1.5, 2, 3, 4, 6
      static const double magnitudes[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
      const double v = magnitudes[code & 7];
      return (code & 8) ? -v : v;
    }
    case ElementType::kFloat6E2M3: {  // S EE MMM, bias 1, no inf/NaN: max 0.11.111 = 7.5
      const bool s = (code >> 5) & 1;
      const int e = (code >> 3) & 3, m = code & 7;
      const double v = e == 0 ? pow2(0) * m / 8.0 : pow2(e - 1) * (1 + m / 8.0);
      return s ? -v : v;
    }
    case ElementType::kFloat6E3M2: {  // S EEE MM, bias 3, no inf/NaN: max 0.111.11 = 28
      const bool s = (code >> 5) & 1;
      const int e = (code >> 2) & 7, m = code & 3;
      const double v = e == 0 ? pow2(-2) * m / 4.0 : pow2(e - 3) * (1 + m / 4.0);
      return s ? -v : v;
    }
    case ElementType::kFloat8E8M0:  // 2^(E-127), 0xFF = NaN
      return code == 0xFF ? nan_with_sign(false) : pow2(static_cast<int>(code) - 127);
    case ElementType::kUint8:
      return code & 0xFF;
    case ElementType::kInt8:
      return static_cast<int8_t>(code & 0xFF);
    case ElementType::kUint4:
      return code & 0xF;
    case ElementType::kInt4:
      return (code & 0xF) >= 8 ? static_cast<int>(code & 0xF) - 16 : static_cast<int>(code & 0xF);
    case ElementType::kUint16:
      return code & 0xFFFF;
    case ElementType::kInt16:
      return static_cast<int16_t>(code & 0xFFFF);
    case ElementType::kUint2:
      return code & 3;
    case ElementType::kInt2:
      return (code & 3) >= 2 ? static_cast<int>(code & 3) - 4 : static_cast<int>(code & 3);
    default:
      return std::numeric_limits<double>::signaling_NaN();
  }
}

inline int code_bits(ElementType type) {
  if (type == ElementType::kUint16 || type == ElementType::kInt16) return 16;
  switch (type) {
    case ElementType::kFloat4E2M1:
    case ElementType::kUint4:
    case ElementType::kInt4:
      return 4;
    case ElementType::kUint2:
    case ElementType::kInt2:
      return 2;
    default:
      return 8;
  }
}

// Brute-force round-to-nearest-even into a small float type (float8 x4, float4e2m1).
//   saturate: finite overflow and +-inf give +-max; otherwise the Cast tables: e5m2 gives +-inf,
//   e4m3fn its signed NaN, the FNUZ types 0x80; float4 always saturates.
//   NaN: e4m3fn S.1111.111, e5m2 S.11111.10, FNUZ 0x80, float4 +6 (qdq's documented choice).
class SmallFloatOracle {
 public:
  explicit SmallFloatOracle(ElementType type) : type_(type) {
    const int bits = code_bits(type);
    const uint32_t sign = 1u << (bits - 1);
    for (uint32_t code = 0; code < sign; ++code) {
      const double v = spec_decode(type, code);
      if (std::isfinite(v)) finite_.push_back({v, code});
    }
    std::sort(finite_.begin(), finite_.end(), [](const Entry& a, const Entry& b) { return a.value < b.value; });
    max_ = finite_.back();
    // The next value above max with the same spacing: where rounding overflows.
    const double spacing = finite_.back().value - finite_[finite_.size() - 2].value;
    beyond_max_ = max_.value + spacing;
    sign_bit_ = sign;
  }

  uint32_t encode(double x, bool saturate) const {
    const bool fnuz = type_ == ElementType::kFloat8E4M3FNUZ || type_ == ElementType::kFloat8E5M2FNUZ;
    const bool negative = std::signbit(x);
    const uint32_t sign = negative ? sign_bit_ : 0u;
    if (std::isnan(x)) {
      switch (type_) {
        case ElementType::kFloat8E4M3FN: return sign | 0x7F;
        case ElementType::kFloat8E5M2: return sign | 0x7E;
        case ElementType::kFloat4E2M1: return 0x7;
        default: return 0x80;
      }
    }
    if (std::isinf(x)) return overflow(sign, saturate);
    const double magnitude = std::fabs(x);
    if (magnitude >= beyond_max_) return overflow(sign, saturate);
    // Nearest finite candidate, ties to the even code (mantissa LSB 0). Between max and the next
    // value of the same spacing ("beyond max", whose code would be even exactly when max's is
    // odd) rounding overflows.
    const auto above = std::lower_bound(finite_.begin(), finite_.end(), magnitude,
                                        [](const Entry& e, double v) { return e.value < v; });
    if (above == finite_.end()) {
      const double d_max = magnitude - max_.value, d_beyond = beyond_max_ - magnitude;
      const bool beyond_code_even = (max_.code & 1) != 0;
      if (d_beyond < d_max || (d_beyond == d_max && beyond_code_even)) return overflow(sign, saturate);
      return sign | max_.code;
    }
    const Entry* best = &*above;
    if (above != finite_.begin()) {
      const Entry* below = &*(above - 1);
      const double d_below = magnitude - below->value, d_above = above->value - magnitude;
      if (d_below < d_above || (d_below == d_above && (below->code & 1) == 0)) best = below;
    }
    if (best->value == 0.0) return fnuz ? 0u : sign;
    return sign | best->code;
  }

 private:
  struct Entry {
    double value;
    uint32_t code;
  };
  uint32_t overflow(uint32_t sign, bool saturate) const {
    if (saturate || type_ == ElementType::kFloat4E2M1) return sign | max_.code;
    switch (type_) {
      case ElementType::kFloat8E5M2: return sign | 0x7C;
      case ElementType::kFloat8E4M3FN: return sign | 0x7F;
      default: return 0x80;
    }
  }
  ElementType type_;
  std::vector<Entry> finite_;
  Entry max_{};
  double beyond_max_ = 0;
  uint32_t sign_bit_ = 0;
};

// One oracle per type, built once.
inline const SmallFloatOracle& small_float_oracle(ElementType type) {
  static const SmallFloatOracle e4m3fn(ElementType::kFloat8E4M3FN), e4m3fnuz(ElementType::kFloat8E4M3FNUZ),
      e5m2(ElementType::kFloat8E5M2), e5m2fnuz(ElementType::kFloat8E5M2FNUZ), e2m1(ElementType::kFloat4E2M1);
  switch (type) {
    case ElementType::kFloat8E4M3FN: return e4m3fn;
    case ElementType::kFloat8E4M3FNUZ: return e4m3fnuz;
    case ElementType::kFloat8E5M2: return e5m2;
    case ElementType::kFloat8E5M2FNUZ: return e5m2fnuz;
    default: return e2m1;
  }
}

// float16 via the CPU (F16C): round-to-nearest-even, NaN payload kept and quieted.
__attribute__((target("f16c"))) inline uint16_t hardware_float_to_half(float x) {
  return static_cast<uint16_t>(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
__attribute__((target("f16c"))) inline float hardware_half_to_float(uint16_t h) { return _cvtsh_ss(h); }
inline bool have_f16c() { return __builtin_cpu_supports("f16c"); }

// bfloat16 is the top half of a float32.
inline float bfloat16_to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

// float32 -> bfloat16, round to nearest even on the bits (the classic transcription); NaN becomes
// the canonical quiet NaN with its sign, as ml_dtypes writes it.
inline uint16_t float_to_bfloat16(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  if (std::isnan(x)) return static_cast<uint16_t>((bits >> 16 & 0x8000) | 0x7FC0);
  const uint32_t rounding = 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

}  // namespace qdq::oracle
