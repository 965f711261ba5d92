// The SIMD kernels (Highway, one source compiled for every x86/Arm target and dispatched at run
// time). They cover every plan the front doors make and match the scalar reference bit for bit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "qdq/qdq.hpp"

namespace qdq::kernels {

// Whether a SIMD kernel runs this plan: every plan the front doors make (quantize from float32,
// float16, bfloat16 or int32 in any division precision, float64 included, to every quantized
// type; dequantize from every quantized type to float32, float16 and bfloat16), in either
// sub-byte layout. tests/kernel_coverage_test.cpp enumerates them from the element-type table.
bool covers(const Plan& plan);

// Elements [begin, end) of the plan into y, over the canonical layout (execute/runs.h). Selects
// the target once per call. For packed outputs, begin and end are multiples of 8 or end is the
// element count, so that no two calls write one byte.
void execute_range(const Plan& plan, const Layout& canonical, uint64_t begin, uint64_t end,
                   const MutableTensorView& y);

// Highway targets compiled in and supported by this CPU, best first (bit values of HWY_*), and
// their names.
std::vector<int64_t> supported_targets();
std::string target_name(int64_t target);

// Restricts dispatch to one target (tests run every kernel on every target); 0 restores all.
void force_target(int64_t target);

}  // namespace qdq::kernels
