#version 450
// Rotary embedding in place. The cos/sin table is computed on the host for every position
// exactly as the cpu tier does (ggml's repeated float multiplication); the position of token
// t is read from the token state on the GPU (common.glsl rowPosition).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 64) in;
layout(push_constant) uniform PC {
    FloatBuf x;
    FloatBuf table;  // [position][ropeDim / 2] of (cos, sin)
    IntBuf state;
    uint stride;     // floats between tokens
    uint heads;
    uint headDim;
    uint ropeDim;
    uint neox;
} pc;

void main() {
    const uint half_ = pc.ropeDim / 2u;
    const uint gid = gl_GlobalInvocationID.x;
    if (gid >= half_ * pc.heads) return;
    const uint t = gl_WorkGroupID.y;
    const uint h = gid / half_, i = gid % half_;
    const uint pos = rowPosition(pc.state, t);
    const float c = pc.table.v[2u * (pos * half_ + i)], s = pc.table.v[2u * (pos * half_ + i) + 1u];
    const uint base = t * pc.stride + h * pc.headDim;
    const uint a = base + (pc.neox != 0u ? i : 2u * i);
    const uint b = base + (pc.neox != 0u ? i + half_ : 2u * i + 1u);
    const float x0 = pc.x.v[a], x1 = pc.x.v[b];
    pc.x.v[a] = x0 * c - x1 * s;
    pc.x.v[b] = x0 * s + x1 * c;
}
