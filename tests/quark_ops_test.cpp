// Quark's MXQuantizeDequantize / BFPQuantizeDequantize: qdq against the outputs of Quark's own CPU
// kernels (tests/data/quark_mx_bfp_golden.bin, recorded by scripts/make_quark_mx_bfp_golden.py),
// bit for bit on every Highway target; then the kernel paths against each other on shapes large
// enough to take them all (strided columns, gathered small blocks, reduced long blocks, scratch
// tails), in place, and the attribute errors.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "qdq/qdq.h"
#include "qdq/quark_ops.hpp"

namespace qdq {
namespace {

struct GoldenCase {
  bool mx = true;
  ElementType type = ElementType::kFloat32;
  std::string name;  // element_dtype or bfp_method
  int64_t ints[8] = {};
  std::vector<int64_t> shape;
  std::vector<uint8_t> x, y;

  std::string describe() const {
    std::string s = std::string(mx ? "MX " : "BFP ") + name + (type == ElementType::kFloat16 ? " float16" : "") + " [";
    for (int64_t d : shape) s += std::to_string(d) + ",";
    s += "] attrs";
    for (int64_t v : ints) s += " " + std::to_string(v);
    return s;
  }
};

template <class T>
T read(std::ifstream& in) {
  T value{};
  in.read(reinterpret_cast<char*>(&value), sizeof value);
  return value;
}

std::vector<GoldenCase> load_golden() {
  std::ifstream in(std::string(QDQ_TEST_DATA_DIR) + "/quark_mx_bfp_golden.bin", std::ios::binary);
  std::vector<GoldenCase> cases;
  char magic[8];
  in.read(magic, 8);
  if (!in || std::memcmp(magic, "QDQMXBFP", 8) != 0) return cases;
  const uint32_t count = read<uint32_t>(in);
  for (uint32_t i = 0; i < count && in; ++i) {
    GoldenCase c;
    c.mx = read<uint32_t>(in) == 0;
    c.type = read<uint32_t>(in) == 10 ? ElementType::kFloat16 : ElementType::kFloat32;
    c.name.resize(read<uint32_t>(in));
    in.read(c.name.data(), static_cast<std::streamsize>(c.name.size()));
    for (int64_t& v : c.ints) v = read<int64_t>(in);
    c.shape.resize(read<uint32_t>(in));
    uint64_t n = 1;
    for (int64_t& d : c.shape) n *= static_cast<uint64_t>(d = read<int64_t>(in));
    const uint64_t bytes = n * (c.type == ElementType::kFloat16 ? 2 : 4);
    c.x.resize(bytes);
    c.y.resize(bytes);
    in.read(reinterpret_cast<char*>(c.x.data()), static_cast<std::streamsize>(bytes));
    in.read(reinterpret_cast<char*>(c.y.data()), static_cast<std::streamsize>(bytes));
    cases.push_back(std::move(c));
  }
  return cases;
}

Status run_case(const GoldenCase& c, const void* x, void* y) {
  const TensorView xv{c.type, c.shape, x};
  const MutableTensorView yv{c.type, c.shape, y};
  if (c.mx) {
    MxQuantizeDequantizeAttributes a;
    a.element_dtype = c.name;
    a.axis = c.ints[0];
    a.block_size = c.ints[1];
    a.rounding_mode = c.ints[2];
    return mx_quantize_dequantize(xv, a, yv);
  }
  BfpQuantizeDequantizeAttributes a;
  a.bfp_method = c.name;
  a.axis = c.ints[0];
  a.bit_width = c.ints[1];
  a.block_size = c.ints[2];
  a.rounding_mode = c.ints[3];
  a.sub_block_size = c.ints[4];
  a.sub_block_shift_bits = c.ints[5];
  a.convert_to_bfloat_before_bfp = c.ints[6];
  a.use_compiler_version_cpu_kernel = c.ints[7];
  return bfp_quantize_dequantize(xv, a, yv);
}

class QuarkOps : public ::testing::Test {
 protected:
  void TearDown() override { kernels::force_target(0); }
};

TEST_F(QuarkOps, BitExactWithQuarksRecordedOutputsOnEveryTarget) {
  const std::vector<GoldenCase> cases = load_golden();
  ASSERT_GE(cases.size(), 400u) << "tests/data/quark_mx_bfp_golden.bin is missing or short";
  int mx_cases = 0;
  int bfp_cases = 0;
  for (int64_t target : kernels::supported_targets()) {
    kernels::force_target(target);
    for (const GoldenCase& c : cases) {
      std::vector<uint8_t> y(c.y.size() + 8, 0xCD);
      const Status s = run_case(c, c.x.data(), y.data());
      ASSERT_TRUE(s.ok()) << c.describe() << ": " << s.message();
      const size_t width = c.type == ElementType::kFloat16 ? 2 : 4;
      for (size_t i = 0; i < c.y.size(); i += width) {
        ASSERT_EQ(std::memcmp(&y[i], &c.y[i], width), 0)
            << kernels::target_name(target) << " " << c.describe() << " element " << i / width;
      }
      for (size_t i = c.y.size(); i < y.size(); ++i) ASSERT_EQ(y[i], 0xCD) << c.describe() << ": wrote past y";
      // In place: y is x.
      std::vector<uint8_t> inplace = c.x;
      ASSERT_TRUE(run_case(c, inplace.data(), inplace.data()).ok());
      ASSERT_EQ(inplace, c.y) << kernels::target_name(target) << " in place: " << c.describe();
      (c.mx ? mx_cases : bfp_cases) += 1;
    }
  }
  RecordProperty("mx_cases", mx_cases);
  RecordProperty("bfp_cases", bfp_cases);
}

// Values over many binades with the specials and ties mixed in (fixed seed).
std::vector<float> mixed_values(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::vector<float> v(n);
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, -3e-39f, 3.4e38f, 0.5f, -2.5f, 448.0f, 7.75f};
  for (float& f : v) {
    const uint32_t pick = g() % 16;
    if (pick == 0) {
      f = specials[g() % 12];
    } else if (pick < 4) {
      f = (static_cast<float>(static_cast<int>(g() % 512) - 256) + 0.5f) * std::ldexp(1.0f, -static_cast<int>(g() % 8));
    } else {
      f = std::ldexp(static_cast<float>(static_cast<int>(g() % 20001) - 10000) / 1000.0f, static_cast<int>(g() % 40) - 20);
    }
  }
  return v;
}

// Moves `axis` of a [d0, d1, d2] float tensor to the end: the same blocks, contiguous.
std::vector<float> axis_last(const std::vector<float>& x, const int64_t d[3], int axis) {
  std::vector<float> out(x.size());
  size_t o = 0;
  const int a = axis, b = (axis + 1) % 3, c = (axis + 2) % 3;
  const int first = std::min(b, c), second = std::max(b, c);
  int64_t idx[3];
  for (idx[first] = 0; idx[first] < d[first]; ++idx[first])
    for (idx[second] = 0; idx[second] < d[second]; ++idx[second])
      for (idx[a] = 0; idx[a] < d[a]; ++idx[a]) out[o++] = x[static_cast<size_t>((idx[0] * d[1] + idx[1]) * d[2] + idx[2])];
  return out;
}

// Each path against the others: x [d0, d1, d2] with blocks along axis 0 or 1 (strided columns, full
// vectors and tails) equals the same blocks moved to the last axis (reduced or gathered contiguous
// blocks), on every target.
TEST_F(QuarkOps, StridedAndContiguousPathsAgreeOnEveryTarget) {
  struct Config {
    bool mx;
    const char* name;
    int64_t block, rounding, extra;
  };
  const Config configs[] = {
      {true, "fp8_e4m3", 32, 0, 0}, {true, "fp4_e2m1", 3, 0, 0},   {true, "int8", 32, 1, 0},  {true, "fp6_e2m3", 64, 2, 0},
      {false, "to_bfp", 8, 0, 0},   {false, "to_bfp", 12, 2, 1},   {false, "to_bfp_prime", 8, 2, 0},
      {false, "to_bfp_prime", 16, 1, 0},
  };
  const int64_t dims[3] = {5, 70, 37};
  const std::vector<float> x = mixed_values(5 * 70 * 37, 20261122);
  for (int64_t target : kernels::supported_targets()) {
    kernels::force_target(target);
    for (const Config& c : configs) {
      for (int axis : {0, 1, 2}) {
        GoldenCase strided;
        strided.mx = c.mx;
        strided.name = c.name;
        strided.shape = {dims[0], dims[1], dims[2]};
        strided.ints[0] = axis;
        if (c.mx) {
          strided.ints[1] = c.block;
          strided.ints[2] = c.rounding;
        } else {
          strided.ints[1] = 16;
          strided.ints[2] = c.block;
          strided.ints[3] = c.rounding;
          strided.ints[4] = 4;
          strided.ints[5] = 2;
          strided.ints[7] = c.extra;
        }
        std::vector<float> y(x.size());
        ASSERT_TRUE(run_case(strided, x.data(), y.data()).ok());
        GoldenCase contiguous = strided;
        const int rest0 = axis == 0 ? 1 : 0, rest1 = axis == 2 ? 1 : 2;
        contiguous.shape = {dims[rest0], dims[rest1], dims[axis]};
        contiguous.ints[0] = 2;
        const std::vector<float> xt = axis_last(x, dims, axis);
        std::vector<float> yt(x.size());
        ASSERT_TRUE(run_case(contiguous, xt.data(), yt.data()).ok());
        const std::vector<float> want = axis_last(y, dims, axis);
        for (size_t i = 0; i < y.size(); ++i) {
          ASSERT_EQ(std::bit_cast<uint32_t>(yt[i]), std::bit_cast<uint32_t>(want[i]))
              << kernels::target_name(target) << " " << c.name << " block " << c.block << " axis " << axis << " element " << i;
        }
      }
    }
  }
}

// The C ABI runs the same code: one MX and one BFP golden case of each x type, defaults from the
// _init functions, errors as status plus message.
TEST(QuarkOpsCApi, GoldenCasesAndErrors) {
  const std::vector<GoldenCase> cases = load_golden();
  ASSERT_FALSE(cases.empty());
  int checked = 0;
  for (const GoldenCase& c : cases) {
    std::vector<uint8_t> y(c.y.size());
    const qdq_tensor x{static_cast<int32_t>(c.type), static_cast<int32_t>(c.shape.size()), c.shape.data(), c.x.data()};
    const qdq_mutable_tensor out{static_cast<int32_t>(c.type), static_cast<int32_t>(c.shape.size()), c.shape.data(), y.data()};
    qdq_status_code code;
    if (c.mx) {
      qdq_mx_attributes a;
      qdq_mx_attributes_init(&a);
      a.element_dtype = c.name.c_str();
      a.axis = c.ints[0];
      a.block_size = c.ints[1];
      a.rounding_mode = c.ints[2];
      code = qdq_mx_quantize_dequantize(&x, &a, &out);
    } else {
      qdq_bfp_attributes a;
      qdq_bfp_attributes_init(&a);
      a.bfp_method = c.name.c_str();
      a.axis = c.ints[0];
      a.bit_width = c.ints[1];
      a.block_size = c.ints[2];
      a.rounding_mode = c.ints[3];
      a.sub_block_size = c.ints[4];
      a.sub_block_shift_bits = c.ints[5];
      a.convert_to_bfloat_before_bfp = c.ints[6];
      a.use_compiler_version_cpu_kernel = c.ints[7];
      code = qdq_bfp_quantize_dequantize(&x, &a, &out);
    }
    ASSERT_EQ(code, QDQ_OK) << c.describe() << ": " << qdq_last_error();
    ASSERT_EQ(y, c.y) << c.describe();
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(cases.size()));

  qdq_mx_attributes mx;
  qdq_mx_attributes_init(&mx);
  EXPECT_STREQ(mx.element_dtype, "int8");
  EXPECT_EQ(mx.block_size, 32);
  qdq_bfp_attributes bfp;
  qdq_bfp_attributes_init(&bfp);
  EXPECT_STREQ(bfp.bfp_method, "to_bfp");
  EXPECT_EQ(bfp.bit_width, 16);
  const int64_t shape[] = {4};
  float values[4] = {1, 2, 3, 4};
  const qdq_tensor x{1, 1, shape, values};
  const qdq_mutable_tensor y{1, 1, shape, values};
  EXPECT_EQ(qdq_mx_quantize_dequantize(&x, nullptr, &y), QDQ_INVALID_ARGUMENT);
  EXPECT_NE(std::string(qdq_last_error()).find("argument 'attributes' is NULL"), std::string::npos);
  mx.element_dtype = nullptr;
  EXPECT_EQ(qdq_mx_quantize_dequantize(&x, &mx, &y), QDQ_INVALID_ARGUMENT);
  bfp.block_size = -1;
  EXPECT_EQ(qdq_bfp_quantize_dequantize(&x, &bfp, &y), QDQ_INVALID_ARGUMENT);
  EXPECT_NE(std::string(qdq_last_error()).find("block_size -1"), std::string::npos);
  const qdq_tensor bad_rank{1, -1, shape, values};
  EXPECT_EQ(qdq_bfp_quantize_dequantize(&bad_rank, &bfp, &y), QDQ_INVALID_ARGUMENT);
}

TEST(QuarkOpsErrors, NameTheValueAndTheRule) {
  const std::vector<int64_t> shape = {2, 4};
  std::vector<float> x(8, 1.0f), y(8);
  const TensorView xv{ElementType::kFloat32, shape, x.data()};
  const MutableTensorView yv{ElementType::kFloat32, shape, y.data()};
  auto mx_error = [&](MxQuantizeDequantizeAttributes a) { return mx_quantize_dequantize(xv, a, yv).message(); };
  auto bfp_error = [&](BfpQuantizeDequantizeAttributes a) { return bfp_quantize_dequantize(xv, a, yv).message(); };
  MxQuantizeDequantizeAttributes mx;
  mx.element_dtype = "fp5";
  EXPECT_NE(mx_error(mx).find("element_dtype 'fp5'"), std::string::npos);
  mx = {};
  mx.block_size = 0;
  EXPECT_NE(mx_error(mx).find("block_size 0 must be in [1, 2^24]"), std::string::npos);
  mx = {};
  mx.axis = 2;
  EXPECT_NE(mx_error(mx).find("axis 2 is outside [-2, 1]"), std::string::npos);
  BfpQuantizeDequantizeAttributes bfp;
  bfp.bfp_method = "to_mx";
  EXPECT_NE(bfp_error(bfp).find("bfp_method 'to_mx'"), std::string::npos);
  bfp = {};
  bfp.bit_width = 9;
  EXPECT_NE(bfp_error(bfp).find("bit_width 9 must be in [10, 32]"), std::string::npos);
  bfp = {};
  bfp.rounding_mode = 3;
  EXPECT_NE(bfp_error(bfp).find("rounding_mode 3 must be 0"), std::string::npos);
  bfp = {};
  bfp.bfp_method = "to_bfp_prime";
  bfp.sub_block_size = 3;
  EXPECT_NE(bfp_error(bfp).find("sub_block_size 3 must be positive and divide block_size 8"), std::string::npos);
  std::vector<uint8_t> codes(8);
  const TensorView int8{ElementType::kInt8, shape, codes.data()};
  EXPECT_NE(mx_quantize_dequantize(int8, {}, yv).message().find("x has type int8"), std::string::npos);
  const MutableTensorView half{ElementType::kFloat16, shape, y.data()};
  EXPECT_NE(mx_quantize_dequantize(xv, {}, half).message().find("y has type float16"), std::string::npos);
}

// to_bfp ignores the sub-block attributes, whatever they hold: their shift limit was computed for
// every method, so a negative or huge sub_block_shift_bits shifted 1 by it (undefined behaviour,
// UndefinedBehaviorSanitizer in the toolkit fuzzer). The result equals the defaults'.
TEST(QuarkOpsErrors, ToBfpIgnoresTheSubBlockAttributes) {
  std::vector<float> x(64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::ldexp(static_cast<float>(i % 13) - 6.5f, static_cast<int>(i % 7) - 3);
  const std::vector<int64_t> shape = {4, 16};
  std::vector<float> want(x.size()), got(x.size());
  BfpQuantizeDequantizeAttributes a;
  ASSERT_TRUE(bfp_quantize_dequantize({ElementType::kFloat32, shape, x.data()}, a, {ElementType::kFloat32, shape, want.data()}).ok());
  for (const int64_t bits : {int64_t{-1}, int64_t{-9223372036854775807}, int64_t{31}, int64_t{64}}) {
    a.sub_block_shift_bits = bits;
    a.sub_block_size = -3;
    ASSERT_TRUE(bfp_quantize_dequantize({ElementType::kFloat32, shape, x.data()}, a, {ElementType::kFloat32, shape, got.data()}).ok())
        << bits;
    EXPECT_EQ(std::memcmp(got.data(), want.data(), 4 * got.size()), 0) << bits;
  }
}

}  // namespace
}  // namespace qdq
