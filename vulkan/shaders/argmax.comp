#version 450
// Greedy sampling on the GPU: the first index of the largest logit becomes the next token
// (token state slot 0) and is appended to the output ring; with advance set, the state
// moves to the next position so the same recorded command buffer can run again. advance 2:
// a step of rows of several sequences, one workgroup a wanted row: row r's id goes to ring
// entry r, the token state is left alone (the host writes the next step's rows).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#extension GL_EXT_buffer_reference_uvec2 : require

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer Vec4Buf { vec4 v[]; };

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

float v = -1.0 / 0.0;
uint vi = 0xffffffffu;
// Logit i after this thread's earlier ones (in increasing i): the first index of its largest.
void consider(float x, uint i) {
    if (x > v || vi == 0xffffffffu) {
        v = x;
        vi = i;
    }
}

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const bool rows = pc.advance == 2u;
    uvec2 base = uvec2(pc.logits);
    if (rows) {
        const uint offset = gl_WorkGroupID.x * pc.n * 4u;  // under 4 GiB (ArgmaxOp::recordRows checks)
        base.x += offset;
        base.y += base.x < offset ? 1u : 0u;
    }
    FloatBuf logits = FloatBuf(base);
    // One workgroup reads the whole vocabulary (152k logits: 594 a thread): with one load in
    // flight a thread waits an L2 round trip per logit. Each thread keeps kAhead loads of 16
    // bytes (or of 4 where the logits are not 16-byte aligned) in flight, and still meets its
    // logits in increasing order.
    const uint kAhead = 8u;
    if ((base.x & 15u) == 0u) {
        Vec4Buf l4 = Vec4Buf(base);
        const uint n4 = pc.n / 4u;
        for (uint q0 = tid; q0 < n4; q0 += 256u * kAhead) {
            vec4 x[kAhead];
            [[unroll]] for (uint u = 0u; u < kAhead; ++u)
                if (q0 + 256u * u < n4) x[u] = l4.v[q0 + 256u * u];
            [[unroll]] for (uint u = 0u; u < kAhead; ++u) {
                const uint q = q0 + 256u * u;
                if (q >= n4) break;
                [[unroll]] for (uint c = 0u; c < 4u; ++c) consider(x[u][c], 4u * q + c);
            }
        }
        for (uint i = 4u * n4 + tid; i < pc.n; i += 256u) consider(logits.v[i], i);
    } else {
        for (uint i0 = tid; i0 < pc.n; i0 += 256u * kAhead) {
            float x[kAhead];
            [[unroll]] for (uint u = 0u; u < kAhead; ++u)
                if (i0 + 256u * u < pc.n) x[u] = logits.v[i0 + 256u * u];
            [[unroll]] for (uint u = 0u; u < kAhead; ++u) {
                if (i0 + 256u * u >= pc.n) break;
                consider(x[u], i0 + 256u * u);
            }
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
    if (tid == 0u && rows) {
        pc.ring.v[gl_WorkGroupID.x] = int(bestI[0]);
    } else if (tid == 0u) {
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
