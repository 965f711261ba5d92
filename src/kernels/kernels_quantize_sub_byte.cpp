// QuantizeLinear's kernels to 4- and 2-bit integers (kernels-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/kernels_quantize_sub_byte.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/kernels-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qdq::kernels {
namespace HWY_NAMESPACE {


RunFunction SelectQuantizeToSubBytes(ElementType x, ElementType out) {
  switch (out) {
    case ElementType::kUint4: return SelectQuantizeInput<IntegerOutput<4, false>>(x);
    case ElementType::kInt4: return SelectQuantizeInput<IntegerOutput<4, true>>(x);
    case ElementType::kUint2: return SelectQuantizeInput<IntegerOutput<2, false>>(x);
    case ElementType::kInt2: return SelectQuantizeInput<IntegerOutput<2, true>>(x);
    default: return nullptr;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace qdq::kernels
HWY_AFTER_NAMESPACE();
