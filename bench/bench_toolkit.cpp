// Google Benchmark for the toolkit: dynamic quantization (scales from the data, then codes) against
// compute_qparams alone and against plain QuantizeLinear with the same scales given, and
// DynamicQuantizeLinear, in one process, so the ratios come from one run. 16M float32 elements
// (and 64K, in cache), shaped [rows, 4096].
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "page_vector.h"
#include "qdq/qdq.hpp"
#include "qdq/toolkit.hpp"

namespace {

using qdq::ElementType;
using qdq::Granularity;
using qdq::ScaleMethod;

struct Cell {
  const char* name;
  ElementType type;
  ScaleMethod method;
  Granularity granularity;
  int64_t axis, block;
  ElementType scale_type = ElementType::kFloat32;
  // Structured pruning: every 64th row and every 64th column of x all zeros (all-zero groups,
  // which compute_qparams gives scale 1, in every batch or stretch of columns).
  bool pruned = false;
};

const Cell kCells[] = {
    {"int4/minmax/blocked_last32", ElementType::kInt4, ScaleMethod::kMinMax, Granularity::kBlocked, 1, 32},
    {"uint4/minmax/blocked_last128", ElementType::kUint4, ScaleMethod::kMinMax, Granularity::kBlocked, 1, 128},
    {"int8/symmetric/blocked_last128", ElementType::kInt8, ScaleMethod::kSymmetric, Granularity::kBlocked, 1, 128},
    {"int8/symmetric/per_axis_rows", ElementType::kInt8, ScaleMethod::kSymmetric, Granularity::kPerAxis, 0, 0},
    {"uint8/minmax/per_tensor", ElementType::kUint8, ScaleMethod::kMinMax, Granularity::kPerTensor, 1, 0},
    {"int8/minmax/blocked_first32", ElementType::kInt8, ScaleMethod::kMinMax, Granularity::kBlocked, 0, 32},
    {"int4/minmax/blocked_first32", ElementType::kInt4, ScaleMethod::kMinMax, Granularity::kBlocked, 0, 32},
    {"float8_e4m3fn/mx_floor/blocked_first32", ElementType::kFloat8E4M3FN, ScaleMethod::kMxFloor, Granularity::kBlocked, 0,
     32, ElementType::kFloat8E8M0},
    {"float8_e4m3fn/mx_floor/blocked_last32", ElementType::kFloat8E4M3FN, ScaleMethod::kMxFloor, Granularity::kBlocked, 1,
     32, ElementType::kFloat8E8M0},
    {"float4_e2m1fn/mx_rceil/blocked_last32", ElementType::kFloat4E2M1, ScaleMethod::kMxRceil, Granularity::kBlocked, 1,
     32, ElementType::kFloat8E8M0},
    {"int8/minmax/blocked_first32/pruned", ElementType::kInt8, ScaleMethod::kMinMax, Granularity::kBlocked, 0, 32,
     ElementType::kFloat32, true},
    {"int4/minmax/blocked_last32/pruned", ElementType::kInt4, ScaleMethod::kMinMax, Granularity::kBlocked, 1, 32,
     ElementType::kFloat32, true},
};

enum class Mode { kDynamic, kQparams, kPlainQuantize };

struct Buffers {
  std::vector<int64_t> shape, scale_shape;
  qdq_bench::PageVector<float> x;
  qdq_bench::PageVector<uint8_t> y, scale, zero_point;
  qdq::QparamsOptions options;
};

Buffers make(const Cell& c, int64_t elements) {
  Buffers b;
  b.shape = {elements / 4096, 4096};
  b.x.resize(static_cast<size_t>(elements));
  std::mt19937 g(1);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (float& v : b.x) v = normal(g);
  if (c.pruned) {
    for (size_t i = 0; i < b.x.size(); ++i) {
      if (i % 64 == 0 || i / 4096 % 64 == 0) b.x[i] = 0.0f;  // column i % 4096, row i / 4096
    }
  }
  b.options.quantized_type = c.type;
  b.options.scale_type = c.scale_type;
  b.options.method = c.method;
  b.options.granularity = c.granularity;
  b.options.axis = c.axis;
  b.options.block_size = c.block;
  b.scale_shape = qdq::qparams_shape(b.shape, b.options).value();
  uint64_t groups = 1;
  for (int64_t d : b.scale_shape) groups *= static_cast<uint64_t>(d);
  b.y.resize(qdq::storage_bytes(c.type, static_cast<uint64_t>(elements)));
  b.scale.resize(groups * 4);
  b.zero_point.resize(groups * 4);
  return b;
}

void BM_Toolkit(benchmark::State& state, Cell c, Mode mode) {
  Buffers b = make(c, state.range(0));
  const qdq::TensorView x{ElementType::kFloat32, b.shape, b.x.data()};
  const qdq::MutableTensorView y{c.type, b.shape, b.y.data()}, scale{c.scale_type, b.scale_shape, b.scale.data()};
  qdq::MutableTensorView zp{c.type, b.scale_shape, b.zero_point.data()};
  const bool has_zp = qdq::info(c.type).is_integer();
  if (!qdq::compute_qparams(x, b.options, scale, has_zp ? &zp : nullptr).ok()) {
    state.SkipWithError("compute_qparams failed");
    return;
  }
  qdq::QuantizeLinearAttributes a;
  a.axis = c.granularity == Granularity::kPerTensor ? 1 : c.axis;
  a.block_size = c.granularity == Granularity::kBlocked ? c.block : 0;
  if (!has_zp) a.output_dtype = static_cast<int64_t>(c.type);
  const qdq::TensorView scale_in{c.scale_type, b.scale_shape, b.scale.data()}, zp_in{c.type, b.scale_shape, b.zero_point.data()};
  const auto plan = qdq::plan_quantize_linear(x, scale_in, has_zp ? &zp_in : nullptr, a);
  if (!plan.ok()) {
    state.SkipWithError(plan.status().message().c_str());
    return;
  }
  for (auto _ : state) {
    qdq::Status s;
    switch (mode) {
      case Mode::kDynamic: s = qdq::dynamic_quantize(x, b.options, y, scale, has_zp ? &zp : nullptr); break;
      case Mode::kQparams: s = qdq::compute_qparams(x, b.options, scale, has_zp ? &zp : nullptr); break;
      case Mode::kPlainQuantize: s = qdq::execute(plan.value(), y); break;
    }
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * (b.x.size() * 4 + b.y.size())));
}

void BM_DynamicQuantizeLinear(benchmark::State& state) {
  const int64_t n = state.range(0);
  const std::vector<int64_t> shape = {n};
  qdq_bench::PageVector<float> x(static_cast<size_t>(n));
  std::mt19937 g(2);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (float& v : x) v = normal(g);
  qdq_bench::PageVector<uint8_t> y(static_cast<size_t>(n));
  float scale;
  uint8_t zp;
  for (auto _ : state) {
    benchmark::DoNotOptimize(qdq::dynamic_quantize_linear({ElementType::kFloat32, shape, x.data()},
                                                          {ElementType::kUint8, shape, y.data()}, &scale, &zp));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n * 5));
}

int register_all() {
  for (const Cell& c : kCells) {
    for (const auto& [mode, label] : {std::pair{Mode::kDynamic, "dynamic"}, std::pair{Mode::kQparams, "qparams"},
                                      std::pair{Mode::kPlainQuantize, "plain_q"}}) {
      benchmark::RegisterBenchmark((std::string(label) + "/" + c.name).c_str(), BM_Toolkit, c, mode)
          ->Arg(1 << 16)
          ->Arg(1 << 24)
          ->UseRealTime();
    }
  }
  benchmark::RegisterBenchmark("DynamicQuantizeLinear", BM_DynamicQuantizeLinear)->Arg(1 << 16)->Arg(1 << 24)->UseRealTime();
  return 0;
}
const int registered = register_all();

}  // namespace

BENCHMARK_MAIN();
