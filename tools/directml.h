// `qdq directml`: a DirectML operator description checked against the feature-level tables.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

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

}  // namespace qdq::tools
