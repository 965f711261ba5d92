// .npy reading and writing; see npy.h for the format.
#include "npy.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <new>
#include <optional>
#include <string_view>

namespace qdq::tools {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// numpy pads the preamble (magic, version, length, header) to a multiple of 64 so that the data
// that follows can be memory-mapped with any element alignment; we do the same when writing.
constexpr size_t kAlignment = 64;
// Linux moves at most 0x7ffff000 bytes per read() or write(); larger tensors take several calls.
constexpr size_t kMaxIo = size_t{1} << 30;
constexpr size_t kHugePage = size_t{2} << 20;

Status file_error(const std::string& path, const std::string& what) {
  return Status::invalid_argument("'" + path + "': " + what);
}

// Reads until `size` bytes have arrived or the file ends, through short reads and EINTR. Returns
// the count read, or -1 with errno set.
ssize_t read_fully(int fd, unsigned char* into, size_t size) {
  size_t done = 0;
  while (done < size) {
    const ssize_t got = ::read(fd, into + done, std::min<size_t>(size - done, kMaxIo));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return -1;
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return static_cast<ssize_t>(done);
}

bool write_fully(int fd, const unsigned char* from, size_t size) {
  while (size > 0) {
    const ssize_t put = ::write(fd, from, std::min<size_t>(size, kMaxIo));
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) return false;
    if (put == 0) {  // not seen from a regular file; a failure rather than a loop that never ends
      errno = EIO;
      return false;
    }
    from += put;
    size -= static_cast<size_t>(put);
  }
  return true;
}

// An open file descriptor, closed when it goes out of scope.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Closes now and reports close()'s result: a write's failure (a full disk, NFS) may show only here.
  int close() {
    const int result = ::close(fd_);
    fd_ = -1;
    return result;
  }

 private:
  int fd_;
};

// The input being read: where it is and, for a regular file, how many bytes are left in it.
struct Source {
  const std::string& path;
  int fd;
  std::optional<uint64_t> left;  // unknown for a pipe or a device
};

// Reads up to `limit` bytes. From a regular file that is one buffer of the size the file has left
// and one read; from a stream the buffer grows as bytes arrive, so a header that promises more than
// the stream holds cannot make the tool allocate what it promises.
Result<ByteBuffer> read_up_to(Source& source, uint64_t limit) {
  constexpr uint64_t kStreamChunk = uint64_t{1} << 20;
  const uint64_t first = source.left ? std::min(limit, *source.left) : std::min(limit, kStreamChunk);
  ByteBuffer buffer(static_cast<size_t>(first));
  uint64_t have = 0;
  while (true) {
    const ssize_t got = read_fully(source.fd, buffer.data() + have, buffer.size() - have);
    if (got < 0) return file_error(source.path, std::string("cannot read: ") + std::strerror(errno));
    have += static_cast<uint64_t>(got);
    if (have < buffer.size() || have == limit) break;  // the end of the file, or all that was asked
    ByteBuffer larger(static_cast<size_t>(std::min(limit, 2 * have)));
    std::memcpy(larger.data(), buffer.data(), have);
    buffer = std::move(larger);
  }
  if (source.left) *source.left -= std::min(*source.left, have);
  buffer.shrink(static_cast<size_t>(have));
  return buffer;
}

// Counts (and drops) whatever is left of a stream, for the message about bytes past the data.
Result<uint64_t> count_rest(Source& source) {
  if (source.left) return *source.left;
  unsigned char scratch[1 << 16];
  uint64_t rest = 0;
  while (true) {
    const ssize_t got = read_fully(source.fd, scratch, sizeof scratch);
    if (got < 0) return file_error(source.path, std::string("cannot read: ") + std::strerror(errno));
    rest += static_cast<uint64_t>(got);
    if (static_cast<size_t>(got) < sizeof scratch) return rest;
  }
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

ByteBuffer::ByteBuffer(size_t size) : size_(size) {
  const size_t alignment = size >= kHugePage ? kHugePage : kAlignment;
  // Whole huge pages, so that the advice below covers every page of the buffer; at least one byte,
  // so that an empty tensor still has a non-null data pointer.
  const size_t rounded = (std::max<size_t>(size, 1) + alignment - 1) / alignment * alignment;
  bytes_ = {static_cast<unsigned char*>(::operator new[](rounded, std::align_val_t{alignment})), Free{alignment}};
#if defined(MADV_HUGEPAGE)
  if (alignment == kHugePage) ::madvise(bytes_.get(), rounded, MADV_HUGEPAGE);  // advice: failure is harmless
#endif
}

ByteBuffer ByteBuffer::zeros(size_t size) {
  ByteBuffer buffer(size);
  std::memset(buffer.data(), 0, std::max<size_t>(size, 1));
  return buffer;
}

ByteBuffer::ByteBuffer(const ByteBuffer& other) : ByteBuffer(other.size_) {
  if (size_ > 0) std::memcpy(bytes_.get(), other.bytes_.get(), size_);
}

ByteBuffer& ByteBuffer::operator=(const ByteBuffer& other) {
  if (this != &other) *this = ByteBuffer(other);
  return *this;
}

void ByteBuffer::Free::operator()(unsigned char* pointer) const {
  ::operator delete[](pointer, std::align_val_t{alignment});
}

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
  errno = 0;
  FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.get() < 0) return file_error(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat status {};
  if (::fstat(file.get(), &status) != 0) return file_error(path, std::string("cannot read: ") + std::strerror(errno));
  // A directory opens on Linux but cannot be read; say so instead of "not a .npy file".
  if (S_ISDIR(status.st_mode)) return file_error(path, std::string("cannot read: ") + std::strerror(EISDIR));
  Source source{path, file.get(), std::nullopt};
  if (S_ISREG(status.st_mode)) source.left = static_cast<uint64_t>(status.st_size);

  // Magic (6 bytes), version (2), header length (2 in version 1.0, 4 in 2.0 and 3.0).
  unsigned char preamble[12];
  const ssize_t got = read_fully(source.fd, preamble, 10);
  if (got < 0) return file_error(path, std::string("cannot read: ") + std::strerror(errno));
  if (got < 10 || std::memcmp(preamble, kMagic, kMagicSize) != 0) {
    return file_error(path, "not a .npy file (no \\x93NUMPY magic)");
  }
  if (source.left) *source.left -= 10;
  const int major = preamble[6], minor = preamble[7];
  size_t header_length = 0, header_start = 10;
  if (major == 1) {
    header_length = preamble[8] | (static_cast<size_t>(preamble[9]) << 8);
  } else if (major == 2 || major == 3) {  // 3.0 differs from 2.0 only in allowing UTF-8 names
    if (read_fully(source.fd, preamble + 10, 2) != 2) {
      return file_error(path, "malformed .npy file: truncated header length");
    }
    if (source.left) *source.left -= std::min<uint64_t>(*source.left, 2);
    header_length = preamble[8] | (static_cast<size_t>(preamble[9]) << 8) | (static_cast<size_t>(preamble[10]) << 16) |
                    (static_cast<size_t>(preamble[11]) << 24);
    header_start = 12;
  } else {
    return file_error(path, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor));
  }
  const Status past_the_end = file_error(path, "malformed .npy file: header length " + std::to_string(header_length) +
                                                   " runs past the end of the file");
  if (source.left && header_length > *source.left) return past_the_end;
  Result<ByteBuffer> header_bytes = read_up_to(source, header_length);
  if (!header_bytes.ok()) return header_bytes.status();
  if (header_bytes.value().size() < header_length) return past_the_end;
  const std::string_view header(reinterpret_cast<const char*>(header_bytes.value().data()), header_length);

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
  const auto wrong_size = [&](uint64_t available) {
    return file_error(path, "malformed .npy file: shape " + shape_text(array.shape) + " of " + array.descr +
                                " needs " + std::to_string(expected) + " data bytes, the file has " +
                                std::to_string(available));
  };
  // A regular file's size is known: a body of the wrong size is refused before anything is allocated.
  if (source.left && *source.left != expected) return wrong_size(*source.left);
  Result<ByteBuffer> data = read_up_to(source, expected);
  if (!data.ok()) return data.status();
  if (data.value().size() < expected) return wrong_size(data.value().size());
  Result<uint64_t> rest = count_rest(source);
  if (!rest.ok()) return rest.status();
  if (rest.value() != 0) return wrong_size(expected + rest.value());
  array.data = std::move(data.value());
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
  prefix += header;

  errno = 0;
  FileDescriptor file(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
  if (file.get() < 0) return file_error(path, std::string("cannot create: ") + std::strerror(errno));
  // The file's blocks are reserved before the write, as np.save does: on ext4 a 64 MiB write into
  // delayed allocation made the close() of a truncated file start its writeback (auto_da_alloc),
  // 15-25 ms, and the next truncation slower too; reserved, the write is the copy alone. A full disk
  // is also refused here, before any data. Where the file system (or the file: a pipe, /dev/null)
  // cannot reserve, the write goes ahead as it is.
#if defined(__linux__)
  if (::fallocate(file.get(), FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(prefix.size() + bytes)) != 0 &&
      errno == ENOSPC) {
    return file_error(path, std::string("cannot write: ") + std::strerror(ENOSPC));
  }
#endif
  // The element bytes go from the kernel's output buffer to the file in one write, as they are.
  bool ok = write_fully(file.get(), reinterpret_cast<const unsigned char*>(prefix.data()), prefix.size()) &&
            write_fully(file.get(), static_cast<const unsigned char*>(data), bytes);
  int write_errno = errno;
  if (file.close() != 0 && ok) {
    ok = false;
    write_errno = errno;
  }
  if (!ok) return file_error(path, std::string("cannot write: ") + std::strerror(write_errno));
  return Status();
}

}  // namespace qdq::tools
