// Benchmark buffers backed the way numpy backs large arrays on Linux: numpy asks the kernel for
// transparent huge pages (madvise MADV_HUGEPAGE) on allocations of 4 MiB or more, and on a
// machine whose THP mode is "madvise" only such buffers get 2 MiB pages. With a std::vector's
// 4 KiB pages the 16M cells here ran up to 1.5x slower than the same call from Python (TLB
// misses; Intel Xeon VM): Q float32 -> uint8 per-tensor 2.7-3.1 ms, with these 2.0-2.1 ms.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace qdq_bench {

template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;
  static constexpr std::size_t kThreshold = std::size_t{4} << 20;  // numpy's

  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kThreshold) return static_cast<T*>(::operator new(bytes));
    void* p = std::aligned_alloc(kHugePage, (bytes + kHugePage - 1) / kHugePage * kHugePage);
    if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__)
    madvise(p, bytes, MADV_HUGEPAGE);  // advice only: without it the buffer keeps 4 KiB pages
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) {
    if (n * sizeof(T) < kThreshold) {
      ::operator delete(p);
    } else {
      std::free(p);
    }
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }
};

template <class T>
using PageVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace qdq_bench
