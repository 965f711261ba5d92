// Quark's MXQuantizeDequantize and BFPQuantizeDequantize (com.amd.quark, version 1; the legacy
// MXFixNeuron / BFPFixNeuron in com.vai.quantize) in qdq's ONNX Runtime library: the attribute
// names and defaults of Quark's kernels, x float32 or float16, y of x's type and shape, computed
// by qdq::mx_quantize_dequantize / bfp_quantize_dequantize on ORT's intra-op thread pool.
#include <climits>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "ort_shared.h"
#include "qdq/quark_ops.hpp"

namespace {

enum class BlockOpKind { kMx, kBfp };

struct BlockOpSpec {
  OrtCustomOp base;  // first, so that ORT's pointer converts back
  BlockOpKind kind;
  const char* name;
};

const BlockOpSpec& spec_of(const OrtCustomOp* op) { return *reinterpret_cast<const BlockOpSpec*>(op); }

struct BlockKernel {
  BlockOpKind kind;
  qdq::MxQuantizeDequantizeAttributes mx;
  qdq::BfpQuantizeDequantizeAttributes bfp;
};

OrtStatus* invalid(const std::string& message) {
  return qdq_ort::api().CreateStatus(ORT_INVALID_ARGUMENT, message.c_str());
}

// Attribute readers: a missing attribute keeps the default (Quark's).
void read_int(const OrtKernelInfo* info, const char* name, int64_t* value) {
  int64_t read = 0;
  if (OrtStatus* status = qdq_ort::api().KernelInfoGetAttribute_int64(info, name, &read)) {
    qdq_ort::api().ReleaseStatus(status);
    return;
  }
  *value = read;
}

void read_string(const OrtKernelInfo* info, const char* name, std::string* value) {
  size_t size = 0;
  if (OrtStatus* status = qdq_ort::api().KernelInfoGetAttribute_string(info, name, nullptr, &size)) {
    qdq_ort::api().ReleaseStatus(status);
    return;
  }
  std::string read(size, '\0');
  if (OrtStatus* status = qdq_ort::api().KernelInfoGetAttribute_string(info, name, read.data(), &size)) {
    qdq_ort::api().ReleaseStatus(status);
    return;
  }
  read.resize(size > 0 ? size - 1 : 0);  // the size counts the terminating NUL
  *value = read;
}

// Type and shape of a tensor value.
OrtStatus* type_and_shape(const OrtValue* value, ONNXTensorElementDataType* type, std::vector<int64_t>* shape) {
  const OrtApi& api = qdq_ort::api();
  OrtTensorTypeAndShapeInfo* info = nullptr;
  QDQ_ORT_RETURN_IF_ERROR(api.GetTensorTypeAndShape(value, &info));
  size_t rank = 0;
  OrtStatus* status = api.GetTensorElementType(info, type);
  if (status == nullptr) status = api.GetDimensionsCount(info, &rank);
  if (status == nullptr) {
    shape->resize(rank);
    status = api.GetDimensions(info, shape->data(), rank);
  }
  api.ReleaseTensorTypeAndShapeInfo(info);
  return status;
}

OrtStatus* compute(const BlockKernel& kernel, OrtKernelContext* context) {
  const OrtApi& api = qdq_ort::api();
  const OrtValue* input = nullptr;
  QDQ_ORT_RETURN_IF_ERROR(api.KernelContext_GetInput(context, 0, &input));
  if (input == nullptr) return invalid("qdq: input x is required");
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  std::vector<int64_t> shape;
  QDQ_ORT_RETURN_IF_ERROR(type_and_shape(input, &type, &shape));
  void* x = nullptr;
  QDQ_ORT_RETURN_IF_ERROR(api.GetTensorMutableData(const_cast<OrtValue*>(input), &x));
  OrtValue* output = nullptr;
  QDQ_ORT_RETURN_IF_ERROR(api.KernelContext_GetOutput(context, 0, shape.data(), shape.size(), &output));
  void* y = nullptr;
  QDQ_ORT_RETURN_IF_ERROR(api.GetTensorMutableData(output, &y));
  // float32 and float16 share ONNX's codes with qdq's ElementType; anything else is named by the door.
  const auto element = static_cast<qdq::ElementType>(type);
  qdq::ExecuteOptions options;
  options.parallel_for.run = &qdq_ort::parallel_for;
  options.parallel_for.host = context;
  const qdq::Status status =
      kernel.kind == BlockOpKind::kMx
          ? qdq::mx_quantize_dequantize({element, shape, x}, kernel.mx, {element, shape, y}, options)
          : qdq::bfp_quantize_dequantize({element, shape, x}, kernel.bfp, {element, shape, y}, options);
  if (!status.ok()) return invalid(status.message());
  return nullptr;
}

using qdq_ort::guarded;

BlockOpSpec make_block_op(BlockOpKind kind, const char* name) {
  BlockOpSpec op{};
  op.kind = kind;
  op.name = name;
  OrtCustomOp& base = op.base;
  qdq_ort::set_common_op_fields(base);
  base.GetName = [](const OrtCustomOp* self) { return spec_of(self).name; };
  // Any type, as Quark declares; the door accepts float32 and float16 and names anything else.
  base.GetInputType = [](const OrtCustomOp*, size_t) { return ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED; };
  base.GetInputTypeCount = [](const OrtCustomOp*) -> size_t { return 1; };
  base.GetOutputType = [](const OrtCustomOp*, size_t) { return ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED; };
  base.GetOutputTypeCount = [](const OrtCustomOp*) -> size_t { return 1; };
  base.GetInputCharacteristic = [](const OrtCustomOp*, size_t) { return INPUT_OUTPUT_REQUIRED; };
  base.GetOutputCharacteristic = [](const OrtCustomOp*, size_t) { return INPUT_OUTPUT_REQUIRED; };
  base.KernelDestroy = [](void* kernel) { delete static_cast<BlockKernel*>(kernel); };
  base.CreateKernelV2 = [](const OrtCustomOp* self, const OrtApi*, const OrtKernelInfo* info, void** kernel) {
    return guarded([&]() -> OrtStatus* {
      auto created = std::make_unique<BlockKernel>();
      created->kind = spec_of(self).kind;
      if (created->kind == BlockOpKind::kMx) {
        qdq::MxQuantizeDequantizeAttributes& a = created->mx;
        read_string(info, "element_dtype", &a.element_dtype);
        read_int(info, "axis", &a.axis);
        read_int(info, "block_size", &a.block_size);
        read_int(info, "rounding_mode", &a.rounding_mode);
      } else {
        qdq::BfpQuantizeDequantizeAttributes& a = created->bfp;
        read_string(info, "bfp_method", &a.bfp_method);
        read_int(info, "axis", &a.axis);
        read_int(info, "bit_width", &a.bit_width);
        read_int(info, "block_size", &a.block_size);
        read_int(info, "rounding_mode", &a.rounding_mode);
        read_int(info, "sub_block_size", &a.sub_block_size);
        read_int(info, "sub_block_shift_bits", &a.sub_block_shift_bits);
        read_int(info, "convert_to_bfloat_before_bfp", &a.convert_to_bfloat_before_bfp);
        read_int(info, "use_compiler_version_cpu_kernel", &a.use_compiler_version_cpu_kernel);
      }
      *kernel = created.release();
      return nullptr;
    });
  };
  base.KernelComputeV2 = [](void* kernel, OrtKernelContext* context) {
    return guarded([&] { return compute(*static_cast<const BlockKernel*>(kernel), context); });
  };
  base.InferOutputShapeFn = [](const OrtCustomOp*, OrtShapeInferContext* context) {
    return guarded([&] { return qdq_ort::infer_output_like_x(context, ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED); });
  };
  return op;
}

}  // namespace

OrtStatus* qdq_ort::add_quark_block_ops(OrtCustomOpDomain* domain, bool legacy_names) {
  // Process-lifetime tables: sessions keep pointers to them.
  static const BlockOpSpec current[] = {make_block_op(BlockOpKind::kMx, "MXQuantizeDequantize"),
                                        make_block_op(BlockOpKind::kBfp, "BFPQuantizeDequantize")};
  static const BlockOpSpec legacy[] = {make_block_op(BlockOpKind::kMx, "MXFixNeuron"),
                                       make_block_op(BlockOpKind::kBfp, "BFPFixNeuron")};
  for (const BlockOpSpec& op : legacy_names ? legacy : current) {
    QDQ_ORT_RETURN_IF_ERROR(api().CustomOpDomain_Add(domain, &op.base));
  }
  return nullptr;
}
