// Concurrency stress test, meant to run under ThreadSanitizer (scripts/tsan.sh) and, with a few
// rounds, in the normal ctest run.
//
// Shared, immutable plans (large enough that execute() splits them across threads) are executed
// at once by several caller threads: on qdq's default pool, through a host parallel-for (a pool of
// the host's own threads, as ONNX Runtime plugs in), and on the reference path, while another
// thread keeps changing set_num_threads underneath (each change replaces the default pool while
// calls are using the old one). Other threads make failing and succeeding C ABI calls and check
// that qdq_last_error() is each thread's own. Every output is compared with the one a serial,
// single-threaded run produced before the threads started. Exits non-zero on any difference;
// ThreadSanitizer reports races itself (halt_on_error in scripts/tsan.sh makes them fatal).
//
// Usage: qdq_concurrency_stress [--rounds N] [--callers N] [--seed S]
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "qdq/qdq.h"
#include "qdq/qdq.hpp"

namespace {

using qdq::ElementType;

// Above the executor's threshold for splitting work (2^17 elements), with a ragged tail so that
// the last task is short and, for packed outputs, ends mid-byte.
constexpr int64_t kRows = 67, kColumns = 2053;

struct Case {
  std::string name;
  qdq::Plan plan;
  std::vector<unsigned char> expected;
};

struct Operands {
  std::vector<int64_t> x_shape{kRows, kColumns};
  std::vector<float> x;
  std::vector<int8_t> codes;
  std::vector<float> per_axis_scale;
  std::vector<int64_t> per_axis_shape{kColumns};
  std::vector<float> blocked_scale;
  std::vector<int64_t> blocked_shape{kRows, (kColumns + 31) / 32};
  std::vector<int32_t> int32_scale{3};
  std::vector<int64_t> broadcast_shape{1, kColumns};
  std::vector<uint8_t> broadcast_zero_point;
  float scale = 0.0371f;
  uint8_t zero_point = 131;
};

Operands make_operands(uint32_t seed) {
  Operands o;
  std::mt19937 random(seed);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  const size_t n = static_cast<size_t>(kRows * kColumns);
  o.x.resize(n);
  o.codes.resize(n);
  for (size_t i = 0; i < n; ++i) {
    o.x[i] = normal(random);
    o.codes[i] = static_cast<int8_t>(random());
  }
  o.x[5] = NAN;
  o.x[6] = INFINITY;
  o.per_axis_scale.resize(kColumns);
  for (float& s : o.per_axis_scale) s = 0.01f + static_cast<float>(random() % 1000) / 4000.0f;
  o.blocked_scale.resize(static_cast<size_t>(o.blocked_shape[0] * o.blocked_shape[1]));
  for (float& s : o.blocked_scale) s = 0.02f + static_cast<float>(random() % 1000) / 3000.0f;
  o.broadcast_zero_point.resize(kColumns);
  for (uint8_t& z : o.broadcast_zero_point) z = static_cast<uint8_t>(random());
  return o;
}

qdq::Plan must(qdq::Result<qdq::Plan> plan, const char* what) {
  if (!plan.ok()) {
    std::fprintf(stderr, "qdq_concurrency_stress: planning %s failed: %s\n", what, plan.status().message().c_str());
    std::exit(2);
  }
  return std::move(plan.value());
}

// Plans covering the kernels: 8-bit, packed 4-bit, float8, dequantize to float16, and an int32
// scale (the float64-division path).
std::vector<Case> make_cases(const Operands& o) {
  const qdq::TensorView x{ElementType::kFloat32, o.x_shape, o.x.data()};
  const qdq::TensorView codes{ElementType::kInt8, o.x_shape, o.codes.data()};
  const qdq::TensorView scale{ElementType::kFloat32, {}, &o.scale};
  const qdq::TensorView zero_point{ElementType::kUint8, {}, &o.zero_point};
  const qdq::TensorView per_axis{ElementType::kFloat32, o.per_axis_shape, o.per_axis_scale.data()};
  const qdq::TensorView blocked{ElementType::kFloat32, o.blocked_shape, o.blocked_scale.data()};
  const qdq::TensorView int32_scale{ElementType::kInt32, {}, o.int32_scale.data()};
  const qdq::TensorView broadcast_zp{ElementType::kUint8, o.broadcast_shape, o.broadcast_zero_point.data()};
  const std::vector<int64_t> broadcast_scale_shape{1, 1};
  const qdq::TensorView broadcast_scale{ElementType::kFloat32, broadcast_scale_shape, &o.scale};

  qdq::QuantizeLinearAttributes int4_blocked;
  int4_blocked.block_size = 32;
  int4_blocked.output_dtype = static_cast<int64_t>(ElementType::kInt4);
  qdq::QuantizeLinearAttributes e4m3;
  e4m3.output_dtype = static_cast<int64_t>(ElementType::kFloat8E4M3FN);
  qdq::QuantizeLinearAttributes int32_divides_in_float64;
  int32_divides_in_float64.output_dtype = static_cast<int64_t>(ElementType::kInt8);
  qdq::DequantizeLinearAttributes to_float16;
  to_float16.output_dtype = static_cast<int64_t>(ElementType::kFloat16);

  std::vector<Case> cases;
  cases.push_back({"Q uint8 per-tensor", must(qdq::plan_quantize_linear(x, scale, &zero_point), "Q uint8"), {}});
  cases.push_back({"Q uint8 per-axis", must(qdq::plan_quantize_linear(x, per_axis, nullptr), "Q per-axis"), {}});
  cases.push_back({"Q int4 blocked", must(qdq::plan_quantize_linear(x, blocked, nullptr, int4_blocked), "Q int4"), {}});
  cases.push_back({"Q float8e4m3fn", must(qdq::plan_quantize_linear(x, scale, nullptr, e4m3), "Q e4m3"), {}});
  cases.push_back({"Q int8, int32 scale (float64 division)",
                   must(qdq::plan_quantize_linear(x, int32_scale, nullptr, int32_divides_in_float64), "Q int32"), {}});
  cases.push_back(
      {"DQ int8 -> float16", must(qdq::plan_dequantize_linear(codes, scale, nullptr, to_float16), "DQ"), {}});
  cases.push_back({"elementwise Q broadcast zero point",
                   must(qdq::plan_elementwise_quantize_linear(x, broadcast_scale, &broadcast_zp), "elementwise"), {}});
  return cases;
}

std::vector<unsigned char> output_buffer(const qdq::Plan& plan) {
  return std::vector<unsigned char>(qdq::storage_bytes(plan.output_type, plan.element_count), 0xEE);
}

// The host's parallel-for: three threads of its own per call pull task indices from a counter,
// as a host pool would (ORT's is persistent; fresh threads per call race no less).
void host_parallel_for(void* /*host*/, void (*task)(void*, uint64_t), void* context, uint64_t count) {
  std::atomic<uint64_t> next{0};
  auto drain = [&] {
    for (uint64_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) task(context, i);
  };
  std::thread a(drain), b(drain);
  drain();
  a.join();
  b.join();
}

std::atomic<uint64_t> g_failures{0};
std::atomic<uint64_t> g_executions{0};

void fail(const std::string& what) {
  std::fprintf(stderr, "qdq_concurrency_stress: %s\n", what.c_str());
  g_failures.fetch_add(1);
}

void caller(const std::vector<Case>& cases, int rounds, uint32_t seed) {
  std::mt19937 random(seed);
  for (int round = 0; round < rounds; ++round) {
    const Case& c = cases[random() % cases.size()];
    std::vector<unsigned char> y = output_buffer(c.plan);
    qdq::ExecuteOptions options;
    const unsigned mode = random() % 3;
    if (mode == 1) options.parallel_for.run = &host_parallel_for;
    if (mode == 2) options.path = qdq::ExecutionPath::kReference;
    const qdq::Status status = qdq::execute(c.plan, {c.plan.output_type, c.plan.shape, y.data()}, options);
    g_executions.fetch_add(1);
    if (!status.ok()) fail(c.name + ": " + status.message());
    if (y != c.expected) {
      static const char* const kModes[] = {"default pool", "host parallel-for", "reference"};
      fail(c.name + " (" + kModes[mode] + ") differs from the serial run");
    }
  }
}

// C ABI calls that fail with a message naming this thread's own axis, alternating with calls that
// succeed and must clear it: qdq_last_error() is per thread.
void error_message_caller(int thread, int rounds) {
  const float x[4] = {1, 2, 3, 4}, s[4] = {1, 1, 1, 1};
  const int64_t shape[2] = {2, 2}, scale_shape[1] = {2};
  uint8_t y[4];
  const qdq_tensor xt{1, 2, shape, x}, per_axis{1, 1, scale_shape, s}, scalar{1, 0, nullptr, s};
  const qdq_mutable_tensor yt{2, 2, shape, y};
  qdq_quantize_attributes attributes;
  qdq_quantize_attributes_init(&attributes);
  const std::string own_axis = "axis " + std::to_string(1000 + thread) + " ";
  for (int round = 0; round < rounds; ++round) {
    attributes.axis = 1000 + thread;
    if (qdq_quantize_linear(&xt, &per_axis, nullptr, &attributes, &yt) != QDQ_INVALID_ARGUMENT) {
      fail("an out-of-range axis was accepted");
    }
    std::this_thread::yield();
    if (std::string(qdq_last_error()).find(own_axis) == std::string::npos) {
      fail("thread " + std::to_string(thread) + " read another thread's message: " + qdq_last_error());
    }
    attributes.axis = 1;
    if (qdq_quantize_linear(&xt, &scalar, nullptr, &attributes, &yt) != QDQ_OK || qdq_last_error()[0] != '\0') {
      fail("a valid C ABI call failed or left a message: " + std::string(qdq_last_error()));
    }
  }
}

int parse(int argc, char** argv, const char* flag, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], flag) == 0) return std::atoi(argv[i + 1]);
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = parse(argc, argv, "--rounds", 30);
  const int callers = parse(argc, argv, "--callers", 4);
  const uint32_t seed = static_cast<uint32_t>(parse(argc, argv, "--seed", 13));
  std::printf("qdq_concurrency_stress: rounds %d, callers %d, seed %u\n", rounds, callers, seed);

  const Operands operands = make_operands(seed);
  std::vector<Case> cases = make_cases(operands);
  qdq::set_num_threads(1);  // the serial run every concurrent one must equal
  for (Case& c : cases) {
    c.expected = output_buffer(c.plan);
    const qdq::Status status = qdq::execute(c.plan, {c.plan.output_type, c.plan.shape, c.expected.data()});
    if (!status.ok()) {
      std::fprintf(stderr, "qdq_concurrency_stress: serial %s failed: %s\n", c.name.c_str(), status.message().c_str());
      return 2;
    }
  }

  std::atomic<bool> done{false};
  std::atomic<uint64_t> resizes{0};
  std::thread resizer([&] {
    std::mt19937 random(seed + 1);
    while (!done.load()) {
      qdq::set_num_threads(static_cast<int>(random() % 5));  // 0 restores the default
      resizes.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::microseconds(200 + random() % 800));
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < callers; ++t) threads.emplace_back(caller, std::cref(cases), rounds, seed + 100 + t);
  for (int t = 0; t < 2; ++t) threads.emplace_back(error_message_caller, t, rounds * 4);
  for (std::thread& t : threads) t.join();
  done.store(true);
  resizer.join();
  qdq::set_num_threads(0);

  std::printf("qdq_concurrency_stress: %" PRIu64 " executions, %" PRIu64 " pool resizes, %" PRIu64 " failures\n",
              g_executions.load(), resizes.load(), g_failures.load());
  return g_failures.load() == 0 ? 0 : 1;
}
