// Causal GQA attention over the KV cache. The batch's k and v rows are stored at their
// positions' rows first (graph/kv_layout.h); then every (token, head) pair attends to positions
// [0, its own], or the last `window` of them on a sliding-window layer, of its own sequence's KV
// slot (one slot per sequence when rows of several share the step).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "runtime/cpu/attention_kernel.h"
#include "runtime/cpu/op_context.h"
#include "runtime/cpu/quant_dot.h"

namespace zinc::cpu {
namespace {

// F32 precision: a plain softmax over fp32 scores and values.
void attendHeadF32(const float* q, const float* k, const float* v, size_t stride, KeyRows rows, int32_t headDim,
                   float scale, float* out) {
    const int32_t n = rows.n;
    thread_local std::vector<float> scores;
    scores.resize(static_cast<size_t>(n));
    float maxScore = -INFINITY;
    for (int32_t p = 0; p < n; ++p) {
        const float* kr = k + rows.row(p) * stride;
        float s = 0.0f;
        for (int32_t i = 0; i < headDim; ++i) s += q[i] * kr[i];
        scores[static_cast<size_t>(p)] = s * scale;
        maxScore = std::max(maxScore, s * scale);
    }
    double sum = 0.0;
    for (auto& s : scores) sum += (s = std::exp(s - maxScore));
    std::fill(out, out + headDim, 0.0f);
    for (int32_t p = 0; p < n; ++p) {
        const float* vr = v + rows.row(p) * stride;
        const float w = static_cast<float>(scores[static_cast<size_t>(p)] / sum);
        for (int32_t i = 0; i < headDim; ++i) out[i] += w * vr[i];
    }
}

void storeKv(const OpContext& ctx, const graph::Op& op, int32_t kvDim) {
    const size_t bytes = sizeof(float) * static_cast<size_t>(kvDim);
    for (int32_t t = ctx.firstRow; t < ctx.firstRow + ctx.rows; ++t) {
        const int32_t pos = ctx.positionOf(t);
        const int32_t slot = ctx.slotOf(t);
        if (ctx.kv.halves()) {
            convertRowToHalf(ctx.f32(op.k, t), ctx.kv.kHalf(slot, op.layer, pos), kvDim);
            convertRowToHalf(ctx.f32(op.v, t), ctx.kv.vHalf(slot, op.layer, pos), kvDim);
        } else {
            std::memcpy(ctx.kv.kFull(slot, op.layer, pos), ctx.f32(op.k, t), bytes);
            std::memcpy(ctx.kv.vFull(slot, op.layer, pos), ctx.f32(op.v, t), bytes);
        }
    }
}

}  // namespace

void runAttention(const OpContext& ctx, const graph::Op& op) {
    const auto& c = *ctx.graph.config;
    const int32_t kvDim = c.kvDim();
    storeKv(ctx, op, kvDim);
    const int32_t group = c.nHead / c.nHeadKv;
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.headDim));
    const AttendHeadFn attendHalves = selectAttendHead(c.headDim);
    // Two heads of one kv head per work item where a kernel takes them together (it converts
    // their K and V rows once); each head's result is the one it gets alone.
    const AttendHeadFn attendPair = ctx.kv.halves() && group % 2 == 0 ? selectAttendHeadPair(c.headDim) : nullptr;
    const int32_t span = attendPair ? 2 : 1;
    const int32_t items = c.nHead / span;
    const int64_t work = static_cast<int64_t>(ctx.rows) * items;
    ctx.pool.parallelFor(work, 1, [&](int64_t begin, int64_t end, int) {
        for (int64_t i = begin; i < end; ++i) {
            const int32_t t = ctx.firstRow + static_cast<int32_t>(i / items);
            const int32_t h = static_cast<int32_t>(i % items) * span;
            const int32_t kvOffset = (h / group) * c.headDim;
            // A sliding-window layer sees the keys at distance < window: positions first..pos, in
            // its ring of rows (graph/kv_layout.h), in the row's own sequence slot.
            const int32_t pos = ctx.positionOf(t);
            const int32_t slot = ctx.slotOf(t);
            const graph::KvLayer& layer = ctx.kv.layer(op.layer);
            const int32_t first = op.window > 0 ? std::max(0, pos - op.window + 1) : 0;
            const KeyRows rows{layer.slot(first), pos + 1 - first, layer.slots};
            const float* q = ctx.f32(op.in, t) + h * c.headDim;
            float* out = ctx.f32(op.out, t) + h * c.headDim;
            // gemma3 scales q before attention (llama.cpp), so the F16 rounding of q sees q * scale.
            thread_local std::vector<float> scaled;
            float sc = scale;
            if (c.preScaleQuery) {
                scaled.assign(q, q + span * c.headDim);
                for (auto& x : scaled) x *= scale;
                q = scaled.data();
                sc = 1.0f;
            }
            if (attendPair)
                attendPair(q, ctx.kv.kHalf(slot, op.layer, 0) + kvOffset, ctx.kv.vHalf(slot, op.layer, 0) + kvOffset,
                           static_cast<size_t>(kvDim), rows, c.headDim, sc, out);
            else if (ctx.kv.halves())
                attendHalves(q, ctx.kv.kHalf(slot, op.layer, 0) + kvOffset, ctx.kv.vHalf(slot, op.layer, 0) + kvOffset,
                             static_cast<size_t>(kvDim), rows, c.headDim, sc, out);
            else
                attendHeadF32(q, ctx.kv.kFull(slot, op.layer, 0) + kvOffset, ctx.kv.vFull(slot, op.layer, 0) + kvOffset,
                              static_cast<size_t>(kvDim), rows, c.headDim, sc, out);
        }
    });
}

}  // namespace zinc::cpu
