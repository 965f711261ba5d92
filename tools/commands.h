// The file-based commands of the qdq tool: quantize, dequantize, roundtrip (with calibration) and
// bench. main.cpp only parses flags into these structs; everything here reports failure as a
// Status whose message main prints as one "qdq: error: ..." line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "qdq/status.h"

namespace qdq::tools {

// Flags shared by quantize and roundtrip. Strings are kept as typed by the user; type names have
// already been checked by main's validators, numbers and paths are resolved here.
// The operator family a command runs: "onnx" (QuantizeLinear / DequantizeLinear), "extended"
// (AMD Quark ExtendedQuantizeLinear / ExtendedDequantizeLinear) or "elementwise" (DirectML).
struct QuantizeOptions {
  std::string family = "onnx";
  std::string input;
  std::string output;          // quantize: y; roundtrip: optional dequantized output
  std::string type;            // --type: the quantized type T
  std::string scale;           // a number or a .npy path; empty with calibrate set
  std::string zero_point;      // a number or a .npy path; empty = none
  std::string calibrate;       // "", "minmax" or "symmetric"
  bool per_axis = false;       // calibrate one scale per index of --axis
  std::optional<int64_t> axis;  // unset: the ONNX default 1
  int64_t block_size = 0;
  int64_t saturate = 1;
  int64_t opset = 25;
  std::string precision;   // "": unset
  std::string input_type;  // "": from the file's dtype
  std::string scale_type;  // "": from the file's dtype
  std::string feature_level;  // elementwise: "" = the convenience door, else the DirectML door at it
};

struct DequantizeOptions {
  std::string family = "onnx";
  std::string input;
  std::string output;
  std::string type;  // "": from the file's dtype
  std::string scale;
  std::string zero_point;
  std::string output_type;  // "": the scale's type (ONNX default)
  std::string scale_type;
  std::optional<int64_t> axis;
  int64_t block_size = 0;
  int64_t opset = 25;
  std::string feature_level;  // elementwise: "" = the convenience door, else the DirectML door at it
};

struct BenchOptions {
  int64_t elements = int64_t{1} << 24;
  int threads = 0;  // 0: qdq's default pool size
};

Status run_quantize(const QuantizeOptions& options);
Status run_dequantize(const DequantizeOptions& options);
Status run_roundtrip(const QuantizeOptions& options);
Status run_bench(const BenchOptions& options);

}  // namespace qdq::tools
