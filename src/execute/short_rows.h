// Tensors whose rows are short. Over the canonical layout a run is one row at most, and a run
// costs tens of nanoseconds of set-up (the walk, the operand loads, the kernel's prologue), which
// rows of 4 to 64 elements paid per handful of elements. Both ways round it write the operands
// out per element, so that a run spans many rows:
// - operands that repeat from row to row (per-axis on a late axis, rows of a few blocks): one tile
//   serves the whole tensor (tile_short_rows);
// - operands that repeat only within a group of rows (blocked along the axis before the rows,
//   DirectML's [M, 1, C] broadcasts; group_short_rows): execute() runs them as periodic runs
//   (exec::for_each_group_run), whose operands the kernels make in registers from each group's
//   row; the fused fake-quant writes them out a piece of x at a time (PieceOperands).
#pragma once

#include <algorithm>
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

// Elements per piece: a multiple of 8, so that no two pieces write one byte of a packed output.
// A piece's operands (4 bytes an element at most, each) stay in the first-level cache.
inline constexpr uint64_t kPieceElements = 1024;

// Short rows that share their operands within groups of consecutive rows along the canonical
// dimension before the rows: a block of rows when that dimension is blocked, else all its rows
// (its operand strides are 0).
struct RowGroups {
  Layout canonical;            // the plan's canonical layout, which the groups are read from
  Layout pieces;               // [count / kPieceElements rounded up, kPieceElements], stepping by 1
  int64_t rows_per_block = 0;  // 0: a group is every row along that dimension
};

// Whether `canonical`'s rows are short and grouped so, their operands stepping by one or not at
// all along a row; if so `groups` describes them. Tried after tile_short_rows (which needs no
// per-group work).
bool group_short_rows(const Plan& plan, const Layout& canonical, RowGroups* groups);

// One range's copy of a plan whose operands are written out per element, one piece at a time.
class PieceOperands {
 public:
  PieceOperands(const Plan& plan, const RowGroups& groups);
  PieceOperands(const PieceOperands&) = delete;
  PieceOperands& operator=(const PieceOperands&) = delete;

  // Writes the operands of elements [first, last), which lie in one piece, where groups.pieces
  // reads them, and returns the plan that reads them there.
  const Plan& fill(uint64_t first, uint64_t last);

 private:
  const Plan& source_;
  const RowGroups& groups_;
  Plan plan_;
  std::vector<unsigned char> scale_, zero_point_;
};

// Calls visit(first, last) for the pieces that [begin, end) overlaps, clipped to it, in order.
template <class Visit>
void for_each_piece(uint64_t begin, uint64_t end, Visit&& visit) {
  for (uint64_t first = begin; first < end;) {
    const uint64_t last = std::min(end, (first / kPieceElements + 1) * kPieceElements);
    visit(first, last);
    first = last;
  }
}

}  // namespace qdq::exec
