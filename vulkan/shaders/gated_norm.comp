#version 450
// The DeltaNet output norm: per head of n values, out = x / sqrt(mean(x²) + eps) * w * silu(z);
// one workgroup per (token, head).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "reduce.glsl"

layout(local_size_x = 128) in;
layout(push_constant) uniform PC {
    FloatBuf x;
    FloatBuf z;
    FloatBuf w;
    FloatBuf out_;
    uint n;
    uint heads;
    float eps;
} pc;

void main() {
    const uint base = gl_WorkGroupID.x * pc.n;  // rows are heads * n wide: (token, head) is contiguous
    float sum = 0.0;
    for (uint i = gl_LocalInvocationID.x; i < pc.n; i += 128u) sum += pc.x.v[base + i] * pc.x.v[base + i];
    sum = workgroupSum(sum);
    const float scale = 1.0 / sqrt(sum / float(pc.n) + pc.eps);
    for (uint i = gl_LocalInvocationID.x; i < pc.n; i += 128u) {
        const float z = pc.z.v[base + i];
        pc.out_.v[base + i] = pc.x.v[base + i] * scale * pc.w.v[i] * (z / (1.0 + exp(-z)));
    }
}
