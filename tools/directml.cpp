// `qdq directml`: checks a DirectML element-wise (de)quantize operator description against the
// feature-level tables, at one DML_FEATURE_LEVEL or at every one, without data.
#include "directml.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#include "qdq/directml.hpp"

namespace qdq::tools {
namespace {

// "FLOAT32", "float32", "uint8", ...: DirectML's spelling or qdq's, any case.
std::optional<ElementType> parse_type(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const ElementTypeInfo& row : all_element_types()) {
    if (text == row.name) return row.type;
  }
  return std::nullopt;
}

Status parse_list(const std::string& flag, const std::string& text, std::vector<int64_t>* values) {
  values->clear();
  if (text.empty()) return {};
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    try {
      size_t used = 0;
      values->push_back(std::stoll(item, &used));
      if (used != item.size()) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      return Status::invalid_argument(flag + " '" + text + "': '" + item + "' is not an integer");
    }
    start = comma + 1;
  }
  return {};
}

// 0 where `operand` broadcasts over x, its own row-major strides elsewhere.
Result<std::vector<int64_t>> broadcast_strides(const char* role, const TensorView& x, const TensorView& operand) {
  const auto shape_text = [](std::span<const int64_t> shape) {
    std::string text = "[";
    for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + "]";
  };
  bool broadcasts = operand.shape.size() == x.shape.size();
  for (size_t d = 0; broadcasts && d < x.shape.size(); ++d) {
    broadcasts = operand.shape[d] == x.shape[d] || operand.shape[d] == 1;
  }
  if (!broadcasts) {
    return Status::invalid_argument(std::string(role) + " has shape " + shape_text(operand.shape) + " and x " +
                                    shape_text(x.shape) + "; with --feature-level each dimension must be x's or 1 "
                                    "(it becomes a stride of 0)");
  }
  std::vector<int64_t> strides(x.shape.size());
  int64_t stride = 1;
  for (size_t d = x.shape.size(); d-- > 0;) {
    strides[d] = operand.shape[d] == x.shape[d] ? stride : 0;
    stride *= operand.shape[d];
  }
  return strides;
}

}  // namespace

Result<Plan> plan_directml_broadcast(Operation operation, const TensorView& x, const TensorView& scale,
                                     const TensorView* zero_point, ElementType output_type,
                                     const std::string& feature_level) {
  const std::optional<DmlFeatureLevel> level = parse_dml_feature_level(feature_level);
  if (!level) {
    return Status::invalid_argument("--feature-level '" + feature_level +
                                    "' is not a DML_FEATURE_LEVEL (1_0 to 6_4, as 6_2, 6.2 or DML_FEATURE_LEVEL_6_2)");
  }
  Result<std::vector<int64_t>> scale_strides = broadcast_strides("the scale", x, scale);
  if (!scale_strides.ok()) return scale_strides.status();
  Result<std::vector<int64_t>> zp_strides = std::vector<int64_t>{};
  if (zero_point != nullptr) zp_strides = broadcast_strides("the zero point", x, *zero_point);
  if (!zp_strides.ok()) return zp_strides.status();
  if (output_type == ElementType::kUndefined) {
    output_type = operation == Operation::kDequantize ? scale.type
                  : zero_point != nullptr            ? zero_point->type
                                                     : ElementType::kUint8;
  }
  const DmlTensorDesc input{x.type, x.shape, {}, 0, x.data};
  const DmlTensorDesc scale_desc{scale.type, x.shape, scale_strides.value(), 0, scale.data};
  const DmlTensorDesc zp_desc{zero_point ? zero_point->type : ElementType::kUndefined, x.shape, zp_strides.value(), 0,
                              zero_point ? zero_point->data : nullptr};
  const DmlTensorDesc output{output_type, x.shape, {}, 0, nullptr};
  const DmlTensorDesc* zp = zero_point ? &zp_desc : nullptr;
  return operation == Operation::kQuantize ? plan_directml_quantize_linear(input, scale_desc, zp, output, *level)
                                           : plan_directml_dequantize_linear(input, scale_desc, zp, output, *level);
}

CLI::App* add_directml_command(CLI::App& app, DirectmlOptions& o) {
  CLI::App* command = app.add_subcommand(
      "directml",
      "Check a DirectML element-wise (de)quantize operator description against the feature-level tables");
  command->add_option("OPERATOR", o.operation, "quantize or dequantize")
      ->required()
      ->check(CLI::IsMember({"quantize", "dequantize"}));
  command->add_option("--sizes", o.sizes, "Sizes of all four tensors, e.g. 1,3,224,224")->required();
  command->add_option("--input", o.input, "InputTensor DataType (FLOAT32, float16, INT32, UINT8, ...)")->required();
  command->add_option("--scale", o.scale, "ScaleTensor DataType")->required();
  command->add_option("--zero-point", o.zero_point, "ZeroPointTensor DataType (omit: no zero point)");
  command->add_option("--output", o.output, "OutputTensor DataType")->required();
  command->add_option("--input-strides", o.input_strides, "InputTensor Strides in elements (default: packed)");
  command->add_option("--scale-strides", o.scale_strides, "ScaleTensor Strides, 0 repeats (default: packed)");
  command->add_option("--zero-point-strides", o.zero_point_strides, "ZeroPointTensor Strides (default: packed)");
  command->add_option("--output-strides", o.output_strides, "OutputTensor Strides (default: packed)");
  command->add_option("--feature-level", o.feature_level,
                      "DML_FEATURE_LEVEL to check (6_2, 6.2 or DML_FEATURE_LEVEL_6_2); default: every level");
  command->footer(
      "\nPrints, per feature level, 'accepted' or the first rule the description breaks (the tensor, the\n"
      "value, the rule and the lowest level that accepts it). Exit status 1 when the checked level (or, without\n"
      "--feature-level, every level) rejects it. Sizes and strides count elements; TotalTensorSizeInBytes is\n"
      "DMLCalcBufferTensorSize's. The arithmetic of these descriptions is in the C, C++ and Python APIs.\n");
  return command;
}

Status run_directml(const DirectmlOptions& o, bool* accepted) {
  struct Parsed {
    const char* flag;
    const std::string* type_text;
    const std::string* strides_text;
    ElementType type = ElementType::kUndefined;
    std::vector<int64_t> strides;
  };
  std::vector<int64_t> sizes;
  if (Status s = parse_list("--sizes", o.sizes, &sizes); !s.ok()) return s;
  Parsed tensors[4] = {{"--input", &o.input, &o.input_strides},
                       {"--scale", &o.scale, &o.scale_strides},
                       {"--zero-point", &o.zero_point, &o.zero_point_strides},
                       {"--output", &o.output, &o.output_strides}};
  for (Parsed& t : tensors) {
    if (t.type_text->empty()) continue;
    const std::optional<ElementType> type = parse_type(*t.type_text);
    if (!type) return Status::invalid_argument(std::string(t.flag) + " '" + *t.type_text + "' is not a type qdq knows");
    t.type = *type;
    if (Status s = parse_list(std::string(t.flag) + "-strides", *t.strides_text, &t.strides); !s.ok()) return s;
  }
  std::vector<DmlFeatureLevel> levels(dml_feature_levels().begin(), dml_feature_levels().end());
  if (!o.feature_level.empty()) {
    const std::optional<DmlFeatureLevel> level = parse_dml_feature_level(o.feature_level);
    if (!level) {
      return Status::invalid_argument("--feature-level '" + o.feature_level +
                                      "' is not a DML_FEATURE_LEVEL (1_0 to 6_4, as 6_2, 6.2 or DML_FEATURE_LEVEL_6_2)");
    }
    levels = {*level};
  }
  // Plans are made, never executed: the input buffers are never read, so one placeholder byte
  // stands for each.
  static const unsigned char placeholder = 0;
  DmlTensorDesc descs[4];
  for (int i = 0; i < 4; ++i) {
    descs[i] = DmlTensorDesc{tensors[i].type, sizes, tensors[i].strides, 0, i == 3 ? nullptr : &placeholder};
  }
  const DmlTensorDesc* zero_point = o.zero_point.empty() ? nullptr : &descs[2];
  *accepted = false;
  for (DmlFeatureLevel level : levels) {
    const Result<Plan> plan = o.operation == "quantize"
                                  ? plan_directml_quantize_linear(descs[0], descs[1], zero_point, descs[3], level)
                                  : plan_directml_dequantize_linear(descs[0], descs[1], zero_point, descs[3], level);
    *accepted |= plan.ok();
    std::printf("%-22s %s\n", dml_feature_level_name(level).c_str(),
                plan.ok() ? "accepted" : ("rejected: " + plan.status().message()).c_str());
  }
  return {};
}

}  // namespace qdq::tools
