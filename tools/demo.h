#pragma once

namespace qdq::tools {

// Prints the round-trip error table for the embedded default tensor; returns the exit code.
int run_demo();

}  // namespace qdq::tools
