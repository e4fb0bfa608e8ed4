// AVX-512 VNNI builds of the K-quant multi-token kernels (quant_kquant_tiles.h): the same
// code as the AVX2 ones with _mm256_dpwssd_epi32 (VPDPWSSD, 256-bit through AVX512VL)
// fusing the madd and add of every (sub-block, token) step, and 8 tokens per unpacked weight
// block (AVX-512 has 32 vector registers: 8 token sums stay in registers). Compiled with
// -mavx512f -mavx512vl -mavx512bw -mavx512vnni and called only after quant_dot.cpp's feature
// check. Bit-identical to the AVX2 kernels (see quant_kquant_tiles.h).
#include "runtime/cpu/quant_kernels.h"
#include "runtime/cpu/quant_kquant_tiles.h"

namespace zinc::cpu::kernels::vnni {
namespace {

using namespace avx2;

// int32 sums += int16 pair products * int16 scales, in one instruction.
struct Dpwssd {
    static __m256i add(__m256i sum, __m256i p16, __m256i scales) { return _mm256_dpwssd_epi32(sum, p16, scales); }
};

constexpr int kTokenGroup = 8;

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
