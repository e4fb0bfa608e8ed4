#pragma once
// The cpu tier's matmul primitives: a weight row (any computable GGUF type) times an
// activation row quantized the way llama.cpp's CPU backend quantizes it (ggml's
// vec_dot_type), so the cpu tier reproduces ggml's numbers: the integer part of every block
// dot product is bit-identical to ggml's; only the order of float accumulation differs.
//
// Callers split rows across threads and call these on row ranges; nothing here threads.
// Formats: ggml/src/ggml-common.h and ggml-cpu/arch/x86/quants.c (MIT).
#include <cstddef>
#include <cstdint>

#include "model/gguf/ggml_type.h"

namespace zinc::cpu {

// Which activation format a weight type multiplies against (as ggml's vec_dot_type):
// K types and IQ4_XS -> Q8_K; Q8_0/Q4_0/Q5_0/IQ4_NL -> Q8_0; Q4_1/Q5_1 -> Q8_1; F16 -> F16; BF16 -> BF16;
// F32 -> F32. Throws model::ModelError for a weight type the cpu tier cannot multiply.
model::GgmlType activationType(model::GgmlType weight);
// Bytes of one activation row of k elements for this weight type.
size_t activationRowBytes(model::GgmlType weight, int64_t k);
// Converts k floats into the activation format of `weight` (activationRowBytes bytes).
void quantizeActivationRow(model::GgmlType weight, const float* x, void* out, int64_t k);

// Converts n floats to F16, rounding to nearest even as model::convertRowF16 does (F16C where
// the AVX2 kernels run: the same bits, NaN payloads aside). The cpu tier's F16 KV cache rows.
void convertRowToHalf(const float* x, uint16_t* out, int64_t n);

// y[r] = dot(weight row r, act) for r in [0, rows); weight rows are wStride bytes apart,
// each k elements (a whole number of blocks); act is one row from quantizeActivationRow.
void matVec(model::GgmlType weight, int64_t k, const void* w, size_t wStride, int64_t rows,
            const void* act, float* y);

// Many tokens (prefill): y[t * yStride + r] = dot(weight row r, act row t), act rows
// activationRowBytes(weight, k) apart. Tiled so each weight tile is reused from cache by
// all tokens; gives the same value as matVec for every (t, r), bit for bit.
void matMul(model::GgmlType weight, int64_t k, const void* w, size_t wStride, int64_t rows,
            const void* acts, int64_t nTokens, float* y, size_t yStride);

// Which implementation is active ("avx2" or "generic"). The choice is made once, at first
// use, from the CPU's features (AVX2 + FMA + F16C); forceGenericQuantKernels(true) switches
// to the portable kernels (tests, benchmarks), false returns to the detected choice.
const char* quantKernelName();
void forceGenericQuantKernels(bool on);
// matMul's multi-token kernels for Q4_K/Q5_K/Q6_K: "avx512vnni" where the CPU has AVX512F,
// VL, BW and VNNI (bit-identical to the AVX2 ones, faster), else quantKernelName().
// forceAvx2MultiTokenKernels(true) keeps the AVX2 ones on such a CPU (tests, benchmarks).
const char* multiTokenKernelName();
void forceAvx2MultiTokenKernels(bool on);

}  // namespace zinc::cpu
