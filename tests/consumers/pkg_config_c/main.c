/* A plain C program built with `cc main.c $(pkg-config --cflags --libs qdq)`: quantizes through
 * the C ABI, checks the result, an error report and the version. Exit 0 only if all hold. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "qdq/qdq.h"

enum { kFloat = 1, kUint8 = 2, kInt4 = 22 };

int main(void) {
  const int64_t shape[2] = {2, 3};
  const float x[6] = {0, 2, 3, 1000, -254, -1000};
  const float scale = 2.0f;
  const uint8_t zero_point = 128;
  uint8_t y[6];
  const qdq_tensor xt = {kFloat, 2, shape, x};
  const qdq_tensor st = {kFloat, 0, NULL, &scale};
  const qdq_tensor zt = {kUint8, 0, NULL, &zero_point};
  const qdq_mutable_tensor yt = {kUint8, 2, shape, y};
  qdq_quantize_attributes attributes;
  qdq_quantize_attributes_init(&attributes);
  int failures = 0;

  if (qdq_quantize_linear(&xt, &st, &zt, &attributes, &yt) != QDQ_OK) {
    fprintf(stderr, "qdq_quantize_linear failed: %s\n", qdq_last_error());
    return 1;
  }
  const uint8_t expected[6] = {128, 129, 130, 255, 1, 0};
  if (memcmp(y, expected, sizeof y) != 0) {
    fprintf(stderr, "qdq_quantize_linear: y = {%d, %d, %d, %d, %d, %d}\n", y[0], y[1], y[2], y[3], y[4], y[5]);
    ++failures;
  }

  /* int4 output packs two elements per byte, low nibble first: round(x / 2) = 0, 1, 2, 7, -8, -8. */
  uint8_t packed[3];
  const int8_t no_offset = 0;
  const qdq_tensor int4_zero = {kInt4, 0, NULL, &no_offset};
  const qdq_mutable_tensor int4_y = {kInt4, 2, shape, packed};
  const uint8_t expected_packed[3] = {0x10, 0x72, 0x88};
  if (qdq_quantize_linear(&xt, &st, &int4_zero, &attributes, &int4_y) != QDQ_OK ||
      memcmp(packed, expected_packed, sizeof packed) != 0) {
    fprintf(stderr, "int4 quantize: wrong result (%s)\n", qdq_last_error());
    ++failures;
  }

  /* A wrong output type is an error with a message, not a crash. */
  const qdq_mutable_tensor wrong_y = {kFloat, 2, shape, y};
  if (qdq_quantize_linear(&xt, &st, &zt, &attributes, &wrong_y) != QDQ_INVALID_ARGUMENT ||
      strlen(qdq_last_error()) == 0) {
    fprintf(stderr, "a float32 output for a uint8 zero point was not reported\n");
    ++failures;
  }

  if (strcmp(qdq_version(), QDQ_VERSION_STRING) != 0) {
    fprintf(stderr, "qdq_version() = %s, header says %s\n", qdq_version(), QDQ_VERSION_STRING);
    ++failures;
  }
  if (failures == 0) printf("qdq %s consumer (C, pkg-config): ok\n", qdq_version());
  return failures == 0 ? 0 : 1;
}
