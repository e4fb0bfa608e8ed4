#version 450
// Router: softmax over the experts' logits, the top k (lower id first on ties, as the cpu
// tier's partial_sort), renormalised when the model says so. One workgroup per token.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "reduce.glsl"

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
shared float chosenWeights[64];

float workgroupMax(float x) {
    x = subgroupMax(x);
    if (subgroupElect()) reduceScratch_[gl_SubgroupID] = x;
    barrier();
    float m = reduceScratch_[0];
    for (uint i = 1u; i < gl_NumSubgroups; ++i) m = max(m, reduceScratch_[i]);
    barrier();
    return m;
}

void main() {
    const uint t = gl_WorkGroupID.x, tid = gl_LocalInvocationID.x;
    const uint l0 = t * pc.nExpert;
    float m = -1.0 / 0.0;
    for (uint e = tid; e < pc.nExpert; e += 128u) m = max(m, pc.logits.v[l0 + e]);
    m = workgroupMax(m);
    float part = 0.0;
    for (uint e = tid; e < pc.nExpert; e += 128u) {
        probs[e] = exp(pc.logits.v[l0 + e] - m);
        part += probs[e];
    }
    const float sum = workgroupSum(part);  // its barriers also publish probs[]
    for (uint e = tid; e < pc.nExpert; e += 128u) probs[e] /= sum;  // compared as the cpu tier does
    barrier();
    // Each expert's rank among all (higher probability first, the lower id on ties): the
    // experts ranked below nUsed are the top k, written in rank order.
    for (uint e = tid; e < pc.nExpert; e += 128u) {
        const float p = probs[e];
        uint rank = 0u;
        for (uint o = 0u; o < pc.nExpert; ++o) {
            const float q = probs[o];
            rank += (q > p || (q == p && o < e)) ? 1u : 0u;
        }
        if (rank < pc.nUsed) {
            pc.ids.v[t * pc.nUsed + rank] = int(e);
            chosenWeights[rank] = p;
        }
    }
    barrier();
    if (tid < pc.nUsed) {
        float total = 0.0;
        for (uint k = 0u; k < pc.nUsed; ++k) total += chosenWeights[k];
        pc.weights.v[t * pc.nUsed + tid] = pc.normalize != 0u ? chosenWeights[tid] / total : chosenWeights[tid];
    }
}
