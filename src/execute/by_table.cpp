// Per-tensor plans over an x of few codes, run as a table: every code x can hold goes through the
// SIMD kernel once, and each element then looks its result up. With one scale and one zero point an
// element's result depends on its own code only, so the table holds exactly what the kernel writes
// for it: the lookup is bit-identical by construction. It pays where the kernel does more per
// element than a load and a store: QuantizeLinear from float16 and bfloat16 (a divide and a
// rounding to x's precision per element, 65,536 codes) and DequantizeLinear from float8 to 16-bit
// floats (a decode per element, 256 codes). The lookup itself is a SIMD kernel (kernels/look_up.h):
// a gather on AVX-512, and packed 4- and 2-bit outputs are packed as they are looked up. Measured at 16M
// per-tensor, 2 threads, on the AVX-512 Xeon: QuantizeLinear from float16 and bfloat16 to every
// one- and two-byte output took 1.44-1.68 ms by table against 1.9-2.8 ms in the kernels, to packed
// 4- and 2-bit outputs 1.31-1.55 against 1.93-2.80; DequantizeLinear from float8 to float16 and
// bfloat16 1.24-1.33 against 1.62-2.39, from int8 and uint8 to bfloat16 1.26-1.33 against
// 1.40-1.46, from packed 4- and 2-bit x to float16 and bfloat16 0.65-0.74 against 1.04-1.87, from
// packed 4-bit x to float32 1.37-1.46 against 1.53-1.73, and from 4- and 2-bit x one per byte to
// bfloat16 1.21-1.30 against 1.38-1.56.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "execute/by_table.h"
#include "execute/execute.h"
#include "execute/runs.h"
#include "kernels/kernels.h"
#include "kernels/look_up.h"
#include "kernels/prefetch.h"  // kStreamingOutputBytes

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

// Bytes of one table entry: a code of the output type, sub-byte types one code per byte.
unsigned entry_bytes(ElementType type) {
  const ElementTypeInfo& t = info(type);
  return t.is_packed() ? 1u : static_cast<unsigned>(t.bits / 8);
}

// Bits one output element takes in y: packed sub-byte codes are looked up and packed in one step.
unsigned output_bits(ElementType type, SubByteLayout layout) {
  const ElementTypeInfo& t = info(type);
  return t.is_packed() && layout == SubByteLayout::kPacked ? static_cast<unsigned>(t.bits) : 8 * entry_bytes(type);
}

// How a plan runs by table: `entries` table indices of `x_bytes` each (x codes, or for packed 4-
// and 2-bit x whole bytes of x), each index standing for `elements` consecutive elements whose
// results its entry holds side by side.
struct TableShape {
  uint64_t entries = 0;  // 0: the plan does not run by table
  unsigned x_bytes = 1;
  unsigned elements = 1;
  unsigned index_bits = 8;  // the low bits of a code that decide its entry (look_up_codes)
};

// Whether DequantizeLinear of x stored one code per byte (float8, 8-bit integers, 4- and 2-bit
// codes one per byte) to `out` runs by a table of 256 entries: float8 codes (a decode each) and
// 8-bit integers (4- and 2-bit ones one per byte) to bfloat16 (a rounding on the bits each).
// float32 outputs stay in the kernel, which streams large outputs past the cache and so runs as
// fast as the lookup (float8e4m3fn to float32, 16M: 6.9-7.7 ms against 8.0). 4- and 2-bit codes
// one per byte to float16 take the table where the lookup is a byte shuffle or a permute (their
// own bits decide the entry: index_bits): on AVX2 (2 threads) 64K int4 9.3 us against the
// kernel's 14.7, 16M 1.9 ms against 2.7, float4e2m1 25 -> 9.4 us and 4.3 -> 2.0 ms. float8 codes
// to float16 and 8-bit integers to bfloat16 take it where the lookup beats the kernels
// (kernels::dequantizes_byte_codes_to_halfwords_by_table: not on AVX2, where the lookup is the
// scalar word loop).
bool dequantizes_bytes_by_table(const ElementTypeInfo& x, ElementType out) {
  if (x.bits < 8) {
    return out == ElementType::kBfloat16 || (out == ElementType::kFloat16 && kernels::looks_up_low_bits_in_vectors());
  }
  if (x.bits != 8) return false;
  if (x.is_float() && out == ElementType::kBfloat16) return true;
  const bool to_halfwords = out == (x.is_float() ? ElementType::kFloat16 : ElementType::kBfloat16);
  return to_halfwords && kernels::dequantizes_byte_codes_to_halfwords_by_table();
}

TableShape table_shape(const Plan& plan) {
  if (!plan.x_strides.empty() || !plan.y_strides.empty()) return {};
  if (!one_scale_and_zero_point(plan.layout)) return {};
  TableShape shape;
  const ElementTypeInfo& x = info(plan.x.type);
  const bool x_packed = x.is_packed() && plan.x.layout == SubByteLayout::kPacked;
  if (plan.operation == Operation::kQuantize) {
    // Every output, packed 2-bit ones too: their word loop (kernels/look_up.cpp) took 9.5-12.6
    // ms against the kernels' 3.3-3.6 for 16M float16/bfloat16 -> int2 on Zen 3 (AVX2, 2
    // threads) while GCC left it rolled; unrolled, it runs as the 4-bit one (session 37, AMD
    // EPYC: 4.0 ms against the kernels' 8.2-9.0).
    // Where the lookup is slower than the kernels (gathers on AMD's Zen 5) the kernels keep it:
    // kernels::quantizes_16_bit_x_by_table.
    if ((plan.x.type == ElementType::kFloat16 || plan.x.type == ElementType::kBfloat16) &&
        kernels::quantizes_16_bit_x_by_table()) {
      shape = {uint64_t{1} << 16, 2, 1};
    }
  } else if (x_packed && (plan.output_type != ElementType::kFloat32 || x.bits == 4)) {
    // Packed 4- and 2-bit x: a byte of x (2 or 4 elements) per entry of up to 8 bytes. 2-bit x to
    // float32 (16-byte entries) stays in the kernel.
    shape = {256, 1, static_cast<unsigned>(8 / x.bits)};
  } else if (dequantizes_bytes_by_table(x, plan.output_type)) {
    shape = {256, 1, 1, static_cast<unsigned>(x.bits)};
  }
  return plan.element_count >= kMinElementsPerTableEntry * shape.entries * shape.elements ? shape : TableShape{};
}

struct Lookup {
  const void* x;
  const uint8_t* table;
  uint8_t* y;
  TableShape shape;
  unsigned y_bits;  // per table index
  unsigned y_bytes;  // per element (elements > 1 only)
  bool stream;  // y is large enough to bypass the caches (look_up_codes' stream)
  // Packed 4-bit x to 16-bit results where the target shuffles them (look_up_packed_codes_to_
  // halfwords): the result of each code, read from element 0 of its byte's entry. Packed 2-bit x
  // keeps the table's words, a byte's four results in one load (kernels/look_up.cpp says why).
  bool packed_to_halfwords;
  uint16_t code_results[16];
};

}  // namespace

bool execute_by_table(const Plan& plan, const MutableTensorView& y, const ParallelFor& host) {
  const TableShape shape = table_shape(plan);
  if (shape.entries == 0) return false;
  // Every index, in x's storage (little-endian code values), through the plan's own kernel.
  std::vector<uint8_t> codes(shape.entries * shape.x_bytes);
  for (uint64_t c = 0; c < shape.entries; ++c) {
    if (shape.x_bytes == 2) {
      const auto code = static_cast<uint16_t>(c);
      std::memcpy(codes.data() + 2 * c, &code, 2);
    } else {
      codes[c] = static_cast<uint8_t>(c);
    }
  }
  const unsigned table_entry_bytes = entry_bytes(plan.output_type) * shape.elements;
  std::vector<uint64_t> table_words((shape.entries * table_entry_bytes + kernels::kLookUpTablePadding + 7) / 8);
  kernels::RangeBuffers from_codes;
  from_codes.x_data = codes.data();
  from_codes.allow_streaming = false;
  kernels::execute_range(plan, canonical_layout(plan.layout), 0, shape.entries * shape.elements,
                         MutableTensorView{plan.output_type, {}, table_words.data(), SubByteLayout::kOneCodePerByte},
                         from_codes);
  Lookup lookup{plan.x.data,
                reinterpret_cast<const uint8_t*>(table_words.data()),
                static_cast<uint8_t*>(y.data),
                shape,
                shape.elements > 1 ? 8 * table_entry_bytes : output_bits(plan.output_type, y.layout),
                entry_bytes(plan.output_type),
                storage_bytes(plan.output_type, plan.element_count, y.layout) >= kernels::kStreamingOutputBytes,
                shape.elements == 2 && entry_bytes(plan.output_type) == 2 && kernels::looks_up_low_bits_in_vectors(),
                {}};
  if (lookup.packed_to_halfwords) {
    for (unsigned c = 0; c < (1u << (8 / shape.elements)); ++c) {
      std::memcpy(&lookup.code_results[c], lookup.table + c * table_entry_bytes, sizeof(uint16_t));
    }
  }
  run_ranges(
      plan.element_count, host,
      [](void* context, uint64_t begin, uint64_t end) {
        const Lookup& l = *static_cast<const Lookup*>(context);
        const unsigned k = l.shape.elements;
        if (k == 1) {
          return kernels::look_up_codes(l.x, l.shape.x_bytes, l.table, l.y_bits, l.y, begin, end, l.shape.index_bits,
                                        l.stream);
        }
        // Whole bytes of packed x (begin is a multiple of 8), then the elements of a last
        // partial byte from its entry's first results.
        if (l.packed_to_halfwords) {
          kernels::look_up_packed_codes_to_halfwords(l.x, 8 / k, l.code_results, l.y, begin / k, end / k, l.stream);
        } else {
          kernels::look_up_codes(l.x, 1, l.table, l.y_bits, l.y, begin / k, end / k, 8, l.stream);
        }
        const uint64_t rest = end % k;
        if (rest != 0) {
          const uint8_t last = static_cast<const uint8_t*>(l.x)[end / k];
          std::memcpy(l.y + (end - rest) * l.y_bytes, l.table + uint64_t{last} * k * l.y_bytes, rest * l.y_bytes);
        }
      },
      &lookup);
  return true;
}

}  // namespace qdq::exec
