// Short rows: operands written out per element, for the whole tensor (a tile) or a piece at a time.
#include "execute/short_rows.h"

#include <cstring>

#include "execute/runs.h"
#include "types/codec.h"

namespace qdq::exec {
namespace {

// Rows shorter than this are short; tiles and pieces repeat operands over at least
// kTiledElements. Rows of 4 to 64 elements paid a run's set-up per handful of elements: 64K
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

// The period's bytes repeated over 32 bytes, where the period is 1, 2, 4, 8, 16 or 32 bytes long,
// by fixed-size copies (which compile to moves, not calls).
bool period_block(const unsigned char* period, uint64_t period_bytes, uint64_t (&block)[4]) {
  uint64_t word = 0;
  switch (period_bytes) {
    case 1: { uint8_t v; std::memcpy(&v, period, 1); word = v * 0x0101'0101'0101'0101ull; break; }
    case 2: { uint16_t v; std::memcpy(&v, period, 2); word = v * 0x0001'0001'0001'0001ull; break; }
    case 4: { uint32_t v; std::memcpy(&v, period, 4); word = v * 0x0000'0001'0000'0001ull; break; }
    case 8: std::memcpy(&word, period, 8); break;
    case 16: std::memcpy(block, period, 16); std::memcpy(block + 2, period, 16); return true;
    case 32: std::memcpy(block, period, 32); return true;
    default: return false;
  }
  block[0] = block[1] = block[2] = block[3] = word;
  return true;
}

// Repeats the `period` elements at `data` until `total` elements are filled (total >= period).
// A period of a power of two bytes up to 32 is stored 32 bytes at a time from registers; others by
// doubling copies, each a whole number of periods. Blocks of 32 rows of 4 float32 scales and uint8
// zero points along the first axis made five doubling calls per block for each operand: 64K DQ
// uint8 -> float32 with the zero point, one thread, 47-49 -> 40 us (that plan has since left this
// path for periodic runs; fake-quant pairs still take it).
void repeat_period(unsigned char* data, uint64_t bytes, uint64_t period, uint64_t total) {
  const uint64_t period_bytes = period * bytes, total_bytes = total * bytes;
  if (uint64_t block[4]; total_bytes >= 64 && period_block(data, period_bytes, block)) {
    uint64_t at = 0;
    for (; at + 32 <= total_bytes; at += 32) std::memcpy(data + at, block, 32);
    std::memcpy(data + at, block, static_cast<size_t>(total_bytes - at));  // 32 is a whole number of periods
    return;
  }
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
  if (last < 1 || canonical.dims[last] >= kShortRow || plan.element_count < 2 * kPieceElements) return false;
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
  groups->canonical = canonical;
  groups->pieces = rows_of(plan.element_count, kPieceElements);
  return true;
}

PieceOperands::PieceOperands(const Plan& plan, const RowGroups& groups) : source_(plan), groups_(groups), plan_(plan) {
  scale_.resize(static_cast<size_t>(kPieceElements * written_bytes(plan.scale)));
  plan_.scale.data = scale_.data();
  plan_.scale.layout = written_layout(plan.scale);
  if (plan.has_zero_point) {
    zero_point_.resize(static_cast<size_t>(kPieceElements * written_bytes(plan.zero_point)));
    plan_.zero_point.data = zero_point_.data();
    plan_.zero_point.layout = written_layout(plan.zero_point);
  }
  plan_.layout = groups.pieces;
}

const Plan& PieceOperands::fill(uint64_t first, uint64_t last) {
  const Layout& canonical = groups_.canonical;
  const uint64_t inner = static_cast<uint64_t>(canonical.dims[canonical.rank - 1]);
  const uint64_t extent = static_cast<uint64_t>(canonical.dims[canonical.rank - 2]);
  const uint64_t block = static_cast<uint64_t>(groups_.rows_per_block);
  const uint64_t piece = first / kPieceElements * kPieceElements;  // element at the buffers' start
  const uint64_t scale_bytes = written_bytes(source_.scale);
  const uint64_t zero_point_bytes = source_.has_zero_point ? written_bytes(source_.zero_point) : 0;
  for (uint64_t i = first; i < last;) {
    // The group holding element i ends with the block of rows (or the rows along the axis).
    const uint64_t row = i / inner;
    const uint64_t along = row % extent;
    const uint64_t group_end = block != 0 ? std::min(extent, (along / block + 1) * block) : extent;
    const uint64_t segment_end = std::min(last, (row + group_end - along) * inner);
    // Every row of a group has the same operands, so from any element on they repeat with the
    // row's length as period: write one period, then repeat it over the rest of the segment.
    const uint64_t period_end = std::min(segment_end, i + inner);
    for_each_run(canonical, i, period_end, [&](const Run& run) {
      write_operand_run(source_.scale, true, run, scale_.data() + (run.x_index - piece) * scale_bytes);
      if (source_.has_zero_point) {
        write_operand_run(source_.zero_point, false, run, zero_point_.data() + (run.x_index - piece) * zero_point_bytes);
      }
    });
    repeat_period(scale_.data() + (i - piece) * scale_bytes, scale_bytes, period_end - i, segment_end - i);
    if (source_.has_zero_point) {
      repeat_period(zero_point_.data() + (i - piece) * zero_point_bytes, zero_point_bytes, period_end - i,
                    segment_end - i);
    }
    i = segment_end;
  }
  return plan_;
}

}  // namespace qdq::exec
