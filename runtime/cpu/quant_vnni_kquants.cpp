// AVX-512 VNNI builds of the K-quant multi-token kernels (quant_kquant_tiles.h): the same
// code as the AVX2 ones with _mm256_dpwssd_epi32 (VPDPWSSD, 256-bit through AVX512VL)
// fusing the madd and add of every (sub-block, token) step (4 tokens per unpacked weight
// block, as on AVX2: 8 measured slower on Zen 4, 72 vs 114 G/s for Q4_K). Compiled with
// -mavx512f -mavx512vl -mavx512bw -mavx512vnni and called only after quant_dot.cpp's feature
// check. Bit-identical to the AVX2 kernels (see quant_kquant_tiles.h).
#include "runtime/cpu/quant_kernels.h"
#include "runtime/cpu/quant_kquant_tiles.h"

namespace zinc::cpu::kernels::vnni {
namespace {

using namespace avx2;

// quant_kquant_tiles.h's Acc with VNNI: dpwssd multiplies maddubs' int16 pair sums by the
// scales and adds them to the int32 sums in one instruction (AVX2 needs madd + add).
// (Measured slower on Zen 4: dpbusd straight to int32 and one dpwssd per two groups, which
// saves a multiply but adds a shift and a blend per group pair: 96 vs 114 G/s for Q4_K.)
struct Dpwssd {
    static __m256i addPair(__m256i sum, __m256i qA, __m256i aA, __m256i sA, __m256i qB, __m256i aB, __m256i sB) {
        sum = _mm256_dpwssd_epi32(sum, _mm256_maddubs_epi16(qA, aA), sA);
        return _mm256_dpwssd_epi32(sum, _mm256_maddubs_epi16(qB, aB), sB);
    }
};

constexpr int kTokenGroup = 4;

}  // namespace

void matMulQ4_K(int64_t k, const void* w, size_t wStride, int64_t rows, const void* acts, int64_t nTokens, float* y,
                size_t yStride) {
    multiToken<NibbleKRows<BlockQ4_K, Dpwssd>, kTokenGroup>(k, w, wStride, rows, acts, nTokens, y, yStride, true);
}
void matMulQ5_K(int64_t k, const void* w, size_t wStride, int64_t rows, const void* acts, int64_t nTokens, float* y,
                size_t yStride) {
    multiToken<NibbleKRows<BlockQ5_K, Dpwssd>, kTokenGroup>(k, w, wStride, rows, acts, nTokens, y, yStride, true);
}
void matMulQ6_K(int64_t k, const void* w, size_t wStride, int64_t rows, const void* acts, int64_t nTokens, float* y,
                size_t yStride) {
    multiToken<Q6KRows<Dpwssd>, kTokenGroup>(k, w, wStride, rows, acts, nTokens, y, yStride, false);
}

}  // namespace zinc::cpu::kernels::vnni
