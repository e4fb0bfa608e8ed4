// Mixture of experts. The router picks the top-k experts per token from a softmax over all
// experts (qwen3moe) and renormalises their weights when the model says so; the expert op
// then runs each chosen expert once over all tokens routed to it (as ggml's mul_mat_id).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "runtime/cpu/op_context.h"

namespace zinc::cpu {

void runMoeRoute(const OpContext& ctx, const graph::Op& op) {
    const auto& c = *ctx.graph.config;
    const auto& w = *op.weight;
    std::vector<float> logits(static_cast<size_t>(c.nExpert) * static_cast<size_t>(ctx.rows));
    project(ctx, w, 0, ctx.f32(op.in, ctx.firstRow), static_cast<size_t>(c.nEmbd), ctx.rows, logits.data(),
            static_cast<size_t>(c.nExpert));
    std::vector<int32_t> order(static_cast<size_t>(c.nExpert));
    for (int32_t t = 0; t < ctx.rows; ++t) {
        float* l = logits.data() + static_cast<size_t>(t) * static_cast<size_t>(c.nExpert);
        const float maxLogit = *std::max_element(l, l + c.nExpert);
        double sum = 0.0;
        for (int32_t e = 0; e < c.nExpert; ++e) sum += (l[e] = std::exp(l[e] - maxLogit));
        for (int32_t e = 0; e < c.nExpert; ++e) l[e] = static_cast<float>(l[e] / sum);
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + c.nExpertUsed, order.end(),
                          [&](int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
        int32_t* ids = ctx.i32(op.expertIds, ctx.firstRow + t);
        float* weights = ctx.f32(op.expertWeights, ctx.firstRow + t);
        float chosen = 0.0f;
        for (int32_t k = 0; k < c.nExpertUsed; ++k) {
            ids[k] = order[static_cast<size_t>(k)];
            weights[k] = l[order[static_cast<size_t>(k)]];
            chosen += weights[k];
        }
        if (c.normTopkProb)
            for (int32_t k = 0; k < c.nExpertUsed; ++k) weights[k] /= chosen;
    }
}

namespace {

// Runs one expert over the tokens routed to it and adds weight * result into out rows.
void runExpert(const OpContext& ctx, const graph::Op& op, int32_t expert, const std::vector<int32_t>& tokens,
               const std::vector<float>& tokenWeights) {
    const auto& c = *ctx.graph.config;
    const int32_t n = static_cast<int32_t>(tokens.size());
    const size_t ff = static_cast<size_t>(c.nFfExpert), embd = static_cast<size_t>(c.nEmbd);
    std::vector<float> gathered(embd * static_cast<size_t>(n)), gate(ff * static_cast<size_t>(n)),
        up(ff * static_cast<size_t>(n)), down(embd * static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i)
        std::copy_n(ctx.f32(op.in, tokens[static_cast<size_t>(i)]), embd, gathered.data() + static_cast<size_t>(i) * embd);
    project(ctx, *op.weight, expert, gathered.data(), embd, n, gate.data(), ff);
    project(ctx, *op.upWeight, expert, gathered.data(), embd, n, up.data(), ff);
    for (size_t i = 0; i < gate.size(); ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
    project(ctx, *op.downWeight, expert, gate.data(), ff, n, down.data(), embd);
    for (int32_t i = 0; i < n; ++i) {
        float* out = ctx.f32(op.out, tokens[static_cast<size_t>(i)]);
        const float w = tokenWeights[static_cast<size_t>(i)];
        for (size_t j = 0; j < embd; ++j) out[j] += w * down[static_cast<size_t>(i) * embd + j];
    }
}

}  // namespace

void runMoeFfn(const OpContext& ctx, const graph::Op& op) {
    const auto& c = *ctx.graph.config;
    std::vector<std::vector<int32_t>> tokensOf(static_cast<size_t>(c.nExpert));
    std::vector<std::vector<float>> weightsOf(static_cast<size_t>(c.nExpert));
    for (int32_t t = ctx.firstRow; t < ctx.firstRow + ctx.rows; ++t) {
        std::fill_n(ctx.f32(op.out, t), c.nEmbd, 0.0f);
        for (int32_t k = 0; k < c.nExpertUsed; ++k) {
            const int32_t e = ctx.i32(op.expertIds, t)[k];
            tokensOf[static_cast<size_t>(e)].push_back(t);
            weightsOf[static_cast<size_t>(e)].push_back(ctx.f32(op.expertWeights, t)[k]);
        }
    }
    for (int32_t e = 0; e < c.nExpert; ++e)
        if (!tokensOf[static_cast<size_t>(e)].empty())
            runExpert(ctx, op, e, tokensOf[static_cast<size_t>(e)], weightsOf[static_cast<size_t>(e)]);
}

}  // namespace zinc::cpu
