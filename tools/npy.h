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

  ByteBuffer(ByteBuffer&& other) noexcept = default;
  ByteBuffer& operator=(ByteBuffer&& other) noexcept = default;
  ByteBuffer(const ByteBuffer& other);
  ByteBuffer& operator=(const ByteBuffer& other);

  unsigned char* data() { return bytes_.get(); }
  const unsigned char* data() const { return bytes_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  unsigned char& operator[](size_t i) { return bytes_[i]; }
  unsigned char operator[](size_t i) const { return bytes_[i]; }

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

struct NpyArray {
  // The descriptor with its byte-order character normalised: '|' for one-byte items, '<' otherwise
  // ("<f4", "|u1", "|V1", "<V2"). Big-endian and structured descriptors are rejected on reading.
  std::string descr;
  std::vector<int64_t> shape;  // empty = 0-D (one element)
  size_t item_size = 0;
  ByteBuffer data;  // count() * item_size bytes, C order

  uint64_t count() const;
};

// Reads `path`: its preamble and header, then its element bytes in one read into their own buffer
// (a pipe or other stream is read in pieces). Every failure (missing file, bad magic, unparsable
// header, Fortran order, a big-endian or object dtype, a truncated body or bytes past it) is a
// Status with one line naming the file.
Result<NpyArray> read_npy(const std::string& path);

// Writes a C-order little-endian array; `descr` as in NpyArray ("<f4", "|u1", "<u2", ...).
// Uses format version 1.0, or 2.0 when the header does not fit in 65535 bytes.
Status write_npy(const std::string& path, const std::string& descr, const std::vector<int64_t>& shape,
                 const void* data, uint64_t bytes);

// "[2, 3]" (or "[]" for 0-D), for messages.
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace qdq::tools
