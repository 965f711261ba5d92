// `qdq directml`: a DirectML operator description checked against the feature-level tables.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "qdq/qdq.hpp"
#include "qdq/status.h"

namespace qdq::tools {

struct DirectmlOptions {
  std::string operation;  // "quantize" or "dequantize"
  std::string sizes;      // "1,3,224,224"
  std::string input, scale, zero_point, output;  // DataTypes; zero_point "" = none
  std::string input_strides, scale_strides, zero_point_strides, output_strides;  // "" = packed
  std::string feature_level;  // "" = every level
};

CLI::App* add_directml_command(CLI::App& app, DirectmlOptions& options);

// Prints one verdict line per level; *accepted: whether any checked level accepts.
Status run_directml(const DirectmlOptions& options, bool* accepted);

// `--operator elementwise --feature-level L`: the convenience door's operands (scale and zero
// point of x's rank, each dim x's or 1) described as DirectML describes them (x's Sizes, 0-strides
// where they broadcast) and planned through the DirectML door at level L. output_type kUndefined:
// the zero point's type (uint8 without one) for quantize, the scale's for dequantize.
Result<Plan> plan_directml_broadcast(Operation operation, const TensorView& x, const TensorView& scale,
                                     const TensorView* zero_point, ElementType output_type,
                                     const std::string& feature_level);

}  // namespace qdq::tools
