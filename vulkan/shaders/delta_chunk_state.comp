#version 450
// Chunked gated delta rule, part 2 of 2: one workgroup per (value head, 16 value dims), which
// keeps those 16 rows of the head's state S in shared memory across the chunks (S[j][i] at
// i * d + j in the state buffer, as delta_net.comp keeps it). The chunks run in order; each is
// three matrix products against the state, spread over 256 threads as (token group, row):
//   U = Ũ - W Sᵀ;   O = diag(e^G) Q Sᵀ + M U;   S = e^G_n S + Uᵀ diag(e^(G_n - G)) K
// (delta_chunk_prep.comp made Q, K, W, Ũ, M and G for every chunk.)
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform PC {
    FloatBuf scratch;  // delta_chunk_prep.comp's slots
    FloatBuf state;    // [valueHeads][d * d]
    FloatBuf out_;     // [token][valueHeads * d]
    uint d;
    uint valueHeads;
    uint tokens;
    uint chunk;
} pc;

const uint kRows = 16u;      // value rows per workgroup
const uint kGroups = 16u;    // token groups: thread (group, row) takes tokens group + 16 m
const uint kPerThread = 4u;  // 64-token chunks / kGroups
shared float s_[16 * 128];   // [row][i]
shared float u_[64 * 16];    // [t][row]
shared float e_[64];         // [t] e^(G_n - G_t)

void main() {
    const uint vh = gl_WorkGroupID.x, j0 = gl_WorkGroupID.y * kRows, tid = gl_LocalInvocationID.x;
    const uint row = tid % kRows, group = tid / kRows, j = j0 + row;
    const uint d = pc.d, c = pc.chunk, chunks = (pc.tokens + c - 1u) / c;
    const bool live = j < d;
    const uint s0 = vh * d * d;
    for (uint e = tid; e < kRows * d; e += 256u) {
        const uint r = e % kRows, i = e / kRows;
        s_[r * 128u + i] = j0 + r < d ? pc.state.v[s0 + i * d + j0 + r] : 0.0;
    }
    barrier();
    for (uint ch = 0u; ch < chunks; ++ch) {
        const uint t0 = ch * c, n = min(c, pc.tokens - t0);
        const uint base = (vh * chunks + ch) * (4u * c * d + c * c + c);
        const uint kBase = base + c * d, wBase = base + 2u * c * d, uBase = base + 3u * c * d;
        const uint mBase = base + 4u * c * d, gBase = mBase + c * c;
        const float gn = pc.scratch.v[gBase + n - 1u], decay = exp(gn);
        if (tid < n) e_[tid] = exp(gn - pc.scratch.v[gBase + tid]);
        // W Sᵀ and Q Sᵀ for this thread's tokens, row j; U to shared.
        float accU[kPerThread], accO[kPerThread];
        [[unroll]] for (uint m = 0u; m < kPerThread; ++m) accU[m] = accO[m] = 0.0;
        for (uint i = 0u; i < d; ++i) {
            const float s = s_[row * 128u + i];
            [[unroll]] for (uint m = 0u; m < kPerThread; ++m) {
                const uint t = group + kGroups * m;
                if (t < n) {
                    accU[m] += pc.scratch.v[wBase + t * d + i] * s;
                    accO[m] += pc.scratch.v[base + t * d + i] * s;
                }
            }
        }
        [[unroll]] for (uint m = 0u; m < kPerThread; ++m) {
            const uint t = group + kGroups * m;
            if (t < n) u_[t * kRows + row] = live ? pc.scratch.v[uBase + t * d + j] - accU[m] : 0.0;
        }
        barrier();
        // O = diag(e^G) Q Sᵀ + M U
        [[unroll]] for (uint m = 0u; m < kPerThread; ++m) {
            const uint t = group + kGroups * m;
            if (t < n && live) {
                float o = exp(pc.scratch.v[gBase + t]) * accO[m];
                for (uint s = 0u; s <= t; ++s) o += pc.scratch.v[mBase + t * c + s] * u_[s * kRows + row];
                pc.out_.v[(t0 + t) * pc.valueHeads * d + vh * d + j] = o;
            }
        }
        // S = e^G_n S + Uᵀ diag(e^(G_n - G)) K: this thread's row, key dims group + 16 m.
        for (uint i = group; i < d; i += kGroups) {
            float s = s_[row * 128u + i] * decay;
            for (uint t = 0u; t < n; ++t)
                s += pc.scratch.v[kBase + t * d + i] * (e_[t] * u_[t * kRows + row]);
            s_[row * 128u + i] = s;
        }
        barrier();
    }
    for (uint e = tid; e < kRows * d; e += 256u) {
        const uint r = e % kRows, i = e / kRows;
        if (j0 + r < d) pc.state.v[s0 + i * d + j0 + r] = s_[r * 128u + i];
    }
}
