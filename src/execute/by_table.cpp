// Plans over an x of few codes, run as a table: every code x can hold goes through the
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
//
// DequantizeLinear plans whose scale and zero point are constant along long rows (per-axis on an
// outer axis, as weights are quantized per output channel) run the same way with a table per row:
// the tables of up to 64 rows are built in one kernel call over a layout whose rows are cut to
// the codes, from copies of the codes, so that each is what the kernel writes for that row's
// elements; packed 4- and 2-bit x to 16-bit results take only their 16 codes' results per row
// (the byte shuffles' table). Measured on the AVX-512 Xeon, [16, 4096] in cache, one thread,
// kernel -> row tables: uint4 -> bfloat16 9.5 -> 4.1 us, int4 -> float16 7.1 -> 4.1, int4 one per
// byte -> bfloat16 8.6 -> 4.7, uint2 -> float16 7.2 -> 5.7, float8e4m3fn -> bfloat16 12.5 -> 9.1,
// -> float16 9.8 -> 8.9; [64, 1024]: uint4 -> bfloat16 10.1 -> 4.8. [4096, 4096], 2 threads,
// three alternating rounds: uint4 -> bfloat16 1.71-2.20 -> 0.82-1.03 ms, int4 -> float16
// 1.45-2.05 -> 0.92-1.14, float8e4m3fn -> bfloat16 2.13-2.30 -> 1.26-1.44, -> float16 1.86-2.42 ->
// 1.25-1.38.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
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
// The shortest row that gets a table of its own (besides the 16 elements a table entry asks):
// a row's build, at least 16 elements and a share of a kernel call's set-up, is then at most a
// few percent of its lookups.
constexpr uint64_t kMinTableRow = 1024;

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
  // Elements that share a table: all of them (one scale and zero point), or each row of the
  // canonical layout (operands constant along its innermost dimension: per-axis on an outer axis).
  uint64_t row = 0;
  // Packed x to 16-bit results by byte shuffles from each code's result (look_up_packed_codes_to_
  // halfwords), where the target has them: 4-bit x always; 2-bit x in per-row tables only, whose
  // builds then take 16 elements instead of 1024 (for one table the byte's four results in one
  // word load are faster: kernels/look_up.cpp).
  bool by_code_results = false;
  // Elements of x a table's build runs through the kernel: every index's, or the 16 elements
  // whose codes' results by_code_results reads per row.
  uint64_t build = 0;
};

// The length of the canonical layout's rows when the scale and zero point are constant along each
// (the innermost dimension has no operand stride and is not blocked), else 0.
uint64_t constant_operand_rows(const Layout& canonical) {
  const int last = canonical.rank - 1;
  if (last < 1 || canonical.block_axis == last) return 0;
  if (canonical.scale_strides[last] != 0 || canonical.zero_point_strides[last] != 0) return 0;
  return static_cast<uint64_t>(canonical.dims[last]);
}

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

TableShape table_shape(const Plan& plan, const Layout& canonical) {
  if (plan.element_count == 0 || !plan.x_strides.empty() || !plan.y_strides.empty()) return {};
  TableShape shape;
  if (one_scale_and_zero_point(plan.layout)) {
    shape.row = plan.element_count;
  } else if (plan.operation == Operation::kDequantize) {
    shape.row = constant_operand_rows(canonical);
  }
  if (shape.row == 0) return {};
  const ElementTypeInfo& x = info(plan.x.type);
  const bool x_packed = x.is_packed() && plan.x.layout == SubByteLayout::kPacked;
  if (plan.operation == Operation::kQuantize) {
    // Every output, packed 2-bit ones too: their word loop (kernels/look_up.cpp) took 9.5-12.6
    // ms against the kernels' 3.3-3.6 for 16M float16/bfloat16 -> int2 on Zen 3 (AVX2, 2
    // threads) while GCC left it rolled; unrolled, it runs as the 4-bit one (session 37, AMD
    // EPYC: 4.0 ms against the kernels' 8.2-9.0).
    // Where the lookup is slower than the kernels (gathers on AMD's Zen 5) the kernels keep it:
    // kernels::quantizes_16_bit_x_by_table.
    // Nor where the kernels code by thresholds (kernels::quantizes_by_thresholds), faster still.
    if ((plan.x.type == ElementType::kFloat16 || plan.x.type == ElementType::kBfloat16) &&
        kernels::quantizes_16_bit_x_by_table() && !kernels::quantizes_by_thresholds(plan)) {
      shape.entries = uint64_t{1} << 16;
      shape.x_bytes = 2;
    }
  } else if (x_packed && (plan.output_type != ElementType::kFloat32 || x.bits == 4)) {
    // Packed 4- and 2-bit x: a byte of x (2 or 4 elements) per entry of up to 8 bytes. 2-bit x to
    // float32 (16-byte entries) stays in the kernel.
    shape.entries = 256;
    shape.elements = static_cast<unsigned>(8 / x.bits);
  } else if (dequantizes_bytes_by_table(x, plan.output_type)) {
    shape.entries = 256;
    shape.index_bits = static_cast<unsigned>(x.bits);
  }
  if (shape.entries == 0) return {};
  const bool per_row = shape.row < plan.element_count;
  if (per_row) {
    // A row's elements of packed x are whole bytes of it, so that a byte's entry is its row's.
    if (shape.row % shape.elements != 0) return {};
    // 8-bit integers to bfloat16: their lookup is no faster than the kernel in cache, so the builds
    // would be a loss there (64K over rows of 4096, one thread: 7.6 us in the kernel, 8.9 by
    // tables; the same 7.6 by one table per-tensor).
    if (x.bits == 8 && x.is_integer()) return {};
  }
  const bool halfword_results = entry_bytes(plan.output_type) == 2 && kernels::looks_up_low_bits_in_vectors();
  shape.by_code_results = halfword_results && (shape.elements == 2 || (per_row && shape.elements == 4));
  shape.build = per_row && shape.by_code_results ? 16 : shape.entries * shape.elements;
  const uint64_t least = kMinElementsPerTableEntry * (per_row ? shape.build : shape.entries * shape.elements);
  return shape.row >= (per_row ? std::max(kMinTableRow, least) : least) ? shape : TableShape{};
}

// Rows whose tables one kernel call builds (per-row plans): a call costs about 80 ns beyond its
// elements, as much as a row of packed 4-bit codes' 16 results take.
constexpr uint64_t kTableBatchRows = 64;

// The codes tables are built from, in x's storage (little-endian code values), `copies` times
// over: every index, or for by_code_results per row 16 packed elements whose codes count up from
// 0, wrapping (4-bit: 0 to 15; 2-bit: 0 to 3 four times), so that element c holds code c's result
// (c < 16: the shuffle's sixteen entries).
std::vector<uint8_t> table_codes(const TableShape& shape, bool sixteen_elements, uint64_t copies) {
  std::vector<uint8_t> one;
  if (sixteen_elements) {
    const unsigned code_bits = 8 / shape.elements;
    one.assign(16 / shape.elements, 0);
    for (unsigned e = 0; e < 16; ++e) {
      one[e / shape.elements] |= static_cast<uint8_t>((e % (1u << code_bits)) << (e % shape.elements * code_bits));
    }
  } else {
    one.resize(shape.entries * shape.x_bytes);
    for (uint64_t c = 0; c < shape.entries; ++c) {
      if (shape.x_bytes == 2) {
        const auto code = static_cast<uint16_t>(c);
        std::memcpy(one.data() + 2 * c, &code, 2);
      } else {
        one[c] = static_cast<uint8_t>(c);
      }
    }
  }
  std::vector<uint8_t> codes;
  codes.reserve(one.size() * copies);
  for (uint64_t k = 0; k < copies; ++k) codes.insert(codes.end(), one.begin(), one.end());
  return codes;
}

struct Lookup {
  const Plan* plan;
  const Layout* canonical;
  TableShape shape;
  bool per_row;
  // Per-row plans: the canonical layout with each row cut to build_elements, over which the codes
  // (kTableBatchRows copies) give each row's table its row's operands.
  Layout table_layout;
  const std::vector<uint8_t>* codes;
  uint64_t build_elements;   // elements of x one table is built from
  uint64_t table_bytes;      // bytes of one table's entries (a multiple of 8)
  unsigned table_entry_bytes;
  unsigned y_bits;   // per table index
  unsigned y_bytes;  // per element (elements > 1 only)
  bool stream;       // y is large enough to bypass the caches (look_up_codes' stream)
  uint8_t* y;
};

// A table as the lookups read it: the entries, followed by kLookUpTablePadding readable bytes,
// or for by_code_results the 16 codes' results.
struct TableView {
  const uint8_t* entries = nullptr;
  const uint16_t* code_results = nullptr;
};

// Elements [first, first + count) of the build layout (the tables of their rows) through the
// plan's own kernel from l.codes, into `out`: each element's result with its own operands, so a
// table is bit-identical to what the kernel writes for its codes by construction.
void build_tables(const Lookup& l, const Layout& layout, uint64_t first, uint64_t count, void* out) {
  kernels::RangeBuffers from_codes;
  from_codes.x_data = l.codes->data();
  from_codes.x_first = first;
  from_codes.y_first = first;
  from_codes.allow_streaming = false;
  kernels::execute_range(*l.plan, layout, first, first + count,
                         MutableTensorView{l.plan->output_type, {}, out, SubByteLayout::kOneCodePerByte}, from_codes);
}

// Elements [begin, end) looked up in one table (begin a multiple of the elements per index).
void look_up(const Lookup& l, const TableView& table, uint64_t begin, uint64_t end) {
  const unsigned k = l.shape.elements;
  if (k == 1) {
    return kernels::look_up_codes(l.plan->x.data, l.shape.x_bytes, table.entries, l.y_bits, l.y, begin, end,
                                  l.shape.index_bits, l.stream);
  }
  // Whole bytes of packed x, then the elements of a last partial byte from their codes' results.
  const unsigned code_bits = 8 / k;
  if (l.shape.by_code_results) {
    kernels::look_up_packed_codes_to_halfwords(l.plan->x.data, code_bits, table.code_results, l.y, begin / k, end / k,
                                               l.stream);
  } else {
    kernels::look_up_codes(l.plan->x.data, 1, table.entries, l.y_bits, l.y, begin / k, end / k, 8, l.stream);
  }
  const uint64_t rest = end % k;
  if (rest != 0) {
    const uint8_t last = static_cast<const uint8_t*>(l.plan->x.data)[end / k];
    if (l.shape.by_code_results) {
      const unsigned mask = (1u << code_bits) - 1;
      for (uint64_t e = 0; e < rest; ++e) {
        std::memcpy(l.y + (end - rest + e) * l.y_bytes, &table.code_results[(last >> (e * code_bits)) & mask], l.y_bytes);
      }
    } else {
      std::memcpy(l.y + (end - rest) * l.y_bytes, table.entries + uint64_t{last} * k * l.y_bytes, rest * l.y_bytes);
    }
  }
}

// A per-row plan's elements [begin, end): the tables of up to kTableBatchRows rows built in one
// kernel call, then each row looked up in its own.
void look_up_rows(const Lookup& l, uint64_t begin, uint64_t end) {
  const uint64_t row_length = l.shape.row;
  const uint64_t last_row = (end - 1) / row_length;
  // Per row: its entries (table_bytes, followed by readable bytes: another row's table or the
  // zeroed padding), or its 16 results.
  const uint64_t row_bytes = l.shape.by_code_results ? 16 * sizeof(uint16_t) : l.table_bytes;
  // Not value-initialized: the kernel writes every table before it is read, and only the padding
  // past the last is zeroed (zeroing 64 tables of 512 bytes was a fifth of a 64K call).
  const uint64_t batch = std::min(kTableBatchRows, last_row - begin / row_length + 1);
  const size_t word_count = (batch * row_bytes + kernels::kLookUpTablePadding + 7) / 8;
  const std::unique_ptr<uint64_t[]> words(new uint64_t[word_count]);
  std::memset(words.get() + batch * row_bytes / 8, 0, (word_count - batch * row_bytes / 8) * 8);
  const auto* tables = reinterpret_cast<const uint8_t*>(words.get());
  uint64_t built_first = 0, built_count = 0;  // the rows whose tables `words` holds
  for_each_run(*l.canonical, begin, end, [&](const Run& run) {
    const uint64_t row = run.x_index / row_length;
    if (row - built_first >= built_count) {  // (also when row < built_first: unsigned)
      built_first = row;
      built_count = std::min(batch, last_row - row + 1);
      build_tables(l, l.table_layout, row * l.build_elements, built_count * l.build_elements, words.get());
    }
    const uint8_t* table = tables + (row - built_first) * row_bytes;
    TableView view;
    if (l.shape.by_code_results) {
      view.code_results = reinterpret_cast<const uint16_t*>(table);
    } else {
      view.entries = table;
    }
    look_up(l, view, run.x_index, run.x_index + run.count);
  });
}

}  // namespace

bool runs_by_table(const Plan& plan, bool* per_row) {
  const TableShape shape = table_shape(plan, canonical_layout(plan.layout));
  if (per_row != nullptr) *per_row = shape.entries != 0 && shape.row < plan.element_count;
  return shape.entries != 0;
}

bool execute_by_table(const Plan& plan, const MutableTensorView& y, const ParallelFor& host) {
  const Layout canonical = canonical_layout(plan.layout);
  const TableShape shape = table_shape(plan, canonical);
  if (shape.entries == 0) return false;
  const bool per_row = shape.row < plan.element_count;
  const uint64_t build = shape.build;
  const std::vector<uint8_t> codes = table_codes(shape, per_row && shape.by_code_results, per_row ? kTableBatchRows : 1);
  const unsigned table_entry_bytes = entry_bytes(plan.output_type) * shape.elements;
  Lookup lookup{&plan,
                &canonical,
                shape,
                per_row,
                canonical,
                &codes,
                build,
                shape.entries * table_entry_bytes,
                table_entry_bytes,
                shape.elements > 1 ? 8 * table_entry_bytes : output_bits(plan.output_type, y.layout),
                entry_bytes(plan.output_type),
                storage_bytes(plan.output_type, plan.element_count, y.layout) >= kernels::kStreamingOutputBytes,
                static_cast<uint8_t*>(y.data)};
  // One scale and zero point: one table, built here and shared by the tasks.
  std::vector<uint64_t> shared_words;
  TableView shared;
  uint16_t shared_code_results[16] = {};
  if (per_row) {
    Layout rows_cut = canonical;  // the rows' tables side by side, each build elements long
    rows_cut.dims[rows_cut.rank - 1] = static_cast<int64_t>(build);
    lookup.table_layout = canonical_layout(rows_cut);
  } else {
    shared_words.resize((lookup.table_bytes + kernels::kLookUpTablePadding + 7) / 8);
    build_tables(lookup, canonical, 0, build, shared_words.data());
    shared.entries = reinterpret_cast<const uint8_t*>(shared_words.data());
    if (shape.by_code_results) {  // 4-bit x: code c's result is the first of byte c's entry
      for (unsigned c = 0; c < 16; ++c) {
        std::memcpy(&shared_code_results[c], shared.entries + c * table_entry_bytes, sizeof(uint16_t));
      }
      shared.code_results = shared_code_results;
    }
  }
  struct Context {
    const Lookup* lookup;
    const TableView* shared;
  } context{&lookup, &shared};
  run_ranges(
      plan.element_count, host,
      [](void* opaque, uint64_t begin, uint64_t end) {
        const Context& c = *static_cast<const Context*>(opaque);
        const Lookup& l = *c.lookup;
        if (l.per_row) {
          look_up_rows(l, begin, end);
        } else {
          look_up(l, *c.shared, begin, end);
        }
        if (l.stream) kernels::stream_fence();  // before the task reports itself done
      },
      &context);
  return true;
}

}  // namespace qdq::exec
