// qdq._qdq: the nanobind bridge between numpy buffers and the C++ API.
//
// Tensors cross as (type code, shape, raw bytes). The Python layer hands over numpy's storage
// unchanged, which for ml_dtypes' 4- and 2-bit types is one element per byte (the code in the low
// bits): the core reads and writes that layout itself (SubByteLayout::kOneCodePerByte), so no
// element is touched here. Operators run with the GIL released, into a new array or the caller's
// `out`. Every qdq Status becomes qdq.QdqError (a ValueError).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "directml.h"
#include "fake_quant.h"
#include "qdq/qdq.h"
#include "qdq/qdq.hpp"
#include "qdq/toolkit.hpp"

namespace nb = nanobind;

void register_quark_ops(nb::module_& m);  // quark_ops.cpp

namespace {

struct QdqError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using Bytes = nb::ndarray<const uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Shape = std::vector<int64_t>;

// One input tensor as it arrives from Python: numpy's bytes, in numpy's layout.
struct InputTensor {
  qdq::ElementType type = qdq::ElementType::kUndefined;
  Shape shape;
  const void* data = nullptr;
  qdq::SubByteLayout layout = qdq::SubByteLayout::kOneCodePerByte;

  qdq::TensorView view() const { return {type, shape, data, layout}; }
};

qdq::ElementType checked_type(int64_t code, const char* role) {
  std::optional<qdq::ElementType> type = qdq::element_type_from_code(code);
  if (!type) throw QdqError(std::string("input '") + role + "' has unknown element type code " + std::to_string(code));
  return *type;
}

uint64_t element_count(const Shape& shape, const char* role) {
  uint64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(count, static_cast<uint64_t>(d), &count)) {
      throw QdqError(std::string("input '") + role + "' has an invalid shape");
    }
  }
  return count;
}

// `layout`: numpy's one code per byte, or qdq's packed layout (the benchmarks' kernel timings).
InputTensor make_input(int64_t code, Shape shape, const Bytes& bytes, const char* role,
                       qdq::SubByteLayout layout = qdq::SubByteLayout::kOneCodePerByte) {
  InputTensor tensor;
  tensor.type = checked_type(code, role);
  tensor.shape = std::move(shape);
  tensor.data = bytes.data();
  tensor.layout = layout;
  const qdq::ElementTypeInfo& row = qdq::info(tensor.type);
  const uint64_t stored = qdq::storage_bytes(tensor.type, element_count(tensor.shape, role), layout);
  if (bytes.size() != stored) {
    throw QdqError(std::string("input '") + role + "' has " + std::to_string(bytes.size()) + " bytes but its shape and " +
                   std::string(row.name) + " need " + std::to_string(stored));
  }
  return tensor;
}

using MutableBytes = nb::ndarray<uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
// The caller's output array, as (type code, its bytes); None for a new array.
using OptionalOut = std::optional<std::tuple<int64_t, MutableBytes>>;
using Output = std::tuple<nb::object, int64_t>;

// Output storage. Large buffers are aligned to 2 MiB and offered to the kernel as transparent huge
// pages: a fresh 64 MiB output then costs 32 page faults instead of 16,384. Fresh pages still cost
// the OS zeroing them (as long as the kernel itself writing them at this size), so large buffers
// released by Python are kept for reuse, as PyTorch's caching allocator does: a loop calling
// qdq.dequantize_linear(x, s) without out= then writes into warm, already-mapped memory. At most
// kCachedBuffers buffers and kCachedBytes bytes are kept; the rest are freed at once.
constexpr uint64_t kHuge = uint64_t{2} << 20;
constexpr size_t kCachedBuffers = 4;
constexpr uint64_t kCachedBytes = uint64_t{512} << 20;

class OutputCache {
 public:
  OutputCache() { free_.reserve(kCachedBuffers); }  // give() must not allocate (it runs in a noexcept deleter)

  // A buffer of at least `bytes` (rounded up to 2 MiB), reused if one of that size is cached.
  uint8_t* take(uint64_t bytes) {
    const uint64_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (size_t i = 0; i < free_.size(); ++i) {
        if (free_[i].bytes == rounded) {
          uint8_t* pointer = free_[i].pointer;
          held_ -= rounded;
          free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
          sizes_[pointer] = rounded;
          return pointer;
        }
      }
    }
    void* pointer = std::aligned_alloc(kHuge, rounded);
    if (pointer == nullptr) return nullptr;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(pointer, rounded, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
    std::lock_guard<std::mutex> lock(mutex_);
    sizes_[pointer] = rounded;
    return static_cast<uint8_t*>(pointer);
  }

  // Called when Python releases the array: kept while the cache has room, else freed.
  void give(void* pointer) {
    std::unique_lock<std::mutex> lock(mutex_);
    const auto found = sizes_.find(pointer);
    const uint64_t rounded = found->second;
    sizes_.erase(found);
    if (free_.size() < kCachedBuffers && held_ + rounded <= kCachedBytes) {
      free_.push_back({static_cast<uint8_t*>(pointer), rounded});
      held_ += rounded;
      return;
    }
    lock.unlock();
    std::free(pointer);
  }

 private:
  struct Entry {
    uint8_t* pointer;
    uint64_t bytes;
  };
  std::mutex mutex_;
  std::vector<Entry> free_;
  std::unordered_map<void*, uint64_t> sizes_;  // live large buffers and their rounded sizes
  uint64_t held_ = 0;
};

// Never destroyed: a capsule released during interpreter shutdown must still find it.
OutputCache& output_cache() {
  static OutputCache* cache = new OutputCache();
  return *cache;
}

// A new numpy uint8 array of `bytes` bytes (owning its storage); *storage gets its address.
nb::object new_bytes(uint64_t bytes, uint8_t** storage) {
  const bool large = bytes >= kHuge;
  *storage = large ? output_cache().take(bytes) : static_cast<uint8_t*>(std::malloc(bytes > 0 ? bytes : 1));
  if (*storage == nullptr) throw std::bad_alloc();
  void (*release)(void*) noexcept = large ? +[](void* pointer) noexcept { output_cache().give(pointer); }
                                          : +[](void* pointer) noexcept { std::free(pointer); };
  std::unique_ptr<void, void (*)(void*) noexcept> guard(*storage, release);  // until the capsule owns it
  nb::capsule owner(*storage, release);
  guard.release();
  size_t shape[1] = {static_cast<size_t>(bytes)};
  return nb::cast(nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>(*storage, 1, shape, owner));
}

// Executes the plan into `out` (checked against the plan) or a new array, and returns (its bytes
// in numpy's layout, output type code).
Output run(const qdq::Result<qdq::Plan>& plan, const OptionalOut& out) {
  if (!plan.ok()) throw QdqError(plan.status().message());
  const qdq::Plan& p = plan.value();
  const qdq::SubByteLayout layout = qdq::SubByteLayout::kOneCodePerByte;
  const uint64_t bytes = qdq::storage_bytes(p.output_type, p.element_count, layout);
  uint8_t* storage;
  nb::object result;
  if (out) {
    const auto& [code, buffer] = *out;
    if (code != static_cast<int64_t>(p.output_type)) {
      const auto given = qdq::element_type_from_code(code);
      throw QdqError(p.operator_name + ": out has dtype " +
                     (given ? std::string(qdq::name(*given)) : "code " + std::to_string(code)) +
                     " but the operator produces " + std::string(qdq::name(p.output_type)));
    }
    if (buffer.size() != bytes) {
      throw QdqError(p.operator_name + ": out holds " + std::to_string(buffer.size()) + " bytes but the output needs " +
                     std::to_string(bytes));
    }
    storage = buffer.data();
    result = nb::none();  // the Python layer returns the caller's array itself
  } else {
    result = new_bytes(bytes, &storage);
  }
  qdq::Status status;
  {
    nb::gil_scoped_release release;
    status = qdq::execute(p, {p.output_type, p.shape, storage, layout});
  }
  if (!status.ok()) throw QdqError(status.message());
  return {result, static_cast<int64_t>(p.output_type)};
}

// The optional zero point arrives as None or (code, shape, bytes).
using OptionalTensor = std::optional<std::tuple<int64_t, Shape, Bytes>>;

struct Inputs {
  InputTensor x, scale, zero_point;
  bool has_zero_point = false;
  qdq::TensorView zero_point_view;
  const qdq::TensorView* zero_point_or_null() {
    if (!has_zero_point) return nullptr;
    zero_point_view = zero_point.view();
    return &zero_point_view;
  }
};

Inputs make_inputs(int64_t x_code, Shape x_shape, const Bytes& x, int64_t scale_code, Shape scale_shape,
                   const Bytes& scale, const OptionalTensor& zero_point, const char* scale_role, const char* zp_role) {
  Inputs in;
  in.x = make_input(x_code, std::move(x_shape), x, "x");
  in.scale = make_input(scale_code, std::move(scale_shape), scale, scale_role);
  if (zero_point) {
    in.has_zero_point = true;
    in.zero_point = make_input(std::get<0>(*zero_point), std::get<1>(*zero_point), std::get<2>(*zero_point), zp_role);
  }
  return in;
}

// Best wall-clock seconds of `repeat` executions of a plan (the first one warms caches and pages
// and is not counted), timed in C++ so that no Python overhead is included.
double time_executions(const qdq::Plan& plan, void* out, int64_t repeat) {
  nb::gil_scoped_release release;
  double best = 1e30;
  for (int64_t r = -1; r < std::max<int64_t>(repeat, 1); ++r) {
    const auto start = std::chrono::steady_clock::now();
    const qdq::Status status = qdq::execute(plan, {plan.output_type, plan.shape, out});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!status.ok()) {
      nb::gil_scoped_acquire acquire;
      throw QdqError(status.message());
    }
    if (r >= 0) best = std::min(best, seconds);
  }
  return best;
}

}  // namespace

NB_MODULE(_qdq, m) {
  m.doc() = "qdq core bindings (use the qdq package, not this module)";
  nb::exception<QdqError>(m, "QdqError", PyExc_ValueError);
  register_fake_quant(m);  // qdq.quantize_dequantize (fake_quant.cpp)

  m.def(
      "quantize_linear",
      [](int64_t x_code, Shape x_shape, const Bytes& x, int64_t s_code, Shape s_shape, const Bytes& s,
         const OptionalTensor& zp, int64_t axis, int64_t block_size, int64_t saturate, int64_t output_dtype,
         int64_t precision, int64_t opset, const OptionalOut& out) {
        Inputs in = make_inputs(x_code, std::move(x_shape), x, s_code, std::move(s_shape), s, zp, "y_scale", "y_zero_point");
        qdq::QuantizeLinearAttributes a{axis, block_size, saturate, output_dtype, precision, opset};
        return run(qdq::plan_quantize_linear(in.x.view(), in.scale.view(), in.zero_point_or_null(), a), out);
      },
      nb::arg("x_code"), nb::arg("x_shape"), nb::arg("x"), nb::arg("scale_code"), nb::arg("scale_shape"),
      nb::arg("scale"), nb::arg("zero_point").none(), nb::arg("axis"), nb::arg("block_size"), nb::arg("saturate"),
      nb::arg("output_dtype"), nb::arg("precision"), nb::arg("opset"), nb::arg("out").none());

  m.def(
      "dequantize_linear",
      [](int64_t x_code, Shape x_shape, const Bytes& x, int64_t s_code, Shape s_shape, const Bytes& s,
         const OptionalTensor& zp, int64_t axis, int64_t block_size, int64_t output_dtype, int64_t opset, const OptionalOut& out) {
        Inputs in = make_inputs(x_code, std::move(x_shape), x, s_code, std::move(s_shape), s, zp, "x_scale", "x_zero_point");
        qdq::DequantizeLinearAttributes a{axis, block_size, output_dtype, opset};
        return run(qdq::plan_dequantize_linear(in.x.view(), in.scale.view(), in.zero_point_or_null(), a), out);
      },
      nb::arg("x_code"), nb::arg("x_shape"), nb::arg("x"), nb::arg("scale_code"), nb::arg("scale_shape"),
      nb::arg("scale"), nb::arg("zero_point").none(), nb::arg("axis"), nb::arg("block_size"), nb::arg("output_dtype"),
      nb::arg("opset"), nb::arg("out").none());

  m.def(
      "extended_quantize_linear",
      [](int64_t x_code, Shape x_shape, const Bytes& x, int64_t s_code, Shape s_shape, const Bytes& s,
         const OptionalTensor& zp, int64_t axis, const OptionalOut& out) {
        Inputs in = make_inputs(x_code, std::move(x_shape), x, s_code, std::move(s_shape), s, zp, "y_scale", "y_zero_point");
        return run(qdq::plan_extended_quantize_linear(in.x.view(), in.scale.view(), in.zero_point_or_null(), axis), out);
      },
      nb::arg("x_code"), nb::arg("x_shape"), nb::arg("x"), nb::arg("scale_code"), nb::arg("scale_shape"),
      nb::arg("scale"), nb::arg("zero_point").none(), nb::arg("axis"), nb::arg("out").none());

  m.def(
      "extended_dequantize_linear",
      [](int64_t x_code, Shape x_shape, const Bytes& x, int64_t s_code, Shape s_shape, const Bytes& s,
         const OptionalTensor& zp, int64_t axis, const OptionalOut& out) {
        Inputs in = make_inputs(x_code, std::move(x_shape), x, s_code, std::move(s_shape), s, zp, "x_scale", "x_zero_point");
        return run(qdq::plan_extended_dequantize_linear(in.x.view(), in.scale.view(), in.zero_point_or_null(), axis), out);
      },
      nb::arg("x_code"), nb::arg("x_shape"), nb::arg("x"), nb::arg("scale_code"), nb::arg("scale_shape"),
      nb::arg("scale"), nb::arg("zero_point").none(), nb::arg("axis"), nb::arg("out").none());

  m.def(
      "elementwise_quantize_linear",
      [](int64_t x_code, Shape x_shape, const Bytes& x, int64_t s_code, Shape s_shape, const Bytes& s,
         const OptionalTensor& zp, const OptionalOut& out) {
        Inputs in = make_inputs(x_code, std::move(x_shape), x, s_code, std::move(s_shape), s, zp, "scale", "zero_point");
        return run(qdq::plan_elementwise_quantize_linear(in.x.view(), in.scale.view(), in.zero_point_or_null()), out);
      },
      nb::arg("x_code"), nb::arg("x_shape"), nb::arg("x"), nb::arg("scale_code"), nb::arg("scale_shape"),
      nb::arg("scale"), nb::arg("zero_point").none(), nb::arg("out").none());

  m.def(
      "elementwise_dequantize_linear",
      [](int64_t x_code, Shape x_shape, const Bytes& x, int64_t s_code, Shape s_shape, const Bytes& s,
         const OptionalTensor& zp, int64_t output_dtype, const OptionalOut& out) {
        Inputs in = make_inputs(x_code, std::move(x_shape), x, s_code, std::move(s_shape), s, zp, "scale", "zero_point");
        const qdq::ElementType output_type =
            output_dtype != 0 ? checked_type(output_dtype, "output_dtype") : qdq::ElementType::kUndefined;
        return run(qdq::plan_elementwise_dequantize_linear(in.x.view(), in.scale.view(), in.zero_point_or_null(), output_type),
                   out);
      },
      nb::arg("x_code"), nb::arg("x_shape"), nb::arg("x"), nb::arg("scale_code"), nb::arg("scale_shape"),
      nb::arg("scale"), nb::arg("zero_point").none(), nb::arg("output_dtype"), nb::arg("out").none());

  // The toolkit (qdq/toolkit.hpp). Results come back as numpy bytes in numpy's layout, with the
  // scale's shape: (y or None, scale bytes, zero-point bytes or None, scale shape).
  m.def(
      "compute_qparams",
      [](int64_t x_code, Shape x_shape, const Bytes& x, int64_t quantized_code, int64_t scale_code, int64_t method,
         int64_t granularity, int64_t axis, int64_t block_size, bool with_zero_point, bool quantize, const OptionalOut& out) {
        const InputTensor xt = make_input(x_code, std::move(x_shape), x, "x");
        if (method < 0 || method > static_cast<int64_t>(qdq::ScaleMethod::kMxRceil)) throw QdqError("unknown method");
        if (granularity < 0 || granularity > static_cast<int64_t>(qdq::Granularity::kBlocked)) {
          throw QdqError("unknown granularity");
        }
        qdq::QparamsOptions options;
        options.quantized_type = checked_type(quantized_code, "dtype");
        options.scale_type = checked_type(scale_code, "scale_dtype");
        options.method = static_cast<qdq::ScaleMethod>(method);
        options.granularity = static_cast<qdq::Granularity>(granularity);
        options.axis = axis;
        options.block_size = block_size;
        const qdq::Result<Shape> shape = qdq::qparams_shape(xt.shape, options);
        if (!shape.ok()) throw QdqError(shape.status().message());
        const uint64_t groups = element_count(shape.value(), "scale");
        const qdq::SubByteLayout layout = qdq::SubByteLayout::kOneCodePerByte;
        uint8_t* scale_storage;
        nb::object scale = new_bytes(qdq::storage_bytes(options.scale_type, groups, layout), &scale_storage);
        uint8_t* zero_point_storage = nullptr;
        nb::object zero_point = nb::none();
        if (with_zero_point) {
          zero_point = new_bytes(qdq::storage_bytes(options.quantized_type, groups, layout), &zero_point_storage);
        }
        const qdq::MutableTensorView scale_view{options.scale_type, shape.value(), scale_storage, layout};
        const qdq::MutableTensorView zero_point_view{options.quantized_type, shape.value(), zero_point_storage, layout};
        nb::object y = nb::none();
        uint8_t* y_storage = nullptr;
        if (quantize) {
          const uint64_t bytes = qdq::storage_bytes(options.quantized_type, element_count(xt.shape, "x"), layout);
          if (out) {
            const auto& [code, buffer] = *out;
            if (code != quantized_code) throw QdqError("dynamic_quantize: out has a dtype other than dtype");
            if (buffer.size() != bytes) {
              throw QdqError("dynamic_quantize: out holds " + std::to_string(buffer.size()) + " bytes but the output needs " +
                             std::to_string(bytes));
            }
            y_storage = buffer.data();
          } else {
            y = new_bytes(bytes, &y_storage);
          }
        }
        qdq::Status status;
        {
          nb::gil_scoped_release release;
          const qdq::MutableTensorView* zp = with_zero_point ? &zero_point_view : nullptr;
          status = quantize ? qdq::dynamic_quantize(xt.view(), options, {options.quantized_type, xt.shape, y_storage, layout},
                                                    scale_view, zp)
                            : qdq::compute_qparams(xt.view(), options, scale_view, zp);
        }
        if (!status.ok()) throw QdqError(status.message());
        return std::make_tuple(y, scale, zero_point, shape.value());
      },
      nb::arg("x_code"), nb::arg("x_shape"), nb::arg("x"), nb::arg("quantized_code"), nb::arg("scale_code"),
      nb::arg("method"), nb::arg("granularity"), nb::arg("axis"), nb::arg("block_size"), nb::arg("with_zero_point"),
      nb::arg("quantize"), nb::arg("out").none());

  m.def(
      "dynamic_quantize_linear",
      [](int64_t x_code, Shape x_shape, const Bytes& x, const OptionalOut& out) {
        const InputTensor xt = make_input(x_code, std::move(x_shape), x, "x");
        const uint64_t bytes = element_count(xt.shape, "x");
        uint8_t* storage;
        nb::object y = nb::none();
        if (out) {
          const auto& [code, buffer] = *out;
          if (code != static_cast<int64_t>(qdq::ElementType::kUint8) || buffer.size() != bytes) {
            throw QdqError("DynamicQuantizeLinear-11: out must be a uint8 array of x's shape");
          }
          storage = buffer.data();
        } else {
          y = new_bytes(bytes, &storage);
        }
        float scale = 0.0f;
        uint8_t zero_point = 0;
        qdq::Status status;
        {
          nb::gil_scoped_release release;
          status = qdq::dynamic_quantize_linear(xt.view(), {qdq::ElementType::kUint8, xt.shape, storage}, &scale, &zero_point);
        }
        if (!status.ok()) throw QdqError(status.message());
        return std::make_tuple(y, scale, zero_point);
      },
      nb::arg("x_code"), nb::arg("x_shape"), nb::arg("x"), nb::arg("out").none());

  // Benchmark entry points (bench/compare.py): tensors in qdq's dense layout, output written into
  // a caller-owned byte buffer, so that only the kernels are timed.
  m.def("_bench_quantize_linear", [](int64_t x_code, Shape x_shape, const Bytes& x, int64_t s_code, Shape s_shape,
                                     const Bytes& s, int64_t axis, int64_t block_size, int64_t output_dtype,
                                     MutableBytes out, int64_t repeat) {
    InputTensor xt = make_input(x_code, std::move(x_shape), x, "x", qdq::SubByteLayout::kPacked);
    InputTensor st = make_input(s_code, std::move(s_shape), s, "y_scale", qdq::SubByteLayout::kPacked);
    qdq::QuantizeLinearAttributes a;
    a.axis = axis;
    a.block_size = block_size;
    a.output_dtype = output_dtype;
    qdq::Result<qdq::Plan> plan = qdq::plan_quantize_linear(xt.view(), st.view(), nullptr, a);
    if (!plan.ok()) throw QdqError(plan.status().message());
    if (out.size() < qdq::storage_bytes(plan->output_type, plan->element_count)) throw QdqError("out is too small");
    return time_executions(plan.value(), out.data(), repeat);
  });
  m.def("_bench_dequantize_linear", [](int64_t x_code, Shape x_shape, const Bytes& x, int64_t s_code, Shape s_shape,
                                       const Bytes& s, int64_t axis, int64_t block_size, MutableBytes out,
                                       int64_t repeat) {
    InputTensor xt = make_input(x_code, std::move(x_shape), x, "x", qdq::SubByteLayout::kPacked);
    InputTensor st = make_input(s_code, std::move(s_shape), s, "x_scale", qdq::SubByteLayout::kPacked);
    qdq::DequantizeLinearAttributes a;
    a.axis = axis;
    a.block_size = block_size;
    qdq::Result<qdq::Plan> plan = qdq::plan_dequantize_linear(xt.view(), st.view(), nullptr, a);
    if (!plan.ok()) throw QdqError(plan.status().message());
    if (out.size() < qdq::storage_bytes(plan->output_type, plan->element_count)) throw QdqError("out is too small");
    return time_executions(plan.value(), out.data(), repeat);
  });
  // memcpy split over qdq's default thread pool: the bandwidth baseline of the benchmarks.
  m.def("_parallel_copy", [](MutableBytes destination, const Bytes& source, int64_t repeat) {
    // Best seconds of `repeat` copies, split over qdq's pool: the benchmarks' bandwidth baseline.
    if (destination.size() < source.size()) throw QdqError("destination is too small");
    nb::gil_scoped_release release;
    double best = 1e30;
    for (int64_t r = 0; r < std::max<int64_t>(repeat, 1); ++r) {
      const auto start = std::chrono::steady_clock::now();
      qdq::parallel_copy(destination.data(), source.data(), source.size());
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return best;
  });
  m.def("_set_num_threads", &qdq::set_num_threads);
  m.def("_num_threads", &qdq::num_threads);
  m.def("_simd_target", &qdq::active_simd_target);
  register_directml(m);  // DirectML operator descriptions (python/src/directml.cpp)
  m.attr("version") = qdq_version();  // the compiled library's, which qdq.__version__ reports

  // The element-type table, for the Python layer's dtype mapping: (code, name, bits).
  register_quark_ops(m);

  m.def("element_types", [] {
    std::vector<std::tuple<int64_t, std::string, int>> rows;
    for (const qdq::ElementTypeInfo& row : qdq::all_element_types()) {
      rows.emplace_back(static_cast<int64_t>(row.type), std::string(row.name), row.bits);
    }
    return rows;
  });
}
