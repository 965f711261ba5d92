// qdq quantize / dequantize / roundtrip: .npy files in, the core's plan + execute, .npy files out.
//
// Tensors stay in numpy's layout, which the core reads and writes directly: every type in its
// natural width, 4- and 2-bit types one code per byte (SubByteLayout::kOneCodePerByte), so a file's
// bytes go to the kernels as they are. numpy has no dtype for bfloat16, float8, float4 or the
// 4/2-bit integers, so on disk those are codes, written as raw bytes exactly as ml_dtypes' np.save writes them: '|V1'
// for the 8-bit-or-narrower types, '<V2' for bfloat16 (`np.load(path).view(ml_dtypes.<type>)`
// reads them back). Never as uint8 or uint16: a file must not claim a type its bytes do not have,
// or reading it back without --type would silently change what it means ('|V1' without --type is
// refused; '<V2' can only be bfloat16). The conversion between the two happens only in
// load_tensor and save_tensor below.
#include "commands.h"
#include "directml.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

#include "npy.h"
#include "qdq/qdq.hpp"
#include "qdq/toolkit.hpp"

namespace qdq::tools {
namespace {

// ---------------------------------------------------------------------------------------------
// Tensors in numpy's layout (4- and 2-bit types one code per byte).

constexpr SubByteLayout kLayout = SubByteLayout::kOneCodePerByte;

struct Tensor {
  ElementType type = ElementType::kUndefined;
  std::vector<int64_t> shape;
  ByteBuffer bytes;

  uint64_t count() const {
    uint64_t n = 1;
    for (int64_t d : shape) n *= static_cast<uint64_t>(d);
    return n;
  }
  // The views point into this object: keep it alive and unmoved while they are used.
  TensorView view() const { return {type, shape, bytes.data(), kLayout}; }
  MutableTensorView mutable_view() { return {type, shape, bytes.data(), kLayout}; }
};

// A zero-filled tensor (scales, zero points: a zero zero point is a meaningful default).
Tensor make_tensor(ElementType type, std::vector<int64_t> shape) {
  Tensor t{type, std::move(shape), {}};
  t.bytes = ByteBuffer::zeros(storage_bytes(type, t.count(), kLayout));
  return t;
}

// A kernel's output: left unwritten, since execute() writes every byte of it (Python's door hands
// the kernels recycled buffers on the same rule), and zero-filling 64 MiB first would cost as much
// as the kernel.
Tensor make_output(ElementType type, std::vector<int64_t> shape) {
  Tensor t{type, std::move(shape), {}};
  t.bytes = ByteBuffer(storage_bytes(type, t.count(), kLayout));
  return t;
}

void set_code(Tensor& t, uint64_t i, uint32_t code) {
  const ElementTypeInfo& row = info(t.type);
  if (row.is_packed()) {
    t.bytes[i] = static_cast<unsigned char>(code & ((1u << row.bits) - 1u));
    return;
  }
  const int width = row.bytes_per_element();
  for (int b = 0; b < width; ++b) t.bytes[i * width + b] = static_cast<unsigned char>(code >> (8 * b));
}

// Types numpy stores natively, with their descriptors; everything else travels as codes.
struct NativeDtype {
  ElementType type;
  const char* descr;
};
constexpr NativeDtype kNativeDtypes[] = {
    {ElementType::kFloat32, "<f4"}, {ElementType::kFloat16, "<f2"}, {ElementType::kInt32, "<i4"},
    {ElementType::kUint32, "<u4"},  {ElementType::kInt16, "<i2"},   {ElementType::kUint16, "<u2"},
    {ElementType::kInt8, "|i1"},    {ElementType::kUint8, "|u1"},
};

std::optional<ElementType> native_type(const std::string& descr) {
  for (const NativeDtype& d : kNativeDtypes) {
    if (descr == d.descr) return d.type;
  }
  return std::nullopt;
}

const char* native_descr(ElementType type) {
  for (const NativeDtype& d : kNativeDtypes) {
    if (d.type == type) return d.descr;
  }
  return nullptr;
}

// Whether a file holding `descr` may carry codes of `type` (a type numpy has no dtype for): one
// byte per element for the 8-bit-and-narrower types, uint16 for bfloat16. '|V1'/'<V2' are what
// np.save writes for ml_dtypes arrays, except float8_e5m2, whose dtype numpy files as '|f1'.
bool holds_codes_of(const std::string& descr, ElementType type) {
  if (native_descr(type) != nullptr) return false;
  if (type == ElementType::kBfloat16) return descr == "<u2" || descr == "<V2";
  return info(type).bits <= 8 && (descr == "|u1" || descr == "|V1" || descr == "|f1");
}

// "float64" for "<f8": a readable name for a dtype qdq does not handle, for messages.
std::string dtype_name(const std::string& descr) {
  if (std::optional<ElementType> type = native_type(descr)) return std::string(name(*type));
  const char kind = descr.size() > 1 ? descr[1] : '?';
  const std::string bits = std::to_string(std::atoi(descr.c_str() + 2) * 8);
  switch (kind) {
    case 'f': return "float" + bits;
    case 'i': return "int" + bits;
    case 'u': return "uint" + bits;
    case 'c': return "complex" + bits;
    case 'b': return "bool";
    case 'V': return descr + " (raw bytes, as ml_dtypes types are saved)";
    default: return descr;
  }
}

// Loads a .npy file as a qdq tensor. `declared` is the type the user named for this input
// (--type, --input-type, --scale-type), `flag` that option's name for messages.
Result<Tensor> load_tensor(const std::string& path, const char* role, std::optional<ElementType> declared,
                           const char* flag) {
  Result<NpyArray> file = read_npy(path);
  if (!file.ok()) return file.status();
  NpyArray& array = file.value();
  const std::optional<ElementType> native = native_type(array.descr);
  const std::string where = std::string(role) + " ('" + path + "')";

  ElementType type = ElementType::kUndefined;
  bool from_codes = false;
  if (declared) {
    if (native == declared) {
      type = *declared;
    } else if (holds_codes_of(array.descr, *declared)) {
      type = *declared;
      from_codes = true;
    } else {
      const std::string expected = *declared == ElementType::kBfloat16 ? "uint16 codes or ml_dtypes bfloat16"
                                   : native_descr(*declared)        ? std::string(name(*declared))
                                                                    : "uint8 codes, one per element, or ml_dtypes' " +
                                                                          std::string(name(*declared));
      return Status::invalid_argument(where + " holds " + dtype_name(array.descr) + " but " + flag + " is " +
                                      std::string(name(*declared)) + " (expected " + expected + ")");
    }
  } else if (native) {
    type = *native;
  } else if (array.descr == "<V2") {
    type = ElementType::kBfloat16;  // the only 2-byte ml_dtypes type
    from_codes = true;
  } else if (array.descr == "|V1" || array.descr == "|f1") {
    return Status::invalid_argument(where + " holds 1-byte ml_dtypes codes ('" + array.descr +
                                    "'); say which type with " + flag);
  } else {
    return Status::invalid_argument(where + " has dtype " + dtype_name(array.descr) +
                                    ", which qdq does not handle (convert it, e.g. x.astype(np.float32))");
  }

  const ElementTypeInfo& row = info(type);
  if (from_codes && row.is_packed()) {
    // A byte with bits above the type's width is not a code of that type; reject it rather than
    // silently dropping the high bits. One OR over the bytes (vectorized) finds whether any is.
    const unsigned char* begin = array.data.data();
    const unsigned char* end = begin + array.data.size();
    unsigned char any = 0;
    for (const unsigned char* byte = begin; byte != end; ++byte) any = static_cast<unsigned char>(any | *byte);
    if (any >> row.bits) {
      const unsigned char* bad = std::find_if(begin, end, [&](unsigned char byte) { return (byte >> row.bits) != 0; });
      char text[160];
      std::snprintf(text, sizeof text, " has byte 0x%02x at flat index %llu, which is not a %d-bit %s code", *bad,
                    static_cast<unsigned long long>(bad - begin), static_cast<int>(row.bits),
                    std::string(name(type)).c_str());
      return Status::invalid_argument(where + text);
    }
  }
  // The file's element bytes are the tensor's storage as read: numpy's layout is the core's.
  return Tensor{type, std::move(array.shape), std::move(array.data)};
}

// How a type is written to .npy, for the "wrote ..." lines and --help.
std::string storage_note(ElementType type) {
  if (native_descr(type) != nullptr) return "";
  const std::string codes = type == ElementType::kBfloat16 ? "'<V2'" : "'|V1'";
  return " as " + codes + " codes (np.load(path).view(ml_dtypes." + std::string(name(type)) + "))";
}

Status save_tensor(const std::string& path, const Tensor& tensor) {
  const uint64_t bytes = storage_bytes(tensor.type, tensor.count(), kLayout);
  if (const char* descr = native_descr(tensor.type)) return write_npy(path, descr, tensor.shape, tensor.bytes.data(), bytes);
  // Codes: bfloat16 two bytes each, the rest (4- and 2-bit types too) one per byte already.
  return write_npy(path, tensor.type == ElementType::kBfloat16 ? "<V2" : "|V1", tensor.shape, tensor.bytes.data(), bytes);
}

// "wrote y.npy: int4 [4, 6] as uint8 codes (...)", with `what` ("scale, minmax, ...") after it.
void print_wrote(const std::string& path, const Tensor& tensor, const std::string& what) {
  std::printf("wrote %s: %s %s%s%s\n", path.c_str(), std::string(name(tensor.type)).c_str(),
              shape_text(tensor.shape).c_str(), what.empty() ? "" : (" " + what).c_str(),
              storage_note(tensor.type).c_str());
}

// ---------------------------------------------------------------------------------------------
// Values as doubles (for error statistics). Every type decoded here converts to double exactly.

double half_to_double(uint16_t h) {
  const int exponent = (h >> 10) & 0x1F;
  const int mantissa = h & 0x3FF;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exponent == 0x1F) return mantissa ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);  // subnormal
  return sign * std::ldexp(mantissa + 1024, exponent - 25);
}

// Element i of little-endian storage as a T (memcpy: the buffer holds bytes, not Ts).
template <class T>
T load_element(const unsigned char* bytes, uint64_t i) {
  T value;
  std::memcpy(&value, bytes + i * sizeof(T), sizeof(T));
  return value;
}

// Calls visit(decode) with decode(i) -> element i as a double, one concrete decoder per type, so that
// the loop that uses it is compiled per type instead of switching on the type at every element.
template <class Visit>
Status with_decoder(const Tensor& t, const char* role, Visit&& visit) {
  const unsigned char* b = t.bytes.data();
  switch (t.type) {
    case ElementType::kFloat32: return visit([b](uint64_t i) { return double{load_element<float>(b, i)}; });
    case ElementType::kFloat16: return visit([b](uint64_t i) { return half_to_double(load_element<uint16_t>(b, i)); });
    case ElementType::kBfloat16:
      return visit([b](uint64_t i) {
        const uint32_t bits = uint32_t{load_element<uint16_t>(b, i)} << 16;  // bfloat16 is float32's high half
        float value;
        std::memcpy(&value, &bits, sizeof value);
        return double{value};
      });
    case ElementType::kInt32: return visit([b](uint64_t i) { return double(load_element<int32_t>(b, i)); });
    case ElementType::kUint32: return visit([b](uint64_t i) { return double(load_element<uint32_t>(b, i)); });
    case ElementType::kInt16: return visit([b](uint64_t i) { return double(load_element<int16_t>(b, i)); });
    case ElementType::kUint16: return visit([b](uint64_t i) { return double(load_element<uint16_t>(b, i)); });
    case ElementType::kInt8: return visit([b](uint64_t i) { return double(load_element<int8_t>(b, i)); });
    case ElementType::kUint8: return visit([b](uint64_t i) { return double(load_element<uint8_t>(b, i)); });
    default:
      return Status::invalid_argument(std::string(role) + " has type " + std::string(name(t.type)) +
                                      "; expected float32, float16, bfloat16 or an integer type");
  }
}

// The error of a round trip, over the elements whose x is finite (a NaN or inf input has no error to
// measure); `changed` counts every element whose value differs (NaN -> NaN counts as unchanged).
struct ErrorStatistics {
  double max_abs = 0.0, sum_abs = 0.0, sum_sq = 0.0, signal = 0.0;
  uint64_t finite = 0, changed = 0, count = 0;
};

// One pass over x and its round trip, decoding both as it goes (no double copy of either tensor).
Result<ErrorStatistics> error_statistics(const Tensor& x, const Tensor& restored) {
  ErrorStatistics stats;
  stats.count = x.count();
  Status status = with_decoder(x, "x", [&](auto x_at) {
    return with_decoder(restored, "the dequantized tensor", [&](auto r_at) {
      for (uint64_t i = 0; i < stats.count; ++i) {
        const double xi = x_at(i), ri = r_at(i);
        const bool same = xi == ri || (std::isnan(xi) && std::isnan(ri));
        if (!same) ++stats.changed;
        if (!std::isfinite(xi)) continue;
        ++stats.finite;
        const double error = std::fabs(ri - xi);
        stats.max_abs = std::max(stats.max_abs, error);
        stats.sum_abs += error;
        stats.sum_sq += error * error;
        stats.signal += xi * xi;
      }
      return Status();
    });
  });
  if (!status.ok()) return status;
  return stats;
}

// ---------------------------------------------------------------------------------------------
// Command-line values: numbers or .npy paths.

// A number, if `text` is one in full ("0.05", "-3", "1e-3"). Names ending in .npy are always paths,
// so that a file called e.g. "1.npy" is never mistaken for a number.
std::optional<double> parse_number(const std::string& text) {
  if (text.empty() || (text.size() >= 4 && text.compare(text.size() - 4, 4, ".npy") == 0)) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE) return std::nullopt;
  return value;
}

std::string number_text(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

Result<std::optional<ElementType>> optional_type(const std::string& text) {
  if (text.empty()) return std::optional<ElementType>();
  std::optional<ElementType> type = element_type_from_name(text);
  if (!type) return Status::invalid_argument("unknown type '" + text + "'");
  return type;
}

// --scale: a number is a 0-D float32 scale (per-tensor); otherwise a .npy file.
Result<Tensor> load_scale(const std::string& text, const std::string& scale_type) {
  if (std::optional<double> value = parse_number(text)) {
    const float scale = static_cast<float>(*value);
    if (std::isfinite(*value) && !std::isfinite(scale)) {
      return Status::invalid_argument("scale " + text + " is out of float32 range");
    }
    Tensor t = make_tensor(ElementType::kFloat32, {});
    std::memcpy(t.bytes.data(), &scale, sizeof scale);
    return t;
  }
  Result<std::optional<ElementType>> declared = optional_type(scale_type);
  if (!declared.ok()) return declared.status();
  return load_tensor(text, "scale", declared.value(), "--scale-type");
}

// A zero point given as a number: a 0-D tensor of `type` holding exactly that value, or an error
// if the type cannot hold it (3.5 for int8, 300 for uint8, 0.3 for float8_e4m3fn).
Result<Tensor> zero_point_from_number(double value, const std::string& text, ElementType type) {
  const ElementTypeInfo& row = info(type);
  Tensor t = make_tensor(type, {});
  const Status not_exact = Status::invalid_argument("zero point " + text + " is not a value of " +
                                                    std::string(name(type)));
  if (row.is_integer()) {
    if (value != std::nearbyint(value) || value < row.lowest || value > row.max) return not_exact;
    set_code(t, 0, static_cast<uint32_t>(static_cast<int64_t>(value)));
    return t;
  }
  // +0 is code 0 in every float type (float16 and bfloat16, Quark's float targets, have no ONNX
  // quantize path to encode them through below).
  if (value == 0.0 && !std::signbit(value)) return t;
  // Float types: let the core's exact codec encode it (quantize with scale 1, no saturation), then
  // decode it back; the value is accepted only if it survives unchanged.
  const float x = static_cast<float>(value);
  if (static_cast<double>(x) != value) return not_exact;
  const float one = 1.0f;
  QuantizeLinearAttributes q;
  q.saturate = 0;
  q.output_dtype = static_cast<int64_t>(type);
  Status status = quantize_linear({ElementType::kFloat32, {}, &x}, {ElementType::kFloat32, {}, &one}, nullptr, q,
                                  t.mutable_view());
  if (!status.ok()) return not_exact;
  float back = 0.0f;
  status = dequantize_linear(t.view(), {ElementType::kFloat32, {}, &one}, nullptr, {},
                             {ElementType::kFloat32, {}, &back});
  if (!status.ok() || back != x) return not_exact;
  return t;
}

Result<Tensor> load_zero_point(const std::string& text, ElementType type, const char* flag) {
  if (std::optional<double> value = parse_number(text)) return zero_point_from_number(*value, text, type);
  return load_tensor(text, "zero point", type, flag);
}

// ---------------------------------------------------------------------------------------------
// Calibration.

struct Calibration {
  Tensor scale;
  Tensor zero_point;
  std::string description;  // "minmax, per-axis (axis 0)"
};

// Scale and zero point per group from qdq's toolkit (compute_qparams; formulas and edge cases in
// docs/semantics.md, "Scales from data"): float32 scales, or float8_e8m0fnu for the mx_* methods.
Result<Calibration> calibrate(const Tensor& x, ElementType type, const QuantizeOptions& options) {
  static constexpr std::pair<const char*, ScaleMethod> kMethods[] = {
      {"minmax", ScaleMethod::kMinMax},     {"symmetric", ScaleMethod::kSymmetric},
      {"symmetric_restricted", ScaleMethod::kSymmetricRestricted},
      {"mx_floor", ScaleMethod::kMxFloor},  {"mx_ceil", ScaleMethod::kMxCeil},
      {"mx_even", ScaleMethod::kMxEven},    {"mx_rceil", ScaleMethod::kMxRceil},
  };
  QparamsOptions q;
  q.quantized_type = type;
  for (const auto& [method_name, method] : kMethods) {
    if (options.calibrate == method_name) q.method = method;
  }
  const bool mx = options.calibrate.rfind("mx_", 0) == 0;
  // Float types take max|x| / max(T) under either name the CLI has always accepted.
  if (info(type).is_float() && q.method == ScaleMethod::kMinMax) q.method = ScaleMethod::kSymmetric;
  q.scale_type = mx ? ElementType::kFloat8E8M0 : ElementType::kFloat32;
  Calibration result;
  result.description = options.calibrate;
  if (options.block_size > 0) {
    q.granularity = Granularity::kBlocked;
    q.axis = options.axis.value_or(1);
    q.block_size = options.block_size;
    result.description += ", blocked (axis " + std::to_string(q.axis) + ", block " + std::to_string(q.block_size) + ")";
  } else if (options.per_axis) {
    q.granularity = Granularity::kPerAxis;
    q.axis = options.axis.value_or(1);
    result.description += ", per-axis (axis " + std::to_string(q.axis) + ")";
  } else {
    result.description += ", per-tensor";
  }
  Result<std::vector<int64_t>> shape = qparams_shape(x.shape, q);
  if (!shape.ok()) return shape.status();
  result.scale = make_tensor(q.scale_type, shape.value());
  result.zero_point = make_tensor(type, shape.value());
  MutableTensorView zero_point = result.zero_point.mutable_view();
  const bool with_zero_point = info(type).is_integer();  // float types' zero points stay +0 codes
  if (Status s = compute_qparams(x.view(), q, result.scale.mutable_view(), with_zero_point ? &zero_point : nullptr);
      !s.ok()) {
    return s;
  }
  return result;
}

// "OUT.npy" -> "OUT.scale.npy".
std::string beside(const std::string& output, const char* suffix) {
  std::string stem = output;
  if (stem.size() >= 4 && stem.compare(stem.size() - 4, 4, ".npy") == 0) stem.resize(stem.size() - 4);
  return stem + "." + suffix + ".npy";
}

// ---------------------------------------------------------------------------------------------
// Operator families.

enum class Family { kOnnx, kExtended, kElementwise };

Family family_of(const std::string& name) {
  return name == "extended" ? Family::kExtended : name == "elementwise" ? Family::kElementwise : Family::kOnnx;
}

// DirectML's scale and zero point have x's rank. A number (0-D) becomes all 1s (one value
// broadcast everywhere); a per-axis [D] (calibrated) becomes D along `axis` and 1 elsewhere.
void to_elementwise_shape(Tensor& t, size_t x_rank, int64_t axis) {
  if (t.shape.size() >= x_rank || t.shape.size() > 1) return;
  std::vector<int64_t> shape(x_rank, 1);
  if (t.shape.size() == 1 && x_rank > 0) {
    const int64_t rank = static_cast<int64_t>(x_rank);
    shape[static_cast<size_t>(((axis % rank) + rank) % rank)] = t.shape[0];
  }
  t.shape = std::move(shape);
}

// ---------------------------------------------------------------------------------------------
// Quantize (shared by quantize and roundtrip).

struct Quantized {
  Tensor x, y, scale, zero_point;
  bool has_zero_point = false;
  std::optional<Calibration> calibration;
};

Result<Quantized> quantize(const QuantizeOptions& options) {
  Result<std::optional<ElementType>> type_or = optional_type(options.type);
  Result<std::optional<ElementType>> input_type = optional_type(options.input_type);
  Result<std::optional<ElementType>> precision = optional_type(options.precision);
  for (const auto* r : {&type_or, &input_type, &precision}) {
    if (!r->ok()) return r->status();
  }
  if (!type_or.value()) return Status::invalid_argument("--type is required");
  const ElementType type = *type_or.value();
  const Family family = family_of(options.family);

  Quantized q;
  Result<Tensor> x = load_tensor(options.input, "x", input_type.value(), "--input-type");
  if (!x.ok()) return x.status();
  q.x = std::move(x.value());

  if (!options.calibrate.empty()) {
    Result<Calibration> calibration = calibrate(q.x, type, options);
    if (!calibration.ok()) return calibration.status();
    q.scale = calibration.value().scale;
    q.zero_point = calibration.value().zero_point;
    q.has_zero_point = true;
    q.calibration = std::move(calibration.value());
  } else {
    Result<Tensor> scale = load_scale(options.scale, options.scale_type);
    if (!scale.ok()) return scale.status();
    q.scale = std::move(scale.value());
    if (!options.zero_point.empty()) {
      Result<Tensor> zp = load_zero_point(options.zero_point, type, "--type");
      if (!zp.ok()) return zp.status();
      q.zero_point = std::move(zp.value());
      q.has_zero_point = true;
    } else if ((options.opset < 21 && info(type).is_integer() && type != ElementType::kUint8) ||
               (family == Family::kExtended && type != ElementType::kUint8)) {
      // Before version 21 QuantizeLinear has no output_dtype, and ExtendedQuantizeLinear never
      // has: the output type is the zero point's. A zero zero point of type T (the scale's shape)
      // is what such a model carries, and adding 0 changes no result.
      q.zero_point = make_tensor(type, q.scale.shape);
      q.has_zero_point = true;
    }
  }
  if (family == Family::kElementwise) {
    const int64_t axis = options.axis.value_or(1);
    to_elementwise_shape(q.scale, q.x.shape.size(), axis);
    if (q.has_zero_point) to_elementwise_shape(q.zero_point, q.x.shape.size(), axis);
  }

  QuantizeLinearAttributes attributes;
  if (options.axis) attributes.axis = *options.axis;
  attributes.block_size = options.block_size;
  attributes.saturate = options.saturate;
  attributes.opset = options.opset;
  if (precision.value()) attributes.precision = static_cast<int64_t>(*precision.value());
  // The output type comes from the zero point when there is one (ONNX); otherwise output_dtype
  // says it, left unset for uint8 (the default) so that opsets before 21 work.
  if (!q.has_zero_point && type != ElementType::kUint8) attributes.output_dtype = static_cast<int64_t>(type);

  const TensorView zp_view = q.zero_point.view();
  const TensorView* zp = q.has_zero_point ? &zp_view : nullptr;
  Result<Plan> plan = family == Family::kExtended
                          ? plan_extended_quantize_linear(q.x.view(), q.scale.view(), zp, options.axis.value_or(1))
                      : family == Family::kElementwise
                          ? (options.feature_level.empty()
                                 ? plan_elementwise_quantize_linear(q.x.view(), q.scale.view(), zp, type)
                                 : plan_directml_broadcast(Operation::kQuantize, q.x.view(), q.scale.view(), zp, type,
                                                           options.feature_level))
                          : plan_quantize_linear(q.x.view(), q.scale.view(), zp, attributes);
  if (!plan.ok()) return plan.status();
  q.y = make_output(plan.value().output_type, q.x.shape);
  Status status = execute(plan.value(), q.y.mutable_view());
  if (!status.ok()) return status;
  return q;
}

// Calibrated parameters go beside the output, so that the output can be dequantized (or x
// re-quantized) later with exactly the scale and zero point that produced it.
Status save_calibration(const std::string& output, const Calibration& c) {
  const std::string scale_path = beside(output, "scale");
  const std::string zp_path = beside(output, "zero_point");
  Status status = save_tensor(scale_path, c.scale);
  if (status.ok()) status = save_tensor(zp_path, c.zero_point);
  if (!status.ok()) return status;
  print_wrote(scale_path, c.scale, "scale (" + c.description + ")");
  print_wrote(zp_path, c.zero_point, "zero point");
  return Status();
}

}  // namespace

Status run_quantize(const QuantizeOptions& options) {
  Result<Quantized> q = quantize(options);
  if (!q.ok()) return q.status();
  Status status = save_tensor(options.output, q.value().y);
  if (!status.ok()) return status;
  print_wrote(options.output, q.value().y, "");
  if (q.value().calibration) return save_calibration(options.output, *q.value().calibration);
  return Status();
}

Status run_dequantize(const DequantizeOptions& options) {
  Result<std::optional<ElementType>> type = optional_type(options.type);
  Result<std::optional<ElementType>> output_type = optional_type(options.output_type);
  for (const auto* r : {&type, &output_type}) {
    if (!r->ok()) return r->status();
  }
  Result<Tensor> x = load_tensor(options.input, "x", type.value(), "--type");
  if (!x.ok()) return x.status();
  Result<Tensor> scale = load_scale(options.scale, options.scale_type);
  if (!scale.ok()) return scale.status();
  Tensor zero_point;
  if (!options.zero_point.empty()) {
    // The zero point has x's type, whether x's came from the file or from --type.
    Result<Tensor> zp = load_zero_point(options.zero_point, x.value().type, "--type");
    if (!zp.ok()) return zp.status();
    zero_point = std::move(zp.value());
  }

  const Family family = family_of(options.family);
  if (family == Family::kElementwise) {
    to_elementwise_shape(scale.value(), x.value().shape.size(), options.axis.value_or(1));
    if (!options.zero_point.empty()) to_elementwise_shape(zero_point, x.value().shape.size(), options.axis.value_or(1));
  }
  DequantizeLinearAttributes attributes;
  if (options.axis) attributes.axis = *options.axis;
  attributes.block_size = options.block_size;
  attributes.opset = options.opset;
  if (output_type.value()) attributes.output_dtype = static_cast<int64_t>(*output_type.value());
  const TensorView zp_view = zero_point.view();
  const TensorView* zp = options.zero_point.empty() ? nullptr : &zp_view;
  Result<Plan> plan =
      family == Family::kExtended
          ? plan_extended_dequantize_linear(x.value().view(), scale.value().view(), zp, options.axis.value_or(1))
      : family == Family::kElementwise
          ? (options.feature_level.empty()
                 ? plan_elementwise_dequantize_linear(x.value().view(), scale.value().view(), zp,
                                                      output_type.value().value_or(ElementType::kUndefined))
                 : plan_directml_broadcast(Operation::kDequantize, x.value().view(), scale.value().view(), zp,
                                           output_type.value().value_or(ElementType::kUndefined), options.feature_level))
          : plan_dequantize_linear(x.value().view(), scale.value().view(), zp, attributes);
  if (!plan.ok()) return plan.status();
  Tensor y = make_output(plan.value().output_type, x.value().shape);
  Status status = execute(plan.value(), y.mutable_view());
  if (status.ok()) status = save_tensor(options.output, y);
  if (!status.ok()) return status;
  print_wrote(options.output, y, "");
  return Status();
}

Status run_roundtrip(const QuantizeOptions& options) {
  Result<Quantized> q_or = quantize(options);
  if (!q_or.ok()) return q_or.status();
  const Quantized& q = q_or.value();

  // Dequantize with the same scale, zero point and attributes; the output type is the scale's
  // (float32 for a number or a calibrated scale), so x's own rounding adds no error.
  DequantizeLinearAttributes attributes;
  if (options.axis) attributes.axis = *options.axis;
  attributes.block_size = options.block_size;
  attributes.opset = options.opset;
  const TensorView zp_view = q.zero_point.view();
  const TensorView* zp = q.has_zero_point ? &zp_view : nullptr;
  const Family family = family_of(options.family);
  Result<Plan> plan = family == Family::kExtended
                          ? plan_extended_dequantize_linear(q.y.view(), q.scale.view(), zp, options.axis.value_or(1))
                      : family == Family::kElementwise
                          ? (options.feature_level.empty()
                                 ? plan_elementwise_dequantize_linear(q.y.view(), q.scale.view(), zp)
                                 : plan_directml_broadcast(Operation::kDequantize, q.y.view(), q.scale.view(), zp,
                                                           ElementType::kUndefined, options.feature_level))
                          : plan_dequantize_linear(q.y.view(), q.scale.view(), zp, attributes);
  if (!plan.ok()) return plan.status();
  Tensor restored = make_output(plan.value().output_type, q.x.shape);
  Status status = execute(plan.value(), restored.mutable_view());
  if (!status.ok()) return status;

  Result<ErrorStatistics> statistics = error_statistics(q.x, restored);
  if (!statistics.ok()) return statistics.status();
  const ErrorStatistics& stats = statistics.value();
  const double n = stats.finite ? static_cast<double>(stats.finite) : 1.0;
  const double sqnr = stats.sum_sq > 0 ? 10.0 * std::log10(stats.signal / stats.sum_sq) : INFINITY;

  std::printf("roundtrip: x %s %s -> %s -> %s\n", std::string(name(q.x.type)).c_str(), shape_text(q.x.shape).c_str(),
              std::string(name(q.y.type)).c_str(), std::string(name(restored.type)).c_str());
  if (q.calibration) std::printf("calibration:    %s\n", q.calibration->description.c_str());
  if (q.scale.count() == 1 && q.scale.type == ElementType::kFloat32) {
    float s;
    std::memcpy(&s, q.scale.bytes.data(), sizeof s);
    std::printf("scale:          %.9g\n", static_cast<double>(s));
  }
  std::printf("max abs error:  %.9g\n", stats.max_abs);
  std::printf("mean abs error: %.9g\n", stats.sum_abs / n);
  std::printf("RMSE:           %.9g\n", std::sqrt(stats.sum_sq / n));
  std::printf("SQNR dB:        %.4f\n", sqnr);
  std::printf("changed:        %llu of %llu elements\n", static_cast<unsigned long long>(stats.changed),
              static_cast<unsigned long long>(stats.count));
  if (stats.finite != stats.count) {
    std::printf("non-finite x:   %llu elements (left out of the error statistics)\n",
                static_cast<unsigned long long>(stats.count - stats.finite));
  }

  if (!options.output.empty()) {
    status = save_tensor(options.output, restored);
    if (!status.ok()) return status;
    print_wrote(options.output, restored, "dequantized");
    if (q.calibration) return save_calibration(options.output, *q.calibration);
  }
  return Status();
}

}  // namespace qdq::tools
