// SIMD reductions for the toolkit (scales from data): the extremes of float32, float16 and
// bfloat16 values, one Highway source for every target like the Q/DQ kernels.
#pragma once

#include <cstdint>
#include <limits>

#include "qdq/element_type.h"

namespace qdq::kernels {

// The smallest and largest values seen and whether a NaN was seen; a NaN counts as +0 in min and
// max (harmless: every method widens the range to include 0 or takes |x|, and a group with a NaN
// gets the NaN scale anyway). Nothing seen: +inf / -inf.
struct Extremes {
  float min = std::numeric_limits<float>::infinity();
  float max = -std::numeric_limits<float>::infinity();
  bool nan = false;

  void merge(const Extremes& other) {
    min = other.min < min ? other.min : min;
    max = other.max > max ? other.max : max;
    nan = nan || other.nan;
  }
};

// Folds elements [index, index + count) of x (float32, float16 or bfloat16) into *e.
void reduce_extremes(ElementType x_type, const void* x, uint64_t index, uint64_t count, Extremes* e);

// Extremes of many groups as structure of arrays (what the vector finish loads): group g's
// min[g] and max[g] (NaN as +0, as in Extremes) and nan[g] (1 when it held a NaN, else 0).
struct GroupExtremes {
  float* min;
  float* max;
  uint8_t* nan;
};

// Consecutive groups of `group` elements starting at element `index` (the last one may be short:
// `count` need not be a multiple): group g's extremes go to out.min[g], out.max[g], out.nan[g]
// (overwritten).
void reduce_groups(ElementType x_type, const void* x, uint64_t index, uint64_t count, uint64_t group,
                   const GroupExtremes& out);

// Column-wise extremes of `rows` rows of `width` elements, row r starting at element
// index + r * stride of x: column j's extremes go to out.min[j], out.max[j], out.nan[j]
// (overwritten). Blocks along a non-last axis: each column of a block's rows is one group.
void reduce_columns(ElementType x_type, const void* x, uint64_t index, uint64_t rows, uint64_t stride, uint64_t width,
                    const GroupExtremes& out);

// The finish stage (extremes -> scale and zero-point codes, docs/semantics.md "Scales from data")
// in SIMD for its common cases; toolkit/qparams.cpp holds the scalar definition, which this
// reproduces bit for bit and which takes the lanes this leaves to it.
enum class VectorFinish : uint8_t {
  kNone,                 // no vector finish: every group is special
  kMinMax,               // float32 scale, integer type of <= 16 bits, zero point from the range
  kSymmetric,            // float32 scale, integer type of <= 16 bits, the neutral zero point
  kMxFloor,              // e8m0 scales (zero points: none)
  kMxCeil,
  kMxEven,
  kMxRceil,
};

// The kinds whose scales are e8m0 codes, and those with float32 scales and integer zero points.
constexpr bool is_mx_finish(VectorFinish kind) {
  return kind == VectorFinish::kMxFloor || kind == VectorFinish::kMxCeil || kind == VectorFinish::kMxEven ||
         kind == VectorFinish::kMxRceil;
}
constexpr bool is_integer_finish(VectorFinish kind) {
  return kind == VectorFinish::kMinMax || kind == VectorFinish::kSymmetric;
}

struct FinishConstants {
  VectorFinish kind = VectorFinish::kNone;
  float divisor = 1.0f;          // integer kinds: what the range is divided by
  float qmin = 0.0f;             // kMinMax: the quantized type's lowest value
  float zp_lowest = 0.0f;        // kMinMax: the zero point's saturation range (exact in float32
  float zp_highest = 0.0f;       //   for types of <= 16 bits)
  uint32_t neutral_zero_point = 0;  // integer kinds: the code of the all-zero group's zero point
  uint32_t code_mask = 0;           // integer kinds: the quantized type's bits
  int32_t mx_emax = 0;              // MX kinds: floor(log2(max(T)))
  int32_t mx_mantissa_bits = 0;
  float mx_max = 0.0f;
};

// Groups [0, count) of `extremes`: scale_codes[g] (float32 bits, or the e8m0 code) and
// zero_point_codes[g] (the quantized type's code, its `code_mask` bits; 0 for MX kinds), and
// special[g] = 1 where the scalar finish must decide instead (a NaN, an infinite or overflowing
// range, kNone): those lanes' codes are left unspecified.
void finish_groups(const FinishConstants& constants, const GroupExtremes& extremes, uint64_t count,
                   uint32_t* scale_codes, uint32_t* zero_point_codes, uint8_t* special);

// Element-wise accumulation of one row: for j in [0, count), mins[j] / maxs[j] take x[index + j]
// (NaN skipped) and nans[j] becomes nonzero when it is NaN.
void accumulate_extremes(ElementType x_type, const void* x, uint64_t index, uint64_t count, float* mins, float* maxs,
                         uint32_t* nans);

}  // namespace qdq::kernels
