#version 450
// The gated delta rule, token by token (decode; prefill when chunking is off). The state S of
// a value head is d x d (value dim j over key dims i), stored key-major (S[j][i] at i * d + j).
// Its columns j are independent of each other, so workgroup (head, block) takes 32 of them:
// thread (r, c) holds column block * 32 + c over the key rows r, r + 4, r + 8, ... in registers
// for the whole dispatch (read once, written once), and the two sums over i (S k and S q) are
// four partial sums added in r order through shared memory. Per token, in order:
//   q, k = l2norm (q also / sqrt(d));  decay = exp(a * softplus(alpha + dt_bias));  b = sigmoid(beta)
//   S = decay S;  S += b (v - S k) kᵀ;  out = S q
// Value head h reads key head h mod keyHeads. The state stays on the device between tokens.
// A single workgroup per head ran at ~60 us per layer on the H100 (Qwen3.6: 32 workgroups, the
// state read and written twice per token through memory); this is head x d / 32 workgroups.
// Rows of several sequences (the token state's rows arrays; slotFloats != 0): each row steps its
// own slot's copy of the state (slotFloats floats after the slot before's), stored and taken up
// where the slot changes from one row to the next, cleared where a row is at position 0; with
// rowOfGroup, workgroup z takes row z alone (every row in a slot of its own).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "reduce.glsl"

layout(local_size_x = 128) in;
layout(push_constant) uniform PC {
    FloatBuf qkv;     // [token][q | k | v]
    FloatBuf alpha;   // [token][valueHeads]: the decay input
    FloatBuf beta;    // [token][valueHeads]
    FloatBuf out_;    // [token][valueHeads * d]
    FloatBuf state;   // [valueHeads][d * d]
    FloatBuf a;       // [valueHeads]
    FloatBuf dtBias;  // [valueHeads]
    uint d;
    uint keyHeads;
    uint valueHeads;
    uint tokens;
    float eps;
    IntBuf state_;    // the token state (rows of several sequences)
    uint slotFloats;  // 0: one sequence (slot 0, cleared by the host)
    uint kvRows;      // KV cache rows a slot: rowSlotBase / kvRows is a row's slot
    uint rowOfGroup;
} pc;

const uint kCols = 32u;        // columns per workgroup
const uint kRowGroups = 4u;    // threads per column
const uint kMaxRows = 32u;     // rows per thread: d <= 128

shared float q_[128];
shared float k_[128];
shared float partial_[kRowGroups][kCols];

float softplus(float x) { return x > 20.0 ? x : log(1.0 + exp(x)); }

// The sum over the four row groups of each column's partial, the same order for every thread.
float columnSum(uint r, uint c, float x) {
    partial_[r][c] = x;
    barrier();
    const float s = (partial_[0][c] + partial_[1][c]) + (partial_[2][c] + partial_[3][c]);
    barrier();
    return s;
}

void main() {
    const uint vh = gl_WorkGroupID.x, kh = vh % pc.keyHeads, d = pc.d;
    const uint tid = gl_LocalInvocationID.x, c = tid % kCols, r = tid / kCols;
    const uint j = gl_WorkGroupID.y * kCols + c;
    const bool owner = j < d;
    const uint rows = d / kRowGroups;  // d % 4 == 0 (the host checks)
    const uint keyDim = pc.keyHeads * d, stride = 2u * keyDim + pc.valueHeads * d;
    uint s0 = vh * d * d;
    float s[kMaxRows];
    const uint first = pc.rowOfGroup != 0u ? gl_WorkGroupID.z : 0u;
    const uint end = pc.rowOfGroup != 0u ? first + 1u : pc.tokens;
    for (uint t = first; t < end; ++t) {
        // This row's slot's state in registers: taken up at the first row and where the slot
        // changes (the one before stored first), zeros where a sequence starts.
        const uint at = pc.slotFloats != 0u ? rowSlotBase(pc.state_, t) / pc.kvRows * pc.slotFloats + vh * d * d : s0;
        const bool cleared = pc.slotFloats != 0u && rowPosition(pc.state_, t) == 0u;
        if (t == first || at != s0 || cleared) {
            if (t != first)
                for (uint n = 0u; n < kMaxRows; ++n)
                    if (owner && n < rows) pc.state.v[s0 + (r + kRowGroups * n) * d + j] = s[n];
            s0 = at;
            for (uint n = 0u; n < kMaxRows; ++n)
                s[n] = owner && n < rows && !cleared ? pc.state.v[s0 + (r + kRowGroups * n) * d + j] : 0.0;
        }
        const uint row = t * stride;
        const float qi = tid < d ? pc.qkv.v[row + kh * d + tid] : 0.0;
        const float ki = tid < d ? pc.qkv.v[row + keyDim + kh * d + tid] : 0.0;
        const float sumQ = workgroupSum(qi * qi);
        const float sumK = workgroupSum(ki * ki);
        if (tid < d) {
            q_[tid] = qi * (1.0 / max(sqrt(sumQ), pc.eps) * (1.0 / sqrt(float(d))));
            k_[tid] = ki * (1.0 / max(sqrt(sumK), pc.eps));
        }
        barrier();
        const float decay = exp(softplus(pc.alpha.v[t * pc.valueHeads + vh] + pc.dtBias.v[vh]) * pc.a.v[vh]);
        const float b = 1.0 / (1.0 + exp(-pc.beta.v[t * pc.valueHeads + vh]));
        float sk = 0.0;
        for (uint n = 0u; n < kMaxRows; ++n) {
            if (n >= rows) break;
            s[n] *= decay;
            sk += s[n] * k_[r + kRowGroups * n];
        }
        sk = columnSum(r, c, sk);
        const float v = owner ? pc.qkv.v[row + 2u * keyDim + vh * d + j] : 0.0;
        const float delta = (v - sk) * b;
        float o = 0.0;
        for (uint n = 0u; n < kMaxRows; ++n) {
            if (n >= rows) break;
            const uint i = r + kRowGroups * n;
            s[n] += k_[i] * delta;
            o += s[n] * q_[i];
        }
        o = columnSum(r, c, o);  // its barriers also keep q_ / k_ until every thread is done
        if (owner && r == 0u) pc.out_.v[t * pc.valueHeads * d + vh * d + j] = o;
    }
    if (end > first)
        for (uint n = 0u; n < kMaxRows; ++n)
            if (owner && n < rows) pc.state.v[s0 + (r + kRowGroups * n) * d + j] = s[n];
}
