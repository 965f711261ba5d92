// A Plan's layout cut into runs: contiguous stretches of x over which the scale and zero point
// are either constant or advance one element per x element. Kernels see only runs.
#pragma once

#include <algorithm>
#include <cstdint>

#include "qdq/qdq.hpp"

namespace qdq::exec {

// How an operand of a periodic run (Run::period) steps: by group_stride from one group of rows to
// the next, and by one along a row where along_row (else constant over the row).
struct PeriodicOperand {
  int64_t group_stride = 0;
  bool along_row = false;
};

struct Run {
  uint64_t x_index = 0;      // first element of x (and y)
  uint64_t count = 0;        // elements in the run
  uint64_t scale_index = 0;  // scale element of the first x element
  uint64_t zero_point_index = 0;
  bool scale_varies = false;       // true: scale[scale_index + i] for element i; false: constant
  bool zero_point_varies = false;
  // Blocked along the innermost axis: element i uses scale[scale_index + (block_phase + i) / block]
  // (and the zero point likewise); 0 when not blocked there.
  uint64_t block = 0;
  uint64_t block_phase = 0;
  // Short rows in groups (for_each_group_run): period != 0, the row's length. Element i lies in
  // group of rows (group_phase + i) / group (group: elements per group, a whole number of rows)
  // and in column (period_phase + i) % period of its row; an operand that varies takes element
  // group * its group stride + (column where it varies along the row, else 0) from its index.
  // Never with `block`.
  uint64_t period = 0;
  uint64_t period_phase = 0;
  uint64_t group = 0;
  uint64_t group_phase = 0;
  PeriodicOperand scale_periodic, zero_point_periodic;

  uint64_t periodic_offset(const PeriodicOperand& operand, uint64_t i) const {
    return (group_phase + i) / group * static_cast<uint64_t>(operand.group_stride) +
           (operand.along_row ? (period_phase + i) % period : 0);
  }
  uint64_t scale_offset(uint64_t i) const {
    if (period != 0) return periodic_offset(scale_periodic, i);
    return block ? (block_phase + i) / block : (scale_varies ? i : 0);
  }
  uint64_t zero_point_offset(uint64_t i) const {
    if (period != 0) return periodic_offset(zero_point_periodic, i);
    return block ? (block_phase + i) / block : (zero_point_varies ? i : 0);
  }
};

// The longest row whose operands a periodic run repeats (Run::period): the kernels hold a period's
// values in a buffer of this many elements and a vector.
inline constexpr uint64_t kLongestOperandPeriod = 255;

// The longest innermost stretch of one operand value that canonical_layout makes a block.
inline constexpr int64_t kLongestInnerBlock = 256;

// The layout with size-1 dimensions dropped and mergeable neighbours merged, so that per-tensor
// is one dimension, per-axis two or three and blocked two or three: runs then are as long as the
// data allows.
inline Layout canonical_layout(const Layout& in) {
  Layout out;
  out.rank = 0;
  out.block_size = in.block_size;
  for (int d = 0; d < in.rank; ++d) {
    if (in.dims[d] == 1 && d != in.block_axis) continue;
    const int o = out.rank;
    if (o > 0 && d != in.block_axis && out.block_axis != o - 1 &&
        out.scale_strides[o - 1] == in.scale_strides[d] * in.dims[d] &&
        out.zero_point_strides[o - 1] == in.zero_point_strides[d] * in.dims[d]) {
      // Merge d into the previous dimension: same stride pattern continued.
      out.dims[o - 1] *= in.dims[d];
      out.scale_strides[o - 1] = in.scale_strides[d];
      out.zero_point_strides[o - 1] = in.zero_point_strides[d];
      continue;
    }
    out.dims[o] = in.dims[d];
    out.scale_strides[o] = in.scale_strides[d];
    out.zero_point_strides[o] = in.zero_point_strides[d];
    if (d == in.block_axis) out.block_axis = o;
    ++out.rank;
  }
  if (out.rank == 0) {  // a single element
    out.rank = 1;
    out.dims[0] = 1;
  }
  // Blocked along the innermost axis by blocks at least as long as it: one block per row, so the
  // operand is constant over the row.
  if (const int last = out.rank - 1; out.block_axis == last && out.dims[last] <= out.block_size) {
    out.block_axis = -1;
    out.block_size = 1;
    out.scale_strides[last] = 0;
    out.zero_point_strides[last] = 0;
  }
  // One operand value per short innermost stretch, stepping by one after it (per-axis on an axis
  // with few elements after it): a dimension of blocks of that stretch, so that the runs span
  // whole rows rather than each stretch (longer stretches make long constant runs already).
  if (const int last = out.rank - 1; last >= 1 && out.block_axis < 0) {
    const int outer = last - 1;
    if (out.scale_strides[last] == 0 && out.zero_point_strides[last] == 0 && out.scale_strides[outer] == 1 &&
        out.zero_point_strides[outer] == 1 && out.dims[last] <= kLongestInnerBlock) {
      out.block_size = out.dims[last];
      out.block_axis = outer;
      out.dims[outer] *= out.dims[last];
      out.rank = last;
    }
  }
  // Blocked along the innermost axis in rows of whole blocks whose operands follow on from the
  // previous row's: the rows make one dimension of blocks, so a run spans all of them (rows of one
  // block of 32 ran 6.4x slower than rows of 1024, each row its own run: 64K Q float32 -> int8).
  while (out.rank >= 2 && out.block_axis == out.rank - 1) {
    const int last = out.rank - 1, outer = last - 1;
    if (out.dims[last] % out.block_size != 0) break;
    const int64_t blocks = out.dims[last] / out.block_size;
    if (out.scale_strides[outer] != out.scale_strides[last] * blocks ||
        out.zero_point_strides[outer] != out.zero_point_strides[last] * blocks) {
      break;
    }
    out.dims[outer] *= out.dims[last];
    out.scale_strides[outer] = out.scale_strides[last];
    out.zero_point_strides[outer] = out.zero_point_strides[last];
    out.block_axis = outer;
    out.rank = last;
  }
  return out;
}

// Calls visit(run) for the runs covering elements [begin, end) of a canonical layout, in order.
// The first row's coordinates take divisions; every later row steps them like an odometer, so a
// run costs no division (three 64-bit divisions a row were 6% of 64K DQ float16 -> float32
// per-axis-last through ONNX Runtime: 64 rows of 1024).
template <class Visit>
void for_each_run(const Layout& layout, uint64_t begin, uint64_t end, Visit&& visit) {
  if (begin >= end) return;
  const int last = layout.rank - 1;
  const uint64_t inner = static_cast<uint64_t>(layout.dims[last]);
  const bool blocked_inner = layout.block_axis == last;
  const uint64_t block = static_cast<uint64_t>(layout.block_size);
  // The row's coordinate along each outer dimension; along a blocked outer dimension also its
  // block and its place in the block. scale_base / zp_base: the row's first operand offsets.
  uint64_t coordinate[kMaxLayoutRank] = {};
  uint64_t block_number = 0, in_block = 0;
  int64_t scale_base = 0, zp_base = 0;
  uint64_t row = begin / inner;
  uint64_t column = begin % inner;
  for (int d = last - 1; d >= 0; --d) {
    const uint64_t extent = static_cast<uint64_t>(layout.dims[d]);
    coordinate[d] = row % extent;
    row /= extent;
    uint64_t step = coordinate[d];
    if (d == layout.block_axis) {
      block_number = coordinate[d] / block;
      in_block = coordinate[d] % block;
      step = block_number;
    }
    scale_base += static_cast<int64_t>(step) * layout.scale_strides[d];
    zp_base += static_cast<int64_t>(step) * layout.zero_point_strides[d];
  }
  uint64_t index = begin;
  while (true) {
    Run run;
    run.x_index = index;
    run.count = std::min(inner - column, end - index);
    if (blocked_inner) {
      // One scale per block along the innermost axis: the run spans whole rows, the kernel steps
      // the scale every `block` elements.
      const uint64_t column_block = column / block;
      run.block = block;
      run.block_phase = column % block;
      run.scale_index = static_cast<uint64_t>(scale_base + static_cast<int64_t>(column_block) * layout.scale_strides[last]);
      run.zero_point_index =
          static_cast<uint64_t>(zp_base + static_cast<int64_t>(column_block) * layout.zero_point_strides[last]);
    } else {
      run.scale_index = static_cast<uint64_t>(scale_base + static_cast<int64_t>(column) * layout.scale_strides[last]);
      run.zero_point_index =
          static_cast<uint64_t>(zp_base + static_cast<int64_t>(column) * layout.zero_point_strides[last]);
      run.scale_varies = layout.scale_strides[last] != 0;
      run.zero_point_varies = layout.zero_point_strides[last] != 0;
    }
    visit(run);
    index += run.count;
    if (index >= end) return;
    column = 0;
    // The next row: the innermost outer coordinate steps, wrapping and carrying outward.
    for (int d = last - 1; d >= 0; --d) {
      const int64_t scale_stride = layout.scale_strides[d];
      const int64_t zp_stride = layout.zero_point_strides[d];
      const bool wraps = ++coordinate[d] == static_cast<uint64_t>(layout.dims[d]);
      if (d == layout.block_axis) {
        if (wraps) {
          scale_base -= static_cast<int64_t>(block_number) * scale_stride;
          zp_base -= static_cast<int64_t>(block_number) * zp_stride;
          coordinate[d] = block_number = in_block = 0;
        } else if (++in_block == block) {
          in_block = 0;
          ++block_number;
          scale_base += scale_stride;
          zp_base += zp_stride;
        }
      } else if (wraps) {
        scale_base -= static_cast<int64_t>(layout.dims[d] - 1) * scale_stride;
        zp_base -= static_cast<int64_t>(layout.dims[d] - 1) * zp_stride;
        coordinate[d] = 0;
      } else {
        scale_base += scale_stride;
        zp_base += zp_stride;
      }
      if (!wraps) break;
    }
  }
}

// Calls visit(run) for the runs covering elements [begin, end) of a canonical layout whose rows
// are short and grouped (exec::group_short_rows): the last dimension a row of at most
// kLongestOperandPeriod elements whose operands step by 0 or 1, the one before it holding groups
// of rows_per_block rows (0: all its rows) that share their operands. A run spans that dimension
// (its rows and groups, a plane of x, clipped to [begin, end)), its operands periodic
// (Run::period). Runs a group long, each with the kernels' set-up, took longer than when each
// group's operands were written out per element (64K DQ uint8 -> float32 over rows of 4 in blocks
// of 32 along the first axis); a plane is one run.
template <class Visit>
void for_each_group_run(const Layout& canonical, uint64_t rows_per_block, uint64_t begin, uint64_t end,
                        Visit&& visit) {
  const int last = canonical.rank - 1, axis = last - 1;
  const uint64_t inner = static_cast<uint64_t>(canonical.dims[last]);
  const uint64_t extent = static_cast<uint64_t>(canonical.dims[axis]);
  const uint64_t rows_per_group = rows_per_block != 0 ? rows_per_block : extent;
  const uint64_t group = rows_per_group * inner, plane = extent * inner;
  const PeriodicOperand scale{rows_per_block != 0 ? canonical.scale_strides[axis] : 0, canonical.scale_strides[last] != 0};
  const PeriodicOperand zero_point{rows_per_block != 0 ? canonical.zero_point_strides[axis] : 0,
                                   canonical.zero_point_strides[last] != 0};
  // The planes: [outer..., plane] with the operands' strides (and a block along an outer dimension)
  // before it and none along it, so that a run's indices are its plane's first operands.
  Layout planes = canonical;
  planes.rank = last;
  planes.dims[axis] = static_cast<int64_t>(plane);
  planes.scale_strides[axis] = planes.zero_point_strides[axis] = 0;
  if (canonical.block_axis >= axis) {  // blocked along the groups' dimension: the groups are its blocks
    planes.block_axis = -1;
    planes.block_size = 1;
  }
  for_each_run(planes, begin, end, [&](const Run& stretch) {
    Run run;
    run.x_index = stretch.x_index;
    run.count = stretch.count;
    // Only a range's first run starts inside its plane.
    const uint64_t in_plane = run.x_index == begin ? run.x_index % plane : 0;
    const uint64_t first_group = in_plane / group;
    run.scale_index = stretch.scale_index + first_group * static_cast<uint64_t>(scale.group_stride);
    run.zero_point_index = stretch.zero_point_index + first_group * static_cast<uint64_t>(zero_point.group_stride);
    run.period = inner;
    run.period_phase = in_plane % inner;
    run.group = group;
    run.group_phase = in_plane - first_group * group;
    run.scale_periodic = scale;
    run.zero_point_periodic = zero_point;
    run.scale_varies = scale.along_row || scale.group_stride != 0;
    run.zero_point_varies = zero_point.along_row || zero_point.group_stride != 0;
    visit(run);
  });
}

}  // namespace qdq::exec
