// qdq: fused fake quantization, y = DequantizeLinear(QuantizeLinear(x)), in one pass.
//
// The codes never exist as a tensor: each thread quantizes a cache-sized chunk of x into a small
// buffer and dequantizes it into y at once, with the same kernels as the two operators, so y is
// bit-identical to running them one after the other (tests/fake_quant_test.cpp). Optionally it
// also writes the straight-through mask training needs (docs/semantics.md, "Fake quantization").
//
// Planning runs both operators' front doors, so every input and attribute is checked against
// QuantizeLinear's and DequantizeLinear's rules of the requested opset, with their messages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "qdq/export.h"
#include "qdq/qdq.hpp"

namespace qdq {

// QuantizeLinear's attributes plus the type of y. Every field defaults as in ONNX.
struct QuantizeDequantizeAttributes {
  int64_t axis = 1;
  int64_t block_size = 0;
  int64_t saturate = 1;
  int64_t quantized_dtype = 0;  // QuantizeLinear's output_dtype: the codes' type (0: the zero point's, else uint8)
  int64_t precision = 0;        // QuantizeLinear's precision (v23+), 0 = unset
  // y's type, DequantizeLinear's output_dtype (float32, float16 or bfloat16). 0: x's type when x
  // is float32, float16 or bfloat16, float32 when x is int32. Before opset 23 DequantizeLinear
  // makes y the scale's type, which for every input those versions accept is that default.
  int64_t output_dtype = 0;
  int64_t opset = 25;  // the model's ai.onnx opset, as for QuantizeLinear
};

struct QuantizeDequantizePlan {
  std::string operator_name;  // "QuantizeDequantizeLinear (QuantizeLinear-25, DequantizeLinear-25)"
  Plan quantize;    // x -> codes: its output type is the codes' type
  Plan dequantize;  // codes -> y: its x describes the codes (type and shape; the data is per chunk)
  ElementType output_type = ElementType::kUndefined;  // y's
  std::vector<int64_t> shape;                         // x's, y's and the mask's
  uint64_t element_count = 0;
};

// ONNX QuantizeLinear then DequantizeLinear with the same scale, zero point, axis and block size.
QDQ_API Result<QuantizeDequantizePlan> plan_quantize_dequantize_linear(
    const TensorView& x, const TensorView& scale, const TensorView* zero_point,
    const QuantizeDequantizeAttributes& attributes = {});

// AMD Quark ExtendedQuantizeLinear then ExtendedDequantizeLinear (y is float32).
QDQ_API Result<QuantizeDequantizePlan> plan_extended_quantize_dequantize_linear(const TensorView& x,
                                                                                const TensorView& scale,
                                                                                const TensorView* zero_point,
                                                                                int64_t axis = 1);

// Writes y and, if `mask` is not null, the straight-through mask: uint8, x's shape, 1 where
// x / scale (computed as QuantizeLinear computes it) rounds into the quantized type's range
// before any clamp, else 0 (NaN: 0). Every plan has a mask but Quark's int32 / uint32 ones.
// ExecutionPath::kReference composes the two scalar reference operators through a whole code
// tensor (for checking; no mask there).
QDQ_API Status execute(const QuantizeDequantizePlan& plan, const MutableTensorView& y,
                       const MutableTensorView* mask = nullptr, const ExecuteOptions& options = {});

// Plan and execute in one call.
QDQ_API Status quantize_dequantize_linear(const TensorView& x, const TensorView& scale, const TensorView* zero_point,
                                          const QuantizeDequantizeAttributes& attributes, const MutableTensorView& y,
                                          const MutableTensorView* mask = nullptr);

}  // namespace qdq
