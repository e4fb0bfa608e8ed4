#version 450
// Stores the batch's k and v rows in one layer's F16 cache: row t's position p in row p % slots
// (graph/kv_layout.h: a ring on sliding-window layers, else the context) of its sequence slot.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 64) in;
layout(push_constant) uniform PC {
    FloatBuf k;
    FloatBuf v;
    UintBuf kCache;  // this layer's [context][kvDim] halves, two per word
    UintBuf vCache;
    IntBuf state;
    uint kvDim;
    uint stride;     // floats between tokens of k and v
    uint slots;      // the layer's rows
} pc;

void main() {
    const uint pair = gl_GlobalInvocationID.x;
    if (2u * pair >= pc.kvDim) return;
    const uint t = gl_WorkGroupID.y;
    const uint pos = rowPosition(pc.state, t);
    const uint src = t * pc.stride + 2u * pair;
    const uint dst = ((rowSlotBase(pc.state, t) + pos % pc.slots) * pc.kvDim) / 2u + pair;
    pc.kCache.v[dst] = packHalves(pc.k.v[src], pc.k.v[src + 1u]);
    pc.vCache.v[dst] = packHalves(pc.v.v[src], pc.v.v[src + 1u]);
}
