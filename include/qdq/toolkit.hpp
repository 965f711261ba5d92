// qdq's quantization toolkit: scales and zero points from data, dynamic quantization (scales and
// codes in one call) and ONNX DynamicQuantizeLinear. Each formula, with every edge case (all-zero
// groups, NaN and infinities, ranges too small or too large for the scale type), is written out in
// docs/semantics.md ("Scales from data"); tests check it against an independent transcription.
#pragma once

#include <cstdint>
#include <vector>

#include "qdq/element_type.h"
#include "qdq/export.h"
#include "qdq/qdq.hpp"
#include "qdq/status.h"

namespace qdq {

// How a group's values become a scale (and a zero point).
enum class ScaleMethod : uint8_t {
  // Integer types, asymmetric: [min(x, 0), max(x, 0)] maps onto [qmin, qmax];
  // scale = (rmax - rmin) / (qmax - qmin), zero point = qmin - rmin / scale, rounded half to even
  // and saturated.
  kMinMax,
  // Symmetric: integers map max|x| onto half the full range, scale = max|x| / ((qmax - qmin) / 2)
  // (127.5 for int8, so -max|x| lands on -128 after the tie rounds to even), zero point 0 for
  // signed types and (qmax + 1) / 2 for unsigned ones; float types use scale = max|x| / max(T).
  kSymmetric,
  // Integers only: max|x| onto (qmax - qmin - 1) / 2 (127 for int8 and uint8), so the codes stay
  // in the restricted range [-127, 127] (uint8: [1, 255]) that some accelerators require.
  kSymmetricRestricted,
  // OCP Microscaling v1.0 shared exponents (power-of-two scales; float element types). With
  // emax = floor(log2(max(T))) (e4m3fn 8, e5m2 15, e2m1 2) the scale is 2^e with
  //   floor:  e = floor(log2(amax)) - emax                    (the OCP specification)
  //   ceil:   e = ceil(log2(amax)) - emax                     (floor, plus one when amax is not a power of two)
  //   even:   amax first rounded to T's mantissa width (half away from zero), then floor
  //   rceil:  e = ceil(log2(amax / max(T)))                   (cuBLAS's round-up of the decode scale)
  // clamped to e8m0's [-127, 127]; a group holding NaN or an infinity gets the NaN scale.
  kMxFloor,
  kMxCeil,
  kMxEven,
  kMxRceil,
};

struct QparamsOptions {
  ElementType quantized_type = ElementType::kInt8;  // the type the scales are for
  ElementType scale_type = ElementType::kFloat32;   // float32, float16, bfloat16; float8e8m0 (MX)
  ScaleMethod method = ScaleMethod::kMinMax;
  Granularity granularity = Granularity::kPerTensor;  // per-tensor, per-axis or blocked
  int64_t axis = 1;        // per-axis and blocked: the axis the scales index (negative counts back)
  int64_t block_size = 0;  // blocked: elements per block along `axis`; the last block may be short
};

// The shape of the scale (and zero point) for x's shape, as QuantizeLinear takes them: per-tensor
// [] (0-D), per-axis [D_axis], blocked x's shape with D_axis replaced by ceil(D_axis / block).
QDQ_API Result<std::vector<int64_t>> qparams_shape(std::span<const int64_t> x_shape, const QparamsOptions& options);

// Scales (and zero points, when zero_point is not null) of x (float32, float16 or bfloat16) for
// options.quantized_type, written into caller-owned tensors of qparams_shape's shape: scale of
// options.scale_type, zero point of options.quantized_type. One SIMD pass over x.
QDQ_API Status compute_qparams(const TensorView& x, const QparamsOptions& options, const MutableTensorView& scale,
                               const MutableTensorView* zero_point, const ExecuteOptions& execution = {});

// Dynamic quantization: the scales and zero points of compute_qparams, and y = QuantizeLinear(x)
// with them (saturating; x's shape, options.quantized_type). Where each group is a contiguous
// stretch of x that fits in cache (blocked along the last axis, per-axis along the first) the
// groups are reduced and quantized while in cache: one pass over x; otherwise two.
QDQ_API Status dynamic_quantize(const TensorView& x, const QparamsOptions& options, const MutableTensorView& y,
                                const MutableTensorView& scale, const MutableTensorView* zero_point,
                                const ExecuteOptions& execution = {});

// ONNX DynamicQuantizeLinear-11: uint8 y, a float32 scalar y_scale and a uint8 scalar
// y_zero_point, computed as onnx.reference does (docs/semantics.md, "DynamicQuantizeLinear").
QDQ_API Status dynamic_quantize_linear(const TensorView& x, const MutableTensorView& y, float* y_scale,
                                       uint8_t* y_zero_point, const ExecuteOptions& execution = {});

}  // namespace qdq
