// Embedding lookup, SwiGLU and the residual add.
#include <cmath>

#include "model/quant/dequantize.h"
#include "runtime/cpu/op_context.h"

namespace zinc::cpu {

void runEmbed(const OpContext& ctx, const graph::Op& op) {
    const auto& w = *op.weight;
    for (int32_t t = ctx.firstRow; t < ctx.firstRow + ctx.rows; ++t)
        model::dequantizeRow(w.type, w.row(ctx.tokens[static_cast<size_t>(t)]), ctx.f32(op.out, t), w.cols);
}

void runSwiGlu(const OpContext& ctx, const graph::Op& op) {
    const int64_t n = ctx.graph.buffer(op.in).width;
    for (int32_t t = ctx.firstRow; t < ctx.firstRow + ctx.rows; ++t) {
        const float* g = ctx.f32(op.in, t);
        const float* u = ctx.f32(op.up, t);
        float* out = ctx.f32(op.out, t);
        for (int64_t i = 0; i < n; ++i) out[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
    }
}

void runAdd(const OpContext& ctx, const graph::Op& op) {
    const int64_t n = ctx.graph.buffer(op.in).width;
    for (int32_t t = ctx.firstRow; t < ctx.firstRow + ctx.rows; ++t) {
        const float* a = ctx.f32(op.in, t);
        const float* b = ctx.f32(op.addend, t);
        float* out = ctx.f32(op.out, t);
        for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
    }
}

}  // namespace zinc::cpu
