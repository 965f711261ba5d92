// The reduction's per-target building blocks, shared by kernels/reduce.cpp (the toolkit's
// reductions) and kernels/kernels-inl.h (dynamic quantization, which reduces the next stretch of x
// between the vectors it quantizes: GroupStream below). Highway's per-target include guard: the
// file is included once for every target that foreach_target.h compiles.
#if defined(QDQ_KERNELS_REDUCE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QDQ_KERNELS_REDUCE_INL_H_
#undef QDQ_KERNELS_REDUCE_INL_H_
#else
#define QDQ_KERNELS_REDUCE_INL_H_
#endif

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include <hwy/highway.h>

#include "kernels/prefetch-inl.h"
#include "kernels/reduce.h"
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
  if (x_type == ElementType::kFloat32) {  // the caller's x may sit off float's alignment (the C ABI)
    float value;
    std::memcpy(&value, static_cast<const float*>(data) + i, sizeof value);
    return value;
  }
  return static_cast<float>(codec::load_value(data, info(x_type), i));
}

// One value into e outside the lanes: NaN as +0 and flagged, as the lanes do.
HWY_INLINE void TakeScalar(float v, Extremes* e) {
  const bool is_nan = v != v;
  e->merge(Extremes{is_nan ? 0.0f : v, is_nan ? 0.0f : v, is_nan});
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
  // Holding one vector: its lanes as the extremes and the sum. A NaN lane makes the sum NaN, as
  // Add does, and the group is then reduced again, so the extremes it leaves do not matter.
  HWY_INLINE explicit QuickAccumulator(VF v) : check(v) {
    lo = v;
    hi = v;
  }

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
  if constexpr (std::is_same_v<Acc, QuickAccumulator>) {
    // The first two vectors start the accumulators instead of being added to the identity: three
    // operations fewer for each, a third of the work for a group of four vectors.
    if (count >= 2 * N) {
      a = QuickAccumulator(LoadLanes<kX>(x, start));
      b = QuickAccumulator(LoadLanes<kX>(x, start + N));
      i = 2 * N;
    }
  }
  constexpr size_t kElementBytes = kX == ElementType::kFloat32 ? 4 : 2;
  if (count * kElementBytes >= kPrefetchedStretchBytes) {
    // A line ahead for each line loaded (two vectors are 1 or 2 lines), up to the stretch's end.
    const char* ahead = static_cast<const char*>(x) + start * kElementBytes + kPrefetchAheadBytes;
    const uint64_t prefetched = count - std::min<uint64_t>(count, kPrefetchAheadBytes / kElementBytes);
    for (; i + 2 * N <= prefetched; i += 2 * N) {
      for (size_t line = 0; line < 2 * N * kElementBytes; line += 64) PrefetchForLater(ahead + i * kElementBytes + line);
      a.Add(LoadLanes<kX>(x, start + i));
      b.Add(LoadLanes<kX>(x, start + i + N));
    }
  }
  for (; i + 2 * N <= count; i += 2 * N) {
    a.Add(LoadLanes<kX>(x, start + i));
    b.Add(LoadLanes<kX>(x, start + i + N));
  }
  if (i < count) a.Add(LoadLanes<kX>(x, start + i));
  a.Merge(b);
  return a;
}

// The elements of `element_bytes` each before x's first address on a whole vector of DF's lanes
// of them: numpy puts large arrays 16 bytes past a 64-byte line, and a vector load across two lines
// costs where x is in cache, so the reduction here and the quantize runs (kernels-inl.h) take these
// elements first and load whole lines after them. 0 where x is on a whole vector already, or off
// its own element alignment.
HWY_INLINE size_t ElementsBeforeWholeVector(const void* x, size_t element_bytes) {
  const size_t vector_bytes = hn::Lanes(DF()) * element_bytes;
  const size_t misaligned = reinterpret_cast<uintptr_t>(x) % vector_bytes;
  if (misaligned == 0 || misaligned % element_bytes != 0) return 0;
  return (vector_bytes - misaligned) / element_bytes;
}

template <ElementType kX>
void ReduceTyped(const void* x, uint64_t index, uint64_t count, Extremes* e) {
  const DF df;
  constexpr size_t kElementBytes = kX == ElementType::kFloat32 ? 4 : 2;
  const uint64_t head = std::min<uint64_t>(
      count, ElementsBeforeWholeVector(static_cast<const char*>(x) + index * kElementBytes, kElementBytes));
  for (uint64_t i = 0; i < head; ++i) TakeScalar(ScalarValue(kX, x, index + i), e);
  index += head;
  count -= head;
  const uint64_t whole = count / hn::Lanes(df) * hn::Lanes(df);
  const QuickAccumulator quick = AccumulateVectors<kX, QuickAccumulator>(x, index, whole);
  if (hn::AllFalse(df, hn::IsNaN(quick.check))) {
    e->merge(Extremes{hn::GetLane(hn::MinOfLanes(df, quick.lo)), hn::GetLane(hn::MaxOfLanes(df, quick.hi)), false});
  } else {
    AccumulateVectors<kX, Accumulator>(x, index, whole).Fold(e);
  }
  for (uint64_t i = whole; i < count; ++i) TakeScalar(ScalarValue(kX, x, index + i), e);
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

// Targets with a batched fold of one group per lane (FoldEach): fixed vectors of 4, 8 or (x86's
// AVX-512) 16 float32 lanes. (Defined again for each target: this file is included once per target.)
#undef QDQ_HAVE_FOLD_EACH
#if !HWY_HAVE_SCALABLE && HWY_TARGET != HWY_SCALAR && (HWY_MAX_BYTES <= 32 || (HWY_ARCH_X86 && HWY_MAX_BYTES == 64))
#define QDQ_HAVE_FOLD_EACH 1
#else
#define QDQ_HAVE_FOLD_EACH 0
#endif

#if QDQ_HAVE_FOLD_EACH
// Horizontal folds of N vectors at once (N = 4, 8 or 16 lanes), one per group: lane j of the
// result is `op` over the lanes of v[j]. Adjacent lanes of vector pairs first, then lane pairs
// within 128-bit blocks, then the blocks: each step halves the vectors with one op and two
// shuffles, where MinOfLanes would take 3 to 4 shuffles and as many ops per group.
template <class D, class Op>
HWY_INLINE hn::Vec<D> FoldEach(D d, const hn::Vec<D>* v, Op op) {
  const size_t N = hn::Lanes(d);
  const hn::Repartition<uint64_t, D> d64;
  hn::Vec<D> pairs[8], quads[4];
  for (size_t j = 0; j < N / 2; ++j) {  // [v0 v1 v0 v1 | ...] lanes: op of lanes k and k + 2
    pairs[j] = op(hn::InterleaveLower(d, v[2 * j], v[2 * j + 1]), hn::InterleaveUpper(d, v[2 * j], v[2 * j + 1]));
  }
  for (size_t j = 0; j < N / 4; ++j) {  // [v0 v1 v2 v3] per block
    const auto a = hn::BitCast(d64, pairs[2 * j]), b = hn::BitCast(d64, pairs[2 * j + 1]);
    quads[j] = op(hn::BitCast(d, hn::InterleaveLower(d64, a, b)), hn::BitCast(d, hn::InterleaveUpper(d64, a, b)));
  }
  if (N == 4) return quads[0];
  if (N == 8) return op(hn::ConcatLowerLower(d, quads[1], quads[0]), hn::ConcatUpperUpper(d, quads[1], quads[0]));
#if HWY_ARCH_X86 && HWY_MAX_BYTES == 64
  // 16 lanes: quads[j] holds groups 4j..4j+3 in each of its four blocks. Halves first: e01's
  // blocks are [q0.b0 op q0.b2, q0.b1 op q0.b3, q1.b0 op q1.b2, q1.b1 op q1.b3] (A0 B0 A1 B1).
  const auto e01 = op(hn::ConcatLowerLower(d, quads[1], quads[0]), hn::ConcatUpperUpper(d, quads[1], quads[0]));
  const auto e23 = op(hn::ConcatLowerLower(d, quads[3], quads[2]), hn::ConcatUpperUpper(d, quads[3], quads[2]));
  // Even blocks (A0 A1 A2 A3) op odd blocks (B0 B1 B2 B3): vshuff32x4 picks two blocks of each
  // operand, imm8 fields 2 bits per block (0b10'00'10'00: blocks 0 and 2; 0b11'01'11'01: 1 and 3).
  const hn::Vec<D> even{_mm512_shuffle_f32x4(e01.raw, e23.raw, 0b10'00'10'00)};
  const hn::Vec<D> odd{_mm512_shuffle_f32x4(e01.raw, e23.raw, 0b11'01'11'01)};
  return op(even, odd);
#else
  return quads[0];  // unreachable: N is 4 or 8 here
#endif
}

// N consecutive groups of whole vectors from `start`: their extremes to out's arrays at g.
template <ElementType kX>
HWY_INLINE void ReduceGroupBatch(const void* x, uint64_t start, uint64_t group, const GroupExtremes& out, uint64_t g) {
  const DF df;
  const size_t N = hn::Lanes(df);
  VF lo[16], hi[16];
  // The checks of all N groups summed lane-wise, not folded per group: a NaN anywhere makes the
  // sum NaN, and the batch is then reduced again group by group (so is one whose sums meet
  // +inf and -inf across groups). Folding only lo and hi saves a third of the shuffles, which
  // all go to one port on x86.
  VF check = hn::Zero(df);
  for (size_t j = 0; j < N; ++j) {
    const QuickAccumulator a = AccumulateVectors<kX, QuickAccumulator>(x, start + j * group, group);
    lo[j] = a.lo;
    hi[j] = a.hi;
    check = hn::Add(check, a.check);
  }
  hn::StoreU(FoldEach(df, lo, [](VF a, VF b) { return hn::Min(a, b); }), df, out.min + g);
  hn::StoreU(FoldEach(df, hi, [](VF a, VF b) { return hn::Max(a, b); }), df, out.max + g);
  std::memset(out.nan + g, 0, N);
  if (hn::AllFalse(df, hn::IsNaN(check))) return;
  for (size_t j = 0; j < N; ++j) ReduceOneGroup<kX>(x, start + j * group, group, out, g + j);
}
#endif


// The vector finish of the integer kinds (kMinMax, kSymmetric) in registers: the scalar finish's
// arithmetic (toolkit/qparams.cpp) for the groups whose extremes are min, max (NaN as +0) and
// `nan`, lane by lane. `ordinary` marks the lanes it decides, all-zero ranges included (scale 1,
// the neutral zero point); the others (a NaN, an infinite range, a finite range whose extent
// overflows) are the scalar finish's, and their
// scale and zero point here are unspecified. zero_point is the rounded zero point as a float (0
// outside the ordinary lanes; kSymmetric: unused, the neutral zero point is constant).
struct IntegerFinish {
  VF scale;
  VF zero_point;
  hn::Mask<DF> ordinary;
};

HWY_INLINE IntegerFinish FinishIntegerVectors(const FinishConstants& c, VF min, VF max, hn::Mask<DF> nan) {
  const DF df;
  const VF zero = hn::Zero(df);
  // low = min(min, 0), high = max(max, 0). The scalar std::min/std::max and these may disagree on
  // the sign of a zero (min -0 vs +0); no result depends on it: the extent and qmin - low / scale
  // are the same for either zero.
  const VF low = hn::Min(min, zero);
  const VF high = hn::Max(max, zero);
  const VF extent = c.kind == VectorFinish::kMinMax ? hn::Sub(high, low) : hn::Max(hn::Neg(low), high);
  // The scalar finish decides NaN groups and infinite ranges (also a finite range whose extent
  // overflows: that takes the saturation rule there). An all-zero range (extent +0) is decided
  // here, as the scalar finish decides it: scale 1; its zero point below is then qmin - (±0) / 1
  // = qmin, the neutral one (kSymmetric's is constant). Left to the scalar finish, one all-zero
  // column (a pruned channel) sent every batch or stretch holding it to the slow path.
  IntegerFinish f;
  f.ordinary = hn::AndNot(nan, hn::IsFinite(extent));
  VF scale = hn::Div(extent, hn::Set(df, c.divisor));
  scale = hn::IfThenElse(hn::IsFinite(scale), scale, hn::Set(df, std::numeric_limits<float>::max()));
  scale = hn::Max(scale, hn::Set(df, std::numeric_limits<float>::denorm_min()));
  f.scale = hn::IfThenElse(hn::Eq(extent, zero), hn::Set(df, 1.0f), scale);
  if (c.kind != VectorFinish::kMinMax) {
    f.zero_point = zero;
    return f;
  }
  // zero point = round_half_even(clamp(qmin - low / scale)): low is finite and the scale positive,
  // so the quotient is a number (possibly -inf, which clamps to the top); the bounds are exact in
  // float32 for these types, so clamping in float32 is the scalar clamp in double. Round is
  // nearest-even.
  VF initial = hn::Sub(hn::Set(df, c.qmin), hn::Div(low, f.scale));
  initial = hn::Min(hn::Max(initial, hn::Set(df, c.zp_lowest)), hn::Set(df, c.zp_highest));
  // Lanes the scalar finish takes (and tails) may hold anything: zero there instead, so that the
  // conversion to integers stays in range.
  f.zero_point = hn::Round(hn::IfThenElseZero(f.ordinary, initial));
  return f;
}

// The zero points' codes (the quantized type's code_mask bits) of a finish.
HWY_INLINE hn::Vec<DU> FinishedZeroPointCodes(const FinishConstants& c, const IntegerFinish& f) {
  const DU du;
  if (c.kind != VectorFinish::kMinMax) return hn::Set(du, c.neutral_zero_point);
  return hn::And(hn::BitCast(du, hn::ConvertTo(DI(), f.zero_point)), hn::Set(du, c.code_mask));
}

// The vector finish of the MX kinds in registers: the e8m0 codes of the groups whose extremes
// are min, max (NaN as +0) and `nan` (the exponent + 127, clamped to [0, 255]; 255 = NaN). Every
// lane is decided here.
HWY_INLINE hn::Vec<DI> FinishMxVectors(const FinishConstants& c, VF min, VF max, hn::Mask<DF> nan) {
  const DF df;
  const DI di;
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
  return hn::IfThenElse(to_nan, hn::Set(di, 0xFF), hn::Add(exponent, hn::Set(di, 127)));
}

// Consecutive groups of `group` elements of x from element `begin` to `end` (group a multiple of
// the lanes, end - begin a multiple of group), reduced one vector per step into out's arrays from
// index 0, with the values reduce_groups gives. Dynamic quantization steps it between the vectors
// it divides, reducing the next stretch of x while the divider works on this one: on their own the
// two take turns, each leaving the other's units idle.
//
// The quantizer holds the hot state in a Cursor (a local, so that its vectors stay in registers:
// through a pointer, every byte the quantizer stores might alias them) and hands it back after
// each stretch. Finish() reduces whatever the quantizer left and folds the last groups.
template <ElementType kX>
class GroupStream {
 public:
  struct Cursor {
    QuickAccumulator acc;
    const void* x;
    uint64_t next, end, group_end;
  };

  HWY_INLINE GroupStream(const void* x, uint64_t begin, uint64_t end, uint64_t group, const GroupExtremes& out)
      : cursor_{QuickAccumulator(), x, begin, end, begin + group}, group_(group), batch_begin_(begin), out_(out) {}

  HWY_INLINE Cursor Take() const { return cursor_; }
  HWY_INLINE void Give(const Cursor& cursor) { cursor_ = cursor; }

  HWY_INLINE void Step(Cursor& c) {
    if (c.next == c.end) return;
    c.acc.Add(LoadLanes<kX>(c.x, c.next));
    c.next += hn::Lanes(DF());
    if (c.next == c.group_end) CloseGroup(c);
  }

  HWY_NOINLINE void Finish() {
    Cursor c = cursor_;
    while (c.next < c.end) Step(c);
    cursor_ = c;
    FoldBatch();
  }

 private:
  static constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);

  // The group's lane-wise extremes and check wait in the batch; N groups fold together.
  HWY_INLINE void CloseGroup(Cursor& c) {
    const DF df;
    const size_t N = hn::Lanes(df);
    hn::Store(c.acc.lo, df, lo_ + batch_ * N);
    hn::Store(c.acc.hi, df, hi_ + batch_ * N);
    hn::Store(c.acc.check, df, check_ + batch_ * N);
    c.acc = QuickAccumulator();
    c.group_end = c.next + group_;
    if (++batch_ == N) {
      FoldBatch();
      batch_begin_ = c.next;
    }
  }

  HWY_NOINLINE void FoldBatch() {
    const DF df;
    const size_t N = hn::Lanes(df);
    bool suspect = false;
#if QDQ_HAVE_FOLD_EACH
    if (batch_ == N) {
      VF lo[16], hi[16];
      VF check = hn::Zero(df);  // summed across the groups, as in ReduceGroupBatch
      for (size_t j = 0; j < N; ++j) {
        lo[j] = hn::Load(df, lo_ + j * N);
        hi[j] = hn::Load(df, hi_ + j * N);
        check = hn::Add(check, hn::Load(df, check_ + j * N));
      }
      hn::StoreU(FoldEach(df, lo, [](VF a, VF b) { return hn::Min(a, b); }), df, out_.min + group_index_);
      hn::StoreU(FoldEach(df, hi, [](VF a, VF b) { return hn::Max(a, b); }), df, out_.max + group_index_);
      suspect = !hn::AllFalse(df, hn::IsNaN(check));
      std::memset(out_.nan + group_index_, 0, N);
    } else
#endif
    {
      for (size_t j = 0; j < batch_; ++j) {
        out_.min[group_index_ + j] = hn::GetLane(hn::MinOfLanes(df, hn::Load(df, lo_ + j * N)));
        out_.max[group_index_ + j] = hn::GetLane(hn::MaxOfLanes(df, hn::Load(df, hi_ + j * N)));
        out_.nan[group_index_ + j] = 0;
        suspect = suspect || !hn::AllFalse(df, hn::IsNaN(hn::Load(df, check_ + j * N)));
      }
    }
    // A NaN check (a NaN, or sums of both infinities): those groups again through Accumulator.
    if (suspect) {
      for (size_t j = 0; j < batch_; ++j) ReduceOneGroup<kX>(cursor_.x, batch_begin_ + j * group_, group_, out_, group_index_ + j);
    }
    group_index_ += batch_;
    batch_ = 0;
  }

  Cursor cursor_;
  uint64_t group_, batch_begin_;
  uint64_t group_index_ = 0;
  size_t batch_ = 0;
  GroupExtremes out_;
  HWY_ALIGN float lo_[kMaxLanes * kMaxLanes];
  HWY_ALIGN float hi_[kMaxLanes * kMaxLanes];
  HWY_ALIGN float check_[kMaxLanes * kMaxLanes];
};

}  // namespace HWY_NAMESPACE
}  // namespace qdq::kernels
HWY_AFTER_NAMESPACE();

#endif  // QDQ_KERNELS_REDUCE_INL_H_
