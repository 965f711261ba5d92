// PrefetchForLater for each Highway target (kernels/prefetch.h has the distances). Per target, as
// the kernels are: one inline function defined outside the targets' regions compiled to no
// prefetch instruction at all in the targets' loops (GCC 12, seen in objdump). Highway's
// per-target include guard: the file is included once for every target that foreach_target.h
// compiles.
#if defined(QDQ_KERNELS_PREFETCH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QDQ_KERNELS_PREFETCH_INL_H_
#undef QDQ_KERNELS_PREFETCH_INL_H_
#else
#define QDQ_KERNELS_PREFETCH_INL_H_
#endif

#include <hwy/highway.h>

#include "kernels/prefetch.h"

#if HWY_ARCH_X86
#include <xmmintrin.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace qdq::kernels {
namespace HWY_NAMESPACE {

// Asks for the cache line holding p toward the L2 cache, without waiting for it (a prefetch of
// an unmapped address is dropped, never a fault).
HWY_INLINE void PrefetchForLater(const void* p) {
#if HWY_ARCH_X86
  _mm_prefetch(static_cast<const char*>(p), _MM_HINT_T1);
#else
  hwy::Prefetch(p);
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace qdq::kernels
HWY_AFTER_NAMESPACE();

#endif  // QDQ_KERNELS_PREFETCH_INL_H_
