#version 450
// The output gates of the qwen35 hybrids, over n elements:
//  mode 0 (split): per head of d, `a` holds the query then the gate: out = query, out2 = gate
//          (n = tokens * heads * d);
//  mode 1 (sigmoid gate): out = a * sigmoid(b), b one value per token when gateWidth is 1
//          (n = tokens * width).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform PC {
    FloatBuf a;
    FloatBuf b;
    FloatBuf out_;
    FloatBuf out2;
    uint n;
    uint width;      // mode 0: head dim d; mode 1: floats per token
    uint gateWidth;  // mode 1: floats of b per token (width or 1)
    uint mode;
} pc;

void main() {
    const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u;
    if (i >= pc.n) return;
    if (pc.mode == 0u) {
        const uint head = i / pc.width, e = i % pc.width;
        pc.out_.v[i] = pc.a.v[2u * head * pc.width + e];
        pc.out2.v[i] = pc.a.v[(2u * head + 1u) * pc.width + e];
    } else {
        const float g = pc.b.v[pc.gateWidth == 1u ? i / pc.width : i];
        pc.out_.v[i] = pc.a.v[i] / (1.0 + exp(-g));
    }
}
