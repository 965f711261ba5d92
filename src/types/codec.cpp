#include "types/codec.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace qdq::codec {
namespace {

constexpr uint32_t low_mask(int bits) { return bits >= 32 ? 0xFFFF'FFFFu : ((1u << bits) - 1u); }

int sign_position(const ElementTypeInfo& t) { return t.exponent_bits + t.mantissa_bits; }
uint32_t exponent_all_ones(const ElementTypeInfo& t) { return low_mask(t.exponent_bits); }

double decode_integer(const ElementTypeInfo& t, uint32_t code) {
  code &= low_mask(t.bits);
  if (t.is_signed && (code >> (t.bits - 1)) != 0) {
    return static_cast<double>(static_cast<int64_t>(code) - (int64_t{1} << t.bits));
  }
  return static_cast<double>(code);
}

bool is_nan_code(const ElementTypeInfo& t, uint32_t code) {
  const uint32_t exponent = (code >> t.mantissa_bits) & exponent_all_ones(t);
  const uint32_t mantissa = code & low_mask(t.mantissa_bits);
  switch (t.nan_style) {
    case NanStyle::kIeee:
      return exponent == exponent_all_ones(t) && mantissa != 0;
    case NanStyle::kAllOnes:  // S.1111.111
      return exponent == exponent_all_ones(t) && mantissa == low_mask(t.mantissa_bits);
    case NanStyle::kNegativeZero:  // 1.0000.000
      return code == (1u << sign_position(t));
    case NanStyle::kExponentOnly:  // 1111'1111
      return code == low_mask(t.exponent_bits);
    case NanStyle::kNone:
      return false;
  }
  return false;
}

double decode_small_float(const ElementTypeInfo& t, uint32_t code) {
  code &= low_mask(t.bits);
  const bool negative = t.is_signed && ((code >> sign_position(t)) & 1u) != 0;
  const double sign = negative ? -1.0 : 1.0;
  if (is_nan_code(t, code)) {
    if (t.widening_keeps_nan_payload) {
      // The payload moves to float32's top mantissa bits, as numpy and ml_dtypes widen them.
      const uint32_t payload = code & low_mask(t.mantissa_bits);
      const uint32_t bits = (negative ? 0x8000'0000u : 0u) | 0x7F80'0000u | (payload << (23 - t.mantissa_bits));
      return static_cast<double>(std::bit_cast<float>(bits));
    }
    return std::copysign(std::numeric_limits<double>::quiet_NaN(), sign);
  }
  const uint32_t exponent = (code >> t.mantissa_bits) & exponent_all_ones(t);
  const uint32_t mantissa = code & low_mask(t.mantissa_bits);
  if (t.has_infinity && exponent == exponent_all_ones(t)) {
    return sign * std::numeric_limits<double>::infinity();
  }
  const int m = t.mantissa_bits;
  // Exponent field 0 is subnormal (no implicit 1) except in mantissa-free formats (e8m0), where
  // every code is a plain power of two: 0x00 = 2^-127.
  if (exponent == 0 && m > 0) {
    return sign * std::ldexp(static_cast<double>(mantissa), 1 - t.exponent_bias - m);
  }
  const double significand = static_cast<double>((1u << m) + mantissa);
  return sign * std::ldexp(significand, static_cast<int>(exponent) - t.exponent_bias - m);
}

uint32_t nan_code(const ElementTypeInfo& t, bool negative, double nan_value) {
  const uint32_t sign_bit = negative ? (1u << sign_position(t)) : 0u;
  switch (t.nan_style) {
    case NanStyle::kIeee: {
      // Quiet NaN with the sign; formats that keep payloads keep as many leading payload bits as
      // fit, as hardware narrowing conversions (cvtsd2ss, vcvtps2ph) do.
      const uint64_t payload = std::bit_cast<uint64_t>(nan_value) & ((uint64_t{1} << 52) - 1);
      const uint32_t kept =
          t.keeps_nan_payload ? static_cast<uint32_t>(payload >> (52 - t.mantissa_bits)) : 0u;
      const uint32_t quiet = 1u << (t.mantissa_bits - 1);
      return sign_bit | (exponent_all_ones(t) << t.mantissa_bits) | quiet | kept;
    }
    case NanStyle::kAllOnes:
      return sign_bit | low_mask(sign_position(t));
    case NanStyle::kNegativeZero:
      return 1u << sign_position(t);
    case NanStyle::kExponentOnly:
      return low_mask(t.exponent_bits);
    case NanStyle::kNone:
      // float4e2m1: the ONNX float4 document maps NaN to +6 (ml_dtypes would give a signed zero);
      // the float6 types follow the same rule (+7.5, +28), see docs/semantics.md.
      return max_finite_code(t);
  }
  return 0;
}

uint32_t overflow_code(const ElementTypeInfo& t, bool negative, Overflow overflow) {
  const uint32_t sign_bit = negative ? (1u << sign_position(t)) : 0u;
  if (overflow == Overflow::kSaturate || t.nan_style == NanStyle::kNone) {
    return sign_bit | max_finite_code(t);
  }
  if (t.has_infinity) return sign_bit | (exponent_all_ones(t) << t.mantissa_bits);
  return nan_code(t, negative, std::numeric_limits<double>::quiet_NaN());
}

uint32_t encode_float32(double value, Overflow overflow) {
  if (overflow == Overflow::kSaturate && !std::isnan(value)) {
    const double max = info(ElementType::kFloat32).max;
    if (value > max) value = max;
    if (value < -max) value = -max;
  }
  return std::bit_cast<uint32_t>(static_cast<float>(value));
}

}  // namespace

double round_half_even(double value) {
  if (!std::isfinite(value)) return value;
  const double floor_value = std::floor(value);
  const double fraction = value - floor_value;  // exact: both are doubles within one ulp-scale
  if (fraction > 0.5) return floor_value + 1.0;
  if (fraction < 0.5) return floor_value;
  return std::fmod(floor_value, 2.0) == 0.0 ? floor_value : floor_value + 1.0;
}

double decode(const ElementTypeInfo& t, uint32_t code) {
  if (t.is_integer()) return decode_integer(t, code);
  if (t.type == ElementType::kFloat32) return static_cast<double>(std::bit_cast<float>(code));
  return decode_small_float(t, code);
}

uint32_t encode_float(const ElementTypeInfo& t, double value, Overflow overflow) {
  if (t.type == ElementType::kFloat32) return encode_float32(value, overflow);
  if (t.nan_style == NanStyle::kExponentOnly) return low_mask(t.exponent_bits);
  const bool negative = std::signbit(value);
  if (std::isnan(value)) return nan_code(t, negative, value);
  if (std::isinf(value)) return overflow_code(t, negative, overflow);
  // Zero and underflow keep the sign where the format has -0; FNUZ formats have only +0.
  const uint32_t signed_zero = negative && t.has_negative_zero ? 1u << sign_position(t) : 0u;

  const double magnitude = std::fabs(value);
  if (magnitude == 0.0) return signed_zero;

  const int m = t.mantissa_bits;
  const int min_exponent = 1 - t.exponent_bias;  // exponent of the smallest normal
  int frexp_exponent = 0;
  std::frexp(magnitude, &frexp_exponent);  // magnitude = f * 2^frexp_exponent, f in [0.5, 1)
  const int exponent = std::max(frexp_exponent - 1, min_exponent);
  // Spacing of representable values at this exponent; below the normal range it stays at the
  // subnormal spacing. Scaling by a power of two is exact, so `steps` is the exact magnitude in
  // units of the last place, and one round_half_even is the whole rounding.
  const double steps = round_half_even(std::ldexp(magnitude, m - exponent));
  if (steps == 0.0) return signed_zero;

  const double rounded = std::ldexp(steps, exponent - m);
  if (rounded > t.max) return overflow_code(t, negative, overflow);
  // steps in [2^m, 2^(m+1)] for normals (2^(m+1) is the carry into the next binade) and
  // [1, 2^m] below; in both cases the code is ((exponent + bias - 1) << m) + steps.
  const uint32_t magnitude_code =
      (static_cast<uint32_t>(exponent + t.exponent_bias - 1) << m) + static_cast<uint32_t>(steps);
  return (negative ? 1u << sign_position(t) : 0u) | magnitude_code;
}

double round_to_float_type(const ElementTypeInfo& t, double value, Overflow overflow) {
  return decode(t, encode_float(t, value, overflow));
}

uint32_t load_code(const void* data, const ElementTypeInfo& t, uint64_t index, SubByteLayout layout) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  if (t.is_packed() && layout == SubByteLayout::kOneCodePerByte) return bytes[index] & low_mask(t.bits);
  if (t.is_packed()) {
    const uint64_t per_byte = static_cast<uint64_t>(t.elements_per_byte());
    const unsigned shift = static_cast<unsigned>((index % per_byte) * t.bits);
    return (bytes[index / per_byte] >> shift) & low_mask(t.bits);
  }
  switch (t.bytes_per_element()) {
    case 1:  // 8-bit codes, and 6-bit ones in the low bits of their byte (the high bits are ignored)
      return bytes[index] & low_mask(t.bits);
    case 2: {
      uint16_t code;
      std::memcpy(&code, bytes + index * 2, sizeof code);
      return code;
    }
    default: {
      uint32_t code;
      std::memcpy(&code, bytes + index * 4, sizeof code);
      return code;
    }
  }
}

void store_code(void* data, const ElementTypeInfo& t, uint64_t index, uint32_t code, SubByteLayout layout) {
  auto* bytes = static_cast<unsigned char*>(data);
  code &= low_mask(t.bits);
  if (t.is_packed() && layout == SubByteLayout::kOneCodePerByte) {
    bytes[index] = static_cast<unsigned char>(code);
    return;
  }
  if (t.is_packed()) {
    const uint64_t per_byte = static_cast<uint64_t>(t.elements_per_byte());
    const unsigned shift = static_cast<unsigned>((index % per_byte) * t.bits);
    unsigned char& byte = bytes[index / per_byte];
    byte = static_cast<unsigned char>((byte & ~(low_mask(t.bits) << shift)) | (code << shift));
    return;
  }
  switch (t.bytes_per_element()) {
    case 1:  // the high bits of a 6-bit code's byte are written as zero, as ml_dtypes does
      bytes[index] = static_cast<unsigned char>(code);
      return;
    case 2: {
      const uint16_t narrow = static_cast<uint16_t>(code);
      std::memcpy(bytes + index * 2, &narrow, sizeof narrow);
      return;
    }
    default:
      std::memcpy(bytes + index * 4, &code, sizeof code);
      return;
  }
}

}  // namespace qdq::codec
