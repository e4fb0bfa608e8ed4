#pragma once
// One query head attending over a F16 K/V cache, computed the way llama.cpp's CPU backend
// does it by default (flash attention, F16 cache): q rounded to F16, scores accumulated in
// fp32, online softmax, and the weighted sum of V kept in an F16 accumulator that is rounded
// after every position. The goldens in ../shared/reference were made that way; an fp32
// attention differs from them by up to 5e-3 on stories260K, past its 1e-3 tolerance.
#include <cstddef>
#include <cstdint>

namespace zinc::cpu {

// k, v: row 0 of this kv head; rows are `stride` halves apart; positions [0, n).
using AttendHeadFn = void (*)(const float* q, const uint16_t* k, const uint16_t* v, size_t stride, int32_t n,
                              int32_t headDim, float scale, float* out);

void attendHeadF16Generic(const float* q, const uint16_t* k, const uint16_t* v, size_t stride, int32_t n,
                          int32_t headDim, float scale, float* out);
void attendHeadF16Avx2(const float* q, const uint16_t* k, const uint16_t* v, size_t stride, int32_t n,
                       int32_t headDim, float scale, float* out);  // headDim % 8 == 0

// The AVX2 form when the quant kernels run AVX2 and headDim allows it.
AttendHeadFn selectAttendHead(int32_t headDim);

}  // namespace zinc::cpu
