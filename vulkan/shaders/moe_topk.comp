#version 450
// The MoE router: softmax over the experts' logits, the top k (lower id first on ties, as the
// cpu tier's partial_sort), renormalised when the model says so.
// With F32 router weights (w != 0) the logits are computed here too, in one dispatch: workgroup
// (row, token) sums weight row `row` · x as matvec.comp's float path does (32-value units
// strided over the first `matThreads` threads, then the subgroups in order: the same bits); the
// workgroup that finishes a token's last row (a count per token, reset by that workgroup)
// then runs the top k over the token's logits. Without w: one workgroup per token, the logits
// given (another weight type's matvec wrote them).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "reduce.glsl"

layout(local_size_x = 128) in;
// The logits other workgroups of this dispatch wrote: read past the L1 (coherent).
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer SharedFloats { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer Counters { uint v[]; };
layout(push_constant) uniform PC {
    SharedFloats logits;  // [token][nExpert]
    IntBuf ids;           // [token][nUsed]
    FloatBuf weights;     // [token][nUsed]
    FloatBuf w;           // F32 router rows [nExpert][k] (computes != 0)
    FloatBuf x;           // [token][xStride]
    Counters done;        // [token] rows finished
    uint nExpert;
    uint nUsed;
    uint normalize;
    uint k;
    uint xStride;
    uint matThreads;      // matvec.comp's workgroup size for k (32..128)
    uint computes;        // 0: the logits are given, one workgroup per token
} pc;

const uint kMaxExperts = 512u;
shared vec4 probs[kMaxExperts / 4u];
shared float chosenWeights[64];
shared float roundBest[2][128];  // per subgroup (at most 128 of one invocation)
shared uint roundId[2][128];
shared bool last;

float workgroupMax(float x) {
    x = subgroupMax(x);
    if (subgroupElect()) reduceScratch_[gl_SubgroupID] = x;
    barrier();
    float m = reduceScratch_[0];
    for (uint i = 1u; i < gl_NumSubgroups; ++i) m = max(m, reduceScratch_[i]);
    barrier();
    return m;
}

// One row of the router (or the gate): matvec.comp's float path, unit by unit.
float rowDot(FloatBuf w, uint w0, uint t) {
    const uint tid = gl_LocalInvocationID.x;
    float acc = 0.0;
    if (tid < pc.matThreads) {
        const uint nUnits = (pc.k + 31u) / 32u, a0 = t * pc.xStride;
        for (uint u = tid; u < nUnits; u += pc.matThreads) {
            const uint end = min(32u * u + 32u, pc.k);
            float wv[32], av[32];  // loaded first: 64 loads in flight, not one at a time
            for (uint e = 0u; e < 32u; ++e) {
                wv[e] = 0.0;
                av[e] = 0.0;
                if (32u * u + e < end) {  // a branch, not a select: no load past the row
                    wv[e] = w.v[w0 + 32u * u + e];
                    av[e] = pc.x.v[a0 + 32u * u + e];
                }
            }
            float r = 0.0;
            for (uint e = 0u; e < 32u; ++e)
                if (32u * u + e < end) r += wv[e] * av[e];
            acc += r;
        }
    }
    const float s = subgroupAdd(acc);
    if (subgroupElect()) reduceScratch_[gl_SubgroupID] = s;
    barrier();
    float total = 0.0;
    for (uint g = 0u; g < gl_NumSubgroups; ++g) total += reduceScratch_[g];
    return total;
}

float prob(uint e) { return probs[e / 4u][e % 4u]; }

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint t = pc.computes != 0u ? gl_WorkGroupID.y : gl_WorkGroupID.x;
    if (pc.computes != 0u) {
        const uint row = gl_WorkGroupID.x;
        const float s = rowDot(pc.w, row * pc.k, t);
        if (tid == 0u) {
            pc.logits.v[t * pc.nExpert + row] = s;
            memoryBarrierBuffer();
            last = atomicAdd(pc.done.v[t], 1u) == pc.nExpert - 1u;
            if (last) pc.done.v[t] = 0u;  // ready for the next router
        }
        barrier();
        if (!last) return;
        memoryBarrierBuffer();
    }
    const uint l0 = t * pc.nExpert;
    float m = -1.0 / 0.0;
    for (uint e = tid; e < pc.nExpert; e += 128u) m = max(m, pc.logits.v[l0 + e]);
    m = workgroupMax(m);
    float part = 0.0;
    for (uint e = tid; e < pc.nExpert; e += 128u) {
        const float p = exp(pc.logits.v[l0 + e] - m);
        probs[e / 4u][e % 4u] = p;
        part += p;
    }
    const float sum = workgroupSum(part);  // its barriers also publish probs[]
    for (uint e = tid; e < pc.nExpert; e += 128u) probs[e / 4u][e % 4u] /= sum;  // compared as the cpu tier does
    for (uint e = pc.nExpert + tid; e < (pc.nExpert + 3u) / 4u * 4u; e += 128u) probs[e / 4u][e % 4u] = -1.0;  // never ranks
    barrier();
    // The top k by k rounds of a workgroup argmax (the higher probability, the lower id on
    // ties), each taking its winner out: rank r is round r. A thread holds experts tid,
    // tid + 128, ...; a round is two subgroup reductions and one barrier (the two halves of
    // roundBest alternate, so a round's writes never meet the last round's reads). Ranking
    // every expert against every other (a 64-step loop of shared loads a thread for 256
    // experts) cost the Qwen3.6 shape 7.6 us a layer on the H200. The softmax and the rounds in
    // the first subgroup alone (no workgroup barrier; its lanes standing in for the 128 threads
    // in turn, so the same bits) were slower: the tail's own work, not its barriers, is what
    // it costs (H200, bench -p 512 -n 128 -r 2 --gpu-greedy, run 193: Qwen3.6 shape 297.2 ->
    // 286.8 tok/s, Qwen3-30B-A3B 290.7 -> 277.8; branch topk, not merged). A workgroup of 256
    // threads (one expert a thread) was slower too: 297.5 -> 295.0 and 294.7 -> 292.9 (run 194).
    float held[kMaxExperts / 128u];
    for (uint j = 0u; j < kMaxExperts / 128u; ++j) {
        const uint e = tid + 128u * j;
        held[j] = e < pc.nExpert ? prob(e) : -2.0;  // never wins
    }
    for (uint r = 0u; r < pc.nUsed; ++r) {
        float best = held[0];
        uint bestId = tid;
        for (uint j = 1u; j < kMaxExperts / 128u; ++j)
            if (held[j] > best) {  // ids ascend with j: a tie keeps the lower
                best = held[j];
                bestId = tid + 128u * j;
            }
        const float m = subgroupMax(best);
        const uint id = subgroupMin(best == m ? bestId : 0xffffffffu);
        const uint side = r & 1u;
        if (subgroupElect()) {
            roundBest[side][gl_SubgroupID] = m;
            roundId[side][gl_SubgroupID] = id;
        }
        barrier();
        float winner = roundBest[side][0];
        uint winnerId = roundId[side][0];
        for (uint g = 1u; g < gl_NumSubgroups; ++g) {
            const float v = roundBest[side][g];
            const uint i = roundId[side][g];
            if (v > winner || (v == winner && i < winnerId)) {
                winner = v;
                winnerId = i;
            }
        }
        if (tid == 0u) {
            pc.ids.v[t * pc.nUsed + r] = int(winnerId);
            chosenWeights[r] = winner;
        }
        for (uint j = 0u; j < kMaxExperts / 128u; ++j)  // unrolled: held[] stays in registers
            if (winnerId == tid + 128u * j) held[j] = -3.0;     // taken
    }
    barrier();
    if (tid < pc.nUsed) {
        float total = 0.0;
        for (uint k = 0u; k < pc.nUsed; ++k) total += chosenWeights[k];
        pc.weights.v[t * pc.nUsed + tid] = pc.normalize != 0u ? chosenWeights[tid] / total : chosenWeights[tid];
    }
}
