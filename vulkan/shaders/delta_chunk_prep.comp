#version 450
// Chunked gated delta rule, part 1 of 2 (runtime/cpu/delta_rule.h has the math): one workgroup
// per (chunk, value head), every chunk at once. It needs only the chunk's own q, k, v, decay and
// beta, not the state, and writes to the chunk's scratch slot:
//   Q, K  [t][i]  q, k l2-normalised (q also / √d)
//   W, Ũ  [t][i]  (I + A)⁻¹ diag(β e^G) K and (I + A)⁻¹ diag(β) V, A[t][s] = β_t e^(G_t-G_s) k_t·k_s (s < t)
//   M     [t][s]  e^(G_t - G_s) q_t·k_s for s <= t
//   G     [t]     cumulative log decay within the chunk
// delta_chunk_state.comp then walks the chunks in order, carrying the state.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 128) in;  // thread = key / value dim (d <= 128) or token (chunk <= 64)
layout(push_constant) uniform PC {
    FloatBuf qkv;      // [token][q | k | v] (the conv's output)
    FloatBuf alpha;    // [token][valueHeads]
    FloatBuf beta;     // [token][valueHeads]
    FloatBuf a;        // [valueHeads]
    FloatBuf dtBias;   // [valueHeads]
    FloatBuf scratch;  // [valueHeads][chunks][slot]
    uint d;
    uint keyHeads;
    uint valueHeads;
    uint tokens;
    uint chunk;
    float eps;
} pc;

shared float a_[64 * 64];  // A, strictly lower
shared float invQ_[64], invK_[64], g_[64], b_[64];

float softplus(float x) { return x > 20.0 ? x : log(1.0 + exp(x)); }

void main() {
    const uint ch = gl_WorkGroupID.x, vh = gl_WorkGroupID.y, kh = vh % pc.keyHeads, tid = gl_LocalInvocationID.x;
    const uint d = pc.d, c = pc.chunk, t0 = ch * c, n = min(c, pc.tokens - t0);
    const uint keyDim = pc.keyHeads * d, stride = 2u * keyDim + pc.valueHeads * d;
    const uint qAt = kh * d, kAt = keyDim + kh * d, vAt = 2u * keyDim + vh * d;
    const uint chunks = (pc.tokens + c - 1u) / c;
    const uint base = (vh * chunks + ch) * (4u * c * d + c * c + c);
    const uint kBase = base + c * d, wBase = base + 2u * c * d, uBase = base + 3u * c * d;
    const uint mBase = base + 4u * c * d, gBase = mBase + c * c;

    // Per token: the norms of q and k, the log decay and beta.
    if (tid < n) {
        const uint row = (t0 + tid) * stride;
        float sq = 0.0, sk = 0.0;
        for (uint i = 0u; i < d; ++i) {
            const float q = pc.qkv.v[row + qAt + i], k = pc.qkv.v[row + kAt + i];
            sq += q * q;
            sk += k * k;
        }
        invQ_[tid] = 1.0 / max(sqrt(sq), pc.eps) * (1.0 / sqrt(float(d)));
        invK_[tid] = 1.0 / max(sqrt(sk), pc.eps);
        const uint gate = (t0 + tid) * pc.valueHeads + vh;
        g_[tid] = softplus(pc.alpha.v[gate] + pc.dtBias.v[vh]) * pc.a.v[vh];
        b_[tid] = 1.0 / (1.0 + exp(-pc.beta.v[gate]));
    }
    barrier();
    if (tid == 0u) {
        float sum = 0.0;
        for (uint t = 0u; t < n; ++t) g_[t] = sum += g_[t];
    }
    barrier();
    for (uint e = tid; e < n * d; e += 128u) {
        const uint t = e / d, i = e % d, row = (t0 + t) * stride;
        pc.scratch.v[base + e] = pc.qkv.v[row + qAt + i] * invQ_[t];
        pc.scratch.v[kBase + e] = pc.qkv.v[row + kAt + i] * invK_[t];
    }
    if (tid < n) pc.scratch.v[gBase + tid] = g_[tid];
    // A and M: the lower triangles of K Kᵀ and Q Kᵀ.
    for (uint e = tid; e < n * n; e += 128u) {
        const uint t = e / n, s = e % n;
        if (s > t) continue;
        const uint rowT = (t0 + t) * stride, rowS = (t0 + s) * stride;
        float qk = 0.0, kk = 0.0;
        for (uint i = 0u; i < d; ++i) {
            const float ks = pc.qkv.v[rowS + kAt + i];
            qk += pc.qkv.v[rowT + qAt + i] * ks;
            kk += pc.qkv.v[rowT + kAt + i] * ks;
        }
        const float decay = exp(g_[t] - g_[s]);
        pc.scratch.v[mBase + t * c + s] = decay * qk * invQ_[t] * invK_[s];
        a_[t * 64u + s] = s < t ? b_[t] * decay * kk * invK_[t] * invK_[s] : 0.0;
    }
    barrier();
    // Forward substitution through (I + A), one column of Ũ and then of W per thread. Two passes,
    // not one: a thread's 64 earlier values of one column stay in registers, where both columns'
    // 128 did not on RDNA3 (ACO, gfx1100: 132 VGPRs and 176 spilled to scratch; one column at a
    // time, none). Each value is the same sum in the same order as before.
    if (tid < d) {
        float x[64];
        for (uint pass = 0u; pass < 2u; ++pass) {
            const uint at = pass == 0u ? uBase : wBase;
            for (uint t = 0u; t < n; ++t) {
                const float from = pc.qkv.v[(t0 + t) * stride + (pass == 0u ? vAt : kAt) + tid];
                float xt = pass == 0u ? b_[t] * from : b_[t] * exp(g_[t]) * from * invK_[t];
                for (uint s = 0u; s < t; ++s) xt -= a_[t * 64u + s] * x[s];
                x[t] = xt;
                pc.scratch.v[at + t * d + tid] = xt;
            }
        }
    }
}
