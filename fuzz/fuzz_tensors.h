// What the libFuzzer targets share: tensors handed over as a C caller does (exact-size heap
// buffers, at odd addresses when the input says so), element types and shapes drawn from the input,
// and the C ABI's status/message rule. Everything here is inline: each target is one program.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "qdq/qdq.h"
#include "qdq/qdq.hpp"

namespace qdq_fuzz {

using qdq::ElementType;

// Elements per tensor: several SIMD vectors and a packed tail, small enough that thousands of
// inputs a second run on every target (but for pick_short_rows_shape's rare larger ones).
inline constexpr uint64_t kMaxElements = 160;

[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "qdq fuzz finding: %s\n", what.c_str());
  std::abort();
}

// `bytes` bytes that end exactly where their heap allocation ends, starting `misalignment` bytes
// into it, so that one byte too far in either direction is an AddressSanitizer report.
class ExactBuffer {
 public:
  ExactBuffer(uint64_t bytes, unsigned misalignment)
      : base_(static_cast<unsigned char*>(std::malloc(misalignment + bytes))), bytes_(bytes) {
    if (base_ == nullptr && misalignment + bytes > 0) std::abort();
    data_ = base_ + misalignment;
  }
  ~ExactBuffer() { std::free(base_); }
  ExactBuffer(const ExactBuffer&) = delete;
  ExactBuffer& operator=(const ExactBuffer&) = delete;
  unsigned char* data() { return data_; }
  const unsigned char* data() const { return data_; }
  uint64_t size() const { return bytes_; }

 private:
  unsigned char* base_;
  unsigned char* data_ = nullptr;
  uint64_t bytes_;
};

inline constexpr int32_t kAnyType[] = {1, 2, 3, 4, 5, 6, 10, 12, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26};
inline constexpr int32_t kRealTypes[] = {1, 10, 16, 6};                           // float32, float16, bfloat16, int32
inline constexpr int32_t kScaleTypes[] = {1, 10, 16, 24, 6};                      // ... and float8e8m0
inline constexpr int32_t kCodeTypes[] = {2,  3,  4,  5,  21, 22, 25, 26,          // (u)int8/16/4/2
                                         17, 18, 19, 20, 23, 6,  12, 10, 16};  // float8/4, (u)int32, float16/bfloat16

inline int32_t pick_type(FuzzedDataProvider& in, std::span<const int32_t> likely) {
  switch (in.ConsumeIntegralInRange<int>(0, 15)) {
    case 0: return in.ConsumeIntegral<int32_t>();  // unknown codes must be refused, never indexed
    case 1: case 2: case 3: return in.PickValueInArray(kAnyType);
    default: return likely[in.ConsumeIntegralInRange<size_t>(0, likely.size() - 1)];
  }
}

inline std::span<const int32_t> either(bool first, std::span<const int32_t> a, std::span<const int32_t> b) {
  return first ? a : b;
}

inline uint64_t count_of(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d < 0 ? 0 : d);
  return n;
}

// Short rows over enough elements for the execute layer's tiled and grouped paths (tiles of
// 1,024 elements and more; periodic runs from exec::kFewestGroupedElements, 2,048, on): rows of 1
// to 9 elements under one or two leading dimensions, 2,048 to 2,600 elements in all, so that the
// scale shapes pick_scale_shape draws for them (blocked along a leading axis, broadcast over
// one, per-axis) reach those paths. Rare (pick_x_shape): such an input costs as much as many small
// ones (scripts/fuzz.sh 60 here, c_api target: 1,994 executions a second against 3,645 without).
inline std::vector<int64_t> pick_short_rows_shape(FuzzedDataProvider& in) {
  const int64_t row = in.ConsumeIntegralInRange<int64_t>(1, 9);
  const int64_t elements = in.ConsumeIntegralInRange<int64_t>(2048, 2600);
  const int64_t rows = (elements + row - 1) / row;
  // Mostly rank 3, whose middle axis is the attribute's default (axis 1): blocks along it, or
  // along the first, group the rows, and so does a scale broadcast over it.
  if (in.ConsumeIntegralInRange<int>(0, 3) == 3) return {rows, row};
  const int64_t outer = in.ConsumeIntegralInRange<int64_t>(2, 7);
  return {outer, (rows + outer - 1) / outer, row};
}

// At most kMaxElements elements; zero dims appear, as do 1s (broadcast) and odd lengths. One input
// in 64 takes pick_short_rows_shape instead.
inline std::vector<int64_t> pick_x_shape(FuzzedDataProvider& in) {
  // 63, not 0: a used-up input reads as the range's low end, and would pick it every time.
  if (in.ConsumeIntegralInRange<int>(0, 63) == 63) return pick_short_rows_shape(in);
  const int rank = in.ConsumeIntegralInRange<int>(0, 5);
  std::vector<int64_t> shape;
  uint64_t count = 1;
  for (int d = 0; d < rank; ++d) {
    int64_t dim = in.ConsumeIntegralInRange<int64_t>(0, 40);
    if (count * static_cast<uint64_t>(dim > 0 ? dim : 1) > kMaxElements) dim = 1;
    count *= static_cast<uint64_t>(dim > 0 ? dim : 1);
    shape.push_back(dim);
  }
  return shape;
}

// A scale's shape: near-valid for each granularity (off by one block sometimes), or random.
inline std::vector<int64_t> pick_scale_shape(FuzzedDataProvider& in, const std::vector<int64_t>& x, int64_t axis,
                                             int64_t block_size) {
  const int64_t rank = static_cast<int64_t>(x.size());
  const size_t a = rank == 0 ? 0 : static_cast<size_t>(((axis % rank) + rank) % rank);
  if (rank >= 2 && count_of(x) > kMaxElements && in.ConsumeIntegralInRange<int>(0, 3) != 0) {
    // A large x (pick_short_rows_shape): mostly the layouts that group or tile its rows.
    std::vector<int64_t> s = x;
    switch (in.ConsumeIntegralInRange<int>(0, 2)) {
      case 0:  // blocked along the attribute's axis (the rows, or a leading axis)
        if (block_size > 0 && block_size < (int64_t{1} << 40)) s[a] = (x[a] + block_size - 1) / block_size;
        return s;
      case 1:  // broadcast over the axis before the rows (DirectML's [M, 1, C])
        s[static_cast<size_t>(rank - 2)] = 1;
        return s;
      default:  // per-axis
        return {x[a]};
    }
  }
  switch (in.ConsumeIntegralInRange<int>(0, 6)) {
    case 0: return {};
    case 1: return {1};
    case 2: return rank ? std::vector<int64_t>{x[a]} : std::vector<int64_t>{1};
    case 3: {  // blocked
      std::vector<int64_t> s = x;
      if (rank && block_size > 0 && block_size < (int64_t{1} << 40)) {
        const int64_t d = x[a];
        s[a] = d / block_size + (d % block_size != 0) + in.ConsumeIntegralInRange<int64_t>(-1, 1);
      }
      return s;
    }
    case 4: {  // broadcast: each dim x's or 1
      std::vector<int64_t> s = x;
      for (int64_t& d : s) {
        if (in.ConsumeBool()) d = 1;
      }
      return s;
    }
    case 5: return x;
    default: {
      std::vector<int64_t> s(in.ConsumeIntegralInRange<size_t>(0, 4));
      for (int64_t& d : s) d = in.ConsumeIntegralInRange<int64_t>(-2, 9);
      return s;
    }
  }
}

// An integer attribute: mostly in [usual_low, usual_high], sometimes the default or any int64.
inline int64_t pick_attribute(FuzzedDataProvider& in, int64_t usual_low, int64_t usual_high, int64_t default_value) {
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: return in.ConsumeIntegral<int64_t>();
    case 1: case 2: return default_value;
    default: return in.ConsumeIntegralInRange<int64_t>(usual_low, usual_high);
  }
}

// One tensor as a C caller hands it over: its own shape array, an exact-size buffer filled from
// the input (the tail with a pattern when the input runs out, or past a large tensor's first 64
// bytes), and sometimes a null data pointer (legal only for zero elements).
struct CTensor {
  int32_t type = 0;
  std::vector<int64_t> shape;
  std::optional<ExactBuffer> buffer;
  bool null_data = false;

  uint64_t bytes() const {
    const auto t = qdq::element_type_from_code(type);
    return t ? qdq::storage_bytes(*t, count_of(shape)) : count_of(shape);
  }
  // Null for an absent tensor (no buffer) and for a null-data lie.
  unsigned char* data() const { return null_data || !buffer ? nullptr : const_cast<ExactBuffer&>(*buffer).data(); }
  qdq_tensor c() const {
    return {type, static_cast<int32_t>(shape.size()), shape.empty() ? nullptr : shape.data(), data()};
  }
  qdq::TensorView view() const { return {static_cast<ElementType>(type), shape, data()}; }
};

inline void make_tensor(FuzzedDataProvider& in, CTensor& t, int32_t type, std::vector<int64_t> shape) {
  t.type = type;
  t.shape = std::move(shape);
  const unsigned misalignment = in.ConsumeBool() ? in.ConsumeIntegralInRange<unsigned>(1, 7) : 0u;
  t.buffer.emplace(t.bytes(), misalignment);
  // A large tensor (pick_short_rows_shape) takes its first 64 bytes from the input and the rest
  // from the pattern: taking them all would use the input up, every choice after it would then
  // read as zero (a null data pointer, type code 0), and no large tensor would ever be run.
  const uint64_t from_input = count_of(t.shape) > kMaxElements ? std::min<uint64_t>(t.bytes(), 64) : t.bytes();
  const std::vector<uint8_t> bytes = in.ConsumeBytes<uint8_t>(from_input);
  unsigned char* p = t.buffer->data();
  if (!bytes.empty()) std::memcpy(p, bytes.data(), bytes.size());
  for (uint64_t i = bytes.size(); i < t.bytes(); ++i) p[i] = static_cast<unsigned char>(i * 37 + 11);
  t.null_data = in.ConsumeIntegralInRange<int>(0, 63) == 0;
}

// The C ABI's rule: a message exactly when a call fails.
inline void expect_message(qdq_status_code status) {
  const bool has_message = qdq_last_error()[0] != '\0';
  if ((status == QDQ_OK) == has_message) {
    finding("status " + std::to_string(status) + " with last error \"" + qdq_last_error() + "\"");
  }
}

}  // namespace qdq_fuzz
