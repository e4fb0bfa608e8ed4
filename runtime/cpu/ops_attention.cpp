// Causal GQA attention over the KV cache. The batch's k and v rows are appended at their
// positions first; then every (token, head) pair attends to positions [0, its own].
#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/cpu/op_context.h"

namespace zinc::cpu {
namespace {

void attendOneHead(const float* q, KvCache& kv, int32_t layer, int32_t lastPos, int32_t kvHead, int32_t headDim,
                   int32_t kvDim, float scale, float* scores, float* out) {
    (void)kvDim;
    float maxScore = -INFINITY;
    for (int32_t p = 0; p <= lastPos; ++p) {
        const float* k = kv.k(layer, p) + kvHead * headDim;
        float s = 0.0f;
        for (int32_t i = 0; i < headDim; ++i) s += q[i] * k[i];
        scores[p] = s * scale;
        maxScore = std::max(maxScore, scores[p]);
    }
    double sum = 0.0;
    for (int32_t p = 0; p <= lastPos; ++p) {
        scores[p] = std::exp(scores[p] - maxScore);
        sum += scores[p];
    }
    const float inv = static_cast<float>(1.0 / sum);
    std::fill(out, out + headDim, 0.0f);
    for (int32_t p = 0; p <= lastPos; ++p) {
        const float* v = kv.v(layer, p) + kvHead * headDim;
        const float w = scores[p] * inv;
        for (int32_t i = 0; i < headDim; ++i) out[i] += w * v[i];
    }
}

}  // namespace

void runAttention(const OpContext& ctx, const graph::Op& op) {
    const auto& c = *ctx.graph.config;
    const int32_t kvDim = c.kvDim();
    for (int32_t t = ctx.firstRow; t < ctx.firstRow + ctx.rows; ++t) {
        std::memcpy(ctx.kv.k(op.layer, ctx.position + t), ctx.f32(op.in2, t), sizeof(float) * static_cast<size_t>(kvDim));
        std::memcpy(ctx.kv.v(op.layer, ctx.position + t), ctx.f32(op.in3, t), sizeof(float) * static_cast<size_t>(kvDim));
    }
    const int32_t group = c.nHead / c.nHeadKv;
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.headDim));
    const int64_t work = static_cast<int64_t>(ctx.rows) * c.nHead;
    ctx.pool.parallelFor(work, 1, [&](int64_t begin, int64_t end, int thread) {
        auto& scores = ctx.threadScratch[static_cast<size_t>(thread)];
        for (int64_t i = begin; i < end; ++i) {
            const int32_t t = ctx.firstRow + static_cast<int32_t>(i / c.nHead);
            const int32_t h = static_cast<int32_t>(i % c.nHead);
            attendOneHead(ctx.f32(op.in, t) + h * c.headDim, ctx.kv, op.layer, ctx.position + t, h / group,
                          c.headDim, kvDim, scale, scores.data(), ctx.f32(op.out, t) + h * c.headDim);
        }
    });
}

}  // namespace zinc::cpu
