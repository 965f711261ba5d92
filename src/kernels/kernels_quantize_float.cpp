// QuantizeLinear's kernels to float8, float4, float16 and bfloat16 (kernels-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/kernels_quantize_float.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/kernels-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qdq::kernels {
namespace HWY_NAMESPACE {


RunFunction SelectQuantizeToFloats(ElementType x, ElementType out) {
  switch (out) {
    case ElementType::kFloat8E4M3FN: return SelectQuantizeInput<FloatOutput<kE4M3FN, false>>(x);
    case ElementType::kFloat8E4M3FNUZ: return SelectQuantizeInput<FloatOutput<kE4M3FNUZ, false>>(x);
    case ElementType::kFloat8E5M2: return SelectQuantizeInput<FloatOutput<kE5M2, false>>(x);
    case ElementType::kFloat8E5M2FNUZ: return SelectQuantizeInput<FloatOutput<kE5M2FNUZ, false>>(x);
    case ElementType::kFloat4E2M1: return SelectQuantizeInput<FloatOutput<kE2M1, true>>(x);
    case ElementType::kFloat16: return &QuantizeRun<FloatOutput<kFloat16Format, true>, ElementType::kFloat32>;
    case ElementType::kBfloat16: return &QuantizeRun<FloatOutput<kBfloat16Format, true>, ElementType::kFloat32>;
    default: return nullptr;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace qdq::kernels
HWY_AFTER_NAMESPACE();
