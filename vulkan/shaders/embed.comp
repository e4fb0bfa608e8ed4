#version 450
// out[t] = row tokens[t] of the embedding table, dequantized.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "weights.glsl"

layout(local_size_x = 64) in;
layout(push_constant) uniform PC {
    U16Buf w;
    FloatBuf out_;
    IntBuf state;
    uint type;
    uint cols;
    uint rowBytes;
    uint outStride;
    float scale;     // 1, or gemma3's sqrt(d): the rows as the cpu tier scales them, in float
} pc;

void main() {
    const uint t = gl_WorkGroupID.y;
    const uint token = uint(pc.state.v[kStateTokens + t]);
    for (uint i = gl_GlobalInvocationID.x; i < pc.cols; i += gl_NumWorkGroups.x * 64u)
        pc.out_.v[t * pc.outStride + i] = dequantElement(pc.type, pc.w, token * pc.rowBytes, i) * pc.scale;
}
