// Highway kernels of Quark's MX and BFP fake-quantize operators, one source for every target.
//
// A block's lanes are either its own elements (contiguous blocks whose size is a multiple of the
// vector: the shared exponent is a reduction across lanes) or one element of each of several
// blocks (blocks along a strided axis, read row by row; or small contiguous blocks, gathered), so
// that no block is ever padded, transposed or sliced into a copy. Every lane computes exactly the
// float32 operations of Quark's scalar kernel (IEEE division by the power-of-two scale, the same
// roundings, the same clamps), hence the same bits.
#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "toolkit/quark_blocks.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "toolkit/quark_blocks_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include "kernels/upper_state-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qdq::toolkit {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using DI = hn::RebindToSigned<DF>;
using VF = hn::Vec<DF>;
using VI = hn::Vec<DI>;

// Biased float32 exponent field of each lane (0 for zeros and subnormals, 255 for inf and NaN).
HWY_INLINE VI BiasedExponent(VF v) {
  const DI di;
  return hn::ShiftRight<23>(hn::And(hn::BitCast(di, v), hn::Set(di, 0x7F80'0000)));
}

// The exponent MX and to_bfp take the block maximum of: infinities and NaNs count as 0.
HWY_INLINE VI ExponentIgnoringSpecials(VF v) {
  const DI di;
  const VI e = BiasedExponent(v);
  return hn::IfThenZeroElse(hn::Eq(e, hn::Set(di, 255)), e);
}

// 2^k as float32 for k in [-149, 128] (128 gives +inf, as Quark's float arithmetic does): the
// exponent field directly for normal results, and 2^(k + 64) * 2^-64 (exact) below them.
HWY_INLINE VF Pow2(VI k) {
  const DF df;
  const DI di;
  const VF normal = hn::BitCast(df, hn::ShiftLeft<23>(hn::Add(k, hn::Set(di, 127))));
  const VF low = hn::Mul(hn::BitCast(df, hn::ShiftLeft<23>(hn::Add(k, hn::Set(di, 127 + 64)))),
                         hn::Set(df, 5.421010862427522e-20f));  // 2^-64
  return hn::IfThenElse(hn::RebindMask(df, hn::Lt(k, hn::Set(di, -126))), low, normal);
}

// Quark's three roundings of t to an integer-valued float, signed zeros included.
HWY_INLINE VF RoundHalfAwayFromZero(VF t) {  // std::round: -0.3 -> -0
  const DF df;
  const VF magnitude = hn::Abs(t);
  const VF whole = hn::Trunc(magnitude);
  const VF up = hn::Add(whole, hn::Set(df, 1.0f));
  const VF rounded = hn::IfThenElse(hn::Lt(hn::Sub(magnitude, whole), hn::Set(df, 0.5f)), whole, up);
  return hn::CopySignToAbs(rounded, t);
}
HWY_INLINE VF RoundHalfUp(VF t) {  // Quark's dpu_round: ties toward +inf, the sign of t kept (-0.3 -> -0)
  const DF df;
  const VF floor = hn::Floor(t);
  const VF rounded = hn::IfThenElse(hn::Lt(hn::Sub(t, floor), hn::Set(df, 0.5f)), floor, hn::Add(floor, hn::Set(df, 1.0f)));
  return hn::CopySign(rounded, t);
}
HWY_INLINE VF RoundHalfEven(VF t) {  // Quark's py3_round: floor-based, so (-1, 0) rounds to +0; -0 stays
  const DF df;
  const VF rounded = hn::Round(t);  // (some targets' emulated Round drops the sign of a zero)
  const VF zero = hn::Zero(df);
  return hn::IfThenElse(hn::Eq(t, zero), t, hn::IfThenZeroElse(hn::Eq(rounded, zero), rounded));
}
HWY_INLINE VF RoundBy(Rounding mode, VF t) {
  switch (mode) {
    case Rounding::kHalfUp: return RoundHalfUp(t);
    case Rounding::kHalfEven: return RoundHalfEven(t);
    case Rounding::kHalfAwayFromZero: break;
  }
  return RoundHalfAwayFromZero(t);
}

// Quark's bfloat16 rounding of a float32 (half to even on the bit pattern). NaNs become the quiet
// NaN with their sign (Quark's bit arithmetic carries some NaN payloads into +-inf or -0).
HWY_INLINE VF RoundToBfloat16(VF v) {
  const DF df;
  const DI di;
  const VI bits = hn::BitCast(di, v);
  const VI lsb = hn::And(hn::ShiftRight<16>(bits), hn::Set(di, 1));
  const VI rounded = hn::And(hn::Add(bits, hn::Add(hn::Set(di, 0x7FFF), lsb)), hn::Set(di, static_cast<int32_t>(0xFFFF'0000u)));
  const VI quiet_nan = hn::Or(hn::And(bits, hn::Set(di, static_cast<int32_t>(0x8000'0000u))), hn::Set(di, 0x7FC0'0000));
  return hn::BitCast(df, hn::IfThenElse(hn::RebindMask(di, hn::IsNaN(v)), quiet_nan, rounded));
}

// Quark's fake_quantize_element: round |v| half to even onto the element grid (m mantissa bits,
// subnormals below 2^(1 - bias)), saturate to max_norm, put the sign back on a non-zero result;
// a zero result is +0 whatever v's sign (Quark returns the literal 0.0).
HWY_INLINE VF FakeQuantizeElement(const BlockOp& op, VF v) {
  const DF df;
  const DI di;
  const int drop = 23 - op.mantissa_bits;
  const VF magnitude = hn::Abs(v);
  // Normal range: round the bit pattern to `drop` fewer bits, ties to even (add half - 1 plus the
  // lowest kept bit, then clear the dropped bits; a carry moves into the exponent).
  const VI bits = hn::BitCast(di, magnitude);
  const VI lsb = hn::And(hn::ShiftRightSame(bits, drop), hn::Set(di, 1));
  const VI half_minus_one = hn::Set(di, (1 << (drop - 1)) - 1);
  const VI kept = hn::Set(di, ~((1 << drop) - 1));
  const VF normal = hn::BitCast(df, hn::And(hn::Add(bits, hn::Add(half_minus_one, lsb)), kept));
  // Below the smallest normal 2^(1 - bias): adding 2^23 grid steps makes the FPU round to whole
  // steps (half to even); subtracting it again is exact.
  const VF magic = hn::Set(df, op.subnormal_magic);
  const VF subnormal = hn::Sub(hn::Add(magnitude, magic), magic);
  const VF smallest_normal = hn::Set(df, op.smallest_normal);
  VF rounded = hn::IfThenElse(hn::Lt(magnitude, smallest_normal), subnormal, normal);
  rounded = hn::Min(rounded, hn::Set(df, op.max_norm));
  return hn::IfThenZeroElse(hn::Eq(rounded, hn::Zero(df)), hn::CopySignToAbs(rounded, v));
}

// One lane's result for the MX and to_bfp methods, given the shared biased exponent `e` (after
// the compiler variant's adjustment) of the lane's block.
HWY_INLINE VF QuantizeDequantize(const BlockOp& op, VF x, VI e) {
  const DF df;
  const DI di;
  VF result;
  switch (op.method) {
    case BlockMethod::kMxFloat:
    case BlockMethod::kMxInt8: {
      const VF scale = Pow2(hn::Sub(e, hn::Set(di, 127 + op.emax)));
      const VF element = hn::Div(x, scale);
      VF q;
      if (op.method == BlockMethod::kMxFloat) {
        q = FakeQuantizeElement(op, element);
      } else {
        const VF step = hn::Set(df, 0.015625f);  // int8's implicit 2^-6
        q = RoundBy(op.rounding, hn::Div(element, step));
        q = hn::Mul(hn::Max(hn::Set(df, -128.0f), hn::Min(q, hn::Set(df, 127.0f))), step);
      }
      result = hn::Mul(scale, q);
      break;
    }
    case BlockMethod::kBfp: {
      // scale 2^(E - 127 - (m - 1)); largest magnitude (2^m - 1) * scale = 2^(E - 126) - scale.
      const VF scale = Pow2(hn::Sub(e, hn::Set(di, 126 + op.mantissa_bits)));
      const VF max_v = hn::Mul(hn::Set(df, static_cast<float>((1 << op.mantissa_bits) - 1)), scale);
      const VF q = hn::Mul(RoundBy(op.rounding, hn::Div(x, scale)), scale);
      result = hn::Max(hn::Neg(max_v), hn::Min(q, max_v));
      break;
    }
    default: {  // kBfpCompiler: `e` is already moved up where the block overflowed
      const VF scale = Pow2(hn::Sub(e, hn::Set(di, 126 + op.mantissa_bits)));
      // max (2^m - 1) * 2^(E - 127) and min -2^(E - 127 + m), as Quark's double arithmetic then
      // rounded to float32 (both exact, or +-inf past float32's range).
      const VF max_half = hn::Mul(hn::Set(df, static_cast<float>((1 << op.mantissa_bits) - 1)),
                                  Pow2(hn::Sub(e, hn::Set(di, 128))));
      const VF max_v = hn::Add(max_half, max_half);
      const VI min_exponent = hn::Min(hn::Sub(e, hn::Set(di, 127 - op.mantissa_bits)), hn::Set(di, 128));
      const VF min_v = hn::Neg(Pow2(min_exponent));
      const VF q = hn::Mul(RoundBy(op.rounding, hn::Div(x, scale)), scale);
      result = hn::Max(min_v, hn::Min(q, max_v));
      break;
    }
  }
  // Infinities and NaNs pass through unchanged.
  return hn::IfThenElse(hn::RebindMask(df, hn::Eq(BiasedExponent(x), hn::Set(di, 255))), x, result);
}

// The compiler variant's exponent adjustment: +1 in lanes where an element of the block's top
// binade rounds (at the unadjusted scale) to 128 or more, or below -128.
HWY_INLINE VI CompilerOverflow(const BlockOp& op, VF x, VI e) {
  const DF df;
  const DI di;
  const VF scale = Pow2(hn::Sub(e, hn::Set(di, 126 + op.mantissa_bits)));
  const VF r = RoundBy(op.rounding, hn::Div(x, scale));
  const auto overflow = hn::Or(hn::Not(hn::Lt(r, hn::Set(df, 128.0f))), hn::Lt(r, hn::Set(df, -128.0f)));
  const auto hit = hn::And(hn::RebindMask(di, overflow), hn::Eq(BiasedExponent(x), e));
  return hn::IfThenElseZero(hit, hn::Set(di, 1));
}

// to_bfp_prime for one element: `e` the block's largest biased exponent (inf/NaN included: 255
// makes the whole block NaN), `sub` its sub-block's. The element's 24-bit significand (0 for zeros
// and subnormals, which flush) is shifted right by n = e - shift - exp + 24 - m bits and rounded,
// never above 2^m - 1; the value is that integer times 2^(e - 126 - shift - m), with x's sign.
HWY_INLINE VF BfpPrimeElement(const BlockOp& op, VF x, VI e, VI sub) {
  const DF df;
  const DI di;
  const VI one = hn::Set(di, 1);
  const VI shift = hn::Min(hn::Sub(e, sub), hn::Set(di, op.shift_limit));
  const VI bits = hn::BitCast(di, x);
  const VI exponent = BiasedExponent(x);
  const VI significand = hn::IfThenZeroElse(hn::Eq(exponent, hn::Zero(di)),
                                            hn::Or(hn::And(bits, hn::Set(di, 0x7F'FFFF)), hn::Set(di, 0x80'0000)));
  const VI n = hn::Add(hn::Sub(hn::Sub(e, shift), exponent), hn::Set(di, 24 - op.mantissa_bits));
  const VI n_clamped = hn::Min(n, hn::Set(di, 26));  // n > 25 gives 0 below; keeps the shifts in range
  const VI kept = significand >> n_clamped;  // significand < 2^24: arithmetic = logical shift
  const VI half = one << hn::Sub(n_clamped, one);
  const VI tail = hn::And(significand, hn::Sub(one << n_clamped, one));
  hn::Mask<DI> tie_up;
  switch (op.rounding) {
    case Rounding::kHalfUp: tie_up = hn::Eq(hn::And(bits, hn::Set(di, static_cast<int32_t>(0x8000'0000u))), hn::Zero(di)); break;
    case Rounding::kHalfEven: tie_up = hn::Eq(hn::And(kept, one), one); break;
    default: tie_up = hn::Eq(one, one); break;
  }
  const VI upper = hn::Set(di, (1 << op.mantissa_bits) - 1);
  const auto round_up = hn::And(hn::Not(hn::Eq(kept, upper)),
                                hn::Or(hn::Gt(tail, half), hn::And(hn::Eq(tail, half), tie_up)));
  VI integer = hn::Add(kept, hn::IfThenElseZero(round_up, one));
  integer = hn::IfThenZeroElse(hn::Gt(n, hn::Set(di, 25)), integer);
  const VF magnitude = hn::Mul(hn::ConvertTo(df, integer),
                               Pow2(hn::Sub(hn::Sub(e, shift), hn::Set(di, 126 + op.mantissa_bits))));
  const VF value = hn::CopySignToAbs(magnitude, x);
  const VF nan = hn::BitCast(df, hn::Set(di, 0x7FFF'FFFF));
  return hn::IfThenElse(hn::RebindMask(df, hn::Eq(e, hn::Set(di, 255))), nan, value);
}

// Rows of lanes: row k of a column group, read and written as one vector.
struct StridedRows {  // row k at base + k * stride, lanes contiguous
  const float* x;
  float* y;
  int64_t stride;
  VF Load(int64_t k) const { return hn::LoadU(DF(), x + k * stride); }
  void Store(int64_t k, VF v) const { hn::StoreU(v, DF(), y + k * stride); }
};
// Lane j of row k at base + j * block + k (contiguous blocks side by side). The tensors may sit at
// any byte address (the C ABI takes them so), and Highway emulates a gather or scatter the target
// lacks by indexing a float*, which is undefined behaviour there (UndefinedBehaviorSanitizer: the
// toolkit fuzzer's MX on AVX2, whose scatter is emulated). The hardware gathers (AVX2 and up) and
// scatters (AVX-512) take any address; elsewhere the lanes move one at a time through memcpy,
// which is what the emulation costs anyway.
struct GatheredRows {
  static constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);
  const float* x;
  float* y;
  VI offsets;
  VF Load(int64_t k) const {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
    return hn::GatherIndex(DF(), x + k, offsets);
#else
    HWY_ALIGN int32_t index[kMaxLanes];
    HWY_ALIGN float lanes[kMaxLanes];
    hn::Store(offsets, DI(), index);
    const auto* base = reinterpret_cast<const unsigned char*>(x) + k * static_cast<int64_t>(sizeof(float));
    for (size_t j = 0; j < hn::Lanes(DF()); ++j) std::memcpy(&lanes[j], base + index[j] * sizeof(float), sizeof(float));
    return hn::Load(DF(), lanes);
#endif
  }
  void Store(int64_t k, VF v) const {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    hn::ScatterIndex(v, DF(), y + k, offsets);
#else
    HWY_ALIGN int32_t index[kMaxLanes];
    HWY_ALIGN float lanes[kMaxLanes];
    hn::Store(offsets, DI(), index);
    hn::Store(v, DF(), lanes);
    auto* base = reinterpret_cast<unsigned char*>(y) + k * static_cast<int64_t>(sizeof(float));
    for (size_t j = 0; j < hn::Lanes(DF()); ++j) std::memcpy(base + index[j] * sizeof(float), &lanes[j], sizeof(float));
#endif
  }
};

// One group of blocks, one block per lane; `rows` elements of each (a partial last block has
// fewer; the missing ones act as the zeros Quark pads with). Every read precedes the writes of
// its row, so y may be x.
template <class Rows>
HWY_INLINE void ColumnGroup(const BlockOp& op, const Rows& r, int64_t rows) {
  const DI di;
  auto load = [&](int64_t k) { return op.bfloat_first ? RoundToBfloat16(r.Load(k)) : r.Load(k); };
  if (op.method == BlockMethod::kBfpPrime) {
    VI e = hn::Zero(di);
    for (int64_t k = 0; k < rows; ++k) e = hn::Max(e, BiasedExponent(load(k)));
    for (int64_t first = 0; first < rows; first += op.sub_block_size) {
      const int64_t last = std::min(rows, first + op.sub_block_size);
      VI sub = hn::Zero(di);
      for (int64_t k = first; k < last; ++k) sub = hn::Max(sub, BiasedExponent(load(k)));
      for (int64_t k = first; k < last; ++k) r.Store(k, BfpPrimeElement(op, load(k), e, sub));
    }
    return;
  }
  VI e = hn::Zero(di);
  for (int64_t k = 0; k < rows; ++k) e = hn::Max(e, ExponentIgnoringSpecials(load(k)));
  if (op.method == BlockMethod::kBfpCompiler) {
    VI bump = hn::Zero(di);
    for (int64_t k = 0; k < rows; ++k) bump = hn::Or(bump, CompilerOverflow(op, load(k), e));
    e = hn::Add(e, bump);
  }
  for (int64_t k = 0; k < rows; ++k) r.Store(k, QuantizeDequantize(op, load(k), e));
}

// One contiguous block of n elements, n a multiple of the vector length, lanes = elements.
HWY_INLINE void ReducedBlock(const BlockOp& op, const float* x, float* y, int64_t n) {
  const DF df;
  const DI di;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  auto load = [&](int64_t i) {
    const VF v = hn::LoadU(df, x + i);
    return op.bfloat_first ? RoundToBfloat16(v) : v;
  };
  VI e = hn::Zero(di);
  for (int64_t i = 0; i < n; i += lanes) e = hn::Max(e, ExponentIgnoringSpecials(load(i)));
  e = hn::MaxOfLanes(di, e);
  if (op.method == BlockMethod::kBfpCompiler) {
    VI bump = hn::Zero(di);
    for (int64_t i = 0; i < n; i += lanes) bump = hn::Or(bump, CompilerOverflow(op, load(i), e));
    e = hn::Add(e, hn::MaxOfLanes(di, bump));
  }
  for (int64_t i = 0; i < n; i += lanes) hn::StoreU(QuantizeDequantize(op, load(i), e), df, y + i);
}

// Units [begin, end) (quark_blocks.h): each unit is processed in place where whole vectors fit and
// through a zero-padded scratch copy where they do not (partial blocks, lane tails).
void RunBlockUnits(const BlockOp& op, const BlockGeometry& g, const float* x, float* y, uint64_t begin, uint64_t end) {
  const kernels::HWY_NAMESPACE::CleanUpperStateOnReturn clean_upper_state;
  const DF df;
  const DI di;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const int64_t block = op.block_size;
  const int64_t blocks = g.blocks_per_row(block);
  std::vector<float> scratch;
  if (g.inner > 1) {
    for (uint64_t unit = begin; unit < end; ++unit) {
      const int64_t o = static_cast<int64_t>(unit) / blocks;
      const int64_t b = static_cast<int64_t>(unit) % blocks;
      const int64_t rows = std::min(block, g.axis_length - b * block);
      const int64_t offset = (o * g.axis_length + b * block) * g.inner;
      int64_t lane = 0;
      for (; lane + lanes <= g.inner; lane += lanes) {
        ColumnGroup(op, StridedRows{x + offset + lane, y + offset + lane, g.inner}, rows);
      }
      if (lane < g.inner) {  // the last inner < lanes columns: through a [rows][lanes] scratch tile
        const int64_t width = g.inner - lane;
        scratch.assign(static_cast<size_t>(rows * lanes), 0.0f);
        for (int64_t k = 0; k < rows; ++k) {
          std::memcpy(&scratch[static_cast<size_t>(k * lanes)], x + offset + k * g.inner + lane, sizeof(float) * width);
        }
        ColumnGroup(op, StridedRows{scratch.data(), scratch.data(), lanes}, rows);
        for (int64_t k = 0; k < rows; ++k) {
          std::memcpy(y + offset + k * g.inner + lane, &scratch[static_cast<size_t>(k * lanes)], sizeof(float) * width);
        }
      }
    }
    return;
  }
  const int64_t tiles = (blocks + kTileBlocks - 1) / kTileBlocks;
  const bool reduce = op.method != BlockMethod::kBfpPrime && block % lanes == 0;
  const VI offsets = hn::Mul(hn::Iota(di, 0), hn::Set(di, static_cast<int32_t>(block)));
  for (uint64_t unit = begin; unit < end; ++unit) {
    const int64_t o = static_cast<int64_t>(unit) / tiles;
    const int64_t first_block = (static_cast<int64_t>(unit) % tiles) * kTileBlocks;
    const int64_t last_block = std::min(blocks, first_block + kTileBlocks);
    const int64_t row = o * g.axis_length;
    // Whole blocks of this tile, then the rest (whole blocks short of a vector of them, and the
    // row's partial last block) through a zero-padded scratch copy.
    const int64_t whole_end = std::min(last_block, g.axis_length / block);
    int64_t b = first_block;
    if (reduce) {
      for (; b < whole_end; ++b) ReducedBlock(op, x + row + b * block, y + row + b * block, block);
    } else {
      for (; b + lanes <= whole_end; b += lanes) {
        ColumnGroup(op, GatheredRows{x + row + b * block, y + row + b * block, offsets}, block);
      }
    }
    if (b < last_block) {
      const int64_t padded_blocks = reduce ? (last_block - b) : ((last_block - b + lanes - 1) / lanes * lanes);
      const int64_t padded_block = reduce ? (block + lanes - 1) / lanes * lanes : block;
      scratch.assign(static_cast<size_t>(padded_blocks * padded_block), 0.0f);
      // Blocks keep their `block` spacing in the scratch unless the reduction pads each to a
      // whole number of vectors.
      for (int64_t i = b; i < last_block; ++i) {
        const int64_t start = i * block;
        const int64_t n = std::min(g.axis_length, start + block) - start;
        std::memcpy(&scratch[static_cast<size_t>((i - b) * padded_block)], x + row + start, sizeof(float) * n);
      }
      if (reduce) {
        for (int64_t i = 0; i < padded_blocks; ++i) {
          float* p = &scratch[static_cast<size_t>(i * padded_block)];
          ReducedBlock(op, p, p, padded_block);
        }
      } else {
        for (int64_t i = 0; i < padded_blocks; i += lanes) {
          float* p = &scratch[static_cast<size_t>(i * block)];
          ColumnGroup(op, GatheredRows{p, p, offsets}, block);
        }
      }
      for (int64_t i = b; i < last_block; ++i) {
        const int64_t start = i * block;
        const int64_t n = std::min(g.axis_length, start + block) - start;
        std::memcpy(y + row + start, &scratch[static_cast<size_t>((i - b) * padded_block)], sizeof(float) * n);
      }
    }
  }
}

// Elements [begin, end) of x converted into y one vector at a time by convert(in, out); the last
// partial vector goes through zero-padded stack copies, so nothing past `end` is read or written.
template <typename From, typename To, class Convert>
HWY_INLINE void ConvertByVectors(const From* x, To* y, uint64_t begin, uint64_t end, const Convert& convert) {
  const uint64_t lanes = hn::Lanes(DF());
  uint64_t i = begin;
  for (; i + lanes <= end; i += lanes) convert(x + i, y + i);
  if (i < end) {
    From in[64] = {};  // 64 >= the lanes of any target's float vector
    To out[64];
    std::memcpy(in, x + i, sizeof(From) * (end - i));
    convert(in, out);
    std::memcpy(y + i, out, sizeof(To) * (end - i));
  }
}

void WidenFloat16(const uint16_t* x, float* y, uint64_t begin, uint64_t end) {
  const kernels::HWY_NAMESPACE::CleanUpperStateOnReturn clean_upper_state;
  const DF df;
  const DI di;
  const hn::Rebind<uint16_t, DI> d16;
  auto widen = [&](VI h) {
    const VI sign = hn::ShiftLeft<16>(hn::And(h, hn::Set(di, 0x8000)));
    const VI exponent = hn::And(hn::ShiftRight<10>(h), hn::Set(di, 0x1F));
    const VI mantissa = hn::And(h, hn::Set(di, 0x3FF));
    const VI normal = hn::Add(hn::ShiftLeft<13>(hn::And(h, hn::Set(di, 0x7FFF))), hn::Set(di, 112 << 23));
    const VI special = hn::Or(hn::Set(di, 0x7F80'0000), hn::ShiftLeft<13>(mantissa));  // inf, NaN payload kept
    const VI subnormal = hn::BitCast(di, hn::Mul(hn::ConvertTo(df, mantissa), hn::Set(df, 5.9604644775390625e-08f)));
    VI bits = hn::IfThenElse(hn::Eq(exponent, hn::Set(di, 31)), special, normal);
    bits = hn::IfThenElse(hn::Eq(exponent, hn::Zero(di)), subnormal, bits);
    return hn::BitCast(df, hn::Or(bits, sign));
  };
  ConvertByVectors(x, y, begin, end, [&](const uint16_t* in, float* out) {
    hn::StoreU(widen(hn::BitCast(di, hn::PromoteTo(hn::RebindToUnsigned<DI>(), hn::LoadU(d16, in)))), df, out);
  });
}

void NarrowToFloat16(const float* x, uint16_t* y, uint64_t begin, uint64_t end) {
  const kernels::HWY_NAMESPACE::CleanUpperStateOnReturn clean_upper_state;
  const DF df;
  const DI di;
  const hn::Rebind<uint16_t, DI> d16;
  auto narrow = [&](VF v) {
    const VI bits = hn::BitCast(di, v);
    const VI sign = hn::And(hn::ShiftRight<16>(bits), hn::Set(di, 0x8000));
    const VI magnitude = hn::And(bits, hn::Set(di, 0x7FFF'FFFF));
    // Normal: rebias (127 -> 15) and round the 23-bit mantissa to 10 bits, ties to even.
    const VI lsb = hn::And(hn::ShiftRight<13>(magnitude), hn::Set(di, 1));
    const VI normal = hn::ShiftRight<13>(hn::Add(hn::Sub(magnitude, hn::Set(di, 112 << 23)), hn::Add(hn::Set(di, 0xFFF), lsb)));
    // Below 2^-14: adding 0.5 rounds to whole 2^-24 steps (half to even); the steps are the code.
    const VF abs_value = hn::BitCast(df, magnitude);
    const VI subnormal = hn::Sub(hn::BitCast(di, hn::Add(abs_value, hn::Set(df, 0.5f))), hn::Set(di, 0x3F00'0000));
    const VI nan = hn::Or(hn::Set(di, 0x7E00), hn::And(hn::ShiftRight<13>(magnitude), hn::Set(di, 0x3FF)));
    VI code = hn::IfThenElse(hn::Lt(magnitude, hn::Set(di, 0x3880'0000)), subnormal, normal);
    code = hn::IfThenElse(hn::Gt(magnitude, hn::Set(di, 0x477F'EFFF)), hn::Set(di, 0x7C00), code);  // >= 65520: inf
    code = hn::IfThenElse(hn::Gt(magnitude, hn::Set(di, 0x7F80'0000)), nan, code);
    return hn::Or(code, sign);
  };
  ConvertByVectors(x, y, begin, end, [&](const float* in, uint16_t* out) {
    hn::StoreU(hn::DemoteTo(d16, narrow(hn::LoadU(df, in))), d16, out);
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace qdq::toolkit
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qdq::toolkit {

HWY_EXPORT(RunBlockUnits);
HWY_EXPORT(WidenFloat16);
HWY_EXPORT(NarrowToFloat16);

void run_block_units(const BlockOp& op, const BlockGeometry& geometry, const float* x, float* y, uint64_t begin,
                     uint64_t end) {
  HWY_DYNAMIC_DISPATCH(RunBlockUnits)(op, geometry, x, y, begin, end);
}

void widen_float16(const uint16_t* x, float* y, uint64_t begin, uint64_t end) {
  HWY_DYNAMIC_DISPATCH(WidenFloat16)(x, y, begin, end);
}

void narrow_to_float16(const float* x, uint16_t* y, uint64_t begin, uint64_t end) {
  HWY_DYNAMIC_DISPATCH(NarrowToFloat16)(x, y, begin, end);
}

}  // namespace qdq::toolkit
#endif  // HWY_ONCE
