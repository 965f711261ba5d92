// Scales and zero points from data, dynamic quantization and ONNX DynamicQuantizeLinear.
//
// Two stages over the same geometry: a SIMD reduction (kernels/reduce.h) gives each group's
// extremes, then the finish turns each group's extremes into its scale and zero point with
// float32 arithmetic, exactly as docs/semantics.md ("Scales from data") writes the formulas:
// finish() below is the definition; kernels::finish_groups does the common cases in SIMD, bit for
// bit, and leaves it the rest. Contiguous groups are reduced and finished by the same task.
// Dynamic quantization runs the Q kernels over each stretch of x right after its groups are
// finished, while that stretch is still in cache.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "execute/parallel.h"
#include "execute/runs.h"
#include "kernels/kernels.h"
#include "kernels/reduce.h"
#include "plan/checks.h"
#include "qdq/toolkit.hpp"
#include "toolkit/qparams_internal.h"
#include "types/codec.h"

namespace qdq {
namespace {

using kernels::Extremes;

constexpr uint32_t kE8M0Nan = 0xFF;
// Work per task of the reductions, and the stretch of x that dynamic quantization reduces and
// then quantizes while it is in cache (float32: 64 KiB, a slice of L2).
constexpr uint64_t kMinElementsPerTask = uint64_t{1} << 16;
constexpr uint64_t kCacheChunkElements = uint64_t{1} << 14;
// The largest slab of x (a block's rows along a non-last axis) dynamic quantization reduces and
// quantizes in one visit: 512 KiB of float32, within the L2 cache of the cores it ran on.
constexpr uint64_t kCacheSlabElements = uint64_t{1} << 17;

const char* method_name(ScaleMethod method) {
  switch (method) {
    case ScaleMethod::kMinMax: return "minmax";
    case ScaleMethod::kSymmetric: return "symmetric";
    case ScaleMethod::kSymmetricRestricted: return "symmetric_restricted";
    case ScaleMethod::kMxFloor: return "mx_floor";
    case ScaleMethod::kMxCeil: return "mx_ceil";
    case ScaleMethod::kMxEven: return "mx_even";
    case ScaleMethod::kMxRceil: return "mx_rceil";
  }
  return "unknown";
}

bool is_mx(ScaleMethod method) {
  return method == ScaleMethod::kMxFloor || method == ScaleMethod::kMxCeil || method == ScaleMethod::kMxEven ||
         method == ScaleMethod::kMxRceil;
}

std::string type_text(ElementType type) {
  return find_element_type_info(type) != nullptr ? std::string(name(type))
                                                 : "code " + std::to_string(static_cast<int64_t>(type));
}

// x viewed as [outer, axis, inner] and how its groups lie in it.
struct Geometry {
  Granularity granularity = Granularity::kPerTensor;
  uint64_t outer = 1, axis_dim = 1, inner = 1;
  uint64_t block = 1;         // blocked: elements per block along the axis
  uint64_t blocks = 1;        // blocked: ceil(axis_dim / block)
  uint64_t group_count = 1;
  uint64_t element_count = 0;
  int axis = 0;
  std::vector<int64_t> scale_shape;
  // Whether every group is one contiguous stretch of x: then groups are `row` elements per row
  // cut into `block`-element pieces (per-tensor: one row; per-axis along the first axis: rows of
  // `inner`; blocked along the last axis: rows of axis_dim).
  bool contiguous = false;
  uint64_t row = 0, row_block = 0;
};

// What the finish stage needs: the method, the two types and the constants of the formulas.
struct Rules {
  ScaleMethod method;
  const ElementTypeInfo* quantized;
  const ElementTypeInfo* scale;
  float qmin = 0.0f;       // the quantized type's range, as float32 (32-bit types rounded)
  float divisor = 1.0f;    // what the range is divided by (float32)
  double zp_lowest = 0.0;  // saturation range of the zero point (exact)
  double zp_highest = 0.0;
  double neutral_zero_point = 0.0;  // all-zero, NaN and infinite groups (and symmetric methods)
  int mx_emax = 0;                  // floor(log2(max(T)))
  int mx_mantissa_bits = 0;
  float mx_max = 0.0f;
};

Status invalid(const std::string& message) { return Status::invalid_argument("compute_qparams: " + message); }

Result<Rules> make_rules(const QparamsOptions& o) {
  const ElementTypeInfo* q = find_element_type_info(o.quantized_type);
  if (q == nullptr || o.quantized_type == ElementType::kFloat8E8M0 || o.quantized_type == ElementType::kFloat32) {
    return invalid("quantized_type " + type_text(o.quantized_type) +
                   " is not a quantized type (integers of 2 to 32 bits, float16, bfloat16, float8, float4)");
  }
  const ElementTypeInfo* s = find_element_type_info(o.scale_type);
  Rules r;
  r.method = o.method;
  r.quantized = q;
  r.scale = s;
  const std::string method = method_name(o.method);
  const bool mx = is_mx(o.method);
  if (mx) {
    if (!q->is_float()) {
      return invalid("method " + method + " makes power-of-two scales for float element types; quantized_type " +
                     std::string(q->name) + " is an integer type (use minmax or symmetric)");
    }
    if (s == nullptr || (o.scale_type != ElementType::kFloat8E8M0 && o.scale_type != ElementType::kFloat32 &&
                         o.scale_type != ElementType::kBfloat16)) {
      return invalid("scale_type " + type_text(o.scale_type) + " cannot hold method " + method +
                     "'s scales 2^-127..2^127; use float8_e8m0fnu, float32 or bfloat16");
    }
    int exponent = 0;
    std::frexp(q->max, &exponent);
    r.mx_emax = exponent - 1;
    r.mx_mantissa_bits = q->mantissa_bits;
    r.mx_max = static_cast<float>(q->max);
    return r;
  }
  if (s == nullptr || (o.scale_type != ElementType::kFloat32 && o.scale_type != ElementType::kFloat16 &&
                       o.scale_type != ElementType::kBfloat16)) {
    return invalid("scale_type " + type_text(o.scale_type) + " is not allowed with method " + method +
                   "; use float32, float16 or bfloat16 (float8_e8m0fnu takes the mx_* methods)");
  }
  if (q->is_float()) {
    if (o.method != ScaleMethod::kSymmetric) {
      return invalid("method " + method + " needs an integer quantized_type; " + std::string(q->name) +
                     " takes symmetric (max|x| / " + plan::format_number(q->max) + ") or the mx_* methods");
    }
    r.divisor = static_cast<float>(q->max);
    return r;
  }
  const double span = q->max - q->lowest;
  r.qmin = static_cast<float>(q->lowest);
  r.zp_lowest = q->lowest;
  r.zp_highest = q->max;
  switch (o.method) {
    case ScaleMethod::kMinMax:
      r.divisor = static_cast<float>(span);
      r.neutral_zero_point = q->lowest;
      break;
    case ScaleMethod::kSymmetric:
      r.divisor = static_cast<float>(span / 2);
      r.neutral_zero_point = q->is_signed ? 0.0 : (q->max + 1) / 2;
      break;
    default:  // kSymmetricRestricted
      r.divisor = static_cast<float>((span - 1) / 2);
      r.neutral_zero_point = q->is_signed ? 0.0 : (q->max + 1) / 2;
      break;
  }
  return r;
}

Result<Geometry> make_geometry(std::span<const int64_t> shape, const QparamsOptions& o) {
  Geometry g;
  g.granularity = o.granularity;
  uint64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) return invalid("x has a negative dimension in shape " + plan::shape_string(shape));
    count *= static_cast<uint64_t>(d);
  }
  g.element_count = count;
  const int rank = static_cast<int>(shape.size());
  switch (o.granularity) {
    case Granularity::kPerTensor:
      g.axis_dim = count;
      g.block = g.axis_dim;
      g.contiguous = true;
      g.row = g.row_block = std::max<uint64_t>(count, 1);
      return g;
    case Granularity::kPerAxis:
    case Granularity::kBlocked:
      break;
    default:
      return invalid("granularity must be per-tensor, per-axis or blocked (element-wise scales come from the caller)");
  }
  if (rank == 0) return invalid("per-axis and blocked scales need x of rank >= 1; x is 0-D");
  if (o.axis < -rank || o.axis >= rank) {
    return invalid("axis " + std::to_string(o.axis) + " is outside [" + std::to_string(-rank) + ", " +
                   std::to_string(rank - 1) + "] for x of shape " + plan::shape_string(shape));
  }
  g.axis = static_cast<int>(o.axis < 0 ? o.axis + rank : o.axis);
  for (int d = 0; d < g.axis; ++d) g.outer *= static_cast<uint64_t>(shape[d]);
  g.axis_dim = static_cast<uint64_t>(shape[g.axis]);
  for (int d = g.axis + 1; d < rank; ++d) g.inner *= static_cast<uint64_t>(shape[d]);
  if (o.granularity == Granularity::kPerAxis) {
    if (o.block_size != 0) return invalid("block_size " + std::to_string(o.block_size) + " is set but granularity is per-axis");
    g.group_count = g.axis_dim;
    g.scale_shape = {static_cast<int64_t>(g.axis_dim)};
    g.contiguous = g.outer == 1;
    g.row = g.row_block = std::max<uint64_t>(g.inner, 1);
    return g;
  }
  if (o.block_size <= 0) {
    return invalid("blocked scales need block_size >= 1; block_size is " + std::to_string(o.block_size));
  }
  g.block = static_cast<uint64_t>(o.block_size);
  g.blocks = (g.axis_dim + g.block - 1) / g.block;
  g.group_count = g.outer * g.blocks * g.inner;
  g.scale_shape.assign(shape.begin(), shape.end());
  g.scale_shape[g.axis] = static_cast<int64_t>(g.blocks);
  g.contiguous = g.inner == 1;
  g.row = std::max<uint64_t>(g.axis_dim, 1);
  g.row_block = g.block;
  return g;
}

// --- The finish: one group's extremes -> its scale code and zero-point code -------------------

struct Finished {
  uint32_t scale_code;
  uint32_t zero_point_code;
};

float pow2(int e) { return std::ldexp(1.0f, e); }

uint32_t store_scale(const Rules& r, float value) {
  switch (r.scale->type) {
    case ElementType::kFloat32: return std::bit_cast<uint32_t>(value);
    default: return codec::encode_float(*r.scale, value, codec::Overflow::kInfOrNan);
  }
}

uint32_t integer_code(const Rules& r, double value) {
  return static_cast<uint32_t>(static_cast<int64_t>(value)) & static_cast<uint32_t>((uint64_t{1} << r.quantized->bits) - 1);
}

Finished finish_mx(const Rules& r, const Extremes& e) {
  // max|x|: an empty group (no elements) counts as all zeros.
  // (Its magnitude bits: max(-(+0), ...) may leave -0, whose sign bit must not reach the exponent.)
  const float amax = std::fabs(std::max({-e.min, e.max, 0.0f}));
  int exponent;
  if (e.nan || !std::isfinite(amax)) {
    exponent = 128;  // NaN
  } else if (r.method == ScaleMethod::kMxRceil) {
    // The decode scale amax / max(T) rounded up to a power of two, on its bits: a normal value
    // with any mantissa bit set goes to the next binade; a subnormal is above 2^-127 only when
    // its mantissa exceeds 0x40'0000 (2^-127 itself is e8m0's code 0).
    const uint32_t bits = std::bit_cast<uint32_t>(amax / r.mx_max);
    const int biased = static_cast<int>(bits >> 23);
    const uint32_t mantissa = bits & 0x7F'FFFFu;
    const bool round_up = biased == 0 ? mantissa > 0x40'0000u : mantissa != 0;
    exponent = biased + (round_up ? 1 : 0) - 127;
  } else {
    uint32_t bits = std::bit_cast<uint32_t>(amax);
    if (r.method == ScaleMethod::kMxEven) {
      // Round amax to T's mantissa width (half up on the magnitude), keep the exponent.
      bits = (bits + (1u << (22 - r.mx_mantissa_bits))) & 0x7F80'0000u;
    }
    // floor(log2(amax)) from the exponent field; zero and subnormals count as 2^-127.
    int floor_log2 = static_cast<int>(bits >> 23) - 127;
    if (r.method == ScaleMethod::kMxCeil && (bits & 0x7F'FFFFu) != 0) floor_log2 += 1;
    exponent = floor_log2 - r.mx_emax;
  }
  exponent = std::clamp(exponent, -127, 128);
  Finished f{0, 0};
  if (r.scale->type == ElementType::kFloat8E8M0) {
    f.scale_code = exponent == 128 ? kE8M0Nan : static_cast<uint32_t>(exponent + 127);
  } else {
    const float value = exponent == 128 ? std::numeric_limits<float>::quiet_NaN() : pow2(exponent);
    f.scale_code = store_scale(r, value);
  }
  return f;
}

Finished finish(const Rules& r, const Extremes& e) {
  if (is_mx(r.method)) return finish_mx(r, e);
  const ElementTypeInfo& q = *r.quantized;
  const uint32_t neutral = q.is_integer() ? integer_code(r, r.neutral_zero_point) : 0;
  if (e.nan) return {store_scale(r, std::numeric_limits<float>::quiet_NaN()), neutral};
  const bool asymmetric = r.method == ScaleMethod::kMinMax;
  // The range: [min(x, 0), max(x, 0)] (asymmetric) or max|x| (symmetric); no element: all zeros.
  const float low = std::min(e.min, 0.0f);
  const float high = std::max(e.max, 0.0f);
  const float extent = asymmetric ? high - low : std::max(-low, high);
  if (extent == 0.0f) return {store_scale(r, 1.0f), neutral};
  if (!std::isfinite(low) || !std::isfinite(high)) {
    return {store_scale(r, std::numeric_limits<float>::infinity()), neutral};
  }
  // A finite range: the scale in float32, rounded to the scale type, saturated at its largest
  // finite value and kept at or above its smallest positive one, so that x / scale stays finite
  // for finite x and the scale is never zero.
  const float scale32 = extent / r.divisor;
  uint32_t code;
  float scale;
  if (r.scale->type == ElementType::kFloat32) {
    scale = std::isfinite(scale32) ? scale32 : std::numeric_limits<float>::max();
    scale = std::max(scale, std::numeric_limits<float>::denorm_min());
    code = std::bit_cast<uint32_t>(scale);
  } else {
    code = codec::encode_float(*r.scale, scale32, codec::Overflow::kSaturate);
    if (code == 0) code = 1;  // the smallest positive subnormal (float16 and bfloat16: code 1)
    scale = static_cast<float>(codec::decode(*r.scale, code));
  }
  if (!asymmetric || q.is_float()) return {code, neutral};
  // zero point = qmin - rmin / scale in float32, saturated, then rounded half to even.
  const float initial = r.qmin - low / scale;
  const double clamped = std::clamp(static_cast<double>(initial), r.zp_lowest, r.zp_highest);
  // (Rounding in the default mode, nearest-even, as the kernels round; the range is exact in double.)
  return {code, integer_code(r, std::nearbyint(clamped))};
}

// The rules as the vector finish takes them: float32 scales of integer types whose range is exact
// in float32 (<= 16 bits), and the MX methods with e8m0 scales; kNone leaves every group to finish().
kernels::FinishConstants vector_finish(const Rules& r) {
  using kernels::VectorFinish;
  kernels::FinishConstants c;
  const ElementTypeInfo& q = *r.quantized;
  if (is_mx(r.method)) {
    if (r.scale->type != ElementType::kFloat8E8M0) return c;
    switch (r.method) {
      case ScaleMethod::kMxFloor: c.kind = VectorFinish::kMxFloor; break;
      case ScaleMethod::kMxCeil: c.kind = VectorFinish::kMxCeil; break;
      case ScaleMethod::kMxEven: c.kind = VectorFinish::kMxEven; break;
      default: c.kind = VectorFinish::kMxRceil; break;
    }
    c.mx_emax = r.mx_emax;
    c.mx_mantissa_bits = r.mx_mantissa_bits;
    c.mx_max = r.mx_max;
    return c;
  }
  if (!q.is_integer() || q.bits > 16 || r.scale->type != ElementType::kFloat32) return c;
  c.kind = r.method == ScaleMethod::kMinMax ? VectorFinish::kMinMax : VectorFinish::kSymmetric;
  c.divisor = r.divisor;
  c.qmin = r.qmin;
  c.zp_lowest = static_cast<float>(r.zp_lowest);
  c.zp_highest = static_cast<float>(r.zp_highest);
  c.neutral_zero_point = integer_code(r, r.neutral_zero_point);
  c.code_mask = static_cast<uint32_t>((uint64_t{1} << q.bits) - 1);
  return c;
}

// --- Reductions over the geometry ------------------------------------------------------------

// Groups per row of a contiguous geometry, and the element where group `group` starts (a row's
// last group may be short; group_start(group_count) is the element count).
uint64_t groups_per_row(const Geometry& g) { return (g.row + g.row_block - 1) / g.row_block; }

uint64_t group_start(const Geometry& g, uint64_t group) {
  const uint64_t per_row = groups_per_row(g);
  return group / per_row * g.row + std::min(g.row, group % per_row * g.row_block);
}

// Extremes of groups [first, last) of a contiguous geometry (each group one stretch of x), into
// out's arrays from index 0.
void reduce_contiguous_groups(const TensorView& x, const Geometry& g, uint64_t first, uint64_t last,
                              const kernels::GroupExtremes& out) {
  const uint64_t per_row = groups_per_row(g);
  uint64_t group = first;
  while (group < last) {
    // The groups of one row at a time: reduce_groups cuts a stretch into equal groups.
    const uint64_t take = std::min(last - group, per_row - group % per_row);
    const uint64_t begin = group_start(g, group);
    const uint64_t end = group_start(g, group + take);  // the row's end when take reaches it
    const uint64_t at = group - first;
    kernels::reduce_groups(x.type, x.data, begin, end - begin, g.row_block, {out.min + at, out.max + at, out.nan + at});
    group += take;
  }
}

// Extremes as the arrays write_groups reads.
struct ExtremesArrays {
  std::vector<float> min, max;
  std::vector<uint8_t> nan;

  explicit ExtremesArrays(uint64_t count) : min(count), max(count), nan(count) {}
  kernels::GroupExtremes view() { return {min.data(), max.data(), nan.data()}; }
};

// Blocked along an axis with inner > 1, block `ob` (o * blocks + b) gathers x[o, a, i] for a in
// block b, one group per i: the extremes of groups [ob * inner + i0, ... + width) into out's
// arrays from index 0, each column of the block's rows reduced in registers.
void reduce_block_columns(const TensorView& x, const Geometry& g, uint64_t ob, uint64_t i0, uint64_t width,
                          const kernels::GroupExtremes& out) {
  const uint64_t o = ob / g.blocks, b = ob % g.blocks;
  const uint64_t first_row = b * g.block;
  const uint64_t rows = std::min(g.axis_dim, first_row + g.block) - first_row;
  kernels::reduce_columns(x.type, x.data, (o * g.axis_dim + first_row) * g.inner + i0, rows, g.inner, width, out);
}

// Blocked along an axis with inner > 1, threaded: group (o, b, i) gathers x[o, a, i] for a in
// block b, and the rows of a block accumulate element-wise over tiles of kTile columns.
// per_tile(first, width, extremes) runs for each tile with groups [first, first + width) reduced
// into `extremes` from index 0. A task's tiles are consecutive units (block, tile), so the groups
// a tile finishes are one range starting at a multiple of kTile past a block's first group.
template <class PerTile>
void for_each_block_tile(const TensorView& x, const Geometry& g, const ParallelFor& host, PerTile&& per_tile) {
  constexpr uint64_t kTile = 4096;
  const uint64_t tiles = (g.inner + kTile - 1) / kTile;
  const uint64_t units = g.outer * g.blocks * tiles;
  const uint64_t per_unit = std::max<uint64_t>(1, std::min(g.inner, kTile) * g.block);
  const uint64_t tasks = exec::task_count(host, units, std::max<uint64_t>(1, kMinElementsPerTask / per_unit));
  const uint64_t size = (units + tasks - 1) / tasks;
  exec::parallel_tasks(host, tasks, [&](uint64_t t) {
    ExtremesArrays tile_extremes(std::min(g.inner, kTile));
    for (uint64_t unit = t * size; unit < std::min(units, (t + 1) * size); ++unit) {
      const uint64_t tile = unit % tiles;
      const uint64_t ob = unit / tiles;  // o * blocks + b
      const uint64_t i0 = tile * kTile, width = std::min(kTile, g.inner - i0);
      reduce_block_columns(x, g, ob, i0, width, tile_extremes.view());
      per_tile(ob * g.inner + i0, width, tile_extremes.view());
    }
  });
}

// Every group's extremes (the first pass), threaded, for the geometries for_each_chunk does not
// take: per-tensor and groups that are not contiguous.
std::vector<Extremes> reduce_all(const TensorView& x, const Geometry& g, const ParallelFor& host) {
  std::vector<Extremes> result(g.group_count);
  if (g.element_count == 0) return result;
  if (g.granularity == Granularity::kPerTensor) {
    const uint64_t tasks = exec::task_count(host, g.element_count, kMinElementsPerTask);
    std::vector<Extremes> partial(tasks);
    const uint64_t size = (g.element_count + tasks - 1) / tasks;
    exec::parallel_tasks(host, tasks, [&](uint64_t t) {
      const uint64_t begin = t * size;
      const uint64_t end = std::min(g.element_count, begin + size);
      if (begin < end) kernels::reduce_extremes(x.type, x.data, begin, end - begin, &partial[t]);
    });
    for (const Extremes& p : partial) result[0].merge(p);
    return result;
  }
  if (g.granularity == Granularity::kBlocked) {
    for_each_block_tile(x, g, host, [&](uint64_t first, uint64_t width, const kernels::GroupExtremes& extremes) {
      for (uint64_t i = 0; i < width; ++i) {
        result[first + i] = Extremes{extremes.min[i], extremes.max[i], extremes.nan[i] != 0};
      }
    });
    return result;
  }
  // Per-axis with outer > 1: group a gathers x[o, a, :] for every o. Tasks take ranges of o, each
  // into its own partial results, merged at the end.
  const uint64_t slab = g.axis_dim * g.inner;
  const uint64_t tasks = exec::task_count(host, g.outer, std::max<uint64_t>(1, kMinElementsPerTask / std::max<uint64_t>(slab, 1)));
  const uint64_t size = (g.outer + tasks - 1) / tasks;
  std::vector<std::vector<Extremes>> partial(tasks, std::vector<Extremes>(g.axis_dim));
  constexpr uint64_t kRowReduce = 16;  // rows this long reduce to one value; shorter ones accumulate
  exec::parallel_tasks(host, tasks, [&](uint64_t t) {
    std::vector<Extremes>& mine = partial[t];
    const uint64_t o_end = std::min(g.outer, (t + 1) * size);
    if (g.inner >= kRowReduce) {
      for (uint64_t o = t * size; o < o_end; ++o) {
        for (uint64_t a = 0; a < g.axis_dim; ++a) {
          kernels::reduce_extremes(x.type, x.data, (o * g.axis_dim + a) * g.inner, g.inner, &mine[a]);
        }
      }
      return;
    }
    std::vector<float> mins(slab, std::numeric_limits<float>::infinity());
    std::vector<float> maxs(slab, -std::numeric_limits<float>::infinity());
    std::vector<uint32_t> nans(slab, 0u);
    for (uint64_t o = t * size; o < o_end; ++o) {
      kernels::accumulate_extremes(x.type, x.data, o * slab, slab, mins.data(), maxs.data(), nans.data());
    }
    for (uint64_t j = 0; j < slab; ++j) mine[j / g.inner].merge(Extremes{mins[j], maxs[j], nans[j] != 0});
  });
  for (const std::vector<Extremes>& p : partial) {
    for (uint64_t a = 0; a < g.axis_dim; ++a) result[a].merge(p[a]);
  }
  return result;
}

// --- Checks of the caller's tensors ------------------------------------------------------------

Status check_x(const char* op, const TensorView& x, uint64_t* count) {
  if (Status s = plan::check_view(op, "x", x, count); !s.ok()) return s;
  if (x.type != ElementType::kFloat32 && x.type != ElementType::kFloat16 && x.type != ElementType::kBfloat16) {
    return Status::invalid_argument(std::string(op) + ": x has type " + type_text(x.type) +
                                    "; scales come from float32, float16 or bfloat16 data");
  }
  return {};
}

Status check_output(const char* op, const char* role, const MutableTensorView& view, ElementType type,
                    std::span<const int64_t> shape, uint64_t count) {
  if (view.type != type) {
    return Status::invalid_argument(std::string(op) + ": " + role + " has type " + type_text(view.type) + " but must be " +
                                    std::string(name(type)));
  }
  if (!std::equal(view.shape.begin(), view.shape.end(), shape.begin(), shape.end())) {
    return Status::invalid_argument(std::string(op) + ": " + role + " has shape " + plan::shape_string(view.shape) +
                                    " but must have shape " + plan::shape_string(shape));
  }
  if (count > 0 && view.data == nullptr) {
    return Status::invalid_argument(std::string(op) + ": " + role + " is null but has " + std::to_string(count) + " elements");
  }
  return {};
}

bool zero_point_can_be_nonzero(const Rules& r) {
  return r.quantized->is_integer() && (r.method == ScaleMethod::kMinMax || !r.quantized->is_signed);
}

struct Prepared {
  Rules rules;
  Geometry geometry;
};

Result<Prepared> prepare(const char* op, const TensorView& x, const QparamsOptions& options, const MutableTensorView& scale,
                         const MutableTensorView* zero_point) {
  uint64_t count = 0;
  if (Status s = check_x(op, x, &count); !s.ok()) return s;
  Result<Rules> rules = make_rules(options);
  if (!rules.ok()) return rules.status();
  Result<Geometry> geometry = make_geometry(x.shape, options);
  if (!geometry.ok()) return geometry.status();
  const Geometry& g = geometry.value();
  if (Status s = check_output(op, "scale", scale, options.scale_type, g.scale_shape, g.group_count); !s.ok()) return s;
  if (zero_point != nullptr) {
    if (Status s = check_output(op, "zero_point", *zero_point, options.quantized_type, g.scale_shape, g.group_count); !s.ok()) {
      return s;
    }
  } else if (zero_point_can_be_nonzero(rules.value())) {
    return Status::invalid_argument(std::string(op) + ": method " + method_name(options.method) + " gives " +
                                    std::string(name(options.quantized_type)) +
                                    " nonzero zero points; pass a zero_point tensor to receive them");
  }
  return Prepared{rules.value(), g};
}

// Stores codes[0, count) as elements [first, first + count) of `view` (type t): whole bytes
// directly; packed 4/2-bit codes a byte at a time (low bits first) where all of a byte's codes are
// here, and through the codec's read-modify-write at the ends. Codes hold only t's bits.
void store_codes(const MutableTensorView& view, const ElementTypeInfo& t, uint64_t first, const uint32_t* codes,
                 uint64_t count) {
  auto* bytes = static_cast<unsigned char*>(view.data);
  if (t.is_packed() && view.layout == SubByteLayout::kPacked) {
    const uint64_t per_byte = static_cast<uint64_t>(t.elements_per_byte());
    uint64_t i = 0;
    for (; i < count && (first + i) % per_byte != 0; ++i) codec::store_code(view.data, t, first + i, codes[i]);
    unsigned char* out = bytes + (first + i) / per_byte;  // (one division, not one per byte)
    // The two widths spelled out: with the width a variable, this loop was a sixth of
    // compute_qparams' time for int4 blocks of 32 (64K in cache).
    if (per_byte == 2) {
      for (; i + 2 <= count; i += 2) *out++ = static_cast<unsigned char>(codes[i] | codes[i + 1] << 4);
    } else {
      for (; i + 4 <= count; i += 4) {
        *out++ = static_cast<unsigned char>(codes[i] | codes[i + 1] << 2 | codes[i + 2] << 4 | codes[i + 3] << 6);
      }
    }
    for (; i < count; ++i) codec::store_code(view.data, t, first + i, codes[i]);
    return;
  }
  switch (t.is_packed() ? 1 : t.bytes_per_element()) {
    case 1:
      for (uint64_t i = 0; i < count; ++i) bytes[first + i] = static_cast<uint8_t>(codes[i]);
      return;
    case 2:
      for (uint64_t i = 0; i < count; ++i) {
        const uint16_t narrow = static_cast<uint16_t>(codes[i]);
        std::memcpy(bytes + (first + i) * 2, &narrow, sizeof narrow);
      }
      return;
    default: std::memcpy(bytes + first * 4, codes, count * 4); return;
  }
}

// Codes of groups [0, count) (at most kFinishBatch): the vector finish under `constants`, then
// finish() for the groups it leaves (NaN, infinite and overflowing ranges; all of them for kNone).
constexpr uint64_t kFinishBatch = 512;  // codes on the stack, in L1

void finish_codes(const Rules& r, const kernels::FinishConstants& constants, const kernels::GroupExtremes& extremes,
                  uint64_t count, uint32_t* scale_codes, uint32_t* zero_point_codes) {
  uint8_t special[kFinishBatch];
  kernels::finish_groups(constants, extremes, count, scale_codes, zero_point_codes, special);
  for (uint64_t i = 0; i < count; ++i) {
    // Special groups are rare: clear flags are skipped eight at a time (a byte per group was 6% of
    // compute_qparams for int4 blocks of 32).
    for (uint64_t word; i + 8 <= count; i += 8) {
      std::memcpy(&word, special + i, 8);
      if (word != 0) break;
    }
    if (i == count) break;
    if (special[i] == 0) continue;
    const Finished f = finish(r, Extremes{extremes.min[i], extremes.max[i], extremes.nan[i] != 0});
    scale_codes[i] = f.scale_code;
    zero_point_codes[i] = f.zero_point_code;
  }
}

// Finishes groups [first, first + count) from their extremes (index 0 of `extremes` is group
// `first`) and writes their scales and zero points.
void write_groups(const Rules& r, const kernels::GroupExtremes& extremes, uint64_t first, uint64_t count,
                  const MutableTensorView& scale, const MutableTensorView* zero_point) {
  const kernels::FinishConstants constants = vector_finish(r);
  uint32_t scale_codes[kFinishBatch], zero_point_codes[kFinishBatch];
  for (uint64_t done = 0; done < count; done += kFinishBatch) {
    const uint64_t n = std::min(kFinishBatch, count - done);
    const kernels::GroupExtremes part{extremes.min + done, extremes.max + done, extremes.nan + done};
    finish_codes(r, constants, part, n, scale_codes, zero_point_codes);
    store_codes(scale, *r.scale, first + done, scale_codes, n);
    if (zero_point != nullptr) store_codes(*zero_point, *r.quantized, first + done, zero_point_codes, n);
  }
}

// Groups per byte of the zero points (packed 4/2-bit ones share bytes; else 1).
uint64_t zero_points_per_byte(const MutableTensorView* zero_point) {
  if (zero_point == nullptr || zero_point->layout != SubByteLayout::kPacked) return 1;
  return static_cast<uint64_t>(info(zero_point->type).elements_per_byte());
}

// What a chunk's quantization does for the task's next chunk (null fields: nothing): reduce it
// (kernels::RangeBuffers::side_reduction) or fetch its x toward the cache (RangeBuffers::prefetch).
struct NextChunk {
  const kernels::SideReduction* side = nullptr;
  const void* prefetch = nullptr;
  uint64_t prefetch_bytes = 0;
};

// A contiguous geometry's groups in chunks of at most kCacheChunkElements elements (or one group),
// threaded: per_chunk(first, last, extremes, next) runs after groups [first, last) are reduced into
// `extremes`, while their stretch of x is in cache. Task boundaries fall on multiples of
// `alignment` groups (zero_points_per_byte), so no byte of packed zero points has two writers.
// With `ahead`, a task reduces only its first chunk itself: next.side then names the next chunk's
// reduction (into the other of two arrays; null after the last chunk), which per_chunk must run,
// by kernels::execute_range beside its quantization. Without, next.prefetch names the next
// chunk's x, for per_chunk to pass on (or ignore). `ahead` needs every group to be whole and a
// multiple of 16 elements.
template <class PerChunk>
void for_each_chunk(const TensorView& x, const Geometry& g, const ParallelFor& host, uint64_t alignment, bool ahead,
                    PerChunk&& per_chunk) {
  const uint64_t group_elements = std::min(g.row, g.row_block);
  const uint64_t element_bytes = info(x.type).bits / 8;  // float x: whole bytes
  const uint64_t groups_per_chunk = std::max<uint64_t>(1, kCacheChunkElements / group_elements);
  const uint64_t tasks = exec::task_count(host, g.group_count, std::max<uint64_t>(1, kMinElementsPerTask / group_elements));
  const uint64_t size = ((g.group_count + tasks - 1) / tasks + alignment - 1) / alignment * alignment;
  exec::parallel_tasks(host, tasks, [&](uint64_t t) {
    const uint64_t task_end = std::min(g.group_count, (t + 1) * size);
    if (t * size >= task_end) return;
    const uint64_t most = std::min(groups_per_chunk, task_end - t * size);
    ExtremesArrays first_arrays(most), second_arrays(ahead ? most : 0);
    ExtremesArrays* current = &first_arrays;
    ExtremesArrays* next = &second_arrays;
    for (uint64_t first = t * size; first < task_end;) {
      const uint64_t last = std::min(task_end, first + groups_per_chunk);
      const uint64_t next_last = std::min(task_end, last + groups_per_chunk);
      if (!ahead) {
        reduce_contiguous_groups(x, g, first, last, current->view());
        NextChunk next_chunk;
        next_chunk.prefetch = static_cast<const char*>(x.data) + group_start(g, last) * element_bytes;
        next_chunk.prefetch_bytes = (group_start(g, next_last) - group_start(g, last)) * element_bytes;
        per_chunk(first, last, current->view(), next_chunk);
      } else {
        if (first == t * size) reduce_contiguous_groups(x, g, first, last, current->view());
        const kernels::SideReduction side{x.type, x.data, group_start(g, last), group_start(g, next_last), group_elements,
                                          next->view()};
        per_chunk(first, last, current->view(), NextChunk{next_last > last ? &side : nullptr});
        std::swap(current, next);
      }
      first = last;
    }
  });
}

// Packed zero points share bytes between groups: their padding is zeroed first, and tasks own
// whole bytes (for_each_chunk) or the finish runs on the calling thread (reduce_all's geometries).
void zero_packed_padding(const MutableTensorView& view, uint64_t count) {
  const ElementTypeInfo& t = info(view.type);
  if (t.is_packed() && view.layout == SubByteLayout::kPacked && count > 0) {
    static_cast<unsigned char*>(view.data)[storage_bytes(view.type, count) - 1] = 0;
  }
}

}  // namespace

Result<std::vector<int64_t>> qparams_shape(std::span<const int64_t> x_shape, const QparamsOptions& options) {
  Result<Geometry> g = make_geometry(x_shape, options);
  if (!g.ok()) return g.status();
  return g.value().scale_shape;
}

Status compute_qparams(const TensorView& x, const QparamsOptions& options, const MutableTensorView& scale,
                       const MutableTensorView* zero_point, const ExecuteOptions& execution) {
  Result<Prepared> prepared = prepare("compute_qparams", x, options, scale, zero_point);
  if (!prepared.ok()) return prepared.status();
  const Rules& r = prepared.value().rules;
  const Geometry& g = prepared.value().geometry;
  if (zero_point != nullptr) zero_packed_padding(*zero_point, g.group_count);
  if (g.element_count > 0 && g.granularity == Granularity::kBlocked && !g.contiguous &&
      g.inner % zero_points_per_byte(zero_point) == 0) {
    // Blocks along a non-last axis: each tile's groups are finished by the task that reduced them,
    // while their extremes are in L1 (on the calling thread after the reduction, the finish and
    // the copy into arrays were a quarter of the time for int8 blocks of 32 along the first axis
    // of [4096, 4096]). Tiles start kTile (a multiple of 4) columns into a block's groups, so
    // with inner a multiple of the zero points per byte no byte has two writers.
    for_each_block_tile(x, g, execution.parallel_for,
                        [&](uint64_t first, uint64_t width, const kernels::GroupExtremes& extremes) {
                          write_groups(r, extremes, first, width, scale, zero_point);
                        });
    return {};
  }
  if (g.element_count == 0 || g.granularity == Granularity::kPerTensor || !g.contiguous) {
    const std::vector<Extremes> extremes = reduce_all(x, g, execution.parallel_for);
    ExtremesArrays arrays(g.group_count);
    for (uint64_t i = 0; i < g.group_count; ++i) {
      arrays.min[i] = extremes[i].min;
      arrays.max[i] = extremes[i].max;
      arrays.nan[i] = extremes[i].nan ? 1 : 0;
    }
    write_groups(r, arrays.view(), 0, g.group_count, scale, zero_point);
    return {};
  }
  // Contiguous groups: each task finishes its own groups right after reducing them.
  const auto finish_chunk = [&](uint64_t first, uint64_t last, const kernels::GroupExtremes& extremes, const NextChunk&) {
    write_groups(r, extremes, first, last - first, scale, zero_point);
  };
  for_each_chunk(x, g, execution.parallel_for, zero_points_per_byte(zero_point), false, finish_chunk);
  return {};
}

Status dynamic_quantize(const TensorView& x, const QparamsOptions& options, const MutableTensorView& y,
                        const MutableTensorView& scale, const MutableTensorView* zero_point,
                        const ExecuteOptions& execution) {
  constexpr const char* op = "dynamic_quantize";
  Result<Prepared> prepared = prepare(op, x, options, scale, zero_point);
  if (!prepared.ok()) return prepared.status();
  const Rules& r = prepared.value().rules;
  const Geometry& g = prepared.value().geometry;
  const ElementTypeInfo& q = *r.quantized;
  if (q.is_integer() && q.bits == 32) {
    return Status::invalid_argument(std::string(op) + ": quantized_type " + std::string(q.name) +
                                    " is not an output of QuantizeLinear (compute_qparams gives its scales)");
  }
  if (Status s = check_output(op, "y", y, options.quantized_type, x.shape, g.element_count); !s.ok()) return s;
  // The quantize plan reads the scales and zero points this call writes. Float types' zero points
  // are +0 codes, which the planner checks: it is given zeros of this call's own, and the caller's
  // are written only once the plan is accepted (a refused call leaves every output alone).
  const TensorView scale_in{scale.type, scale.shape, scale.data, scale.layout};
  TensorView zero_point_in =
      zero_point != nullptr ? TensorView{zero_point->type, zero_point->shape, zero_point->data, zero_point->layout} : TensorView{};
  const bool float_zero_points = zero_point != nullptr && q.is_float();
  std::vector<unsigned char> float_zero_point_codes;
  if (float_zero_points) {
    float_zero_point_codes.assign(storage_bytes(q.type, g.group_count, zero_point->layout), 0);
    zero_point_in.data = float_zero_point_codes.data();
  }
  QuantizeLinearAttributes attributes;
  attributes.axis = g.granularity == Granularity::kPerTensor ? 1 : g.axis;
  attributes.block_size = g.granularity == Granularity::kBlocked ? static_cast<int64_t>(g.block) : 0;
  if (zero_point == nullptr) attributes.output_dtype = static_cast<int64_t>(options.quantized_type);
  Result<Plan> plan = plan_quantize_linear(x, scale_in, zero_point != nullptr ? &zero_point_in : nullptr, attributes);
  if (!plan.ok()) return Status::invalid_argument(std::string(op) + ": " + plan.status().message());
  if (!float_zero_point_codes.empty()) std::memset(zero_point->data, 0, float_zero_point_codes.size());
  // No element: no code to write, but the groups (a per-tensor one, or those of zero-length blocks)
  // still get compute_qparams' scales, as the two calls composed would give.
  if (g.element_count == 0) return compute_qparams(x, options, scale, zero_point, execution);
  if (zero_point != nullptr) zero_packed_padding(*zero_point, g.group_count);

  // One pass where each group is a contiguous stretch that fits in cache and, for packed y, group
  // boundaries fall on whole bytes of y (packed zero points: for_each_chunk's task boundaries).
  const uint64_t group_elements = std::min(g.row, g.row_block);
  const bool packed_y = q.is_packed() && y.layout == SubByteLayout::kPacked;
  const bool byte_aligned = !packed_y || (g.row % 8 == 0 && (g.row_block % 8 == 0 || g.row_block >= g.row));
  const bool one_pass = g.granularity != Granularity::kPerTensor && g.contiguous && group_elements <= kCacheChunkElements &&
                        byte_aligned;
  // Blocks along a non-last axis: block b of outer index o is a contiguous slab of x (its rows,
  // `inner` elements each, one group per column). Where a slab fits in cache, each is reduced
  // column by column and quantized while there; task boundaries between slabs fall on whole
  // bytes of packed y and packed zero points.
  const uint64_t slab_elements = std::min(g.block, g.axis_dim) * g.inner;  // a block may exceed the axis
  const bool slab_pass = g.granularity == Granularity::kBlocked && g.inner > 1 && slab_elements <= kCacheSlabElements &&
                         (!packed_y || g.inner % 8 == 0) && g.inner % zero_points_per_byte(zero_point) == 0;
  if (!one_pass && !slab_pass) {
    if (Status s = compute_qparams(x, options, scale, zero_point, execution); !s.ok()) return s;
    ExecuteOptions run = execution;
    return execute(plan.value(), y, run);
  }
  if (packed_y) static_cast<unsigned char*>(y.data)[storage_bytes(y.type, g.element_count) - 1] = 0;
  const Layout canonical = exec::canonical_layout(plan.value().layout);
  // Float x divided in float32 to integer codes of <= 8 bits with float32 scales, or to float8 /
  // float4 codes with MX scales: loops that reduce the next groups between the current groups'
  // divisions, the scales and zero points going from the vector finish's registers to the
  // divisions (kernels::dynamic_quantize_groups for short whole groups; dynamic_quantize_slabs
  // for slabs). What they leave to the general path (a NaN, an infinite or overflowing range, each
  // task's last groups, a slab's last columns) comes back through their fallback, which does what
  // the general path below does for those groups.
  const kernels::FinishConstants constants = vector_finish(r);
  const bool loop_codes = plan.value().precision == Precision::kFloat32 &&
                          ((q.is_integer() && q.bits <= 8 && kernels::is_integer_finish(constants.kind)) ||
                           (q.is_float() && (q.bits == 8 || q.type == ElementType::kFloat4E2M1) &&  // float8, float4
                            kernels::is_mx_finish(constants.kind)));
  struct Fallback {
    const TensorView& x;
    const Geometry& g;
    const Rules& r;
    const MutableTensorView& scale;
    const MutableTensorView* zero_point;
    const Plan& plan;
    const Layout& canonical;
    const MutableTensorView& y;
  } fallback{x, g, r, scale, zero_point, plan.value(), canonical, y};
  kernels::DynamicGroups d;
  d.finish = constants;
  d.x_type = x.type;
  d.x = x.data;
  d.y_type = &q;
  d.y = y.data;
  d.y_layout = y.layout;
  d.y_bytes = storage_bytes(q.type, plan.value().element_count, y.layout);
  d.scales = scale.data;
  // Float codes' zero points are the +0 codes written above.
  d.zero_points = zero_point != nullptr && q.is_integer() ? zero_point->data : nullptr;
  d.saturate = plan.value().saturate;
  d.add_zero_point = plan.value().apply_zero_point;
  d.zero_point_layout = zero_point != nullptr ? zero_point->layout : SubByteLayout::kPacked;
  d.fallback_context = &fallback;
  if (!one_pass) {
    const uint64_t slabs = g.outer * g.blocks;
    const uint64_t element_bytes = info(x.type).bits / 8;  // float x: whole bytes
    const auto slab_start = [&](uint64_t ob) {  // slab_start(slabs) is the element count
      const uint64_t o = ob / g.blocks, b = ob % g.blocks;
      return (o * g.axis_dim + std::min(g.axis_dim, b * g.block)) * g.inner;
    };
    const uint64_t tasks = exec::task_count(execution.parallel_for, slabs, std::max<uint64_t>(1, kMinElementsPerTask / slab_elements));
    const uint64_t size = (slabs + tasks - 1) / tasks;
    d.inner = g.inner;
    d.axis_dim = g.axis_dim;
    d.block = g.block;
    d.blocks = g.blocks;
    if (loop_codes && kernels::dynamic_slabs_take(d)) {
      // Groups of one slab or more: slab by slab, each slab's columns [c0, c1) reduced, finished,
      // then quantized row by row.
      d.fallback = [](void* context, uint64_t first, uint64_t last) {
        const Fallback& f = *static_cast<const Fallback*>(context);
        const Geometry& geometry = f.g;
        ExtremesArrays extremes(std::min(last - first, geometry.inner));
        for (uint64_t a = first; a < last;) {
          const uint64_t ob = a / geometry.inner, c0 = a % geometry.inner;
          const uint64_t c1 = std::min(geometry.inner, c0 + (last - a));
          reduce_block_columns(f.x, geometry, ob, c0, c1 - c0, extremes.view());
          write_groups(f.r, extremes.view(), a, c1 - c0, f.scale, f.zero_point);
          const uint64_t o = ob / geometry.blocks, b = ob % geometry.blocks;
          for (uint64_t row = b * geometry.block; row < std::min(geometry.axis_dim, (b + 1) * geometry.block); ++row) {
            const uint64_t row_start = (o * geometry.axis_dim + row) * geometry.inner;
            kernels::execute_range(f.plan, f.canonical, row_start + c0, row_start + c1, f.y);
          }
          a += c1 - c0;
        }
      };
      exec::parallel_tasks(execution.parallel_for, tasks, [&](uint64_t t) {
        const uint64_t first = t * size, last = std::min(slabs, (t + 1) * size);
        if (first < last) kernels::dynamic_quantize_slabs(d, first, last);
      });
      return {};
    }
    exec::parallel_tasks(execution.parallel_for, tasks, [&](uint64_t t) {
      ExtremesArrays extremes(g.inner);
      const uint64_t task_end = std::min(slabs, (t + 1) * size);
      for (uint64_t ob = t * size; ob < task_end; ++ob) {
        reduce_block_columns(x, g, ob, 0, g.inner, extremes.view());
        write_groups(r, extremes.view(), ob * g.inner, g.inner, scale, zero_point);
        kernels::RangeBuffers buffers;
        if (ob + 1 < task_end) {  // the next slab toward the cache while this one is quantized
          buffers.prefetch = static_cast<const char*>(x.data) + slab_start(ob + 1) * element_bytes;
          buffers.prefetch_bytes = (slab_start(ob + 2) - slab_start(ob + 1)) * element_bytes;
        }
        kernels::execute_range(plan.value(), canonical, slab_start(ob), slab_start(ob + 1), y, buffers);
      }
    });
    return {};
  }
  const uint64_t whole_groups_of = g.row % group_elements == 0 ? group_elements : 0;
  if (loop_codes && whole_groups_of != 0 && kernels::dynamic_groups_fit(whole_groups_of)) {
    d.group = whole_groups_of;
    d.fallback = [](void* context, uint64_t first, uint64_t last) {
      const Fallback& f = *static_cast<const Fallback*>(context);
      const uint64_t group = std::min(f.g.row, f.g.row_block);
      const uint64_t per_chunk = std::max<uint64_t>(1, kCacheChunkElements / group);
      ExtremesArrays extremes(std::min(per_chunk, last - first));
      for (uint64_t a = first; a < last; a += per_chunk) {
        const uint64_t b = std::min(last, a + per_chunk);
        reduce_contiguous_groups(f.x, f.g, a, b, extremes.view());
        write_groups(f.r, extremes.view(), a, b - a, f.scale, f.zero_point);
        kernels::execute_range(f.plan, f.canonical, group_start(f.g, a), group_start(f.g, b), f.y);
      }
    };
    // Tasks of whole batches (16 groups: every target's batch divides it), which also keeps
    // packed codes and zero points of different tasks in different bytes.
    const uint64_t tasks = exec::task_count(execution.parallel_for, g.group_count,
                                            std::max<uint64_t>(1, kMinElementsPerTask / whole_groups_of));
    const uint64_t size = ((g.group_count + tasks - 1) / tasks + 15) / 16 * 16;
    exec::parallel_tasks(execution.parallel_for, tasks, [&](uint64_t t) {
      const uint64_t first = t * size, last = std::min(g.group_count, (t + 1) * size);
      if (first < last) kernels::dynamic_quantize_groups(d, first, last);
    });
    return {};
  }
  const auto finish_and_quantize_chunk = [&](uint64_t first, uint64_t last, const kernels::GroupExtremes& extremes,
                                             const NextChunk& next) {
    write_groups(r, extremes, first, last - first, scale, zero_point);
    kernels::RangeBuffers buffers;
    buffers.side_reduction = next.side;
    buffers.prefetch = next.prefetch;
    buffers.prefetch_bytes = next.prefetch_bytes;
    kernels::execute_range(plan.value(), canonical, group_start(g, first), group_start(g, last), y, buffers);
  };
  // The next chunk's reduction rides along with this chunk's quantization when the groups are
  // whole and of whole vectors (the divider bounds the quantization; the reduction then costs
  // little more than its loads), on targets where that pays (kernels::side_reduction_pays: not
  // the 512-bit ones). Not for groups under 64 elements: there the quantizer's own per-group work
  // already fills the issue slots the divider leaves (measured on Zen 1: blocks of 32 ran slower
  // this way, 111 against 94 us for 64K int4 elements on one thread).
  const bool ahead = group_elements % 16 == 0 && group_elements >= 64 && g.row % group_elements == 0 &&
                     kernels::side_reduction_pays();
  for_each_chunk(x, g, execution.parallel_for, zero_points_per_byte(zero_point), ahead, finish_and_quantize_chunk);
  return {};
}

Status internal::finish_codes_for_test(const QparamsOptions& options, const kernels::GroupExtremes& extremes,
                                      uint64_t count, bool vector, uint32_t* scale_codes, uint32_t* zero_point_codes) {
  Result<Rules> rules = make_rules(options);
  if (!rules.ok()) return rules.status();
  const kernels::FinishConstants constants = vector ? vector_finish(rules.value()) : kernels::FinishConstants{};
  for (uint64_t done = 0; done < count; done += kFinishBatch) {
    const uint64_t n = std::min(kFinishBatch, count - done);
    const kernels::GroupExtremes part{extremes.min + done, extremes.max + done, extremes.nan + done};
    finish_codes(rules.value(), constants, part, n, scale_codes + done, zero_point_codes + done);
  }
  return {};
}

Status dynamic_quantize_linear(const TensorView& x, const MutableTensorView& y, float* y_scale, uint8_t* y_zero_point,
                               const ExecuteOptions& execution) {
  const std::string op = "DynamicQuantizeLinear-11";
  uint64_t count = 0;
  if (Status s = plan::check_view(op, "x", x, &count); !s.ok()) return s;
  if (x.type != ElementType::kFloat32) {
    return Status::invalid_argument(op + ": x has type " + type_text(x.type) + "; type constraint T1 allows float32 only");
  }
  if (count == 0) {
    return Status::invalid_argument(op + ": x has no elements (shape " + plan::shape_string(x.shape) +
                                    "), so its range is undefined (onnx.reference raises here too)");
  }
  if (y_scale == nullptr || y_zero_point == nullptr) {
    return Status::invalid_argument(op + ": y_scale and y_zero_point outputs must not be null");
  }
  if (Status s = check_output(op.c_str(), "y", y, ElementType::kUint8, x.shape, count); !s.ok()) return s;
  const Result<Geometry> g = make_geometry(x.shape, QparamsOptions{});  // per-tensor: one group
  if (!g.ok()) return g.status();
  const Extremes e = reduce_all(x, g.value(), execution.parallel_for)[0];
  // onnx.reference, in float32: maxx = max(0, max(x)), minx = min(0, min(x)) (NaN propagates);
  // scale = (maxx == minx ? 1 : maxx - minx) / 255; zero point = rint(clip(0 - minx / scale)),
  // where the clip is Python's min(255, max(0, ...)), which takes 255 for NaN.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float maxx = e.nan ? nan : std::max(e.max, 0.0f);
  const float minx = e.nan ? nan : std::min(e.min, 0.0f);
  const float scale = (maxx == minx ? 1.0f : maxx - minx) / 255.0f;
  const float initial = 0.0f - minx / scale;
  // Python: min(255, v) is 255 unless v < 255; max(0, m) is 0 unless m > 0.
  const float upper = initial < 255.0f ? initial : 255.0f;
  const float clipped = upper > 0.0f ? upper : 0.0f;
  const auto zero_point = static_cast<uint8_t>(codec::round_half_even(clipped));

  // The caller's scalars are written only once y is: a failed call leaves every output alone.
  const int64_t scalar_shape[1] = {1};
  const TensorView scale_view{ElementType::kFloat32, std::span<const int64_t>(scalar_shape, 0), &scale};
  const TensorView zero_point_view{ElementType::kUint8, std::span<const int64_t>(scalar_shape, 0), &zero_point};
  QuantizeLinearAttributes attributes;
  attributes.opset = 11;
  Result<Plan> plan = plan_quantize_linear(x, scale_view, &zero_point_view, attributes);
  if (!plan.ok()) return plan.status();
  if (Status s = execute(plan.value(), y, execution); !s.ok()) return s;
  *y_scale = scale;
  *y_zero_point = zero_point;
  return {};
}

}  // namespace qdq
