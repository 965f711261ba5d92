// Per-tensor plans over an x of few codes, run as a table: every code x can hold goes through the
// SIMD kernel once, and each element then looks its result up. With one scale and one zero point
// an element's result depends on its own code only, so the table holds exactly what the kernel
// writes for it: the lookup is bit-identical by construction. It pays where the kernel does more
// per element than a load and a store: QuantizeLinear from float16 and bfloat16 (a divide and a
// rounding to x's precision per element, 65,536 codes) and DequantizeLinear from float8 to 16-bit
// floats (a decode per element, 256 codes).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "execute/by_table.h"
#include "execute/execute.h"
#include "execute/runs.h"
#include "kernels/kernels.h"

namespace qdq::exec {
namespace {

// A table of 2^16 entries is built from 65,536 kernel elements; below 16 times that the build
// would be a noticeable share of the call.
constexpr uint64_t kMinElementsPerTableEntry = 16;

// One scale and one zero point for every element: no layout dimension indexes either. Read from
// the layout, which the plan owns; the views' shapes are the caller's and may be gone by now.
bool one_scale_and_zero_point(const Layout& layout) {
  for (int d = 0; d < layout.rank; ++d) {
    if (layout.scale_strides[d] != 0 || layout.zero_point_strides[d] != 0) return false;
  }
  return true;
}

// Bytes one output element takes in y (sub-byte types one code per byte), 0 when y packs codes
// below a byte (a lookup would have to pack them).
unsigned output_bytes(ElementType type, SubByteLayout layout) {
  const ElementTypeInfo& t = info(type);
  if (t.is_packed()) return layout == SubByteLayout::kOneCodePerByte ? 1u : 0u;
  return static_cast<unsigned>(t.bits / 8);
}

// The number of x codes when the plan runs by table, else 0.
uint64_t table_entries(const Plan& plan, const MutableTensorView& y) {
  if (!plan.x_strides.empty() || !plan.y_strides.empty()) return 0;
  if (!one_scale_and_zero_point(plan.layout)) return 0;
  if (output_bytes(plan.output_type, y.layout) == 0) return 0;
  uint64_t entries = 0;
  const ElementTypeInfo& x = info(plan.x.type);
  if (plan.operation == Operation::kQuantize) {
    const bool byte_integer_codes = info(plan.output_type).is_integer() && output_bytes(plan.output_type, y.layout) == 1;
    if ((plan.x.type == ElementType::kFloat16 || plan.x.type == ElementType::kBfloat16) &&
        !(byte_integer_codes && kernels::byte_codes_beat_table())) {
      entries = uint64_t{1} << 16;
    }
  } else if (x.bits == 8 && plan.output_type != ElementType::kFloat32 &&
             (x.is_float() || plan.output_type == ElementType::kBfloat16)) {
    // float8 codes (a decode each) and 8-bit integers to bfloat16 (a rounding on the bits each).
    // float32 outputs stay in the kernel, which streams large outputs past the cache and so runs
    // as fast as the lookup (float8e4m3fn to float32, 16M: 6.9-7.7 ms against 8.0); 8-bit
    // integers to float16 run at memory speed there already.
    entries = 256;
  }
  return plan.element_count >= kMinElementsPerTableEntry * entries ? entries : 0;
}

// Eight elements a step, read and written as whole words: one element at a time is bound by its
// load and store count (52 against 36 us for 64K float16 codes to bytes, in cache).
template <typename XCode, typename YCode>
void look_up(const XCode* x, const YCode* table, YCode* y, uint64_t begin, uint64_t end) {
  uint64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    XCode codes[8];
    std::memcpy(codes, x + i, sizeof codes);
    YCode results[8];
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) results[j] = table[codes[j]];
    std::memcpy(y + i, results, sizeof results);
  }
  for (; i < end; ++i) y[i] = table[x[i]];
}

struct Lookup {
  const void* x;
  const void* table;
  void* y;
  unsigned x_bytes, y_bytes;
};

template <typename XCode>
void look_up_range(const Lookup& l, uint64_t begin, uint64_t end) {
  const auto* x = static_cast<const XCode*>(l.x);
  switch (l.y_bytes) {
    case 1: look_up(x, static_cast<const uint8_t*>(l.table), static_cast<uint8_t*>(l.y), begin, end); break;
    case 2: look_up(x, static_cast<const uint16_t*>(l.table), static_cast<uint16_t*>(l.y), begin, end); break;
    default: look_up(x, static_cast<const uint32_t*>(l.table), static_cast<uint32_t*>(l.y), begin, end); break;
  }
}

}  // namespace

bool execute_by_table(const Plan& plan, const MutableTensorView& y, const ParallelFor& host) {
  const uint64_t entries = table_entries(plan, y);
  if (entries == 0) return false;
  const unsigned x_bytes = entries > 256 ? 2u : 1u;
  const unsigned y_bytes = output_bytes(plan.output_type, y.layout);
  // Every code, in x's storage (little-endian code values), through the plan's own kernel.
  std::vector<uint8_t> codes(entries * x_bytes);
  for (uint64_t c = 0; c < entries; ++c) {
    if (x_bytes == 2) {
      const auto code = static_cast<uint16_t>(c);
      std::memcpy(codes.data() + 2 * c, &code, 2);
    } else {
      codes[c] = static_cast<uint8_t>(c);
    }
  }
  std::vector<uint32_t> table_words((entries * y_bytes + 3) / 4);
  kernels::RangeBuffers from_codes;
  from_codes.x_data = codes.data();
  from_codes.allow_streaming = false;
  kernels::execute_range(plan, canonical_layout(plan.layout), 0, entries,
                         MutableTensorView{plan.output_type, {}, table_words.data(), y.layout}, from_codes);
  Lookup lookup{plan.x.data, table_words.data(), y.data, x_bytes, y_bytes};
  run_ranges(
      plan.element_count, host,
      [](void* context, uint64_t begin, uint64_t end) {
        const Lookup& l = *static_cast<const Lookup*>(context);
        if (l.x_bytes == 2) {
          look_up_range<uint16_t>(l, begin, end);
        } else {
          look_up_range<uint8_t>(l, begin, end);
        }
      },
      &lookup);
  return true;
}

}  // namespace qdq::exec
