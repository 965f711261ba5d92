// Plans over an x of few codes, run as tables of the kernel's results (by_table.cpp): one table
// per-tensor, one a row where the operands are constant along long rows.
#pragma once

#include "qdq/qdq.hpp"

namespace qdq::exec {

// Runs the plan into y by table and returns true when it qualifies: one scale and zero point;
// float16/bfloat16 x quantized, or dequantized to float16/bfloat16 from float8 x, from packed
// 4- and 2-bit x (a byte of x per entry), or from 8-bit integers (4- and 2-bit ones one per byte)
// to bfloat16; large enough to repay the table; x and y not strided (packed sub-byte outputs are
// packed as they are looked up). Dequantize plans whose scale and zero point are constant along
// long rows (per-axis on an outer axis, DirectML's [N, 1] operands) qualify with a table per row,
// but for 8-bit integer x: rows of at least 1,024 elements and of 16 times the elements a row's
// table is built from (16 for packed x to 16-bit results where the target shuffles bytes, else
// 256 entries times the elements a byte of x holds: rows of 4,096 for codes one per byte).
// Otherwise returns false, doing nothing.
bool execute_by_table(const Plan& plan, const MutableTensorView& y, const ParallelFor& host);

// Whether execute_by_table runs the plan (on this CPU's target), and with a table per row of the
// canonical layout rather than one: for tests.
bool runs_by_table(const Plan& plan, bool* per_row = nullptr);

}  // namespace qdq::exec
