#version 450
// Chunked gated delta rule, part 2 of 2: one workgroup per (value head, 64 value dims), thread
// j owning row j of the head's state S (S[j][i] at i * d + j, as delta_net.comp keeps it). The
// chunks run in order; each is three matrix products against the state, their operands staged
// through shared memory in tiles of 16 key dims:
//   U = Ũ - W Sᵀ;   O = diag(e^G) Q Sᵀ + M U;   S = e^G_n S + Uᵀ diag(e^(G_n - G)) K
// (delta_chunk_prep.comp made Q, K, W, Ũ, M and G for every chunk.)
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 64) in;
layout(push_constant) uniform PC {
    FloatBuf scratch;  // delta_chunk_prep.comp's slots
    FloatBuf state;    // [valueHeads][d * d]
    FloatBuf out_;     // [token][valueHeads * d]
    uint d;
    uint valueHeads;
    uint tokens;
    uint chunk;
} pc;

const uint kTile = 16u;
shared float tileA_[64 * 16];  // [t][i - i0]
shared float tileB_[64 * 16];

// Stages rows [0, n) x key dims [i0, i0 + kTile) of the [t][d] matrix at `at` into tileA_ and,
// with `both`, of the one at `at2` into tileB_.
void stage(uint at, uint at2, bool both, uint n, uint i0) {
    for (uint e = gl_LocalInvocationID.x; e < n * kTile; e += 64u) {
        const uint t = e / kTile, i = i0 + e % kTile;
        tileA_[e] = i < pc.d ? pc.scratch.v[at + t * pc.d + i] : 0.0;
        if (both) tileB_[e] = i < pc.d ? pc.scratch.v[at2 + t * pc.d + i] : 0.0;
    }
}

void main() {
    const uint vh = gl_WorkGroupID.x, j = gl_WorkGroupID.y * 64u + gl_LocalInvocationID.x;
    const uint d = pc.d, c = pc.chunk, chunks = (pc.tokens + c - 1u) / c;
    const bool live = j < d;
    const uint s0 = vh * d * d;
    float u[64], o[64];
    for (uint ch = 0u; ch < chunks; ++ch) {
        const uint t0 = ch * c, n = min(c, pc.tokens - t0);
        const uint base = (vh * chunks + ch) * (4u * c * d + c * c + c);
        const uint kBase = base + c * d, wBase = base + 2u * c * d, uBase = base + 3u * c * d;
        const uint mBase = base + 4u * c * d, gBase = mBase + c * c;
        for (uint t = 0u; t < n; ++t) u[t] = o[t] = 0.0;
        // W Sᵀ and Q Sᵀ, column j.
        for (uint i0 = 0u; i0 < d; i0 += kTile) {
            stage(wBase, base, true, n, i0);
            barrier();
            if (live)
                for (uint ii = 0u; ii < kTile && i0 + ii < d; ++ii) {
                    const float s = pc.state.v[s0 + (i0 + ii) * d + j];
                    for (uint t = 0u; t < n; ++t) {
                        u[t] += tileA_[t * kTile + ii] * s;
                        o[t] += tileB_[t * kTile + ii] * s;
                    }
                }
            barrier();
        }
        const float gn = pc.scratch.v[gBase + n - 1u];
        if (live) {
            for (uint t = 0u; t < n; ++t) u[t] = pc.scratch.v[uBase + t * d + j] - u[t];
            for (uint t = 0u; t < n; ++t) {
                float ot = exp(pc.scratch.v[gBase + t]) * o[t];
                for (uint s = 0u; s <= t; ++s) ot += pc.scratch.v[mBase + t * c + s] * u[s];
                pc.out_.v[(t0 + t) * pc.valueHeads * d + vh * d + j] = ot;
            }
            for (uint t = 0u; t < n; ++t) u[t] *= exp(gn - pc.scratch.v[gBase + t]);
        }
        // S = e^G_n S + Uᵀ diag(e^(G_n - G)) K, row j.
        const float decay = exp(gn);
        for (uint i0 = 0u; i0 < d; i0 += kTile) {
            stage(kBase, 0u, false, n, i0);
            barrier();
            if (live)
                for (uint ii = 0u; ii < kTile && i0 + ii < d; ++ii) {
                    const uint at = s0 + (i0 + ii) * d + j;
                    float s = pc.state.v[at] * decay;
                    for (uint t = 0u; t < n; ++t) s += tileA_[t * kTile + ii] * u[t];
                    pc.state.v[at] = s;
                }
            barrier();
        }
    }
}
