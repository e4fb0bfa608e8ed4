#include <cmath>
#include <cstring>
#include <vector>

#include "model/quant/fp16.h"
#include "runtime/cpu/attention_kernel.h"
#include "runtime/cpu/quant_dot.h"

namespace zinc::cpu {
namespace {
float roundToHalf(float x) { return model::fp16ToFp32(model::fp32ToFp16(x)); }
}  // namespace

void attendHeadF16Generic(const float* q, const uint16_t* k, const uint16_t* v, size_t stride, KeyRows rows,
                          int32_t headDim, float scale, float* out) {
    thread_local std::vector<float> q16, acc;
    q16.resize(static_cast<size_t>(headDim));
    acc.assign(static_cast<size_t>(headDim), 0.0f);
    for (int32_t i = 0; i < headDim; ++i) q16[static_cast<size_t>(i)] = roundToHalf(q[i]);
    float maxScore = -INFINITY, sum = 0.0f;
    for (int32_t p = 0; p < rows.n; ++p) {
        const uint16_t* kr = k + rows.row(p) * stride;
        const uint16_t* vr = v + rows.row(p) * stride;
        float s = 0.0f;
        for (int32_t i = 0; i < headDim; ++i) s += model::fp16ToFp32(kr[i]) * q16[static_cast<size_t>(i)];
        s *= scale;
        float ms = 1.0f, vs = 1.0f;
        if (s > maxScore) {
            ms = std::exp(maxScore - s);
            maxScore = s;
            for (auto& a : acc) a = roundToHalf(a * ms);
        } else {
            vs = std::exp(s - maxScore);
        }
        for (int32_t i = 0; i < headDim; ++i)
            acc[static_cast<size_t>(i)] = roundToHalf(acc[static_cast<size_t>(i)] + model::fp16ToFp32(vr[i]) * vs);
        sum = sum * ms + vs;
    }
    const float inv = sum > 0 ? 1.0f / sum : 0.0f;
    for (int32_t i = 0; i < headDim; ++i) out[i] = acc[static_cast<size_t>(i)] * inv;
}

AttendHeadFn selectAttendHead(int32_t headDim) {
    if (headDim % 8 == 0 && std::strcmp(quantKernelName(), "avx2") == 0) return attendHeadF16Avx2;
    return attendHeadF16Generic;
}

AttendHeadFn selectAttendHeadPair(int32_t headDim) {
    return selectAttendHead(headDim) == attendHeadF16Avx2 ? attendHeadPairF16Avx2 : nullptr;
}

}  // namespace zinc::cpu
