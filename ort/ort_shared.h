// What qdq_ort.cpp and quark_ops.cpp share inside the custom-op library.
#pragma once

#include <onnxruntime_c_api.h>

#include <cstdint>
#include <exception>
#include <string>

namespace qdq_ort {

// The runtime's API table, set by RegisterCustomOps before any op is created.
const OrtApi& api();

// qdq's ParallelFor on ORT's intra-op pool; `host` is the OrtKernelContext* of the running node.
void parallel_for(void* host, void (*task)(void*, uint64_t), void* task_context, uint64_t count);

#define QDQ_ORT_RETURN_IF_ERROR(expression) \
  do {                                      \
    if (OrtStatus* status_ = (expression)) {  \
      return status_;                       \
    }                                       \
  } while (0)

// Runs `body` (returning OrtStatus*) with every exception turned into an ORT_FAIL status.
template <class Body>
OrtStatus* guarded(Body&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    return api().CreateStatus(ORT_FAIL, (std::string("qdq: ") + e.what()).c_str());
  } catch (...) {
    return api().CreateStatus(ORT_FAIL, "qdq: unknown exception");
  }
}

// The OrtCustomOp fields every qdq op shares: C API version, CPU provider, default memory, no
// variadic arguments, only the V2 kernel entry points, versions 1 and up.
void set_common_op_fields(OrtCustomOp& op);

// Shape inference that gives y x's shape and `output` as type (UNDEFINED: x's type).
OrtStatus* infer_output_like_x(OrtShapeInferContext* context, ONNXTensorElementDataType output);

// Adds MXQuantizeDequantize and BFPQuantizeDequantize (ort/quark_ops.cpp) to a com.amd.quark
// domain, or Quark's legacy names MXFixNeuron and BFPFixNeuron to com.vai.quantize.
OrtStatus* add_quark_block_ops(OrtCustomOpDomain* domain, bool legacy_names);

}  // namespace qdq_ort
