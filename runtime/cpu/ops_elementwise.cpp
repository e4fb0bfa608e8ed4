// Embedding lookup (times the graph's embedding scale), SwiGLU / GeGLU and the residual add.
#include <algorithm>
#include <cmath>
#include <vector>

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
// gate rounded to F16, whose entries are gelu rounded to F16 (GGML_GELU_FP16). The table is
// ggml's too: every F16 bit pattern's result, made once (the same numbers as converting per
// element, ~20x cheaper than a tanh and two conversions each).
const std::vector<float>& geluF16Table() {
    static const std::vector<float> table = [] {
        std::vector<float> t(65536);
        for (uint32_t h = 0; h < 65536; ++h)
            t[h] = model::fp16ToFp32(model::fp32ToFp16(geluTanh(model::fp16ToFp32(static_cast<uint16_t>(h)))));
        return t;
    }();
    return table;
}

float geluGgml(const float* table, float x) {
    if (x <= -10.0f) return 0.0f;
    if (x >= 10.0f) return x;
    return table[model::fp32ToFp16(x)];
}

// The gated activations are elementwise: rows split into chunks of kGluChunk, spread over the
// pool only when a step has more than one chunk per thread (a decode row of a 10k-wide FFN takes
// ~50 us inline; waking the workers costs about as much).
constexpr int64_t kGluChunk = 8192;

template <typename Fn>
void forEachGluChunk(const OpContext& ctx, const graph::Op& op, Fn fn) {
    const int64_t n = ctx.graph.buffer(op.in).width;
    const int64_t chunks = (n + kGluChunk - 1) / kGluChunk;
    const int64_t work = static_cast<int64_t>(ctx.rows) * chunks;
    auto run = [&](int64_t begin, int64_t end, int) {
        for (int64_t i = begin; i < end; ++i) {
            const int32_t t = ctx.firstRow + static_cast<int32_t>(i / chunks);
            const int64_t first = (i % chunks) * kGluChunk, last = std::min(n, first + kGluChunk);
            fn(ctx.f32(op.in, t), ctx.f32(op.up, t), ctx.f32(op.out, t), first, last);
        }
    };
    if (work > ctx.pool.threads())
        ctx.pool.parallelFor(work, 1, run);
    else
        run(0, work, 0);
}

}  // namespace

void runGeGlu(const OpContext& ctx, const graph::Op& op) {
    const float* table = ctx.precision == runtime::Precision::Ggml ? geluF16Table().data() : nullptr;
    forEachGluChunk(ctx, op, [&](const float* g, const float* u, float* out, int64_t first, int64_t last) {
        for (int64_t i = first; i < last; ++i) out[i] = (table ? geluGgml(table, g[i]) : geluTanh(g[i])) * u[i];
    });
}

void runSwiGlu(const OpContext& ctx, const graph::Op& op) {
    if (op.gelu) return runGeGlu(ctx, op);
    forEachGluChunk(ctx, op, [&](const float* g, const float* u, float* out, int64_t first, int64_t last) {
        for (int64_t i = first; i < last; ++i) out[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
    });
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
