// The SIMD kernels (Highway, one source compiled for every x86/Arm target and dispatched at run
// time). They cover every plan the front doors make and match the scalar reference bit for bit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/reduce.h"
#include "qdq/qdq.hpp"

namespace qdq::kernels {

// Whether a SIMD kernel runs this plan: every plan the front doors make (quantize from float32,
// float16, bfloat16 or int32 in any division precision, float64 included, to every quantized
// type; dequantize from every quantized type to float32, float16 and bfloat16), in either
// sub-byte layout. tests/kernel_coverage_test.cpp enumerates them from the element-type table.
bool covers(const Plan& plan);

// Dynamic quantization's next stretch of x, reduced while a quantize plan runs (RangeBuffers::
// side_reduction): the groups of `group` elements from element `begin` to `end` of x (float32,
// float16 or bfloat16; group a multiple of 16, end - begin a multiple of group) into out's arrays
// from index 0, the values reduce_groups would give.
struct SideReduction {
  ElementType x_type = ElementType::kFloat32;
  const void* x = nullptr;
  uint64_t begin = 0, end = 0, group = 0;
  GroupExtremes out{};
};

// Where a range's x is read and y written when they are not the plan's whole tensors (the fused
// fake-quant runs a chunk through Q into a small code buffer, then DQ out of it): element i of x
// is at x_data[i - x_first], element i of y at y.data[i - y_first] (packed buffers: x_first and
// y_first multiples of 8). Scales and zero points are still indexed by the global element i.
struct RangeBuffers {
  const void* x_data = nullptr;  // nullptr: the plan's x
  uint64_t x_first = 0;
  uint64_t y_first = 0;
  bool allow_streaming = true;  // false: y is a buffer read back at once, never streamed past the cache
  // Quantize plans only: instead of codes, y (uint8, one per element) gets the straight-through
  // mask, 1 where q = x / scale (as the plan computes it) falls inside the output type's range
  // before any clamp, 0 elsewhere and for NaN (docs/semantics.md, "Fake quantization").
  bool range_mask = false;
  // Quantize plans only: y is this dequantize plan applied to the plan's codes (y of its output
  // type), computed in the same lanes; for the pairs covers_fake_quant accepts.
  const Plan* fused_dequantize = nullptr;
  // With fused_dequantize: also the range mask (as range_mask defines it) from the same lanes,
  // one byte per element, element i at fused_mask[i - y_first]; null for none.
  uint8_t* fused_mask = nullptr;
  // Quantize plans without range_mask or fused_dequantize, float x: also this reduction, done by
  // the time execute_range returns.
  const SideReduction* side_reduction = nullptr;
  // Quantize plans: bytes [prefetch, prefetch + prefetch_bytes) (dynamic quantization's next chunk
  // of x) are requested toward the L2 cache as the quantization loads x, a line for each line of x,
  // so that the chunk's reduction then reads cache while memory was busy during this range's
  // arithmetic. Only hot loops that load whole vectors of x advance it; the rest ignore it.
  const void* prefetch = nullptr;
  uint64_t prefetch_bytes = 0;
  // Short rows in groups (exec::group_short_rows found them in `canonical`, with rows_per_block):
  // the runs are exec::for_each_group_run's, one a plane of x, whose operands repeat with the
  // row's length as period within each group of rows. false: for_each_run's.
  bool row_groups = false;
  uint64_t rows_per_block = 0;
};

// Dynamic quantization of short groups, reduced, finished and quantized in one loop
// (toolkit/qparams.cpp's dynamic_quantize): float x divided in float32, each group whole vectors
// of consecutive elements, at most 4096; integer codes of <= 8 bits with float32 scales from the
// integer finish kinds (kMinMax, kSymmetric), or float8 / float4 codes with e8m0 scales from the
// MX kinds. Batches of as many groups as a vector has lanes: each batch's extremes fold into one
// vector per side, its scales and zero points come from the vector finish in registers
// (FinishIntegerVectors, FinishMxVectors), and its codes are those of the quantize plan
// dynamic_quantize makes (IntegerOutput's and Encode's arithmetic). While one batch is divided,
// the next is reduced between its vectors.
struct DynamicGroups {
  FinishConstants finish;
  ElementType x_type = ElementType::kFloat32;  // float32, float16 or bfloat16, divided in float32
  const void* x = nullptr;           // group g is x[g * group, (g + 1) * group)
  uint64_t group = 0;                // elements per group
  const ElementTypeInfo* y_type = nullptr;  // int8, uint8, int4, uint4, int2, uint2; float8, float4e2m1
  void* y = nullptr;
  SubByteLayout y_layout = SubByteLayout::kPacked;
  void* scales = nullptr;            // group g's scale to element g: float32, or e8m0 for the MX kinds
  void* zero_points = nullptr;       // integer codes of y_type, group g's at g; null: none stored
  SubByteLayout zero_point_layout = SubByteLayout::kPacked;
  bool saturate = true;              // float codes: the plan's saturate
  bool add_zero_point = false;       // float4e2m1 codes: the plan adds its +0 zero point
  // dynamic_quantize_slabs' geometry (blocks along a non-last axis): x is [outer, axis_dim,
  // inner], slab s the rows of block s % blocks of outer index s / blocks (block rows each, the
  // last block of an outer index possibly fewer), and group s * inner + c the slab's column c.
  uint64_t inner = 0, axis_dim = 0, block = 0, blocks = 0;
  // All of y's bytes (every task's): large outputs are written with non-temporal stores where
  // the loops fill whole lines (the quantize kernels' kStreamingOutputBytes rule).
  uint64_t y_bytes = 0;
  // Groups [first, last) that the loops leave to the general path (a batch the vector finish
  // does not decide: a NaN, an infinite or overflowing range; a range's last groups short of a
  // batch; a slab's columns past its last whole vector): they are reduced, finished and quantized
  // there, as dynamic_quantize would otherwise.
  void (*fallback)(void* context, uint64_t first, uint64_t last) = nullptr;
  void* fallback_context = nullptr;
};

// Whether the target dispatch picks runs DynamicGroups with groups of `group` elements: whole
// vectors, at most 4096 elements, on the targets with a batched fold (their batches of 4, 8 or 16
// groups divide 16).
bool dynamic_groups_fit(uint64_t group);

// Groups [first, last) of d (first a multiple of 16, so that batches and packed codes start on
// whole bytes).
void dynamic_quantize_groups(const DynamicGroups& d, uint64_t first, uint64_t last);

// Whether dynamic_quantize_slabs runs d's slabs in stretches on the target dispatch picks (false:
// it would send them all to the fallback, so the caller's own slab path is better). d's geometry,
// codes, finish, y and y_bytes must be set.
bool dynamic_slabs_take(const DynamicGroups& d);

// Slabs [first, last) of d, d.group unused (packed y: inner a multiple of 8; packed zero points:
// of the codes per byte), for the d dynamic_slabs_take admits (others go to the fallback). Blocks
// along a non-last axis, each slab in stretches of columns (each column one group) reduced a row
// at a time, the next stretch's rows reduced between this stretch's divisions.
void dynamic_quantize_slabs(const DynamicGroups& d, uint64_t first, uint64_t last);

// Whether a SideReduction beside the quantization beats reducing each chunk before quantizing it,
// on the target dispatch picks. Measured, 64K float32 in cache, one thread: on Zen 1 (AVX2) it
// did for groups of 64+ elements; on a Sapphire Rapids class Xeon (AVX-512) it did not, where
// int8 symmetric blocks of 128 took 27.2 us with it and 24.8 us without (rows of 1024: 20.5
// and 19.4 us). Why it stopped paying was not measured (no hardware counters on that VM).
bool side_reduction_pays();

// Whether one scale over a stretch of float32 x quantizes to the <= 16-bit integers by its
// reciprocal with a tie check (bit for bit the division's) rather than by dividing, on the CPU
// this runs on, for an output large enough to stream past the caches or not; only AVX-512 targets
// compile that path. Measured, one thread, 64K float32 -> uint8 / int8 / uint16 / int16
// per-tensor in cache: on a Sapphire Rapids class Xeon the reciprocal took 11.7 us where the
// division took 14.0; on an AMD Zen 5 (EPYC, family 26) the division took 3.8-4.1 us where the
// reciprocal took 5.5-5.7. Streamed from memory the Zen 5 turns the other way, or even (16M, 2
// threads, alternating runs: int8 1.32-1.40 ms by the reciprocal against 1.58-1.61 ms divided;
// uint8, uint16 within the noise; uint4 1.19-1.42 against 1.41-1.45), presumably because the
// divisions' long latency holds fewer loads in flight. So Intel CPUs always take it, others only
// for outputs that large (streamed there at the time).
bool quantizes_by_reciprocal(bool large_output);

// Whether an output of kStreamingOutputBytes or more that takes fewer bytes than x (Q from wider
// x, float32 to float16 fake-quant) is streamed too, on the CPU this runs on; outputs at least as
// wide as x always are. Streaming saves the read-for-ownership of y's lines, a smaller share of the
// traffic the narrower y is, and what it costs besides depends on the CPU. Intel: yes (Xeon with
// AVX-512, 16M Q float32 -> uint8 per-tensor, y on a line: 1.67-1.79 ms streamed against 1.83-2.08
// ms; docs/performance-history.md, session 11). Others: no (AMD EPYC, AVX2, 2 threads, alternating runs in
// one process, 16M per-tensor unless said: Q float32 -> uint8 4.49-5.06 ms streamed against
// 4.20-4.84, -> int16 5.79-6.76 against 5.65-6.18, -> float8e4m3fn per-axis-last 8.09-8.54
// against 7.64-8.03, bfloat16 -> uint8 per-axis-last 7.11-7.51 against 6.35-7.07; while outputs
// wider than x gained there, DQ uint8 -> float32 6.03 -> 3.31 ms, int16 -> float32 7.00 ->
// 4.32).
bool streams_outputs_narrower_than_x();

// Tests: forces that choice (1 streamed, 0 not); -1 restores the CPU's.
void force_narrow_output_streaming(int choice);

// Tests: forces that choice (1 by the reciprocal where the target has the path, 0 by the
// division); -1 restores the CPU's.
void force_reciprocal(int choice);

// Whether a per-tensor QuantizeLinear from float16 or bfloat16 x runs by its table of 2^16 results
// (execute/by_table.cpp, one lookup an element) rather than in the kernels, on this CPU and its
// target. Measured 16M per-tensor, 2 threads: on an Intel Xeon (AVX-512, gathers) 1.5-1.7 ms by
// table against 2.4-2.7 ms in the kernels (session 41's table), on an AMD Zen 3 (AVX2, a scalar
// lookup loop) 4.0 against 8.2-9.0 (session 37); but on an AMD Zen 5 (AVX-512, family 26) the
// gathers took 3.7-5.3 ms where the kernels take 1.3-2.5 (the same cells per-axis-last, session
// 43). So gathers on other CPUs than Intel's leave the plan to the kernels.
bool quantizes_16_bit_x_by_table();

// Tests: forces that choice (1 by table, 0 in the kernels); -1 restores the CPU's.
void force_16_bit_x_by_table(int choice);

// Whether the kernels code this QuantizeLinear's stretches of one scale and zero point by
// thresholds on x's patterns (float16 / bfloat16 x in its own precision to 4- and 2-bit integers
// and float4e2m1, on AVX-512): faster than the table of 2^16 results, which such a per-tensor plan
// then skips. Intel Xeon, 2M elements in cache, one thread: 720-800 us by table, 300-530 us by
// thresholds (docs/performance-history.md, session 54).
bool quantizes_by_thresholds(const Plan& plan);

// Tests: moves every threshold's estimated key by `keys` (0 restores it), so that the windows
// around the estimates miss and the thresholds are bisected; and the current shift.
void shift_threshold_estimates(int keys);
int threshold_estimate_shift();

// Elements [begin, end) of the plan into y, over the canonical layout (execute/runs.h). Selects
// the target once per call. For packed outputs, begin and end are multiples of 8 or end is the
// element count, so that no two calls write one byte.
void execute_range(const Plan& plan, const Layout& canonical, uint64_t begin, uint64_t end,
                   const MutableTensorView& y, const RangeBuffers& buffers = {});

// Whether execute_range computes the range mask of this quantize plan (every output but Quark's
// int32 and uint32).
bool covers_range_mask(const Plan& plan);

// Whether execute_range runs this quantize plan fused with its dequantize in lanes
// (RangeBuffers::fused_dequantize): float x divided in a float precision to the 8-, 16-, 4- and
// 2-bit integers, float8 and float4; the other pairs go through a code buffer.
bool covers_fake_quant(const Plan& quantize);

// Test hook: v[i] rounded half to even to the significand of x_type (float16: 11 bits, bfloat16:
// 8), in float32, as the quantize loops round clamped quotients for integer codes of at most 8
// bits (RoundToSignificandOf); count a multiple of the lanes.
void round_to_significand_of(ElementType x_type, const float* v, size_t count, float* out);

// Highway targets compiled in and supported by this CPU, best first (bit values of HWY_*), and
// their names.
std::vector<int64_t> supported_targets();
std::string target_name(int64_t target);

// Restricts dispatch to one target (tests run every kernel on every target); 0 restores all.
void force_target(int64_t target);

}  // namespace qdq::kernels
