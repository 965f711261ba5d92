// y[i] = table[x[i]]: the lookup stage of per-tensor plans run by table (execute/by_table.cpp),
// one Highway source for every target like the Q/DQ kernels.
#pragma once

#include <cstdint>

namespace qdq::kernels {

// Extra table bytes look_up_codes may read past the last entry: gathers read whole 32-bit words.
inline constexpr unsigned kLookUpTablePadding = 4;

// y[i] = table[x[i]] for i in [begin, end). x holds codes of `x_bytes` (1 or 2, little-endian
// unsigned). Results are `y_bits` wide: 8, 16, 32 or 64, or 4 and 2 packed into y the ONNX way
// (element i in bits (i % k) * y_bits of byte i / k, k = 8 / y_bits, unused high bits of a last
// partial byte 0), their table entries then one byte each. The table holds 2^(8 * x_bytes)
// entries followed by kLookUpTablePadding readable bytes, and is 8-byte aligned. For packed
// results begin is a multiple of 8. index_bits: a code's entry is decided by its low index_bits
// bits alone (table[c] == table[c mod 2^index_bits] for every c, as for 4- and 2-bit codes
// stored one per byte, whose high bits are not theirs), so the lookup may read the first
// 2^index_bits entries only.
void look_up_codes(const void* x, unsigned x_bytes, const void* table, unsigned y_bits, void* y, uint64_t begin,
                   uint64_t end, unsigned index_bits = 8);

// Whether look_up_codes runs in vectors on this CPU's target (AVX-512): gathers, and byte codes to
// 16-bit results by permutes, about as fast as a load and a store per element. Elsewhere it shifts
// results into 64-bit words one element at a time, which for packed 2-bit results (32 to a word)
// is slower than the kernels the table replaces (execute/by_table.cpp).
bool looks_up_in_vectors();

}  // namespace qdq::kernels
