// Output storage of qdq._qdq's arrays, shared by its source files (module.cpp, fake_quant.cpp).
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <vector>

// Storage for an output of `bytes` bytes (*storage gets its address) and the capsule that owns it,
// to be an array's base object. Buffers of 64 KiB or more come from a cache of released buffers;
// from 2 MiB aligned to 2 MiB and offered to the kernel as transparent huge pages (output_buffers.cpp).
nanobind::capsule new_storage(uint64_t bytes, uint8_t** storage);

// A new 1-D numpy uint8 array of `bytes` bytes owning such storage; *storage gets its address.
nanobind::object new_bytes(uint64_t bytes, uint8_t** storage);

// The sizes (rounded as the cache rounds them) of the released buffers it holds, oldest first (tests).
std::vector<uint64_t> cached_output_sizes();
