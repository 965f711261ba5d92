// No valid plan takes the scalar reference at run time: every combination of operator family,
// x type, scale type, zero-point / output type and granularity that a front door accepts,
// enumerated from the element-type table, must be covered by a SIMD kernel and give the
// reference's bytes on every Highway target this CPU supports.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "qdq/qdq.hpp"
#include "types/codec.h"

namespace qdq {
namespace {

using E = ElementType;

// x [5, 67] viewed with every granularity a door may take: the scale (and zero point) shape and
// the attributes that select it. 67 is odd and not a multiple of any vector or of the block.
struct Granularity {
  const char* name;
  std::vector<int64_t> scale_shape;
  int64_t axis;
  int64_t block_size;
};
const std::vector<int64_t> kShape = {5, 67};
const Granularity kOnnxGranularities[] = {
    {"per-tensor", {}, 1, 0},         {"per-axis 0", {5}, 0, 0},        {"per-axis 1", {67}, 1, 0},
    {"blocked 0 (2)", {3, 67}, 0, 2}, {"blocked 1 (16)", {5, 5}, 1, 16}, {"blocked 1 (3)", {5, 23}, 1, 3},
};
const Granularity kQuarkGranularities[] = {{"per-tensor", {}, 1, 0}, {"per-axis 0", {5}, 0, 0}, {"per-axis 1", {67}, 1, 0}};
// DirectML: scale and zero point of x's rank, each dimension x's or 1.
const Granularity kBroadcastGranularities[] = {
    {"[1,1]", {1, 1}, 0, 0}, {"[5,1]", {5, 1}, 0, 0}, {"[1,67]", {1, 67}, 0, 0}, {"[5,67]", {5, 67}, 0, 0}};

uint64_t count_of(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

std::vector<uint8_t> storage(E type, uint64_t count, const std::function<uint32_t(uint64_t)>& code) {
  std::vector<uint8_t> bytes(storage_bytes(type, count) + 8, 0);
  for (uint64_t i = 0; i < count; ++i) codec::store_code(bytes.data(), info(type), i, code(i));
  return bytes;
}

// A value of a float type from a double (kInfOrNan keeps specials), as its code.
uint32_t float_code(E type, double value) {
  if (type == E::kFloat32) return std::bit_cast<uint32_t>(static_cast<float>(value));
  return codec::encode_float(info(type), value, codec::Overflow::kInfOrNan);
}

// x codes: integers anywhere in their range (the extremes often), floats with specials, ties at
// the scale and huge and tiny magnitudes.
uint32_t x_code(E type, std::mt19937& g) {
  const ElementTypeInfo& t = info(type);
  if (t.is_integer()) {
    const uint32_t mask = t.bits == 32 ? 0xFFFF'FFFFu : (1u << t.bits) - 1u;
    switch (g() % 4) {
      case 0: {  // the extremes of both signednesses: 0, all ones, 0111..., 1000...
        const uint32_t extremes[] = {0u, mask, mask >> 1, (mask >> 1) + 1u};
        return extremes[g() % 4];
      }
      case 1: return static_cast<uint32_t>(static_cast<int32_t>(g() % 41) - 20) & mask;
      default: return static_cast<uint32_t>(g()) & mask;
    }
  }
  if (type == E::kFloat32 || type == E::kFloat16 || type == E::kBfloat16) {
    static const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 3e38, -3e38, 65520.0, 1e-40, 4e9, -3e9};
    switch (g() % 6) {
      case 0: return float_code(type, specials[g() % 12]);
      case 1: return float_code(type, (static_cast<double>(static_cast<int>(g() % 600) - 300) + 0.5) * 0.75);
      case 2: return static_cast<uint32_t>(g()) & (t.bits == 32 ? 0xFFFF'FFFFu : 0xFFFFu);  // any bit pattern
      default: return float_code(type, std::ldexp(static_cast<double>(static_cast<int>(g() % 20001) - 10000) / 1000.0,
                                                  static_cast<int>(g() % 30) - 10));
    }
  }
  return static_cast<uint32_t>(g()) & ((1u << t.bits) - 1u);  // any code of a small float
}

uint32_t scale_code(E type, std::mt19937& g) {
  if (type == E::kInt32) {  // positive, negative, zero, huge
    const int32_t values[] = {1, 3, 7, -5, 0, 1000, 65536, 2147483647, -2147483647 - 1};
    return static_cast<uint32_t>(g() % 3 ? static_cast<int32_t>(g() % 200) - 50 : values[g() % 9]);
  }
  if (type == E::kFloat8E8M0) return g() % 256;
  if (g() % 29 == 0) return float_code(type, g() % 2 ? NAN : 0.0);
  return float_code(type, std::ldexp(1.0 + (g() % 1000) / 999.0, static_cast<int>(g() % 24) - 14));
}

// Zero points: any code of an integer type; zero for float8 and float4 (the ONNX doors require it
// for dequantize and float8); any value for Quark's float16 / bfloat16.
uint32_t zero_point_code(E type, bool any_float, std::mt19937& g) {
  const ElementTypeInfo& t = info(type);
  if (t.is_integer()) return static_cast<uint32_t>(g()) & (t.bits == 32 ? 0xFFFF'FFFFu : (1u << t.bits) - 1u);
  if (!any_float) return 0;
  if (g() % 11 == 0) {  // NaN zero points with payloads (q + zp keeps q's NaN when both are NaN)
    const uint32_t nans[] = {0x7E01, 0xFE00, 0x7C01, 0x7FC1, 0xFF81};
    const uint32_t code = nans[g() % 5];
    if (std::isnan(codec::decode(info(type), code))) return code;
  }
  return float_code(type, static_cast<double>(static_cast<int>(g() % 2001) - 1000) / 8.0);
}

struct Operands {
  std::vector<uint8_t> x, scale, zero_point;
  TensorView xv, sv, zv;
};

Operands make_operands(E x_type, E scale_type, E zp_type, const std::vector<int64_t>& scale_shape, bool any_float_zp,
                       std::mt19937& g, std::span<const int64_t> shape = kShape) {
  Operands o;
  o.x = storage(x_type, count_of({shape.begin(), shape.end()}), [&](uint64_t) { return x_code(x_type, g); });
  o.scale = storage(scale_type, count_of(scale_shape), [&](uint64_t) { return scale_code(scale_type, g); });
  if (zp_type != E::kUndefined) {
    o.zero_point = storage(zp_type, count_of(scale_shape), [&](uint64_t) { return zero_point_code(zp_type, any_float_zp, g); });
  }
  o.xv = {x_type, shape, o.x.data()};
  o.sv = {scale_type, scale_shape, o.scale.data()};
  o.zv = {zp_type, scale_shape, o.zero_point.data()};
  return o;
}

// Zero-filled views for asking a door whether it accepts a combination (validation reads types,
// shapes and float8 zero-point values, which zeros pass), before any data is made for it.
Operands zero_operands(E x_type, E scale_type, E zp_type, const std::vector<int64_t>& scale_shape) {
  static const std::vector<uint8_t> zeros(4 * count_of(kShape) + 8, 0);
  Operands o;
  o.xv = {x_type, kShape, zeros.data()};
  o.sv = {scale_type, scale_shape, zeros.data()};
  o.zv = {zp_type, scale_shape, zeros.data()};
  return o;
}

class KernelCoverage : public testing::Test {
 protected:
  void TearDown() override { kernels::force_target(0); }

  // Asserts that a kernel runs the plan and equals the reference on every target.
  void check(const Result<Plan>& plan, const std::string& what) {
    ASSERT_TRUE(plan.ok());
    const Plan& p = plan.value();
    ++accepted_;
    families_.insert(p.operator_name.substr(0, p.operator_name.find('-')) + " " + std::string(name(p.x.type)) + " -> " +
                     std::string(name(p.output_type)));
    ASSERT_TRUE(kernels::covers(p)) << what << " takes the scalar reference";
    const uint64_t bytes = storage_bytes(p.output_type, p.element_count);
    std::vector<uint8_t> reference(bytes + 8, 0xCD);
    ExecuteOptions options;
    options.path = ExecutionPath::kReference;
    ASSERT_TRUE(execute(p, {p.output_type, p.shape, reference.data()}, options).ok());
    for (int64_t target : kernels::supported_targets()) {
      kernels::force_target(target);
      std::vector<uint8_t> fast(bytes + 8, 0xCD);
      ASSERT_TRUE(execute(p, {p.output_type, p.shape, fast.data()}).ok());
      for (uint64_t i = 0; i < p.element_count; ++i) {
        const uint32_t a = codec::load_code(fast.data(), info(p.output_type), i);
        const uint32_t b = codec::load_code(reference.data(), info(p.output_type), i);
        ASSERT_EQ(a, b) << kernels::target_name(target) << " " << what << ": element " << i << " x code 0x" << std::hex
                        << codec::load_code(p.x.data, info(p.x.type), i) << " expected 0x" << b << " got 0x" << a;
      }
      ASSERT_EQ(std::memcmp(fast.data(), reference.data(), fast.size()), 0) << what << ": bytes past the output differ";
      if (info(p.x.type).is_packed() || info(p.output_type).is_packed()) {
        check_one_code_per_byte(p, reference, what + " " + kernels::target_name(target));
        if (HasFatalFailure()) return;
      }
    }
    kernels::force_target(0);
  }

  // The same plan with its 4- and 2-bit tensors one code per byte (numpy's layout): inputs with
  // random high bits (ignored), outputs with zero high bits, codes equal to the packed reference.
  void check_one_code_per_byte(const Plan& packed, const std::vector<uint8_t>& reference, const std::string& what) {
    std::mt19937 g(7);
    auto spread = [&](const TensorView& view, uint64_t count, std::vector<uint8_t>* bytes) {
      const ElementTypeInfo& t = info(view.type);
      bytes->resize(count);
      for (uint64_t i = 0; i < count; ++i) {
        (*bytes)[i] = static_cast<uint8_t>(codec::load_code(view.data, t, i) | (g() << t.bits));
      }
      return TensorView{view.type, view.shape, bytes->data(), SubByteLayout::kOneCodePerByte};
    };
    Plan p = packed;
    std::vector<uint8_t> x_bytes, zp_bytes;
    if (info(p.x.type).is_packed()) p.x = spread(p.x, p.element_count, &x_bytes);
    if (p.has_zero_point && info(p.zero_point.type).is_packed()) {
      p.zero_point = spread(p.zero_point, count_of({p.zero_point.shape.begin(), p.zero_point.shape.end()}), &zp_bytes);
    }
    const ElementTypeInfo& out = info(p.output_type);
    const SubByteLayout y_layout = out.is_packed() ? SubByteLayout::kOneCodePerByte : SubByteLayout::kPacked;
    std::vector<uint8_t> y(storage_bytes(p.output_type, p.element_count, y_layout) + 8, 0xCD);
    ASSERT_TRUE(execute(p, {p.output_type, p.shape, y.data(), y_layout}).ok());
    for (uint64_t i = 0; i < p.element_count; ++i) {
      const uint32_t want = codec::load_code(reference.data(), out, i);
      const uint32_t got = out.is_packed() ? y[i] : codec::load_code(y.data(), out, i);
      ASSERT_EQ(got, want) << what << " one code per byte: element " << i;
    }
    for (size_t i = y.size() - 8; i < y.size(); ++i) ASSERT_EQ(y[i], 0xCD) << what << ": one code per byte wrote past y";
  }

  uint64_t accepted_ = 0;
  std::set<std::string> families_;
};

std::string describe(const char* family, E x, E scale, E zp_or_out, const Granularity& gran, const std::string& extra) {
  return std::string(family) + " x " + std::string(name(x)) + " scale " + std::string(name(scale)) + " zp/out " +
         (zp_or_out == E::kUndefined ? std::string("none") : std::string(name(zp_or_out))) + " " + gran.name + extra;
}

TEST_F(KernelCoverage, EveryOnnxQuantizePlan) {
  std::mt19937 g(20261122);
  for (int64_t opset : {10, 13, 19, 21, 23, 24, 25}) {
    for (const ElementTypeInfo& x : all_element_types()) {
      for (const ElementTypeInfo& s : all_element_types()) {
        for (const ElementTypeInfo& zp : all_element_types()) {
          for (const Granularity& gran : kOnnxGranularities) {
            for (int64_t precision : {0, 1, 10, 16}) {
              for (bool with_zp : {true, false}) {
                const Operands z = zero_operands(x.type, s.type, zp.type, gran.scale_shape);
                QuantizeLinearAttributes a;
                a.opset = opset;
                a.axis = gran.axis;
                a.block_size = gran.block_size;
                a.precision = precision;
                a.saturate = static_cast<int64_t>(g() % 2);
                if (!with_zp) a.output_dtype = static_cast<int64_t>(zp.type);
                if (!plan_quantize_linear(z.xv, z.sv, with_zp ? &z.zv : nullptr, a).ok()) {
                  // Older versions take no output_dtype, precision or saturate.
                  a.saturate = 1;
                  if (!with_zp || !plan_quantize_linear(z.xv, z.sv, &z.zv, a).ok()) continue;
                }
                const Operands o = make_operands(x.type, s.type, zp.type, gran.scale_shape, false, g);
                const Result<Plan> plan = plan_quantize_linear(o.xv, o.sv, with_zp ? &o.zv : nullptr, a);
                check(plan, describe("QuantizeLinear", x.type, s.type, zp.type, gran,
                                     " opset " + std::to_string(opset) + " precision " + std::to_string(precision) +
                                         (with_zp ? "" : " no zp")));
                if (HasFatalFailure()) return;
              }
            }
          }
        }
      }
    }
  }
  std::string seen;
  for (const std::string& f : families_) seen += "  " + f + "\n";
  RecordProperty("plans", static_cast<int>(accepted_));
  EXPECT_GT(accepted_, 1000u) << seen;
}

TEST_F(KernelCoverage, EveryOnnxDequantizePlan) {
  std::mt19937 g(11222026);
  for (int64_t opset : {10, 13, 19, 21, 23, 24, 25}) {
    for (const ElementTypeInfo& x : all_element_types()) {
      for (const ElementTypeInfo& s : all_element_types()) {
        // kUndefined: no output_dtype attribute (the output takes the scale's type).
        for (E output_dtype : {E::kUndefined, E::kFloat32, E::kFloat16, E::kBfloat16}) {
          for (const Granularity& gran : kOnnxGranularities) {
            for (bool with_zp : {true, false}) {
              const Operands z = zero_operands(x.type, s.type, x.type, gran.scale_shape);
              DequantizeLinearAttributes a;
              a.opset = opset;
              a.axis = gran.axis;
              a.block_size = gran.block_size;
              a.output_dtype = static_cast<int64_t>(output_dtype);
              if (!plan_dequantize_linear(z.xv, z.sv, with_zp ? &z.zv : nullptr, a).ok()) continue;
              const Operands o = make_operands(x.type, s.type, x.type, gran.scale_shape, false, g);
              const Result<Plan> plan = plan_dequantize_linear(o.xv, o.sv, with_zp ? &o.zv : nullptr, a);
              if (!plan.ok()) continue;
              check(plan, describe("DequantizeLinear", x.type, s.type, plan->output_type, gran,
                                   " opset " + std::to_string(opset) + (with_zp ? "" : " no zp")));
              if (HasFatalFailure()) return;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(accepted_, 500u);
}

TEST_F(KernelCoverage, EveryQuarkPlan) {
  std::mt19937 g(13);
  for (const ElementTypeInfo& x : all_element_types()) {
    for (const ElementTypeInfo& s : all_element_types()) {
      for (const ElementTypeInfo& zp : all_element_types()) {
        for (const Granularity& gran : kQuarkGranularities) {
          for (bool with_zp : {true, false}) {
            Operands q = make_operands(x.type, s.type, zp.type, gran.scale_shape, true, g);
            const Result<Plan> quantize = plan_extended_quantize_linear(q.xv, q.sv, with_zp ? &q.zv : nullptr, gran.axis);
            if (quantize.ok()) {
              check(quantize, describe("ExtendedQuantizeLinear", x.type, s.type, quantize->output_type, gran, ""));
              if (HasFatalFailure()) return;
            }
            if (zp.type != x.type) continue;
            Operands d = make_operands(x.type, s.type, x.type, gran.scale_shape, true, g);
            const Result<Plan> dequantize = plan_extended_dequantize_linear(d.xv, d.sv, with_zp ? &d.zv : nullptr, gran.axis);
            if (dequantize.ok()) {
              check(dequantize, describe("ExtendedDequantizeLinear", x.type, s.type, x.type, gran, ""));
              if (HasFatalFailure()) return;
            }
          }
        }
      }
    }
  }
  // float32 -> 8 quantized types, 8 quantized types -> float32, with and without a zero point.
  EXPECT_GE(families_.size(), 16u);
}

TEST_F(KernelCoverage, EveryDirectMlPlan) {
  std::mt19937 g(6);
  for (const ElementTypeInfo& x : all_element_types()) {
    for (const ElementTypeInfo& s : all_element_types()) {
      for (const ElementTypeInfo& zp : all_element_types()) {
        for (const Granularity& gran : kBroadcastGranularities) {
          for (bool with_zp : {true, false}) {
            Operands q = make_operands(x.type, s.type, zp.type, gran.scale_shape, false, g);
            const Result<Plan> quantize = plan_elementwise_quantize_linear(q.xv, q.sv, with_zp ? &q.zv : nullptr,
                                                                           with_zp ? E::kUndefined : zp.type);
            if (quantize.ok()) {
              check(quantize, describe("ElementWiseQuantizeLinear", x.type, s.type, zp.type, gran, ""));
              if (HasFatalFailure()) return;
            }
            if (zp.type != x.type) continue;
            const Result<Plan> dequantize = plan_elementwise_dequantize_linear(q.xv, q.sv, with_zp ? &q.zv : nullptr);
            if (dequantize.ok()) {
              check(dequantize, describe("ElementWiseDequantizeLinear", x.type, s.type, x.type, gran, ""));
              if (HasFatalFailure()) return;
            }
          }
        }
      }
    }
  }
  EXPECT_GE(families_.size(), 10u);
}

}  // namespace
}  // namespace qdq

namespace qdq {
namespace {

// The paths added for Quark's and int32's types over runs of several 1024-element blocks (constant
// operands reused across blocks, per-axis operands stepping), and over outputs of 16 MiB and
// more (written with streaming stores from the block buffer).
TEST_F(KernelCoverage, WidePathsOverLongRunsAndStreamedOutputs) {
  std::mt19937 g(31337);
  const std::vector<int64_t> long_shape = {3, 3001};
  const std::vector<int64_t> streamed_shape = {2, 2'100'001};  // 16.8 MB of int32 or float32
  for (const std::vector<int64_t>* shape : {&long_shape, &streamed_shape}) {
    const bool streamed = shape == &streamed_shape;
    const std::vector<std::vector<int64_t>> scale_shapes = {{}, {(*shape)[1]}};
    for (const std::vector<int64_t>& scale_shape : scale_shapes) {
      if (streamed && !scale_shape.empty()) continue;
      for (E out : {E::kInt32, E::kUint32, E::kFloat16, E::kBfloat16}) {
        if (streamed && (out == E::kUint32 || out == E::kBfloat16)) continue;
        const Operands q = make_operands(E::kFloat32, E::kFloat32, out, scale_shape, true, g, *shape);
        check(plan_extended_quantize_linear(q.xv, q.sv, &q.zv, 1),
              "ExtendedQuantizeLinear -> " + std::string(name(out)) + " long run" + (streamed ? " streamed" : ""));
        if (HasFatalFailure()) return;
        const Operands d = make_operands(out, E::kFloat32, out, scale_shape, true, g, *shape);
        check(plan_extended_dequantize_linear(d.xv, d.sv, &d.zv, 1),
              "ExtendedDequantizeLinear " + std::string(name(out)) + " long run" + (streamed ? " streamed" : ""));
        if (HasFatalFailure()) return;
      }
      // ONNX: an int32 scale (float64 division) and int32 x dequantized.
      for (E out : {E::kInt8, E::kUint16, E::kInt4, E::kFloat8E4M3FN, E::kFloat4E2M1}) {
        const Operands q = make_operands(E::kInt32, E::kInt32, out, scale_shape, false, g, *shape);
        check(plan_quantize_linear(q.xv, q.sv, &q.zv, {}), "QuantizeLinear int32 scale -> " + std::string(name(out)));
        if (HasFatalFailure()) return;
      }
      const Operands d = make_operands(E::kInt32, E::kFloat32, E::kInt32, scale_shape, false, g, *shape);
      check(plan_dequantize_linear(d.xv, d.sv, &d.zv, {}), "DequantizeLinear int32");
      if (HasFatalFailure()) return;
    }
  }
}

// 32-bit integer x dequantized: x - zp is taken in int32 lanes when no lane of a vector can leave
// int32, else in float64. Most x and zero points here are moderate (int32 vectors), with one
// element in 50 at or near the type's ends and zero points at the ends too (float64 vectors,
// mixed with ordinary lanes), over per-tensor, per-axis and (int32) blocked zero points of both
// signs.
TEST_F(KernelCoverage, ThirtyTwoBitDequantizeInIntegerAndFloat64Lanes) {
  std::mt19937 g(20261123);
  const std::vector<int64_t> shape = {7, 301};
  for (E type : {E::kInt32, E::kUint32}) {
    const bool is_signed = type == E::kInt32;
    const uint32_t ends[] = {0x8000'0000u, 0x7FFF'FFFFu, 0xFFFF'FFFFu, 0x8000'0001u, 0x7FFF'FF00u, 0u};
    auto moderate = [&] { return static_cast<uint32_t>(static_cast<int32_t>(g() % 2'000'001) - 1'000'000); };
    auto x_word = [&](uint64_t) -> uint32_t {
      if (g() % 50 == 0) return ends[g() % 6];
      const uint32_t v = moderate();
      return is_signed ? v : v & 0x7FFF'FFFFu;
    };
    // Zero points: small, moderate (mostly integer lanes) or at the ends (mostly float64 lanes).
    for (int zp_kind = 0; zp_kind < 3; ++zp_kind) {
      auto zp_word = [&](uint64_t) -> uint32_t {
        if (zp_kind == 2) return ends[g() % 6];
        const uint32_t v = zp_kind == 0 ? static_cast<uint32_t>(static_cast<int32_t>(g() % 201) - 100) : moderate();
        return is_signed ? v : v & 0x7FFF'FFFFu;
      };
      // x, float32 scales and zero points of scale_shape (which must outlive the views).
      auto operands_for = [&](const std::vector<int64_t>& scale_shape) {
        Operands o;
        o.x = storage(type, count_of(shape), x_word);
        o.scale = storage(E::kFloat32, count_of(scale_shape), [&](uint64_t) { return scale_code(E::kFloat32, g); });
        o.zero_point = storage(type, count_of(scale_shape), zp_word);
        o.xv = {type, shape, o.x.data()};
        o.sv = {E::kFloat32, scale_shape, o.scale.data()};
        o.zv = {type, scale_shape, o.zero_point.data()};
        return o;
      };
      for (const std::vector<int64_t>& scale_shape : std::vector<std::vector<int64_t>>{{}, {shape[1]}}) {
        const Operands o = operands_for(scale_shape);
        const std::string what = std::string(name(type)) + " zero points " + std::to_string(zp_kind) +
                                 (scale_shape.empty() ? " per-tensor" : " per-axis");
        check(plan_extended_dequantize_linear(o.xv, o.sv, &o.zv, 1), "ExtendedDequantizeLinear " + what);
        if (HasFatalFailure()) return;
        check(plan_extended_dequantize_linear(o.xv, o.sv, nullptr, 1), "ExtendedDequantizeLinear no zp " + what);
        if (HasFatalFailure()) return;
        if (is_signed) {
          check(plan_dequantize_linear(o.xv, o.sv, &o.zv, {}), "DequantizeLinear " + what);
          if (HasFatalFailure()) return;
        }
      }
      if (is_signed) {  // blocks of 32 along the rows: one scale and zero point a block, 10 a row
        const std::vector<int64_t> block_shape = {shape[0], (shape[1] + 31) / 32};
        const Operands o = operands_for(block_shape);
        DequantizeLinearAttributes a;
        a.axis = 1;
        a.block_size = 32;
        check(plan_dequantize_linear(o.xv, o.sv, &o.zv, a),
              "DequantizeLinear blocked-32 zero points " + std::to_string(zp_kind));
        if (HasFatalFailure()) return;
      }
    }
  }
}

}  // namespace
}  // namespace qdq
