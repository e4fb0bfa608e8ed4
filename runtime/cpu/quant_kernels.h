#pragma once
// Internal to the cpu tier's quantized matmul (quant_dot.cpp): the per-type row kernels of
// each implementation. Every kernel computes y[r] = dot(row r, act) for r in [0, rows).
// The avx2 kernels live in their own files, compiled with -mavx2 -mfma -mf16c, and are only
// called after the CPU feature check.
#include <cstddef>
#include <cstdint>

#include "model/gguf/ggml_type.h"

namespace zinc::cpu::kernels {

using MatVecFn = void (*)(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y);
// Many tokens: y[t * yStride + r] = dot(row r, act row t), activation rows packed back to
// back; equal to MatVecFn per token bit for bit.
using MatMulFn = void (*)(int64_t k, const void* w, size_t wStride, int64_t rows, const void* acts, int64_t nTokens,
                          float* y, size_t yStride);

#define ZINC_QUANT_KERNEL_LIST(X) \
    X(F32) X(F16) X(BF16) X(Q4_0) X(Q4_1) X(Q5_0) X(Q5_1) X(Q8_0) X(Q4_K) X(Q5_K) X(Q6_K)

// Types with portable kernels only (quant_generic_lowbit.cpp); the avx2 choice falls back to them.
#define ZINC_QUANT_GENERIC_ONLY_LIST(X) X(Q2_K) X(Q3_K) X(IQ4_NL) X(IQ4_XS)

#define ZINC_DECLARE_KERNEL(T) \
    void matVec##T(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y);
#define ZINC_DECLARE_MULTI_TOKEN_KERNEL(T)                                                                           \
    void matMul##T(int64_t k, const void* w, size_t wStride, int64_t rows, const void* acts, int64_t nTokens, float* y, \
                   size_t yStride);
// Types with AVX2 multi-token kernels.
#define ZINC_MULTI_TOKEN_LIST(X) X(Q4_K) X(Q5_K) X(Q6_K) X(Q8_0) X(Q4_0) X(Q5_0)

namespace generic {
// y[r] = row(pointer to weight row r) for r in [0, rows): the loop every portable kernel shares.
template <typename Row>
void forEachRow(const void* w, size_t wStride, int64_t rows, float* y, Row row) {
    const auto* base = static_cast<const uint8_t*>(w);
    for (int64_t r = 0; r < rows; ++r) y[r] = row(base + static_cast<size_t>(r) * wStride);
}
ZINC_QUANT_KERNEL_LIST(ZINC_DECLARE_KERNEL)
ZINC_QUANT_GENERIC_ONLY_LIST(ZINC_DECLARE_KERNEL)
}  // namespace generic
namespace avx2 {
ZINC_QUANT_KERNEL_LIST(ZINC_DECLARE_KERNEL)
// Activation quantizers byte-identical to model/quant/quantize_activations.h (n whole blocks).
void quantizeQ8_0(const float* x, void* out, int64_t n);
void quantizeQ8_1(const float* x, void* out, int64_t n);
void quantizeQ8_K(const float* x, void* out, int64_t n);
void convertF16(const float* x, void* out, int64_t n);
// Multi-token kernels (each weight block unpacked once for several tokens).
ZINC_MULTI_TOKEN_LIST(ZINC_DECLARE_MULTI_TOKEN_KERNEL)
}  // namespace avx2
// The same multi-token K-quant kernels built for AVX-512 VNNI (quant_vnni_kquants.cpp),
// bit-identical to avx2's; only called when the CPU has AVX512F/VL/BW + VNNI.
namespace vnni {
ZINC_DECLARE_MULTI_TOKEN_KERNEL(Q4_K) ZINC_DECLARE_MULTI_TOKEN_KERNEL(Q5_K) ZINC_DECLARE_MULTI_TOKEN_KERNEL(Q6_K)
}  // namespace vnni

#undef ZINC_DECLARE_KERNEL
#undef ZINC_DECLARE_MULTI_TOKEN_KERNEL

// The kernel for a weight type, or nullptr when the type has none.
MatVecFn genericKernel(model::GgmlType weight);
MatVecFn avx2Kernel(model::GgmlType weight);
// The multi-token AVX2 kernel for a weight type, or nullptr (matMul then loops matVec).
MatMulFn avx2MultiTokenKernel(model::GgmlType weight);
// The AVX-512 VNNI multi-token kernel for a weight type, or nullptr (then avx2's is used).
MatMulFn vnniMultiTokenKernel(model::GgmlType weight);

}  // namespace zinc::cpu::kernels
