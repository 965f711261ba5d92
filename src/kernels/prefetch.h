// How the passes over large tensors meet memory: how far ahead of the loads x's cache lines are
// asked for (prefetch-inl.h's PrefetchForLater), and from what size outputs bypass the caches.
// Shared by the quantize loops (kernels-inl.h), the reductions (reduce-inl.h), dynamic
// quantization (dynamic.cpp) and the lookups (look_up.cpp, execute/by_table.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace qdq::kernels {

// How far ahead of its loads a pass over a large x asks for x's lines. The hardware prefetcher
// alone runs too short a distance ahead of loops that do arithmetic between their loads, so the
// loads wait on memory (or on this machine's L3) in turn with the arithmetic.
// Measured (16M float32, 2 threads, Intel Xeon with AVX-512; docs/performance-history.md, session 24):
// Q float32 -> int8 per-tensor 2.5 -> 1.6 ms, the min/max reduction 1.3 -> 1.15 ms; 4 to 32 KiB
// ahead measured alike.
inline constexpr size_t kPrefetchAheadBytes = 8192;

// Stretches of x shorter than this are left to the hardware prefetcher (in cache already, or too
// short for the distance to matter).
inline constexpr uint64_t kPrefetchedStretchBytes = uint64_t{256} << 10;

// Outputs much larger than the caches are written with non-temporal stores: the lines go to
// memory without first being read into the cache (a normal store's read-for-ownership), which
// saves a read of every output byte, as memcpy does for large copies. Smaller outputs stay
// cached for whatever consumes them next.
inline constexpr uint64_t kStreamingOutputBytes = uint64_t{16} << 20;

}  // namespace qdq::kernels
