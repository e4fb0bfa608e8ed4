#version 450
// out = x / sqrt(mean(x²) + eps) * weight, per row of n values. A row is one token's
// residual (heads = 1) or one head of q/k (QK-norm, in place: out == x).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "reduce.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform PC {
    FloatBuf x;
    FloatBuf w;
    FloatBuf out_;
    uint n;
    uint heads;
    uint inStride;   // floats between tokens
    uint outStride;
    float eps;
} pc;

void main() {
    const uint t = gl_WorkGroupID.x / pc.heads, h = gl_WorkGroupID.x % pc.heads;
    const uint in0 = t * pc.inStride + h * pc.n, out0 = t * pc.outStride + h * pc.n;
    float sum = 0.0;
    for (uint i = gl_LocalInvocationID.x; i < pc.n; i += 256u) {
        const float v = pc.x.v[in0 + i];
        sum += v * v;
    }
    sum = workgroupSum(sum);
    const float scale = 1.0 / sqrt(sum / float(pc.n) + pc.eps);
    for (uint i = gl_LocalInvocationID.x; i < pc.n; i += 256u) pc.out_.v[out0 + i] = pc.x.v[in0 + i] * scale * pc.w.v[i];
}
