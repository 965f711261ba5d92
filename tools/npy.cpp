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

// Validates a descriptor and returns it normalised (see NpyReader::descr) with its item size.
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

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

int FileDescriptor::close() {
  const int result = ::close(fd_);
  fd_ = -1;
  return result;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

namespace {

// Reads up to `limit` bytes. From a regular file (`left` known) that is one buffer of the size the
// file has left and one read; from a stream the buffer grows as bytes arrive, so a header that
// promises more than the stream holds cannot make the tool allocate what it promises.
Result<ByteBuffer> read_up_to(const std::string& path, int fd, std::optional<uint64_t>& left, uint64_t limit) {
  constexpr uint64_t kStreamPiece = uint64_t{1} << 20;
  const uint64_t first = left ? std::min(limit, *left) : std::min(limit, kStreamPiece);
  ByteBuffer buffer(static_cast<size_t>(first));
  uint64_t have = 0;
  while (true) {
    const ssize_t got = read_fully(fd, buffer.data() + have, buffer.size() - have);
    if (got < 0) return file_error(path, std::string("cannot read: ") + std::strerror(errno));
    have += static_cast<uint64_t>(got);
    if (have < buffer.size() || have == limit) break;  // the end of the file, or all that was asked
    ByteBuffer larger(static_cast<size_t>(std::min(limit, 2 * have)));
    std::memcpy(larger.data(), buffer.data(), have);
    buffer = std::move(larger);
  }
  if (left) *left -= std::min(*left, have);
  buffer.shrink(static_cast<size_t>(have));
  return buffer;
}

}  // namespace

Result<NpyReader> NpyReader::open(const std::string& path) {
  errno = 0;
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return file_error(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat status {};
  if (::fstat(fd.get(), &status) != 0) return file_error(path, std::string("cannot read: ") + std::strerror(errno));
  // A directory opens on Linux but cannot be read; say so instead of "not a .npy file".
  if (S_ISDIR(status.st_mode)) return file_error(path, std::string("cannot read: ") + std::strerror(EISDIR));
  NpyReader reader(path, std::move(fd));
  std::optional<uint64_t>& left = reader.left_;
  if (S_ISREG(status.st_mode)) left = static_cast<uint64_t>(status.st_size);
  const int file = reader.fd_.get();

  // Magic (6 bytes), version (2), header length (2 in version 1.0, 4 in 2.0 and 3.0).
  unsigned char preamble[12];
  const ssize_t got = read_fully(file, preamble, 10);
  if (got < 0) return file_error(path, std::string("cannot read: ") + std::strerror(errno));
  if (got < 10 || std::memcmp(preamble, kMagic, kMagicSize) != 0) {
    return file_error(path, "not a .npy file (no \\x93NUMPY magic)");
  }
  if (left) *left -= std::min<uint64_t>(*left, 10);  // a size that procfs reports as 0 must not wrap
  const int major = preamble[6], minor = preamble[7];
  size_t header_length = 0;
  if (major == 1) {
    header_length = preamble[8] | (static_cast<size_t>(preamble[9]) << 8);
  } else if (major == 2 || major == 3) {  // 3.0 differs from 2.0 only in allowing UTF-8 names
    const ssize_t length_bytes = read_fully(file, preamble + 10, 2);
    if (length_bytes < 0) return file_error(path, std::string("cannot read: ") + std::strerror(errno));
    if (length_bytes != 2) return file_error(path, "malformed .npy file: truncated header length");
    if (left) *left -= std::min<uint64_t>(*left, 2);
    header_length = preamble[8] | (static_cast<size_t>(preamble[9]) << 8) | (static_cast<size_t>(preamble[10]) << 16) |
                    (static_cast<size_t>(preamble[11]) << 24);
  } else {
    return file_error(path, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor));
  }
  const Status past_the_end = file_error(path, "malformed .npy file: header length " + std::to_string(header_length) +
                                                   " runs past the end of the file");
  if (left && header_length > *left) return past_the_end;
  Result<ByteBuffer> header_bytes = read_up_to(path, file, left, header_length);
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
  reader.descr_ = dtype.value().first;
  reader.shape_ = *shape;
  // Overflow-checked byte count: a corrupt header must not turn into a huge allocation or a wrap.
  uint64_t expected = dtype.value().second;  // the item size
  for (int64_t d : reader.shape_) {
    if (__builtin_mul_overflow(expected, static_cast<uint64_t>(d), &expected)) {
      return file_error(path, "malformed .npy header: shape " + shape_text(reader.shape_) + " is too large");
    }
  }
  reader.body_bytes_ = expected;
  // A regular file's size is known: a body of the wrong size is refused before any of it is read.
  if (left && *left != expected) return reader.wrong_body_size(*left);
  return reader;
}

Status NpyReader::wrong_body_size(uint64_t available, bool more_than) const {
  return file_error(path_, "malformed .npy file: shape " + shape_text(shape_) + " of " + descr_ + " needs " +
                               std::to_string(body_bytes_) + " data bytes, the file has " +
                               (more_than ? "more than " : "") + std::to_string(available));
}

Status NpyReader::read_next(unsigned char* into, uint64_t bytes) {
  const uint64_t wanted = std::min(bytes, body_bytes_ - body_read_);
  const ssize_t got = read_fully(fd_.get(), into, static_cast<size_t>(wanted));
  if (got < 0) return file_error(path_, std::string("cannot read: ") + std::strerror(errno));
  body_read_ += static_cast<uint64_t>(got);
  if (left_) *left_ -= std::min<uint64_t>(*left_, static_cast<uint64_t>(got));
  // Fewer bytes than the body needs: a stream that ended early, or a file cut short while read.
  if (static_cast<uint64_t>(got) < bytes) return wrong_body_size(body_read_);
  return Status();
}

Status NpyReader::expect_end() {
  if (left_) return *left_ == 0 ? Status() : wrong_body_size(body_read_ + *left_);
  // A stream: count (and drop) what follows, for the message, up to 1 MiB (a stream that never
  // ends, x followed by /dev/zero, must not keep the command reading).
  constexpr uint64_t kCountedAtMost = uint64_t{1} << 20;
  unsigned char scratch[1 << 16];
  uint64_t rest = 0;
  while (rest < kCountedAtMost) {
    const ssize_t got = read_fully(fd_.get(), scratch, sizeof scratch);
    if (got < 0) return file_error(path_, std::string("cannot read: ") + std::strerror(errno));
    rest += static_cast<uint64_t>(got);
    if (static_cast<size_t>(got) < sizeof scratch) break;
  }
  if (rest == 0) return Status();
  if (rest < kCountedAtMost) return wrong_body_size(body_read_ + rest);
  return wrong_body_size(body_read_ + rest - 1, true);
}

Result<ByteBuffer> NpyReader::read_rest() {
  Result<ByteBuffer> data = read_up_to(path_, fd_.get(), left_, body_bytes_ - body_read_);
  if (!data.ok()) return data.status();
  body_read_ += data.value().size();
  if (body_read_ < body_bytes_) return wrong_body_size(body_read_);
  if (Status end = expect_end(); !end.ok()) return end;
  return std::move(data.value());
}

Result<NpyWriter> NpyWriter::create(const std::string& path, const std::string& descr,
                                    const std::vector<int64_t>& shape, uint64_t body_bytes) {
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
  FileDescriptor fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
  if (fd.get() < 0) return file_error(path, std::string("cannot create: ") + std::strerror(errno));
  struct stat status {}, named {};
  const bool regular = ::fstat(fd.get(), &status) == 0 && S_ISREG(status.st_mode);
  // Whether the path itself names the file written, so that removing the path removes it: not so
  // through a symbolic link (/dev/stdout redirected to a file, a link the user made).
  const bool removable = regular && ::lstat(path.c_str(), &named) == 0 && S_ISREG(named.st_mode) &&
                         named.st_dev == status.st_dev && named.st_ino == status.st_ino;
  NpyWriter writer(path, std::move(fd), regular, removable);
  // The file's blocks are reserved before the write, as np.save does: on ext4 a 64 MiB write into
  // delayed allocation made the close() of a truncated file start its writeback (auto_da_alloc),
  // 15-25 ms, and the next truncation slower too; reserved, the write is the copy alone. A full disk
  // is also refused here, before any data. Where the file system (or the file: a pipe, /dev/null)
  // cannot reserve, the write goes ahead as it is.
#if defined(__linux__)
  if (regular && ::fallocate(writer.fd_.get(), FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(prefix.size() + body_bytes)) != 0 &&
      (errno == ENOSPC || errno == EDQUOT)) {
    return file_error(path, std::string("cannot write: ") + std::strerror(errno));
  }
#endif
  if (Status status_of_header = writer.write_next(prefix.data(), prefix.size()); !status_of_header.ok()) {
    return status_of_header;
  }
  return writer;
}

NpyWriter::NpyWriter(NpyWriter&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::move(other.fd_)),
      regular_(other.regular_),
      removable_(other.removable_),
      finished_(other.finished_) {
  other.finished_ = true;  // the moved-from writer owns no file
}

// An unfinished output: a regular file is emptied first, so that no name of it (another hard
// link, the file behind a symbolic link) keeps a partial array, then removed where the path names it.
NpyWriter::~NpyWriter() {
  if (finished_) return;
  if (regular_) static_cast<void>(::ftruncate(fd_.get(), 0));  // best effort: the command has failed already
  fd_.close();
  if (removable_) ::unlink(path_.c_str());
}

Status NpyWriter::write_next(const void* data, uint64_t bytes) {
  if (!write_fully(fd_.get(), static_cast<const unsigned char*>(data), bytes)) {
    return file_error(path_, std::string("cannot write: ") + std::strerror(errno));
  }
  return Status();
}

Status NpyWriter::finish() {
  finished_ = true;
  if (fd_.close() != 0) {
    const int close_errno = errno;
    if (removable_) ::unlink(path_.c_str());
    return file_error(path_, std::string("cannot write: ") + std::strerror(close_errno));
  }
  return Status();
}

Status write_npy(const std::string& path, const std::string& descr, const std::vector<int64_t>& shape,
                 const void* data, uint64_t bytes) {
  Result<NpyWriter> writer = NpyWriter::create(path, descr, shape, bytes);
  if (!writer.ok()) return writer.status();
  if (Status status = writer.value().write_next(data, bytes); !status.ok()) return status;
  return writer.value().finish();
}

}  // namespace qdq::tools
