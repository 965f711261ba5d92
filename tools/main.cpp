// The qdq command-line tool: CLI11 wiring only. The commands live in commands.cpp / bench.cpp /
// demo.cpp and report failure as a qdq::Status.
//
// Every failure prints exactly one line, "qdq: error: ...", to stderr. Exit codes: 0 success,
// 1 runtime error (a file, a dtype, an operator rule), 2 usage error (CLI11 parse or validation).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "commands.h"
#include "demo.h"
#include "directml.h"
#include "qdq/element_type.h"
#include "qdq/qdq.h"

namespace {

using qdq::ElementType;
constexpr int kRuntimeError = 1;
constexpr int kUsageError = 2;

// CLI11 validator for a type-name option: the name must resolve (ml_dtypes or ONNX spelling) and
// be one of `allowed`. Checking here makes a bad name a usage error caught before any file is read.
CLI::Validator type_name(std::vector<ElementType> allowed) {
  std::string list;
  for (ElementType t : allowed) list += (list.empty() ? "" : ", ") + std::string(qdq::name(t));
  return CLI::Validator(
      [allowed, list](std::string& text) -> std::string {
        const std::optional<ElementType> type = qdq::element_type_from_name(text);
        for (ElementType t : allowed) {
          if (type == t) return "";
        }
        // A known name in the wrong place reads differently from a typo.
        return (type ? "type '" + text + "' is not accepted here" : "unknown type '" + text + "'") +
               " (expected one of: " + list + ")";
      },
      "TYPE", "");
}

const std::vector<ElementType> kQuantizedTypes = {
    ElementType::kUint8,          ElementType::kInt8,           ElementType::kUint16,      ElementType::kInt16,
    ElementType::kUint4,          ElementType::kInt4,           ElementType::kUint2,       ElementType::kInt2,
    ElementType::kFloat8E4M3FN,   ElementType::kFloat8E4M3FNUZ, ElementType::kFloat8E5M2,  ElementType::kFloat8E5M2FNUZ,
    ElementType::kFloat4E2M1};
const std::vector<ElementType> kRealTypes = {ElementType::kFloat32, ElementType::kFloat16, ElementType::kBfloat16};
// Quark's ExtendedQuantizeLinear adds these targets to ONNX's.
const std::vector<ElementType> kExtendedOnlyTypes = {ElementType::kInt32, ElementType::kUint32, ElementType::kFloat16,
                                                     ElementType::kBfloat16};

std::vector<ElementType> with_extended_types(std::vector<ElementType> types) {
  for (ElementType t : kExtendedOnlyTypes) {
    if (std::find(types.begin(), types.end(), t) == types.end()) types.push_back(t);
  }
  return types;
}

const char* const kOperatorHelp =
    "Operator family: onnx (QuantizeLinear/DequantizeLinear, default), extended (AMD Quark\n"
    "ExtendedQuantizeLinear/ExtendedDequantizeLinear, com.amd.quark) or elementwise (DirectML\n"
    "element-wise quantize/dequantize linear)";

const char* const kOperatorFooter =
    "\nOperator families (--operator): onnx takes every flag. extended takes --axis (per-tensor or\n"
    "per-axis; T also int32, uint32, float16, bfloat16; output float32). elementwise broadcasts scale\n"
    "and zero point of x's rank (dims x's or 1): a number becomes all 1s, a 1-D file lies along --axis;\n"
    "T int8 or uint8 (x float32, float16 or int32; the scale x's type, float32 for int32 x).\n"
    "--block-size, --saturate, --precision and --opset are ONNX attributes and refused elsewhere.\n";

const char* const kStorageNote =
    "\n.npy storage: types numpy has (uint8, int8, uint16, int16, int32, uint32, float16, float32) are\n"
    "written as themselves. float8*, float4_e2m1fn, int4, uint4, int2 and uint2 are written one code per\n"
    "element as raw bytes ('|V1'), bfloat16 as '<V2', as ml_dtypes' np.save writes them; load them as\n"
    "    np.load(path).view(ml_dtypes.float8_e4m3fn)      (likewise int4, float4_e2m1fn, bfloat16, ...)\n"
    "A 1-byte raw file does not say its type, so reading one back needs --type (--scale-type, ...);\n"
    "without it qdq refuses the file rather than guess. uint8 codes are read as codes only with --type;\n"
    "without it a uint8 file is uint8. bfloat16 '<V2' needs no flag.\n";

const char* const kQuantizeFooter =
    "\nScale and zero point: S and Z are numbers or .npy files. A number scale is a 0-D float32 scale\n"
    "(per-tensor); a number zero point is a 0-D value of --type. A scale file of shape [D_axis] is\n"
    "per-axis along --axis; one with x's rank and ceil(D_axis/B) along --axis is blocked (--block-size B).\n"
    "--axis defaults to 1 and --opset to 25, as in ONNX.\n"
    "\nCalibration (--calibrate M instead of --scale/--zero-point): the scale and zero point (type T) are\n"
    "computed from x by qdq's compute_qparams and written beside the output as OUT.scale.npy and\n"
    "OUT.zero_point.npy (roundtrip: beside --output, if given).\n"
    "  granularity: per-tensor by default; --per-axis --axis A gives one scale per index of axis A;\n"
    "               --block-size B [--axis A] gives one per B consecutive elements along A (default 1).\n"
    "  minmax (integer T):   lo = min(x, 0), hi = max(x, 0), scale = (hi - lo) / (qmax - qmin),\n"
    "                        zp = round_half_even(clamp(qmin - lo / scale, qmin, qmax))\n"
    "  symmetric:            integer T: scale = max|x| / ((qmax - qmin) / 2), zp = 0 (unsigned: (qmax+1)/2);\n"
    "                        float T: scale = max|x| / max(T) (minmax means the same for float T)\n"
    "  symmetric_restricted: integer T: scale = max|x| / ((qmax - qmin - 1) / 2), codes in [-qmax, qmax]\n"
    "  mx_floor, mx_ceil, mx_even, mx_rceil (float T): OCP MX power-of-two scales, float8_e8m0fnu\n"
    "Scales are float32 (float32 arithmetic) except the MX ones. An all-zero group gets scale 1, a group\n"
    "with NaN the NaN scale; every edge case is listed in docs/semantics.md (\"Scales from data\").\n";

struct Handles {
  CLI::Option* scale = nullptr;
  CLI::Option* calibrate = nullptr;
  CLI::Option* axis = nullptr;
  std::vector<CLI::Option*> onnx_only;  // attributes the Quark and DirectML operators do not have
  CLI::Option* feature_level = nullptr;  // --operator elementwise only
};

const char* const kFeatureLevelHelp =
    "--operator elementwise only: check the operator at this DML_FEATURE_LEVEL (6_2, 6.2 or\n"
    "DML_FEATURE_LEVEL_6_2) through the DirectML door, scale and zero point broadcast by 0-strides";

std::string feature_level_misused(const std::string& family, const CLI::Option* feature_level) {
  if (feature_level->count() == 0 || family == "elementwise") return "";
  return "--feature-level is a DirectML feature level; it needs --operator elementwise";
}

CLI::Option* add_operator_flag(CLI::App* command, std::string& family) {
  return command->add_option("--operator", family, kOperatorHelp)
      ->check(CLI::IsMember({"onnx", "extended", "elementwise"}));
}

// "--block-size is an ONNX attribute; --operator extended has none", or "" if none was given.
std::string onnx_only_flag_given(const std::string& family, const std::vector<CLI::Option*>& onnx_only) {
  if (family == "onnx") return "";
  for (const CLI::Option* option : onnx_only) {
    if (option->count() > 0) {
      return option->get_name() + " is an ONNX QuantizeLinear/DequantizeLinear attribute; --operator " + family +
             " has no such attribute";
    }
  }
  return "";
}

// The flags quantize and roundtrip share. Axis is read into a plain int64 and marked "given" after
// parsing from the option's count, which keeps "unset" (ONNX default 1) apart from "--axis 1".
Handles add_quantize_flags(CLI::App* command, qdq::tools::QuantizeOptions& o, int64_t& axis) {
  Handles h;
  add_operator_flag(command, o.family);
  command->add_option("--type,-t", o.type, "Quantized type T")
      ->required()
      ->check(type_name(with_extended_types(kQuantizedTypes)));
  h.scale = command->add_option("--scale,-s", o.scale, "Scale: a number (0-D float32) or a .npy file");
  CLI::Option* zp = command->add_option("--zero-point,-z", o.zero_point, "Zero point: a number (0-D of T) or a .npy file");
  h.calibrate = command
                    ->add_option("--calibrate", o.calibrate,
                                 "Compute scale and zero point from x instead of --scale (method: see below)")
                    ->check(CLI::IsMember({"minmax", "symmetric", "symmetric_restricted", "mx_floor", "mx_ceil",
                                           "mx_even", "mx_rceil"}));
  CLI::Option* per_axis =
      command->add_flag("--per-axis", o.per_axis, "With --calibrate: one scale per index of --axis (needs --axis)");
  h.axis = command->add_option("--axis,-a", axis, "ONNX axis attribute (default 1)");
  h.feature_level = command->add_option("--feature-level", o.feature_level, kFeatureLevelHelp);
  CLI::Option* block = command->add_option("--block-size,-b", o.block_size, "ONNX block_size attribute (0 = not blocked)")
                           ->check(CLI::NonNegativeNumber);
  h.onnx_only.push_back(block);
  h.onnx_only.push_back(
      command->add_option("--saturate", o.saturate, "ONNX saturate attribute (float8 outputs)")->check(CLI::Range(0, 1)));
  h.onnx_only.push_back(command->add_option("--opset", o.opset, "ai.onnx opset the operator is taken from (10..28)"));
  h.onnx_only.push_back(
      command->add_option("--precision", o.precision, "ONNX precision attribute: division in float32, float16 or bfloat16")
          ->check(type_name(kRealTypes)));
  command
      ->add_option("--input-type", o.input_type,
                   "Type of x when the file holds codes: bfloat16 (uint16 codes or ml_dtypes '<V2')")
      ->check(type_name({ElementType::kFloat32, ElementType::kFloat16, ElementType::kBfloat16, ElementType::kInt32}));
  CLI::Option* scale_type =
      command->add_option("--scale-type", o.scale_type, "Type of a scale file holding codes (bfloat16, float8_e8m0fnu)")
          ->check(type_name({ElementType::kFloat32, ElementType::kFloat16, ElementType::kBfloat16,
                             ElementType::kFloat8E8M0}));
  h.scale->excludes(h.calibrate);
  zp->excludes(h.calibrate);
  scale_type->excludes(h.calibrate);
  per_axis->needs(h.calibrate)->needs(h.axis)->excludes(block);
  command->footer(std::string(kQuantizeFooter) + kOperatorFooter + kStorageNote);
  return h;
}

// One line on stderr for a usage error, whatever CLI11's message looked like.
int usage_error(const std::string& message, const std::string& command) {
  std::string line = message;
  for (char& c : line) {
    if (c == '\n') c = ' ';
  }
  std::fprintf(stderr, "qdq: error: %s (see 'qdq%s --help')\n", line.c_str(), command.c_str());
  return kUsageError;
}

int run(int argc, char** argv) {
  // Named explicitly so that usage lines say "qdq", not the path the binary was run from.
  CLI::App app{"qdq: exact linear quantization and dequantization (ONNX Q/DQ 10-25, Quark, DirectML)", "qdq"};
  app.require_subcommand(1);
  // The loaded library's version (the same as the header's in this statically linked tool).
  app.set_version_flag("--version", std::string("qdq ") + qdq_version(), "Print the version and exit");
  app.footer(kStorageNote);

  CLI::App* demo = app.add_subcommand(
      "demo", "Quantize and dequantize an embedded default tensor to every type and granularity; print the error table");

  qdq::tools::QuantizeOptions quantize_options;
  int64_t quantize_axis = 1;
  CLI::App* quantize = app.add_subcommand(
      "quantize", "QuantizeLinear of a .npy tensor: IN.npy -> OUT.npy (ONNX, or --operator extended|elementwise)");
  quantize->add_option("IN", quantize_options.input, "x: float32, float16, int32 (or bfloat16 codes) .npy")->required();
  quantize->add_option("OUT", quantize_options.output, "y: the quantized .npy to write")->required();
  const Handles quantize_handles = add_quantize_flags(quantize, quantize_options, quantize_axis);

  qdq::tools::QuantizeOptions roundtrip_options;
  int64_t roundtrip_axis = 1;
  CLI::App* roundtrip = app.add_subcommand(
      "roundtrip",
      "Quantize then dequantize a .npy tensor; print max/mean abs error, RMSE, SQNR and the changed count");
  roundtrip->add_option("IN", roundtrip_options.input, "x: float32, float16, int32 (or bfloat16 codes) .npy")
      ->required();
  roundtrip->add_option("--output,-o", roundtrip_options.output, "Also write the dequantized tensor here");
  const Handles roundtrip_handles = add_quantize_flags(roundtrip, roundtrip_options, roundtrip_axis);

  qdq::tools::DequantizeOptions dq;
  int64_t dequantize_axis = 1;
  CLI::App* dequantize = app.add_subcommand(
      "dequantize", "DequantizeLinear of a .npy tensor: IN.npy -> OUT.npy (ONNX, or --operator extended|elementwise)");
  add_operator_flag(dequantize, dq.family);
  std::vector<CLI::Option*> dequantize_onnx_only;
  dequantize->add_option("IN", dq.input, "x: int8/uint8/int16/uint16/int32 .npy, or codes with --type")->required();
  dequantize->add_option("OUT", dq.output, "y: the dequantized .npy to write")->required();
  dequantize->add_option("--scale,-s", dq.scale, "Scale: a number (0-D float32) or a .npy file")->required();
  dequantize->add_option("--zero-point,-z", dq.zero_point, "Zero point: a number (0-D of x's type) or a .npy file");
  std::vector<ElementType> dequantize_types = with_extended_types(kQuantizedTypes);
  dequantize
      ->add_option("--type,-t", dq.type,
                   "Type of x; required when the file holds codes (uint8, or ml_dtypes' '<V1'/'<f1': 4-bit, 2-bit, float8, float4)")
      ->check(type_name(dequantize_types));
  CLI::Option* dequantize_output_type = dequantize->add_option(
      "--output-type", dq.output_type,
      "ONNX output_dtype (opset >= 23), or elementwise's output type; default: the scale's type")
      ->check(type_name(kRealTypes));
  CLI::Option* dequantize_feature_level = dequantize->add_option("--feature-level", dq.feature_level, kFeatureLevelHelp);
  CLI::Option* dequantize_axis_option = dequantize->add_option("--axis,-a", dequantize_axis, "ONNX axis attribute (default 1)");
  dequantize_onnx_only.push_back(
      dequantize->add_option("--block-size,-b", dq.block_size, "ONNX block_size attribute (0 = not blocked)")
          ->check(CLI::NonNegativeNumber));
  dequantize_onnx_only.push_back(
      dequantize->add_option("--opset", dq.opset, "ai.onnx opset the operator is taken from (10..28)"));
  dequantize->add_option("--scale-type", dq.scale_type, "Type of a scale file holding codes (bfloat16, float8_e8m0fnu)")
      ->check(type_name({ElementType::kFloat32, ElementType::kFloat16, ElementType::kBfloat16, ElementType::kFloat8E8M0}));
  dequantize->footer(
      std::string("\nS and Z are numbers or .npy files; granularity follows the scale's shape as in ONNX (see\n"
                  "'qdq quantize --help'). The output is float32 unless the scale or --output-type says otherwise.\n") +
      kOperatorFooter + kStorageNote);

  qdq::tools::BenchOptions bench_options;
  CLI::App* bench = app.add_subcommand(
      "bench", "Speed of the C++ kernels: Q and DQ x {uint8, int8, int4, float8_e4m3fn, float4_e2m1fn} x "
               "{per-tensor, per-axis, blocked-32}, in GB/s against memcpy of the same bytes");
  bench->add_option("--elements,-n", bench_options.elements, "Elements of the float32 tensor (default 2^24)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  bench->add_option("--threads", bench_options.threads, "Threads (default: QDQ_NUM_THREADS or all hardware threads)")
      ->check(CLI::Range(0, 1024));
  bench->footer(
      "\nGB/s counts the bytes a cell moves (x + y + scale) over its best time; the memcpy baseline is\n"
      "qdq::parallel_copy of the same total traffic on the same thread pool. For ONNX Runtime in the\n"
      "same table, run bench/compare.py (Python, needs the qdq package and onnxruntime).\n");

  qdq::tools::DirectmlOptions directml_options;
  CLI::App* directml = qdq::tools::add_directml_command(app, directml_options);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string command;
    for (CLI::App* sub : app.get_subcommands()) command = " " + sub->get_name();
    return usage_error(e.what(), command);
  }

  // Cross-flag rules CLI11 cannot express.
  if (quantize->parsed() || roundtrip->parsed()) {
    const Handles& h = quantize->parsed() ? quantize_handles : roundtrip_handles;
    qdq::tools::QuantizeOptions& o = quantize->parsed() ? quantize_options : roundtrip_options;
    const std::string name = quantize->parsed() ? " quantize" : " roundtrip";
    if (h.scale->count() == 0 && h.calibrate->count() == 0) {
      return usage_error("one of --scale or --calibrate is required", name);
    }
    if (h.axis->count() > 0) o.axis = quantize->parsed() ? quantize_axis : roundtrip_axis;
    if (const std::string error = onnx_only_flag_given(o.family, h.onnx_only); !error.empty()) {
      return usage_error(error, name);
    }
    if (const std::string error = feature_level_misused(o.family, h.feature_level); !error.empty()) {
      return usage_error(error, name);
    }
  }
  if (dequantize->parsed()) {
    if (const std::string error = onnx_only_flag_given(dq.family, dequantize_onnx_only); !error.empty()) {
      return usage_error(error, " dequantize");
    }
    if (const std::string error = feature_level_misused(dq.family, dequantize_feature_level); !error.empty()) {
      return usage_error(error, " dequantize");
    }
    if (dq.family == "extended" && dequantize_output_type->count() > 0) {
      return usage_error("--output-type: ExtendedDequantizeLinear always produces float32", " dequantize");
    }
  }
  if (dequantize->parsed() && dequantize_axis_option->count() > 0) dq.axis = dequantize_axis;

  qdq::Status status;
  if (demo->parsed()) return qdq::tools::run_demo();
  if (quantize->parsed()) status = qdq::tools::run_quantize(quantize_options);
  if (roundtrip->parsed()) status = qdq::tools::run_roundtrip(roundtrip_options);
  if (dequantize->parsed()) status = qdq::tools::run_dequantize(dq);
  if (bench->parsed()) status = qdq::tools::run_bench(bench_options);
  bool directml_accepted = true;
  if (directml->parsed()) status = qdq::tools::run_directml(directml_options, &directml_accepted);
  if (!status.ok()) {
    std::fprintf(stderr, "qdq: error: %s\n", status.message().c_str());
    return kRuntimeError;
  }
  return directml_accepted ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // Nothing may escape: an allocation failure on a huge tensor or an unexpected CLI11 exception
  // still ends in one error line and a non-zero exit, never std::terminate.
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "qdq: error: out of memory\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "qdq: error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "qdq: error: unexpected failure\n");
  }
  return kRuntimeError;
}
