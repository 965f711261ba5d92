// y[i] = table[x[i]]: the lookup stage of per-tensor plans run by table (execute/by_table.cpp),
// one Highway source for every target like the Q/DQ kernels.
#pragma once

#include <cstdint>

namespace qdq::kernels {

// Extra table bytes look_up_codes may read past the last entry: gathers read whole 32-bit words.
inline constexpr unsigned kLookUpTablePadding = 4;

// y[i] = table[x[i]] for i in [begin, end). x holds codes of `x_bytes` (1 or 2, little-endian
// unsigned), table and y results of `y_bytes` (1, 2 or 4). The table holds 2^(8 * x_bytes) entries
// followed by kLookUpTablePadding readable bytes, and is 4-byte aligned.
void look_up_codes(const void* x, unsigned x_bytes, const void* table, unsigned y_bytes, void* y, uint64_t begin,
                   uint64_t end);

}  // namespace qdq::kernels
