// The gathered path: plans whose x or y is strided (DirectML descriptions, Plan::x_strides /
// y_strides). Each stretch of elements is gathered into small dense buffers, run through the same
// SIMD kernels as dense plans, and its results scattered to y; rows that are contiguous in x and y
// and that the runs can follow go to the kernels in place, without copies.
#pragma once

#include <cstdint>

#include "qdq/qdq.hpp"

namespace qdq::exec {

// The four tensors' strides over the plan's dims, size-1 dims dropped and neighbours merged where
// all four continue each other.
struct StridedWalk {
  int rank = 0;
  int64_t dims[kMaxLayoutRank] = {};
  int64_t x[kMaxLayoutRank] = {};
  int64_t y[kMaxLayoutRank] = {};
  int64_t scale[kMaxLayoutRank] = {};
  int64_t zero_point[kMaxLayoutRank] = {};
};

StridedWalk strided_walk(const Plan& plan);

// Elements [begin, end) (row-major over the plan's shape) of a gathered plan into y's buffer.
void execute_gathered_range(const Plan& plan, const StridedWalk& walk, uint64_t begin, uint64_t end, void* y);

}  // namespace qdq::exec
