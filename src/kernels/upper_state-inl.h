// CleanUpperStateOnReturn: the vector registers' upper halves left clean when a dispatched entry
// point returns to its caller (Highway's per-target include guard, as kernels-inl.h).
//
// The entry points (HWY_EXPORT) are compiled for AVX2 or AVX-512 and return into code compiled for
// baseline x86-64, whose SSE instructions are slowed while the upper halves of the ymm/zmm registers
// hold data (until a vzeroupper). GCC emits vzeroupper where it tracks the state, yet calls through
// the kernels still returned with it dirty. Measured on the AVX-512 Xeon, in one loop: planning a
// 64-element QuantizeLinear took 0.18 us, executing it 0.23 us, and the two one after the other
// 0.80 us; with a vzeroupper after the execute, 0.45 us (0.70 / 0.40 us on the AVX2 target; the
// SSE4 target pays nothing). Every Python call, ORT kernel and CLI step plans and executes, so the
// penalty was in every door's fixed cost.
#if defined(QDQ_KERNELS_UPPER_STATE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QDQ_KERNELS_UPPER_STATE_INL_H_
#undef QDQ_KERNELS_UPPER_STATE_INL_H_
#else
#define QDQ_KERNELS_UPPER_STATE_INL_H_
#endif

#include <hwy/highway.h>
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
#include <immintrin.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace qdq::kernels {
namespace HWY_NAMESPACE {

// Declared first in an entry point's body: its destructor runs after everything else the body
// does, on every return.
class CleanUpperStateOnReturn {
 public:
  CleanUpperStateOnReturn() = default;
  CleanUpperStateOnReturn(const CleanUpperStateOnReturn&) = delete;
  CleanUpperStateOnReturn& operator=(const CleanUpperStateOnReturn&) = delete;
  ~CleanUpperStateOnReturn() {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
    _mm256_zeroupper();
#endif
  }
};

}  // namespace HWY_NAMESPACE
}  // namespace qdq::kernels
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
