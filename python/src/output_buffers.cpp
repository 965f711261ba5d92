// Output storage of qdq._qdq's arrays (output_buffers.h).
#include "output_buffers.h"

#include <nanobind/ndarray.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <bit>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace nb = nanobind;

namespace {

// Output storage. Large buffers are aligned to 2 MiB and offered to the kernel as transparent huge
// pages: a fresh 64 MiB output then costs 32 page faults instead of 16,384. Fresh pages still cost
// the OS zeroing them (about as long as the kernel takes to write them at this size), so buffers of
// kCachedMinimum bytes or more released by Python are kept for reuse, as PyTorch's caching
// allocator does: a loop calling qdq.dequantize_linear(x, s) without out= then writes into warm,
// already-mapped memory. At most kCachedBuffers buffers and kCachedBytes bytes are kept, the most
// recently released ones. Below 2 MiB, sizes round up to a power of two: there malloc alone gave
// some 64K-element calls page faults on every call (glibc maps and trims blocks of these sizes as
// its thresholds move), 87-97 us against 5.4-6.6 us for the kernel (uint8 -> float32, 256 KiB out).
constexpr uint64_t kHuge = uint64_t{2} << 20;
constexpr uint64_t kCachedMinimum = uint64_t{64} << 10;
constexpr size_t kCachedBuffers = 4;
constexpr uint64_t kCachedBytes = uint64_t{512} << 20;

class OutputCache {
 public:
  OutputCache() { free_.reserve(kCachedBuffers); }  // give() must not allocate (it runs in a noexcept deleter)

  // The rounded sizes of the cached buffers, oldest first (tests).
  std::vector<uint64_t> cached_sizes() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<uint64_t> sizes;
    for (const Entry& e : free_) sizes.push_back(e.bytes);
    return sizes;
  }

  // A buffer of at least `bytes` (rounded up to a power of two below 2 MiB, else to a multiple of
  // 2 MiB), reused if one of that size is cached.
  uint8_t* take(uint64_t bytes) {
    const uint64_t rounded = bytes < kHuge ? std::bit_ceil(bytes) : (bytes + kHuge - 1) / kHuge * kHuge;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (size_t i = 0; i < free_.size(); ++i) {
        if (free_[i].bytes == rounded) {
          uint8_t* pointer = free_[i].pointer;
          held_ -= rounded;
          free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
          sizes_[pointer] = rounded;
          return pointer;
        }
      }
    }
    // Below 2 MiB a cache line's alignment (the size, a power of two, is a multiple of it).
    void* pointer = std::aligned_alloc(rounded < kHuge ? 64 : kHuge, rounded);
    if (pointer == nullptr) return nullptr;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (rounded >= kHuge) madvise(pointer, rounded, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
    std::lock_guard<std::mutex> lock(mutex_);
    sizes_[pointer] = rounded;
    return static_cast<uint8_t*>(pointer);
  }

  // Called when Python releases the array: kept, the oldest cached buffers freed to make room (a
  // loop whose sizes change keeps its current sizes cached, not the first ones it saw); a buffer
  // larger than the whole cache is freed.
  void give(void* pointer) {
    void* evicted[kCachedBuffers + 1];
    size_t evicted_count = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto found = sizes_.find(pointer);
      const uint64_t rounded = found->second;
      sizes_.erase(found);
      if (rounded > kCachedBytes) {
        evicted[evicted_count++] = pointer;
      } else {
        while (!free_.empty() && (free_.size() == kCachedBuffers || held_ + rounded > kCachedBytes)) {
          evicted[evicted_count++] = free_.front().pointer;
          held_ -= free_.front().bytes;
          free_.erase(free_.begin());
        }
        free_.push_back({static_cast<uint8_t*>(pointer), rounded});  // capacity reserved: no allocation
        held_ += rounded;
      }
    }
    for (size_t i = 0; i < evicted_count; ++i) std::free(evicted[i]);
  }

 private:
  struct Entry {
    uint8_t* pointer;
    uint64_t bytes;
  };
  std::mutex mutex_;
  std::vector<Entry> free_;
  std::unordered_map<void*, uint64_t> sizes_;  // live large buffers and their rounded sizes
  uint64_t held_ = 0;
};

// Never destroyed: a capsule released during interpreter shutdown must still find it.
OutputCache& output_cache() {
  static OutputCache* cache = new OutputCache();
  return *cache;
}

}  // namespace

nb::capsule new_storage(uint64_t bytes, uint8_t** storage) {
  const bool large = bytes >= kCachedMinimum;
  *storage = large ? output_cache().take(bytes) : static_cast<uint8_t*>(std::malloc(bytes > 0 ? bytes : 1));
  if (*storage == nullptr) throw std::bad_alloc();
  void (*release)(void*) noexcept = large ? +[](void* pointer) noexcept { output_cache().give(pointer); }
                                          : +[](void* pointer) noexcept { std::free(pointer); };
  std::unique_ptr<void, void (*)(void*) noexcept> guard(*storage, release);  // until the capsule owns it
  nb::capsule owner(*storage, release);
  guard.release();
  return owner;
}

nb::object new_bytes(uint64_t bytes, uint8_t** storage) {
  nb::capsule owner = new_storage(bytes, storage);
  size_t shape[1] = {static_cast<size_t>(bytes)};
  return nb::cast(nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>(*storage, 1, shape, owner));
}

std::vector<uint64_t> cached_output_sizes() { return output_cache().cached_sizes(); }
