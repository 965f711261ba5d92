// Dynamic quantization in one loop (kernels.h, DynamicGroups): short contiguous groups
// (QuantizeGroups) and blocks along a non-last axis walked in stretches of columns (QuantizeStretches).
//
// Why a loop of its own: reducing a chunk of groups and then quantizing it (the general one-pass
// path) costs the sum of the two on a core whose division and reduction compete for the same
// vector ports, and the reduction's loads wait on memory between the divisions. Here the next
// batch of groups is reduced between the current batch's divisions, with its lines asked for
// ahead, and the scales, zero points and bounds go from the finish's registers straight to the
// divisions. Measured on the Xeon of docs/performance-history.md (session 26): a hand-written AVX-512
// loop of this shape took int4 blocks of 32 from 0.61-0.64 to 0.83-0.92 of plain quantization's
// speed at 16M; the sequential form of the same loop reached 0.74-0.78.
//
// Exactness: the extremes are the lane-wise min and max of each group, folded (FoldEach) as
// reduce_groups folds them (stretches: each lane is one column's group, no fold); a batch whose
// lane-wise sums are NaN (a NaN, or +inf meeting -inf) goes to the fallback, which reduces it exactly. The scales and zero points are the vector
// finish's (FinishIntegerVectors, equal to the scalar finish where it decides; batches with a
// lane it does not decide go to the fallback). The codes are IntegerOutput::CodesOf of x / scale,
// the quantize kernels' arithmetic for the plan dynamic_quantize makes.
#include "kernels/kernels.h"

#include <bit>
#include <cstring>
#include <limits>

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

// The finish of the groups whose extremes are the lanes of min and max (no NaN among them), or
// false where the fallback must take them: a lane the integer finish leaves to the scalar one; an
// e8m0 NaN scale.
template <bool kInteger>
HWY_INLINE bool FinishLanes(const FinishConstants& c, VF min, VF max, BatchFinish* f) {
  const DF df;
  if constexpr (kInteger) {
    f->integer = FinishIntegerVectors(c, min, max, hn::FirstN(df, 0));
    return hn::AllTrue(df, f->integer.ordinary);
  } else {
    const DI di;
    f->e8m0 = FinishMxVectors(c, min, max, hn::FirstN(df, 0));
    return hn::AllFalse(di, hn::Eq(f->e8m0, hn::Set(di, 0xFF)));
  }
}

// The batch's finish, or false where the fallback must take the batch: a NaN or both infinities
// in its sums, or FinishLanes' cases.
template <bool kInteger>
HWY_INLINE bool FinishBatch(const FinishConstants& c, const BatchExtremes& e, BatchFinish* f) {
  const DF df;
  if (!hn::AllFalse(df, hn::IsNaN(e.check))) return false;
  const VF min = FoldEach(df, e.lo, [](VF a, VF b) { return hn::Min(a, b); });
  const VF max = FoldEach(df, e.hi, [](VF a, VF b) { return hn::Max(a, b); });
  return FinishLanes<kInteger>(c, min, max, f);
}

// e8m0 codes 0 to 254 as the float32 scales they stand for: 2^(code - 127), code 0 the subnormal
// 2^-127 (0x0040'0000), the others the exponent field alone.
HWY_INLINE VF E8M0Values(hn::Vec<DI> code) {
  const DI di;
  return hn::BitCast(DF(), hn::IfThenElse(hn::Eq(code, hn::Zero(di)), hn::Set(di, 0x40'0000), hn::ShiftLeft<23>(code)));
}

// Codes one per byte (their low bits; count a multiple of 8) packed two (4-bit) or four (2-bit)
// to a byte, low bits first as the packed layout has them, eight codes per 64-bit word: for a
// vector of zero points, and the ends of rows PackCodeRow packs in vectors (a call of Pack per
// row cost more than the row's divisions).
static_assert(std::endian::native == std::endian::little, "the words below are read and written little-endian");
template <int kBits>
HWY_INLINE void PackCodeBytes(const uint8_t* codes, size_t count, uint8_t* out) {
  for (size_t i = 0; i < count; i += 8) {
    uint64_t w;
    std::memcpy(&w, codes + i, 8);
    if constexpr (kBits == 4) {
      w &= 0x0F0F'0F0F'0F0F'0F0Full;
      w = (w | (w >> 4)) & 0x00FF'00FF'00FF'00FFull;  // byte 2j: code 2j | code 2j+1 << 4
      w = (w | (w >> 8)) & 0x0000'FFFF'0000'FFFFull;  // bytes 4j, 4j+1: two such pairs
      w = (w | (w >> 16)) & 0xFFFF'FFFFull;
      std::memcpy(out + i / 2, &w, 4);
    } else {
      static_assert(kBits == 2);
      w &= 0x0303'0303'0303'0303ull;
      w = (w | (w >> 6)) & 0x000F'000F'000F'000Full;   // byte 2j: code 2j | code 2j+1 << 2
      w = (w | (w >> 12)) & 0x0000'00FF'0000'00FFull;  // byte 4j: codes 4j to 4j+3
      w = (w | (w >> 24)) & 0xFFFFull;
      std::memcpy(out + i / 4, &w, 2);
    }
  }
}

// A batch's zero-point codes (masked to the type's bits) to groups [g0, g0 + N) of d.zero_points
// (packed ones packed here: g0 is a multiple of the codes per byte, so the batch owns whole
// bytes; QuantizeGroups' g0 is a multiple of N, QuantizeStretches' one of N past a slab's first
// group, s * inner with inner a multiple of the codes per byte).
HWY_INLINE void StoreZeroPoints(const DynamicGroups& d, hn::Vec<DU> codes, uint64_t g0) {
  auto* bytes = static_cast<uint8_t*>(d.zero_points);
  if (!d.y_type->is_packed() || d.zero_point_layout != SubByteLayout::kPacked) {
    StoreLowBytes(hn::BitCast(DI(), codes), bytes + g0);
    return;
  }
  HWY_ALIGN uint8_t lanes[16];
  StoreLowBytes(hn::BitCast(DI(), codes), lanes);
  const size_t N = hn::Lanes(DU());
  if (N % 8 != 0) return Pack(*d.y_type, lanes, N, d.zero_points, g0);
  // In registers: Pack's call for 8 codes was 5% of dynamic int4 blocks along the first axis.
  if (d.y_type->bits == 4) return PackCodeBytes<4>(lanes, N, bytes + g0 / 2);
  PackCodeBytes<2>(lanes, N, bytes + g0 / 4);
}

// The value of kSymmetric's zero point: the neutral code's (0 for the signed types).
template <class Output>
HWY_INLINE float NeutralValue(const FinishConstants& c) {
  const uint32_t neutral = c.neutral_zero_point;
  return Output::kSignedCodes && (neutral >> (Output::kCodeBits - 1)) != 0
             ? static_cast<float>(static_cast<int32_t>(neutral) - (1 << Output::kCodeBits))
             : static_cast<float>(neutral);
}

// What a finished vector of groups g0 to g0 + N hands to their divisions, lane j for group g0 + j:
// the divisor and (integer codes) the clamp bounds.
template <class Output>
struct LaneOperands {
  VF scale;
  typename Output::Bounds bounds;
};

// Stores the scales and zero points of finish f for groups g0 to g0 + N, and returns their
// operands.
template <class Output>
HWY_INLINE LaneOperands<Output> StoreFinished(const DynamicGroups& d, const BatchFinish& f, uint64_t g0) {
  const DF df;
  if constexpr (Output::kIsInteger) {
    hn::StoreU(f.integer.scale, df, static_cast<float*>(d.scales) + g0);
    if (d.zero_points != nullptr) StoreZeroPoints(d, FinishedZeroPointCodes(d.finish, f.integer), g0);
    const VF zero_point =
        d.finish.kind == VectorFinish::kMinMax ? f.integer.zero_point : hn::Set(df, NeutralValue<Output>(d.finish));
    return {f.integer.scale, Output::MakeBounds(zero_point)};
  } else {
    StoreLowBytes(f.e8m0, static_cast<uint8_t*>(d.scales) + g0);
    return {E8M0Values(f.e8m0), {}};
  }
}

// The codes of quotients q (x / scale) under bounds b: the quantize plan's lane arithmetic
// (IntegerOutput::CodesOf; Encode, float4e2m1's +0 zero point added where the plan adds it: -0
// becomes +0), masked to the type's bits for one code per byte.
template <class Output>
HWY_INLINE VI QuotientCodes(const DynamicGroups& d, VF q, const typename Output::Bounds& b, bool one_code_per_byte) {
  VI code;
  if constexpr (Output::kIsInteger) {
    code = Output::CodesOf(q, b);
  } else if constexpr (Output::kAddsZero) {
    code = Encode<Output::kFormat>(d.add_zero_point ? hn::Add(q, hn::Zero(DF())) : q, d.saturate);
  } else {
    code = Encode<Output::kFormat>(q, d.saturate);
  }
  if (one_code_per_byte) code = hn::And(code, hn::Set(DI(), static_cast<int32_t>((1u << Output::kCodeBits) - 1)));
  return code;
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
  // Codes of a byte each to a large y: held in `codes` and streamed in whole lines (a group's or
  // a batch's, where they start on a line), as the quantize kernels stream such a y. Zen 2, 16M
  // float32 to int8 blocked by 128 along the last axis, 2 threads: 2.90-3.28 -> 2.78-2.82 ms;
  // rows of 4096 (per-axis) and float8 MX blocks of 32 measured alike both ways.
  const bool stream = !packed && d.y_bytes >= kStreamingOutputBytes;
  const auto put = [&](const uint8_t* from, uint8_t* to, uint64_t bytes) HWY_ATTR {
    if (reinterpret_cast<uintptr_t>(to) % kLine == 0 && bytes % kLine == 0) {
      for (uint64_t i = 0; i < bytes; i += kLine) StreamLine(from + i, to + i);
    } else {
      std::memcpy(to, from, bytes);
    }
  };
  constexpr bool kInteger = Output::kIsInteger;
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
  // Packed or streamed y: a batch's codes, one per byte, before packing or streaming (groups of
  // more than kMostElements / N elements one at a time).
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
    const LaneOperands<Output> operands = StoreFinished<Output>(d, f, g0);
    hn::Store(operands.scale, df, scale_lanes);
    if constexpr (kInteger) {
      hn::Store(operands.bounds.lo, df, lo_lanes);
      hn::Store(operands.bounds.hi, df, hi_lanes);
      hn::Store(operands.bounds.bias, di, bias_lanes);
    }
    const T* x = x_data + g0 * group;
    const T* x_next = x_data + (has_next ? next : g0) * group;  // (not past x's end: read only when has_next)
    uint8_t* const y_batch = static_cast<uint8_t*>(d.y) + g0 * group;
    e.check = hn::Zero(df);
    for (size_t j = 0; j < N; ++j) {
      const VF s = hn::Set(df, scale_lanes[j]);
      typename Output::Bounds b{};
      if constexpr (kInteger) b = {hn::Set(df, lo_lanes[j]), hn::Set(df, hi_lanes[j]), hn::Set(di, bias_lanes[j])};
      uint8_t* out = !packed && !stream ? y_batch + j * group : pack_per_group ? codes : codes + j * group;
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
        const VI code = QuotientCodes<Output>(d, q, b, one_code_per_byte);
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
      if (stream && pack_per_group) put(codes, y_batch + j * group, group);
    }
    if (packed && !pack_per_group) Pack(*d.y_type, codes, N * group, d.y, g0 * group);
    if (stream && !pack_per_group) put(codes, y_batch, N * group);
    if (has_next) ready = FinishBatch<kInteger>(d.finish, e, &f);
  }
  // Streaming stores are weakly ordered: complete them before the task reports itself done (the
  // fallbacks' ordinary stores on this thread go to other lines).
  if (stream) hwy::FlushStream();
  if (end < last) d.fallback(d.fallback_context, end, last);
}

// A row of codes one per byte (count a multiple of 8) packed as PackCodeBytes packs them, a
// vector of bytes at a time: 4-bit codes pair within 16-bit lanes (low code in the low nibble)
// narrowed to bytes (as signed lanes, of at most 0xFF: Highway narrows those to unsigned bytes); 2-bit codes pair likewise into 4-bit values, which pair again.
template <int kBits>
HWY_INLINE void PackCodeRow(uint8_t* codes, size_t count, uint8_t* out) {
  const hn::ScalableTag<uint16_t> d16;
  const hn::Repartition<uint8_t, decltype(d16)> d8;
  const hn::Rebind<uint8_t, decltype(d16)> half;
  const size_t bytes = hn::Lanes(d8);
  // Pairs of bytes (masked to `mask` bits each) to one byte: low | high << bits.
  const auto pair = [&](const uint8_t* from, uint8_t* to, uint16_t mask, int bits) HWY_ATTR {
    const auto v = hn::BitCast(d16, hn::LoadU(d8, from));
    const auto low = hn::And(v, hn::Set(d16, mask));
    const auto high = hn::ShiftRightSame(hn::And(v, hn::Set(d16, static_cast<uint16_t>(mask << 8))), 8 - bits);
    hn::StoreU(hn::DemoteTo(half, hn::BitCast(hn::RebindToSigned<decltype(d16)>(), hn::Or(low, high))), half, to);
  };
  size_t i = 0;
  if constexpr (kBits == 4) {
    for (; i + bytes <= count; i += bytes) pair(codes + i, out + i / 2, 0x0F, 4);
  } else {
    static_assert(kBits == 2);
    // First pass in place: each pair of 2-bit codes to a 4-bit value, one per byte, in codes[0, count / 2).
    for (; i + bytes <= count; i += bytes) pair(codes + i, codes + i / 2, 0x03, 2);
    size_t k = 0;
    for (; k + bytes <= i / 2; k += bytes) pair(codes + k, out + k / 2, 0x0F, 4);
    PackCodeBytes<4>(codes + k, i / 2 - k, out + k / 2);  // (a multiple of 8: i is one of 16)
  }
  PackCodeBytes<kBits>(codes + i, count - i, out + i * kBits / 8);
}

// Blocks along a non-last axis: slab s (outer index s / blocks, block s % blocks) is a block's
// rows of x, `inner` consecutive elements each, and its column c one group (group s * inner + c).
// A slab is taken in stretches of kStretchColumns columns (the last one shorter; columns past the
// last whole vector go to the fallback, slab by slab). A stretch's rows are reduced a row's
// stretch at a time into lane-wise min and max held in L1, finished into per-column operands
// (scale, bounds) held beside them, then quantized row by row while the next stretch is reduced
// row by row, vector by vector between the divisions. Each column takes its rows in order from
// +inf and -inf, as compute_qparams' reduction (reduce_columns) does.
//
// Why stretches: the loop this replaced walked strips of 32 columns down a slab's rows, 128 bytes
// of each row in turn, as many streams as the block has rows 16 KiB apart for a [4096, 4096]
// weight, which the prefetchers did not keep fed (lines asked for 1 KiB ahead along each row did
// not help either: docs/performance-history.md, session 50). Here each row gives 2 KiB in a row.
// Zen 2, [4096, 4096] float32 blocked by 32 along axis 0, 2 threads: int8 4.8-5.2 -> 3.9-4.0 ms,
// int4 5.5-5.7 -> 4.3-4.6, float8e4m3fn MX 5.3-5.6 -> 4.9-5.1.
constexpr uint64_t kStretchColumns = 512;

// Whether a large y goes out in whole lines with non-temporal stores: where y starts on a line and
// every row is whole lines (then so is every stretch's part of it). Large is 8 MiB here, half the
// quantize kernels' threshold, for every code width: packed int4 of 16M elements (8 MiB) ran
// 5.8-6.4 ms streamed against 6.5-7.1 stored (Zen 2, before the rows were packed in vectors); the
// other widths were measured at 16 MiB only, and MX codes (which take the stretches only where
// they stream, on AVX2) between 8 and 16 MiB not at all.
HWY_INLINE bool StretchesStream(const DynamicGroups& d) {
  const uint64_t code_bits = d.y_type->bits < 8 && d.y_layout == SubByteLayout::kPacked ? d.y_type->bits : 8;
  return d.y_bytes >= kStreamingOutputBytes / 2 && d.inner * code_bits % (8 * kLine) == 0 &&
         reinterpret_cast<uintptr_t>(d.y) % kLine == 0;
}

template <class Output, ElementType kX>
void QuantizeStretches(const DynamicGroups& d, uint64_t first, uint64_t last) {
  using T = typename XInput<kX>::T;
  constexpr bool kInteger = Output::kIsInteger;
  constexpr int kBits = Output::kCodeBits;
  const DF df;
  const DI di;
  const size_t N = hn::Lanes(df);
  const uint64_t inner = d.inner;
  const uint64_t whole = inner / N * N;  // columns the stretches take
  const T* const x_data = static_cast<const T*>(d.x);
  uint8_t* const y_data = static_cast<uint8_t*>(d.y);
  const bool packed = kBits < 8 && d.y_layout == SubByteLayout::kPacked;
  const bool one_code_per_byte = kBits < 8 && !packed;
  const uint64_t code_bits = packed ? kBits : 8;
  const bool stream = StretchesStream(d);
  const auto slab_start = [&](uint64_t s) {  // element index of the slab's first row
    const uint64_t o = s / d.blocks, b = s % d.blocks;
    return (o * d.axis_dim + std::min(d.axis_dim, b * d.block)) * inner;
  };
  // A stretch: its slab, first column and columns; its first row's first element; its rows; its
  // first group.
  struct Stretch {
    uint64_t slab, column, columns, element, rows, group;
  };
  const auto stretch_at = [&](uint64_t s, uint64_t column) {
    const uint64_t start = slab_start(s);
    return Stretch{s, column, std::min<uint64_t>(kStretchColumns, whole - column), start + column,
                   (slab_start(s + 1) - start) / inner, s * inner + column};
  };
  // The stretch being reduced: its columns' extremes and the sum of its values (QuickAccumulator's
  // NaN test). The stretch being quantized: its columns' divisors and bounds.
  HWY_ALIGN float lo[kStretchColumns], hi[kStretchColumns], scale[kStretchColumns];
  HWY_ALIGN float bound_lo[kInteger ? kStretchColumns : 1], bound_hi[kInteger ? kStretchColumns : 1];
  HWY_ALIGN int32_t bias[kInteger ? kStretchColumns : 1];
  HWY_ALIGN uint8_t codes[kStretchColumns], packed_codes[kStretchColumns];
  VF check = hn::Zero(df);
  const auto start_reduction = [&](const Stretch& st) HWY_ATTR {
    const VF positive_infinity = hn::Set(df, std::numeric_limits<float>::infinity());
    check = hn::Zero(df);
    for (uint64_t j = 0; j < st.columns; j += N) {
      hn::Store(positive_infinity, df, lo + j);
      hn::Store(hn::Neg(positive_infinity), df, hi + j);
    }
  };
  const auto reduce_vector = [&](VF v, uint64_t j, VF& sum) HWY_ATTR {
    hn::Store(hn::Min(hn::Load(df, lo + j), v), df, lo + j);
    hn::Store(hn::Max(hn::Load(df, hi + j), v), df, hi + j);
    sum = hn::Add(sum, v);
  };
  const auto reduce_row = [&](const Stretch& st, uint64_t r) HWY_ATTR {
    const T* x = x_data + st.element + r * inner;
    VF sum = hn::Zero(df);
    for (uint64_t j = 0; j < st.columns; j += N) reduce_vector(XInput<kX>::Load(x + j), j, sum);
    check = hn::Add(check, sum);
  };
  // Stores the stretch's scales and zero points and keeps its operands, or returns false where
  // the fallback must take it (a NaN or both infinities in its sums; a lane the vector finish
  // leaves to the scalar one): the fallback then writes every scale and zero point of the stretch.
  const auto finish = [&](const Stretch& st) HWY_ATTR {
    if (!hn::AllFalse(df, hn::IsNaN(check))) return false;
    for (uint64_t j = 0; j < st.columns; j += N) {
      BatchFinish f;
      if (!FinishLanes<kInteger>(d.finish, hn::Load(df, lo + j), hn::Load(df, hi + j), &f)) return false;
      const LaneOperands<Output> operands = StoreFinished<Output>(d, f, st.group + j);
      hn::Store(operands.scale, df, scale + j);
      if constexpr (kInteger) {
        hn::Store(operands.bounds.lo, df, bound_lo + j);
        hn::Store(operands.bounds.hi, df, bound_hi + j);
        hn::Store(operands.bounds.bias, di, bias + j);
      }
    }
    return true;
  };
  // Row r of st quantized; with `next` (as wide as st), row r of next reduced between the
  // divisions, each of its lines asking for the line two rows further down.
  const auto quantize_row = [&](const Stretch& st, uint64_t r, const Stretch* next) HWY_ATTR {
    const uint64_t element = st.element + r * inner;
    const T* x = x_data + element;
    if (next != nullptr) {
      const T* x_next = x_data + next->element + r * inner;
      const bool ahead = r + 2 < next->rows;
      VF sum = hn::Zero(df);
      for (uint64_t j = 0; j < st.columns; j += N) {
        const VF v = XInput<kX>::Load(x_next + j);
        if (ahead && (j * sizeof(T)) % kLine == 0) PrefetchForLater(x_next + 2 * inner + j);
        typename Output::Bounds b{};
        if constexpr (kInteger) b = {hn::Load(df, bound_lo + j), hn::Load(df, bound_hi + j), hn::Load(di, bias + j)};
        const VF q = hn::Div(XInput<kX>::Load(x + j), hn::Load(df, scale + j));
        StoreLowBytes(QuotientCodes<Output>(d, q, b, one_code_per_byte), codes + j);
        reduce_vector(v, j, sum);
      }
      check = hn::Add(check, sum);
    } else {
      for (uint64_t j = 0; j < st.columns; j += N) {
        typename Output::Bounds b{};
        if constexpr (kInteger) b = {hn::Load(df, bound_lo + j), hn::Load(df, bound_hi + j), hn::Load(di, bias + j)};
        const VF q = hn::Div(XInput<kX>::Load(x + j), hn::Load(df, scale + j));
        StoreLowBytes(QuotientCodes<Output>(d, q, b, one_code_per_byte), codes + j);
      }
    }
    const uint8_t* row = codes;
    if constexpr (kBits < 8) {
      if (packed) {
        PackCodeRow<kBits>(codes, st.columns, packed_codes);
        row = packed_codes;
      }
    }
    uint8_t* const to = y_data + element * code_bits / 8;
    const uint64_t bytes = st.columns * code_bits / 8;
    if (stream && bytes % kLine == 0) {
      for (uint64_t i = 0; i < bytes; i += kLine) StreamLine(row + i, to + i);
    } else {
      std::memcpy(to, row, bytes);
    }
  };
  // The sequence of stretches: slab s's columns [0, whole) left to right, then slab s + 1's.
  Stretch st = stretch_at(first, 0);
  start_reduction(st);
  for (uint64_t r = 0; r < st.rows; ++r) reduce_row(st, r);
  bool ready = finish(st);
  for (;;) {
    const bool slab_ends = st.column + st.columns == whole;
    const bool has_next = !slab_ends || st.slab + 1 < last;
    const Stretch next = has_next ? stretch_at(slab_ends ? st.slab + 1 : st.slab, slab_ends ? 0 : st.column + st.columns) : st;
    if (has_next) start_reduction(next);
    // Rows of next reduced beside st's: where both are as wide, up to the shorter's rows.
    const uint64_t both = ready && has_next && next.columns == st.columns ? std::min(st.rows, next.rows) : 0;
    if (!ready) {
      d.fallback(d.fallback_context, st.group, st.group + st.columns);
    } else {
      for (uint64_t r = 0; r < st.rows; ++r) quantize_row(st, r, r < both ? &next : nullptr);
    }
    for (uint64_t r = both; has_next && r < next.rows; ++r) reduce_row(next, r);
    if (slab_ends && whole < inner) d.fallback(d.fallback_context, st.slab * inner + whole, (st.slab + 1) * inner);
    if (!has_next) break;
    ready = finish(next);
    st = next;
  }
  // Streaming stores are weakly ordered: complete them before the task reports itself done.
  if (stream) hwy::FlushStream();
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

template <class Output>
void QuantizeStretchesOfX(const DynamicGroups& d, uint64_t first, uint64_t last) {
  switch (d.x_type) {
    case ElementType::kFloat32: return QuantizeStretches<Output, ElementType::kFloat32>(d, first, last);
    case ElementType::kFloat16: return QuantizeStretches<Output, ElementType::kFloat16>(d, first, last);
    case ElementType::kBfloat16: return QuantizeStretches<Output, ElementType::kBfloat16>(d, first, last);
    default: d.fallback(d.fallback_context, first * d.inner, last * d.inner);
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

#if QDQ_HAVE_FOLD_EACH
// Calls visit.template operator()<Output>() with the loops' Output for d's codes and finish kind;
// false where the loops take none.
template <class Visit>
HWY_INLINE bool WithOutput(const DynamicGroups& d, const Visit& visit) {
  if (is_mx_finish(d.finish.kind)) {
    switch (d.y_type->type) {
      case ElementType::kFloat8E4M3FN: visit.template operator()<FloatOutput<kE4M3FN, false>>(); return true;
      case ElementType::kFloat8E4M3FNUZ: visit.template operator()<FloatOutput<kE4M3FNUZ, false>>(); return true;
      case ElementType::kFloat8E5M2: visit.template operator()<FloatOutput<kE5M2, false>>(); return true;
      case ElementType::kFloat8E5M2FNUZ: visit.template operator()<FloatOutput<kE5M2FNUZ, false>>(); return true;
      case ElementType::kFloat4E2M1: visit.template operator()<FloatOutput<kE2M1, true>>(); return true;
      default: return false;
    }
  }
  if (is_integer_finish(d.finish.kind)) {
    switch (d.y_type->type) {
      case ElementType::kInt8: visit.template operator()<IntegerOutput<8, true>>(); return true;
      case ElementType::kUint8: visit.template operator()<IntegerOutput<8, false>>(); return true;
      case ElementType::kInt4: visit.template operator()<IntegerOutput<4, true>>(); return true;
      case ElementType::kUint4: visit.template operator()<IntegerOutput<4, false>>(); return true;
      case ElementType::kInt2: visit.template operator()<IntegerOutput<2, true>>(); return true;
      case ElementType::kUint2: visit.template operator()<IntegerOutput<2, false>>(); return true;
      default: return false;
    }
  }
  return false;
}
#endif

void DynamicQuantizeGroups(const DynamicGroups& d, uint64_t first, uint64_t last) {
  const CleanUpperStateOnReturn clean_upper_state;
#if QDQ_HAVE_FOLD_EACH
  if (DynamicGroupsFit(d.group) &&
      WithOutput(d, [&]<class Output>() HWY_ATTR { QuantizeGroupsOfX<Output>(d, first, last); })) {
    return;
  }
#endif
  d.fallback(d.fallback_context, first, last);
}

// Integer codes take the stretches wherever a slab's rows hold a vector. Float8 and float4 codes
// (MX scales) take them only where their lines stream (StretchesStream). With direct stores,
// float8 codes through the strips this loop replaced ran slower than through the slab path
// (reduce the slab's columns, then the quantize kernel over its rows) for rows of 4000 to 4064
// elements (Zen 3, 16M float32 to float8e4m3fn, MX blocks of 32 along the first axis: 9.4-9.6
// against 6.2-6.4 ms) and no faster for 4096; streamed, [4096, 4096] went from 0.71-0.72 of plain
// Q's speed to 0.79-0.85. AVX-512 (Intel Xeon, session 51, stretches): [4096, 4096] float8e4m3fn
// MX floor blocks of 32 along axis 0, 2 threads, 4.9-6.5 -> 3.4-4.2 ms (plain Q 3.2-5.3 in the
// same runs); 64K (not streamed) stays on the slab path.
bool DynamicSlabsTake(const DynamicGroups& d) {
#if QDQ_HAVE_FOLD_EACH
  if (d.inner < hn::Lanes(DF())) return false;
  if (is_integer_finish(d.finish.kind)) return WithOutput(d, []<class Output>() {});
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if (is_mx_finish(d.finish.kind)) return StretchesStream(d);
#endif
#endif
  (void)d;
  return false;
}

void DynamicQuantizeSlabs(const DynamicGroups& d, uint64_t first, uint64_t last) {
  const CleanUpperStateOnReturn clean_upper_state;
#if QDQ_HAVE_FOLD_EACH
  // Only x86's AVX2 and AVX-512 targets have instances for float codes (DynamicSlabsTake admits
  // them there alone).
  if (DynamicSlabsTake(d) && WithOutput(d, [&]<class Output>() HWY_ATTR {
        if constexpr (Output::kIsInteger || (HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2)) {
          QuantizeStretchesOfX<Output>(d, first, last);
        }
      })) {
    return;
  }
#endif
  d.fallback(d.fallback_context, first * d.inner, last * d.inner);
}

}  // namespace HWY_NAMESPACE
}  // namespace qdq::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qdq::kernels {

HWY_EXPORT(DynamicGroupsFit);
HWY_EXPORT(DynamicQuantizeGroups);
HWY_EXPORT(DynamicSlabsTake);
HWY_EXPORT(DynamicQuantizeSlabs);

bool dynamic_groups_fit(uint64_t group) { return HWY_DYNAMIC_DISPATCH(DynamicGroupsFit)(group); }

void dynamic_quantize_groups(const DynamicGroups& d, uint64_t first, uint64_t last) {
  HWY_DYNAMIC_DISPATCH(DynamicQuantizeGroups)(d, first, last);
}

bool dynamic_slabs_take(const DynamicGroups& d) { return HWY_DYNAMIC_DISPATCH(DynamicSlabsTake)(d); }

void dynamic_quantize_slabs(const DynamicGroups& d, uint64_t first, uint64_t last) {
  HWY_DYNAMIC_DISPATCH(DynamicQuantizeSlabs)(d, first, last);
}

}  // namespace qdq::kernels
#endif  // HWY_ONCE
