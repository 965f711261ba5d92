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

#include <cstdint>
#include <string>
#include <vector>

#include "qdq/status.h"

namespace qdq::tools {

struct NpyArray {
  // The descriptor with its byte-order character normalised: '|' for one-byte items, '<' otherwise
  // ("<f4", "|u1", "|V1", "<V2"). Big-endian and structured descriptors are rejected on reading.
  std::string descr;
  std::vector<int64_t> shape;  // empty = 0-D (one element)
  size_t item_size = 0;
  std::vector<unsigned char> data;  // count() * item_size bytes, C order

  uint64_t count() const;
};

// Reads `path`. Every failure (missing file, bad magic, unparsable header, Fortran order, a
// big-endian or object dtype, a truncated body) is a Status with one line naming the file.
Result<NpyArray> read_npy(const std::string& path);

// Writes a C-order little-endian array; `descr` as in NpyArray ("<f4", "|u1", "<u2", ...).
// Uses format version 1.0, or 2.0 when the header does not fit in 65535 bytes.
Status write_npy(const std::string& path, const std::string& descr, const std::vector<int64_t>& shape,
                 const void* data, uint64_t bytes);

// "[2, 3]" (or "[]" for 0-D), for messages.
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace qdq::tools
