// Exact scalar codecs: element codes <-> values, driven only by the element-type table.
//
// A "code" is the raw bit pattern of one element (up to 32 bits, right-aligned); a "value" is the
// number it stands for, carried as a double. Every qdq element type converts to double exactly, so
// the reference executor can do all of its arithmetic on doubles and round explicitly, once per
// step the specification names.
#pragma once

#include <cstdint>

#include "qdq/element_type.h"

namespace qdq::codec {

// What a float encoder does with a finite value whose rounded magnitude exceeds the type's max,
// and with +-infinity.
enum class Overflow : uint8_t {
  kSaturate,    // +-max (QuantizeLinear saturate=1, float4e2m1 always, Quark float targets)
  kInfOrNan,    // +-inf where the format has one, else its NaN (IEEE casts, saturate=0)
};

// Value of a code. Integers are sign-extended from `bits`; floats follow the format columns. NaN
// codes give a quiet double NaN carrying the code's sign bit.
double decode(const ElementTypeInfo& type, uint32_t code);

// Round-to-nearest-even of `value` into a float format (not float32, which is a plain cast), with
// subnormals, the format's zero/NaN rules and the overflow policy. float4e2m1 has neither inf nor
// NaN: overflow always saturates and NaN encodes as +6 (the ONNX float4 document's rule). For
// float8e8m0 (a scale type only) encoding is not defined and this returns the NaN code 0xFF.
uint32_t encode_float(const ElementTypeInfo& type, double value, Overflow overflow);

// Rounds a double to the value nearest in `type` (a float type), i.e. decode(encode(v)): used to
// model "compute in precision P" by rounding each intermediate once.
double round_to_float_type(const ElementTypeInfo& type, double value, Overflow overflow);

// The largest finite code with sign 0 (0x7E for e4m3fn, 0x7BFF for float16, ...): the largest
// exponent field that holds finite values with the largest mantissa allowed there.
constexpr uint32_t max_finite_code(const ElementTypeInfo& t) {
  if (t.type == ElementType::kFloat32) return 0x7F7F'FFFFu;
  uint32_t exponent = (1u << t.exponent_bits) - 1u;
  uint32_t mantissa = (1u << t.mantissa_bits) - 1u;
  switch (t.nan_style) {
    case NanStyle::kIeee:          // all-ones exponent is inf/NaN
    case NanStyle::kExponentOnly:  // 0xFF is NaN
      exponent -= 1;
      break;
    case NanStyle::kAllOnes:  // S.1111.111 is NaN, S.1111.110 is the max
      mantissa -= 1;
      break;
    case NanStyle::kNegativeZero:
    case NanStyle::kNone:
      break;
  }
  return (exponent << t.mantissa_bits) | mantissa;
}

// Round half to even to an integer-valued double, independent of the FP environment's rounding
// mode. NaN and infinities pass through.
double round_half_even(double value);

// Load and store one element of a tensor stored densely in `type` (packed for 4- and 2-bit
// types: element i lives in byte i / per_byte at bit offset bits * (i % per_byte), low bits first).
// Stores into packed types read-modify-write only the element's own bits.
// With SubByteLayout::kOneCodePerByte, a 4- or 2-bit element i is the low bits of byte i.
uint32_t load_code(const void* data, const ElementTypeInfo& type, uint64_t index,
                   SubByteLayout layout = SubByteLayout::kPacked);
void store_code(void* data, const ElementTypeInfo& type, uint64_t index, uint32_t code,
                SubByteLayout layout = SubByteLayout::kPacked);

inline double load_value(const void* data, const ElementTypeInfo& type, uint64_t index,
                         SubByteLayout layout = SubByteLayout::kPacked) {
  return decode(type, load_code(data, type, index, layout));
}

}  // namespace qdq::codec
