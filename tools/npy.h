// .npy file reading and writing for the qdq command-line tool.
//
// The format (numpy/lib/format.py): "\x93NUMPY", a version byte pair, a little-endian header length
// (2 bytes in version 1.0, 4 bytes in 2.0 and 3.0), then a Python dict literal
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces to a 64-byte boundary and ended by '\n', then the raw element bytes.
//
// This layer knows bytes and numpy descriptors only; which qdq element type a descriptor means
// (and how ml_dtypes' '<V1' codes are told apart) is decided in commands.cpp, where the user's
// --type flags are known.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "qdq/status.h"

namespace qdq::tools {

// An owned, uninitialised byte buffer, 64-byte aligned; from 2 MiB up aligned to 2 MiB and offered
// to the OS as transparent huge pages. A file's element bytes are read straight into one and a
// kernel writes its output straight into one, so the CLI's tensors are neither zero-filled nor
// copied between buffers: a fresh 64 MiB buffer costs 32 page faults instead of 16,384, and
// the tool moves each byte of a tensor once between the file and the kernel (docs/performance.md,
// "The command-line door").
class ByteBuffer {
 public:
  ByteBuffer() = default;
  explicit ByteBuffer(size_t size);  // contents indeterminate until written
  static ByteBuffer zeros(size_t size);

  ByteBuffer(ByteBuffer&& other) noexcept : bytes_(std::move(other.bytes_)), size_(other.size_) { other.size_ = 0; }
  ByteBuffer& operator=(ByteBuffer&& other) noexcept {
    if (this != &other) {
      bytes_ = std::move(other.bytes_);
      size_ = other.size_;
      other.size_ = 0;
    }
    return *this;
  }
  ByteBuffer(const ByteBuffer& other);
  ByteBuffer& operator=(const ByteBuffer& other);

  unsigned char* data() { return bytes_.get(); }
  const unsigned char* data() const { return bytes_.get(); }
  size_t size() const { return size_; }
  unsigned char& operator[](size_t i) { return bytes_[i]; }

  // Keeps the first `size` bytes (size <= size()); the storage is not reallocated.
  void shrink(size_t size) { size_ = size < size_ ? size : size_; }

 private:
  struct Free {
    size_t alignment;
    void operator()(unsigned char* pointer) const;
  };
  std::unique_ptr<unsigned char[], Free> bytes_{nullptr, Free{64}};
  size_t size_ = 0;
};

// An open file descriptor, closed when it goes out of scope.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd = -1) : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor();
  int get() const { return fd_; }
  // Closes now and returns close()'s result: a write's failure (a full disk, NFS) may show only here.
  int close();

 private:
  int fd_;
};

// An open .npy file whose preamble and header have been read and checked; its body (the element
// bytes) is read next, whole or in pieces. Every failure (missing file, bad magic, unparsable
// header, Fortran order, a big-endian or object dtype, a body of the wrong size) is a Status with
// one line naming the file.
class NpyReader {
 public:
  static Result<NpyReader> open(const std::string& path);

  // The descriptor with its byte-order character normalised: '|' for one-byte items, '<'
  // otherwise ("<f4", "|u1", "|V1", "<V2"); big-endian and structured descriptors are refused.
  const std::string& descr() const { return descr_; }
  const std::vector<int64_t>& shape() const { return shape_; }  // empty = 0-D (one element)
  // A regular file, whose size showed its body to have exactly body_bytes() bytes before any was
  // read (a pipe's length is known only at its end).
  bool sized() const { return left_.has_value(); }

  // The next `bytes` bytes of the body; an error if the file ends first.
  Status read_next(unsigned char* into, uint64_t bytes);
  // The rest of the body in one buffer of its own, and the end of the file after it.
  Result<ByteBuffer> read_rest();
  // After the body has been read in pieces: an error if bytes follow it.
  Status expect_end();

 private:
  NpyReader(std::string path, FileDescriptor fd) : path_(std::move(path)), fd_(std::move(fd)) {}
  // "needs N data bytes, the file has M" (or "more than M", for a stream counted no further).
  Status wrong_body_size(uint64_t available, bool more_than = false) const;

  std::string path_;
  FileDescriptor fd_;
  std::optional<uint64_t> left_;  // bytes left in a regular file
  std::string descr_;
  std::vector<int64_t> shape_;
  uint64_t body_bytes_ = 0;
  uint64_t body_read_ = 0;
};

// A .npy file being written: its header when created, then its body in pieces. Until finish()
// succeeds the file is not a whole array, so an unfinished regular file is emptied and, where the
// path names it (not through a symbolic link), removed when the writer goes away: an output that
// failed halfway must not be taken for a result.
class NpyWriter {
 public:
  // descr as NpyReader::descr gives it ("<f4", "|u1", "<u2", ...); format version 1.0, or 2.0 when the header
  // does not fit in 65535 bytes. The file's blocks for the whole array are reserved here.
  static Result<NpyWriter> create(const std::string& path, const std::string& descr,
                                  const std::vector<int64_t>& shape, uint64_t body_bytes);
  NpyWriter(NpyWriter&& other) noexcept;
  NpyWriter& operator=(NpyWriter&&) = delete;
  ~NpyWriter();

  Status write_next(const void* data, uint64_t bytes);
  Status finish();

 private:
  NpyWriter(std::string path, FileDescriptor fd, bool regular, bool removable)
      : path_(std::move(path)), fd_(std::move(fd)), regular_(regular), removable_(removable) {}
  std::string path_;
  FileDescriptor fd_;
  bool regular_ = false;    // a regular file (emptied if unfinished)
  bool removable_ = false;  // named by path_ itself (removed if unfinished)
  bool finished_ = false;
};

// Writes a C-order little-endian array whole (NpyWriter::create, write_next, finish).
Status write_npy(const std::string& path, const std::string& descr, const std::vector<int64_t>& shape,
                 const void* data, uint64_t bytes);

// "[2, 3]" (or "[]" for 0-D), for messages.
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace qdq::tools
