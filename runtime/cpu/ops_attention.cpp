// Causal GQA attention over the KV cache. The batch's k and v rows are stored (as F16) at their
// positions first; then every (token, head) pair attends to positions [0, its own].
#include <cmath>

#include "model/quant/fp16.h"
#include "runtime/cpu/attention_kernel.h"
#include "runtime/cpu/op_context.h"

namespace zinc::cpu {
namespace {

void storeHalves(const float* src, uint16_t* dst, int32_t n) {
    for (int32_t i = 0; i < n; ++i) dst[i] = model::fp32ToFp16(src[i]);
}

}  // namespace

void runAttention(const OpContext& ctx, const graph::Op& op) {
    const auto& c = *ctx.graph.config;
    const int32_t kvDim = c.kvDim();
    for (int32_t t = ctx.firstRow; t < ctx.firstRow + ctx.rows; ++t) {
        storeHalves(ctx.f32(op.in2, t), ctx.kv.k(op.layer, ctx.position + t), kvDim);
        storeHalves(ctx.f32(op.in3, t), ctx.kv.v(op.layer, ctx.position + t), kvDim);
    }
    const int32_t group = c.nHead / c.nHeadKv;
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.headDim));
    const AttendHeadFn attend = selectAttendHead(c.headDim);
    const int64_t work = static_cast<int64_t>(ctx.rows) * c.nHead;
    ctx.pool.parallelFor(work, 1, [&](int64_t begin, int64_t end, int) {
        for (int64_t i = begin; i < end; ++i) {
            const int32_t t = ctx.firstRow + static_cast<int32_t>(i / c.nHead);
            const int32_t h = static_cast<int32_t>(i % c.nHead);
            const int32_t kvOffset = (h / group) * c.headDim;
            attend(ctx.f32(op.in, t) + h * c.headDim, ctx.kv.k(op.layer, 0) + kvOffset, ctx.kv.v(op.layer, 0) + kvOffset,
                   static_cast<size_t>(kvDim), ctx.position + t + 1, c.headDim, scale, ctx.f32(op.out, t) + h * c.headDim);
        }
    });
}

}  // namespace zinc::cpu
