// The lookup of per-tensor plans run by table (kernels/look_up.h).
//
// Measured at 16M float16 codes to a 64 KiB byte table, in a microbenchmark on the AVX-512 Xeon
// (one thread / two): the former scalar loop, which gathered eight results in a small array and
// copied it out, took 6-15.5 / 2.6 ms, bimodal from run to run (the array's narrow stores feeding
// one wide load stall store forwarding); results shifted into a 64-bit word 5.2-7 / 2.5 ms; an
// AVX-512 gather (vpgatherdd) 3.0 / 1.5 ms, steady. The plan's own SIMD kernel took 5.6 / 2.7 ms.
#include "kernels/look_up.h"

#include <cstring>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/look_up.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace qdq::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Results shifted into one 64-bit word per store (8, 4 or 2 of them), one element at a time at
// the ends.
template <typename XCode, typename YCode>
void LookUpByWords(const XCode* HWY_RESTRICT x, const YCode* HWY_RESTRICT table, YCode* HWY_RESTRICT y,
                   uint64_t begin, uint64_t end) {
  constexpr int kPerWord = 8 / sizeof(YCode);
  uint64_t i = begin;
  for (; i + kPerWord <= end; i += kPerWord) {
    uint64_t word = 0;
    for (int j = 0; j < kPerWord; ++j) word |= uint64_t{table[x[i + j]]} << (8 * sizeof(YCode) * j);
    std::memcpy(y + i, &word, sizeof word);
  }
  for (; i < end; ++i) y[i] = table[x[i]];
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// One 32-bit gather per vector of codes, at byte offset code * sizeof(YCode) (the word read there
// holds the result in its low bytes: little-endian), then truncated to the result's width. Only on
// AVX-512, the targets measured: gathers are slow on some AVX2 CPUs (Zen 1 measured a gather
// slower than a scalar loop, 75 against 36 us for 64K codes in cache).
template <typename XCode, typename YCode>
void LookUp(const XCode* HWY_RESTRICT x, const YCode* HWY_RESTRICT table, YCode* HWY_RESTRICT y, uint64_t begin,
            uint64_t end) {
  const hn::ScalableTag<uint32_t> du32;
  const hn::RebindToSigned<decltype(du32)> di32;
  const hn::Rebind<XCode, decltype(du32)> dx;
  const hn::Rebind<YCode, decltype(du32)> dy;
  const size_t N = hn::Lanes(du32);
  const auto* words = reinterpret_cast<const uint32_t*>(table);
  uint64_t i = begin;
  for (; i + N <= end; i += N) {
    const auto offsets = hn::ShiftLeft<sizeof(YCode) / 2>(hn::PromoteTo(du32, hn::LoadU(dx, x + i)));
    const auto results = hn::GatherOffset(du32, words, hn::BitCast(di32, offsets));
    if constexpr (sizeof(YCode) == 4) {
      hn::StoreU(results, du32, reinterpret_cast<uint32_t*>(y + i));
    } else {
      hn::StoreU(hn::TruncateTo(dy, results), dy, y + i);
    }
  }
  LookUpByWords(x, table, y, i, end);
}
#else
template <typename XCode, typename YCode>
void LookUp(const XCode* x, const YCode* table, YCode* y, uint64_t begin, uint64_t end) {
  LookUpByWords(x, table, y, begin, end);
}
#endif

template <typename XCode>
void LookUpFrom(const XCode* x, const void* table, unsigned y_bytes, void* y, uint64_t begin, uint64_t end) {
  switch (y_bytes) {
    case 1: return LookUp(x, static_cast<const uint8_t*>(table), static_cast<uint8_t*>(y), begin, end);
    case 2: return LookUp(x, static_cast<const uint16_t*>(table), static_cast<uint16_t*>(y), begin, end);
    default: return LookUp(x, static_cast<const uint32_t*>(table), static_cast<uint32_t*>(y), begin, end);
  }
}

void LookUpCodes(const void* x, unsigned x_bytes, const void* table, unsigned y_bytes, void* y, uint64_t begin,
                 uint64_t end) {
  if (x_bytes == 2) return LookUpFrom(static_cast<const uint16_t*>(x), table, y_bytes, y, begin, end);
  LookUpFrom(static_cast<const uint8_t*>(x), table, y_bytes, y, begin, end);
}

}  // namespace HWY_NAMESPACE
}  // namespace qdq::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qdq::kernels {

HWY_EXPORT(LookUpCodes);

void look_up_codes(const void* x, unsigned x_bytes, const void* table, unsigned y_bytes, void* y, uint64_t begin,
                   uint64_t end) {
  HWY_DYNAMIC_DISPATCH(LookUpCodes)(x, x_bytes, table, y_bytes, y, begin, end);
}

}  // namespace qdq::kernels
#endif  // HWY_ONCE
