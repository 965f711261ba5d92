// The lookup of plans run by table (kernels/look_up.h).
//
// Measured at 16M float16 codes to a 64 KiB byte table, in a microbenchmark on the AVX-512 Xeon
// (one thread / two): the former scalar loop, which gathered eight results in a small array and
// copied it out, took 6-15.5 / 2.6 ms, bimodal from run to run (the array's narrow stores feeding
// one wide load stall store forwarding); results shifted into a 64-bit word 5.2-7 / 2.5 ms; an
// AVX-512 gather (vpgatherdd) 3.0 / 1.5 ms, steady. The plan's own SIMD kernel took 5.6 / 2.7 ms.
#include "kernels/look_up.h"

#include <bit>
#include <cstring>
#include <type_traits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/look_up.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/cache_control.h>  // hwy::FlushStream
#include <hwy/highway.h>
#include "kernels/prefetch-inl.h"
#include "kernels/upper_state-inl.h"
#if HWY_ARCH_X86
#include <immintrin.h>  // AVX-512's permutes; _mm_stream_si64
#endif

HWY_BEFORE_NAMESPACE();
namespace qdq::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

static_assert(std::endian::native == std::endian::little, "codes and packed words are stored little-endian");

// A table entry for results of kYBits: one byte for packed results.
template <int kYBits>
using Entry = std::conditional_t<
    kYBits <= 8, uint8_t,
    std::conditional_t<kYBits == 16, uint16_t, std::conditional_t<kYBits == 32, uint32_t, uint64_t>>>;

// Results shifted into one 64-bit word per store (64 / kYBits of them); a last partial word
// stores only the bytes its results fill.
template <typename XCode, int kYBits>
void LookUpByWords(const XCode* HWY_RESTRICT x, const Entry<kYBits>* HWY_RESTRICT table, uint8_t* HWY_RESTRICT y,
                   uint64_t begin, uint64_t end) {
  constexpr uint64_t kPerWord = 64 / kYBits;
  uint64_t i = begin;
  for (; i + kPerWord <= end; i += kPerWord) {
    uint64_t word = 0;
    // Unrolled whatever kPerWord (GCC kept the 32 of 2-bit results a counted loop, a variable
    // shift and a loop-carried Or each: 16M float16 -> int2 per-tensor took 7.0 ms by table
    // against 4.1 for int4's 16 a word, unrolled; AMD EPYC, AVX2, 2 threads).
#pragma GCC unroll 64
    for (uint64_t j = 0; j < kPerWord; ++j) word |= uint64_t{table[x[i + j]]} << (kYBits * j);
    std::memcpy(y + i * kYBits / 8, &word, sizeof word);
  }
  if (i < end) {
    uint64_t word = 0;
    for (uint64_t j = 0; i + j < end; ++j) word |= uint64_t{table[x[i + j]]} << (kYBits * j);
    std::memcpy(y + i * kYBits / 8, &word, ((end - i) * kYBits + 7) / 8);
  }
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// One 32-bit gather per vector of codes, at byte offset code * sizeof(entry) (the word read there
// holds the entry in its low bytes: little-endian), then narrowed to the result's width; packed
// results are packed in the vector.
// Only on AVX-512, the targets measured: gathers are slow on some AVX2 CPUs (Zen 1 measured a
// gather slower than a scalar loop, 75 against 36 us for 64K codes in cache).
template <typename XCode, int kYBits>
void LookUp(const XCode* HWY_RESTRICT x, const Entry<kYBits>* HWY_RESTRICT table, uint8_t* HWY_RESTRICT y,
            uint64_t begin, uint64_t end) {
  using YEntry = Entry<kYBits>;
  const hn::ScalableTag<uint32_t> du32;
  const hn::RebindToSigned<decltype(du32)> di32;
  const hn::Rebind<XCode, decltype(du32)> dx;
  const hn::Rebind<YEntry, decltype(du32)> dy;
  const hn::Rebind<uint8_t, decltype(du32)> d8;  // packed results: a code per byte, then
  const hn::Repartition<uint16_t, decltype(d8)> d16;  // pairs of codes per 16-bit lane,
  const hn::Rebind<uint8_t, decltype(d16)> dpairs;
  const hn::Repartition<uint32_t, decltype(d16)> d32;  // pairs of pairs per 32-bit lane
  const hn::Rebind<uint8_t, decltype(d32)> dquads;
  const size_t N = hn::Lanes(du32);
  const auto* words = reinterpret_cast<const uint32_t*>(table);
  // The results of codes [i, i + N).
  const auto look_up = [&](uint64_t i) HWY_ATTR {
    const auto offsets = hn::ShiftLeft<sizeof(YEntry) / 2>(hn::PromoteTo(du32, hn::LoadU(dx, x + i)));
    const auto results = hn::GatherOffset(du32, words, hn::BitCast(di32, offsets));
    if constexpr (kYBits == 32) {
      hn::StoreU(results, du32, reinterpret_cast<uint32_t*>(y) + i);
    } else if constexpr (kYBits >= 8) {
      hn::StoreU(hn::TruncateTo(dy, results), dy, reinterpret_cast<YEntry*>(y) + i);
    } else {
      // Packed: the codes truncated to bytes; in each 16-bit lane the odd element's code shifted
      // beside the even one's (the low byte is the packed pair); for 2-bit codes the same once
      // more with pairs in 32-bit lanes.
      const auto codes = hn::TruncateTo(d8, results);
      const auto v16 = hn::BitCast(d16, codes);
      const auto pairs = hn::Or(v16, hn::ShiftRight<8 - kYBits>(v16));
      if constexpr (kYBits == 4) {
        hn::StoreU(hn::TruncateTo(dpairs, pairs), dpairs, y + i / 2);
      } else {
        static_assert(kYBits == 2);
        const auto v32 = hn::BitCast(d32, pairs);  // the bytes above each pair are dropped below
        hn::StoreU(hn::TruncateTo(dquads, hn::Or(v32, hn::ShiftRight<12>(v32))), dquads, y + i / 4);
      }
    }
  };
  uint64_t i = begin;
  // 16-bit codes (QuantizeLinear of float16/bfloat16 x by table) over a long stretch: x's lines
  // are asked for kPrefetchAheadBytes ahead, one request per vector, as the quantize loops do
  // (16M, 2 threads: float16 -> uint8 per-tensor 1.68-1.72 -> 1.44-1.50 ms, bfloat16 -> int4
  // 1.60-1.61 -> 1.41-1.43 ms).
  if (sizeof(XCode) == 2 && (end - begin) * sizeof(XCode) >= kPrefetchedStretchBytes) {
    const uint64_t ahead = kPrefetchAheadBytes / sizeof(XCode);
    for (; i + N + ahead <= end; i += N) {
      PrefetchForLater(x + i + ahead);
      look_up(i);
    }
  }
  for (; i + N <= end; i += N) look_up(i);
  LookUpByWords<XCode, kYBits>(x, table, y, i, end);
}

// Stores the results of whole steps of 32 codes of [begin, end), results(i) those of codes
// [i, i + 32), and returns where it stopped (fewer than 32 codes before end). stream (an output larger than the caches): with
// non-temporal stores from the first 64-byte-aligned result on, the results before it one at a
// time from the table (every entry, 2^8 of them, is readable). Without them a 16M lookup reads
// each line of y before writing it: one per byte to float16, one thread to a core, int4 one per
// byte -> float16 per-tensor took 2x the int8 kernel's time.
template <class Results>
HWY_INLINE uint64_t StoreStepsOfHalfwords(const uint8_t* HWY_RESTRICT x, const uint16_t* HWY_RESTRICT table,
                                          uint16_t* HWY_RESTRICT out, uint64_t begin, uint64_t end, bool stream,
                                          const Results& results) {
  uint64_t i = begin;
  if (stream && reinterpret_cast<uintptr_t>(out) % sizeof(uint16_t) == 0) {
    for (; i < end && reinterpret_cast<uintptr_t>(out + i) % 64 != 0; ++i) out[i] = table[x[i]];
    for (; i + 32 <= end; i += 32) _mm512_stream_si512(reinterpret_cast<__m512i*>(out + i), results(i));
    return i;
  }
  for (; i + 32 <= end; i += 32) _mm512_storeu_si512(out + i, results(i));
  return i;
}

// 8-bit codes to 16-bit results (DequantizeLinear of 8-bit codes to float16 / bfloat16) without a
// gather: the 256 entries are eight registers of 32, and vpermt2w (AVX512BW) looks 32 codes up in a
// pair of them by the code's low six bits; the codes' bits 6 and 7 then pick among the four pairs'
// results. Returns where it stopped (StoreStepsOfHalfwords); the caller's lookup takes the rest.
// Measured on the AVX-512 Xeon, look_up_codes over 64K random byte codes to 16-bit results in
// cache, one thread, best of 20,000: the gather took 9.2 us (14 cycles or so per 32 codes), this
// 5.5 us.
uint64_t LookUpBytesToHalfwordsByPermutes(const uint8_t* HWY_RESTRICT x, const uint16_t* HWY_RESTRICT table,
                                          uint8_t* HWY_RESTRICT y, uint64_t begin, uint64_t end, bool stream) {
  __m512i pairs[8];
  for (int r = 0; r < 8; ++r) pairs[r] = _mm512_loadu_si512(table + 32 * r);
  const __m512i bit6 = _mm512_set1_epi16(0x40);
  const __m512i bit7 = _mm512_set1_epi16(0x80);
  return StoreStepsOfHalfwords(x, table, reinterpret_cast<uint16_t*>(y), begin, end, stream, [&](uint64_t i) HWY_ATTR {
    const __m512i codes = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)));
    const __m512i from0 = _mm512_permutex2var_epi16(pairs[0], codes, pairs[1]);  // codes 0-63
    const __m512i from64 = _mm512_permutex2var_epi16(pairs[2], codes, pairs[3]);  // 64-127
    const __m512i from128 = _mm512_permutex2var_epi16(pairs[4], codes, pairs[5]);  // 128-191
    const __m512i from192 = _mm512_permutex2var_epi16(pairs[6], codes, pairs[7]);  // 192-255
    const __mmask32 has6 = _mm512_test_epi16_mask(codes, bit6);
    const __mmask32 has7 = _mm512_test_epi16_mask(codes, bit7);
    const __m512i low = _mm512_mask_blend_epi16(has6, from0, from64);
    const __m512i high = _mm512_mask_blend_epi16(has6, from128, from192);
    return _mm512_mask_blend_epi16(has7, low, high);
  });
}

// The same where a code's low five bits decide its entry (index_bits <= 5: 4- and 2-bit codes one
// per byte): one vpermw over the first 32 entries, which reads those bits only. Whole per-tensor
// DQ calls, one thread: 64K int4 one per byte -> bfloat16 5.96 -> 3.37 us (by the eight-register
// lookup before), -> float16 4.43 -> 3.39 us (by the kernel before); 16M int4 -> float16, 2
// threads: 1.42 -> 0.90 ms.
uint64_t LookUpLowBitsToHalfwordsByPermute(const uint8_t* HWY_RESTRICT x, const uint16_t* HWY_RESTRICT table,
                                           uint8_t* HWY_RESTRICT y, uint64_t begin, uint64_t end, bool stream) {
  const __m512i entries = _mm512_loadu_si512(table);
  return StoreStepsOfHalfwords(x, table, reinterpret_cast<uint16_t*>(y), begin, end, stream, [&](uint64_t i) HWY_ATTR {
    const __m512i codes = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)));
    return _mm512_permutexvar_epi16(codes, entries);
  });
}

// 64-bit results (four 16-bit results of a byte of 2-bit codes): a 64-bit gather per vector.
template <typename XCode>
void LookUpWords(const XCode* HWY_RESTRICT x, const uint64_t* HWY_RESTRICT table, uint8_t* HWY_RESTRICT y,
                 uint64_t begin, uint64_t end) {
  const hn::ScalableTag<uint64_t> du64;
  const hn::RebindToSigned<decltype(du64)> di64;
  const hn::Rebind<uint32_t, decltype(du64)> du32;
  const hn::Rebind<XCode, decltype(du64)> dx;
  const size_t N = hn::Lanes(du64);
  uint64_t i = begin;
  for (; i + N <= end; i += N) {
    const auto codes = hn::PromoteTo(du64, hn::PromoteTo(du32, hn::LoadU(dx, x + i)));  // no direct 8 -> 64
    const auto indices = hn::BitCast(di64, codes);
    hn::StoreU(hn::GatherIndex(du64, table, indices), du64, reinterpret_cast<uint64_t*>(y) + i);
  }
  LookUpByWords<XCode, 64>(x, table, y, i, end);
}
#else
template <typename XCode>
void LookUpWords(const XCode* x, const uint64_t* table, uint8_t* y, uint64_t begin, uint64_t end) {
  LookUpByWords<XCode, 64>(x, table, y, begin, end);
}

template <typename XCode, int kYBits>
void LookUp(const XCode* x, const Entry<kYBits>* table, uint8_t* y, uint64_t begin, uint64_t end) {
  LookUpByWords<XCode, kYBits>(x, table, y, begin, end);
}
#endif

// 64-bit results into a large output (look_up_codes' stream) with non-temporal stores, one
// word at a time (movnti): packed 2-bit x to 16-bit results and packed 4-bit x to float32, whose
// entry a byte of x indexes. For 2-bit x a word from the 2 KiB table per byte of x costs less
// than building its four results in vectors
// (16M to float16, 2 threads, AVX2: 3.3 ms with ordinary stores, 2.4 ms by shuffles, whose 64K
// calls took 19 us against the word loop's 12).
template <typename XCode>
void LookUpWordsStreamed(const XCode* HWY_RESTRICT x, const uint64_t* HWY_RESTRICT table, uint8_t* HWY_RESTRICT y,
                         uint64_t begin, uint64_t end) {
#if HWY_ARCH_X86_64
  if (reinterpret_cast<uintptr_t>(y) % sizeof(uint64_t) == 0) {
    auto* words = reinterpret_cast<long long*>(y);
    for (uint64_t i = begin; i < end; ++i) _mm_stream_si64(words + i, static_cast<long long>(table[x[i]]));
    return;
  }
#endif
  LookUpWords(x, table, y, begin, end);
}

// 4- and 2-bit codes to 16-bit results by byte shuffles, on every target (AVX-512 takes its vpermw
// above first for codes one per byte): the sixteen results' low bytes and high bytes
// (code_results[c], c a code's low four bits) are two 16-byte tables, repeated in every 128-bit
// block, which TableLookupBytes (pshufb) reads by index bytes below 16 and answers 0 for index
// bytes with bit 7 set. A byte of x widened to a lane of its results (kCodesPerByte 16-bit
// results: one code per byte, or 4- or 2-bit codes packed the ONNX way, element k of the byte in
// its bits 4k or 2k and its result in the lane's halfword k) gives each code two indices: in
// 0x80cc, whose lookup in the low-byte table fills the halfword's low byte alone, and 0xcc80,
// whose lookup in the high-byte table fills its high byte alone (cc: the code). [begin, end)
// counts bytes of x. stream: non-temporal stores from the first vector-aligned result.
// On AVX2 (2 threads) 4- and 2-bit codes one per byte to bfloat16 took 26-30 us per 64K codes in
// the word loop (LookUpByWords) and 4.3-4.7 ms per 16M; this 9.3 us and 1.9-2.1 ms streamed.
template <int kCodesPerByte>
void LookUpLowBitsToHalfwordsByShuffle(const uint8_t* HWY_RESTRICT x, const uint16_t* HWY_RESTRICT code_results,
                                       uint8_t* HWY_RESTRICT y, uint64_t begin, uint64_t end, bool stream) {
  using Lane = std::conditional_t<kCodesPerByte == 1, uint16_t, std::conditional_t<kCodesPerByte == 2, uint32_t, uint64_t>>;
  constexpr int kCodeBits = kCodesPerByte == 1 ? 4 : 8 / kCodesPerByte;  // the bits that decide a result
  constexpr unsigned kCodeMask = (1u << kCodeBits) - 1;
  auto* out = reinterpret_cast<Lane*>(y);
  const auto by_lanes = [&](uint64_t from, uint64_t to) {  // a byte's results at a time
    for (uint64_t j = from; j < to; ++j) {
      Lane lane = 0;
      for (int k = 0; k < kCodesPerByte; ++k) {
        lane |= static_cast<Lane>(static_cast<Lane>(code_results[(x[j] >> (k * kCodeBits)) & kCodeMask]) << (16 * k));
      }
      std::memcpy(out + j, &lane, sizeof lane);
    }
  };
#if HWY_TARGET == HWY_SCALAR
  (void)stream;
  by_lanes(begin, end);  // one-lane vectors have no bytes to shuffle
#else
  const hn::ScalableTag<Lane> d;
  const hn::Repartition<uint8_t, decltype(d)> d8;
  const hn::Rebind<uint8_t, decltype(d)> dbytes;
  HWY_ALIGN uint8_t low_bytes[16];
  HWY_ALIGN uint8_t high_bytes[16];
  for (int c = 0; c < 16; ++c) {
    low_bytes[c] = static_cast<uint8_t>(code_results[c]);
    high_bytes[c] = static_cast<uint8_t>(code_results[c] >> 8);
  }
  const auto low_table = hn::LoadDup128(d8, low_bytes);
  const auto high_table = hn::LoadDup128(d8, high_bytes);
  const auto zero_high = hn::Set(d, static_cast<Lane>(0x8000800080008000ull));  // index bytes that look up 0
  const auto zero_low = hn::Set(d, static_cast<Lane>(0x0080008000800080ull));
  const size_t N = hn::Lanes(d);
  const auto results_at = [&](uint64_t i) HWY_ATTR {
    // The bytes' codes, code k in the low bits of halfword k.
    decltype(hn::Zero(d)) codes;
    if constexpr (kCodesPerByte == 1) {
      codes = hn::And(hn::PromoteTo(d, hn::LoadU(dbytes, x + i)), hn::Set(d, kCodeMask));
    } else if constexpr (kCodesPerByte == 2) {
      const auto bytes = hn::PromoteTo(d, hn::LoadU(dbytes, x + i));
      codes = hn::Or(hn::And(bytes, hn::Set(d, 0x0F)), hn::ShiftLeft<12>(hn::And(bytes, hn::Set(d, 0xF0))));
    } else {
      static_assert(kCodesPerByte == 4);
      const auto bytes = hn::PromoteTo(d, hn::PromoteTo(hn::Rebind<uint32_t, decltype(d)>(), hn::LoadU(dbytes, x + i)));
      codes = hn::Or(hn::Or(hn::And(bytes, hn::Set(d, 0x03)), hn::ShiftLeft<14>(hn::And(bytes, hn::Set(d, 0x0C)))),
                     hn::Or(hn::ShiftLeft<28>(hn::And(bytes, hn::Set(d, 0x30))),
                            hn::ShiftLeft<42>(hn::And(bytes, hn::Set(d, 0xC0)))));
    }
    const auto low = hn::TableLookupBytes(low_table, hn::BitCast(d8, hn::Or(codes, zero_high)));
    const auto high = hn::TableLookupBytes(high_table, hn::BitCast(d8, hn::Or(hn::ShiftLeft<8>(codes), zero_low)));
    return hn::BitCast(d, hn::Or(low, high));
  };
  uint64_t i = begin;
  if (stream && reinterpret_cast<uintptr_t>(out + i) % sizeof(Lane) == 0) {
    // Ordinary stores up to the first vector-aligned result, non-temporal ones from there.
    const size_t misaligned = reinterpret_cast<uintptr_t>(out + i) % (N * sizeof(Lane));
    const uint64_t head = std::min<uint64_t>(end - i, (N * sizeof(Lane) - misaligned) % (N * sizeof(Lane)) / sizeof(Lane));
    by_lanes(i, i + head);
    for (i += head; i + N <= end; i += N) hn::Stream(results_at(i), d, out + i);
  }
  for (; i + N <= end; i += N) hn::StoreU(results_at(i), d, out + i);
  by_lanes(i, end);
#endif
}

template <typename XCode>
void LookUpFrom(const XCode* x, const void* table, unsigned y_bits, uint8_t* y, uint64_t begin, uint64_t end,
                [[maybe_unused]] unsigned index_bits, [[maybe_unused]] bool stream) {
  switch (y_bits) {
    case 2: return LookUp<XCode, 2>(x, static_cast<const uint8_t*>(table), y, begin, end);
    case 4: return LookUp<XCode, 4>(x, static_cast<const uint8_t*>(table), y, begin, end);
    case 8: return LookUp<XCode, 8>(x, static_cast<const uint8_t*>(table), y, begin, end);
    case 16:
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
      if constexpr (sizeof(XCode) == 1) {
        begin = index_bits <= 5
                    ? LookUpLowBitsToHalfwordsByPermute(x, static_cast<const uint16_t*>(table), y, begin, end, stream)
                    : LookUpBytesToHalfwordsByPermutes(x, static_cast<const uint16_t*>(table), y, begin, end, stream);
      }
#endif
      if constexpr (sizeof(XCode) == 1) {
        if (index_bits <= 4) {
          return LookUpLowBitsToHalfwordsByShuffle<1>(x, static_cast<const uint16_t*>(table), y, begin, end, stream);
        }
      }
      return LookUp<XCode, 16>(x, static_cast<const uint16_t*>(table), y, begin, end);
    case 32: return LookUp<XCode, 32>(x, static_cast<const uint32_t*>(table), y, begin, end);
    default:
      if (stream) return LookUpWordsStreamed(x, static_cast<const uint64_t*>(table), y, begin, end);
      return LookUpWords(x, static_cast<const uint64_t*>(table), y, begin, end);
  }
}

void LookUpCodes(const void* x, unsigned x_bytes, const void* table, unsigned y_bits, void* y, uint64_t begin,
                 uint64_t end, unsigned index_bits, bool stream) {
  const CleanUpperStateOnReturn clean_upper_state;
  auto* out = static_cast<uint8_t*>(y);
  if (x_bytes == 2) return LookUpFrom(static_cast<const uint16_t*>(x), table, y_bits, out, begin, end, index_bits, stream);
  LookUpFrom(static_cast<const uint8_t*>(x), table, y_bits, out, begin, end, index_bits, stream);
}

void LookUpPackedCodesToHalfwords(const void* x, unsigned code_bits, const uint16_t* code_results, void* y,
                                  uint64_t begin, uint64_t end, bool stream) {
  const CleanUpperStateOnReturn clean_upper_state;
  const auto* bytes = static_cast<const uint8_t*>(x);
  if (code_bits == 4) return LookUpLowBitsToHalfwordsByShuffle<2>(bytes, code_results, static_cast<uint8_t*>(y), begin, end, stream);
  LookUpLowBitsToHalfwordsByShuffle<4>(bytes, code_results, static_cast<uint8_t*>(y), begin, end, stream);
}

// LookUpLowBitsToHalfwordsByShuffle's byte shuffle is one instruction wherever there are vectors.
bool LooksUpLowBitsInVectors() { return HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128; }

// Whether LookUp gathers on this target (AVX-512), where 16-bit codes look up.
bool LooksUpByGathers() {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  return true;
#else
  return false;
#endif
}

bool DequantizesByteCodesToHalfwordsByTable() { return HWY_TARGET != HWY_AVX2; }

}  // namespace HWY_NAMESPACE
}  // namespace qdq::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qdq::kernels {

HWY_EXPORT(LookUpCodes);
HWY_EXPORT(LooksUpLowBitsInVectors);
HWY_EXPORT(LooksUpByGathers);
HWY_EXPORT(DequantizesByteCodesToHalfwordsByTable);
HWY_EXPORT(LookUpPackedCodesToHalfwords);

void look_up_codes(const void* x, unsigned x_bytes, const void* table, unsigned y_bits, void* y, uint64_t begin,
                   uint64_t end, unsigned index_bits, bool stream) {
  HWY_DYNAMIC_DISPATCH(LookUpCodes)(x, x_bytes, table, y_bits, y, begin, end, index_bits, stream);
}

void stream_fence() { hwy::FlushStream(); }

bool looks_up_low_bits_in_vectors() { return HWY_DYNAMIC_DISPATCH(LooksUpLowBitsInVectors)(); }

bool looks_up_by_gathers() { return HWY_DYNAMIC_DISPATCH(LooksUpByGathers)(); }

bool dequantizes_byte_codes_to_halfwords_by_table() {
  return HWY_DYNAMIC_DISPATCH(DequantizesByteCodesToHalfwordsByTable)();
}

void look_up_packed_codes_to_halfwords(const void* x, unsigned code_bits, const uint16_t* code_results, void* y,
                                       uint64_t begin, uint64_t end, bool stream) {
  HWY_DYNAMIC_DISPATCH(LookUpPackedCodesToHalfwords)(x, code_bits, code_results, y, begin, end, stream);
}

}  // namespace qdq::kernels
#endif  // HWY_ONCE
