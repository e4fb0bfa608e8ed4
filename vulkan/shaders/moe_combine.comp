#version 450
// out[t] = Σ_k weight[t][k] · down[t][k]: the experts' outputs of a token, weighted by the
// router (optionally added into out: the fused residual).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 64) in;
layout(push_constant) uniform PC {
    FloatBuf down;     // [token][nUsed][n]
    FloatBuf weights;  // [token][nUsed]
    FloatBuf out_;
    uint n;
    uint nUsed;
    uint outStride;
    uint accumulate;
} pc;

void main() {
    const uint j = gl_GlobalInvocationID.x, t = gl_WorkGroupID.y;
    if (j >= pc.n) return;
    float s = 0.0;
    for (uint k = 0u; k < pc.nUsed; ++k)
        s += pc.weights.v[t * pc.nUsed + k] * pc.down.v[(t * pc.nUsed + k) * pc.n + j];
    const uint o = t * pc.outStride + j;
    pc.out_.v[o] = pc.accumulate != 0u ? pc.out_.v[o] + s : s;
}
