#pragma once
// One query head attending over a F16 K/V cache, computed the way llama.cpp's CPU backend
// does it by default (flash attention, F16 cache): q rounded to F16, scores accumulated in
// fp32, online softmax, and the weighted sum of V kept in an F16 accumulator that is rounded
// after every position. The goldens in ../shared/reference were made that way; an fp32
// attention differs from them by up to 5e-3 on stories260K, past its 1e-3 tolerance.
#include <cstddef>
#include <cstdint>

namespace zinc::cpu {

// The cache rows a query attends to, in position order: n rows from row `first`, wrapping to
// row 0 at `slots` (a sliding-window layer's ring, graph/kv_layout.h; a global layer never wraps).
struct KeyRows {
    int32_t first = 0, n = 0, slots = 0;
    size_t row(int32_t p) const { return static_cast<size_t>(first + p < slots ? first + p : first + p - slots); }
};

// k, v: row 0 of this kv head in the layer's cache; rows are `stride` halves apart.
using AttendHeadFn = void (*)(const float* q, const uint16_t* k, const uint16_t* v, size_t stride, KeyRows rows,
                              int32_t headDim, float scale, float* out);

void attendHeadF16Generic(const float* q, const uint16_t* k, const uint16_t* v, size_t stride, KeyRows rows,
                          int32_t headDim, float scale, float* out);
void attendHeadF16Avx2(const float* q, const uint16_t* k, const uint16_t* v, size_t stride, KeyRows rows,
                       int32_t headDim, float scale, float* out);  // headDim % 8 == 0

// Two query heads of the same kv head (q and out: the second head at + headDim), each with
// exactly attendHeadF16Avx2's result; the K and V rows are converted from F16 once for both.
void attendHeadPairF16Avx2(const float* q, const uint16_t* k, const uint16_t* v, size_t stride, KeyRows rows,
                           int32_t headDim, float scale, float* out);  // headDim % 8 == 0

// The AVX2 form when the quant kernels run AVX2 and headDim allows it.
AttendHeadFn selectAttendHead(int32_t headDim);
// attendHeadPairF16Avx2 where selectAttendHead picks the AVX2 form, else nullptr.
AttendHeadFn selectAttendHeadPair(int32_t headDim);

}  // namespace zinc::cpu
