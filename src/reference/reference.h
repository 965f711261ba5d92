// The scalar reference executor (the oracle every faster path must match bit for bit).
#pragma once

#include <cstdint>

#include "qdq/qdq.hpp"

namespace qdq::reference {

// One element of QuantizeLinear under `plan`'s policies: x, scale and zero point are values, the
// result is the output code.
uint32_t quantize_value(const Plan& plan, double x, double scale, double zero_point);

// One element of DequantizeLinear: codes of x and the zero point, the scale's value; result is the
// output code (float32 / float16 / bfloat16 bits).
uint32_t dequantize_value(const Plan& plan, uint32_t x_code, double scale, uint32_t zp_code);

// Runs the whole plan into y (x's shape, the plan's output type), single-threaded, walking x's
// coordinates directly (independent of the executor's runs). Packed outputs' padding bits are
// the caller's (execute() zeroes them).
void execute(const Plan& plan, void* y, SubByteLayout y_layout = SubByteLayout::kPacked);

// The output code of element i of x under the scale and zero-point elements at the given indices.
uint32_t element_code(const Plan& plan, uint64_t i, uint64_t scale_index, uint64_t zp_index);

}  // namespace qdq::reference
