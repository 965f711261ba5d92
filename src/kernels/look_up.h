// y[i] = table[x[i]]: the lookup stage of plans run by table (execute/by_table.cpp: one table
// per-tensor, one a row per-axis), one Highway source for every target like the Q/DQ kernels.
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
// 2^index_bits entries only. stream: the results may be written with non-temporal stores, for an
// output larger than the caches (kStreamingOutputBytes); the lookups that can (byte codes to
// 16-bit results: on AVX-512 every such lookup, elsewhere those whose low four bits decide the
// entry) do, the others store as usual. Non-temporal stores are weakly ordered and no lookup
// fences them: the caller does (stream_fence) before another thread reads y, once for all its
// lookups. A fence a call, when per-axis plans look each row up in its own table
// (execute/by_table.cpp), made 16M uint4 -> bfloat16 per-axis over rows of 4,096 take 1.42-1.67
// ms against 1.00-1.45 with a fence a task (AVX-512 Xeon, 2 threads).
void look_up_codes(const void* x, unsigned x_bytes, const void* table, unsigned y_bits, void* y, uint64_t begin,
                   uint64_t end, unsigned index_bits = 8, bool stream = false);

// Whether look_up_codes runs in vectors on this CPU's target for byte codes whose entry their low
// four bits decide (index_bits <= 4) to 16-bit results, as look_up_packed_codes_to_halfwords does:
// one byte shuffle per byte of result on every target with vectors.
bool looks_up_low_bits_in_vectors();

// Whether look_up_codes looks 16-bit codes up by gathers on this CPU's target (AVX-512); else by
// a scalar loop.
bool looks_up_by_gathers();

// Whether DequantizeLinear of byte codes to 16-bit floats (float8 to float16, 8-bit integers to
// bfloat16; per-tensor, and float8 per row) runs faster by table than in the kernels on this CPU's
// target. Not on
// AVX2: its lookup of byte codes to 16-bit results is the scalar word loop (4 results a 64-bit
// store, no streaming), while its kernels decode float8 through F16C and round bfloat16 in lanes.
// Zen 2, 16M, 2 threads, table -> kernels: int8 -> bfloat16 4.55-7.74 -> 3.13-3.29 ms, uint8
// 5.11-5.89 -> 2.85-3.23, float8e4m3fn -> float16 4.20-5.39 -> 2.94-4.47, e5m2 4.07-5.28 ->
// 3.36-4.52 (every round); 64K, one thread, 41 -> 21 us and 28 -> 18 us. float8 to bfloat16 measured the same
// both ways (4.1-5.2 ms), so it keeps the table everywhere. AVX-512 looks up by permutes; SSE4
// and older decode float8 without F16C: both keep the table.
bool dequantizes_byte_codes_to_halfwords_by_table();

// 4- or 2-bit codes packed the ONNX way (code_bits; element k of a byte in its bits k * code_bits)
// to 16-bit results, the results of bytes [begin, end) of x: y holds 8 / code_bits results per
// byte, element k's being code_results[its code] (16 entries; those past 2^code_bits unread).
// stream as for look_up_codes (the caller fences). On targets without vectors it runs a byte at a
// time.
void look_up_packed_codes_to_halfwords(const void* x, unsigned code_bits, const uint16_t* code_results, void* y,
                                       uint64_t begin, uint64_t end, bool stream);

// Completes this thread's non-temporal stores (sfence on x86; nothing elsewhere).
void stream_fence();

}  // namespace qdq::kernels
