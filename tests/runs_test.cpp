// exec::for_each_run against each element's operand offsets computed from its own coordinates:
// random canonical layouts (ranks 1 to 5, blocked on any axis or none, zero and nonzero strides),
// every range [begin, end) of small tensors and random ranges of larger ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "execute/runs.h"
#include "execute/short_rows.h"
#include "plan/checks.h"
#include "qdq/qdq.hpp"

namespace qdq {
namespace {

// Element i's scale and zero-point offsets: the sum over dimensions of its coordinate (its block
// number along the block axis) times that dimension's stride.
void OperandOffsets(const Layout& layout, uint64_t i, int64_t* scale, int64_t* zero_point) {
  *scale = 0;
  *zero_point = 0;
  for (int d = layout.rank - 1; d >= 0; --d) {
    const uint64_t extent = static_cast<uint64_t>(layout.dims[d]);
    int64_t coordinate = static_cast<int64_t>(i % extent);
    i /= extent;
    if (d == layout.block_axis) coordinate /= layout.block_size;
    *scale += coordinate * layout.scale_strides[d];
    *zero_point += coordinate * layout.zero_point_strides[d];
  }
}

Layout RandomLayout(std::mt19937_64& rng, uint64_t* count) {
  Layout layout;
  layout.rank = 1 + static_cast<int>(rng() % 5);
  layout.block_axis = rng() % 3 == 0 ? -1 : static_cast<int>(rng() % static_cast<uint64_t>(layout.rank));
  layout.block_size = layout.block_axis < 0 ? 1 : 1 + static_cast<int64_t>(rng() % 5);
  *count = 1;
  for (int d = 0; d < layout.rank; ++d) {
    layout.dims[d] = 1 + static_cast<int64_t>(rng() % 6);
    *count *= static_cast<uint64_t>(layout.dims[d]);
    layout.scale_strides[d] = rng() % 3 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % 40);
    layout.zero_point_strides[d] = rng() % 3 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % 40);
  }
  // Along the innermost axis an operand is constant or advances one element per element (or per
  // block): the runs' contract (Run::scale_offset), which canonical_layout's inputs keep.
  const int last = layout.rank - 1;
  const bool blocked_inner = layout.block_axis == last;
  layout.scale_strides[last] = blocked_inner || rng() % 2 == 0 ? 1 : 0;
  layout.zero_point_strides[last] = blocked_inner || rng() % 2 == 0 ? 1 : 0;
  return layout;
}

// The runs of `walked` over [begin, end) cover it in order, each within one row, and give every
// element the offsets OperandOffsets computes from `layout` (walked itself, or its canonical form).
void CheckRange(const Layout& layout, uint64_t begin, uint64_t end, const Layout* walked = nullptr) {
  if (walked == nullptr) walked = &layout;
  const uint64_t inner = static_cast<uint64_t>(walked->dims[walked->rank - 1]);
  uint64_t next = begin;
  exec::for_each_run(*walked, begin, end, [&](const exec::Run& run) {
    ASSERT_EQ(run.x_index, next);
    ASSERT_GT(run.count, 0u);
    ASSERT_LE(run.x_index % inner + run.count, inner) << "a run crosses a row";
    for (uint64_t k = 0; k < run.count; ++k) {
      int64_t scale = 0, zero_point = 0;
      OperandOffsets(layout, run.x_index + k, &scale, &zero_point);
      ASSERT_EQ(static_cast<int64_t>(run.scale_index + run.scale_offset(k)), scale)
          << "element " << run.x_index + k << " of [" << begin << ", " << end << ")";
      ASSERT_EQ(static_cast<int64_t>(run.zero_point_index + run.zero_point_offset(k)), zero_point)
          << "element " << run.x_index + k << " of [" << begin << ", " << end << ")";
    }
    next += run.count;
  });
  EXPECT_EQ(next, std::max(begin, end));
}

TEST(ForEachRun, EveryElementGetsItsOwnOperands) {
  const uint64_t seed = 20261202;
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 3000; ++trial) {
    uint64_t count = 0;
    const Layout layout = RandomLayout(rng, &count);
    SCOPED_TRACE("seed " + std::to_string(seed) + ", trial " + std::to_string(trial));
    if (count <= 64) {
      for (uint64_t begin = 0; begin <= count; ++begin) {
        for (uint64_t end = begin; end <= count; ++end) CheckRange(layout, begin, end);
      }
    } else {
      for (int r = 0; r < 20; ++r) {
        const uint64_t a = rng() % (count + 1), b = rng() % (count + 1);
        CheckRange(layout, std::min(a, b), std::max(a, b));
      }
    }
    if (HasFatalFailure()) return;
  }
}

// canonical_layout keeps every element's operands: the planners' per-axis and blocked layouts of
// random shapes (dimensions of 1 among them, blocks that do and do not divide the axis, blocks
// of one row), walked in their canonical form, give each element the offsets of the original.
TEST(CanonicalLayout, KeepsEveryElementsOperands) {
  const uint64_t seed = 1202;
  std::mt19937_64 rng(seed);
  int merged = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    std::vector<int64_t> shape(1 + rng() % 4);
    uint64_t count = 1;
    for (int64_t& d : shape) {
      d = rng() % 4 == 0 ? 1 : 1 + static_cast<int64_t>(rng() % 9);
      count *= static_cast<uint64_t>(d);
    }
    const int axis = static_cast<int>(rng() % shape.size());
    Layout layout;
    if (rng() % 2 == 0) {
      layout = plan::per_axis_layout(shape, axis);
    } else {
      const int64_t block = 1 + static_cast<int64_t>(rng() % 4);
      const int64_t axis_dim = shape[static_cast<size_t>(axis)];
      layout = plan::blocked_layout(shape, axis, (axis_dim + block - 1) / block, block);
    }
    const Layout canonical = exec::canonical_layout(layout);
    if (canonical.rank < layout.rank) ++merged;
    SCOPED_TRACE("seed " + std::to_string(seed) + ", trial " + std::to_string(trial));
    CheckRange(layout, 0, count, &canonical);
    for (int r = 0; r < 8; ++r) {
      const uint64_t a = rng() % (count + 1), b = rng() % (count + 1);
      CheckRange(layout, std::min(a, b), std::max(a, b), &canonical);
    }
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(merged, 0);
}

// Rows of whole blocks along the innermost axis become one dimension of blocks: one run; so do
// short stretches of one value.
TEST(CanonicalLayout, RowsOfWholeBlocksMakeOneRun) {
  const std::vector<int64_t> shape = {64, 32};
  const Layout canonical = exec::canonical_layout(plan::blocked_layout(shape, 1, 2, 16));
  int runs = 0;
  exec::for_each_run(canonical, 0, 64 * 32, [&](const exec::Run& run) {
    ++runs;
    EXPECT_EQ(run.count, 64u * 32u);
    EXPECT_EQ(run.block, 16u);
  });
  EXPECT_EQ(runs, 1);
  // A partial last block in each row keeps the rows apart.
  const Layout partial = exec::canonical_layout(plan::blocked_layout(shape, 1, 3, 12));
  runs = 0;
  exec::for_each_run(partial, 0, 64 * 32, [&](const exec::Run&) { ++runs; });
  EXPECT_EQ(runs, 64);
  // Per-axis on the first axis over rows of 8: blocks of 8, one run.
  const std::vector<int64_t> rows_of_8 = {64, 8};
  runs = 0;
  exec::for_each_run(exec::canonical_layout(plan::per_axis_layout(rows_of_8, 0)), 0, 64 * 8, [&](const exec::Run& run) {
    ++runs;
    EXPECT_EQ(run.block, 8u);
  });
  EXPECT_EQ(runs, 1);
}

// Row-major strides over `operand_shape` (x's rank), 0 where it is 1: a DirectML-style broadcast.
Layout BroadcastLayout(const std::vector<int64_t>& shape, const std::vector<int64_t>& operand_shape) {
  Layout layout;
  layout.rank = static_cast<int>(shape.size());
  int64_t stride = 1;
  for (int d = layout.rank - 1; d >= 0; --d) {
    layout.dims[d] = shape[static_cast<size_t>(d)];
    const int64_t extent = operand_shape[static_cast<size_t>(d)];
    layout.scale_strides[d] = layout.zero_point_strides[d] = extent == 1 ? 0 : stride;
    stride *= extent;
  }
  return layout;
}

// A random x of short rows (1 to 9 elements, 2 to 4 dimensions, enough elements to be grouped) whose
// operands are blocked along a dimension before the rows (partial last blocks among them) or
// broadcast over the one just before them, DirectML-style.
Layout RandomShortRowsLayout(std::mt19937_64& rng, std::vector<int64_t>* shape_out, uint64_t* count_out) {
  std::vector<int64_t> shape(2 + rng() % 3);
  shape.back() = 1 + static_cast<int64_t>(rng() % 9);
  uint64_t count = static_cast<uint64_t>(shape.back());
  for (size_t d = 0; d + 1 < shape.size(); ++d) {
    shape[d] = 1 + static_cast<int64_t>(rng() % 40);
    count *= static_cast<uint64_t>(shape[d]);
  }
  if (count < exec::kFewestGroupedElements) shape[0] *= static_cast<int64_t>(exec::kFewestGroupedElements / count + 1);
  count = 1;
  for (int64_t d : shape) count *= static_cast<uint64_t>(d);
  const int before_rows = static_cast<int>(shape.size()) - 2;
  Layout layout;
  if (rng() % 2 == 0) {
    const int axis = static_cast<int>(rng() % static_cast<uint64_t>(before_rows + 1));
    const int64_t block = 1 + static_cast<int64_t>(rng() % 12);
    const int64_t axis_dim = shape[static_cast<size_t>(axis)];
    layout = plan::blocked_layout(shape, axis, (axis_dim + block - 1) / block, block);
  } else {
    std::vector<int64_t> operand_shape = shape;
    operand_shape[static_cast<size_t>(before_rows)] = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (static_cast<int>(d) != before_rows && rng() % 3 == 0) operand_shape[d] = 1;
    }
    layout = BroadcastLayout(shape, operand_shape);
  }
  *shape_out = shape;
  *count_out = count;
  return layout;
}

// for_each_group_run's periodic runs (the kernels' path for short rows in groups) give every
// element of a range the operand offsets OperandOffsets computes from the layout, over random
// shapes and ranges starting and ending anywhere (inside rows and groups, as tasks do).
TEST(GroupRuns, EveryElementGetsItsOwnOperands) {
  const uint64_t seed = 20261204;
  std::mt19937_64 rng(seed);
  int grouped = 0;
  for (int trial = 0; trial < 400; ++trial) {
    SCOPED_TRACE("seed " + std::to_string(seed) + ", trial " + std::to_string(trial));
    std::vector<int64_t> shape;
    uint64_t count = 0;
    const Layout layout = RandomShortRowsLayout(rng, &shape, &count);
    Plan plan;
    plan.element_count = count;
    plan.shape = shape;
    plan.layout = layout;
    exec::RowGroups groups;
    const Layout canonical = exec::canonical_layout(layout);
    if (!exec::group_short_rows(plan, canonical, &groups)) continue;
    ++grouped;
    std::string described = "canonical dims / scale strides / zero-point strides:";
    for (int d = 0; d < canonical.rank; ++d) {
      described += " " + std::to_string(canonical.dims[d]) + "/" + std::to_string(canonical.scale_strides[d]) + "/" +
                   std::to_string(canonical.zero_point_strides[d]);
    }
    SCOPED_TRACE(described + ", block axis " + std::to_string(canonical.block_axis) + " of " +
                 std::to_string(canonical.block_size));
    for (int r = 0; r < 8; ++r) {
      uint64_t first = rng() % count, last = 1 + rng() % count;
      if (first >= last) std::swap(first, last), ++last;
      uint64_t next = first;
      exec::for_each_group_run(canonical, static_cast<uint64_t>(groups.rows_per_block), first, last,
                               [&](const exec::Run& run) {
        ASSERT_EQ(run.x_index, next);
        ASSERT_GT(run.count, 0u);
        ASSERT_NE(run.period, 0u);
        for (uint64_t k = 0; k < run.count; ++k) {
          const uint64_t i = run.x_index + k;
          int64_t scale = 0, zero_point = 0;
          OperandOffsets(layout, i, &scale, &zero_point);
          ASSERT_EQ(run.scale_index + run.scale_offset(k), static_cast<uint64_t>(scale))
              << "element " << i << " of [" << first << ", " << last << ")";
          ASSERT_EQ(run.zero_point_index + run.zero_point_offset(k), static_cast<uint64_t>(zero_point))
              << "element " << i << " of [" << first << ", " << last << ")";
          if (!run.scale_varies) ASSERT_EQ(run.scale_offset(k), 0u);
          if (!run.zero_point_varies) ASSERT_EQ(run.zero_point_offset(k), 0u);
        }
        next += run.count;
      });
      if (HasFatalFailure()) return;
      EXPECT_EQ(next, last);
    }
  }
  EXPECT_GT(grouped, 100);
}

}  // namespace
}  // namespace qdq
