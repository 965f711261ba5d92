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
using DI = hn::RebindToSigned<DF>;
using DU = hn::RebindToUnsigned<DF>;

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

// Lane-wise min and max (nothing seen: +inf / -inf).
// (Constructors spelled out: an implicit one would lack the target's attributes.)
struct LaneRange {
  VF lo, hi;

  HWY_INLINE LaneRange()
      : lo(hn::Set(DF(), std::numeric_limits<float>::infinity())),
        hi(hn::Set(DF(), -std::numeric_limits<float>::infinity())) {}

  HWY_INLINE void Take(VF v) {
    lo = hn::Min(lo, v);
    hi = hn::Max(hi, v);
  }
  HWY_INLINE void Merge(const LaneRange& other) {
    lo = hn::Min(lo, other.lo);
    hi = hn::Max(hi, other.hi);
  }
};

struct Accumulator : LaneRange {
  hn::Mask<DF> nan;

  HWY_INLINE Accumulator() : nan(hn::FirstN(DF(), 0)) {}

  HWY_INLINE void Add(VF v) {
    const auto is_nan = hn::IsNaN(v);
    nan = hn::Or(nan, is_nan);
    Take(hn::IfThenZeroElse(is_nan, v));
  }
  // Folds `other` in, lane by lane (two accumulators of one group).
  HWY_INLINE void Merge(const Accumulator& other) {
    LaneRange::Merge(other);
    nan = hn::Or(nan, other.nan);
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

// A first pass without Accumulator's NaN bookkeeping (3 of its 5 operations per vector): lo and hi
// take the values as they are and `check` sums them. A NaN makes the sum NaN (so where the check
// is a number there was no NaN, and lo and hi are exact); the sum can also become NaN without one
// (+inf and -inf, or overflowing sums of both signs). Where the check is NaN the values are
// reduced again through Accumulator, which decides the extremes and the flag.
struct QuickAccumulator : LaneRange {
  VF check;

  HWY_INLINE QuickAccumulator() : check(hn::Zero(DF())) {}

  HWY_INLINE void Add(VF v) {
    Take(v);
    check = hn::Add(check, v);
  }
  HWY_INLINE void Merge(const QuickAccumulator& other) {
    LaneRange::Merge(other);
    check = hn::Add(check, other.check);
  }
};

// The whole vectors of [start, start + count) (count a multiple of N) into one accumulator; two
// over alternate vectors keep the dependency chains short.
template <ElementType kX, class Acc>
HWY_INLINE Acc AccumulateVectors(const void* x, uint64_t start, uint64_t count) {
  const size_t N = hn::Lanes(DF());
  Acc a, b;
  uint64_t i = 0;
  for (; i + 2 * N <= count; i += 2 * N) {
    a.Add(LoadLanes<kX>(x, start + i));
    b.Add(LoadLanes<kX>(x, start + i + N));
  }
  if (i < count) a.Add(LoadLanes<kX>(x, start + i));
  a.Merge(b);
  return a;
}

template <ElementType kX>
void ReduceTyped(const void* x, uint64_t index, uint64_t count, Extremes* e) {
  const DF df;
  const uint64_t whole = count / hn::Lanes(df) * hn::Lanes(df);
  const QuickAccumulator quick = AccumulateVectors<kX, QuickAccumulator>(x, index, whole);
  if (hn::AllFalse(df, hn::IsNaN(quick.check))) {
    e->merge(Extremes{hn::GetLane(hn::MinOfLanes(df, quick.lo)), hn::GetLane(hn::MaxOfLanes(df, quick.hi)), false});
  } else {
    AccumulateVectors<kX, Accumulator>(x, index, whole).Fold(e);
  }
  for (uint64_t i = whole; i < count; ++i) {
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

// Group g (`count` elements from `start`) on its own.
template <ElementType kX>
void ReduceOneGroup(const void* x, uint64_t start, uint64_t count, const GroupExtremes& out, uint64_t g) {
  Extremes e;
  ReduceTyped<kX>(x, start, count, &e);
  out.min[g] = e.min;
  out.max[g] = e.max;
  out.nan[g] = e.nan ? 1 : 0;
}

#if !HWY_HAVE_SCALABLE && HWY_TARGET != HWY_SCALAR && HWY_MAX_BYTES <= 32
// Horizontal folds of 4 (128-bit vectors) or 8 (256-bit) vectors at once, one per group: lane j of
// the result is `op` over the lanes of v[j]. Adjacent lanes of vector pairs first, then lane pairs
// within 128-bit blocks, then (8 lanes) the two blocks: 2 + 1 (+ 1) shuffles and one op per step
// where MinOfLanes would take 3 shuffles and 3 ops per group.
template <class D, class Op>
HWY_INLINE hn::Vec<D> FoldEach(D d, const hn::Vec<D>* v, Op op) {
  const size_t N = hn::Lanes(d);
  const hn::Repartition<uint64_t, D> d64;
  hn::Vec<D> pairs[4], quads[2];
  for (size_t j = 0; j < N / 2; ++j) {  // [v0 v1 v0 v1 | ...] lanes: op of lanes k and k + 2
    pairs[j] = op(hn::InterleaveLower(d, v[2 * j], v[2 * j + 1]), hn::InterleaveUpper(d, v[2 * j], v[2 * j + 1]));
  }
  for (size_t j = 0; j < N / 4; ++j) {  // [v0 v1 v2 v3] per block
    const auto a = hn::BitCast(d64, pairs[2 * j]), b = hn::BitCast(d64, pairs[2 * j + 1]);
    quads[j] = op(hn::BitCast(d, hn::InterleaveLower(d64, a, b)), hn::BitCast(d, hn::InterleaveUpper(d64, a, b)));
  }
  if (N == 4) return quads[0];
  return op(hn::ConcatLowerLower(d, quads[1], quads[0]), hn::ConcatUpperUpper(d, quads[1], quads[0]));
}

// N consecutive groups of whole vectors from `start`: their extremes to out's arrays at g.
template <ElementType kX>
HWY_INLINE void ReduceGroupBatch(const void* x, uint64_t start, uint64_t group, const GroupExtremes& out, uint64_t g) {
  const DF df;
  const size_t N = hn::Lanes(df);
  VF lo[8], hi[8], check[8];
  for (size_t j = 0; j < N; ++j) {
    const QuickAccumulator a = AccumulateVectors<kX, QuickAccumulator>(x, start + j * group, group);
    lo[j] = a.lo;
    hi[j] = a.hi;
    check[j] = a.check;
  }
  hn::StoreU(FoldEach(df, lo, [](VF a, VF b) { return hn::Min(a, b); }), df, out.min + g);
  hn::StoreU(FoldEach(df, hi, [](VF a, VF b) { return hn::Max(a, b); }), df, out.max + g);
  const auto suspect = hn::IsNaN(FoldEach(df, check, [](VF a, VF b) { return hn::Add(a, b); }));
  std::memset(out.nan + g, 0, N);
  if (hn::AllFalse(df, suspect)) return;
  for (size_t j = 0; j < N; ++j) ReduceOneGroup<kX>(x, start + j * group, group, out, g + j);
}
#endif

template <ElementType kX>
void ReduceGroupsTyped(const void* x, uint64_t index, uint64_t count, uint64_t group, const GroupExtremes& out) {
  uint64_t begin = 0, g = 0;
#if !HWY_HAVE_SCALABLE && HWY_TARGET != HWY_SCALAR && HWY_MAX_BYTES <= 32
  // Groups of whole vectors (32 and 128 elements) on 128- and 256-bit targets: N groups' folds
  // together.
  const size_t N = hn::Lanes(DF());
  if (group % N == 0 && (N == 4 || N == 8)) {
    for (; begin + N * group <= count; begin += N * group, g += N) ReduceGroupBatch<kX>(x, index + begin, group, out, g);
  }
#endif
  // One at a time: other group sizes, the rest, and a short last group.
  for (; begin < count; begin += group, ++g) {
    ReduceOneGroup<kX>(x, index + begin, std::min(group, count - begin), out, g);
  }
}

void ReduceGroups(ElementType x_type, const void* x, uint64_t index, uint64_t count, uint64_t group,
                  const GroupExtremes& out) {
  switch (x_type) {
    case ElementType::kFloat32: return ReduceGroupsTyped<ElementType::kFloat32>(x, index, count, group, out);
    case ElementType::kFloat16: return ReduceGroupsTyped<ElementType::kFloat16>(x, index, count, group, out);
    case ElementType::kBfloat16: return ReduceGroupsTyped<ElementType::kBfloat16>(x, index, count, group, out);
    default: return;
  }
}

// --- The vector finish (the scalar definition: finish() in toolkit/qparams.cpp) ----------------

// One vector of groups: the extremes at min/max/nan and the codes out, a full vector of each.
struct FinishLanes {
  const float* min;
  const float* max;
  const uint8_t* nan;
  uint32_t* scale_codes;
  uint32_t* zero_point_codes;
  uint8_t* special;
};

HWY_INLINE hn::Mask<DF> LoadNanFlags(const uint8_t* flags) {
  const DU du;
  const hn::Rebind<uint8_t, DF> d8;
  return hn::RebindMask(DF(), hn::Ne(hn::PromoteTo(du, hn::LoadU(d8, flags)), hn::Zero(du)));
}

// 1 in the lanes of `mask`, else 0, stored as bytes.
HWY_INLINE void StoreFlags(hn::Mask<DF> mask, uint8_t* flags) {
  const DI di;
  const hn::Rebind<uint8_t, DF> d8;
  hn::StoreU(hn::DemoteTo(d8, hn::IfThenElseZero(hn::RebindMask(di, mask), hn::Set(di, 1))), d8, flags);
}

// Integer types of <= 16 bits with float32 scales.
HWY_INLINE void FinishIntegerLanes(const FinishConstants& c, const FinishLanes& io) {
  const DF df;
  const DI di;
  const DU du;
  const VF zero = hn::Zero(df);
  const VF min = hn::LoadU(df, io.min);
  const VF max = hn::LoadU(df, io.max);
  const auto nan = LoadNanFlags(io.nan);
  // low = min(min, 0), high = max(max, 0). The scalar std::min/std::max and these may disagree on
  // the sign of a zero (min -0 vs +0); no result depends on it: the extent and qmin - low / scale
  // are the same for either zero.
  const VF low = hn::Min(min, zero);
  const VF high = hn::Max(max, zero);
  const VF extent = c.kind == VectorFinish::kMinMax ? hn::Sub(high, low) : hn::Max(hn::Neg(low), high);
  // The scalar finish decides NaN groups, all-zero ranges and infinite ones (also a finite range
  // whose extent overflows: that takes the saturation rule there).
  const auto ordinary = hn::AndNot(nan, hn::And(hn::IsFinite(extent), hn::Ne(extent, zero)));
  VF scale = hn::Div(extent, hn::Set(df, c.divisor));
  scale = hn::IfThenElse(hn::IsFinite(scale), scale, hn::Set(df, std::numeric_limits<float>::max()));
  scale = hn::Max(scale, hn::Set(df, std::numeric_limits<float>::denorm_min()));
  hn::StoreU(hn::BitCast(du, scale), du, io.scale_codes);
  StoreFlags(hn::Not(ordinary), io.special);
  if (c.kind != VectorFinish::kMinMax) {
    hn::StoreU(hn::Set(du, c.neutral_zero_point), du, io.zero_point_codes);
    return;
  }
  // zero point = round_half_even(clamp(qmin - low / scale)): low is finite and the scale positive,
  // so the quotient is a number (possibly -inf, which clamps to the top); the bounds are exact in
  // float32 for these types, so clamping in float32 is the scalar clamp in double. Round is
  // nearest-even; the conversion is in range after the clamp.
  VF initial = hn::Sub(hn::Set(df, c.qmin), hn::Div(low, scale));
  initial = hn::Min(hn::Max(initial, hn::Set(df, c.zp_lowest)), hn::Set(df, c.zp_highest));
  // Lanes the scalar finish takes (and tails) may hold anything: convert zero there instead.
  initial = hn::IfThenElseZero(ordinary, initial);
  const auto code = hn::And(hn::BitCast(du, hn::ConvertTo(di, hn::Round(initial))), hn::Set(du, c.code_mask));
  hn::StoreU(code, du, io.zero_point_codes);
}

// MX methods with e8m0 scales: the code is the exponent + 127, clamped to [0, 255] (255 = NaN).
HWY_INLINE void FinishMxLanes(const FinishConstants& c, const FinishLanes& io) {
  const DF df;
  const DI di;
  const DU du;
  const VF min = hn::LoadU(df, io.min);
  const VF max = hn::LoadU(df, io.max);
  const auto nan = LoadNanFlags(io.nan);
  // amax = |max(-min, max, 0)| (the Abs makes the sign of a zero irrelevant).
  const VF amax = hn::Abs(hn::Max(hn::Max(hn::Neg(min), max), hn::Zero(df)));
  const auto to_nan = hn::RebindMask(di, hn::Or(nan, hn::Not(hn::IsFinite(amax))));
  const auto mantissa_field = hn::Set(di, 0x7F'FFFF);
  hn::Vec<DI> exponent;
  if (c.kind == VectorFinish::kMxRceil) {
    // amax / max(T) rounded up to a power of two on its bits; a subnormal (biased exponent 0)
    // rounds up only above 0x40'0000 (2^-127, e8m0's code 0).
    const auto bits = hn::BitCast(di, hn::Div(amax, hn::Set(df, c.mx_max)));
    const auto biased = hn::ShiftRight<23>(bits);
    const auto mantissa = hn::And(bits, mantissa_field);
    const auto subnormal = hn::Eq(biased, hn::Zero(di));
    const auto round_up = hn::Or(hn::And(subnormal, hn::Gt(mantissa, hn::Set(di, 0x40'0000))),
                                 hn::AndNot(subnormal, hn::Ne(mantissa, hn::Zero(di))));
    exponent = hn::Sub(hn::Add(biased, hn::IfThenElseZero(round_up, hn::Set(di, 1))), hn::Set(di, 127));
  } else {
    auto bits = hn::BitCast(di, amax);
    if (c.kind == VectorFinish::kMxEven) {
      // Half up on T's mantissa width, then only the exponent field (0x7F80'0000) counts.
      bits = hn::And(hn::Add(bits, hn::Set(di, 1 << (22 - c.mx_mantissa_bits))), hn::Set(di, 0x7F80'0000));
    }
    exponent = hn::Sub(hn::ShiftRight<23>(bits), hn::Set(di, 127 + c.mx_emax));
    if (c.kind == VectorFinish::kMxCeil) {
      exponent = hn::Add(exponent, hn::IfThenElseZero(hn::Ne(hn::And(bits, mantissa_field), hn::Zero(di)), hn::Set(di, 1)));
    }
  }
  exponent = hn::Min(hn::Max(exponent, hn::Set(di, -127)), hn::Set(di, 128));
  const auto code = hn::IfThenElse(to_nan, hn::Set(di, 0xFF), hn::Add(exponent, hn::Set(di, 127)));
  hn::StoreU(hn::BitCast(du, code), du, io.scale_codes);
  hn::StoreU(hn::Zero(du), du, io.zero_point_codes);
  StoreFlags(hn::FirstN(df, 0), io.special);
}

void FinishGroups(const FinishConstants& c, const GroupExtremes& e, uint64_t count, uint32_t* scale_codes,
                  uint32_t* zero_point_codes, uint8_t* special) {
  if (c.kind == VectorFinish::kNone) {
    std::memset(special, 1, count);
    return;
  }
  const DF df;
  const size_t N = hn::Lanes(df);
  const auto finish_lanes = [&](const FinishLanes& io) {
    if (c.kind == VectorFinish::kMinMax || c.kind == VectorFinish::kSymmetric) {
      FinishIntegerLanes(c, io);
    } else {
      FinishMxLanes(c, io);
    }
  };
  uint64_t g = 0;
  for (; g + N <= count; g += N) {
    finish_lanes({e.min + g, e.max + g, e.nan + g, scale_codes + g, zero_point_codes + g, special + g});
  }
  if (g == count) return;
  // The last groups through full-vector copies (an all-zero pad, whose codes are dropped).
  constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);
  HWY_ALIGN float min[kMaxLanes] = {}, max[kMaxLanes] = {};
  HWY_ALIGN uint8_t nan[kMaxLanes] = {}, flags[kMaxLanes];
  HWY_ALIGN uint32_t scales[kMaxLanes], zero_points[kMaxLanes];
  const uint64_t rest = count - g;
  std::copy_n(e.min + g, rest, min);
  std::copy_n(e.max + g, rest, max);
  std::copy_n(e.nan + g, rest, nan);
  finish_lanes({min, max, nan, scales, zero_points, flags});
  std::copy_n(scales, rest, scale_codes + g);
  std::copy_n(zero_points, rest, zero_point_codes + g);
  std::copy_n(flags, rest, special + g);
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
HWY_EXPORT(FinishGroups);

void reduce_extremes(ElementType x_type, const void* x, uint64_t index, uint64_t count, Extremes* e) {
  HWY_DYNAMIC_DISPATCH(ReduceExtremes)(x_type, x, index, count, e);
}

void reduce_groups(ElementType x_type, const void* x, uint64_t index, uint64_t count, uint64_t group,
                   const GroupExtremes& out) {
  HWY_DYNAMIC_DISPATCH(ReduceGroups)(x_type, x, index, count, group, out);
}

void accumulate_extremes(ElementType x_type, const void* x, uint64_t index, uint64_t count, float* mins, float* maxs,
                         uint32_t* nans) {
  HWY_DYNAMIC_DISPATCH(AccumulateExtremes)(x_type, x, index, count, mins, maxs, nans);
}

void finish_groups(const FinishConstants& constants, const GroupExtremes& extremes, uint64_t count,
                   uint32_t* scale_codes, uint32_t* zero_point_codes, uint8_t* special) {
  HWY_DYNAMIC_DISPATCH(FinishGroups)(constants, extremes, count, scale_codes, zero_point_codes, special);
}

}  // namespace qdq::kernels
#endif  // HWY_ONCE
