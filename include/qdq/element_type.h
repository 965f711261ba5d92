// qdq: the one table of element-type facts.
//
// Every layer (validation, the reference executor, the SIMD kernels, the C ABI, the Python module,
// the ONNX Runtime registration, the command-line tool and the tests) reads the facts below.
// Adding a type means one row here plus, for a new float encoding, nothing more: the float codec
// in src/types/ is driven by the exponent/mantissa/bias/special-value columns.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "qdq/export.h"

namespace qdq {

// Values are ONNX TensorProto.DataType codes, so a code read from a model or passed through the
// C ABI converts with a checked lookup (element_type_from_code) and nothing else. The float6 types
// use the codes onnx.proto gave them (27, 28, IR 13), so no qdq-private code can collide with a
// later ONNX one; no QuantizeLinear/DequantizeLinear version qdq implements (10..25) lists them.
enum class ElementType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kFloat16 = 10,
  kUint32 = 12,
  kBfloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUint2 = 25,
  kInt2 = 26,
  kFloat6E2M3 = 27,  // OCP MX FP6 E2M3 (ml_dtypes float6_e2m3fn): no infinity, no NaN
  kFloat6E3M2 = 28,  // OCP MX FP6 E3M2 (ml_dtypes float6_e3m2fn): no infinity, no NaN
};

enum class ValueKind : uint8_t {
  kInteger,  // two's complement or unsigned, stored in `bits` bits
  kFloat,    // binary floating point described by the float columns below
};

// How a float format spells NaN. The IEEE-like formats reserve the all-ones exponent; the others
// each have one irregular rule, written out here so that the codec needs no per-type branches.
enum class NanStyle : uint8_t {
  kIeee,           // exponent all ones, mantissa != 0 (float32, float16, bfloat16, e5m2)
  kAllOnes,        // only S.1111.111 (float8e4m3fn: no infinity, the top code of each sign is NaN)
  kNegativeZero,   // only 1.0000.000 = 0x80, the code IEEE would use for -0 (the FNUZ types)
  kExponentOnly,   // only 0xFF (float8e8m0: no sign, no mantissa)
  kNone,           // float4e2m1 and the float6 types have no NaN
};

struct ElementTypeInfo {
  ElementType type;
  std::string_view name;       // ml_dtypes / numpy spelling: "float8_e4m3fn", "int4", "bfloat16"
  std::string_view onnx_name;  // TensorProto spelling: "FLOAT8E4M3FN", "INT4", "BFLOAT16"
  uint8_t bits;                // width of one element; 4 and 2 pack several per byte, 6 takes a byte
  ValueKind kind;
  bool is_signed;
  // Range of finite values (integers: the saturation range of the quantize formula).
  double lowest;
  double max;
  // Float encoding (kind == kFloat); zero for integers.
  uint8_t exponent_bits;
  uint8_t mantissa_bits;
  int16_t exponent_bias;
  bool has_infinity;
  bool has_negative_zero;
  NanStyle nan_style;
  // kIeee formats: whether narrowing into this format keeps the NaN payload's leading bits
  // (IEEE hardware conversions and numpy's float16 do) or writes the canonical quiet NaN with the
  // input's sign (ml_dtypes' bfloat16 and float8 do).
  bool keeps_nan_payload;
  // Whether widening a NaN of this format to float32 keeps its payload (numpy's float16 and
  // ml_dtypes' bfloat16 do; ml_dtypes' float8 types give the canonical quiet NaN with the sign).
  bool widening_keeps_nan_payload;

  // 4- and 2-bit codes pack several to a byte; a 6-bit code has a byte of its own (low bits, as in
  // ml_dtypes and in ONNX's one-code-per-entry float6 tensors).
  constexpr bool is_packed() const { return bits < 8 && 8 % bits == 0; }
  constexpr int elements_per_byte() const { return is_packed() ? 8 / bits : 1; }
  constexpr int bytes_per_element() const { return bits <= 8 ? 1 : bits / 8; }
  constexpr bool is_float() const { return kind == ValueKind::kFloat; }
  constexpr bool is_integer() const { return kind == ValueKind::kInteger; }
};

namespace detail {
inline constexpr double kFloat32Max = 3.4028234663852886e38;    // 0x7F7F'FFFF
inline constexpr double kBfloat16Max = 3.3895313892515355e38;   // 0x7F7F
inline constexpr double kE8M0Max = 1.7014118346046923e38;       // 2^127, code 0xFE
inline constexpr double kE8M0Min = 5.877471754111438e-39;       // 2^-127, code 0x00
}  // namespace detail

// clang-format off
inline constexpr ElementTypeInfo kElementTypes[] = {
  //  type                          name               onnx_name         bits kind                 signed lowest                  max                    e  m  bias  inf    -0     nan                     payload (narrow, widen)
  {ElementType::kFloat32,         "float32",         "FLOAT",          32, ValueKind::kFloat,   true,  -detail::kFloat32Max,  detail::kFloat32Max,  8, 23, 127, true,  true,  NanStyle::kIeee, true, true},
  {ElementType::kFloat16,         "float16",         "FLOAT16",        16, ValueKind::kFloat,   true,  -65504.0,              65504.0,              5, 10,  15, true,  true,  NanStyle::kIeee, true, true},
  {ElementType::kBfloat16,        "bfloat16",        "BFLOAT16",       16, ValueKind::kFloat,   true,  -detail::kBfloat16Max, detail::kBfloat16Max, 8,  7, 127, true,  true,  NanStyle::kIeee, false, true},
  {ElementType::kInt32,           "int32",           "INT32",          32, ValueKind::kInteger, true,  -2147483648.0,         2147483647.0,         0,  0,   0, false, false, NanStyle::kNone, false, false},
  {ElementType::kUint32,          "uint32",          "UINT32",         32, ValueKind::kInteger, false, 0.0,                   4294967295.0,         0,  0,   0, false, false, NanStyle::kNone, false, false},
  {ElementType::kInt16,           "int16",           "INT16",          16, ValueKind::kInteger, true,  -32768.0,              32767.0,              0,  0,   0, false, false, NanStyle::kNone, false, false},
  {ElementType::kUint16,          "uint16",          "UINT16",         16, ValueKind::kInteger, false, 0.0,                   65535.0,              0,  0,   0, false, false, NanStyle::kNone, false, false},
  {ElementType::kInt8,            "int8",            "INT8",            8, ValueKind::kInteger, true,  -128.0,                127.0,                0,  0,   0, false, false, NanStyle::kNone, false, false},
  {ElementType::kUint8,           "uint8",           "UINT8",           8, ValueKind::kInteger, false, 0.0,                   255.0,                0,  0,   0, false, false, NanStyle::kNone, false, false},
  {ElementType::kInt4,            "int4",            "INT4",            4, ValueKind::kInteger, true,  -8.0,                  7.0,                  0,  0,   0, false, false, NanStyle::kNone, false, false},
  {ElementType::kUint4,           "uint4",           "UINT4",           4, ValueKind::kInteger, false, 0.0,                   15.0,                 0,  0,   0, false, false, NanStyle::kNone, false, false},
  {ElementType::kInt2,            "int2",            "INT2",            2, ValueKind::kInteger, true,  -2.0,                  1.0,                  0,  0,   0, false, false, NanStyle::kNone, false, false},
  {ElementType::kUint2,           "uint2",           "UINT2",           2, ValueKind::kInteger, false, 0.0,                   3.0,                  0,  0,   0, false, false, NanStyle::kNone, false, false},
  {ElementType::kFloat8E4M3FN,    "float8_e4m3fn",   "FLOAT8E4M3FN",    8, ValueKind::kFloat,   true,  -448.0,                448.0,                4,  3,   7, false, true,  NanStyle::kAllOnes, false, false},
  {ElementType::kFloat8E4M3FNUZ,  "float8_e4m3fnuz", "FLOAT8E4M3FNUZ",  8, ValueKind::kFloat,   true,  -240.0,                240.0,                4,  3,   8, false, false, NanStyle::kNegativeZero, false, false},
  {ElementType::kFloat8E5M2,      "float8_e5m2",     "FLOAT8E5M2",      8, ValueKind::kFloat,   true,  -57344.0,              57344.0,              5,  2,  15, true,  true,  NanStyle::kIeee, false, false},
  {ElementType::kFloat8E5M2FNUZ,  "float8_e5m2fnuz", "FLOAT8E5M2FNUZ",  8, ValueKind::kFloat,   true,  -57344.0,              57344.0,              5,  2,  16, false, false, NanStyle::kNegativeZero, false, false},
  {ElementType::kFloat4E2M1,      "float4_e2m1fn",   "FLOAT4E2M1",      4, ValueKind::kFloat,   true,  -6.0,                  6.0,                  2,  1,   1, false, true,  NanStyle::kNone, false, false},
  {ElementType::kFloat6E2M3,      "float6_e2m3fn",   "FLOAT6E2M3",      6, ValueKind::kFloat,   true,  -7.5,                  7.5,                  2,  3,   1, false, true,  NanStyle::kNone, false, false},
  {ElementType::kFloat6E3M2,      "float6_e3m2fn",   "FLOAT6E3M2",      6, ValueKind::kFloat,   true,  -28.0,                 28.0,                 3,  2,   3, false, true,  NanStyle::kNone, false, false},
  {ElementType::kFloat8E8M0,      "float8_e8m0fnu",  "FLOAT8E8M0",      8, ValueKind::kFloat,   false, detail::kE8M0Min,      detail::kE8M0Max,     8,  0, 127, false, false, NanStyle::kExponentOnly, false, false},
};
// clang-format on

inline constexpr std::span<const ElementTypeInfo> all_element_types() { return kElementTypes; }

// The row of a type; nullptr for kUndefined or a value that is not in the table.
constexpr const ElementTypeInfo* find_element_type_info(ElementType type) {
  for (const ElementTypeInfo& info : kElementTypes) {
    if (info.type == type) return &info;
  }
  return nullptr;
}

// The row of a type known to be valid (validated at the API boundary).
constexpr const ElementTypeInfo& info(ElementType type) { return *find_element_type_info(type); }

// A TensorProto code, if qdq knows it.
constexpr std::optional<ElementType> element_type_from_code(int64_t code) {
  for (const ElementTypeInfo& info : kElementTypes) {
    if (static_cast<int64_t>(info.type) == code) return info.type;
  }
  return std::nullopt;
}

// Accepts the ml_dtypes name ("float8_e4m3fn"), the ONNX name ("FLOAT8E4M3FN", any case) and the
// short aliases "float", "half", "bf16".
QDQ_API std::optional<ElementType> element_type_from_name(std::string_view name);

// "float8_e4m3fn"; "code 99" style text is produced by callers for unknown values.
constexpr std::string_view name(ElementType type) {
  const ElementTypeInfo* row = find_element_type_info(type);
  return row ? row->name : std::string_view("undefined");
}

// How a tensor of a 4- or 2-bit type lies in memory; every other type has one layout and ignores
// it. The kernels read and write both directly, so a binding passes its buffer as it is.
enum class SubByteLayout : uint8_t {
  kPacked,          // ONNX, ONNX Runtime: 8 / bits codes per byte, element 0 in the lowest bits
  kOneCodePerByte,  // numpy / ml_dtypes, .npy files: each code in the low bits of its own byte
                    // (read: the high bits are ignored; written: they are zero, as ml_dtypes does)
};

// Bytes needed to store `count` elements, rounding packed types up to whole bytes.
constexpr uint64_t storage_bytes(ElementType type, uint64_t count,
                                 SubByteLayout layout = SubByteLayout::kPacked) {
  const ElementTypeInfo& row = info(type);
  if (row.is_packed() && layout == SubByteLayout::kOneCodePerByte) return count;
  if (row.is_packed()) {
    const uint64_t per_byte = static_cast<uint64_t>(row.elements_per_byte());
    return count / per_byte + (count % per_byte != 0 ? 1 : 0);
  }
  return count * static_cast<uint64_t>(row.bytes_per_element());
}

}  // namespace qdq
