// The kernels' per-call set-up: ExecuteRange picks a run (the instantiations are spread over the
// kernels_*.cpp translation units, see kernels-inl.h) and steps it over the range's runs; the block
// helpers every family shares; the range masks; the dispatch entry points of kernels.h. The stages
// themselves are in kernels-inl.h.
#include <atomic>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/look_up.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/kernels.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/kernels-inl.h"
#include "kernels/upper_state-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qdq::kernels {
namespace HWY_NAMESPACE {

// --- Block helpers (declared in kernels-inl.h) ----------------------------------------------

void LoadOperands(const Context& c, const exec::Run& run, uint64_t offset, size_t k, Operands* o,
                  bool zero_point_codes, bool short_blocks_in_lanes) {
  const Plan& plan = *c.plan;
  const size_t lanes = hn::Lanes(DF());
  // An int32 scale is taken as words where the division is in float64; in a float precision it
  // is rounded to float32 first, as the reference does.
  const bool wide_scale = c.precision == Precision::kFloat64;
  const bool wide_zero_point = c.zero_point != nullptr && IsWide(*c.zero_point);
  // Whole vectors per block (offset is a multiple of kBlock, itself a multiple of the lanes).
  o->per_block = run.block != 0 && run.block % lanes == 0 && run.block_phase % lanes == 0 && !wide_scale &&
                 (!wide_zero_point || plan.operation == Operation::kDequantize);
  o->short_blocks = short_blocks_in_lanes && run.block != 0 && run.block < lanes && !wide_scale && !wide_zero_point;
  if (o->short_blocks) {
    o->short_block = static_cast<size_t>(run.block);
    o->short_block_phase = static_cast<size_t>((run.block_phase + offset) % run.block);
  }
  // The blocks' values, one each, where the caller spreads them over the elements itself.
  const bool block_values = o->per_block || o->short_blocks;
  // A converted run's elements at most, so that the row's per-element operands fit the budget
  // (zero points read as codes in the loop take no float32 row).
  const bool codes_in_loop = zero_point_codes && !o->per_block && ZeroPointCodesInLoop(c, run);
  const uint64_t per_element_operands =
      (run.scale_varies ? 1u : 0u) + (c.zero_point != nullptr && run.zero_point_varies && !codes_in_loop ? 1u : 0u);
  const uint64_t max_converted = kRowOperandBytes / (sizeof(float) * std::max<uint64_t>(per_element_operands, 1));
  if (wide_scale) {
    LoadOperand(*c.scale, plan.scale, run.scale_index, run.scale_varies, run.scale_periodic, run, offset, k, false,
                &o->wide_scale);
  } else {
    LoadOperand(*c.scale, plan.scale, run.scale_index, run.scale_varies, run.scale_periodic, run, offset, k,
                block_values, &o->scale, c.converted_scale, max_converted);
  }
  o->zero_point_codes = nullptr;
  if (c.zero_point == nullptr) {
    o->zero_point.values = nullptr;
    o->zero_point.constant = 0.0f;
  } else if (codes_in_loop) {
    // Where packed, first is a byte's first code (offset: whole blocks).
    const uint64_t first = run.zero_point_index + offset;
    const uint64_t bits = static_cast<uint64_t>(c.zero_point->bits);
    const bool packed = bits < 8 && plan.zero_point.layout == SubByteLayout::kPacked;
    o->zero_point.values = nullptr;
    const uint64_t byte = packed ? first / (8 / bits) : first * ((bits + 7) / 8);
    o->zero_point_codes = static_cast<const uint8_t*>(plan.zero_point.data) + byte;
  } else if (wide_zero_point) {
    LoadOperand(*c.zero_point, plan.zero_point, run.zero_point_index, run.zero_point_varies, run.zero_point_periodic,
                run, offset, k, o->per_block, &o->wide_zero_point);
  } else {
    LoadOperand(*c.zero_point, plan.zero_point, run.zero_point_index, run.zero_point_varies, run.zero_point_periodic,
                run, offset, k, block_values, &o->zero_point, c.converted_zero_point, max_converted);
  }
}

void LoadAsFloat(const ElementTypeInfo& type, const void* data, uint64_t index, size_t k, float* out) {
  const size_t N = hn::Lanes(DF());
  size_t i = 0;
  switch (type.type) {
    case ElementType::kFloat32:
      std::memcpy(out, static_cast<const float*>(data) + index, k * sizeof(float));
      i = k;
      break;
    case ElementType::kFloat16:
      i = LoadVectors<ElementType::kFloat16>(data, index, k, out);
      break;
    case ElementType::kBfloat16:
      i = LoadVectors<ElementType::kBfloat16>(data, index, k, out);
      break;
    case ElementType::kInt32:
      i = LoadVectors<ElementType::kInt32>(data, index, k, out);
      break;
    case ElementType::kFloat8E8M0:
      // 2^(code - 127) on the bits: the code is float32's biased exponent, except code 0, 2^-127,
      // which is float32's subnormal 0x0040'0000, and 0xFF, NaN. (The generic decode below took a
      // scalbn per scale: 38% of an MX blocked-32 Q.)
      for (; i < k; ++i) {
        const uint32_t code = static_cast<const uint8_t*>(data)[index + i];
        out[i] = std::bit_cast<float>(code == 0xFF ? 0x7FC0'0000u : code == 0 ? 0x0040'0000u : code << 23);
      }
      break;
    default:
      break;
  }
  for (; i < k; ++i) out[i] = static_cast<float>(codec::load_value(data, type, index + i));
  for (size_t j = k; j < kPadded && j < k + N; ++j) out[j] = 0.0f;
}

void Unpack(const ElementTypeInfo& type, const void* data, uint64_t index, size_t k, uint8_t* codes) {
  const uint64_t per_byte = static_cast<uint64_t>(type.elements_per_byte());
  size_t i = 0;
  for (; i < k && (index + i) % per_byte != 0; ++i) codes[i] = static_cast<uint8_t>(codec::load_code(data, type, index + i));
  const uint8_t* bytes = static_cast<const uint8_t*>(data) + (index + i) / per_byte;
  if (type.bits == 4) {
    const hn::ScalableTag<uint16_t> d16;
    const hn::Rebind<uint8_t, decltype(d16)> d8;
    const size_t n = hn::Lanes(d16);
    for (; i + 2 * n <= k; i += 2 * n, bytes += n) {
      const auto b = hn::PromoteTo(d16, hn::LoadU(d8, bytes));  // 0000'0000'hhhh'llll
      const auto spread = hn::Or(hn::And(b, hn::Set(d16, 0x000F)), hn::ShiftLeft<4>(hn::And(b, hn::Set(d16, 0x00F0))));
      hn::StoreU(spread, d16, reinterpret_cast<uint16_t*>(codes + i));  // 0000'hhhh'0000'llll
    }
    for (; i + 2 <= k; i += 2, ++bytes) {
      codes[i] = *bytes & 0x0F;
      codes[i + 1] = static_cast<uint8_t>(*bytes >> 4);
    }
  } else {
    const hn::ScalableTag<uint32_t> d32;
    const hn::Rebind<uint8_t, decltype(d32)> d8;
    const size_t n = hn::Lanes(d32);
    for (; i + 4 * n <= k; i += 4 * n, bytes += n) {
      const auto b = hn::PromoteTo(d32, hn::LoadU(d8, bytes));  // dd'cc'bb'aa in the low byte
      const auto spread = hn::Or(hn::Or(hn::And(b, hn::Set(d32, 0x3u)), hn::And(hn::ShiftLeft<6>(b), hn::Set(d32, 0x300u))),
                                 hn::Or(hn::And(hn::ShiftLeft<12>(b), hn::Set(d32, 0x3'0000u)),
                                        hn::And(hn::ShiftLeft<18>(b), hn::Set(d32, 0x300'0000u))));
      hn::StoreU(spread, d32, reinterpret_cast<uint32_t*>(codes + i));
    }
    for (; i + 4 <= k; i += 4, ++bytes) {
      codes[i] = *bytes & 3;
      codes[i + 1] = (*bytes >> 2) & 3;
      codes[i + 2] = (*bytes >> 4) & 3;
      codes[i + 3] = static_cast<uint8_t>(*bytes >> 6);
    }
  }
  for (; i < k; ++i) codes[i] = static_cast<uint8_t>(codec::load_code(data, type, index + i));
}

void Pack(const ElementTypeInfo& type, const uint8_t* codes, size_t k, void* data, uint64_t index) {
  const uint64_t per_byte = static_cast<uint64_t>(type.elements_per_byte());
  size_t i = 0;
  for (; i < k && (index + i) % per_byte != 0; ++i) codec::store_code(data, type, index + i, codes[i]);
  uint8_t* bytes = static_cast<uint8_t*>(data) + (index + i) / per_byte;
  if (type.bits == 4) {
    const hn::ScalableTag<uint16_t> d16;
    const hn::Rebind<uint8_t, decltype(d16)> d8;
    const size_t n = hn::Lanes(d16);
    for (; i + 2 * n <= k; i += 2 * n, bytes += n) {
      const auto w = hn::LoadU(d16, reinterpret_cast<const uint16_t*>(codes + i));  // ????'hhhh'????'llll
      const auto packed = hn::Or(hn::And(w, hn::Set(d16, 0x000F)), hn::And(hn::ShiftRight<4>(w), hn::Set(d16, 0x00F0)));
      // Values fit in a byte, so the signed-to-unsigned saturating demotion is exact.
      hn::StoreU(hn::DemoteTo(d8, hn::BitCast(hn::RebindToSigned<decltype(d16)>(), packed)), d8, bytes);
    }
    for (; i + 2 <= k; i += 2) *bytes++ = static_cast<uint8_t>((codes[i] & 0x0F) | (codes[i + 1] << 4));
  } else {
    const hn::ScalableTag<uint32_t> d32;
    const hn::Rebind<uint8_t, decltype(d32)> d8;
    const size_t n = hn::Lanes(d32);
    for (; i + 4 * n <= k; i += 4 * n, bytes += n) {
      const auto w = hn::LoadU(d32, reinterpret_cast<const uint32_t*>(codes + i));
      const auto packed = hn::Or(hn::Or(hn::And(w, hn::Set(d32, 0x3u)), hn::And(hn::ShiftRight<6>(w), hn::Set(d32, 0xCu))),
                                 hn::Or(hn::And(hn::ShiftRight<12>(w), hn::Set(d32, 0x30u)),
                                        hn::And(hn::ShiftRight<18>(w), hn::Set(d32, 0xC0u))));
      hn::StoreU(hn::DemoteTo(d8, hn::BitCast(hn::RebindToSigned<decltype(d32)>(), packed)), d8, bytes);
    }
    for (; i + 4 <= k; i += 4) {
      *bytes++ = static_cast<uint8_t>((codes[i] & 3) | ((codes[i + 1] & 3) << 2) | ((codes[i + 2] & 3) << 4) |
                                      (codes[i + 3] << 6));
    }
  }
  for (; i < k; ++i) codec::store_code(data, type, index + i, codes[i]);
}

void LoadCodesAsFloat(const ElementTypeInfo& type, const void* data, uint64_t index, size_t k, float* out) {
  const size_t N = hn::Lanes(DF());
  size_t i = 0;
  switch (type.type) {
    case ElementType::kUint8: i = ConvertCodes(static_cast<const uint8_t*>(data) + index, k, out); break;
    case ElementType::kInt8: i = ConvertCodes(static_cast<const int8_t*>(data) + index, k, out); break;
    case ElementType::kUint16: i = ConvertCodes(static_cast<const uint16_t*>(data) + index, k, out); break;
    case ElementType::kInt16: i = ConvertCodes(static_cast<const int16_t*>(data) + index, k, out); break;
    default: break;
  }
  for (; i < k; ++i) out[i] = static_cast<float>(codec::load_value(data, type, index + i));
  for (size_t j = k; j < kPadded && j < k + N; ++j) out[j] = 0.0f;
}

void StoreBlock(const Context& c, const float* values, size_t k, void* y, uint64_t y_at) {
  const DF df;
  const size_t N = hn::Lanes(df);
  if (c.y->type == ElementType::kFloat32) {
    c.y_stream->Write(values, k * sizeof(float), static_cast<float*>(y) + y_at);
    return;
  }
  HWY_ALIGN uint16_t halves[kPadded];
  for (size_t i = 0; i < k; i += N) {
    if (c.y->type == ElementType::kFloat16) {
      StoreAsOutput<ElementType::kFloat16>(hn::LoadU(df, values + i), halves + i);
    } else {
      StoreAsOutput<ElementType::kBfloat16>(hn::LoadU(df, values + i), halves + i);
    }
  }
  if (c.stream_output) {
    c.y_stream->Write(halves, k * sizeof(uint16_t), static_cast<uint16_t*>(y) + y_at);
  } else {
    std::memcpy(static_cast<uint16_t*>(y) + y_at, halves, k * sizeof(uint16_t));
  }
}

// --- Selection, once per call ---------------------------------------------------------------

RunFunction SelectQuantize(ElementType x, ElementType scale, ElementType out, Precision precision) {
  // A float64 division takes an int32 scale's words (the planners' only source of kFloat64).
  if (precision == Precision::kFloat64 && scale != ElementType::kInt32) return nullptr;
  // Quark's outputs: float32 x only, divided in float32.
  const bool quark_output = out == ElementType::kInt32 || out == ElementType::kUint32 || out == ElementType::kFloat16 ||
                            out == ElementType::kBfloat16;
  if (quark_output && (x != ElementType::kFloat32 || precision == Precision::kFloat64)) return nullptr;
  if (const RunFunction run = SelectQuantizeToIntegers(x, out); run != nullptr) return run;
  if (const RunFunction run = SelectQuantizeToSubBytes(x, out); run != nullptr) return run;
  return SelectQuantizeToFloats(x, out);
}

RunFunction SelectRangeMask(const Plan& plan) {
  if (plan.operation != Operation::kQuantize || SelectQuantize(plan.x.type, plan.scale.type, plan.output_type,
                                                                 plan.precision) == nullptr) {
    return nullptr;
  }
  const ElementTypeInfo& out = info(plan.output_type);
  if (out.is_integer() && out.bits == 32) return nullptr;  // Quark's int32 / uint32: no mask
  return out.is_integer() ? SelectQuantizeInput<IntegerRangeMask>(plan.x.type)
                          : SelectQuantizeInput<FloatRangeMask>(plan.x.type);
}

RunFunction Select(const Plan& plan) {
  const bool float_output = plan.output_type == ElementType::kFloat32 || plan.output_type == ElementType::kFloat16 ||
                            plan.output_type == ElementType::kBfloat16;
  if (plan.operation == Operation::kQuantize) {
    return SelectQuantize(plan.x.type, plan.scale.type, plan.output_type, plan.precision);
  }
  if (!float_output) return nullptr;
  return SelectDequantize(plan.x.type, plan.output_type);
}

// Whether a kernel runs this plan (the same answer on every target).
bool HasKernel(const Plan& plan) { return Select(plan) != nullptr; }
bool HasRangeMask(const Plan& plan) { return SelectRangeMask(plan) != nullptr; }
bool HasFakeQuant(const Plan& quantize) { return SelectFakeQuant(quantize) != nullptr; }

// The range mask's limits for a quantized type (Context::range_*).
void SetRangeLimits(const ElementTypeInfo& type, Context* c) {
  c->range_lowest = static_cast<float>(type.lowest);
  c->range_max = static_cast<float>(type.max);
  if (type.is_float()) {
    // max = significand * 2^exponent with significand in [0.5, 1): its last place is
    // 2^(exponent - 1 - mantissa bits); half of it above max is the rounding midpoint (exact in
    // float32 for every quantized float type).
    int exponent = 0;
    std::frexp(type.max, &exponent);
    const double last_place = std::ldexp(1.0, exponent - 1 - type.mantissa_bits);
    c->range_limit = static_cast<float>(type.max + last_place / 2);
    c->range_limit_inside = std::fmod(type.max / last_place, 2.0) == 0.0;  // even largest code
  }
}

// Runs `run_all` with a GroupStream of the side reduction for QuantizeUniform to step, then
// finishes what it left.
template <ElementType kX, class RunAll>
void RunWithSideStream(const SideReduction& side, Context* c, const RunAll& run_all) {
  GroupStream<kX> stream(side.x, side.begin, side.end, side.group, side.out);
  c->side_stream = &stream;
  run_all();
  c->side_stream = nullptr;
  stream.Finish();
}

void ExecuteRange(const Plan& plan, const Layout& canonical, uint64_t begin, uint64_t end,
                  const MutableTensorView& y_view, const RangeBuffers& buffers) {
  const CleanUpperStateOnReturn clean_upper_state;
  void* y = y_view.data;
  Context c;
  c.plan = &plan;
  c.x = &info(plan.x.type);
  c.scale = &info(plan.scale.type);
  // A zero point the plan does not apply (float8 Q and DQ: the reference ignores it) is never read:
  // per-element ones were decoded for every run (Q float32 -> float8e4m3fn per-axis-last, 64K:
  // 1179 us with a zero-point tensor, 79 us without).
  c.zero_point = plan.has_zero_point && plan.apply_zero_point ? &info(plan.zero_point.type) : nullptr;
  // A mask is one uint8 per element whatever the quantized type; a fake-quant writes the
  // dequantize plan's output.
  const ElementType y_type = buffers.range_mask        ? ElementType::kUint8
                             : buffers.fused_dequantize ? buffers.fused_dequantize->output_type
                                                        : plan.output_type;
  c.y = &info(y_type);
  c.precision = plan.precision;
  c.saturate = plan.saturate;
  c.apply_zero_point = plan.apply_zero_point;
  c.x_layout = plan.x.layout;
  c.y_layout = y_view.layout;
  const uint64_t y_bytes = storage_bytes(y_type, plan.element_count, y_view.layout);
  const uint64_t x_bytes = storage_bytes(plan.x.type, plan.element_count, plan.x.layout);
  const bool large_output = buffers.allow_streaming && y_bytes >= kStreamingOutputBytes;
  c.stream_output = large_output && (y_bytes >= x_bytes || streams_outputs_narrower_than_x());
  StreamWriter y_stream, mask_stream;
  c.y_stream = &y_stream;
  c.mask_stream = &mask_stream;
  c.x_data = buffers.x_data != nullptr ? buffers.x_data : plan.x.data;
  c.x_first = buffers.x_first;
  c.y_first = buffers.y_first;
  c.mask = buffers.fused_dequantize != nullptr ? buffers.fused_mask : nullptr;
  if (buffers.range_mask || c.mask != nullptr) SetRangeLimits(info(plan.output_type), &c);
  const RunFunction run_function = buffers.range_mask         ? SelectRangeMask(plan)
                                   : buffers.fused_dequantize ? SelectFakeQuant(plan)
                                                              : Select(plan);
  c.side_stream = nullptr;
  Context::PrefetchCursor prefetch{static_cast<const char*>(buffers.prefetch),
                                   static_cast<const char*>(buffers.prefetch) + buffers.prefetch_bytes};
  c.prefetch = buffers.prefetch != nullptr ? &prefetch : nullptr;
  // Without a window of its own, a quantize plan over a large x fetches it kPrefetchAheadBytes
  // ahead of this range's loads, up to the range's end (kernels/prefetch.h says why). Not dequantize
  // plans: their x is the small side, and the requests gained nothing there, some cells slower
  // (16M, 2 threads: DQ float8e4m3fn -> float32 per-axis-last 1.93-1.99 -> 2.16-2.33 ms).
  const bool large_x = x_bytes >= kPrefetchedXBytes;
  if (c.prefetch == nullptr && plan.operation == Operation::kQuantize && large_x && begin >= c.x_first) {
    const auto* x = static_cast<const char*>(c.x_data);
    const char* from = x + storage_bytes(plan.x.type, begin - c.x_first, c.x_layout);
    const char* to = x + storage_bytes(plan.x.type, end - c.x_first, c.x_layout);
    if (to - from > static_cast<std::ptrdiff_t>(kPrefetchAheadBytes)) {
      prefetch = {from + kPrefetchAheadBytes, to};
      c.prefetch = &prefetch;
    }
  }
  c.by_reciprocal = quantizes_by_reciprocal(large_output);
  ThresholdCodes thresholds;  // made on the first stretch that takes them, kept for the task
  c.thresholds = &thresholds;
  ConvertedOperand converted_scale, converted_zero_point;
  c.converted_scale = &converted_scale;
  c.converted_zero_point = &converted_zero_point;
  const auto run_all = [&] {
    const auto visit = [&](const exec::Run& run) { run_function(c, run, y); };
    if (buffers.row_groups) {
      exec::for_each_group_run(canonical, buffers.rows_per_block, begin, end, visit);
    } else {
      exec::for_each_run(canonical, begin, end, visit);
    }
  };
  if (const SideReduction* side = buffers.side_reduction; side != nullptr) {
    switch (side->x_type) {
      case ElementType::kFloat16: RunWithSideStream<ElementType::kFloat16>(*side, &c, run_all); break;
      case ElementType::kBfloat16: RunWithSideStream<ElementType::kBfloat16>(*side, &c, run_all); break;
      default: RunWithSideStream<ElementType::kFloat32>(*side, &c, run_all); break;
    }
  } else {
    run_all();
  }
  y_stream.Flush();
  mask_stream.Flush();
#if HWY_ARCH_X86
  // Streaming stores are weakly ordered: complete them before the task reports itself done.
  if (c.stream_output) _mm_sfence();
#endif
}

bool SideReductionPays() { return HWY_MAX_BYTES < 64; }  // see kernels.h

// Whether this target codes QuantizeLinear's stretches of a constant divisor from x in `precision`
// to `y` by thresholds, by the facts QuantizeStretch takes them on: x's own precision and
// kCodesByThresholds of y's Output (QuantizeByThresholds).
bool CodesByThresholds([[maybe_unused]] ElementType x, [[maybe_unused]] Precision precision,
                       [[maybe_unused]] ElementType y) {
#ifdef QDQ_CODES_BY_THRESHOLDS
  if ((x != ElementType::kFloat16 && x != ElementType::kBfloat16) || !ExactInPrecision(x, precision)) return false;
  switch (y) {  // every output from 16-bit x with at most 256 codes: the trait decides
    case ElementType::kInt8: return kCodesByThresholds<IntegerOutput<8, true>>;
    case ElementType::kUint8: return kCodesByThresholds<IntegerOutput<8, false>>;
    case ElementType::kInt4: return kCodesByThresholds<IntegerOutput<4, true>>;
    case ElementType::kUint4: return kCodesByThresholds<IntegerOutput<4, false>>;
    case ElementType::kInt2: return kCodesByThresholds<IntegerOutput<2, true>>;
    case ElementType::kUint2: return kCodesByThresholds<IntegerOutput<2, false>>;
    case ElementType::kFloat8E4M3FN: return kCodesByThresholds<FloatOutput<kE4M3FN, false>>;
    case ElementType::kFloat8E4M3FNUZ: return kCodesByThresholds<FloatOutput<kE4M3FNUZ, false>>;
    case ElementType::kFloat8E5M2: return kCodesByThresholds<FloatOutput<kE5M2, false>>;
    case ElementType::kFloat8E5M2FNUZ: return kCodesByThresholds<FloatOutput<kE5M2FNUZ, false>>;
    case ElementType::kFloat4E2M1: return kCodesByThresholds<FloatOutput<kE2M1, true>>;
    default: return false;
  }
#else
  return false;
#endif
}

void RoundToSignificandOfType(ElementType x_type, const float* v, size_t count, float* out) {
  const DF df;
  const size_t N = hn::Lanes(df);
  for (size_t i = 0; i + N <= count; i += N) {
    const VF value = hn::LoadU(df, v + i);
    hn::StoreU(x_type == ElementType::kFloat16 ? RoundToSignificandOf<ElementType::kFloat16>(value)
                                               : RoundToSignificandOf<ElementType::kBfloat16>(value),
               df, out + i);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace qdq::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qdq::kernels {

HWY_EXPORT(ExecuteRange);
HWY_EXPORT(SideReductionPays);
bool side_reduction_pays() { return HWY_DYNAMIC_DISPATCH(SideReductionPays)(); }

HWY_EXPORT(CodesByThresholds);
bool quantizes_by_thresholds(const Plan& plan) {
  return plan.operation == Operation::kQuantize &&
         HWY_DYNAMIC_DISPATCH(CodesByThresholds)(plan.x.type, plan.precision, plan.output_type);
}

namespace {
std::atomic<int> forced_reciprocal{-1};
std::atomic<int> forced_narrow_streaming{-1};
std::atomic<int> forced_16_bit_x_by_table{-1};

// The CPU's vendor, which the measured choices below key on; unknown off x86 (and without GCC's
// builtin), where they take `otherwise`.
bool intel_cpu(bool otherwise) {
#if HWY_ARCH_X86 && defined(__GNUC__)
  (void)otherwise;
  static const bool intel = __builtin_cpu_is("intel");
  return intel;
#else
  return otherwise;
#endif
}
}  // namespace

bool quantizes_by_reciprocal(bool large_output) {
  const int forced = forced_reciprocal.load(std::memory_order_relaxed);
  return forced >= 0 ? forced != 0 : large_output || intel_cpu(false);  // where division is the slower
}

bool streams_outputs_narrower_than_x() {
  const int forced = forced_narrow_streaming.load(std::memory_order_relaxed);
  return forced >= 0 ? forced != 0 : intel_cpu(true);
}

void force_narrow_output_streaming(int choice) {
  forced_narrow_streaming.store(choice < 0 ? -1 : choice != 0, std::memory_order_relaxed);
}

void force_reciprocal(int choice) { forced_reciprocal.store(choice < 0 ? -1 : choice != 0, std::memory_order_relaxed); }

bool quantizes_16_bit_x_by_table() {
  const int forced = forced_16_bit_x_by_table.load(std::memory_order_relaxed);
  return forced >= 0 ? forced != 0 : !looks_up_by_gathers() || intel_cpu(true);
}

std::atomic<int> threshold_shift{0};
void shift_threshold_estimates(int keys) { threshold_shift.store(keys, std::memory_order_relaxed); }
int threshold_estimate_shift() { return threshold_shift.load(std::memory_order_relaxed); }

void force_16_bit_x_by_table(int choice) {
  forced_16_bit_x_by_table.store(choice < 0 ? -1 : choice != 0, std::memory_order_relaxed);
}

HWY_EXPORT(RoundToSignificandOfType);
void round_to_significand_of(ElementType x_type, const float* v, size_t count, float* out) {
  HWY_DYNAMIC_DISPATCH(RoundToSignificandOfType)(x_type, v, count, out);
}

HWY_EXPORT(HasKernel);
HWY_EXPORT(HasRangeMask);
HWY_EXPORT(HasFakeQuant);

bool covers(const Plan& plan) { return HWY_DYNAMIC_DISPATCH(HasKernel)(plan); }
bool covers_range_mask(const Plan& plan) { return HWY_DYNAMIC_DISPATCH(HasRangeMask)(plan); }
bool covers_fake_quant(const Plan& quantize) { return HWY_DYNAMIC_DISPATCH(HasFakeQuant)(quantize); }

void execute_range(const Plan& plan, const Layout& canonical, uint64_t begin, uint64_t end,
                   const MutableTensorView& y, const RangeBuffers& buffers) {
  HWY_DYNAMIC_DISPATCH(ExecuteRange)(plan, canonical, begin, end, y, buffers);
}

std::vector<int64_t> supported_targets() { return hwy::SupportedAndGeneratedTargets(); }

std::string target_name(int64_t target) { return hwy::TargetName(target); }

void force_target(int64_t target) { hwy::SetSupportedTargetsForTest(target); }

}  // namespace qdq::kernels
#endif  // HWY_ONCE
