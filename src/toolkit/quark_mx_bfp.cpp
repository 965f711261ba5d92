// Front door of Quark's MXQuantizeDequantize / BFPQuantizeDequantize: attribute checks (every
// value Quark's kernels compute something defined for is accepted; the rest is an error naming
// the value and the rule), x's geometry, float16 conversion and threading. The arithmetic is in
// quark_blocks_simd.cpp.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <new>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "execute/thread_pool.h"
#include "qdq/quark_ops.hpp"
#include "toolkit/quark_blocks.h"

namespace qdq {
namespace {

using toolkit::BlockGeometry;
using toolkit::BlockMethod;
using toolkit::BlockOp;
using toolkit::Rounding;

// Quark's element types: exponent/mantissa bits, largest exponent, largest value (from Quark's
// table; the float ones equal ml_dtypes' float8_e5m2 / e4m3fn / float6 / float4 maxima).
struct MxElement {
  std::string_view name;
  int exponent_bits;
  int mantissa_bits;
  int emax;
  float max_norm;
};
constexpr MxElement kMxElements[] = {
    {"fp8_e5m2", 5, 2, 15, 57344.0f}, {"fp8_e4m3", 4, 3, 8, 448.0f}, {"fp6_e3m2", 3, 2, 4, 28.0f},
    {"fp6_e2m3", 2, 3, 2, 7.5f},      {"fp4_e2m1", 2, 1, 2, 6.0f},   {"int8", 0, 8, 0, 127.0f},
};

constexpr int64_t kMaxBlockSize = int64_t{1} << 24;

Status check_block_size(const char* op, int64_t block_size) {
  if (block_size < 1 || block_size > kMaxBlockSize) {
    return Status::invalid_argument(std::string(op) + ": block_size " + std::to_string(block_size) +
                                    " must be in [1, 2^24] (Quark divides by it: 0 crashes, a negative size is undefined)");
  }
  return {};
}

Status check_rounding(const char* op, int64_t rounding_mode) {
  if (rounding_mode < 0 || rounding_mode > 2) {
    return Status::invalid_argument(std::string(op) + ": rounding_mode " + std::to_string(rounding_mode) +
                                    " must be 0 (half away from zero), 1 (half up) or 2 (half to even); Quark's "
                                    "BFP kernels leave other values undefined");
  }
  return {};
}

Result<BlockGeometry> geometry_of(const char* op, const TensorView& x, int64_t axis) {
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  BlockGeometry g;
  uint64_t count = 1;
  for (int64_t d : x.shape) {
    if (d < 0) return Status::invalid_argument(std::string(op) + ": x has a negative dimension " + std::to_string(d));
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(d), &count) || count > (uint64_t{1} << 62)) {
      return Status::invalid_argument(std::string(op) + ": x has too many elements");
    }
  }
  if (rank <= 1) {  // Quark ignores axis for rank 1 (and a 0-D x has one element)
    g.axis_length = rank == 0 ? 1 : x.shape[0];
    return g;
  }
  if (axis < -rank || axis >= rank) {
    return Status::invalid_argument(std::string(op) + ": axis " + std::to_string(axis) + " is outside [-" +
                                    std::to_string(rank) + ", " + std::to_string(rank - 1) + "] for x of rank " +
                                    std::to_string(rank));
  }
  const int64_t a = axis < 0 ? axis + rank : axis;
  for (int64_t i = 0; i < a; ++i) g.outer *= x.shape[static_cast<size_t>(i)];
  g.axis_length = x.shape[static_cast<size_t>(a)];
  for (int64_t i = a + 1; i < rank; ++i) g.inner *= x.shape[static_cast<size_t>(i)];
  return g;
}

Status check_tensors(const char* op, const TensorView& x, const MutableTensorView& y) {
  if (x.type != ElementType::kFloat32 && x.type != ElementType::kFloat16) {
    return Status::invalid_argument(std::string(op) + ": x has type " + std::string(name(x.type)) +
                                    "; it must be float32 or float16");
  }
  if (y.type != x.type) {
    return Status::invalid_argument(std::string(op) + ": y has type " + std::string(name(y.type)) +
                                    " but x has type " + std::string(name(x.type)) + " (y takes x's type)");
  }
  if (!std::equal(x.shape.begin(), x.shape.end(), y.shape.begin(), y.shape.end())) {
    return Status::invalid_argument(std::string(op) + ": y's shape differs from x's");
  }
  return {};
}

uint64_t count_of(const TensorView& x) {
  uint64_t n = 1;
  for (int64_t d : x.shape) n *= static_cast<uint64_t>(d);
  return n;
}

// Runs task(i) for i in [0, tasks) on the host's parallel-for or qdq's pool.
template <class Task>
void parallel(const ExecuteOptions& options, uint64_t tasks, const Task& task) {
  auto trampoline = [](void* context, uint64_t index) { (*static_cast<const Task*>(context))(index); };
  if (tasks <= 1) {
    if (tasks == 1) task(0);
  } else if (options.parallel_for.run != nullptr) {
    options.parallel_for.run(options.parallel_for.host, trampoline, const_cast<Task*>(&task), tasks);
  } else {
    exec::default_pool()->parallel_for(trampoline, const_cast<Task*>(&task), tasks);
  }
}

constexpr uint64_t kMinElementsPerTask = 16384;

uint64_t task_count(const ExecuteOptions& options, uint64_t elements, uint64_t units) {
  if (elements < 2 * kMinElementsPerTask || units < 2) return 1;
  const uint64_t threads =
      options.parallel_for.run != nullptr ? 64 : static_cast<uint64_t>(exec::default_pool()->threads());
  if (threads <= 1) return 1;
  return std::min({threads * 4, elements / kMinElementsPerTask, units});
}

// float32 x -> y over the block geometry, threaded by units. The kernels allocate scratch for
// partial blocks (up to block_size x 16 floats); an allocation failure in a task is reported here
// rather than thrown through a thread pool.
Status run_float32(const char* op_name, const BlockOp& op, const BlockGeometry& g, const float* x, float* y,
                   uint64_t elements, const ExecuteOptions& options) {
  const uint64_t units = g.units(op.block_size);
  const uint64_t tasks = task_count(options, elements, units);
  const uint64_t per_task = tasks == 0 ? 0 : (units + tasks - 1) / tasks;
  std::atomic<bool> out_of_memory{false};
  parallel(options, tasks, [&](uint64_t t) {
    const uint64_t begin = t * per_task;
    const uint64_t end = std::min(units, begin + per_task);
    try {
      if (begin < end) toolkit::run_block_units(op, g, x, y, begin, end);
    } catch (const std::bad_alloc&) {
      out_of_memory.store(true);
    }
  });
  if (out_of_memory.load()) {
    return Status::invalid_argument(std::string(op_name) + ": out of memory for the scratch of block_size " +
                                    std::to_string(op.block_size));
  }
  return {};
}

template <class Convert>
void convert_parallel(const ExecuteOptions& options, uint64_t elements, const Convert& convert) {
  const uint64_t tasks = task_count(options, elements, elements);
  const uint64_t per_task = tasks == 0 ? 0 : (elements + tasks - 1) / tasks;
  parallel(options, tasks, [&](uint64_t t) {
    const uint64_t begin = t * per_task;
    const uint64_t end = std::min(elements, begin + per_task);
    if (begin < end) convert(begin, end);
  });
}

Status run(const char* op_name, const BlockOp& op, const TensorView& x, const BlockGeometry& g,
           const MutableTensorView& y, const ExecuteOptions& options) {
  const uint64_t n = count_of(x);
  if (n == 0) return {};
  if (x.data == nullptr || y.data == nullptr) {
    return Status::invalid_argument(std::string(op_name) + ": x or y has no data");
  }
  if (x.type == ElementType::kFloat32) {
    const auto* xf = static_cast<const float*>(x.data);
    auto* yf = static_cast<float*>(y.data);
    if (n == 1) {  // Quark passes one-element tensors through (after its bfloat16 rounding)
      float value;  // copied: the C ABI's x and y may sit off float's alignment
      std::memcpy(&value, xf, sizeof value);
      if (op.bfloat_first) value = toolkit::round_to_bfloat16(value);
      std::memcpy(yf, &value, sizeof value);
      return {};
    }
    return run_float32(op_name, op, g, xf, yf, n, options);
  }
  // float16: widened exactly, computed in float32, rounded back half to even, as Quark's Casts do.
  std::unique_ptr<float[]> wide(new (std::nothrow) float[n]);
  if (!wide) return Status::invalid_argument(std::string(op_name) + ": out of memory for the float32 copy of x");
  const auto* xh = static_cast<const uint16_t*>(x.data);
  auto* yh = static_cast<uint16_t*>(y.data);
  convert_parallel(options, n, [&](uint64_t b, uint64_t e) { toolkit::widen_float16(xh, wide.get(), b, e); });
  if (n == 1) {
    if (op.bfloat_first) wide[0] = toolkit::round_to_bfloat16(wide[0]);
  } else if (Status s = run_float32(op_name, op, g, wide.get(), wide.get(), n, options); !s.ok()) {
    return s;
  }
  convert_parallel(options, n, [&](uint64_t b, uint64_t e) { toolkit::narrow_to_float16(wide.get(), yh, b, e); });
  return {};
}

}  // namespace

Status mx_quantize_dequantize(const TensorView& x, const MxQuantizeDequantizeAttributes& a, const MutableTensorView& y,
                              const ExecuteOptions& options) {
  constexpr const char* kOp = "MXQuantizeDequantize";
  if (Status s = check_tensors(kOp, x, y); !s.ok()) return s;
  const MxElement* element = nullptr;
  for (const MxElement& e : kMxElements) {
    if (e.name == a.element_dtype) element = &e;
  }
  if (element == nullptr) {
    return Status::invalid_argument(std::string(kOp) + ": element_dtype '" + a.element_dtype +
                                    "' is not one of fp8_e5m2, fp8_e4m3, fp6_e3m2, fp6_e2m3, fp4_e2m1, int8");
  }
  if (Status s = check_block_size(kOp, a.block_size); !s.ok()) return s;
  Result<BlockGeometry> g = geometry_of(kOp, x, a.axis);
  if (!g.ok()) return g.status();
  BlockOp op;
  op.block_size = a.block_size;
  op.emax = element->emax;
  if (element->exponent_bits == 0) {
    op.method = BlockMethod::kMxInt8;
    // Quark's switch sends every value but 1 and 2 to std::round.
    op.rounding = a.rounding_mode == 1 ? Rounding::kHalfUp
                  : a.rounding_mode == 2 ? Rounding::kHalfEven
                                         : Rounding::kHalfAwayFromZero;
  } else {
    op.method = BlockMethod::kMxFloat;  // rounding_mode is ignored: Quark rounds these half to even
    op.mantissa_bits = element->mantissa_bits;
    op.exponent_bias = (1 << (element->exponent_bits - 1)) - 1;
    op.max_norm = element->max_norm;
    op.smallest_normal = std::ldexp(1.0f, 1 - op.exponent_bias);
    op.subnormal_magic = std::ldexp(1.0f, 24 - op.exponent_bias - op.mantissa_bits);
  }
  return run(kOp, op, x, g.value(), y, options);
}

Status bfp_quantize_dequantize(const TensorView& x, const BfpQuantizeDequantizeAttributes& a,
                               const MutableTensorView& y, const ExecuteOptions& options) {
  constexpr const char* kOp = "BFPQuantizeDequantize";
  if (Status s = check_tensors(kOp, x, y); !s.ok()) return s;
  BlockOp op;
  const bool prime = a.bfp_method == "to_bfp_prime" || a.bfp_method == "to_bfp_prime_shared";
  if (a.bfp_method != "to_bfp" && !prime) {
    return Status::invalid_argument(std::string(kOp) + ": bfp_method '" + a.bfp_method +
                                    "' is not one of to_bfp, to_bfp_prime (to_bfp_prime_shared)");
  }
  if (a.bit_width < 10 || a.bit_width > 32) {
    return Status::invalid_argument(std::string(kOp) + ": bit_width " + std::to_string(a.bit_width) +
                                    " must be in [10, 32] (1 sign and 8 shared-exponent bits, 1 to 23 mantissa bits)");
  }
  if (Status s = check_block_size(kOp, a.block_size); !s.ok()) return s;
  if (Status s = check_rounding(kOp, a.rounding_mode); !s.ok()) return s;
  if (prime) {
    if (a.sub_block_size < 1 || a.block_size % a.sub_block_size != 0) {
      return Status::invalid_argument(std::string(kOp) + ": sub_block_size " + std::to_string(a.sub_block_size) +
                                      " must be positive and divide block_size " + std::to_string(a.block_size) +
                                      " (Quark leaves the elements past the last whole sub-block unwritten)");
    }
    if (a.sub_block_shift_bits < 0) {
      return Status::invalid_argument(std::string(kOp) + ": sub_block_shift_bits " +
                                      std::to_string(a.sub_block_shift_bits) + " must not be negative");
    }
  }
  Result<BlockGeometry> g = geometry_of(kOp, x, a.axis);
  if (!g.ok()) return g.status();
  op.method = prime ? BlockMethod::kBfpPrime
              : a.use_compiler_version_cpu_kernel != 0 ? BlockMethod::kBfpCompiler
                                                       : BlockMethod::kBfp;
  op.rounding = static_cast<Rounding>(a.rounding_mode);
  op.block_size = a.block_size;
  op.mantissa_bits = static_cast<int>(a.bit_width - 9);
  op.sub_block_size = a.sub_block_size;
  // Exponent differences are at most 255, so 8 or more shift bits allow every shift. Only to_bfp_prime
  // reads the sub-block attributes (and checks them above); to_bfp ignores them, whatever they hold.
  op.shift_limit = !prime ? 0 : a.sub_block_shift_bits >= 8 ? 255 : (1 << a.sub_block_shift_bits) - 1;
  op.bfloat_first = a.convert_to_bfloat_before_bfp != 0;
  return run(kOp, op, x, g.value(), y, options);
}

namespace toolkit {

float round_to_bfloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7FFF'FFFFu) > 0x7F80'0000u) {
    bits = (bits & 0x8000'0000u) | 0x7FC0'0000u;  // NaN: the quiet NaN with its sign (see the kernels)
  } else {
    bits = (bits + 0x7FFFu + ((bits >> 16) & 1u)) & 0xFFFF'0000u;  // half to even on the bit pattern
  }
  std::memcpy(&value, &bits, sizeof bits);
  return value;
}

}  // namespace toolkit
}  // namespace qdq
