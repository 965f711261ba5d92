// SIMD extremes of float tensors (the toolkit's reduction stage), for every Highway target.
//
// NaN lanes are replaced by +0 before the Min/Max (x86's minps/maxps return one operand whenever
// either is NaN, which would make the result depend on lane order) and recorded in a separate
// mask; +0 never moves a min-max range (every method widens it to include 0 or takes |x|).
#include "kernels/reduce.h"

#include <algorithm>
#include <cstring>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/reduce.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "types/codec.h"

HWY_BEFORE_NAMESPACE();
namespace qdq::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// Full vectors of x as float32 lanes (every conversion is exact).
template <ElementType kX>
HWY_INLINE VF LoadLanes(const void* data, uint64_t i) {
  const DF df;
  if constexpr (kX == ElementType::kFloat32) {
    return hn::LoadU(df, static_cast<const float*>(data) + i);
  } else if constexpr (kX == ElementType::kBfloat16) {
    const hn::RebindToUnsigned<DF> du;
    const hn::Rebind<uint16_t, DF> d16;
    const auto bits = hn::PromoteTo(du, hn::LoadU(d16, static_cast<const uint16_t*>(data) + i));
    return hn::BitCast(df, hn::ShiftLeft<16>(bits));
  } else {
    // float16 on the bits (Highway 1.0.3's emulated PromoteTo turns inf and NaN into finite
    // values on targets without F16C): s'eeeee'mmmmmmmmmm -> float32.
    const hn::RebindToUnsigned<DF> du;
    const hn::Rebind<uint16_t, DF> d16;
    const auto h = hn::PromoteTo(du, hn::LoadU(d16, static_cast<const uint16_t*>(data) + i));
    const auto sign = hn::ShiftLeft<16>(hn::And(h, hn::Set(du, 0x8000u)));
    const auto magnitude = hn::And(h, hn::Set(du, 0x7FFFu));
    const auto exponent = hn::ShiftRight<10>(magnitude);
    // Normal: rebias the exponent by 127 - 15; inf/NaN (exponent 31): all-ones exponent, the
    // mantissa moved up (a NaN stays a NaN); subnormal (exponent 0): mantissa * 2^-24, exact.
    const auto normal = hn::Add(hn::ShiftLeft<13>(magnitude), hn::Set(du, (127u - 15u) << 23));
    const auto special = hn::Or(hn::Set(du, 0x7F80'0000u), hn::ShiftLeft<13>(hn::And(magnitude, hn::Set(du, 0x3FFu))));
    const VF subnormal = hn::Mul(hn::ConvertTo(df, hn::BitCast(hn::RebindToSigned<DF>(), magnitude)), hn::Set(df, 0x1p-24f));
    const auto bits = hn::IfThenElse(hn::Eq(exponent, hn::Set(du, 31u)), special, normal);
    const VF value = hn::IfThenElse(hn::RebindMask(df, hn::Eq(exponent, hn::Zero(du))), subnormal, hn::BitCast(df, bits));
    return hn::Or(value, hn::BitCast(df, sign));
  }
}

HWY_INLINE float ScalarValue(ElementType x_type, const void* data, uint64_t i) {
  if (x_type == ElementType::kFloat32) return static_cast<const float*>(data)[i];
  return static_cast<float>(codec::load_value(data, info(x_type), i));
}

struct Accumulator {
  VF lo, hi;
  hn::Mask<DF> nan;

  HWY_INLINE Accumulator()
      : lo(hn::Set(DF(), std::numeric_limits<float>::infinity())),
        hi(hn::Set(DF(), -std::numeric_limits<float>::infinity())),
        nan(hn::FirstN(DF(), 0)) {}

  HWY_INLINE void Add(VF v) {
    const auto is_nan = hn::IsNaN(v);
    nan = hn::Or(nan, is_nan);
    v = hn::IfThenZeroElse(is_nan, v);
    lo = hn::Min(lo, v);
    hi = hn::Max(hi, v);
  }
  HWY_INLINE void Fold(Extremes* e) const {
    const DF df;
    Extremes r;
    r.min = hn::GetLane(hn::MinOfLanes(df, lo));
    r.max = hn::GetLane(hn::MaxOfLanes(df, hi));
    r.nan = !hn::AllFalse(df, nan);
    e->merge(r);
  }
};

template <ElementType kX>
void ReduceTyped(const void* x, uint64_t index, uint64_t count, Extremes* e) {
  const DF df;
  const size_t N = hn::Lanes(df);
  // Two accumulators hide the Min/Max latency.
  Accumulator a, b;
  uint64_t i = 0;
  for (; i + 2 * N <= count; i += 2 * N) {
    a.Add(LoadLanes<kX>(x, index + i));
    b.Add(LoadLanes<kX>(x, index + i + N));
  }
  for (; i + N <= count; i += N) a.Add(LoadLanes<kX>(x, index + i));
  a.Fold(e);
  b.Fold(e);
  for (; i < count; ++i) {
    const float v = ScalarValue(kX, x, index + i);
    const bool is_nan = v != v;
    e->merge(Extremes{is_nan ? 0.0f : v, is_nan ? 0.0f : v, is_nan});  // NaN as +0, as the lanes do
  }
}

void ReduceExtremes(ElementType x_type, const void* x, uint64_t index, uint64_t count, Extremes* e) {
  switch (x_type) {
    case ElementType::kFloat32: return ReduceTyped<ElementType::kFloat32>(x, index, count, e);
    case ElementType::kFloat16: return ReduceTyped<ElementType::kFloat16>(x, index, count, e);
    case ElementType::kBfloat16: return ReduceTyped<ElementType::kBfloat16>(x, index, count, e);
    default: return;
  }
}

void ReduceGroups(ElementType x_type, const void* x, uint64_t index, uint64_t count, uint64_t group, Extremes* out) {
  for (uint64_t begin = 0, g = 0; begin < count; begin += group, ++g) {
    out[g] = Extremes{};
    ReduceExtremes(x_type, x, index + begin, std::min(group, count - begin), &out[g]);
  }
}

template <ElementType kX>
void AccumulateTyped(const void* x, uint64_t index, uint64_t count, float* mins, float* maxs, uint32_t* nans) {
  const DF df;
  const hn::RebindToUnsigned<DF> du;
  const size_t N = hn::Lanes(df);
  uint64_t i = 0;
  for (; i + N <= count; i += N) {
    VF v = LoadLanes<kX>(x, index + i);
    const auto is_nan = hn::IsNaN(v);
    v = hn::IfThenZeroElse(is_nan, v);
    hn::StoreU(hn::Min(hn::LoadU(df, mins + i), v), df, mins + i);
    hn::StoreU(hn::Max(hn::LoadU(df, maxs + i), v), df, maxs + i);
    const auto flag = hn::BitCast(du, hn::VecFromMask(df, is_nan));
    hn::StoreU(hn::Or(hn::LoadU(du, nans + i), flag), du, nans + i);
  }
  for (; i < count; ++i) {
    const float v = ScalarValue(kX, x, index + i);
    const bool is_nan = v != v;
    if (is_nan) nans[i] = 1;
    mins[i] = std::min(mins[i], is_nan ? 0.0f : v);  // NaN as +0, as the lanes do
    maxs[i] = std::max(maxs[i], is_nan ? 0.0f : v);
  }
}

void AccumulateExtremes(ElementType x_type, const void* x, uint64_t index, uint64_t count, float* mins, float* maxs,
                        uint32_t* nans) {
  switch (x_type) {
    case ElementType::kFloat32: return AccumulateTyped<ElementType::kFloat32>(x, index, count, mins, maxs, nans);
    case ElementType::kFloat16: return AccumulateTyped<ElementType::kFloat16>(x, index, count, mins, maxs, nans);
    case ElementType::kBfloat16: return AccumulateTyped<ElementType::kBfloat16>(x, index, count, mins, maxs, nans);
    default: return;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace qdq::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qdq::kernels {

HWY_EXPORT(ReduceExtremes);
HWY_EXPORT(ReduceGroups);
HWY_EXPORT(AccumulateExtremes);

void reduce_extremes(ElementType x_type, const void* x, uint64_t index, uint64_t count, Extremes* e) {
  HWY_DYNAMIC_DISPATCH(ReduceExtremes)(x_type, x, index, count, e);
}

void reduce_groups(ElementType x_type, const void* x, uint64_t index, uint64_t count, uint64_t group, Extremes* out) {
  HWY_DYNAMIC_DISPATCH(ReduceGroups)(x_type, x, index, count, group, out);
}

void accumulate_extremes(ElementType x_type, const void* x, uint64_t index, uint64_t count, float* mins, float* maxs,
                         uint32_t* nans) {
  HWY_DYNAMIC_DISPATCH(AccumulateExtremes)(x_type, x, index, count, mins, maxs, nans);
}

}  // namespace qdq::kernels
#endif  // HWY_ONCE
