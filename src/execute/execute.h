// What execute() and the fused fake-quant executor share: the output-buffer check and the split
// of an element range into tasks for the threads.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "qdq/qdq.hpp"

namespace qdq::exec {

// y has the plan's output type and x's shape, and data when it has elements.
Status check_output(const Plan& plan, const MutableTensorView& y);
// The same for any output: `role` names it in the message ("output buffer", "mask").
Status check_output(const std::string& op, std::string_view role, ElementType type, std::span<const int64_t> shape,
                    uint64_t element_count, const MutableTensorView& y);

// Cuts [0, count) into task ranges (boundaries multiples of 64 elements, so that packed outputs
// never share a byte across tasks) and runs range(context, begin, end) for each: on the host's
// parallel-for if set, else on qdq's default pool, or on the calling thread when count is small.
void run_ranges(uint64_t count, const ParallelFor& host, void (*range)(void* context, uint64_t begin, uint64_t end),
                void* context);

}  // namespace qdq::exec
