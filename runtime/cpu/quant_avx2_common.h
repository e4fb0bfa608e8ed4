#pragma once
// Helpers shared by the AVX2 row kernels (quant_avx2_*.cpp only: those files are compiled
// with -mavx2 -mfma -mf16c). Everything here has internal linkage on purpose: an inline
// function with external linkage compiled with AVX2 could be picked by the linker for a
// portable caller and fault on a CPU without AVX2. For the same reason the AVX2 files use
// _cvtsh_ss rather than model::fp16ToFp32.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace zinc::cpu::kernels::avx2 {
namespace {

// Measured on Xeon (single thread, weights streamed from DRAM; see tests/quant/quant_bench):
// without software prefetch the kernels reach about half the read bandwidth, with it 70-85%.
// Processing 4 rows together (sharing activation loads) pays for the cheap-to-decode 32-block
// types; the K-quant kernels hold more state per row and are faster one row at a time.
constexpr int kLegacyRowGroup = 4;
// Distances were tuned by measurement (512..2048 tried; 1.5 KiB best for the K-quants).
constexpr int kPrefetchLegacy = 768;  // bytes ahead in each row
constexpr int kPrefetchK = 1536;

// Prefetches the bytes of one block, Ahead bytes past p.
template <int Ahead, int BlockBytes>
inline void prefetchAhead(const void* p) {
    const char* q = static_cast<const char*>(p) + Ahead;
    for (int off = 0; off < BlockBytes; off += 64) _mm_prefetch(q + off, _MM_HINT_T0);
}

inline float halfToFloat(uint16_t h) { return _cvtsh_ss(h); }

// Stores the horizontal sums of n (1..4) accumulators into y[0..n). Rows beyond n are fed
// zeros, so a row's sum is computed by the same additions whether it was processed alone or
// in a group of four (matMul and matVec then agree bit for bit).
inline void storeRowSums(const __m256* acc, int n, float* y) {
    const __m256 zero = _mm256_setzero_ps();
    const __m256 a0 = acc[0];
    const __m256 a1 = n > 1 ? acc[1] : zero;
    const __m256 a2 = n > 2 ? acc[2] : zero;
    const __m256 a3 = n > 3 ? acc[3] : zero;
    const __m256 t = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
    const __m128 s = _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
    alignas(16) float out[4];
    _mm_store_ps(out, s);
    for (int r = 0; r < n; ++r) y[r] = out[r];
}

// Signed int8 x int8 dot of 32 pairs, as 8 int32 partial sums. maddubs needs an unsigned
// operand, so the sign of x moves onto y (ggml's mul_sum_i8_pairs). Exact unless y holds
// -128 where x < 0, which no activation quantizer here produces.
inline __m256i dotI8(__m256i x, __m256i y) {
    const __m256i p16 = _mm256_maddubs_epi16(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
    return _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
}

// Unsigned x signed int8 dot of 32 pairs, as 8 int32 partial sums. The unsigned values are at
// most 63 (6-bit quants), so pair sums fit maddubs's saturating int16.
inline __m256i dotU8I8(__m256i u, __m256i s) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}

// 16 packed bytes -> 32 bytes: low nibbles in bytes 0..15, high nibbles in 16..31.
inline __m256i nibblesToBytes(const uint8_t* p) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m256i both = _mm256_inserti128_si256(_mm256_castsi128_si256(v), _mm_srli_epi16(v, 4), 1);
    return _mm256_and_si256(both, _mm256_set1_epi8(0x0f));
}

// 32 bits -> 32 bytes, 0xff where the bit is set (bit j -> byte j).
inline __m256i bitsToBytes(const uint8_t* p) {
    uint32_t bits;
    __builtin_memcpy(&bits, p, sizeof(bits));
    const __m256i spread = _mm256_shuffle_epi8(
        _mm256_set1_epi32(static_cast<int>(bits)),
        _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0));
    const __m256i bitOfByte = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
    return _mm256_cmpeq_epi8(_mm256_and_si256(spread, bitOfByte), bitOfByte);
}

inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// Runs group(first row, y) over rows in groups of G, then single(row, y) on the rest.
template <int G, typename Group, typename Single>
inline void forRowGroups(const void* w, size_t wStride, int64_t rows, float* y, Group group, Single single) {
    const auto* base = static_cast<const uint8_t*>(w);
    int64_t r = 0;
    for (; r + G <= rows; r += G) group(base + static_cast<size_t>(r) * wStride, y + r);
    for (; r < rows; ++r) single(base + static_cast<size_t>(r) * wStride, y + r);
}

}  // namespace
}  // namespace zinc::cpu::kernels::avx2
