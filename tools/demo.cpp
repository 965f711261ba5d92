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
#include "qdq/toolkit.hpp"

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

struct Cell {
  double max_abs_error = 0.0;
  double sqnr_db = 0.0;
  std::string error;
};

enum class Front { kOnnx, kQuark };

Cell run_cell(const std::vector<float>& x, ElementType type, Grain grain, Front front) {
  const ElementTypeInfo& t = info(type);
  // Scales from qdq's toolkit: asymmetric min-max for unsigned integers, symmetric otherwise.
  const std::vector<int64_t> shape = {kRows, kCols};
  const TensorView x_view{ElementType::kFloat32, shape, x.data()};
  QparamsOptions options;
  options.quantized_type = type;
  options.method = t.is_integer() && !t.is_signed ? ScaleMethod::kMinMax : ScaleMethod::kSymmetric;
  options.granularity = grain == Grain::kPerTensor ? Granularity::kPerTensor
                        : grain == Grain::kPerAxis ? Granularity::kPerAxis
                                                   : Granularity::kBlocked;
  options.axis = grain == Grain::kBlocked ? 1 : 0;
  options.block_size = grain == Grain::kBlocked ? kBlock : 0;
  const std::vector<int64_t> scale_shape = qparams_shape(shape, options).value();
  size_t groups = 1;
  for (int64_t d : scale_shape) groups *= static_cast<size_t>(d);
  std::vector<float> scales(groups);
  std::vector<unsigned char> zero_points(storage_bytes(type, groups) + 8, 0);
  MutableTensorView zp_out{type, scale_shape, zero_points.data()};
  Cell cell;
  if (Status s = compute_qparams(x_view, options, {ElementType::kFloat32, scale_shape, scales.data()},
                                 t.is_integer() ? &zp_out : nullptr);
      !s.ok()) {
    cell.error = s.message();
    return cell;
  }
  const TensorView scale_view{ElementType::kFloat32, scale_shape, scales.data()};
  const TensorView zp_view{type, scale_shape, zero_points.data()};
  std::vector<unsigned char> quantized(storage_bytes(type, x.size()));
  std::vector<float> restored(x.size());
  const MutableTensorView q_out{type, shape, quantized.data()};
  const TensorView q_in{type, shape, quantized.data()};
  const MutableTensorView dq_out{ElementType::kFloat32, shape, restored.data()};

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
  std::printf("scales: qdq::compute_qparams, float32 (unsigned: minmax with zero point; signed and float: symmetric)\n\n");
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
