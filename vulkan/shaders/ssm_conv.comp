#version 450
// Causal conv1d of the gated DeltaNet (kernel `taps`), then silu, one thread per channel; the
// window of the last taps - 1 inputs is the layer's persistent state, updated in place, and
// the batch's tokens go through it in order (batched prefill = one token per step).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

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
    const uint c = pc.channels, last = pc.taps - 1u;
    for (uint t = 0u; t < pc.tokens; ++t) {
        const float x = pc.x.v[t * c + ch];
        float sum = 0.0;
        for (uint k = 0u; k < last; ++k) sum += pc.window.v[k * c + ch] * pc.w.v[ch * pc.taps + k];
        sum += x * pc.w.v[ch * pc.taps + last];
        for (uint k = 0u; k + 1u < last; ++k) pc.window.v[k * c + ch] = pc.window.v[(k + 1u) * c + ch];
        pc.window.v[(last - 1u) * c + ch] = x;
        pc.out_.v[t * c + ch] = sum / (1.0 + exp(-sum));
    }
}
