// Tensors whose rows are short. Over the canonical layout a run is one row at most, and a run
// costs tens of nanoseconds of set-up (the walk, the operand loads, the kernel's prologue), which
// rows of 4 to 64 elements paid per handful of elements. Two ways round it make a run span many
// rows:
// - operands that repeat from row to row (per-axis on a late axis, rows of a few blocks): they are
//   written out per element over one tile that serves the whole tensor (tile_short_rows);
// - operands that repeat only within a group of rows (blocked along the axis before the rows,
//   DirectML's [M, 1, C] broadcasts; group_short_rows): execute() and the fused fake-quant run
//   them as periodic runs (exec::for_each_group_run), whose operands the kernels make in
//   registers from each group's row.
#pragma once

#include <cstdint>
#include <vector>

#include "qdq/qdq.hpp"

namespace qdq::exec {

// A plan whose scale and zero point are written out per element over a tile of x, and the layout
// that walks them: [count / tile rounded up, tile], both operands stepping along the tile.
struct TiledOperands {
  Plan plan;
  Layout layout;
  std::vector<unsigned char> scale, zero_point;
};

// Whether the runs of `canonical` (the plan's canonical layout) are short rows whose operands
// repeat from row to row (or from group of rows to group); if so `tiled` gets the plan on tiled
// operands, whose runs are a tile long.
bool tile_short_rows(const Plan& plan, const Layout& canonical, TiledOperands* tiled);

// Tensors of fewer elements than this keep the ordinary runs. The bound is the one the grouped
// path had when it wrote operands out in pieces of 1,024 elements (two pieces); it was not
// measured again for the periodic runs.
inline constexpr uint64_t kFewestGroupedElements = 2048;

// Short rows that share their operands within groups of consecutive rows along the canonical
// dimension before the rows: a block of rows when that dimension is blocked, else all its rows
// (its operand strides are 0).
struct RowGroups {
  int64_t rows_per_block = 0;  // 0: a group is every row along that dimension
};

// Whether `canonical`'s rows are short and grouped so, their operands stepping by one or not at
// all along a row; if so `groups` describes them. Tried after tile_short_rows (which needs no
// per-group work).
bool group_short_rows(const Plan& plan, const Layout& canonical, RowGroups* groups);

}  // namespace qdq::exec
