// Fake quantization's kernels: DequantizeLinear(QuantizeLinear(x)) in lanes for every (output, x) pair
// the fused path covers (kernels-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/kernels_fake_quant.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/kernels-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qdq::kernels {
namespace HWY_NAMESPACE {

template <class Output>
RunFunction SelectFakeQuantInput(ElementType x) {
  switch (x) {
    case ElementType::kFloat32: return &FakeQuantRun<Output, ElementType::kFloat32>;
    case ElementType::kFloat16: return &FakeQuantRun<Output, ElementType::kFloat16>;
    case ElementType::kBfloat16: return &FakeQuantRun<Output, ElementType::kBfloat16>;
    default: return nullptr;  // int32 x: through a code buffer
  }
}

// The in-lane fake-quant of a quantize plan: float x divided in a float precision, to the 8-, 16-,
// 4- and 2-bit integers, float8 and float4 (Quark's 32-bit and float16 / bfloat16 codes, an int32
// scale's float64 division and int32 x go through a code buffer instead).
RunFunction SelectFakeQuant(const Plan& quantize) {
  if (quantize.operation != Operation::kQuantize || quantize.precision == Precision::kFloat64) return nullptr;
  if (quantize.has_zero_point && IsWide(info(quantize.zero_point.type))) return nullptr;
  const ElementType x = quantize.x.type;
  switch (quantize.output_type) {
    case ElementType::kUint8: return SelectFakeQuantInput<IntegerOutput<8, false>>(x);
    case ElementType::kInt8: return SelectFakeQuantInput<IntegerOutput<8, true>>(x);
    case ElementType::kUint16: return SelectFakeQuantInput<IntegerOutput<16, false>>(x);
    case ElementType::kInt16: return SelectFakeQuantInput<IntegerOutput<16, true>>(x);
    case ElementType::kUint4: return SelectFakeQuantInput<IntegerOutput<4, false>>(x);
    case ElementType::kInt4: return SelectFakeQuantInput<IntegerOutput<4, true>>(x);
    case ElementType::kUint2: return SelectFakeQuantInput<IntegerOutput<2, false>>(x);
    case ElementType::kInt2: return SelectFakeQuantInput<IntegerOutput<2, true>>(x);
    case ElementType::kFloat8E4M3FN: return SelectFakeQuantInput<FloatOutput<kE4M3FN, false>>(x);
    case ElementType::kFloat8E4M3FNUZ: return SelectFakeQuantInput<FloatOutput<kE4M3FNUZ, false>>(x);
    case ElementType::kFloat8E5M2: return SelectFakeQuantInput<FloatOutput<kE5M2, false>>(x);
    case ElementType::kFloat8E5M2FNUZ: return SelectFakeQuantInput<FloatOutput<kE5M2FNUZ, false>>(x);
    case ElementType::kFloat4E2M1: return SelectFakeQuantInput<FloatOutput<kE2M1, true>>(x);
    default: return nullptr;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace qdq::kernels
HWY_AFTER_NAMESPACE();
