// qdq: exact linear quantization and dequantization. The C++ API.
//
// Every operator is planned, then executed:
//   1. a front door (plan_quantize_linear, plan_extended_quantize_linear, ...) checks the inputs
//      against one specification and returns a Plan, or a Status naming the value and the rule;
//   2. execute(plan, y) writes the output into a caller-owned buffer.
// Tensor views are non-owning; shapes and indices count elements, never bytes (4-bit types pack
// two elements per byte, low nibble first; 2-bit types four per byte, lowest bits first). The
// views' data must stay alive until execute returns; their shape arrays are read while planning
// only (a Plan's own `shape` and `layout` hold what execution needs).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "qdq/element_type.h"
#include "qdq/export.h"
#include "qdq/status.h"

namespace qdq {

struct TensorView {
  ElementType type = ElementType::kUndefined;
  std::span<const int64_t> shape;  // empty span = 0-D (one element)
  const void* data = nullptr;
  SubByteLayout layout = SubByteLayout::kPacked;  // 4- and 2-bit types only
};

struct MutableTensorView {
  ElementType type = ElementType::kUndefined;
  std::span<const int64_t> shape;
  void* data = nullptr;
  SubByteLayout layout = SubByteLayout::kPacked;  // 4- and 2-bit types only
};

// ONNX QuantizeLinear attributes. Every field defaults to the schema default; a field that the
// requested version does not define must stay at its default, or planning fails naming it.
struct QuantizeLinearAttributes {
  int64_t axis = 1;
  int64_t block_size = 0;
  int64_t saturate = 1;
  int64_t output_dtype = 0;  // TensorProto code, 0 = unset
  int64_t precision = 0;     // TensorProto code, 0 = unset (v23+)
  int64_t opset = 25;        // the model's ai.onnx opset; resolves to version 10/13/19/21/23/24/25
};

struct DequantizeLinearAttributes {
  int64_t axis = 1;
  int64_t block_size = 0;
  int64_t output_dtype = 0;  // v23+
  int64_t opset = 25;
};

// Which operator and which of its versions a Plan was made for; used in every message.
enum class Operation : uint8_t { kQuantize, kDequantize };
enum class Granularity : uint8_t { kPerTensor, kPerAxis, kBlocked, kElementwise };

// The precision of QuantizeLinear's division x / scale (ONNX `precision`). kFloat64 is what qdq
// uses for an int32 scale, whose values float32 cannot all hold.
enum class Precision : uint8_t { kFloat32, kFloat16, kBfloat16, kFloat64 };

inline constexpr int kMaxLayoutRank = 8;

// x seen as an N-D box (N <= 8 after merging) in which each dimension either indexes the scale
// and zero point (stride > 0) or broadcasts them (stride 0). Per-tensor, per-axis and blocked
// quantization are all [outer, axis, inner] with different strides; the block divides the scale
// coordinate along `block_axis`.
struct Layout {
  int rank = 1;
  int64_t dims[kMaxLayoutRank] = {};
  int64_t scale_strides[kMaxLayoutRank] = {};
  int64_t zero_point_strides[kMaxLayoutRank] = {};
  int block_axis = -1;  // -1: no blocking
  int64_t block_size = 1;
};

struct Plan {
  Operation operation = Operation::kQuantize;
  std::string operator_name;  // "QuantizeLinear-21", "ExtendedDequantizeLinear-1", ...
  Granularity granularity = Granularity::kPerTensor;

  TensorView x;
  TensorView scale;
  TensorView zero_point;  // type kUndefined when absent
  bool has_zero_point = false;
  ElementType output_type = ElementType::kUndefined;

  // QuantizeLinear: division precision, whether out-of-range float results saturate, and whether
  // the zero point is added (integers after rounding, float4/float16/bfloat16 in float32; float8
  // zero points are required to be 0 and are not added, so -0 stays -0).
  Precision precision = Precision::kFloat32;
  bool saturate = true;
  bool apply_zero_point = false;  // dequantize: subtract it (float8 x: required 0, skipped)

  std::vector<int64_t> shape;  // x's shape, also y's
  uint64_t element_count = 0;
  Layout layout;

  // DirectML descriptions (directml.hpp) whose x or y is strided, or whose scale or zero point no
  // run can follow: x's and y's element strides over `shape`, and `layout` has shape's dims. Such
  // plans run gathered. Empty for every other plan (x and y packed row-major).
  std::vector<int64_t> x_strides;
  std::vector<int64_t> y_strides;
};

QDQ_API Result<Plan> plan_quantize_linear(const TensorView& x, const TensorView& y_scale,
                                          const TensorView* y_zero_point,
                                          const QuantizeLinearAttributes& attributes = {});
QDQ_API Result<Plan> plan_dequantize_linear(const TensorView& x, const TensorView& x_scale,
                                            const TensorView* x_zero_point,
                                            const DequantizeLinearAttributes& attributes = {});

// AMD Quark com.amd.quark ExtendedQuantizeLinear / ExtendedDequantizeLinear, version 1.
QDQ_API Result<Plan> plan_extended_quantize_linear(const TensorView& x, const TensorView& y_scale,
                                                   const TensorView* y_zero_point, int64_t axis = 1);
QDQ_API Result<Plan> plan_extended_dequantize_linear(const TensorView& x, const TensorView& x_scale,
                                                     const TensorView* x_zero_point, int64_t axis = 1);

// DirectML element-wise quantize / dequantize linear, the numpy-style convenience door: scale and
// zero point have x's rank, each dimension equal to x's or 1 (broadcast), every tensor packed, no
// feature level. qdq/directml.hpp takes DirectML's own descriptions (strides, feature levels).
// output_type kUndefined: quantize takes the zero point's type (uint8 without one), dequantize
// the scale's type.
QDQ_API Result<Plan> plan_elementwise_quantize_linear(const TensorView& x, const TensorView& scale,
                                                      const TensorView* zero_point,
                                                      ElementType output_type = ElementType::kUndefined);
QDQ_API Result<Plan> plan_elementwise_dequantize_linear(const TensorView& x, const TensorView& scale,
                                                        const TensorView* zero_point,
                                                        ElementType output_type = ElementType::kUndefined);

enum class ExecutionPath : uint8_t {
  kAuto,       // the SIMD kernels where they cover the plan (bit-identical to the reference)
  kReference,  // the scalar transcription of the specification
};

// A host's parallel-for (ONNX Runtime plugs its own thread pool in here): run
// task(task_context, i) for every i in [0, count), possibly concurrently, and return when all
// have finished. `host` is passed back unchanged.
struct ParallelFor {
  void (*run)(void* host, void (*task)(void* task_context, uint64_t index), void* task_context,
              uint64_t count) = nullptr;
  void* host = nullptr;
};

struct ExecuteOptions {
  ExecutionPath path = ExecutionPath::kAuto;
  ParallelFor parallel_for;  // unset: qdq's default pool
};

// Threads of the default pool: set_num_threads(n > 0) fixes it; 0 restores the default, which is
// the QDQ_NUM_THREADS environment variable if set, else the hardware thread count.
QDQ_API void set_num_threads(int threads);
QDQ_API int num_threads();

// memcpy split across the default pool as execute() splits its work: the bandwidth baseline the
// benchmarks compare against.
QDQ_API void parallel_copy(void* destination, const void* source, uint64_t bytes);

// Highway targets compiled into this build and supported by this CPU ("AVX3", "AVX2", "SSE4",
// ...), best first; and the one execute() dispatches to now.
QDQ_API std::vector<std::string> simd_targets();
QDQ_API std::string active_simd_target();

// Writes y = op(x, scale, zero point). y must have the plan's output type and x's shape.
QDQ_API Status execute(const Plan& plan, const MutableTensorView& y, const ExecuteOptions& options = {});

// Plan and execute in one call.
QDQ_API Status quantize_linear(const TensorView& x, const TensorView& y_scale, const TensorView* y_zero_point,
                               const QuantizeLinearAttributes& attributes, const MutableTensorView& y);
QDQ_API Status dequantize_linear(const TensorView& x, const TensorView& x_scale,
                                 const TensorView* x_zero_point, const DequantizeLinearAttributes& attributes,
                                 const MutableTensorView& y);

}  // namespace qdq
