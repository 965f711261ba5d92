// Short rows: operands written out per element over a tile, or grouped rows for periodic runs.
#include "execute/short_rows.h"

#include <algorithm>
#include <cstring>

#include "execute/runs.h"
#include "types/codec.h"

namespace qdq::exec {
namespace {

// Rows shorter than this are short; tiles repeat operands over at least kTiledElements. Rows of 4 to 64 elements paid a run's set-up per handful of elements: 64K
// per-axis-last over 4 channels, through Python, Q float32 -> int8 805 us against 17 over rows of
// 1024; DQ uint8 -> float32 629 us, where ONNX Runtime's session took 126.
constexpr int64_t kShortRow = static_cast<int64_t>(kLongestOperandPeriod) + 1;
constexpr uint64_t kLongestPeriod = 4096;
constexpr uint64_t kTiledElements = 1024;

// How an operand is held once written out: 4- and 2-bit codes one per byte.
SubByteLayout written_layout(const TensorView& operand) {
  return info(operand.type).is_packed() ? SubByteLayout::kOneCodePerByte : operand.layout;
}

uint64_t written_bytes(const TensorView& operand) {
  return storage_bytes(operand.type, 1, written_layout(operand));
}

// Repeats the `period` elements at `data` until `total` elements are filled (total >= period),
// by doubling copies, each a whole number of periods.
void repeat_period(unsigned char* data, uint64_t bytes, uint64_t period, uint64_t total) {
  for (uint64_t filled = period; filled < total;) {
    const uint64_t n = std::min(filled, total - filled);
    std::memcpy(data + filled * bytes, data, static_cast<size_t>(n * bytes));
    filled += n;
  }
}

// The run's elements of one operand, written per element from `to` on.
void write_operand_run(const TensorView& operand, bool is_scale, const Run& run, unsigned char* to) {
  const ElementTypeInfo& type = info(operand.type);
  const uint64_t first = is_scale ? run.scale_index : run.zero_point_index;
  const auto offset = [&](uint64_t k) { return is_scale ? run.scale_offset(k) : run.zero_point_offset(k); };
  if (type.is_packed()) {
    for (uint64_t k = 0; k < run.count; ++k) {
      to[k] = static_cast<unsigned char>(codec::load_code(operand.data, type, first + offset(k), operand.layout));
    }
    return;
  }
  const uint64_t bytes = type.bytes_per_element();
  const unsigned char* from = static_cast<const unsigned char*>(operand.data) + first * bytes;
  const bool varies = is_scale ? run.scale_varies : run.zero_point_varies;
  if (run.block == 0 && varies) {
    std::memcpy(to, from, static_cast<size_t>(run.count * bytes));
  } else if (run.block == 0) {
    std::memcpy(to, from, static_cast<size_t>(bytes));
    repeat_period(to, bytes, 1, run.count);
  } else {
    for (uint64_t k = 0; k < run.count; ++k) {
      std::memcpy(to + k * bytes, from + offset(k) * bytes, static_cast<size_t>(bytes));
    }
  }
}

// One operand's elements for x's elements [0, period), then repeated to fill `tile` elements.
void tile_operand(const TensorView& operand, const Layout& canonical, bool is_scale, uint64_t period, uint64_t tile,
                  std::vector<unsigned char>* out, SubByteLayout* layout) {
  const uint64_t bytes = written_bytes(operand);
  out->resize(static_cast<size_t>(tile * bytes));
  unsigned char* data = out->data();
  for_each_run(canonical, 0, period,
               [&](const Run& run) { write_operand_run(operand, is_scale, run, data + run.x_index * bytes); });
  repeat_period(data, bytes, period, tile);
  *layout = written_layout(operand);
}

// [ceil(count / length), length], both operands stepping by one along the second dimension.
Layout rows_of(uint64_t count, uint64_t length) {
  Layout layout;
  layout.rank = 2;
  layout.dims[0] = static_cast<int64_t>((count + length - 1) / length);
  layout.dims[1] = static_cast<int64_t>(length);
  layout.scale_strides[1] = layout.zero_point_strides[1] = 1;
  return layout;
}

}  // namespace

bool tile_short_rows(const Plan& plan, const Layout& canonical, TiledOperands* tiled) {
  const int last = canonical.rank - 1;
  if (last < 1 || canonical.scale_strides[0] != 0 || canonical.zero_point_strides[0] != 0 || canonical.block_axis == 0) {
    return false;
  }
  if (canonical.dims[last] >= kShortRow) return false;
  uint64_t period = 1;
  for (int d = 1; d <= last; ++d) period *= static_cast<uint64_t>(canonical.dims[d]);
  if (period > kLongestPeriod || plan.element_count < 2 * period) return false;
  const uint64_t tile = period * ((kTiledElements + period - 1) / period);
  tiled->plan = plan;
  tile_operand(plan.scale, canonical, true, period, tile, &tiled->scale, &tiled->plan.scale.layout);
  tiled->plan.scale.data = tiled->scale.data();
  if (plan.has_zero_point) {
    tile_operand(plan.zero_point, canonical, false, period, tile, &tiled->zero_point, &tiled->plan.zero_point.layout);
    tiled->plan.zero_point.data = tiled->zero_point.data();
  }
  tiled->layout = rows_of(plan.element_count, tile);
  tiled->plan.layout = tiled->layout;
  return true;
}

bool group_short_rows(const Plan& plan, const Layout& canonical, RowGroups* groups) {
  const int last = canonical.rank - 1, axis = last - 1;
  if (last < 1 || canonical.dims[last] >= kShortRow || plan.element_count < kFewestGroupedElements) return false;
  // Along the row the operands step by one or not at all (exec::PeriodicOperand), not by blocks.
  if (canonical.block_axis == last) return false;
  for (const int64_t stride : {canonical.scale_strides[last], canonical.zero_point_strides[last]}) {
    if (stride != 0 && stride != 1) return false;
  }
  if (canonical.block_axis == axis) {
    groups->rows_per_block = canonical.block_size;
  } else if (canonical.scale_strides[axis] == 0 && canonical.zero_point_strides[axis] == 0) {
    groups->rows_per_block = 0;
  } else {
    return false;
  }
  return true;
}

}  // namespace qdq::exec
