// libFuzzer target over the C ABI's toolkit: scales from data (qdq_qparams_shape,
// qdq_compute_qparams), dynamic quantization (qdq_dynamic_quantize, qdq_dynamic_quantize_linear),
// fused fake quantization (qdq_quantize_dequantize_linear and Quark's extended one, with and without
// the mask) and Quark's MXQuantizeDequantize / BFPQuantizeDequantize.
//
// Each input decodes into one call with its options and tensors, inputs and outputs alike in
// exact-size heap buffers, at odd addresses when the input says so (fuzz_tensors.h). Oracles:
//   - a message exactly when the call fails, and a failed call writes no output byte;
//   - an accepted call, run again on every SIMD target this CPU supports with every buffer at
//     another address (MX and BFP: in place where the first run was not, and the reverse), writes
//     the same bytes;
//   - an accepted call equals its composition: qdq_dynamic_quantize = qdq_compute_qparams then
//     qdq_quantize_linear with what it gave; qdq_dynamic_quantize_linear = qdq_quantize_linear with
//     its scale and zero point; fake quantization = QuantizeLinear then DequantizeLinear on the
//     reference path; qdq_qparams_shape = the C++ qparams_shape.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_tensors.h"
#include "kernels/kernels.h"
#include "qdq/fake_quant.hpp"
#include "qdq/qdq.h"
#include "qdq/qdq.hpp"
#include "qdq/toolkit.hpp"

namespace {

using namespace qdq_fuzz;

enum Operation : int {
  kQparamsShape,
  kComputeQparams,
  kDynamicQuantize,
  kDynamicQuantizeLinear,
  kQuantizeDequantize,
  kExtendedQuantizeDequantize,
  kMx,
  kBfp,
};

constexpr int32_t kFloatTypes[] = {1, 10, 16};  // float32, float16, bfloat16
constexpr int32_t kQuantizedTypes[] = {2, 3, 4, 5, 21, 22, 25, 26, 17, 18, 19, 20, 23, 27, 28};
constexpr int32_t kToolkitScaleTypes[] = {1, 10, 16, 24};
constexpr const char* kMxDtypes[] = {"int8", "fp8_e5m2", "fp8_e4m3", "fp6_e3m2", "fp6_e2m3", "fp4_e2m1", "", "fp8"};
constexpr const char* kBfpMethods[] = {"to_bfp", "to_bfp_prime", "", "bfp"};

// An output the call writes: its tensor (exact-size buffer, filled from the input), and the rank
// the call is told (sometimes past the shape array's end: it must be refused from the rank alone).
struct Output {
  CTensor t;
  int32_t rank = 0;
  bool present = true;
  std::vector<unsigned char> before;

  void make(FuzzedDataProvider& in, int32_t type, std::vector<int64_t> shape) {
    switch (in.ConsumeIntegralInRange<int>(0, 31)) {
      case 0: type = pick_type(in, kAnyType); break;
      case 1: if (!shape.empty()) shape.back() += in.ConsumeBool() ? 1 : -1; break;
      case 2: shape.push_back(1); break;
      default: break;
    }
    rank = static_cast<int32_t>(shape.size());
    if (in.ConsumeIntegralInRange<int>(0, 31) == 0) rank = in.ConsumeIntegralInRange<int32_t>(rank + 1, 64);
    make_tensor(in, t, type, std::move(shape));
    before.assign(t.data(), t.data() + (t.data() != nullptr ? t.bytes() : 0));
  }
  qdq_mutable_tensor c() const { return {t.type, rank, t.shape.empty() ? nullptr : t.shape.data(), t.data()}; }
  uint64_t bytes() const { return t.data() != nullptr ? t.bytes() : 0; }
  const unsigned char* data() const { return t.data(); }
};

struct Call {
  int op = kComputeQparams;
  qdq_qparams_options options{};
  qdq_quantize_dequantize_attributes fake{};
  int64_t extended_axis = 1;
  qdq_mx_attributes mx{};
  qdq_bfp_attributes bfp{};
  std::string mx_dtype, bfp_method;
  CTensor x, scale, zero_point;
  bool has_zero_point = false;
  Output y, out_scale, out_zero_point, mask;
  bool in_place = false;  // MX / BFP: y->data is x->data
  // qdq_dynamic_quantize_linear's scalars, and qdq_qparams_shape's results.
  float y_scale = -1.0f;
  uint8_t y_zero_point = 77;
  int32_t shape_rank = -5;
  std::vector<int64_t> shape_out;
};

// A copy of `t` at another address (same type, shape and bytes; a null data pointer stays null).
void clone_tensor(const CTensor& t, unsigned misalignment, CTensor& copy) {
  copy.type = t.type;
  copy.shape = t.shape;
  copy.null_data = t.null_data;
  if (!t.buffer) return;
  copy.buffer.emplace(t.buffer->size(), misalignment);
  if (t.buffer->size()) std::memcpy(copy.buffer->data(), const_cast<ExactBuffer&>(*t.buffer).data(), t.buffer->size());
}

void clone_output(const Output& o, unsigned misalignment, Output& copy) {
  copy.rank = o.rank;
  copy.present = o.present;
  copy.before = o.before;
  clone_tensor(o.t, misalignment, copy.t);
  // The copy starts from the first run's starting bytes, not from what it wrote.
  if (copy.t.data() != nullptr && !o.before.empty()) std::memcpy(copy.t.data(), o.before.data(), o.before.size());
}

qdq_status_code run(Call& c) {
  const qdq_tensor x = c.x.c(), s = c.scale.c(), zp = c.zero_point.c();
  const qdq_tensor* z = c.has_zero_point ? &zp : nullptr;
  const qdq_mutable_tensor y = c.y.c(), scale = c.out_scale.c(), zero_point = c.out_zero_point.c(), mask = c.mask.c();
  const qdq_mutable_tensor* zero_point_or_null = c.out_zero_point.present ? &zero_point : nullptr;
  const qdq_mutable_tensor* mask_or_null = c.mask.present ? &mask : nullptr;
  switch (c.op) {
    case kQparamsShape:
      return qdq_qparams_shape(&x, &c.options, &c.shape_rank, c.shape_out.empty() ? nullptr : c.shape_out.data());
    case kComputeQparams: return qdq_compute_qparams(&x, &c.options, &scale, zero_point_or_null);
    case kDynamicQuantize: return qdq_dynamic_quantize(&x, &c.options, &y, &scale, zero_point_or_null);
    case kDynamicQuantizeLinear: return qdq_dynamic_quantize_linear(&x, &y, &c.y_scale, &c.y_zero_point);
    case kQuantizeDequantize: return qdq_quantize_dequantize_linear(&x, &s, z, &c.fake, &y, mask_or_null);
    case kExtendedQuantizeDequantize:
      return qdq_extended_quantize_dequantize_linear(&x, &s, z, c.extended_axis, &y, mask_or_null);
    case kMx: {
      c.mx.element_dtype = c.mx_dtype.c_str();
      qdq_mutable_tensor out = y;
      if (c.in_place) out.data = const_cast<void*>(x.data);
      return qdq_mx_quantize_dequantize(&x, &c.mx, &out);
    }
    default: {
      c.bfp.bfp_method = c.bfp_method.c_str();
      qdq_mutable_tensor out = y;
      if (c.in_place) out.data = const_cast<void*>(x.data);
      return qdq_bfp_quantize_dequantize(&x, &c.bfp, &out);
    }
  }
}

// The call being checked, for the finding's message.
std::string g_call;

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string describe(const Call& c) {
  const char* names[] = {"qparams_shape", "compute_qparams", "dynamic_quantize", "dynamic_quantize_linear",
                         "quantize_dequantize_linear", "extended_quantize_dequantize_linear", "mx", "bfp"};
  std::string text = std::string(names[c.op]) + " x " + std::to_string(c.x.type) + shape_text(c.x.shape);
  if (c.op == kComputeQparams || c.op == kDynamicQuantize || c.op == kQparamsShape) {
    text += " options {quantized " + std::to_string(c.options.quantized_type) + ", scale " +
            std::to_string(c.options.scale_type) + ", method " + std::to_string(c.options.method) + ", granularity " +
            std::to_string(c.options.granularity) + ", axis " + std::to_string(c.options.axis) + ", block " +
            std::to_string(c.options.block_size) + "} zero point " + (c.out_zero_point.present ? "yes" : "no");
  }
  return text;
}

void same_bytes(const char* what, const unsigned char* expected, const unsigned char* got, uint64_t bytes) {
  if (bytes == 0 || expected == nullptr || got == nullptr || std::memcmp(expected, got, bytes) == 0) return;
  uint64_t i = 0;
  while (expected[i] == got[i]) ++i;
  char text[200];
  std::snprintf(text, sizeof text, "%s: byte %llu of %llu is %02x, expected %02x", what,
                static_cast<unsigned long long>(i), static_cast<unsigned long long>(bytes), got[i], expected[i]);
  finding(std::string(text) + " in " + g_call);
}

// What the call wrote, as bytes: every output tensor (MX / BFP in place: x's buffer), the scalars.
std::vector<unsigned char> results(const Call& c) {
  std::vector<unsigned char> out;
  auto add = [&](const unsigned char* p, uint64_t n) {
    if (p != nullptr) out.insert(out.end(), p, p + n);
  };
  if ((c.op == kMx || c.op == kBfp) && c.in_place) {
    add(c.x.data(), c.x.data() != nullptr ? c.x.bytes() : 0);
  } else {
    add(c.y.data(), c.y.bytes());
  }
  add(c.out_scale.data(), c.out_scale.bytes());
  if (c.out_zero_point.present) add(c.out_zero_point.data(), c.out_zero_point.bytes());
  if (c.mask.present) add(c.mask.data(), c.mask.bytes());
  add(reinterpret_cast<const unsigned char*>(&c.y_scale), sizeof c.y_scale);
  add(&c.y_zero_point, 1);
  add(reinterpret_cast<const unsigned char*>(&c.shape_rank), sizeof c.shape_rank);
  add(reinterpret_cast<const unsigned char*>(c.shape_out.data()), c.shape_out.size() * sizeof(int64_t));
  return out;
}

void unchanged(const char* name, const Output& o) {
  if (!o.present || o.data() == nullptr) return;
  same_bytes((std::string("failed call wrote ") + name).c_str(), o.before.data(), o.data(), o.bytes());
}

qdq::QparamsOptions options_of(const qdq_qparams_options& o) {
  qdq::QparamsOptions out;
  out.quantized_type = static_cast<qdq::ElementType>(o.quantized_type);
  out.scale_type = static_cast<qdq::ElementType>(o.scale_type);
  out.method = static_cast<qdq::ScaleMethod>(o.method);
  out.granularity = static_cast<qdq::Granularity>(o.granularity);
  out.axis = o.axis;
  out.block_size = o.block_size;
  return out;
}

// The compositions an accepted call must equal.
void check_composition(const Call& c) {
  const qdq_tensor x = c.x.c();
  switch (c.op) {
    case kQparamsShape: {
      const qdq::Result<std::vector<int64_t>> want = qdq::qparams_shape(c.x.shape, options_of(c.options));
      if (!want.ok()) finding("qdq_qparams_shape accepted what qparams_shape refuses");
      if (c.shape_rank != static_cast<int32_t>(want->size()) ||
          !std::equal(want->begin(), want->end(), c.shape_out.begin())) {
        finding("qdq_qparams_shape differs from qparams_shape");
      }
      return;
    }
    case kDynamicQuantize: {
      // compute_qparams into fresh tensors, then QuantizeLinear with them.
      Output scale, zero_point, y;
      clone_output(c.out_scale, 0, scale);
      clone_output(c.out_zero_point, 0, zero_point);
      clone_output(c.y, 0, y);
      const qdq_mutable_tensor sm = scale.c(), zm = zero_point.c();
      if (qdq_compute_qparams(&x, &c.options, &sm, zero_point.present ? &zm : nullptr) != QDQ_OK) {
        finding(std::string("qdq_compute_qparams refused what qdq_dynamic_quantize took: ") + qdq_last_error());
      }
      same_bytes("dynamic_quantize's scale vs compute_qparams'", scale.data(), c.out_scale.data(), scale.bytes());
      if (zero_point.present) {
        same_bytes("dynamic_quantize's zero point vs compute_qparams'", zero_point.data(), c.out_zero_point.data(),
                   zero_point.bytes());
      }
      qdq_quantize_attributes a;
      qdq_quantize_attributes_init(&a);
      a.axis = c.options.granularity == QDQ_PER_TENSOR ? 1 : c.options.axis;
      a.block_size = c.options.granularity == QDQ_BLOCKED ? c.options.block_size : 0;
      if (!zero_point.present) a.output_dtype = c.options.quantized_type;
      const qdq_tensor st{scale.t.type, scale.rank, scale.t.shape.empty() ? nullptr : scale.t.shape.data(), scale.data()};
      const qdq_tensor zt{zero_point.t.type, zero_point.rank,
                          zero_point.t.shape.empty() ? nullptr : zero_point.t.shape.data(), zero_point.data()};
      const qdq_mutable_tensor ym = y.c();
      if (qdq_quantize_linear(&x, &st, zero_point.present ? &zt : nullptr, &a, &ym) != QDQ_OK) {
        finding(std::string("qdq_quantize_linear refused dynamic_quantize's scales: ") + qdq_last_error());
      }
      same_bytes("dynamic_quantize's y vs quantize_linear's", y.data(), c.y.data(), y.bytes());
      return;
    }
    case kDynamicQuantizeLinear: {
      Output y;
      clone_output(c.y, 0, y);
      const int64_t no_dims[1] = {0};
      const qdq_tensor st{1, 0, no_dims, &c.y_scale}, zt{2, 0, no_dims, &c.y_zero_point};
      qdq_quantize_attributes a;
      qdq_quantize_attributes_init(&a);
      const qdq_mutable_tensor ym = y.c();
      if (qdq_quantize_linear(&x, &st, &zt, &a, &ym) != QDQ_OK) {
        finding(std::string("qdq_quantize_linear refused DynamicQuantizeLinear's scale: ") + qdq_last_error());
      }
      same_bytes("DynamicQuantizeLinear's y vs quantize_linear's", y.data(), c.y.data(), y.bytes());
      return;
    }
    case kQuantizeDequantize:
    case kExtendedQuantizeDequantize: {
      const qdq::TensorView xv = c.x.view(), sv = c.scale.view(), zv = c.zero_point.view();
      const qdq::TensorView* z = c.has_zero_point ? &zv : nullptr;
      qdq::QuantizeDequantizeAttributes a;
      a.axis = c.fake.axis;
      a.block_size = c.fake.block_size;
      a.saturate = c.fake.saturate;
      a.quantized_dtype = c.fake.quantized_dtype;
      a.precision = c.fake.precision;
      a.output_dtype = c.fake.output_dtype;
      a.opset = c.fake.opset;
      const qdq::Result<qdq::QuantizeDequantizePlan> plan =
          c.op == kQuantizeDequantize ? qdq::plan_quantize_dequantize_linear(xv, sv, z, a)
                                      : qdq::plan_extended_quantize_dequantize_linear(xv, sv, z, c.extended_axis);
      if (!plan.ok()) finding("the fake-quant planner refuses what the C ABI took");
      Output y;
      clone_output(c.y, 0, y);
      qdq::ExecuteOptions reference;
      reference.path = qdq::ExecutionPath::kReference;
      if (!qdq::execute(plan.value(), {plan->output_type, plan->shape, y.t.data()}, nullptr, reference).ok()) {
        finding("the reference composition failed");
      }
      same_bytes("fake-quant y vs QuantizeLinear then DequantizeLinear (reference)", y.data(), c.y.data(), y.bytes());
      return;
    }
    default: return;  // compute_qparams, MX, BFP: the targets' agreement below
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  Call c;
  c.op = in.ConsumeIntegralInRange<int>(kQparamsShape, kBfp);

  qdq_qparams_options_init(&c.options);
  c.options.quantized_type = pick_type(in, kQuantizedTypes);
  c.options.scale_type = pick_type(in, kToolkitScaleTypes);
  c.options.method = in.ConsumeIntegralInRange<int>(0, 15) == 0 ? in.ConsumeIntegral<int32_t>()
                                                                 : in.ConsumeIntegralInRange<int32_t>(0, 6);
  c.options.granularity = in.ConsumeIntegralInRange<int>(0, 15) == 0 ? in.ConsumeIntegral<int32_t>()
                                                                      : in.ConsumeIntegralInRange<int32_t>(0, 2);
  c.options.axis = pick_attribute(in, -6, 6, 1);
  const int64_t blocks[] = {0, 1, 2, 3, 4, 7, 8, 16, 32, 33};
  const int64_t block = in.ConsumeIntegralInRange<int>(0, 15) == 0 ? in.ConsumeIntegral<int64_t>() : in.PickValueInArray(blocks);
  c.options.block_size = block;

  qdq_quantize_dequantize_attributes_init(&c.fake);
  c.fake.axis = c.options.axis;
  c.fake.block_size = block;
  c.fake.saturate = pick_attribute(in, 0, 1, 1);
  c.fake.quantized_dtype = in.ConsumeBool() ? 0 : pick_type(in, kCodeTypes);
  c.fake.precision = in.ConsumeBool() ? 0 : pick_type(in, kRealTypes);
  c.fake.output_dtype = in.ConsumeBool() ? 0 : pick_type(in, kRealTypes);
  c.fake.opset = pick_attribute(in, 8, 30, 25);
  c.extended_axis = c.options.axis;

  qdq_mx_attributes_init(&c.mx);
  c.mx_dtype = in.ConsumeBool() ? std::string(in.PickValueInArray(kMxDtypes)) : in.ConsumeRandomLengthString(12);
  c.mx.axis = c.options.axis;
  c.mx.block_size = block;
  c.mx.rounding_mode = pick_attribute(in, -1, 3, 0);
  qdq_bfp_attributes_init(&c.bfp);
  c.bfp_method = in.ConsumeBool() ? std::string(in.PickValueInArray(kBfpMethods)) : in.ConsumeRandomLengthString(12);
  c.bfp.axis = c.options.axis;
  c.bfp.bit_width = pick_attribute(in, 0, 24, 16);
  c.bfp.block_size = in.ConsumeBool() ? 8 : block;
  c.bfp.rounding_mode = pick_attribute(in, -1, 3, 0);
  c.bfp.sub_block_size = pick_attribute(in, 0, 9, 2);
  c.bfp.sub_block_shift_bits = pick_attribute(in, 0, 9, 1);
  c.bfp.convert_to_bfloat_before_bfp = pick_attribute(in, 0, 1, 0);
  c.bfp.use_compiler_version_cpu_kernel = pick_attribute(in, 0, 1, 0);

  // x: float for everything but the fake-quant's int32 x; its shape near what the options need.
  const std::vector<int64_t> x_shape = pick_x_shape(in);
  const bool fake = c.op == kQuantizeDequantize || c.op == kExtendedQuantizeDequantize;
  make_tensor(in, c.x, pick_type(in, fake ? std::span<const int32_t>(kRealTypes) : std::span<const int32_t>(kFloatTypes)),
              x_shape);
  if (fake) {
    const std::vector<int64_t> scale_shape = pick_scale_shape(in, x_shape, c.fake.axis, c.fake.block_size);
    make_tensor(in, c.scale, pick_type(in, kScaleTypes), scale_shape);
    c.has_zero_point = in.ConsumeBool();
    if (c.has_zero_point) {
      make_tensor(in, c.zero_point, pick_type(in, kCodeTypes),
                  in.ConsumeIntegralInRange<int>(0, 7) ? scale_shape : pick_scale_shape(in, x_shape, 0, 0));
    }
  }

  // Outputs of the types and shapes the call needs (sometimes not: Output::make).
  const qdq::Result<std::vector<int64_t>> qshape = qdq::qparams_shape(x_shape, options_of(c.options));
  const std::vector<int64_t> group_shape = qshape.ok() ? qshape.value() : pick_scale_shape(in, x_shape, c.options.axis, block);
  c.y.present = c.out_scale.present = c.out_zero_point.present = c.mask.present = false;
  switch (c.op) {
    case kQparamsShape:
      // Exactly x's rank entries, the documented size: one entry more written is a heap overflow.
      c.shape_out.assign(x_shape.size(), -9);
      break;
    case kDynamicQuantize:
      c.y.present = true;
      c.y.make(in, c.options.quantized_type, x_shape);
      [[fallthrough]];
    case kComputeQparams:
      c.out_scale.present = true;
      c.out_scale.make(in, c.options.scale_type, group_shape);
      c.out_zero_point.present = in.ConsumeIntegralInRange<int>(0, 3) != 0;
      if (c.out_zero_point.present) c.out_zero_point.make(in, c.options.quantized_type, group_shape);
      break;
    case kDynamicQuantizeLinear:
      c.y.present = true;
      c.y.make(in, 2, x_shape);
      break;
    case kQuantizeDequantize:
    case kExtendedQuantizeDequantize: {
      int32_t y_type = 0;
      const qdq_tensor x = c.x.c(), s = c.scale.c(), zp = c.zero_point.c();
      if (c.op == kExtendedQuantizeDequantize ||
          qdq_quantize_dequantize_linear_output_type(&x, &s, c.has_zero_point ? &zp : nullptr, &c.fake, &y_type) != QDQ_OK) {
        y_type = 1;
      }
      c.y.present = true;
      c.y.make(in, y_type, x_shape);
      c.mask.present = in.ConsumeBool();
      if (c.mask.present) c.mask.make(in, 2, x_shape);
      break;
    }
    default:  // MX, BFP: y of x's type and shape, or x itself
      c.y.present = true;
      c.in_place = in.ConsumeBool();
      c.y.make(in, c.x.type, x_shape);
      break;
  }

  const std::vector<unsigned char> x_before(c.x.data(), c.x.data() + (c.x.data() != nullptr ? c.x.bytes() : 0));
  g_call = describe(c);
  const qdq_status_code status = run(c);
  expect_message(status);
  if (status != QDQ_OK) {
    unchanged("y", c.y);
    unchanged("scale", c.out_scale);
    unchanged("zero_point", c.out_zero_point);
    unchanged("mask", c.mask);
    same_bytes("failed call wrote x", x_before.data(), c.x.data(), x_before.size());
    if (c.op == kDynamicQuantizeLinear && (c.y_scale != -1.0f || c.y_zero_point != 77)) finding("failed call wrote the scalars");
    if (c.op == kQparamsShape && c.shape_rank != -5) finding("failed call wrote the rank");
    return 0;
  }
  if (!(c.op == kMx || c.op == kBfp) || !c.in_place) same_bytes("an accepted call wrote x", x_before.data(), c.x.data(), x_before.size());
  check_composition(c);

  // Every target, with every buffer at another address (MX / BFP: in place the other way round).
  const std::vector<unsigned char> want = results(c);
  static const std::vector<int64_t> targets = qdq::kernels::supported_targets();
  unsigned shift = 1;
  for (const int64_t target : targets) {
    qdq::kernels::force_target(target);
    Call again;
    again.op = c.op;
    again.options = c.options;
    again.fake = c.fake;
    again.extended_axis = c.extended_axis;
    again.mx = c.mx;
    again.bfp = c.bfp;
    again.mx_dtype = c.mx_dtype;
    again.bfp_method = c.bfp_method;
    // In place the other way round, where both pointers are real (a null one is legal for no elements).
    const bool flippable = (c.op == kMx || c.op == kBfp) && !c.x.null_data && !c.y.t.null_data;
    again.in_place = flippable ? !c.in_place : c.in_place;
    const unsigned m = shift++ % 8;
    clone_tensor(c.x, m, again.x);
    if (!x_before.empty()) std::memcpy(again.x.data(), x_before.data(), x_before.size());
    clone_tensor(c.scale, (m + 1) % 8, again.scale);
    clone_tensor(c.zero_point, (m + 2) % 8, again.zero_point);
    again.has_zero_point = c.has_zero_point;
    clone_output(c.y, (m + 3) % 8, again.y);
    clone_output(c.out_scale, (m + 4) % 8, again.out_scale);
    clone_output(c.out_zero_point, (m + 5) % 8, again.out_zero_point);
    clone_output(c.mask, (m + 6) % 8, again.mask);
    again.shape_out.assign(c.shape_out.size(), -9);
    if (run(again) != QDQ_OK) finding("refused on target " + qdq::kernels::target_name(target) + ": " + qdq_last_error());
    const std::vector<unsigned char> got = results(again);
    if (got.size() != want.size()) finding("result sizes differ on target " + qdq::kernels::target_name(target));
    same_bytes(("target " + qdq::kernels::target_name(target) + " at other addresses").c_str(), want.data(), got.data(),
               want.size());
  }
  if (!targets.empty()) qdq::kernels::force_target(targets.front());
  return 0;
}
