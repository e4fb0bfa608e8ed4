#version 450
// A step over rows of several sequences (continuous batching): moves the step's wanted rows of
// one buffer (the token state's list, common.glsl wantedRow) to rows 0..k-1, so the ops after
// the layer stack run on k rows. The k-th wanted row is row k or later, so copying in order
// never reads a row already overwritten; one workgroup, a barrier between rows.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform PC {
    FloatBuf x;
    IntBuf state;
    uint width;   // floats per row
    uint wanted;  // rows to gather
} pc;

void main() {
    for (uint k = 0u; k < pc.wanted; ++k) {
        const uint src = wantedRow(pc.state, k);
        if (src != k)
            for (uint i = gl_LocalInvocationID.x; i < pc.width; i += 256u) pc.x.v[k * pc.width + i] = pc.x.v[src * pc.width + i];
        barrier();
    }
}
