#version 450
// Causal conv1d of the gated DeltaNet (kernel `taps`, up to kMaxConvTaps), then silu, one thread
// per channel; the window of the last taps - 1 inputs is the layer's persistent state, updated
// in place, and the batch's tokens go through it in order (batched prefill = one token per step).
// Rows of several sequences (the token state's rows arrays; slotFloats != 0): each row steps its
// own slot's copy of the window (slotFloats floats after the slot before's), taken up where the
// slot changes from one row to the next and cleared where a row is at position 0; with
// rowOfGroup, workgroup z takes row z alone (every row in a slot of its own).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#extension GL_EXT_control_flow_attributes : require
#include "conv_step.glsl"

layout(local_size_x = 64) in;
layout(push_constant) uniform PC {
    FloatBuf x;       // [token][channels]
    FloatBuf window;  // [tap][channels], taps - 1 rows, oldest first (slot 0's copy)
    FloatBuf w;       // [channel][taps], oldest tap first
    FloatBuf out_;    // [token][channels]
    IntBuf state;     // the token state (rows of several sequences)
    uint channels;
    uint taps;
    uint tokens;
    uint slotFloats;  // 0: one sequence (slot 0, cleared by the host)
    uint kvRows;      // KV cache rows a slot: rowSlotBase / kvRows is a row's slot
    uint rowOfGroup;
} pc;

void main() {
    const uint ch = gl_GlobalInvocationID.x;
    if (ch >= pc.channels) return;
    const uint first = pc.rowOfGroup != 0u ? gl_WorkGroupID.z : 0u;
    const uint end = pc.rowOfGroup != 0u ? first + 1u : pc.tokens;
    uint base = 0u;
    ConvChannel c;
    for (uint t = first; t < end; ++t) {
        if (pc.slotFloats != 0u) {
            const uint at = rowSlotBase(pc.state, t) / pc.kvRows * pc.slotFloats;
            const bool cleared = rowPosition(pc.state, t) == 0u;
            if (t == first || at != base || cleared) {
                if (t != first) convStore(pc.window, base, c, ch, pc.channels, pc.taps);
                base = at;
                c = convLoad(pc.window, base, cleared, pc.w, ch, pc.channels, pc.taps);
            }
        } else if (t == first) {
            c = convLoad(pc.window, 0u, false, pc.w, ch, pc.channels, pc.taps);
        }
        pc.out_.v[t * pc.channels + ch] = convStep(c, pc.taps, pc.x.v[t * pc.channels + ch]);
    }
    if (end > first) convStore(pc.window, base, c, ch, pc.channels, pc.taps);
}
