// Embedding lookup (times the graph's embedding scale), SwiGLU / GeGLU and the residual add.
#include <cmath>

#include "model/quant/dequantize.h"
#include "model/quant/fp16.h"
#include "runtime/cpu/op_context.h"

namespace zinc::cpu {

void runEmbed(const OpContext& ctx, const graph::Op& op) {
    const auto& w = *op.weight;
    for (int32_t t = ctx.firstRow; t < ctx.firstRow + ctx.rows; ++t) {
        float* row = ctx.f32(op.out, t);
        model::dequantizeRow(w.type, w.row(ctx.tokens[static_cast<size_t>(t)]), row, w.cols);
        if (op.scale != 1.0f)
            for (int64_t i = 0; i < w.cols; ++i) row[i] *= op.scale;
    }
}

namespace {

// ggml's gelu (tanh approximation) in float.
float geluTanh(float x) {
    constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f, kCoefA = 0.044715f;
    return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + kCoefA * x * x)));
}

// ggml's CPU geglu: outside (-10, 10) the gate is 0 or x; inside, a table lookup of the
// gate rounded to F16, whose entries are gelu rounded to F16 (GGML_GELU_FP16).
float geluGgml(float x) {
    if (x <= -10.0f) return 0.0f;
    if (x >= 10.0f) return x;
    return model::fp16ToFp32(model::fp32ToFp16(geluTanh(model::fp16ToFp32(model::fp32ToFp16(x)))));
}

}  // namespace

void runGeGlu(const OpContext& ctx, const graph::Op& op) {
    const int64_t n = ctx.graph.buffer(op.in).width;
    const bool ggml = ctx.precision == runtime::Precision::Ggml;
    for (int32_t t = ctx.firstRow; t < ctx.firstRow + ctx.rows; ++t) {
        const float* g = ctx.f32(op.in, t);
        const float* u = ctx.f32(op.up, t);
        float* out = ctx.f32(op.out, t);
        for (int64_t i = 0; i < n; ++i) out[i] = (ggml ? geluGgml(g[i]) : geluTanh(g[i])) * u[i];
    }
}

void runSwiGlu(const OpContext& ctx, const graph::Op& op) {
    if (op.gelu) return runGeGlu(ctx, op);
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
