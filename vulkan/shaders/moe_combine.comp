#version 450
// out[t] = Σ_k weight[t][k] · down[t][k]: the experts' outputs of a token, weighted by the
// router (optionally added into out: the fused residual). With hasShared, the shared expert's
// output is added first, gated by sigmoid(gateW · x[t]) (qwen35moe: graph::fuse's MoeSharedAdd;
// every workgroup sums that one-row F32 matvec itself, as matvec.comp's float path does).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "reduce.glsl"

layout(local_size_x = 128) in;
layout(push_constant) uniform PC {
    FloatBuf down;     // [token][nUsed][n]
    FloatBuf weights;  // [token][nUsed]
    FloatBuf out_;
    uint n;
    uint nUsed;
    uint outStride;
    uint accumulate;
    FloatBuf shared_;  // [token][sharedStride]: the shared expert's output
    FloatBuf gateW;    // [k] F32: its input gate
    FloatBuf x;        // [token][xStride]: the FFN input
    uint sharedStride;
    uint xStride;
    uint k;
    uint matThreads;   // matvec.comp's workgroup size for k (32..128)
    uint hasShared;
} pc;

// gateW · x[t] in matvec.comp's float order: 32-value units strided over matThreads threads,
// then the subgroups' sums in order.
float gateDot(uint t) {
    const uint tid = gl_LocalInvocationID.x;
    float acc = 0.0;
    if (tid < pc.matThreads) {
        const uint nUnits = (pc.k + 31u) / 32u, a0 = t * pc.xStride;
        for (uint u = tid; u < nUnits; u += pc.matThreads) {
            const uint end = min(32u * u + 32u, pc.k);
            float r = 0.0;
            for (uint e = 32u * u; e < end; ++e) r += pc.gateW.v[e] * pc.x.v[a0 + e];
            acc += r;
        }
    }
    const float s = subgroupAdd(acc);
    if (subgroupElect()) reduceScratch_[gl_SubgroupID] = s;
    barrier();
    float total = 0.0;
    for (uint g = 0u; g < gl_NumSubgroups; ++g) total += reduceScratch_[g];
    return total;
}

void main() {
    const uint j = gl_GlobalInvocationID.x, t = gl_WorkGroupID.y;
    const float g = pc.hasShared != 0u ? gateDot(t) : 0.0;  // the whole workgroup, before any thread leaves
    if (j >= pc.n) return;
    float s = 0.0;
    for (uint k = 0u; k < pc.nUsed; ++k)
        s += pc.weights.v[t * pc.nUsed + k] * pc.down.v[(t * pc.nUsed + k) * pc.n + j];
    if (pc.hasShared != 0u) s = s + pc.shared_.v[t * pc.sharedStride + j] / (1.0 + exp(-g));
    const uint o = t * pc.outStride + j;
    pc.out_.v[o] = pc.accumulate != 0u ? pc.out_.v[o] + s : s;
}
