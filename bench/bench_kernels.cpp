// Google Benchmark for the C++ kernels: QuantizeLinear / DequantizeLinear cells against memcpy of
// the same bytes, in one process. The cross-runtime table (ONNX Runtime) is bench/compare.py.
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "qdq/directml.hpp"
#include "qdq/fake_quant.hpp"
#include "page_vector.h"
#include "qdq/qdq.hpp"

namespace {

using qdq::ElementType;

enum class Grain { kPerTensor, kPerAxis, kBlockedFirst, kBlockedLast };
constexpr int64_t kBlock = 32;

struct Cell {
  std::vector<int64_t> shape;
  std::vector<int64_t> scale_shape;
  int64_t axis = 1;
  int64_t block = 0;
};

Cell make_cell(int64_t elements, Grain grain) {
  const int64_t cols = 1024;
  const int64_t rows = elements / cols;
  Cell c;
  c.shape = {rows, cols};
  switch (grain) {
    case Grain::kPerTensor: break;
    case Grain::kPerAxis: c.scale_shape = {cols}; c.axis = 1; break;
    case Grain::kBlockedFirst: c.scale_shape = {(rows + kBlock - 1) / kBlock, cols}; c.axis = 0; c.block = kBlock; break;
    case Grain::kBlockedLast: c.scale_shape = {rows, cols / kBlock}; c.axis = 1; c.block = kBlock; break;
  }
  return c;
}

uint64_t count(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

// Times execute() of a plan into y; bytes_per_run is what one execution moves.
void time_plan(benchmark::State& state, const qdq::Result<qdq::Plan>& plan, const qdq::MutableTensorView& y,
               uint64_t bytes_per_run) {
  if (!plan.ok()) {
    state.SkipWithError(plan.status().message().c_str());
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(qdq::execute(plan.value(), y));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes_per_run));
}

void BM_Quantize(benchmark::State& state, ElementType out, Grain grain) {
  const Cell c = make_cell(state.range(0), grain);
  const uint64_t n = count(c.shape);
  qdq_bench::PageVector<float> x(n), scale(count(c.scale_shape));
  std::mt19937 g(1);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (float& v : x) v = normal(g);
  for (float& s : scale) s = 0.05f + static_cast<float>(g() % 100) / 1000.0f;
  qdq_bench::PageVector<uint8_t> y(qdq::storage_bytes(out, n));
  qdq::QuantizeLinearAttributes a;
  a.axis = c.axis;
  a.block_size = c.block;
  a.output_dtype = static_cast<int64_t>(out);
  const qdq::TensorView xv{ElementType::kFloat32, c.shape, x.data()};
  const qdq::TensorView sv{ElementType::kFloat32, c.scale_shape, scale.data()};
  const auto plan = qdq::plan_quantize_linear(xv, sv, nullptr, a);
  time_plan(state, plan, {out, c.shape, y.data()}, n * 4 + y.size());
}

void BM_Dequantize(benchmark::State& state, ElementType in, Grain grain) {
  const Cell c = make_cell(state.range(0), grain);
  const uint64_t n = count(c.shape);
  qdq_bench::PageVector<uint8_t> x(qdq::storage_bytes(in, n));
  std::mt19937 g(2);
  for (uint8_t& b : x) b = static_cast<uint8_t>(g() % 0x70);  // finite float8 codes too
  qdq_bench::PageVector<float> scale(count(c.scale_shape), 0.125f), y(n);
  qdq::DequantizeLinearAttributes a;
  a.axis = c.axis;
  a.block_size = c.block;
  const qdq::TensorView xv{in, c.shape, x.data()};
  const qdq::TensorView sv{ElementType::kFloat32, c.scale_shape, scale.data()};
  const auto plan = qdq::plan_dequantize_linear(xv, sv, nullptr, a);
  time_plan(state, plan, {ElementType::kFloat32, c.shape, y.data()}, x.size() + n * 4);
}

// DirectML descriptions of the same cells: [rows, 1024] with the scale given at x's Sizes by
// 0-strides (per-tensor {0, 0}, per-axis {0, 1}, blocked-last as
// [rows, 32, 32] with {32, 1, 0}), or x in rows padded to 1040 elements (the gathered path, in
// place). They should run at the ONNX cells' speed.
enum class DmlGrain { kPerTensor, kPerAxis, kBlockedLast, kPaddedRows };

struct DmlCell {
  std::vector<int64_t> sizes, x_strides, scale_strides;
  uint64_t x_elements = 0, scale_elements = 0;
};

DmlCell make_dml_cell(int64_t elements, DmlGrain grain) {
  const int64_t cols = 1024, rows = elements / cols;
  DmlCell c;
  c.sizes = {rows, cols};
  c.x_elements = static_cast<uint64_t>(rows * cols);
  switch (grain) {
    case DmlGrain::kPerTensor: c.scale_strides = {0, 0}; c.scale_elements = 1; break;
    case DmlGrain::kPerAxis: c.scale_strides = {0, 1}; c.scale_elements = cols; break;
    case DmlGrain::kBlockedLast:
      c.sizes = {rows, cols / kBlock, kBlock};
      c.scale_strides = {cols / kBlock, 1, 0};
      c.scale_elements = static_cast<uint64_t>(rows * cols / kBlock);
      break;
    case DmlGrain::kPaddedRows:
      c.x_strides = {cols + 16, 1};
      c.x_elements = static_cast<uint64_t>(rows * (cols + 16));
      c.scale_strides = {0, 0};
      c.scale_elements = 1;
      break;
  }
  return c;
}

void BM_DmlQuantize(benchmark::State& state, DmlGrain grain) {
  const DmlCell c = make_dml_cell(state.range(0), grain);
  const uint64_t n = count(c.sizes);
  qdq_bench::PageVector<float> x(c.x_elements), scale(c.scale_elements);
  std::mt19937 g(1);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (float& v : x) v = normal(g);
  for (float& s : scale) s = 0.05f + static_cast<float>(g() % 100) / 1000.0f;
  qdq_bench::PageVector<uint8_t> y(n);
  const qdq::DmlTensorDesc xd{ElementType::kFloat32, c.sizes, c.x_strides, 0, x.data()};
  const qdq::DmlTensorDesc sd{ElementType::kFloat32, c.sizes, c.scale_strides, 0, scale.data()};
  const qdq::DmlTensorDesc yd{ElementType::kUint8, c.sizes, {}, 0, nullptr};
  const auto plan = qdq::plan_directml_quantize_linear(xd, sd, nullptr, yd);  // as the ONNX cells: no zero point
  time_plan(state, plan, {ElementType::kUint8, c.sizes, y.data()}, n * 4 + y.size());
}

void BM_DmlDequantize(benchmark::State& state, DmlGrain grain) {
  const DmlCell c = make_dml_cell(state.range(0), grain);
  const uint64_t n = count(c.sizes);
  qdq_bench::PageVector<uint8_t> x(c.x_elements);
  std::mt19937 g(2);
  for (uint8_t& b : x) b = static_cast<uint8_t>(g());
  qdq_bench::PageVector<float> scale(c.scale_elements, 0.125f), y(n);
  const qdq::DmlTensorDesc xd{ElementType::kUint8, c.sizes, c.x_strides, 0, x.data()};
  const qdq::DmlTensorDesc sd{ElementType::kFloat32, c.sizes, c.scale_strides, 0, scale.data()};
  const qdq::DmlTensorDesc yd{ElementType::kFloat32, c.sizes, {}, 0, nullptr};
  const auto plan = qdq::plan_directml_dequantize_linear(xd, sd, nullptr, yd);
  time_plan(state, plan, {ElementType::kFloat32, c.sizes, y.data()}, n + n * 4);
}

// Fake quantization of float32 x through `codes` and back to float32: the fused call (with or
// without the straight-through mask) against QuantizeLinear then DequantizeLinear through a whole
// code tensor, on the same data.
enum class FakeQuantForm { kFused, kFusedWithMask, kComposed };

void BM_FakeQuant(benchmark::State& state, ElementType codes, Grain grain, FakeQuantForm form) {
  const Cell c = make_cell(state.range(0), grain);
  const uint64_t n = count(c.shape);
  qdq_bench::PageVector<float> x(n), scale(count(c.scale_shape)), y(n);
  std::mt19937 g(3);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (float& v : x) v = normal(g);
  for (float& s : scale) s = 0.05f + static_cast<float>(g() % 100) / 1000.0f;
  const qdq::TensorView xv{ElementType::kFloat32, c.shape, x.data()};
  const qdq::TensorView sv{ElementType::kFloat32, c.scale_shape, scale.data()};
  qdq::QuantizeDequantizeAttributes a;
  a.axis = c.axis;
  a.block_size = c.block;
  a.quantized_dtype = static_cast<int64_t>(codes);
  const auto fused = qdq::plan_quantize_dequantize_linear(xv, sv, nullptr, a);
  if (!fused.ok()) {
    state.SkipWithError(fused.status().message().c_str());
    return;
  }
  const qdq::MutableTensorView yv{ElementType::kFloat32, c.shape, y.data()};
  if (form == FakeQuantForm::kComposed) {
    qdq_bench::PageVector<uint8_t> q(qdq::storage_bytes(codes, n));
    qdq::DequantizeLinearAttributes d;
    d.axis = c.axis;
    d.block_size = c.block;
    const auto dequantize = qdq::plan_dequantize_linear({codes, c.shape, q.data()}, sv, nullptr, d);
    for (auto _ : state) {
      benchmark::DoNotOptimize(qdq::execute(fused->quantize, {codes, c.shape, q.data()}));
      benchmark::DoNotOptimize(qdq::execute(dequantize.value(), yv));
      benchmark::ClobberMemory();
    }
  } else {
    qdq_bench::PageVector<uint8_t> mask(form == FakeQuantForm::kFusedWithMask ? n : 0);
    const qdq::MutableTensorView mv{ElementType::kUint8, c.shape, mask.data()};
    for (auto _ : state) {
      benchmark::DoNotOptimize(qdq::execute(fused.value(), yv, form == FakeQuantForm::kFusedWithMask ? &mv : nullptr));
      benchmark::ClobberMemory();
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}

// memcpy of `bytes` / 2 (so read + write = bytes), split over the default pool's threads.
void BM_Memcpy(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0)) * 5 / 2;  // f32 -> 8-bit: 5 bytes per element
  qdq_bench::PageVector<uint8_t> a(bytes, 1), b(bytes);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes * 2));
}

const ElementType kTypes[] = {ElementType::kUint8, ElementType::kInt8, ElementType::kUint16, ElementType::kInt16,
                              ElementType::kUint4, ElementType::kInt4, ElementType::kFloat8E4M3FN,
                              ElementType::kFloat8E5M2, ElementType::kFloat4E2M1};
const std::pair<Grain, const char*> kGrains[] = {{Grain::kPerTensor, "per_tensor"},
                                                  {Grain::kPerAxis, "per_axis"},
                                                  {Grain::kBlockedFirst, "blocked_first"},
                                                  {Grain::kBlockedLast, "blocked_last"}};

int register_all() {
  for (ElementType t : kTypes) {
    for (const auto& [grain, grain_name] : kGrains) {
      const std::string suffix = std::string(qdq::name(t)) + "/" + grain_name;
      benchmark::RegisterBenchmark(("Q/" + suffix).c_str(), BM_Quantize, t, grain)->Arg(1 << 16)->Arg(1 << 24)->UseRealTime();
      benchmark::RegisterBenchmark(("DQ/" + suffix).c_str(), BM_Dequantize, t, grain)->Arg(1 << 16)->Arg(1 << 24)->UseRealTime();
    }
  }
  const std::pair<DmlGrain, const char*> dml_grains[] = {{DmlGrain::kPerTensor, "per_tensor_strides"},
                                                          {DmlGrain::kPerAxis, "per_axis_strides"},
                                                          {DmlGrain::kBlockedLast, "blocked_last_strides"},
                                                          {DmlGrain::kPaddedRows, "padded_x_rows"}};
  for (const auto& [grain, grain_name] : dml_grains) {
    benchmark::RegisterBenchmark((std::string("DML_Q/uint8/") + grain_name).c_str(), BM_DmlQuantize, grain)
        ->Arg(1 << 16)->Arg(1 << 24)->UseRealTime();
    benchmark::RegisterBenchmark((std::string("DML_DQ/uint8/") + grain_name).c_str(), BM_DmlDequantize, grain)
        ->Arg(1 << 16)->Arg(1 << 24)->UseRealTime();
  }
  const std::tuple<ElementType, Grain, const char*> fake_quant_cells[] = {
      {ElementType::kInt8, Grain::kPerTensor, "int8/per_tensor"},
      {ElementType::kInt4, Grain::kBlockedLast, "int4/blocked_last"},
      {ElementType::kFloat8E4M3FN, Grain::kPerAxis, "float8_e4m3fn/per_axis"}};
  const std::pair<FakeQuantForm, const char*> forms[] = {
      {FakeQuantForm::kComposed, "composed"}, {FakeQuantForm::kFused, "fused"}, {FakeQuantForm::kFusedWithMask, "fused_mask"}};
  for (const auto& [codes, grain, cell_name] : fake_quant_cells) {
    for (const auto& [form, form_name] : forms) {
      benchmark::RegisterBenchmark((std::string("FQ/") + form_name + "/" + cell_name).c_str(), BM_FakeQuant, codes, grain, form)
          ->Arg(1 << 16)
          ->Arg(1 << 24)
          ->UseRealTime();
    }
  }
  benchmark::RegisterBenchmark("memcpy", BM_Memcpy)->Arg(1 << 16)->Arg(1 << 24)->UseRealTime();
  return 0;
}
const int registered = register_all();

}  // namespace

BENCHMARK_MAIN();
