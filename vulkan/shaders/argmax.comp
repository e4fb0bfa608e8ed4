#version 450
// Greedy sampling on the GPU: the first index of the largest logit becomes the next token
// (token state slot 0) and is appended to the output ring; with advance set, the state
// moves to the next position so the same recorded command buffer can run again.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform PC {
    FloatBuf logits;
    IntBuf state;
    IntBuf ring;
    uint n;
    uint ringCapacity;
    uint advance;
} pc;

shared float bestV[256];
shared uint bestI[256];

void main() {
    const uint tid = gl_LocalInvocationID.x;
    float v = -1.0 / 0.0;
    uint vi = 0xffffffffu;
    for (uint i = tid; i < pc.n; i += 256u) {
        const float x = pc.logits.v[i];
        if (x > v || vi == 0xffffffffu) {
            v = x;
            vi = i;
        }
    }
    bestV[tid] = v;
    bestI[tid] = vi;
    barrier();
    for (uint s = 128u; s > 0u; s >>= 1u) {
        if (tid < s) {
            const float o = bestV[tid + s];
            const uint oi = bestI[tid + s];
            if (oi != 0xffffffffu && (bestI[tid] == 0xffffffffu || o > bestV[tid] || (o == bestV[tid] && oi < bestI[tid]))) {
                bestV[tid] = o;
                bestI[tid] = oi;
            }
        }
        barrier();
    }
    if (tid == 0u) {
        const int token = int(bestI[0]);
        const int step = pc.state.v[kStateStep];
        pc.state.v[kStateTokens] = token;
        pc.ring.v[uint(step) % pc.ringCapacity] = token;
        if (pc.advance != 0u) {
            pc.state.v[kStatePosition] += 1;
            pc.state.v[kStateKvLength] += 1;
            pc.state.v[kStateStep] = step + 1;
        }
    }
}
