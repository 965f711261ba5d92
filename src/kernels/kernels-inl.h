// The per-target stages of the Q/DQ kernels and the run templates built on them, shared by the
// kernels' translation units (Highway's per-target include guard: included once for every target
// that foreach_target.h compiles):
//   kernels.cpp                  the per-call set-up (ExecuteRange), the block helpers declared
//                                below, the range masks
//   kernels_quantize_integer.cpp QuantizeRun to 8-, 16- and 32-bit integers
//   kernels_quantize_sub_byte.cpp QuantizeRun to 4- and 2-bit integers
//   kernels_quantize_float.cpp   QuantizeRun to float8, float4, float16 and bfloat16
//   kernels_dequantize.cpp       DequantizeRun
//   kernels_fake_quant.cpp       FakeQuantRun
// The instantiations are spread over translation units so that a parallel build compiles them side
// by side: as one file they took 390 of the library's 440 s of compilation in Release (a single
// core's work), and most of CI's sanitizer build.
//
// A run (execute/runs.h) is processed in blocks of kBlock elements through three stages:
//   load:    x -> float32 lanes (float16/bfloat16/int32 converted exactly, codes decoded)
//   compute: the reference's arithmetic, lane by lane: IEEE division (never a reciprocal),
//            rounding to the division precision, round-half-even, clamp, zero point, encode
//   store:   codes -> y (narrowed, or packed two or four per byte)
// Every step is exact or rounds exactly where the reference rounds, so the output equals the
// reference's bit for bit (tests/kernels_test.cpp checks every target).
#if defined(QDQ_KERNELS_KERNELS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QDQ_KERNELS_KERNELS_INL_H_
#undef QDQ_KERNELS_KERNELS_INL_H_
#else
#define QDQ_KERNELS_KERNELS_INL_H_
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include <hwy/cache_control.h>  // hwy::Prefetch (off x86)
#include <hwy/highway.h>

#include "execute/runs.h"
#include "kernels/formats.h"
#include "kernels/kernels.h"
#include "kernels/look_up.h"  // kLookUpTablePadding
#include "kernels/reduce-inl.h"
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

// The attributes of a lambda called per vector or per stretch inside a hot loop: the target's
// (HWY_ATTR) and always_inline. GCC's heuristics otherwise outline the larger bodies (float8 /
// float4 encodes, a 16-bit quotient's rounding) as a call per vector with the vectors passed
// through the stack: float16 x per-axis-last Q to float8e4m3fn took 7-9 ms at 16M against
// float32 x's 4.3, and a call per 32-element block cost plain int4 blocked Q 65 us against 57
// (64K in cache). Only where a measurement asked for it: each use copies its body into every
// call site of every instantiation, and compile time is CI's budget (QuantizeUniform's two
// lambdas made kernels_quantize_sub_byte.cpp take 228 s to compile instead of 189; the same on
// QuantizeRun's and the dequantize loops' lambdas, which measured no faster, 254 s).
// Sanitizer builds (the test suites' ASan/UBSan, fuzzing and TSan builds) leave the choice to
// the compiler: they test what the code does, not how fast, and instrumented copies of these
// bodies made one translation unit take over 18 minutes and 5 GB at -O1 under ASan.
// GCC says so by __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__, clang by __has_feature (which GCC 12
// lacks, so it is tested apart). UBSan has no test of its own: qdq's scripts pair it with ASan.
#ifndef QDQ_HOT_LAMBDA
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define QDQ_HOT_LAMBDA HWY_ATTR
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define QDQ_HOT_LAMBDA HWY_ATTR
#endif
#endif
#ifndef QDQ_HOT_LAMBDA
#define QDQ_HOT_LAMBDA HWY_ATTR __attribute__((always_inline))
#endif
#endif

constexpr size_t kBlock = 1024;
constexpr size_t kPadded = kBlock + 64;  // room for a whole vector past the block (AVX-512: 16)

// --- Float codecs in lanes ------------------------------------------------------------------

// Round-to-nearest-even of float32 lanes into format F, returning codes in int32 lanes; the same
// rules as codec::encode_float (subnormals, overflow policy, NaN and zero spellings).
// For formats of 8 bits or less only the low byte of a lane is the code (bits 22 and up of a
// subnormal lane hold the rounding constant's exponent; the stores keep the low byte); float16's
// codes are whole.
template <const Format& F>
HWY_INLINE VI Encode(VF v, bool saturate) {
  const DF df;
  const DI di;
  const DU du;
  constexpr int m = F.mantissa_bits;
  constexpr int shift = 23 - m;
  constexpr int sign_shift = F.sign_shift();
  constexpr bool kWholeCodes = sign_shift >= 8;
  constexpr float kLargest = magnitude_value(F, F.max_code);
  // Saturating: clamping the magnitude to the largest finite value first gives the same code as
  // rounding and then saturating (everything between the two rounds to it), +inf included.
  const bool clamps = saturate || F.nan_style == NanStyle::kNone;
  VF magnitude = hn::Abs(v);
  if (clamps) magnitude = hn::Min(magnitude, hn::Set(df, kLargest));  // NaN lanes are replaced below
  const VU abs_bits = hn::BitCast(du, magnitude);

  // Normal range: round the float32 mantissa to m bits on the bit pattern, ties to even (add
  // 2^(shift-1) - 1 plus the lowest kept bit; a carry moves into the exponent), with the exponent
  // rebias folded into the same addition. Lanes below the normal range come out negative or
  // small (the arithmetic shift keeps them so) and are not selected.
  constexpr uint32_t kRoundAndRebias = (1u << (shift - 1)) - 1u - (static_cast<uint32_t>(127 - F.bias) << 23);
  const VU lsb = hn::And(hn::ShiftRight<shift>(abs_bits), hn::Set(du, 1u));
  const VI normal = hn::ShiftRight<shift>(hn::BitCast(di, hn::Add(abs_bits, hn::Add(lsb, hn::Set(du, kRoundAndRebias)))));
  // Below the smallest normal: adding 1.5 * 2^23 smallest subnormals rounds the magnitude to a
  // whole number of them, half to even (the FPU's default rounding, as for the division), and
  // leaves that number in the low mantissa bits; the constant's own mantissa bits below bit 22
  // are zero.
  constexpr float kSubnormalMagic = 1.5f * exp2f_exact(23 + 1 - F.bias - m);
  VI subnormal = hn::BitCast(di, hn::Add(magnitude, hn::Set(df, kSubnormalMagic)));
  if constexpr (kWholeCodes) subnormal = hn::Sub(subnormal, hn::Set(di, std::bit_cast<int32_t>(kSubnormalMagic)));
  const auto below_normal = hn::RebindMask(di, hn::Lt(magnitude, hn::Set(df, exp2f_exact(1 - F.bias))));
  VI magnitude_code = hn::IfThenElse(below_normal, subnormal, normal);

  // Spellings that take the sign like any code. FNUZ's 1000...0 also survives the sign going in,
  // as its one bit is the sign bit.
  if (!clamps) {  // past the largest finite code: infinity or NaN
    magnitude_code = hn::IfThenElse(hn::Gt(normal, hn::Set(di, static_cast<int32_t>(F.max_code))),
                                    hn::Set(di, static_cast<int32_t>(F.overflow_code())), magnitude_code);
  }
  const auto is_nan = hn::RebindMask(di, hn::IsNaN(v));
  if constexpr (F.nan_style != NanStyle::kNone) {
    VI nan_code = hn::Set(di, static_cast<int32_t>(F.nan_code()));
    if constexpr (F.keeps_nan_payload) {  // float16: the payload's leading bits below the quiet bit
      nan_code = hn::Or(nan_code, hn::BitCast(di, hn::ShiftRight<shift>(hn::And(hn::BitCast(du, v), hn::Set(du, 0x007F'FFFFu)))));
    }
    magnitude_code = hn::IfThenElse(is_nan, nan_code, magnitude_code);
  }

  // The sign: bit 31 moved to the format's sign position.
  const VU sign_source = hn::ShiftRight<31 - sign_shift>(hn::BitCast(du, v));
  const VI sign_mask = hn::Set(di, static_cast<int32_t>(1u << sign_shift));
  VI code;
  if constexpr (F.has_negative_zero) {
    code = hn::OrAnd(magnitude_code, hn::BitCast(di, sign_source), sign_mask);
  } else {
    // No -0: the sign goes only on magnitudes that round to a nonzero code, those above half the
    // smallest subnormal (exactly half rounds to 0, the even code).
    const auto nonzero = hn::RebindMask(di, hn::Gt(magnitude, hn::Set(df, exp2f_exact(-F.bias - m))));
    code = hn::Or(magnitude_code, hn::IfThenElseZero(nonzero, hn::And(hn::BitCast(di, sign_source), sign_mask)));
  }
  if constexpr (F.nan_style == NanStyle::kNone) {  // float4: NaN -> +max, without its sign
    code = hn::IfThenElse(is_nan, hn::Set(di, static_cast<int32_t>(F.max_code)), code);
  }
  return code;
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
    VF nan = quiet_nan;
    if constexpr (F.widening_keeps_nan_payload) {  // payload to float32's top mantissa bits
      nan = hn::BitCast(df, hn::Or(hn::Set(di, 0x7F80'0000), hn::ShiftLeft<23 - m>(mantissa)));
    }
    const VF special_value = hn::IfThenElse(hn::RebindMask(df, hn::Eq(mantissa, hn::Zero(di))), infinity, nan);
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

// float16 through the CPU's F16C conversions where the target has them: they round to nearest
// even (the immediate selects it, not MXCSR), keep subnormals, overflow to inf and keep a NaN's
// sign and leading payload bits, quieted: codec::encode_float's float16 rules exactly. Highway
// 1.0.3 emulates them on older targets by truncating, so those keep the lane codec above.
#undef QDQ_F16C  // per target: this file is compiled once for each
#if HWY_TARGET == HWY_AVX2
#define QDQ_F16C 1
using HalfBits = __m128i;  // 8 float16 codes
HWY_INLINE HalfBits ToHalf(VF v) { return _mm256_cvtps_ph(v.raw, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
HWY_INLINE VF FromHalf(HalfBits h) { return VF{_mm256_cvtph_ps(h)}; }
HWY_INLINE HalfBits LoadHalf(const uint16_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
HWY_INLINE void StoreHalf(HalfBits h, uint16_t* p) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h); }
HWY_INLINE VI WidenHalf(HalfBits h) { return VI{_mm256_cvtepu16_epi32(h)}; }
#elif HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
#define QDQ_F16C 1
using HalfBits = __m256i;  // 16 float16 codes
HWY_INLINE HalfBits ToHalf(VF v) { return _mm512_cvtps_ph(v.raw, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
HWY_INLINE VF FromHalf(HalfBits h) { return VF{_mm512_cvtph_ps(h)}; }
HWY_INLINE HalfBits LoadHalf(const uint16_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
HWY_INLINE void StoreHalf(HalfBits h, uint16_t* p) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), h); }
HWY_INLINE VI WidenHalf(HalfBits h) { return VI{_mm512_cvtepu16_epi32(h)}; }
#endif

HWY_INLINE VF RoundToFloat16(VF v) {
#ifdef QDQ_F16C
  return FromHalf(ToHalf(v));
#else
  return Decode<kFloat16Format>(Encode<kFloat16Format>(v, false));
#endif
}

// q rounded to bfloat16 half to even on its bits, the result in the high 16 bits of each lane and
// the low 16 bits left as the addition made them: for a caller that keeps only the high halves.
HWY_INLINE VU Bfloat16BitsInHighHalf(VF q) {
  const DU du;
  const VU bits = hn::BitCast(du, q);
  const VU lsb = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u));
  return hn::Add(hn::Add(bits, lsb), hn::Set(du, 0x7FFFu));
}

// float32 -> bfloat16 bits of a v without NaN lanes: round half to even on the bits (a carry into
// the exponent gives the next binade or infinity; infinity stays infinity). A NaN lane whose low 16
// bits are zero stays a NaN with its sign (the addition carries out of none of its bits).
HWY_INLINE VU Bfloat16BitsOfNonNaN(VF v) { return hn::ShiftRight<16>(Bfloat16BitsInHighHalf(v)); }

// float32 -> bfloat16 bits: as above; NaN becomes the canonical quiet NaN with its sign (rounding
// its bits could carry a NaN into infinity).
HWY_INLINE VI Bfloat16Bits(VF v) {
  const DI di;
  const DU du;
  const VU bits = hn::BitCast(du, v);
  const VU nan = hn::Or(hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 0x8000u)), hn::Set(du, 0x7FC0u));
  return hn::BitCast(di, hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), nan, Bfloat16BitsOfNonNaN(v)));
}
HWY_INLINE VF RoundToBfloat16(VF v) {
  const DF df;
  return hn::BitCast(df, hn::ShiftLeft<16>(Bfloat16Bits(v)));
}

// A quotient of two bfloat16 values rounded to bfloat16, for outputs that read no NaN payload.
// Its NaNs (the division's default NaN 0xFFC0'0000, or an operand's quieted payload) have 16 zero
// low bits, so adding 0x7FFF + lsb never carries out of one and RoundToBfloat16's NaN select is
// not needed: a NaN stays a NaN with its sign, though not the canonical one. Integer outputs send
// every NaN to the lowest code, and float8/float4/bfloat16 encodings keep only NaN-ness and sign.
HWY_INLINE VF RoundBfloat16QuotientAnyNan(VF q) {
  const DU du;
  return hn::BitCast(DF(), hn::And(Bfloat16BitsInHighHalf(q), hn::Set(du, 0xFFFF'0000u)));
}

// A quotient computed in float32 from operands exact in x's own float16 or bfloat16 type, rounded
// to that type (see QuantizeUniform's kRoundQuotient). kCanonicalNan: the output encodes a NaN's
// payload (float16 codes), so a NaN must be the canonical one.
template <ElementType kX, bool kCanonicalNan>
HWY_INLINE VF RoundOwnPrecisionQuotient(VF q) {
  if constexpr (kX == ElementType::kFloat16) {
    return RoundToFloat16(q);
  } else if constexpr (kCanonicalNan) {
    return RoundToBfloat16(q);
  } else {
    return RoundBfloat16QuotientAnyNan(q);
  }
}

// Whether every value of `type` is exact in a float16 / bfloat16 division precision (its own type).
constexpr bool ExactInPrecision(ElementType type, Precision precision) {
  return (type == ElementType::kFloat16 && precision == Precision::kFloat16) ||
         (type == ElementType::kBfloat16 && precision == Precision::kBfloat16);
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

#ifdef QDQ_F16C
// float8 codes whose every finite value and infinity a float16 holds with its exponent field moved
// by a constant: e4m3fn and e4m3fnuz (4 exponent bits) and e5m2 (float16's own exponent); and
// e5m2fnuz, a binade below float16 at the same fields, whose codes DecodeThroughFloat16 moves
// down a binade on the bits (its top binade, exponent 31, is float16's infinities and NaNs).
template <const Format& F>
constexpr bool kE5M2FnuzLayout = F.sign_shift() == 7 && F.exponent_bits == 5 &&
                                 F.nan_style == NanStyle::kNegativeZero && F.bias == kFloat16Format.bias + 1;
template <const Format& F>
constexpr bool kDecodesThroughFloat16 =
    F.sign_shift() == 7 &&
    ((F.exponent_bits == 4 && F.nan_style != NanStyle::kIeee && F.bias <= kFloat16Format.bias) ||
     (F.exponent_bits == 5 && F.nan_style == NanStyle::kIeee && F.bias == kFloat16Format.bias) ||
     kE5M2FnuzLayout<F>);

// A vector of float8 codes decoded as Decode<F> does, through the CPU's float16 conversion: the
// magnitude bits placed at float16's exponent and mantissa fields, eeee.mmm -> 0eeee.mmm0000000
// (e4m3) or eeeee.mm -> eeeee.mm00000000 (e5m2), read as a float16, then scaled by
// 2^(15 - bias). The float16 has float8's exponent field, so subnormal codes are float16
// subnormals of the same significand: the scaling is exact for both, and the conversion reads
// float16 subnormals whatever MXCSR says. NaN codes become float16's quiet NaN 0x7E00 with the
// code's sign, which widens to float32's 0x7FC0'0000 (Decode's NaN); infinities (e5m2) are
// float16's own. 16-bit lanes throughout, half a register per vector of results.
template <const Format& F>
HWY_INLINE VF DecodeThroughFloat16(const uint8_t* p) {
  static_assert(kDecodesThroughFloat16<F>);
  const hn::Rebind<int16_t, DF> d16;
  const hn::Rebind<uint8_t, DF> d8;
  constexpr int shift = 10 - F.mantissa_bits;  // float8 mantissa to float16's top mantissa bits
  const auto code = hn::PromoteTo(d16, hn::LoadU(d8, p));
  const auto magnitude = hn::And(code, hn::Set(d16, int16_t{0x7F}));
  const auto sign = hn::ShiftLeft<8>(hn::And(code, hn::Set(d16, int16_t{0x80})));  // bit 7 -> 15
  hn::Mask<decltype(d16)> nan;
  if constexpr (F.nan_style == NanStyle::kAllOnes) {  // e4m3fn: S.1111.111
    nan = hn::Eq(magnitude, hn::Set(d16, int16_t{0x7F}));
  } else if constexpr (F.nan_style == NanStyle::kNegativeZero) {  // fnuz: 1.0000.000 only
    nan = hn::Eq(code, hn::Set(d16, int16_t{0x80}));
  } else {  // IEEE-style e5m2: S.11111.mm with mm != 0 (S.11111.00 is infinity)
    static_assert(F.nan_style == NanStyle::kIeee);
    nan = hn::Gt(magnitude, hn::Set(d16, int16_t{0x7C}));
  }
  if constexpr (kE5M2FnuzLayout<F>) {
    // e5m2fnuz (bias 16): codes from 8 up (exponent field 2 and above) are float16 patterns
    // eeeee.mm00000000 with the exponent field less one (float16's e - 1 - 15 is e5m2fnuz's
    // e - 16), so the top binade stays finite (0x7F -> 0x7B00, 57344); codes 0-7 (the subnormals
    // and the first binade, both spaced 2^-17) are code * 2^-17, the float16 subnormal of 128 *
    // code units. No scaling after the conversion.
    const auto units = hn::ShiftLeft<7>(magnitude);
    const auto moved_down = hn::Sub(hn::Add(units, units), hn::Set(d16, int16_t{0x0400}));
    const auto bits = hn::IfThenElse(hn::Lt(magnitude, hn::Set(d16, int16_t{8})), units, moved_down);
    return FromHalf(hn::Or(sign, hn::IfThenElse(nan, hn::Set(d16, int16_t{0x7E00}), bits)).raw);
  }
  const auto half = hn::Or(sign, hn::IfThenElse(nan, hn::Set(d16, int16_t{0x7E00}), hn::ShiftLeft<shift>(magnitude)));
  const VF value = FromHalf(half.raw);
  if constexpr (F.bias == kFloat16Format.bias) return value;
  return hn::Mul(value, hn::Set(DF(), exp2f_exact(kFloat16Format.bias - F.bias)));
}
#endif

// x loaders: full vectors of float32 values straight from x's storage (exact conversions; int32
// rounds to nearest even as the reference).
template <ElementType kX>
struct XInput;
template <>
struct XInput<ElementType::kFloat32> {
  using T = float;
  static HWY_INLINE VF Load(const T* p) { return hn::LoadU(DF(), p); }
};
template <>
struct XInput<ElementType::kFloat16> {
  using T = uint16_t;
  static HWY_INLINE VF Load(const T* p) {
#ifdef QDQ_F16C
    return FromHalf(LoadHalf(p));
#else
    return Decode<kFloat16Format>(LoadWide(p));
#endif
  }
};
template <>
struct XInput<ElementType::kBfloat16> {
  using T = uint16_t;
  static HWY_INLINE VF Load(const T* p) { return hn::BitCast(DF(), hn::ShiftLeft<16>(LoadWide(p))); }
};
template <>
struct XInput<ElementType::kInt32> {
  using T = int32_t;
  static HWY_INLINE VF Load(const T* p) { return hn::ConvertTo(DF(), hn::LoadU(DI(), p)); }
};

// Whether LoadX4 gives x's elements interleaved: bfloat16 on AVX2, where an unpack with zero
// widens eight values into the high halves of 32-bit lanes, two per 256-bit load, against a
// widening load and a shift per eight in order. A loop of the division alone ran at the divider's
// floor this way (64K in cache, one core: 29.3 against 37.9 us). The element order is AVX2's
// unpacks', within 128-bit halves, which the 32 -> 16-bit packs of the stores put back.
template <ElementType kX>
constexpr bool kInterleavedLoadX4 = HWY_TARGET == HWY_AVX2 && kX == ElementType::kBfloat16;

// Elements [0, 4 lanes) of x as float32 vectors v[0..3]: in order, or where kInterleavedLoadX4
// v[0] holds elements 0-3 and 8-11, v[1] 4-7 and 12-15, v[2] and v[3] the same from 16.
template <ElementType kX>
HWY_INLINE void LoadX4(const typename XInput<kX>::T* p, VF v[4]) {
#if HWY_TARGET == HWY_AVX2
  if constexpr (kInterleavedLoadX4<kX>) {
    const __m256i zero = _mm256_setzero_si256();
    const __m256i first = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i second = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16));
    v[0] = VF{_mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, first))};
    v[1] = VF{_mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, first))};
    v[2] = VF{_mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, second))};
    v[3] = VF{_mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, second))};
    return;
  }
#endif
  const size_t N = hn::Lanes(DF());
  for (size_t j = 0; j < 4; ++j) v[j] = XInput<kX>::Load(p + j * N);
}

// x (float32/float16/bfloat16/int32) or a scale (also e8m0) as float32 values; lanes past k are
// zero. Every conversion is exact except int32, which rounds to nearest even as the reference.
// Full vectors of one x type through its loader.
template <ElementType kX>
size_t LoadVectors(const void* data, uint64_t index, size_t k, float* out) {
  const DF df;
  const size_t N = hn::Lanes(df);
  const auto* p = static_cast<const typename XInput<kX>::T*>(data) + index;
  size_t i = 0;
  for (; i + N <= k; i += N) hn::StoreU(XInput<kX>::Load(p + i), df, out + i);
  return i;
}

void LoadAsFloat(const ElementTypeInfo& type, const void* data, uint64_t index, size_t k, float* out);  // kernels.cpp

// Codes of a packed (4- or 2-bit) tensor, one per byte. Whole bytes in the middle go through
// lanes: a byte widened to 16 (4-bit) or 32 (2-bit) bits is spread so that its little-endian
// bytes are the codes, low bits first.
void Unpack(const ElementTypeInfo& type, const void* data, uint64_t index, size_t k, uint8_t* codes);  // kernels.cpp

// One code per byte into a packed tensor; partial bytes at either end are read-modify-written,
// whole bytes in the middle go through lanes (the inverse of Unpack's spreading).
void Pack(const ElementTypeInfo& type, const uint8_t* codes, size_t k, void* data, uint64_t index);  // kernels.cpp

// Integer codes of type T as float32: whole vectors widened, the rest one by one as T (per-block
// operands are often fewer than a vector: 8 per 1024 elements for blocks of 128, where the generic
// codec's decode took 7% of a dynamic int8 quantization). Returns how many it converted (k).
template <typename T>
size_t ConvertCodes(const T* codes, size_t k, float* out) {
  const DF df;
  const size_t N = hn::Lanes(df);
  size_t i = 0;
  for (; i + N <= k; i += N) hn::StoreU(hn::ConvertTo(df, LoadWide(codes + i)), df, out + i);
  for (; i < k; ++i) {
    T code;  // copied: a caller's 16-bit tensor need not be 2-byte aligned (the C ABI fuzzer's are not)
    std::memcpy(&code, codes + i, sizeof code);
    out[i] = static_cast<float>(code);
  }
  return i;
}

// Integer-valued codes (zero points, dequantize x) as float32 values; lanes past k are zero.
void LoadCodesAsFloat(const ElementTypeInfo& type, const void* data, uint64_t index, size_t k, float* out);  // kernels.cpp

// --- Per-run context ------------------------------------------------------------------------

class StreamWriter;

// A per-element operand that is not stored as float32 (a float16 scale, a uint8 zero point, ...)
// converted once for a whole run and kept while the runs that follow read the same elements: on
// the last axis every row of x reads the same per-axis values, which the blocks of each row
// converted again (Quark's Q float32 -> uint8 per-axis-last with its zero point, 64K in cache:
// 8.7 us, against 5.5 us for ONNX's cell without one). A run is converted only when the run
// before it read the same elements, so operands that never repeat (DirectML's full-size ones)
// keep the per-block conversion in the L1-sized block buffer. And only while a row's per-element
// operands, as float32, stay within kRowOperandBytes: beyond that the rows read from the cache
// fall out of L1 and cost more than the conversion saves (16M float32 -> uint8 per-axis-last with a
// uint8 zero point, 2 threads: rows of 4096, 32 KiB of scale and converted zero point, 2.5-2.8
// ms cached against 2.1-2.2 ms converted per block; a float16 scale alone, 16 KiB, 0.95-1.04
// against 1.18-1.26 ms; rows of 256 with the zero point, 1.68-1.76 against 1.94-1.96 ms).
constexpr uint64_t kRowOperandBytes = 16 * 1024;

class ConvertedOperand {
 public:
  // Converted values for tensor elements [first, first + count) of an operand of `type` held in
  // `view`, or nullptr where the cache does not hold them. `run_first` and `run_count` are the
  // elements the current run reads; at a run's start (`starts_run`) they are remembered, and
  // converted when the previous run read the same ones and they are at most `max_elements`.
  template <class Convert>
  const float* Find(uint64_t first, size_t count, bool starts_run, uint64_t run_first, uint64_t run_count,
                    uint64_t max_elements, const Convert& convert) {
    if (first >= first_ && first + count <= first_ + count_) return values_.data() + (first - first_);
    if (!starts_run) return nullptr;
    const bool repeats = run_first == last_run_first_ && run_count == last_run_count_;
    last_run_first_ = run_first;
    last_run_count_ = run_count;
    if (!repeats || run_count > max_elements) return nullptr;
    values_.resize(run_count + 64);  // + a vector of zeros past the end, as the block buffers have
    convert(run_first, static_cast<size_t>(run_count), values_.data());
    std::fill(values_.begin() + static_cast<std::ptrdiff_t>(run_count), values_.end(), 0.0f);
    first_ = run_first;
    count_ = run_count;
    finite_ = kUnknown;
    reciprocals_made_ = false;
    return Find(first, count, false, run_first, run_count, max_elements, convert);
  }

  // Whether p points among the values converted last and all of them are finite: `all_finite`
  // checks them once per conversion, not once per block (per-axis-last rows repeat them; 16M
  // uint8 -> bfloat16 rows of 4096, 1 thread, in cache: the per-block check was a sixth of the
  // time). False where p points elsewhere (the caller then checks its own block).
  template <class AllFiniteCheck>
  bool HoldsOnlyFinite(const float* p, const AllFiniteCheck& all_finite) {
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    const auto begin = reinterpret_cast<std::uintptr_t>(values_.data());
    if (count_ == 0 || at < begin || at >= begin + count_ * sizeof(float)) return false;
    if (finite_ == kUnknown) finite_ = all_finite(values_.data(), static_cast<size_t>(count_)) ? kFinite : kNotFinite;
    return finite_ == kFinite;
  }

  // The reciprocals RN(1 / v) of the values converted last, at p's place among them, where p points
  // there and every one is a normal float32; else nullptr. Made once per conversion by
  // `reciprocals(values, count, out)`, which returns whether all are normal (per-axis-last rows
  // repeat them; padded with zeros past the end as the values are).
  template <class Reciprocals>
  const float* ReciprocalsOf(const float* p, const Reciprocals& reciprocals) {
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    const auto begin = reinterpret_cast<std::uintptr_t>(values_.data());
    if (count_ == 0 || at < begin || at >= begin + count_ * sizeof(float)) return nullptr;
    if (!reciprocals_made_) {
      reciprocals_.assign(values_.size(), 0.0f);
      reciprocals_normal_ = reciprocals(values_.data(), static_cast<size_t>(count_), reciprocals_.data());
      reciprocals_made_ = true;
    }
    return reciprocals_normal_ ? reciprocals_.data() + (p - values_.data()) : nullptr;
  }

 private:
  enum Finiteness : uint8_t { kUnknown, kFinite, kNotFinite };
  std::vector<float> values_;
  uint64_t first_ = 0, count_ = 0;
  Finiteness finite_ = kUnknown;
  std::vector<float> reciprocals_;
  bool reciprocals_made_ = false, reciprocals_normal_ = false;
  uint64_t last_run_first_ = ~uint64_t{0}, last_run_count_ = 0;
};

// The codes of one constant divisor and zero point by thresholds on x's 16-bit patterns
// (QuantizeByThresholds, AVX-512): made once per (divisor, zero point) that a task's stretches
// share, kept in ExecuteRange and reached through Context::thresholds.
struct ThresholdCodes {
  bool made = false;    // the fields below describe divisor_bits and zero_point_bits
  bool usable = false;  // false: the stretches of this divisor keep the arithmetic
  uint32_t divisor_bits = 0, zero_point_bits = 0;
  int16_t first_step = 0;  // half the codes: the first comparison's index
  int16_t first_bound = 0;
  int16_t nan_code = 0;
  // Level l's bound for a lane whose index so far is i: the least key whose rank is at least
  // i + step_l (steps first_step / 2, ..., 1), 32 entries for one vpermw.
  // MakeThresholdCodes writes the levels the output's code width reads, and all codes, before it
  // sets `usable`; nothing reads them otherwise, so they start uninitialized (every task has a
  // ThresholdCodes, dequantize tasks included, and most never make one).
  alignas(64) int16_t bounds[3][32];
  alignas(64) int16_t codes[32];  // the stored code of each rank
};

struct Context {
  const Plan* plan;
  const ElementTypeInfo* x;
  const ElementTypeInfo* scale;
  const ElementTypeInfo* zero_point;  // nullptr when absent
  const ElementTypeInfo* y;
  Precision precision;
  bool saturate;
  bool apply_zero_point;
  bool stream_output;  // y (and the mask) are written through these, with non-temporal stores
  StreamWriter* y_stream;
  StreamWriter* mask_stream;
  // 4- and 2-bit tensors: kPacked or kOneCodePerByte (other types: kPacked).
  SubByteLayout x_layout, y_layout;
  // Where x and y lie (RangeBuffers): element i at x_data[i - x_first] and y[i - y_first].
  const void* x_data;
  uint64_t x_first, y_first;
  // Range masks (RangeBuffers::range_mask): the quantized type's integer range, or for a float
  // type the magnitude from which q no longer rounds to a finite code (at exactly the limit it
  // still does when limit_inside: the largest code is even, so the tie rounds down to it).
  float range_lowest, range_max, range_limit;
  bool range_limit_inside;
  // Fake-quant in lanes: the range mask written beside y (element i at mask[i - y_first]), or null.
  uint8_t* mask;
  // RangeBuffers::side_reduction: the GroupStream<x's type> that QuantizeUniform steps, or null.
  void* side_stream = nullptr;
  // The bytes to fetch toward L2 ahead of the loads (RangeBuffers::prefetch, else x's own bytes
  // kPrefetchAheadBytes ahead of this range's loads where x is large; null for none): the next
  // byte and the end, advanced by QuantizeUniform per vector and by PrefetchWindow per block.
  struct PrefetchCursor {
    const char* next;
    const char* end;
  }* prefetch = nullptr;
  // Per-element scales and zero points converted once per run that repeats (ConvertedOperand).
  ConvertedOperand* converted_scale = nullptr;
  ConvertedOperand* converted_zero_point = nullptr;
  // Where the target compiles it (kQuantizesByReciprocal), whether one scale per stretch is applied
  // by its reciprocal with the tie check instead of the division (kernels::quantizes_by_reciprocal).
  bool by_reciprocal = false;
  // Where QuantizeRun found one (CodeTable): float8 / float4 codes of x's own 16-bit patterns.
  const uint8_t* code_table = nullptr;
  // Where the target has QuantizeByThresholds: the thresholds of the stretch's divisor last made.
  ThresholdCodes* thresholds = nullptr;
};

// 32-bit integer scales and zero points hold values float32 cannot; they travel as their int32
// words (a uint32 as its bit pattern) and the kernels that take them compute in float64 lanes.
constexpr bool IsWide(const ElementTypeInfo& type) { return type.is_integer() && type.bits == 32; }

// A scale's or zero point's values for one block of a run, as W (float: the value; int32_t: the
// word): a pointer to per-element values (straight into the tensor where it already holds them,
// else a filled buffer), a broadcast constant, or one value per block.
template <typename W>
struct OperandValues {
  HWY_ALIGN W buffer[kPadded];
  const W* values = nullptr;  // nullptr: `constant`, or `block` when per_block
  W constant = 0;
  HWY_ALIGN W block[kPadded];  // per_block: entry b is block (first_element_phase + i) / block (padded as buffer)
};

// float4e2m1's value on its bits, as SubByteCodeValues computes it in lanes below (the codec's
// decode takes a scalbn, which cost more per call than the 1024 codes it was a table for).
inline float Float4E2M1Value(uint32_t code) {
  const uint32_t exponent = (code >> 1) & 3u, m = code & 1u;
  const uint32_t magnitude = exponent == 0 ? m * 0x3F00'0000u : ((exponent + 126u) << 23) | (m << 22);
  return std::bit_cast<float>(magnitude | ((code & 8u) << 28));
}

// float4e2m1 codes (0bSEEM, one per u32 lane) as float32 values on their bits: EE = 0 is M * 0.5
// (0x3F000000 is 0.5f), else 2^(EE - 1) * (1 + M / 2), whose float32 exponent field is
// EE - 1 + 127 and mantissa M << 22; the sign moves from bit 3 to bit 31 (code 0b1000 is -0, as
// the codec decodes it).
HWY_INLINE VF Float4E2M1Values(VU codes) {
  const DF df;
  const DU du;
  const auto exponent = hn::And(hn::ShiftRight<1>(codes), hn::Set(du, 3u));
  const auto m = hn::And(codes, hn::Set(du, 1u));
  const auto normal = hn::Or(hn::ShiftLeft<23>(hn::Add(exponent, hn::Set(du, 126u))), hn::ShiftLeft<22>(m));
  const auto subnormal = hn::Mul(m, hn::Set(du, 0x3F00'0000u));
  const auto magnitude = hn::IfThenElse(hn::Eq(exponent, hn::Zero(du)), subnormal, normal);
  return hn::BitCast(df, hn::Or(magnitude, hn::ShiftLeft<28>(hn::And(codes, hn::Set(du, 8u)))));
}

// Float4E2M1Values by a lane permutation where a vector is exactly the 16 values (AVX-512: one
// vpermps) or the 8 magnitudes (the sign then moved from bit 3 to bit 31); other vectors from the
// bits. Codes are 0..15.
HWY_INLINE VF Float4E2M1LookedUp(VI codes) {
  const DF df;
  const DI di;
  alignas(64) static constexpr float kValues[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                                    -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
  if constexpr (hn::MaxLanes(df) == 16 && !HWY_HAVE_SCALABLE) {
    return hn::TableLookupLanes(hn::LoadU(df, kValues), hn::IndicesFromVec(df, codes));
  } else if constexpr (hn::MaxLanes(df) == 8 && !HWY_HAVE_SCALABLE) {
    const VF magnitude = hn::TableLookupLanes(hn::LoadU(df, kValues), hn::IndicesFromVec(df, hn::And(codes, hn::Set(di, 7))));
    return hn::Or(magnitude, hn::BitCast(df, hn::ShiftLeft<28>(hn::And(codes, hn::Set(di, 8)))));
  } else {
    return Float4E2M1Values(hn::BitCast(DU(), codes));
  }
}

// Vectors of 4- and 2-bit codes, one per u32 lane in element order, and their float32 values.
// (Fixed-width targets of 4+ lanes: the unpacking halves and quarters the vector. Defined again
// for each target: this file is compiled once per target.)
#undef QDQ_VECTOR_SUB_BYTE_CODES
#if HWY_TARGET != HWY_SCALAR && !HWY_HAVE_SCALABLE
#define QDQ_VECTOR_SUB_BYTE_CODES 1
// N codes of 4 bits from N / 2 bytes: byte b (0bHHHHLLLL) holds elements 2b (L) and 2b + 1 (H);
// as one u32 lane, 0x000H'000L is the two u16 lanes [L, H], which widen to u32 lanes in order.
HWY_INLINE VU UnpackNibbles(const uint8_t* bytes) {
  const DU du;
  const hn::Half<DU> dh;
  const auto b = hn::PromoteTo(dh, hn::LoadU(hn::Rebind<uint8_t, decltype(dh)>(), bytes));
  const auto pairs = hn::Or(hn::And(b, hn::Set(dh, 0x0Fu)), hn::ShiftLeft<12>(hn::And(b, hn::Set(dh, 0xF0u))));
  return hn::PromoteTo(du, hn::BitCast(hn::Rebind<uint16_t, DU>(), pairs));
}
// N codes of 2 bits from N / 4 bytes: byte b (0bDDCCBBAA) holds elements 4b (A) .. 4b + 3 (D); as
// one u32 lane, 0x0D0C'0B0A is the four u8 lanes [A, B, C, D], which widen to u32 lanes in order.
HWY_INLINE VU UnpackCrumbs(const uint8_t* bytes) {
  const DU du;
  const hn::Half<hn::Half<DU>> dq;
  const auto b = hn::PromoteTo(dq, hn::LoadU(hn::Rebind<uint8_t, decltype(dq)>(), bytes));
  const auto three = hn::Set(dq, 3u);
  const auto quads = hn::Or(hn::Or(hn::And(b, three), hn::ShiftLeft<6>(hn::And(b, hn::Set(dq, 0x0Cu)))),
                            hn::Or(hn::ShiftLeft<12>(hn::And(b, hn::Set(dq, 0x30u))), hn::ShiftLeft<18>(hn::And(b, hn::Set(dq, 0xC0u)))));
  return hn::PromoteTo(du, hn::BitCast(hn::Rebind<uint8_t, DU>(), quads));
}
// The values of 4- and 2-bit codes: integers sign-extended as (code ^ s) - s (s the sign bit, or
// 0 unsigned); float4e2m1 on its bits (Float4E2M1Values).
HWY_INLINE VF SubByteCodeValues(const ElementTypeInfo& type, VU codes) {
  const DF df;
  const DU du;
  if (type.is_integer()) {
    const auto s = hn::Set(du, type.is_signed ? 1u << (type.bits - 1) : 0u);
    return hn::ConvertTo(df, hn::BitCast(DI(), hn::Sub(hn::Xor(codes, s), s)));
  }
  return Float4E2M1Values(codes);
}
#else
#define QDQ_VECTOR_SUB_BYTE_CODES 0
#endif

// 4- and 2-bit codes [index, index + count) as float32 values: per-element and per-block zero
// points (element e of a packed tensor sits in byte e / per_byte at bit (e % per_byte) * bits, low
// bits first; one code per byte keeps it in the low bits). Whole vectors of codes are unpacked and
// valued in lanes (SubByteCodeValues); the codes before and after them take a table of the type's
// 4 or 16 values, made once per call: integers sign-extended ((code ^ s) - s with s the code's
// sign bit maps 0b1000 to -8 and 0b0111 to 7), float4e2m1 from its bits (Float4E2M1Value). (float4
// through the codec per element, with its scalbn, made Q float32 -> float4e2m1 per-axis-last with
// a zero-point tensor 20x slower than without one: 58 against 3 ms at 16M.)
inline void LoadSubByteCodesAsFloat(const ElementTypeInfo& type, const void* data, uint64_t index, size_t count,
                                    float* out, SubByteLayout layout) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  const unsigned bits = static_cast<unsigned>(type.bits);
  const uint32_t mask = low_mask(type.bits);
  float values[16];
  const int32_t sign_bit = type.is_signed ? int32_t{1} << (bits - 1) : 0;
  for (uint32_t code = 0; code <= mask; ++code) {
    values[code] = type.is_integer()                       ? static_cast<float>((static_cast<int32_t>(code) ^ sign_bit) - sign_bit)
                   : type.type == ElementType::kFloat4E2M1 ? Float4E2M1Value(code)
                                                           : static_cast<float>(codec::decode(type, code));
  }
#if QDQ_VECTOR_SUB_BYTE_CODES
  const DF df;
  const size_t N = hn::Lanes(df);
#endif
  if (layout == SubByteLayout::kOneCodePerByte) {
    size_t i = 0;
#if QDQ_VECTOR_SUB_BYTE_CODES
    const DU du;
    for (; i + N <= count; i += N) {
      const VU codes = hn::And(hn::PromoteTo(du, hn::LoadU(hn::Rebind<uint8_t, DU>(), bytes + index + i)), hn::Set(du, mask));
      hn::StoreU(SubByteCodeValues(type, codes), df, out + i);
    }
#endif
    for (; i < count; ++i) out[i] = values[bytes[index + i] & mask];
    return;
  }
  const unsigned per_byte_log2 = bits == 4 ? 1 : 2;  // 2 or 4 codes per byte
  const uint64_t in_byte_mask = (uint64_t{1} << per_byte_log2) - 1;
  auto value_of = [&](uint64_t e) { return values[(bytes[e >> per_byte_log2] >> ((e & in_byte_mask) * bits)) & mask]; };
  size_t i = 0;
  for (; i < count && ((index + i) & in_byte_mask) != 0; ++i) out[i] = value_of(index + i);  // to a whole byte
  const size_t per_byte = size_t{1} << per_byte_log2;
#if QDQ_VECTOR_SUB_BYTE_CODES
  for (; i + N <= count; i += N) {  // whole bytes, a vector of codes at a time
    const uint8_t* from = bytes + ((index + i) >> per_byte_log2);
    hn::StoreU(SubByteCodeValues(type, bits == 4 ? UnpackNibbles(from) : UnpackCrumbs(from)), df, out + i);
  }
#endif
  for (; i + per_byte <= count; i += per_byte) {  // whole bytes
    const uint32_t byte = bytes[(index + i) >> per_byte_log2];
    for (size_t j = 0; j < per_byte; ++j) out[i + j] = values[(byte >> (j * bits)) & mask];
  }
  for (; i < count; ++i) out[i] = value_of(index + i);
}

// `count` contiguous values of a tensor as W, lanes past `count` (up to a vector) zeroed.
template <typename W>
void LoadContiguous(const ElementTypeInfo& type, const void* data, uint64_t index, size_t count, W* out,
                    SubByteLayout layout) {
  if constexpr (std::is_same_v<W, float>) {
    if (type.is_packed()) {  // 4- and 2-bit integer and float4 zero points, in either layout
      LoadSubByteCodesAsFloat(type, data, index, count, out, layout);
      for (size_t j = count; j < kPadded && j < count + 16; ++j) out[j] = 0.0f;
    } else if (type.is_integer()) {
      LoadCodesAsFloat(type, data, index, count, out);
    } else {
      LoadAsFloat(type, data, index, count, out);
    }
  } else {  // 32-bit words, stored as such
    std::memcpy(out, static_cast<const W*>(data) + index, count * sizeof(W));
    for (size_t j = count; j < kPadded && j < count + 16; ++j) out[j] = 0;
  }
}

// Where the tensor already stores W (float32 values, 32-bit words), a pointer into it.
template <typename W>
const W* DirectValues(const ElementTypeInfo& type, const void* data, uint64_t index) {
  const bool same = std::is_same_v<W, float> ? type.type == ElementType::kFloat32 : IsWide(type);
  return same ? static_cast<const W*>(data) + index : nullptr;
}

template <typename W>
W LoadOne(const ElementTypeInfo& type, const void* data, uint64_t index, SubByteLayout layout) {
  // Stored as W already: read directly. Through the codec, a run's constant scale and zero point
  // took 2% of 64K DQ uint8 -> float32 per-axis-first (rows of 1024).
  if (const W* direct = DirectValues<W>(type, data, index)) {
    W value;
    std::memcpy(&value, direct, sizeof(W));  // the caller's tensor may sit off W's alignment
    if constexpr (std::is_same_v<W, float>) {
      // A signalling NaN quieted, payload and sign kept, as the codec's trip through double did: a
      // CPU that prefers a signalling operand's NaN (Arm) would otherwise return it from x / s where
      // x is NaN too, and the reference returns x's.
      if (std::isnan(value)) value = std::bit_cast<float>(std::bit_cast<uint32_t>(value) | 0x0040'0000u);
    }
    return value;
  }
  if constexpr (std::is_same_v<W, float>) {
    return static_cast<float>(codec::load_value(data, type, index, layout));
  } else {
    return static_cast<W>(codec::load_code(data, type, index, layout));
  }
}

// The lanes of an operand blocked along a run by blocks shorter than a vector, vector after vector:
// vector j's lane l takes the value of block (phase + j * lanes + l) / block, which is block
// first_block() + (p + l) / block for the vector's phase p in its first block.
// (p + l) / block is computed as (p + l) * M >> 16 with M = ceil(2^16 / block): M * block = 2^16 + r
// with r < block, so the product over 2^16 exceeds (p + l) / block by (p + l) * r / (2^16 * block)
// < (p + l) / 2^16 <= 2 * lanes / 2^16, below 1 / block (lanes < 181), and the truncation lands on
// the true quotient. Where the lanes are a multiple of the block (blocks of 1, 2, 4, 8) every vector
// starts at the same phase and takes the same indices. (A float32 product, truncated with the
// fix-up of out-of-range conversions, took as long as the load, permute and store together: 64K DQ
// uint8 -> float32 over rows of 4.)
template <class D>
class ShortBlockLanes {
 public:
  HWY_INLINE ShortBlockLanes(D d, size_t block, size_t phase)
      : d_(d),
        block_(block),
        step_blocks_(hn::Lanes(d) / block),
        step_phase_(hn::Lanes(d) % block),
        phase_(phase),
        reciprocal_(hn::Set(hn::RebindToSigned<D>(), static_cast<int32_t>(((uint32_t{1} << 16) + block - 1) / block))),
        indices_(IndicesAt(phase)) {
#if HWY_TARGET != HWY_SCALAR
    // Where every vector starts at the same phase and needs at most 16 bytes of values, those are
    // all it loads (NarrowValues).
    const size_t needed_bytes = ((phase + hn::Lanes(d) - 1) / block + 1) * sizeof(hn::TFromD<D>);
    if (sizeof(hn::TFromD<D>) == 4 && hn::Lanes(d) * 4 >= 16 && step_phase_ == 0 && needed_bytes <= 16) {
      narrow_bytes_ = needed_bytes <= 8 ? 8 : 16;
      byte_indices_ = ByteIndicesAt(phase);
    }
#endif
  }

  // The first block of the current vector, and its lanes' values from values[first_block(), ...).
  HWY_INLINE size_t first_block() const { return first_block_; }
  HWY_INLINE hn::Vec<D> Values(hn::Vec<D> from_first_block) const {
    return hn::TableLookupLanes(from_first_block, indices_);
  }
  HWY_INLINE hn::Vec<D> Values(const hn::TFromD<D>* values) const {
#if HWY_TARGET != HWY_SCALAR
    if (narrow_bytes_ != 0) return NarrowValues(values + first_block_);
#endif
    return Values(hn::LoadU(d_, values + first_block_));
  }

  // Where every vector starts at the same phase (the lanes a multiple of the block, so the indices
  // never change): the values of the vector at element j of the stretch (a multiple of the lanes),
  // without stepping, for loops that take several vectors a step (QuantizeUniform).
  HWY_INLINE bool SamePhaseEveryVector() const { return step_phase_ == 0; }
  HWY_INLINE hn::Vec<D> ValuesOfVector(const hn::TFromD<D>* values, size_t j) const {
    const hn::TFromD<D>* first = values + j / hn::Lanes(d_) * step_blocks_;
#if HWY_TARGET != HWY_SCALAR
    if (narrow_bytes_ != 0) return NarrowValues(first);
#endif
    return Values(hn::LoadU(d_, first));
  }

  // On to the next vector.
  HWY_INLINE void Next() {
    first_block_ += step_blocks_;
    if (step_phase_ == 0) return;
    phase_ += step_phase_;
    if (phase_ >= block_) {
      phase_ -= block_;
      ++first_block_;
    }
    indices_ = IndicesAt(phase_);
  }

 private:
  using Indices = decltype(hn::IndicesFromVec(D(), hn::Zero(hn::RebindToSigned<D>())));

  HWY_INLINE Indices IndicesAt(size_t phase) const {
    const hn::RebindToSigned<D> di;
    const auto lane = hn::Add(hn::Iota(di, 0), hn::Set(di, static_cast<int32_t>(phase)));
    return hn::IndicesFromVec(d_, hn::ShiftRight<16>(hn::Mul(lane, reciprocal_)));
  }

#if HWY_TARGET != HWY_SCALAR  // one lane: never blocks shorter than a vector
  // The lane quotients (phase + l) / block as the bytes of each lane's value within a 128-bit block
  // holding values [0, 4) (32-bit values only): value j is bytes 4j to 4j + 3.
  HWY_INLINE hn::Vec<hn::Repartition<uint8_t, D>> ByteIndicesAt(size_t phase) const {
    const hn::RebindToSigned<D> di;
    const auto lane = hn::Add(hn::Iota(di, 0), hn::Set(di, static_cast<int32_t>(phase)));
    const auto quotient = hn::ShiftRight<16>(hn::Mul(lane, reciprocal_));
    return hn::BitCast(hn::Repartition<uint8_t, D>(),
                       hn::Add(hn::Mul(quotient, hn::Set(di, 0x0404'0404)), hn::Set(di, 0x0302'0100)));
  }

  // The vector's values from the 8 or 16 bytes at `values` alone, copied into every 128-bit block
  // (a 64-bit broadcast, or LoadDup128) and spread by a byte shuffle within each block. Each vector
  // of DQ over rows of 4 (block 4, 8 lanes) needs two values: a whole vector loaded for them at
  // 8-byte steps splits a cache line three loads in eight, and the lane permute waits on it. Zen 3,
  // [16384, 4] per-axis along axis 0, one thread: DQ int16 -> float32 with a zero point 16.2-22.4
  // -> 12.4-13.2 us, uint8 18.1-22.0 -> 12.9-14.0, int8 11.6-12.2 -> 8.9-10.0.
  HWY_INLINE hn::Vec<D> NarrowValues(const hn::TFromD<D>* values) const {
    const hn::Repartition<uint8_t, D> d8;
    hn::Vec<D> few;
    if (narrow_bytes_ == 8) {
      const hn::Repartition<uint64_t, D> d64;
      uint64_t bits;
      std::memcpy(&bits, values, sizeof bits);
      few = hn::BitCast(d_, hn::Set(d64, bits));
    } else {
      few = hn::LoadDup128(d_, values);
    }
    return hn::BitCast(d_, hn::TableLookupBytes(hn::BitCast(d8, few), byte_indices_));
  }
#endif

  D d_;
  size_t block_, step_blocks_, step_phase_, phase_, first_block_ = 0;
  hn::Vec<hn::RebindToSigned<D>> reciprocal_;
  Indices indices_;
#if HWY_TARGET != HWY_SCALAR
  size_t narrow_bytes_ = 0;  // 8 or 16 where NarrowValues serves the vectors, else 0
  hn::Vec<hn::Repartition<uint8_t, D>> byte_indices_ = hn::Zero(hn::Repartition<uint8_t, D>());
#endif
};

// out[j] = values[(phase + j) / block] for j in [0, k) and up to the next whole vector, where
// block < the vector's lanes and phase < block. A vector starting in block b takes its values from
// values_from(b) (values[b, b + lanes) converted in registers) while b + lanes <= count, else from
// `tail`, which holds values[tail_start, count) converted and zeros for a vector past them
// (tail_start <= every b read from it), so that no load reads past an operand tensor.
template <class D, class ValuesFrom>
HWY_INLINE void FillShortBlocks(D d, const ValuesFrom& values_from, size_t count,
                                const hn::TFromD<D>* HWY_RESTRICT tail, size_t tail_start, size_t block, size_t phase,
                                size_t k, hn::TFromD<D>* HWY_RESTRICT out) {
  const size_t lanes = hn::Lanes(d);
  ShortBlockLanes<D> lanes_of(d, block, phase);
  for (size_t j = 0; j < k; j += lanes, lanes_of.Next()) {
    const size_t b = lanes_of.first_block();
    hn::StoreU(lanes_of.Values(b + lanes <= count ? values_from(b) : hn::LoadU(d, tail + (b - tail_start))), d, out + j);
  }
}

// FillShortBlocks over the `count` block values from tensor element `index`: values stored as W
// (float32 scales, 32-bit words) read in place, others converted together first.
template <typename W>
void FillShortBlocksOf(const ElementTypeInfo& type, const void* data, SubByteLayout layout, uint64_t index,
                       size_t count, size_t block, size_t phase, size_t k, W* out) {
  const hn::ScalableTag<W> d;
  const size_t lanes = hn::Lanes(d);
  if (const W* values = DirectValues<W>(type, data, index)) {
    // The last vector's worth from a zero-padded copy, so that no load passes the tensor's end.
    HWY_ALIGN W tail[2 * HWY_MAX_BYTES / sizeof(W)];
    const size_t tail_start = count > lanes ? count - lanes : 0;
    std::memcpy(tail, values + tail_start, (count - tail_start) * sizeof(W));
    for (size_t z = count - tail_start; z < count - tail_start + lanes; ++z) tail[z] = 0;
    FillShortBlocks(d, [&](size_t b) QDQ_HOT_LAMBDA { return hn::LoadU(d, values + b); }, count, tail, tail_start,
                    block, phase, k, out);
    return;
  }
  HWY_ALIGN W converted[kPadded];  // zero-padded by LoadContiguous: every vector reads it
  LoadContiguous(type, data, index, count, converted, layout);
  FillShortBlocks(d, [&](size_t b) QDQ_HOT_LAMBDA { return hn::LoadU(d, converted + b); }, count + lanes, converted, 0,
                  block, phase, k, out);
}

// Repeats each block's value over the elements of a run blocked along its innermost axis. Values
// stored as W (float32 scales, 32-bit words) are read directly: through the codec, one value per
// block of 32 made DQ int32 -> float32 blocked-32 with an int32 zero point 2.7x slower at 16M
// (7.1 against 2.6 ms without the zero point).
template <typename W>
void FillBlocked(const ElementTypeInfo& type, const void* data, SubByteLayout layout, uint64_t first_index,
                 const exec::Run& run, uint64_t offset, size_t k, W* out) {
  // The first block found by division and the others by stepping.
  const uint64_t first = (run.block_phase + offset) / run.block;
  const uint64_t last = (run.block_phase + offset + k - 1) / run.block;
  const size_t count = static_cast<size_t>(last - first + 1);
  if constexpr (sizeof(W) == 4) {
    if (run.block < hn::Lanes(hn::ScalableTag<W>())) {
      // Blocks shorter than a vector (per-axis over rows of 4, DirectML's [M, 1]): each output
      // vector takes its few values by one lane permute. Element by element, blocks of 4 took 82%
      // of 64K Q float32 -> int8 per-axis-first over rows of 4 with an int8 zero point.
      const size_t phase = static_cast<size_t>(run.block_phase + offset - first * run.block);
      FillShortBlocksOf(type, data, layout, first_index + first, count, static_cast<size_t>(run.block), phase, k, out);
      for (size_t z = k; z < kPadded && z < k + 16; ++z) out[z] = 0;
      return;
    }
  }
  // The blocks' values converted together (one by one through the codec, an int8 zero point per
  // block of 4 took a third of 64K Q float32 -> int8 per-axis-first over rows of 4).
  const W* values = DirectValues<W>(type, data, first_index + first);
  HWY_ALIGN W converted[kPadded];
  if (values == nullptr) {
    LoadContiguous(type, data, first_index + first, count, converted, layout);
    values = converted;
  }
  size_t block_end = static_cast<size_t>(std::min<uint64_t>(k, (first + 1) * run.block - run.block_phase - offset));
  for (size_t j = 0, b = 0; j < k; ++b) {
    W value;
    std::memcpy(&value, values + b, sizeof(W));  // the caller's tensor may sit off W's alignment
    for (size_t e = j; e < block_end; ++e) out[e] = value;
    j = block_end;
    block_end = static_cast<size_t>(std::min<uint64_t>(k, j + run.block));
  }
  for (size_t z = k; z < kPadded && z < k + 16; ++z) out[z] = 0;
}

// The operand values of elements [offset, offset + k) of a periodic run (short rows in groups,
// exec::for_each_group_run), then zeros for a vector past k. In each group of rows the operand
// repeats its row's values (at most exec::kLongestOperandPeriod, from tensor element first_index
// + group * the group stride) with the row's length as period, or one value where it is constant
// along the row. Each output vector is made in registers from the row's values: for rows no
// longer than a vector, one lane permute of them (lane l takes value (p + l) % period for the
// vector's phase p, which steps by the lanes modulo the period; no step where the period divides
// the lanes, as rows of 1, 2, 4, 8 do); for longer rows, a load at the phase, or from the row
// repeated once where the vector wraps round it. A vector that crosses into the next group is
// stored over by that group's first. The row's values are loaded where they lie (float32 scales,
// 32-bit words) or converted once for all the chunk's groups: a vector load of values just stored
// one by one waits for the stores (store forwarding fails), which took two thirds of 64K DQ uint8
// -> float32 over rows of 4 in blocks of 32 rows when the period's values were copied per group.
// Written out per element in the execute layer instead, a group at a time, these operands took 72%
// of it.
template <typename W>
void FillPeriodic(const ElementTypeInfo& type, const void* data, SubByteLayout layout, uint64_t first_index,
                  const exec::Run& run, const exec::PeriodicOperand& operand, uint64_t offset, size_t k,
                  W* HWY_RESTRICT out) {
  const hn::ScalableTag<W> d;
  const hn::RebindToSigned<decltype(d)> di;
  const size_t lanes = hn::Lanes(d);
  constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(W);
  constexpr size_t kPeriod = exec::kLongestOperandPeriod;
  const size_t period = operand.along_row ? static_cast<size_t>(run.period) : 1;
  const size_t step = lanes % period;
  const uint64_t stride = static_cast<uint64_t>(operand.group_stride);
  const uint64_t place = run.group_phase + offset;
  const uint64_t first_group = place / run.group;
  const uint64_t last_group = (place + k - 1) / run.group;
  // The chunk's operand values are [first_index + first_group * stride, + span) of the tensor.
  const uint64_t span = (last_group - first_group) * stride + period;
  const W* values = DirectValues<W>(type, data, first_index + first_group * stride);
  // Converted together where the groups' rows lie close (stride at most a row: span <= k + 2
  // periods, as a group is at least a row), else a row at a time; zero-padded by LoadContiguous.
  HWY_ALIGN W converted[kBlock + 2 * kPeriod + kMaxLanes + 16];
  const bool converted_together = values == nullptr && stride <= period;
  if (converted_together) {
    LoadContiguous(type, data, first_index + first_group * stride, static_cast<size_t>(span), converted, layout);
    values = converted;
  }
  // Lane indices (phase + l) % period, the remainder by a multiply-shift as in ShortBlockLanes.
  const auto reciprocal = hn::Set(di, static_cast<int32_t>(((uint32_t{1} << 16) + period - 1) / period));
  const auto period_lanes = hn::Set(di, static_cast<int32_t>(period));
  const auto indices_at = [&](size_t phase) HWY_ATTR {
    const auto lane = hn::Add(hn::Iota(di, 0), hn::Set(di, static_cast<int32_t>(phase)));
    const auto quotient = hn::ShiftRight<16>(hn::Mul(lane, reciprocal));
    return hn::IndicesFromVec(d, hn::Sub(lane, hn::Mul(quotient, period_lanes)));
  };
  HWY_ALIGN W row_copy[kPeriod + kMaxLanes + 16];
  size_t in_group = static_cast<size_t>(place - first_group * run.group);
  size_t phase = operand.along_row ? static_cast<size_t>((run.period_phase + offset) % run.period) : 0;
  for (size_t j = 0, g = 0; j < k; ++g, in_group = 0, phase = 0) {
    const W* row;
    uint64_t readable;  // values readable from `row` on
    if (values != nullptr) {
      row = values + g * stride;
      readable = converted_together ? kMaxLanes + period : span - g * stride;
    } else {
      LoadContiguous(type, data, first_index + (first_group + g) * stride, period, row_copy, layout);
      row = row_copy;
      readable = kMaxLanes + period;
    }
    const size_t end = std::min<size_t>(k, j + static_cast<size_t>(run.group) - in_group);
    if (period == 1) {
      W value;
      std::memcpy(&value, row, sizeof(W));  // the caller's tensor may sit off W's alignment
      const auto v = hn::Set(d, value);
      for (; j < end; j += lanes) hn::StoreU(v, d, out + j);
    } else if (period <= lanes) {
      if (readable < lanes) {  // the row ends the chunk's values: copied so that no load passes them
        std::memcpy(row_copy, row, period * sizeof(W));
        row = row_copy;
      }
      const auto window = hn::LoadU(d, row);
      if (step == 0) {
        const auto v = hn::TableLookupLanes(window, indices_at(phase));
        for (; j < end; j += lanes) hn::StoreU(v, d, out + j);
      } else {
        for (size_t p = phase; j < end; j += lanes) {
          hn::StoreU(hn::TableLookupLanes(window, indices_at(p)), d, out + j);
          p += step;
          if (p >= period) p -= period;
        }
      }
    } else {
      // Rows longer than a vector: loads inside the row, and the row repeated once for the
      // vectors that wrap round its end (made on the group's first such vector).
      bool repeated = false;
      for (size_t p = phase; j < end; j += lanes) {
        if (p + lanes <= period) {
          hn::StoreU(hn::LoadU(d, row + p), d, out + j);
        } else {
          if (!repeated) {
            if (row != row_copy) std::memcpy(row_copy, row, period * sizeof(W));
            std::memcpy(row_copy + period, row_copy, lanes * sizeof(W));
            row = row_copy;
            repeated = true;
          }
          hn::StoreU(hn::LoadU(d, row_copy + p), d, out + j);
        }
        p += step;
        if (p >= period) p -= period;
      }
    }
    j = end;
  }
  for (size_t z = k; z < kPadded && z < k + 16; ++z) out[z] = 0;
}

// The values of one operand (scale or zero point, starting at tensor element `first_index` for
// the run's first element) for elements [offset, offset + k) of the run.
template <typename W>
void LoadOperand(const ElementTypeInfo& type, const TensorView& view, uint64_t first_index, bool varies,
                 const exec::PeriodicOperand& periodic, const exec::Run& run, uint64_t offset, size_t k, bool per_block,
                 OperandValues<W>* o, ConvertedOperand* converted = nullptr, uint64_t max_converted = 0) {
  const void* data = view.data;
  o->values = nullptr;
  if (per_block) {
    // The blocks' values are contiguous: one conversion for all of them.
    const uint64_t first = (run.block_phase + offset) / run.block;
    const uint64_t last = (run.block_phase + offset + k - 1) / run.block;
    LoadContiguous(type, data, first_index + first, static_cast<size_t>(last - first + 1), o->block, view.layout);
  } else if (run.block != 0) {
    FillBlocked(type, data, view.layout, first_index, run, offset, k, o->buffer);
    o->values = o->buffer;
  } else if (varies && run.period != 0) {
    FillPeriodic(type, data, view.layout, first_index, run, periodic, offset, k, o->buffer);
    o->values = o->buffer;
  } else if (varies) {
    o->values = DirectValues<W>(type, data, first_index + offset);
    if constexpr (std::is_same_v<W, float>) {
      if (o->values == nullptr && converted != nullptr) {
        o->values = converted->Find(first_index + offset, k, offset == 0, first_index, run.count, max_converted,
                                    [&](uint64_t first, size_t count, float* out) {
                                      LoadContiguous(type, data, first, count, out, view.layout);
                                    });
      }
    }
    if (o->values == nullptr) {
      LoadContiguous(type, data, first_index + offset, k, o->buffer, view.layout);
      o->values = o->buffer;
    }
  } else if (offset == 0) {  // constant over the run: decoded once
    o->constant = LoadOne<W>(type, data, first_index, view.layout);
  }
}

struct Operands {
  // Blocked along the innermost axis with whole vectors per block: one value per block, broadcast
  // per vector (never with an int32 scale, nor a quantize's 32-bit zero point: the wide quantize
  // kernels take those per element).
  bool per_block = false;
  // Blocked along the innermost axis by blocks shorter than a vector, where the caller permutes the
  // blocks' values into lanes (LoadOperands' short_blocks_in_lanes, ShortBlockLanes): `block` holds
  // them from the block of the first element, whose place in its block is short_block_phase.
  bool short_blocks = false;
  size_t short_block = 0, short_block_phase = 0;
  OperandValues<float> scale, zero_point;
  OperandValues<int32_t> wide_scale, wide_zero_point;
  // Per-element zero points read as codes in the quantize and dequantize loops (LoadOperands'
  // zero_point_codes, ZeroPointCodesInLoop): the byte of the block's first element, or null.
  // zero_point.values is then null and the converted buffer unused.
  const uint8_t* zero_point_codes = nullptr;
};

// Whether a run's per-element zero points can be read as codes by the quantize loop instead of
// converted to float32 first: integer codes of 8 or 16 bits, or 4- and 2-bit integer and float4e2m1
// codes one per byte or packed from a whole byte (the run's first zero point the first code of a
// byte).
inline bool ZeroPointCodesInLoop(const Context& c, const exec::Run& run) {
  if (c.zero_point == nullptr || !run.zero_point_varies || run.block != 0 || run.period != 0) return false;
  const ElementTypeInfo& z = *c.zero_point;
  if (!z.is_integer() && z.type != ElementType::kFloat4E2M1) return false;
  if (z.bits == 8 || z.bits == 16) return true;
  if (z.bits != 4 && z.bits != 2) return false;  // 32-bit words: the wide kernels
  if (c.plan->zero_point.layout == SubByteLayout::kOneCodePerByte) return true;
  // Unpacked from whole bytes (UnpackNibbles, UnpackCrumbs).
  return QDQ_VECTOR_SUB_BYTE_CODES && run.zero_point_index % (8 / static_cast<uint64_t>(z.bits)) == 0;
}

// zero_point_codes: the caller reads per-element zero points as codes where ZeroPointCodesInLoop
// (Operands::zero_point_codes); every other operand loads as before.
// short_blocks_in_lanes: the caller takes blocks shorter than a vector through ShortBlockLanes
// (Operands::short_blocks) where neither operand is taken as words.
void LoadOperands(const Context& c, const exec::Run& run, uint64_t offset, size_t k, Operands* o,
                  bool zero_point_codes = false, bool short_blocks_in_lanes = false);  // kernels.cpp

// Zeroes kBytes (a multiple of the vector size) at p with vector stores. GCC turns a memset of
// 256 bytes, or a loop storing zero vectors, into `rep stosq`, whose start-up cost was 18% of 64K
// float32 -> uint8 blocked-first-32 Q on Zen 3 (rows of 1,024 elements at x + 16 bytes split into
// a 4-element head and a 4-element tail, each staged): the zero passes through an empty asm, which
// hides that it is zero, so the stores stay stores.
template <size_t kBytes>
HWY_INLINE void ZeroBytes(void* p) {
#if !HWY_HAVE_SCALABLE
  static_assert(kBytes % HWY_MAX_BYTES == 0, "whole vectors only: the last store would pass the end");
#endif
  const hn::ScalableTag<uint8_t> d8;
  auto zero = hn::Zero(d8);
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
  asm("" : "+v"(zero.raw));
#endif
  uint8_t* bytes = static_cast<uint8_t*>(p);
  for (size_t b = 0; b < kBytes; b += hn::Lanes(d8)) hn::StoreU(zero, d8, bytes + b);
}

// Copies the last partial vector's operands (elements [i, k)) into zero-padded local arrays, so
// that the same full-vector code handles the tail without reading past any tensor.
template <typename T>
HWY_INLINE const T* StageTail(const T* source, size_t i, size_t k, T* local) {
  ZeroBytes<64 * sizeof(T)>(local);
  std::memcpy(local, source + i, (k - i) * sizeof(T));
  return local;
}

// A plan whose x takes this many bytes or more fetches x ahead of its loads (Context::prefetch;
// kernels/prefetch.h): such an x is not in the L2 caches of the cores reading it (2 MiB each on
// the machines measured), and smaller ones gain nothing from the extra requests.
constexpr uint64_t kPrefetchedXBytes = uint64_t{4} << 20;

// A cache line's bytes: the unit streamed outputs are written in.
constexpr size_t kLine = 64;

// The kLine bytes at `source` to the line at `line` (line-aligned) with non-temporal stores.
HWY_INLINE void StreamLine(const uint8_t* source, uint8_t* line) {
  const hn::ScalableTag<uint8_t> d8;
  const size_t N = hn::Lanes(d8);
  for (size_t j = 0; j < kLine; j += N) hn::Stream(hn::LoadU(d8, source + j), d8, line + j);
}

// One task's streamed output, written block by block from local buffers. Whole 64-byte lines go
// out with non-temporal stores. A block seldom ends on a line boundary (numpy's buffers start 16
// bytes into one), so the partial line at its end is held here and completed by the next write
// when that one continues where it stopped: consecutive blocks of a run, and consecutive runs of
// a task, are contiguous in y. Only a line the task shares with a neighbour or a gap is written
// with ordinary stores, at Flush. Writing every block's partial lines directly, as qdq did,
// costs a read-for-ownership that misses the cache, and the streaming stores queued behind it
// wait for it: with y 16 bytes off a line, one such line per 1024-element block made Q float32 ->
// uint8 per-tensor at 16M 1.3x slower on AVX-512 (2.2 against 1.7 ms, 2 threads).
class StreamWriter {
 public:
  StreamWriter() = default;
  StreamWriter(const StreamWriter&) = delete;
  StreamWriter& operator=(const StreamWriter&) = delete;

  // Copies `bytes` from `local` to `destination`.
  void Write(const void* local, size_t bytes, void* destination) {
    const auto* source = static_cast<const uint8_t*>(local);
    auto* to = static_cast<uint8_t*>(destination);
    if (line_ != nullptr && to != line_ + end_) Flush();
    const size_t into_line = reinterpret_cast<uintptr_t>(to) % kLine;
    if (into_line != 0 && bytes != 0) {  // continue (or begin) the pending partial line
      if (line_ == nullptr) {
        line_ = to - into_line;
        begin_ = end_ = into_line;
      }
      const size_t n = std::min(bytes, kLine - into_line);
      std::memcpy(pending_ + end_, source, n);
      end_ += n;
      source += n;
      to += n;
      bytes -= n;
      if (end_ < kLine) return;
      if (begin_ == 0) {
        StreamLine(pending_, line_);
        line_ = nullptr;
      } else {
        Flush();  // the line's head belongs to whatever precedes this task's output
      }
    }
    size_t i = 0;
    for (; i + kLine <= bytes; i += kLine) StreamLine(source + i, to + i);
    if (i < bytes) {  // the start of a line the next write may complete
      line_ = to + i;
      begin_ = 0;
      end_ = bytes - i;
      std::memcpy(pending_, source + i, end_);
    }
  }

  // Writes the pending partial line with ordinary stores.
  void Flush() {
    if (line_ != nullptr) std::memcpy(line_ + begin_, pending_ + begin_, end_ - begin_);
    line_ = nullptr;
  }

 private:
  HWY_ALIGN uint8_t pending_[kLine];  // bytes [begin_, end_) of the line at line_
  uint8_t* line_ = nullptr;           // the pending line's address (line-aligned), or null
  size_t begin_ = 0, end_ = 0;
};

// --- Quantize -------------------------------------------------------------------------------

// Integer outputs: clamp(round_half_even(q) + zp) with NaN -> lowest, as codes of `bits` bits.
// The clamp happens before rounding and before the zero point, in float32, against lowest - zp
// and max - zp (integers, exact in float32): rounding is monotonic and the bounds are integers, so
// this equals clamping afterwards. The clamped value is below 2^22 in magnitude, so adding
// 1.5 * 2^23 rounds it half-to-even to an integer held in the low mantissa bits (the FPU's
// default rounding, as for the division); one integer subtraction of (that bias - zp) then gives
// round(q) + zp. The codes are left in two's complement; the stores keep the low bits.
template <int kBits, bool kSigned>
struct IntegerOutput {
  static constexpr bool kIsInteger = true;
  static constexpr bool kWide = false;
  static constexpr bool kSignedCodes = kSigned;
  static constexpr int kCodeBits = kBits;
  static constexpr float kLowest = kSigned ? -static_cast<float>(1 << (kBits - 1)) : 0.0f;
  static constexpr float kMax = kSigned ? static_cast<float>((1 << (kBits - 1)) - 1) : static_cast<float>((1 << kBits) - 1);
  static constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23, bits 0x4B40'0000

  // Per-zero-point constants, hoisted out of the loop when the zero point is constant.
  struct Bounds {
    VF lo, hi;
    VI bias;
  };
  static HWY_INLINE Bounds MakeBounds(VF zp) {
    const DF df;
    const DI di;
    return {hn::Sub(hn::Set(df, kLowest), zp), hn::Sub(hn::Set(df, kMax), zp),
            hn::Sub(hn::Set(di, 0x4B40'0000), hn::ConvertTo(di, zp))};
  }
  static HWY_INLINE VF Clamped(VF q, const Bounds& b) {
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
    // maxps returns its second operand when either is NaN: NaN becomes lo here.
    return hn::Min(hn::Max(q, b.lo), b.hi);
#else
    return hn::IfThenElse(hn::IsNaN(q), b.lo, hn::Min(hn::Max(q, b.lo), b.hi));
#endif
  }
  // round_half_even(q) + zp, saturated: q clamped to [lowest - zp, max - zp] (integers, so the
  // clamp commutes with the rounding), rounded by adding 1.5 * 2^23 (the sum's last bit is the
  // integer), and the bias takes the magic's bits off and adds zp.
  static HWY_INLINE VI CodesOf(VF q, const Bounds& b) { return CodesOfClamped(Clamped(q, b), b); }
  static HWY_INLINE VI Codes(const Context&, VF q, VF, const Bounds& b) { return CodesOf(q, b); }
  // CodesOf a q that Clamped(q, b) already gave.
  static HWY_INLINE VI CodesOfClamped(VF clamped, const Bounds& b) {
    return hn::Sub(hn::BitCast(DI(), hn::Add(clamped, hn::Set(DF(), kMagic))), b.bias);
  }
  // Codes of x / s computed as x * r, r = RN(1 / s) a normal float32, exact where it is safe and
  // through the division where it might not be (the proof is in docs/semantics.md, "Division by
  // multiplication where it is provably the same"): q0 = RN(x * r) lies within 2^-22 |q0| of
  // Q = RN(x / s), so where the clamped q0 is further than that from every half-integer, Q clamps
  // and rounds to the same integer. The test |t| + 2^-22 |q0| < 0.5, t = q0 - round(q0) (exact),
  // is evaluated with one FMA, whose rounding can only turn a true "less" into "not less" (0.5 is
  // a float): such lanes take the division. Out of range, q0 clamps to a bound b and Q to within
  // 2^-22 |b| < 0.5 of it (|b| <= 2^17 for these types). NaN x: both clamp to lo (maxps).
  static HWY_INLINE VI CodesByReciprocal(VF x, VF s, VF r, const Bounds& b) {
    const DI di;
    const VF magic = hn::Set(DF(), kMagic);
    hn::Mask<DF> safe;
    const VF shifted = ShiftedByReciprocal(x, r, b, &safe);
    if (HWY_LIKELY(hn::AllTrue(DF(), safe))) return hn::Sub(hn::BitCast(di, shifted), b.bias);
    const VF divided = hn::Add(Clamped(hn::Div(x, s), b), magic);
    return hn::Sub(hn::BitCast(di, hn::IfThenElse(safe, shifted, divided)), b.bias);
  }
  // Codes with a zero point per lane given as int32 lanes (per-element zero points read as codes,
  // ZeroPointLanes): q clamped to +-2^21 (NaN to -2^21: maxps returns its second operand), rounded
  // half to even by the 1.5 * 2^23 addition, the zero point added in int32 and the sum clamped to
  // [lowest, max]. Rounding is monotonic and the bounds are integers, so this equals Codes' clamp
  // against lowest - zp and max - zp first; |round(q) + zp| stays far inside int32, and a q
  // beyond +-2^21 lies beyond every bound with any zero point of these types.
  static HWY_INLINE VI CodesWithZeroPointLanes(const Context&, VF q, VI zp) {
    const DF df;
    const DI di;
    const VF limit = hn::Set(df, 0x1p21f);
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
    const VF clamped = hn::Min(hn::Max(q, hn::Neg(limit)), limit);
#else
    const VF clamped = hn::IfThenElse(hn::IsNaN(q), hn::Neg(limit), hn::Min(hn::Max(q, hn::Neg(limit)), limit));
#endif
    const VI rounded = hn::Sub(hn::BitCast(di, hn::Add(clamped, hn::Set(df, kMagic))), hn::Set(di, 0x4B40'0000));
    return hn::Min(hn::Max(hn::Add(rounded, zp), hn::Set(di, static_cast<int32_t>(kLowest))),
                   hn::Set(di, static_cast<int32_t>(kMax)));
  }
  // The code minus its zero point as a float32 value, which is what DequantizeLinear reads back
  // from it (f32(code - zp), exact for these integers): round_half_even of the clamped quotient,
  // by the same 1.5 * 2^23 addition, subtracted again. A zero comes out +0, as code - zp does.
  static HWY_INLINE VF ValueMinusZeroPoint(VF q, const Bounds& b) {
    const VF magic = hn::Set(DF(), kMagic);
    return hn::Sub(hn::Add(Clamped(q, b), magic), magic);
  }
  // ValueMinusZeroPoint of x / s from x * r, with CodesByReciprocal's check (fused fake-quant).
  static HWY_INLINE VF ValueMinusZeroPointByReciprocal(VF x, VF s, VF r, const Bounds& b) {
    const VF magic = hn::Set(DF(), kMagic);
    hn::Mask<DF> safe;
    const VF rounded = hn::Sub(ShiftedByReciprocal(x, r, b, &safe), magic);
    if (HWY_LIKELY(hn::AllTrue(DF(), safe))) return rounded;
    return hn::IfThenElse(safe, rounded, ValueMinusZeroPoint(hn::Div(x, s), b));
  }

 private:
  // round_half_even(clamp(x * r)) + 1.5 * 2^23, and in *safe the lanes where that rounds as the
  // division would (the test CodesByReciprocal describes).
  static HWY_INLINE VF ShiftedByReciprocal(VF x, VF r, const Bounds& b, hn::Mask<DF>* safe) {
    const DF df;
    const VF magic = hn::Set(df, kMagic);
    const VF clamped = Clamped(hn::Mul(x, r), b);
    const VF shifted = hn::Add(clamped, magic);
    const VF t = hn::Sub(clamped, hn::Sub(shifted, magic));
    *safe = hn::Lt(hn::MulAdd(hn::Abs(clamped), hn::Set(df, 0x1p-22f), hn::Abs(t)), hn::Set(df, 0.5f));
    return shifted;
  }
};

// Float8 outputs: encode q (the zero point is 0 and not added); float4 and Quark's float16 and
// bfloat16: q + zp in float32, then encode (saturating for Quark, as planned).
template <const Format& F, bool kAddsZeroPoint>
struct FloatOutput {
  static constexpr bool kIsInteger = false;
  static constexpr bool kWide = false;
  static constexpr bool kSignedCodes = false;
  static constexpr int kCodeBits = F.sign_shift() + 1;
  static constexpr const Format& kFormat = F;
  static constexpr bool kAddsZero = kAddsZeroPoint;
  struct Bounds {};
  static HWY_INLINE Bounds MakeBounds(VF) { return {}; }
  static HWY_INLINE VI Codes(const Context& c, VF q, VF zp, const Bounds&) {
    if constexpr (kAddsZeroPoint) {
      // NaN + NaN: q's NaN, written out as the reference does (an addition may be commuted). A
      // format that keeps no payload encodes every NaN alike: the plain sum does.
      if (c.apply_zero_point) q = F.keeps_nan_payload ? hn::IfThenElse(hn::IsNaN(q), q, hn::Add(q, zp)) : hn::Add(q, zp);
    }
#ifdef QDQ_F16C
    // (Compared by fields: an address comparison is not a constant expression under the sanitizers.)
    if constexpr (F.exponent_bits == kFloat16Format.exponent_bits && F.mantissa_bits == kFloat16Format.mantissa_bits &&
                  F.bias == kFloat16Format.bias) {
      if (c.saturate) {  // to +-65504 first, as Encode's clamp; NaN kept
        const VF largest = hn::Set(DF(), 65504.0f);
        q = hn::IfThenElse(hn::IsNaN(q), q, hn::Min(hn::Max(q, hn::Neg(largest)), largest));
      }
      return WidenHalf(ToHalf(q));
    }
#endif
    return Encode<F>(q, c.saturate);
  }
  // float4e2m1 with its per-element zero points read as codes (ZeroPointLanes, 0bSEEM per lane).
  static HWY_INLINE VI CodesWithZeroPointLanes(const Context& c, VF q, VI zero_point_codes) {
    static_assert(F.exponent_bits == 2 && F.mantissa_bits == 1, "float4e2m1 zero points only");
    return Codes(c, q, Float4E2M1LookedUp(zero_point_codes), {});
  }
};

// Whether an output's codes carry a NaN's payload (float16: narrowing keeps its leading bits);
// every other output reads only NaN-ness and sign.
template <class Output>
constexpr bool kEncodesNanPayload = false;
template <const Format& F, bool kAddsZeroPoint>
constexpr bool kEncodesNanPayload<FloatOutput<F, kAddsZeroPoint>> = F.keeps_nan_payload;

// A float32 quotient of float16 operands rounded to float16 for an output of integers of at most
// 16 bits, on the bits: round half to even at bit 13 (0x0FFF plus the kept lsb, then the 13 low
// bits cleared), about half the cost of F16C's two conversions. It differs from float16 only
// where no such code can tell: below float16's normal range (|q| < 2^-14, which float16 rounds to
// a multiple of 2^-24 and this to 11 bits of q's own binade) both give code 0 (the zero point
// alone); from 65520 up float16 overflows to infinity and this gives 65536 or more, and both
// saturate (|q| >= 65536 beyond every bound less any zero point of these types); a NaN stays a
// NaN (a quotient of float16 operands, or the division's default NaN, has 13 zero low bits, so
// nothing carries) and every NaN goes to the same code.
HWY_INLINE VF RoundFloat16QuotientForSmallIntegers(VF q) {
  const DU du;
  const VU bits = hn::BitCast(du, q);
  const VU lsb = hn::And(hn::ShiftRight<13>(bits), hn::Set(du, 1u));
  return hn::BitCast(DF(), hn::And(hn::Add(hn::Add(bits, lsb), hn::Set(du, 0x0FFFu)), hn::Set(du, 0xFFFF'E000u)));
}

// Outputs whose codes cannot tell the rounding above from float16's: integers of at most 16 bits.
// Not the range masks, which may judge a quotient against an int32 range, where 65536 and
// infinity differ.
template <class Output>
constexpr bool kSmallIntegerCodes = false;
template <int kBits, bool kSigned>
constexpr bool kSmallIntegerCodes<IntegerOutput<kBits, kSigned>> = kBits <= 16;

// A quotient of operands exact in x's float16 or bfloat16 type rounded to that type as far as
// Output's codes can tell (RoundOwnPrecisionQuotient, or the bits' rounding above).
template <class Output, ElementType kX>
HWY_INLINE VF RoundQuotientForOutput(VF q) {
  if constexpr (kX == ElementType::kFloat16 && kSmallIntegerCodes<Output>) {
    return RoundFloat16QuotientForSmallIntegers(q);
  } else {
    return RoundOwnPrecisionQuotient<kX, kEncodesNanPayload<Output>>(q);
  }
}

// Integer outputs of at most 8 bits, whose clamp bounds (lowest - zp, max - zp: integers within
// +-255) are exact in float16's 11 and bfloat16's 8 significant bits.
template <class Output>
constexpr bool kClampsBeforeRounding = false;
template <int kBits, bool kSigned>
constexpr bool kClampsBeforeRounding<IntegerOutput<kBits, kSigned>> = kBits <= 8;

// A finite v rounded half to even to the significand of x's float16 (11 bits) or bfloat16 (8)
// type, in float32 and without its exponent range, by Veltkamp's splitting: g = v (2^k + 1),
// then g + (v - g), k = 24 - bits. Three float operations where the bits' rounding takes five
// integer ones. Equal bit for bit to RoundFloat16QuotientForSmallIntegers for every float32 of
// magnitude in [2^-14, 2^41], and to bfloat16's rounding on the bits in [2^-100, 2^100] (checked
// exhaustively, both signs; the callers give it integer-clamped values, and |v| < 2^-14 rounds to
// code 0 either way). v (2^k + 1) must not be fused into the subtraction: the empty asm keeps g a
// rounded product whatever the compiler's contraction setting on x86 (elsewhere qdq's ISO C++
// mode leaves contraction off in GCC, and Clang contracts only within one source expression).
template <ElementType kX>
HWY_INLINE VF RoundToSignificandOf(VF v) {
  constexpr float kSplitter = kX == ElementType::kFloat16 ? 8193.0f : 65537.0f;  // 2^13 + 1, 2^16 + 1
  VF g = hn::Mul(v, hn::Set(DF(), kSplitter));
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128 && defined(__GNUC__)
  asm("" : "+v"(g.raw));
#endif
  return hn::Add(g, hn::Sub(v, g));
}

// Codes of a quotient of operands exact in x's float16 or bfloat16 type, rounded to that type as
// far as Output's codes can tell. Integers of at most 8 bits clamp first (rounding to a precision
// is monotonic and their bounds are exact in it, so the clamp commutes with it; a NaN clamps to
// lo, as before) and then round the finite, small value by RoundToSignificandOf: on AMD Zen 4
// the float16 -> int8 loop is bound by its vector operations, of which this saves two a vector.
template <class Output, ElementType kX>
HWY_INLINE VI CodesOfOwnPrecisionQuotient(const Context& c, VF q, VF zp, const typename Output::Bounds& bounds) {
  if constexpr (kClampsBeforeRounding<Output>) {
    return Output::CodesOfClamped(RoundToSignificandOf<kX>(Output::Clamped(q, bounds)), bounds);
  } else {
    return Output::Codes(c, RoundQuotientForOutput<Output, kX>(q), zp, bounds);
  }
}

// x / s for float16 or bfloat16 x and divisor s (both exact in x's type) as the codes of the
// own-precision quotient see it (integers of at most 16 bits, float8 and float4e2m1), from
// r = RN(1 / s), a normal float32, without a division: RN(x r). Its error (up to about one float32
// unit in the last place) could in principle move a quotient across a midpoint of x's type, but it
// does not for any pair that matters: every x pattern under every scale pattern of either type
// whose reciprocal is normal rounds to the same value of x's type as the division, for every
// quotient up to 2^18 in magnitude, except float16 quotients below its normal range (2^-14), where
// 1,495 pairs land a subnormal step (2^-24) apart and every code above reads them alike (the
// integer 0, each float8 format's and float4e2m1's code, the latter after any zero point's
// addition too). Beyond 2^18 they round to the same value of x's type too: float16's infinity,
// and for bfloat16 the searched binades repeat (x times a power of two scales the quotient and the
// product exactly, up to float32's overflow, which lies beyond bfloat16's). An exhaustive search, which
// the test KernelsByReciprocal.ProductOfEveryPatternRoundsAsTheQuotient repeats; a reciprocal
// one unit off fails it for 236 float16 scales; negative x and s mirror it. Infinite and NaN x
// stay so. Quark's float16 and bfloat16 outputs keep the division: they would tell the subnormal
// steps apart, and their range reaches past 2^18.
// So these codes take it on every target, for a constant divisor and for per-axis-last columns
// (ConvertedOperand::ReciprocalsOf), a product never costing more than a division (unlike float32
// x's tie check, kQuantizesByReciprocal).
HWY_INLINE VF OwnPrecisionQuotientByReciprocal(VF x, VF r) {
  return hn::Mul(x, r);
}
template <class Output>
constexpr bool kCodesOwnQuotientByReciprocal = false;
template <int kBits, bool kSigned>
constexpr bool kCodesOwnQuotientByReciprocal<IntegerOutput<kBits, kSigned>> = kBits <= 16;
template <const Format& F, bool kAddsZeroPoint>
constexpr bool kCodesOwnQuotientByReciprocal<FloatOutput<F, kAddsZeroPoint>> = F.sign_shift() < 8;

// out[i] = RN(1 / values[i]) for i < count, and whether every one is a normal float32 (the
// per-element divisors of OwnPrecisionQuotientByReciprocal; ConvertedOperand::ReciprocalsOf).
inline bool AllReciprocalsNormal(const float* values, size_t count, float* out) {
  const DF df;
  const size_t N = hn::Lanes(df);
  const VF one = hn::Set(df, 1.0f);
  bool all = true;
  size_t i = 0;
  for (; i + N <= count; i += N) {
    const VF r = hn::Div(one, hn::LoadU(df, values + i));
    const VF magnitude = hn::Abs(r);
    all &= hn::AllTrue(df, hn::And(hn::Ge(magnitude, hn::Set(df, std::numeric_limits<float>::min())),
                                   hn::Le(magnitude, hn::Set(df, std::numeric_limits<float>::max()))));
    hn::StoreU(r, df, out + i);
  }
  for (; i < count; ++i) {
    out[i] = 1.0f / values[i];
    all = all && std::isnormal(out[i]);
  }
  return all;
}

// --- Range masks (fake quantization's straight-through mask) -----------------------------------

// 1 in a code lane where the quotient q (as the quantize pipeline computed it) falls inside the
// output type's range before any clamp, else 0; NaN is outside (every comparison with it fails).
// Integer types: lowest <= round_half_even(q) + zp <= max, compared as round(q) against
// [lowest - zp, max - zp] (integers, exact in float32).
struct IntegerRangeMask {
  static constexpr bool kIsInteger = true;
  static constexpr bool kWide = false;
  static constexpr bool kSignedCodes = false;
  static constexpr int kCodeBits = 8;
  struct Bounds {};
  static HWY_INLINE Bounds MakeBounds(VF) { return {}; }
  static HWY_INLINE VI Codes(const Context& c, VF q, VF zp, const Bounds&) {
    const DF df;
    const DI di;
    const VF r = hn::Round(q);  // ties to even, as the quantize rounding
    const auto inside = hn::And(hn::Ge(r, hn::Sub(hn::Set(df, c.range_lowest), zp)),
                                hn::Le(r, hn::Sub(hn::Set(df, c.range_max), zp)));
    return hn::IfThenElseZero(hn::RebindMask(di, inside), hn::Set(di, 1));
  }
};

// Float types: q (plus the zero point where the plan adds it) rounds to a finite code, i.e. its
// magnitude is below the midpoint between the largest finite value and the next binade step.
struct FloatRangeMask {
  static constexpr bool kIsInteger = false;
  static constexpr bool kWide = false;
  static constexpr bool kSignedCodes = false;
  static constexpr int kCodeBits = 8;
  struct Bounds {};
  static HWY_INLINE Bounds MakeBounds(VF) { return {}; }
  static HWY_INLINE VI Codes(const Context& c, VF q, VF zp, const Bounds&) {
    const DF df;
    const DI di;
    if (c.apply_zero_point) q = hn::Add(q, zp);
    const VF magnitude = hn::Abs(q);
    const VF limit = hn::Set(df, c.range_limit);
    auto inside = hn::Lt(magnitude, limit);
    if (c.range_limit_inside) inside = hn::Or(inside, hn::Eq(magnitude, limit));
    return hn::IfThenElseZero(hn::RebindMask(di, inside), hn::Set(di, 1));
  }
};

// --- float64 lanes: 32-bit integers and QuantizeLinear's float64 precision ----------------------

using DD = hn::Repartition<double, DF>;  // half as many lanes as DF
using VD = hn::Vec<DD>;
using DFD = hn::Rebind<float, DD>;    // float32 lanes, as many as DD's
using DID = hn::Rebind<int32_t, DD>;  // int32 lanes, as many as DD's

// The words of a 32-bit integer type as float64 values, exactly.
template <bool kSigned>
HWY_INLINE VD WordsToDouble(hn::Vec<DID> words) {
  const DD dd;
  if constexpr (kSigned) {
    return hn::PromoteTo(dd, words);
  } else {  // uint32: flipping the top bit gives the value minus 2^31 as an int32
    const DID di;
    return hn::Add(hn::PromoteTo(dd, hn::Xor(words, hn::Set(di, static_cast<int32_t>(0x8000'0000u)))),
                   hn::Set(dd, 2147483648.0));
  }
}

// Integer-valued float64 values within the type's range as its words.
template <bool kSigned>
HWY_INLINE hn::Vec<DID> DoubleToWords(VD v) {
  const DID di;
  if constexpr (kSigned) {
    return hn::DemoteTo(di, v);
  } else {
    const DD dd;
    return hn::Xor(hn::DemoteTo(di, hn::Sub(v, hn::Set(dd, 2147483648.0))), hn::Set(di, static_cast<int32_t>(0x8000'0000u)));
  }
}

// Per-element 32-bit words of an operand at elements [i, i + lanes): its values, or the constant.
HWY_INLINE hn::Vec<DID> OperandWords(const OperandValues<int32_t>& o, size_t i) {
  const DID di;
  return o.values ? hn::LoadU(di, o.values + i) : hn::Set(di, o.constant);
}

// Int32 and uint32 outputs (Quark): clamp(round_half_even(q) + zp) with NaN -> lowest. The float32
// pipeline leaves q itself (its bits) in the code buffer; FinishWide then rounds q exactly in
// float64, adds the zero point (exact below 2^53; a sum beyond that is far out of range and
// saturates the same), clamps and writes the words.
template <bool kSigned>
struct WideIntegerOutput {
  static constexpr bool kIsInteger = true;
  static constexpr bool kWide = true;
  static constexpr bool kSignedCodes = kSigned;
  static constexpr int kCodeBits = 32;
  struct Bounds {};
  static HWY_INLINE Bounds MakeBounds(VF) { return {}; }
  static HWY_INLINE VI Codes(const Context&, VF q, VF, const Bounds&) { return hn::BitCast(DI(), q); }

  // In place over `words` (a padded block buffer holding k quotients).
  static void FinishWide(const OperandValues<int32_t>& zp, bool add_zero_point, size_t k, int32_t* words) {
    const DD dd;
    const DFD df32;
    const DID di;
    const VD lowest = hn::Set(dd, kSigned ? -2147483648.0 : 0.0);
    const VD highest = hn::Set(dd, kSigned ? 2147483647.0 : 4294967295.0);
    HWY_ALIGN int32_t zp_tail[64];
    for (size_t i = 0; i < k; i += hn::Lanes(dd)) {
      VD v = hn::Round(hn::PromoteTo(dd, hn::LoadU(df32, reinterpret_cast<const float*>(words + i))));
      if (add_zero_point) {
        const bool tail = zp.values && i + hn::Lanes(dd) > k;
        v = hn::Add(v, WordsToDouble<kSigned>(tail ? hn::LoadU(di, StageTail(zp.values, i, k, zp_tail))
                                                   : OperandWords(zp, i)));
      }
      const VD clamped = hn::IfThenElse(hn::IsNaN(v), lowest, hn::Min(hn::Max(v, lowest), highest));
      hn::StoreU(DoubleToWords<kSigned>(clamped), di, words + i);
    }
  }
};

// QuantizeLinear with an int32 scale divides in float64 (docs/semantics.md). This stage leaves in
// `out` float32 values that the float32 stages then finish exactly as the reference would have
// finished the float64 quotient q = x / s:
//   integer outputs: round_half_even(clamp(q, -2^20, 2^20)). The later clamp to
//     [lowest - zp, max - zp] (integers within +-2^17) and rounding commute with these, and the
//     value is an integer that float32 holds exactly;
//   float outputs: f32(q + zp) with the zero point where it is added (float4), in float64 as the
//     reference; the float stage then adds -0, which changes no value.
template <ElementType kX, bool kIntegerOutput>
void StageFloat64Quotients(const Context& c, uint64_t at, size_t k, const Operands& o, float* x_values, float* out) {
  const DD dd;
  const DFD df32;
  const DID di;
  const size_t n = hn::Lanes(dd);
  const int32_t* x_words = nullptr;
  if constexpr (kX == ElementType::kInt32) {
    x_words = static_cast<const int32_t*>(c.x_data) + (at - c.x_first);  // int32 x is exact in float64
  } else {
    LoadAsFloat(*c.x, c.x_data, at - c.x_first, k, x_values);  // float x is exact in float32
  }
  const bool add_zero_point = !kIntegerOutput && c.apply_zero_point;
  HWY_ALIGN int32_t x_tail[64];
  HWY_ALIGN int32_t scale_tail[64];
  HWY_ALIGN float zp_tail[64];
  for (size_t i = 0; i < k; i += n) {
    const bool tail = i + n > k;
    VD xv;
    if constexpr (kX == ElementType::kInt32) {
      xv = hn::PromoteTo(dd, hn::LoadU(di, tail ? StageTail(x_words, i, k, x_tail) : x_words + i));
    } else {
      xv = hn::PromoteTo(dd, hn::LoadU(df32, x_values + i));
    }
    const hn::Vec<DID> scale_words =
        tail && o.wide_scale.values ? hn::LoadU(di, StageTail(o.wide_scale.values, i, k, scale_tail)) : OperandWords(o.wide_scale, i);
    VD q = hn::Div(xv, WordsToDouble<true>(scale_words));
    if constexpr (kIntegerOutput) {
      const VD bound = hn::Set(dd, 1048576.0);  // 2^20
      q = hn::IfThenElse(hn::IsNaN(q), q, hn::Round(hn::Min(hn::Max(q, hn::Neg(bound)), bound)));
    } else if (add_zero_point) {
      const float* zpp = o.zero_point.values;
      const hn::Vec<DFD> zp = zpp ? hn::LoadU(df32, tail ? StageTail(zpp, i, k, zp_tail) : zpp + i)
                                  : hn::Set(df32, o.zero_point.constant);
      q = hn::Add(q, hn::PromoteTo(dd, zp));
    }
    hn::StoreU(hn::DemoteTo(df32, q), df32, out + i);
  }
}

// Stores the low byte of each lane (the code; sub-byte types are masked again when packed).
HWY_INLINE void StoreLowBytes(VI code, uint8_t* destination) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  // One truncating narrow (vpmovdb) instead of Highway's mask, byte shuffle and lane permute.
  _mm_storeu_si128(reinterpret_cast<__m128i*>(destination), _mm512_cvtepi32_epi8(code.raw));
#else
  // Masked first because U8FromU32 saturates on some targets.
  const VU low_byte = hn::And(hn::BitCast(DU(), code), hn::Set(DU(), 0xFFu));
  hn::StoreU(hn::U8FromU32(low_byte), hn::Rebind<uint8_t, DI>(), destination);
#endif
}

// Four vectors of codes, each lane's low byte kept, to 4 * lanes consecutive bytes. On AVX2 two
// saturating packs and one lane permute replace four byte shuffles, extracts and 8-byte stores:
// the lanes are masked to 0..255 first, so neither pack saturates.
#if HWY_TARGET == HWY_AVX2
// The dword permute that puts back in order the bytes of four vectors narrowed by two packs
// (packs_epi32 or packus_epi32, then packus_epi16), which work within 128-bit halves. Vectors of
// elements in order come out as dwords 0,4,1,5,2,6,3,7 of the wanted order; vectors whose
// 128-bit halves each hold consecutive elements (LoadX4's interleaved order, float16 pairs built
// half by half) as qwords 0,2,1,3.
HWY_INLINE __m256i PackedBytesOrder(bool halves_hold_consecutive_elements) {
  return halves_hold_consecutive_elements ? _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7)
                                          : _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
}

// The low bytes of four vectors of codes in order, in one register (AVX2). kInterleaved: the
// vectors hold their elements in LoadX4's interleaved order (c0 elements 0-3 and 8-11, c1 4-7 and
// 12-15, c2 and c3 the same 16 on), which the packs put back in order within each half.
template <bool kInterleaved = false>
HWY_INLINE __m256i LowBytes4(VI c0, VI c1, VI c2, VI c3, VI byte_mask) {
  c0 = hn::And(c0, byte_mask);
  c1 = hn::And(c1, byte_mask);
  c2 = hn::And(c2, byte_mask);
  c3 = hn::And(c3, byte_mask);
  const __m256i words01 = _mm256_packs_epi32(c0.raw, c1.raw);
  const __m256i words23 = _mm256_packs_epi32(c2.raw, c3.raw);
  const __m256i bytes = _mm256_packus_epi16(words01, words23);
  return _mm256_permutevar8x32_epi32(bytes, PackedBytesOrder(kInterleaved));
}
#endif

// kMasked false: the caller's codes are whole bytes (8-bit outputs), whose byte_mask is 0xFF, so
// that outside AVX2's packs the narrow alone keeps their low bytes (the four Ands were a sixteenth
// of the vector operations of float16 -> int8 per-tensor).
template <bool kInterleaved = false, bool kMasked = true>
HWY_INLINE void StoreLowBytes4(VI c0, VI c1, VI c2, VI c3, VI byte_mask, uint8_t* destination) {
#if HWY_TARGET == HWY_AVX2
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(destination), LowBytes4<kInterleaved>(c0, c1, c2, c3, byte_mask));
#else
  static_assert(!kInterleaved, "LoadX4 interleaves on AVX2 only");
  if constexpr (kMasked) {
    c0 = hn::And(c0, byte_mask);
    c1 = hn::And(c1, byte_mask);
    c2 = hn::And(c2, byte_mask);
    c3 = hn::And(c3, byte_mask);
  }
  const size_t N = hn::Lanes(DI());
  StoreLowBytes(c0, destination);
  StoreLowBytes(c1, destination + N);
  StoreLowBytes(c2, destination + 2 * N);
  StoreLowBytes(c3, destination + 3 * N);
#endif
}

// Each lane's value, which the caller keeps within the 16-bit type T16 (0..0xFFFF for uint16_t,
// int16 for int16_t) so that the saturating narrow is exact, stored as consecutive 16-bit values.
template <typename T16>
HWY_INLINE void StoreWords16(VI words, T16* destination) {
  static_assert(sizeof(T16) == 2);
#if HWY_TARGET == HWY_AVX2
  // A 128-bit pack of the two halves. Highway's DemoteTo packs the 256-bit register with itself
  // and permutes its 64-bit quarters (vpermq), which this CPU (AMD EPYC, family 23) splits into
  // three micro-ops where vextracti128 is one: a loop of uint8 x dequantized to bfloat16, in
  // cache, went from 100.6 to 84.0 us per 2^18 elements this way.
  const __m128i low = _mm256_castsi256_si128(words.raw);
  const __m128i high = _mm256_extracti128_si256(words.raw, 1);
  const __m128i packed = std::is_signed_v<T16> ? _mm_packs_epi32(low, high) : _mm_packus_epi32(low, high);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(destination), packed);
#else
  const hn::Rebind<T16, DI> d16;
  hn::StoreU(hn::DemoteTo(d16, words), d16, destination);
#endif
}

// Output codes: 8-bit lanes for 8 bits and less, 16-bit lanes to 16 bits, else 32-bit words.
template <int kCodeBits>
using CodeType = std::conditional_t<(kCodeBits <= 8), uint8_t, std::conditional_t<(kCodeBits <= 16), uint16_t, int32_t>>;

// One vector of codes (in int32 lanes) to the output's code lanes.
template <class Output, typename Code>
HWY_INLINE void StoreCodes(VI code, Code* destination) {
  if constexpr (sizeof(Code) == 1) {
    StoreLowBytes(code, destination);
  } else if constexpr (sizeof(Code) == 4) {
    hn::StoreU(code, DI(), destination);
  } else if constexpr (Output::kIsInteger && Output::kSignedCodes) {
    StoreWords16(code, reinterpret_cast<int16_t*>(destination));  // int16 codes in two's complement
  } else {
    StoreWords16(code, destination);  // codes 0..0xFFFF
  }
}

// One block's vectors in order: compute(xp, s, per_vector_scale, zp, bounds, destination, i) on
// whole vectors of x (from element i of the block) with their scale (a block's value, one per element, or `scale_constant` itself,
// which callers may have prepared: per_vector_scale is false then) and their zero point with the
// bounds derived from it. A partial last vector goes through zero-padded copies, so that nothing
// is read past a tensor, and its k - i results are copied to out + i.
template <class Output, typename XT, typename T, class Compute>
HWY_INLINE void WalkVectors(const Context& c, const exec::Run& run, uint64_t offset, size_t k, const Operands& o,
                            const XT* x, VF scale_constant, VF zp_constant,
                            const typename Output::Bounds& bounds_constant, T* out, const Compute& compute) {
  const DF df;
  const size_t N = hn::Lanes(df);
  HWY_ALIGN XT x_tail[64];
  HWY_ALIGN float scale_tail[64];
  HWY_ALIGN float zp_tail[64];
  HWY_ALIGN T out_tail[64];
  size_t i = 0;
  if (o.per_block) {
    const bool has_zp = c.zero_point != nullptr;
    // Block b of this stretch and the position in it, stepped per vector (no division).
    uint64_t b = 0;
    uint64_t position = (run.block_phase + offset) % run.block;
    for (; i + N <= k; i += N) {
      const VF s = hn::Set(df, o.scale.block[b]);
      const VF zp = has_zp ? hn::Set(df, o.zero_point.block[b]) : zp_constant;
      compute(x + i, s, true, zp, has_zp ? Output::MakeBounds(zp) : bounds_constant, out + i, i);
      position += N;
      if (position == run.block) {
        position = 0;
        ++b;
      }
    }
    // Whole vectors per block and k a multiple of the lanes unless the run ends here.
    if (i < k) {
      const VF zp = has_zp ? hn::Set(df, o.zero_point.block[b]) : zp_constant;
      compute(StageTail(x, i, k, x_tail), hn::Set(df, o.scale.block[b]), true, zp,
              has_zp ? Output::MakeBounds(zp) : bounds_constant, out_tail, i);
      std::memcpy(out + i, out_tail, (k - i) * sizeof(T));
    }
    return;
  }
  auto body = [&](const XT* xp, const float* sp, const float* zpp, T* destination) HWY_ATTR {
    const VF s = sp ? hn::LoadU(df, sp) : scale_constant;
    if (zpp) {
      const VF zp = hn::LoadU(df, zpp);
      compute(xp, s, sp != nullptr, zp, Output::MakeBounds(zp), destination, i);
    } else {
      compute(xp, s, sp != nullptr, zp_constant, bounds_constant, destination, i);
    }
  };
  const float* sp = o.scale.values;
  const float* zpp = o.zero_point.values;
  for (; i + N <= k; i += N) body(x + i, sp ? sp + i : nullptr, zpp ? zpp + i : nullptr, out + i);
  if (i < k) {
    body(StageTail(x, i, k, x_tail), sp ? StageTail(sp, i, k, scale_tail) : nullptr,
         zpp ? StageTail(zpp, i, k, zp_tail) : nullptr, out_tail);
    std::memcpy(out + i, out_tail, (k - i) * sizeof(T));
  }
}

// Visits the whole vectors [0, whole) of a block of a run in stretches of equal operands:
// visit(b, i, count) for elements [i, i + count) of the stretch's block b (0 and the whole range
// when the operands are constant; with per_block, one stretch per whole-vector block or part of
// one). Returns the block of element `whole`, where a partial last vector lies. One call site, so
// that GCC inlines the visitor.
template <class Visit>
HWY_INLINE uint64_t ForEachUniformStretch(const exec::Run& run, uint64_t offset, size_t whole, bool per_block,
                                          const Visit& visit) {
  const uint64_t stretch = per_block ? run.block : std::numeric_limits<uint64_t>::max();
  uint64_t position = per_block ? (run.block_phase + offset) % run.block : 0;
  uint64_t b = 0;
  for (size_t i = 0; i < whole;) {
    const size_t count = static_cast<size_t>(std::min<uint64_t>(whole - i, stretch - position));
    visit(b, i, count);
    i += count;
    position += count;
    if (position == stretch) {
      position = 0;
      ++b;
    }
  }
  return b;
}

// --- float8 / float4 codes of a 16-bit quotient by table -------------------------------------
//
// From float16 or bfloat16 x in its own precision the quotient is rounded to x's type before it
// is encoded, so it is one of 65536 bit patterns, and its float8 / float4 code depends on that
// pattern and on saturate alone, whatever the scale. Where the CPU gathers (AVX-512, as in
// kernels/look_up.cpp), the pattern indexes a table of those codes, made once per process by the
// same Encode, instead of Encode's 14 or more operations per vector: the quantization then costs
// its division, the rounding to x's type and one gather. Not for a float4 plan that adds a zero
// point (the sum is rounded again), nor for integer outputs, whose rounding and clamp cost less
// than a gather. Whole pairs and fours of vectors take the 16-bit-lane encode below first
// (QDQ_HALFWORD_CODES), which measured faster than the gather on AVX-512 too (session 41, 16M
// float16 -> float8e4m3fn per-axis-last 3.53 -> 2.54 ms); the table keeps what that leaves:
// per-element zero points, a stretch's partial groups, blocks of one vector.
#undef QDQ_CODE_GATHER  // per target, as QDQ_F16C
#if defined(QDQ_F16C) && HWY_TARGET != HWY_AVX2
#define QDQ_CODE_GATHER 1
#endif

template <class Output>
constexpr bool kCodesByTable = false;
template <const Format& F, bool kAddsZeroPoint>
constexpr bool kCodesByTable<FloatOutput<F, kAddsZeroPoint>> = F.sign_shift() < 8;

#ifdef QDQ_CODE_GATHER
// The code of every 16-bit pattern of x's type kX (its float32 value as XInput loads it) in
// format F, then the zero bytes the gathers' 32-bit words read past the last entry (as the
// by-table lookup's: kLookUpTablePadding).
template <ElementType kX, const Format& F>
std::vector<uint8_t> BuildCodeTable(bool saturate) {
  const size_t N = hn::Lanes(DF());
  std::vector<uint16_t> patterns(65536);
  for (size_t i = 0; i < patterns.size(); ++i) patterns[i] = static_cast<uint16_t>(i);
  std::vector<uint8_t> table(patterns.size() + kLookUpTablePadding, 0);
  for (size_t i = 0; i < patterns.size(); i += N) {
    StoreLowBytes(Encode<F>(XInput<kX>::Load(patterns.data() + i), saturate), table.data() + i);
  }
  return table;
}

// BuildCodeTable's tables for saturate false and true, made on first use.
template <ElementType kX, const Format& F>
const uint8_t* CodeTable(bool saturate) {
  static const std::vector<uint8_t> tables[2] = {BuildCodeTable<kX, F>(false), BuildCodeTable<kX, F>(true)};
  return tables[saturate ? 1 : 0].data();
}

// The codes of a float32 quotient q as RoundOwnPrecisionQuotient<kX, false> rounds it and Encode
// encodes that: the rounded quotient's 16-bit pattern (float16: F16C's rounding; bfloat16:
// RoundBfloat16QuotientAnyNan's addition, whose quotient NaNs have 16 zero low bits, shifted down
// by Bfloat16BitsOfNonNaN) as a byte offset into the table. The gathered word's low byte is the
// code.
template <ElementType kX>
HWY_INLINE VI CodesOfQuotientByTable(const uint8_t* table, VF q) {
  VI pattern;
  if constexpr (kX == ElementType::kFloat16) {
    pattern = WidenHalf(ToHalf(q));
  } else {
    pattern = hn::BitCast(DI(), Bfloat16BitsOfNonNaN(q));
  }
  return hn::GatherOffset(DI(), reinterpret_cast<const int32_t*>(table), pattern);
}
#endif

// --- float8 / float4 codes of 16-bit quotients, in 16-bit lanes ---------------------------------
// The quotient that RoundOwnPrecisionQuotient rounds to float16 or bfloat16 is encoded from that
// 16-bit pattern itself, in 16-bit lanes, instead of as a float32 lane by Encode: twice the lanes
// per instruction, and float16 skips F16C's widening back to float32. Measured on this project's
// AMD EPYC (Zen 1, AVX2), one core, 64K float16 -> float8e4m3fn with a scale per element in
// cache: 132.8 us by Encode, 61.7 us in 16-bit lanes (division and rounding alone: 29.0). On
// AVX-512 it also beats the code table's gather (above): 16M, 2 threads, 1.1-1.6x over the float8
// and float4 cells from float16 and bfloat16 x (docs/performance-history.md, session 41).
// The rules are Encode's, moved to a 16-bit source format S:
//   normal codes: the magnitude pattern rounded to F's mantissa on the bits, half to even (add
//     2^(shift-1) - 1 plus the lowest kept bit), and the exponent field moved from S's bias to
//     F's by a subtraction in S's exponent position: saturating, so every pattern below F's
//     normal range comes out small, and zero comes out 0;
//   below F's smallest normal (or S's, whichever is larger: float16 subnormals are not on the
//     exponent grid the subtraction assumes): the code is the number of midpoints between
//     consecutive codes, (j + 1/2) * F's smallest subnormal, that the magnitude exceeds (reaches,
//     for odd j: a tie rounds to the even code). Those are whole codes, exactly as F lays out its
//     subnormals and, for a region of two binades, its first normal binade (same spacing). The
//     counting runs only for vectors with such a nonzero lane (rare for float8 data, every vector
//     for float4's region below 1);
//   saturation and overflow: codes are monotonic in the magnitude, so clamping the rounded code to
//     the largest finite one equals Encode's clamp of the value first; without saturation a code
//     past it is infinity (e5m2) or the NaN code (all-ones or 1000...0 formats);
//   NaN: S's NaN patterns (magnitude above infinity's) get F's NaN code, then the sign goes on as
//     Encode puts it (not on a zero magnitude where F has no -0; float4: +max, no sign).
// The quotient's NaNs, rounding and overflow are S's own (F16C's conversion, or bfloat16's
// addition on the bits as RoundBfloat16QuotientAnyNan), as on the float32 path, so both give the
// same codes bit for bit.
#undef QDQ_HALFWORD_CODES  // per target, as QDQ_F16C
#if HWY_TARGET != HWY_SCALAR
#define QDQ_HALFWORD_CODES 1

using D16 = hn::Repartition<uint16_t, DF>;
using DI16 = hn::Repartition<int16_t, DF>;
using V16 = hn::Vec<D16>;
using VI16 = hn::Vec<DI16>;

// The outputs whose codes of float16 / bfloat16 quotients are made in 16-bit lanes: float8 and
// float4 (one byte a code), from bfloat16 on every vector target and from float16 where F16C
// rounds it (QDQ_F16C).
template <class Output, ElementType kX>
constexpr bool kCodesOfHalfwords = false;
template <const Format& F, bool kAddsZeroPoint, ElementType kX>
constexpr bool kCodesOfHalfwords<FloatOutput<F, kAddsZeroPoint>, kX> =
    F.sign_shift() < 8 && (kX == ElementType::kBfloat16
#ifdef QDQ_F16C
                           || kX == ElementType::kFloat16
#endif
                          );

// The pattern in 16-bit float format S (sign clear) of n * 2^e for a positive integer n that S
// holds exactly there (n < 2^(S's mantissa bits + 1); the callers' values are).
constexpr uint16_t HalfwordPattern(const Format& S, uint32_t n, int e) {
  int p = 0;  // n in [2^p, 2^(p+1))
  while ((n >> (p + 1)) != 0) ++p;
  const int exponent = e + p;
  if (exponent >= 1 - S.bias) {
    return static_cast<uint16_t>((static_cast<uint32_t>(exponent + S.bias) << S.mantissa_bits) |
                                 ((n - (1u << p)) << (S.mantissa_bits - p)));
  }
  return static_cast<uint16_t>(n << (e + S.bias - 1 + S.mantissa_bits));  // a subnormal of S
}

// Codes of format F (in 16-bit lanes, zero-extended) of the values whose S patterns are h.
template <const Format& S, const Format& F>
HWY_INLINE VI16 EncodeHalfwords(V16 h, bool saturate) {
  const D16 du;
  const DI16 di;
  constexpr int m = F.mantissa_bits;
  constexpr int shift = S.mantissa_bits - m;
  constexpr int sign_shift = F.sign_shift();
  constexpr int kRebias = (S.bias - F.bias) * (1 << S.mantissa_bits);  // exponent field S -> F
  constexpr int kSourceInfinity = static_cast<int>(low_mask(S.exponent_bits) << S.mantissa_bits);
  // Below kRegionTop codes are counted: F's smallest normal, or S's where that is larger.
  constexpr int kTopExponent = std::max(1 - F.bias, 1 - S.bias);
  constexpr int kUnitExponent = 1 - F.bias - m;  // F's smallest subnormal
  constexpr int kMidpoints = 1 << (kTopExponent - kUnitExponent);
  constexpr int kRegionTop = HalfwordPattern(S, 1, kTopExponent);
  static_assert(shift >= 1 && kMidpoints <= 16);

  const V16 magnitude = hn::And(h, hn::Set(du, 0x7FFF));
  const VI16 magnitude_i = hn::BitCast(di, magnitude);  // 0..0x7FFF: signed comparisons order it
  const auto is_nan = hn::Gt(magnitude_i, hn::Set(di, kSourceInfinity));
  const V16 lsb = hn::And(hn::ShiftRight<shift>(magnitude), hn::Set(du, 1));
  // At most 0x7FFF + 2^(shift-1) (+ 2^S.mantissa_bits when F's bias is the larger): no carry out.
  V16 rounded = hn::Add(magnitude, hn::Add(lsb, hn::Set(du, static_cast<uint16_t>((1 << (shift - 1)) - 1))));
  if constexpr (kRebias > 0) {
    rounded = hn::SaturatedSub(rounded, hn::Set(du, static_cast<uint16_t>(kRebias)));
  } else if constexpr (kRebias < 0) {
    rounded = hn::Add(rounded, hn::Set(du, static_cast<uint16_t>(-kRebias)));
  }
  VI16 code = hn::BitCast(di, hn::ShiftRight<shift>(rounded));  // at most 0x207

  const bool clamps = saturate || F.nan_style == NanStyle::kNone;
  if (clamps) {
    code = hn::Min(code, hn::Set(di, static_cast<int16_t>(F.max_code)));
  } else if constexpr (F.has_infinity) {
    code = hn::IfThenElse(hn::Gt(code, hn::Set(di, static_cast<int16_t>(F.max_code))),
                          hn::Set(di, static_cast<int16_t>(F.overflow_code())), code);
  } else if constexpr (F.nan_style != NanStyle::kNone) {  // past the largest finite code: the NaN code, the next one up
    static_assert(F.overflow_code() == F.max_code + 1);
    code = hn::Min(code, hn::Set(di, static_cast<int16_t>(F.overflow_code())));
  }

  // S's patterns and F's codes line up below the region top only when the exponent fields
  // coincide (float16 -> e5m2, whose subnormals are float16's truncated): nothing to count there.
  if constexpr (kRebias != 0) {
    const auto below = hn::Lt(magnitude_i, hn::Set(di, kRegionTop));
    const auto counted = hn::AndNot(hn::Eq(magnitude_i, hn::Zero(di)), below);
    // float4e2m1's region (below 1) is no rarity: a branch on it went either way at random (16M
    // float32 -> float4e2m1: 12.7 against Encode's 9.2 ms), so its two midpoints count always.
    if (kMidpoints <= 2 || HWY_UNLIKELY(!hn::AllFalse(di, counted))) {
      // Midpoint j is (2j + 1) * 2^(unit - 1); odd j counts from the midpoint itself (a tie rounds
      // up, to the even code). Expanded over j with constant bounds (a loop kept them in memory).
      static constexpr auto kBounds = [] {
        std::array<int16_t, kMidpoints> bounds{};
        for (int j = 0; j < kMidpoints; ++j) {
          bounds[j] = static_cast<int16_t>(HalfwordPattern(S, 2 * j + 1, kUnitExponent - 1) - (j & 1));
        }
        return bounds;
      }();
      VI16 count = hn::Zero(di);
      [&]<size_t... J>(std::index_sequence<J...>) QDQ_HOT_LAMBDA {
        ((count = hn::Sub(count, hn::VecFromMask(di, hn::Gt(magnitude_i, hn::Set(di, kBounds[J]))))), ...);
      }(std::make_index_sequence<kMidpoints>());
      code = hn::IfThenElse(below, count, code);
    } else if constexpr (kRebias < 0) {
      code = hn::IfThenZeroElse(below, code);  // the addition made zero nonzero
    }
  }

  if constexpr (F.nan_style != NanStyle::kNone) code = hn::IfThenElse(is_nan, hn::Set(di, static_cast<int16_t>(F.nan_code())), code);
  const VI16 sign = hn::And(hn::BitCast(di, hn::ShiftRight<15 - sign_shift>(h)), hn::Set(di, static_cast<int16_t>(1 << sign_shift)));
  if constexpr (F.has_negative_zero) {
    code = hn::Or(code, sign);
  } else {
    code = hn::Or(code, hn::IfThenZeroElse(hn::Eq(code, hn::Zero(di)), sign));
  }
  if constexpr (F.nan_style == NanStyle::kNone) {  // float4: NaN -> +max, without its sign
    code = hn::IfThenElse(is_nan, hn::Set(di, static_cast<int16_t>(F.max_code)), code);
  }
  return code;
}

#undef QDQ_HALFWORD_PAIRS  // per target, as QDQ_F16C
#if HWY_TARGET != HWY_AVX2
#define QDQ_HALFWORD_PAIRS 1
// Two vectors of float32 quotients a, b rounded to x's 16-bit type kX, in order in one register
// of 16-bit lanes: float16 by F16C's rounding (AVX-512), bfloat16 by Bfloat16BitsInHighHalf's
// addition, whose quotient NaNs (16 zero low bits) stay NaNs with their sign, which is all the
// codes read of them.
template <ElementType kX>
HWY_INLINE V16 HalfwordsOfQuotients(VF a, VF b) {
  if constexpr (kX == ElementType::kFloat16) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    return V16{_mm512_inserti64x4(_mm512_castsi256_si512(ToHalf(a)), ToHalf(b), 1)};
#else
    static_assert(kX == ElementType::kBfloat16, "float16 quotients are encoded in 16-bit lanes with F16C only");
#endif
  } else {
    const D16 du;
    return hn::ConcatOdd(du, hn::BitCast(du, Bfloat16BitsInHighHalf(b)), hn::BitCast(du, Bfloat16BitsInHighHalf(a)));
  }
}

// The codes in format F of two vectors of float32 quotients q0, q1 (in kX's precision, not yet
// rounded to it), stored as 2 * lanes consecutive bytes: one register of 16-bit lanes encoded by
// EncodeHalfwords. Blocks of two vectors (32 elements on AVX-512) take it whole.
template <const Format& F, ElementType kX>
HWY_INLINE void StoreCodesOfQuotients2(VF q0, VF q1, bool saturate, uint8_t* destination) {
  constexpr const Format& S = kX == ElementType::kFloat16 ? kFloat16Format : kBfloat16Format;
  const hn::Rebind<uint8_t, DI16> d8;
  hn::StoreU(hn::DemoteTo(d8, EncodeHalfwords<S, F>(HalfwordsOfQuotients<kX>(q0, q1), saturate)), d8, destination);
}
#endif

// The codes in format F of four vectors of float32 quotients q0..q3 (in x's 16-bit precision kX,
// not yet rounded to it), stored as 4 * lanes consecutive bytes: each rounded to kX and encoded
// sixteen bits a lane (EncodeHalfwords), two vectors to one register of 16-bit lanes.
// kInterleaved: the quotients are in LoadX4's interleaved order.
template <const Format& F, ElementType kX, bool kInterleaved = false>
HWY_INLINE void StoreCodesOfQuotients4(VF q0, VF q1, VF q2, VF q3, bool saturate, uint8_t* destination) {
#if HWY_TARGET == HWY_AVX2
  constexpr const Format& S = kX == ElementType::kFloat16 ? kFloat16Format : kBfloat16Format;
  // The register of a pair keeps whatever lane order is cheapest and one dword permute puts the
  // bytes in order: float16 [a 0-7 | b 0-7] (one insert), bfloat16 [a 0-3, b 0-3 | a 4-7, b 4-7]
  // (one pack of the high halves, which Highway's ConcatOdd follows with a 64-bit permute), which
  // is elements 0-15 in order when the quotients are interleaved. The bfloat16 rounding is
  // Bfloat16BitsOfNonNaN's: a quotient's NaN has 16 zero low bits and stays a NaN with its sign,
  // which is all the codes read of it.
  static_assert(!kInterleaved || kX == ElementType::kBfloat16);
  const auto pair = [](VF a, VF b) QDQ_HOT_LAMBDA {
    if constexpr (kX == ElementType::kFloat16) {
      return V16{_mm256_set_m128i(ToHalf(b), ToHalf(a))};
    } else {
      return V16{_mm256_packus_epi32(Bfloat16BitsOfNonNaN(a).raw, Bfloat16BitsOfNonNaN(b).raw)};
    }
  };
  const VI16 codes01 = EncodeHalfwords<S, F>(pair(q0, q1), saturate);
  const VI16 codes23 = EncodeHalfwords<S, F>(pair(q2, q3), saturate);
  // Bytes within 128-bit halves: float16 qwords q0 q2 | q1 q3; bfloat16 dwords q0a q1a q2a q3a |
  // q0b q1b q2b q3b (a: lanes 0-3, b: 4-7); interleaved bfloat16 as float16.
  const __m256i bytes = _mm256_packus_epi16(codes01.raw, codes23.raw);
  const __m256i order = PackedBytesOrder(kX == ElementType::kFloat16 || kInterleaved);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(destination), _mm256_permutevar8x32_epi32(bytes, order));
#else
  static_assert(!kInterleaved, "LoadX4 interleaves on AVX2 only");
  const size_t N = hn::Lanes(DF());
  StoreCodesOfQuotients2<F, kX>(q0, q1, saturate, destination);
  StoreCodesOfQuotients2<F, kX>(q2, q3, saturate, destination + 2 * N);
#endif
}
#endif  // QDQ_HALFWORD_CODES

// The reduction dynamic quantization runs beside a quantize plan (Context::side_stream): only float
// x has one (int32 x gets a placeholder type that is never stepped).
template <ElementType kX>
constexpr bool kHasSideStream =
    kX == ElementType::kFloat32 || kX == ElementType::kFloat16 || kX == ElementType::kBfloat16;
template <ElementType kX>
using SideStream = std::conditional_t<kHasSideStream<kX>, GroupStream<kX>, void>;
template <ElementType kX, bool = kHasSideStream<kX>>
struct SideCursor {
  using type = int;  // never used
};
template <ElementType kX>
struct SideCursor<kX, true> {
  using type = typename GroupStream<kX>::Cursor;
};

// The Context's prefetch window paced by a loop over x: Step(bytes) requests the window's next
// `bytes` as the loop loads as many bytes of x, so the requests stay a fixed distance ahead rather
// than a burst that would fill the miss buffers. The cursor lives in registers for the loop and
// goes back to the Context when the pacer goes out of scope.
class PrefetchPacer {
 public:
  explicit PrefetchPacer(const Context& c)
      : cursor_(c.prefetch), next_(c.prefetch != nullptr ? c.prefetch->next : nullptr),
        end_(c.prefetch != nullptr ? c.prefetch->end : nullptr) {}
  PrefetchPacer(const PrefetchPacer&) = delete;
  PrefetchPacer& operator=(const PrefetchPacer&) = delete;
  ~PrefetchPacer() {
    if (cursor_ != nullptr) cursor_->next = next_;
  }

  HWY_INLINE void Step(size_t bytes) {
    if (next_ < end_) {
      const size_t n = std::min<size_t>(bytes, static_cast<size_t>(end_ - next_));  // never past the window
      for (size_t b = 0; b < n; b += 64) PrefetchForLater(next_ + b);
      next_ += n;
    }
  }

 private:
  Context::PrefetchCursor* cursor_;
  const char* next_;
  const char* end_;
};

// The next `bytes` of the Context's prefetch window toward the L2 cache at once: for one block of
// a loop that does not pace them per vector.
HWY_INLINE void PrefetchWindow(const Context& c, size_t bytes) { PrefetchPacer(c).Step(bytes); }

// How per-element zero points reach QuantizeUniform: float32 values, or codes read and widened in
// the loop (Operands::zero_point_codes): 8-bit, 16-bit, 4- and 2-bit one per byte, 4-bit packed
// two per byte and 2-bit four per byte, from a whole byte.
enum class ZeroPointCodes { kFloats, kBytes, kHalfwords, kNibbleBytes, kPackedNibbles, kCrumbBytes, kPackedCrumbs };

// Zero points of elements [j, j + lanes) of a row of codes starting at `codes`, as int32 lanes.
template <bool kSigned, ZeroPointCodes kKind>
HWY_INLINE VI ZeroPointLanes(const uint8_t* codes, size_t j) {
  const DI di;
  const DU du;
  if constexpr (kKind == ZeroPointCodes::kBytes) {
    if constexpr (kSigned) return hn::PromoteTo(di, hn::LoadU(hn::Rebind<int8_t, DI>(), reinterpret_cast<const int8_t*>(codes) + j));
    return hn::BitCast(di, hn::PromoteTo(du, hn::LoadU(hn::Rebind<uint8_t, DU>(), codes + j)));
  } else if constexpr (kKind == ZeroPointCodes::kHalfwords) {
    if constexpr (kSigned) return hn::PromoteTo(di, hn::LoadU(hn::Rebind<int16_t, DI>(), reinterpret_cast<const int16_t*>(codes) + j));
    return hn::BitCast(di, hn::PromoteTo(du, hn::LoadU(hn::Rebind<uint16_t, DU>(), reinterpret_cast<const uint16_t*>(codes) + j)));
  } else {
    constexpr bool kNibbles = kKind == ZeroPointCodes::kNibbleBytes || kKind == ZeroPointCodes::kPackedNibbles;
    constexpr uint32_t kSignBit = kNibbles ? 8u : 2u;
    VU small;
    if constexpr (kKind == ZeroPointCodes::kNibbleBytes || kKind == ZeroPointCodes::kCrumbBytes) {
      small = hn::And(hn::PromoteTo(du, hn::LoadU(hn::Rebind<uint8_t, DU>(), codes + j)), hn::Set(du, 2 * kSignBit - 1));
    } else {
#if QDQ_VECTOR_SUB_BYTE_CODES
      small = kNibbles ? UnpackNibbles(codes + j / 2) : UnpackCrumbs(codes + j / 4);
#else
      static_assert(kKind == ZeroPointCodes::kFloats, "packed zero points are read in lanes only where unpacked");
#endif
    }
    // Sign-extended as (code ^ sign) - sign: 0b1000 -> -8, 0b10 -> -2.
    if constexpr (kSigned) small = hn::Sub(hn::Xor(small, hn::Set(du, kSignBit)), hn::Set(du, kSignBit));
    return hn::BitCast(di, small);
  }
}

// Whole vectors [0, count) of x (count a multiple of the lanes) divided in float32 by one scale
// and given one zero point: the hot loop of per-tensor and per-block plans, four vectors a step and
// free of WalkVectors' per-vector choices (division precision, per-element operands). 8-bit code
// lanes are masked with byte_mask (0xFF, or the code's bits for one code per byte).
// kRoundQuotient: the division precision is x's own type (float16 or bfloat16 x), so x is exact
// in it and only the quotient is rounded to it after the float32 division (24 bits hold two
// 11- or 8-bit significands and two guard bits, so that double rounding is exact).
// side: dynamic quantization's reduction of the next stretch, one vector of it per vector here.
// kByReciprocal: r is RN(1 / s), a normal float32, and the codes come from IntegerOutput::
// CodesByReciprocal (bit for bit the division's), or with kRoundQuotient from
// OwnPrecisionQuotientByReciprocal (the same codes as the division's quotient).
// kShortBlocks (with kPerElement, zero points as floats): scales and zero_points hold one value per
// block of fewer elements than the lanes, every vector at the same phase, and `lanes` spreads
// them over each vector's lanes (ShortBlockLanes::ValuesOfVector) instead of element j reading
// scales[j].
// kPerElement: element j's scale is scales[j] where scales is not null (else s; with kByReciprocal
// scales holds the reciprocals, else r), and its zero
// point zero_points[j] with the bounds derived from it where zero_points is not null (else zp and
// bounds), or element j's code in zero_point_codes where kZeroPointCodes says how they are stored
// (Output::CodesWithZeroPointLanes): per-axis on the last axis and DirectML's broadcasts, in the
// same four-vector steps
// (WalkVectors' loop, one vector a step with its per-vector choices, made per-axis-last Q 1.35x
// slower than per-tensor in cache).
template <class Output, ElementType kX, typename Code, bool kRoundQuotient = false, bool kByReciprocal = false,
          bool kPerElement = false, ZeroPointCodes kZeroPointCodes = ZeroPointCodes::kFloats, bool kByTable = false,
          bool kShortBlocks = false>
HWY_INLINE void QuantizeUniform(const Context& c, const typename XInput<kX>::T* x, size_t count, VF s, VF r, VF zp,
                                const typename Output::Bounds& bounds, VI byte_mask, Code* out,
                                SideStream<kX>* side, const float* scales = nullptr,
                                const float* zero_points = nullptr, const uint8_t* zero_point_codes = nullptr,
                                const ShortBlockLanes<DF>* lanes = nullptr) {
  static_assert(!kShortBlocks || (kPerElement && kZeroPointCodes == ZeroPointCodes::kFloats));
  static_assert(!(kPerElement && kByReciprocal) || (kRoundQuotient && !kShortBlocks));
#ifdef QDQ_CODE_GATHER
  // float16 x in uniform stretches keeps Encode: there the table measured no faster (16M, 2
  // threads: per-axis-first 2.45-2.68 against 2.52-2.61 ms, blocked-last-32 3.3-3.8 against
  // 3.0-4.0), its rounding being F16C's two instructions. Either way the loop's whole fours of
  // vectors go through the 16-bit-lane encode where it applies (QDQ_HALFWORD_CODES).
  if constexpr (kRoundQuotient && kCodesByTable<Output> && !kByTable && (kPerElement || kX == ElementType::kBfloat16)) {
    if (c.code_table != nullptr) {  // the same loop with the table's codes (CodesOfQuotientByTable)
      QuantizeUniform<Output, kX, Code, true, kByReciprocal, kPerElement, kZeroPointCodes, true, kShortBlocks>(
          c, x, count, s, r, zp, bounds, byte_mask, out, side, scales, zero_points, zero_point_codes, lanes);
      return;
    }
  }
#endif
  const size_t N = hn::Lanes(DF());
  // The per-element operand of the vector at element j.
  auto operand_at = [&](const float* values, size_t j) QDQ_HOT_LAMBDA {
    if constexpr (kShortBlocks) return lanes->ValuesOfVector(values, j);
    return hn::LoadU(DF(), values + j);
  };
  // Element j's quotient before any rounding, or with kByReciprocal and kRoundQuotient the product
  // standing for it.
  // With kByReciprocal and kRoundQuotient, the product standing for it (the same codes).
  auto quotient_of = [&](VF xv) QDQ_HOT_LAMBDA {
    if constexpr (kByReciprocal && kRoundQuotient) return OwnPrecisionQuotientByReciprocal(xv, r);
    return hn::Div(xv, s);
  };
  auto quotient_at = [&](size_t j) QDQ_HOT_LAMBDA {
    if constexpr (kPerElement && kByReciprocal) {  // scales holds the reciprocals
      return OwnPrecisionQuotientByReciprocal(XInput<kX>::Load(x + j), scales != nullptr ? operand_at(scales, j) : r);
    } else if constexpr (kPerElement) {
      return hn::Div(XInput<kX>::Load(x + j), scales != nullptr ? operand_at(scales, j) : s);
    }
    return quotient_of(XInput<kX>::Load(x + j));
  };
  auto codes_at = [&](size_t j) QDQ_HOT_LAMBDA {
    if constexpr (kByReciprocal && kRoundQuotient && !kPerElement) {
      const VF q = quotient_at(j);
#ifdef QDQ_CODE_GATHER
      if constexpr (kByTable) return CodesOfQuotientByTable<kX>(c.code_table, q);
#endif
      return CodesOfOwnPrecisionQuotient<Output, kX>(c, q, zp, bounds);
    } else if constexpr (kByReciprocal && !kPerElement) {
      return Output::CodesByReciprocal(XInput<kX>::Load(x + j), s, r, bounds);
    } else if constexpr (kPerElement) {
      VF q = quotient_at(j);
#ifdef QDQ_CODE_GATHER
      if constexpr (kByTable) return CodesOfQuotientByTable<kX>(c.code_table, q);
#endif
      if constexpr (kZeroPointCodes != ZeroPointCodes::kFloats) {
        if constexpr (kRoundQuotient) q = RoundQuotientForOutput<Output, kX>(q);
        return Output::CodesWithZeroPointLanes(c, q, ZeroPointLanes<Output::kSignedCodes, kZeroPointCodes>(zero_point_codes, j));
      }
      if constexpr (kRoundQuotient) {
        if (HWY_LIKELY(zero_points == nullptr)) return CodesOfOwnPrecisionQuotient<Output, kX>(c, q, zp, bounds);
        const VF element_zp = operand_at(zero_points, j);
        return CodesOfOwnPrecisionQuotient<Output, kX>(c, q, element_zp, Output::MakeBounds(element_zp));
      }
      if (HWY_LIKELY(zero_points == nullptr)) return Output::Codes(c, q, zp, bounds);
      const VF element_zp = operand_at(zero_points, j);
      return Output::Codes(c, q, element_zp, Output::MakeBounds(element_zp));
    } else {
      VF q = quotient_at(j);
#ifdef QDQ_CODE_GATHER
      if constexpr (kByTable) return CodesOfQuotientByTable<kX>(c.code_table, q);
#endif
      if constexpr (kRoundQuotient) return CodesOfOwnPrecisionQuotient<Output, kX>(c, q, zp, bounds);
      return Output::Codes(c, q, zp, bounds);
    }
  };
  // The side's hot state lives in a local for the loop (see GroupStream::Cursor).
  typename SideCursor<kX>::type cursor{};
  if constexpr (kHasSideStream<kX>) {
    if (side != nullptr) cursor = side->Take();
  }
  // The prefetch window, paced by x: a line ahead for every line of x loaded here.
  PrefetchPacer prefetch(c);
  auto step_side = [&](int vectors) QDQ_HOT_LAMBDA {
    prefetch.Step(static_cast<size_t>(vectors) * N * sizeof(typename XInput<kX>::T));
    if constexpr (kHasSideStream<kX>) {
      if (side != nullptr) {
        for (int v = 0; v < vectors; ++v) side->Step(cursor);
      }
    }
  };
  size_t i = 0;
  if constexpr (sizeof(Code) == 1) {
#ifdef QDQ_HALFWORD_CODES
    // float8 / float4 codes of quotients rounded to x's type, sixteen bits a lane, where no zero
    // point is added to the quotient first (the sum would be rounded again in float32).
    if constexpr (kRoundQuotient && kCodesOfHalfwords<Output, kX> && kZeroPointCodes == ZeroPointCodes::kFloats) {
      if (zero_points == nullptr && !(Output::kAddsZero && c.apply_zero_point)) {
        // x interleaved four vectors at a time where it loads so (kInterleavedLoadX4), with one scale.
        constexpr bool kInterleaved = kInterleavedLoadX4<kX> && !kPerElement;
        for (; i + 4 * N <= count; i += 4 * N) {
          if constexpr (kInterleaved) {
            VF v[4];
            LoadX4<kX>(x + i, v);
            StoreCodesOfQuotients4<Output::kFormat, kX, true>(quotient_of(v[0]), quotient_of(v[1]), quotient_of(v[2]),
                                                              quotient_of(v[3]), c.saturate, out + i);
          } else {
            StoreCodesOfQuotients4<Output::kFormat, kX>(quotient_at(i), quotient_at(i + N), quotient_at(i + 2 * N),
                                                        quotient_at(i + 3 * N), c.saturate, out + i);
          }
          step_side(4);
        }
      }
    }
#endif
    // (Integer codes keep x in order here: interleaved, GCC spilled x around the unpacks and 16M
    // bfloat16 -> int8 per-axis-first ran 7.6-7.7 against 7.2-7.6 ms.)
    for (; i + 4 * N <= count; i += 4 * N) {
      StoreLowBytes4<false, (Output::kCodeBits < 8)>(codes_at(i), codes_at(i + N), codes_at(i + 2 * N),
                                                     codes_at(i + 3 * N), byte_mask, out + i);
      step_side(4);
    }
    for (; i < count; i += N) {
      StoreLowBytes(Output::kCodeBits < 8 ? hn::And(codes_at(i), byte_mask) : codes_at(i), out + i);
      step_side(1);
    }
  } else {
    for (; i < count; i += N) {
      StoreCodes<Output>(codes_at(i), out + i);
      step_side(1);
    }
  }
  if constexpr (kHasSideStream<kX>) {
    if (side != nullptr) side->Give(cursor);
  }
}

// --- Codes of a constant divisor by thresholds (AVX-512) ---------------------------------------
//
// From float16 or bfloat16 x in its own precision, with one divisor s and zero point over a long
// stretch (per-tensor, or the rows of a per-axis plan on an outer axis), the code is a monotonic
// function of x: the division by s, the rounding to x's type, the rounding to an integer or to
// float4, the zero point's addition and the clamp each keep order (IEEE's total order of the
// numbers, -0 before +0; reversed by a negative s). With at most 16 codes (4- and 2-bit integers,
// float4e2m1) the code is then fixed by which of 15 thresholds x reaches. x's pattern becomes a
// signed 16-bit key in that order (a negative pattern's 15 low bits flipped), a binary search over
// the thresholds gives its rank (per level: vpermw of the bounds, a comparison, a masked add) and
// one more vpermw the code: about 20 operations per 32 elements and no division, where the
// arithmetic takes about 18 per 16 (docs/performance-history.md, session 23).
//
// The thresholds come from the arithmetic itself, the stretch's own CodesOfOwnPrecisionQuotient
// evaluated on chosen keys: each is looked for among the 5 keys around the pattern nearest its
// boundary's value times s, and taken only where the first of them ranks below it and the last
// reaches it (by the order, the first key that reaches it is then the least); any other is
// bisected over all keys. NaN x gets the code the arithmetic gives every NaN pattern (where NaN
// patterns got different codes the stretch would keep the arithmetic; none do).
#undef QDQ_CODES_BY_THRESHOLDS  // per target, as QDQ_F16C
#if defined(QDQ_F16C) && HWY_TARGET != HWY_AVX2
#define QDQ_CODES_BY_THRESHOLDS 1

template <class Output>
constexpr bool kCodesByThresholds = false;
template <int kBits, bool kSigned>
constexpr bool kCodesByThresholds<IntegerOutput<kBits, kSigned>> = kBits <= 4;
template <const Format& F, bool kAddsZeroPoint>
constexpr bool kCodesByThresholds<FloatOutput<F, kAddsZeroPoint>> = F.exponent_bits == 2 && F.mantissa_bits == 1;

// Stretches shorter than this keep the arithmetic: a row's thresholds cost about as much as 200
// of its elements.
constexpr size_t kLeastThresholdStretch = 512;

// The key of +infinity, the largest key of a number; -infinity's is -1 minus it. Keys beyond
// either are NaN patterns.
template <ElementType kX>
constexpr int32_t kInfinityKey = kX == ElementType::kFloat16 ? 0x7C00 : 0x7F80;

// Keys of 16-bit patterns held in int32 lanes (or patterns of keys: the map is its own inverse),
// as 16-bit values, sign-extended.
HWY_INLINE VI KeysOfPatterns(VI patterns) {
  const VI wide = hn::ShiftRight<16>(hn::ShiftLeft<16>(patterns));
  return hn::Xor(wide, hn::And(hn::ShiftRight<15>(wide), hn::Set(DI(), 0x7FFF)));
}

// Lanes where a >= b (Highway 1.0.3 has no Ge for integers).
HWY_INLINE hn::Mask<DI> AtLeast(VI a, VI b) { return hn::Not(hn::Lt(a, b)); }

// The ranks of 16 keys (one per lane) as the stretch's arithmetic codes them: a code's place
// among the output's values in increasing order (float4e2m1: -6 ... -0, +0 ... 6), counted from
// the top for a negative divisor, so that ranks never decrease as keys grow. The codes go to
// *codes.
template <class Output, ElementType kX>
HWY_INLINE VI RanksOfKeys(const Context& c, VI keys, VF divisor, VF zp, const typename Output::Bounds& bounds,
                          bool descending, VI* codes) {
  const DI di;
  const VI patterns = hn::And(KeysOfPatterns(keys), hn::Set(di, 0xFFFF));
  VF x;
  if constexpr (kX == ElementType::kFloat16) {
    x = FromHalf(_mm512_cvtepi32_epi16(patterns.raw));
  } else {
    x = hn::BitCast(DF(), hn::ShiftLeft<16>(patterns));
  }
  const VI code = CodesOfOwnPrecisionQuotient<Output, kX>(c, hn::Div(x, divisor), zp, bounds);
  *codes = code;
  VI rank;
  if constexpr (Output::kIsInteger) {
    rank = hn::Sub(code, hn::Set(di, static_cast<int32_t>(Output::kLowest)));
  } else {  // 0b0EEM: +0 ... +6, ranks 8 ... 15; 0b1EEM: -0 ... -6, ranks 7 ... 0
    const VI low = hn::And(code, hn::Set(di, 15));
    rank = hn::IfThenElse(hn::Lt(low, hn::Set(di, 8)), hn::Add(low, hn::Set(di, 8)), hn::Sub(hn::Set(di, 15), low));
  }
  constexpr int32_t kTopRank = (1 << Output::kCodeBits) - 1;
  return descending ? hn::Sub(hn::Set(di, kTopRank), rank) : rank;
}

// Into *t, the thresholds of (divisor, zp) as the header above describes; t->usable false where
// the divisor is zero or not finite, or NaN patterns' codes differ.
template <class Output, ElementType kX>
void MakeThresholdCodes(const Context& c, VF divisor, VF zp, const typename Output::Bounds& bounds, ThresholdCodes* t) {
  const DF df;
  const DI di;
  constexpr int32_t kCodes = 1 << Output::kCodeBits;
  constexpr int32_t kInf = kInfinityKey<kX>;
  constexpr int32_t kNoKey = 32767;  // a threshold no number reaches (0x7FFF is a NaN pattern)
  const float s = hn::GetLane(divisor);
  const float zero_point = hn::GetLane(zp);
  t->made = true;
  std::memcpy(&t->divisor_bits, &s, sizeof(s));
  std::memcpy(&t->zero_point_bits, &zero_point, sizeof(zero_point));
  t->usable = false;
  if (!std::isfinite(s) || s == 0.0f) return;
  const bool descending = s < 0.0f;
  VI codes;
  // -infinity, +infinity, then NaN patterns of both signs: the quiet NaN, the least and the
  // largest payloads.
  const int32_t quiet = kX == ElementType::kFloat16 ? 0x7E00 : 0x7FC0;
  HWY_ALIGN const int32_t end_keys[16] = {-kInf - 1, kInf, quiet, kInf + 1, 0x7FFF, -quiet - 1, -kInf - 2, -32768};
  HWY_ALIGN int32_t end_ranks[16], end_codes[16];
  hn::Store(RanksOfKeys<Output, kX>(c, hn::Load(di, end_keys), divisor, zp, bounds, descending, &codes), di, end_ranks);
  hn::Store(codes, di, end_codes);
  const int32_t nan_code = end_codes[2] & (kCodes - 1);
  for (int j = 3; j < 8; ++j) {
    if ((end_codes[j] & (kCodes - 1)) != nan_code) return;
  }
  const VI k = hn::Iota(di, 0);  // lane k: the least key of rank k or more
  const VI least_rank = hn::Set(di, end_ranks[0]), top_rank = hn::Set(di, end_ranks[1]);
  // Every key reaches k (-32768 then), or none does.
  const auto all_reach = AtLeast(least_rank, k);
  const auto none_reach = hn::Lt(top_rank, k);
  // Lane k's boundary: between the values of ranks j - 1 and j, j = k (kCodes - k descending),
  // in the quotient's terms (the zero point taken off).
  HWY_ALIGN float boundary[16] = {};
  for (int32_t lane = 1; lane < kCodes; ++lane) {
    const int32_t j = descending ? kCodes - lane : lane;
    if constexpr (Output::kIsInteger) {
      boundary[lane] = Output::kLowest + static_cast<float>(j) - 0.5f - zero_point;
    } else {
      static constexpr float kValues[16] = {-6, -4, -3, -2, -1.5f, -1, -0.5f, -0.0f, 0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
      const bool adds = Output::kAddsZero && c.apply_zero_point;
      boundary[lane] = (kValues[j - 1] + kValues[j]) * 0.5f - (adds ? zero_point : 0.0f);
    }
  }
  const VF estimate = hn::Mul(hn::Load(df, boundary), divisor);
  VI nearest;
  if constexpr (kX == ElementType::kFloat16) {
    nearest = KeysOfPatterns(WidenHalf(ToHalf(estimate)));
  } else {
    nearest = KeysOfPatterns(Bfloat16Bits(estimate));
  }
  nearest = hn::Add(nearest, hn::Set(di, threshold_estimate_shift()));  // 0 but in tests
  const VI lowest_key = hn::Set(di, -kInf - 1), highest_key = hn::Set(di, kInf);
  // The window is clamped to the numbers' keys, and to -0 and +0 (keys -1, 0) where the nearest
  // key is one of them (float4's -0 | +0 boundary, the lanes of no threshold, and estimates that
  // underflow with a tiny divisor, which then bisect): their neighbours are subnormal bfloat16
  // values, whose division takes a microcode assist per instruction on Intel CPUs (a row's
  // thresholds cost three times as much). The window stays a run of consecutive keys.
  const auto at_zero = hn::And(AtLeast(nearest, hn::Set(di, -1)), hn::Lt(nearest, hn::Set(di, 1)));
  const VI window_lo = hn::IfThenElse(at_zero, hn::Set(di, -1), lowest_key);
  const VI window_hi = hn::IfThenElse(at_zero, hn::Zero(di), highest_key);
  VI threshold = hn::Set(di, kNoKey);
  VI first_rank, last_rank;
  for (int32_t offset = -2; offset <= 2; ++offset) {
    const VI keys = hn::Min(hn::Max(hn::Add(nearest, hn::Set(di, offset)), window_lo), window_hi);
    const VI ranks = RanksOfKeys<Output, kX>(c, keys, divisor, zp, bounds, descending, &codes);
    threshold = hn::Min(threshold, hn::IfThenElse(AtLeast(ranks, k), keys, hn::Set(di, kNoKey)));
    if (offset == -2) first_rank = ranks;
    last_rank = ranks;
  }
  const auto in_window = hn::And(hn::Lt(first_rank, k), AtLeast(last_rank, k));
  auto bisect = hn::Not(hn::Or(hn::Or(all_reach, none_reach), in_window));
  bisect = hn::And(bisect, hn::Lt(k, hn::Set(di, kCodes)));
  bisect = hn::And(bisect, hn::Gt(k, hn::Zero(di)));
  if (!hn::AllFalse(di, bisect)) {
    // rank(lo) < k <= rank(hi) in every lane that bisects: -infinity ranks below k there, and
    // +infinity reaches it.
    VI lo = lowest_key, hi = highest_key;
    while (!hn::AllFalse(di, hn::And(bisect, hn::Gt(hn::Sub(hi, lo), hn::Set(di, 1))))) {
      const VI mid = hn::ShiftRight<1>(hn::Add(lo, hi));
      const auto reaches = AtLeast(RanksOfKeys<Output, kX>(c, mid, divisor, zp, bounds, descending, &codes), k);
      hi = hn::IfThenElse(reaches, mid, hi);
      lo = hn::IfThenElse(reaches, lo, mid);
    }
    threshold = hn::IfThenElse(bisect, hi, threshold);
  }
  threshold = hn::IfThenElse(all_reach, hn::Set(di, -32768), hn::IfThenElse(none_reach, hn::Set(di, kNoKey), threshold));
  HWY_ALIGN int32_t thresholds[16];
  hn::Store(threshold, di, thresholds);
  for (int32_t j = 2; j < kCodes; ++j) {
    if (thresholds[j] < thresholds[j - 1]) return;  // not monotonic: cannot happen, kept safe
  }
  t->first_step = static_cast<int16_t>(kCodes / 2);
  t->first_bound = static_cast<int16_t>(thresholds[kCodes / 2]);
  int level = 0;
  for (int32_t step = kCodes / 4; step >= 1; step /= 2, ++level) {
    for (int32_t i = 0; i < 32; ++i) t->bounds[level][i] = static_cast<int16_t>(i + step < kCodes ? thresholds[i + step] : kNoKey);
  }
  for (int32_t rank = 0; rank < 32; ++rank) {
    const int32_t r = descending ? kCodes - 1 - rank : rank;  // its rank in increasing values
    int32_t code = 0;
    if (rank < kCodes) {
      if constexpr (Output::kIsInteger) {
        code = (static_cast<int32_t>(Output::kLowest) + r) & (kCodes - 1);
      } else {
        code = r >= 8 ? r - 8 : 15 - r;
      }
    }
    t->codes[rank] = static_cast<int16_t>(code);
  }
  t->nan_code = static_cast<int16_t>(nan_code);
  t->usable = true;
}

// The codes of `count` elements of x by t's thresholds, one byte each (the code's own bits, as
// the arithmetic's stores leave them under the byte mask of one code per byte; a packed output's
// Pack reads no more).
template <int kBits, ElementType kX>
HWY_INLINE void StoreCodesByThresholds(const Context& c, const ThresholdCodes& t, const uint16_t* x, size_t count,
                                       uint8_t* out) {
  constexpr int kLevels = kBits - 1;
  const __m512i low15 = _mm512_set1_epi16(0x7FFF);
  const __m512i infinity = _mm512_set1_epi16(static_cast<int16_t>(kInfinityKey<kX>));
  const __m512i first_bound = _mm512_set1_epi16(t.first_bound);
  const __m512i first_step = _mm512_set1_epi16(t.first_step);
  const __m512i nan_code = _mm512_set1_epi16(t.nan_code);
  const __m512i codes = _mm512_load_si512(t.codes);
  __m512i bounds[kLevels], steps[kLevels];
  for (int l = 0; l < kLevels; ++l) {
    bounds[l] = _mm512_load_si512(t.bounds[l]);
    steps[l] = _mm512_set1_epi16(static_cast<int16_t>(t.first_step >> (l + 1)));
  }
  auto codes_of = [&](__m512i v) QDQ_HOT_LAMBDA {
    // key = v ^ ((v >> 15) & 0x7FFF): 0x78 is A ^ (B & C)
    const __m512i key = _mm512_ternarylogic_epi32(v, _mm512_srai_epi16(v, 15), low15, 0x78);
    __m512i rank = _mm512_maskz_mov_epi16(_mm512_cmpge_epi16_mask(key, first_bound), first_step);
    for (int l = 0; l < kLevels; ++l) {
      const __m512i bound = _mm512_permutexvar_epi16(rank, bounds[l]);
      rank = _mm512_mask_add_epi16(rank, _mm512_cmpge_epi16_mask(key, bound), rank, steps[l]);
    }
    const __mmask32 number = _mm512_cmple_epu16_mask(_mm512_and_si512(v, low15), infinity);
    return _mm512_cvtepi16_epi8(_mm512_mask_permutexvar_epi16(nan_code, number, rank, codes));
  };
  PrefetchPacer prefetch(c);
  size_t i = 0;
  for (; i + 32 <= count; i += 32) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), codes_of(_mm512_loadu_si512(x + i)));
    prefetch.Step(64);
  }
  if (i < count) {
    const __mmask32 rest = (__mmask32{1} << (count - i)) - 1;
    _mm256_mask_storeu_epi8(out + i, rest, codes_of(_mm512_maskz_loadu_epi16(rest, x + i)));
  }
}

// QuantizeStretch's codes by thresholds where they apply: false leaves the stretch to the
// arithmetic. The thresholds of the last divisor and zero point are kept for the next stretch.
template <class Output, ElementType kX>
HWY_INLINE bool QuantizeByThresholds(const Context& c, const uint16_t* x, size_t count, VF divisor, VF zp,
                                     const typename Output::Bounds& bounds, uint8_t* out) {
  ThresholdCodes* t = c.thresholds;
  const float s = hn::GetLane(divisor);
  const float zero_point = hn::GetLane(zp);
  uint32_t s_bits, zp_bits;
  std::memcpy(&s_bits, &s, sizeof(s));
  std::memcpy(&zp_bits, &zero_point, sizeof(zero_point));
  if (!t->made || t->divisor_bits != s_bits || t->zero_point_bits != zp_bits) {
    MakeThresholdCodes<Output, kX>(c, divisor, zp, bounds, t);
  }
  if (!t->usable) return false;
  StoreCodesByThresholds<Output::kCodeBits, kX>(c, *t, x, count, out);
  return true;
}
#endif  // QDQ_CODES_BY_THRESHOLDS

// Uniform float32 quantization to the <= 16-bit integers by multiplication with the scale's
// reciprocal and a tie check (IntegerOutput::CodesByReciprocal), compiled for AVX-512 targets
// only, and taken there where the CPU's division is the slower (Context::by_reciprocal, see
// kernels::quantizes_by_reciprocal): on a Xeon a 512-bit division takes about twice the
// multiply-and-check (64K float32 -> int8 in cache, one core: 14.0 against 11.7 us raw), where
// on Zen 1's AVX2 the check cost more than the division saved (37.8 against 31.3 us;
// docs/performance-history.md, session 7).
template <class Output>
constexpr bool kQuantizesByReciprocal = false;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
template <int kBits, bool kSigned>
constexpr bool kQuantizesByReciprocal<IntegerOutput<kBits, kSigned>> = kBits <= 16;
#endif

// Integer outputs' bounds for each block of a per-block run, derived from the blocks' zero points
// a vector of blocks at a time (QuantizeUniformBlock) instead of once per block in QuantizeStretch,
// where the derivation (two subtractions, a conversion, three broadcasts) was as much work as a
// block of 32 elements' own loop apart from its division.
template <class Output>
constexpr bool kIntegerOutput = false;
template <int kBits, bool kSigned>
constexpr bool kIntegerOutput<IntegerOutput<kBits, kSigned>> = true;
struct BlockBounds {
  static constexpr size_t kMostBlocks = kBlock / 4 + 2 * 16;  // blocks of whole vectors: 4+ lanes
  HWY_ALIGN float lo[kMostBlocks];
  HWY_ALIGN float hi[kMostBlocks];
  HWY_ALIGN int32_t bias[kMostBlocks];
};

// The bounds of block b of a run with a zero point per block, and that zero point into *zp: from
// block_bounds where QuantizeUniformBlock made them. Callers whose blocks share the constant zero
// point use bounds_constant itself, by reference: selecting between the two inside a function that
// returned the Bounds struct by value made GCC copy the constant to the stack in 16-byte halves and
// load it back in 32-byte vectors, a store the load cannot forward from; on Zen 3 that stall took a
// third of 64K float32 -> uint8 blocked-last-32 Q (34-40 us against 12-16 per-tensor, one core).
template <class Output>
HWY_INLINE typename Output::Bounds OwnBoundsOfBlock(const Operands& o, uint64_t b, const BlockBounds* block_bounds,
                                                    VF* zp) {
  const DF df;
  *zp = hn::Set(df, o.zero_point.block[b]);
  if constexpr (kIntegerOutput<Output>) {
    if (block_bounds != nullptr) {
      return {hn::Set(df, block_bounds->lo[b]), hn::Set(df, block_bounds->hi[b]), hn::Set(DI(), block_bounds->bias[b])};
    }
  }
  return Output::MakeBounds(*zp);
}

// Elements of block b of a stretch: the block's own scale and zero point when per_block, else the
// constants. (A function, not a lambda: GCC does not inline the lambda and pays a call per block.)
template <class Output, ElementType kX, typename Code>
HWY_INLINE void QuantizeStretch(const Context& c, const Operands& o, uint64_t b, const typename XInput<kX>::T* from,
                                size_t count, VF zp_constant,
                                const typename Output::Bounds& bounds_constant, VI byte_mask, Code* to,
                                SideStream<kX>* side, const BlockBounds* block_bounds) {
  const DF df;
  VF zp = zp_constant;
  const bool own_zero_point = o.per_block && c.zero_point != nullptr;
  typename Output::Bounds own_bounds{};
  if (own_zero_point) own_bounds = OwnBoundsOfBlock<Output>(o, b, block_bounds, &zp);
  const typename Output::Bounds& bounds = own_zero_point ? own_bounds : bounds_constant;  // no copy (above)
  const float scale = o.per_block ? o.scale.block[b] : o.scale.constant;
  const VF s = hn::Set(df, scale);
  if constexpr (kX == ElementType::kFloat16 || kX == ElementType::kBfloat16) {
    if (c.precision != Precision::kFloat32) {  // x's own type (see QuantizeUniformBlock)
      // A scale of x's type is exact in it already; rounding it again per block of 32 was a
      // sixth of the time (16M blocked-last-32, 2 threads: bfloat16 -> uint8 2.9-3.1 -> 2.6-2.8
      // ms, -> int4 3.3 -> 2.8; float16 -> int4 2.7 -> 2.2-2.4).
      const VF divisor = ExactInPrecision(c.scale->type, c.precision) ? s : RoundToPrecision(c.precision, s);
#ifdef QDQ_CODES_BY_THRESHOLDS
      if constexpr (kCodesByThresholds<Output> && sizeof(Code) == 1) {
        if (!o.per_block && side == nullptr && c.thresholds != nullptr && count >= kLeastThresholdStretch &&
            QuantizeByThresholds<Output, kX>(c, from, count, divisor, zp, bounds, to)) {
          return;
        }
      }
#endif
      if constexpr (kCodesOwnQuotientByReciprocal<Output>) {
        // By the divisor's reciprocal where it is normal (after the thresholds, which take long
        // 4- and 2-bit and float4 stretches). Not per block here, where each block would divide
        // for its own (with a Newton-corrected product, tried first, float16 -> int4
        // blocked-last-32 went 77 -> 81 us in cache).
        if (!o.per_block) {
          const float r = 1.0f / hn::GetLane(divisor);
          if (std::isnormal(r)) {
            QuantizeUniform<Output, kX, Code, true, true>(c, from, count, divisor, hn::Set(df, r), zp, bounds,
                                                          byte_mask, to, side);
            return;
          }
        }
      }
      QuantizeUniform<Output, kX, Code, true>(c, from, count, divisor, s, zp, bounds, byte_mask, to, side);
      return;
    }
  }
  if constexpr (kQuantizesByReciprocal<Output>) {
    // One scale for the whole stretch (per-tensor, or a per-axis run): by its reciprocal. Not per
    // block: blocks of 32 ran slower that way (int8 blocked-32 Q, 64K: 18.3 against 15.2 us).
    if (!o.per_block && c.by_reciprocal) {
      const float r = 1.0f / scale;
      if (std::isnormal(r)) {
        QuantizeUniform<Output, kX, Code, false, true>(c, from, count, s, hn::Set(df, r), zp, bounds, byte_mask, to, side);
        return;
      }
    }
  }
  QuantizeUniform<Output, kX>(c, from, count, s, s, zp, bounds, byte_mask, to, side);
}

// QuantizeUniformBlock's loop over k elements of whole blocks (whole vectors each, see there).
// kOwnZeroPoints: each block has its zero point (bounds from OwnBoundsOfBlock); else every block
// shares zp_constant and bounds_constant, copied into locals once, before the loop. Two
// instantiations rather than a choice per block, so that the shared case never selects between
// the two (the stall described at OwnBoundsOfBlock).
// Byte codes of blocks made of whole groups of four vectors are stored four vectors at a time
// (StoreLowBytes4); other blocks, and 16-bit codes, one vector at a time. The prefetch window is
// paced per four vectors either way, so that a long block asks for it in steps, not in one burst.
template <class Output, ElementType kX, bool kOwnZeroPoints, typename Code>
HWY_INLINE void QuantizeWholeBlocks(const Context& c, const Operands& o, size_t k, uint64_t block,
                                    const typename XInput<kX>::T* x, VF zp_constant,
                                    const typename Output::Bounds& bounds_constant,
                                    const BlockBounds* block_bounds, VI byte_mask, Code* out) {
  const DF df;
  const size_t N = hn::Lanes(df);
  constexpr bool kSixteenBitX = kX == ElementType::kFloat16 || kX == ElementType::kBfloat16;
  const bool own_precision = kSixteenBitX && c.precision != Precision::kFloat32;
  const bool round_scale = own_precision && !ExactInPrecision(c.scale->type, c.precision);
  [[maybe_unused]] const bool by_table = kSixteenBitX && own_precision && c.code_table != nullptr;
  const typename Output::Bounds shared_bounds = bounds_constant;
  const VF shared_zp = zp_constant;
  PrefetchPacer prefetch(c);
  // QDQ_HOT_LAMBDA (both lambdas): GCC made codes_at a call per vector for float4e2m1, with its
  // captures read through the closure (64K blocked-last-32 Q in cache: 72 against 34 us
  // per-tensor).
  auto codes_of = [&](VF q, VF zp, const typename Output::Bounds& bounds) QDQ_HOT_LAMBDA {
#ifdef QDQ_CODE_GATHER
    if constexpr (kCodesByTable<Output> && kSixteenBitX) {
      if (by_table) return CodesOfQuotientByTable<kX>(c.code_table, q);
    }
#endif
    if constexpr (kSixteenBitX) {
      if (own_precision) return CodesOfOwnPrecisionQuotient<Output, kX>(c, q, zp, bounds);
    }
    return Output::Codes(c, q, zp, bounds);
  };
  constexpr size_t kXBytes = sizeof(typename XInput<kX>::T);
  [[maybe_unused]] const bool fours = block % (4 * N) == 0;
  [[maybe_unused]] const bool pairs = block % (2 * N) == 0;
  // Codes in x's own precision (kCodesOwnQuotientByReciprocal): each block's quotients by its
  // divisor's reciprocal (OwnPrecisionQuotientByReciprocal), the reciprocals made a vector of
  // blocks at a time rather than one division per block; a block whose reciprocal is not normal
  // divides.
  [[maybe_unused]] HWY_ALIGN float reciprocals[BlockBounds::kMostBlocks];
  [[maybe_unused]] bool by_reciprocal = false;
  if constexpr (kCodesOwnQuotientByReciprocal<Output>) {
    if (own_precision && k / block + N <= BlockBounds::kMostBlocks) {
      for (size_t j = 0; j < k / block; j += N) {  // o.scale.block is padded past the last block
        VF divisors = hn::LoadU(df, o.scale.block + j);
        if (round_scale) divisors = RoundToPrecision(c.precision, divisors);
        hn::Store(hn::Div(hn::Set(df, 1.0f), divisors), df, reciprocals + j);
      }
      by_reciprocal = true;
    }
  }
  for (size_t b = 0, i = 0; i < k; ++b, i += block) {
    VF s = hn::Set(df, o.scale.block[b]);
    if (round_scale) s = RoundToPrecision(c.precision, s);
    VF zp = shared_zp;
    typename Output::Bounds bounds = shared_bounds;
    if constexpr (kOwnZeroPoints) bounds = OwnBoundsOfBlock<Output>(o, b, block_bounds, &zp);
    [[maybe_unused]] const bool block_by_reciprocal = by_reciprocal && std::isnormal(reciprocals[b]);
    [[maybe_unused]] const VF r = block_by_reciprocal ? hn::Set(df, reciprocals[b]) : s;
    auto quotient = [&](VF v) QDQ_HOT_LAMBDA {
      if constexpr (kCodesOwnQuotientByReciprocal<Output>) {
        if (block_by_reciprocal) return OwnPrecisionQuotientByReciprocal(v, r);
      }
      return hn::Div(v, s);
    };
    auto codes_at = [&](size_t j) QDQ_HOT_LAMBDA { return codes_of(quotient(XInput<kX>::Load(x + j)), zp, bounds); };
    const size_t end = i + block;
    if constexpr (sizeof(Code) == 1) {
#ifdef QDQ_HALFWORD_CODES
      if constexpr (kCodesOfHalfwords<Output, kX>) {  // as in QuantizeUniform
        if (fours && own_precision && !(Output::kAddsZero && c.apply_zero_point)) {
          for (size_t j = i; j < end; j += 4 * N) {
            VF v[4];
            LoadX4<kX>(x + j, v);
            StoreCodesOfQuotients4<Output::kFormat, kX, kInterleavedLoadX4<kX>>(
                quotient(v[0]), quotient(v[1]), quotient(v[2]), quotient(v[3]), c.saturate, out + j);
            prefetch.Step(4 * N * kXBytes);
          }
          continue;
        }
#ifdef QDQ_HALFWORD_PAIRS
        // Blocks of two vectors (32 elements on AVX-512), a pair at a time: 16M float16 ->
        // float8e4m3fn blocked-last-32 took 3.5-3.6 ms by the code table, as by Encode, and
        // 2.5 ms so (2 threads).
        if (pairs && own_precision && !(Output::kAddsZero && c.apply_zero_point)) {
          for (size_t j = i; j < end; j += 2 * N) {
            StoreCodesOfQuotients2<Output::kFormat, kX>(quotient(XInput<kX>::Load(x + j)),
                                                        quotient(XInput<kX>::Load(x + j + N)), c.saturate, out + j);
            prefetch.Step(2 * N * kXBytes);
          }
          continue;
        }
#endif
      }
#endif
      if (fours) {
        for (size_t j = i; j < end; j += 4 * N) {
          VF v[4];
          LoadX4<kX>(x + j, v);
          StoreLowBytes4<kInterleavedLoadX4<kX>, (Output::kCodeBits < 8)>(
              codes_of(quotient(v[0]), zp, bounds), codes_of(quotient(v[1]), zp, bounds),
              codes_of(quotient(v[2]), zp, bounds), codes_of(quotient(v[3]), zp, bounds), byte_mask, out + j);
          prefetch.Step(4 * N * kXBytes);
        }
        continue;
      }
    }
    for (size_t j = i; j < end;) {  // up to four vectors, then their share of the window
      const size_t stop = std::min(end, j + 4 * N);
      const size_t from = j;
      for (; j < stop; j += N) {
        if constexpr (sizeof(Code) == 1) {
          StoreLowBytes(Output::kCodeBits < 8 ? hn::And(codes_at(j), byte_mask) : codes_at(j), out + j);
        } else {
          StoreCodes<Output>(codes_at(j), out + j);
        }
      }
      prefetch.Step((stop - from) * kXBytes);
    }
  }
}

// One block of a run whose scale and zero point are constant (per-tensor) or one per whole-vector
// block (per_block), divided in float32: QuantizeUniform over each stretch of equal operands, the
// partial last vector through zero-padded copies.
template <class Output, ElementType kX, typename Code>
void QuantizeUniformBlock(const Context& c, const exec::Run& run, uint64_t offset, size_t k, const Operands& o,
                          const typename XInput<kX>::T* x, VF zp_constant, const typename Output::Bounds& bounds_constant,
                          VI byte_mask, Code* out, SideStream<kX>* side) {
  const DF df;
  const size_t N = hn::Lanes(df);
  const size_t whole = k - k % N;
  BlockBounds block_bounds_storage;
  const BlockBounds* block_bounds = nullptr;
  if constexpr (kIntegerOutput<Output>) {
    // Entries past the last block: zero points 0 (LoadContiguous pads 16 of them). Blocks of fewer
    // than 4 elements (no target here has fewer lanes) keep deriving theirs per block.
    const uint64_t blocks = o.per_block ? ((run.block_phase + offset) % run.block + k + run.block - 1) / run.block : 0;
    if (o.per_block && c.zero_point != nullptr && blocks + N <= BlockBounds::kMostBlocks) {
      for (size_t j = 0; j < blocks; j += N) {
        const typename Output::Bounds b = Output::MakeBounds(hn::LoadU(df, o.zero_point.block + j));
        hn::Store(b.lo, df, block_bounds_storage.lo + j);
        hn::Store(b.hi, df, block_bounds_storage.hi + j);
        hn::Store(b.bias, DI(), block_bounds_storage.bias + j);
      }
      block_bounds = &block_bounds_storage;
    }
  }
  if constexpr (!Output::kWide && sizeof(Code) <= 2) {
    // Codes of 16 bits or fewer (integers, float8, float4, Quark's float16 and bfloat16) of whole
    // blocks (QuantizeWholeBlocks): one loop over the blocks, each block's scale and bounds
    // broadcast and its vectors quantized in place, one prefetch window for all of them
    // (ForEachUniformStretch's visits set each block up as a stretch of its own, with the pacer and
    // side stream taken in and handed back). float16 and bfloat16 x may divide in its own
    // precision (QuantizeStretch's first branch): the scale rounded to it unless exact in it, the
    // quotient rounded to it, or the quotient coded by the table where QuantizeRun made one
    // (CodeTable). Here float16 x takes the table too, unlike in stretches: 16M float16 ->
    // float8e4m3fn blocked-last-32 2.99-3.14 -> 2.84-2.87 ms, -> float4e2m1 3.14-3.29 -> 2.97-3.01
    // ms.
    const uint64_t block = run.block;
    if (o.per_block && side == nullptr && (run.block_phase + offset) % block == 0 && k % block == 0) {
      if (c.zero_point != nullptr) {
        QuantizeWholeBlocks<Output, kX, true>(c, o, k, block, x, zp_constant, bounds_constant, block_bounds, byte_mask, out);
      } else {
        QuantizeWholeBlocks<Output, kX, false>(c, o, k, block, x, zp_constant, bounds_constant, nullptr, byte_mask, out);
      }
      return;
    }
  }
  // A hot lambda: otherwise a call per stretch, a stack frame for every block of 32 elements.
  const auto visit = [&](uint64_t block, size_t i, size_t count) QDQ_HOT_LAMBDA {
    QuantizeStretch<Output, kX>(c, o, block, x + i, count, zp_constant, bounds_constant, byte_mask, out + i, side,
                                block_bounds);
  };
  const uint64_t b = ForEachUniformStretch(run, offset, whole, o.per_block, visit);
  if (whole < k) {
    HWY_ALIGN typename XInput<kX>::T x_tail[64];
    HWY_ALIGN Code out_tail[64];
    QuantizeStretch<Output, kX>(c, o, b, StageTail(x, whole, k, x_tail), N, zp_constant, bounds_constant, byte_mask,
                                out_tail, side, block_bounds);
    std::memcpy(out + whole, out_tail, (k - whole) * sizeof(Code));
  }
}

// A 4- or 2-bit zero point's kind by its layout (packed kinds only where the target unpacks them).
template <ZeroPointCodes kPacked, ZeroPointCodes kOnePerByte, class Visit>
HWY_INLINE void WithSubByteZeroPointCodes([[maybe_unused]] bool packed, const Visit& visit) {
#if QDQ_VECTOR_SUB_BYTE_CODES
  if (packed) {
    visit.template operator()<kPacked>();
    return;
  }
#endif
  visit.template operator()<kOnePerByte>();
}
// Calls visit.template operator()<kKind>() with the ZeroPointCodes kind of the plan's zero points
// (those ZeroPointCodesInLoop accepts).
template <class Visit>
HWY_INLINE void WithZeroPointCodes(const Context& c, const Visit& visit) {
  const bool packed = c.plan->zero_point.layout == SubByteLayout::kPacked;
  switch (c.zero_point->bits) {
    case 8: visit.template operator()<ZeroPointCodes::kBytes>(); return;
    case 16: visit.template operator()<ZeroPointCodes::kHalfwords>(); return;
    case 4: WithSubByteZeroPointCodes<ZeroPointCodes::kPackedNibbles, ZeroPointCodes::kNibbleBytes>(packed, visit); return;
    default: WithSubByteZeroPointCodes<ZeroPointCodes::kPackedCrumbs, ZeroPointCodes::kCrumbBytes>(packed, visit);  // 2 bits
  }
}

// Copies the zero-point codes of elements [whole, k) of a row (`codes` at its element 0) into
// `local`, zero-padded, as StageTail does for values: whole is a multiple of the lanes, so a packed
// row's tail starts on a byte.
template <ZeroPointCodes kKind>
const uint8_t* StageCodeTail(const uint8_t* codes, size_t whole, size_t k, uint8_t (&local)[128]) {
  constexpr size_t kBytesPerCode = kKind == ZeroPointCodes::kHalfwords ? 2 : 1;
  constexpr size_t kCodesPerByte = kKind == ZeroPointCodes::kPackedNibbles ? 2 : kKind == ZeroPointCodes::kPackedCrumbs ? 4 : 1;
  const size_t first = kCodesPerByte > 1 ? whole / kCodesPerByte : whole * kBytesPerCode;
  const size_t bytes = kCodesPerByte > 1 ? (k - whole + kCodesPerByte - 1) / kCodesPerByte : (k - whole) * kBytesPerCode;
  ZeroBytes<sizeof(local)>(local);
  std::memcpy(local, codes + first, bytes);
  return local;
}

// One block of a run whose scales or zero points are per element (values pointers of o; the other
// operand may be constant), divided in float32 or in x's own precision with scales exact in it
// (there multiplied by the scales' reciprocals where ConvertedOperand holds them all normal):
// QuantizeUniform's per-element loop over the whole vectors, the partial last one through
// zero-padded copies. kKind: the zero points are o.zero_point.values (kFloats) or codes of that
// kind at o.zero_point_codes.
template <class Output, ElementType kX, ZeroPointCodes kKind, typename Code>
void QuantizePerElement(const Context& c, size_t k, const Operands& o, const typename XInput<kX>::T* x,
                        VF zp_constant, const typename Output::Bounds& bounds_constant, VI byte_mask, Code* out) {
  using XT = typename XInput<kX>::T;
  const DF df;
  const size_t N = hn::Lanes(df);
  const VF s = hn::Set(df, o.scale.constant);
  if constexpr (kKind == ZeroPointCodes::kFloats) {
    if (o.short_blocks) {
      // Blocks shorter than a vector, every vector at the same phase (QuantizeRun asks for them
      // only so): the blocks' values spread over the lanes in the same four-vector loop. Written
      // out per element first, they took half of 64K float32 -> uint8 Q over rows of 4 with a
      // zero point (FillShortBlocksOf 26%, the zero points' conversion 8%, on Zen 3).
      const ShortBlockLanes<DF> lanes(df, o.short_block, o.short_block_phase);
      const float* zero_points = c.zero_point != nullptr ? o.zero_point.block : nullptr;
      const auto quantize_blocks = [&](const XT* from, size_t first_block, size_t count, Code* to) QDQ_HOT_LAMBDA {
        const float* scales = o.scale.block + first_block;
        const float* block_zero_points = zero_points != nullptr ? zero_points + first_block : nullptr;
        if constexpr (kX == ElementType::kFloat16 || kX == ElementType::kBfloat16) {
          if (c.precision != Precision::kFloat32) {
            QuantizeUniform<Output, kX, Code, true, false, true, kKind, false, true>(
                c, from, count, s, s, zp_constant, bounds_constant, byte_mask, to, nullptr, scales, block_zero_points,
                nullptr, &lanes);
            return;
          }
        }
        QuantizeUniform<Output, kX, Code, false, false, true, kKind, false, true>(
            c, from, count, s, s, zp_constant, bounds_constant, byte_mask, to, nullptr, scales, block_zero_points,
            nullptr, &lanes);
      };
      const size_t whole = k - k % N;
      quantize_blocks(x, 0, whole, out);
      if (whole < k) {
        HWY_ALIGN XT x_tail[64];
        HWY_ALIGN Code out_tail[64];
        quantize_blocks(StageTail(x, whole, k, x_tail), whole / o.short_block, N, out_tail);
        std::memcpy(out + whole, out_tail, (k - whole) * sizeof(Code));
      }
      return;
    }
  }
  // x's own precision with scales converted for the run (per-axis-last rows): by their reciprocals
  // where all are normal (OwnPrecisionQuotientByReciprocal), made once per conversion.
  [[maybe_unused]] const float* reciprocals = nullptr;
  if constexpr (kCodesOwnQuotientByReciprocal<Output> && (kX == ElementType::kFloat16 || kX == ElementType::kBfloat16)) {
    if (c.precision != Precision::kFloat32 && o.scale.values != nullptr && c.converted_scale != nullptr) {
      reciprocals = c.converted_scale->ReciprocalsOf(o.scale.values, AllReciprocalsNormal);
    }
  }
  const auto quantize = [&](const XT* from, const float* scales, const float* zero_points, const uint8_t* codes,
                            size_t count, Code* to) QDQ_HOT_LAMBDA {
    if constexpr (kX == ElementType::kFloat16 || kX == ElementType::kBfloat16) {
      if (c.precision != Precision::kFloat32) {
        if constexpr (kCodesOwnQuotientByReciprocal<Output>) {
          if (reciprocals != nullptr) {  // `scales` are the reciprocals (never null here, so r is unused)
            QuantizeUniform<Output, kX, Code, true, true, true, kKind>(c, from, count, s, s, zp_constant,
                                                                       bounds_constant, byte_mask, to, nullptr, scales,
                                                                       zero_points, codes);
            return;
          }
        }
        QuantizeUniform<Output, kX, Code, true, false, true, kKind>(c, from, count, s, s, zp_constant, bounds_constant,
                                                                    byte_mask, to, nullptr, scales, zero_points, codes);
        return;
      }
    }
    QuantizeUniform<Output, kX, Code, false, false, true, kKind>(c, from, count, s, s, zp_constant, bounds_constant,
                                                                 byte_mask, to, nullptr, scales, zero_points, codes);
  };
  const size_t whole = k - k % N;
  const float* scales = reciprocals != nullptr ? reciprocals : o.scale.values;
  const float* zero_points = o.zero_point.values;
  quantize(x, scales, zero_points, o.zero_point_codes, whole, out);
  if (whole < k) {
    HWY_ALIGN XT x_tail[64];
    HWY_ALIGN float scale_tail[64];
    HWY_ALIGN float zp_tail[64];
    HWY_ALIGN uint8_t code_tail[128];
    HWY_ALIGN Code out_tail[64];
    const uint8_t* codes = nullptr;
    if constexpr (kKind != ZeroPointCodes::kFloats) codes = StageCodeTail<kKind>(o.zero_point_codes, whole, k, code_tail);
    quantize(StageTail(x, whole, k, x_tail), scales ? StageTail(scales, whole, k, scale_tail) : nullptr,
             zero_points ? StageTail(zero_points, whole, k, zp_tail) : nullptr, codes, N, out_tail);
    std::memcpy(out + whole, out_tail, (k - whole) * sizeof(Code));
  }
}

// The outputs whose per-element zero points QuantizePerElementBlock reads as codes: the integer
// types of 16 bits or fewer and float4e2m1 (their CodesWithZeroPointLanes).
template <class Output>
constexpr bool kReadsZeroPointCodes = false;
template <int kBits, bool kSigned>
constexpr bool kReadsZeroPointCodes<IntegerOutput<kBits, kSigned>> = kBits <= 16;
template <>
inline constexpr bool kReadsZeroPointCodes<FloatOutput<kE2M1, true>> = true;

// QuantizePerElement with the zero points as float32 values, or as codes where LoadOperands gave
// them (Operands::zero_point_codes).
template <class Output, ElementType kX, typename Code>
void QuantizePerElementBlock(const Context& c, size_t k, const Operands& o, const typename XInput<kX>::T* x,
                             VF zp_constant, const typename Output::Bounds& bounds_constant, VI byte_mask, Code* out) {
  if constexpr (kReadsZeroPointCodes<Output>) {
    if (o.zero_point_codes != nullptr) {
      WithZeroPointCodes(c, [&]<ZeroPointCodes kKind>() HWY_ATTR {
        QuantizePerElement<Output, kX, kKind>(c, k, o, x, zp_constant, bounds_constant, byte_mask, out);
      });
      return;
    }
  }
  QuantizePerElement<Output, kX, ZeroPointCodes::kFloats>(c, k, o, x, zp_constant, bounds_constant, byte_mask, out);
}

template <class Output, ElementType kX>
void QuantizeRun(const Context& c, const exec::Run& run, void* y) {
#ifdef QDQ_CODE_GATHER
  if constexpr (kCodesByTable<Output> && (kX == ElementType::kFloat16 || kX == ElementType::kBfloat16)) {
    if (c.code_table == nullptr && ExactInPrecision(kX, c.precision) && !(Output::kAddsZero && c.apply_zero_point)) {
      Context with_table = c;  // the callers' context is const; this run reads the table from a copy
      with_table.code_table = CodeTable<kX, Output::kFormat>(c.saturate);
      QuantizeRun<Output, kX>(with_table, run, y);
      return;
    }
  }
#endif
  using XT = typename XInput<kX>::T;
  using Code = CodeType<Output::kCodeBits>;
  const DF df;
  const size_t N = hn::Lanes(df);
  const bool packed = c.y->is_packed() && c.y_layout == SubByteLayout::kPacked;
  // One code per byte: the high bits of each byte are zero (the codes are two's complement and
  // a float4 encoding leaves bits above the code).
  const bool one_code_per_byte = c.y->is_packed() && !packed;
  const VI code_mask = hn::Set(DI(), static_cast<int32_t>(low_mask(c.y->bits)));
  const VI byte_mask = one_code_per_byte ? code_mask : hn::Set(DI(), 0xFF);
  const Precision precision = c.precision;
  SideStream<kX>* const side = static_cast<SideStream<kX>*>(c.side_stream);
  // Wide outputs finish in place in the code buffer; float64 divisions are staged into `staged`.
  const bool through_buffer = packed || c.stream_output || Output::kWide;
  HWY_ALIGN Code codes[kPadded];  // packed outputs: one code per byte before packing
  HWY_ALIGN float staged[kPadded];
  HWY_ALIGN float x_values[kPadded];
  HWY_ALIGN float zp_tail[64];
  HWY_ALIGN Code out_tail[64];
  Operands o;
  // Per-element zero points are read as codes by QuantizePerElementBlock, the path of float32
  // divisions and of x's own precision with scales exact in it (below).
  const bool zero_point_codes =
      kReadsZeroPointCodes<Output> && (precision == Precision::kFloat32 ||
                                       (ExactInPrecision(kX, precision) && ExactInPrecision(c.scale->type, precision)));
  // The first block stops where x's vectors start on whole vectors (ElementsBeforeWholeVector),
  // unless the run is blocked (its operands are broadcast per vector, so its blocks stay whole) or
  // the head is not a multiple of 4 elements (packed 4- and 2-bit codes and zero points then start
  // the later blocks on whole bytes).
  // Blocks shorter than a vector whose vectors all start at the same phase go through
  // QuantizePerElement's ShortBlockLanes, on the paths that reach it (not the wide outputs, not
  // float64 divisions, not beside a side stream).
  const bool short_blocks_in_lanes =
      !Output::kWide && side == nullptr && run.block != 0 && N % run.block == 0 &&
      (precision == Precision::kFloat32 || (ExactInPrecision(kX, precision) && ExactInPrecision(c.scale->type, precision)));
  size_t head = run.block == 0 ? ElementsBeforeWholeVector(static_cast<const XT*>(c.x_data) + (run.x_index - c.x_first), sizeof(XT)) : 0;
  if (head % 4 != 0 || head >= run.count) head = 0;
  for (uint64_t offset = 0, step = 0; offset < run.count; offset += step) {
    const size_t k = static_cast<size_t>(std::min<uint64_t>(offset == 0 && head != 0 ? head : kBlock, run.count - offset));
    step = k;
    const uint64_t at = run.x_index + offset;
    const uint64_t y_at = at - c.y_first;
    const XT* x = static_cast<const XT*>(c.x_data) + (at - c.x_first);
    LoadOperands(c, run, offset, k, &o, zero_point_codes, short_blocks_in_lanes);
    const VF zp_constant = hn::Set(df, o.zero_point.constant);
    const typename Output::Bounds bounds_constant = Output::MakeBounds(zp_constant);
    Code* out = through_buffer ? codes : static_cast<Code*>(y) + y_at;
    // The codes of one vector of quotients q, with their zero point and the bounds derived from it.
    auto emit = [&](VF q, VF zp, const typename Output::Bounds& bounds, Code* destination) HWY_ATTR {
      const VI code = Output::Codes(c, q, zp, bounds);
      StoreCodes<Output>(one_code_per_byte ? hn::And(code, code_mask) : code, destination);
    };
    size_t i = 0;
    if (!Output::kWide && precision == Precision::kFloat64) {  // an int32 scale: never per block
      PrefetchWindow(c, k * sizeof(XT));
      StageFloat64Quotients<kX, Output::kIsInteger>(c, at, k, o, x_values, staged);
      const float* zpp = o.zero_point.values;
      const VF no_zero_point = hn::Set(df, -0.0f);  // float outputs: added in the stage
      for (; i < k; i += N) {
        const bool tail = i + N > k;
        Code* destination = tail ? out_tail : out + i;
        const VF q = hn::LoadU(df, staged + i);
        if (!Output::kIsInteger) {
          emit(q, no_zero_point, bounds_constant, destination);
        } else if (zpp) {
          const VF zp = hn::LoadU(df, tail ? StageTail(zpp, i, k, zp_tail) : zpp + i);
          emit(q, zp, Output::MakeBounds(zp), destination);
        } else {
          emit(q, zp_constant, bounds_constant, destination);
        }
        if (tail) std::memcpy(out + i, out_tail, (k - i) * sizeof(Code));
      }
    } else {
      // float32 divisions, or x's own float16/bfloat16 precision (x exact in it).
      const bool own_precision = ExactInPrecision(kX, precision);
      // Rounding an operand to the precision is skipped where it is already exact in it: x in its
      // own precision, a scale of the precision's type (a bfloat16 x per-axis-last Q rounded all
      // three values per vector: 27.6 ms at 16M against float32 x's 12.8).
      const bool round_x = precision != Precision::kFloat32 && !own_precision;
      const bool scale_exact = ExactInPrecision(c.scale->type, precision);
      // One vector: x, its scale (already in the division precision unless round_scale) and its
      // zero point with the bounds derived from it.
      auto compute = [&](const XT* xp, VF s, bool round_scale, VF zp, const typename Output::Bounds& bounds,
                         Code* destination, size_t) HWY_ATTR {
        VF xv = XInput<kX>::Load(xp);
        if (round_x) xv = RoundToPrecision(precision, xv);
        if (round_scale && !scale_exact) s = RoundToPrecision(precision, s);
        VF q = hn::Div(xv, s);
        if (own_precision) {
          q = RoundQuotientForOutput<Output, kX>(q);
        } else if (precision != Precision::kFloat32) {
          q = RoundToPrecision(precision, q);
        }
        emit(q, zp, bounds, destination);
      };
      const bool uniform = (precision == Precision::kFloat32 || own_precision) && !o.short_blocks &&
                           (o.per_block || (o.scale.values == nullptr && o.zero_point.values == nullptr &&
                                            o.zero_point_codes == nullptr));
      // Per-element operands whose scales need no rounding to the division precision.
      const bool per_element = !uniform && !o.per_block && (precision == Precision::kFloat32 || (own_precision && scale_exact));
      if constexpr (!Output::kWide) {
        if (uniform) {
          QuantizeUniformBlock<Output, kX>(c, run, offset, k, o, x, zp_constant, bounds_constant, byte_mask, out, side);
        } else if (per_element) {
          QuantizePerElementBlock<Output, kX>(c, k, o, x, zp_constant, bounds_constant, byte_mask, out);
        }
      }
      if (Output::kWide || !(uniform || per_element)) {
        PrefetchWindow(c, k * sizeof(XT));
        WalkVectors<Output>(c, run, offset, k, o, x, RoundToPrecision(precision, hn::Set(df, o.scale.constant)),
                            zp_constant, bounds_constant, out, compute);
      }
    }
    if constexpr (Output::kWide) {
      Output::FinishWide(o.wide_zero_point, c.zero_point != nullptr && c.apply_zero_point, k, codes);
      if (!c.stream_output) std::memcpy(static_cast<Code*>(y) + y_at, codes, k * sizeof(Code));
    }
    if constexpr (sizeof(Code) == 1) {
      if (packed) {
        Pack(*c.y, codes, k, y, y_at);
        continue;
      }
    }
    if (c.stream_output) c.y_stream->Write(codes, k * sizeof(Code), static_cast<Code*>(y) + y_at);
  }
}

// --- Dequantize -----------------------------------------------------------------------------

// x loaders for dequantize: codes straight from storage (8 and 16 bits) or, for 4- and 2-bit
// codes, from a block staged one value per byte (IntegerInput::Stage), as float32 values.
template <int kBits, bool kSigned>
struct IntegerInput {
  static constexpr bool kSignedCodes = kSigned;
  static constexpr bool kPacked = kBits < 8;
  static constexpr bool kSubtractsZeroPoint = true;
  static constexpr bool kOnlyDefaultNaNs = true;  // no code is NaN (see DequantizeUniform)
  static constexpr bool kHasNaN = false;
  // Sub-byte codes arrive staged as 8-bit values (sign-extended where signed), so every width
  // loads with one widening load (int8 loads sign-extend).
  using T = std::conditional_t<(kBits <= 8), std::conditional_t<kSigned, int8_t, uint8_t>,
                               std::conditional_t<kSigned, int16_t, uint16_t>>;
  static HWY_INLINE VF Load(const T* p) { return hn::ConvertTo(DF(), LoadWide(p)); }
  // Elements [x_at, x_at + k) of a 4- or 2-bit x as T values in `staging` (kPadded bytes): one
  // code per byte keeps each byte's low kBits (ml_dtypes ignores the high ones), packed codes are
  // spread by Unpack first; signed codes are then sign-extended, (code ^ sign) - sign in bytes
  // (0b1000 -> 0xF8, -8). A pass of one load, one to three operations and one store per 32 codes
  // (AVX2), in place of two shifts per 8 codes in every loop that loads them. 16M codes to
  // bfloat16 per-axis-last, 2 threads: uint4 one per byte 7.2 -> 5.4 ms, packed 7.8 -> 5.8-6.1
  // (uint8 6.0 -> 5.2 with ConvertedOperand::HoldsOnlyFinite).
  static HWY_INLINE const T* Stage(const Context& c, uint64_t x_at, size_t k, uint8_t* staging) {
    static_assert(kBits < 8);
    constexpr uint8_t kCodeMask = (1u << kBits) - 1;  // 0b1111 (4-bit), 0b11 (2-bit)
    constexpr uint8_t kSignBit = 1u << (kBits - 1);   // 0b1000, 0b10
    const hn::ScalableTag<uint8_t> d8;
    const size_t n = hn::Lanes(d8);
    const auto mask = hn::Set(d8, kCodeMask);
    const auto sign = hn::Set(d8, kSignBit);
    const uint8_t* source = static_cast<const uint8_t*>(c.x_data) + x_at;
    if (c.x_layout == SubByteLayout::kPacked) {
      Unpack(*c.x, c.x_data, x_at, k, staging);  // codes in [0, 2^kBits)
      if constexpr (!kSigned) return reinterpret_cast<const T*>(staging);
      source = staging;
    }
    size_t i = 0;
    for (; i + n <= k; i += n) {  // whole vectors only: x's own bytes end at k
      auto v = hn::And(hn::LoadU(d8, source + i), mask);
      if constexpr (kSigned) v = hn::Sub(hn::Xor(v, sign), sign);
      hn::StoreU(v, d8, staging + i);
    }
    for (; i < k; ++i) {
      const unsigned code = source[i] & kCodeMask;
      staging[i] = static_cast<uint8_t>(kSigned ? (code ^ kSignBit) - kSignBit : code);
    }
    return reinterpret_cast<const T*>(staging);
  }
};

template <const Format& F>
struct FloatInput {
  static constexpr bool kPacked = F.sign_shift() + 1 < 8;
  static constexpr bool kSubtractsZeroPoint = false;  // float x: zero point required 0, not subtracted
  // NaN codes load as float32's default quiet NaN with the code's sign (float4e2m1 has none).
  static constexpr bool kOnlyDefaultNaNs = !F.widening_keeps_nan_payload;
  static constexpr bool kHasNaN = F.nan_style != NanStyle::kNone;  // float4e2m1 has none
  using T = uint8_t;
  // float4e2m1's block of codes one per byte: its own bytes (Load masks them), else unpacked.
  static HWY_INLINE const T* Stage(const Context& c, uint64_t x_at, size_t k, uint8_t* staging) {
    if (c.x_layout == SubByteLayout::kOneCodePerByte) return static_cast<const T*>(c.x_data) + x_at;
    Unpack(*c.x, c.x_data, x_at, k, staging);
    return staging;
  }
  static HWY_INLINE VF Load(const T* p) {
    if constexpr (F.exponent_bits == 2 && F.mantissa_bits == 1) {  // float4e2m1: its 16 values looked up
      return Float4E2M1LookedUp(hn::And(LoadWide(p), hn::Set(DI(), 15)));
    } else {
#ifdef QDQ_F16C
      // 16M codes to float32 per-axis-last, 2 threads (AVX2): e4m3fn 7.5-7.6 -> 5.6 ms, e5m2
      // 7.9 -> 5.0-5.1, e4m3fnuz 7.5-7.6 -> 5.4-5.5.
      if constexpr (kDecodesThroughFloat16<F>) return DecodeThroughFloat16<F>(p);
#endif
      return Decode<F>(LoadWide(p));
    }
  }
};

// Quark's float16 and bfloat16 x: widened exactly, the zero point subtracted in float32.
template <ElementType kX>
struct HalfFloatInput {
  static constexpr bool kPacked = false;
  static constexpr bool kSubtractsZeroPoint = true;
  static constexpr bool kOnlyDefaultNaNs = false;  // NaN payloads are widened as they are
  static constexpr bool kHasNaN = true;
  using T = uint16_t;
  static HWY_INLINE VF Load(const T* p) { return XInput<kX>::Load(p); }
};

// int32 and uint32 x: x - zp is formed in int32 lanes and rounded once to float32 (one int32 ->
// float32 conversion, to nearest even) wherever no lane of the vector can leave int32 (LoadMinus'
// test); a vector with such a lane (a difference of 2^31 or more either way, rare) takes the exact
// float64 difference, rounded once the same way. Either way f32(x - zp), as the reference computes
// it in int64. The zero point arrives as int32 lanes (from Operands::wide_zero_point), not as
// float32 values.
template <bool kSigned>
struct WordInput {
  static constexpr bool kPacked = false;
  static constexpr bool kSubtractsZeroPoint = true;
  static constexpr bool kOnlyDefaultNaNs = true;  // no NaN
  static constexpr bool kHasNaN = false;
  using T = int32_t;
  static HWY_INLINE VF LoadMinus(const T* p, VI zero_point) {
    const DI di;
    const VI words = hn::LoadU(di, p);
    const VI difference = hn::Sub(words, zero_point);  // wraps where it leaves int32; then not used
    // A lane whose sign bit is set here leaves int32. Signed: the subtraction overflowed (the
    // operands' signs differ and the result's differs from x's). Unsigned: the borrow out of bit
    // 31, (~x & zp) | (~(x ^ zp) & d), differs from the difference's sign (a true x - zp in
    // [0, 2^31) borrows nothing and reads non-negative; one in [-2^31, 0) borrows and reads
    // negative).
    VI leaves_int32;
    if constexpr (kSigned) {
      leaves_int32 = hn::And(hn::Xor(words, zero_point), hn::Xor(words, difference));
    } else {
      const VI borrow = hn::Or(hn::AndNot(words, zero_point), hn::AndNot(hn::Xor(words, zero_point), difference));
      leaves_int32 = hn::Xor(borrow, difference);
    }
    if (HWY_LIKELY(hn::AllFalse(di, hn::Lt(leaves_int32, hn::Zero(di))))) return hn::ConvertTo(DF(), difference);
    return DifferenceInDouble(words, zero_point);
  }
  // x - 0: int32 words convert directly; uint32 words as 2^16 * high + low, both halves exact in
  // float32 and their sum rounded once.
  static HWY_INLINE VF Load(const T* p) {
    const DF df;
    const DI di;
    if constexpr (kSigned) {
      return hn::ConvertTo(df, hn::LoadU(di, p));
    } else {
      const VI words = hn::LoadU(di, p);
      const VF high = hn::ConvertTo(df, hn::BitCast(di, hn::ShiftRight<16>(hn::BitCast(DU(), words))));
      const VF low = hn::ConvertTo(df, hn::And(words, hn::Set(di, 0xFFFF)));
      return hn::MulAdd(high, hn::Set(df, 65536.0f), low);
    }
  }

 private:
  // x - zp exactly in float64 lanes, rounded once to float32.
  static HWY_INLINE VF DifferenceInDouble(VI words, VI zero_point) {
    const DF df;
#if HWY_TARGET != HWY_SCALAR && !HWY_HAVE_SCALABLE
    const hn::Half<DI> dh;
    const hn::Half<DF> dfh;
    const VD low = hn::Sub(WordsToDouble<kSigned>(hn::LowerHalf(dh, words)), WordsToDouble<kSigned>(hn::LowerHalf(dh, zero_point)));
    const VD high = hn::Sub(WordsToDouble<kSigned>(hn::UpperHalf(dh, words)), WordsToDouble<kSigned>(hn::UpperHalf(dh, zero_point)));
    return hn::Combine(df, hn::DemoteTo(dfh, high), hn::DemoteTo(dfh, low));
#else
    const DD dd;
    const DFD df32;
    const DID dh;
    const size_t N = hn::Lanes(df);
    const size_t half = hn::Lanes(dd);
    HWY_ALIGN int32_t x_words[64];
    HWY_ALIGN int32_t zp_words[64];
    HWY_ALIGN float rounded[64];
    hn::Store(words, DI(), x_words);
    hn::Store(zero_point, DI(), zp_words);
    for (size_t j = 0; j < N; j += half) {
      const VD v = hn::Sub(WordsToDouble<kSigned>(hn::Load(dh, x_words + j)), WordsToDouble<kSigned>(hn::Load(dh, zp_words + j)));
      hn::StoreU(hn::DemoteTo(df32, v), df32, rounded + j);
    }
    return hn::Load(df, rounded);
#endif
  }
};

// DequantizeLinear's product (x - zp) * s; NaN x NaN: the scale's NaN, as numpy (and so the
// reference) computes it, quieted as any arithmetic on it would.
HWY_INLINE VF DequantizedProduct(VF v, VF s) {
  const DF df;
  const VF quiet_scale = hn::Or(s, hn::BitCast(df, hn::Set(DI(), 0x0040'0000)));
  return hn::IfThenElse(hn::IsNaN(s), quiet_scale, hn::Mul(v, s));
}

// DequantizedProduct for x of an Input, without its select where the CPU's own NaN rules give the
// same (the select was three of the nine vector operations of 64K DQ uint8 -> float32
// per-axis-last, a third of its time):
// - x without NaN (integers, float4e2m1): only the scale can be NaN, and the multiplication
//   returns it quieted on x86 and 64-bit Arm (IEEE 754's recommended propagation of a single NaN
//   operand, which both implement; Arm outside its default-NaN mode, which Linux leaves off there;
//   32-bit NEON always returns the default NaN).
// - x with NaN, on AVX2 and AVX-512: of two NaN operands x86 returns the first source's, quieted,
//   so the scale goes first. asm spells that order: the compiler may swap a product's operands.
// Elsewhere the select stays (RISC-V returns the canonical NaN; Arm prefers a signalling one).
template <class Input>
HWY_INLINE VF ScaledProduct(VF v, VF s) {
#if HWY_ARCH_X86 || HWY_ARCH_ARM_A64
  if constexpr (!Input::kHasNaN) return hn::Mul(v, s);
#endif
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2 && defined(__GNUC__)
  VF product;
  // s (%1) is the first source in either assembler dialect (AT&T | Intel).
  asm("vmulps {%2, %1, %0|%0, %1, %2}" : "=v"(product.raw) : "v"(s.raw), "v"(v.raw));
  return product;
#else
  return DequantizedProduct(v, s);
#endif
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// One vector of float32 results rounded once to float16 or bfloat16, as StoreAsOutput stores them:
// the 16 codes in order.
template <ElementType kOut, bool kMayBeNaN>
HWY_INLINE __m256i HalfwordsOf(VF product) {
  static_assert(kOut == ElementType::kFloat16 || kOut == ElementType::kBfloat16);
  if constexpr (kOut == ElementType::kFloat16) {
    return ToHalf(product);
  } else {
    // Rounded in the high halves and those picked by one word permute, in place of Bfloat16Bits'
    // shift and the narrowing vpmovdw (two micro-ops on Intel).
    const DU du;
    VU high = Bfloat16BitsInHighHalf(product);
    if constexpr (kMayBeNaN) {  // Bfloat16Bits' NaN: the canonical quiet NaN with the sign
      const VU nan = hn::Or(hn::And(hn::BitCast(du, product), hn::Set(du, 0x8000'0000u)), hn::Set(du, 0x7FC0'0000u));
      high = hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(product)), nan, high);
    }
    // Word 2i + 1 (lane i's high half) to word i, for i < 16: 32-bit element j holds the indices
    // of words 2j and 2j + 1, 4j + 1 and 4j + 3.
    const __m512i odd_words = _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0x001F001D, 0x001B0019, 0x00170015, 0x00130011,
                                               0x000F000D, 0x000B0009, 0x00070005, 0x00030001);
    return _mm512_castsi512_si256(_mm512_permutexvar_epi16(odd_words, high.raw));
  }
}
#endif

// One vector of float32 results rounded once to the output type and stored. kMayBeNaN false: the
// caller knows no lane is NaN (bfloat16 outputs then round without the NaN select).
template <ElementType kOut, bool kMayBeNaN = true, typename YT>
HWY_INLINE void StoreAsOutput(VF product, YT* destination) {
  if constexpr (kOut == ElementType::kFloat32) {
    hn::StoreU(product, DF(), destination);
  } else if constexpr (kOut == ElementType::kFloat16) {
#ifdef QDQ_F16C
    StoreHalf(ToHalf(product), destination);
#else
    StoreWords16(Encode<kFloat16Format>(product, false), destination);
#endif
  } else {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(destination), HalfwordsOf<kOut, kMayBeNaN>(product));
#else
    if constexpr (kMayBeNaN) {
      StoreWords16(Bfloat16Bits(product), destination);
    } else {
      StoreWords16(hn::BitCast(DI(), Bfloat16BitsOfNonNaN(product)), destination);
    }
#endif
  }
}

// DequantizeUniform's products with a scale that is not NaN.
template <class Input, ElementType kOut, bool kMayBeNaN, typename YT>
HWY_INLINE void DequantizeUniformProducts(const typename Input::T* x, size_t count, VF s, VF zp, bool subtract,
                                          YT* out) {
  const size_t N = hn::Lanes(DF());
  if (subtract) {
    for (size_t i = 0; i < count; i += N) {
      StoreAsOutput<kOut, kMayBeNaN>(hn::Mul(hn::Sub(Input::Load(x + i), zp), s), out + i);
    }
  } else {
    for (size_t i = 0; i < count; i += N) StoreAsOutput<kOut, kMayBeNaN>(hn::Mul(Input::Load(x + i), s), out + i);
  }
}

// 4- and 2-bit codes (staged one per byte) and float4e2m1 codes to 16-bit results, where AVX-512
// has a word permute: a stretch with one scale and zero point has at most 16 distinct results, so
// they are computed once, as one vector, and each 32 codes look theirs up with one vpermw. A
// code's low four bits (its staged byte & 15: signed codes are staged sign-extended) index the
// table; lane j holds the result of the staged value whose low four bits are j.
template <class Input>
constexpr int kSixteenCodeBits = 0;  // 0: the input does not look its results up
template <int kBits, bool kSigned>
constexpr int kSixteenCodeBits<IntegerInput<kBits, kSigned>> = kBits < 8 ? kBits : 0;
template <>  // inline: an explicit specialization is not, and clang defines it in every TU
inline constexpr int kSixteenCodeBits<FloatInput<kE2M1>> = 4;

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
template <class Input, ElementType kOut>
constexpr bool kLooksUpSixteenResults = kSixteenCodeBits<Input> != 0 && kOut != ElementType::kFloat32;

// Lane j: the staged value whose low four bits are j (signed codes sign-extended from their width;
// lanes no staged value indexes hold some code's value and are never read).
template <class Input>
struct SixteenCodes {
  using T = typename Input::T;
  static constexpr std::array<T, 16> Make() {
    std::array<T, 16> codes{};
    constexpr int kBits = kSixteenCodeBits<Input>;
    for (int j = 0; j < 16; ++j) {
      const int code = j & ((1 << kBits) - 1);
      const bool negative = std::is_signed_v<T> && (code >> (kBits - 1)) != 0;
      codes[static_cast<size_t>(j)] = static_cast<T>(negative ? code - (1 << kBits) : code);
    }
    return codes;
  }
  alignas(64) static constexpr std::array<T, 16> kValues = Make();
};

// The 16 results of a stretch with this scale and zero point, by DequantizeUniform's arithmetic
// (its NaN-scale product, and its bfloat16 rounding without the NaN select where it skips it).
template <class Input, ElementType kOut>
HWY_INLINE __m512i SixteenResults(float scale, VF zp, bool subtract) {
  const VF v = Input::Load(SixteenCodes<Input>::kValues.data());
  const VF differences = subtract ? hn::Sub(v, zp) : v;
  const VF s = hn::Set(DF(), scale);
  __m256i results;
  if (std::isnan(scale)) {
    results = HalfwordsOf<kOut, true>(DequantizedProduct(differences, s));
  } else if (kOut == ElementType::kBfloat16 && Input::kOnlyDefaultNaNs && std::isfinite(scale)) {
    results = HalfwordsOf<kOut, false>(hn::Mul(differences, s));
  } else {
    results = HalfwordsOf<kOut, true>(hn::Mul(differences, s));
  }
  return _mm512_castsi256_si512(results);  // upper lanes never indexed
}

// Elements [0, count) of x (count a multiple of 32) with one scale and zero point.
template <class Input, ElementType kOut, typename YT>
HWY_INLINE void DequantizeSixteenCodes(const typename Input::T* x, size_t count, float scale, VF zp, bool subtract,
                                       YT* out) {
  const __m512i results = SixteenResults<Input, kOut>(scale, zp, subtract);
  const __m512i low_bits = _mm512_set1_epi16(15);
  for (size_t i = 0; i < count; i += 32) {
    const __m512i codes = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)));
    _mm512_storeu_si512(out + i, _mm512_permutexvar_epi16(_mm512_and_si512(codes, low_bits), results));
  }
}
#else
template <class Input, ElementType kOut>
constexpr bool kLooksUpSixteenResults = false;
#endif

// Whole vectors [0, count) of x with one scale and zero point: the hot loop of per-tensor and
// per-block plans. The scale's NaN test of DequantizedProduct is made once here: a NaN scale (the
// only case where the product's NaN could differ) takes DequantizedProduct per vector. A finite
// scale times x whose NaNs load as float32's default quiet NaN, 0x7FC0'0000 with a sign
// (kOnlyDefaultNaNs: integers and float4e2m1 have none, float8 codes decode to it; zero points
// alike), gives products whose NaNs are that NaN too: x's own, or the multiplication's for
// inf x 0 (0xFFC0'0000). Its low 16 bits are zero, so bfloat16 outputs round it without their
// NaN select: adding 0x7FFF carries out of none of them, and the top half is the NaN
// Bfloat16Bits would write (16M, 2 threads, per-axis on the first axis: int4 -> bfloat16
// 1.88-1.91 -> 1.72 ms, int8 1.50-1.52 -> 1.30-1.37; float8e4m3fn -> bfloat16 on AVX2 8.5-8.6 ->
// 7.0-7.3, e5m2 7.6-7.7 -> 6.2-6.4).
template <class Input, ElementType kOut, typename YT>
HWY_INLINE void DequantizeUniform(const typename Input::T* x, size_t count, float scale, VF zp, bool subtract, YT* out) {
  const DF df;
  const size_t N = hn::Lanes(df);
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if constexpr (kLooksUpSixteenResults<Input, kOut>) {
    if (count >= 32) {  // (a last 16 alone computes its own)
      const size_t looked_up = count - count % 32;
      DequantizeSixteenCodes<Input, kOut>(x, looked_up, scale, zp, subtract, out);
      if (looked_up == count) return;
      x += looked_up;
      out += looked_up;
      count -= looked_up;
    }
  }
#endif
  const VF s = hn::Set(df, scale);
  if (std::isnan(scale)) {
    for (size_t i = 0; i < count; i += N) {
      const VF v = Input::Load(x + i);
      StoreAsOutput<kOut>(DequantizedProduct(subtract ? hn::Sub(v, zp) : v, s), out + i);
    }
    return;
  }
  if constexpr (kOut == ElementType::kBfloat16 && Input::kOnlyDefaultNaNs) {
    if (std::isfinite(scale)) return DequantizeUniformProducts<Input, kOut, false>(x, count, s, zp, subtract, out);
  }
  DequantizeUniformProducts<Input, kOut, true>(x, count, s, zp, subtract, out);
}

// One block of a run with constant operands (per-tensor) or one scale and zero point per
// whole-vector block (per_block): DequantizeUniform over each stretch of equal operands (blocks
// of up to 8 vectors that start on the block's first element: one loop a block at a time), the
// partial last vector through zero-padded copies.
template <class Input, ElementType kOut, typename YT>
void DequantizeUniformBlock(const Context& c, const exec::Run& run, uint64_t offset, size_t k, const Operands& o,
                            const typename Input::T* x, bool subtract, YT* out) {
  const DF df;
  const size_t N = hn::Lanes(df);
  const size_t whole = k - k % N;
  const bool has_zp = c.zero_point != nullptr;
  auto scale_of = [&](uint64_t b) { return o.per_block ? o.scale.block[b] : o.scale.constant; };
  auto zero_point_of = [&](uint64_t b) HWY_ATTR {
    return hn::Set(df, o.per_block && has_zp ? o.zero_point.block[b] : o.zero_point.constant);
  };
  uint64_t b = 0;
  if (o.per_block && run.block <= 8 * N && (run.block_phase + offset) % run.block == 0 && whole % run.block == 0) {
    // Short whole blocks of vectors (int4's and MX's 32) a block at a time in one loop, as
    // FakeQuantUniformBlock: a DequantizeUniform call per block (its scale tests, the stretch
    // walk's bounds) cost as much as the block's few multiplications (calling DequantizeUniform
    // from this loop measured 10-20% slower to bfloat16 at 64K than one finiteness test). A finite
    // scale's products are DequantizeUniformProducts'; a NaN or infinite one takes
    // DequantizeUniform's own choice. Sub-byte codes to 16-bit floats on AVX-512 look their 16
    // results up (DequantizeSixteenCodes) in blocks of whole 32s.
    constexpr bool kMayBeNaN = !(kOut == ElementType::kBfloat16 && Input::kOnlyDefaultNaNs);
    const size_t block = static_cast<size_t>(run.block);
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    if constexpr (kLooksUpSixteenResults<Input, kOut>) {
      if (block % 32 == 0) {
        for (size_t i = 0; i < whole; i += block, ++b) {
          DequantizeSixteenCodes<Input, kOut>(x + i, block, o.scale.block[b], zero_point_of(b), subtract, out + i);
        }
      }
    }
#endif
    for (size_t i = b * block; i < whole; i += block, ++b) {
      const float scale = o.scale.block[b];
      if (std::isfinite(scale)) {
        DequantizeUniformProducts<Input, kOut, kMayBeNaN>(x + i, block, hn::Set(df, scale), zero_point_of(b), subtract,
                                                          out + i);
      } else {
        DequantizeUniform<Input, kOut>(x + i, block, scale, zero_point_of(b), subtract, out + i);
      }
    }
  } else {
    b = ForEachUniformStretch(run, offset, whole, o.per_block, [&](uint64_t block, size_t i, size_t count) HWY_ATTR {
      DequantizeUniform<Input, kOut>(x + i, count, scale_of(block), zero_point_of(block), subtract, out + i);
    });
  }
  if (whole < k) {
    HWY_ALIGN typename Input::T x_tail[64];
    HWY_ALIGN YT out_tail[64];
    DequantizeUniform<Input, kOut>(StageTail(x, whole, k, x_tail), N, scale_of(b), zero_point_of(b), subtract, out_tail);
    std::memcpy(out + whole, out_tail, (k - whole) * sizeof(YT));
  }
}

// One block of an int32 or uint32 x (WordInput), its zero points as words: per-tensor and per-block
// operands a stretch at a time (ForEachUniformStretch; a NaN scale, the one case whose product
// needs DequantizedProduct, tested once a stretch), per-element ones a vector at a time, the
// partial last vector through zero-padded copies.
template <class Input, ElementType kOut, typename YT>
void DequantizeWordsBlock(const exec::Run& run, uint64_t offset, size_t k, const Operands& o, const int32_t* x,
                          bool subtract, YT* out) {
  const DF df;
  const DI di;
  const size_t N = hn::Lanes(df);
  const OperandValues<int32_t>& zp = o.wide_zero_point;
  auto difference = [&](const int32_t* xp, VI z) HWY_ATTR { return subtract ? Input::LoadMinus(xp, z) : Input::Load(xp); };
  const int32_t* zp_values = subtract ? zp.values : nullptr;
  if (o.per_block || (o.scale.values == nullptr && zp_values == nullptr)) {
    const size_t whole = k - k % N;
    auto scale_of = [&](uint64_t b) { return o.per_block ? o.scale.block[b] : o.scale.constant; };
    auto zero_point_of = [&](uint64_t b) HWY_ATTR {
      return hn::Set(di, !subtract ? 0 : o.per_block ? zp.block[b] : zp.constant);
    };
    auto stretch = [&](const int32_t* xp, size_t count, float scale, VI z, YT* destination) HWY_ATTR {
      const VF s = hn::Set(df, scale);
      if (std::isnan(scale)) {
        for (size_t j = 0; j < count; j += N) StoreAsOutput<kOut>(DequantizedProduct(difference(xp + j, z), s), destination + j);
      } else {
        for (size_t j = 0; j < count; j += N) StoreAsOutput<kOut>(hn::Mul(difference(xp + j, z), s), destination + j);
      }
    };
    const uint64_t b = ForEachUniformStretch(run, offset, whole, o.per_block, [&](uint64_t block, size_t i, size_t count) HWY_ATTR {
      stretch(x + i, count, scale_of(block), zero_point_of(block), out + i);
    });
    if (whole < k) {
      HWY_ALIGN int32_t x_tail[64];
      HWY_ALIGN YT out_tail[64];
      stretch(StageTail(x, whole, k, x_tail), N, scale_of(b), zero_point_of(b), out_tail);
      std::memcpy(out + whole, out_tail, (k - whole) * sizeof(YT));
    }
    return;
  }
  const float* sp = o.scale.values;
  const VF scale_constant = hn::Set(df, o.scale.constant);
  const VI zp_constant = hn::Set(di, subtract ? zp.constant : 0);
  auto body = [&](const int32_t* xp, const float* scales, const int32_t* zps, YT* destination) HWY_ATTR {
    const VF v = difference(xp, zps ? hn::LoadU(di, zps) : zp_constant);
    StoreAsOutput<kOut>(ScaledProduct<Input>(v, scales ? hn::LoadU(df, scales) : scale_constant), destination);
  };
  size_t i = 0;
  for (; i + N <= k; i += N) body(x + i, sp ? sp + i : nullptr, zp_values ? zp_values + i : nullptr, out + i);
  if (i < k) {
    HWY_ALIGN int32_t x_tail[64];
    HWY_ALIGN float scale_tail[64];
    HWY_ALIGN int32_t zp_tail[64];
    HWY_ALIGN YT out_tail[64];
    body(StageTail(x, i, k, x_tail), sp ? StageTail(sp, i, k, scale_tail) : nullptr,
         zp_values ? StageTail(zp_values, i, k, zp_tail) : nullptr, out_tail);
    std::memcpy(out + i, out_tail, (k - i) * sizeof(YT));
  }
}

// The inputs whose per-element zero points DequantizeRun reads as codes (ZeroPointLanes): integer
// codes of 2 to 16 bits (ZeroPointCodesInLoop).
template <class Input>
constexpr bool kDequantizesWithZeroPointCodes = false;
template <int kBits, bool kSigned>
constexpr bool kDequantizesWithZeroPointCodes<IntegerInput<kBits, kSigned>> = true;

// The inputs that take their zero points as words (WordInput, DequantizeWordsBlock).
template <class Input>
constexpr bool kWordZeroPoint = false;
template <bool kSigned>
constexpr bool kWordZeroPoint<WordInput<kSigned>> = true;

// Elements [0, k) of a per-element dequantize block whose zero points are codes of kKind: the
// codes widened and converted in lanes (x - zp is exact in float32 for these integers), the
// partial last vector through zero-padded copies.
template <class Input, ElementType kOut, ZeroPointCodes kKind, typename YT>
void DequantizeWithZeroPointCodes(const typename Input::T* x, const float* scales, VF scale_constant,
                                  const uint8_t* codes, size_t k, YT* out) {
  using XT = typename Input::T;
  const DF df;
  const size_t N = hn::Lanes(df);
  auto body = [&](const XT* xp, const float* sp, const uint8_t* row, size_t j, YT* destination) HWY_ATTR {
    const VF zp = hn::ConvertTo(df, ZeroPointLanes<Input::kSignedCodes, kKind>(row, j));
    const VF v = hn::Sub(Input::Load(xp), zp);
    StoreAsOutput<kOut>(ScaledProduct<Input>(v, sp ? hn::LoadU(df, sp) : scale_constant), destination);
  };
  size_t i = 0;
  for (; i + N <= k; i += N) body(x + i, scales ? scales + i : nullptr, codes, i, out + i);
  if (i < k) {
    HWY_ALIGN XT x_tail[64];
    HWY_ALIGN float scale_tail[64];
    HWY_ALIGN uint8_t code_tail[128];
    HWY_ALIGN YT out_tail[64];
    body(StageTail(x, i, k, x_tail), scales ? StageTail(scales, i, k, scale_tail) : nullptr,
         StageCodeTail<kKind>(codes, i, k, code_tail), 0, out_tail);
    std::memcpy(out + i, out_tail, (k - i) * sizeof(YT));
  }
}

// Whether the k values at p are all finite (a block's per-element scales): their magnitudes' bits,
// as int32, at most the largest finite float's, 0x7F7F'FFFF. p may be the caller's float32 scale
// tensor at any address (the C ABI takes any pointer), so nothing here loads it as a float.
inline bool AllFinite(const float* p, size_t k) {
  const DI di;
  const size_t N = hn::Lanes(di);
  const auto* bits = reinterpret_cast<const int32_t*>(p);
  VI largest = hn::Zero(di);
  size_t i = 0;
  for (; i + N <= k; i += N) largest = hn::Max(largest, hn::And(hn::LoadU(di, bits + i), hn::Set(di, 0x7FFF'FFFF)));
  for (; i < k; ++i) {
    float value;
    std::memcpy(&value, p + i, sizeof value);  // the caller's scale tensor may sit off float's alignment
    if (!std::isfinite(value)) return false;
  }
  return hn::AllFalse(di, hn::Gt(largest, hn::Set(di, 0x7F7F'FFFF)));
}

template <class Input, ElementType kOut>
void DequantizeRun(const Context& c, const exec::Run& run, void* y) {
  using XT = typename Input::T;
  using YT = std::conditional_t<kOut == ElementType::kFloat32, float, uint16_t>;
  const DF df;
  const size_t N = hn::Lanes(df);
  HWY_ALIGN uint8_t unpacked[kPadded];
  HWY_ALIGN XT x_tail[64];
  HWY_ALIGN float scale_tail[64];
  HWY_ALIGN float zp_tail[64];
  HWY_ALIGN YT out_tail[64];
  HWY_ALIGN YT staged[kPadded];  // the block, when streamed out
  Operands o;
  const bool subtract = Input::kSubtractsZeroPoint && c.apply_zero_point;
  const bool zero_point_codes = kDequantizesWithZeroPointCodes<Input> && subtract;
  // A run with one scale and zero point, x read in place and y written in place: the whole run in
  // one stretch. Its blocks of kBlock elements only cost their setup here (LoadOperands, the
  // stretch walk, the call): 10% of 64K DQ uint8 -> float32 per-tensor.
  if constexpr (!Input::kPacked && !kWordZeroPoint<Input>) {
    if (!c.stream_output && run.block == 0 && !run.scale_varies && (c.zero_point == nullptr || !run.zero_point_varies)) {
      const Plan& plan = *c.plan;  // the two constants directly: LoadOperands' setup was 7% of rows of 1024
      o.per_block = false;
      o.scale.constant = LoadOne<float>(*c.scale, plan.scale.data, run.scale_index, plan.scale.layout);
      o.zero_point.constant = c.zero_point == nullptr ? 0.0f
                                                      : LoadOne<float>(*c.zero_point, plan.zero_point.data,
                                                                       run.zero_point_index, plan.zero_point.layout);
      DequantizeUniformBlock<Input, kOut>(c, run, 0, static_cast<size_t>(run.count), o,
                                          static_cast<const XT*>(c.x_data) + (run.x_index - c.x_first), subtract,
                                          static_cast<YT*>(y) + (run.x_index - c.y_first));
      return;
    }
  }
  for (uint64_t offset = 0; offset < run.count; offset += kBlock) {
    const size_t k = static_cast<size_t>(std::min<uint64_t>(kBlock, run.count - offset));
    const uint64_t at = run.x_index + offset;
    const uint64_t x_at = at - c.x_first;
    LoadOperands(c, run, offset, k, &o, zero_point_codes, !kWordZeroPoint<Input>);
    const XT* x;
    if constexpr (Input::kPacked) {
      x = Input::Stage(c, x_at, k, unpacked);
    } else {
      x = static_cast<const XT*>(c.x_data) + x_at;
    }
    YT* out = c.stream_output ? staged : static_cast<YT*>(y) + (at - c.y_first);
    if constexpr (kWordZeroPoint<Input>) {
      DequantizeWordsBlock<Input, kOut>(run, offset, k, o, x, c.zero_point != nullptr && c.apply_zero_point, out);
      if (c.stream_output) c.y_stream->Write(staged, k * sizeof(YT), static_cast<YT*>(y) + (at - c.y_first));
      continue;
    }
    const VF scale_constant = hn::Set(df, o.scale.constant);
    const VF zp_constant = hn::Set(df, o.zero_point.constant);
    auto compute = [&](const XT* xp, VF s, VF zp, YT* destination) HWY_ATTR {
      VF v = Input::Load(xp);
      if (subtract) v = hn::Sub(v, zp);
      StoreAsOutput<kOut>(ScaledProduct<Input>(v, s), destination);
    };
    auto body = [&](const XT* xp, const float* sp, const float* zpp, YT* destination) HWY_ATTR {
      compute(xp, sp ? hn::LoadU(df, sp) : scale_constant, zpp ? hn::LoadU(df, zpp) : zp_constant, destination);
    };
    size_t i = 0;
    if (o.zero_point_codes != nullptr) {  // only where kDequantizesWithZeroPointCodes asked for them
      if constexpr (kDequantizesWithZeroPointCodes<Input>) {
        WithZeroPointCodes(c, [&]<ZeroPointCodes kKind>() HWY_ATTR {
          DequantizeWithZeroPointCodes<Input, kOut, kKind>(x, o.scale.values, scale_constant, o.zero_point_codes, k, out);
        });
      }
    } else if (o.short_blocks) {
      // Blocks shorter than a vector (per-axis over rows of 4, DirectML's [M, 1]): each vector's
      // scales and zero points permuted from the blocks' values in registers. Written out per
      // element first, they cost two more stores per vector: 64K DQ uint8 -> float32 over rows of
      // 4 with a zero point took 14 us against 4 us per-tensor.
      ShortBlockLanes<DF> lanes_of(df, static_cast<size_t>(run.block), o.short_block_phase);
      const float* zero_points = subtract && c.zero_point != nullptr ? o.zero_point.block : nullptr;
      auto vector = [&](const XT* xp, YT* destination) HWY_ATTR {
        compute(xp, lanes_of.Values(o.scale.block), zero_points ? lanes_of.Values(zero_points) : zp_constant,
                destination);
        lanes_of.Next();
      };
      for (; i + N <= k; i += N) vector(x + i, out + i);
      if (i < k) {
        vector(StageTail(x, i, k, x_tail), out_tail);
        std::memcpy(out + i, out_tail, (k - i) * sizeof(YT));
      }
    } else if (o.per_block || (o.scale.values == nullptr && o.zero_point.values == nullptr)) {
      DequantizeUniformBlock<Input, kOut>(c, run, offset, k, o, x, subtract, out);
    } else {
      const float* sp = o.scale.values;
      const float* zpp = o.zero_point.values;
      // bfloat16 outputs from x whose NaNs are the default one (kOnlyDefaultNaNs), every scale of
      // the block finite: no NaN scale, so the product needs no DequantizedProduct select, and
      // bfloat16 rounds without its NaN select (as DequantizeUniform). 16M per-axis-last, 2
      // threads: int8 -> bfloat16 1.61-1.64 -> 1.38-1.41 ms, int4 1.95-1.98 -> 1.70-1.78,
      // float4e2m1 1.84 -> 1.67-1.71. (Other outputs measured up to 25% slower this way, as the
      // compiler laid the loops out, so they keep the loop below.)
      if constexpr (kOut == ElementType::kBfloat16 && Input::kOnlyDefaultNaNs) {
        const bool finite = sp == nullptr ? std::isfinite(o.scale.constant)
                                          : (c.converted_scale != nullptr && c.converted_scale->HoldsOnlyFinite(sp, AllFinite)) ||
                                                AllFinite(sp, k);
        if (finite) {
          for (; i + N <= k; i += N) {
            VF v = Input::Load(x + i);
            if (subtract) v = hn::Sub(v, zpp ? hn::LoadU(df, zpp + i) : zp_constant);
            StoreAsOutput<kOut, false>(hn::Mul(v, sp ? hn::LoadU(df, sp + i) : scale_constant), out + i);
          }
        }
      }
      for (; i + N <= k; i += N) body(x + i, sp ? sp + i : nullptr, zpp ? zpp + i : nullptr, out + i);
      if (i < k) {
        body(StageTail(x, i, k, x_tail), sp ? StageTail(sp, i, k, scale_tail) : nullptr,
             zpp ? StageTail(zpp, i, k, zp_tail) : nullptr, out_tail);
        std::memcpy(out + i, out_tail, (k - i) * sizeof(YT));
      }
    }
    if (c.stream_output) c.y_stream->Write(staged, k * sizeof(YT), static_cast<YT*>(y) + (at - c.y_first));
  }
}

// --- Fake quantization: DequantizeLinear(QuantizeLinear(x)) without the codes leaving lanes ------

// Decode<F>(Encode<F>(v, saturate)) computed on the value, without forming the code: the same
// round-to-nearest-even (normal magnitudes on the bit pattern, the carry moving into the
// exponent; subnormals by adding and subtracting 1.5 * 2^k, k the subnormal spacing's exponent
// plus 23), and Encode's spellings as Decode reads them back: past the rounding midpoint above the
// largest value (unless clamped first) infinity or the quiet NaN, NaN as the quiet NaN with x's sign,
// FNUZ's one NaN code (0x80) as the negative quiet NaN, no -0 where the format has none, and
// float4's NaN as +6.
template <const Format& F>
HWY_INLINE VF RoundThroughFormat(VF v, bool saturate) {
  const DF df;
  const DU du;
  constexpr int m = F.mantissa_bits;
  constexpr int shift = 23 - m;
  constexpr float kLargest = magnitude_value(F, F.max_code);
  const bool clamps = saturate || F.nan_style == NanStyle::kNone;
  VF magnitude = hn::Abs(v);
  if (clamps) magnitude = hn::Min(magnitude, hn::Set(df, kLargest));  // NaN lanes are replaced below
  const VU bits = hn::BitCast(du, magnitude);
  const VU lsb = hn::And(hn::ShiftRight<shift>(bits), hn::Set(du, 1u));
  const VU normal = hn::AndNot(hn::Set(du, low_mask(shift)), hn::Add(bits, hn::Add(lsb, hn::Set(du, low_mask(shift - 1)))));
  constexpr float kSubnormalMagic = 1.5f * exp2f_exact(23 + 1 - F.bias - m);
  const VF subnormal = hn::Sub(hn::Add(magnitude, hn::Set(df, kSubnormalMagic)), hn::Set(df, kSubnormalMagic));
  VF rounded = hn::IfThenElse(hn::Lt(magnitude, hn::Set(df, exp2f_exact(1 - F.bias))), subnormal, hn::BitCast(df, normal));
  const VF quiet_nan = hn::BitCast(df, hn::Set(du, 0x7FC0'0000u));
  auto overflow = hn::Lt(magnitude, hn::Zero(df));  // none yet
  if (!clamps) {
    // Midway between the largest value and the next step; a tie rounds to the even neighbour.
    constexpr float kLimit = (kLargest + magnitude_value(F, F.max_code + 1)) / 2;
    overflow = (F.max_code & 1) == 0 ? hn::Gt(magnitude, hn::Set(df, kLimit)) : hn::Ge(magnitude, hn::Set(df, kLimit));
    const VF overflowed = F.has_infinity ? hn::BitCast(df, hn::Set(du, 0x7F80'0000u)) : quiet_nan;
    rounded = hn::IfThenElse(overflow, overflowed, rounded);
  }
  const auto is_nan = hn::IsNaN(v);
  if constexpr (F.nan_style != NanStyle::kNone) rounded = hn::IfThenElse(is_nan, quiet_nan, rounded);
  const VU sign = hn::And(hn::BitCast(du, v), hn::Set(du, 0x8000'0000u));
  VF value;
  if constexpr (F.has_negative_zero) {
    value = hn::Or(rounded, hn::BitCast(df, sign));
  } else {  // the sign goes only on nonzero magnitudes
    const auto nonzero = hn::RebindMask(df, hn::Ne(hn::BitCast(du, rounded), hn::Zero(du)));
    value = hn::Or(rounded, hn::IfThenElseZero(nonzero, hn::BitCast(df, sign)));
  }
  if constexpr (F.nan_style == NanStyle::kNegativeZero) {
    value = hn::IfThenElse(hn::Or(is_nan, overflow), hn::BitCast(df, hn::Set(du, 0xFFC0'0000u)), value);
  } else if constexpr (F.nan_style == NanStyle::kNone) {
    value = hn::IfThenElse(is_nan, hn::Set(df, kLargest), value);
  }
  return value;
}

// The value DequantizeLinear reads back from QuantizeLinear's code of q, without forming the code:
// an integer code minus its zero point; a float code's value (its zero point, required 0 by
// DequantizeLinear, is added where QuantizeLinear adds it and never subtracted).
template <class Output>
HWY_INLINE VF DequantizedCode(const Context& c, VF q, VF zp, const typename Output::Bounds& bounds) {
  if constexpr (Output::kIsInteger) {
    return Output::ValueMinusZeroPoint(q, bounds);
  } else {
    if constexpr (Output::kAddsZero) {
      if (c.apply_zero_point) q = hn::IfThenElse(hn::IsNaN(q), q, hn::Add(q, zp));
    }
    return RoundThroughFormat<Output::kFormat>(q, c.saturate);
  }
}

// A block of float32 results (lanes up to a whole vector past k) to y as its output type, with
// streaming stores when the output is streamed.
void StoreBlock(const Context& c, const float* values, size_t k, void* y, uint64_t y_at);  // kernels.cpp

// Fake-quant of whole vectors [0, count) of x with one scale (divided in float32) and one zero
// point, and the range mask when `mask` is not null: the hot loop of per-tensor and per-block
// plans. Without a mask and with a non-NaN scale (the only case where DequantizedProduct's NaN
// choice matters) the product is a plain multiplication. kByReciprocal (one scale for a whole
// stretch, not per block): the quotient by the scale's reciprocal where QuantizeStretch takes it.
template <class Output, ElementType kX, bool kByReciprocal = false>
HWY_INLINE void FakeQuantUniform(const Context& c, const typename XInput<kX>::T* x, size_t count, float scale, VF zp,
                                 const typename Output::Bounds& bounds, float* out, uint8_t* mask) {
  using RangeMask = std::conditional_t<Output::kIsInteger, IntegerRangeMask, FloatRangeMask>;
  const DF df;
  const size_t N = hn::Lanes(df);
  const VF s = hn::Set(df, scale);
  PrefetchPacer prefetch(c);
  const size_t x_bytes = N * sizeof(typename XInput<kX>::T);  // loaded per vector
  if (mask == nullptr && !std::isnan(scale)) {
    if constexpr (kByReciprocal && kQuantizesByReciprocal<Output>) {
      // As QuantizeStretch: one scale for the stretch, by its reciprocal where that is exact.
      const float r = 1.0f / scale;
      if (c.by_reciprocal && std::isnormal(r)) {
        const VF reciprocal = hn::Set(df, r);
        for (size_t i = 0; i < count; i += N) {
          prefetch.Step(x_bytes);
          const VF value = Output::ValueMinusZeroPointByReciprocal(XInput<kX>::Load(x + i), s, reciprocal, bounds);
          hn::StoreU(hn::Mul(value, s), df, out + i);
        }
        return;
      }
    }
    for (size_t i = 0; i < count; i += N) {
      prefetch.Step(x_bytes);
      hn::StoreU(hn::Mul(DequantizedCode<Output>(c, hn::Div(XInput<kX>::Load(x + i), s), zp, bounds), s), df, out + i);
    }
    return;
  }
  // The mask's stores are bytes, which may alias anything reachable through c: a local copy of
  // the context and bounds keeps the compiler from reloading them after every store.
  const Context local = c;
  const typename Output::Bounds local_bounds = bounds;
  for (size_t i = 0; i < count; i += N) {
    prefetch.Step(x_bytes);
    const VF q = hn::Div(XInput<kX>::Load(x + i), s);
    const VF value = DequantizedCode<Output>(local, q, zp, local_bounds);
    hn::StoreU(DequantizedProduct(value, s), df, out + i);
    if (mask == nullptr) continue;
    if constexpr (Output::kIsInteger) {
      // value is round(clamp(q, lowest - zp, max - zp)); as both bounds are integers, round(q)
      // equals it exactly when round(q) lies within them (IntegerRangeMask's rule); NaN never does.
      StoreLowBytes(hn::IfThenElseZero(hn::RebindMask(DI(), hn::Eq(hn::Round(q), value)), hn::Set(DI(), 1)), mask + i);
    } else {
      StoreLowBytes(RangeMask::Codes(local, q, zp, {}), mask + i);
    }
  }
}

// Elements of block b of a stretch (per_block: the block's own operands; else the constants).
template <class Output, ElementType kX>
HWY_INLINE void FakeQuantStretch(const Context& c, const Operands& o, uint64_t b, const typename XInput<kX>::T* from,
                                 size_t count, VF zp_constant, const typename Output::Bounds& bounds_constant, float* to,
                                 uint8_t* mask) {
  if (!o.per_block) {
    FakeQuantUniform<Output, kX, true>(c, from, count, o.scale.constant, zp_constant, bounds_constant, to, mask);
    return;
  }
  const VF zp = c.zero_point != nullptr ? hn::Set(DF(), o.zero_point.block[b]) : zp_constant;
  FakeQuantUniform<Output, kX>(c, from, count, o.scale.block[b], zp,
                               c.zero_point != nullptr ? Output::MakeBounds(zp) : bounds_constant, to, mask);
}

// One block of a run with constant or per-block operands, divided in float32; the range mask goes
// to `mask` (indexed like out) when it is not null.
template <class Output, ElementType kX>
void FakeQuantUniformBlock(const Context& c, const exec::Run& run, uint64_t offset, size_t k, const Operands& o,
                           const typename XInput<kX>::T* x, VF zp_constant, const typename Output::Bounds& bounds_constant,
                           float* out, uint8_t* mask) {
  const DF df;
  const size_t N = hn::Lanes(df);
  const size_t whole = k - k % N;
  if (o.per_block && mask == nullptr && run.block <= 8 * N && (run.block_phase + offset) % run.block == 0 &&
      whole % run.block == 0) {
    // Short whole blocks of vectors (int4's 32, MX's 32) a block at a time in one loop: the
    // general path's set-up per block (the stretch's bounds, the prefetch cursor, the NaN-scale
    // test's branch) cost as much as the block's divisions.
    const size_t block = static_cast<size_t>(run.block);
    PrefetchPacer prefetch(c);
    const size_t x_bytes = N * sizeof(typename XInput<kX>::T);
    uint64_t b = 0;
    for (size_t i = 0; i < whole; i += block, ++b) {
      const float scale = o.scale.block[b];
      if (std::isnan(scale)) {
        FakeQuantStretch<Output, kX>(c, o, b, x + i, block, zp_constant, bounds_constant, out + i, nullptr);
        continue;
      }
      const VF s = hn::Set(df, scale);
      const VF zp = c.zero_point != nullptr ? hn::Set(df, o.zero_point.block[b]) : zp_constant;
      const typename Output::Bounds bounds = c.zero_point != nullptr ? Output::MakeBounds(zp) : bounds_constant;
      for (size_t v = i; v < i + block; v += N) {
        prefetch.Step(x_bytes);
        hn::StoreU(hn::Mul(DequantizedCode<Output>(c, hn::Div(XInput<kX>::Load(x + v), s), zp, bounds), s), df, out + v);
      }
    }
    if (whole < k) {
      HWY_ALIGN typename XInput<kX>::T x_tail[64];
      HWY_ALIGN float out_tail[64];
      FakeQuantStretch<Output, kX>(c, o, b, StageTail(x, whole, k, x_tail), N, zp_constant, bounds_constant, out_tail,
                                   nullptr);
      std::memcpy(out + whole, out_tail, (k - whole) * sizeof(float));
    }
    return;
  }
  const uint64_t b = ForEachUniformStretch(run, offset, whole, o.per_block, [&](uint64_t block, size_t i, size_t count) HWY_ATTR {
    FakeQuantStretch<Output, kX>(c, o, block, x + i, count, zp_constant, bounds_constant, out + i,
                                 mask != nullptr ? mask + i : nullptr);
  });
  if (whole < k) {
    HWY_ALIGN typename XInput<kX>::T x_tail[64];
    HWY_ALIGN float out_tail[64];
    HWY_ALIGN uint8_t mask_tail[64];
    FakeQuantStretch<Output, kX>(c, o, b, StageTail(x, whole, k, x_tail), N, zp_constant, bounds_constant, out_tail,
                                 mask != nullptr ? mask_tail : nullptr);
    std::memcpy(out + whole, out_tail, (k - whole) * sizeof(float));
    if (mask != nullptr) std::memcpy(mask + whole, mask_tail, k - whole);
  }
}

// Fake-quant of a block of a run over blocks shorter than a vector whose vectors all start at the
// same phase (FakeQuantRun asks for them only so: per-axis over rows of 4, DirectML's [M, 1]),
// divided in float32: each vector's scales and zero points are spread over its lanes from the
// blocks' values in registers (ShortBlockLanes::ValuesOfVector), as QuantizePerElement does,
// instead of being written out per element for WalkVectors (FillShortBlocks). The arithmetic is
// WalkVectors' float32 one: the same quotient, DequantizedCode, DequantizedProduct and mask.
template <class Output, ElementType kX>
void FakeQuantShortBlocks(const Context& c, const Operands& o, size_t k, const typename XInput<kX>::T* x,
                          VF zp_constant, const typename Output::Bounds& bounds_constant, float* out, uint8_t* mask) {
  using XT = typename XInput<kX>::T;
  using RangeMask = std::conditional_t<Output::kIsInteger, IntegerRangeMask, FloatRangeMask>;
  const DF df;
  const size_t N = hn::Lanes(df);
  const ShortBlockLanes<DF> lanes(df, o.short_block, o.short_block_phase);
  // The mask's stores are bytes, which may alias anything reachable through c (FakeQuantUniform).
  const Context local = c;
  PrefetchPacer prefetch(c);
  const auto vectors = [&](const XT* from, const float* scales, const float* zero_points, size_t count, float* to,
                           uint8_t* mask_to) QDQ_HOT_LAMBDA {
    for (size_t j = 0; j < count; j += N) {
      prefetch.Step(N * sizeof(XT));
      const VF s = lanes.ValuesOfVector(scales, j);
      VF zp = zp_constant;
      typename Output::Bounds bounds = bounds_constant;
      if (zero_points != nullptr) {
        zp = lanes.ValuesOfVector(zero_points, j);
        bounds = Output::MakeBounds(zp);
      }
      const VF q = hn::Div(XInput<kX>::Load(from + j), s);
      hn::StoreU(DequantizedProduct(DequantizedCode<Output>(local, q, zp, bounds), s), df, to + j);
      if (mask_to != nullptr) StoreLowBytes(RangeMask::Codes(local, q, zp, {}), mask_to + j);
    }
  };
  const float* zero_points = c.zero_point != nullptr ? o.zero_point.block : nullptr;
  const size_t whole = k - k % N;
  vectors(x, o.scale.block, zero_points, whole, out, mask);
  if (whole < k) {
    // The element at `whole` starts a block (the lanes are a multiple of the block), whose index
    // past the first element's block is whole / block whatever the phase.
    const size_t first_block = whole / o.short_block;
    HWY_ALIGN XT x_tail[64];
    HWY_ALIGN float out_tail[64];
    HWY_ALIGN uint8_t mask_tail[64];
    vectors(StageTail(x, whole, k, x_tail), o.scale.block + first_block,
            zero_points != nullptr ? zero_points + first_block : nullptr, N, out_tail,
            mask != nullptr ? mask_tail : nullptr);
    std::memcpy(out + whole, out_tail, (k - whole) * sizeof(float));
    if (mask != nullptr) std::memcpy(mask + whole, mask_tail, k - whole);
  }
}

// The product of a fake-quant's value and its scale as DequantizedProduct gives it, for values
// that may be NaN (float codes): ScaledProduct's scale-first multiplication where it applies.
struct FakeQuantValue {
  static constexpr bool kHasNaN = true;
};

// Fake-quant of a block of a run with a scale per element (per-axis on the last axis, DirectML's
// broadcasts), divided in float32, without the mask: one loop over the vectors with the scales
// (and zero points, with kOwnZeroPoints) loaded beside x. WalkVectors' general body chose the
// division precision, the mask and the operands per vector, which was a fifth of 64K float32 ->
// float8e4m3fn per-axis-last in cache. The arithmetic is its float32 one.
template <class Output, ElementType kX, bool kOwnZeroPoints>
void FakeQuantPerElement(const Context& c, const Operands& o, size_t k, const typename XInput<kX>::T* x,
                         VF zp_constant, const typename Output::Bounds& bounds_constant, float* out) {
  using XT = typename XInput<kX>::T;
  const DF df;
  const size_t N = hn::Lanes(df);
  PrefetchPacer prefetch(c);
  const auto vectors = [&](const XT* from, const float* scales, const float* zero_points, size_t count,
                           float* to) QDQ_HOT_LAMBDA {
    for (size_t j = 0; j < count; j += N) {
      prefetch.Step(N * sizeof(XT));
      const VF s = hn::LoadU(df, scales + j);
      const VF q = hn::Div(XInput<kX>::Load(from + j), s);
      VF value;
      if constexpr (kOwnZeroPoints) {
        const VF zp = hn::LoadU(df, zero_points + j);
        value = DequantizedCode<Output>(c, q, zp, Output::MakeBounds(zp));
      } else {
        value = DequantizedCode<Output>(c, q, zp_constant, bounds_constant);
      }
      hn::StoreU(ScaledProduct<FakeQuantValue>(value, s), df, to + j);
    }
  };
  const size_t whole = k - k % N;
  vectors(x, o.scale.values, o.zero_point.values, whole, out);
  if (whole < k) {
    HWY_ALIGN XT x_tail[64];
    HWY_ALIGN float scale_tail[64];
    HWY_ALIGN float zp_tail[64];
    HWY_ALIGN float out_tail[64];
    vectors(StageTail(x, whole, k, x_tail), StageTail(o.scale.values, whole, k, scale_tail),
            kOwnZeroPoints ? StageTail(o.zero_point.values, whole, k, zp_tail) : nullptr, N, out_tail);
    std::memcpy(out + whole, out_tail, (k - whole) * sizeof(float));
  }
}

// QuantizeRun's arithmetic (the quotient in the division precision, Output::Codes) followed in
// the same lanes by DequantizeRun's (the codes' values times the scale as DequantizeLinear reads
// it, unrounded). y is float32, float16 or bfloat16 (c.y).
template <class Output, ElementType kX>
void FakeQuantRun(const Context& c, const exec::Run& run, void* y) {
  using XT = typename XInput<kX>::T;
  const DF df;
  const Precision precision = c.precision;
  // float32 y not streamed is written in place; otherwise the block is staged here first.
  const bool in_place = c.y->type == ElementType::kFloat32 && !c.stream_output;
  HWY_ALIGN float staged[kPadded];
  HWY_ALIGN uint8_t mask_block[kPadded];
  using RangeMask = std::conditional_t<Output::kIsInteger, IntegerRangeMask, FloatRangeMask>;
  // As QuantizeRun: operands already exact in the precision are not rounded again.
  const bool own_precision = ExactInPrecision(kX, precision);
  const bool round_x = precision != Precision::kFloat32 && !own_precision;
  const bool round_scale = precision != Precision::kFloat32 && !ExactInPrecision(c.scale->type, precision);
  // Blocks shorter than a vector whose vectors all start at the same phase, divided in float32, to
  // integer codes: FakeQuantShortBlocks spreads their operands over the lanes. Float codes keep
  // WalkVectors, which ran them as fast or faster (Zen 2, 64K over rows of 4, e4m3fn: 38.0-38.6
  // us against 40.4-41.9 in lanes; float codes' rounding outweighs the operands' writing there).
  const bool short_blocks_in_lanes = Output::kIsInteger && precision == Precision::kFloat32 && run.block != 0 &&
                                     hn::Lanes(df) % run.block == 0;
  Operands o;
  for (uint64_t offset = 0; offset < run.count; offset += kBlock) {
    const size_t k = static_cast<size_t>(std::min<uint64_t>(kBlock, run.count - offset));
    const uint64_t at = run.x_index + offset;
    const uint64_t y_at = at - c.y_first;
    const XT* x = static_cast<const XT*>(c.x_data) + (at - c.x_first);
    LoadOperands(c, run, offset, k, &o, false, short_blocks_in_lanes);
    const VF zp_constant = hn::Set(df, o.zero_point.constant);
    const typename Output::Bounds bounds_constant = Output::MakeBounds(zp_constant);
    float* out = in_place ? static_cast<float*>(y) + y_at : staged;
    // The divisor in the division precision; DequantizeLinear multiplies by the scale as it is.
    auto compute = [&](const XT* xp, VF s, bool, VF zp, const typename Output::Bounds& bounds, float* destination,
                       size_t i) HWY_ATTR {
      VF xv = XInput<kX>::Load(xp);
      if (round_x) xv = RoundToPrecision(precision, xv);
      const VF divisor = round_scale ? RoundToPrecision(precision, s) : s;
      VF q = hn::Div(xv, divisor);
      if (own_precision) {
        q = RoundQuotientForOutput<Output, kX>(q);
      } else if (precision != Precision::kFloat32) {
        q = RoundToPrecision(precision, q);
      }
      const VF value = DequantizedCode<Output>(c, q, zp, bounds);
      hn::StoreU(DequantizedProduct(value, s), df, destination);
      if (c.mask != nullptr) StoreLowBytes(RangeMask::Codes(c, q, zp, {}), mask_block + i);
    };
    if (o.short_blocks) {
      FakeQuantShortBlocks<Output, kX>(c, o, k, x, zp_constant, bounds_constant, out,
                                       c.mask != nullptr ? mask_block : nullptr);
    } else if (precision == Precision::kFloat32 &&
               (o.per_block || (o.scale.values == nullptr && o.zero_point.values == nullptr))) {
      FakeQuantUniformBlock<Output, kX>(c, run, offset, k, o, x, zp_constant, bounds_constant, out,
                                        c.mask != nullptr ? mask_block : nullptr);
    } else if (precision == Precision::kFloat32 && c.mask == nullptr && !o.per_block && o.scale.values != nullptr) {
      if (o.zero_point.values != nullptr) {
        FakeQuantPerElement<Output, kX, true>(c, o, k, x, zp_constant, bounds_constant, out);
      } else {
        FakeQuantPerElement<Output, kX, false>(c, o, k, x, zp_constant, bounds_constant, out);
      }
    } else {
      WalkVectors<Output>(c, run, offset, k, o, x, hn::Set(df, o.scale.constant), zp_constant, bounds_constant, out,
                          compute);
    }
    if (!in_place) StoreBlock(c, staged, k, y, y_at);
    if (c.mask != nullptr) {
      if (c.stream_output) {
        c.mask_stream->Write(mask_block, k, c.mask + y_at);
      } else {
        std::memcpy(c.mask + y_at, mask_block, k);
      }
    }
  }
}

// --- Selection, once per call ---------------------------------------------------------------

using RunFunction = void (*)(const Context&, const exec::Run&, void*);

// QuantizeRun of Output for x of each type the quantize kernels take.
template <class Output>
RunFunction SelectQuantizeInput(ElementType x) {
  switch (x) {
    case ElementType::kFloat16: return &QuantizeRun<Output, ElementType::kFloat16>;
    case ElementType::kBfloat16: return &QuantizeRun<Output, ElementType::kBfloat16>;
    case ElementType::kInt32: return &QuantizeRun<Output, ElementType::kInt32>;
    default: return &QuantizeRun<Output, ElementType::kFloat32>;
  }
}

// kernels.cpp: the quantize run of (x, scale, output, division precision), or null where no kernel
// covers it; the range-mask run of a quantize plan, or null.
RunFunction SelectQuantize(ElementType x, ElementType scale, ElementType out, Precision precision);
RunFunction SelectRangeMask(const Plan& plan);
// SelectQuantize's groups of outputs, a translation unit each; null for an output outside the group.
// Quark's outputs (32-bit integers, float16, bfloat16) are asked for with float32 x only.
RunFunction SelectQuantizeToIntegers(ElementType x, ElementType out);  // kernels_quantize_integer.cpp: 8, 16, 32 bits
RunFunction SelectQuantizeToSubBytes(ElementType x, ElementType out);  // kernels_quantize_sub_byte.cpp: 4 and 2 bits
RunFunction SelectQuantizeToFloats(ElementType x, ElementType out);    // kernels_quantize_float.cpp
// kernels_dequantize.cpp: the dequantize run of (x, output), or null.
RunFunction SelectDequantize(ElementType x, ElementType out);
// kernels_fake_quant.cpp: the in-lane fake-quant run of a quantize plan, or null.
RunFunction SelectFakeQuant(const Plan& quantize);

}  // namespace HWY_NAMESPACE
}  // namespace qdq::kernels
HWY_AFTER_NAMESPACE();

#endif  // QDQ_KERNELS_KERNELS_INL_H_ (per target)
