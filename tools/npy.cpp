// .npy reading and writing; see npy.h for the format.
#include "npy.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string_view>

namespace qdq::tools {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// numpy pads the preamble (magic, version, length, header) to a multiple of 64 so that the data
// that follows can be memory-mapped with any element alignment; we do the same when writing.
constexpr size_t kAlignment = 64;

Status file_error(const std::string& path, const std::string& what) {
  return Status::invalid_argument("'" + path + "': " + what);
}

// Reads a whole file. Input tensors are read once and used whole, so there is nothing to gain
// from streaming, and having the size up front lets the header be checked against it.
Result<std::vector<unsigned char>> read_file(const std::string& path) {
  errno = 0;
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return file_error(path, std::string("cannot open: ") + std::strerror(errno));
  std::vector<unsigned char> bytes;
  unsigned char buffer[1 << 16];
  size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, file)) > 0) bytes.insert(bytes.end(), buffer, buffer + got);
  // A directory opens on Linux but fails to read (EISDIR); report it instead of "too short".
  const bool failed = std::ferror(file) != 0;
  const int read_errno = errno;
  std::fclose(file);
  if (failed) return file_error(path, std::string("cannot read: ") + std::strerror(read_errno));
  return bytes;
}

// A cursor over the header's dict literal. numpy writes it with repr(), so it is a small subset
// of Python: string literals, True/False, and tuples of non-negative integers.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool consume(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool peek(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  std::optional<std::string> string_literal() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) return std::nullopt;
    const char quote = text_[pos_++];
    std::string value;
    while (pos_ < text_.size() && text_[pos_] != quote) value += text_[pos_++];
    if (pos_ >= text_.size()) return std::nullopt;
    ++pos_;
    return value;
  }
  std::optional<bool> boolean() {
    skip_space();
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    return std::nullopt;
  }
  // "(2, 3)", "(5,)" or "()".
  std::optional<std::vector<int64_t>> shape_tuple() {
    if (!consume('(')) return std::nullopt;
    std::vector<int64_t> shape;
    while (!consume(')')) {
      skip_space();
      const size_t start = pos_;
      int64_t value = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        if (value > (INT64_MAX - 9) / 10) return std::nullopt;  // no real dimension is this big
        value = value * 10 + (text_[pos_++] - '0');
      }
      if (pos_ == start) return std::nullopt;
      if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;  // Python 2 long suffix in old files
      shape.push_back(value);
      if (!consume(',') && !peek(')')) return std::nullopt;
    }
    return shape;
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

// Validates a descriptor and returns it normalised (see NpyArray::descr) with its item size.
Result<std::pair<std::string, size_t>> normalise_descr(const std::string& path, const std::string& descr) {
  size_t i = 0;
  char order = '|';
  if (i < descr.size() && std::strchr("<>|=", descr[i]) != nullptr) order = descr[i++];
  if (i >= descr.size()) return file_error(path, "malformed .npy header: empty dtype '" + descr + "'");
  const char kind = descr[i++];
  if (kind == 'O') {
    return file_error(path, "object arrays (dtype 'O') are not supported; save a numeric array");
  }
  if (std::strchr("biufcV", kind) == nullptr) {
    return file_error(path, "dtype '" + descr + "' is not supported (strings, dates and objects cannot be quantized)");
  }
  size_t size = 0;
  const size_t digits_start = i;
  while (i < descr.size() && std::isdigit(static_cast<unsigned char>(descr[i])) && size < 1000000) {
    size = size * 10 + static_cast<size_t>(descr[i++] - '0');
  }
  if (i != descr.size() || i == digits_start || size == 0) {
    return file_error(path, "malformed .npy header: cannot read dtype '" + descr + "'");
  }
  if (order == '>' && size > 1) {
    return file_error(path, "big-endian dtype '" + descr +
                                "' is not supported; save x.astype(x.dtype.newbyteorder('<')) instead");
  }
  // '=' is native order, and qdq runs on little-endian hosts only.
  std::string normalised = std::string(1, size == 1 ? '|' : '<') + kind + std::to_string(size);
  return std::make_pair(normalised, size);
}

}  // namespace

uint64_t NpyArray::count() const {
  uint64_t count = 1;
  for (int64_t d : shape) count *= static_cast<uint64_t>(d);
  return count;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

Result<NpyArray> read_npy(const std::string& path) {
  Result<std::vector<unsigned char>> file = read_file(path);
  if (!file.ok()) return file.status();
  const std::vector<unsigned char>& bytes = file.value();
  if (bytes.size() < kMagicSize + 4 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0) {
    return file_error(path, "not a .npy file (no \\x93NUMPY magic)");
  }
  const int major = bytes[6], minor = bytes[7];
  size_t header_length = 0, header_start = 0;
  if (major == 1) {
    header_length = bytes[8] | (static_cast<size_t>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {  // 3.0 differs from 2.0 only in allowing UTF-8 names
    if (bytes.size() < 12) return file_error(path, "malformed .npy file: truncated header length");
    header_length = bytes[8] | (static_cast<size_t>(bytes[9]) << 8) | (static_cast<size_t>(bytes[10]) << 16) |
                    (static_cast<size_t>(bytes[11]) << 24);
    header_start = 12;
  } else {
    return file_error(path, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor));
  }
  if (header_length > bytes.size() - header_start) {
    return file_error(path, "malformed .npy file: header length " + std::to_string(header_length) +
                                " runs past the end of the file");
  }
  const std::string_view header(reinterpret_cast<const char*>(bytes.data() + header_start), header_length);

  HeaderParser parser(header);
  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<int64_t>> shape;
  const Status bad_header = file_error(path, "malformed .npy header: " + std::string(header.substr(0, 120)));
  if (!parser.consume('{')) return bad_header;
  while (!parser.consume('}')) {
    std::optional<std::string> key = parser.string_literal();
    if (!key || !parser.consume(':')) return bad_header;
    if (*key == "descr") {
      if (parser.peek('[')) {
        return file_error(path, "structured (record) dtypes are not supported; save a plain numeric array");
      }
      descr = parser.string_literal();
      if (!descr) return bad_header;
    } else if (*key == "fortran_order") {
      fortran_order = parser.boolean();
      if (!fortran_order) return bad_header;
    } else if (*key == "shape") {
      shape = parser.shape_tuple();
      if (!shape) return bad_header;
    } else {
      return file_error(path, "malformed .npy header: unexpected key '" + *key + "'");
    }
    if (!parser.consume(',') && !parser.peek('}')) return bad_header;
  }
  if (!descr || !fortran_order || !shape) {
    return file_error(path, "malformed .npy header: needs 'descr', 'fortran_order' and 'shape'");
  }
  if (*fortran_order) {
    return file_error(path, "Fortran-order arrays are not supported; save np.ascontiguousarray(x) instead");
  }
  Result<std::pair<std::string, size_t>> dtype = normalise_descr(path, *descr);
  if (!dtype.ok()) return dtype.status();

  NpyArray array;
  array.descr = dtype.value().first;
  array.item_size = dtype.value().second;
  array.shape = *shape;
  // Overflow-checked byte count: a corrupt header must not turn into a huge allocation or a wrap.
  uint64_t expected = array.item_size;
  for (int64_t d : array.shape) {
    if (__builtin_mul_overflow(expected, static_cast<uint64_t>(d), &expected)) {
      return file_error(path, "malformed .npy header: shape " + shape_text(array.shape) + " is too large");
    }
  }
  const size_t data_start = header_start + header_length;
  const uint64_t available = bytes.size() - data_start;
  if (available != expected) {
    return file_error(path, "malformed .npy file: shape " + shape_text(array.shape) + " of " + array.descr +
                                " needs " + std::to_string(expected) + " data bytes, the file has " +
                                std::to_string(available));
  }
  array.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_start), bytes.end());
  return array;
}

Status write_npy(const std::string& path, const std::string& descr, const std::vector<int64_t>& shape,
                 const void* data, uint64_t bytes) {
  std::string tuple = "(";
  for (size_t i = 0; i < shape.size(); ++i) tuple += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) tuple += ",";  // Python's one-element tuple
  tuple += ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + tuple + ", }";

  // Version 1.0 has a 2-byte header length; switch to 2.0 only when needed, as numpy does.
  const bool version2 = header.size() + 1 + kMagicSize + 4 > 65535;
  const size_t preamble = kMagicSize + 2 + (version2 ? 4 : 2);
  const size_t padded = ((preamble + header.size() + 1 + kAlignment - 1) / kAlignment) * kAlignment;
  header.append(padded - preamble - header.size() - 1, ' ');
  header += '\n';

  std::string prefix(kMagic, kMagicSize);
  prefix += static_cast<char>(version2 ? 2 : 1);
  prefix += '\0';
  const size_t length = header.size();
  prefix += static_cast<char>(length & 0xFF);
  prefix += static_cast<char>((length >> 8) & 0xFF);
  if (version2) {
    prefix += static_cast<char>((length >> 16) & 0xFF);
    prefix += static_cast<char>((length >> 24) & 0xFF);
  }

  errno = 0;
  FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return file_error(path, std::string("cannot create: ") + std::strerror(errno));
  bool ok = std::fwrite(prefix.data(), 1, prefix.size(), file) == prefix.size() &&
            std::fwrite(header.data(), 1, header.size(), file) == header.size() &&
            (bytes == 0 || std::fwrite(data, 1, bytes, file) == bytes);
  int write_errno = errno;
  // fclose flushes; a full disk often shows up only here.
  if (std::fclose(file) != 0 && ok) {
    ok = false;
    write_errno = errno;
  }
  if (!ok) return file_error(path, std::string("cannot write: ") + std::strerror(write_errno));
  return Status();
}

}  // namespace qdq::tools
