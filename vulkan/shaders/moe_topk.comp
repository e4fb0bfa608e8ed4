#version 450
// Router: softmax over the experts' logits, the top k (lower id first on ties, as the cpu
// tier's partial_sort), renormalised when the model says so. One thread per token: at most
// a few hundred experts, so a sequential scan costs less than a reduction's barriers.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 64) in;
layout(push_constant) uniform PC {
    FloatBuf logits;   // [token][nExpert]
    IntBuf ids;        // [token][nUsed]
    FloatBuf weights;  // [token][nUsed]
    uint nExpert;
    uint nUsed;
    uint normalize;
    uint nTok;
} pc;

void main() {
    const uint t = gl_GlobalInvocationID.x;
    if (t >= pc.nTok) return;
    const uint l0 = t * pc.nExpert;
    float maxLogit = pc.logits.v[l0];
    for (uint e = 1u; e < pc.nExpert; ++e) maxLogit = max(maxLogit, pc.logits.v[l0 + e]);
    float sum = 0.0;
    for (uint e = 0u; e < pc.nExpert; ++e) sum += exp(pc.logits.v[l0 + e] - maxLogit);
    uint chosen[8] = uint[8](0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u);  // up to 256 experts
    float total = 0.0;
    for (uint k = 0u; k < pc.nUsed; ++k) {
        int best = -1;
        float bestP = 0.0;
        for (uint e = 0u; e < pc.nExpert; ++e) {
            if ((chosen[e / 32u] & (1u << (e % 32u))) != 0u) continue;
            const float p = exp(pc.logits.v[l0 + e] - maxLogit) / sum;
            if (best < 0 || p > bestP) {
                best = int(e);
                bestP = p;
            }
        }
        chosen[uint(best) / 32u] |= 1u << (uint(best) % 32u);
        pc.ids.v[t * pc.nUsed + k] = best;
        pc.weights.v[t * pc.nUsed + k] = bestP;
        total += bestP;
    }
    if (pc.normalize != 0u)
        for (uint k = 0u; k < pc.nUsed; ++k) pc.weights.v[t * pc.nUsed + k] /= total;
}
