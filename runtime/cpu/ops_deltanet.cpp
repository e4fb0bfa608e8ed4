// The ops of Qwen3.5 / Qwen3.6 hybrids (graph/hybrid_blocks.cpp has the math): the causal
// conv1d over a rolling window, the gated delta-rule step, the gated per-head RMSNorm, and the
// query / output-gate split and sigmoid gate of the full-attention layers. The recurrent state
// lives in the graph's persistent buffers, a copy per sequence slot (ctx.state: the copy of
// ctx.stateCopy; the cpu tier runs a step of several sequences' rows through these ops a run of
// one slot's rows at a time). A batch runs the delta rule in chunks (the WY form,
// runtime/cpu/delta_rule.h), equal to decoding one token at a time within float rounding; the
// conv runs token by token.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "runtime/cpu/delta_rule.h"
#include "runtime/cpu/op_context.h"

namespace zinc::cpu {
namespace {

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float silu(float x) { return x / (1.0f + std::exp(-x)); }
// ggml's softplus: linear above 20, where log1p(exp(x)) == x in float.
float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

// x / max(|x|, eps), the norm accumulated in double (ggml_l2_norm).
void l2Normalize(float* x, int32_t n, float eps, float scale) {
    double sum = 0.0;
    for (int32_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
    const float inv = 1.0f / std::max(std::sqrt(static_cast<float>(sum)), eps) * scale;
    for (int32_t i = 0; i < n; ++i) x[i] *= inv;
}

}  // namespace

void runSsmConv(const OpContext& ctx, const graph::Op& op) {
    const auto& h = ctx.graph.config->hybrid;
    const int32_t channels = h.convChannels(), taps = h.convKernel;
    const float* w = reinterpret_cast<const float*>(op.weight->data);  // [channel][tap], oldest tap first
    float* window = ctx.state(op.state);                               // [tap][channel], taps - 1 rows
    ctx.pool.parallelFor(channels, 64, [&](int64_t begin, int64_t end, int) {
        for (int64_t ch = begin; ch < end; ++ch) {
            const float* wc = w + ch * taps;
            for (int32_t t = ctx.firstRow; t < ctx.firstRow + ctx.rows; ++t) {
                const float x = ctx.f32(op.in, t)[ch];
                float sum = 0.0f;
                for (int32_t k = 0; k < taps - 1; ++k) sum += window[static_cast<size_t>(k) * channels + ch] * wc[k];
                sum += x * wc[taps - 1];
                for (int32_t k = 0; k + 1 < taps - 1; ++k)
                    window[static_cast<size_t>(k) * channels + ch] = window[static_cast<size_t>(k + 1) * channels + ch];
                window[static_cast<size_t>(taps - 2) * channels + ch] = x;
                ctx.f32(op.out, t)[ch] = silu(sum);
            }
        }
    });
}

// Per value head: q, k normalised and the decay and beta of every row gathered, then the
// delta rule over the rows (runtime/cpu/delta_rule.h): in chunks for a batch, or the
// recurrence for one token or with ctx.deltaChunk 0.
void runDeltaNet(const OpContext& ctx, const graph::Op& op) {
    const auto& c = *ctx.graph.config;
    const auto& h = c.hybrid;
    const int32_t d = h.headDim, rows = ctx.rows;
    const float* a = reinterpret_cast<const float*>(op.weight->data);
    const float* dtBias = reinterpret_cast<const float*>(op.biasWeight->data);
    float* state = ctx.state(op.state);
    const float qScale = 1.0f / std::sqrt(static_cast<float>(d));
    const bool chunked = ctx.deltaChunk > 0 && rows > 1;
    const auto rowFloats = static_cast<size_t>(rows) * static_cast<size_t>(d);
    const size_t inStride = static_cast<size_t>(ctx.graph.buffer(op.in).width);
    ctx.pool.parallelFor(h.valueHeads, 1, [&](int64_t begin, int64_t end, int) {
        std::vector<float> q(rowFloats), k(rowFloats), g(static_cast<size_t>(rows)), beta(static_cast<size_t>(rows));
        std::vector<float> scratch;
        for (int64_t vh = begin; vh < end; ++vh) {
            const int64_t kh = vh % h.keyHeads;
            for (int32_t t = 0; t < rows; ++t) {
                const float* qkv = ctx.f32(op.in, ctx.firstRow + t);
                float* qt = q.data() + static_cast<size_t>(t) * static_cast<size_t>(d);
                float* kt = k.data() + static_cast<size_t>(t) * static_cast<size_t>(d);
                std::copy_n(qkv + kh * d, d, qt);
                std::copy_n(qkv + h.keyDim() + kh * d, d, kt);
                l2Normalize(qt, d, c.normEps, qScale);
                l2Normalize(kt, d, c.normEps, 1.0f);
                g[static_cast<size_t>(t)] = softplus(ctx.f32(op.alpha, ctx.firstRow + t)[vh] + dtBias[vh]) * a[vh];
                beta[static_cast<size_t>(t)] = sigmoid(ctx.f32(op.beta, ctx.firstRow + t)[vh]);
            }
            DeltaHeadRun run;
            run.tokens = rows;
            run.d = d;
            run.q = q.data();
            run.k = k.data();
            run.qStride = run.kStride = static_cast<size_t>(d);
            run.v = ctx.f32(op.in, ctx.firstRow) + 2 * h.keyDim() + vh * d;
            run.vStride = inStride;
            run.logDecay = g.data();
            run.beta = beta.data();
            run.out = ctx.f32(op.out, ctx.firstRow) + vh * d;
            run.outStride = static_cast<size_t>(ctx.graph.buffer(op.out).width);
            float* s = state + static_cast<size_t>(vh) * static_cast<size_t>(d) * static_cast<size_t>(d);
            if (chunked)
                deltaRuleChunked(run, ctx.deltaChunk, s, scratch);
            else
                deltaRuleRecurrent(run, s);
        }
    });
}

void runGatedNorm(const OpContext& ctx, const graph::Op& op) {
    const auto d = static_cast<int32_t>(op.weight->cols);
    const float* w = reinterpret_cast<const float*>(op.weight->data);
    const float eps = ctx.graph.config->normEps;
    for (int32_t t = ctx.firstRow; t < ctx.firstRow + ctx.rows; ++t) {
        const float* x = ctx.f32(op.in, t);
        const float* z = ctx.f32(op.gate, t);
        float* out = ctx.f32(op.out, t);
        for (int32_t hd = 0; hd < op.heads; ++hd) {
            const int32_t base = hd * d;
            double sum = 0.0;
            for (int32_t i = 0; i < d; ++i) sum += static_cast<double>(x[base + i]) * x[base + i];
            const float scale = 1.0f / std::sqrt(static_cast<float>(sum / d) + eps);
            for (int32_t i = 0; i < d; ++i) out[base + i] = x[base + i] * scale * w[i] * silu(z[base + i]);
        }
    }
}

void runSplitGate(const OpContext& ctx, const graph::Op& op) {
    const int64_t d = ctx.graph.buffer(op.in).width / (2 * op.heads);
    for (int32_t t = ctx.firstRow; t < ctx.firstRow + ctx.rows; ++t)
        for (int32_t hd = 0; hd < op.heads; ++hd) {
            const float* src = ctx.f32(op.in, t) + 2 * hd * d;
            std::copy_n(src, d, ctx.f32(op.out, t) + hd * d);
            std::copy_n(src + d, d, ctx.f32(op.gate, t) + hd * d);
        }
}

void runSigmoidGate(const OpContext& ctx, const graph::Op& op) {
    const int64_t n = ctx.graph.buffer(op.in).width;
    const bool perToken = ctx.graph.buffer(op.gate).width == 1;
    for (int32_t t = ctx.firstRow; t < ctx.firstRow + ctx.rows; ++t) {
        const float* x = ctx.f32(op.in, t);
        const float* g = ctx.f32(op.gate, t);
        float* out = ctx.f32(op.out, t);
        for (int64_t i = 0; i < n; ++i) out[i] = x[i] * sigmoid(g[perToken ? 0 : i]);
    }
}

void runHybridOp(const OpContext& ctx, const graph::Op& op) {
    switch (op.kind) {
        case graph::OpKind::SsmConv: return runSsmConv(ctx, op);
        case graph::OpKind::DeltaNet: return runDeltaNet(ctx, op);
        case graph::OpKind::GatedNorm: return runGatedNorm(ctx, op);
        case graph::OpKind::SplitGate: return runSplitGate(ctx, op);
        case graph::OpKind::SigmoidGate: return runSigmoidGate(ctx, op);
        default: throw runtime::TierError(fmt::format("cpu tier: op {} is not a hybrid-model op", op.label));
    }
}

}  // namespace zinc::cpu
