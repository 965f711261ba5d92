// QuantizeLinear's kernels to 8-, 16- and 32-bit integers (kernels-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/kernels_quantize_integer.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/kernels-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qdq::kernels {
namespace HWY_NAMESPACE {


RunFunction SelectQuantizeToIntegers(ElementType x, ElementType out) {
  switch (out) {
    case ElementType::kUint8: return SelectQuantizeInput<IntegerOutput<8, false>>(x);
    case ElementType::kInt8: return SelectQuantizeInput<IntegerOutput<8, true>>(x);
    case ElementType::kUint16: return SelectQuantizeInput<IntegerOutput<16, false>>(x);
    case ElementType::kInt16: return SelectQuantizeInput<IntegerOutput<16, true>>(x);
    case ElementType::kInt32: return &QuantizeRun<WideIntegerOutput<true>, ElementType::kFloat32>;
    case ElementType::kUint32: return &QuantizeRun<WideIntegerOutput<false>, ElementType::kFloat32>;
    default: return nullptr;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace qdq::kernels
HWY_AFTER_NAMESPACE();
