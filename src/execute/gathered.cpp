#include "execute/gathered.h"

#include <algorithm>
#include <cstring>

#include "kernels/kernels.h"

namespace qdq::exec {
namespace {

// Elements per gathered stretch: the kernels' own block, so one kernel call per stretch.
constexpr uint64_t kChunk = 1024;
// Rows at least this long that are contiguous in x and y run in place; shorter ones are cheaper
// to gather than to hand to the kernels one by one.
constexpr int64_t kShortestDirectRow = 256;

template <size_t kBytes>
struct Word {
  unsigned char bytes[kBytes];
};

// count elements of kBytes each: destination[i] = source[i * stride] (or the reverse for a
// scatter). memcpy of a fixed size compiles to one load and one store.
template <size_t kBytes>
void copy_strided(unsigned char* destination, int64_t destination_stride, const unsigned char* source,
                  int64_t source_stride, uint64_t count) {
  if (destination_stride == 1 && source_stride == 1) {
    std::memcpy(destination, source, count * kBytes);
    return;
  }
  for (uint64_t i = 0; i < count; ++i) {
    std::memcpy(destination + static_cast<uint64_t>(destination_stride) * i * kBytes,
                source + static_cast<uint64_t>(source_stride) * i * kBytes, kBytes);
  }
}

void copy_elements(size_t bytes, void* destination, int64_t destination_stride, const void* source,
                   int64_t source_stride, uint64_t count) {
  auto* d = static_cast<unsigned char*>(destination);
  const auto* s = static_cast<const unsigned char*>(source);
  switch (bytes) {
    case 1: return copy_strided<1>(d, destination_stride, s, source_stride, count);
    case 2: return copy_strided<2>(d, destination_stride, s, source_stride, count);
    default: return copy_strided<4>(d, destination_stride, s, source_stride, count);
  }
}

// An operand whose strides are all 0 is one value: it need not be gathered.
bool is_constant(const int64_t* strides, int rank) {
  return std::all_of(strides, strides + rank, [](int64_t s) { return s == 0; });
}

// A walk position: coordinates and each tensor's element offset.
struct Cursor {
  int64_t coords[kMaxLayoutRank] = {};
  int64_t x = 0, y = 0, scale = 0, zero_point = 0;

  Cursor(const StridedWalk& walk, uint64_t index) {
    for (int d = walk.rank - 1; d >= 0; --d) {
      coords[d] = static_cast<int64_t>(index % static_cast<uint64_t>(walk.dims[d]));
      index /= static_cast<uint64_t>(walk.dims[d]);
      x += coords[d] * walk.x[d];
      y += coords[d] * walk.y[d];
      scale += coords[d] * walk.scale[d];
      zero_point += coords[d] * walk.zero_point[d];
    }
  }

  // Advances by `count` along the innermost dimension (not past its end), then carries.
  void advance(const StridedWalk& walk, int64_t count) {
    int d = walk.rank - 1;
    coords[d] += count;
    x += count * walk.x[d];
    y += count * walk.y[d];
    scale += count * walk.scale[d];
    zero_point += count * walk.zero_point[d];
    while (d > 0 && coords[d] == walk.dims[d]) {
      x -= walk.dims[d] * walk.x[d];
      y -= walk.dims[d] * walk.y[d];
      scale -= walk.dims[d] * walk.scale[d];
      zero_point -= walk.dims[d] * walk.zero_point[d];
      coords[d] = 0;
      --d;
      ++coords[d];
      x += walk.x[d];
      y += walk.y[d];
      scale += walk.scale[d];
      zero_point += walk.zero_point[d];
    }
  }
};

const unsigned char* at(const void* data, int64_t index, size_t bytes) {
  return static_cast<const unsigned char*>(data) + static_cast<uint64_t>(index) * bytes;
}

}  // namespace

StridedWalk strided_walk(const Plan& plan) {
  StridedWalk walk;
  const Layout& layout = plan.layout;
  for (int d = 0; d < layout.rank; ++d) {
    const auto i = static_cast<size_t>(d);
    const int64_t dim = layout.dims[d];
    if (dim == 1) continue;
    const int64_t strides[4] = {plan.x_strides[i], plan.y_strides[i], layout.scale_strides[d],
                                layout.zero_point_strides[d]};
    const int o = walk.rank;
    if (o > 0 && walk.x[o - 1] == strides[0] * dim && walk.y[o - 1] == strides[1] * dim &&
        walk.scale[o - 1] == strides[2] * dim && walk.zero_point[o - 1] == strides[3] * dim) {
      walk.dims[o - 1] *= dim;  // d continues the previous dimension in all four tensors
    } else {
      walk.dims[o] = dim;
      ++walk.rank;
    }
    walk.x[walk.rank - 1] = strides[0];
    walk.y[walk.rank - 1] = strides[1];
    walk.scale[walk.rank - 1] = strides[2];
    walk.zero_point[walk.rank - 1] = strides[3];
  }
  if (walk.rank == 0) {  // one element
    walk.rank = 1;
    walk.dims[0] = 1;
  }
  return walk;
}

void execute_gathered_range(const Plan& plan, const StridedWalk& walk, uint64_t begin, uint64_t end, void* y) {
  const size_t x_bytes = static_cast<size_t>(info(plan.x.type).bytes_per_element());
  const size_t y_bytes = static_cast<size_t>(info(plan.output_type).bytes_per_element());
  const size_t scale_bytes = static_cast<size_t>(info(plan.scale.type).bytes_per_element());
  const size_t zp_bytes = plan.has_zero_point ? static_cast<size_t>(info(plan.zero_point.type).bytes_per_element()) : 0;
  const int last = walk.rank - 1;
  const bool constant_scale = is_constant(walk.scale, walk.rank);
  const bool constant_zero_point = !plan.has_zero_point || is_constant(walk.zero_point, walk.rank);
  const bool rows_in_place = walk.x[last] == 1 && walk.y[last] == 1 && walk.scale[last] <= 1 &&
                             walk.zero_point[last] <= 1 && walk.dims[last] >= kShortestDirectRow;

  // One dense plan reused for every stretch: the kernels see a 1-D run over local buffers.
  Plan dense = plan;
  dense.x_strides.clear();
  dense.y_strides.clear();
  dense.layout = Layout{};
  dense.layout.rank = 1;

  alignas(64) unsigned char x_buffer[kChunk * 4];
  alignas(64) unsigned char y_buffer[kChunk * 4];
  alignas(64) unsigned char scale_buffer[kChunk * 4];
  alignas(64) unsigned char zp_buffer[kChunk * 4];

  Cursor cursor(walk, begin);
  uint64_t index = begin;
  while (index < end) {
    if (rows_in_place) {
      // The rest of this row (within the range), straight from x into y.
      const uint64_t count =
          std::min(end - index, static_cast<uint64_t>(walk.dims[last] - cursor.coords[last]));
      dense.x.data = at(plan.x.data, cursor.x, x_bytes);
      dense.scale.data = at(plan.scale.data, cursor.scale, scale_bytes);
      if (plan.has_zero_point) dense.zero_point.data = at(plan.zero_point.data, cursor.zero_point, zp_bytes);
      // The whole output's size, not the row's, decides whether the kernels stream their stores
      // past the cache, as it does for dense plans (it is all element_count tells them).
      dense.element_count = plan.element_count;
      dense.layout.dims[0] = static_cast<int64_t>(count);
      dense.layout.scale_strides[0] = walk.scale[last];
      dense.layout.zero_point_strides[0] = walk.zero_point[last];
      MutableTensorView row{plan.output_type, {}, static_cast<unsigned char*>(y) + static_cast<uint64_t>(cursor.y) * y_bytes};
      kernels::execute_range(dense, dense.layout, 0, count, row);
      cursor.advance(walk, static_cast<int64_t>(count));
      index += count;
      continue;
    }
    // Gather up to kChunk elements, row piece by row piece.
    const uint64_t count = std::min(end - index, kChunk);
    const Cursor start = cursor;
    uint64_t gathered = 0;
    while (gathered < count) {
      const uint64_t piece =
          std::min(count - gathered, static_cast<uint64_t>(walk.dims[last] - cursor.coords[last]));
      copy_elements(x_bytes, x_buffer + gathered * x_bytes, 1, at(plan.x.data, cursor.x, x_bytes), walk.x[last], piece);
      if (!constant_scale) {
        copy_elements(scale_bytes, scale_buffer + gathered * scale_bytes, 1,
                      at(plan.scale.data, cursor.scale, scale_bytes), walk.scale[last], piece);
      }
      if (!constant_zero_point) {
        copy_elements(zp_bytes, zp_buffer + gathered * zp_bytes, 1, at(plan.zero_point.data, cursor.zero_point, zp_bytes),
                      walk.zero_point[last], piece);
      }
      cursor.advance(walk, static_cast<int64_t>(piece));
      gathered += piece;
    }
    dense.x.data = x_buffer;
    dense.scale.data = constant_scale ? plan.scale.data : scale_buffer;
    if (plan.has_zero_point) dense.zero_point.data = constant_zero_point ? plan.zero_point.data : zp_buffer;
    dense.element_count = count;
    dense.layout.dims[0] = static_cast<int64_t>(count);
    dense.layout.scale_strides[0] = constant_scale ? 0 : 1;
    dense.layout.zero_point_strides[0] = constant_zero_point ? 0 : 1;
    kernels::execute_range(dense, dense.layout, 0, count, MutableTensorView{plan.output_type, {}, y_buffer});
    // Scatter the results the same way.
    Cursor scatter = start;
    uint64_t scattered = 0;
    while (scattered < count) {
      const uint64_t piece =
          std::min(count - scattered, static_cast<uint64_t>(walk.dims[last] - scatter.coords[last]));
      copy_elements(y_bytes, static_cast<unsigned char*>(y) + static_cast<uint64_t>(scatter.y) * y_bytes, walk.y[last],
                    y_buffer + scattered * y_bytes, 1, piece);
      scatter.advance(walk, static_cast<int64_t>(piece));
      scattered += piece;
    }
    index += count;
  }
}

}  // namespace qdq::exec
