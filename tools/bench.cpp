// `qdq bench`: the C++ kernels' speed against memcpy of the same bytes.
//
// The measure follows bench/compare.py so the two tables can be read side by side: a cell moves
// x + y + scale bytes; the memcpy baseline is qdq::parallel_copy of half that many bytes (a copy
// reads and writes each byte, so it moves the same total), split over the same thread pool. Both
// report moved bytes / best time. bench/compare.py adds ONNX Runtime to the comparison.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "commands.h"
#include "qdq/qdq.hpp"

namespace qdq::tools {
namespace {

constexpr int64_t kColumns = 1024;
constexpr int64_t kBlock = 32;

enum class Grain { kPerTensor, kPerAxis, kBlocked };

// Best wall time of `fn` over at least 3 runs and 0.1 s (after one warm-up run, which takes the
// page faults and wakes the pool), at most 100 runs. The best, not the mean, because the machine
// is shared and interference only ever adds time.
template <class Fn>
double best_seconds(Fn&& fn) {
  using Clock = std::chrono::steady_clock;
  fn();
  double best = 1e30;
  const Clock::time_point start = Clock::now();
  for (int reps = 0; reps < 100; ++reps) {
    const Clock::time_point t0 = Clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    if (reps >= 2 && std::chrono::duration<double>(Clock::now() - start).count() > 0.1) break;
  }
  return best;
}

struct Cell {
  double qdq_gbs = 0, memcpy_gbs = 0;
  std::string error;
};

Cell run_cell(bool quantize, ElementType type, Grain grain, int64_t rows, int64_t cols) {
  std::mt19937 generator(7);
  const std::vector<int64_t> shape = {rows, cols};
  const uint64_t count = static_cast<uint64_t>(rows * cols);

  // Per-axis on the last axis and blocked along the last axis, as in bench/compare.py.
  std::vector<int64_t> scale_shape;
  if (grain == Grain::kPerAxis) scale_shape = {cols};
  if (grain == Grain::kBlocked) scale_shape = {rows, (cols + kBlock - 1) / kBlock};
  uint64_t scale_count = 1;
  for (int64_t d : scale_shape) scale_count *= static_cast<uint64_t>(d);
  std::uniform_real_distribution<float> scale_values(0.02f, 0.07f);
  std::vector<float> scales(scale_count);
  for (float& s : scales) s = scale_values(generator);
  const TensorView scale{ElementType::kFloat32, scale_shape, scales.data()};
  const int64_t axis = 1, block = grain == Grain::kBlocked ? kBlock : 0;

  std::vector<float> real(count);
  std::vector<unsigned char> coded(std::max<uint64_t>(storage_bytes(type, count), 1));
  if (quantize) {
    std::normal_distribution<float> normal(0.0f, 3.0f);
    for (float& v : real) v = normal(generator);
  } else {
    // Random codes; for the float types only positive finite ones (0x77 keeps the sign bit and
    // the float8 exponent's top bit clear, so no NaN/inf), as compare.py does.
    std::uniform_int_distribution<int> byte(0, 255);
    const bool is_float = info(type).is_float();
    for (unsigned char& b : coded) b = static_cast<unsigned char>(byte(generator) & (is_float ? 0x77 : 0xFF));
  }

  Result<Plan> plan = [&]() -> Result<Plan> {
    if (quantize) {
      QuantizeLinearAttributes a;
      a.axis = axis;
      a.block_size = block;
      if (type != ElementType::kUint8) a.output_dtype = static_cast<int64_t>(type);
      return plan_quantize_linear({ElementType::kFloat32, shape, real.data()}, scale, nullptr, a);
    }
    DequantizeLinearAttributes a;
    a.axis = axis;
    a.block_size = block;
    return plan_dequantize_linear({type, shape, coded.data()}, scale, nullptr, a);
  }();
  Cell cell;
  if (!plan.ok()) {
    cell.error = plan.status().message();
    return cell;
  }
  const MutableTensorView y = quantize ? MutableTensorView{type, shape, coded.data()}
                                       : MutableTensorView{ElementType::kFloat32, shape, real.data()};
  Status status;
  const double qdq_seconds = best_seconds([&] {
    if (status.ok()) status = execute(plan.value(), y);
  });
  if (!status.ok()) {
    cell.error = status.message();
    return cell;
  }

  const uint64_t moved = count * sizeof(float) + storage_bytes(type, count) + scale_count * sizeof(float);
  std::vector<unsigned char> source(moved / 2, 1), destination(moved / 2);
  const double copy_seconds = best_seconds([&] { parallel_copy(destination.data(), source.data(), moved / 2); });
  cell.qdq_gbs = static_cast<double>(moved) / qdq_seconds / 1e9;
  cell.memcpy_gbs = static_cast<double>(moved / 2 * 2) / copy_seconds / 1e9;
  return cell;
}

}  // namespace

Status run_bench(const BenchOptions& options) {
  if (options.threads > 0) set_num_threads(options.threads);
  // A [rows, 1024] matrix (fewer columns for tiny sizes), so per-axis and blocked-32 scales both
  // run along a realistic row.
  const int64_t cols = std::min<int64_t>(options.elements, kColumns);
  const int64_t rows = options.elements / cols;
  std::printf("qdq bench: float32 [%lld, %lld] (%lld elements), %d threads, SIMD target %s\n",
              static_cast<long long>(rows), static_cast<long long>(cols), static_cast<long long>(rows * cols),
              num_threads(), active_simd_target().c_str());
  std::printf("GB/s = (x + y + scale bytes) / best time; memcpy copies half that many bytes (read + write)\n\n");
  std::printf("%-3s %-14s %-16s %10s %12s %12s\n", "op", "type", "granularity", "qdq GB/s", "memcpy GB/s",
              "qdq/memcpy");

  const ElementType types[] = {ElementType::kUint8, ElementType::kInt8, ElementType::kInt4, ElementType::kFloat8E4M3FN,
                               ElementType::kFloat4E2M1};
  const std::pair<Grain, const char*> grains[] = {
      {Grain::kPerTensor, "per-tensor"}, {Grain::kPerAxis, "per-axis"}, {Grain::kBlocked, "blocked-32"}};
  int failures = 0;
  for (bool quantize : {true, false}) {
    for (ElementType type : types) {
      for (const auto& [grain, grain_name] : grains) {
        const Cell cell = run_cell(quantize, type, grain, rows, cols);
        const std::string type_name(name(type));
        if (!cell.error.empty()) {
          std::printf("%-3s %-14s %-16s error: %s\n", quantize ? "Q" : "DQ", type_name.c_str(), grain_name,
                      cell.error.c_str());
          ++failures;
          continue;
        }
        std::printf("%-3s %-14s %-16s %10.2f %12.2f %12.2f\n", quantize ? "Q" : "DQ", type_name.c_str(), grain_name,
                    cell.qdq_gbs, cell.memcpy_gbs, cell.qdq_gbs / cell.memcpy_gbs);
        std::fflush(stdout);
      }
    }
  }
  if (failures > 0) return Status::internal(std::to_string(failures) + " benchmark cells failed (see the table)");
  return Status();
}

}  // namespace qdq::tools
