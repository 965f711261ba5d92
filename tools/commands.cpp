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
// file_type and file_descr below.
//
// quantize, dequantize and roundtrip run the operators over x a chunk of rows at a time (Chunks):
// x is read from its file and y written to its own as they go, so a command touches each byte once
// between a file and the cache and maps no memory the size of its tensors.
#include "commands.h"
#include "directml.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
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

// The qdq type of a .npy file's elements, and whether the file holds it as codes (a type numpy has
// no dtype for). `declared` is the type the user named for this input (--type, --input-type,
// --scale-type), `flag` that option's name for messages, `where` the input's name in them.
struct FileType {
  ElementType type = ElementType::kUndefined;
  bool from_codes = false;
};

Result<FileType> file_type(const std::string& descr, std::optional<ElementType> declared, const std::string& where,
                           const char* flag) {
  const std::optional<ElementType> native = native_type(descr);
  if (declared) {
    if (native == declared) return FileType{*declared, false};
    if (holds_codes_of(descr, *declared)) return FileType{*declared, true};
    const std::string expected = *declared == ElementType::kBfloat16 ? "uint16 codes or ml_dtypes bfloat16"
                                 : native_descr(*declared)        ? std::string(name(*declared))
                                                                  : "uint8 codes, one per element, or ml_dtypes' " +
                                                                        std::string(name(*declared));
    return Status::invalid_argument(where + " holds " + dtype_name(descr) + " but " + flag + " is " +
                                    std::string(name(*declared)) + " (expected " + expected + ")");
  }
  if (native) return FileType{*native, false};
  if (descr == "<V2") return FileType{ElementType::kBfloat16, true};  // the only 2-byte ml_dtypes type
  if (descr == "|V1" || descr == "|f1") {
    return Status::invalid_argument(where + " holds 1-byte ml_dtypes codes ('" + descr + "'); say which type with " +
                                    flag);
  }
  return Status::invalid_argument(where + " has dtype " + dtype_name(descr) +
                                  ", which qdq does not handle (convert it, e.g. x.astype(np.float32))");
}

// Whether every byte of a file's body is a code of its type. Only 4- and 2-bit types held as
// codes can fail: a byte with bits above the type's width is not a code of it, and is refused
// rather than its high bits dropped. One OR over the bytes (vectorized) finds whether any is.
Status check_codes(const unsigned char* begin, size_t size, const FileType& file, const std::string& where,
                   uint64_t first_index = 0) {
  const ElementTypeInfo& row = info(file.type);
  if (!file.from_codes || !row.is_packed()) return Status();
  const unsigned char* end = begin + size;
  unsigned char any = 0;
  for (const unsigned char* byte = begin; byte != end; ++byte) any = static_cast<unsigned char>(any | *byte);
  if ((any >> row.bits) == 0) return Status();
  const unsigned char* bad = std::find_if(begin, end, [&](unsigned char byte) { return (byte >> row.bits) != 0; });
  char text[160];
  std::snprintf(text, sizeof text, " has byte 0x%02x at flat index %llu, which is not a %d-bit %s code", *bad,
                static_cast<unsigned long long>(first_index + static_cast<uint64_t>(bad - begin)), static_cast<int>(row.bits),
                std::string(name(file.type)).c_str());
  return Status::invalid_argument(where + text);
}

std::string input_name(const char* role, const std::string& path) { return std::string(role) + " ('" + path + "')"; }

// Whether two paths name the same existing file.
bool same_file(const std::string& a, const std::string& b) {
  struct stat first {}, second {};
  return ::stat(a.c_str(), &first) == 0 && ::stat(b.c_str(), &second) == 0 && first.st_dev == second.st_dev &&
         first.st_ino == second.st_ino;
}

// The operator's x: loaded whole, or left in its file to be read a chunk of rows at a time while
// the output is written (run_in_chunks). A regular file streams; a pipe, a file that is also the
// output, and an x the command needs whole (calibration over groups that span rows) are loaded. 4- and 2-bit codes
// are checked as they are read, so a bad byte in a streaming x is found with part of the output
// written; the unfinished output is then removed (NpyWriter).
struct Input {
  ElementType type = ElementType::kUndefined;
  FileType file_type;
  std::string where;  // for messages
  std::vector<int64_t> shape;
  std::optional<Tensor> loaded;
  std::optional<NpyReader> file;  // with its body still to read

  uint64_t count() const {
    uint64_t n = 1;
    for (int64_t d : shape) n *= static_cast<uint64_t>(d);
    return n;
  }
};

// Reads the rest of a streaming x into memory (the command needs it whole after all).
Status load_whole(Input& input) {
  if (!input.file) return Status();
  Result<ByteBuffer> body = input.file->read_rest();
  if (!body.ok()) return body.status();
  if (Status codes = check_codes(body.value().data(), body.value().size(), input.file_type, input.where); !codes.ok()) {
    return codes;
  }
  input.loaded = Tensor{input.type, input.shape, std::move(body.value())};
  input.file.reset();
  return Status();
}

Result<Input> open_input(const std::string& path, const char* role, std::optional<ElementType> declared,
                         const char* flag, bool whole, const std::string& output) {
  Result<NpyReader> reader = NpyReader::open(path);
  if (!reader.ok()) return reader.status();
  const std::string where = input_name(role, path);
  Result<FileType> file = file_type(reader.value().descr(), declared, where, flag);
  if (!file.ok()) return file.status();
  Input input;
  input.type = file.value().type;
  input.file_type = file.value();
  input.where = where;
  input.shape = reader.value().shape();
  const bool streams = !whole && reader.value().sized() && !same_file(path, output);
  input.file = std::move(reader.value());
  if (!streams) {
    if (Status loaded = load_whole(input); !loaded.ok()) return loaded;
  }
  return input;
}

// Loads a .npy file whole as a qdq tensor (see file_type for the arguments).
Result<Tensor> load_tensor(const std::string& path, const char* role, std::optional<ElementType> declared,
                           const char* flag) {
  Result<Input> input = open_input(path, role, declared, flag, true, "");
  if (!input.ok()) return input.status();
  return std::move(*input.value().loaded);
}

// How a type is written to .npy, for the "wrote ..." lines and --help.
std::string storage_note(ElementType type) {
  if (native_descr(type) != nullptr) return "";
  const std::string codes = type == ElementType::kBfloat16 ? "'<V2'" : "'|V1'";
  return " as " + codes + " codes (np.load(path).view(ml_dtypes." + std::string(name(type)) + "))";
}

// The descriptor a tensor of `type` is written with: numpy's own, or codes, bfloat16 two bytes
// each and the rest (4- and 2-bit types too) one per byte, as the core stores them.
const char* file_descr(ElementType type) {
  if (const char* descr = native_descr(type)) return descr;
  return type == ElementType::kBfloat16 ? "<V2" : "|V1";
}

Status save_tensor(const std::string& path, const Tensor& tensor) {
  return write_npy(path, file_descr(tensor.type), tensor.shape, tensor.bytes.data(),
                   storage_bytes(tensor.type, tensor.count(), kLayout));
}

// "wrote y.npy: int4 [4, 6] as uint8 codes (...)", with `what` ("scale, minmax, ...") after it.
void print_wrote(const std::string& path, ElementType type, const std::vector<int64_t>& shape, const std::string& what) {
  std::printf("wrote %s: %s %s%s%s\n", path.c_str(), std::string(name(type)).c_str(), shape_text(shape).c_str(),
              what.empty() ? "" : (" " + what).c_str(), storage_note(type).c_str());
}

void print_wrote(const std::string& path, const Tensor& tensor, const std::string& what) {
  print_wrote(path, tensor.type, tensor.shape, what);
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
Status with_decoder(ElementType type, const unsigned char* b, const char* role, Visit&& visit) {
  switch (type) {
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
      return Status::invalid_argument(std::string(role) + " has type " + std::string(name(type)) +
                                      "; expected float32, float16, bfloat16 or an integer type");
  }
}

// The error of a round trip, over the elements whose x is finite (a NaN or inf input has no error to
// measure); `changed` counts every element whose value differs (NaN -> NaN counts as unchanged).
struct ErrorStatistics {
  double max_abs = 0.0, sum_abs = 0.0, sum_sq = 0.0, signal = 0.0;
  uint64_t finite = 0, changed = 0, count = 0;
};

// Adds `count` elements of x and of its round trip to the statistics, decoding both as it goes.
Status accumulate_errors(ErrorStatistics& stats, ElementType x_type, const unsigned char* x, ElementType restored_type,
                         const unsigned char* restored, uint64_t count) {
  return with_decoder(x_type, x, "x", [&](auto x_at) {
    return with_decoder(restored_type, restored, "the dequantized tensor", [&](auto r_at) {
      for (uint64_t i = 0; i < count; ++i) {
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
      stats.count += count;
      return Status();
    });
  });
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

// How scales and zero points are computed from x: qdq's toolkit (compute_qparams; formulas and edge
// cases in docs/semantics.md, "Scales from data"), float32 scales, or float8_e8m0fnu for mx_*.
struct Calibration {
  QparamsOptions options;
  bool with_zero_point = false;  // integer types; float types' zero points stay +0 codes
  std::string description;       // "minmax, per-axis (axis 0)"
};

Calibration calibration_from(ElementType type, const QuantizeOptions& options) {
  static constexpr std::pair<const char*, ScaleMethod> kMethods[] = {
      {"minmax", ScaleMethod::kMinMax},     {"symmetric", ScaleMethod::kSymmetric},
      {"symmetric_restricted", ScaleMethod::kSymmetricRestricted},
      {"mx_floor", ScaleMethod::kMxFloor},  {"mx_ceil", ScaleMethod::kMxCeil},
      {"mx_even", ScaleMethod::kMxEven},    {"mx_rceil", ScaleMethod::kMxRceil},
  };
  Calibration c;
  QparamsOptions& q = c.options;
  q.quantized_type = type;
  for (const auto& [method_name, method] : kMethods) {
    if (options.calibrate == method_name) q.method = method;
  }
  const bool mx = options.calibrate.rfind("mx_", 0) == 0;
  // Float types take max|x| / max(T) under either name the CLI has always accepted.
  if (info(type).is_float() && q.method == ScaleMethod::kMinMax) q.method = ScaleMethod::kSymmetric;
  q.scale_type = mx ? ElementType::kFloat8E8M0 : ElementType::kFloat32;
  c.with_zero_point = info(type).is_integer();
  c.description = options.calibrate;
  if (options.block_size > 0) {
    q.granularity = Granularity::kBlocked;
    q.axis = options.axis.value_or(1);
    q.block_size = options.block_size;
    c.description += ", blocked (axis " + std::to_string(q.axis) + ", block " + std::to_string(q.block_size) + ")";
  } else if (options.per_axis) {
    q.granularity = Granularity::kPerAxis;
    q.axis = options.axis.value_or(1);
    c.description += ", per-axis (axis " + std::to_string(q.axis) + ")";
  } else {
    c.description += ", per-tensor";
  }
  return c;
}

// Whether every group lies within a chunk of rows of x's first dimension, so that each chunk's
// scales can be computed from the chunk alone: blocks (a chunk holds whole blocks along the first
// axis), or one scale per index of the first axis. Per-tensor groups, and one scale per index of
// another axis, span every row.
bool calibrates_by_rows(const QparamsOptions& q, size_t rank) {
  if (rank == 0) return false;
  if (q.granularity == Granularity::kBlocked) return true;
  const int64_t r = static_cast<int64_t>(rank);
  return q.granularity == Granularity::kPerAxis && ((q.axis % r) + r) % r == 0;
}

// Computes the scale (and zero point) of x's elements `x` of `shape` into the given storage.
Status compute_calibration(const Calibration& c, const TensorView& x, const std::vector<int64_t>& shape,
                           unsigned char* scale, unsigned char* zero_point) {
  Result<std::vector<int64_t>> groups = qparams_shape(shape, c.options);
  if (!groups.ok()) return groups.status();
  const MutableTensorView scale_view{c.options.scale_type, groups.value(), scale, kLayout};
  const MutableTensorView zp_view{c.options.quantized_type, groups.value(), zero_point, kLayout};
  return compute_qparams(x, c.options, scale_view, c.with_zero_point ? &zp_view : nullptr);
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
// Running an operator over x in chunks of rows.
//
// The output is computed a chunk of x's first dimension at a time into one buffer and written to
// its file as it goes, and a streaming x is read the same way: each chunk is in the cache from its
// read to its write, and the tool maps no memory the size of the tensor (a fresh 64 MiB buffer
// costs the OS as much to zero as the kernel takes to fill it). Every element's result depends
// only on its own x, scale and zero point, so the chunks' results are the whole tensor's.

// How the operator's front door is called: on the whole tensor first (every rule checked before
// the output file is created), then on each chunk with the scale and zero point rows it uses.
using Planner = std::function<Result<Plan>(const TensorView& x, const TensorView& scale, const TensorView* zero_point)>;

// Elements per chunk: x and y of one chunk (4 bytes an element at most) take 8 MiB, more where one
// row of x, or one block of rows along the first axis, is larger than that. Each
// chunk is still split over the pool's threads (a call of 2^17 elements or more is), and stays
// below the kernels' streaming-store size (kStreamingOutputBytes), so its y is in the cache for
// the write. The environment variable QDQ_CLI_CHUNK_ELEMENTS sets another (tests run many chunks
// over small tensors with it; bench/cli_door.py can compare sizes).
uint64_t chunk_elements() {
  constexpr uint64_t kDefault = uint64_t{1} << 20;
  const char* text = std::getenv("QDQ_CLI_CHUNK_ELEMENTS");
  if (text == nullptr || *text < '0' || *text > '9') return kDefault;  // unset, empty, or signed
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (*end != '\0' || value == 0 || errno == ERANGE) return kDefault;
  return std::min<uint64_t>(value, uint64_t{1} << 62);
}

// Rows of a tensor: its shape with fewer rows, and where they start.
struct TensorRows {
  ElementType type = ElementType::kUndefined;
  std::vector<int64_t> shape;
  const unsigned char* data = nullptr;

  TensorView view() const { return {type, shape, data, kLayout}; }
};

// The part of a scale or zero point that rows [first, last) of x's first dimension use, or
// nullopt where the tool cannot tell it (the tensor then runs as one chunk). `axis` is the
// operator's axis attribute normalised to x's rank, `block_size` its block size (0: none).
std::optional<TensorRows> rows_of(const Tensor& t, const std::vector<int64_t>& x_shape, int64_t axis,
                                  int64_t block_size, int64_t first, int64_t last) {
  TensorRows whole{t.type, t.shape, t.bytes.data()};
  if (t.count() == 1) return whole;  // per-tensor, or a broadcast of one value
  int64_t begin = first, end = last;
  if (block_size > 0 && axis == 0) {  // blocks along the first dimension: chunks start on a block
    begin = first / block_size;
    end = last / block_size + (last % block_size != 0);  // rounded up without overflowing
  }
  if (t.shape.size() == 1 && !x_shape.empty()) {
    if (axis != 0) return whole;  // one value per index of another dimension: every chunk uses all
  } else if (t.shape.size() == x_shape.size() && t.shape.size() >= 2) {
    if (t.shape[0] == 1) return whole;  // broadcast along the first dimension
  } else {
    return std::nullopt;
  }
  if (t.shape[0] < end) return std::nullopt;
  const uint64_t row = t.count() / static_cast<uint64_t>(t.shape[0]);
  TensorRows rows = whole;
  rows.shape[0] = end - begin;
  rows.data = t.bytes.data() + storage_bytes(t.type, static_cast<uint64_t>(begin) * row, kLayout);
  return rows;
}

struct Slicing {
  int64_t axis = 1;  // the operator's axis attribute as given (normalised here)
  int64_t block_size = 0;
};

// One chunk: rows [first, last) of x's first dimension (the whole of a 0-D x), with the scale
// and zero point rows they use.
struct Chunk {
  bool whole = false;  // the only chunk: plans made for the whole tensor apply as they are
  uint64_t offset = 0, elements = 0;  // flat index of its first element, its element count
  std::vector<int64_t> shape;
  const unsigned char* x = nullptr;
  std::optional<TensorRows> scale, zero_point;

  TensorView x_view(ElementType type) const { return {type, shape, x, kLayout}; }
  MutableTensorView output(ElementType type, unsigned char* data) const { return {type, shape, data, kLayout}; }
};

// x cut into chunks of rows, read from its file as each is visited when it streams.
class Chunks {
 public:
  Chunks(Input& x, const Tensor& scale, const Tensor* zero_point, const Slicing& slicing)
      : x_(x), scale_(scale), zero_point_(zero_point), block_size_(slicing.block_size) {
    const uint64_t count = x.count();
    rank_ = static_cast<int64_t>(x.shape.size());
    first_dim_ = rank_ > 0 ? x.shape[0] : 1;
    row_elements_ = rank_ > 0 && first_dim_ > 0 ? count / static_cast<uint64_t>(first_dim_) : count;
    axis_ = rank_ > 0 ? ((slicing.axis % rank_) + rank_) % rank_ : 0;
    rows_ = first_dim_;
    if (rank_ > 0 && row_elements_ > 0) {
      // In unsigned arithmetic and below first_dim_ before any rounding, so that no block size
      // or chunk setting can overflow it: a block at least as long as the dimension is one chunk.
      const uint64_t rows = std::max<uint64_t>(1, chunk_elements() / row_elements_);
      const uint64_t dim = static_cast<uint64_t>(first_dim_);
      const uint64_t block = static_cast<uint64_t>(block_size_);
      if (rows < dim && !(block_size_ > 0 && axis_ == 0 && block >= dim)) {
        const uint64_t whole_blocks = block_size_ > 0 && axis_ == 0 ? (rows + block - 1) / block * block : rows;
        rows_ = static_cast<int64_t>(std::min(whole_blocks, dim));
      }
    }
    // Where the scale's or zero point's rows cannot be told, one chunk.
    const bool sliceable = rows_ == first_dim_ ||
                           (rows_of(scale, x.shape, axis_, block_size_, 0, rows_) &&
                            (zero_point == nullptr || rows_of(*zero_point, x.shape, axis_, block_size_, 0, rows_)));
    if (!sliceable) rows_ = first_dim_;
    largest_ = std::min(count, std::max<uint64_t>(1, static_cast<uint64_t>(rows_) * row_elements_));
    x_buffer_ = ByteBuffer(x.file ? storage_bytes(x.type, largest_, kLayout) : 0);
  }

  // Elements of the largest chunk (the size of the buffers a chunk is computed into).
  uint64_t largest() const { return largest_; }

  // x's view for plans of the whole tensor: where x streams, its chunk buffer stands in for the
  // checks, which read no x value (the zero point's, where a rule needs them).
  TensorView whole_x() const {
    return {x_.type, x_.shape, x_.loaded ? x_.loaded->bytes.data() : x_buffer_.data(), kLayout};
  }

  // Calls visit(chunk) for every chunk in order; a streaming x is read (and its codes checked) first.
  Status each(const std::function<Status(const Chunk&)>& visit) {
    const bool one = rows_ == first_dim_;
    for (int64_t first = 0; first < first_dim_ || (first == 0 && rank_ == 0); first += std::max<int64_t>(rows_, 1)) {
      const int64_t last = rank_ > 0 ? std::min(first_dim_, first + rows_) : 1;
      Chunk chunk;
      chunk.whole = one;
      chunk.elements = rank_ > 0 ? static_cast<uint64_t>(last - first) * row_elements_ : x_.count();
      chunk.offset = rank_ > 0 ? static_cast<uint64_t>(first) * row_elements_ : 0;
      chunk.shape = x_.shape;
      if (rank_ > 0) chunk.shape[0] = last - first;
      if (x_.file) {
        const uint64_t bytes = storage_bytes(x_.type, chunk.elements, kLayout);
        if (Status read = x_.file->read_next(x_buffer_.data(), bytes); !read.ok()) return read;
        if (Status codes = check_codes(x_buffer_.data(), bytes, x_.file_type, x_.where, chunk.offset); !codes.ok()) {
          return codes;
        }
        chunk.x = x_buffer_.data();
      } else {
        chunk.x = x_.loaded->bytes.data() + storage_bytes(x_.type, chunk.offset, kLayout);
      }
      if (!one) {
        chunk.scale = rows_of(scale_, x_.shape, axis_, block_size_, first, last);
        if (zero_point_) chunk.zero_point = rows_of(*zero_point_, x_.shape, axis_, block_size_, first, last);
      }
      if (Status status = visit(chunk); !status.ok()) return status;
      if (rank_ == 0) break;
    }
    return x_.file ? x_.file->expect_end() : Status();
  }

 private:
  Input& x_;
  const Tensor& scale_;
  const Tensor* zero_point_;
  int64_t block_size_ = 0, rank_ = 0, first_dim_ = 1, axis_ = 0, rows_ = 1;
  uint64_t row_elements_ = 0, largest_ = 1;
  ByteBuffer x_buffer_;
};

// The operator's plan for a chunk: the whole tensor's plan for the only chunk, else the front
// door's on the chunk's rows.
Result<Plan> plan_chunk(const Planner& planner, const Plan& whole, const Chunk& chunk, const TensorView& x) {
  if (chunk.whole) return whole;
  // Chunks checked at construction that every chunk's rows can be told; a missing zero point here
  // would run the chunk without one, so it is an error, never a default.
  if (!chunk.scale || (whole.has_zero_point && !chunk.zero_point)) {
    return Status::internal("qdq: no scale or zero point rows for rows of x starting at flat index " +
                            std::to_string(chunk.offset));
  }
  const TensorView zero_point = chunk.zero_point ? chunk.zero_point->view() : TensorView{};
  return planner(x, chunk.scale->view(), chunk.zero_point ? &zero_point : nullptr);
}

// Runs planner's operator over x, writing y to `output`; returns y's type.
// `before` runs on each chunk before it is planned (calibration), where given.
Result<ElementType> run_in_chunks(Input& x, const Tensor& scale, const Tensor* zero_point, const Planner& planner,
                                  const Slicing& slicing, const std::string& output,
                                  const std::function<Status(const Chunk&)>& before = {}) {
  Chunks chunks(x, scale, zero_point, slicing);
  const TensorView zp_whole = zero_point ? zero_point->view() : TensorView{};
  Result<Plan> whole = planner(chunks.whole_x(), scale.view(), zero_point ? &zp_whole : nullptr);
  if (!whole.ok()) return whole.status();
  const ElementType y_type = whole.value().output_type;

  Result<NpyWriter> writer = NpyWriter::create(output, file_descr(y_type), x.shape, storage_bytes(y_type, x.count(), kLayout));
  if (!writer.ok()) return writer.status();
  ByteBuffer y(storage_bytes(y_type, chunks.largest(), kLayout));
  Status status = chunks.each([&](const Chunk& chunk) -> Status {
    if (before) {
      if (Status prepared = before(chunk); !prepared.ok()) return prepared;
    }
    Result<Plan> plan = plan_chunk(planner, whole.value(), chunk, chunk.x_view(x.type));
    if (!plan.ok()) return plan.status();
    if (Status run = execute(plan.value(), chunk.output(y_type, y.data())); !run.ok()) return run;
    return writer.value().write_next(y.data(), storage_bytes(y_type, chunk.elements, kLayout));
  });
  if (!status.ok()) return status;
  if (Status finished = writer.value().finish(); !finished.ok()) return finished;
  return y_type;
}

// ---------------------------------------------------------------------------------------------
// Quantize.

// The scale and zero point of a quantize: from the flags, or calibrated from x. A loaded x is
// calibrated whole here; a streaming one (its groups within chunks of rows) a chunk at a time as
// the chunks are read (calibrate_chunk), into these tensors.
struct QuantizeOperands {
  Tensor scale, zero_point;
  bool has_zero_point = false;
  std::optional<Calibration> calibration;
  bool calibrated_per_chunk = false;
};

Result<QuantizeOperands> quantize_operands(const QuantizeOptions& options, ElementType type, Family family,
                                           const Input& x, const std::optional<Calibration>& calibrated) {
  QuantizeOperands q;
  if (calibrated) {
    const Calibration& calibration = *calibrated;
    Result<std::vector<int64_t>> groups = qparams_shape(x.shape, calibration.options);
    if (!groups.ok()) return groups.status();
    q.scale = make_tensor(calibration.options.scale_type, groups.value());
    q.zero_point = make_tensor(type, groups.value());
    q.has_zero_point = true;
    q.calibrated_per_chunk = !x.loaded;
    if (x.loaded) {
      if (Status status = compute_calibration(calibration, x.loaded->view(), x.shape, q.scale.bytes.data(),
                                              q.zero_point.bytes.data());
          !status.ok()) {
        return status;
      }
    }
    q.calibration = calibration;
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
    to_elementwise_shape(q.scale, x.shape.size(), axis);
    if (q.has_zero_point) to_elementwise_shape(q.zero_point, x.shape.size(), axis);
  }
  return q;
}

Planner quantize_planner(const QuantizeOptions& options, ElementType type, Family family, bool has_zero_point,
                         std::optional<ElementType> precision) {
  QuantizeLinearAttributes attributes;
  if (options.axis) attributes.axis = *options.axis;
  attributes.block_size = options.block_size;
  attributes.saturate = options.saturate;
  attributes.opset = options.opset;
  if (precision) attributes.precision = static_cast<int64_t>(*precision);
  // The output type comes from the zero point when there is one (ONNX); otherwise output_dtype
  // says it, left unset for uint8 (the default) so that opsets before 21 work.
  if (!has_zero_point && type != ElementType::kUint8) attributes.output_dtype = static_cast<int64_t>(type);
  const int64_t axis = options.axis.value_or(1);
  const std::string feature_level = options.feature_level;
  return [=](const TensorView& x, const TensorView& scale, const TensorView* zp) -> Result<Plan> {
    if (family == Family::kExtended) return plan_extended_quantize_linear(x, scale, zp, axis);
    if (family == Family::kElementwise) {
      return feature_level.empty() ? plan_elementwise_quantize_linear(x, scale, zp, type)
                                   : plan_directml_broadcast(Operation::kQuantize, x, scale, zp, type, feature_level);
    }
    return plan_quantize_linear(x, scale, zp, attributes);
  };
}

struct QuantizeSetup {
  ElementType type = ElementType::kUndefined;
  Family family = Family::kOnnx;
  Input x;
  QuantizeOperands operands;
  Planner planner;
};

Result<QuantizeSetup> prepare_quantize(const QuantizeOptions& options, bool whole_x) {
  Result<std::optional<ElementType>> type_or = optional_type(options.type);
  Result<std::optional<ElementType>> input_type = optional_type(options.input_type);
  Result<std::optional<ElementType>> precision = optional_type(options.precision);
  for (const auto* r : {&type_or, &input_type, &precision}) {
    if (!r->ok()) return r->status();
  }
  if (!type_or.value()) return Status::invalid_argument("--type is required");
  QuantizeSetup setup;
  setup.type = *type_or.value();
  setup.family = family_of(options.family);
  Result<Input> x = open_input(options.input, "x", input_type.value(), "--input-type", whole_x, options.output);
  if (!x.ok()) return x.status();
  setup.x = std::move(x.value());
  // A calibrated x streams where each chunk's groups lie within it (and DirectML's same-rank
  // scales need no reshaping of what compute_qparams writes); otherwise it is read whole first.
  std::optional<Calibration> calibration;
  if (!options.calibrate.empty()) calibration = calibration_from(setup.type, options);
  if (calibration && (setup.family == Family::kElementwise ||
                      !calibrates_by_rows(calibration->options, setup.x.shape.size()))) {
    if (Status loaded = load_whole(setup.x); !loaded.ok()) return loaded;
  }
  Result<QuantizeOperands> operands = quantize_operands(options, setup.type, setup.family, setup.x, calibration);
  if (!operands.ok()) return operands.status();
  setup.operands = std::move(operands.value());
  setup.planner = quantize_planner(options, setup.type, setup.family, setup.operands.has_zero_point, precision.value());
  return setup;
}

Planner dequantize_planner(Family family, int64_t axis, const DequantizeLinearAttributes& attributes,
                           ElementType requested, const std::string& feature_level) {
  return [=](const TensorView& x, const TensorView& scale, const TensorView* zp) -> Result<Plan> {
    if (family == Family::kExtended) return plan_extended_dequantize_linear(x, scale, zp, axis);
    if (family == Family::kElementwise) {
      return feature_level.empty()
                 ? plan_elementwise_dequantize_linear(x, scale, zp, requested)
                 : plan_directml_broadcast(Operation::kDequantize, x, scale, zp, requested, feature_level);
    }
    return plan_dequantize_linear(x, scale, zp, attributes);
  };
}

// Calibrated parameters go beside the output, so that the output can be dequantized (or x
// re-quantized) later with exactly the scale and zero point that produced it.
Status save_calibration(const std::string& output, const QuantizeOperands& q) {
  const std::string scale_path = beside(output, "scale");
  const std::string zp_path = beside(output, "zero_point");
  Status status = save_tensor(scale_path, q.scale);
  if (status.ok()) status = save_tensor(zp_path, q.zero_point);
  if (!status.ok()) return status;
  print_wrote(scale_path, q.scale, "scale (" + q.calibration->description + ")");
  print_wrote(zp_path, q.zero_point, "zero point");
  return Status();
}

// For a streaming, calibrated x: the chunk's scales and zero points, computed from its rows into
// the rows of the tensors that its plan then reads.
Status calibrate_chunk(const Chunk& chunk, ElementType x_type, QuantizeOperands& q) {
  if (!q.calibrated_per_chunk) return Status();
  // The chunk's rows point into q's own tensors (rows_of), which this writes.
  unsigned char* scale = chunk.whole ? q.scale.bytes.data() : const_cast<unsigned char*>(chunk.scale->data);
  unsigned char* zero_point =
      chunk.whole ? q.zero_point.bytes.data() : const_cast<unsigned char*>(chunk.zero_point->data);
  return compute_calibration(*q.calibration, chunk.x_view(x_type), chunk.shape, scale, zero_point);
}

}  // namespace

Status run_quantize(const QuantizeOptions& options) {
  Result<QuantizeSetup> setup = prepare_quantize(options, false);
  if (!setup.ok()) return setup.status();
  QuantizeSetup& q = setup.value();
  const Tensor* zp = q.operands.has_zero_point ? &q.operands.zero_point : nullptr;
  Result<ElementType> y_type = run_in_chunks(
      q.x, q.operands.scale, zp, q.planner, {options.axis.value_or(1), options.block_size}, options.output,
      [&](const Chunk& chunk) { return calibrate_chunk(chunk, q.x.type, q.operands); });
  if (!y_type.ok()) return y_type.status();
  print_wrote(options.output, y_type.value(), q.x.shape, "");
  if (q.operands.calibration) return save_calibration(options.output, q.operands);
  return Status();
}

Status run_dequantize(const DequantizeOptions& options) {
  Result<std::optional<ElementType>> type = optional_type(options.type);
  Result<std::optional<ElementType>> output_type = optional_type(options.output_type);
  for (const auto* r : {&type, &output_type}) {
    if (!r->ok()) return r->status();
  }
  Result<Input> x = open_input(options.input, "x", type.value(), "--type", false, options.output);
  if (!x.ok()) return x.status();
  Result<Tensor> scale = load_scale(options.scale, options.scale_type);
  if (!scale.ok()) return scale.status();
  Tensor zero_point;
  const bool has_zero_point = !options.zero_point.empty();
  if (has_zero_point) {
    // The zero point has x's type, whether x's came from the file or from --type.
    Result<Tensor> zp = load_zero_point(options.zero_point, x.value().type, "--type");
    if (!zp.ok()) return zp.status();
    zero_point = std::move(zp.value());
  }

  const Family family = family_of(options.family);
  const int64_t axis = options.axis.value_or(1);
  if (family == Family::kElementwise) {
    to_elementwise_shape(scale.value(), x.value().shape.size(), axis);
    if (has_zero_point) to_elementwise_shape(zero_point, x.value().shape.size(), axis);
  }
  DequantizeLinearAttributes attributes;
  if (options.axis) attributes.axis = *options.axis;
  attributes.block_size = options.block_size;
  attributes.opset = options.opset;
  if (output_type.value()) attributes.output_dtype = static_cast<int64_t>(*output_type.value());
  const Planner planner = dequantize_planner(family, axis, attributes,
                                             output_type.value().value_or(ElementType::kUndefined), options.feature_level);
  Result<ElementType> y_type = run_in_chunks(x.value(), scale.value(), has_zero_point ? &zero_point : nullptr, planner,
                                             {axis, options.block_size}, options.output);
  if (!y_type.ok()) return y_type.status();
  print_wrote(options.output, y_type.value(), x.value().shape, "");
  return Status();
}

Status run_roundtrip(const QuantizeOptions& options) {
  // x streams, as for quantize (a calibration whose groups span rows reads it whole first).
  Result<QuantizeSetup> setup = prepare_quantize(options, false);
  if (!setup.ok()) return setup.status();
  QuantizeSetup& q = setup.value();
  const Tensor& scale = q.operands.scale;
  const Tensor* zero_point = q.operands.has_zero_point ? &q.operands.zero_point : nullptr;
  const TensorView zp_whole = zero_point ? zero_point->view() : TensorView{};
  const TensorView* zp = zero_point ? &zp_whole : nullptr;
  Chunks chunks(q.x, scale, zero_point, {options.axis.value_or(1), options.block_size});
  Result<Plan> quantize_whole = q.planner(chunks.whole_x(), scale.view(), zp);
  if (!quantize_whole.ok()) return quantize_whole.status();
  const ElementType code_type = quantize_whole.value().output_type;
  ByteBuffer codes(storage_bytes(code_type, chunks.largest(), kLayout));

  // Dequantize with the same scale, zero point and attributes; the output type is the scale's
  // (float32 for a number or a calibrated scale), so x's own rounding adds no error.
  DequantizeLinearAttributes attributes;
  if (options.axis) attributes.axis = *options.axis;
  attributes.block_size = options.block_size;
  attributes.opset = options.opset;
  const Planner dequantize = dequantize_planner(q.family, options.axis.value_or(1), attributes,
                                                ElementType::kUndefined, options.feature_level);
  Result<Plan> dequantize_whole = dequantize({code_type, q.x.shape, codes.data(), kLayout}, scale.view(), zp);
  if (!dequantize_whole.ok()) return dequantize_whole.status();
  const ElementType restored_type = dequantize_whole.value().output_type;
  ByteBuffer restored(storage_bytes(restored_type, chunks.largest(), kLayout));
  // Both decode (the statistics need it) before an output file exists.
  for (const auto& [type, role] : {std::pair{q.x.type, "x"}, std::pair{restored_type, "the dequantized tensor"}}) {
    if (Status decodable = with_decoder(type, codes.data(), role, [](auto) { return Status(); }); !decodable.ok()) {
      return decodable;
    }
  }
  std::optional<NpyWriter> writer;
  if (!options.output.empty()) {
    Result<NpyWriter> created = NpyWriter::create(options.output, file_descr(restored_type), q.x.shape,
                                                  storage_bytes(restored_type, q.x.count(), kLayout));
    if (!created.ok()) return created.status();
    writer.emplace(std::move(created.value()));
  }

  ErrorStatistics stats;
  Status status = chunks.each([&](const Chunk& chunk) -> Status {
    if (Status calibrated = calibrate_chunk(chunk, q.x.type, q.operands); !calibrated.ok()) return calibrated;
    Result<Plan> quantize = plan_chunk(q.planner, quantize_whole.value(), chunk, chunk.x_view(q.x.type));
    if (!quantize.ok()) return quantize.status();
    if (Status run = execute(quantize.value(), chunk.output(code_type, codes.data())); !run.ok()) return run;
    Result<Plan> plan = plan_chunk(dequantize, dequantize_whole.value(), chunk, {code_type, chunk.shape, codes.data(), kLayout});
    if (!plan.ok()) return plan.status();
    if (Status run = execute(plan.value(), chunk.output(restored_type, restored.data())); !run.ok()) return run;
    if (Status sum = accumulate_errors(stats, q.x.type, chunk.x, restored_type, restored.data(), chunk.elements);
        !sum.ok()) {
      return sum;
    }
    return writer ? writer->write_next(restored.data(), storage_bytes(restored_type, chunk.elements, kLayout)) : Status();
  });
  if (!status.ok()) return status;
  if (writer) {
    if (Status finished = writer->finish(); !finished.ok()) return finished;
  }
  const std::optional<Calibration>& calibration = q.operands.calibration;
  const double n = stats.finite ? static_cast<double>(stats.finite) : 1.0;
  const double sqnr = stats.sum_sq > 0 ? 10.0 * std::log10(stats.signal / stats.sum_sq) : INFINITY;

  std::printf("roundtrip: x %s %s -> %s -> %s\n", std::string(name(q.x.type)).c_str(), shape_text(q.x.shape).c_str(),
              std::string(name(code_type)).c_str(), std::string(name(restored_type)).c_str());
  if (calibration) std::printf("calibration:    %s\n", calibration->description.c_str());
  if (scale.count() == 1 && scale.type == ElementType::kFloat32) {
    float s;
    std::memcpy(&s, scale.bytes.data(), sizeof s);
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
    print_wrote(options.output, restored_type, q.x.shape, "dequantized");
    if (calibration) return save_calibration(options.output, q.operands);
  }
  return Status();
}

}  // namespace qdq::tools
