#version 450
// Causal conv1d of the gated DeltaNet (kernel `taps`, up to kMaxConvTaps), then silu, one thread
// per channel; the window of the last taps - 1 inputs is the layer's persistent state, updated
// in place, and the batch's tokens go through it in order (batched prefill = one token per step).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#extension GL_EXT_control_flow_attributes : require
#include "conv_step.glsl"

layout(local_size_x = 64) in;
layout(push_constant) uniform PC {
    FloatBuf x;       // [token][channels]
    FloatBuf window;  // [tap][channels], taps - 1 rows, oldest first
    FloatBuf w;       // [channel][taps], oldest tap first
    FloatBuf out_;    // [token][channels]
    uint channels;
    uint taps;
    uint tokens;
} pc;

void main() {
    const uint ch = gl_GlobalInvocationID.x;
    if (ch >= pc.channels) return;
    ConvChannel c = convLoad(pc.window, pc.w, ch, pc.channels, pc.taps);
    for (uint t = 0u; t < pc.tokens; ++t)
        pc.out_.v[t * pc.channels + ch] = convStep(c, pc.taps, pc.x.v[t * pc.channels + ch]);
    convStore(pc.window, c, ch, pc.channels, pc.taps);
}
