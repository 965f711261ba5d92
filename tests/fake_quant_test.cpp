// Fused fake-quant: y must equal QuantizeLinear then DequantizeLinear run one after the other,
// byte for byte, for every plan the doors accept (x, scale and code types, granularities with
// partial blocks, precision, saturate, opsets) on every Highway target, over tensors smaller and
// larger than a chunk and large enough to be split over threads; the straight-through mask must
// equal a scalar transcription of its definition (docs/semantics.md, "Fake quantization").
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "qdq/qdq.h"
#include "qdq/fake_quant.hpp"
#include "qdq/qdq.hpp"
#include "types/codec.h"

namespace qdq {
namespace {

using E = ElementType;

struct Granularity {
  const char* name;
  std::vector<int64_t> x_shape;
  std::vector<int64_t> scale_shape;
  int64_t axis;
  int64_t block_size;
};

// Odd sizes throughout; per-axis over the first, a middle and the last axis; blocks that leave a
// partial last block.
const std::vector<Granularity> kSmall = {
    {"per-tensor", {5, 67}, {}, 1, 0},
    {"per-axis first", {5, 67}, {5}, 0, 0},
    {"per-axis last", {5, 67}, {67}, 1, 0},
    {"per-axis middle", {3, 4, 7}, {4}, 1, 0},
    {"blocked first (2 of 5)", {5, 67}, {3, 67}, 0, 2},
    {"blocked last (16 of 67)", {5, 67}, {5, 5}, 1, 16},
    {"blocked middle (3 of 4)", {3, 4, 7}, {3, 2, 7}, 1, 3},
    // Blocks shorter than a vector, the lanes a multiple of the block (their operands spread over
    // the lanes in the loop), with a partial vector at each row's end.
    {"blocked last (4 of 67)", {5, 67}, {5, 17}, 1, 4},
};
// More than one 8192-element chunk per run and per tensor.
const std::vector<Granularity> kLarge = {
    {"per-tensor", {2, 9001}, {}, 1, 0},
    {"per-axis last", {2, 9001}, {9001}, 1, 0},
    {"per-axis first", {3, 9001}, {3}, 0, 0},
    {"blocked last (32 of 9001)", {2, 9001}, {2, 282}, 1, 32},
    // Short rows whose operands repeat over a block of rows: periodic runs, one a plane (the
    // second's planes are the 17 outer indices, its last block of each 2 rows short).
    {"blocked first over rows of 3 (32 of 2731)", {2731, 3}, {86, 3}, 0, 32},
    {"blocked middle over rows of 5 (4 of 30)", {17, 30, 5}, {17, 8, 5}, 1, 4},
    // One scale a row of 4 or 2 (blocks shorter than a vector, in lanes on every target), and a
    // block of 8 (shorter than AVX-512's vectors).
    {"per-axis first over rows of 4", {4099, 4}, {4099}, 0, 0},
    {"per-axis first over rows of 2", {8197, 2}, {8197}, 0, 0},
    {"blocked last (8 of 16400)", {2, 16400}, {2, 2050}, 1, 8},
};

uint64_t count_of(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

uint32_t code_of(E type, double value) {
  if (type == E::kFloat32) return std::bit_cast<uint32_t>(static_cast<float>(value));
  if (type == E::kInt32) return static_cast<uint32_t>(static_cast<int32_t>(value));
  return codec::encode_float(info(type), value, codec::Overflow::kInfOrNan);
}

// x: half-integers times powers of two (exact ties against power-of-two scales), wide
// magnitudes, and the specials.
double x_value(E type, std::mt19937& g) {
  if (type == E::kInt32) {
    const double extremes[] = {-2147483648.0, 2147483647.0, 0.0, 1e6};
    return g() % 10 == 0 ? extremes[g() % 4] : static_cast<double>(static_cast<int>(g() % 6001) - 3000);
  }
  if (g() % 16 == 0) {
    const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 3e38, -3e38};
    return specials[g() % 8];
  }
  return std::ldexp(static_cast<double>(static_cast<int>(g() % 601) - 300) + 0.5, static_cast<int>(g() % 13) - 8);
}

uint32_t scale_code(E type, std::mt19937& g) {
  if (type == E::kInt32) return static_cast<uint32_t>(g() % 8 == 0 ? -3 : static_cast<int32_t>(g() % 40) + 1);
  if (type == E::kFloat8E8M0) return 118 + g() % 16;  // 2^-9 .. 2^6
  // Now and then a NaN scale: every quotient NaN, and the dequantized product's NaN choice
  // (DequantizedProduct) decides the result.
  if (g() % 61 == 0) return code_of(type, NAN);
  const int exponent = static_cast<int>(g() % 12) - 8;
  return code_of(type, g() % 2 ? std::ldexp(1.0, exponent) : std::ldexp(1.0 + (g() % 1000) / 999.0, exponent));
}

struct Tensors {
  std::vector<uint8_t> x, scale, zero_point;
  TensorView xv, sv, zv;
};

Tensors make_tensors(E x_type, E scale_type, E zp_type, const Granularity& gran, std::mt19937& g) {
  Tensors t;
  const uint64_t n = count_of(gran.x_shape), s = count_of(gran.scale_shape);
  t.x.assign(storage_bytes(x_type, n), 0);
  for (uint64_t i = 0; i < n; ++i) codec::store_code(t.x.data(), info(x_type), i, code_of(x_type, x_value(x_type, g)));
  t.scale.assign(storage_bytes(scale_type, s), 0);
  for (uint64_t i = 0; i < s; ++i) codec::store_code(t.scale.data(), info(scale_type), i, scale_code(scale_type, g));
  if (zp_type != E::kUndefined) {
    const ElementTypeInfo& z = info(zp_type);
    t.zero_point.assign(storage_bytes(zp_type, s), 0);
    // Integer zero points anywhere in range; float ones 0 (the ONNX doors require it).
    for (uint64_t i = 0; i < s; ++i) {
      codec::store_code(t.zero_point.data(), z, i,
                        z.is_integer() ? static_cast<uint32_t>(g() & ((uint64_t{1} << z.bits) - 1)) : 0u);  // 32-bit too
    }
  }
  t.xv = {x_type, gran.x_shape, t.x.data()};
  t.sv = {scale_type, gran.scale_shape, t.scale.data()};
  t.zv = {zp_type, gran.scale_shape, t.zero_point.data()};
  return t;
}

// The scale (and zero point) element of x's element i: transcribed from the ONNX granularity rules.
uint64_t scale_index(const Granularity& gran, uint64_t i) {
  const uint64_t scale_count = count_of(gran.scale_shape);
  if (scale_count == 1) return 0;
  const int rank = static_cast<int>(gran.x_shape.size());
  std::vector<uint64_t> index(static_cast<size_t>(rank));
  for (int d = rank - 1; d >= 0; --d) {
    index[static_cast<size_t>(d)] = i % static_cast<uint64_t>(gran.x_shape[static_cast<size_t>(d)]);
    i /= static_cast<uint64_t>(gran.x_shape[static_cast<size_t>(d)]);
  }
  const size_t axis = static_cast<size_t>(gran.axis);
  if (gran.block_size == 0) return index[axis];
  index[axis] /= static_cast<uint64_t>(gran.block_size);
  uint64_t linear = 0;
  for (int d = 0; d < rank; ++d) linear = linear * static_cast<uint64_t>(gran.scale_shape[static_cast<size_t>(d)]) + index[static_cast<size_t>(d)];
  return linear;
}

// Rounds a magnitude to `mantissa_bits` fraction bits, ties to even, with an unbounded exponent.
double round_significand(double magnitude, int mantissa_bits) {
  if (!std::isfinite(magnitude) || magnitude == 0.0) return magnitude;
  int exponent = 0;
  const double fraction = std::frexp(magnitude, &exponent);  // [0.5, 1)
  return std::ldexp(std::nearbyint(std::ldexp(fraction, mantissa_bits + 1)), exponent - mantissa_bits - 1);
}

// The mask's definition, element by element: q = x / scale as QuantizeLinear computes it (in the
// division precision); integer codes: lowest <= round_half_even(q) + zp <= max; float codes: q
// (plus the zero point where it is added) rounded to the type's significand is at most its max.
// NaN is outside.
std::vector<uint8_t> mask_oracle(const Plan& quantize, const Granularity& gran) {
  const ElementTypeInfo& out = info(quantize.output_type);
  std::vector<uint8_t> mask(quantize.element_count);
  for (uint64_t i = 0; i < quantize.element_count; ++i) {
    const uint64_t s = scale_index(gran, i);
    double x = codec::load_value(quantize.x.data, info(quantize.x.type), i);
    // An int32 x reaches a float division precision through float32 (numpy's conversion).
    if (quantize.x.type == E::kInt32 && quantize.precision != Precision::kFloat64) x = static_cast<float>(x);
    const double scale = codec::load_value(quantize.scale.data, info(quantize.scale.type), s);
    const double zp = quantize.has_zero_point ? codec::load_value(quantize.zero_point.data, info(quantize.zero_point.type), s,
                                                                  quantize.zero_point.layout)
                                              : 0.0;
    double q = 0.0;
    switch (quantize.precision) {
      case Precision::kFloat64: q = x / scale; break;
      case Precision::kFloat32: q = static_cast<float>(x) / static_cast<float>(scale); break;
      default: {
        const ElementTypeInfo& p = info(quantize.precision == Precision::kFloat16 ? E::kFloat16 : E::kBfloat16);
        auto round = [&](double v) { return codec::round_to_float_type(p, v, codec::Overflow::kInfOrNan); };
        q = round(static_cast<float>(round(x)) / static_cast<float>(round(scale)));
      }
    }
    bool inside = false;
    if (out.is_integer()) {
      const double r = std::nearbyint(q) + zp;
      inside = !std::isnan(q) && r >= out.lowest && r <= out.max;
    } else {
      // Zero points are added in float32 (float64 after a float64 division, then rounded to float32).
      double v = q;
      if (quantize.precision == Precision::kFloat64) {
        v = static_cast<float>(quantize.apply_zero_point ? q + zp : q);
      } else if (quantize.apply_zero_point) {
        v = static_cast<float>(static_cast<float>(q) + static_cast<float>(zp));
      }
      inside = !std::isnan(v) && round_significand(std::fabs(v), out.mantissa_bits) <= out.max;
    }
    mask[i] = inside ? 1 : 0;
  }
  return mask;
}

class FakeQuant : public testing::Test {
 protected:
  void TearDown() override { kernels::force_target(0); }

  // Fused (with its mask) against the two operators composed, on every target.
  void check(const Tensors& t, const Granularity& gran, const QuantizeDequantizePlan& plan,
             const DequantizeLinearAttributes& dq_attributes, bool extended, const std::string& what) {
    ++plans_;
    const Plan& q = plan.quantize;
    const uint64_t n = plan.element_count;
    std::vector<uint8_t> codes(storage_bytes(q.output_type, n) + 8, 0);
    ASSERT_TRUE(execute(q, {q.output_type, plan.shape, codes.data()}).ok()) << what;
    const TensorView code_view{q.output_type, gran.x_shape, codes.data()};
    const Result<Plan> dq = extended
                                ? plan_extended_dequantize_linear(code_view, t.sv, q.has_zero_point ? &t.zv : nullptr, gran.axis)
                                : plan_dequantize_linear(code_view, t.sv, q.has_zero_point ? &t.zv : nullptr, dq_attributes);
    ASSERT_TRUE(dq.ok()) << what << ": " << dq.status().message();
    ASSERT_EQ(dq->output_type, plan.output_type) << what;
    const uint64_t y_bytes = storage_bytes(plan.output_type, n);
    std::vector<uint8_t> composed(y_bytes + 8, 0xCD);
    ASSERT_TRUE(execute(dq.value(), {plan.output_type, plan.shape, composed.data()}).ok()) << what;
    const bool has_mask = kernels::covers_range_mask(q);
    const std::vector<uint8_t> want_mask = has_mask ? mask_oracle(q, gran) : std::vector<uint8_t>();
    for (int64_t target : kernels::supported_targets()) {
      kernels::force_target(target);
      const std::string where = what + " on " + kernels::target_name(target);
      std::vector<uint8_t> fused(y_bytes + 8, 0xAB);
      // Without the mask first (the kernels' loops differ), then with it where the plan has one.
      const Status alone = execute(plan, {plan.output_type, plan.shape, fused.data()});
      ASSERT_TRUE(alone.ok()) << where << ": " << alone.message();
      for (uint64_t i = 0; i < y_bytes; ++i) {
        ASSERT_EQ(fused[i], composed[i]) << where << " without the mask: byte " << i << " of y";
      }
      std::fill(fused.begin(), fused.end(), 0xAB);
      std::vector<uint8_t> mask(n + 8, 0xAB);
      const MutableTensorView mask_view{E::kUint8, plan.shape, mask.data()};
      const Status s = execute(plan, {plan.output_type, plan.shape, fused.data()}, has_mask ? &mask_view : nullptr);
      ASSERT_TRUE(s.ok()) << where << ": " << s.message();
      for (uint64_t i = 0; i < y_bytes; ++i) {
        ASSERT_EQ(fused[i], composed[i]) << where << ": byte " << i << " of y (element "
                                         << i / static_cast<uint64_t>(info(plan.output_type).bytes_per_element())
                                         << ")";
      }
      for (uint64_t i = y_bytes; i < fused.size(); ++i) ASSERT_EQ(fused[i], 0xAB) << where << ": wrote past y";
      if (has_mask) {
        for (uint64_t i = 0; i < n; ++i) {
          ASSERT_EQ(mask[i], want_mask[i]) << where << ": mask element " << i << " x="
                                           << codec::load_value(q.x.data, info(q.x.type), i);
        }
        for (uint64_t i = n; i < mask.size(); ++i) ASSERT_EQ(mask[i], 0xAB) << where << ": wrote past the mask";
        masks_ += n;
        inside_ += static_cast<uint64_t>(std::count(want_mask.begin(), want_mask.end(), uint8_t{1}));
      }
    }
    kernels::force_target(0);
  }

  // Every ONNX combination over `grans` at the given opsets.
  struct Sweep {
    std::vector<int64_t> opsets;
    std::vector<E> x_types, scale_types, code_types;
    std::vector<int64_t> precisions;
  };

  void every_onnx_plan(const std::vector<Granularity>& grans, const Sweep& sweep, uint32_t seed) {
    std::mt19937 g(seed);
    for (int64_t opset : sweep.opsets) {
      for (E x : sweep.x_types) {
        for (E scale : sweep.scale_types) {
          for (E code : sweep.code_types) {
            for (const Granularity& gran : grans) {
              for (int64_t precision : sweep.precisions) {
                for (int64_t saturate : {1, 0}) {
                  if (saturate == 0 && !(info(code).is_float() && info(code).bits == 8)) continue;
                  for (bool with_zp : {true, false}) {
                    QuantizeDequantizeAttributes a;
                    a.opset = opset;
                    a.axis = gran.axis;
                    a.block_size = gran.block_size;
                    a.precision = precision;
                    a.saturate = saturate;
                    if (!with_zp) a.quantized_dtype = static_cast<int64_t>(code);
                    const Tensors t = make_tensors(x, scale, code, gran, g);
                    Result<QuantizeDequantizePlan> plan =
                        plan_quantize_dequantize_linear(t.xv, t.sv, with_zp ? &t.zv : nullptr, a);
                    if (!plan.ok() && !with_zp && opset < 21) {  // no output_dtype before 21
                      a.quantized_dtype = 0;
                      if (code != E::kUint8) continue;
                      plan = plan_quantize_dequantize_linear(t.xv, t.sv, nullptr, a);
                    }
                    if (!plan.ok()) continue;
                    DequantizeLinearAttributes d;
                    d.opset = opset;
                    d.axis = gran.axis;
                    d.block_size = gran.block_size;
                    if (opset >= 23) d.output_dtype = static_cast<int64_t>(plan->output_type);
                    check(t, gran, plan.value(), d, false,
                          "x " + std::string(name(x)) + " scale " + std::string(name(scale)) + " codes " +
                              std::string(name(code)) + " " + gran.name + " opset " + std::to_string(opset) +
                              " precision " + std::to_string(precision) + " saturate " + std::to_string(saturate) +
                              (with_zp ? "" : " no zp"));
                    if (HasFatalFailure()) return;
                  }
                }
              }
            }
          }
        }
      }
    }
  }

  uint64_t plans_ = 0, masks_ = 0, inside_ = 0;
};

const std::vector<E> kOnnxCodes = {E::kUint8,        E::kInt8,           E::kUint16,      E::kInt16,
                                   E::kUint4,        E::kInt4,           E::kUint2,       E::kInt2,
                                   E::kFloat8E4M3FN, E::kFloat8E4M3FNUZ, E::kFloat8E5M2,  E::kFloat8E5M2FNUZ,
                                   E::kFloat4E2M1};

TEST_F(FakeQuant, EveryOnnxPlanEqualsTheComposition) {
  every_onnx_plan(kSmall,
                  {{10, 19, 21, 25},
                   {E::kFloat32, E::kFloat16, E::kBfloat16, E::kInt32},
                   {E::kFloat32, E::kFloat16, E::kBfloat16, E::kInt32, E::kFloat8E8M0},
                   kOnnxCodes,
                   {0, 10, 16}},
                  20261122);
  // Both sides of the clamp range are exercised.
  EXPECT_GT(inside_, masks_ / 4);
  EXPECT_LT(inside_, masks_ * 3 / 4 + masks_ / 5);
  EXPECT_GT(plans_, 3000u);
}

TEST_F(FakeQuant, ChunksOfLargeTensorsEqualTheComposition) {
  every_onnx_plan(kLarge,
                  {{25},
                   {E::kFloat32, E::kBfloat16},
                   {E::kFloat32, E::kInt32},
                   {E::kUint8, E::kInt16, E::kInt4, E::kUint2, E::kFloat8E4M3FN, E::kFloat8E5M2, E::kFloat4E2M1},
                   {0, 16}},
                  7);
  EXPECT_GT(plans_, 60u);
}

// Enough elements for several tasks on qdq's pool (and on a host's parallel-for).
TEST_F(FakeQuant, ThreadedEqualsTheComposition) {
  std::mt19937 g(99);
  const Granularity per_tensor{"per-tensor", {3, 100003}, {}, 1, 0};
  const Granularity blocked{"blocked last (32)", {3, 100003}, {3, 3126}, 1, 32};
  // Tasks start and end inside rows of 3 (their bounds are multiples of 64 elements).
  const Granularity short_rows{"blocked first over rows of 3 (32)", {100003, 3}, {3126, 3}, 0, 32};
  for (const Granularity* gran : {&per_tensor, &blocked, &short_rows}) {
    for (E code : {E::kInt8, E::kInt4, E::kFloat8E4M3FN}) {
      const Tensors t = make_tensors(E::kFloat32, E::kFloat32, code, *gran, g);
      const Result<QuantizeDequantizePlan> plan = plan_quantize_dequantize_linear(t.xv, t.sv, &t.zv, {gran->axis, gran->block_size});
      ASSERT_TRUE(plan.ok()) << plan.status().message();
      DequantizeLinearAttributes d;
      d.axis = gran->axis;
      d.block_size = gran->block_size;
      d.output_dtype = 1;
      check(t, *gran, plan.value(), d, false, std::string(name(code)) + " " + gran->name + " threaded");
      if (HasFatalFailure()) return;
    }
  }
}

TEST_F(FakeQuant, EveryQuarkPlanEqualsTheComposition) {
  std::mt19937 g(5);
  const std::vector<Granularity> grans = {kSmall[0], kSmall[1], kSmall[2], kLarge[1]};
  for (E code : {E::kInt8, E::kUint8, E::kInt16, E::kUint16, E::kInt32, E::kUint32, E::kFloat16, E::kBfloat16}) {
    for (const Granularity& gran : grans) {
      for (bool with_zp : {true, false}) {
        if (!with_zp && code != E::kUint8) continue;
        Tensors t = make_tensors(E::kFloat32, E::kFloat32, code, gran, g);
        if (info(code).is_float()) {  // Quark adds float zero points: any value
          for (uint64_t i = 0; i < count_of(gran.scale_shape); ++i) {
            codec::store_code(t.zero_point.data(), info(code), i, code_of(code, static_cast<double>(g() % 201) - 100.0));
          }
        }
        const Result<QuantizeDequantizePlan> plan =
            plan_extended_quantize_dequantize_linear(t.xv, t.sv, with_zp ? &t.zv : nullptr, gran.axis);
        ASSERT_TRUE(plan.ok()) << plan.status().message();
        check(t, gran, plan.value(), {}, true, "Quark codes " + std::string(name(code)) + " " + gran.name);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST_F(FakeQuant, RulesAreTheTwoOperatorsAndTheMasks) {
  const std::vector<int64_t> shape = {4};
  const float x[4] = {1.0f, -2.0f, 300.0f, NAN};
  const float scale = 1.0f;
  const uint8_t fp4_zero_point = 0x2;  // float4 1.0: QuantizeLinear adds it, DequantizeLinear refuses it
  const TensorView xv{E::kFloat32, shape, x}, sv{E::kFloat32, {}, &scale};
  const TensorView fp4_zp{E::kFloat4E2M1, {}, &fp4_zero_point};
  const Result<QuantizeDequantizePlan> fp4 = plan_quantize_dequantize_linear(xv, sv, &fp4_zp);
  ASSERT_FALSE(fp4.ok());
  EXPECT_NE(fp4.status().message().find("DequantizeLinear-25"), std::string::npos) << fp4.status().message();

  QuantizeDequantizeAttributes old;
  old.opset = 21;
  old.output_dtype = static_cast<int64_t>(E::kFloat16);
  const Result<QuantizeDequantizePlan> needs_23 = plan_quantize_dequantize_linear(xv, sv, nullptr, old);
  ASSERT_FALSE(needs_23.ok());
  EXPECT_NE(needs_23.status().message().find("needs opset 23"), std::string::npos) << needs_23.status().message();

  QuantizeDequantizeAttributes bad_y;
  bad_y.output_dtype = static_cast<int64_t>(E::kInt8);
  const Result<QuantizeDequantizePlan> int8_y = plan_quantize_dequantize_linear(xv, sv, nullptr, bad_y);
  ASSERT_FALSE(int8_y.ok());
  EXPECT_NE(int8_y.status().message().find("output_dtype"), std::string::npos) << int8_y.status().message();

  const Result<QuantizeDequantizePlan> plan = plan_quantize_dequantize_linear(xv, sv, nullptr);  // uint8 codes
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->output_type, E::kFloat32);
  float y[4] = {};
  uint8_t mask[4] = {};
  const MutableTensorView yv{E::kFloat32, shape, y};
  const MutableTensorView mv{E::kUint8, shape, mask};
  ASSERT_TRUE(execute(plan.value(), yv, &mv).ok());
  // uint8: 1 -> 1 inside; -2 -> 0 clamped; 300 -> 255 clamped; NaN -> 0 (QuantizeLinear's NaN).
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_EQ(y[2], 255.0f);
  EXPECT_EQ(y[3], 0.0f);
  EXPECT_EQ(std::vector<uint8_t>(mask, mask + 4), (std::vector<uint8_t>{1, 0, 0, 0}));

  const MutableTensorView wrong_mask{E::kInt8, shape, mask};
  const Status s = execute(plan.value(), yv, &wrong_mask);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("mask has type int8"), std::string::npos) << s.message();
  const MutableTensorView wrong_y{E::kFloat16, shape, y};
  EXPECT_NE(execute(plan.value(), wrong_y).message().find("output buffer has type float16"), std::string::npos);
  ExecuteOptions reference;
  reference.path = ExecutionPath::kReference;
  EXPECT_FALSE(execute(plan.value(), yv, &mv, reference).ok());
  float y_reference[4] = {};
  ASSERT_TRUE(execute(plan.value(), {E::kFloat32, shape, y_reference}, nullptr, reference).ok());
  EXPECT_EQ(std::memcmp(y, y_reference, sizeof(y)), 0);

  // Quark int32 codes: no mask.
  const int32_t zp32 = 0;
  const TensorView zp32v{E::kInt32, {}, &zp32};
  const Result<QuantizeDequantizePlan> quark = plan_extended_quantize_dequantize_linear(xv, sv, &zp32v);
  ASSERT_TRUE(quark.ok());
  const Status no_mask = execute(quark.value(), yv, &mv);
  ASSERT_FALSE(no_mask.ok());
  EXPECT_NE(no_mask.message().find("no straight-through mask for int32"), std::string::npos) << no_mask.message();
  EXPECT_TRUE(execute(quark.value(), yv).ok());
}

// Float codes near every rounding boundary: x runs over every float16 bit pattern (all the
// float8 / float4 midpoints, ties, subnormals, overflow points, infinities and NaNs), divided by
// scales that shift it across each format's range, with and without saturation.
TEST_F(FakeQuant, FloatCodesOverEveryFloat16Value) {
  const Granularity per_tensor{"per-tensor", {65536}, {}, 0, 0};
  std::vector<uint8_t> x(65536 * 4);
  for (uint32_t code = 0; code < 65536; ++code) {
    codec::store_code(x.data(), info(E::kFloat32), code, code_of(E::kFloat32, codec::decode(info(E::kFloat16), code)));
  }
  for (E code_type : {E::kFloat8E4M3FN, E::kFloat8E4M3FNUZ, E::kFloat8E5M2, E::kFloat8E5M2FNUZ, E::kFloat4E2M1}) {
    for (float scale : {1.0f, 0.0078125f, 256.0f, -0.375f}) {
      for (int64_t saturate : {1, 0}) {
        Tensors t;
        t.x = x;
        t.scale.assign(4, 0);
        std::memcpy(t.scale.data(), &scale, 4);
        t.xv = {E::kFloat32, per_tensor.x_shape, t.x.data()};
        t.sv = {E::kFloat32, per_tensor.scale_shape, t.scale.data()};
        QuantizeDequantizeAttributes a;
        a.axis = 0;
        a.saturate = saturate;
        a.quantized_dtype = static_cast<int64_t>(code_type);
        const Result<QuantizeDequantizePlan> plan = plan_quantize_dequantize_linear(t.xv, t.sv, nullptr, a);
        ASSERT_TRUE(plan.ok()) << plan.status().message();
        DequantizeLinearAttributes d;
        d.axis = 0;
        d.output_dtype = 1;
        check(t, per_tensor, plan.value(), d, false,
              std::string(name(code_type)) + " scale " + std::to_string(scale) + " saturate " + std::to_string(saturate));
        if (HasFatalFailure()) return;
      }
    }
  }
}

// The C ABI: the same bytes as the C++ API, the mask, and messages for what C callers get wrong.
TEST(FakeQuantCAbi, MatchesTheCppApiAndReportsErrors) {
  std::mt19937 g(17);
  const Granularity& gran = kSmall[5];  // blocked last, partial block
  const Tensors t = make_tensors(E::kFloat32, E::kFloat32, E::kInt4, gran, g);
  QuantizeDequantizeAttributes a;
  a.axis = gran.axis;
  a.block_size = gran.block_size;
  const Result<QuantizeDequantizePlan> plan = plan_quantize_dequantize_linear(t.xv, t.sv, &t.zv, a);
  ASSERT_TRUE(plan.ok());
  const uint64_t n = plan->element_count;
  std::vector<float> want(n), got(n);
  std::vector<uint8_t> want_mask(n), got_mask(n);
  const MutableTensorView want_mask_view{E::kUint8, plan->shape, want_mask.data()};
  ASSERT_TRUE(execute(plan.value(), {E::kFloat32, plan->shape, want.data()}, &want_mask_view).ok());

  const int64_t* shape = gran.x_shape.data();
  const int64_t* scale_shape = gran.scale_shape.data();
  const qdq_tensor x{1, 2, shape, t.x.data()};
  const qdq_tensor scale{1, 2, scale_shape, t.scale.data()};
  const qdq_tensor zero_point{static_cast<int32_t>(E::kInt4), 2, scale_shape, t.zero_point.data()};
  qdq_quantize_dequantize_attributes attributes;
  qdq_quantize_dequantize_attributes_init(&attributes);
  attributes.axis = gran.axis;
  attributes.block_size = gran.block_size;
  int32_t y_type = 0;
  ASSERT_EQ(qdq_quantize_dequantize_linear_output_type(&x, &scale, &zero_point, &attributes, &y_type), QDQ_OK);
  EXPECT_EQ(y_type, 1);
  const qdq_mutable_tensor y{1, 2, shape, got.data()};
  const qdq_mutable_tensor mask{2, 2, shape, got_mask.data()};
  ASSERT_EQ(qdq_quantize_dequantize_linear(&x, &scale, &zero_point, &attributes, &y, &mask), QDQ_OK) << qdq_last_error();
  EXPECT_EQ(std::memcmp(got.data(), want.data(), n * sizeof(float)), 0);
  EXPECT_EQ(got_mask, want_mask);

  const qdq_mutable_tensor short_mask{2, 1, shape, got_mask.data()};
  ASSERT_EQ(qdq_quantize_dequantize_linear(&x, &scale, &zero_point, &attributes, &y, &short_mask), QDQ_INVALID_ARGUMENT);
  EXPECT_NE(std::string(qdq_last_error()).find("output buffer 'mask' has rank 1"), std::string::npos) << qdq_last_error();
  ASSERT_EQ(qdq_quantize_dequantize_linear(&x, &scale, &zero_point, &attributes, nullptr, nullptr), QDQ_INVALID_ARGUMENT);
  EXPECT_NE(std::string(qdq_last_error()).find("argument 'y' is NULL"), std::string::npos) << qdq_last_error();
  const qdq_mutable_tensor float_mask{1, 2, shape, got.data()};
  ASSERT_EQ(qdq_quantize_dequantize_linear(&x, &scale, &zero_point, &attributes, &y, &float_mask), QDQ_INVALID_ARGUMENT);
  EXPECT_NE(std::string(qdq_last_error()).find("mask has type float32"), std::string::npos) << qdq_last_error();

  // Quark's pair: int8 codes, per-tensor.
  const float one = 1.0f;
  const int8_t zp8 = 3;
  const qdq_tensor scalar_scale{1, 0, nullptr, &one};
  const qdq_tensor zp8_tensor{3, 0, nullptr, &zp8};
  ASSERT_EQ(qdq_extended_quantize_dequantize_linear(&x, &scalar_scale, &zp8_tensor, 1, &y, &mask), QDQ_OK) << qdq_last_error();
  EXPECT_TRUE(std::count(got_mask.begin(), got_mask.end(), uint8_t{0}) > 0);
}

}  // namespace
}  // namespace qdq
