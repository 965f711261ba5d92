// What qdq_ort.cpp and quark_ops.cpp share inside the custom-op library.
#pragma once

#include <onnxruntime_c_api.h>

#include <cstdint>

namespace qdq_ort {

// The runtime's API table, set by RegisterCustomOps before any op is created.
const OrtApi& api();

// qdq's ParallelFor on ORT's intra-op pool; `host` is the OrtKernelContext* of the running node.
void parallel_for(void* host, void (*task)(void*, uint64_t), void* task_context, uint64_t count);

// Adds MXQuantizeDequantize and BFPQuantizeDequantize (ort/quark_ops.cpp) to a com.amd.quark
// domain, or Quark's legacy names MXFixNeuron and BFPFixNeuron to com.vai.quantize.
OrtStatus* add_quark_block_ops(OrtCustomOpDomain* domain, bool legacy_names);

}  // namespace qdq_ort
