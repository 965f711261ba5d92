// DequantizeLinear's kernels: every (x, output) run the kernels cover (kernels-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/kernels_dequantize.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/kernels-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qdq::kernels {
namespace HWY_NAMESPACE {

template <class Input>
RunFunction SelectDequantizeOutput(ElementType out) {
  switch (out) {
    case ElementType::kFloat16: return &DequantizeRun<Input, ElementType::kFloat16>;
    case ElementType::kBfloat16: return &DequantizeRun<Input, ElementType::kBfloat16>;
    default: return &DequantizeRun<Input, ElementType::kFloat32>;
  }
}

RunFunction SelectDequantize(ElementType x, ElementType out) {
  switch (x) {
    case ElementType::kUint8: return SelectDequantizeOutput<IntegerInput<8, false>>(out);
    case ElementType::kInt8: return SelectDequantizeOutput<IntegerInput<8, true>>(out);
    case ElementType::kUint16: return SelectDequantizeOutput<IntegerInput<16, false>>(out);
    case ElementType::kInt16: return SelectDequantizeOutput<IntegerInput<16, true>>(out);
    case ElementType::kUint4: return SelectDequantizeOutput<IntegerInput<4, false>>(out);
    case ElementType::kInt4: return SelectDequantizeOutput<IntegerInput<4, true>>(out);
    case ElementType::kUint2: return SelectDequantizeOutput<IntegerInput<2, false>>(out);
    case ElementType::kInt2: return SelectDequantizeOutput<IntegerInput<2, true>>(out);
    case ElementType::kFloat8E4M3FN: return SelectDequantizeOutput<FloatInput<kE4M3FN>>(out);
    case ElementType::kFloat8E4M3FNUZ: return SelectDequantizeOutput<FloatInput<kE4M3FNUZ>>(out);
    case ElementType::kFloat8E5M2: return SelectDequantizeOutput<FloatInput<kE5M2>>(out);
    case ElementType::kFloat8E5M2FNUZ: return SelectDequantizeOutput<FloatInput<kE5M2FNUZ>>(out);
    case ElementType::kFloat4E2M1: return SelectDequantizeOutput<FloatInput<kE2M1>>(out);
    case ElementType::kInt32: return SelectDequantizeOutput<WordInput<true>>(out);
    case ElementType::kUint32: return SelectDequantizeOutput<WordInput<false>>(out);
    case ElementType::kFloat16: return SelectDequantizeOutput<HalfFloatInput<ElementType::kFloat16>>(out);
    case ElementType::kBfloat16: return SelectDequantizeOutput<HalfFloatInput<ElementType::kBfloat16>>(out);
    default: return nullptr;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace qdq::kernels
HWY_AFTER_NAMESPACE();
