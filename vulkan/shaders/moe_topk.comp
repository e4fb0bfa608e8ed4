#version 450
// Router: softmax over the experts' logits, the top k (lower id first on ties, as the cpu
// tier's partial_sort), renormalised when the model says so. One thread per token: at most
// a few hundred experts, so a sequential scan costs less than a reduction's barriers.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 128) in;
layout(push_constant) uniform PC {
    FloatBuf logits;   // [token][nExpert]
    IntBuf ids;        // [token][nUsed]
    FloatBuf weights;  // [token][nUsed]
    uint nExpert;
    uint nUsed;
    uint normalize;
    uint nTok;
} pc;

const uint kMaxExperts = 512u;
shared float probs[kMaxExperts];
shared float maxLogit;
shared float expSum;

void main() {
    const uint t = gl_WorkGroupID.x, tid = gl_LocalInvocationID.x;
    const uint l0 = t * pc.nExpert;
    if (tid == 0u) {
        float m = pc.logits.v[l0];
        for (uint e = 1u; e < pc.nExpert; ++e) m = max(m, pc.logits.v[l0 + e]);
        maxLogit = m;
    }
    barrier();
    for (uint e = tid; e < pc.nExpert; e += 128u) probs[e] = exp(pc.logits.v[l0 + e] - maxLogit);
    barrier();
    if (tid != 0u) return;
    float sum = 0.0;
    for (uint e = 0u; e < pc.nExpert; ++e) sum += probs[e];
    for (uint e = 0u; e < pc.nExpert; ++e) probs[e] /= sum;
    // Top k by repeated scans, the lower id first on ties; a chosen expert's slot is set to -1.
    float total = 0.0;
    for (uint k = 0u; k < pc.nUsed; ++k) {
        uint best = 0u;
        for (uint e = 1u; e < pc.nExpert; ++e)
            if (probs[e] > probs[best]) best = e;
        pc.ids.v[t * pc.nUsed + k] = int(best);
        pc.weights.v[t * pc.nUsed + k] = probs[best];
        total += probs[best];
        probs[best] = -1.0;
    }
    if (pc.normalize != 0u)
        for (uint k = 0u; k < pc.nUsed; ++k) pc.weights.v[t * pc.nUsed + k] /= total;
}
