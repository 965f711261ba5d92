// qdq: AMD Quark's com.amd.quark MXQuantizeDequantize and BFPQuantizeDequantize (version 1), the
// fake-quantize operators Quark writes into MX- and BFP-quantized models. Bit for bit what Quark's
// CPU kernels compute, with the exceptions docs/semantics.md lists; one pass over x (no padded,
// transposed or sliced copies), SIMD and threaded like the Q/DQ kernels.
//
// Both take x of float32 or float16 (computed in float32 and rounded back, as Quark does) and
// write y of x's type and shape; y may be x itself. Blocks run along `axis` (ignored for rank 1);
// a partial last block behaves as if padded with zeros. A one-element tensor passes through.
#pragma once

#include <cstdint>
#include <string>

#include "qdq/export.h"
#include "qdq/qdq.hpp"
#include "qdq/status.h"

namespace qdq {

// MXQuantizeDequantize: each block of `block_size` elements shares the scale 2^(E - emax), E the
// largest float32 exponent in the block (infinities and NaNs ignored), emax the element type's
// largest exponent; x / scale is rounded to the element type (floats: half to even, saturating;
// int8: 2^-6 steps by `rounding_mode`, clamped to [-128, 127]) and multiplied back.
struct MxQuantizeDequantizeAttributes {
  std::string element_dtype = "int8";  // fp8_e5m2, fp8_e4m3, fp6_e3m2, fp6_e2m3, fp4_e2m1, int8
  int64_t axis = 1;
  int64_t block_size = 32;
  // int8 only (Quark's float elements always round half to even): 0 half away from zero, 1 half
  // up, 2 half to even; any other value rounds as 0 does, as in Quark.
  int64_t rounding_mode = 0;
};

// BFPQuantizeDequantize: block floating point with an 8-bit shared exponent and bit_width - 9
// mantissa bits per element. bfp_method "to_bfp" (optionally the compiler's variant, which moves
// the exponent up when a top-binade element rounds to 128) or "to_bfp_prime" (sub-blocks shifted
// by up to 2^sub_block_shift_bits - 1 binades; "to_bfp_prime_shared" is its old name).
struct BfpQuantizeDequantizeAttributes {
  std::string bfp_method = "to_bfp";
  int64_t axis = 1;
  int64_t bit_width = 16;  // 10..32: 1..23 mantissa bits
  int64_t block_size = 8;
  int64_t rounding_mode = 0;  // 0 half away from zero, 1 half up, 2 half to even
  int64_t sub_block_size = 2;        // to_bfp_prime: must divide block_size
  int64_t sub_block_shift_bits = 1;  // to_bfp_prime
  int64_t convert_to_bfloat_before_bfp = 0;     // round x to bfloat16 first (half to even)
  int64_t use_compiler_version_cpu_kernel = 0;  // to_bfp: the compiler's variant
};

QDQ_API Status mx_quantize_dequantize(const TensorView& x, const MxQuantizeDequantizeAttributes& attributes,
                                      const MutableTensorView& y, const ExecuteOptions& options = {});
QDQ_API Status bfp_quantize_dequantize(const TensorView& x, const BfpQuantizeDequantizeAttributes& attributes,
                                       const MutableTensorView& y, const ExecuteOptions& options = {});

}  // namespace qdq
