// Per-tensor plans over an x of few codes, run as a table of the kernel's results (by_table.cpp).
#pragma once

#include "qdq/qdq.hpp"

namespace qdq::exec {

// Runs the plan into y by table and returns true when it qualifies: one scale and zero point;
// float16/bfloat16 x quantized, or dequantized to float16/bfloat16 from float8 x, from packed
// 4- and 2-bit x (a byte of x per entry), or from 8-bit integers (4- and 2-bit ones one per byte)
// to bfloat16; large enough to repay the table; x and y not strided (packed sub-byte outputs are
// packed as they are looked up). Otherwise returns false, doing nothing.
bool execute_by_table(const Plan& plan, const MutableTensorView& y, const ParallelFor& host);

}  // namespace qdq::exec
