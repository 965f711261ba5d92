// Dynamic quantization of short groups in one loop (kernels.h, DynamicGroups).
//
// Why a loop of its own: reducing a chunk of groups and then quantizing it (the general one-pass
// path) costs the sum of the two on a core whose division and reduction compete for the same
// vector ports, and the reduction's loads wait on memory between the divisions. Here the next
// batch of groups is reduced between the current batch's divisions, with its lines asked for
// ahead, and the scales, zero points and bounds go from the finish's registers straight to the
// divisions. Measured on the Xeon of docs/performance.md (session 26): a hand-written AVX-512
// loop of this shape took int4 blocks of 32 from 0.61-0.64 to 0.83-0.92 of plain quantization's
// speed at 16M; the sequential form of the same loop reached 0.74-0.78.
//
// Exactness: the extremes are the lane-wise min and max of each group, folded (FoldEach) as
// reduce_groups folds them; a batch whose lane-wise sums are NaN (a NaN, or +inf meeting -inf)
// goes to the fallback, which reduces it exactly. The scales and zero points are the vector
// finish's (FinishIntegerVectors, equal to the scalar finish where it decides; batches with a
// lane it does not decide go to the fallback). The codes are IntegerOutput::CodesOf of x / scale,
// the quantize kernels' arithmetic for the plan dynamic_quantize makes.
#include "kernels/kernels.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/dynamic.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/kernels-inl.h"
#include "kernels/upper_state-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qdq::kernels {
namespace HWY_NAMESPACE {

#if QDQ_HAVE_FOLD_EACH

// One batch's reduction: group j's lane-wise extremes lo[j] and hi[j], and every value of the
// batch summed lane-wise (a number exactly where no group held a NaN and no lane met both
// infinities: QuickAccumulator's test).
struct BatchExtremes {
  VF lo[16], hi[16];
  VF check;
};

// Group j of a batch: its `vectors` whole vectors from x (kVectors of them where kVectors is
// nonzero, the compiler then unrolling them; four as two pairs, for shorter dependency chains).
template <ElementType kX, size_t kVectors>
HWY_INLINE void ReduceGroupInto(const typename XInput<kX>::T* x, size_t vectors, size_t j, BatchExtremes& e) {
  const size_t N = hn::Lanes(DF());
  QuickAccumulator a(XInput<kX>::Load(x));
  if constexpr (kVectors == 4) {
    QuickAccumulator c(XInput<kX>::Load(x + 2 * N));
    a.Add(XInput<kX>::Load(x + N));
    c.Add(XInput<kX>::Load(x + 3 * N));
    a.Merge(c);
  } else {
    const size_t count = kVectors != 0 ? kVectors : vectors;
    for (size_t v = 1; v < count; ++v) a.Add(XInput<kX>::Load(x + v * N));
  }
  e.lo[j] = a.lo;
  e.hi[j] = a.hi;
  e.check = hn::Add(e.check, a.check);
}

// A batch's finish: integer kinds' scales and zero points, or MX kinds' e8m0 codes.
struct BatchFinish {
  IntegerFinish integer;
  hn::Vec<DI> e8m0;
};

// The batch's finish, or false where the fallback must take the batch: a NaN or both infinities
// in its sums; a lane the integer finish leaves to the scalar one; an e8m0 NaN scale.
template <bool kInteger>
HWY_INLINE bool FinishBatch(const FinishConstants& c, const BatchExtremes& e, BatchFinish* f) {
  const DF df;
  if (!hn::AllFalse(df, hn::IsNaN(e.check))) return false;
  const VF min = FoldEach(df, e.lo, [](VF a, VF b) { return hn::Min(a, b); });
  const VF max = FoldEach(df, e.hi, [](VF a, VF b) { return hn::Max(a, b); });
  if constexpr (kInteger) {
    f->integer = FinishIntegerVectors(c, min, max, hn::FirstN(df, 0));
    return hn::AllTrue(df, f->integer.ordinary);
  } else {
    const DI di;
    f->e8m0 = FinishMxVectors(c, min, max, hn::FirstN(df, 0));
    return hn::AllFalse(di, hn::Eq(f->e8m0, hn::Set(di, 0xFF)));
  }
}

// e8m0 codes 0 to 254 as the float32 scales they stand for: 2^(code - 127), code 0 the subnormal
// 2^-127 (0x0040'0000), the others the exponent field alone.
HWY_INLINE VF E8M0Values(hn::Vec<DI> code) {
  const DI di;
  return hn::BitCast(DF(), hn::IfThenElse(hn::Eq(code, hn::Zero(di)), hn::Set(di, 0x40'0000), hn::ShiftLeft<23>(code)));
}

// A batch's zero-point codes (masked to the type's bits) to groups [g0, g0 + N) of d.zero_points
// (packed ones through Pack: g0 is a multiple of N, so the batch owns whole bytes).
HWY_INLINE void StoreZeroPoints(const DynamicGroups& d, hn::Vec<DU> codes, uint64_t g0) {
  auto* bytes = static_cast<uint8_t*>(d.zero_points);
  if (!d.y_type->is_packed() || d.zero_point_layout != SubByteLayout::kPacked) {
    StoreLowBytes(hn::BitCast(DI(), codes), bytes + g0);
    return;
  }
  HWY_ALIGN uint8_t lanes[16];
  StoreLowBytes(hn::BitCast(DI(), codes), lanes);
  Pack(*d.y_type, lanes, hn::Lanes(DU()), d.zero_points, g0);
}

// The most elements a group may have (kernels.h: dynamic_groups_fit): a batch of 16 such groups
// of float32 is 256 KiB, and the batch being divided stays in L2 while the next is reduced (rows
// of 4096, per-axis quantization of a [4096, 4096] weight's rows, among them).
constexpr size_t kMostElements = 4096;

template <class Output, ElementType kX, size_t kVectors>
void QuantizeGroups(const DynamicGroups& d, uint64_t first, uint64_t last) {
  using T = typename XInput<kX>::T;
  const DF df;
  const DI di;
  const size_t N = hn::Lanes(df);
  const size_t vectors = kVectors != 0 ? kVectors : static_cast<size_t>(d.group / N);
  const uint64_t group = vectors * N;
  const T* const x_data = static_cast<const T*>(d.x);
  const uint64_t end = first + (last - first) / N * N;
  const bool packed = d.y_type->is_packed() && d.y_layout == SubByteLayout::kPacked;
  const bool one_code_per_byte = d.y_type->is_packed() && !packed;
  const VI code_mask = hn::Set(di, static_cast<int32_t>((1u << Output::kCodeBits) - 1));
  // kSymmetric's zero point: the neutral code's value (0 for the signed types).
  const uint32_t neutral = d.finish.neutral_zero_point;
  [[maybe_unused]] const float neutral_value = Output::kSignedCodes && (neutral >> (Output::kCodeBits - 1)) != 0
                                  ? static_cast<float>(static_cast<int32_t>(neutral) - (1 << Output::kCodeBits))
                                  : static_cast<float>(neutral);
  const bool symmetric = d.finish.kind != VectorFinish::kMinMax;
  constexpr bool kInteger = Output::kIsInteger;
  // Float codes: a zero point's +0 added where the plan applies it (float4e2m1: -0 becomes +0).
  [[maybe_unused]] const bool add_zero = d.add_zero_point;
  BatchExtremes e;
  BatchFinish f;
  bool ready = false;
  const auto reduce_alone = [&](uint64_t g0) HWY_ATTR {
    e.check = hn::Zero(df);
    for (size_t j = 0; j < N; ++j) ReduceGroupInto<kX, kVectors>(x_data + (g0 + j) * group, vectors, j, e);
    ready = FinishBatch<kInteger>(d.finish, e, &f);
  };
  if (end > first) reduce_alone(first);
  // Lines are asked for kPrefetchAheadBytes past the next batch's reduction, up to the range's end.
  const char* const x_end = reinterpret_cast<const char*>(x_data + end * group);
  HWY_ALIGN float scale_lanes[16], lo_lanes[16] = {}, hi_lanes[16] = {};
  HWY_ALIGN int32_t bias_lanes[16] = {};
  // Packed y: a batch's codes, one per byte, before packing (groups of more than kMostElements /
  // N elements are packed one at a time).
  HWY_ALIGN uint8_t codes[kMostElements];
  const bool pack_per_group = N * group > kMostElements;
  for (uint64_t g0 = first; g0 < end; g0 += N) {
    const uint64_t next = g0 + N;
    const bool has_next = next < end;
    if (!ready) {
      d.fallback(d.fallback_context, g0, next);
      if (has_next) reduce_alone(next);
      continue;
    }
    if constexpr (kInteger) {
      hn::StoreU(f.integer.scale, df, static_cast<float*>(d.scales) + g0);
      if (d.zero_points != nullptr) StoreZeroPoints(d, FinishedZeroPointCodes(d.finish, f.integer), g0);
      const typename Output::Bounds bounds =
          Output::MakeBounds(symmetric ? hn::Set(df, neutral_value) : f.integer.zero_point);
      hn::Store(f.integer.scale, df, scale_lanes);
      hn::Store(bounds.lo, df, lo_lanes);
      hn::Store(bounds.hi, df, hi_lanes);
      hn::Store(bounds.bias, di, bias_lanes);
    } else {
      StoreLowBytes(f.e8m0, static_cast<uint8_t*>(d.scales) + g0);
      hn::Store(E8M0Values(f.e8m0), df, scale_lanes);
    }
    const T* x = x_data + g0 * group;
    const T* x_next = x_data + (has_next ? next : g0) * group;  // (not past x's end: read only when has_next)
    uint8_t* const y_batch = static_cast<uint8_t*>(d.y) + g0 * group;
    e.check = hn::Zero(df);
    for (size_t j = 0; j < N; ++j) {
      const VF s = hn::Set(df, scale_lanes[j]);
      typename Output::Bounds b{};
      if constexpr (kInteger) b = {hn::Set(df, lo_lanes[j]), hn::Set(df, hi_lanes[j]), hn::Set(di, bias_lanes[j])};
      uint8_t* out = !packed ? y_batch + j * group : pack_per_group ? codes : codes + j * group;
      // Long groups (kVectors 0) reduce the next batch's group j vector by vector between this
      // group's divisions; short ones after them (within the out-of-order window either way).
      const T* next_group = x_next + j * group;
      QuickAccumulator next_acc;
      if constexpr (kVectors == 0) {
        if (has_next) next_acc = QuickAccumulator(XInput<kX>::Load(next_group));
      }
      for (size_t v = 0; v < vectors; ++v) {
        if constexpr (kVectors == 0) {
          if (has_next && v > 0) next_acc.Add(XInput<kX>::Load(next_group + v * N));
          // A line kPrefetchAheadBytes past the next group's loads for each of its lines.
          if (has_next && (v * N * sizeof(T)) % 64 == 0) {
            const char* ahead = reinterpret_cast<const char*>(next_group + v * N) + kPrefetchAheadBytes;
            if (ahead < x_end) PrefetchForLater(ahead);
          }
        }
        const VF q = hn::Div(XInput<kX>::Load(x + j * group + v * N), s);
        VI code;
        if constexpr (kInteger) {
          code = Output::CodesOf(q, b);
        } else if constexpr (Output::kAddsZero) {
          code = Encode<Output::kFormat>(add_zero ? hn::Add(q, hn::Zero(df)) : q, d.saturate);
        } else {
          code = Encode<Output::kFormat>(q, d.saturate);
        }
        if (one_code_per_byte) code = hn::And(code, code_mask);
        StoreLowBytes(code, out + v * N);
      }
      if constexpr (kVectors == 0) {
        if (has_next) {
          e.lo[j] = next_acc.lo;
          e.hi[j] = next_acc.hi;
          e.check = hn::Add(e.check, next_acc.check);
        }
      } else if (has_next) {
        ReduceGroupInto<kX, kVectors>(next_group, vectors, j, e);
        const char* ahead = reinterpret_cast<const char*>(next_group) + kPrefetchAheadBytes;
        for (size_t line = 0; line < group * sizeof(T); line += 64) {
          if (ahead + line < x_end) PrefetchForLater(ahead + line);
        }
      }
      if (packed && pack_per_group) Pack(*d.y_type, codes, group, d.y, (g0 + j) * group);
    }
    if (packed && !pack_per_group) Pack(*d.y_type, codes, N * group, d.y, g0 * group);
    if (has_next) ready = FinishBatch<kInteger>(d.finish, e, &f);
  }
  if (end < last) d.fallback(d.fallback_context, end, last);
}

// float32 x unrolls groups of 1, 2 and 4 vectors; the rest loop over their vectors.
template <class Output, ElementType kX>
void QuantizeGroupsOf(const DynamicGroups& d, uint64_t first, uint64_t last) {
  const size_t N = hn::Lanes(DF());
  if constexpr (kX == ElementType::kFloat32) {
    if (d.group == N) return QuantizeGroups<Output, kX, 1>(d, first, last);
    if (d.group == 2 * N) return QuantizeGroups<Output, kX, 2>(d, first, last);
    if (d.group == 4 * N) return QuantizeGroups<Output, kX, 4>(d, first, last);
  }
  QuantizeGroups<Output, kX, 0>(d, first, last);
}

template <class Output>
void QuantizeGroupsOfX(const DynamicGroups& d, uint64_t first, uint64_t last) {
  switch (d.x_type) {
    case ElementType::kFloat32: return QuantizeGroupsOf<Output, ElementType::kFloat32>(d, first, last);
    case ElementType::kFloat16: return QuantizeGroupsOf<Output, ElementType::kFloat16>(d, first, last);
    case ElementType::kBfloat16: return QuantizeGroupsOf<Output, ElementType::kBfloat16>(d, first, last);
    default: d.fallback(d.fallback_context, first, last);
  }
}

#endif  // QDQ_HAVE_FOLD_EACH

bool DynamicGroupsFit(uint64_t group) {
#if QDQ_HAVE_FOLD_EACH
  const size_t N = hn::Lanes(DF());
  return group % N == 0 && group >= N && group <= kMostElements;
#else
  (void)group;
  return false;
#endif
}

void DynamicQuantizeGroups(const DynamicGroups& d, uint64_t first, uint64_t last) {
  const CleanUpperStateOnReturn clean_upper_state;
#if QDQ_HAVE_FOLD_EACH
  const bool integer_finish = d.finish.kind == VectorFinish::kMinMax || d.finish.kind == VectorFinish::kSymmetric;
  const bool mx_finish = d.finish.kind == VectorFinish::kMxFloor || d.finish.kind == VectorFinish::kMxCeil ||
                         d.finish.kind == VectorFinish::kMxEven || d.finish.kind == VectorFinish::kMxRceil;
  if (mx_finish && DynamicGroupsFit(d.group)) {
    switch (d.y_type->type) {
      case ElementType::kFloat8E4M3FN: return QuantizeGroupsOfX<FloatOutput<kE4M3FN, false>>(d, first, last);
      case ElementType::kFloat8E4M3FNUZ: return QuantizeGroupsOfX<FloatOutput<kE4M3FNUZ, false>>(d, first, last);
      case ElementType::kFloat8E5M2: return QuantizeGroupsOfX<FloatOutput<kE5M2, false>>(d, first, last);
      case ElementType::kFloat8E5M2FNUZ: return QuantizeGroupsOfX<FloatOutput<kE5M2FNUZ, false>>(d, first, last);
      case ElementType::kFloat4E2M1: return QuantizeGroupsOfX<FloatOutput<kE2M1, true>>(d, first, last);
      default: break;
    }
  }
  if (integer_finish && DynamicGroupsFit(d.group)) {
    switch (d.y_type->type) {
      case ElementType::kInt8: return QuantizeGroupsOfX<IntegerOutput<8, true>>(d, first, last);
      case ElementType::kUint8: return QuantizeGroupsOfX<IntegerOutput<8, false>>(d, first, last);
      case ElementType::kInt4: return QuantizeGroupsOfX<IntegerOutput<4, true>>(d, first, last);
      case ElementType::kUint4: return QuantizeGroupsOfX<IntegerOutput<4, false>>(d, first, last);
      case ElementType::kInt2: return QuantizeGroupsOfX<IntegerOutput<2, true>>(d, first, last);
      case ElementType::kUint2: return QuantizeGroupsOfX<IntegerOutput<2, false>>(d, first, last);
      default: break;
    }
  }
#endif
  d.fallback(d.fallback_context, first, last);
}

}  // namespace HWY_NAMESPACE
}  // namespace qdq::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qdq::kernels {

HWY_EXPORT(DynamicGroupsFit);
HWY_EXPORT(DynamicQuantizeGroups);

bool dynamic_groups_fit(uint64_t group) { return HWY_DYNAMIC_DISPATCH(DynamicGroupsFit)(group); }

void dynamic_quantize_groups(const DynamicGroups& d, uint64_t first, uint64_t last) {
  HWY_DYNAMIC_DISPATCH(DynamicQuantizeGroups)(d, first, last);
}

}  // namespace qdq::kernels
#endif  // HWY_ONCE
