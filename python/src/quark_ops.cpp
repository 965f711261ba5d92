// qdq._qdq bindings of Quark's MXQuantizeDequantize / BFPQuantizeDequantize (qdq/quark_ops.hpp),
// and the table-driven float codec for the tests of the small float types against ml_dtypes.
// The Python layer (qdq/__init__.py) checks dtypes and allocates the output; x and out arrive as
// raw bytes and run with the GIL released. Every qdq Status becomes qdq.QdqError (module.cpp
// registers it before calling register_quark_ops).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <string>
#include <vector>

#include "qdq/quark_ops.hpp"
#include "types/codec.h"

namespace nb = nanobind;

namespace {

using Bytes = nb::ndarray<const uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using MutableBytes = nb::ndarray<uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Shape = std::vector<int64_t>;

qdq::ElementType float_type(int64_t code) {
  if (code != static_cast<int64_t>(qdq::ElementType::kFloat32) && code != static_cast<int64_t>(qdq::ElementType::kFloat16)) {
    throw nb::value_error("x must be float32 or float16");
  }
  return static_cast<qdq::ElementType>(code);
}

void check_sizes(qdq::ElementType type, const Shape& shape, const Bytes& x, const MutableBytes& out) {
  uint64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(count, static_cast<uint64_t>(d), &count)) throw nb::value_error("invalid shape");
  }
  const uint64_t bytes = qdq::storage_bytes(type, count);
  if (x.size() != bytes || out.size() != bytes) throw nb::value_error("x and out must hold the shape's bytes");
}

nb::handle g_qdq_error;  // qdq.QdqError, owned by the module

template <class Call>
void run(Call&& call) {
  qdq::Status status;
  {
    nb::gil_scoped_release release;
    status = call();
  }
  if (!status.ok()) {
    PyErr_SetString(g_qdq_error.ptr(), status.message().c_str());
    throw nb::python_error();
  }
}

const qdq::ElementTypeInfo& small_float(int64_t code) {
  const auto type = qdq::element_type_from_code(code);
  if (!type || !qdq::info(*type).is_float() || qdq::info(*type).bits > 8) {
    throw nb::value_error("not a float type of 8 bits or fewer");
  }
  return qdq::info(*type);
}

}  // namespace

void register_quark_ops(nb::module_& m) {
  g_qdq_error = m.attr("QdqError");
  m.def(
      "mx_quantize_dequantize",
      [](int64_t x_code, Shape shape, const Bytes& x, std::string element_dtype, int64_t axis, int64_t block_size,
         int64_t rounding_mode, MutableBytes out) {
        const qdq::ElementType type = float_type(x_code);
        check_sizes(type, shape, x, out);
        qdq::MxQuantizeDequantizeAttributes a;
        a.element_dtype = std::move(element_dtype);
        a.axis = axis;
        a.block_size = block_size;
        a.rounding_mode = rounding_mode;
        run([&] { return qdq::mx_quantize_dequantize({type, shape, x.data()}, a, {type, shape, out.data()}); });
      },
      nb::arg("x_code"), nb::arg("shape"), nb::arg("x"), nb::arg("element_dtype"), nb::arg("axis"),
      nb::arg("block_size"), nb::arg("rounding_mode"), nb::arg("out"));

  m.def(
      "bfp_quantize_dequantize",
      [](int64_t x_code, Shape shape, const Bytes& x, std::string bfp_method, std::vector<int64_t> ints,
         MutableBytes out) {
        const qdq::ElementType type = float_type(x_code);
        check_sizes(type, shape, x, out);
        if (ints.size() != 8) throw nb::value_error("eight integer attributes expected");
        qdq::BfpQuantizeDequantizeAttributes a;
        a.bfp_method = std::move(bfp_method);
        a.axis = ints[0];
        a.bit_width = ints[1];
        a.block_size = ints[2];
        a.rounding_mode = ints[3];
        a.sub_block_size = ints[4];
        a.sub_block_shift_bits = ints[5];
        a.convert_to_bfloat_before_bfp = ints[6];
        a.use_compiler_version_cpu_kernel = ints[7];
        run([&] { return qdq::bfp_quantize_dequantize({type, shape, x.data()}, a, {type, shape, out.data()}); });
      },
      nb::arg("x_code"), nb::arg("shape"), nb::arg("x"), nb::arg("bfp_method"), nb::arg("ints"), nb::arg("out"));

  // Test hooks: float64 values -> codes (round half to even, saturating or not) and codes ->
  // float64 values, for one float type of 8 bits or fewer.
  m.def("_encode_small_float", [](int64_t code, const nb::ndarray<const double, nb::ndim<1>, nb::c_contig>& values,
                                  bool saturate, MutableBytes codes) {
    const qdq::ElementTypeInfo& t = small_float(code);
    if (codes.size() != values.size()) throw nb::value_error("codes must have one byte per value");
    const auto overflow = saturate ? qdq::codec::Overflow::kSaturate : qdq::codec::Overflow::kInfOrNan;
    for (size_t i = 0; i < values.size(); ++i) codes.data()[i] = static_cast<uint8_t>(qdq::codec::encode_float(t, values.data()[i], overflow));
  });
  m.def("_decode_small_float", [](int64_t code, const Bytes& codes, nb::ndarray<double, nb::ndim<1>, nb::c_contig> values) {
    const qdq::ElementTypeInfo& t = small_float(code);
    if (codes.size() != values.size()) throw nb::value_error("values must have one entry per code");
    for (size_t i = 0; i < codes.size(); ++i) values.data()[i] = qdq::codec::decode(t, codes.data()[i]);
  });
}
