// `qdq demo`: quantizes and dequantizes an embedded default tensor to every quantized type and
// granularity and prints the round-trip error of each cell.
#include "demo.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "qdq/qdq.hpp"

namespace qdq::tools {
namespace {

// The embedded default: a 64 x 256 float32 "weight" tensor whose rows have different spreads
// (so per-axis and blocked scales matter), a few outliers and exact zeros. Fixed seed, so every
// run prints the same table.
constexpr int64_t kRows = 64;
constexpr int64_t kCols = 256;
constexpr int64_t kBlock = 32;
constexpr uint32_t kSeed = 20261121;

std::vector<float> default_tensor() {
  std::mt19937 generator(kSeed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(static_cast<size_t>(kRows * kCols));
  for (int64_t r = 0; r < kRows; ++r) {
    const float row_spread = std::ldexp(1.0f, static_cast<int>(r % 8) - 4);  // 1/16 .. 8
    for (int64_t c = 0; c < kCols; ++c) {
      float v = normal(generator) * row_spread;
      if (c % 97 == 0) v *= 6.0f;  // outliers
      if (c % 61 == 0) v = 0.0f;   // exact zeros
      values[static_cast<size_t>(r * kCols + c)] = v;
    }
  }
  return values;
}

enum class Grain { kPerTensor, kPerAxis, kBlocked };
const char* grain_name(Grain g) {
  return g == Grain::kPerTensor ? "per-tensor" : g == Grain::kPerAxis ? "per-axis(0)" : "blocked(1,B=32)";
}

// One scale group: the x indices it covers are described by the caller; here only min/max.
struct Range {
  float lo = 0.0f, hi = 0.0f;
};

// Scale and zero point from a group's range: asymmetric min/max for unsigned integers, symmetric
// for signed integers and floats. Scales are float32.
void calibrate(const ElementTypeInfo& type, Range range, float* scale, double* zero_point) {
  const float lo = std::min(range.lo, 0.0f), hi = std::max(range.hi, 0.0f);
  if (type.is_integer() && !type.is_signed) {
    const double span = static_cast<double>(hi) - lo;
    *scale = span > 0 ? static_cast<float>(span / (type.max - type.lowest)) : 1.0f;
    *zero_point = std::clamp(std::nearbyint(type.lowest - lo / static_cast<double>(*scale)), type.lowest, type.max);
    return;
  }
  const double magnitude = std::max(std::fabs(lo), std::fabs(hi));
  *scale = magnitude > 0 ? static_cast<float>(magnitude / type.max) : 1.0f;
  *zero_point = 0.0;
}

struct Cell {
  double max_abs_error = 0.0;
  double sqnr_db = 0.0;
  std::string error;
};

// Encodes one zero-point value of `type` into its storage (only integers carry non-zero ones).
void store_zero_point(std::vector<unsigned char>& bytes, const ElementTypeInfo& type, size_t index, double value) {
  const int64_t integer = static_cast<int64_t>(value);
  const uint32_t mask = type.bits >= 32 ? 0xFFFFFFFFu : ((1u << type.bits) - 1u);
  const uint32_t code = static_cast<uint32_t>(integer) & mask;
  if (type.is_packed()) {
    const size_t per_byte = static_cast<size_t>(type.elements_per_byte());
    const unsigned shift = static_cast<unsigned>((index % per_byte) * type.bits);
    bytes[index / per_byte] = static_cast<unsigned char>(bytes[index / per_byte] | (code << shift));
  } else if (type.is_integer()) {
    for (int b = 0; b < type.bits / 8; ++b) bytes[index * (type.bits / 8) + b] = static_cast<unsigned char>(code >> (8 * b));
  }
}

enum class Front { kOnnx, kQuark };

Cell run_cell(const std::vector<float>& x, ElementType type, Grain grain, Front front) {
  const ElementTypeInfo& t = info(type);
  // Scale groups.
  std::vector<int64_t> scale_shape;
  size_t groups = 1;
  auto group_of = [&](int64_t r, int64_t c) -> size_t {
    if (grain == Grain::kPerTensor) return 0;
    if (grain == Grain::kPerAxis) return static_cast<size_t>(r);
    return static_cast<size_t>(r * (kCols / kBlock) + c / kBlock);
  };
  if (grain == Grain::kPerAxis) {
    scale_shape = {kRows};
    groups = kRows;
  } else if (grain == Grain::kBlocked) {
    scale_shape = {kRows, kCols / kBlock};
    groups = static_cast<size_t>(kRows * (kCols / kBlock));
  }
  std::vector<Range> ranges(groups, Range{INFINITY, -INFINITY});
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t c = 0; c < kCols; ++c) {
      Range& g = ranges[group_of(r, c)];
      const float v = x[static_cast<size_t>(r * kCols + c)];
      g.lo = std::min(g.lo, v);
      g.hi = std::max(g.hi, v);
    }
  }
  std::vector<float> scales(groups);
  std::vector<unsigned char> zero_points(storage_bytes(type, groups) + 8, 0);
  for (size_t g = 0; g < groups; ++g) {
    double zp = 0;
    calibrate(t, ranges[g], &scales[g], &zp);
    store_zero_point(zero_points, t, g, zp);
  }

  const std::vector<int64_t> shape = {kRows, kCols};
  const TensorView x_view{ElementType::kFloat32, shape, x.data()};
  const TensorView scale_view{ElementType::kFloat32, scale_shape, scales.data()};
  const TensorView zp_view{type, scale_shape, zero_points.data()};
  std::vector<unsigned char> quantized(storage_bytes(type, x.size()));
  std::vector<float> restored(x.size());
  const MutableTensorView q_out{type, shape, quantized.data()};
  const TensorView q_in{type, shape, quantized.data()};
  const MutableTensorView dq_out{ElementType::kFloat32, shape, restored.data()};

  Cell cell;
  Status status;
  if (front == Front::kOnnx) {
    QuantizeLinearAttributes q;
    q.axis = grain == Grain::kBlocked ? 1 : 0;
    q.block_size = grain == Grain::kBlocked ? kBlock : 0;
    DequantizeLinearAttributes dq;
    dq.axis = q.axis;
    dq.block_size = q.block_size;
    status = quantize_linear(x_view, scale_view, &zp_view, q, q_out);
    if (status.ok()) status = dequantize_linear(q_in, scale_view, &zp_view, dq, dq_out);
  } else {
    Result<Plan> q = plan_extended_quantize_linear(x_view, scale_view, &zp_view, 0);
    status = q.ok() ? execute(q.value(), q_out) : q.status();
    if (status.ok()) {
      Result<Plan> dq = plan_extended_dequantize_linear(q_in, scale_view, &zp_view, 0);
      status = dq.ok() ? execute(dq.value(), dq_out) : dq.status();
    }
  }
  if (!status.ok()) {
    cell.error = status.message();
    return cell;
  }
  double signal = 0.0, noise = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double error = static_cast<double>(restored[i]) - x[i];
    cell.max_abs_error = std::max(cell.max_abs_error, std::fabs(error));
    signal += static_cast<double>(x[i]) * x[i];
    noise += error * error;
  }
  cell.sqnr_db = noise > 0 ? 10.0 * std::log10(signal / noise) : INFINITY;
  return cell;
}

}  // namespace

int run_demo() {
  const std::vector<float> x = default_tensor();
  std::printf("qdq demo: float32 tensor [%lld, %lld] (embedded default, seed %u) -> quantize -> dequantize\n",
              static_cast<long long>(kRows), static_cast<long long>(kCols), kSeed);
  std::printf("scales: float32, min/max (unsigned: asymmetric with zero point; signed and float: symmetric)\n\n");
  std::printf("%-32s %-16s %14s %10s\n", "type (operator)", "granularity", "max |error|", "SQNR dB");
  std::printf("%-32s %-16s %14s %10s\n", "--------------------------------", "----------------", "--------------",
              "----------");
  const ElementType onnx_types[] = {ElementType::kUint16,        ElementType::kInt16,          ElementType::kUint8,
                                    ElementType::kInt8,          ElementType::kUint4,          ElementType::kInt4,
                                    ElementType::kUint2,         ElementType::kInt2,           ElementType::kFloat8E4M3FN,
                                    ElementType::kFloat8E4M3FNUZ, ElementType::kFloat8E5M2,    ElementType::kFloat8E5M2FNUZ,
                                    ElementType::kFloat4E2M1};
  const ElementType quark_types[] = {ElementType::kInt32, ElementType::kUint32, ElementType::kFloat16,
                                     ElementType::kBfloat16};
  int failures = 0;
  auto print = [&](ElementType type, const char* front, Grain grain, const Cell& cell) {
    const std::string label = std::string(name(type)) + " (" + front + ")";
    if (!cell.error.empty()) {
      std::printf("%-32s %-16s error: %s\n", label.c_str(), grain_name(grain), cell.error.c_str());
      ++failures;
      return;
    }
    std::printf("%-32s %-16s %14.6g %10.2f\n", label.c_str(), grain_name(grain), cell.max_abs_error, cell.sqnr_db);
  };
  for (ElementType type : onnx_types) {
    for (Grain grain : {Grain::kPerTensor, Grain::kPerAxis, Grain::kBlocked}) {
      print(type, "ONNX Q/DQ-25", grain, run_cell(x, type, grain, Front::kOnnx));
    }
  }
  for (ElementType type : quark_types) {
    for (Grain grain : {Grain::kPerTensor, Grain::kPerAxis}) {
      print(type, "Quark Extended", grain, run_cell(x, type, grain, Front::kQuark));
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace qdq::tools
