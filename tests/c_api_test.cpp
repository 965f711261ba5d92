// The C ABI (include/qdq/qdq.h): results, status codes, and the thread-local error message.
#include "qdq/qdq.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "qdq/qdq.hpp"
#include "qdq/toolkit.hpp"
#include "kernels/kernels.h"  // every SIMD target

namespace {

// TensorProto codes.
constexpr int32_t kFloat = 1, kUint8 = 2, kInt8 = 3, kInt16 = 5, kInt32 = 6, kFloat16 = 10, kBfloat16 = 16,
                  kE4M3FN = 17, kUint4 = 21, kInt4 = 22, kE8M0 = 24;

qdq_tensor tensor(int32_t type, const std::vector<int64_t>& shape, const void* data) {
  return qdq_tensor{type, static_cast<int32_t>(shape.size()), shape.empty() ? nullptr : shape.data(), data};
}

qdq_tensor scalar(int32_t type, const void* data) { return qdq_tensor{type, 0, nullptr, data}; }

qdq_mutable_tensor output(int32_t type, const std::vector<int64_t>& shape, void* data) {
  return qdq_mutable_tensor{type, static_cast<int32_t>(shape.size()), shape.empty() ? nullptr : shape.data(), data};
}

std::string last_error() { return qdq_last_error(); }

bool contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

#define EXPECT_ERROR_MENTIONS(...)                                 \
  for (const char* needle : {__VA_ARGS__}) {                       \
    EXPECT_TRUE(contains(last_error(), needle))                    \
        << "qdq_last_error() = \"" << last_error() << "\" lacks \"" << needle << "\""; \
  }

// A successful call, so that qdq_last_error() starts out empty.
void succeed_once() {
  const float x = 1.0f, s = 1.0f;
  uint8_t y = 0;
  const std::vector<int64_t> shape = {1};
  const qdq_tensor xt = tensor(kFloat, shape, &x);
  const qdq_tensor st = scalar(kFloat, &s);
  const qdq_mutable_tensor yt = output(kUint8, shape, &y);
  ASSERT_EQ(qdq_quantize_linear(&xt, &st, nullptr, nullptr, &yt), QDQ_OK) << last_error();
  ASSERT_EQ(y, 1);
}

// The ONNX backend test `test_quantizelinear`, by hand: 3/2 = 1.5 rounds to 2 (even), 1000/2 + 128
// saturates to 255, -1000/2 + 128 to 0.
// The library's version string, the header's macros and CMake's project() version are one value.
TEST(CApiVersion, MatchesHeaderMacros) {
  const std::string expected = std::to_string(QDQ_VERSION_MAJOR) + "." + std::to_string(QDQ_VERSION_MINOR) + "." +
                               std::to_string(QDQ_VERSION_PATCH);
  EXPECT_EQ(std::string(qdq_version()), expected);
  EXPECT_STREQ(qdq_version(), QDQ_VERSION_STRING);
  EXPECT_EQ(QDQ_VERSION, QDQ_MAKE_VERSION(QDQ_VERSION_MAJOR, QDQ_VERSION_MINOR, QDQ_VERSION_PATCH));
}

TEST(CApiQuantize, HandComputedUint8) {
  const std::vector<float> x = {0, 2, 3, 1000, -254, -1000};
  const std::vector<int64_t> shape = {6};
  const float scale = 2.0f;
  const uint8_t zero_point = 128;
  const qdq_tensor xt = tensor(kFloat, shape, x.data());
  const qdq_tensor st = scalar(kFloat, &scale);
  const qdq_tensor zt = scalar(kUint8, &zero_point);
  const std::vector<uint8_t> expected = {128, 129, 130, 255, 1, 0};

  qdq_quantize_attributes attributes;
  qdq_quantize_attributes_init(&attributes);
  for (int64_t opset : {10, 13, 19, 21, 23, 24, 25, 28}) {
    attributes.opset = opset;
    std::vector<uint8_t> y(6, 0xEE);
    const qdq_mutable_tensor yt = output(kUint8, shape, y.data());
    ASSERT_EQ(qdq_quantize_linear(&xt, &st, &zt, &attributes, &yt), QDQ_OK) << opset << ": " << last_error();
    EXPECT_EQ(y, expected) << opset;
    EXPECT_STREQ(qdq_last_error(), "");
  }
  // NULL attributes mean the defaults.
  std::vector<uint8_t> y(6, 0xEE);
  const qdq_mutable_tensor yt = output(kUint8, shape, y.data());
  ASSERT_EQ(qdq_quantize_linear(&xt, &st, &zt, nullptr, &yt), QDQ_OK) << last_error();
  EXPECT_EQ(y, expected);
}

// Packed output through the C ABI: uint4 [1, 2, 3] is bytes 0x21, 0x03 (low nibble first).
TEST(CApiQuantize, PackedUint4Output) {
  const std::vector<float> x = {1, 2, 3};
  const std::vector<int64_t> shape = {3};
  const float scale = 1.0f;
  const uint8_t zero_point = 0;  // one uint4 element, packed into one byte
  const qdq_tensor xt = tensor(kFloat, shape, x.data());
  const qdq_tensor st = scalar(kFloat, &scale);
  const qdq_tensor zt = scalar(kUint4, &zero_point);
  std::vector<uint8_t> y(2, 0xEE);
  const qdq_mutable_tensor yt = output(kUint4, shape, y.data());
  ASSERT_EQ(qdq_quantize_linear(&xt, &st, &zt, nullptr, &yt), QDQ_OK) << last_error();
  EXPECT_EQ(y, (std::vector<uint8_t>{0x21, 0x03}));
}

// `test_dequantizelinear`: (x - 128) * 2.
TEST(CApiDequantize, HandComputed) {
  const std::vector<uint8_t> x = {0, 3, 128, 255};
  const std::vector<int64_t> shape = {4};
  const float scale = 2.0f;
  const uint8_t zero_point = 128;
  const qdq_tensor xt = tensor(kUint8, shape, x.data());
  const qdq_tensor st = scalar(kFloat, &scale);
  const qdq_tensor zt = scalar(kUint8, &zero_point);

  std::vector<float> y(4, -1.0f);
  const qdq_mutable_tensor yt = output(kFloat, shape, y.data());
  ASSERT_EQ(qdq_dequantize_linear(&xt, &st, &zt, nullptr, &yt), QDQ_OK) << last_error();
  EXPECT_EQ(y, (std::vector<float>{-256, -250, 0, 254}));
  EXPECT_STREQ(qdq_last_error(), "");

  // output_dtype FLOAT16: the same values as half bits.
  qdq_dequantize_attributes attributes;
  qdq_dequantize_attributes_init(&attributes);
  attributes.output_dtype = kFloat16;
  std::vector<uint16_t> half(4, 0xEEEE);
  const qdq_mutable_tensor ht = output(kFloat16, shape, half.data());
  ASSERT_EQ(qdq_dequantize_linear(&xt, &st, &zt, &attributes, &ht), QDQ_OK) << last_error();
  EXPECT_EQ(half, (std::vector<uint16_t>{0xDC00, 0xDBD0, 0x0000, 0x5BF0}));
}

TEST(CApiAttributes, InitSetsSchemaDefaults) {
  qdq_quantize_attributes q;
  std::memset(&q, 0x5A, sizeof q);
  qdq_quantize_attributes_init(&q);
  EXPECT_EQ(q.axis, 1);
  EXPECT_EQ(q.block_size, 0);
  EXPECT_EQ(q.saturate, 1);
  EXPECT_EQ(q.output_dtype, 0);
  EXPECT_EQ(q.precision, 0);
  EXPECT_EQ(q.opset, 25);
  qdq_dequantize_attributes d;
  std::memset(&d, 0x5A, sizeof d);
  qdq_dequantize_attributes_init(&d);
  EXPECT_EQ(d.axis, 1);
  EXPECT_EQ(d.block_size, 0);
  EXPECT_EQ(d.output_dtype, 0);
  EXPECT_EQ(d.opset, 25);
  // NULL is ignored rather than dereferenced.
  qdq_quantize_attributes_init(nullptr);
  qdq_dequantize_attributes_init(nullptr);
}

// Valid arguments for every entry point, from which each test removes one.
struct Args {
  std::vector<float> x = {1, 2, 3, 4};
  std::vector<uint8_t> qx = {1, 2, 3, 4};
  std::vector<int64_t> shape = {4};
  std::vector<int64_t> one = {1};
  float scale = 1.0f;
  uint8_t zero_point = 0;
  std::vector<uint8_t> y = std::vector<uint8_t>(16);
  int32_t out_type = -7;

  qdq_tensor fx() const { return tensor(kFloat, shape, x.data()); }
  qdq_tensor ux() const { return tensor(kUint8, shape, qx.data()); }
  qdq_tensor s() const { return scalar(kFloat, &scale); }
  qdq_tensor s1() const { return tensor(kFloat, one, &scale); }  // elementwise: x's rank
  qdq_tensor zp() const { return scalar(kUint8, &zero_point); }
  qdq_mutable_tensor y_u8() { return output(kUint8, shape, y.data()); }
  qdq_mutable_tensor y_f32() { return output(kFloat, shape, y.data()); }
};

TEST(CApiNullArguments, EveryFunctionReportsTheNullArgument) {
  Args a;
  const qdq_tensor fx = a.fx(), ux = a.ux(), s = a.s(), s1 = a.s1(), zp = a.zp();
  const qdq_mutable_tensor yu = a.y_u8(), yf = a.y_f32();

  struct Case {
    const char* function;
    const char* argument;
    qdq_status_code code;
  };
  const Case cases[] = {
      {"qdq_quantize_linear", "'x'", qdq_quantize_linear(nullptr, &s, &zp, nullptr, &yu)},
      {"qdq_quantize_linear", "'y_scale'", qdq_quantize_linear(&fx, nullptr, &zp, nullptr, &yu)},
      {"qdq_quantize_linear", "'y'", qdq_quantize_linear(&fx, &s, &zp, nullptr, nullptr)},
      {"qdq_dequantize_linear", "'x'", qdq_dequantize_linear(nullptr, &s, &zp, nullptr, &yf)},
      {"qdq_dequantize_linear", "'x_scale'", qdq_dequantize_linear(&ux, nullptr, &zp, nullptr, &yf)},
      {"qdq_dequantize_linear", "'y'", qdq_dequantize_linear(&ux, &s, &zp, nullptr, nullptr)},
      {"qdq_extended_quantize_linear", "'x'", qdq_extended_quantize_linear(nullptr, &s, &zp, 1, &yu)},
      {"qdq_extended_quantize_linear", "'y_scale'", qdq_extended_quantize_linear(&fx, nullptr, &zp, 1, &yu)},
      {"qdq_extended_quantize_linear", "'y'", qdq_extended_quantize_linear(&fx, &s, &zp, 1, nullptr)},
      {"qdq_extended_dequantize_linear", "'x'", qdq_extended_dequantize_linear(nullptr, &s, &zp, 1, &yf)},
      {"qdq_extended_dequantize_linear", "'x_scale'", qdq_extended_dequantize_linear(&ux, nullptr, &zp, 1, &yf)},
      {"qdq_extended_dequantize_linear", "'y'", qdq_extended_dequantize_linear(&ux, &s, &zp, 1, nullptr)},
      {"qdq_elementwise_quantize_linear", "'x'", qdq_elementwise_quantize_linear(nullptr, &s1, nullptr, &yu)},
      {"qdq_elementwise_quantize_linear", "'scale'", qdq_elementwise_quantize_linear(&fx, nullptr, nullptr, &yu)},
      {"qdq_elementwise_quantize_linear", "'y'", qdq_elementwise_quantize_linear(&fx, &s1, nullptr, nullptr)},
      {"qdq_elementwise_dequantize_linear", "'x'", qdq_elementwise_dequantize_linear(nullptr, &s1, nullptr, &yf)},
      {"qdq_elementwise_dequantize_linear", "'scale'", qdq_elementwise_dequantize_linear(&ux, nullptr, nullptr, &yf)},
      {"qdq_elementwise_dequantize_linear", "'y'", qdq_elementwise_dequantize_linear(&ux, &s1, nullptr, nullptr)},
  };
  // Each call above overwrote the message; re-run each one to check its own message.
  for (const Case& c : cases) EXPECT_EQ(c.code, QDQ_INVALID_ARGUMENT) << c.function << " " << c.argument;

  auto check = [](qdq_status_code code, const char* function, const char* argument) {
    EXPECT_EQ(code, QDQ_INVALID_ARGUMENT);
    EXPECT_ERROR_MENTIONS(function, argument, "NULL");
  };
  check(qdq_quantize_linear(nullptr, &s, &zp, nullptr, &yu), "qdq_quantize_linear", "'x'");
  check(qdq_quantize_linear(&fx, nullptr, &zp, nullptr, &yu), "qdq_quantize_linear", "'y_scale'");
  check(qdq_quantize_linear(&fx, &s, &zp, nullptr, nullptr), "qdq_quantize_linear", "'y'");
  check(qdq_dequantize_linear(nullptr, &s, &zp, nullptr, &yf), "qdq_dequantize_linear", "'x'");
  check(qdq_dequantize_linear(&ux, nullptr, &zp, nullptr, &yf), "qdq_dequantize_linear", "'x_scale'");
  check(qdq_dequantize_linear(&ux, &s, &zp, nullptr, nullptr), "qdq_dequantize_linear", "'y'");
  check(qdq_extended_quantize_linear(nullptr, &s, &zp, 1, &yu), "qdq_extended_quantize_linear", "'x'");
  check(qdq_extended_quantize_linear(&fx, nullptr, &zp, 1, &yu), "qdq_extended_quantize_linear", "'y_scale'");
  check(qdq_extended_quantize_linear(&fx, &s, &zp, 1, nullptr), "qdq_extended_quantize_linear", "'y'");
  check(qdq_extended_dequantize_linear(nullptr, &s, &zp, 1, &yf), "qdq_extended_dequantize_linear", "'x'");
  check(qdq_extended_dequantize_linear(&ux, nullptr, &zp, 1, &yf), "qdq_extended_dequantize_linear", "'x_scale'");
  check(qdq_extended_dequantize_linear(&ux, &s, &zp, 1, nullptr), "qdq_extended_dequantize_linear", "'y'");
  check(qdq_elementwise_quantize_linear(nullptr, &s1, nullptr, &yu), "qdq_elementwise_quantize_linear", "'x'");
  check(qdq_elementwise_quantize_linear(&fx, nullptr, nullptr, &yu), "qdq_elementwise_quantize_linear", "'scale'");
  check(qdq_elementwise_quantize_linear(&fx, &s1, nullptr, nullptr), "qdq_elementwise_quantize_linear", "'y'");
  check(qdq_elementwise_dequantize_linear(nullptr, &s1, nullptr, &yf), "qdq_elementwise_dequantize_linear", "'x'");
  check(qdq_elementwise_dequantize_linear(&ux, nullptr, nullptr, &yf), "qdq_elementwise_dequantize_linear", "'scale'");
  check(qdq_elementwise_dequantize_linear(&ux, &s1, nullptr, nullptr), "qdq_elementwise_dequantize_linear", "'y'");

  int32_t out_type = -7;
  check(qdq_quantize_linear_output_type(nullptr, &s, &zp, nullptr, &out_type), "qdq_quantize_linear_output_type", "'x'");
  check(qdq_quantize_linear_output_type(&fx, nullptr, &zp, nullptr, &out_type), "qdq_quantize_linear_output_type",
        "'y_scale'");
  check(qdq_quantize_linear_output_type(&fx, &s, &zp, nullptr, nullptr), "qdq_quantize_linear_output_type",
        "'output_type'");
  check(qdq_dequantize_linear_output_type(nullptr, &s, &zp, nullptr, &out_type), "qdq_dequantize_linear_output_type",
        "'x'");
  check(qdq_dequantize_linear_output_type(&ux, nullptr, &zp, nullptr, &out_type), "qdq_dequantize_linear_output_type",
        "'x_scale'");
  check(qdq_dequantize_linear_output_type(&ux, &s, &zp, nullptr, nullptr), "qdq_dequantize_linear_output_type",
        "'output_type'");
  EXPECT_EQ(out_type, -7);  // never written on failure
  // Nothing was written to y by any of the failed calls.
  EXPECT_EQ(a.y, std::vector<uint8_t>(16, 0));
}

TEST(CApiShapes, NegativeRankAndNullShape) {
  Args a;
  const qdq_tensor s = a.s();
  const qdq_mutable_tensor yu = a.y_u8();

  qdq_tensor x = a.fx();
  x.rank = -1;
  EXPECT_EQ(qdq_quantize_linear(&x, &s, nullptr, nullptr, &yu), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("qdq_quantize_linear", "'x'", "rank -1");

  x = a.fx();
  x.shape = nullptr;  // rank 1
  EXPECT_EQ(qdq_quantize_linear(&x, &s, nullptr, nullptr, &yu), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("qdq_quantize_linear", "'x'", "rank 1", "NULL");

  qdq_tensor bad_scale = a.s();
  bad_scale.rank = -3;
  const qdq_tensor fx = a.fx();
  EXPECT_EQ(qdq_dequantize_linear(&fx, &bad_scale, nullptr, nullptr, nullptr), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("qdq_dequantize_linear", "'x_scale'", "rank -3");

  const qdq_tensor ux = a.ux();
  qdq_tensor bad_zp = a.zp();
  bad_zp.rank = 2;  // shape NULL
  const qdq_mutable_tensor yf = a.y_f32();
  EXPECT_EQ(qdq_dequantize_linear(&ux, &s, &bad_zp, nullptr, &yf), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("qdq_dequantize_linear", "'x_zero_point'", "rank 2", "NULL");

  qdq_mutable_tensor bad_y = a.y_u8();
  bad_y.rank = -2;
  EXPECT_EQ(qdq_quantize_linear(&fx, &s, nullptr, nullptr, &bad_y), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("qdq_quantize_linear", "'y'", "rank -2");
  bad_y = a.y_u8();
  bad_y.shape = nullptr;
  EXPECT_EQ(qdq_elementwise_quantize_linear(&fx, &s, nullptr, &bad_y), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("qdq_elementwise_quantize_linear", "'y'", "NULL");

  int32_t out_type = -7;
  EXPECT_EQ(qdq_quantize_linear_output_type(&x, &s, nullptr, nullptr, &out_type), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("qdq_quantize_linear_output_type", "'x'");
  EXPECT_EQ(out_type, -7);
}

// `count` dims at the very end of a readable page followed by an inaccessible one: reading one
// dim past them faults in every build, not only under AddressSanitizer.
class GuardedShape {
 public:
  explicit GuardedShape(const std::vector<int64_t>& dims) {
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    void* pages = mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED) return;
    base_ = static_cast<unsigned char*>(pages);
    if (mprotect(base_ + page_, page_, PROT_NONE) != 0) return;
    dims_ = reinterpret_cast<int64_t*>(base_ + page_) - dims.size();
    std::memcpy(dims_, dims.data(), dims.size() * sizeof(int64_t));
  }
  ~GuardedShape() {
    if (base_ != nullptr) munmap(base_, 2 * page_);
  }
  GuardedShape(const GuardedShape&) = delete;
  GuardedShape& operator=(const GuardedShape&) = delete;
  const int64_t* dims() const { return dims_; }

 private:
  size_t page_ = 0;
  unsigned char* base_ = nullptr;
  int64_t* dims_ = nullptr;
};

// Issue 13, finding 4: y's rank is validated like x's. A y rank that differs from x's is reported
// without reading y's dims (the caller's shape array may be as short as x's), and an absurd rank
// is refused before any dim is read, as for x.
TEST(CApiShapes, OutputRankIsCheckedBeforeItsDimsAreRead) {
  const float x[4] = {0, 1, 2, 3};
  const float scale = 1.0f;
  const std::vector<int64_t> x_shape = {4};
  const qdq_tensor xt = tensor(kFloat, x_shape, x);
  const qdq_tensor st = scalar(kFloat, &scale);
  const std::vector<int64_t> broadcast_shape = {1};
  const qdq_tensor broadcast_st = tensor(kFloat, broadcast_shape, &scale);  // DirectML: x's rank
  uint8_t y[4] = {};
  GuardedShape y_dims({4});
  ASSERT_NE(y_dims.dims(), nullptr);

  for (const int32_t rank : {2, 8, 64, 65, 1 << 20, INT32_MAX}) {
    const qdq_mutable_tensor yt{kUint8, rank, y_dims.dims(), y};
    // Named: the macro keeps the pointer past the full expression a temporary would end with.
    const std::string rank_text = std::to_string(rank);
    EXPECT_EQ(qdq_quantize_linear(&xt, &st, nullptr, nullptr, &yt), QDQ_INVALID_ARGUMENT) << "rank " << rank;
    EXPECT_ERROR_MENTIONS("'y'", rank_text.c_str());
    EXPECT_LT(last_error().size(), 400u) << last_error();
    EXPECT_EQ(qdq_elementwise_quantize_linear(&xt, &broadcast_st, nullptr, &yt), QDQ_INVALID_ARGUMENT)
        << "rank " << rank;
    EXPECT_ERROR_MENTIONS("'y'", rank_text.c_str());
  }
  // x's absurd rank, for comparison: refused before its dims are read.
  const qdq_tensor huge_x{kFloat, INT32_MAX, y_dims.dims(), x};
  const qdq_mutable_tensor yt{kUint8, 1, y_dims.dims(), y};
  EXPECT_EQ(qdq_quantize_linear(&huge_x, &st, nullptr, nullptr, &yt), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("'x'", "2147483647");
  // The same rank is still read and compared dim by dim.
  GuardedShape wrong_dims({5});
  const qdq_mutable_tensor wrong{kUint8, 1, wrong_dims.dims(), y};
  EXPECT_EQ(qdq_quantize_linear(&xt, &st, nullptr, nullptr, &wrong), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("[5]", "[4]");
  const qdq_mutable_tensor right{kUint8, 1, y_dims.dims(), y};
  ASSERT_EQ(qdq_quantize_linear(&xt, &st, nullptr, nullptr, &right), QDQ_OK) << last_error();
  EXPECT_EQ(y[3], 3);
}

// A rule violation found by the core is reported with the core's own message.
TEST(CApiErrors, CoreMessageIsReported) {
  const std::vector<float> x(6, 1.0f);
  const std::vector<int64_t> shape = {2, 3};
  const std::vector<float> scale = {1, 2, 3};
  const std::vector<int64_t> scale_shape = {3};
  const qdq_tensor xt = tensor(kFloat, shape, x.data());
  const qdq_tensor st = tensor(kFloat, scale_shape, scale.data());
  std::vector<uint8_t> y(6);
  const qdq_mutable_tensor yt = output(kUint8, shape, y.data());
  qdq_quantize_attributes attributes;
  qdq_quantize_attributes_init(&attributes);
  attributes.axis = 5;
  attributes.opset = 21;
  ASSERT_EQ(qdq_quantize_linear(&xt, &st, nullptr, &attributes, &yt), QDQ_INVALID_ARGUMENT);

  qdq::QuantizeLinearAttributes core_attributes;
  core_attributes.axis = 5;
  core_attributes.opset = 21;
  const qdq::Result<qdq::Plan> core = qdq::plan_quantize_linear(
      {qdq::ElementType::kFloat32, shape, x.data()}, {qdq::ElementType::kFloat32, scale_shape, scale.data()}, nullptr,
      core_attributes);
  ASSERT_FALSE(core.ok());
  EXPECT_EQ(last_error(), core.status().message());
  EXPECT_ERROR_MENTIONS("QuantizeLinear-21", "axis 5", "[-2, 1]");

  // The same through the output-type query.
  int32_t out_type = -7;
  ASSERT_EQ(qdq_quantize_linear_output_type(&xt, &st, nullptr, &attributes, &out_type), QDQ_INVALID_ARGUMENT);
  EXPECT_EQ(last_error(), core.status().message());
  EXPECT_EQ(out_type, -7);

  // Unknown type codes are named.
  qdq_tensor unknown = xt;
  unknown.type = 11;  // DOUBLE
  ASSERT_EQ(qdq_quantize_linear(&unknown, &st, nullptr, nullptr, &yt), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("QuantizeLinear-25", "'x'", "unknown element type code 11");
  unknown.type = 99;
  std::vector<float> fy(6);
  const qdq_mutable_tensor fyt = output(kFloat, shape, fy.data());
  ASSERT_EQ(qdq_dequantize_linear(&unknown, &st, nullptr, nullptr, &fyt), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("DequantizeLinear-25", "unknown element type code 99");

  // An output buffer that does not match the plan, through the C ABI.
  attributes.axis = 1;
  const qdq_mutable_tensor wrong_type = output(kInt8, shape, y.data());
  ASSERT_EQ(qdq_quantize_linear(&xt, &st, nullptr, &attributes, &wrong_type), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("QuantizeLinear-21", "output buffer", "int8", "uint8");
  const std::vector<int64_t> flat = {6};
  const qdq_mutable_tensor wrong_shape = output(kUint8, flat, y.data());
  ASSERT_EQ(qdq_quantize_linear(&xt, &st, nullptr, &attributes, &wrong_shape), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("QuantizeLinear-21", "output buffer", "rank 1", "[2, 3]");  // y's dims unread
  const qdq_mutable_tensor null_data = output(kUint8, shape, nullptr);
  ASSERT_EQ(qdq_quantize_linear(&xt, &st, nullptr, &attributes, &null_data), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("QuantizeLinear-21", "null", "6 elements");
  EXPECT_EQ(y, std::vector<uint8_t>(6, 0));
}

TEST(CApiErrors, LastErrorClearedAfterSuccess) {
  Args a;
  const qdq_tensor fx = a.fx(), s = a.s();
  const qdq_mutable_tensor yu = a.y_u8();
  ASSERT_EQ(qdq_quantize_linear(nullptr, &s, nullptr, nullptr, &yu), QDQ_INVALID_ARGUMENT);
  ASSERT_NE(last_error(), "");
  ASSERT_EQ(qdq_quantize_linear(&fx, &s, nullptr, nullptr, &yu), QDQ_OK);
  EXPECT_STREQ(qdq_last_error(), "");

  // Each kind of successful call clears it.
  int32_t out_type = 0;
  ASSERT_EQ(qdq_quantize_linear(nullptr, &s, nullptr, nullptr, &yu), QDQ_INVALID_ARGUMENT);
  ASSERT_EQ(qdq_quantize_linear_output_type(&fx, &s, nullptr, nullptr, &out_type), QDQ_OK);
  EXPECT_STREQ(qdq_last_error(), "");
  ASSERT_EQ(qdq_quantize_linear(nullptr, &s, nullptr, nullptr, &yu), QDQ_INVALID_ARGUMENT);
  const qdq_tensor s1 = a.s1();
  ASSERT_EQ(qdq_elementwise_quantize_linear(&fx, &s1, nullptr, &yu), QDQ_OK) << last_error();
  EXPECT_STREQ(qdq_last_error(), "");
}

TEST(CApiErrors, LastErrorIsPerThread) {
  ASSERT_EQ(qdq_quantize_linear(nullptr, nullptr, nullptr, nullptr, nullptr), QDQ_INVALID_ARGUMENT);
  const std::string main_message = last_error();
  ASSERT_NE(main_message, "");
  std::string seen_in_thread = "unset";
  std::string thread_failure;
  std::thread worker([&] {
    seen_in_thread = qdq_last_error();
    qdq_dequantize_linear(nullptr, nullptr, nullptr, nullptr, nullptr);
    thread_failure = qdq_last_error();
  });
  worker.join();
  EXPECT_EQ(seen_in_thread, "");
  EXPECT_TRUE(contains(thread_failure, "qdq_dequantize_linear")) << thread_failure;
  EXPECT_EQ(last_error(), main_message);
}

TEST(CApiOutputType, Quantize) {
  const std::vector<float> x(4, 0.0f);
  const std::vector<int64_t> shape = {4};
  const float scale = 1.0f;
  const qdq_tensor xt = tensor(kFloat, shape, x.data());
  const qdq_tensor st = scalar(kFloat, &scale);
  int32_t type = -7;

  ASSERT_EQ(qdq_quantize_linear_output_type(&xt, &st, nullptr, nullptr, &type), QDQ_OK) << last_error();
  EXPECT_EQ(type, kUint8);
  const int8_t zp_i8 = 0;
  const qdq_tensor zi8 = scalar(kInt8, &zp_i8);
  ASSERT_EQ(qdq_quantize_linear_output_type(&xt, &st, &zi8, nullptr, &type), QDQ_OK) << last_error();
  EXPECT_EQ(type, kInt8);
  const uint8_t zp_f8 = 0;
  const qdq_tensor zf8 = scalar(kE4M3FN, &zp_f8);
  ASSERT_EQ(qdq_quantize_linear_output_type(&xt, &st, &zf8, nullptr, &type), QDQ_OK) << last_error();
  EXPECT_EQ(type, kE4M3FN);
  qdq_quantize_attributes attributes;
  qdq_quantize_attributes_init(&attributes);
  attributes.output_dtype = kInt16;
  ASSERT_EQ(qdq_quantize_linear_output_type(&xt, &st, nullptr, &attributes, &type), QDQ_OK) << last_error();
  EXPECT_EQ(type, kInt16);
  attributes.output_dtype = kInt4;
  ASSERT_EQ(qdq_quantize_linear_output_type(&xt, &st, nullptr, &attributes, &type), QDQ_OK) << last_error();
  EXPECT_EQ(type, kInt4);
  // Rejections leave the output alone.
  type = -7;
  attributes.output_dtype = kFloat16;
  EXPECT_EQ(qdq_quantize_linear_output_type(&xt, &st, nullptr, &attributes, &type), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("QuantizeLinear-25", "float16", "output_dtype");
  EXPECT_EQ(type, -7);
  attributes.output_dtype = kInt8;
  const uint8_t zp_u8 = 0;
  const qdq_tensor zu8 = scalar(kUint8, &zp_u8);
  EXPECT_EQ(qdq_quantize_linear_output_type(&xt, &st, &zu8, &attributes, &type), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("QuantizeLinear-25", "int8", "uint8");
  EXPECT_EQ(type, -7);
}

TEST(CApiOutputType, Dequantize) {
  const std::vector<int8_t> x(4, 0);
  const std::vector<int64_t> shape = {4};
  const qdq_tensor xt = tensor(kInt8, shape, x.data());
  const float scale = 1.0f;
  const uint16_t half_scale = 0x3C00;
  const uint16_t bf16_scale = 0x3F80;
  const uint8_t e8m0_scale = 127;
  const qdq_tensor f32s = scalar(kFloat, &scale), f16s = scalar(kFloat16, &half_scale),
                   bf16s = scalar(kBfloat16, &bf16_scale), e8m0s = scalar(kE8M0, &e8m0_scale);
  int32_t type = -7;

  ASSERT_EQ(qdq_dequantize_linear_output_type(&xt, &f32s, nullptr, nullptr, &type), QDQ_OK) << last_error();
  EXPECT_EQ(type, kFloat);
  ASSERT_EQ(qdq_dequantize_linear_output_type(&xt, &f16s, nullptr, nullptr, &type), QDQ_OK) << last_error();
  EXPECT_EQ(type, kFloat16);
  ASSERT_EQ(qdq_dequantize_linear_output_type(&xt, &bf16s, nullptr, nullptr, &type), QDQ_OK) << last_error();
  EXPECT_EQ(type, kBfloat16);
  qdq_dequantize_attributes attributes;
  qdq_dequantize_attributes_init(&attributes);
  attributes.opset = 19;
  ASSERT_EQ(qdq_dequantize_linear_output_type(&xt, &f16s, nullptr, &attributes, &type), QDQ_OK) << last_error();
  EXPECT_EQ(type, kFloat16);
  attributes.opset = 13;  // float output, float scale only
  ASSERT_EQ(qdq_dequantize_linear_output_type(&xt, &f32s, nullptr, &attributes, &type), QDQ_OK) << last_error();
  EXPECT_EQ(type, kFloat);
  attributes.opset = 25;
  attributes.output_dtype = kBfloat16;
  ASSERT_EQ(qdq_dequantize_linear_output_type(&xt, &e8m0s, nullptr, &attributes, &type), QDQ_OK) << last_error();
  EXPECT_EQ(type, kBfloat16);
  type = -7;
  attributes.output_dtype = 0;
  EXPECT_EQ(qdq_dequantize_linear_output_type(&xt, &e8m0s, nullptr, &attributes, &type), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("DequantizeLinear-25", "float8_e8m0fnu", "output_dtype");
  EXPECT_EQ(type, -7);
  attributes.output_dtype = kInt32;
  EXPECT_EQ(qdq_dequantize_linear_output_type(&xt, &f32s, nullptr, &attributes, &type), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("DequantizeLinear-25", "int32", "output_dtype");
  EXPECT_EQ(type, -7);
}

// Quark per-axis with an int16 zero point, by hand:
//   row 0: [1.5/1, 3/2, -8/4] = [1.5, 1.5, -2] -> [2, 2, -2] + [0, 10, -10] = [2, 12, -12]
//   row 1: [2.5/1, 1e5/2, -1e6/4] -> [2, 50000 + 10, -250000 - 10] -> saturated [2, 32767, -32768]
TEST(CApiExtended, QuantizeAndDequantizePerAxis) {
  const std::vector<float> x = {1.5f, 3.0f, -8.0f, 2.5f, 100000.0f, -1000000.0f};
  const std::vector<int64_t> shape = {2, 3};
  const std::vector<float> scale = {1, 2, 4};
  const std::vector<int16_t> zero_point = {0, 10, -10};
  const std::vector<int64_t> axis_shape = {3};
  const qdq_tensor xt = tensor(kFloat, shape, x.data());
  const qdq_tensor st = tensor(kFloat, axis_shape, scale.data());
  const qdq_tensor zt = tensor(kInt16, axis_shape, zero_point.data());
  std::vector<int16_t> y(6, 0x5555);
  const qdq_mutable_tensor yt = output(kInt16, shape, y.data());
  ASSERT_EQ(qdq_extended_quantize_linear(&xt, &st, &zt, 1, &yt), QDQ_OK) << last_error();
  EXPECT_EQ(y, (std::vector<int16_t>{2, 12, -12, 2, 32767, -32768}));
  EXPECT_STREQ(qdq_last_error(), "");

  // Dequantize: (q - zp) * scale = [2, 4, -8, 2, 65514, -131032], all exact in float32.
  const qdq_tensor qt = tensor(kInt16, shape, y.data());
  std::vector<float> back(6, -1.0f);
  const qdq_mutable_tensor bt = output(kFloat, shape, back.data());
  ASSERT_EQ(qdq_extended_dequantize_linear(&qt, &st, &zt, -1, &bt), QDQ_OK) << last_error();
  EXPECT_EQ(back, (std::vector<float>{2, 4, -8, 2, 65514, -131032}));

  // Errors name the Quark operator.
  const uint8_t int4_zp = 0;
  const qdq_tensor z4 = scalar(kInt4, &int4_zp);
  const float one = 1.0f;
  const qdq_tensor s0 = scalar(kFloat, &one);
  EXPECT_EQ(qdq_extended_quantize_linear(&xt, &s0, &z4, 1, &yt), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("ExtendedQuantizeLinear-1", "int4", "y_zero_point");
  EXPECT_EQ(qdq_extended_dequantize_linear(&qt, &st, &zt, 2, &bt), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("ExtendedDequantizeLinear-1", "axis 2");
  const qdq_mutable_tensor wrong = output(kFloat16, shape, back.data());
  EXPECT_EQ(qdq_extended_dequantize_linear(&qt, &st, &zt, 1, &wrong), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("ExtendedDequantizeLinear-1", "float16", "float32");
}

// DirectML element-wise with broadcasting: scale [1, 2] and zero point [2, 1] over x [2, 2].
TEST(CApiElementwise, QuantizeAndDequantizeWithBroadcast) {
  const std::vector<float> x = {1, 2, 3, 4};
  const std::vector<int64_t> shape = {2, 2};
  const std::vector<float> scale = {1, 2};
  const std::vector<int64_t> row = {1, 2};
  const std::vector<int8_t> zero_point = {0, -5};
  const std::vector<int64_t> column = {2, 1};
  const qdq_tensor xt = tensor(kFloat, shape, x.data());
  const qdq_tensor st = tensor(kFloat, row, scale.data());
  const qdq_tensor zt = tensor(kInt8, column, zero_point.data());
  std::vector<int8_t> y(4, 99);
  const qdq_mutable_tensor yt = output(kInt8, shape, y.data());
  // [1/1 + 0, 2/2 + 0, 3/1 - 5, 4/2 - 5]
  ASSERT_EQ(qdq_elementwise_quantize_linear(&xt, &st, &zt, &yt), QDQ_OK) << last_error();
  EXPECT_EQ(y, (std::vector<int8_t>{1, 1, -2, -3}));
  EXPECT_STREQ(qdq_last_error(), "");

  // No zero point: the output type comes from y.
  std::vector<uint8_t> yu(4, 99);
  const qdq_mutable_tensor yut = output(kUint8, shape, yu.data());
  ASSERT_EQ(qdq_elementwise_quantize_linear(&xt, &st, nullptr, &yut), QDQ_OK) << last_error();
  EXPECT_EQ(yu, (std::vector<uint8_t>{1, 1, 3, 2}));

  // y's type must be a DirectML output type, and the zero point's.
  const qdq_mutable_tensor y16 = output(kInt16, shape, y.data());
  EXPECT_EQ(qdq_elementwise_quantize_linear(&xt, &st, nullptr, &y16), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("ElementWiseQuantizeLinear", "int16");
  EXPECT_EQ(qdq_elementwise_quantize_linear(&xt, &st, &zt, &yut), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("ElementWiseQuantizeLinear", "uint8", "int8");
  const qdq_mutable_tensor y99 = output(99, shape, y.data());
  EXPECT_EQ(qdq_elementwise_quantize_linear(&xt, &st, nullptr, &y99), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("ElementWiseQuantizeLinear", "unknown element type code 99");
  // Scale of another rank.
  const float one = 1.0f;
  const qdq_tensor s0 = scalar(kFloat, &one);
  EXPECT_EQ(qdq_elementwise_quantize_linear(&xt, &s0, nullptr, &yut), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("ElementWiseQuantizeLinear", "'scale'", "rank 0");

  // Dequantize: x uint8, scale [1, 2] = {0.5, 0.25}, zero point [2, 1] = {10, 0}:
  // [(10-10)*0.5, (20-10)*0.25, (30-0)*0.5, (40-0)*0.25] = [0, 2.5, 15, 10]
  const std::vector<uint8_t> qx = {10, 20, 30, 40};
  const std::vector<float> dq_scale = {0.5f, 0.25f};
  const std::vector<uint8_t> dq_zp = {10, 0};
  const qdq_tensor qxt = tensor(kUint8, shape, qx.data());
  const qdq_tensor dst = tensor(kFloat, row, dq_scale.data());
  const qdq_tensor dzt = tensor(kUint8, column, dq_zp.data());
  std::vector<float> out(4, -1.0f);
  const qdq_mutable_tensor ot = output(kFloat, shape, out.data());
  ASSERT_EQ(qdq_elementwise_dequantize_linear(&qxt, &dst, &dzt, &ot), QDQ_OK) << last_error();
  EXPECT_EQ(out, (std::vector<float>{0, 2.5f, 15, 10}));

  // DirectML: the output has the scale's type.
  const qdq_mutable_tensor half = output(kFloat16, shape, out.data());
  EXPECT_EQ(qdq_elementwise_dequantize_linear(&qxt, &dst, &dzt, &half), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("ElementWiseDequantizeLinear", "float16", "float32");
  const qdq_mutable_tensor bf16 = output(kBfloat16, shape, out.data());
  EXPECT_EQ(qdq_elementwise_dequantize_linear(&qxt, &dst, &dzt, &bf16), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("ElementWiseDequantizeLinear", "bfloat16");
  const qdq_tensor fxt = tensor(kFloat, shape, x.data());
  EXPECT_EQ(qdq_elementwise_dequantize_linear(&fxt, &dst, nullptr, &ot), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("ElementWiseDequantizeLinear", "'x'", "float32");
}

// Empty tensors may have NULL data everywhere.
TEST(CApiShapes, ZeroSizeWithNullData) {
  const std::vector<int64_t> shape = {3, 0};
  const float scale = 1.0f;
  const qdq_tensor xt = tensor(kFloat, shape, nullptr);
  const qdq_tensor st = scalar(kFloat, &scale);
  const qdq_mutable_tensor yt = output(kUint8, shape, nullptr);
  EXPECT_EQ(qdq_quantize_linear(&xt, &st, nullptr, nullptr, &yt), QDQ_OK) << last_error();
  const qdq_tensor qt = tensor(kUint8, shape, nullptr);
  const qdq_mutable_tensor ft = output(kFloat, shape, nullptr);
  EXPECT_EQ(qdq_dequantize_linear(&qt, &st, nullptr, nullptr, &ft), QDQ_OK) << last_error();
  // But a non-empty x with NULL data is an error.
  const std::vector<int64_t> full = {3};
  const qdq_tensor nx = tensor(kFloat, full, nullptr);
  EXPECT_EQ(qdq_quantize_linear(&nx, &st, nullptr, nullptr, &yt), QDQ_INVALID_ARGUMENT);
  EXPECT_ERROR_MENTIONS("QuantizeLinear-25", "'x'", "null data", "3 elements");
}

}  // namespace

namespace {

// The toolkit through the C ABI gives what the C++ API gives (the formulas are tested in
// python/tests/test_toolkit.py); misuse is reported, never followed.
TEST(CApiToolkit, QparamsAndDynamicQuantizeMatchTheCppApi) {
  std::vector<float> x(4 * 64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101) / 7.0f - 6.0f;
  const int64_t x_shape[2] = {4, 64};
  const qdq_tensor xt{1, 2, x_shape, x.data()};
  qdq_qparams_options o;
  qdq_qparams_options_init(&o);
  EXPECT_EQ(o.quantized_type, 3);
  EXPECT_EQ(o.method, QDQ_SCALE_MINMAX);
  o.quantized_type = 22;  // INT4
  o.granularity = QDQ_BLOCKED;
  o.axis = -1;
  o.block_size = 32;
  int32_t rank = -1;
  int64_t shape[2] = {};
  ASSERT_EQ(qdq_qparams_shape(&xt, &o, &rank, shape), QDQ_OK) << qdq_last_error();
  ASSERT_EQ(rank, 2);
  EXPECT_EQ(shape[0], 4);
  EXPECT_EQ(shape[1], 2);
  float scale[8];
  uint8_t zp[4], y[128];
  const qdq_mutable_tensor st{1, 2, shape, scale}, zt{22, 2, shape, zp}, yt{22, 2, x_shape, y};
  ASSERT_EQ(qdq_dynamic_quantize(&xt, &o, &yt, &st, &zt), QDQ_OK) << qdq_last_error();

  qdq::QparamsOptions cpp;
  cpp.quantized_type = qdq::ElementType::kInt4;
  cpp.granularity = qdq::Granularity::kBlocked;
  cpp.axis = -1;
  cpp.block_size = 32;
  float want_scale[8];
  uint8_t want_zp[4], want_y[128];
  const std::vector<int64_t> xs = {4, 64}, ss = {4, 2};
  qdq::MutableTensorView want_zv{qdq::ElementType::kInt4, ss, want_zp};
  ASSERT_TRUE(qdq::dynamic_quantize({qdq::ElementType::kFloat32, xs, x.data()}, cpp, {qdq::ElementType::kInt4, xs, want_y},
                                    {qdq::ElementType::kFloat32, ss, want_scale}, &want_zv)
                  .ok());
  EXPECT_EQ(std::memcmp(scale, want_scale, sizeof scale), 0);
  EXPECT_EQ(std::memcmp(zp, want_zp, sizeof zp), 0);
  EXPECT_EQ(std::memcmp(y, want_y, sizeof y), 0);

  ASSERT_EQ(qdq_compute_qparams(&xt, &o, &st, &zt), QDQ_OK) << qdq_last_error();
  EXPECT_EQ(std::memcmp(scale, want_scale, sizeof scale), 0);

  o.method = 99;
  EXPECT_EQ(qdq_compute_qparams(&xt, &o, &st, &zt), QDQ_INVALID_ARGUMENT);
  EXPECT_NE(std::string(qdq_last_error()).find("options->method is 99"), std::string::npos) << qdq_last_error();
  EXPECT_EQ(qdq_compute_qparams(&xt, nullptr, &st, &zt), QDQ_INVALID_ARGUMENT);
  EXPECT_NE(std::string(qdq_last_error()).find("'options' is NULL"), std::string::npos) << qdq_last_error();
}

// The C ABI takes tensors at any address: the toolkit reads float32 x one element at a time in
// its tails (the reduction's, the MX/BFP pass-through of one element), so those reads must not
// assume float's alignment (UndefinedBehaviorSanitizer stops on them). x, y and the scales at
// byte offsets 1 to 3 give what they give at aligned addresses; 3 x 37 leaves a tail on every
// vector width.
TEST(CApiToolkit, OddAddressedTensorsMatchAligned) {
  constexpr size_t kCount = 3 * 37;
  const int64_t x_shape[2] = {3, 37};
  std::vector<float> values(kCount);
  for (size_t i = 0; i < kCount; ++i) values[i] = static_cast<float>((i * 53) % 97) / 9.0f - 5.0f;
  for (size_t offset : {1, 2, 3}) {
    std::vector<unsigned char> x_bytes(4 * kCount + offset), y_bytes(4 * kCount + offset), scale_bytes(4 * 3 + offset);
    std::memcpy(x_bytes.data() + offset, values.data(), 4 * kCount);
    const qdq_tensor odd_x{1, 2, x_shape, x_bytes.data() + offset}, aligned_x{1, 2, x_shape, values.data()};
    // Per-axis minmax scales (the reduction of each row of 37).
    qdq_qparams_options o;
    qdq_qparams_options_init(&o);
    o.quantized_type = 2;  // UINT8
    o.granularity = QDQ_PER_AXIS;
    o.axis = 0;
    const int64_t scale_shape[1] = {3};
    float want_scale[3];
    uint8_t want_zp[3], zp[3];
    const qdq_mutable_tensor want_st{1, 1, scale_shape, want_scale}, want_zt{2, 1, scale_shape, want_zp};
    const qdq_mutable_tensor st{1, 1, scale_shape, scale_bytes.data() + offset}, zt{2, 1, scale_shape, zp};
    ASSERT_EQ(qdq_compute_qparams(&aligned_x, &o, &want_st, &want_zt), QDQ_OK) << qdq_last_error();
    ASSERT_EQ(qdq_compute_qparams(&odd_x, &o, &st, &zt), QDQ_OK) << qdq_last_error();
    EXPECT_EQ(std::memcmp(scale_bytes.data() + offset, want_scale, sizeof want_scale), 0) << "offset " << offset;
    EXPECT_EQ(std::memcmp(zp, want_zp, sizeof zp), 0) << "offset " << offset;
    // DynamicQuantizeLinear (the per-tensor reduction, then the quantize kernels).
    uint8_t want_y[kCount], y[kCount];
    float want_dynamic_scale = 0, dynamic_scale = 0;
    uint8_t want_dynamic_zp = 0, dynamic_zp = 0;
    const qdq_mutable_tensor want_yt{2, 2, x_shape, want_y}, yt{2, 2, x_shape, y};
    ASSERT_EQ(qdq_dynamic_quantize_linear(&aligned_x, &want_yt, &want_dynamic_scale, &want_dynamic_zp), QDQ_OK);
    ASSERT_EQ(qdq_dynamic_quantize_linear(&odd_x, &yt, &dynamic_scale, &dynamic_zp), QDQ_OK) << qdq_last_error();
    EXPECT_EQ(dynamic_scale, want_dynamic_scale);
    EXPECT_EQ(dynamic_zp, want_dynamic_zp);
    EXPECT_EQ(std::memcmp(y, want_y, sizeof y), 0) << "offset " << offset;
    // MXQuantizeDequantize over the whole tensor and over one element (passed through).
    qdq_mx_attributes mx;
    qdq_mx_attributes_init(&mx);
    mx.element_dtype = "fp8_e4m3";
    std::vector<float> want_fake(kCount);
    const qdq_mutable_tensor want_ft{1, 2, x_shape, want_fake.data()}, ft{1, 2, x_shape, y_bytes.data() + offset};
    ASSERT_EQ(qdq_mx_quantize_dequantize(&aligned_x, &mx, &want_ft), QDQ_OK) << qdq_last_error();
    ASSERT_EQ(qdq_mx_quantize_dequantize(&odd_x, &mx, &ft), QDQ_OK) << qdq_last_error();
    EXPECT_EQ(std::memcmp(y_bytes.data() + offset, want_fake.data(), 4 * kCount), 0) << "offset " << offset;
    // Blocks of 2 and 3 along the last axis (not whole vectors): each vector takes one element of
    // each of `lanes` blocks of a row, gathered from x and scattered to y; on every target, and in
    // place. AVX2 emulates the scatter: Highway's emulation stored through a misaligned float*
    // (UndefinedBehaviorSanitizer, found by the toolkit fuzzer).
    for (const int64_t block : {2, 3}) {
      mx.axis = 1;
      mx.block_size = block;
      ASSERT_EQ(qdq_mx_quantize_dequantize(&aligned_x, &mx, &want_ft), QDQ_OK) << qdq_last_error();
      for (const int64_t target : qdq::kernels::supported_targets()) {
        qdq::kernels::force_target(target);
        const std::string where = qdq::kernels::target_name(target) + " block " + std::to_string(block) + " offset " +
                                  std::to_string(offset);
        ASSERT_EQ(qdq_mx_quantize_dequantize(&odd_x, &mx, &ft), QDQ_OK) << qdq_last_error();
        EXPECT_EQ(std::memcmp(y_bytes.data() + offset, want_fake.data(), 4 * kCount), 0) << where;
        std::memcpy(y_bytes.data() + offset, values.data(), 4 * kCount);
        const qdq_tensor in_place_x{1, 2, x_shape, y_bytes.data() + offset};
        ASSERT_EQ(qdq_mx_quantize_dequantize(&in_place_x, &mx, &ft), QDQ_OK) << qdq_last_error();
        EXPECT_EQ(std::memcmp(y_bytes.data() + offset, want_fake.data(), 4 * kCount), 0) << where << " in place";
      }
      qdq::kernels::force_target(0);
    }
    mx.block_size = 32;
    const int64_t one[1] = {1};
    const qdq_tensor odd_one{1, 1, one, x_bytes.data() + offset};
    const qdq_mutable_tensor odd_one_y{1, 1, one, y_bytes.data() + offset};
    mx.axis = 0;
    ASSERT_EQ(qdq_mx_quantize_dequantize(&odd_one, &mx, &odd_one_y), QDQ_OK) << qdq_last_error();
    EXPECT_EQ(std::memcmp(y_bytes.data() + offset, &values[0], 4), 0) << "offset " << offset;  // one element: x
  }
}

TEST(CApiToolkit, DynamicQuantizeLinear) {
  const float x[4] = {-1.0f, 0.0f, 1.0f, 3.0f};
  const int64_t n[1] = {4};
  uint8_t y[4];
  float scale = 0;
  uint8_t zp = 0;
  const qdq_tensor xt{1, 1, n, x};
  const qdq_mutable_tensor yt{2, 1, n, y};
  ASSERT_EQ(qdq_dynamic_quantize_linear(&xt, &yt, &scale, &zp), QDQ_OK) << qdq_last_error();
  // scale = (3 - -1) / 255; zero point = rint(0 - (-1) / scale) = rint(63.75) = 64.
  EXPECT_EQ(scale, 4.0f / 255.0f);
  EXPECT_EQ(zp, 64);
  EXPECT_EQ(y[0], 0);
  EXPECT_EQ(y[1], 64);
  EXPECT_EQ(y[3], 255);
  EXPECT_EQ(qdq_dynamic_quantize_linear(&xt, &yt, nullptr, &zp), QDQ_INVALID_ARGUMENT);
  EXPECT_NE(std::string(qdq_last_error()).find("'y_scale' is NULL"), std::string::npos) << qdq_last_error();
}

// The toolkit's outputs get the rule of finding 4: a rank other than the one the output must
// have is refused from the rank alone, because the caller's shape array holds only `rank` dims and
// the messages format shapes (the toolkit fuzzer's first memory finding: DynamicQuantizeLinear's
// y of rank 2 over one dim made the shape message read past the array). Every output of every
// toolkit entry point, with its dims ending at a guard page.
TEST(CApiToolkit, OutputRanksAreCheckedBeforeTheirDimsAreRead) {
  const float x[4] = {-1.0f, 0.5f, 2.0f, 3.0f};
  const std::vector<int64_t> x_shape = {4};
  const qdq_tensor xt = tensor(kFloat, x_shape, x);
  uint8_t y[4] = {};
  float y_float[4] = {};
  float scale = 0.0f;
  uint8_t zero_point = 0;
  GuardedShape one_dim({4});
  ASSERT_NE(one_dim.dims(), nullptr);
  qdq_qparams_options o;
  qdq_qparams_options_init(&o);
  o.quantized_type = kUint8;
  o.granularity = QDQ_PER_AXIS;
  o.axis = 0;  // scales of shape [4]
  for (const int32_t rank : {2, 8, 64}) {
    const std::string rank_text = std::to_string(rank);
    const qdq_mutable_tensor bad_y{kUint8, rank, one_dim.dims(), y};
    const qdq_mutable_tensor bad_y_float{kFloat, rank, one_dim.dims(), y_float};
    const qdq_mutable_tensor bad_scale{kFloat, rank, one_dim.dims(), y_float};
    const qdq_mutable_tensor bad_zero_point{kUint8, rank, one_dim.dims(), y};
    const qdq_mutable_tensor good_y{kUint8, 1, one_dim.dims(), y};
    const qdq_mutable_tensor good_scale{kFloat, 1, one_dim.dims(), y_float};
    const qdq_mutable_tensor good_zero_point{kUint8, 1, one_dim.dims(), y};

    EXPECT_EQ(qdq_dynamic_quantize_linear(&xt, &bad_y, &scale, &zero_point), QDQ_INVALID_ARGUMENT);
    EXPECT_ERROR_MENTIONS("output 'y' has rank", rank_text.c_str());
    EXPECT_EQ(qdq_compute_qparams(&xt, &o, &bad_scale, &good_zero_point), QDQ_INVALID_ARGUMENT);
    EXPECT_ERROR_MENTIONS("output 'scale' has rank", rank_text.c_str());
    EXPECT_EQ(qdq_compute_qparams(&xt, &o, &good_scale, &bad_zero_point), QDQ_INVALID_ARGUMENT);
    EXPECT_ERROR_MENTIONS("output 'zero_point' has rank", rank_text.c_str());
    EXPECT_EQ(qdq_dynamic_quantize(&xt, &o, &bad_y, &good_scale, &good_zero_point), QDQ_INVALID_ARGUMENT);
    EXPECT_ERROR_MENTIONS("output 'y' has rank", rank_text.c_str());
    qdq_mx_attributes mx;
    qdq_mx_attributes_init(&mx);
    mx.axis = 0;
    EXPECT_EQ(qdq_mx_quantize_dequantize(&xt, &mx, &bad_y_float), QDQ_INVALID_ARGUMENT);
    EXPECT_ERROR_MENTIONS("output 'y' has rank", rank_text.c_str());
    qdq_bfp_attributes bfp;
    qdq_bfp_attributes_init(&bfp);
    bfp.axis = 0;
    EXPECT_EQ(qdq_bfp_quantize_dequantize(&xt, &bfp, &bad_y_float), QDQ_INVALID_ARGUMENT);
    EXPECT_ERROR_MENTIONS("output 'y' has rank", rank_text.c_str());
    // The same calls with the right ranks go through.
    EXPECT_EQ(qdq_dynamic_quantize_linear(&xt, &good_y, &scale, &zero_point), QDQ_OK) << qdq_last_error();
    EXPECT_EQ(qdq_dynamic_quantize(&xt, &o, &good_y, &good_scale, &good_zero_point), QDQ_OK) << qdq_last_error();
  }
}

}  // namespace
