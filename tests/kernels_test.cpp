// The SIMD kernels against the scalar reference, bit for bit, on every Highway target this CPU
// supports: sizes 1..2*lanes+1 and around the block size, odd packed tails, blocks that do and do
// not divide the axis, axis first/middle/last/negative, extreme scales, special values; every
// float16/bfloat16 input; threads (default pool and a host parallel-for).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "execute/by_table.h"
#include "kernels/kernels.h"
#include "kernels/look_up.h"
#include "kernels/reduce.h"
#include "qdq/fake_quant.hpp"
#include "qdq/qdq.hpp"
#include "types/codec.h"

namespace qdq {
namespace {

using E = ElementType;

const E kQuantizedTypes[] = {E::kUint8, E::kInt8,         E::kUint16,         E::kInt16,      E::kUint4,
                             E::kInt4,  E::kUint2,        E::kInt2,           E::kFloat8E4M3FN,
                             E::kFloat8E4M3FNUZ,          E::kFloat8E5M2,     E::kFloat8E5M2FNUZ,
                             E::kFloat4E2M1};

// Raw storage for `count` elements of `type` filled with codes from `next_code`.
template <class NextCode>
std::vector<uint8_t> make_storage(E type, uint64_t count, NextCode next_code) {
  std::vector<uint8_t> bytes(storage_bytes(type, count) + 8, 0);
  for (uint64_t i = 0; i < count; ++i) codec::store_code(bytes.data(), info(type), i, next_code(i));
  return bytes;
}

// Storage for `bytes` that can start at any offset past a 64-byte line: at(offset).
class LineBuffer {
 public:
  explicit LineBuffer(size_t bytes) : storage_(bytes + 128) {}
  uint8_t* at(size_t offset) {
    return storage_.data() + (64 - reinterpret_cast<uintptr_t>(storage_.data()) % 64) % 64 + offset;
  }

 private:
  std::vector<uint8_t> storage_;
};

// `count` float32 scales in [0.01, 1.01], drawn from g: per-axis scales of the large tests.
std::vector<uint8_t> random_scales(std::mt19937& g, uint64_t count) {
  return make_storage(E::kFloat32, count, [&](uint64_t) {
    return std::bit_cast<uint32_t>(0.01f + static_cast<float>(g() % 1000) / 997.0f);
  });
}

// float32 codes that exercise every rule: specials, ties at the scale, huge, tiny, random bits.
uint32_t interesting_float_code(std::mt19937& g, float scale) {
  switch (g() % 8) {
    case 0: {
      static const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 3e38f, -3e38f, 1e-40f, -1e-45f};
      return std::bit_cast<uint32_t>(specials[g() % 10]);
    }
    case 1:  // exact ties of the quotient
      return std::bit_cast<uint32_t>((static_cast<float>(static_cast<int>(g() % 600) - 300) + 0.5f) * scale);
    case 2:
      return static_cast<uint32_t>(g());  // any bit pattern
    default:
      return std::bit_cast<uint32_t>(std::ldexp(static_cast<float>(static_cast<int>(g() % 20001) - 10000) / 1000.0f,
                                                static_cast<int>(g() % 24) - 12) * scale);
  }
}

// Codes for an x of `type`: float types from the interesting float32 values, others random.
uint32_t x_code(E type, std::mt19937& g, float scale) {
  const ElementTypeInfo& t = info(type);
  const uint32_t f32 = interesting_float_code(g, scale);
  switch (type) {
    case E::kFloat32: return f32;
    case E::kFloat16: return codec::encode_float(t, std::bit_cast<float>(f32), codec::Overflow::kInfOrNan);
    case E::kBfloat16: return codec::encode_float(t, std::bit_cast<float>(f32), codec::Overflow::kInfOrNan);
    case E::kInt32: return g() % 3 == 0 ? static_cast<uint32_t>(g()) : static_cast<uint32_t>(static_cast<int32_t>(g() % 2001) - 1000);
    default: return static_cast<uint32_t>(g()) & (t.bits == 32 ? 0xFFFFFFFFu : ((1u << t.bits) - 1u));
  }
}

struct Sweep {
  std::vector<int64_t> shape;
  int64_t axis;
  int64_t block;  // 0: per-axis (or per-tensor with scalar_scale)
  bool scalar_scale;
};

std::vector<int64_t> scale_shape_of(const Sweep& s) {
  if (s.scalar_scale) return {};
  const size_t a = static_cast<size_t>(s.axis < 0 ? s.axis + static_cast<int64_t>(s.shape.size()) : s.axis);
  if (s.block == 0) return {s.shape[a]};
  std::vector<int64_t> shape = s.shape;
  shape[a] = (shape[a] + s.block - 1) / s.block;
  return shape;
}

uint64_t count_of(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

std::string describe(const Plan& plan, const Sweep& s) {
  std::string text = plan.operator_name + " x " + std::string(name(plan.x.type)) + " scale " +
                     std::string(name(plan.scale.type)) + " -> " + std::string(name(plan.output_type)) + " shape [";
  for (int64_t d : s.shape) text += std::to_string(d) + ",";
  return text + "] axis " + std::to_string(s.axis) + " block " + std::to_string(s.block) +
         (s.scalar_scale ? " per-tensor" : "");
}

// Runs the plan both ways and compares every output byte; returns false after the first mismatch.
bool same_as_reference(const Plan& plan, const Sweep& sweep, const std::string& target) {
  const uint64_t bytes = storage_bytes(plan.output_type, plan.element_count);
  std::vector<uint8_t> fast(bytes + 8, 0xCD), reference(bytes + 8, 0xCD);
  EXPECT_TRUE(execute(plan, {plan.output_type, plan.shape, fast.data()}).ok());
  ExecuteOptions options;
  options.path = ExecutionPath::kReference;
  EXPECT_TRUE(execute(plan, {plan.output_type, plan.shape, reference.data()}, options).ok());
  for (uint64_t i = 0; i < plan.element_count; ++i) {
    const uint32_t a = codec::load_code(fast.data(), info(plan.output_type), i);
    const uint32_t b = codec::load_code(reference.data(), info(plan.output_type), i);
    if (a != b) {
      ADD_FAILURE() << target << " " << describe(plan, sweep) << ": element " << i << " x code 0x" << std::hex
                    << codec::load_code(plan.x.data, info(plan.x.type), i) << " expected 0x" << b << " got 0x" << a;
      return false;
    }
  }
  EXPECT_EQ(std::memcmp(fast.data(), reference.data(), fast.size()), 0)
      << target << " " << describe(plan, sweep) << ": padding or bytes past the end differ";
  return true;
}

std::vector<Sweep> sweeps(size_t lanes) {
  std::vector<Sweep> all;
  for (size_t n = 1; n <= 2 * lanes + 1; ++n) all.push_back({{static_cast<int64_t>(n)}, 0, 0, true});
  for (int64_t n : {255, 256, 257, 511, 513, 1000}) all.push_back({{n}, 0, 0, true});
  // Per-axis: axis first, middle, last, negative; inner lengths that are not vector multiples.
  all.push_back({{7, 5, 3}, 0, 0, false});
  all.push_back({{7, 5, 3}, 1, 0, false});
  all.push_back({{7, 5, 3}, 2, 0, false});
  all.push_back({{3, 300}, -1, 0, false});
  all.push_back({{300, 3}, 0, 0, false});
  // Blocked: dividing and non-dividing blocks on every axis.
  for (int64_t block : {1, 3, 4, 32}) {
    all.push_back({{9, 70}, 1, block, false});
    all.push_back({{70, 9}, 0, block, false});
    all.push_back({{5, 67, 3}, 1, block, false});
    all.push_back({{2, 3, 129}, -1, block, false});
  }
  // Rows of whole blocks of 1 to 8 vectors (the blocked loop's short-block path takes 1 to 4), the
  // last row's blocks crossing a 1,024-element kernel block.
  for (int64_t block : {16, 32, 64}) all.push_back({{6, 192}, -1, block, false});
  // Short rows in groups of rows (blocked along the axis before them, the last block partial):
  // their operands are written out a piece of 1,024 elements at a time (execute/short_rows.h).
  // They run as periodic runs (exec::for_each_group_run, kernels' FillPeriodic): rows of 4 and 8
  // divide every target's lanes (one permute per group), rows of 3 and 5 step their phase from
  // vector to vector, rows of 20 are longer than a vector and wrap round their ends.
  all.push_back({{690, 3}, 0, 32, false});
  all.push_back({{3, 250, 3}, 1, 3, false});
  all.push_back({{600, 4}, 0, 32, false});
  all.push_back({{4, 150, 4}, 1, 32, false});
  all.push_back({{300, 8}, 0, 5, false});
  all.push_back({{450, 5}, 0, 7, false});
  all.push_back({{130, 20}, 0, 7, false});
  // Rows shorter than a vector under one operand each (per-axis on the first axis): blocks of 2 to
  // 15 elements, which the kernels permute into lanes (ShortBlockLanes); rows of 5, 7 and 9 change
  // phase from vector to vector, and 150 rows cross a 1,024-element kernel block inside a row.
  for (int64_t row : {2, 5, 6, 7, 8, 9, 15}) all.push_back({{150, row}, 0, 0, false});
  return all;
}

class KernelsOnEveryTarget : public testing::Test {
 protected:
  void TearDown() override {
    kernels::force_target(0);
    kernels::force_reciprocal(-1);
  }
};

// Every target paired with both ways of applying one scale to float32 x (by the division, by the
// reciprocal with its tie check: kernels::force_reciprocal), so that both stay tested whichever the
// CPU picks.
std::vector<std::pair<int64_t, int>> every_target_by_both_strategies() {
  std::vector<std::pair<int64_t, int>> pairs;
  for (int64_t target : kernels::supported_targets()) {
    for (int by_reciprocal : {1, 0}) pairs.emplace_back(target, by_reciprocal);
  }
  return pairs;
}

TEST_F(KernelsOnEveryTarget, QuantizeMatchesTheReference) {
  const uint32_t seed = 8675309;
  std::mt19937 g(seed);
  const auto targets = kernels::supported_targets();
  ASSERT_FALSE(targets.empty());
  for (int64_t target : targets) {
    kernels::force_target(target);
    const std::string target_text = kernels::target_name(target) + " (seed " + std::to_string(seed) + ")";
    for (const Sweep& sweep : sweeps(16)) {
      for (E x_type : {E::kFloat32, E::kFloat16, E::kBfloat16, E::kInt32}) {
        for (E out : kQuantizedTypes) {
          // Scale types and precisions: the scale's own type, and an explicit precision.
          for (int variant = 0; variant < 3; ++variant) {
            const E scale_type = variant == 0 ? E::kFloat32 : variant == 1 ? E::kFloat16 : E::kBfloat16;
            const float base_scale = std::ldexp(1.37f, static_cast<int>(g() % 16) - 8);
            const uint64_t n = count_of(sweep.shape);
            const std::vector<int64_t> scale_shape = scale_shape_of(sweep);
            const uint64_t scale_count = count_of(scale_shape);
            auto x = make_storage(x_type, n, [&](uint64_t) { return x_code(x_type, g, base_scale); });
            auto scale = make_storage(scale_type, scale_count, [&](uint64_t) {
              const double s = base_scale * (1.0 + (g() % 1000) / 997.0) * (g() % 17 == 0 ? 1e-30 : 1.0);
              return codec::encode_float(info(scale_type), s, codec::Overflow::kInfOrNan);
            });
            const ElementTypeInfo& o = info(out);
            auto zp = make_storage(out, scale_count, [&](uint64_t) -> uint32_t {
              if (o.is_float() && o.bits == 8) return 0;
              return static_cast<uint32_t>(g()) & ((1u << o.bits) - 1u);
            });
            const TensorView xv{x_type, sweep.shape, x.data()};
            const TensorView sv{scale_type, scale_shape, scale.data()};
            const TensorView zv{out, scale_shape, zp.data()};
            QuantizeLinearAttributes a;
            a.axis = sweep.axis;
            a.block_size = sweep.block;
            a.saturate = static_cast<int64_t>(g() % 2);
            if (variant == 2) {
              const E precisions[] = {E::kFloat16, E::kBfloat16, E::kFloat32};
              a.precision = static_cast<int64_t>(precisions[g() % 3]);
            }
            const bool with_zp = g() % 4 != 0;
            const Result<Plan> plan = plan_quantize_linear(xv, sv, with_zp ? &zv : nullptr,
                                                           [&] { if (!with_zp) a.output_dtype = static_cast<int64_t>(out); return a; }());
            ASSERT_TRUE(plan.ok()) << plan.status().message();
            ASSERT_TRUE(kernels::covers(plan.value())) << describe(plan.value(), sweep);
            if (!same_as_reference(plan.value(), sweep, target_text)) return;
          }
        }
      }
    }
  }
}

// A run's first block stops where x's vectors start on whole vectors (ElementsBeforeWholeVector: numpy
// puts large arrays 16 bytes past a line). So x at every element offset within a 64-byte line, rows
// whose starts fall at every alignment, packed outputs and packed zero points: every target, both
// ways of applying the scale, bit for bit against the reference.
TEST_F(KernelsOnEveryTarget, QuantizeFromEveryPlaceInALine) {
  const uint32_t seed = 64;
  std::mt19937 g(seed);
  for (const auto& [target, by_reciprocal] : every_target_by_both_strategies()) {
    kernels::force_target(target);
    kernels::force_reciprocal(by_reciprocal);
    const std::string target_text = kernels::target_name(target) + (by_reciprocal ? " by reciprocal" : " by division") +
                                    " (seed " + std::to_string(seed) + ")";
    for (E x_type : {E::kFloat32, E::kFloat16, E::kBfloat16}) {
      const uint64_t element_bytes = info(x_type).bits / 8;
      for (const Sweep& sweep : {Sweep{{1, 1030}, 1, 0, true}, Sweep{{13, 131}, 1, 0, false}, Sweep{{131, 13}, 0, 0, false}}) {
        for (E out : {E::kInt8, E::kUint16, E::kInt4, E::kUint2, E::kFloat8E4M3FN, E::kFloat4E2M1}) {
          const float base_scale = std::ldexp(1.37f, static_cast<int>(g() % 8) - 4);
          const uint64_t n = count_of(sweep.shape);
          const std::vector<int64_t> scale_shape = scale_shape_of(sweep);
          const uint64_t scale_count = count_of(scale_shape);
          auto scale = make_storage(E::kFloat32, scale_count, [&](uint64_t) {
            return std::bit_cast<uint32_t>(static_cast<float>(base_scale * (1.0 + (g() % 1000) / 997.0)));
          });
          const ElementTypeInfo& o = info(out);
          auto zp = make_storage(out, scale_count, [&](uint64_t) -> uint32_t {
            return o.is_float() ? 0 : static_cast<uint32_t>(g()) & ((1u << o.bits) - 1u);
          });
          const auto codes = make_storage(x_type, n, [&](uint64_t) { return x_code(x_type, g, base_scale); });
          LineBuffer line_buffer(codes.size());
          for (uint64_t offset = 0; offset < 64 / element_bytes; ++offset) {
            uint8_t* x = line_buffer.at(offset * element_bytes);
            std::memcpy(x, codes.data(), codes.size());
            QuantizeLinearAttributes a;
            a.axis = sweep.axis;
            a.saturate = 1;
            const bool with_zp = o.is_integer();
            if (!with_zp) a.output_dtype = static_cast<int64_t>(out);
            const TensorView zv{out, scale_shape, zp.data()};
            const Result<Plan> plan = plan_quantize_linear({x_type, sweep.shape, x}, {E::kFloat32, scale_shape, scale.data()},
                                                           with_zp ? &zv : nullptr, a);
            ASSERT_TRUE(plan.ok()) << plan.status().message();
            if (!same_as_reference(plan.value(), sweep, target_text + ", x " + std::to_string(offset) + " elements into a line")) {
              return;
            }
          }
        }
      }
    }
  }
}

// The reduction takes the elements before x's first whole vector one by one (reduce-inl.h's
// ElementsBeforeWholeVector): x at every element offset within a 64-byte line, lengths around the vector sizes,
// with NaN, infinities and both zeros among random values, against a scalar fold, on every target.
TEST_F(KernelsOnEveryTarget, ReductionFromEveryPlaceInALine) {
  const uint32_t seed = 65;
  std::mt19937 g(seed);
  for (int64_t target : kernels::supported_targets()) {
    kernels::force_target(target);
    for (E x_type : {E::kFloat32, E::kFloat16, E::kBfloat16}) {
      const uint64_t element_bytes = info(x_type).bits / 8;
      for (uint64_t count : {1, 5, 15, 16, 17, 33, 64, 70, 257}) {
        LineBuffer line_buffer(count * element_bytes);
        for (uint64_t offset = 0; offset < 64 / element_bytes; ++offset) {
          uint8_t* x = line_buffer.at(offset * element_bytes);
          const int special = static_cast<int>(g() % 4);  // 0: none; 1: a NaN; 2: infinities; 3: zeros
          kernels::Extremes expected;
          for (uint64_t i = 0; i < count; ++i) {
            float v = static_cast<float>(static_cast<int>(g() % 2001) - 1000) / 8.0f;
            if (special == 1 && i == count / 2) v = NAN;
            if (special == 2 && i % 7 == 3) v = i % 2 ? INFINITY : -INFINITY;
            if (special == 3) v = i % 2 ? 0.0f : -0.0f;
            const uint32_t code = codec::encode_float(info(x_type), v, codec::Overflow::kInfOrNan);
            codec::store_code(x, info(x_type), i, code);
            const float stored = static_cast<float>(codec::load_value(x, info(x_type), i));
            const bool is_nan = stored != stored;
            expected.merge(kernels::Extremes{is_nan ? 0.0f : stored, is_nan ? 0.0f : stored, is_nan});
          }
          kernels::Extremes got;
          kernels::reduce_extremes(x_type, x, 0, count, &got);
          const std::string where = kernels::target_name(target) + " " + std::string(info(x_type).name) + ", " +
                                    std::to_string(count) + " elements " + std::to_string(offset) +
                                    " into a line (seed 65)";
          EXPECT_EQ(got.nan, expected.nan) << where;
          EXPECT_EQ(got.min, expected.min) << where;  // == : -0 and +0 may differ in sign, not value
          EXPECT_EQ(got.max, expected.max) << where;
        }
      }
    }
  }
}

// Quotients at and beside every half-integer of the integer types' ranges: where x / s is a tie
// or within a few ulps of one, RN(x * RN(1/s)) may round to the other side, so the kernels that
// multiply by the reciprocal (AVX-512, uniform scales) must detect these lanes and divide. x is
// (k + 1/2) * s rounded to float32 and its neighbours up to 4 ulps away, for every k from below
// the range to above it, with scales of random significands (and ones whose reciprocal is
// subnormal or infinite, which always divide), per-tensor and blocked, with random zero points.
TEST_F(KernelsOnEveryTarget, QuantizeQuotientsNearHalfIntegersMatchTheReference) {
  const uint32_t seed = 20261124;
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> significand(1.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-30, 30);
  // Both strategies on every target, whichever this CPU would pick (kernels::quantizes_by_reciprocal).
  for (const auto& [target, by_reciprocal] : every_target_by_both_strategies()) {
    kernels::force_target(target);
    kernels::force_reciprocal(by_reciprocal);
    const std::string target_text = kernels::target_name(target) + (by_reciprocal ? " by reciprocal" : " by division") +
                                    " (seed " + std::to_string(seed) + ")";
    for (E out : {E::kInt8, E::kUint8, E::kInt16, E::kUint16, E::kInt4, E::kUint4, E::kInt2, E::kUint2}) {
      const ElementTypeInfo& o = info(out);
      const int64_t span = int64_t{1} << o.bits;
      // k covers [lowest - zp - 2, max - zp + 2] for every zero point: all of it for types of <= 8
      // bits; for 16 bits the 300 nearest each end and 0, and every 97th between.
      std::vector<int64_t> ks;
      for (int64_t k = -span - 2; k <= span + 2; ++k) {
        const bool near_edge = std::min({k + span + 2, span + 2 - k, k < 0 ? -k : k}) <= 300;
        if (span <= 256 || near_edge || k % 97 == 0) ks.push_back(k);
      }
      for (float scale : {0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 1e-39f, 3e38f}) {
        if (scale == 0.0f) scale = std::ldexp(significand(g), exponent(g));
        std::vector<float> x;
        for (int64_t k : ks) {
          const float tie = static_cast<float>((static_cast<double>(k) + 0.5) * scale);
          float below = tie, above = tie;
          x.push_back(tie);
          for (int step = 0; step < 4; ++step) {
            below = std::nextafter(below, -std::numeric_limits<float>::infinity());
            above = std::nextafter(above, std::numeric_limits<float>::infinity());
            x.push_back(below);
            x.push_back(above);
          }
          x.push_back(static_cast<float>(static_cast<double>(k) * scale));
        }
        for (float special : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(), 3e38f, -3e38f, 1e-42f, -0.0f}) {
          x.push_back(special);
        }
        while (x.size() % 32 != 0) x.push_back(0.25f * scale);
        const int64_t n = static_cast<int64_t>(x.size());
        for (int64_t block : {int64_t{0}, int64_t{32}}) {
          const Sweep sweep{block == 0 ? std::vector<int64_t>{n} : std::vector<int64_t>{n / 32, 32}, block == 0 ? 0 : 1,
                            block, block == 0};
          const std::vector<int64_t> scale_shape = scale_shape_of(sweep);
          const uint64_t scale_count = count_of(scale_shape);
          auto scales = make_storage(E::kFloat32, scale_count, [&](uint64_t) { return std::bit_cast<uint32_t>(scale); });
          auto zp = make_storage(out, scale_count, [&](uint64_t) -> uint32_t {
            return static_cast<uint32_t>(g()) & ((1u << o.bits) - 1u);
          });
          const TensorView xv{E::kFloat32, sweep.shape, x.data()};
          const TensorView sv{E::kFloat32, scale_shape, scales.data()};
          const TensorView zv{out, scale_shape, zp.data()};
          QuantizeLinearAttributes a;
          a.axis = sweep.axis;
          a.block_size = block;
          const Result<Plan> plan = plan_quantize_linear(xv, sv, &zv, a);
          ASSERT_TRUE(plan.ok()) << plan.status().message();
          if (!same_as_reference(plan.value(), sweep, target_text + " scale " + std::to_string(scale))) return;
          // The fused fake-quant takes the same quotients (by the reciprocal where Q does): its y
          // against Q then DQ composed by the scalar reference.
          QuantizeDequantizeAttributes fq;
          fq.axis = sweep.axis;
          fq.block_size = block;
          const Result<QuantizeDequantizePlan> fused = plan_quantize_dequantize_linear(xv, sv, &zv, fq);
          ASSERT_TRUE(fused.ok()) << fused.status().message();
          std::vector<float> y_fused(x.size()), y_composed(x.size());
          ASSERT_TRUE(execute(fused.value(), {E::kFloat32, sweep.shape, y_fused.data()}).ok());
          ExecuteOptions reference;
          reference.path = ExecutionPath::kReference;
          ASSERT_TRUE(execute(fused.value(), {E::kFloat32, sweep.shape, y_composed.data()}, nullptr, reference).ok());
          for (size_t i = 0; i < x.size(); ++i) {
            ASSERT_EQ(std::bit_cast<uint32_t>(y_fused[i]), std::bit_cast<uint32_t>(y_composed[i]))
                << target_text << " fake-quant " << name(out) << " block " << block << " scale " << scale << " x "
                << x[i] << " (element " << i << ")";
          }
        }
      }
    }
  }
}

TEST_F(KernelsOnEveryTarget, DequantizeMatchesTheReference) {
  const uint32_t seed = 1234567;
  std::mt19937 g(seed);
  for (int64_t target : kernels::supported_targets()) {
    kernels::force_target(target);
    const std::string target_text = kernels::target_name(target) + " (seed " + std::to_string(seed) + ")";
    for (const Sweep& sweep : sweeps(16)) {
      for (E x_type : kQuantizedTypes) {
        for (E scale_type : {E::kFloat32, E::kFloat16, E::kBfloat16, E::kFloat8E8M0}) {
          for (E out : {E::kFloat32, E::kFloat16, E::kBfloat16}) {
            const uint64_t n = count_of(sweep.shape);
            const std::vector<int64_t> scale_shape = scale_shape_of(sweep);
            const uint64_t scale_count = count_of(scale_shape);
            const ElementTypeInfo& xt = info(x_type);
            auto x = make_storage(x_type, n, [&](uint64_t) { return static_cast<uint32_t>(g()) & ((1u << xt.bits) - 1u); });
            auto scale = make_storage(scale_type, scale_count, [&](uint64_t) -> uint32_t {
              if (scale_type == E::kFloat8E8M0) return static_cast<uint32_t>(g() % 256);
              if (scale_type != E::kFloat32 && g() % 37 == 0) {
                // NaN scales with payloads (signalling too): widening keeps the payload.
                const uint32_t nans[] = {0x7D01, 0xFFFF, 0x7E00, 0x7FA1, 0xFF81};
                const uint32_t code = nans[g() % 5];
                const bool valid = scale_type == E::kFloat16 ? (code & 0x7C00) == 0x7C00 : (code & 0x7F80) == 0x7F80;
                if (valid) return code;
              }
              const double s = std::ldexp(1.0 + (g() % 1000) / 999.0, static_cast<int>(g() % 60) - 30);
              return codec::encode_float(info(scale_type), g() % 31 == 0 ? 6e4 * s : s, codec::Overflow::kInfOrNan);
            });
            auto zp = make_storage(x_type, scale_count, [&](uint64_t) -> uint32_t {
              return xt.is_float() ? 0u : static_cast<uint32_t>(g()) & ((1u << xt.bits) - 1u);
            });
            const TensorView xv{x_type, sweep.shape, x.data()};
            const TensorView sv{scale_type, scale_shape, scale.data()};
            const TensorView zv{x_type, scale_shape, zp.data()};
            DequantizeLinearAttributes a;
            a.axis = sweep.axis;
            a.block_size = sweep.block;
            a.output_dtype = static_cast<int64_t>(out);
            const Result<Plan> plan = plan_dequantize_linear(xv, sv, g() % 4 ? &zv : nullptr, a);
            ASSERT_TRUE(plan.ok()) << plan.status().message();
            ASSERT_TRUE(kernels::covers(plan.value()));
            if (!same_as_reference(plan.value(), sweep, target_text)) return;
          }
        }
      }
    }
  }
}

TEST_F(KernelsOnEveryTarget, EveryFloat16AndBfloat16InputToEveryTarget) {
  for (int64_t target : kernels::supported_targets()) {
    kernels::force_target(target);
    for (E x_type : {E::kFloat16, E::kBfloat16}) {
      auto x = make_storage(x_type, 65536, [](uint64_t i) { return static_cast<uint32_t>(i); });
      const Sweep sweep{{65536}, 0, 0, true};
      for (E out : kQuantizedTypes) {
        for (float scale_value : {1.0f, 0.3f, 1e-3f}) {
          for (E precision : {E::kFloat32, E::kFloat16, E::kBfloat16}) {
            for (int64_t saturate : {0, 1}) {
              const TensorView xv{x_type, sweep.shape, x.data()};
              const TensorView sv{E::kFloat32, {}, &scale_value};
              QuantizeLinearAttributes a;
              a.output_dtype = static_cast<int64_t>(out);
              a.precision = static_cast<int64_t>(precision);
              a.saturate = saturate;
              const Result<Plan> plan = plan_quantize_linear(xv, sv, nullptr, a);
              ASSERT_TRUE(plan.ok()) << plan.status().message();
              if (!same_as_reference(plan.value(), sweep, kernels::target_name(target))) return;
            }
          }
        }
      }
    }
  }
}

// Every float16 / bfloat16 code per-axis-last with scales of x's own type, in x's own precision
// and in the other 16-bit one: the per-element-scale path, which skips rounding what is already
// exact in the precision (x, a scale of the precision's type). Zero points cover every code of
// the integer types; float8 zero points are never read (the plan does not apply them).
TEST_F(KernelsOnEveryTarget, EveryFloat16AndBfloat16InputPerAxisWithScalesOfItsType) {
  const uint32_t seed = 4242;
  std::mt19937 g(seed);
  for (int64_t target : kernels::supported_targets()) {
    kernels::force_target(target);
    for (E x_type : {E::kFloat16, E::kBfloat16}) {
      auto x = make_storage(x_type, 65536, [](uint64_t i) { return static_cast<uint32_t>(i); });
      const Sweep sweep{{256, 256}, 1, 0, false};
      auto scale = make_storage(x_type, 256, [&](uint64_t i) {
        const double s = std::ldexp(1.0 + static_cast<double>(g() % 1000) / 999.0, static_cast<int>(i % 24) - 12);
        return codec::encode_float(info(x_type), s, codec::Overflow::kInfOrNan);
      });
      for (E out : kQuantizedTypes) {
        const ElementTypeInfo& o = info(out);
        auto zp = make_storage(out, 256, [&](uint64_t) -> uint32_t {
          return o.is_float() && o.bits == 8 ? 0u : static_cast<uint32_t>(g()) & ((1u << o.bits) - 1u);
        });
        for (E precision : {x_type, x_type == E::kFloat16 ? E::kBfloat16 : E::kFloat16}) {
          const TensorView xv{x_type, sweep.shape, x.data()};
          const std::vector<int64_t> scale_shape = {256};
          const TensorView sv{x_type, scale_shape, scale.data()};
          const TensorView zv{out, scale_shape, zp.data()};
          QuantizeLinearAttributes a;
          a.axis = 1;
          a.precision = static_cast<int64_t>(precision);
          a.saturate = static_cast<int64_t>(g() % 2);
          const Result<Plan> plan = plan_quantize_linear(xv, sv, &zv, a);
          ASSERT_TRUE(plan.ok()) << plan.status().message();
          ASSERT_TRUE(kernels::covers(plan.value()));
          if (!same_as_reference(plan.value(), sweep, kernels::target_name(target) + " (seed 4242)")) return;
        }
      }
    }
  }
}

// The rounding of clamped float16 / bfloat16 quotients for integer codes of at most 8 bits
// (Veltkamp's splitting, kernels-inl.h RoundToSignificandOf) on every target, against a scalar
// transcription (the value scaled to an integer significand of 11 or 8 bits, rounded half to
// even by nearbyint in double, scaled back): every float32 of magnitude in [2^-2, 2^9), both
// signs. That holds every clamped quotient that can round to a nonzero code: the bounds are
// within +-255, and below 2^-2 any rounding stays below 0.5.
TEST_F(KernelsOnEveryTarget, ClampedQuotientsRoundToTheSignificandOfXsType) {
  constexpr uint32_t kChunk = uint32_t{1} << 20;  // a part of one binade (2^23 significands)
  std::vector<float> v(kChunk), expected(kChunk), got(kChunk);
  const std::vector<int64_t> targets = kernels::supported_targets();
  for (E x_type : {E::kFloat16, E::kBfloat16}) {
    const int bits = x_type == E::kFloat16 ? 11 : 8;
    for (int exponent = -2; exponent < 9; ++exponent) {
      const double scale = std::ldexp(1.0, bits - 1 - exponent);  // the significand's last bit at 1
      for (uint32_t sign : {0u, 0x8000'0000u}) {
        const uint32_t binade = sign | (static_cast<uint32_t>(exponent + 127) << 23);
        for (uint32_t start = 0; start < (uint32_t{1} << 23); start += kChunk) {
          for (uint32_t i = 0; i < kChunk; ++i) {
            v[i] = std::bit_cast<float>(binade | (start + i));
            expected[i] = static_cast<float>(std::nearbyint(static_cast<double>(v[i]) * scale) / scale);
          }
          for (int64_t target : targets) {
            kernels::force_target(target);
            kernels::round_to_significand_of(x_type, v.data(), kChunk, got.data());
            for (uint32_t i = 0; i < kChunk; ++i) {
              if (std::bit_cast<uint32_t>(got[i]) != std::bit_cast<uint32_t>(expected[i])) {
                FAIL() << kernels::target_name(target) << " " << name(x_type) << ": " << std::hexfloat << v[i]
                       << " gave " << got[i] << ", expected " << expected[i];
              }
            }
          }
        }
      }
    }
  }
}

// float16 quotients on float16's overflow edge to the integer types: the kernels round a float16
// quotient for integer codes on its float32 bits (RoundFloat16QuotientForSmallIntegers), where
// [65520, 65536) gives 65536 instead of float16's infinity. Column j's scale puts row 0x7A's x
// (and row 0xFA's, negated) at a quotient of 65528, in that band; every other x of the column
// lands elsewhere. Zero points are random codes (seed printed), or none.
TEST_F(KernelsOnEveryTarget, Float16QuotientsAtFloat16OverflowToIntegers) {
  const uint32_t seed = 4343;
  std::mt19937 g(seed);
  auto x = make_storage(E::kFloat16, 65536, [](uint64_t i) { return static_cast<uint32_t>(i); });
  const Sweep sweep{{256, 256}, 1, 0, false};
  auto scale = make_storage(E::kFloat32, 256, [&](uint64_t j) {
    const double x_in_band = codec::decode(info(E::kFloat16), 0x7A00u + static_cast<uint32_t>(j));
    return std::bit_cast<uint32_t>(static_cast<float>(x_in_band / 65528.0));
  });
  for (int64_t target : kernels::supported_targets()) {
    kernels::force_target(target);
    for (E out : kQuantizedTypes) {
      const ElementTypeInfo& o = info(out);
      if (o.is_float()) continue;
      auto zp = make_storage(out, 256, [&](uint64_t) { return static_cast<uint32_t>(g()) & ((1u << o.bits) - 1u); });
      for (bool with_zero_point : {false, true}) {
        const TensorView xv{E::kFloat16, sweep.shape, x.data()};
        const std::vector<int64_t> scale_shape = {256};
        const TensorView sv{E::kFloat32, scale_shape, scale.data()};
        const TensorView zv{out, scale_shape, zp.data()};
        QuantizeLinearAttributes a;
        a.axis = 1;
        a.output_dtype = static_cast<int64_t>(out);
        a.precision = static_cast<int64_t>(E::kFloat16);
        const Result<Plan> plan = plan_quantize_linear(xv, sv, with_zero_point ? &zv : nullptr, a);
        ASSERT_TRUE(plan.ok()) << plan.status().message();
        ASSERT_TRUE(kernels::covers(plan.value()));
        if (!same_as_reference(plan.value(), sweep, kernels::target_name(target) + " (seed 4343)")) return;
      }
    }
  }
}

// NaN x NaN gives the scale's NaN (docs/semantics.md) where the scales vary per element, the loop
// that multiplies without a select: on AVX2 and AVX-512 the scale is the multiplication's first
// source (ScaledProduct). Every x code of a float8 type, float16 and bfloat16 NaNs with payloads,
// meets float32 scales that are quiet and signalling NaNs of both signs, or finite; each column
// has one scale and sees every x code.
TEST_F(KernelsOnEveryTarget, NaNTimesNaNGivesTheScalesNaNWithPerElementScales) {
  const uint32_t nan_scales[] = {0x7FC0'0000u, 0xFFC1'2345u, 0x7F80'0001u, 0xFFA0'0000u};
  auto scale = make_storage(E::kFloat32, 256, [&](uint64_t j) {
    return j % 2 == 0 ? nan_scales[(j / 2) % 4] : std::bit_cast<uint32_t>(0.25f + static_cast<float>(j));
  });
  const Sweep sweep{{256, 256}, 1, 0, false};
  const std::vector<int64_t> scale_shape = {256};
  // float16 / bfloat16 x: NaNs with payloads (quiet, signalling, both signs) among finite codes.
  const uint32_t half_nans[] = {0x7E00u, 0xFD01u, 0x7C01u, 0xFFFFu};
  const uint32_t bf16_nans[] = {0x7FC0u, 0xFF81u, 0x7F81u, 0xFFFFu};
  for (int64_t target : kernels::supported_targets()) {
    kernels::force_target(target);
    const std::string target_text = kernels::target_name(target);
    for (E x_type : {E::kFloat8E4M3FN, E::kFloat8E4M3FNUZ, E::kFloat8E5M2, E::kFloat8E5M2FNUZ, E::kFloat16, E::kBfloat16}) {
      const bool half = x_type == E::kFloat16 || x_type == E::kBfloat16;
      auto x = make_storage(x_type, 65536, [&](uint64_t i) -> uint32_t {
        const uint32_t k = static_cast<uint32_t>(i / 256 + i % 256) % 256;  // column j sees every k
        if (!half) return k;
        if (k % 4 == 0) return (x_type == E::kFloat16 ? half_nans : bf16_nans)[(k / 4) % 4];
        return codec::encode_float(info(x_type), static_cast<double>(k) - 100.0, codec::Overflow::kInfOrNan);
      });
      for (E out : {E::kFloat32, E::kFloat16, E::kBfloat16}) {
        const TensorView xv{x_type, sweep.shape, x.data()};
        const TensorView sv{E::kFloat32, scale_shape, scale.data()};
        Result<Plan> plan = Status::internal("unplanned");
        if (half) {  // Quark's ExtendedDequantizeLinear takes float16 / bfloat16 x, to float32 only
          if (out != E::kFloat32) continue;
          plan = plan_extended_dequantize_linear(xv, sv, nullptr, 1);
        } else {
          DequantizeLinearAttributes a;
          a.axis = 1;
          a.output_dtype = static_cast<int64_t>(out);
          plan = plan_dequantize_linear(xv, sv, nullptr, a);
        }
        ASSERT_TRUE(plan.ok()) << plan.status().message();
        ASSERT_TRUE(kernels::covers(plan.value()));
        if (!same_as_reference(plan.value(), sweep, target_text + " " + std::string(name(x_type)))) return;
      }
    }
  }
}

// Every float16 / bfloat16 code as the quotient itself (scales of 1 of x's type, divided in x's
// precision) to every float8 type and float4e2m1, saturating or not, per-axis on either axis and
// blocked along either: on AVX-512 these quotients are looked up in the code tables
// (kernels.cpp, CodeTable) by both quantize loops that read them, so every entry of every table
// meets the reference.
TEST_F(KernelsOnEveryTarget, EveryFloat16AndBfloat16QuotientToFloat8AndFloat4) {
  // Blocks of 8, 16, 32 and 48 along the last axis (48 ends in a partial block): two, four, eight
  // and twelve vectors on SSE4, one, two, four and six on AVX2, half, one, two and three on
  // AVX-512, so that each loop of the blocked path meets them (the 16-bit-lane encode of pairs
  // or fours, the code table, Encode).
  const Sweep granularities[] = {{{256, 256}, 1, 0, false},  {{256, 256}, 0, 0, false}, {{256, 256}, 1, 32, false},
                                 {{256, 256}, 0, 32, false}, {{256, 256}, 1, 8, false}, {{256, 256}, 1, 16, false},
                                 {{256, 256}, 1, 48, false}};
  for (int64_t target : kernels::supported_targets()) {
    kernels::force_target(target);
    for (E x_type : {E::kFloat16, E::kBfloat16}) {
      auto x = make_storage(x_type, 65536, [](uint64_t i) { return static_cast<uint32_t>(i); });
      const uint32_t one = codec::encode_float(info(x_type), 1.0, codec::Overflow::kInfOrNan);
      for (const Sweep& sweep : granularities) {
        const std::vector<int64_t> scale_shape = scale_shape_of(sweep);
        auto scale = make_storage(x_type, count_of(scale_shape), [&](uint64_t) { return one; });
        for (E out : {E::kFloat8E4M3FN, E::kFloat8E4M3FNUZ, E::kFloat8E5M2, E::kFloat8E5M2FNUZ, E::kFloat4E2M1}) {
          for (int64_t saturate : {0, 1}) {
            QuantizeLinearAttributes a;
            a.axis = sweep.axis;
            a.block_size = sweep.block;
            a.output_dtype = static_cast<int64_t>(out);
            a.precision = static_cast<int64_t>(x_type);
            a.saturate = saturate;
            const Result<Plan> plan =
                plan_quantize_linear({x_type, sweep.shape, x.data()}, {x_type, scale_shape, scale.data()}, nullptr, a);
            ASSERT_TRUE(plan.ok()) << plan.status().message();
            ASSERT_TRUE(kernels::covers(plan.value()));
            if (!same_as_reference(plan.value(), sweep, kernels::target_name(target))) return;
          }
        }
      }
    }
  }
}

// Runs the plan with the reference once and with the kernels on every target into y of `layout`
// (8 bytes past its end must stay untouched as well): "" when every target writes the
// reference's bytes, else the first target that does not.
std::string first_target_unlike_reference(const Plan& plan, SubByteLayout layout) {
  const uint64_t bytes = storage_bytes(plan.output_type, plan.element_count, layout) + 8;
  std::vector<uint8_t> fast(bytes, 0xCD), reference(bytes, 0xCD);
  ExecuteOptions options;
  options.path = ExecutionPath::kReference;
  if (!execute(plan, {plan.output_type, plan.shape, reference.data(), layout}, options).ok()) return "the reference";
  std::string unlike;
  for (int64_t target : kernels::supported_targets()) {
    kernels::force_target(target);
    std::fill(fast.begin(), fast.end(), 0xCD);
    if (!execute(plan, {plan.output_type, plan.shape, fast.data(), layout}).ok() || fast != reference) {
      unlike = kernels::target_name(target);
      break;
    }
  }
  kernels::force_target(0);
  return unlike;
}

// Scales of float16 or bfloat16 x's own type (patterns) that the kernels' special paths must get
// right: normal ones of both signs, the largest and smallest finite, subnormal, +-0, infinities
// and NaN, and one that puts boundaries at the type's overflow.
std::vector<uint32_t> kinds_of_scale(ElementType x_type) {
  const bool half = x_type == ElementType::kFloat16;
  return {
      half ? 0x35EBu : 0x3EBDu,  // 0.37
      half ? 0xB5EBu : 0xBEBDu,  // -0.37
      half ? 0x3C00u : 0x3F80u,  // 1
      half ? 0x1419u : 0x3A83u,  // about 0.001
      half ? 0x7BFFu : 0x7F7Fu,  // the largest finite
      half ? 0x7800u : 0x7E80u,  // 32768 / 2^126: +-7.5 times it overflows
      half ? 0x0400u : 0x0080u,  // the smallest normal
      half ? 0x0001u : 0x0001u,  // the smallest subnormal
      half ? 0x8003u : 0x8003u,  // a negative subnormal
      0x0000u, 0x8000u,          // +-0
      half ? 0x7C00u : 0x7F80u,  // inf
      half ? 0xFC00u : 0xFF80u,  // -inf
      half ? 0x7E00u : 0x7FC0u,  // NaN
      half ? 0x4B80u : 0x4170u,  // 15 (half) / 15 (bfloat16)
      half ? 0x2E66u : 0x3DCDu,  // about 0.1
  };
}

// QuantizeLinear of every pattern of float16 or bfloat16 x in its own precision with float32
// scales, one per row (per-axis on axis 0), to `out`: each scale is rounded to x's type first,
// some to 0 or infinity, of both signs. "" where every target writes the reference's codes, else
// the first target that does not, or why the plan failed.
std::string float32_scales_unlike_reference(ElementType x_type, ElementType out) {
  const std::vector<float> scales = {0.37f, -0.37f, 1e-9f, -3e38f, 1e6f, 0.0999f, -2.5e-3f, 7.1f, 3e-6f};
  const int64_t rows = static_cast<int64_t>(scales.size());
  const std::vector<int64_t> x_shape{rows, 65536}, operand_shape{rows};
  auto x = make_storage(x_type, static_cast<uint64_t>(rows) * 65536,
                        [](uint64_t i) { return static_cast<uint32_t>(i % 65536); });
  auto scale = make_storage(ElementType::kFloat32, static_cast<uint64_t>(rows),
                            [&](uint64_t r) { return std::bit_cast<uint32_t>(scales[r]); });
  QuantizeLinearAttributes a;
  a.axis = 0;
  a.output_dtype = static_cast<int64_t>(out);
  a.precision = static_cast<int64_t>(x_type);
  const Result<Plan> planned =
      plan_quantize_linear({x_type, x_shape, x.data()}, {ElementType::kFloat32, operand_shape, scale.data()}, nullptr, a);
  if (!planned.ok()) return "the plan: " + planned.status().message();
  return first_target_unlike_reference(planned.value(), SubByteLayout::kPacked);
}

// Quantization of float16 and bfloat16 x in its own precision to 4- and 2-bit integers and
// float4e2m1 by thresholds (kernels-inl.h, QuantizeByThresholds: AVX-512 targets; the others run
// the arithmetic), against the reference on every target. Each row of x holds every one of the
// 2^16 patterns and has its own scale, so every pattern is coded under each scale: normal ones of
// both signs, the largest and smallest finite, subnormal, +-0, infinities and NaN (the last four
// keep the arithmetic), and scales that put boundaries at the type's overflow. Integer outputs
// get a random zero point per row; float4 runs without one and with one (zero-point codes include
// -0). Rows of 528 and 1000 elements (random patterns, seed 5454) take the stretch's last partial
// 32 elements, and a scale per row with few rows sharing one; float32 scales in x's precision are
// rounded to x's type first. Each case runs again with every
// threshold's estimate moved 7 keys up and 7 down, so that the windows miss and every threshold
// is bisected.
TEST(KernelsByThresholds, EveryPatternUnderEveryKindOfScaleMatchesTheReference) {
  struct RestoreTheEstimates {
    ~RestoreTheEstimates() { kernels::shift_threshold_estimates(0); }
  } restore;
  for (int shift : {0, 7, -7}) {
    kernels::shift_threshold_estimates(shift);
    std::mt19937 g(5454);
    for (E x_type : {E::kFloat16, E::kBfloat16}) {
      const std::vector<uint32_t> scale_patterns = kinds_of_scale(x_type);
      const int64_t rows = static_cast<int64_t>(scale_patterns.size());
      // The shorter rows' scales: those and four random positive ones.
      std::vector<uint32_t> scales_of_rows = scale_patterns;
      for (int j = 0; j < 4; ++j) scales_of_rows.push_back((g() & 0x1FFFu) | 0x2000u);
      struct Shape {
        int64_t rows, columns;
        bool every_pattern;
      };
      for (const Shape& shape : {Shape{rows, 65536, true}, Shape{96, 528, false}, Shape{40, 1000, false}}) {
        const uint64_t count = static_cast<uint64_t>(shape.rows * shape.columns);
        auto x = make_storage(x_type, count, [&](uint64_t i) -> uint32_t {
          return shape.every_pattern ? static_cast<uint32_t>(i % 65536) : g() & 0xFFFFu;
        });
        auto scale = make_storage(x_type, static_cast<uint64_t>(shape.rows), [&](uint64_t r) -> uint32_t {
          if (shape.every_pattern) return scale_patterns[r];
          return scales_of_rows[(r / 3) % scales_of_rows.size()];  // three rows share a scale
        });
        for (E out : {E::kInt4, E::kUint4, E::kInt2, E::kUint2, E::kFloat4E2M1}) {
          const ElementTypeInfo& oi = info(out);
          for (bool with_zero_point : {false, true}) {
            if (oi.is_integer() != with_zero_point && out != E::kFloat4E2M1) continue;
            auto zp = make_storage(out, static_cast<uint64_t>(shape.rows),
                                   [&](uint64_t) { return static_cast<uint32_t>(g()) & ((1u << oi.bits) - 1u); });
            const std::vector<int64_t> x_shape{shape.rows, shape.columns}, operand_shape{shape.rows};
            const TensorView zv{out, operand_shape, zp.data()};
            QuantizeLinearAttributes a;
            a.axis = 0;
            a.output_dtype = static_cast<int64_t>(out);
            a.precision = static_cast<int64_t>(x_type);
            const Result<Plan> planned = plan_quantize_linear({x_type, x_shape, x.data()},
                                                              {x_type, operand_shape, scale.data()},
                                                              with_zero_point ? &zv : nullptr, a);
            ASSERT_TRUE(planned.ok()) << planned.status().message();
            for (SubByteLayout layout : {SubByteLayout::kPacked, SubByteLayout::kOneCodePerByte}) {
              ASSERT_EQ(first_target_unlike_reference(planned.value(), layout), "")
                  << name(x_type) << " -> " << name(out) << ", [" << shape.rows << ", " << shape.columns << "]"
                  << (with_zero_point ? " with" : " without") << " zero points, layout " << static_cast<int>(layout)
                  << ", estimates moved " << shift << " keys (seed 5454)";
            }
          }
        }
      }
      // float32 scales in x's precision (those keep the arithmetic where they round to 0 or
      // infinity).
      for (E out : {E::kInt4, E::kUint2, E::kFloat4E2M1}) {
        ASSERT_EQ(float32_scales_unlike_reference(x_type, out), "")
            << name(x_type) << " -> " << name(out) << " with float32 scales, estimates moved " << shift << " keys";
      }
    }
  }
}

// The premise of OwnPrecisionQuotientByReciprocal (kernels-inl.h), exhaustively and in scalar
// code: for every float16 or bfloat16 x pattern and every positive scale pattern s of the same
// type whose reciprocal r = RN(1 / s) is a normal float32, RN(x r) and RN(x / s) round to the same
// value of the type (half to even) wherever the quotient's magnitude is at most 2^18, with one
// exception: float16 quotients below its normal range (2^-14), where some pairs round one
// subnormal step (2^-24) apart and every code read of them must agree instead: the integer (0),
// each float8 format's and float4e2m1's, and float4e2m1's after every zero point's addition in
// float32 (as FloatOutput adds it). Beyond 2^18 every code saturates alike (four times the
// largest float8 value, e5m2's 57344, and far beyond every 16-bit integer's bound with its zero
// point), as the product and the quotient differ by a float32 unit or two. Negative x and s
// mirror these. Above float16's subnormals the rounding to the type is to its significand's bits
// on float32's (half to even), without its exponent range: above float16's largest finite value
// it gives 65504 where the type does and 65536 or more where the type overflows to infinity, so
// agreement there is the type's agreement. Patterns decode by their fields.
TEST(KernelsByReciprocal, ProductOfEveryPatternRoundsAsTheQuotient) {
  const auto float16_value = [](uint32_t bits) {  // 0bEEEEEMMMMMMMMMM, positive and finite
    const uint32_t exponent = bits >> 10, mantissa = bits & 0x3FFu;
    return exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -24)
                         : std::ldexp(static_cast<float>(mantissa | 0x400u), static_cast<int>(exponent) - 25);
  };
  const auto bfloat16_value = [](uint32_t bits) { return std::bit_cast<float>(bits << 16); };
  // v rounded half to even to `bits` significant bits (24 - dropped), for finite v.
  const auto round_to_significand = [](float v, int dropped) {
    const uint32_t u = std::bit_cast<uint32_t>(v);
    const uint32_t half_minus_one = (1u << (dropped - 1)) - 1u, odd = (u >> dropped) & 1u;
    return std::bit_cast<float>((u + half_minus_one + odd) & ~((1u << dropped) - 1u));
  };
  // v (below 2^-13, float16's binades of step 2^-24) rounded to a multiple of 2^-24, half to even.
  const auto round_to_float16_step = [](float v) { return std::ldexp(std::nearbyint(std::ldexp(v, 24)), -24); };
  const std::vector<E> float_outputs{E::kFloat8E4M3FN, E::kFloat8E4M3FNUZ, E::kFloat8E5M2, E::kFloat8E5M2FNUZ,
                                     E::kFloat4E2M1};
  for (E x_type : {E::kFloat16, E::kBfloat16}) {
    const bool half = x_type == E::kFloat16;
    const int dropped = half ? 13 : 16;
    const uint32_t infinity = half ? 0x7C00u : 0x7F80u;
    uint64_t pairs = 0, subnormal_steps = 0;
    for (uint32_t s_bits = 1; s_bits < infinity; ++s_bits) {
      const float s = half ? float16_value(s_bits) : bfloat16_value(s_bits);
      const float r = 1.0f / s;
      if (!std::isnormal(r)) continue;
      for (uint32_t x_bits = 0; x_bits < infinity; ++x_bits) {  // increasing x
        const float x = half ? float16_value(x_bits) : bfloat16_value(x_bits);
        const float quotient = x / s;
        if (quotient > 0x1p18f) break;
        const float product = x * r;
        ++pairs;
        const auto where = [&] {
          std::ostringstream text;
          text << name(x_type) << " x 0x" << std::hex << x_bits << " over 0x" << s_bits << ": quotient " << quotient
               << ", product " << product;
          return text.str();
        };
        if (!half || (quotient >= 0x1p-13f && product >= 0x1p-13f)) {
          if (round_to_significand(quotient, dropped) != round_to_significand(product, dropped)) FAIL() << where();
          continue;
        }
        const float rounded_quotient = round_to_float16_step(quotient), rounded_product = round_to_float16_step(product);
        if (rounded_quotient == rounded_product) continue;
        ++subnormal_steps;
        ASSERT_LT(rounded_quotient, 0x1p-14f) << where();
        ASSERT_EQ(std::nearbyint(rounded_quotient), std::nearbyint(rounded_product)) << where();
        for (E out : float_outputs) {
          ASSERT_EQ(codec::encode_float(info(out), rounded_quotient, codec::Overflow::kSaturate),
                    codec::encode_float(info(out), rounded_product, codec::Overflow::kSaturate))
              << where() << ", " << name(out);
        }
        const ElementTypeInfo& float4 = info(E::kFloat4E2M1);
        for (uint32_t zero_point = 0; zero_point < 16; ++zero_point) {
          const float zp = static_cast<float>(codec::decode(float4, zero_point));
          ASSERT_EQ(codec::encode_float(float4, rounded_quotient + zp, codec::Overflow::kSaturate),
                    codec::encode_float(float4, rounded_product + zp, codec::Overflow::kSaturate))
              << where() << ", float4e2m1 zero point " << zp;
        }
      }
    }
    EXPECT_GT(pairs, uint64_t{1} << 24) << name(x_type);
    RecordProperty(std::string(name(x_type)) + "_pairs_a_subnormal_step_apart", std::to_string(subnormal_steps));
  }
}

// An output of the every-pattern test: with a random zero point per scale or without one (then
// output_dtype names it), and QuantizeLinear's saturate.
struct OutputCase {
  E out;
  bool zero_point = true;
  int64_t saturate = 1;
};

// Quantizes x (x_type, own precision) by the scales of operand_shape along axis (blocked when
// block > 0) to output.out and returns "" when every target writes the reference's bytes, else
// what differs (zero points drawn from g).
std::string quantized_unlike_reference(E x_type, const std::vector<int64_t>& x_shape, const std::vector<uint8_t>& x,
                                       const std::vector<int64_t>& operand_shape, const std::vector<uint8_t>& scale,
                                       const OutputCase& output, int64_t axis, int64_t block, std::mt19937& g) {
  const ElementTypeInfo& oi = info(output.out);
  const auto zp = make_storage(output.out, count_of(operand_shape), [&](uint64_t) {
    return static_cast<uint32_t>(g()) & static_cast<uint32_t>((uint64_t{1} << oi.bits) - 1u);
  });
  const TensorView zv{output.out, operand_shape, zp.data()};
  QuantizeLinearAttributes a;
  a.axis = axis;
  a.block_size = block;
  a.precision = static_cast<int64_t>(x_type);
  a.saturate = output.saturate;
  if (!output.zero_point) a.output_dtype = static_cast<int64_t>(output.out);
  const std::string what = std::string(name(x_type)) + " -> " + std::string(name(output.out)) +
                           (output.zero_point ? " with" : " without") + " zero point, saturate " +
                           std::to_string(output.saturate);
  const Result<Plan> planned = plan_quantize_linear({x_type, x_shape, x.data()}, {x_type, operand_shape, scale.data()},
                                                    output.zero_point ? &zv : nullptr, a);
  if (!planned.ok()) return what + ": " + planned.status().message();
  if (!kernels::covers(planned.value())) return what + ": not covered by the kernels";
  const std::string target = first_target_unlike_reference(planned.value(), SubByteLayout::kPacked);
  return target.empty() ? "" : what + ": unlike the reference on " + target;
}

// Quantization of float16 and bfloat16 x in its own precision to integers, float8 and float4e2m1
// over stretches of one scale (here the rows of a per-axis plan on axis 0), which every target
// codes from the product with the scale's reciprocal where that is normal (kernels-inl.h,
// OwnPrecisionQuotientByReciprocal), against the reference on every target. Each row has its own
// scale: every kind of kinds_of_scale (those whose float32 reciprocal is not normal keep the
// division: zero, infinite, NaN, and bfloat16's largest and smallest), 16 random patterns and 16
// random normal ones of typical size and either sign, seed 5455; and a random zero point where the
// output takes one. 8- and 16-bit integers and float8: every one of the 2^16 patterns of x in each
// row. 4- and 2-bit integers, and float8 and float4e2m1 again: rows of 500 random patterns,
// shorter than the thresholds take. Then blocked plans, whose whole-block loop takes a reciprocal
// per block, per-axis plans on the last axis (the reciprocals of the run's converted scales),
// and float32 scales, rounded to x's type first.
TEST(KernelsByReciprocal, OwnPrecisionQuotientsOfEveryPatternMatchTheReference) {
  std::mt19937 g(5455);
  for (E x_type : {E::kFloat16, E::kBfloat16}) {
    const bool half = x_type == E::kFloat16;
    std::vector<uint32_t> scales = kinds_of_scale(x_type);
    for (int j = 0; j < 16; ++j) scales.push_back(g() & 0xFFFFu);
    for (int j = 0; j < 16; ++j) {  // exponents 2^-10 ... 2^3
      const uint32_t sign = (g() & 1u) << 15;
      scales.push_back(sign | (half ? 0x1400u + g() % 0x3400u : 0x3A80u + g() % 0x0700u));
    }
    const int64_t rows = static_cast<int64_t>(scales.size());
    const std::vector<int64_t> operand_shape{rows};
    auto scale = make_storage(x_type, static_cast<uint64_t>(rows), [&](uint64_t r) { return scales[r]; });
    for (const int64_t columns : {int64_t{65536}, int64_t{500}}) {
      const std::vector<int64_t> x_shape{rows, columns};
      auto x = make_storage(x_type, static_cast<uint64_t>(rows * columns), [&](uint64_t i) -> uint32_t {
        return columns == 65536 ? static_cast<uint32_t>(i % 65536) : g() & 0xFFFFu;
      });
      // Float outputs: each float8 format without a zero point, saturating or not (rows of 500 hit
      // the loops' tails and, for bfloat16 on AVX-512, the code table), float4e2m1 without one
      // (the 16-bit-lane encode) and with one (added to the quotient; its rows of 65536 take the
      // thresholds on AVX-512, its rows of 500 the product).
      const std::vector<OutputCase> outputs =
          columns == 65536 ? std::vector<OutputCase>{{E::kInt8}, {E::kUint8}, {E::kInt16}, {E::kUint16},
                                                     {E::kFloat8E4M3FN, false, 1}, {E::kFloat8E4M3FNUZ, false, 0},
                                                     {E::kFloat8E5M2, false, 0}, {E::kFloat8E5M2FNUZ, false, 1},
                                                     {E::kFloat4E2M1, false}}
                           : std::vector<OutputCase>{{E::kInt4}, {E::kUint4}, {E::kInt2}, {E::kUint2},
                                                     {E::kFloat8E4M3FN, false, 0}, {E::kFloat8E5M2, false, 1},
                                                     {E::kFloat4E2M1, false}, {E::kFloat4E2M1}};
      for (const OutputCase& output : outputs) {
        ASSERT_EQ(quantized_unlike_reference(x_type, {rows, columns}, x, operand_shape, scale, output, 0, 0, g), "")
            << "[" << rows << ", " << columns << "] (seed 5455)";
      }
    }
    // Blocked along the last axis in blocks of 32 and 128 (on AVX-512 the whole-block loop takes 32
    // one vector at a time, 128 four at a time) and of 48 (which does not divide the kernels'
    // chunks of 1024 elements, so that most of its blocks divide, per stretch), about every
    // pattern in each of 8 rows; each block's scale is one of the rows' above (blocks whose
    // reciprocal is not normal divide), each its own zero point.
    for (const int64_t block : {int64_t{32}, int64_t{128}, int64_t{48}}) {
      const int64_t blocked_rows = 8, columns = block == 48 ? 65520 : 65536, blocks = columns / block;
      const std::vector<int64_t> x_shape{blocked_rows, columns}, blocks_shape{blocked_rows, blocks};
      auto x = make_storage(x_type, static_cast<uint64_t>(blocked_rows * columns),
                            [&](uint64_t i) { return static_cast<uint32_t>((i % static_cast<uint64_t>(columns)) * 65536 / columns); });
      auto block_scale = make_storage(x_type, static_cast<uint64_t>(blocked_rows * blocks),
                                      [&](uint64_t i) { return scales[(i * 7) % scales.size()]; });
      // (float8 without a zero point: whole blocks in the 16-bit-lane encode, by fours or pairs of
      // vectors; float4e2m1 with one: each block's zero point added.)
      for (const OutputCase& output : {OutputCase{E::kInt8}, OutputCase{E::kUint16}, OutputCase{E::kInt4},
                                       OutputCase{E::kFloat8E5M2, false, 0}, OutputCase{E::kFloat4E2M1}}) {
        ASSERT_EQ(quantized_unlike_reference(x_type, x_shape, x, blocks_shape, block_scale, output, 1, block, g), "")
            << "in blocks of " << block << " (seed 5455)";
      }
    }
    // Per-axis on the last axis: rows of 16 copies of the scales, in which every scale meets every
    // x pattern over 4096 rows. The kernels take the reciprocals of the scales converted for the
    // run (ConvertedOperand::ReciprocalsOf) when all of them are normal, so once with only those
    // scales and once with all (one that is not makes the whole run divide).
    std::vector<uint32_t> normal_reciprocal_scales;
    for (const uint32_t pattern : scales) {
      const float value = static_cast<float>(codec::decode(info(x_type), pattern));
      if (std::isnormal(1.0f / value)) normal_reciprocal_scales.push_back(pattern);
    }
    for (const std::vector<uint32_t>* row_scales : {&normal_reciprocal_scales, &scales}) {
      const uint64_t kinds = row_scales->size();
      const int64_t last_rows = 4096, columns = static_cast<int64_t>(16 * kinds);
      const std::vector<int64_t> x_shape{last_rows, columns}, column_shape{columns};
      auto x = make_storage(x_type, static_cast<uint64_t>(last_rows * columns), [&](uint64_t i) {
        const uint64_t row = i / static_cast<uint64_t>(columns), column = i % static_cast<uint64_t>(columns);
        return static_cast<uint32_t>((row * 16 + column / kinds) % 65536);
      });
      auto column_scale =
          make_storage(x_type, static_cast<uint64_t>(columns), [&](uint64_t i) { return (*row_scales)[i % kinds]; });
      const std::vector<OutputCase> outputs =
          row_scales == &scales  // the division's fallback
              ? std::vector<OutputCase>{{E::kInt8}, {E::kFloat8E4M3FN, false, 0}}
              : std::vector<OutputCase>{{E::kInt8}, {E::kUint16}, {E::kInt4}, {E::kUint2}, {E::kFloat8E4M3FN, false, 0},
                                        {E::kFloat8E5M2FNUZ, false, 1}, {E::kFloat4E2M1}, {E::kFloat4E2M1, false}};
      for (const OutputCase& output : outputs) {
        ASSERT_EQ(quantized_unlike_reference(x_type, x_shape, x, column_shape, column_scale, output, 1, 0, g), "")
            << "per-axis-last over " << kinds << " scales (seed 5455)";
      }
    }
    // float32 scales in x's precision: the divisor and its reciprocal come from the scale rounded
    // to x's type.
    for (E out : {E::kInt8, E::kUint16, E::kFloat8E4M3FN}) {
      ASSERT_EQ(float32_scales_unlike_reference(x_type, out), "") << name(x_type) << " -> " << name(out)
                                                                   << " with float32 scales";
    }
  }
}

// Per-tensor plans large enough to run by table (execute/by_table.cpp): float16 and bfloat16 x
// quantized (every code 17 times, 2^20 + 2^16 elements, so that the table is built and used by
// several tasks) and float8, int8 and uint8 x dequantized (every code 20 times; the integers with
// a zero point; only bfloat16 outputs run by table for them), for every output and sub-byte
// layout, against the reference. A smaller copy of each (below the table's threshold) runs the
// kernels directly, so the two execution strategies are compared on the same codes. Forcing each
// target also takes both: float8 to float16 and 8-bit integers to bfloat16 run by table on every
// target but AVX2 (kernels::dequantizes_byte_codes_to_halfwords_by_table).
TEST(KernelsByTable, PerTensorPlansOverFewCodesMatchTheReference) {
  const auto by_code = [](E type, uint64_t copies) {
    const uint64_t codes = uint64_t{1} << info(type).bits;
    return make_storage(type, codes * copies, [codes](uint64_t i) { return static_cast<uint32_t>(i % codes); });
  };
  // The large copies by table and in the kernels, whichever this CPU picks
  // (kernels::quantizes_16_bit_x_by_table).
  struct RestoreTheCpusChoice {
    ~RestoreTheCpusChoice() { kernels::force_16_bit_x_by_table(-1); }
  } restore;
  for (E x_type : {E::kFloat16, E::kBfloat16}) {
    for (const auto [copies, by_table] : {std::pair<uint64_t, int>{17, 1}, {17, 0}, {1, -1}}) {
      kernels::force_16_bit_x_by_table(by_table);
      auto x = by_code(x_type, copies);
      const Sweep sweep{{static_cast<int64_t>(65536 * copies)}, 0, 0, true};
      for (E out : kQuantizedTypes) {
        for (SubByteLayout layout : {SubByteLayout::kPacked, SubByteLayout::kOneCodePerByte}) {
          if (layout == SubByteLayout::kOneCodePerByte && !info(out).is_packed()) continue;
          for (E precision : {x_type, E::kFloat32}) {
            const uint16_t scale = static_cast<uint16_t>(x_type == E::kFloat16 ? 0x2E66 : 0x3DCD);  // about 0.1
            const TensorView xv{x_type, sweep.shape, x.data()};
            const TensorView sv{x_type, {}, &scale};
            QuantizeLinearAttributes a;
            a.output_dtype = static_cast<int64_t>(out);
            a.precision = static_cast<int64_t>(precision);
            const Result<Plan> planned = plan_quantize_linear(xv, sv, nullptr, a);
            ASSERT_TRUE(planned.ok()) << planned.status().message();
            // Every target: the lookup is a gather on some and a scalar loop on others.
            ASSERT_EQ(first_target_unlike_reference(planned.value(), layout), "")
                << describe(planned.value(), sweep) << " layout " << static_cast<int>(layout) << " by table "
                << by_table;
          }
        }
      }
    }
  }
  for (E x_type : {E::kFloat8E4M3FN, E::kFloat8E4M3FNUZ, E::kFloat8E5M2, E::kFloat8E5M2FNUZ, E::kInt8, E::kUint8}) {
    for (uint64_t copies : {20, 1}) {
      auto x = by_code(x_type, copies);
      const Sweep sweep{{static_cast<int64_t>(256 * copies)}, 0, 0, true};
      for (E scale_type : {E::kFloat32, E::kFloat16, E::kBfloat16, E::kFloat8E8M0}) {
        for (E out : {E::kFloat32, E::kFloat16, E::kBfloat16}) {
          const uint32_t scale = scale_type == E::kFloat32 ? 0x3E4CCCCDu : scale_type == E::kFloat8E8M0 ? 0x84u : 0x3E4Cu;
          const TensorView xv{x_type, sweep.shape, x.data()};
          const TensorView sv{scale_type, {}, &scale};
          DequantizeLinearAttributes a;
          a.output_dtype = static_cast<int64_t>(out);
          const uint8_t zero_point = 0x93;  // -109 or 147
          const TensorView zv{x_type, {}, &zero_point};
          const Result<Plan> plan = plan_dequantize_linear(xv, sv, info(x_type).is_integer() ? &zv : nullptr, a);
          ASSERT_TRUE(plan.ok()) << plan.status().message();
          for (int64_t target : kernels::supported_targets()) {
            kernels::force_target(target);
            EXPECT_TRUE(same_as_reference(plan.value(), sweep, "by table on " + kernels::target_name(target)));
          }
          kernels::force_target(0);
        }
      }
    }
  }
  // 4- and 2-bit x: packed, a byte of x (2 or 4 elements) per table entry, with element counts
  // that end inside a byte and one large enough for several tasks; and one code per byte, every
  // byte value (the codes' high bits are not theirs). The smallest count runs the kernels.
  for (E x_type : {E::kInt4, E::kUint4, E::kFloat4E2M1, E::kInt2, E::kUint2}) {
    for (SubByteLayout x_layout : {SubByteLayout::kPacked, SubByteLayout::kOneCodePerByte}) {
      const uint64_t per_byte = x_layout == SubByteLayout::kPacked ? 8 / info(x_type).bits : 1;
      for (uint64_t count : {256 * per_byte * 520 + 3, 256 * per_byte * 20 + per_byte - 1, uint64_t{1000}}) {
        std::vector<uint8_t> x((count + per_byte - 1) / per_byte + 8);
        for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>(i);
        const std::vector<int64_t> shape = {static_cast<int64_t>(count)};
        for (E out : {E::kFloat32, E::kFloat16, E::kBfloat16}) {
          const uint32_t scale = out == E::kFloat32 ? 0x3E4CCCCDu : 0x3E4Cu;
          const uint8_t zero_point = 0x03;  // 3, or -1 for int2
          const TensorView zv{x_type, {}, &zero_point};
          const Result<Plan> planned = plan_dequantize_linear({x_type, shape, x.data(), x_layout}, {out, {}, &scale},
                                                              info(x_type).is_integer() ? &zv : nullptr);
          ASSERT_TRUE(planned.ok()) << planned.status().message();
          ASSERT_EQ(first_target_unlike_reference(planned.value(), SubByteLayout::kPacked), "")
              << name(x_type) << " x layout " << static_cast<int>(x_layout) << ", " << count << " elements to "
              << name(out);
        }
      }
    }
  }
}

// Per-axis DQ on an outer axis over rows long enough for a table each (execute/by_table.cpp):
// float8, 4- and 2-bit x packed and one per byte, and 8-bit integers (which keep the kernels),
// to every output, a scale (and zero point) per row -- every seventh scale any code of its type,
// so rows with NaN, infinite, zero and subnormal scales are built too -- against the reference on
// every target. Rows of 1,024 (the shortest that get tables) and 4,096 over more rows than one
// build takes (64) and several tasks; of 1,027 (packed x: a byte would span two rows, so the
// kernels run them); and a 3-D x whose operands follow its middle axis, so that its rows repeat
// their operands. Seed 4242.
TEST(KernelsByTable, PerAxisPlansOverLongRowsMatchTheReference) {
  std::mt19937 g(4242);
  struct Shape {
    std::vector<int64_t> dims;
    int64_t axis;
  };
  const Shape shapes[] = {{{150, 1024}, 0}, {{40, 4096}, 0}, {{70, 1027}, 0}, {{3, 50, 1100}, 1}};
  int per_row_plans = 0;
  for (E x_type : {E::kFloat8E4M3FN, E::kFloat8E5M2FNUZ, E::kInt4, E::kUint4, E::kFloat4E2M1, E::kInt2, E::kUint2,
                   E::kInt8, E::kUint8}) {
    for (SubByteLayout x_layout : {SubByteLayout::kPacked, SubByteLayout::kOneCodePerByte}) {
      if (x_layout == SubByteLayout::kOneCodePerByte && !info(x_type).is_packed()) continue;
      for (const Shape& shape : shapes) {
        const uint64_t count = count_of(shape.dims);
        std::vector<uint8_t> x(storage_bytes(x_type, count, x_layout) + 8);
        for (uint8_t& b : x) b = static_cast<uint8_t>(g());  // one per byte: high bits not the code's
        const std::vector<int64_t> operand_shape = {shape.dims[static_cast<size_t>(shape.axis)]};
        const uint64_t rows = static_cast<uint64_t>(operand_shape[0]);
        const ElementTypeInfo& xi = info(x_type);
        auto zp = make_storage(x_type, rows, [&](uint64_t) { return static_cast<uint32_t>(g()) & ((1u << xi.bits) - 1u); });
        for (E out : {E::kFloat32, E::kFloat16, E::kBfloat16}) {
          const ElementTypeInfo& o = info(out);
          auto scale = make_storage(out, rows, [&](uint64_t r) -> uint32_t {
            if (r % 7 == 3) return static_cast<uint32_t>(g()) & static_cast<uint32_t>((uint64_t{1} << o.bits) - 1);
            return codec::encode_float(o, 0.01 + (g() % 1000) / 997.0, codec::Overflow::kInfOrNan);
          });
          const TensorView zv{x_type, operand_shape, zp.data()};
          DequantizeLinearAttributes a;
          a.axis = shape.axis;
          const Result<Plan> planned = plan_dequantize_linear({x_type, shape.dims, x.data(), x_layout},
                                                              {out, operand_shape, scale.data()},
                                                              xi.is_integer() ? &zv : nullptr, a);
          ASSERT_TRUE(planned.ok()) << planned.status().message();
          bool per_row = false;
          const bool by_table = exec::runs_by_table(planned.value(), &per_row);
          per_row_plans += per_row ? 1 : 0;
          const bool odd_packed_rows = x_layout == SubByteLayout::kPacked && xi.is_packed() && shape.dims.back() == 1027;
          if (xi.bits == 8 && xi.is_integer()) EXPECT_FALSE(by_table) << name(x_type);
          if (odd_packed_rows) EXPECT_FALSE(by_table) << name(x_type);
          if (by_table) EXPECT_TRUE(per_row);
          ASSERT_EQ(first_target_unlike_reference(planned.value(), SubByteLayout::kPacked), "")
              << name(x_type) << (x_layout == SubByteLayout::kPacked ? " packed" : " one per byte") << " -> "
              << name(out) << ", x of " << count << " elements over rows of " << shape.dims.back() << ", axis "
              << shape.axis << " (seed 4242)";
        }
      }
    }
  }
  // Packed 4-bit x to 16-bit results over rows of 1,024 takes row tables wherever the target has
  // byte shuffles; float8 to bfloat16 over rows of 4,096 on every target.
  EXPECT_GE(per_row_plans, kernels::looks_up_low_bits_in_vectors() ? 20 : 6);
}

// 4- and 2-bit codes and float4e2m1 to float16 and bfloat16 with one scale and zero point over a
// stretch: on AVX-512 each stretch's 16 results are computed once and looked up by a word permute
// (kernels' DequantizeSixteenCodes), in blocks along the last axis of 32 to 512 (the short-block
// loop and the stretch walk), blocks of 16 and 48 (not whole 32s: the vector loop), per-tensor
// below the table's threshold and per-axis over odd rows (the stretch's last 16 in the vector
// loop). Packed and one per byte (high bits set), zero points per block, every seventh scale any
// code of its type (NaN, infinities, zero, subnormals), against the reference on every target.
// Seed 1717.
TEST(KernelsDequantize, SixteenCodeResultsMatchTheReference) {
  std::mt19937 g(1717);
  struct Case {
    std::vector<int64_t> dims;
    int64_t axis, block;
  };
  const Case cases[] = {{{6, 1024}, 1, 32},  {{4, 1024}, 1, 64},  {{3, 960}, 1, 96},  {{2, 1024}, 1, 128},
                        {{2, 1536}, 1, 512}, {{5, 320}, 1, 16},   {{3, 480}, 1, 48},  {{1000}, 0, 0},
                        {{2, 1000}, 0, 0},   {{3, 1027}, 0, 0}};
  for (E x_type : {E::kInt4, E::kUint4, E::kFloat4E2M1, E::kInt2, E::kUint2}) {
    const ElementTypeInfo& xi = info(x_type);
    for (SubByteLayout x_layout : {SubByteLayout::kPacked, SubByteLayout::kOneCodePerByte}) {
      for (const Case& c : cases) {
        const uint64_t count = count_of(c.dims);
        std::vector<uint8_t> x(storage_bytes(x_type, count, x_layout) + 8);
        for (uint8_t& b : x) b = static_cast<uint8_t>(g());
        std::vector<int64_t> operand_shape;
        if (c.block != 0) {
          operand_shape = {c.dims[0], (c.dims[1] + c.block - 1) / c.block};
        } else if (c.dims.size() > 1) {
          operand_shape = {c.dims[0]};
        }
        const uint64_t operands = count_of(operand_shape);
        auto zp = make_storage(x_type, operands, [&](uint64_t) { return static_cast<uint32_t>(g()) & ((1u << xi.bits) - 1u); });
        for (E out : {E::kFloat16, E::kBfloat16}) {
          auto scale = make_storage(out, operands, [&](uint64_t i) -> uint32_t {
            if (i % 7 == 3) return static_cast<uint32_t>(g()) & 0xFFFFu;
            return codec::encode_float(info(out), 0.01 + (g() % 1000) / 997.0, codec::Overflow::kInfOrNan);
          });
          const TensorView zv{x_type, operand_shape, zp.data()};
          DequantizeLinearAttributes a;
          a.axis = c.axis;
          a.block_size = c.block;
          const Result<Plan> planned = plan_dequantize_linear({x_type, c.dims, x.data(), x_layout},
                                                              {out, operand_shape, scale.data()},
                                                              xi.is_integer() ? &zv : nullptr, a);
          ASSERT_TRUE(planned.ok()) << planned.status().message();
          ASSERT_EQ(first_target_unlike_reference(planned.value(), SubByteLayout::kPacked), "")
              << name(x_type) << (x_layout == SubByteLayout::kPacked ? " packed" : " one per byte") << " -> "
              << name(out) << ", " << count << " elements, axis " << c.axis << " block " << c.block << " (seed 1717)";
        }
      }
    }
  }
}

// The table's lookup on every target, for every code and result width (2- and 4-bit results
// packed), over ranges that start and end off a vector boundary: only elements [begin, end) are
// written (packed: their bytes, a last partial byte's unused bits 0), each with its code's entry.
// The table is random (seed 91; packed results' entries are codes of their width) and followed by
// the padding the gathers may read.
TEST(KernelsLookUp, EveryWidthOnEveryTargetMatchesAScalarLoop) {
  std::mt19937 random(91);
  for (unsigned x_bytes : {1u, 2u}) {
    const uint64_t entries = uint64_t{1} << (8 * x_bytes);
    for (unsigned y_bits : {2u, 4u, 8u, 16u, 32u, 64u}) {
      const unsigned entry_bytes = y_bits < 8 ? 1 : y_bits / 8;
      std::vector<uint64_t> table_words((entries * entry_bytes + kernels::kLookUpTablePadding + 7) / 8);
      for (uint64_t& w : table_words) w = uint64_t{random()} << 32 | random();
      auto* table = reinterpret_cast<uint8_t*>(table_words.data());
      if (y_bits < 8) {
        for (uint64_t c = 0; c < entries; ++c) table[c] &= static_cast<uint8_t>((1u << y_bits) - 1);
      }
      const uint64_t n = 1000;
      std::vector<uint8_t> x(n * x_bytes);
      for (uint8_t& b : x) b = static_cast<uint8_t>(random());
      // The last code twice at the end: its gather reads the padding.
      for (uint64_t c = 0; c < 2; ++c) std::memset(x.data() + (n - 1 - c) * x_bytes, 0xFF, x_bytes);
      for (auto [begin, end] : {std::pair<uint64_t, uint64_t>{0, n}, {8, n - 1}, {8, 43}, {24, n - 3}, {16, 17}, {8, 8}}) {
        const uint64_t y_bytes = (n * y_bits + 7) / 8;
        std::vector<uint8_t> expected(y_bytes, 0xCD);
        if (y_bits < 8) {  // the bytes the range covers start from 0
          std::fill(expected.begin() + static_cast<int64_t>(begin * y_bits / 8),
                    expected.begin() + static_cast<int64_t>((end * y_bits + 7) / 8), uint8_t{0});
        }
        for (uint64_t i = begin; i < end; ++i) {
          uint64_t code = 0;
          std::memcpy(&code, x.data() + i * x_bytes, x_bytes);
          if (y_bits < 8) {
            expected[i * y_bits / 8] |= static_cast<uint8_t>(table[code] << (i * y_bits % 8));
          } else {
            std::memcpy(expected.data() + i * entry_bytes, table + code * entry_bytes, entry_bytes);
          }
        }
        for (int64_t target : kernels::supported_targets()) {
          kernels::force_target(target);
          for (bool stream : {false, true}) {
            std::vector<uint8_t> y(y_bytes, 0xCD);
            kernels::look_up_codes(x.data(), x_bytes, table, y_bits, y.data(), begin, end, 8, stream);
            EXPECT_TRUE(y == expected) << "codes of " << x_bytes << " bytes to " << y_bits << "-bit results, [" << begin
                                       << ", " << end << ")" << (stream ? " streamed" : "") << " on "
                                       << kernels::target_name(target);
          }
        }
        kernels::force_target(0);
      }
    }
  }
}

// Byte codes whose low bits alone decide their entry (4- and 2-bit codes one per byte): with
// index_bits the lookup may read just the first 2^index_bits entries (a permute on AVX-512). The
// table repeats its first entries, as the tables of such plans do; codes are every byte value.
// y starts at every halfword of a 64-byte line (streamed results begin at the first aligned one).
TEST(KernelsLookUp, CodesDecidedByTheirLowBitsOnEveryTarget) {
  std::mt19937 random(92);
  for (unsigned index_bits : {4u, 2u}) {
    std::vector<uint64_t> table_words((256 * 2 + kernels::kLookUpTablePadding + 7) / 8);
    auto* table = reinterpret_cast<uint16_t*>(table_words.data());
    for (unsigned c = 0; c < (1u << index_bits); ++c) table[c] = static_cast<uint16_t>(random());
    for (unsigned c = 1u << index_bits; c < 256; ++c) table[c] = table[c & ((1u << index_bits) - 1)];
    const uint64_t n = 1000;
    std::vector<uint8_t> x(n);
    for (uint64_t i = 0; i < n; ++i) x[i] = static_cast<uint8_t>(i * 37);
    for (auto [begin, end] : {std::pair<uint64_t, uint64_t>{0, n}, {8, n - 1}, {3, 70}, {16, 17}, {8, 8}}) {
      std::vector<uint16_t> expected(n, 0xCDCD);
      for (uint64_t i = begin; i < end; ++i) expected[i] = table[x[i]];
      for (int64_t target : kernels::supported_targets()) {
        kernels::force_target(target);
        for (size_t shift = 0; shift < 32; ++shift) {
          for (bool stream : {false, true}) {
            std::vector<uint16_t> storage(n + 64, 0xCDCD);
            const size_t to_line = (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64 / sizeof(uint16_t);
            uint16_t* y = storage.data() + to_line + shift;
            kernels::look_up_codes(x.data(), 1, table, 16, y, begin, end, index_bits, stream);
            EXPECT_TRUE(std::equal(expected.begin(), expected.end(), y))
                << index_bits << " index bits, [" << begin << ", " << end << ") at halfword " << shift << " of a line"
                << (stream ? " streamed" : "") << " on " << kernels::target_name(target);
          }
        }
      }
      kernels::force_target(0);
    }
  }
}

// Packed 4- and 2-bit codes to 16-bit results (look_up_packed_codes_to_halfwords): every byte value
// of x, ranges of bytes that start and end off a vector and y at every halfword offset of a line,
// with and without streaming, on every target, against a scalar unpacking. Only the range's
// results are written. The 16 results are random (seed 93).
TEST(KernelsLookUp, PackedCodesToHalfwordsOnEveryTarget) {
  std::mt19937 random(93);
  for (unsigned code_bits : {4u, 2u}) {
    const unsigned per_byte = 8 / code_bits;
    uint16_t code_results[16];
    for (uint16_t& r : code_results) r = static_cast<uint16_t>(random());
    const uint64_t n = 1000;  // bytes of x
    std::vector<uint8_t> x(n);
    for (uint64_t i = 0; i < n; ++i) x[i] = static_cast<uint8_t>(i * 37 + i / 256);
    for (auto [begin, end] : {std::pair<uint64_t, uint64_t>{0, n}, {1, n - 1}, {3, 70}, {16, 17}, {8, 8}}) {
      for (size_t offset : {0, 1, 2, 3, 5, 31}) {  // halfwords past a 64-byte boundary
        std::vector<uint16_t> expected(n * per_byte + 64, 0xCDCD);
        for (uint64_t i = begin; i < end; ++i) {
          for (unsigned k = 0; k < per_byte; ++k) {
            expected[offset + i * per_byte + k] = code_results[(x[i] >> (k * code_bits)) & ((1u << code_bits) - 1)];
          }
        }
        for (int64_t target : kernels::supported_targets()) {
          kernels::force_target(target);
          for (bool stream : {false, true}) {
            std::vector<uint16_t> buffer(expected.size() + 32, 0xCDCD);
            const size_t start = (64 - reinterpret_cast<uintptr_t>(buffer.data()) % 64) % 64 / 2;  // on a line
            kernels::look_up_packed_codes_to_halfwords(x.data(), code_bits, code_results, buffer.data() + start + offset,
                                                       begin, end, stream);
            EXPECT_TRUE(std::equal(expected.begin(), expected.end(), buffer.begin() + static_cast<ptrdiff_t>(start)))
                << code_bits << "-bit codes, bytes [" << begin << ", " << end << "), y " << offset
                << " halfwords into a line" << (stream ? " streamed" : "") << " on " << kernels::target_name(target);
          }
        }
        kernels::force_target(0);
      }
    }
  }
}

// A plan holds the caller's shape arrays only as views, read while planning: execute() must not
// read them again (the caller may have freed or reused them; qdq.hpp). Here the per-axis scale's
// shape array is rewritten to {1} after planning: an executor that read it would take the plan for
// per-tensor and run it by table with the first scale for every element.
TEST(KernelsByTable, ExecutionDoesNotReadTheCallersShapeArrays) {
  const int64_t half = int64_t{1} << 20;
  auto x = make_storage(E::kFloat16, static_cast<uint64_t>(2 * half),
                        [](uint64_t i) { return static_cast<uint32_t>(i % 65536); });
  const uint16_t scales[2] = {0x2E66, 0x4100};  // about 0.1 and 2.5
  std::vector<int64_t> x_shape = {2, half};
  std::vector<int64_t> scale_shape = {2};
  QuantizeLinearAttributes a;
  a.axis = 0;
  const Result<Plan> planned = plan_quantize_linear({E::kFloat16, x_shape, x.data()}, {E::kFloat16, scale_shape, scales},
                                                    nullptr, a);
  ASSERT_TRUE(planned.ok()) << planned.status().message();
  const Plan& plan = planned.value();
  scale_shape[0] = 1;
  x_shape = {7, 7};
  std::vector<uint8_t> fast(plan.element_count, 0xCD), reference(plan.element_count, 0xCD);
  ASSERT_TRUE(execute(plan, {plan.output_type, plan.shape, fast.data()}).ok());
  ExecuteOptions options;
  options.path = ExecutionPath::kReference;
  ASSERT_TRUE(execute(plan, {plan.output_type, plan.shape, reference.data()}, options).ok());
  EXPECT_TRUE(fast == reference);
}

TEST(KernelsThreads, LargeTensorsAreSplitAndMatchTheReference) {
  const uint32_t seed = 99;
  std::mt19937 g(seed);
  // 3 * 2^17 + 5 elements: several tasks, an odd packed tail, blocks crossing task boundaries.
  const std::vector<int64_t> shape = {3, (int64_t{1} << 17) + 2};
  const uint64_t n = count_of(shape);
  auto x = make_storage(E::kFloat32, n, [&](uint64_t) { return interesting_float_code(g, 0.5f); });
  const std::vector<int64_t> scale_shape = {3, (shape[1] + 31) / 32};
  auto scale = make_storage(E::kFloat32, count_of(scale_shape), [&](uint64_t) {
    return std::bit_cast<uint32_t>(0.25f + static_cast<float>(g() % 100) / 50.0f);
  });
  for (E out : {E::kInt4, E::kUint8, E::kFloat8E4M3FN, E::kUint2}) {
    QuantizeLinearAttributes a;
    a.axis = 1;
    a.block_size = 32;
    a.output_dtype = static_cast<int64_t>(out);
    const TensorView xv{E::kFloat32, shape, x.data()};
    const TensorView sv{E::kFloat32, scale_shape, scale.data()};
    const Result<Plan> plan = plan_quantize_linear(xv, sv, nullptr, a);
    ASSERT_TRUE(plan.ok());
    for (int threads : {1, 2, 3}) {
      set_num_threads(threads);
      EXPECT_TRUE(same_as_reference(plan.value(), {shape, 1, 32, false}, "threads " + std::to_string(threads)));
    }
    set_num_threads(0);
    // A host parallel-for (as ONNX Runtime supplies): runs tasks on its own threads.
    ExecuteOptions host;
    host.parallel_for.run = [](void*, void (*task)(void*, uint64_t), void* context, uint64_t count) {
      std::vector<std::thread> threads;
      for (uint64_t i = 0; i < count; ++i) threads.emplace_back(task, context, i);
      for (std::thread& t : threads) t.join();
    };
    std::vector<uint8_t> a_out(storage_bytes(out, n)), b_out(storage_bytes(out, n));
    ASSERT_TRUE(execute(plan.value(), {out, shape, a_out.data()}, host).ok());
    ExecuteOptions reference;
    reference.path = ExecutionPath::kReference;
    ASSERT_TRUE(execute(plan.value(), {out, shape, b_out.data()}, reference).ok());
    EXPECT_EQ(a_out, b_out) << name(out) << " with a host parallel-for";
  }
}

// Short rows in groups split over tasks: task boundaries (multiples of 64 elements) fall inside
// rows of 3 and 5 and inside blocks of 32 rows, so that periodic runs start at every phase of
// their row and group; with a uint8 and a packed int4 zero point, Q and DQ, against the reference.
TEST(KernelsThreads, ShortRowsInGroupsSplitOverTasksMatchTheReference) {
  const uint32_t seed = 4242;
  std::mt19937 g(seed);
  for (const int64_t row : {int64_t{3}, int64_t{5}}) {
    const std::vector<int64_t> shape = {70001, row};
    const std::vector<int64_t> scale_shape = {(shape[0] + 31) / 32, row};
    const uint64_t n = count_of(shape), scale_count = count_of(scale_shape);
    auto x = make_storage(E::kFloat32, n, [&](uint64_t) { return interesting_float_code(g, 0.5f); });
    auto scale = make_storage(E::kFloat32, scale_count, [&](uint64_t) {
      return std::bit_cast<uint32_t>(0.25f + static_cast<float>(g() % 100) / 50.0f);
    });
    for (E out : {E::kUint8, E::kInt4}) {
      auto zp = make_storage(out, scale_count, [&](uint64_t) { return static_cast<uint32_t>(g()) & ((1u << info(out).bits) - 1u); });
      auto codes = make_storage(out, n, [&](uint64_t) { return static_cast<uint32_t>(g()) & ((1u << info(out).bits) - 1u); });
      const TensorView sv{E::kFloat32, scale_shape, scale.data()};
      const TensorView zv{out, scale_shape, zp.data()};
      QuantizeLinearAttributes q;
      q.axis = 0;
      q.block_size = 32;
      const Result<Plan> quantize = plan_quantize_linear({E::kFloat32, shape, x.data()}, sv, &zv, q);
      DequantizeLinearAttributes dq;
      dq.axis = 0;
      dq.block_size = 32;
      const Result<Plan> dequantize = plan_dequantize_linear({out, shape, codes.data()}, sv, &zv, dq);
      ASSERT_TRUE(quantize.ok() && dequantize.ok());
      for (int threads : {2, 3}) {
        set_num_threads(threads);
        const std::string text = "rows of " + std::to_string(row) + ", threads " + std::to_string(threads) +
                                 " (seed " + std::to_string(seed) + ")";
        EXPECT_TRUE(same_as_reference(quantize.value(), {shape, 0, 32, false}, text));
        EXPECT_TRUE(same_as_reference(dequantize.value(), {shape, 0, 32, false}, text));
      }
      set_num_threads(0);
    }
  }
}

// A quantize plan over 4 MiB of x or more asks for x's lines a few KiB ahead of its loads
// (kernels-inl.h, kPrefetchedXBytes), paced per vector in the uniform and per-element loops and per
// block on the float64 and wide paths; the toolkit's reduction and the lookup of per-tensor plans
// run by table do the same over long stretches.
// The requests must never change a result: each path, on every target, against the reference (and
// the reduction against a scalar fold, with a NaN far past the first prefetch distance).
TEST_F(KernelsOnEveryTarget, PlansThatPrefetchXMatchTheReference) {
  const uint32_t seed = 2024;
  std::mt19937 g(seed);
  const std::vector<int64_t> shape = {3, (int64_t{1} << 19) + 11};  // 1.57M elements: 6.3 MB of float32
  const uint64_t n = count_of(shape);
  auto x = make_storage(E::kFloat32, n, [&](uint64_t) { return interesting_float_code(g, 0.5f); });
  auto x16 = make_storage(E::kFloat16, 2 * n, [&](uint64_t) { return x_code(E::kFloat16, g, 0.5f); });
  const std::vector<int64_t> shape16 = {6, shape[1]};  // the same bytes of float16
  const std::vector<int64_t> per_axis_shape = {shape[1]};
  const std::vector<int64_t> blocked_shape = {3, (shape[1] + 31) / 32};
  const std::vector<int64_t> blocked16_shape = {6, blocked_shape[1]};
  auto per_axis = random_scales(g, per_axis_shape[0]);
  auto blocked = random_scales(g, count_of(blocked_shape));
  auto blocked16 = make_storage(E::kFloat16, 2 * count_of(blocked_shape), [&](uint64_t) {
    return codec::encode_float(info(E::kFloat16), 0.01 + static_cast<double>(g() % 1000) / 997.0,
                               codec::Overflow::kInfOrNan);
  });
  const float one_scale = 0.37f;
  const int32_t int32_scale = 3;
  struct Case {
    std::string name;
    Result<Plan> plan;
  };
  auto attributes = [](E out, int64_t axis, int64_t block) {
    QuantizeLinearAttributes a;
    a.output_dtype = static_cast<int64_t>(out);
    a.axis = axis;
    a.block_size = block;
    return a;
  };
  std::vector<Case> cases;
  cases.push_back(
      {"float32 -> int8 per-tensor", plan_quantize_linear({E::kFloat32, shape, x.data()}, {E::kFloat32, {}, &one_scale},
                                                          nullptr, attributes(E::kInt8, 1, 0))});
  cases.push_back({"float32 -> uint4 per-axis-last",
                   plan_quantize_linear({E::kFloat32, shape, x.data()}, {E::kFloat32, per_axis_shape, per_axis.data()},
                                        nullptr, attributes(E::kUint4, 1, 0))});
  cases.push_back({"float32 -> float8e4m3fn blocked-last-32",
                   plan_quantize_linear({E::kFloat32, shape, x.data()}, {E::kFloat32, blocked_shape, blocked.data()},
                                        nullptr, attributes(E::kFloat8E4M3FN, 1, 32))});
  cases.push_back(
      {"float16 -> float4e2m1 blocked-last-32",
       plan_quantize_linear({E::kFloat16, shape16, x16.data()}, {E::kFloat16, blocked16_shape, blocked16.data()},
                            nullptr, attributes(E::kFloat4E2M1, 1, 32))});
  cases.push_back({"float32 -> int16, int32 scale (float64 division)",
                   plan_quantize_linear({E::kFloat32, shape, x.data()}, {E::kInt32, {}, &int32_scale}, nullptr,
                                        attributes(E::kInt16, 1, 0))});
  const uint16_t half_scale = 0x3400;  // float16 0.25
  cases.push_back({"float16 -> uint8 per-tensor (by table)",
                   plan_quantize_linear({E::kFloat16, shape16, x16.data()}, {E::kFloat16, {}, &half_scale}, nullptr,
                                        attributes(E::kUint8, 1, 0))});
  cases.push_back({"Quark float32 -> int32 per-axis",
                   plan_extended_quantize_linear({E::kFloat32, shape, x.data()},
                                                 {E::kFloat32, per_axis_shape, per_axis.data()}, nullptr, 1)});
  for (Case& c : cases) {
    ASSERT_TRUE(c.plan.ok()) << c.name << ": " << c.plan.status().message();
    const Plan& plan = c.plan.value();
    std::vector<uint8_t> reference(storage_bytes(plan.output_type, plan.element_count));
    ExecuteOptions options;
    options.path = ExecutionPath::kReference;
    ASSERT_TRUE(execute(plan, {plan.output_type, plan.shape, reference.data()}, options).ok());
    for (const auto& [target, by_reciprocal] : every_target_by_both_strategies()) {
      kernels::force_target(target);
      kernels::force_reciprocal(by_reciprocal);
      std::vector<uint8_t> fast(reference.size(), 0xCD);
      ASSERT_TRUE(execute(plan, {plan.output_type, plan.shape, fast.data()}).ok());
      EXPECT_TRUE(fast == reference) << kernels::target_name(target)
                                     << (by_reciprocal ? " by reciprocal " : " dividing ") << c.name << " (seed 2024)";
    }
  }
  // Fused fake-quant, its uniform loops with and without the mask.
  QuantizeDequantizeAttributes fake;
  fake.quantized_dtype = static_cast<int64_t>(E::kInt8);
  const Result<QuantizeDequantizePlan> fake_plan =
      plan_quantize_dequantize_linear({E::kFloat32, shape, x.data()}, {E::kFloat32, {}, &one_scale}, nullptr, fake);
  ASSERT_TRUE(fake_plan.ok());
  std::vector<float> fake_reference(n);
  ExecuteOptions reference_path;
  reference_path.path = ExecutionPath::kReference;
  ASSERT_TRUE(execute(fake_plan.value(), {E::kFloat32, shape, fake_reference.data()}, nullptr, reference_path).ok());
  for (int64_t target : kernels::supported_targets()) {
    kernels::force_target(target);
    for (bool with_mask : {false, true}) {
      std::vector<float> y(n);
      std::vector<uint8_t> mask(n);
      const MutableTensorView mask_view{E::kUint8, shape, mask.data()};
      ASSERT_TRUE(execute(fake_plan.value(), {E::kFloat32, shape, y.data()}, with_mask ? &mask_view : nullptr).ok());
      EXPECT_EQ(std::memcmp(y.data(), fake_reference.data(), n * sizeof(float)), 0)
          << kernels::target_name(target) << " fake-quant int8 per-tensor" << (with_mask ? " with its mask" : "")
          << " (seed 2024)";
    }
  }
  // The reduction over a long stretch: the scalar fold's extremes and flag, a NaN or not.
  for (int64_t target : kernels::supported_targets()) {
    kernels::force_target(target);
    for (bool with_nan : {false, true}) {
      std::vector<float> values(n);
      kernels::Extremes expected;
      for (uint64_t i = 0; i < n; ++i) {
        values[i] = static_cast<float>(static_cast<int>(g() % 200001) - 100000) / 64.0f;
        if (with_nan && i == n - 1000) values[i] = NAN;
        const bool is_nan = values[i] != values[i];
        expected.merge(kernels::Extremes{is_nan ? 0.0f : values[i], is_nan ? 0.0f : values[i], is_nan});
      }
      kernels::Extremes got;
      kernels::reduce_extremes(E::kFloat32, values.data(), 0, n, &got);
      const std::string where =
          kernels::target_name(target) + (with_nan ? ", a NaN near the end" : "") + " (seed 2024)";
      EXPECT_EQ(got.nan, expected.nan) << where;
      EXPECT_EQ(got.min, expected.min) << where;
      EXPECT_EQ(got.max, expected.max) << where;
    }
  }
}

// Outputs of 16 MiB and more are written with non-temporal stores from a staging buffer. Runs of
// odd length put the destinations at every alignment; the bytes just past y must stay untouched.
TEST(KernelsStreaming, LargeOutputsMatchTheReference) {
  const uint32_t seed = 4242;
  std::mt19937 g(seed);
  const std::vector<int64_t> shape = {2051, 4097};  // 8.4M elements: 16.8 MB of int16, 33.6 MB of float32
  const uint64_t n = count_of(shape);
  const std::vector<int64_t> scale_shape = {shape[1]};
  auto scale = random_scales(g, scale_shape[0]);
  {
    auto x = make_storage(E::kFloat32, n, [&](uint64_t) { return interesting_float_code(g, 2.0f); });
    QuantizeLinearAttributes a;
    a.axis = 1;
    a.output_dtype = static_cast<int64_t>(E::kInt16);
    const Result<Plan> plan = plan_quantize_linear({E::kFloat32, shape, x.data()}, {E::kFloat32, scale_shape, scale.data()},
                                                   nullptr, a);
    ASSERT_TRUE(plan.ok());
    // y is narrower than x: streamed or not by CPU (kernels::streams_outputs_narrower_than_x); both.
    for (int streamed : {1, 0}) {
      kernels::force_narrow_output_streaming(streamed);
      EXPECT_TRUE(same_as_reference(plan.value(), {shape, 1, 0, false},
                                    std::string(streamed ? "streamed" : "not streamed") + " int16 per-axis (seed 4242)"));
    }
    kernels::force_narrow_output_streaming(-1);
  }
  {
    const std::vector<int64_t> dq_shape = {4099, 1025};  // 4.2M elements: 16.8 MB of float32
    const std::vector<int64_t> dq_scale_shape = {dq_shape[1]};
    auto x = make_storage(E::kInt8, count_of(dq_shape), [&](uint64_t) { return static_cast<uint32_t>(g() & 0xFF); });
    auto dq_scale = random_scales(g, dq_scale_shape[0]);
    DequantizeLinearAttributes a;
    a.axis = 1;
    const Result<Plan> plan = plan_dequantize_linear({E::kInt8, dq_shape, x.data()},
                                                     {E::kFloat32, dq_scale_shape, dq_scale.data()}, nullptr, a);
    ASSERT_TRUE(plan.ok());
    EXPECT_TRUE(same_as_reference(plan.value(), {dq_shape, 1, 0, false}, "int8 -> float32 per-axis (seed 4242)"));
  }
}

// A streamed output is written by whole cache lines; the partial lines where one block ends and
// the next begins are carried between them, and the lines a task shares with its neighbours are
// written with ordinary stores. So the output's offset within a 64-byte line and the thread count
// (which moves the task boundaries) are what can break it: every combination must give the
// reference's bytes, with the guard bytes on both sides of y untouched.
TEST(KernelsStreaming, EveryOffsetInALineAndEveryTaskSplit) {
  const uint32_t seed = 515;
  std::mt19937 g(seed);
  static constexpr size_t kGuard = 128;
  static constexpr uint8_t kGuardByte = 0xA5;
  // Runs the plan with y at `offset` bytes past a 64-byte boundary and checks it against `expected`.
  auto check_at = [&](const Plan& plan, const std::vector<uint8_t>& expected, size_t offset, int threads,
                      const std::string& what) {
    std::vector<uint8_t> buffer(expected.size() + 2 * kGuard + 64, kGuardByte);
    const size_t start = (64 - reinterpret_cast<uintptr_t>(buffer.data()) % 64) % 64 + kGuard + offset;
    set_num_threads(threads);
    ASSERT_TRUE(execute(plan, {plan.output_type, plan.shape, buffer.data() + start}).ok());
    set_num_threads(0);
    const std::string where = what + ", y " + std::to_string(offset) + " bytes into a line, " +
                              std::to_string(threads) + " threads (seed 515)";
    EXPECT_EQ(std::memcmp(buffer.data() + start, expected.data(), expected.size()), 0) << where;
    EXPECT_TRUE(std::all_of(buffer.begin(), buffer.begin() + static_cast<ptrdiff_t>(start),
                            [&](uint8_t b) { return b == kGuardByte; }))
        << where << ": a byte before y was written";
    EXPECT_TRUE(std::all_of(buffer.begin() + static_cast<ptrdiff_t>(start + expected.size()), buffer.end(),
                            [&](uint8_t b) { return b == kGuardByte; }))
        << where << ": a byte past y was written";
  };
  auto reference_bytes = [](const Plan& plan) {
    std::vector<uint8_t> bytes(storage_bytes(plan.output_type, plan.element_count));
    ExecuteOptions options;
    options.path = ExecutionPath::kReference;
    EXPECT_TRUE(execute(plan, {plan.output_type, plan.shape, bytes.data()}, options).ok());
    return bytes;
  };
  {  // Per-tensor Q to int16: one run per task. 16.8 MB of output.
    const std::vector<int64_t> shape = {8'400'001};
    const float scale_value = 0.013f;
    auto x = make_storage(E::kFloat32, count_of(shape), [&](uint64_t) { return interesting_float_code(g, scale_value); });
    auto scale = make_storage(E::kFloat32, 1, [&](uint64_t) { return std::bit_cast<uint32_t>(scale_value); });
    QuantizeLinearAttributes a;
    a.output_dtype = static_cast<int64_t>(E::kInt16);
    const Result<Plan> plan = plan_quantize_linear({E::kFloat32, shape, x.data()}, {E::kFloat32, {}, scale.data()},
                                                   nullptr, a);
    ASSERT_TRUE(plan.ok());
    const std::vector<uint8_t> expected = reference_bytes(plan.value());
    for (int streamed : {1, 0}) {  // y narrower than x: streamed or not by CPU; both
      kernels::force_narrow_output_streaming(streamed);
      for (size_t offset : {0, 2, 16, 34, 62}) {
        for (int threads : {1, 2, 3}) {
          check_at(plan.value(), expected, offset, threads,
                   std::string("Q float32 -> int16 per-tensor") + (streamed ? " streamed" : " not streamed"));
        }
      }
    }
    kernels::force_narrow_output_streaming(-1);
  }
  {  // DQ uint8 -> float32 per-axis on the first axis: rows of 1023 elements, a run each. 16.8 MB.
    const std::vector<int64_t> shape = {4100, 1023};
    const std::vector<int64_t> scale_shape = {shape[0]};
    auto x = make_storage(E::kUint8, count_of(shape), [&](uint64_t) { return static_cast<uint32_t>(g() & 0xFF); });
    auto scale = random_scales(g, scale_shape[0]);
    DequantizeLinearAttributes a;
    a.axis = 0;
    const Result<Plan> plan =
        plan_dequantize_linear({E::kUint8, shape, x.data()}, {E::kFloat32, scale_shape, scale.data()}, nullptr, a);
    ASSERT_TRUE(plan.ok());
    const std::vector<uint8_t> expected = reference_bytes(plan.value());
    for (size_t offset : {0, 4, 20, 60}) {
      for (int threads : {1, 2, 3}) check_at(plan.value(), expected, offset, threads, "DQ uint8 -> float32 per-axis");
    }
  }
  // Per-tensor DQ of 4- and 2-bit codes to 16-bit results runs by table (execute/by_table.cpp),
  // whose lookups stream outputs this large from the first vector-aligned result: packed 4-bit by
  // shuffles, packed 2-bit by words, 4-bit one per byte by shuffles. 16.8 MB each.
  for (auto [x_type, x_layout, out] : {std::tuple{E::kInt4, SubByteLayout::kPacked, E::kBfloat16},
                                       std::tuple{E::kUint2, SubByteLayout::kPacked, E::kFloat16},
                                       std::tuple{E::kFloat4E2M1, SubByteLayout::kOneCodePerByte, E::kFloat16}}) {
    const std::vector<int64_t> shape = {8'400'003};
    const uint64_t per_byte = x_layout == SubByteLayout::kPacked ? 8 / info(x_type).bits : 1;
    std::vector<uint8_t> x((count_of(shape) + per_byte - 1) / per_byte);
    for (uint8_t& b : x) b = static_cast<uint8_t>(g());
    const uint16_t scale = out == E::kFloat16 ? 0x2E66 : 0x3DCD;  // about 0.1
    const Result<Plan> plan = plan_dequantize_linear({x_type, shape, x.data(), x_layout}, {out, {}, &scale}, nullptr);
    ASSERT_TRUE(plan.ok());
    const std::vector<uint8_t> expected = reference_bytes(plan.value());
    const std::string what = "DQ " + std::string(name(x_type)) +
                             (x_layout == SubByteLayout::kPacked ? " packed" : " one per byte") + " -> " + std::string(name(out));
    for (size_t offset : {0, 1, 2, 6, 34}) {
      for (int threads : {1, 2, 3}) check_at(plan.value(), expected, offset, threads, what);
    }
  }
  // Per-axis DQ over long rows runs by a table per row (execute/by_table.cpp), each row's lookup
  // streamed and the fence once per task: packed 4-bit by shuffles from a row's 16 results,
  // float8 by permutes over rows of 4,104 (a row's output 8,208 bytes: rows start at every
  // 16-byte offset of a line). 16.8 MB each.
  for (auto [x_type, row] : {std::pair{E::kUint4, int64_t{4000}}, std::pair{E::kFloat8E4M3FN, int64_t{4104}}}) {
    const std::vector<int64_t> shape = {8'400'000 / row, row};
    std::vector<uint8_t> x(storage_bytes(x_type, count_of(shape)));
    for (uint8_t& b : x) b = static_cast<uint8_t>(g());
    const std::vector<int64_t> scale_shape = {shape[0]};
    auto scale = make_storage(E::kBfloat16, static_cast<uint64_t>(shape[0]),
                              [&](uint64_t) { return 0x3D00u + static_cast<uint32_t>(g() % 0x100); });
    DequantizeLinearAttributes a;
    a.axis = 0;
    const Result<Plan> plan = plan_dequantize_linear({x_type, shape, x.data()}, {E::kBfloat16, scale_shape, scale.data()},
                                                     nullptr, a);
    ASSERT_TRUE(plan.ok());
    const std::vector<uint8_t> expected = reference_bytes(plan.value());
    const std::string what = "DQ " + std::string(name(x_type)) + " -> bfloat16 per-axis over rows of " + std::to_string(row);
    for (size_t offset : {0, 2, 34}) {
      for (int threads : {1, 3}) check_at(plan.value(), expected, offset, threads, what);
    }
  }
  {  // Fake-quant with its mask: two streams per task, y and the mask at different offsets.
    const std::vector<int64_t> shape = {4'200'007};
    const float scale_value = 0.021f;
    auto x = make_storage(E::kFloat32, count_of(shape), [&](uint64_t) { return interesting_float_code(g, scale_value); });
    auto scale = make_storage(E::kFloat32, 1, [&](uint64_t) { return std::bit_cast<uint32_t>(scale_value); });
    QuantizeDequantizeAttributes a;
    a.quantized_dtype = static_cast<int64_t>(E::kInt8);
    const Result<QuantizeDequantizePlan> plan =
        plan_quantize_dequantize_linear({E::kFloat32, shape, x.data()}, {E::kFloat32, {}, scale.data()}, nullptr, a);
    ASSERT_TRUE(plan.ok());
    const uint64_t n = plan->element_count;
    std::vector<uint8_t> expected_y(n * 4);
    ExecuteOptions reference;
    reference.path = ExecutionPath::kReference;
    ASSERT_TRUE(execute(plan.value(), {E::kFloat32, shape, expected_y.data()}, nullptr, reference).ok());
    // The mask's oracle: 1 exactly where the code does not sit on a clamp bound that x passed
    // (inside the range) -- computed here from x / scale rounded half to even.
    std::vector<uint8_t> expected_mask(n);
    for (uint64_t i = 0; i < n; ++i) {
      const float q = std::nearbyint(std::bit_cast<float>(codec::load_code(x.data(), info(E::kFloat32), i)) / scale_value);
      expected_mask[i] = q >= -128.0f && q <= 127.0f ? 1 : 0;
    }
    for (size_t offset : {0, 4, 52}) {
      for (int threads : {1, 2, 3}) {
        std::vector<uint8_t> y(n * 4 + 2 * kGuard + 64, kGuardByte), mask(n + 2 * kGuard + 64, kGuardByte);
        const size_t y_start = (64 - reinterpret_cast<uintptr_t>(y.data()) % 64) % 64 + kGuard + offset;
        const size_t mask_start = (64 - reinterpret_cast<uintptr_t>(mask.data()) % 64) % 64 + kGuard + offset / 4 + 1;
        set_num_threads(threads);
        const MutableTensorView mask_view{E::kUint8, shape, mask.data() + mask_start};
        ASSERT_TRUE(execute(plan.value(), {E::kFloat32, shape, y.data() + y_start}, &mask_view).ok());
        set_num_threads(0);
        const std::string where = "fake-quant int8, y " + std::to_string(offset) + " and mask " +
                                  std::to_string(offset / 4 + 1) + " bytes into a line, " + std::to_string(threads) +
                                  " threads (seed 515)";
        EXPECT_EQ(std::memcmp(y.data() + y_start, expected_y.data(), expected_y.size()), 0) << where;
        EXPECT_EQ(std::memcmp(mask.data() + mask_start, expected_mask.data(), n), 0) << where << ": mask";
        EXPECT_EQ(std::count(y.begin(), y.end(), kGuardByte) -
                      std::count(y.begin() + static_cast<ptrdiff_t>(y_start),
                                 y.begin() + static_cast<ptrdiff_t>(y_start + n * 4), kGuardByte),
                  static_cast<ptrdiff_t>(y.size() - n * 4))
            << where << ": a byte outside y was written";
        EXPECT_EQ(std::count(mask.begin(), mask.end(), kGuardByte), static_cast<ptrdiff_t>(mask.size() - n))
            << where << ": a byte outside the mask was written";
      }
    }
  }
}

// Tensors of 16-bit codes need not be 2-byte aligned (the C ABI takes any pointer): per-block
// zero points fewer than a vector are widened one by one, and must be read without assuming
// alignment (UndefinedBehaviorSanitizer flags a typed load there; the C ABI fuzzer found one).
TEST(KernelsOperands, OddAddressedSixteenBitOperandsMatchTheReference) {
  const std::vector<int64_t> shape = {4, 256};
  const std::vector<int64_t> scale_shape = {4, 2};  // blocks of 128: two zero points per run
  std::vector<uint8_t> x_bytes(2 * 1024 + 1), zp_bytes(2 * 8 + 1);
  std::mt19937 g(77);
  for (uint8_t& b : x_bytes) b = static_cast<uint8_t>(g());
  for (uint8_t& b : zp_bytes) b = static_cast<uint8_t>(g());
  auto scale = make_storage(E::kFloat32, 8, [&](uint64_t) { return std::bit_cast<uint32_t>(0.03125f); });
  for (E type : {E::kInt16, E::kUint16}) {
    DequantizeLinearAttributes a;
    a.axis = 1;
    a.block_size = 128;
    const TensorView zv{type, scale_shape, zp_bytes.data() + 1};
    const Result<Plan> plan = plan_dequantize_linear({type, shape, x_bytes.data() + 1},
                                                     {E::kFloat32, scale_shape, scale.data()}, &zv, a);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    EXPECT_TRUE(same_as_reference(plan.value(), {shape, 1, 128, false}, "odd-addressed 16-bit x and zero point (seed 77)"));
  }
}

// float32 per-element scales need not be 4-byte aligned either: DequantizeLinear to bfloat16 reads
// a block's scales in place to see whether they are all finite, and its scalar tail must not load
// them as floats (the C ABI fuzzer found that load). Per-axis last (rows of 37, a tail on every
// vector width) and blocked on the first axis, with and without a zero point, at offsets 1 to 3.
TEST(KernelsOperands, OddAddressedFloat32ScalesToBfloat16MatchTheReference) {
  const std::vector<int64_t> shape = {6, 37};
  std::mt19937 g(20261126);
  std::vector<uint8_t> x(6 * 37), zero_points(6 * 37);
  for (uint8_t& b : x) b = static_cast<uint8_t>(g());
  for (uint8_t& b : zero_points) b = static_cast<uint8_t>(g());
  for (size_t offset : {1, 2, 3}) {
    for (const auto& [axis, block_size, scale_shape] :
         {std::tuple{int64_t{1}, int64_t{0}, std::vector<int64_t>{37}},
          std::tuple{int64_t{0}, int64_t{4}, std::vector<int64_t>{2, 37}}}) {
      const uint64_t scales = count_of(scale_shape);
      std::vector<uint8_t> scale_bytes(4 * scales + offset);
      for (uint64_t i = 0; i < scales; ++i) {
        const float value = 0.01f + static_cast<float>(g() % 1000) / 997.0f;
        std::memcpy(scale_bytes.data() + offset + 4 * i, &value, sizeof value);
      }
      for (bool with_zero_point : {false, true}) {
        DequantizeLinearAttributes a;
        a.axis = axis;
        a.block_size = block_size;
        a.output_dtype = 16;  // bfloat16
        const TensorView zv{E::kInt8, scale_shape, zero_points.data()};
        const Result<Plan> plan =
            plan_dequantize_linear({E::kInt8, shape, x.data()}, {E::kFloat32, scale_shape, scale_bytes.data() + offset},
                                   with_zero_point ? &zv : nullptr, a);
        ASSERT_TRUE(plan.ok()) << plan.status().message();
        EXPECT_TRUE(same_as_reference(plan.value(), {shape, axis, block_size, false},
                                      "scales at offset " + std::to_string(offset) + " (seed 20261126)"));
      }
    }
  }
}

// Per-element scales and zero points not stored as float32 are converted once for a run and reused
// by the runs after it that read the same elements (kernels.cpp, ConvertedOperand): per-axis on the
// last axis, with rows longer than a block (the cache serves later blocks of a row), rows that
// tasks split mid-row (180K elements: 1, 2 and 3 threads), and operands of every storage the cache
// converts (float16, bfloat16, 8- and 16-bit integers, packed 4- and 2-bit integers).
TEST(KernelsOperands, PerAxisOperandsConvertedOncePerTaskMatchTheReference) {
  const uint32_t seed = 20261125;
  std::mt19937 g(seed);
  const std::string seed_text = " (seed " + std::to_string(seed) + ")";
  struct Case {
    E x, scale, zero_point;  // zero point kUndefined: none
  };
  const Case quantize_cases[] = {{E::kFloat32, E::kFloat16, E::kUint8},   {E::kFloat16, E::kFloat16, E::kInt4},
                                 {E::kBfloat16, E::kBfloat16, E::kUint2}, {E::kFloat32, E::kFloat32, E::kInt16},
                                 {E::kFloat32, E::kBfloat16, E::kUndefined}};
  const Case dequantize_cases[] = {{E::kUint8, E::kFloat16, E::kUint8},
                                   {E::kInt4, E::kBfloat16, E::kInt4},
                                   {E::kInt16, E::kFloat32, E::kInt16}};
  // Rows of 1500 and 1100 are cached with one or two per-element operands, rows of 2500 with one
  // (kRowOperandBytes); 120 x 1500 is split across tasks.
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{6, 2500}, std::vector<int64_t>{6, 1500}, std::vector<int64_t>{120, 1500},
        std::vector<int64_t>{4, 3, 1100}, std::vector<int64_t>{9, 3}}) {
    const uint64_t n = count_of(shape);
    const std::vector<int64_t> scale_shape = {shape.back()};
    const int64_t axis = static_cast<int64_t>(shape.size()) - 1;
    const Sweep sweep{shape, axis, 0, false};
    for (bool quantize : {true, false}) {
      for (const Case& c : quantize ? std::span<const Case>(quantize_cases) : std::span<const Case>(dequantize_cases)) {
        auto x = make_storage(c.x, n, [&](uint64_t) { return x_code(c.x, g, 0.5f); });
        auto scale = make_storage(c.scale, scale_shape[0], [&](uint64_t) {
          return codec::encode_float(info(c.scale), 0.01 + (g() % 1000) / 997.0, codec::Overflow::kInfOrNan);
        });
        const E zp_type = c.zero_point == E::kUndefined ? E::kUint8 : c.zero_point;
        auto zp = make_storage(zp_type, scale_shape[0], [&](uint64_t) -> uint32_t {
          const uint32_t bits = static_cast<uint32_t>(info(zp_type).bits);
          return static_cast<uint32_t>(g()) & (bits == 32 ? 0xFFFF'FFFFu : (1u << bits) - 1u);
        });
        const TensorView xv{c.x, shape, x.data()};
        const TensorView sv{c.scale, scale_shape, scale.data()};
        const TensorView zv{zp_type, scale_shape, zp.data()};
        const TensorView* zvp = c.zero_point == E::kUndefined ? nullptr : &zv;
        const Result<Plan> plan = [&]() -> Result<Plan> {
          if (quantize) {
            QuantizeLinearAttributes a;
            a.axis = axis;
            if (zvp == nullptr) a.output_dtype = static_cast<int64_t>(E::kInt8);
            return plan_quantize_linear(xv, sv, zvp, a);
          }
          DequantizeLinearAttributes a;
          a.axis = axis;
          return plan_dequantize_linear(xv, sv, zvp, a);
        }();
        ASSERT_TRUE(plan.ok()) << plan.status().message();
        for (int threads : {1, 2, 3}) {
          set_num_threads(threads);
          EXPECT_TRUE(same_as_reference(plan.value(), sweep, std::to_string(threads) + " threads" + seed_text));
        }
        set_num_threads(0);
      }
    }
  }
}

// 4- and 2-bit zero points (float4e2m1 among them) widened a vector at a time: every code at
// every lane position, from a byte-aligned start (per-axis on the last axis) and from the middle
// of a byte (blocked along the first axis, rows of 67 codes), packed and one code per byte (high
// bits set, which must be ignored), in Q float32 -> the type and (integers) DQ from it, on every
// target.
TEST_F(KernelsOnEveryTarget, SubByteZeroPointsEveryCodeAtEveryLaneMatchTheReference) {
  const uint32_t seed = 20261125;
  std::mt19937 g(seed);
  const std::vector<int64_t> shape = {4, 67};
  const uint64_t n = count_of(shape);
  for (int64_t target : kernels::supported_targets()) {
    kernels::force_target(target);
    for (E type : {E::kInt4, E::kUint4, E::kInt2, E::kUint2, E::kFloat4E2M1}) {
      const ElementTypeInfo& t = info(type);
      const uint32_t codes = 1u << t.bits;
      for (const Sweep& sweep : {Sweep{shape, 1, 0, false}, Sweep{shape, 0, 2, false}}) {
        const std::vector<int64_t> zp_shape = scale_shape_of(sweep);
        const uint64_t zp_count = count_of(zp_shape);
        for (uint32_t shift = 0; shift < codes; ++shift) {
          // Position i holds code (i * 5 + shift) mod 2^bits: over the shifts, every code at every i.
          const auto zp = make_storage(type, zp_count, [&](uint64_t i) { return static_cast<uint32_t>(i * 5 + shift) % codes; });
          std::vector<uint8_t> zp_one_per_byte(zp_count);
          for (uint64_t i = 0; i < zp_count; ++i) {
            zp_one_per_byte[i] = static_cast<uint8_t>(codec::load_code(zp.data(), t, i) | (g() << t.bits));
          }
          const auto scale = random_scales(g, zp_count);
          const auto x = make_storage(E::kFloat32, n, [&](uint64_t) { return x_code(E::kFloat32, g, 0.5f); });
          const auto codes_x = make_storage(type, n, [&](uint64_t) { return x_code(type, g, 1.0f); });
          for (SubByteLayout layout : {SubByteLayout::kPacked, SubByteLayout::kOneCodePerByte}) {
            const TensorView sv{E::kFloat32, zp_shape, scale.data()};
            const TensorView zv{type, zp_shape, layout == SubByteLayout::kPacked ? zp.data() : zp_one_per_byte.data(), layout};
            const std::string what = kernels::target_name(target) + " " + std::string(t.name) + " shift " +
                                     std::to_string(shift) + (layout == SubByteLayout::kPacked ? " packed" : " one per byte") +
                                     " (seed " + std::to_string(seed) + ")";
            QuantizeLinearAttributes qa;
            qa.axis = sweep.axis;
            qa.block_size = sweep.block;
            const Result<Plan> q = plan_quantize_linear({E::kFloat32, shape, x.data()}, sv, &zv, qa);
            ASSERT_TRUE(q.ok()) << q.status().message();
            if (!same_as_reference(q.value(), sweep, what)) return;
            if (type == E::kFloat4E2M1) continue;  // DQ of float x takes zero zero points only
            DequantizeLinearAttributes da;
            da.axis = sweep.axis;
            da.block_size = sweep.block;
            const Result<Plan> dq = plan_dequantize_linear({type, shape, codes_x.data()}, sv, &zv, da);
            ASSERT_TRUE(dq.ok()) << dq.status().message();
            if (!same_as_reference(dq.value(), sweep, what)) return;
          }
        }
      }
    }
  }
}

TEST(KernelsThreads, ThreadCountIsSettable) {
  set_num_threads(3);
  EXPECT_EQ(num_threads(), 3);
  set_num_threads(0);
  EXPECT_GE(num_threads(), 1);
  EXPECT_FALSE(simd_targets().empty());
  EXPECT_EQ(active_simd_target(), simd_targets().front());
}

}  // namespace
}  // namespace qdq
