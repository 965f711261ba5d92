// SIMD kernels for QuantizeLinear / DequantizeLinear, one Highway source for every target.
//
// A run (execute/runs.h) is processed in blocks of kBlock elements through three stages:
//   load:    x -> float32 lanes (float16/bfloat16/int32 converted exactly, codes decoded)
//   compute: the reference's arithmetic, lane by lane: IEEE division (never a reciprocal),
//            rounding to the division precision, round-half-even, clamp, zero point, encode
//   store:   codes -> y (narrowed, or packed two or four per byte)
// Every step is exact or rounds exactly where the reference rounds, so the output equals the
// reference's bit for bit (tests/kernels_test.cpp checks every target).
#include <cstring>

#include "kernels/kernels.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/kernels.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "execute/runs.h"
#include "kernels/formats.h"
#include "reference/reference.h"
#include "types/codec.h"

HWY_BEFORE_NAMESPACE();
namespace qdq::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using DI = hn::RebindToSigned<DF>;
using DU = hn::RebindToUnsigned<DF>;
using VF = hn::Vec<DF>;
using VI = hn::Vec<DI>;
using VU = hn::Vec<DU>;

constexpr size_t kBlock = 256;
constexpr size_t kPadded = kBlock + 64;  // room for a whole vector past the block (AVX-512: 16)

// --- Float codecs in lanes ------------------------------------------------------------------

// Round-to-nearest-even of float32 lanes into format F, returning codes in int32 lanes; the same
// rules as codec::encode_float (subnormals, overflow policy, NaN and zero spellings).
template <const Format& F>
HWY_INLINE VI Encode(VF v, bool saturate) {
  const DF df;
  const DI di;
  const DU du;
  constexpr int m = F.mantissa_bits;
  constexpr int shift = 23 - m;
  constexpr int sign_shift = F.sign_shift();
  const VU bits = hn::BitCast(du, v);
  const VU abs_bits = hn::And(bits, hn::Set(du, 0x7FFF'FFFFu));
  const VF magnitude = hn::BitCast(df, abs_bits);
  // Normal range: round the float32 mantissa to m bits on the bit pattern (ties to even; a
  // carry moves into the exponent), then rebias the exponent.
  const VU lsb = hn::And(hn::ShiftRight<shift>(abs_bits), hn::Set(du, 1u));
  const VU rounded = hn::Add(abs_bits, hn::Add(hn::Set(du, (1u << (shift - 1)) - 1u), lsb));
  const VI normal = hn::Sub(hn::BitCast(di, hn::ShiftRight<shift>(rounded)),
                            hn::Set(di, static_cast<int32_t>((127 - F.bias) << m)));
  // Below the smallest normal: the code is the magnitude in units of the smallest subnormal,
  // rounded half to even (scaling by a power of two is exact). 2^m there is the smallest normal.
  const VF steps = hn::Mul(magnitude, hn::Set(df, exp2f_exact(m + F.bias - 1)));
  const VI subnormal = hn::ConvertTo(di, hn::Round(steps));
  const auto below_normal = hn::RebindMask(di, hn::Lt(magnitude, hn::Set(df, exp2f_exact(1 - F.bias))));
  const VI magnitude_code = hn::IfThenElse(below_normal, subnormal, normal);

  const VI sign_bit = hn::BitCast(di, hn::ShiftLeft<sign_shift>(hn::ShiftRight<31>(bits)));
  VI code = hn::Or(magnitude_code, sign_bit);
  if constexpr (!F.has_negative_zero) {
    code = hn::IfThenElse(hn::Eq(magnitude_code, hn::Zero(di)), hn::Zero(di), code);
  }
  VI overflow_code;
  if (saturate || F.nan_style == NanStyle::kNone) {
    overflow_code = hn::Or(hn::Set(di, static_cast<int32_t>(F.max_code)), sign_bit);
  } else if constexpr (F.has_infinity) {
    overflow_code = hn::Or(hn::Set(di, static_cast<int32_t>(low_mask(F.exponent_bits) << m)), sign_bit);
  } else if constexpr (F.nan_style == NanStyle::kAllOnes) {
    overflow_code = hn::Or(hn::Set(di, static_cast<int32_t>(low_mask(sign_shift))), sign_bit);
  } else {
    overflow_code = hn::Set(di, static_cast<int32_t>(1u << sign_shift));
  }
  code = hn::IfThenElse(hn::Gt(magnitude_code, hn::Set(di, static_cast<int32_t>(F.max_code))), overflow_code, code);

  VI nan_code;
  if constexpr (F.nan_style == NanStyle::kIeee) {
    nan_code = hn::Or(sign_bit, hn::Set(di, static_cast<int32_t>((low_mask(F.exponent_bits) << m) | (1u << (m - 1)))));
    if constexpr (F.keeps_nan_payload) {
      nan_code = hn::Or(nan_code, hn::BitCast(di, hn::ShiftRight<shift>(hn::And(abs_bits, hn::Set(du, 0x007F'FFFFu)))));
    }
  } else if constexpr (F.nan_style == NanStyle::kAllOnes) {
    nan_code = hn::Or(sign_bit, hn::Set(di, static_cast<int32_t>(low_mask(sign_shift))));
  } else if constexpr (F.nan_style == NanStyle::kNegativeZero) {
    nan_code = hn::Set(di, static_cast<int32_t>(1u << sign_shift));
  } else {
    nan_code = hn::Set(di, static_cast<int32_t>(F.max_code));  // float4: NaN -> +6
  }
  return hn::IfThenElse(hn::RebindMask(di, hn::IsNaN(v)), nan_code, code);
}

// Codes of format F (in int32 lanes) to float32 values; NaN codes give the quiet NaN with the
// code's sign, as codec::decode.
template <const Format& F>
HWY_INLINE VF Decode(VI code) {
  const DF df;
  const DI di;
  constexpr int m = F.mantissa_bits;
  constexpr int sign_shift = F.sign_shift();
  const VI magnitude = hn::And(code, hn::Set(di, static_cast<int32_t>(low_mask(sign_shift))));
  const VI sign = hn::ShiftLeft<31 - sign_shift>(hn::And(code, hn::Set(di, static_cast<int32_t>(1u << sign_shift))));
  const VI exponent = hn::ShiftRight<m>(magnitude);
  const VI mantissa = hn::And(magnitude, hn::Set(di, static_cast<int32_t>(low_mask(m))));
  const VI normal_bits = hn::Add(hn::ShiftLeft<23 - m>(magnitude), hn::Set(di, (127 - F.bias) << 23));
  const VF subnormal = hn::Mul(hn::ConvertTo(df, mantissa), hn::Set(df, exp2f_exact(1 - F.bias - m)));
  VF value = hn::IfThenElse(hn::RebindMask(df, hn::Eq(exponent, hn::Zero(di))), subnormal, hn::BitCast(df, normal_bits));
  const VF quiet_nan = hn::BitCast(df, hn::Set(di, 0x7FC0'0000));
  if constexpr (F.nan_style == NanStyle::kIeee) {
    const auto special = hn::RebindMask(df, hn::Eq(exponent, hn::Set(di, static_cast<int32_t>(low_mask(F.exponent_bits)))));
    const VF infinity = hn::BitCast(df, hn::Set(di, 0x7F80'0000));
    const VF special_value = hn::IfThenElse(hn::RebindMask(df, hn::Eq(mantissa, hn::Zero(di))), infinity, quiet_nan);
    value = hn::IfThenElse(special, special_value, value);
  } else if constexpr (F.nan_style == NanStyle::kAllOnes) {
    value = hn::IfThenElse(hn::RebindMask(df, hn::Eq(magnitude, hn::Set(di, static_cast<int32_t>(low_mask(sign_shift))))),
                           quiet_nan, value);
  } else if constexpr (F.nan_style == NanStyle::kNegativeZero) {
    value = hn::IfThenElse(hn::RebindMask(df, hn::Eq(code, hn::Set(di, static_cast<int32_t>(1u << sign_shift)))),
                           quiet_nan, value);
  }
  return hn::Or(value, hn::BitCast(df, sign));
}

HWY_INLINE VF RoundToFloat16(VF v) { return Decode<kFloat16Format>(Encode<kFloat16Format>(v, false)); }

// float32 -> bfloat16 -> float32: round half to even on the bits (a carry into the exponent
// gives the next binade or infinity); NaN becomes the canonical quiet NaN with its sign.
HWY_INLINE VI Bfloat16Bits(VF v) {
  const DI di;
  const DU du;
  const VU bits = hn::BitCast(du, v);
  const VU lsb = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u));
  const VU rounded = hn::ShiftRight<16>(hn::Add(bits, hn::Add(hn::Set(du, 0x7FFFu), lsb)));
  const VU nan = hn::Or(hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 0x8000u)), hn::Set(du, 0x7FC0u));
  return hn::BitCast(di, hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), nan, rounded));
}
HWY_INLINE VF RoundToBfloat16(VF v) {
  const DF df;
  return hn::BitCast(df, hn::ShiftLeft<16>(Bfloat16Bits(v)));
}

HWY_INLINE VF RoundToPrecision(Precision precision, VF v) {
  if (precision == Precision::kFloat16) return RoundToFloat16(v);
  if (precision == Precision::kBfloat16) return RoundToBfloat16(v);
  return v;
}

// --- Loading --------------------------------------------------------------------------------

// 8- and 16-bit codes widened to int32 lanes (sign-extended for signed types).
template <typename T>
HWY_INLINE VI LoadWide(const T* p) {
  const DI di;
  const hn::Rebind<T, DI> dn;
  return hn::PromoteTo(di, hn::LoadU(dn, p));
}

// x (float32/float16/bfloat16/int32) or a scale (also e8m0) as float32 values; lanes past k are
// zero. Every conversion is exact except int32, which rounds to nearest even as the reference.
void LoadAsFloat(const ElementTypeInfo& type, const void* data, uint64_t index, size_t k, float* out) {
  const DF df;
  const size_t N = hn::Lanes(df);
  size_t i = 0;
  switch (type.type) {
    case ElementType::kFloat32:
      std::memcpy(out, static_cast<const float*>(data) + index, k * sizeof(float));
      i = k;
      break;
    case ElementType::kFloat16: {
      const uint16_t* p = static_cast<const uint16_t*>(data) + index;
      for (; i + N <= k; i += N) hn::StoreU(Decode<kFloat16Format>(LoadWide(p + i)), df, out + i);
      break;
    }
    case ElementType::kBfloat16: {
      const uint16_t* p = static_cast<const uint16_t*>(data) + index;
      const DI di;
      for (; i + N <= k; i += N) {
        hn::StoreU(hn::BitCast(df, hn::ShiftLeft<16>(hn::BitCast(di, LoadWide(p + i)))), df, out + i);
      }
      break;
    }
    case ElementType::kInt32: {
      const int32_t* p = static_cast<const int32_t*>(data) + index;
      const DI di;
      for (; i + N <= k; i += N) hn::StoreU(hn::ConvertTo(df, hn::LoadU(di, p + i)), df, out + i);
      break;
    }
    default:
      break;
  }
  for (; i < k; ++i) out[i] = static_cast<float>(codec::load_value(data, type, index + i));
  for (size_t j = k; j < kPadded && j < k + N; ++j) out[j] = 0.0f;
}

// Codes of a packed (4- or 2-bit) tensor, one per byte; whole bytes in the middle.
void Unpack(const ElementTypeInfo& type, const void* data, uint64_t index, size_t k, uint8_t* codes) {
  const uint64_t per_byte = static_cast<uint64_t>(type.elements_per_byte());
  size_t i = 0;
  for (; i < k && (index + i) % per_byte != 0; ++i) codes[i] = static_cast<uint8_t>(codec::load_code(data, type, index + i));
  const uint8_t* bytes = static_cast<const uint8_t*>(data) + (index + i) / per_byte;
  if (type.bits == 4) {
    for (; i + 2 <= k; i += 2, ++bytes) {
      codes[i] = *bytes & 0x0F;
      codes[i + 1] = static_cast<uint8_t>(*bytes >> 4);
    }
  } else {
    for (; i + 4 <= k; i += 4, ++bytes) {
      codes[i] = *bytes & 3;
      codes[i + 1] = (*bytes >> 2) & 3;
      codes[i + 2] = (*bytes >> 4) & 3;
      codes[i + 3] = static_cast<uint8_t>(*bytes >> 6);
    }
  }
  for (; i < k; ++i) codes[i] = static_cast<uint8_t>(codec::load_code(data, type, index + i));
}

// One code per byte into a packed tensor; partial bytes at either end are read-modify-written.
void Pack(const ElementTypeInfo& type, const uint8_t* codes, size_t k, void* data, uint64_t index) {
  const uint64_t per_byte = static_cast<uint64_t>(type.elements_per_byte());
  size_t i = 0;
  for (; i < k && (index + i) % per_byte != 0; ++i) codec::store_code(data, type, index + i, codes[i]);
  uint8_t* bytes = static_cast<uint8_t*>(data) + (index + i) / per_byte;
  if (type.bits == 4) {
    for (; i + 2 <= k; i += 2) *bytes++ = static_cast<uint8_t>((codes[i] & 0x0F) | (codes[i + 1] << 4));
  } else {
    for (; i + 4 <= k; i += 4) {
      *bytes++ = static_cast<uint8_t>((codes[i] & 3) | ((codes[i + 1] & 3) << 2) | ((codes[i + 2] & 3) << 4) |
                                      (codes[i + 3] << 6));
    }
  }
  for (; i < k; ++i) codec::store_code(data, type, index + i, codes[i]);
}

// Integer-valued codes (zero points, dequantize x) as float32 values; lanes past k are zero.
void LoadCodesAsFloat(const ElementTypeInfo& type, const void* data, uint64_t index, size_t k, float* out) {
  const DF df;
  const size_t N = hn::Lanes(df);
  size_t i = 0;
  switch (type.type) {
    case ElementType::kUint8:
      for (; i + N <= k; i += N) hn::StoreU(hn::ConvertTo(df, LoadWide(static_cast<const uint8_t*>(data) + index + i)), df, out + i);
      break;
    case ElementType::kInt8:
      for (; i + N <= k; i += N) hn::StoreU(hn::ConvertTo(df, LoadWide(static_cast<const int8_t*>(data) + index + i)), df, out + i);
      break;
    case ElementType::kUint16:
      for (; i + N <= k; i += N) hn::StoreU(hn::ConvertTo(df, LoadWide(static_cast<const uint16_t*>(data) + index + i)), df, out + i);
      break;
    case ElementType::kInt16:
      for (; i + N <= k; i += N) hn::StoreU(hn::ConvertTo(df, LoadWide(static_cast<const int16_t*>(data) + index + i)), df, out + i);
      break;
    default:
      break;
  }
  for (; i < k; ++i) out[i] = static_cast<float>(codec::load_value(data, type, index + i));
  for (size_t j = k; j < kPadded && j < k + N; ++j) out[j] = 0.0f;
}

// --- Per-run context ------------------------------------------------------------------------

struct Context {
  const Plan* plan;
  const ElementTypeInfo* x;
  const ElementTypeInfo* scale;
  const ElementTypeInfo* zero_point;  // nullptr when absent
  const ElementTypeInfo* y;
  Precision precision;
  bool saturate;
  bool apply_zero_point;
};

// Scale (rounded to the division precision for quantize) and zero point of one block: either a
// pointer into a filled buffer or a broadcast constant.
struct Operands {
  HWY_ALIGN float scale[kPadded];
  HWY_ALIGN float zero_point[kPadded];
  bool scale_varies;
  bool zero_point_varies;
  float scale_constant;
  float zero_point_constant;
};

void LoadOperands(const Context& c, const exec::Run& run, uint64_t offset, size_t k, Operands* o) {
  const Plan& plan = *c.plan;
  o->scale_varies = run.scale_varies;
  o->zero_point_varies = run.zero_point_varies && c.zero_point != nullptr;
  if (run.scale_varies) {
    LoadAsFloat(*c.scale, plan.scale.data, run.scale_index + offset, k, o->scale);
  } else if (offset == 0) {
    o->scale_constant = static_cast<float>(codec::load_value(plan.scale.data, *c.scale, run.scale_index));
  }
  if (c.zero_point != nullptr) {
    if (o->zero_point_varies) {
      LoadCodesAsFloat(*c.zero_point, plan.zero_point.data, run.zero_point_index + offset, k, o->zero_point);
    } else if (offset == 0) {
      o->zero_point_constant =
          static_cast<float>(codec::load_value(plan.zero_point.data, *c.zero_point, run.zero_point_index));
    }
  } else {
    o->zero_point_varies = false;
    o->zero_point_constant = 0.0f;
  }
}

// --- Quantize -------------------------------------------------------------------------------

// Integer outputs: clamp(round_half_even(q) + zp) with NaN -> lowest, as codes of `bits` bits.
template <int kBits, bool kSigned>
struct IntegerOutput {
  static constexpr int kCodeBits = kBits;
  static constexpr float kLowest = kSigned ? -static_cast<float>(1 << (kBits - 1)) : 0.0f;
  static constexpr float kMax = kSigned ? static_cast<float>((1 << (kBits - 1)) - 1) : static_cast<float>((1 << kBits) - 1);
  static HWY_INLINE VI Codes(const Context&, VF q, VF zp) {
    const DF df;
    const DI di;
    // Clamp before adding the zero point, in float32, where lowest - zp and max - zp are exact.
    const VF lo = hn::Sub(hn::Set(df, kLowest), zp);
    const VF hi = hn::Sub(hn::Set(df, kMax), zp);
    VF r = hn::Min(hn::Max(hn::Round(q), lo), hi);
    r = hn::IfThenElse(hn::IsNaN(q), lo, r);
    const VI value = hn::ConvertTo(di, hn::Add(r, zp));
    return hn::And(value, hn::Set(di, static_cast<int32_t>(low_mask(kBits))));
  }
};

// Float8 outputs: encode q (the zero point is 0 and not added); float4: q + zp in float32.
template <const Format& F, bool kAddsZeroPoint>
struct FloatOutput {
  static constexpr int kCodeBits = F.sign_shift() + 1;
  static HWY_INLINE VI Codes(const Context& c, VF q, VF zp) {
    if constexpr (kAddsZeroPoint) {
      if (c.apply_zero_point) q = hn::Add(q, zp);
    }
    return hn::And(Encode<F>(q, c.saturate), hn::Set(DI(), static_cast<int32_t>(low_mask(kCodeBits))));
  }
};

template <class Output>
void QuantizeRun(const Context& c, const exec::Run& run, void* y) {
  const DF df;
  const size_t N = hn::Lanes(df);
  const Plan& plan = *c.plan;
  HWY_ALIGN float x[kPadded];
  HWY_ALIGN uint8_t codes8[kPadded];
  HWY_ALIGN uint16_t codes16[kPadded];
  Operands o;
  for (uint64_t offset = 0; offset < run.count; offset += kBlock) {
    const size_t k = static_cast<size_t>(std::min<uint64_t>(kBlock, run.count - offset));
    LoadAsFloat(*c.x, plan.x.data, run.x_index + offset, k, x);
    LoadOperands(c, run, offset, k, &o);
    const VF scale_constant = RoundToPrecision(c.precision, hn::Set(df, o.scale_constant));
    const VF zp_constant = hn::Set(df, o.zero_point_constant);
    for (size_t i = 0; i < k; i += N) {
      const VF xv = RoundToPrecision(c.precision, hn::Load(df, x + i));
      const VF s = o.scale_varies ? RoundToPrecision(c.precision, hn::Load(df, o.scale + i)) : scale_constant;
      const VF zp = o.zero_point_varies ? hn::Load(df, o.zero_point + i) : zp_constant;
      const VF q = RoundToPrecision(c.precision, hn::Div(xv, s));
      const VI code = Output::Codes(c, q, zp);
      if constexpr (Output::kCodeBits <= 8) {
        hn::Store(hn::DemoteTo(hn::Rebind<uint8_t, DI>(), code), hn::Rebind<uint8_t, DI>(), codes8 + i);
      } else {
        hn::Store(hn::DemoteTo(hn::Rebind<uint16_t, DI>(), code), hn::Rebind<uint16_t, DI>(), codes16 + i);
      }
    }
    const uint64_t at = run.x_index + offset;
    if (c.y->is_packed()) {
      Pack(*c.y, codes8, k, y, at);
    } else if (c.y->bits == 8) {
      std::memcpy(static_cast<uint8_t*>(y) + at, codes8, k);
    } else {
      std::memcpy(static_cast<uint16_t*>(y) + at, codes16, k * sizeof(uint16_t));
    }
  }
}

// --- Dequantize -----------------------------------------------------------------------------

// Integer x: codes to float32 (exact), minus the zero point (exact for 16 bits and less).
template <int kBits, bool kSigned>
struct IntegerInput {
  static constexpr bool kAppliesZeroPoint = true;
  static HWY_INLINE VF Values(VI code) {
    const DF df;
    const DI di;
    if constexpr (kSigned && kBits <= 8) {
      // Sign-extend a kBits-bit code: (code ^ sign) - sign.
      const VI sign = hn::Set(di, 1 << (kBits - 1));
      code = hn::Sub(hn::Xor(code, sign), sign);
    }
    return hn::ConvertTo(df, code);
  }
};

template <const Format& F>
struct FloatInput {
  static constexpr bool kAppliesZeroPoint = false;  // float x: zero point required 0, not subtracted
  static HWY_INLINE VF Values(VI code) { return Decode<F>(code); }
};

template <class Input>
void DequantizeRun(const Context& c, const exec::Run& run, void* y) {
  const DF df;
  const DI di;
  const size_t N = hn::Lanes(df);
  const Plan& plan = *c.plan;
  HWY_ALIGN uint8_t codes[kPadded] = {};
  HWY_ALIGN float values[kPadded];
  HWY_ALIGN uint16_t out16[kPadded];
  Operands o;
  const ElementType out_type = c.y->type;
  for (uint64_t offset = 0; offset < run.count; offset += kBlock) {
    const size_t k = static_cast<size_t>(std::min<uint64_t>(kBlock, run.count - offset));
    const uint64_t at = run.x_index + offset;
    // x as int32 codes (8-bit and packed types) or directly as values (16-bit integers).
    const bool wide = c.x->bits == 16;
    if (wide) {
      LoadCodesAsFloat(*c.x, plan.x.data, at, k, values);
    } else if (c.x->is_packed()) {
      Unpack(*c.x, plan.x.data, at, k, codes);
    } else {
      std::memcpy(codes, static_cast<const uint8_t*>(plan.x.data) + at, k);
    }
    LoadOperands(c, run, offset, k, &o);
    const VF scale_constant = hn::Set(df, o.scale_constant);
    const VF zp_constant = hn::Set(df, o.zero_point_constant);
    const bool subtract = Input::kAppliesZeroPoint && c.apply_zero_point;
    for (size_t i = 0; i < k; i += N) {
      VF v;
      if (wide) {
        v = hn::Load(df, values + i);
      } else {
        const hn::Rebind<uint8_t, DI> d8;
        v = Input::Values(hn::PromoteTo(di, hn::Load(d8, codes + i)));
      }
      if (subtract) v = hn::Sub(v, o.zero_point_varies ? hn::Load(df, o.zero_point + i) : zp_constant);
      VF product = hn::Mul(v, o.scale_varies ? hn::Load(df, o.scale + i) : scale_constant);
      product = hn::IfThenElse(hn::IsNaN(v), v, product);  // NaN x NaN: x's NaN, as the reference
      if (out_type == ElementType::kFloat32) {
        hn::Store(product, df, values + i);
      } else {
        const VI bits = out_type == ElementType::kFloat16 ? Encode<kFloat16Format>(product, false) : Bfloat16Bits(product);
        hn::Store(hn::DemoteTo(hn::Rebind<uint16_t, DI>(), bits), hn::Rebind<uint16_t, DI>(), out16 + i);
      }
    }
    if (out_type == ElementType::kFloat32) {
      std::memcpy(static_cast<float*>(y) + at, values, k * sizeof(float));
    } else {
      std::memcpy(static_cast<uint16_t*>(y) + at, out16, k * sizeof(uint16_t));
    }
  }
}

// --- Selection, once per call ---------------------------------------------------------------

using RunFunction = void (*)(const Context&, const exec::Run&, void*);

RunFunction SelectQuantize(ElementType out) {
  switch (out) {
    case ElementType::kUint8: return &QuantizeRun<IntegerOutput<8, false>>;
    case ElementType::kInt8: return &QuantizeRun<IntegerOutput<8, true>>;
    case ElementType::kUint16: return &QuantizeRun<IntegerOutput<16, false>>;
    case ElementType::kInt16: return &QuantizeRun<IntegerOutput<16, true>>;
    case ElementType::kUint4: return &QuantizeRun<IntegerOutput<4, false>>;
    case ElementType::kInt4: return &QuantizeRun<IntegerOutput<4, true>>;
    case ElementType::kUint2: return &QuantizeRun<IntegerOutput<2, false>>;
    case ElementType::kInt2: return &QuantizeRun<IntegerOutput<2, true>>;
    case ElementType::kFloat8E4M3FN: return &QuantizeRun<FloatOutput<kE4M3FN, false>>;
    case ElementType::kFloat8E4M3FNUZ: return &QuantizeRun<FloatOutput<kE4M3FNUZ, false>>;
    case ElementType::kFloat8E5M2: return &QuantizeRun<FloatOutput<kE5M2, false>>;
    case ElementType::kFloat8E5M2FNUZ: return &QuantizeRun<FloatOutput<kE5M2FNUZ, false>>;
    case ElementType::kFloat4E2M1: return &QuantizeRun<FloatOutput<kE2M1, true>>;
    default: return nullptr;
  }
}

RunFunction SelectDequantize(ElementType x) {
  switch (x) {
    case ElementType::kUint8: return &DequantizeRun<IntegerInput<8, false>>;
    case ElementType::kInt8: return &DequantizeRun<IntegerInput<8, true>>;
    case ElementType::kUint16: return &DequantizeRun<IntegerInput<16, false>>;
    case ElementType::kInt16: return &DequantizeRun<IntegerInput<16, true>>;
    case ElementType::kUint4: return &DequantizeRun<IntegerInput<4, false>>;
    case ElementType::kInt4: return &DequantizeRun<IntegerInput<4, true>>;
    case ElementType::kUint2: return &DequantizeRun<IntegerInput<2, false>>;
    case ElementType::kInt2: return &DequantizeRun<IntegerInput<2, true>>;
    case ElementType::kFloat8E4M3FN: return &DequantizeRun<FloatInput<kE4M3FN>>;
    case ElementType::kFloat8E4M3FNUZ: return &DequantizeRun<FloatInput<kE4M3FNUZ>>;
    case ElementType::kFloat8E5M2: return &DequantizeRun<FloatInput<kE5M2>>;
    case ElementType::kFloat8E5M2FNUZ: return &DequantizeRun<FloatInput<kE5M2FNUZ>>;
    case ElementType::kFloat4E2M1: return &DequantizeRun<FloatInput<kE2M1>>;
    default: return nullptr;
  }
}

void ExecuteRange(const Plan& plan, const Layout& canonical, uint64_t begin, uint64_t end, void* y) {
  Context c;
  c.plan = &plan;
  c.x = &info(plan.x.type);
  c.scale = &info(plan.scale.type);
  c.zero_point = plan.has_zero_point ? &info(plan.zero_point.type) : nullptr;
  c.y = &info(plan.output_type);
  c.precision = plan.precision;
  c.saturate = plan.saturate;
  c.apply_zero_point = plan.apply_zero_point;
  const RunFunction run_function =
      plan.operation == Operation::kQuantize ? SelectQuantize(plan.output_type) : SelectDequantize(plan.x.type);
  exec::for_each_run(canonical, begin, end, [&](const exec::Run& run) { run_function(c, run, y); });
}

}  // namespace HWY_NAMESPACE
}  // namespace qdq::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qdq::kernels {

HWY_EXPORT(ExecuteRange);

bool covers(const Plan& plan) {
  const ElementType out = plan.output_type;
  auto one_of = [](ElementType t, std::initializer_list<ElementType> set) {
    for (ElementType candidate : set) {
      if (candidate == t) return true;
    }
    return false;
  };
  const std::initializer_list<ElementType> quantized = {
      ElementType::kUint8,          ElementType::kInt8,       ElementType::kUint16,
      ElementType::kInt16,          ElementType::kUint4,      ElementType::kInt4,
      ElementType::kUint2,          ElementType::kInt2,       ElementType::kFloat8E4M3FN,
      ElementType::kFloat8E4M3FNUZ, ElementType::kFloat8E5M2, ElementType::kFloat8E5M2FNUZ,
      ElementType::kFloat4E2M1};
  const std::initializer_list<ElementType> scales = {ElementType::kFloat32, ElementType::kFloat16,
                                                     ElementType::kBfloat16, ElementType::kFloat8E8M0};
  if (!one_of(plan.scale.type, scales)) return false;
  if (plan.operation == Operation::kQuantize) {
    return plan.precision != Precision::kFloat64 && one_of(out, quantized) &&
           one_of(plan.x.type, {ElementType::kFloat32, ElementType::kFloat16, ElementType::kBfloat16,
                                ElementType::kInt32});
  }
  return one_of(plan.x.type, quantized) &&
         one_of(out, {ElementType::kFloat32, ElementType::kFloat16, ElementType::kBfloat16});
}

void execute_range(const Plan& plan, const Layout& canonical, uint64_t begin, uint64_t end, void* y) {
  HWY_DYNAMIC_DISPATCH(ExecuteRange)(plan, canonical, begin, end, y);
}

std::vector<int64_t> supported_targets() { return hwy::SupportedAndGeneratedTargets(); }

std::string target_name(int64_t target) { return hwy::TargetName(target); }

void force_target(int64_t target) { hwy::SetSupportedTargetsForTest(target); }

}  // namespace qdq::kernels
#endif  // HWY_ONCE
