// Every SIMD entry point returns with the caller's AVX upper state clean (kernels/upper_state-inl.h):
// read from the XINUSE bitmap (XGETBV with ECX = 1) right after each call, on every target. The
// baseline code that follows (planning, the Python and ONNX Runtime doors) would otherwise run its
// SSE instructions with the penalty of a dirty state. The calls run on the calling thread (a
// serial parallel-for), since the state is per thread.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

#include "kernels/kernels.h"
#include "qdq/fake_quant.hpp"
#include "qdq/qdq.hpp"
#include "qdq/quark_ops.hpp"
#include "qdq/toolkit.hpp"

namespace qdq {
namespace {

using E = ElementType;

// XINUSE bits 2 (YMM_Hi128: bits 255:128 of ymm0-15) and 6 (ZMM_Hi256: bits 511:256 of zmm0-15),
// or nullopt where XGETBV with ECX = 1 is not available (not x86, no OSXSAVE, or CPUID leaf 0xD
// sub-leaf 1 EAX bit 2 clear). zmm16-31 (bit 7) are left out: SSE code cannot reach them and
// vzeroupper does not clear them.
std::optional<uint64_t> dirty_upper_state() {
#if defined(__x86_64__) && defined(__GNUC__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || (c & (1u << 27)) == 0) return std::nullopt;  // OSXSAVE
  if (!__get_cpuid_count(0xD, 1, &a, &b, &c, &d) || (a & (1u << 2)) == 0) return std::nullopt;
  uint32_t low = 0, high = 0;
  asm volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(1));
  return ((uint64_t{high} << 32) | low) & ((1u << 2) | (1u << 6));
#else
  return std::nullopt;
#endif
}

bool cpu_has_avx() {
#if defined(__x86_64__) && defined(__GNUC__)
  return __builtin_cpu_supports("avx");
#else
  return false;
#endif
}

// Runs every task on the calling thread.
ExecuteOptions on_this_thread() {
  ExecuteOptions options;
  options.parallel_for.run = [](void*, void (*task)(void*, uint64_t), void* context, uint64_t count) {
    for (uint64_t i = 0; i < count; ++i) task(context, i);
  };
  return options;
}

class UpperState : public testing::Test {
 protected:
  void TearDown() override { kernels::force_target(0); }
};

TEST_F(UpperState, TheProbeSeesADirtyStateAndItsClearing) {
  if (!dirty_upper_state() || !cpu_has_avx()) GTEST_SKIP() << "XINUSE is not readable here";
#if defined(__x86_64__) && defined(__GNUC__)
  asm volatile("vpcmpeqd %%ymm0, %%ymm0, %%ymm0" ::: "xmm0");  // all ones in ymm0's upper half
  EXPECT_NE(dirty_upper_state().value(), 0u);
  asm volatile("vzeroupper" ::: "xmm0");
  EXPECT_EQ(dirty_upper_state().value(), 0u);
#endif
}

TEST_F(UpperState, EveryEntryPointReturnsItClean) {
  if (!dirty_upper_state() || !cpu_has_avx()) GTEST_SKIP() << "XINUSE is not readable here";
  std::mt19937 g(20261127);
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  // 2^20 float16 codes: enough for the per-tensor table path (16 elements per table entry).
  const int64_t rows = 1024, columns = 1024, n = rows * columns;
  const std::vector<int64_t> shape = {rows, columns};
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = value(g);
  std::vector<uint16_t> x16(static_cast<size_t>(n));
  for (uint16_t& v : x16) v = static_cast<uint16_t>(0x3000 + g() % 0x1000);
  std::vector<uint8_t> codes(static_cast<size_t>(n));
  for (uint8_t& v : codes) v = static_cast<uint8_t>(g());
  const float scale = 0.03f;
  const std::vector<int64_t> scalar = {};
  std::vector<uint8_t> y8(static_cast<size_t>(n));
  std::vector<float> y32(static_cast<size_t>(n));
  const ExecuteOptions serial = on_this_thread();

  struct Case {
    std::string name;
    std::function<Status()> call;
  };
  std::vector<Case> cases;
  cases.push_back({"Q float32 -> uint8", [&] {
                     auto plan = plan_quantize_linear({E::kFloat32, shape, x.data()}, {E::kFloat32, scalar, &scale}, nullptr, {});
                     return plan.ok() ? execute(plan.value(), {E::kUint8, shape, y8.data()}, serial) : plan.status();
                   }});
  cases.push_back({"DQ uint8 -> float32", [&] {
                     auto plan = plan_dequantize_linear({E::kUint8, shape, codes.data()}, {E::kFloat32, scalar, &scale}, nullptr, {});
                     return plan.ok() ? execute(plan.value(), {E::kFloat32, shape, y32.data()}, serial) : plan.status();
                   }});
  cases.push_back({"Q float16 -> uint8 per-tensor (by table)", [&] {
                     const uint16_t half_scale = 0x2400;  // 2^-6
                     auto plan = plan_quantize_linear({E::kFloat16, shape, x16.data()}, {E::kFloat16, scalar, &half_scale}, nullptr, {});
                     return plan.ok() ? execute(plan.value(), {E::kUint8, shape, y8.data()}, serial) : plan.status();
                   }});
  cases.push_back({"fake-quant float32 int8", [&] {
                     QuantizeDequantizeAttributes a;
                     a.quantized_dtype = static_cast<int64_t>(E::kInt8);
                     auto plan = plan_quantize_dequantize_linear({E::kFloat32, shape, x.data()}, {E::kFloat32, scalar, &scale}, nullptr, a);
                     return plan.ok() ? execute(plan.value(), {E::kFloat32, shape, y32.data()}, nullptr, serial) : plan.status();
                   }});
  std::vector<float> block_scales(static_cast<size_t>(rows * columns / 32));
  std::vector<int8_t> block_zero_points(block_scales.size());
  cases.push_back({"compute_qparams int8 blocked-32", [&] {
                     QparamsOptions o;
                     o.granularity = Granularity::kBlocked;
                     o.block_size = 32;
                     const std::vector<int64_t> s_shape = {rows, columns / 32};
                     const MutableTensorView zp{E::kInt8, s_shape, block_zero_points.data()};
                     return compute_qparams({E::kFloat32, shape, x.data()}, o, {E::kFloat32, s_shape, block_scales.data()}, &zp, serial);
                   }});
  cases.push_back({"dynamic_quantize int8 per-tensor", [&] {
                     QparamsOptions o;
                     float s = 0;
                     int8_t zp = 0;
                     const MutableTensorView zpv{E::kInt8, scalar, &zp};
                     return dynamic_quantize({E::kFloat32, shape, x.data()}, o, {E::kInt8, shape, y8.data()}, {E::kFloat32, scalar, &s}, &zpv);
                   }});
  cases.push_back({"mx_quantize_dequantize fp8_e4m3", [&] {
                     MxQuantizeDequantizeAttributes a;
                     a.element_dtype = "fp8_e4m3";
                     return mx_quantize_dequantize({E::kFloat32, shape, x.data()}, a, {E::kFloat32, shape, y32.data()}, serial);
                   }});
  std::vector<uint16_t> y16(static_cast<size_t>(n));
  cases.push_back({"mx_quantize_dequantize float16 x", [&] {
                     MxQuantizeDequantizeAttributes a;
                     return mx_quantize_dequantize({E::kFloat16, shape, x16.data()}, a, {E::kFloat16, shape, y16.data()}, serial);
                   }});

  for (int64_t target : kernels::supported_targets()) {
    kernels::force_target(target);
    for (const Case& c : cases) {
      const Status status = c.call();
      const std::optional<uint64_t> dirty = dirty_upper_state();
      ASSERT_TRUE(status.ok()) << c.name << ": " << status.message();
      EXPECT_EQ(dirty.value(), 0u) << kernels::target_name(target) << " " << c.name
                                   << ": returned with the upper state dirty (XINUSE bits 0x" << std::hex
                                   << dirty.value() << ")";
    }
  }
}

}  // namespace
}  // namespace qdq
