// RMSNorm of the residual stream and per-head QK-norm. Sums of squares accumulate in double,
// as ggml's CPU rms_norm does, so the oracle's rounding stays below the goldens' tolerance.
#include <cmath>

#include "runtime/cpu/op_context.h"

namespace zinc::cpu {
namespace {

void rmsNormRow(const float* x, const float* w, float* out, int64_t n, float eps) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * static_cast<double>(x[i]);
    const float mean = static_cast<float>(sum / static_cast<double>(n));
    const float scale = 1.0f / std::sqrt(mean + eps);
    for (int64_t i = 0; i < n; ++i) out[i] = x[i] * scale * w[i];
}

// Rows go to the pool when a step has several (prefill, batched decode), each row's
// arithmetic as alone; one row stays on the calling thread (a hand-off would cost more).
template <typename RowFn>
void forEachRow(const OpContext& ctx, RowFn row) {
    if (ctx.rows == 1) return row(ctx.firstRow);
    ctx.pool.parallelFor(ctx.rows, 1, [&](int64_t begin, int64_t end, int) {
        for (int64_t i = begin; i < end; ++i) row(ctx.firstRow + static_cast<int32_t>(i));
    });
}

}  // namespace

void runRmsNorm(const OpContext& ctx, const graph::Op& op) {
    const int64_t n = ctx.graph.buffer(op.in).width;
    const float* w = reinterpret_cast<const float*>(op.weight->data);
    const float eps = ctx.graph.config->normEps;
    forEachRow(ctx, [&](int32_t t) { rmsNormRow(ctx.f32(op.in, t), w, ctx.f32(op.out, t), n, eps); });
}

void runHeadNorm(const OpContext& ctx, const graph::Op& op) {
    const int32_t headDim = ctx.graph.config->headDim;
    const float* w = reinterpret_cast<const float*>(op.weight->data);
    const float eps = ctx.graph.config->normEps;
    forEachRow(ctx, [&](int32_t t) {
        float* row = ctx.f32(op.in, t);
        for (int32_t h = 0; h < op.heads; ++h) rmsNormRow(row + h * headDim, w, row + h * headDim, headDim, eps);
    });
}

}  // namespace zinc::cpu
