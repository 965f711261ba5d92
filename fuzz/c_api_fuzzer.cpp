// libFuzzer target over the C ABI and the planners behind it.
//
// Each input decodes into one call: which of the six operators (or an output-type query), the
// element types, ranks, shapes and attributes, and the tensors' bytes. Shapes are drawn so that
// most land near a valid per-tensor / per-axis / blocked / broadcast layout, where the interesting
// bugs are, and some are random. Every buffer is allocated with exactly the bytes its shape needs
// (at an odd address when the input says so), so AddressSanitizer catches any read or write of a
// byte past a packed tail. Whatever the C ABI accepts is run again through the C++ planners on the
// scalar reference path and on every SIMD target this CPU supports, and the output bytes must be
// identical; whatever it rejects, the C++ planner must reject too. A mismatch aborts (a finding).
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fuzz_tensors.h"
#include "kernels/kernels.h"
#include "qdq/qdq.h"
#include "qdq/qdq.hpp"

namespace {

using qdq::ElementType;
using namespace qdq_fuzz;

enum Operator : int {
  kQuantize,
  kDequantize,
  kExtendedQuantize,
  kExtendedDequantize,
  kElementwiseQuantize,
  kElementwiseDequantize,
  kQuantizeOutputType,
  kDequantizeOutputType,
};

bool is_quantize(int op) {
  return op == kQuantize || op == kExtendedQuantize || op == kElementwiseQuantize || op == kQuantizeOutputType;
}

struct Call {
  int op = kQuantize;
  qdq_quantize_attributes q{};
  qdq_dequantize_attributes dq{};
  CTensor x, scale, zero_point;
  bool has_zero_point = false;
};

// The C++ planner for the call: the oracle for which inputs are valid and for the output type.
qdq::Result<qdq::Plan> plan_of(const Call& c, ElementType y_type) {
  const qdq::TensorView x = c.x.view(), s = c.scale.view(), zp = c.zero_point.view();
  const qdq::TensorView* z = c.has_zero_point ? &zp : nullptr;
  qdq::QuantizeLinearAttributes qa{c.q.axis, c.q.block_size, c.q.saturate, c.q.output_dtype, c.q.precision, c.q.opset};
  qdq::DequantizeLinearAttributes da{c.dq.axis, c.dq.block_size, c.dq.output_dtype, c.dq.opset};
  switch (c.op) {
    case kQuantize: case kQuantizeOutputType: return qdq::plan_quantize_linear(x, s, z, qa);
    case kDequantize: case kDequantizeOutputType: return qdq::plan_dequantize_linear(x, s, z, da);
    case kExtendedQuantize: return qdq::plan_extended_quantize_linear(x, s, z, c.q.axis);
    case kExtendedDequantize: return qdq::plan_extended_dequantize_linear(x, s, z, c.q.axis);
    case kElementwiseQuantize: return qdq::plan_elementwise_quantize_linear(x, s, z, y_type);
    default: return qdq::plan_elementwise_dequantize_linear(x, s, z, y_type);
  }
}

qdq_status_code run_c_abi(const Call& c, const qdq_mutable_tensor& y) {
  const qdq_tensor x = c.x.c(), s = c.scale.c(), zp = c.zero_point.c();
  const qdq_tensor* z = c.has_zero_point ? &zp : nullptr;
  switch (c.op) {
    case kQuantize: return qdq_quantize_linear(&x, &s, z, &c.q, &y);
    case kDequantize: return qdq_dequantize_linear(&x, &s, z, &c.dq, &y);
    case kExtendedQuantize: return qdq_extended_quantize_linear(&x, &s, z, c.q.axis, &y);
    case kExtendedDequantize: return qdq_extended_dequantize_linear(&x, &s, z, c.q.axis, &y);
    case kElementwiseQuantize: return qdq_elementwise_quantize_linear(&x, &s, z, &y);
    default: return qdq_elementwise_dequantize_linear(&x, &s, z, &y);
  }
}

void compare(const char* path, const unsigned char* expected, const unsigned char* got, uint64_t bytes,
             const qdq::Plan& plan) {
  if (bytes == 0 || std::memcmp(expected, got, bytes) == 0) return;
  uint64_t i = 0;
  while (expected[i] == got[i]) ++i;
  char text[256];
  std::snprintf(text, sizeof text, "%s differs from the reference path at byte %llu of %llu (%02x vs %02x) in %s",
                path, static_cast<unsigned long long>(i), static_cast<unsigned long long>(bytes), got[i],
                expected[i], plan.operator_name.c_str());
  finding(text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  Call c;
  c.op = in.ConsumeIntegralInRange<int>(kQuantize, kDequantizeOutputType);
  const bool quantize = is_quantize(c.op);
  const bool elementwise = c.op == kElementwiseQuantize || c.op == kElementwiseDequantize;

  qdq_quantize_attributes_init(&c.q);
  qdq_dequantize_attributes_init(&c.dq);
  c.q.axis = c.dq.axis = pick_attribute(in, -6, 6, 1);
  const int64_t blocks[] = {0, 0, 1, 2, 3, 4, 7, 8, 16, 32, 33};
  c.q.block_size = c.dq.block_size =
      in.ConsumeIntegralInRange<int>(0, 15) == 0 ? in.ConsumeIntegral<int64_t>() : in.PickValueInArray(blocks);
  c.q.saturate = pick_attribute(in, 0, 1, 1);
  c.q.output_dtype = c.dq.output_dtype = in.ConsumeBool() ? 0 : pick_type(in, either(quantize, kCodeTypes, kRealTypes));
  c.q.precision = in.ConsumeBool() ? 0 : pick_type(in, kRealTypes);
  c.q.opset = c.dq.opset = pick_attribute(in, 8, 30, 25);

  const std::vector<int64_t> x_shape = pick_x_shape(in);
  make_tensor(in, c.x, pick_type(in, either(quantize, kRealTypes, kCodeTypes)), x_shape);
  const std::vector<int64_t> scale_shape = pick_scale_shape(in, x_shape, c.q.axis, c.q.block_size);
  make_tensor(in, c.scale, pick_type(in, either(elementwise, kRealTypes, kScaleTypes)), scale_shape);
  c.has_zero_point = in.ConsumeBool();
  if (c.has_zero_point) {
    // Quantize: the zero point picks the output type. Dequantize: mostly x's type, as required.
    const bool usual = !quantize && in.ConsumeIntegralInRange<int>(0, 7) != 0;
    const int32_t zp_type = usual ? c.x.type : pick_type(in, kCodeTypes);
    make_tensor(in, c.zero_point, zp_type,
                in.ConsumeIntegralInRange<int>(0, 7) ? scale_shape : pick_scale_shape(in, x_shape, 0, 0));
  }

  // Output-type queries: the C ABI must agree with the planner and leave the result alone on error.
  if (c.op == kQuantizeOutputType || c.op == kDequantizeOutputType) {
    const qdq_tensor x = c.x.c(), s = c.scale.c(), zp = c.zero_point.c();
    const qdq_tensor* z = c.has_zero_point ? &zp : nullptr;
    int32_t type = -12345;
    const qdq_status_code status = c.op == kQuantizeOutputType
                                       ? qdq_quantize_linear_output_type(&x, &s, z, &c.q, &type)
                                       : qdq_dequantize_linear_output_type(&x, &s, z, &c.dq, &type);
    expect_message(status);
    const qdq::Result<qdq::Plan> plan = plan_of(c, ElementType::kUndefined);
    if ((status == QDQ_OK) != plan.ok()) finding("output-type query and planner disagree");
    if (plan.ok() && type != static_cast<int32_t>(plan->output_type)) finding("output type differs from the plan's");
    if (!plan.ok() && type != -12345) finding("output type written on failure");
    return 0;
  }

  // y: the planner's type and x's shape, or (sometimes) a wrong type, rank or dim. Elementwise
  // operators take the output type from y, so their oracle is the plan for y's final type.
  const int32_t requested_y_type =
      elementwise && in.ConsumeBool() ? pick_type(in, either(quantize, kCodeTypes, kRealTypes)) : 0;
  const qdq::Result<qdq::Plan> first_plan = plan_of(c, static_cast<ElementType>(requested_y_type));
  int32_t y_type = first_plan.ok() ? static_cast<int32_t>(first_plan->output_type) : pick_type(in, kAnyType);
  std::vector<int64_t> y_shape = x_shape;
  int32_t y_rank = static_cast<int32_t>(y_shape.size());
  switch (in.ConsumeIntegralInRange<int>(0, 31)) {
    case 0: y_type = pick_type(in, kAnyType); break;
    case 1: if (!y_shape.empty()) y_shape.back() += in.ConsumeBool() ? 1 : -1; break;
    case 2: y_shape.push_back(1); y_rank += 1; break;
    // A rank larger than the shape array (exactly x's dims, on the heap): it must be refused from
    // the rank alone, or AddressSanitizer reports the read past the array.
    case 3:
      y_rank = in.ConsumeBool() ? in.ConsumeIntegralInRange<int32_t>(y_rank + 1, 64) : in.ConsumeIntegral<int32_t>();
      break;
    default: break;
  }
  const qdq::Result<qdq::Plan> plan = elementwise ? plan_of(c, static_cast<ElementType>(y_type)) : first_plan;
  CTensor y;
  make_tensor(in, y, y_type, y_shape);
  const uint64_t y_bytes = y.bytes();
  std::vector<unsigned char> y_before(y.data(), y.data() + (y.null_data ? 0 : y_bytes));
  // The shape array alone on the heap, exactly as long as its dims.
  std::unique_ptr<int64_t[]> y_dims(new int64_t[y_shape.size() + (y_shape.empty() ? 1 : 0)]);
  std::copy(y_shape.begin(), y_shape.end(), y_dims.get());
  const qdq_mutable_tensor y_c{y_type, y_rank, y_shape.empty() ? nullptr : y_dims.get(), y.data()};
  const qdq_status_code status = run_c_abi(c, y_c);
  expect_message(status);

  const bool y_matches = plan.ok() && y_type == static_cast<int32_t>(plan->output_type) &&
                         y_rank == static_cast<int32_t>(y_shape.size()) && y_shape == x_shape &&
                         (plan->element_count == 0 || !y.null_data);
  if (status == QDQ_OK && !y_matches) finding("C ABI accepted an input the planner or the output check rejects");
  if (status != QDQ_OK && y_matches) {
    finding(std::string("C ABI rejected a valid call: ") + qdq_last_error());
  }
  if (status != QDQ_OK) {
    if (!y.null_data && y_bytes > 0 && std::memcmp(y_before.data(), y.data(), y_bytes) != 0) {
      finding("y written by a failed call");
    }
    return 0;
  }

  // Accepted: the reference path and every SIMD target must write the same bytes.
  ExactBuffer reference_buffer(y_bytes, 0);
  if (y_bytes) std::memcpy(reference_buffer.data(), y_before.data(), y_bytes);
  const qdq::MutableTensorView reference_view{plan->output_type, x_shape, y_bytes ? reference_buffer.data() : y.data()};
  qdq::ExecuteOptions reference_options;
  reference_options.path = qdq::ExecutionPath::kReference;
  if (!qdq::execute(plan.value(), reference_view, reference_options).ok()) finding("reference path failed");
  compare("the C ABI (default dispatch)", reference_buffer.data(), y.data(), y_bytes, plan.value());

  // Listed once: detecting the CPU's targets runs CPUID, which traps to the hypervisor in a VM and
  // cost more than the rest of an input. Restoring the default dispatch (force_target(0)) would
  // detect again, so the best target, which is what the default dispatch picks, is forced instead.
  static const std::vector<int64_t> targets = qdq::kernels::supported_targets();
  for (const int64_t target : targets) {
    qdq::kernels::force_target(target);
    ExactBuffer target_buffer(y_bytes, static_cast<unsigned>(target & 3));
    if (y_bytes) std::memcpy(target_buffer.data(), y_before.data(), y_bytes);
    const qdq::Status s =
        qdq::execute(plan.value(), {plan->output_type, x_shape, y_bytes ? target_buffer.data() : y.data()});
    if (!s.ok()) finding("execute failed on target " + qdq::kernels::target_name(target));
    compare(qdq::kernels::target_name(target).c_str(), reference_buffer.data(), target_buffer.data(), y_bytes,
            plan.value());
  }
  if (!targets.empty()) qdq::kernels::force_target(targets.front());
  return 0;
}
