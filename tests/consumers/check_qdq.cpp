// A program outside qdq's build: the README's C++ example, then checks of its result, a
// dequantize round trip, an error message and the version. Exit 0 only if all hold.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "qdq/qdq.h"
#include "qdq/qdq.hpp"
#include "qdq/version.h"

int main() {
  // The README's example.
  std::vector<int64_t> shape = {2, 3};
  float x[6] = {0, 2, 3, 1000, -254, -1000};
  float scale = 2.0f;
  uint8_t zero_point = 128, y[6];
  qdq::TensorView xv{qdq::ElementType::kFloat32, shape, x};
  qdq::TensorView sv{qdq::ElementType::kFloat32, {}, &scale};
  qdq::TensorView zv{qdq::ElementType::kUint8, {}, &zero_point};
  qdq::Status status = qdq::quantize_linear(xv, sv, &zv, {}, {qdq::ElementType::kUint8, shape, y});

  int failures = 0;
  if (!status.ok()) {
    std::fprintf(stderr, "quantize_linear failed: %s\n", status.message().c_str());
    return 1;
  }
  const uint8_t expected_y[6] = {128, 129, 130, 255, 1, 0};
  if (std::memcmp(y, expected_y, sizeof y) != 0) {
    std::fprintf(stderr, "quantize_linear: y = {%d, %d, %d, %d, %d, %d}\n", y[0], y[1], y[2], y[3], y[4], y[5]);
    ++failures;
  }

  float back[6];
  status = qdq::dequantize_linear({qdq::ElementType::kUint8, shape, y}, sv, &zv, {},
                                  {qdq::ElementType::kFloat32, shape, back});
  const float expected_back[6] = {0, 2, 4, 254, -254, -256};
  if (!status.ok() || std::memcmp(back, expected_back, sizeof back) != 0) {
    std::fprintf(stderr, "dequantize_linear: wrong result (%s)\n", status.message().c_str());
    ++failures;
  }

  // A broken rule comes back as a Status naming it, not as a crash: y must have the zero point's type.
  float wrong_y[6];
  status = qdq::quantize_linear(xv, sv, &zv, {}, {qdq::ElementType::kFloat32, shape, wrong_y});
  if (status.ok() || status.message().empty()) {
    std::fprintf(stderr, "a float32 output for a uint8 zero point was not reported\n");
    ++failures;
  } else {
    std::printf("expected error: %s\n", status.message().c_str());
  }

  if (std::strcmp(qdq_version(), QDQ_VERSION_STRING) != 0) {
    std::fprintf(stderr, "qdq_version() = %s, header says %s\n", qdq_version(), QDQ_VERSION_STRING);
    ++failures;
  }
  if (failures == 0) std::printf("qdq %s consumer (C++): ok\n", qdq_version());
  return failures == 0 ? 0 : 1;
}
