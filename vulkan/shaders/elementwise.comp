#version 450
// out = silu(a) * b (SwiGLU, mode 0), a + b (residual add, mode 1) or a + b[i % bWidth]
// (a bias vector added to every row, mode 2), over n floats.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform PC {
    FloatBuf a;
    FloatBuf b;
    FloatBuf out_;
    uint n;
    uint mode;
    uint bWidth;
} pc;

void main() {
    const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u;
    if (i >= pc.n) return;
    const float x = pc.a.v[i], y = pc.b.v[pc.mode == 2u ? i % pc.bWidth : i];
    pc.out_.v[i] = pc.mode == 0u ? x / (1.0 + exp(-x)) * y : x + y;
}
