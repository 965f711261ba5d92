// qdq as an ONNX Runtime custom-op library (load with SessionOptions.register_custom_ops_library):
//   com.amd.quark   v1: ExtendedQuantizeLinear, ExtendedDequantizeLinear (Quark's ops, as documented),
//                       MXQuantizeDequantize, BFPQuantizeDequantize (ort/quark_ops.cpp)
//   com.vai.quantize v1: VitisQuantizeLinear, VitisDequantizeLinear, MXFixNeuron, BFPFixNeuron
//                       (Quark's legacy names)
//   ai.qdq          v1: QuantizeLinear, DequantizeLinear with ONNX version 25 semantics (every type,
//                       granularity and attribute: float4, int2, e8m0 scales, precision, output_dtype);
//                       DynamicQuantizeLinear: ONNX's (method "onnx", the default) or qdq's dynamic
//                       quantization (y, scale, zero point) for every type, granularity and method;
//                       QuantizeDequantizeLinear, the two fused (fake quantization, with an optional
//                       bool straight-through mask output)
// Written against ONNX Runtime's C API only (version 17, served by every newer runtime), so no C++
// exception or RTTI crosses the library boundary: every failure is an OrtStatus with qdq's message.
// Kernels run on ORT's intra-op thread pool through KernelContext_ParallelFor.
#include <onnxruntime_c_api.h>

#include <algorithm>
#include <climits>
#include <iterator>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ort_shared.h"
#include "qdq/fake_quant.hpp"
#include "qdq/qdq.hpp"
#include "qdq/toolkit.hpp"

namespace {

const OrtApi* g_api = nullptr;

// ONNX Runtime's C enum equals TensorProto's codes up to FLOAT4E2M1 (23); after it the C API
// ordered UINT2, INT2, FLOAT8E8M0 (24, 25, 26) while TensorProto has FLOAT8E8M0, UINT2, INT2.
// The 1.17 header predates all three, so they are spelled out here.
constexpr auto kOrtUint2 = static_cast<ONNXTensorElementDataType>(24);
constexpr auto kOrtInt2 = static_cast<ONNXTensorElementDataType>(25);
constexpr auto kOrtFloat8E8M0 = static_cast<ONNXTensorElementDataType>(26);

qdq::ElementType from_ort(ONNXTensorElementDataType type) {
  switch (static_cast<int>(type)) {
    case 24: return qdq::ElementType::kUint2;
    case 25: return qdq::ElementType::kInt2;
    case 26: return qdq::ElementType::kFloat8E8M0;
    default: return static_cast<qdq::ElementType>(type);
  }
}

ONNXTensorElementDataType to_ort(int64_t tensor_proto_code) {
  switch (tensor_proto_code) {
    case 24: return kOrtFloat8E8M0;
    case 25: return kOrtUint2;
    case 26: return kOrtInt2;
    default: return static_cast<ONNXTensorElementDataType>(tensor_proto_code);
  }
}

enum class OpKind {
  kOnnxQuantize,
  kOnnxDequantize,
  kQuarkQuantize,
  kQuarkDequantize,
  kDynamicQuantize,
  kOnnxQuantizeDequantize,
};

bool is_quantize(OpKind kind) { return kind == OpKind::kOnnxQuantize || kind == OpKind::kQuarkQuantize; }

// Our op description; OrtCustomOp first so ORT's pointer converts back. ORT's type-agnostic
// ("undefined") inputs accept a fixed list of tensor types that lacks int2, uint2 and e8m0, so
// those are registered as extra variants of the same op with the type spelled out.
struct QdqOp {
  OrtCustomOp base;
  OpKind kind;
  const char* name;
  ONNXTensorElementDataType input_types[3];
  ONNXTensorElementDataType output_type;
};

const QdqOp& op_of(const OrtCustomOp* op) { return *reinterpret_cast<const QdqOp*>(op); }

// A tensor from ORT as a qdq view; owns the shape.
struct Tensor {
  qdq::ElementType type = qdq::ElementType::kUndefined;
  std::vector<int64_t> shape;
  void* data = nullptr;
  qdq::TensorView view() const { return {type, shape, data}; }
};

// The plan a QuantizeLinear or DequantizeLinear node last made, and the inputs' types and shapes
// it was made for. ONNX Runtime runs a node with the same shapes run after run; planning again each
// time (checking every input, building the operator's name and the layout) cost about 1 us of the
// node's 13 us at 256 elements. Only plans that read no input's values are kept (plan_reads_values):
// ONNX's float zero points (float8 and float4 x, float8 output) must be all zeros, which the planner
// checks on the values, so such nodes plan every run.
class PlanCache {
 public:
  // A copy of the kept plan if it was made for these inputs, with their data; else nullopt.
  std::optional<qdq::Plan> find(const Tensor& x, const Tensor& scale, const Tensor* zero_point) const {
    std::shared_ptr<const qdq::Plan> shared;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!plan_ || !matches(x, scale, zero_point)) return std::nullopt;
      shared = plan_;  // copied outside the lock: a Plan copy allocates
    }
    std::optional<qdq::Plan> plan(*shared);
    plan->x = x.view();
    plan->scale = scale.view();
    if (zero_point != nullptr) plan->zero_point = zero_point->view();  // else the key said absent
    return plan;
  }

  void keep(const qdq::Plan& plan, const Tensor& x, const Tensor& scale, const Tensor* zero_point) const {
    std::vector<int64_t> key;
    for (const Tensor* t : {&x, &scale, zero_point}) append(t, &key);
    auto kept = std::make_shared<qdq::Plan>(plan);
    kept->x = kept->scale = kept->zero_point = {};  // views of this run's tensors; find() sets them
    const std::lock_guard<std::mutex> lock(mutex_);
    key_ = std::move(key);
    plan_ = std::move(kept);
  }

 private:
  // A tensor's part of the key: type, rank, dims; an absent one is -1.
  static void append(const Tensor* t, std::vector<int64_t>* key) {
    if (t == nullptr) {
      key->push_back(-1);
      return;
    }
    key->push_back(static_cast<int64_t>(t->type));
    key->push_back(static_cast<int64_t>(t->shape.size()));
    key->insert(key->end(), t->shape.begin(), t->shape.end());
  }

  // Whether the kept key equals the one `append` would build for these inputs and every tensor has
  // data (ORT may hand an empty tensor without any: such calls plan, and the planner decides).
  bool matches(const Tensor& x, const Tensor& scale, const Tensor* zero_point) const {
    size_t at = 0;
    const auto same = [&](const Tensor* t) {
      if (t == nullptr) return at < key_.size() && key_[at++] == -1;
      if (t->data == nullptr) return false;
      if (at + 2 + t->shape.size() > key_.size() || key_[at] != static_cast<int64_t>(t->type) ||
          key_[at + 1] != static_cast<int64_t>(t->shape.size())) {
        return false;
      }
      at += 2;
      for (int64_t d : t->shape) {
        if (key_[at++] != d) return false;
      }
      return true;
    };
    return same(&x) && same(&scale) && same(zero_point) && at == key_.size();
  }

  mutable std::mutex mutex_;
  mutable std::vector<int64_t> key_;
  mutable std::shared_ptr<const qdq::Plan> plan_;
};

// Attributes read once per node.
struct Kernel {
  OpKind kind;
  int64_t axis = 1;
  int64_t block_size = 0;
  int64_t saturate = 1;
  int64_t output_dtype = 0;
  int64_t precision = 0;
  int64_t quantized_dtype = 0;  // QuantizeDequantizeLinear: QuantizeLinear's output_dtype
  // DynamicQuantizeLinear: "onnx" (ONNX's operator, uint8 per-tensor) or a qdq::ScaleMethod name;
  // the granularity ("per_tensor", "per_axis", "blocked"); output_dtype (default uint8) and
  // scale_dtype (default float32) as TensorProto codes.
  std::string method = "onnx";
  std::string granularity = "per_tensor";
  int64_t scale_dtype = 1;
  PlanCache plans;  // QuantizeLinear / DequantizeLinear (ONNX's and Quark's)
};

// Reads a string attribute if the node has it.
void read_attribute(const OrtKernelInfo* info, const char* name, std::string* value) {
  size_t size = 0;
  if (OrtStatus* status = g_api->KernelInfoGetAttribute_string(info, name, nullptr, &size)) {
    g_api->ReleaseStatus(status);
    return;
  }
  std::string read(size, '\0');
  if (OrtStatus* status = g_api->KernelInfoGetAttribute_string(info, name, read.data(), &size)) {
    g_api->ReleaseStatus(status);
    return;
  }
  read.resize(size > 0 ? size - 1 : 0);  // size counts the terminating NUL
  *value = read;
}

OrtStatus* error(const std::string& message) { return g_api->CreateStatus(ORT_INVALID_ARGUMENT, message.c_str()); }

// Reads an int attribute if the node has it; a missing one keeps the schema default.
void read_attribute(const OrtKernelInfo* info, const char* name, int64_t* value) {
  int64_t read = 0;
  if (OrtStatus* status = g_api->KernelInfoGetAttribute_int64(info, name, &read)) {
    g_api->ReleaseStatus(status);
    return;
  }
  *value = read;
}

OrtStatus* describe(const OrtValue* value, Tensor* tensor) {
  OrtTensorTypeAndShapeInfo* info = nullptr;
  QDQ_ORT_RETURN_IF_ERROR(g_api->GetTensorTypeAndShape(value, &info));
  ONNXTensorElementDataType element = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  size_t rank = 0;
  OrtStatus* status = g_api->GetTensorElementType(info, &element);
  if (status == nullptr) status = g_api->GetDimensionsCount(info, &rank);
  if (status == nullptr) {
    tensor->shape.resize(rank);
    status = g_api->GetDimensions(info, tensor->shape.data(), rank);
  }
  g_api->ReleaseTensorTypeAndShapeInfo(info);
  if (status != nullptr) return status;
  // qdq's front doors check that they know the type.
  tensor->type = from_ort(element);
  return g_api->GetTensorMutableData(const_cast<OrtValue*>(value), &tensor->data);
}

}  // namespace

const OrtApi& qdq_ort::api() { return *g_api; }

// qdq's parallel-for on ORT's thread pool.
void qdq_ort::parallel_for(void* host, void (*task)(void*, uint64_t), void* task_context, uint64_t count) {
  struct Call {
    void (*task)(void*, uint64_t);
    void* task_context;
  } call{task, task_context};
  const auto trampoline = [](void* data, size_t index) {
    const Call& c = *static_cast<const Call*>(data);
    c.task(c.task_context, index);
  };
  OrtStatus* status = g_api->KernelContext_ParallelFor(static_cast<const OrtKernelContext*>(host), trampoline,
                                                       static_cast<size_t>(count), 0, &call);
  if (status != nullptr) {
    // No thread pool available: run here.
    g_api->ReleaseStatus(status);
    for (uint64_t i = 0; i < count; ++i) task(task_context, i);
  }
}

namespace {

qdq::ExecuteOptions on_ort_threads(OrtKernelContext* context) {
  qdq::ExecuteOptions options;
  options.parallel_for.run = &qdq_ort::parallel_for;
  options.parallel_for.host = context;
  return options;
}

// ai.qdq QuantizeDequantizeLinear: y, and the mask when the node asks for output 1 (bool, stored
// as 0 / 1 bytes, which is qdq's uint8 mask).
OrtStatus* compute_fake_quant(const Kernel& kernel, OrtKernelContext* context, const Tensor& x, const Tensor& scale,
                              const qdq::TensorView* zp) {
  const qdq::QuantizeDequantizeAttributes a{kernel.axis,      kernel.block_size,   kernel.saturate, kernel.quantized_dtype,
                                            kernel.precision, kernel.output_dtype, 25};
  const qdq::Result<qdq::QuantizeDequantizePlan> plan = qdq::plan_quantize_dequantize_linear(x.view(), scale.view(), zp, a);
  if (!plan.ok()) return error(plan.status().message());
  OrtValue* output = nullptr;
  QDQ_ORT_RETURN_IF_ERROR(g_api->KernelContext_GetOutput(context, 0, x.shape.data(), x.shape.size(), &output));
  Tensor y;
  QDQ_ORT_RETURN_IF_ERROR(describe(output, &y));
  if (y.type != plan->output_type) {
    return error(plan->operator_name + ": ONNX Runtime allocated y of type code " + std::to_string(static_cast<int>(y.type)) +
                 " but the operator produces " + std::string(qdq::name(plan->output_type)) +
                 "; check the model's declared output type");
  }
  size_t output_count = 0;
  QDQ_ORT_RETURN_IF_ERROR(g_api->KernelContext_GetOutputCount(context, &output_count));
  Tensor mask;
  if (output_count > 1) {
    OrtValue* mask_value = nullptr;
    QDQ_ORT_RETURN_IF_ERROR(g_api->KernelContext_GetOutput(context, 1, x.shape.data(), x.shape.size(), &mask_value));
    if (mask_value != nullptr) {
      QDQ_ORT_RETURN_IF_ERROR(describe(mask_value, &mask));
      mask.type = qdq::ElementType::kUint8;  // ORT's bool: one byte, 0 or 1
    }
  }
  const qdq::MutableTensorView mask_view{mask.type, mask.shape, mask.data};
  const qdq::Status status = qdq::execute(plan.value(), {y.type, y.shape, y.data},
                                          mask.data != nullptr ? &mask_view : nullptr, on_ort_threads(context));
  if (!status.ok()) return error(status.message());
  return nullptr;
}

// Whether planning this node read an input's values, so that its plan holds for these values only:
// ONNX's float zero points (Quark's float16 and bfloat16 ones are read only when executing).
bool plan_reads_values(const Kernel& kernel, const Tensor* zero_point) {
  const bool onnx = kernel.kind == OpKind::kOnnxQuantize || kernel.kind == OpKind::kOnnxDequantize;
  return onnx && zero_point != nullptr && qdq::info(zero_point->type).is_float();
}

// The node's plan for these inputs, from the front door of its operator.
qdq::Result<qdq::Plan> make_plan(const Kernel& kernel, const Tensor& x, const Tensor& scale, const qdq::TensorView* zp) {
  switch (kernel.kind) {
    case OpKind::kOnnxQuantize: {
      qdq::QuantizeLinearAttributes a;
      a.axis = kernel.axis;
      a.block_size = kernel.block_size;
      a.saturate = kernel.saturate;
      a.output_dtype = kernel.output_dtype;
      a.precision = kernel.precision;
      a.opset = 25;
      return qdq::plan_quantize_linear(x.view(), scale.view(), zp, a);
    }
    case OpKind::kOnnxDequantize: {
      qdq::DequantizeLinearAttributes a;
      a.axis = kernel.axis;
      a.block_size = kernel.block_size;
      a.output_dtype = kernel.output_dtype;
      a.opset = 25;
      return qdq::plan_dequantize_linear(x.view(), scale.view(), zp, a);
    }
    case OpKind::kQuarkQuantize:
      return qdq::plan_extended_quantize_linear(x.view(), scale.view(), zp, kernel.axis);
    case OpKind::kQuarkDequantize:
      return qdq::plan_extended_dequantize_linear(x.view(), scale.view(), zp, kernel.axis);
    case OpKind::kOnnxQuantizeDequantize:
    case OpKind::kDynamicQuantize:
      break;
  }
  return qdq::Status::internal("qdq: no plan for this operator kind");
}

OrtStatus* compute(const Kernel& kernel, OrtKernelContext* context) {
  size_t input_count = 0;
  QDQ_ORT_RETURN_IF_ERROR(g_api->KernelContext_GetInputCount(context, &input_count));
  const OrtValue* values[3] = {nullptr, nullptr, nullptr};
  for (size_t i = 0; i < 3 && i < input_count; ++i) {
    QDQ_ORT_RETURN_IF_ERROR(g_api->KernelContext_GetInput(context, i, &values[i]));
  }
  if (values[0] == nullptr || values[1] == nullptr) return error("qdq: inputs x and scale are required");
  Tensor x, scale, zero_point;
  QDQ_ORT_RETURN_IF_ERROR(describe(values[0], &x));
  QDQ_ORT_RETURN_IF_ERROR(describe(values[1], &scale));
  const bool has_zero_point = values[2] != nullptr;
  if (has_zero_point) QDQ_ORT_RETURN_IF_ERROR(describe(values[2], &zero_point));
  const qdq::TensorView zp_view = zero_point.view();
  const qdq::TensorView* zp = has_zero_point ? &zp_view : nullptr;

  if (kernel.kind == OpKind::kOnnxQuantizeDequantize) return compute_fake_quant(kernel, context, x, scale, zp);

  const Tensor* zero_point_tensor = has_zero_point ? &zero_point : nullptr;
  std::optional<qdq::Plan> kept = kernel.plans.find(x, scale, zero_point_tensor);
  qdq::Result<qdq::Plan> plan = kept ? std::move(*kept) : make_plan(kernel, x, scale, zp);
  if (!kept && plan.ok() && !plan_reads_values(kernel, zero_point_tensor)) {
    kernel.plans.keep(plan.value(), x, scale, zero_point_tensor);
  }
  if (!plan.ok()) return error(plan.status().message());

  OrtValue* output = nullptr;
  QDQ_ORT_RETURN_IF_ERROR(g_api->KernelContext_GetOutput(context, 0, x.shape.data(), x.shape.size(), &output));
  Tensor y;
  QDQ_ORT_RETURN_IF_ERROR(describe(output, &y));
  if (y.type != plan->output_type) {
    return error(plan->operator_name + ": ONNX Runtime allocated an output of type code " +
                 std::to_string(static_cast<int>(y.type)) + " but the operator produces " +
                 std::string(qdq::name(plan->output_type)) + "; check the model's declared output type");
  }
  qdq::ExecuteOptions options;
  options.parallel_for.run = &qdq_ort::parallel_for;
  options.parallel_for.host = context;
  const qdq::Status status = qdq::execute(plan.value(), {y.type, y.shape, y.data}, options);
  if (!status.ok()) return error(status.message());
  return nullptr;
}

// --- DynamicQuantizeLinear --------------------------------------------------------------------

constexpr const char* kMethodNames[] = {"minmax", "symmetric", "symmetric_restricted", "mx_floor",
                                        "mx_ceil", "mx_even",  "mx_rceil"};
constexpr const char* kGranularityNames[] = {"per_tensor", "per_axis", "blocked"};

// The toolkit's options from the node's attributes (method other than "onnx").
OrtStatus* dynamic_options(const Kernel& kernel, qdq::QparamsOptions* o) {
  const auto find = [](const auto& names, const std::string& text) {
    for (size_t i = 0; i < std::size(names); ++i) {
      if (text == names[i]) return static_cast<int>(i);
    }
    return -1;
  };
  const int method = find(kMethodNames, kernel.method);
  if (method < 0) {
    return error("ai.qdq DynamicQuantizeLinear: attribute method is '" + kernel.method +
                 "'; it must be onnx, minmax, symmetric, symmetric_restricted, mx_floor, mx_ceil, mx_even or mx_rceil");
  }
  const int granularity = find(kGranularityNames, kernel.granularity);
  if (granularity < 0) {
    return error("ai.qdq DynamicQuantizeLinear: attribute granularity is '" + kernel.granularity +
                 "'; it must be per_tensor, per_axis or blocked");
  }
  o->method = static_cast<qdq::ScaleMethod>(method);
  o->granularity = static_cast<qdq::Granularity>(granularity);
  o->quantized_type = static_cast<qdq::ElementType>(kernel.output_dtype);
  o->scale_type = static_cast<qdq::ElementType>(kernel.scale_dtype);
  o->axis = kernel.axis;
  o->block_size = kernel.block_size;
  return nullptr;
}

OrtStatus* output_of(OrtKernelContext* context, size_t index, const std::vector<int64_t>& shape, Tensor* tensor) {
  OrtValue* value = nullptr;
  QDQ_ORT_RETURN_IF_ERROR(g_api->KernelContext_GetOutput(context, index, shape.data(), shape.size(), &value));
  return describe(value, tensor);
}

OrtStatus* compute_dynamic(const Kernel& kernel, OrtKernelContext* context) {
  const OrtValue* input = nullptr;
  QDQ_ORT_RETURN_IF_ERROR(g_api->KernelContext_GetInput(context, 0, &input));
  if (input == nullptr) return error("ai.qdq DynamicQuantizeLinear: input x is required");
  Tensor x, y, scale, zero_point;
  QDQ_ORT_RETURN_IF_ERROR(describe(input, &x));
  qdq::ExecuteOptions options;
  options.parallel_for.run = &qdq_ort::parallel_for;
  options.parallel_for.host = context;
  if (kernel.method == "onnx") {
    QDQ_ORT_RETURN_IF_ERROR(output_of(context, 0, x.shape, &y));
    QDQ_ORT_RETURN_IF_ERROR(output_of(context, 1, {}, &scale));
    QDQ_ORT_RETURN_IF_ERROR(output_of(context, 2, {}, &zero_point));
    if (y.type != qdq::ElementType::kUint8 || scale.type != qdq::ElementType::kFloat32 ||
        zero_point.type != qdq::ElementType::kUint8) {
      return error("ai.qdq DynamicQuantizeLinear: method onnx produces uint8 y, float32 y_scale and uint8 y_zero_point; "
                   "set output_dtype/scale_dtype only with the other methods");
    }
    const qdq::Status status = qdq::dynamic_quantize_linear(x.view(), {y.type, y.shape, y.data}, static_cast<float*>(scale.data),
                                                            static_cast<uint8_t*>(zero_point.data), options);
    return status.ok() ? nullptr : error(status.message());
  }
  qdq::QparamsOptions o;
  QDQ_ORT_RETURN_IF_ERROR(dynamic_options(kernel, &o));
  const qdq::Result<std::vector<int64_t>> shape = qdq::qparams_shape(x.shape, o);
  if (!shape.ok()) return error(shape.status().message());
  QDQ_ORT_RETURN_IF_ERROR(output_of(context, 0, x.shape, &y));
  QDQ_ORT_RETURN_IF_ERROR(output_of(context, 1, shape.value(), &scale));
  QDQ_ORT_RETURN_IF_ERROR(output_of(context, 2, shape.value(), &zero_point));
  const qdq::MutableTensorView zp{zero_point.type, zero_point.shape, zero_point.data};
  const qdq::Status status = qdq::dynamic_quantize(x.view(), o, {y.type, y.shape, y.data}, {scale.type, scale.shape, scale.data},
                                                   &zp, options);
  return status.ok() ? nullptr : error(status.message());
}

// --- Shape and type inference ----------------------------------------------------------------

// An int attribute of the node being inferred, or `fallback`.
int64_t infer_attribute(const OrtShapeInferContext* context, const char* name, int64_t fallback) {
  const OrtOpAttr* attribute = nullptr;
  if (OrtStatus* status = g_api->ShapeInferContext_GetAttribute(context, name, &attribute)) {
    g_api->ReleaseStatus(status);
    return fallback;
  }
  if (attribute == nullptr) return fallback;
  int64_t value = fallback;
  size_t written = 0;
  if (OrtStatus* status = g_api->ReadOpAttr(attribute, ORT_OP_ATTR_INT, &value, sizeof value, &written)) {
    g_api->ReleaseStatus(status);
    return fallback;
  }
  return value;
}

// Element type of input `index` if the node has it.
bool input_type(const OrtShapeInferContext* context, size_t index, ONNXTensorElementDataType* type) {
  size_t count = 0;
  if (OrtStatus* status = g_api->ShapeInferContext_GetInputCount(context, &count)) {
    g_api->ReleaseStatus(status);
    return false;
  }
  if (index >= count) return false;
  // The context owns the info it hands out (releasing it would free it twice).
  OrtTensorTypeAndShapeInfo* info = nullptr;
  if (OrtStatus* status = g_api->ShapeInferContext_GetInputTypeShape(context, index, &info)) {
    g_api->ReleaseStatus(status);
    return false;
  }
  OrtStatus* status = g_api->GetTensorElementType(info, type);
  if (status != nullptr) {
    g_api->ReleaseStatus(status);
    return false;
  }
  return *type != ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
}

OrtStatus* set_output(OrtShapeInferContext* context, size_t index, int64_t tensor_proto_type,
                      const std::vector<int64_t>& dims) {
  OrtTensorTypeAndShapeInfo* info = nullptr;
  QDQ_ORT_RETURN_IF_ERROR(g_api->CreateTensorTypeAndShapeInfo(&info));
  OrtStatus* status = g_api->SetTensorElementType(info, to_ort(tensor_proto_type));
  if (status == nullptr) status = g_api->SetDimensions(info, dims.data(), dims.size());
  if (status == nullptr) status = g_api->ShapeInferContext_SetOutputTypeShape(context, index, info);
  g_api->ReleaseTensorTypeAndShapeInfo(info);
  return status;
}

// A string attribute of the node being inferred, or `fallback`.
std::string infer_string_attribute(const OrtShapeInferContext* context, const char* name, const char* fallback) {
  const OrtOpAttr* attribute = nullptr;
  if (OrtStatus* status = g_api->ShapeInferContext_GetAttribute(context, name, &attribute)) {
    g_api->ReleaseStatus(status);
    return fallback;
  }
  if (attribute == nullptr) return fallback;
  char text[64] = {};
  size_t written = 0;
  if (OrtStatus* status = g_api->ReadOpAttr(attribute, ORT_OP_ATTR_STRING, text, sizeof text - 1, &written)) {
    g_api->ReleaseStatus(status);
    return fallback;
  }
  return std::string(text, std::min(written, sizeof text - 1));
}

// y has x's shape; the scale and zero point per-tensor [], per-axis [D_axis], blocked x's shape
// with ceil(D_axis / block) (-1 where a dim is not known).
OrtStatus* infer_dynamic(OrtShapeInferContext* context) {
  OrtTensorTypeAndShapeInfo* x_info = nullptr;  // owned by the context
  QDQ_ORT_RETURN_IF_ERROR(g_api->ShapeInferContext_GetInputTypeShape(context, 0, &x_info));
  size_t rank = 0;
  QDQ_ORT_RETURN_IF_ERROR(g_api->GetDimensionsCount(x_info, &rank));
  std::vector<int64_t> dims(rank);
  QDQ_ORT_RETURN_IF_ERROR(g_api->GetDimensions(x_info, dims.data(), rank));
  const std::string method = infer_string_attribute(context, "method", "onnx");
  const std::string granularity = infer_string_attribute(context, "granularity", "per_tensor");
  const int64_t output = method == "onnx" ? 2 : infer_attribute(context, "output_dtype", 2);
  const int64_t scale_type = method == "onnx" ? 1 : infer_attribute(context, "scale_dtype", 1);
  std::vector<int64_t> scale_dims;
  if (method != "onnx" && granularity != "per_tensor" && rank > 0) {
    int64_t axis = infer_attribute(context, "axis", 1);
    axis = axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
    if (axis >= 0 && axis < static_cast<int64_t>(rank)) {
      const int64_t d = dims[static_cast<size_t>(axis)];
      const int64_t block = infer_attribute(context, "block_size", 0);
      if (granularity == "per_axis") {
        scale_dims = {d};
      } else {
        scale_dims = dims;
        scale_dims[static_cast<size_t>(axis)] = d < 0 || block <= 0 ? -1 : (d + block - 1) / block;
      }
    }
  }
  QDQ_ORT_RETURN_IF_ERROR(set_output(context, 0, output, dims));
  QDQ_ORT_RETURN_IF_ERROR(set_output(context, 1, scale_type, scale_dims));
  return set_output(context, 2, output, scale_dims);
}

OrtStatus* infer(const OrtCustomOp* op, OrtShapeInferContext* context) {
  const OpKind kind = op_of(op).kind;
  if (kind == OpKind::kDynamicQuantize) return infer_dynamic(context);
  ONNXTensorElementDataType output = ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8;
  ONNXTensorElementDataType from_input = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  switch (kind) {
    case OpKind::kOnnxQuantize: {
      const int64_t requested = infer_attribute(context, "output_dtype", 0);
      if (requested != 0) output = to_ort(requested);
      else if (input_type(context, 2, &from_input)) output = from_input;
      break;
    }
    case OpKind::kOnnxDequantize: {
      const int64_t requested = infer_attribute(context, "output_dtype", 0);
      if (requested != 0) output = to_ort(requested);
      else if (input_type(context, 1, &from_input)) output = from_input;
      else output = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
      break;
    }
    case OpKind::kQuarkQuantize:
      if (input_type(context, 2, &from_input)) output = from_input;
      break;
    case OpKind::kQuarkDequantize:
    case OpKind::kDynamicQuantize:
      output = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
      break;
    case OpKind::kOnnxQuantizeDequantize: {  // y: output_dtype, else x's type (float32 for int32 x)
      const int64_t requested = infer_attribute(context, "output_dtype", 0);
      output = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
      if (requested != 0) {
        output = to_ort(requested);
      } else if (input_type(context, 0, &from_input) && (from_input == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 ||
                                                         from_input == ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16)) {
        output = from_input;
      }
      break;
    }
  }
  QDQ_ORT_RETURN_IF_ERROR(qdq_ort::infer_output_like_x(context, output));
  if (kind == OpKind::kOnnxQuantizeDequantize) {
    // The mask: bool of x's shape. A node without output 1 refuses it, which is not an error.
    OrtTensorTypeAndShapeInfo* x_info = nullptr;  // owned by the context
    QDQ_ORT_RETURN_IF_ERROR(g_api->ShapeInferContext_GetInputTypeShape(context, 0, &x_info));
    size_t rank = 0;
    QDQ_ORT_RETURN_IF_ERROR(g_api->GetDimensionsCount(x_info, &rank));
    std::vector<int64_t> dims(rank);
    QDQ_ORT_RETURN_IF_ERROR(g_api->GetDimensions(x_info, dims.data(), rank));
    OrtTensorTypeAndShapeInfo* mask_info = nullptr;
    QDQ_ORT_RETURN_IF_ERROR(g_api->CreateTensorTypeAndShapeInfo(&mask_info));
    OrtStatus* status = g_api->SetTensorElementType(mask_info, ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL);
    if (status == nullptr) status = g_api->SetDimensions(mask_info, dims.data(), dims.size());
    if (status == nullptr) {
      if (OrtStatus* absent = g_api->ShapeInferContext_SetOutputTypeShape(context, 1, mask_info)) {
        g_api->ReleaseStatus(absent);
      }
    }
    g_api->ReleaseTensorTypeAndShapeInfo(mask_info);
    return status;
  }
  return nullptr;
}

}  // namespace

OrtStatus* qdq_ort::infer_output_like_x(OrtShapeInferContext* context, ONNXTensorElementDataType output) {
  OrtTensorTypeAndShapeInfo* x_info = nullptr;  // owned by the context
  QDQ_ORT_RETURN_IF_ERROR(g_api->ShapeInferContext_GetInputTypeShape(context, 0, &x_info));
  size_t rank = 0;
  std::vector<int64_t> dims;
  OrtStatus* status = g_api->GetDimensionsCount(x_info, &rank);
  if (status == nullptr && output == ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED) status = g_api->GetTensorElementType(x_info, &output);
  if (status == nullptr) {
    dims.resize(rank);
    status = g_api->GetDimensions(x_info, dims.data(), rank);
  }
  if (status != nullptr) return status;
  OrtTensorTypeAndShapeInfo* y_info = nullptr;
  QDQ_ORT_RETURN_IF_ERROR(g_api->CreateTensorTypeAndShapeInfo(&y_info));
  status = g_api->SetTensorElementType(y_info, output);
  if (status == nullptr) status = g_api->SetDimensions(y_info, dims.data(), dims.size());
  if (status == nullptr) status = g_api->ShapeInferContext_SetOutputTypeShape(context, 0, y_info);
  g_api->ReleaseTensorTypeAndShapeInfo(y_info);
  return status;
}

void qdq_ort::set_common_op_fields(OrtCustomOp& op) {
  op.version = ORT_API_VERSION;
  op.GetExecutionProviderType = [](const OrtCustomOp*) { return "CPUExecutionProvider"; };
  op.GetInputMemoryType = [](const OrtCustomOp*, size_t) { return OrtMemTypeDefault; };
  op.GetVariadicInputMinArity = [](const OrtCustomOp*) { return 1; };
  op.GetVariadicInputHomogeneity = [](const OrtCustomOp*) { return 0; };
  op.GetVariadicOutputMinArity = [](const OrtCustomOp*) { return 1; };
  op.GetVariadicOutputHomogeneity = [](const OrtCustomOp*) { return 0; };
  // Legacy entry points are not used: ORT calls the V2 ones, which return a status.
  op.CreateKernel = nullptr;
  op.KernelCompute = nullptr;
  op.GetStartVersion = [](const OrtCustomOp*) { return 1; };
  op.GetEndVersion = [](const OrtCustomOp*) { return INT_MAX; };
}

namespace {
using qdq_ort::guarded;

// --- The OrtCustomOp table -------------------------------------------------------------------

constexpr ONNXTensorElementDataType kAny = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;

QdqOp make_op(OpKind kind, const char* name, ONNXTensorElementDataType x = kAny,
              ONNXTensorElementDataType scale = kAny, ONNXTensorElementDataType zero_point = kAny,
              ONNXTensorElementDataType output = kAny) {
  QdqOp op{};
  op.kind = kind;
  op.name = name;
  op.input_types[0] = x;
  op.input_types[1] = scale;
  op.input_types[2] = zero_point;
  op.output_type = output;
  OrtCustomOp& base = op.base;
  qdq_ort::set_common_op_fields(base);
  base.GetName = [](const OrtCustomOp* self) { return op_of(self).name; };
  // Undefined = any element type: the front doors check types and name the rule when one is not
  // allowed.
  base.GetInputType = [](const OrtCustomOp* self, size_t index) { return op_of(self).input_types[index]; };
  // DynamicQuantizeLinear: one input (x), three outputs (y, scale, zero point).
  base.GetInputTypeCount = [](const OrtCustomOp* self) -> size_t {
    return op_of(self).kind == OpKind::kDynamicQuantize ? 1 : 3;
  };
  // QuantizeDequantizeLinear has a second, optional output: the bool mask.
  base.GetOutputType = [](const OrtCustomOp* self, size_t index) {
    return index == 1 && op_of(self).kind == OpKind::kOnnxQuantizeDequantize ? ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL
                                                                              : op_of(self).output_type;
  };
  base.GetOutputTypeCount = [](const OrtCustomOp* self) -> size_t {
    const OpKind kind = op_of(self).kind;
    return kind == OpKind::kDynamicQuantize ? 3 : kind == OpKind::kOnnxQuantizeDequantize ? 2 : 1;
  };
  base.GetInputCharacteristic = [](const OrtCustomOp* self, size_t index) {
    return index == 2 && op_of(self).kind != OpKind::kDynamicQuantize ? INPUT_OUTPUT_OPTIONAL : INPUT_OUTPUT_REQUIRED;
  };
  base.GetOutputCharacteristic = [](const OrtCustomOp* self, size_t index) {
    return index == 1 && op_of(self).kind == OpKind::kOnnxQuantizeDequantize ? INPUT_OUTPUT_OPTIONAL
                                                                              : INPUT_OUTPUT_REQUIRED;
  };
  base.KernelDestroy = [](void* kernel) { delete static_cast<Kernel*>(kernel); };
  base.CreateKernelV2 = [](const OrtCustomOp* self, const OrtApi*, const OrtKernelInfo* info, void** kernel) {
    return guarded([&]() -> OrtStatus* {
      auto created = std::make_unique<Kernel>();
      created->kind = op_of(self).kind;
      read_attribute(info, "axis", &created->axis);
      const bool onnx = created->kind == OpKind::kOnnxQuantize || created->kind == OpKind::kOnnxDequantize ||
                        created->kind == OpKind::kOnnxQuantizeDequantize;
      if (onnx) {
        read_attribute(info, "block_size", &created->block_size);
        read_attribute(info, "output_dtype", &created->output_dtype);
      }
      if (created->kind == OpKind::kOnnxQuantize || created->kind == OpKind::kOnnxQuantizeDequantize) {
        read_attribute(info, "saturate", &created->saturate);
        read_attribute(info, "precision", &created->precision);
      }
      if (created->kind == OpKind::kOnnxQuantizeDequantize) read_attribute(info, "quantized_dtype", &created->quantized_dtype);
      if (created->kind == OpKind::kDynamicQuantize) {
        created->output_dtype = 2;  // uint8
        read_attribute(info, "block_size", &created->block_size);
        read_attribute(info, "output_dtype", &created->output_dtype);
        read_attribute(info, "scale_dtype", &created->scale_dtype);
        read_attribute(info, "method", &created->method);
        read_attribute(info, "granularity", &created->granularity);
      }
      *kernel = created.release();
      return nullptr;
    });
  };
  base.KernelComputeV2 = [](void* kernel, OrtKernelContext* context) {
    return guarded([&] {
      const Kernel& k = *static_cast<const Kernel*>(kernel);
      return k.kind == OpKind::kDynamicQuantize ? compute_dynamic(k, context) : compute(k, context);
    });
  };
  base.InferOutputShapeFn = [](const OrtCustomOp* self, OrtShapeInferContext* context) {
    return guarded([&] { return infer(self, context); });
  };
  return op;
}

// The op tables live for the whole process: ORT keeps pointers to them in every session.
const std::vector<QdqOp>& ops() {
  static const std::vector<QdqOp> table = [] {
    std::vector<QdqOp> all = {
        make_op(OpKind::kQuarkQuantize, "ExtendedQuantizeLinear"),
        make_op(OpKind::kQuarkDequantize, "ExtendedDequantizeLinear"),
        make_op(OpKind::kQuarkQuantize, "VitisQuantizeLinear"),
        make_op(OpKind::kQuarkDequantize, "VitisDequantizeLinear"),
    };
    // ai.qdq: one variant per (x, scale, output) type combination of QuantizeLinear-25 and
    // DequantizeLinear-25, so that ORT's schema lists every type explicitly.
    using E = qdq::ElementType;
    const E quantized[] = {E::kUint8, E::kInt8,  E::kUint16, E::kInt16, E::kUint4, E::kInt4, E::kUint2, E::kInt2,
                           E::kFloat8E4M3FN, E::kFloat8E4M3FNUZ, E::kFloat8E5M2, E::kFloat8E5M2FNUZ, E::kFloat4E2M1};
    const E q_inputs[] = {E::kFloat32, E::kFloat16, E::kBfloat16, E::kInt32};
    const E q_scales[] = {E::kFloat32, E::kFloat16, E::kBfloat16, E::kInt32, E::kFloat8E8M0};
    const E dq_scales[] = {E::kFloat32, E::kFloat16, E::kBfloat16, E::kFloat8E8M0};
    const E dq_outputs[] = {E::kFloat32, E::kFloat16, E::kBfloat16};
    const auto ort = [](E type) { return to_ort(static_cast<int64_t>(type)); };
    for (E x : q_inputs) {
      for (E scale : q_scales) {
        for (E out : quantized) {
          all.push_back(make_op(OpKind::kOnnxQuantize, "QuantizeLinear", ort(x), ort(scale), ort(out), ort(out)));
        }
      }
    }
    for (E x : quantized) {
      for (E scale : dq_scales) {
        for (E out : dq_outputs) {
          all.push_back(make_op(OpKind::kOnnxDequantize, "DequantizeLinear", ort(x), ort(scale), ort(x), ort(out)));
        }
      }
    }
    for (E scale : dq_scales) {  // int32 x
      for (E out : dq_outputs) {
        all.push_back(make_op(OpKind::kOnnxDequantize, "DequantizeLinear", ort(E::kInt32), ort(scale), ort(E::kInt32), ort(out)));
      }
    }
    // QuantizeDequantizeLinear: one variant per (scale, zero point) type pair the two operators
    // take. ORT builds one schema per op from its variants, input by input: an input that is
    // any-type in one variant must be any-type in all, and the any-type list lacks e8m0 and the
    // 2-bit types, so scale and zero point are spelled out while x and y (whose types are all on
    // that list) stay any-type, which keeps session creation fast (52 variants, not 624).
    for (E scale : dq_scales) {
      for (E codes : quantized) {
        all.push_back(make_op(OpKind::kOnnxQuantizeDequantize, "QuantizeDequantizeLinear", kAny, ort(scale), ort(codes), kAny));
      }
    }
    // DynamicQuantizeLinear: one variant per x type; outputs typed by attributes (inference).
    for (E x : {E::kFloat32, E::kFloat16, E::kBfloat16}) {
      all.push_back(make_op(OpKind::kDynamicQuantize, "DynamicQuantizeLinear", ort(x)));
    }
    return all;
  }();
  return table;
}

struct DomainSpec {
  const char* domain;
  size_t first_op;
  size_t op_count;
};

std::mutex g_domains_mutex;
std::vector<OrtCustomOpDomain*> g_domains;  // kept alive: sessions refer to them

}  // namespace

extern "C" __attribute__((visibility("default"))) OrtStatus* RegisterCustomOps(OrtSessionOptions* options,
                                                                               const OrtApiBase* api_base) {
  if (api_base == nullptr) return nullptr;
  g_api = api_base->GetApi(ORT_API_VERSION);
  if (g_api == nullptr) return nullptr;  // a runtime older than the C API version 17 cannot be served
  return guarded([&]() -> OrtStatus* {
    static const DomainSpec domains[] = {
        {"com.amd.quark", 0, 2}, {"com.vai.quantize", 2, 2}, {"ai.qdq", 4, ops().size() - 4}};
    std::lock_guard<std::mutex> lock(g_domains_mutex);
    for (const DomainSpec& spec : domains) {
      OrtCustomOpDomain* domain = nullptr;
      QDQ_ORT_RETURN_IF_ERROR(g_api->CreateCustomOpDomain(spec.domain, &domain));
      g_domains.push_back(domain);
      for (size_t i = 0; i < spec.op_count; ++i) {
        QDQ_ORT_RETURN_IF_ERROR(g_api->CustomOpDomain_Add(domain, &ops()[spec.first_op + i].base));
      }
      if (spec.first_op < 4) {  // Quark's domains also get its MX / BFP fake-quantize ops
        QDQ_ORT_RETURN_IF_ERROR(qdq_ort::add_quark_block_ops(domain, spec.first_op == 2));
      }
      QDQ_ORT_RETURN_IF_ERROR(g_api->AddCustomOpDomain(options, domain));
    }
    return nullptr;
  });
}
