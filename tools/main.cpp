// The qdq command-line tool.
#include <CLI/CLI.hpp>

#include "demo.h"

int main(int argc, char** argv) {
  CLI::App app{"qdq: exact linear quantization and dequantization (ONNX Q/DQ 10-25, Quark, DirectML)"};
  app.require_subcommand(1);
  CLI::App* demo = app.add_subcommand(
      "demo", "Quantize and dequantize an embedded default tensor to every type and granularity; print the error table");
  CLI11_PARSE(app, argc, argv);
  if (demo->parsed()) return qdq::tools::run_demo();
  return 0;
}
