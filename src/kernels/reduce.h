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

// Consecutive groups of `group` elements starting at element `index` (the last one may be short:
// `count` need not be a multiple): out[g] receives the extremes of group g (overwritten).
void reduce_groups(ElementType x_type, const void* x, uint64_t index, uint64_t count, uint64_t group, Extremes* out);

// Element-wise accumulation of one row: for j in [0, count), mins[j] / maxs[j] take x[index + j]
// (NaN skipped) and nans[j] becomes nonzero when it is NaN.
void accumulate_extremes(ElementType x_type, const void* x, uint64_t index, uint64_t count, float* mins, float* maxs,
                         uint32_t* nans);

}  // namespace qdq::kernels
