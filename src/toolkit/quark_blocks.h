// The block kernels behind mx_quantize_dequantize and bfp_quantize_dequantize (quark_ops.hpp),
// shared by the front door (quark_mx_bfp.cpp) and the Highway kernels (quark_blocks_simd.cpp).
#pragma once

#include <cstdint>

namespace qdq::toolkit {

// What one block computes. Each variant follows Quark's CPU kernel for the same attributes.
enum class BlockMethod : uint8_t {
  kMxFloat,     // MX with fp8 / fp6 / fp4 elements
  kMxInt8,      // MX with int8 elements (an implicit 2^-6 step)
  kBfp,         // to_bfp
  kBfpCompiler, // to_bfp, use_compiler_version_cpu_kernel != 0
  kBfpPrime,    // to_bfp_prime (sub-block shifts)
};

// Quark's rounding_mode values.
enum class Rounding : uint8_t { kHalfAwayFromZero = 0, kHalfUp = 1, kHalfEven = 2 };

struct BlockOp {
  BlockMethod method = BlockMethod::kMxFloat;
  Rounding rounding = Rounding::kHalfAwayFromZero;
  int64_t block_size = 32;
  int emax = 0;            // MX: the element type's largest exponent (the scale is 2^(E - emax))
  int mantissa_bits = 0;   // MX float: element mantissa bits; BFP: bit_width - 9
  int exponent_bias = 0;   // MX float: element exponent bias
  float max_norm = 0.0f;   // MX float: the element type's largest value (results saturate to it)
  float smallest_normal = 0.0f;  // MX float: 2^(1 - bias)
  float subnormal_magic = 0.0f;  // MX float: 2^23 element subnormal steps, 2^(24 - bias - m)
  int64_t sub_block_size = 1;  // prime
  int32_t shift_limit = 0;     // prime: 2^sub_block_shift_bits - 1, at most 255
  bool bfloat_first = false;   // BFP: x rounded to bfloat16 before anything else
};

// x seen as [outer, axis_length, inner]; blocks run along the middle axis. Work is cut into
// units that tasks take in ranges: with inner > 1 a unit is one block row (block_size x inner),
// with inner == 1 (contiguous blocks) a unit is kTileBlocks consecutive blocks of one row.
inline constexpr int64_t kTileBlocks = 16;

struct BlockGeometry {
  int64_t outer = 1;
  int64_t axis_length = 0;
  int64_t inner = 1;
  int64_t blocks_per_row(int64_t block_size) const { return (axis_length + block_size - 1) / block_size; }
  uint64_t units(int64_t block_size) const {
    const int64_t blocks = blocks_per_row(block_size);
    const int64_t per_row = inner > 1 ? blocks : (blocks + kTileBlocks - 1) / kTileBlocks;
    return static_cast<uint64_t>(outer) * static_cast<uint64_t>(per_row);
  }
};

// Runs units [begin, end) of float32 x into y (y may be x). Dispatches to the best target.
void run_block_units(const BlockOp& op, const BlockGeometry& geometry, const float* x, float* y, uint64_t begin,
                     uint64_t end);

// float16 <-> float32 for elements [begin, end): exact widening; narrowing rounds half to even,
// overflows to infinity and keeps a NaN's sign and leading payload bits, quieted (vcvtps2ph's and
// ONNX Runtime's Cast rules).
void widen_float16(const uint16_t* x, float* y, uint64_t begin, uint64_t end);
void narrow_to_float16(const float* x, uint16_t* y, uint64_t begin, uint64_t end);

// Quark's fp32 -> bfloat16 -> fp32 rounding of one value, for the one-element pass-through.
float round_to_bfloat16(float value);
}  // namespace qdq::toolkit
