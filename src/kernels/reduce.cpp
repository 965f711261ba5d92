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

#include "kernels/reduce-inl.h"
#include "kernels/upper_state-inl.h"
#include "types/codec.h"

HWY_BEFORE_NAMESPACE();
namespace qdq::kernels {
namespace HWY_NAMESPACE {

void ReduceExtremes(ElementType x_type, const void* x, uint64_t index, uint64_t count, Extremes* e) {
  const CleanUpperStateOnReturn clean_upper_state;
  switch (x_type) {
    case ElementType::kFloat32: return ReduceTyped<ElementType::kFloat32>(x, index, count, e);
    case ElementType::kFloat16: return ReduceTyped<ElementType::kFloat16>(x, index, count, e);
    case ElementType::kBfloat16: return ReduceTyped<ElementType::kBfloat16>(x, index, count, e);
    default: return;
  }
}

template <ElementType kX>
void ReduceGroupsTyped(const void* x, uint64_t index, uint64_t count, uint64_t group, const GroupExtremes& out) {
  uint64_t begin = 0, g = 0;
#if QDQ_HAVE_FOLD_EACH
  // Groups of whole vectors (32 and 128 elements) on 128-, 256- and 512-bit targets: N groups'
  // folds together.
  const size_t N = hn::Lanes(DF());
  if (group % N == 0) {
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
  const CleanUpperStateOnReturn clean_upper_state;
  switch (x_type) {
    case ElementType::kFloat32: return ReduceGroupsTyped<ElementType::kFloat32>(x, index, count, group, out);
    case ElementType::kFloat16: return ReduceGroupsTyped<ElementType::kFloat16>(x, index, count, group, out);
    case ElementType::kBfloat16: return ReduceGroupsTyped<ElementType::kBfloat16>(x, index, count, group, out);
    default: return;
  }
}

// 1 in the lanes of `mask`, else 0, stored as bytes.
HWY_INLINE void StoreFlags(hn::Mask<DF> mask, uint8_t* flags) {
  const DI di;
  const hn::Rebind<uint8_t, DF> d8;
  hn::StoreU(hn::DemoteTo(d8, hn::IfThenElseZero(hn::RebindMask(di, mask), hn::Set(di, 1))), d8, flags);
}

// Column j of `rows` rows one element at a time (NaN as +0 and flagged, as ReduceTyped's tail).
template <ElementType kX>
void ReduceOneColumn(const void* x, uint64_t index, uint64_t rows, uint64_t stride, uint64_t j, const GroupExtremes& out) {
  Extremes e;
  for (uint64_t r = 0; r < rows; ++r) TakeScalar(ScalarValue(kX, x, index + r * stride + j), &e);
  out.min[j] = e.min;
  out.max[j] = e.max;
  out.nan[j] = e.nan ? 1 : 0;
}

// Columns [j, j + kVectors * N) of `rows` rows (row r's column j at element index + r * stride):
// each lane of a QuickAccumulator is one column, so the extremes need no horizontal fold and no
// state but registers. Where a check is NaN (a NaN, or sums meeting +inf and -inf) the tile is
// reduced again through Accumulator, whose lanes fold NaN as +0 and flag it, column by column.
// The rows of kVectors vectors of columns from column j, each vector into its own accumulator.
template <ElementType kX, class Acc, size_t kVectors>
HWY_INLINE void AccumulateColumns(const void* x, uint64_t index, uint64_t rows, uint64_t stride, uint64_t j,
                                  Acc (&acc)[kVectors]) {
  const size_t N = hn::Lanes(DF());
  for (uint64_t r = 0; r < rows; ++r) {
    const uint64_t at = index + r * stride + j;
    for (size_t k = 0; k < kVectors; ++k) acc[k].Add(LoadLanes<kX>(x, at + k * N));
  }
}

template <ElementType kX, size_t kVectors>
HWY_INLINE void ReduceColumnTile(const void* x, uint64_t index, uint64_t rows, uint64_t stride, uint64_t j,
                                 const GroupExtremes& out) {
  const DF df;
  const size_t N = hn::Lanes(df);
  QuickAccumulator acc[kVectors];
  AccumulateColumns<kX>(x, index, rows, stride, j, acc);
  VF check = acc[0].check;
  for (size_t k = 1; k < kVectors; ++k) check = hn::Add(check, acc[k].check);
  if (hn::AllFalse(df, hn::IsNaN(check))) {
    for (size_t k = 0; k < kVectors; ++k) {
      hn::StoreU(acc[k].lo, df, out.min + j + k * N);
      hn::StoreU(acc[k].hi, df, out.max + j + k * N);
    }
    std::memset(out.nan + j, 0, kVectors * N);
    return;
  }
  Accumulator exact[kVectors];
  AccumulateColumns<kX>(x, index, rows, stride, j, exact);
  for (size_t k = 0; k < kVectors; ++k) {
    hn::StoreU(exact[k].lo, df, out.min + j + k * N);
    hn::StoreU(exact[k].hi, df, out.max + j + k * N);
    StoreFlags(exact[k].nan, out.nan + j + k * N);
  }
}

// Columns [j0, j0 + columns) (columns a multiple of N) of `rows` rows a whole stretch of each row
// at a time: out.min and out.max hold the stretch's lane-wise extremes while its rows go by, in L1
// (kColumnStretch columns are 8 KiB of them). ReduceColumnTile's tiles instead read 2 lines of a
// row and go on to the next row, `stride` elements further: a block of 32 rows of a [4096, 4096]
// float32 weight is 32 streams 16 KiB apart taking 128 bytes each in turn, which neither the
// hardware prefetcher nor lines asked for 1 KiB ahead kept fed (compute_qparams blocked by 32 along
// the first axis spent 58% of its 8.3 ms in those loads, Zen 2, 2 threads). Here each row gives
// 4 KiB in a row. Each column takes its rows in the same order as in the tile (min and max from
// +inf and -inf), so the extremes are the tile's bit for bit, zeros' signs included. Returns false
// where the values' sums are NaN (a NaN, or +inf meeting -inf): the caller then reduces the
// stretch exactly, tile by tile.
template <ElementType kX>
HWY_INLINE bool ReduceColumnStretch(const void* x, uint64_t index, uint64_t rows, uint64_t stride, uint64_t j0,
                                    uint64_t columns, const GroupExtremes& out) {
  const DF df;
  const size_t N = hn::Lanes(df);
  float* const lo = out.min + j0;
  float* const hi = out.max + j0;
  const VF positive_infinity = hn::Set(df, std::numeric_limits<float>::infinity());
  for (uint64_t j = 0; j < columns; j += N) {
    hn::StoreU(positive_infinity, df, lo + j);
    hn::StoreU(hn::Neg(positive_infinity), df, hi + j);
  }
  VF check0 = hn::Zero(df), check1 = hn::Zero(df);
  for (uint64_t r = 0; r < rows; ++r) {
    const uint64_t at = index + r * stride + j0;
    uint64_t j = 0;
    for (; j + 2 * N <= columns; j += 2 * N) {
      const VF v0 = LoadLanes<kX>(x, at + j);
      const VF v1 = LoadLanes<kX>(x, at + j + N);
      hn::StoreU(hn::Min(hn::LoadU(df, lo + j), v0), df, lo + j);
      hn::StoreU(hn::Max(hn::LoadU(df, hi + j), v0), df, hi + j);
      hn::StoreU(hn::Min(hn::LoadU(df, lo + j + N), v1), df, lo + j + N);
      hn::StoreU(hn::Max(hn::LoadU(df, hi + j + N), v1), df, hi + j + N);
      check0 = hn::Add(check0, v0);
      check1 = hn::Add(check1, v1);
    }
    if (j < columns) {
      const VF v0 = LoadLanes<kX>(x, at + j);
      hn::StoreU(hn::Min(hn::LoadU(df, lo + j), v0), df, lo + j);
      hn::StoreU(hn::Max(hn::LoadU(df, hi + j), v0), df, hi + j);
      check0 = hn::Add(check0, v0);
    }
  }
  if (!hn::AllFalse(df, hn::IsNaN(hn::Add(check0, check1)))) return false;
  std::memset(out.nan + j0, 0, columns);
  return true;
}

// Columns per stretch: their min and max (8 KiB in float32) stay in L1 beside a row's 4 KiB of x.
constexpr uint64_t kColumnStretch = 1024;

template <ElementType kX>
void ReduceColumnsTyped(const void* x, uint64_t index, uint64_t rows, uint64_t stride, uint64_t width,
                        const GroupExtremes& out) {
  const size_t N = hn::Lanes(DF());
  uint64_t j = 0;
  if (rows > 1) {
    for (; j + N <= width; j += kColumnStretch) {
      const uint64_t columns = std::min<uint64_t>(kColumnStretch, (width - j) / N * N);
      if (ReduceColumnStretch<kX>(x, index, rows, stride, j, columns, out)) continue;
      uint64_t t = j;
      for (; t + 4 * N <= j + columns; t += 4 * N) ReduceColumnTile<kX, 4>(x, index, rows, stride, t, out);
      for (; t + N <= j + columns; t += N) ReduceColumnTile<kX, 1>(x, index, rows, stride, t, out);
    }
    j = width / N * N;
  }
  for (; j + 4 * N <= width; j += 4 * N) ReduceColumnTile<kX, 4>(x, index, rows, stride, j, out);
  for (; j + N <= width; j += N) ReduceColumnTile<kX, 1>(x, index, rows, stride, j, out);
  for (; j < width; ++j) ReduceOneColumn<kX>(x, index, rows, stride, j, out);
}

void ReduceColumns(ElementType x_type, const void* x, uint64_t index, uint64_t rows, uint64_t stride, uint64_t width,
                   const GroupExtremes& out) {
  const CleanUpperStateOnReturn clean_upper_state;
  switch (x_type) {
    case ElementType::kFloat32: return ReduceColumnsTyped<ElementType::kFloat32>(x, index, rows, stride, width, out);
    case ElementType::kFloat16: return ReduceColumnsTyped<ElementType::kFloat16>(x, index, rows, stride, width, out);
    case ElementType::kBfloat16: return ReduceColumnsTyped<ElementType::kBfloat16>(x, index, rows, stride, width, out);
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

// Integer types of <= 16 bits with float32 scales (the arithmetic: FinishIntegerVectors).
HWY_INLINE void FinishIntegerLanes(const FinishConstants& c, const FinishLanes& io) {
  const DU du;
  const IntegerFinish f = FinishIntegerVectors(c, hn::LoadU(DF(), io.min), hn::LoadU(DF(), io.max), LoadNanFlags(io.nan));
  hn::StoreU(hn::BitCast(du, f.scale), du, io.scale_codes);
  StoreFlags(hn::Not(f.ordinary), io.special);
  hn::StoreU(FinishedZeroPointCodes(c, f), du, io.zero_point_codes);
}

// MX methods with e8m0 scales: the code is the exponent + 127, clamped to [0, 255] (255 = NaN).
HWY_INLINE void FinishMxLanes(const FinishConstants& c, const FinishLanes& io) {
  const DU du;
  const auto code = FinishMxVectors(c, hn::LoadU(DF(), io.min), hn::LoadU(DF(), io.max), LoadNanFlags(io.nan));
  hn::StoreU(hn::BitCast(du, code), du, io.scale_codes);
  hn::StoreU(hn::Zero(du), du, io.zero_point_codes);
  StoreFlags(hn::FirstN(DF(), 0), io.special);
}

void FinishGroups(const FinishConstants& c, const GroupExtremes& e, uint64_t count, uint32_t* scale_codes,
                  uint32_t* zero_point_codes, uint8_t* special) {
  const CleanUpperStateOnReturn clean_upper_state;
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
  const CleanUpperStateOnReturn clean_upper_state;
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
HWY_EXPORT(ReduceColumns);
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

void reduce_columns(ElementType x_type, const void* x, uint64_t index, uint64_t rows, uint64_t stride, uint64_t width,
                    const GroupExtremes& out) {
  HWY_DYNAMIC_DISPATCH(ReduceColumns)(x_type, x, index, rows, stride, width, out);
}

void finish_groups(const FinishConstants& constants, const GroupExtremes& extremes, uint64_t count,
                   uint32_t* scale_codes, uint32_t* zero_point_codes, uint8_t* special) {
  HWY_DYNAMIC_DISPATCH(FinishGroups)(constants, extremes, count, scale_codes, zero_point_codes, special);
}

}  // namespace qdq::kernels
#endif  // HWY_ONCE
