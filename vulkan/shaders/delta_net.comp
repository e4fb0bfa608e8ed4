#version 450
// The gated delta rule, one workgroup per value head, thread j owning row j of the head's
// d x d state S (value dim j over key dims i), stored key-major (S[j][i] at i * d + j) so a
// step reads the state coalesced. Per token, in order:
//   q, k = l2norm (q also / sqrt(d));  decay = exp(a * softplus(alpha + dt_bias));  b = sigmoid(beta)
//   S = decay S;  S += b (v - S k) kᵀ;  out = S q
// Value head h reads key head h mod keyHeads. The state stays on the device between tokens.
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
} pc;

shared float q_[128];
shared float k_[128];

float softplus(float x) { return x > 20.0 ? x : log(1.0 + exp(x)); }

void main() {
    const uint vh = gl_WorkGroupID.x, kh = vh % pc.keyHeads, j = gl_LocalInvocationID.x, d = pc.d;
    const uint keyDim = pc.keyHeads * d, stride = 2u * keyDim + pc.valueHeads * d;
    const uint s0 = vh * d * d;
    for (uint t = 0u; t < pc.tokens; ++t) {
        const uint row = t * stride;
        const float qj = j < d ? pc.qkv.v[row + kh * d + j] : 0.0;
        const float kj = j < d ? pc.qkv.v[row + keyDim + kh * d + j] : 0.0;
        const float sumQ = workgroupSum(qj * qj);
        const float sumK = workgroupSum(kj * kj);
        q_[j] = qj * (1.0 / max(sqrt(sumQ), pc.eps) * (1.0 / sqrt(float(d))));
        k_[j] = kj * (1.0 / max(sqrt(sumK), pc.eps));
        barrier();
        const float decay = exp(softplus(pc.alpha.v[t * pc.valueHeads + vh] + pc.dtBias.v[vh]) * pc.a.v[vh]);
        const float b = 1.0 / (1.0 + exp(-pc.beta.v[t * pc.valueHeads + vh]));
        if (j < d) {
            float sk = 0.0;
            for (uint i = 0u; i < d; ++i) {
                const float s = pc.state.v[s0 + i * d + j] * decay;
                pc.state.v[s0 + i * d + j] = s;
                sk += s * k_[i];
            }
            const float delta = (pc.qkv.v[row + 2u * keyDim + vh * d + j] - sk) * b;
            float o = 0.0;
            for (uint i = 0u; i < d; ++i) {
                const float s = pc.state.v[s0 + i * d + j] + k_[i] * delta;
                pc.state.v[s0 + i * d + j] = s;
                o += s * q_[i];
            }
            pc.out_.v[t * pc.valueHeads * d + vh * d + j] = o;
        }
        barrier();
    }
}
