// The toolkit's C++ side: the SIMD extremes reductions on every Highway target against a scalar
// loop, and dynamic_quantize (its one-pass and two-pass paths, threaded) against compute_qparams
// followed by quantize_linear. The formulas themselves are checked against an independent numpy
// transcription in python/tests/test_toolkit.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/reduce.h"
#include "qdq/toolkit.hpp"
#include "toolkit/qparams_internal.h"
#include "types/codec.h"

namespace qdq {
namespace {

constexpr uint32_t kSeed = 20261122;

class ToolkitTargets : public ::testing::Test {
 protected:
  void TearDown() override { kernels::force_target(0); }
};

// Random float32 values with NaN, infinities, -0 and subnormals sprinkled in, stored as `type`.
std::vector<uint8_t> random_values(ElementType type, size_t n, std::mt19937& rng, std::vector<float>* as_float) {
  std::uniform_real_distribution<float> uniform(-100.0f, 100.0f);
  std::uniform_int_distribution<int> pick(0, 40);
  const ElementTypeInfo& t = info(type);
  std::vector<uint8_t> bytes(n * t.bytes_per_element());
  as_float->resize(n);
  for (size_t i = 0; i < n; ++i) {
    float v = uniform(rng);
    switch (pick(rng)) {
      case 0: v = std::numeric_limits<float>::quiet_NaN(); break;
      case 1: v = std::numeric_limits<float>::infinity(); break;
      case 2: v = -std::numeric_limits<float>::infinity(); break;
      case 3: v = -0.0f; break;
      case 4: v = 1e-40f; break;
      default: break;
    }
    uint32_t code = type == ElementType::kFloat32 ? std::bit_cast<uint32_t>(v)
                                                  : codec::encode_float(t, v, codec::Overflow::kInfOrNan);
    codec::store_code(bytes.data(), t, i, code);
    (*as_float)[i] = static_cast<float>(codec::load_value(bytes.data(), t, i));
  }
  return bytes;
}

kernels::Extremes scalar_extremes(const float* v, size_t n) {
  kernels::Extremes e;
  for (size_t i = 0; i < n; ++i) {
    if (std::isnan(v[i])) {
      e.nan = true;
      continue;
    }
    e.min = std::min(e.min, v[i]);
    e.max = std::max(e.max, v[i]);
  }
  return e;
}

// NaN counts as +0 in the kernels' min and max (documented in reduce.h): compare with that folded in.
void expect_same(const kernels::Extremes& got, kernels::Extremes want, const std::string& where) {
  if (want.nan) {
    want.min = std::min(want.min, 0.0f);
    want.max = std::max(want.max, 0.0f);
  }
  EXPECT_EQ(got.nan, want.nan) << where;
  EXPECT_EQ(got.min, want.min) << where;  // == on purpose: -0 and +0 may differ in sign only
  EXPECT_EQ(got.max, want.max) << where;
}

TEST_F(ToolkitTargets, ExtremesMatchAScalarLoopOnEveryTarget) {
  std::mt19937 rng(kSeed);
  for (int64_t target : kernels::supported_targets()) {
    kernels::force_target(target);
    const std::string name = kernels::target_name(target);
    for (ElementType type : {ElementType::kFloat32, ElementType::kFloat16, ElementType::kBfloat16}) {
      for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{16}, size_t{33}, size_t{100}, size_t{1000}}) {
        std::vector<float> values;
        const std::vector<uint8_t> bytes = random_values(type, n + 3, rng, &values);
        const std::string where = name + " " + std::string(qdq::name(type)) + " n=" + std::to_string(n);
        // From an unaligned start (element 3), across tails.
        kernels::Extremes got;
        kernels::reduce_extremes(type, bytes.data(), 3, n, &got);
        expect_same(got, scalar_extremes(values.data() + 3, n), where);
        // Groups of 5 (the last one short) and of 16 and 32 (whole vectors on every target).
        for (size_t group : {size_t{5}, size_t{16}, size_t{32}}) {
          const size_t count = (n + group - 1) / group;
          std::vector<float> mins(count), maxs(count);
          std::vector<uint8_t> nans(count);
          kernels::reduce_groups(type, bytes.data(), 3, n, group, {mins.data(), maxs.data(), nans.data()});
          for (size_t g = 0; g < count; ++g) {
            expect_same(kernels::Extremes{mins[g], maxs[g], nans[g] != 0},
                        scalar_extremes(values.data() + 3 + g * group, std::min<size_t>(group, n - g * group)),
                        where + " group of " + std::to_string(group) + " #" + std::to_string(g));
          }
        }
        // Element-wise accumulation of two rows.
        std::vector<float> mins(n, std::numeric_limits<float>::infinity()), maxs(n, -std::numeric_limits<float>::infinity());
        std::vector<uint32_t> nans(n, 0);
        std::vector<float> second;
        const std::vector<uint8_t> other = random_values(type, n, rng, &second);
        kernels::accumulate_extremes(type, bytes.data(), 3, n, mins.data(), maxs.data(), nans.data());
        kernels::accumulate_extremes(type, other.data(), 0, n, mins.data(), maxs.data(), nans.data());
        for (size_t j = 0; j < n; ++j) {
          const float pair[2] = {values[3 + j], second[j]};
          const kernels::Extremes e{mins[j], maxs[j], nans[j] != 0};
          expect_same(e, scalar_extremes(pair, 2), where + " column " + std::to_string(j));
        }
      }
    }
  }
}

// Column-wise extremes (blocks along a non-last axis): rows of `width` elements `stride` apart,
// from an unaligned start, across tile widths (4 vectors, 1 vector, single columns) and stretches
// of rows (one of 1024 columns, a short last one with an odd number of vectors); on clean
// data (the register tiles), data with NaN, infinities, -0 and subnormals (the tiles' re-check
// through Accumulator), and clean data with +inf and -inf in one column (a NaN check, no NaN).
TEST_F(ToolkitTargets, ColumnExtremesMatchAScalarLoopOnEveryTarget) {
  std::mt19937 rng(kSeed + 5);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (int64_t target : kernels::supported_targets()) {
    kernels::force_target(target);
    for (ElementType type : {ElementType::kFloat32, ElementType::kFloat16, ElementType::kBfloat16}) {
      for (size_t width : {size_t{1}, size_t{7}, size_t{16}, size_t{24}, size_t{70}, size_t{200}, size_t{2100}}) {
        for (size_t rows : {size_t{1}, size_t{5}, size_t{32}}) {
          const size_t stride = width + 3, n = 3 + rows * stride;
          for (int kind = 0; kind < 3; ++kind) {
            std::vector<float> values;
            std::vector<uint8_t> bytes = random_values(type, n, rng, &values);
            if (kind != 1) {  // clean: normal values, exact in every x type (stored, then read back)
              for (size_t i = 0; i < n; ++i) {
                const bool in_column = kind == 2 && rows > 1 && i >= 3 && (i - 3) % stride == width / 2;
                const bool first_row = i - 3 < stride, last_row = i - 3 >= (rows - 1) * stride;
                const float v = in_column && first_row  ? std::numeric_limits<float>::infinity()
                                : in_column && last_row ? -std::numeric_limits<float>::infinity()
                                                        : normal(rng);
                const ElementTypeInfo& t = info(type);
                codec::store_code(bytes.data(), t, i,
                                  type == ElementType::kFloat32 ? std::bit_cast<uint32_t>(v)
                                                                : codec::encode_float(t, v, codec::Overflow::kInfOrNan));
                values[i] = static_cast<float>(codec::load_value(bytes.data(), t, i));
              }
            }
            std::vector<float> mins(width), maxs(width);
            std::vector<uint8_t> nans(width);
            kernels::reduce_columns(type, bytes.data(), 3, rows, stride, width, {mins.data(), maxs.data(), nans.data()});
            for (size_t j = 0; j < width; ++j) {
              std::vector<float> column(rows);
              for (size_t r = 0; r < rows; ++r) column[r] = values[3 + r * stride + j];
              expect_same(kernels::Extremes{mins[j], maxs[j], nans[j] != 0}, scalar_extremes(column.data(), rows),
                          kernels::target_name(target) + " " + std::string(qdq::name(type)) + " kind " +
                              std::to_string(kind) + " width " + std::to_string(width) + " rows " +
                              std::to_string(rows) + " column " + std::to_string(j));
            }
          }
        }
      }
    }
  }
}

// Batches of whole-vector groups (16 groups at once on AVX-512, 8 on AVX2) on data without NaN or
// infinities, which take the batched fold; then one NaN, or +inf and -inf in different groups of
// one batch (whose summed check is NaN: the batch is reduced again group by group).
TEST_F(ToolkitTargets, BatchedGroupExtremesMatchAScalarLoopOnEveryTarget) {
  std::mt19937 rng(kSeed + 1);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  constexpr size_t kCount = 4096 + 37, kStart = 3;
  std::vector<float> clean(kStart + kCount);
  for (float& v : clean) v = normal(rng);
  std::uniform_int_distribution<size_t> position(kStart, kStart + kCount - 1);
  struct Case {
    const char* name;
    std::vector<float> values;
  };
  std::vector<Case> cases = {{"clean", clean}, {"one NaN", clean}, {"+inf and -inf apart", clean}};
  cases[1].values[position(rng)] = std::numeric_limits<float>::quiet_NaN();
  cases[2].values[kStart + 40] = std::numeric_limits<float>::infinity();
  cases[2].values[kStart + 300] = -std::numeric_limits<float>::infinity();
  for (int64_t target : kernels::supported_targets()) {
    kernels::force_target(target);
    for (const Case& c : cases) {
      for (size_t group : {size_t{16}, size_t{32}, size_t{64}, size_t{128}}) {
        const size_t groups = (kCount + group - 1) / group;
        std::vector<float> mins(groups), maxs(groups);
        std::vector<uint8_t> nans(groups);
        kernels::reduce_groups(ElementType::kFloat32, c.values.data(), kStart, kCount, group,
                               {mins.data(), maxs.data(), nans.data()});
        for (size_t g = 0; g < groups; ++g) {
          const size_t first = kStart + g * group;
          expect_same(kernels::Extremes{mins[g], maxs[g], nans[g] != 0},
                      scalar_extremes(c.values.data() + first, std::min(group, kStart + kCount - first)),
                      kernels::target_name(target) + " " + c.name + " group of " + std::to_string(group) + " #" +
                          std::to_string(g));
        }
      }
    }
  }
}

// Group extremes as the reductions give them (min <= max; a NaN group's range holds 0; an empty
// group +inf / -inf), from every edge of the finish and from random ranges of every magnitude.
struct ExtremesSample {
  std::vector<float> min, max;
  std::vector<uint8_t> nan;
};

ExtremesSample extremes_sample(std::mt19937& rng, double span) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kMax = std::numeric_limits<float>::max();
  const std::vector<float> edges = {0.0f, -0.0f, kInf, -kInf, kMax, -kMax, 3e38f, -3e38f, 1e38f, -2e38f,
                                    std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(),
                                    1e-40f, -1e-40f, std::numeric_limits<float>::min(), -std::numeric_limits<float>::min(),
                                    1e-38f, -3e-39f, 1.0f, -1.0f, 0.5f, 448.0f, 6.0f, -6.0f, 1e-30f, 65504.0f};
  ExtremesSample s;
  auto add = [&](float a, float b, bool nan) {
    if (b < a) std::swap(a, b);
    if (nan) {  // NaN counts as +0
      a = std::min(a, 0.0f);
      b = std::max(b, 0.0f);
    }
    s.min.push_back(a);
    s.max.push_back(b);
    s.nan.push_back(nan ? 1 : 0);
  };
  for (float a : edges) {
    for (float b : edges) {
      add(a, b, false);
      add(a, b, true);
    }
  }
  s.min.push_back(kInf);  // no element
  s.max.push_back(-kInf);
  s.nan.push_back(0);
  // Ranges of exactly `span` (scale 1): zero points qmin + k + 0.5 tie and round to even.
  for (float half : {0.5f, 1.5f, 2.5f, 3.5f}) {
    if (half < span) add(-half, static_cast<float>(span) - half, false);
  }
  std::uniform_int_distribution<int> exponent(-150, 128), pick(0, 9);
  std::uniform_real_distribution<float> mantissa(-2.0f, 2.0f);
  auto random_value = [&] { return pick(rng) == 0 ? 0.0f : std::ldexp(mantissa(rng), exponent(rng)); };
  for (int i = 0; i < 3001; ++i) {  // an odd count: the last groups are a partial vector
    const float a = random_value();
    add(a, pick(rng) < 3 ? a * 0.75f : random_value(), pick(rng) == 0);
  }
  return s;
}

TEST_F(ToolkitTargets, VectorFinishEqualsTheScalarFinishOnEveryTarget) {
  using E = ElementType;
  struct FinishCase {
    ElementType type;
    ScaleMethod method;
    ElementType scale_type;
  };
  std::vector<FinishCase> cases;
  for (E type : {E::kInt2, E::kUint2, E::kInt4, E::kUint4, E::kInt8, E::kUint8, E::kInt16, E::kUint16, E::kInt32,
                 E::kUint32}) {
    for (ScaleMethod method : {ScaleMethod::kMinMax, ScaleMethod::kSymmetric, ScaleMethod::kSymmetricRestricted}) {
      for (E scale_type : {E::kFloat32, E::kFloat16, E::kBfloat16}) cases.push_back({type, method, scale_type});
    }
  }
  for (E type : {E::kFloat8E4M3FN, E::kFloat8E4M3FNUZ, E::kFloat8E5M2, E::kFloat8E5M2FNUZ, E::kFloat4E2M1}) {
    for (ScaleMethod method : {ScaleMethod::kMxFloor, ScaleMethod::kMxCeil, ScaleMethod::kMxEven, ScaleMethod::kMxRceil}) {
      for (E scale_type : {E::kFloat8E8M0, E::kFloat32, E::kBfloat16}) cases.push_back({type, method, scale_type});
    }
    cases.push_back({type, ScaleMethod::kSymmetric, E::kFloat32});
  }
  std::mt19937 rng(kSeed + 2);
  for (int64_t target : kernels::supported_targets()) {
    kernels::force_target(target);
    for (const FinishCase& c : cases) {
      const ElementTypeInfo& q = info(c.type);
      ExtremesSample sample = extremes_sample(rng, q.max - q.lowest);
      const uint64_t n = sample.min.size();
      const kernels::GroupExtremes view{sample.min.data(), sample.max.data(), sample.nan.data()};
      QparamsOptions o;
      o.quantized_type = c.type;
      o.method = c.method;
      o.scale_type = c.scale_type;
      std::vector<uint32_t> scale(n), zero_point(n), want_scale(n), want_zero_point(n);
      ASSERT_TRUE(internal::finish_codes_for_test(o, view, n, true, scale.data(), zero_point.data()).ok());
      ASSERT_TRUE(internal::finish_codes_for_test(o, view, n, false, want_scale.data(), want_zero_point.data()).ok());
      const std::string where = kernels::target_name(target) + " " + std::string(name(c.type)) + " method " +
                                std::to_string(static_cast<int>(c.method)) + " scale " + std::string(name(c.scale_type));
      for (uint64_t i = 0; i < n; ++i) {
        ASSERT_EQ(scale[i], want_scale[i]) << where << " group " << i << " min " << sample.min[i] << " max "
                                           << sample.max[i] << " nan " << int{sample.nan[i]};
        ASSERT_EQ(zero_point[i], want_zero_point[i]) << where << " group " << i << " min " << sample.min[i] << " max "
                                                     << sample.max[i] << " nan " << int{sample.nan[i]};
      }
    }
  }
}

struct DynamicCase {
  ElementType type;
  ScaleMethod method;
  Granularity granularity;
  int64_t axis, block;
  std::vector<int64_t> shape;
  ElementType scale_type = ElementType::kFloat32;
  ElementType x_type = ElementType::kFloat32;
  // One element in `specials_every` (0: none) becomes a NaN, +inf or -inf, so that some groups
  // take the reductions' NaN re-check and others do not.
  uint32_t specials_every = 0;
  // Runs of 64 elements, one in `runs_every` (0: none), cycling through +0 and -0, +-3e38 (a
  // range whose extent overflows) and positive values only: whole groups the vector finish leaves
  // to the scalar one, and groups whose range is widened to 0.
  uint32_t runs_every = 0;
  // y's and the zero point's layout (one code per byte: numpy's 4- and 2-bit arrays).
  SubByteLayout layout = SubByteLayout::kPacked;
  // Float codes: also a zero-point tensor (its +0 codes; float4e2m1's plan then adds +0 to each
  // quotient, which turns -0 into +0).
  bool float_zero_point = false;
};

// dynamic_quantize == compute_qparams, then quantize_linear with what it gave.
void check_dynamic(const DynamicCase& c, std::mt19937& rng, const std::string& where) {
  uint64_t n = 1;
  for (int64_t d : c.shape) n *= static_cast<uint64_t>(d);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> x(n);
  for (float& v : x) v = normal(rng);
  if (c.specials_every != 0) {
    std::uniform_int_distribution<uint32_t> pick(0, 3 * c.specials_every - 1);
    const float specials[3] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity()};
    for (float& v : x) {
      const uint32_t p = pick(rng);
      if (p < 3) v = specials[p];
    }
  }
  if (c.runs_every != 0) {
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t run = i / 64;
      if (run % c.runs_every != 0) continue;
      switch (run / c.runs_every % 3) {
        case 0: x[i] = i % 2 == 0 ? 0.0f : -0.0f; break;
        case 1: x[i] = i % 2 == 0 ? 3e38f : -3e38f; break;
        default: x[i] = 1.0f + std::fabs(x[i]); break;
      }
    }
  }
  // x stored as its type (float16 and bfloat16 round the normal values; the specials survive).
  const ElementTypeInfo& xt = info(c.x_type);
  std::vector<uint8_t> x_bytes(n * xt.bytes_per_element());
  for (uint64_t i = 0; i < n; ++i) {
    const uint32_t code = c.x_type == ElementType::kFloat32 ? std::bit_cast<uint32_t>(x[i])
                                                            : codec::encode_float(xt, x[i], codec::Overflow::kInfOrNan);
    codec::store_code(x_bytes.data(), xt, i, code);
  }
  QparamsOptions o;
  o.quantized_type = c.type;
  o.method = c.method;
  o.granularity = c.granularity;
  o.axis = c.axis;
  o.block_size = c.block;
  o.scale_type = c.scale_type;
  const Result<std::vector<int64_t>> qshape = qparams_shape(c.shape, o);
  ASSERT_TRUE(qshape.ok()) << where << qshape.status().message();
  uint64_t groups = 1;
  for (int64_t d : qshape.value()) groups *= static_cast<uint64_t>(d);
  const bool has_zp = info(c.type).is_integer() || c.float_zero_point;
  std::vector<uint8_t> scale(groups * 4), zp(groups * 4 + 1), y(n * 4 + 1);
  std::vector<uint8_t> want_scale(scale.size()), want_zp(zp.size()), want_y(y.size());
  const TensorView xv{c.x_type, c.shape, x_bytes.data()};
  MutableTensorView zv{c.type, qshape.value(), zp.data(), c.layout};
  MutableTensorView want_zv{c.type, qshape.value(), want_zp.data(), c.layout};
  ASSERT_TRUE(dynamic_quantize(xv, o, {c.type, c.shape, y.data(), c.layout}, {o.scale_type, qshape.value(), scale.data()},
                               has_zp ? &zv : nullptr)
                  .ok())
      << where;
  ASSERT_TRUE(compute_qparams(xv, o, {o.scale_type, qshape.value(), want_scale.data()}, has_zp ? &want_zv : nullptr).ok())
      << where;
  QuantizeLinearAttributes a;
  a.axis = c.granularity == Granularity::kPerTensor ? 1 : c.axis;
  a.block_size = c.granularity == Granularity::kBlocked ? c.block : 0;
  if (!has_zp) a.output_dtype = static_cast<int64_t>(c.type);
  const TensorView sv{o.scale_type, qshape.value(), want_scale.data()};
  const TensorView zpv{c.type, qshape.value(), want_zp.data(), c.layout};
  ASSERT_TRUE(quantize_linear(xv, sv, has_zp ? &zpv : nullptr, a, {c.type, c.shape, want_y.data(), c.layout}).ok()) << where;
  EXPECT_EQ(scale, want_scale) << where;
  EXPECT_EQ(zp, want_zp) << where;
  EXPECT_EQ(y, want_y) << where;
}

TEST_F(ToolkitTargets, DynamicQuantizeEqualsQparamsThenQuantizeOnEveryTarget) {
  using E = ElementType;
  using G = Granularity;
  const std::vector<DynamicCase> cases = {
      {E::kInt4, ScaleMethod::kMinMax, G::kBlocked, -1, 32, {64, 4096}},        // one pass, threaded
      {E::kUint8, ScaleMethod::kSymmetric, G::kBlocked, 1, 96, {40, 1000}},     // one pass, short last block
      {E::kInt4, ScaleMethod::kMinMax, G::kBlocked, -1, 3, {8, 30}},            // packed, unaligned: two passes
      {E::kInt8, ScaleMethod::kSymmetric, G::kPerAxis, 0, 0, {300, 70}},        // per-axis along axis 0: one pass
      {E::kUint16, ScaleMethod::kMinMax, G::kPerAxis, 1, 0, {30, 70, 5}},       // per-axis, inner 5: accumulate
      {E::kInt8, ScaleMethod::kMinMax, G::kPerAxis, 1, 0, {4, 20, 100}},        // per-axis, rows reduce
      {E::kInt8, ScaleMethod::kSymmetricRestricted, G::kPerTensor, 0, 0, {200, 1001}},  // per-tensor: two passes
      {E::kInt2, ScaleMethod::kMinMax, G::kBlocked, 0, 4, {10, 9}},             // blocked along a non-last axis
      {E::kFloat8E4M3FN, ScaleMethod::kMxFloor, G::kBlocked, -1, 32, {33, 96}, E::kFloat8E8M0},
      {E::kFloat4E2M1, ScaleMethod::kMxRceil, G::kBlocked, -1, 32, {8, 320}, E::kFloat8E8M0},
      {E::kFloat8E5M2, ScaleMethod::kSymmetric, G::kPerAxis, 0, 0, {17, 50}, E::kBfloat16},
      // Groups of 64+ elements in tasks of several chunks: each chunk after a task's first is reduced
      // beside the previous one's quantization (RangeBuffers::side_reduction) on the targets where
      // kernels::side_reduction_pays (those under 512 bits); NaN and infinities
      // send some batches of groups through the re-check.
      {E::kInt8, ScaleMethod::kSymmetric, G::kBlocked, -1, 128, {64, 4096}, E::kFloat32, E::kFloat32, 5000},
      {E::kUint4, ScaleMethod::kMinMax, G::kBlocked, -1, 64, {48, 2048}, E::kFloat32, E::kFloat16, 3000},
      {E::kInt8, ScaleMethod::kMinMax, G::kPerAxis, 0, 0, {80, 2048}, E::kFloat32, E::kBfloat16, 20000},
      {E::kUint16, ScaleMethod::kMinMax, G::kBlocked, -1, 256, {40, 4096}, E::kFloat32, E::kFloat32, 0},
      {E::kFloat8E4M3FN, ScaleMethod::kMxFloor, G::kBlocked, -1, 64, {32, 4096}, E::kFloat8E8M0, E::kFloat32, 7000},
      // Blocks along a non-last axis whose slabs (a block's rows) fit in cache: reduced column by
      // column and quantized slab by slab, threaded, with a short last block and specials.
      {E::kInt4, ScaleMethod::kMinMax, G::kBlocked, 0, 32, {100, 1024}, E::kFloat32, E::kFloat32, 5000},
      {E::kUint8, ScaleMethod::kSymmetric, G::kBlocked, 1, 16, {3, 70, 200}, E::kFloat16, E::kFloat16, 3000},
      {E::kFloat8E4M3FN, ScaleMethod::kMxFloor, G::kBlocked, 0, 32, {64, 96}, E::kFloat8E8M0, E::kFloat32, 2000},
      {E::kInt2, ScaleMethod::kMinMax, G::kBlocked, 0, 8, {40, 64}, E::kFloat32, E::kBfloat16, 0},
      // Rows of 8 packed int4 codes and zero points (one byte per task boundary at most), 512 slabs
      // over two tasks; a block larger than the axis; rows of 12 (not whole bytes: two passes).
      {E::kInt4, ScaleMethod::kMinMax, G::kBlocked, 0, 32, {16384, 8}, E::kFloat32, E::kFloat32, 0},
      {E::kUint4, ScaleMethod::kSymmetric, G::kBlocked, 0, 1000, {40, 64}},
      {E::kInt4, ScaleMethod::kMinMax, G::kBlocked, 0, 4, {8, 12}},
      // Slabs through kernels::dynamic_quantize_slabs (integer codes; rows at least a vector
      // wide), threaded, both layouts, rows with columns past the last whole vector, short last
      // blocks, and specials and runs of +-3e38 (overflowing ranges) sending some stretches to
      // the fallback; MX float codes through the slab path.
      {E::kInt4, ScaleMethod::kMinMax, G::kBlocked, 0, 32, {96, 4096}, E::kFloat32, E::kFloat32, 20000, 20},
      {E::kUint8, ScaleMethod::kSymmetric, G::kBlocked, 1, 16, {4, 64, 520}, E::kFloat32, E::kFloat16, 5000, 9},
      {E::kInt8, ScaleMethod::kMinMax, G::kBlocked, 0, 64, {130, 2048}, E::kFloat32, E::kFloat32, 3000, 7},
      {E::kInt2, ScaleMethod::kSymmetricRestricted, G::kBlocked, 0, 8, {33, 64}, E::kFloat32, E::kFloat32, 0, 3,
       SubByteLayout::kOneCodePerByte},
      {E::kUint2, ScaleMethod::kMinMax, G::kBlocked, 0, 16, {50, 96}, E::kFloat32, E::kBfloat16, 700, 0},
      {E::kUint4, ScaleMethod::kSymmetric, G::kBlocked, 0, 32, {64, 136}, E::kFloat32, E::kFloat32, 0, 0,
       SubByteLayout::kOneCodePerByte},
      {E::kFloat8E5M2, ScaleMethod::kMxCeil, G::kBlocked, 0, 32, {70, 512}, E::kFloat8E8M0, E::kFloat32, 4000, 11},
      {E::kFloat8E4M3FNUZ, ScaleMethod::kMxEven, G::kBlocked, 1, 32, {2, 64, 1024}, E::kFloat8E8M0, E::kFloat16, 0, 0},
      {E::kFloat4E2M1, ScaleMethod::kMxRceil, G::kBlocked, 0, 32, {64, 256}, E::kFloat8E8M0, E::kBfloat16, 3000, 0,
       SubByteLayout::kOneCodePerByte},
      {E::kFloat4E2M1, ScaleMethod::kMxEven, G::kBlocked, 0, 16, {48, 128}, E::kFloat8E8M0, E::kFloat32, 0, 5,
       SubByteLayout::kPacked, true},
      {E::kFloat8E5M2FNUZ, ScaleMethod::kMxFloor, G::kBlocked, 0, 32, {40, 4040}, E::kFloat8E8M0, E::kFloat32, 9000, 0},
      // Rows of several stretches (512 columns) with a narrower last one (quantized without the
      // next stretch's reduction beside it), packed 2-bit and 4-bit rows packed in vectors.
      {E::kUint2, ScaleMethod::kMinMax, G::kBlocked, 0, 16, {40, 1032}, E::kFloat32, E::kFloat32, 5000, 3},
      {E::kInt4, ScaleMethod::kSymmetric, G::kBlocked, 0, 8, {37, 1000}, E::kFloat32, E::kFloat16, 0, 0},
      {E::kInt2, ScaleMethod::kMinMax, G::kBlocked, 1, 4, {3, 9, 1552}, E::kFloat32, E::kBfloat16, 0, 7},
      // Short whole groups of float32 x to <= 8-bit integers (kernels::dynamic_quantize_groups on
      // the targets whose 1, 2 or 4 vectors make the group: 4 to 64 elements), threaded, with
      // batches the vector finish leaves to the fallback (NaN, infinities, overflowing ranges),
      // all-zero groups it decides, and group counts that leave tasks a tail short of a batch.
      {E::kInt4, ScaleMethod::kMinMax, G::kBlocked, -1, 32, {70, 4096}, E::kFloat32, E::kFloat32, 20000, 20},
      {E::kUint4, ScaleMethod::kMinMax, G::kBlocked, 1, 16, {130, 1040}, E::kFloat32, E::kFloat32, 0, 5},
      {E::kInt8, ScaleMethod::kSymmetric, G::kBlocked, -1, 64, {33, 4096}, E::kFloat32, E::kFloat32, 30000, 40},
      {E::kUint8, ScaleMethod::kMinMax, G::kBlocked, -1, 8, {300, 520}, E::kFloat32, E::kFloat32, 4000, 11},
      {E::kUint8, ScaleMethod::kSymmetric, G::kBlocked, -1, 16, {64, 2048}, E::kFloat32, E::kFloat32, 0, 8},
      {E::kInt2, ScaleMethod::kSymmetricRestricted, G::kBlocked, -1, 32, {40, 2048}, E::kFloat32, E::kFloat32, 0, 13},
      {E::kUint2, ScaleMethod::kMinMax, G::kBlocked, -1, 8, {20, 1032}, E::kFloat32, E::kFloat32, 9000, 2},
      {E::kInt4, ScaleMethod::kSymmetric, G::kBlocked, -1, 32, {50, 4096}, E::kFloat32, E::kFloat32, 0, 0},
      {E::kInt8, ScaleMethod::kMinMax, G::kPerAxis, 0, 0, {4000, 32}, E::kFloat32, E::kFloat32, 3000, 0},  // rows of 32
      // Groups of 3 to 16 vectors (the loop over a group's vectors), float16 and bfloat16 x.
      {E::kInt4, ScaleMethod::kMinMax, G::kBlocked, -1, 128, {40, 4096}, E::kFloat32, E::kBfloat16, 20000, 60},
      {E::kUint8, ScaleMethod::kMinMax, G::kBlocked, -1, 32, {64, 2048}, E::kFloat32, E::kFloat16, 10000, 20},
      {E::kInt8, ScaleMethod::kSymmetric, G::kBlocked, -1, 256, {16, 8192}, E::kFloat32, E::kFloat32, 0, 100},
      {E::kUint4, ScaleMethod::kSymmetric, G::kBlocked, -1, 48, {30, 4800}, E::kFloat32, E::kFloat16, 30000, 30},
      // Long groups (up to 4096 elements: per-axis rows, blocks of 1024), reduced vector by vector
      // between the divisions of the batch before.
      {E::kUint4, ScaleMethod::kMinMax, G::kPerAxis, 0, 0, {96, 4096}, E::kFloat32, E::kFloat32, 300000, 2000,
       SubByteLayout::kOneCodePerByte},
      {E::kInt8, ScaleMethod::kSymmetric, G::kPerAxis, 0, 0, {80, 4096}, E::kFloat32, E::kBfloat16, 300000, 0},
      {E::kInt4, ScaleMethod::kSymmetric, G::kBlocked, -1, 1024, {40, 4096}, E::kFloat32, E::kFloat16, 0, 1000},
      {E::kFloat8E4M3FN, ScaleMethod::kMxFloor, G::kBlocked, -1, 512, {40, 4096}, E::kFloat8E8M0, E::kFloat32, 100000, 500},
      // float8 and float4 codes with MX (e8m0) scales, every MX method.
      {E::kFloat8E5M2, ScaleMethod::kMxCeil, G::kBlocked, -1, 32, {64, 4096}, E::kFloat8E8M0, E::kFloat16, 20000, 20},
      {E::kFloat4E2M1, ScaleMethod::kMxEven, G::kBlocked, -1, 32, {64, 2048}, E::kFloat8E8M0, E::kFloat32, 10000, 20,
       SubByteLayout::kPacked, true},
      {E::kFloat4E2M1, ScaleMethod::kMxRceil, G::kBlocked, -1, 16, {32, 4096}, E::kFloat8E8M0, E::kBfloat16, 0, 30,
       SubByteLayout::kOneCodePerByte},
      {E::kFloat8E4M3FNUZ, ScaleMethod::kMxFloor, G::kBlocked, -1, 128, {16, 8192}, E::kFloat8E8M0, E::kFloat32, 30000, 50},
      {E::kFloat8E5M2FNUZ, ScaleMethod::kMxRceil, G::kBlocked, -1, 64, {24, 4096}, E::kFloat8E8M0, E::kFloat32, 0, 0},
      {E::kFloat8E4M3FN, ScaleMethod::kMxEven, G::kBlocked, -1, 8, {100, 1024}, E::kFloat8E8M0, E::kFloat32, 5000, 10},
      // The same with one code per byte (numpy's layout) for y and the zero points.
      {E::kInt4, ScaleMethod::kMinMax, G::kBlocked, -1, 32, {70, 4096}, E::kFloat32, E::kFloat32, 20000, 20,
       SubByteLayout::kOneCodePerByte},
      {E::kUint2, ScaleMethod::kSymmetric, G::kBlocked, -1, 16, {64, 1024}, E::kFloat32, E::kFloat32, 0, 4,
       SubByteLayout::kOneCodePerByte},
      {E::kInt2, ScaleMethod::kMinMax, G::kBlocked, -1, 64, {30, 4096}, E::kFloat32, E::kFloat32, 5000, 40,
       SubByteLayout::kOneCodePerByte},
  };
  std::mt19937 rng(kSeed + 1);
  for (int64_t target : kernels::supported_targets()) {
    kernels::force_target(target);
    for (size_t i = 0; i < cases.size(); ++i) {
      check_dynamic(cases[i], rng, kernels::target_name(target) + " case " + std::to_string(i) + ": ");
    }
  }
}

// Outputs large enough to be streamed (16 MiB or more, 8 MiB for packed 4-bit slabs) that start
// on a cache line, as the Python module's outputs do: slabs' rows of stretches and short groups'
// batches go out in whole lines with non-temporal stores (kernels/dynamic.cpp). NaNs and
// infinities send some stretches and batches to the fallback, which stores its codes directly
// between streamed ones. Blocks along the first axis: 8-bit codes, both 4-bit layouts and packed
// 2-bit codes, integer codes with min-max scales and float8 / float4 codes with MX scales; blocks
// along the last axis: 8-bit codes in batches (blocks of 128) and one group at a time (rows of
// 4096 elements per block). On every target.
TEST_F(ToolkitTargets, DynamicWithALargeAlignedOutputEqualsQparamsThenQuantize) {
  struct Case {
    ElementType type, x_type;
    SubByteLayout layout;
    std::vector<int64_t> shape;
    ScaleMethod method = ScaleMethod::kMinMax;
    int64_t axis = 0, block = 32;
  };
  using E = ElementType;
  const Case cases[] = {
      {E::kInt8, E::kFloat32, SubByteLayout::kPacked, {4096, 4096}, ScaleMethod::kSymmetric, 1, 128},
      {E::kUint8, E::kBfloat16, SubByteLayout::kPacked, {4096, 4096}, ScaleMethod::kMinMax, 1, 4096},
      {E::kFloat8E4M3FN, E::kFloat32, SubByteLayout::kPacked, {4096, 4096}, ScaleMethod::kMxFloor, 1, 32},
      {E::kInt8, E::kFloat32, SubByteLayout::kPacked, {4096, 4096}},
      {E::kUint4, E::kBfloat16, SubByteLayout::kOneCodePerByte, {4096, 4096}},
      {E::kInt4, E::kBfloat16, SubByteLayout::kPacked, {8192, 4096}},
      {E::kUint2, E::kFloat16, SubByteLayout::kPacked, {16384, 4096}},
      // MX: float8 codes with e8m0 scales, and float4 codes in both layouts.
      {E::kFloat8E4M3FN, E::kFloat32, SubByteLayout::kPacked, {4096, 4096}, ScaleMethod::kMxFloor},
      {E::kFloat8E5M2, E::kBfloat16, SubByteLayout::kPacked, {4096, 4096}, ScaleMethod::kMxRceil},
      {E::kFloat4E2M1, E::kFloat16, SubByteLayout::kOneCodePerByte, {4096, 4096}, ScaleMethod::kMxEven},
      {E::kFloat4E2M1, E::kFloat32, SubByteLayout::kPacked, {8192, 4096}, ScaleMethod::kMxCeil},
  };
  struct FreeAligned {
    void operator()(void* p) const { std::free(p); }
  };
  const auto aligned = [](size_t bytes) {
    return std::unique_ptr<uint8_t, FreeAligned>(static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
  };
  std::mt19937 rng(kSeed + 7);
  for (const Case& c : cases) {
    const uint64_t n = static_cast<uint64_t>(c.shape[0] * c.shape[1]);
    const ElementTypeInfo& xt = info(c.x_type);
    auto x = aligned(n * xt.bytes_per_element());
    // Codes of normal values drawn from a pool (up to 64M elements: drawing each costs seconds).
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::vector<uint32_t> pool(1 << 16);
    for (uint32_t& code : pool) {
      const float v = normal(rng);
      code = c.x_type == E::kFloat32 ? std::bit_cast<uint32_t>(v) : codec::encode_float(xt, v, codec::Overflow::kInfOrNan);
    }
    uint64_t state = rng() | 1;
    for (uint64_t i = 0; i < n; ++i) {
      state ^= state << 13, state ^= state >> 7, state ^= state << 17;  // xorshift64
      const uint32_t code = pool[state & 0xFFFF];
      if (xt.bits == 32) {
        std::memcpy(x.get() + 4 * i, &code, 4);
      } else {
        const auto half = static_cast<uint16_t>(code);
        std::memcpy(x.get() + 2 * i, &half, 2);
      }
    }
    std::uniform_int_distribution<uint64_t> nan_at(0, n - 1);
    // 300 strips (of 32 columns) to the fallback, anywhere in a line: 200 NaNs, 100 infinities.
    const uint32_t nan = c.x_type == E::kFloat32 ? 0x7FC00000u : c.x_type == E::kBfloat16 ? 0x7FC0u : 0x7E00u;
    const uint32_t inf = c.x_type == E::kFloat32 ? 0x7F800000u : c.x_type == E::kBfloat16 ? 0x7F80u : 0x7C00u;
    const uint32_t sign = 1u << (xt.bits - 1);
    for (int k = 0; k < 300; ++k) codec::store_code(x.get(), xt, nan_at(rng), k < 200 ? nan : k % 2 ? inf : inf | sign);
    const bool mx = c.method == ScaleMethod::kMxFloor || c.method == ScaleMethod::kMxCeil || c.method == ScaleMethod::kMxEven ||
                    c.method == ScaleMethod::kMxRceil;
    const E scale_type = mx ? E::kFloat8E8M0 : E::kFloat32;
    QparamsOptions o;
    o.quantized_type = c.type;
    o.scale_type = scale_type;
    o.method = c.method;
    o.granularity = Granularity::kBlocked;
    o.axis = c.axis;
    o.block_size = c.block;
    const std::vector<int64_t> qshape = qparams_shape(c.shape, o).value();
    const uint64_t groups = static_cast<uint64_t>(qshape[0] * qshape[1]);
    const uint64_t y_bytes = storage_bytes(c.type, n, c.layout);
    ASSERT_GE(y_bytes, uint64_t{8} << 20);
    auto y = aligned(y_bytes), want_y = aligned(y_bytes);
    const uint64_t scale_bytes = groups * info(scale_type).bytes_per_element();
    std::vector<uint8_t> scale(scale_bytes), want_scale(scale_bytes), zp(groups), want_zp(groups);
    const TensorView xv{c.x_type, c.shape, x.get()};
    const TensorView want_sv{scale_type, qshape, want_scale.data()};
    const TensorView want_zpv{c.type, qshape, want_zp.data(), c.layout};
    MutableTensorView zv{c.type, qshape, zp.data(), c.layout}, want_zv{c.type, qshape, want_zp.data(), c.layout};
    const Status qparams = compute_qparams(xv, o, {scale_type, qshape, want_scale.data()}, mx ? nullptr : &want_zv);
    ASSERT_TRUE(qparams.ok()) << qparams.message();
    QuantizeLinearAttributes a;
    a.axis = c.axis;
    a.block_size = c.block;
    if (mx) a.output_dtype = static_cast<int64_t>(c.type);
    ASSERT_TRUE(quantize_linear(xv, want_sv, mx ? nullptr : &want_zpv, a, {c.type, c.shape, want_y.get(), c.layout}).ok());
    for (int64_t target : kernels::supported_targets()) {
      kernels::force_target(target);
      const std::string where = kernels::target_name(target) + " " + std::string(name(c.type)) +
                                (c.layout == SubByteLayout::kPacked ? "" : " one code per byte") + " axis " +
                                std::to_string(c.axis) + " block " + std::to_string(c.block) + ": ";
      std::memset(y.get(), 0xA5, y_bytes);
      ASSERT_TRUE(
          dynamic_quantize(xv, o, {c.type, c.shape, y.get(), c.layout}, {scale_type, qshape, scale.data()}, mx ? nullptr : &zv)
              .ok())
          << where;
      EXPECT_EQ(scale, want_scale) << where;
      EXPECT_EQ(zp, want_zp) << where;
      const auto mismatch = std::mismatch(y.get(), y.get() + y_bytes, want_y.get());
      EXPECT_EQ(mismatch.first, y.get() + y_bytes) << where << "first differing byte " << (mismatch.first - y.get());
    }
    kernels::force_target(0);
  }
}

TEST(Toolkit, DynamicQuantizeLinearOfAConstantTensor) {
  // All 2.5: maxx = 2.5, minx = 0, scale = 2.5 / 255, zero point 0, every code 255.
  std::vector<float> x(1000, 2.5f);
  std::vector<uint8_t> y(1000);
  const std::vector<int64_t> shape = {1000};
  float scale = 0;
  uint8_t zp = 1;
  ASSERT_TRUE(dynamic_quantize_linear({ElementType::kFloat32, shape, x.data()}, {ElementType::kUint8, shape, y.data()}, &scale,
                                      &zp)
                  .ok());
  EXPECT_EQ(scale, 2.5f / 255.0f);
  EXPECT_EQ(zp, 0);
  for (uint8_t v : y) EXPECT_EQ(v, 255);
}

TEST(Toolkit, ErrorsNameTheValueAndTheRule) {
  std::vector<float> x(8, 1.0f);
  const std::vector<int64_t> shape = {2, 4}, scalar = {};
  float scale = 0;
  QparamsOptions o;
  o.quantized_type = ElementType::kInt8;
  o.method = ScaleMethod::kMxCeil;
  Status s = compute_qparams({ElementType::kFloat32, shape, x.data()}, o, {ElementType::kFloat32, scalar, &scale}, nullptr);
  EXPECT_NE(s.message().find("method mx_ceil makes power-of-two scales for float element types"), std::string::npos)
      << s.message();
  o.method = ScaleMethod::kMinMax;
  s = compute_qparams({ElementType::kFloat32, shape, x.data()}, o, {ElementType::kFloat32, scalar, &scale}, nullptr);
  EXPECT_NE(s.message().find("pass a zero_point tensor"), std::string::npos) << s.message();
  const std::vector<int64_t> wrong = {3};
  int8_t zp[3];
  MutableTensorView zv{ElementType::kInt8, wrong, zp};
  s = compute_qparams({ElementType::kFloat32, shape, x.data()}, o, {ElementType::kFloat32, scalar, &scale}, &zv);
  EXPECT_NE(s.message().find("zero_point has shape [3] but must have shape []"), std::string::npos) << s.message();
}

// An x with no element: dynamic_quantize writes the scales and zero points compute_qparams gives
// for its groups (they are still there: one per tensor, or zero-length blocks), as the two calls
// composed would; it had returned without writing them (found by the toolkit fuzzer: bfloat16 x
// of shape [3, 0, 3], MX floor to float8e4m3fn, e8m0 scale 0x2c left where compute_qparams writes
// 0x00).
TEST(Toolkit, DynamicQuantizeOfAnEmptyTensorWritesCompute_qparamsScales) {
  const std::vector<int64_t> shape = {3, 0, 3};
  struct Case {
    ElementType type, scale_type;
    ScaleMethod method;
  };
  for (const Case& c : {Case{ElementType::kInt8, ElementType::kFloat32, ScaleMethod::kMinMax},
                        Case{ElementType::kFloat8E4M3FN, ElementType::kFloat8E8M0, ScaleMethod::kMxFloor}}) {
    QparamsOptions o;
    o.quantized_type = c.type;
    o.scale_type = c.scale_type;
    o.method = c.method;
    std::vector<uint8_t> scale(4, 0x2C), zero_point(1, 0x2C), want_scale(4, 0x5A), want_zero_point(1, 0x5A);
    const std::vector<int64_t> scalar = {};
    MutableTensorView zv{c.type, scalar, zero_point.data()}, want_zv{c.type, scalar, want_zero_point.data()};
    const TensorView xv{ElementType::kBfloat16, shape, nullptr};
    ASSERT_TRUE(dynamic_quantize(xv, o, {c.type, shape, nullptr}, {c.scale_type, scalar, scale.data()}, &zv).ok());
    ASSERT_TRUE(compute_qparams(xv, o, {c.scale_type, scalar, want_scale.data()}, &want_zv).ok());
    const size_t scale_bytes = info(c.scale_type).bits / 8;
    EXPECT_TRUE(std::equal(scale.begin(), scale.begin() + scale_bytes, want_scale.begin())) << info(c.type).name;
    EXPECT_EQ(zero_point, want_zero_point) << info(c.type).name;
  }
}

// A refused dynamic_quantize leaves the caller's zero points alone: float6 has scales
// (compute_qparams) but is no QuantizeLinear output, so the quantize plan is refused, and the +0
// zero-point codes of float types had been written before it was made (found by the toolkit
// fuzzer).
TEST(Toolkit, DynamicQuantizeRefusedByThePlannerLeavesTheZeroPointsAlone) {
  const std::vector<float> x = {-1.0f, 0.5f, 2.0f, 3.0f};
  const std::vector<int64_t> shape = {4}, scalar = {};
  QparamsOptions o;
  o.quantized_type = ElementType::kFloat6E3M2;
  o.method = ScaleMethod::kSymmetric;
  float scale = -7.0f;
  uint8_t zero_point = 0x62;
  std::vector<uint8_t> y(4, 0xAB);
  MutableTensorView zv{o.quantized_type, scalar, &zero_point};
  const Status s = dynamic_quantize({ElementType::kFloat32, shape, x.data()}, o, {o.quantized_type, shape, y.data()},
                                    {ElementType::kFloat32, scalar, &scale}, &zv);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("dynamic_quantize"), std::string::npos) << s.message();
  EXPECT_EQ(zero_point, 0x62);
  EXPECT_EQ(scale, -7.0f);
  EXPECT_EQ(y, std::vector<uint8_t>(4, 0xAB));
  // compute_qparams gives float6 its scales: max|x| / max(T) = 3 / 28, zero point +0.
  ASSERT_TRUE(compute_qparams({ElementType::kFloat32, shape, x.data()}, o, {ElementType::kFloat32, scalar, &scale}, &zv).ok());
  EXPECT_EQ(scale, 3.0f / 28.0f);
  EXPECT_EQ(zero_point, 0);
}

// The refusal of a float quantized type with an integer method names the type's largest value;
// bfloat16's (3.4e38) had been converted to int for the message, which is undefined behaviour
// (UndefinedBehaviorSanitizer in the toolkit fuzzer; -2147483648 in the text on x86).
TEST(Toolkit, FloatTypeWithAnIntegerMethodNamesItsLargestValue) {
  const std::vector<float> x(4, 1.0f);
  const std::vector<int64_t> shape = {4}, scalar = {};
  float scale = 0.0f;
  for (const auto& [type, largest] : {std::pair{ElementType::kBfloat16, "3.38953139e+38"},
                                      std::pair{ElementType::kFloat16, "65504"},
                                      std::pair{ElementType::kFloat8E4M3FN, "448"}}) {
    QparamsOptions o;
    o.quantized_type = type;
    o.method = ScaleMethod::kMinMax;
    const Status s = compute_qparams({ElementType::kFloat32, shape, x.data()}, o, {ElementType::kFloat32, scalar, &scale},
                                     nullptr);
    EXPECT_NE(s.message().find(std::string("takes symmetric (max|x| / ") + largest + ")"), std::string::npos)
        << s.message();
  }
}

// A refused call writes none of its outputs: DynamicQuantizeLinear with a y of the wrong shape
// used to return the error after storing y_scale and y_zero_point (found by the toolkit fuzzer).
TEST(Toolkit, DynamicQuantizeLinearRefusedLeavesItsScalarsAlone) {
  const std::vector<float> x = {-1.0f, 0.5f, 2.0f, 3.0f};
  const std::vector<int64_t> shape = {4}, wrong = {3};
  std::vector<uint8_t> y(4, 0xAB);
  float scale = -7.0f;
  uint8_t zero_point = 99;
  const Status s = dynamic_quantize_linear({ElementType::kFloat32, shape, x.data()},
                                           {ElementType::kUint8, wrong, y.data()}, &scale, &zero_point);
  EXPECT_NE(s.message().find("y has shape [3]"), std::string::npos) << s.message();
  EXPECT_EQ(scale, -7.0f);
  EXPECT_EQ(zero_point, 99);
  EXPECT_EQ(y, std::vector<uint8_t>(4, 0xAB));
  // The same call with a right y: scale 4 / 255, zero point rint(1 / scale) = rint(63.75) = 64.
  ASSERT_TRUE(dynamic_quantize_linear({ElementType::kFloat32, shape, x.data()}, {ElementType::kUint8, shape, y.data()},
                                      &scale, &zero_point)
                  .ok());
  EXPECT_EQ(scale, 4.0f / 255.0f);
  EXPECT_EQ(zero_point, 64);
}

}  // namespace
}  // namespace qdq
