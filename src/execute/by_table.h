// Per-tensor plans over an x of few codes, run as a table of the kernel's results (by_table.cpp).
#pragma once

#include "qdq/qdq.hpp"

namespace qdq::exec {

// Runs the plan into y by table and returns true when it qualifies: one scale and zero point;
// float16/bfloat16 x quantized, or float8 x dequantized to float16/bfloat16, or int8/uint8 x to
// bfloat16; large enough to repay the table; x and y not strided (packed sub-byte outputs are
// packed as they are looked up). Otherwise returns false, doing nothing.
bool execute_by_table(const Plan& plan, const MutableTensorView& y, const ParallelFor& host);

}  // namespace qdq::exec
