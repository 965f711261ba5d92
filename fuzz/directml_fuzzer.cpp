// libFuzzer target over the C ABI's DirectML descriptions: qdq_directml_quantize_linear,
// qdq_directml_dequantize_linear and qdq_dml_calc_buffer_tensor_size.
//
// Each input decodes into one call: a feature level, four DML_BUFFER_TENSOR_DESCs (sizes, strides
// that are packed, padded, transposed, broadcast by 0, or random, TotalTensorSizeInBytes given or
// implied) and the bytes of the inputs. Every buffer is a heap allocation of exactly the bytes its
// description says it has, and every sizes and strides array is exactly DimensionCount long, so
// AddressSanitizer reports a read or write one byte or one entry past them. Oracles:
//   - a message exactly when the call fails, and a failed call writes no byte of the output buffer;
//   - an accepted description is well formed by this file's own reading of DirectML's rules: equal
//     sizes of 1 to 2^32 - 1, strides of one entry per dimension and below 2^32, buffers at least
//     the size this file computes, each output element at its own location; and a description
//     built valid at DML_FEATURE_LEVEL_6_2 from the operator's 6_2 table is accepted;
//   - an accepted call writes, at each output element's strided location, what the numpy-style
//     qdq::plan_elementwise_* door computes on the reference path from the inputs gathered through
//     their strides, and leaves every other byte of the output buffer as it was;
//   - the same plan on every SIMD target this CPU supports writes the same buffer;
//   - qdq_dml_calc_buffer_tensor_size equals this file's transcription of DMLCalcBufferTensorSize
//     (0, with a message, for what DirectML cannot describe).
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <limits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fuzz_tensors.h"
#include "kernels/kernels.h"
#include "qdq/directml.hpp"
#include "qdq/qdq.h"
#include "qdq/qdq.hpp"

namespace {

using namespace qdq_fuzz;

constexpr uint64_t kMaxUint32 = 0xFFFF'FFFFu;
// The most bytes one input or output buffer may take here; descriptions that would need more get
// packed strides instead (a valid description may address 2^32 elements).
constexpr uint64_t kMaxBufferBytes = uint64_t{1} << 20;

constexpr int32_t kFloat32 = 1, kUint8 = 2, kInt8 = 3, kUint16 = 4, kInt16 = 5, kInt32 = 6, kFloat16 = 10,
                  kUint32 = 12;
constexpr int32_t kDmlTypes[] = {kFloat32, kFloat16, kInt32, kInt16, kInt8, kUint32, kUint16, kUint8};
constexpr int32_t kDmlIntegers[] = {kInt32, kInt16, kInt8, kUint32, kUint16, kUint8};
constexpr int32_t kLevels[] = {0x1000, 0x2000, 0x2100, 0x3000, 0x3100, 0x4000, 0x4100, 0x5000,
                               0x5100, 0x5200, 0x6000, 0x6100, 0x6200, 0x6300, 0x6400};

enum Operation : int { kQuantize, kDequantize, kCalcSize };

// A description as a C caller builds it: the arrays on the heap, exactly dimension_count long.
struct Desc {
  int32_t type = 0;
  int32_t dimension_count = 0;
  std::vector<int64_t> sizes;
  std::optional<std::vector<int64_t>> strides;  // nullopt: NULL (packed)
  uint64_t total_bytes = 0;                     // TotalTensorSizeInBytes as given
  std::unique_ptr<int64_t[]> sizes_array, strides_array;
  std::optional<ExactBuffer> buffer;  // inputs: the data, output: the output buffer
  bool null_data = false;             // inputs: pass NULL; the output: pass its buffer as data

  qdq_dml_tensor_desc c() {
    sizes_array.reset(new int64_t[std::max<size_t>(sizes.size(), 1)]);
    std::copy(sizes.begin(), sizes.end(), sizes_array.get());
    if (strides) {
      strides_array.reset(new int64_t[std::max<size_t>(strides->size(), 1)]);
      std::copy(strides->begin(), strides->end(), strides_array.get());
    }
    return {type, dimension_count, sizes.empty() ? nullptr : sizes_array.get(),
            strides ? strides_array.get() : nullptr, total_bytes, nullptr};
  }
};

uint64_t element_bytes_of(int32_t type, uint64_t count) {
  const auto t = qdq::element_type_from_code(type);
  return t ? qdq::storage_bytes(*t, count) : 0;
}

// DMLCalcBufferTensorSize as DirectML's documentation gives it, in 128-bit arithmetic: (1 + the
// largest element offset) elements, in bytes, rounded up to 4; 0 for an unknown type, strides of
// another count, a size outside 1..2^32-1, a stride outside 0..2^32-1, or a buffer that would hold
// 2^32 - 1 elements or more.
uint64_t calc_size(int32_t type, const std::vector<int64_t>& sizes, const std::optional<std::vector<int64_t>>& strides) {
  if (!qdq::element_type_from_code(type)) return 0;
  if (strides && strides->size() != sizes.size()) return 0;
  unsigned __int128 last = 0, count = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] < 1 || static_cast<uint64_t>(sizes[d]) > kMaxUint32) return 0;
    const int64_t stride = strides ? (*strides)[d] : static_cast<int64_t>(std::min<unsigned __int128>(count, ~0ull));
    if (stride < 0 || static_cast<uint64_t>(stride) > kMaxUint32) return 0;
    last += static_cast<unsigned __int128>(sizes[d] - 1) * static_cast<uint64_t>(stride);
    count *= static_cast<uint64_t>(sizes[d]);
  }
  if (last >= kMaxUint32 || count > kMaxUint32) return 0;
  const uint64_t bytes = element_bytes_of(type, static_cast<uint64_t>(last) + 1);
  return (bytes + 3) / 4 * 4;
}

// a * b + c, wrapping (qdq_dml_calc_buffer_tensor_size's sizes are any int64; the wrapped strides
// are only ever handed to the call under test).
int64_t wrapped(int64_t a, int64_t b, int64_t c = 0) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b) + static_cast<uint64_t>(c));
}

std::vector<int64_t> packed_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t stride = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    strides[d] = stride;
    stride = wrapped(stride, sizes[d]);
  }
  return strides;
}

// Strides for `sizes`: NULL, packed, padded rows, a transposition, 0 on some dimensions (how a scale
// or zero point broadcasts; never for the output when `distinct`), or random, sometimes invalid.
std::optional<std::vector<int64_t>> pick_strides(FuzzedDataProvider& in, const std::vector<int64_t>& sizes,
                                                 bool distinct) {
  const size_t rank = sizes.size();
  switch (in.ConsumeIntegralInRange<int>(0, 10)) {
    case 0: case 1: case 2: return std::nullopt;
    case 3: return packed_strides(sizes);
    case 4: {  // padded: each dimension's pitch past the packed one
      std::vector<int64_t> strides(rank);
      int64_t stride = 1;
      for (size_t d = rank; d-- > 0;) {
        strides[d] = stride;
        stride = wrapped(stride, sizes[d], in.ConsumeIntegralInRange<int64_t>(0, 3));
      }
      return strides;
    }
    case 5: {  // transposed: packed in a permuted dimension order
      std::vector<size_t> order(rank);
      std::iota(order.begin(), order.end(), size_t{0});
      for (size_t i = rank; i > 1; --i) std::swap(order[i - 1], order[in.ConsumeIntegralInRange<size_t>(0, i - 1)]);
      std::vector<int64_t> strides(rank);
      int64_t stride = 1;
      for (size_t d : order) {
        strides[d] = stride;
        stride = wrapped(stride, sizes[d]);
      }
      return strides;
    }
    case 6: case 7: case 8: {  // broadcast: 0 on some dimensions, packed over the others
      std::vector<int64_t> strides(rank);
      int64_t stride = 1;
      for (size_t d = rank; d-- > 0;) {
        if (!distinct && in.ConsumeBool()) {
          strides[d] = 0;
        } else {
          strides[d] = stride;
          stride = wrapped(stride, sizes[d]);
        }
      }
      return strides;
    }
    case 9: {  // random small strides (overlapping outputs among them)
      std::vector<int64_t> strides(rank);
      for (int64_t& s : strides) s = in.ConsumeIntegralInRange<int64_t>(0, 9);
      return strides;
    }
    default: {  // out of range or huge
      std::vector<int64_t> strides = packed_strides(sizes);
      if (rank > 0) {
        const int64_t values[] = {-1, int64_t{1} << 31, int64_t{kMaxUint32}, int64_t{kMaxUint32} + 1,
                                  std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
        strides[in.ConsumeIntegralInRange<size_t>(0, rank - 1)] = in.PickValueInArray(values);
      }
      return strides;
    }
  }
}

// TotalTensorSizeInBytes: mostly 0 (implied), else the implied size, more, less, or not a multiple of 4.
uint64_t pick_total(FuzzedDataProvider& in, uint64_t implied) {
  switch (in.ConsumeIntegralInRange<int>(0, 9)) {
    case 0: case 1: return implied;
    case 2: return implied + 4 * in.ConsumeIntegralInRange<uint64_t>(1, 8);
    case 3: return implied > 0 ? implied - in.ConsumeIntegralInRange<uint64_t>(1, std::min<uint64_t>(implied, 8)) : 1;
    case 4: return implied + in.ConsumeIntegralInRange<uint64_t>(1, 3);
    default: return 0;
  }
}

// The bytes a caller's buffer for `d` holds: TotalTensorSizeInBytes, or the implied size when 0.
uint64_t buffer_bytes(const Desc& d) {
  return d.total_bytes != 0 ? d.total_bytes : calc_size(d.type, d.sizes, d.strides);
}

std::vector<int64_t> effective_strides(const Desc& d) { return d.strides ? *d.strides : packed_strides(d.sizes); }

// Element `index` (row-major over sizes) at its strided offset, in elements.
uint64_t offset_of(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, uint64_t index) {
  uint64_t offset = 0;
  for (size_t d = sizes.size(); d-- > 0;) {
    const uint64_t size = static_cast<uint64_t>(sizes[d]);
    offset += (index % size) * static_cast<uint64_t>(strides[d]);
    index /= size;
  }
  return offset;
}

// Whether this file, reading DirectML's rules on its own, takes the description as well formed
// (the operator's type tables aside).
bool well_formed(Desc* const* tensors, size_t count, const Desc& output) {
  const Desc& input = *tensors[0];
  if (input.sizes.empty() || input.sizes.size() > 8) return false;
  for (size_t i = 0; i < count; ++i) {
    const Desc& t = *tensors[i];
    if (t.sizes != input.sizes) return false;
    if (t.strides && t.strides->size() != t.sizes.size()) return false;
    const uint64_t implied = calc_size(t.type, t.sizes, t.strides);
    if (implied == 0) return false;
    if (t.total_bytes != 0 && (t.total_bytes < implied || t.total_bytes % 4 != 0)) return false;
  }
  // Every output element at its own location.
  const std::vector<int64_t> strides = effective_strides(output);
  const uint64_t elements = count_of(output.sizes);
  std::set<uint64_t> seen;
  for (uint64_t i = 0; i < elements; ++i) {
    if (!seen.insert(offset_of(output.sizes, strides, i)).second) return false;
  }
  return true;
}

// Desc's elements gathered through its strides into a packed row-major copy.
std::vector<unsigned char> gathered(const Desc& d) {
  const uint64_t elements = count_of(d.sizes);
  const uint64_t width = element_bytes_of(d.type, 1);
  std::vector<unsigned char> packed(elements * width);
  const std::vector<int64_t> strides = effective_strides(d);
  for (uint64_t i = 0; i < elements; ++i) {
    std::memcpy(packed.data() + i * width, d.buffer->data() + offset_of(d.sizes, strides, i) * width, width);
  }
  return packed;
}

void make_buffer(FuzzedDataProvider& in, Desc& d) {
  const uint64_t bytes = buffer_bytes(d);
  d.buffer.emplace(bytes, in.ConsumeBool() ? in.ConsumeIntegralInRange<unsigned>(1, 7) : 0u);
  const std::vector<uint8_t> data = in.ConsumeBytes<uint8_t>(bytes);
  unsigned char* p = d.buffer->data();
  if (!data.empty()) std::memcpy(p, data.data(), data.size());
  for (uint64_t i = data.size(); i < bytes; ++i) p[i] = static_cast<unsigned char>(i * 53 + 7);
}

int32_t pick_dml_type(FuzzedDataProvider& in, std::span<const int32_t> likely) {
  return in.ConsumeIntegralInRange<int>(0, 7) == 0 ? in.PickValueInArray(kDmlTypes) : pick_type(in, likely);
}

void fuzz_calc_size(FuzzedDataProvider& in) {
  Desc d;
  d.type = pick_type(in, kDmlTypes);
  const int rank = in.ConsumeIntegralInRange<int>(0, 10);
  for (int i = 0; i < rank; ++i) {
    switch (in.ConsumeIntegralInRange<int>(0, 7)) {
      case 0: d.sizes.push_back(in.ConsumeIntegral<int64_t>()); break;
      case 1: d.sizes.push_back(in.ConsumeIntegralInRange<int64_t>(0, int64_t{1} << 33)); break;
      default: d.sizes.push_back(in.ConsumeIntegralInRange<int64_t>(1, 9)); break;
    }
  }
  d.dimension_count = rank;
  if (in.ConsumeBool()) d.strides = pick_strides(in, d.sizes, false);
  // A count that cannot be an array's length (negative, or past the C ABI's 64 dimensions) must be
  // refused from the count alone; AddressSanitizer reports a read of the shorter arrays.
  if (in.ConsumeIntegralInRange<int>(0, 15) == 0) {
    d.dimension_count = in.ConsumeBool() ? in.ConsumeIntegralInRange<int32_t>(std::numeric_limits<int32_t>::min(), -1)
                                         : in.ConsumeIntegralInRange<int32_t>(65, std::numeric_limits<int32_t>::max());
  }
  qdq_dml_tensor_desc c = d.c();
  const uint64_t bytes = qdq_dml_calc_buffer_tensor_size(&c);
  const bool has_message = qdq_last_error()[0] != '\0';
  if ((bytes == 0) != has_message) {
    finding("calc_buffer_tensor_size returned " + std::to_string(bytes) + " with last error \"" + qdq_last_error() +
            "\"");
  }
  if (d.dimension_count != rank) {
    if (bytes != 0) finding("calc_buffer_tensor_size accepted DimensionCount " + std::to_string(d.dimension_count));
    return;
  }
  const uint64_t expected = d.sizes.size() > 8 ? 0 : calc_size(d.type, d.sizes, d.strides);
  if (bytes != expected) {
    finding("calc_buffer_tensor_size gave " + std::to_string(bytes) + ", expected " + std::to_string(expected));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const int operation = in.ConsumeIntegralInRange<int>(0, 5) == 0 ? kCalcSize : in.ConsumeIntegralInRange<int>(0, 1);
  if (operation == kCalcSize) {
    fuzz_calc_size(in);
    return 0;
  }
  const bool quantize = operation == kQuantize;

  // The level: mostly 6_2, the one whose table the valid descriptions are built from.
  int32_t level = QDQ_DML_FEATURE_LEVEL_DEFAULT;
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: level = in.ConsumeIntegral<int32_t>(); break;
    case 1: case 2: level = in.PickValueInArray(kLevels); break;
    default: break;
  }

  // Sizes: one shape for all four, mostly 1 to 5 dimensions (sometimes 0 to 9), at most
  // kMaxElements elements.
  std::vector<int64_t> sizes;
  {
    const int rank = in.ConsumeIntegralInRange<int>(0, 15) == 0 ? in.ConsumeIntegralInRange<int>(0, 9)
                                                                : in.ConsumeIntegralInRange<int>(1, 5);
    uint64_t count = 1;
    for (int d = 0; d < rank; ++d) {
      int64_t dim = in.ConsumeIntegralInRange<int64_t>(1, 24);
      if (count * static_cast<uint64_t>(dim) > kMaxElements) dim = 1;
      count *= static_cast<uint64_t>(dim);
      sizes.push_back(dim);
    }
  }

  // Types from the 6_2 table (ScaleTensor FLOAT32 for an INT32 input, else the input's type).
  Desc input, scale, zero_point, output;
  const bool has_zero_point = in.ConsumeIntegralInRange<int>(0, 4) != 0;
  if (quantize) {
    input.type = in.PickValueInArray({kFloat32, kFloat16, kInt32});
    scale.type = input.type == kInt32 ? kFloat32 : input.type;
    output.type = in.PickValueInArray({kInt8, kUint8});
    zero_point.type = output.type;
  } else {
    input.type = in.PickValueInArray(kDmlIntegers);
    zero_point.type = input.type;
    scale.type = in.PickValueInArray({kFloat32, kFloat16});
    output.type = scale.type;
  }
  Desc* const tensors[] = {&input, &scale, &zero_point, &output};
  const size_t count = has_zero_point ? 4 : 3;
  Desc* const present[] = {&input, &scale, has_zero_point ? &zero_point : &output, &output};
  for (Desc* t : tensors) {
    t->sizes = sizes;
    t->dimension_count = static_cast<int32_t>(sizes.size());
  }
  bool built_valid = level == QDQ_DML_FEATURE_LEVEL_DEFAULT && !sizes.empty() && sizes.size() <= 8;
  // Each tensor's strides and total size; then, sometimes, one thing made wrong.
  for (Desc* t : tensors) {
    t->strides = pick_strides(in, t->sizes, t == &output);
    if (calc_size(t->type, t->sizes, t->strides) > kMaxBufferBytes) t->strides = std::nullopt;
    t->total_bytes = pick_total(in, calc_size(t->type, t->sizes, t->strides));
  }
  bool input_null = false, output_data_null = false;
  switch (in.ConsumeIntegralInRange<int>(0, 11)) {
    case 0: tensors[in.ConsumeIntegralInRange<int>(0, 3)]->type = pick_dml_type(in, kAnyType); break;
    case 1: {  // one tensor's sizes differ
      Desc* t = tensors[in.ConsumeIntegralInRange<int>(1, 3)];
      if (!t->sizes.empty()) t->sizes[in.ConsumeIntegralInRange<size_t>(0, t->sizes.size() - 1)] += 1;
      if (calc_size(t->type, t->sizes, t->strides) > kMaxBufferBytes) t->strides = std::nullopt;
      break;
    }
    case 2: input_null = true; break;
    case 3: output_data_null = true; break;
    case 4: output.null_data = true; break;  // the output's description carries a data pointer
    default: break;
  }
  // A description DirectML cannot size (a stride out of range, say) gets the buffer its
  // TotalTensorSizeInBytes declares, often none: it must be refused before any element is read.
  for (size_t i = 0; i < count; ++i) {
    if (buffer_bytes(*present[i]) > kMaxBufferBytes + 64) return 0;
  }
  for (size_t i = 0; i < count; ++i) make_buffer(in, *present[i]);

  // What this file expects of the call.
  const bool formed = well_formed(present, count, output);
  bool types_valid = true;  // against the 6_2 table the types were drawn from
  if (quantize) {
    types_valid = (input.type == kFloat32 || input.type == kFloat16 || input.type == kInt32) &&
                  scale.type == (input.type == kInt32 ? kFloat32 : input.type) &&
                  (output.type == kInt8 || output.type == kUint8) && (!has_zero_point || zero_point.type == output.type);
  } else {
    types_valid = std::find(std::begin(kDmlIntegers), std::end(kDmlIntegers), input.type) != std::end(kDmlIntegers) &&
                  (scale.type == kFloat32 || scale.type == kFloat16) && output.type == scale.type &&
                  (!has_zero_point || zero_point.type == input.type);
  }
  built_valid = built_valid && formed && types_valid && !input_null && !output_data_null && !output.null_data;

  qdq_dml_tensor_desc c_input = input.c(), c_scale = scale.c(), c_zero_point = zero_point.c(), c_output = output.c();
  c_input.data = input_null ? nullptr : input.buffer->data();
  c_scale.data = scale.buffer->data();
  if (has_zero_point) c_zero_point.data = zero_point.buffer->data();
  if (output.null_data) c_output.data = output.buffer->data();
  const uint64_t output_bytes = output.buffer->size();
  const std::vector<unsigned char> output_before(output.buffer->data(), output.buffer->data() + output_bytes);
  void* output_data = output_data_null ? nullptr : output.buffer->data();
  const qdq_status_code status =
      quantize ? qdq_directml_quantize_linear(&c_input, &c_scale, has_zero_point ? &c_zero_point : nullptr, &c_output,
                                              level, output_data)
               : qdq_directml_dequantize_linear(&c_input, &c_scale, has_zero_point ? &c_zero_point : nullptr,
                                                &c_output, level, output_data);
  expect_message(status);
  if (status != QDQ_OK) {
    if (output_bytes > 0 && std::memcmp(output_before.data(), output.buffer->data(), output_bytes) != 0) {
      finding("the output buffer written by a failed call");
    }
    if (built_valid) finding(std::string("a description valid at 6_2 refused: ") + qdq_last_error());
    return 0;
  }
  if (!formed) finding("a malformed description accepted");
  if (input_null || output_data_null || output.null_data) finding("a null input, null output_data or an output data pointer accepted");

  // The expected values: the numpy-style door over the inputs gathered through their strides.
  const std::vector<unsigned char> x = gathered(input), s = gathered(scale);
  const std::vector<unsigned char> zp = has_zero_point ? gathered(zero_point) : std::vector<unsigned char>{};
  const auto type_of = [](int32_t code) { return static_cast<qdq::ElementType>(code); };
  const qdq::TensorView x_view{type_of(input.type), sizes, x.data()}, s_view{type_of(scale.type), sizes, s.data()},
      zp_view{type_of(zero_point.type), sizes, zp.data()};
  const qdq::Result<qdq::Plan> expected_plan =
      quantize ? qdq::plan_elementwise_quantize_linear(x_view, s_view, has_zero_point ? &zp_view : nullptr,
                                                       type_of(output.type))
               : qdq::plan_elementwise_dequantize_linear(x_view, s_view, has_zero_point ? &zp_view : nullptr,
                                                         type_of(output.type));
  if (!expected_plan.ok()) finding("the elementwise door refuses what DirectML's accepted: " +
                                   expected_plan.status().message());
  const uint64_t elements = count_of(sizes);
  const uint64_t width = element_bytes_of(output.type, 1);
  std::vector<unsigned char> expected_values(elements * width);
  qdq::ExecuteOptions reference;
  reference.path = qdq::ExecutionPath::kReference;
  if (!qdq::execute(expected_plan.value(), {type_of(output.type), sizes, expected_values.data()}, reference).ok()) {
    finding("the reference path failed");
  }
  std::vector<unsigned char> expected = output_before;
  const std::vector<int64_t> output_strides = effective_strides(output);
  for (uint64_t i = 0; i < elements; ++i) {
    std::memcpy(expected.data() + offset_of(sizes, output_strides, i) * width, expected_values.data() + i * width,
                width);
  }
  if (std::memcmp(expected.data(), output.buffer->data(), output_bytes) != 0) {
    uint64_t at = 0;
    while (expected[at] == output.buffer->data()[at]) ++at;
    finding("the output buffer differs from the gathered reference at byte " + std::to_string(at) + " of " +
            std::to_string(output_bytes));
  }

  // The same description on every SIMD target.
  qdq::DmlTensorDesc d_input{type_of(input.type), input.sizes, input.strides ? std::span<const int64_t>(*input.strides)
                                                                             : std::span<const int64_t>{},
                             input.total_bytes, input.buffer->data()};
  qdq::DmlTensorDesc d_scale{type_of(scale.type), scale.sizes,
                             scale.strides ? std::span<const int64_t>(*scale.strides) : std::span<const int64_t>{},
                             scale.total_bytes, scale.buffer->data()};
  qdq::DmlTensorDesc d_zero_point{type_of(zero_point.type), zero_point.sizes,
                                  zero_point.strides ? std::span<const int64_t>(*zero_point.strides)
                                                     : std::span<const int64_t>{},
                                  zero_point.total_bytes, has_zero_point ? zero_point.buffer->data() : nullptr};
  qdq::DmlTensorDesc d_output{type_of(output.type), output.sizes,
                              output.strides ? std::span<const int64_t>(*output.strides) : std::span<const int64_t>{},
                              output.total_bytes, nullptr};
  const auto dml_level = static_cast<qdq::DmlFeatureLevel>(level);
  const qdq::Result<qdq::Plan> plan =
      quantize ? qdq::plan_directml_quantize_linear(d_input, d_scale, has_zero_point ? &d_zero_point : nullptr,
                                                    d_output, dml_level)
               : qdq::plan_directml_dequantize_linear(d_input, d_scale, has_zero_point ? &d_zero_point : nullptr,
                                                      d_output, dml_level);
  if (!plan.ok()) finding("the C++ planner refuses what the C ABI accepted: " + plan.status().message());
  static const std::vector<int64_t> targets = qdq::kernels::supported_targets();
  for (const int64_t target : targets) {
    qdq::kernels::force_target(target);
    ExactBuffer target_output(output_bytes, static_cast<unsigned>(target & 3));
    std::memcpy(target_output.data(), output_before.data(), output_bytes);
    if (!qdq::execute(plan.value(), {type_of(output.type), sizes, target_output.data()}).ok()) {
      finding("execute failed on target " + qdq::kernels::target_name(target));
    }
    if (std::memcmp(target_output.data(), output.buffer->data(), output_bytes) != 0) {
      finding("target " + qdq::kernels::target_name(target) + " writes another output buffer");
    }
  }
  if (!targets.empty()) qdq::kernels::force_target(targets.front());
  return 0;
}
