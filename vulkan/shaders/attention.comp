#version 450
// One query head of one token over the layer's F16 KV cache. Up to exactMax positions it
// computes as llama.cpp's CPU flash attention does (runtime/cpu/attention_kernel.h): q rounded
// to F16, fp32 scores, online softmax, and the weighted sum of V in an F16 accumulator rounded
// after every position. Scores of a chunk of positions are computed in parallel; the
// accumulation then runs in position order, one thread per output element, with no barrier
// inside. Past exactMax it merges the fp32 partials of attention_split.comp instead.
// A sliding-window layer (window > 0) reads the last `window` positions, from its ring of rows.
// QUANT: a workgroup takes HB heads (128 threads each, the same work and order as alone) whose
// outputs are one 256-value group, and also writes them quantized for the next matvec
// (quant_block.glsl, quantize.comp's arithmetic: one dispatch a layer less).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "reduce.glsl"
#include "quant_block.glsl"
#include "split_policy.glsl"
#extension GL_EXT_buffer_reference_uvec2 : require

layout(buffer_reference, std430, buffer_reference_align = 16) ZINC_MEM readonly buffer Uvec4Buf { uvec4 v[]; };

layout(local_size_x = 128, local_size_x_id = 0) in;  // 128 * HB
layout(constant_id = 1) const uint HB = 1u;     // heads a workgroup (QUANT: 256 / headDim)
layout(constant_id = 2) const uint QUANT = 0u;  // 0: floats only; else 1 + quant_block.glsl's mode
const uint HT = 128u;                           // threads a head
layout(push_constant) uniform PC {
    FloatBuf q;
    UintBuf kCache;
    UintBuf vCache;
    FloatBuf out_;
    IntBuf state;
    uint nHead;
    uint group;      // query heads per kv head
    uint headDim;
    uint qStride;
    uint outStride;
    float scale;
    FloatBuf partials;
    uint nSplits;  // the split policy (split_policy.glsl)
    uint exactMax;
    float qScale;  // gemma3 scales q before attention (its F16 rounding sees q * qScale)
    uint window;   // 0: every position
    uint slots;    // the layer's rows: position p in row p % slots (graph/kv_layout.h)
    UintBuf quantOut;  // QUANT: the quantized rows, quantStride words apart
    uint quantStride;
    // ZINC_CHAIN (attention_chain; chain.glsl): where chainWait is not 0 this dispatch runs with
    // no barrier after attention_split_chain and first waits on the split site for the
    // (chainWait >> 16)-th layer's working split workgroups, (chainWait & 0xFFFF) head blocks
    // of them; where signal is not 0 a matvec chained after it waits on that site.
    uint chainWait;
    UintBuf signal;
} pc;

uint firstSlot_, slotBase_;
// The cache row of the i-th key this query reads (in position order), in its sequence's slot.
uint rowOf(uint i) {
    const uint r = firstSlot_ + i;
    return slotBase_ + (r >= pc.slots ? r - pc.slots : r);
}

// A head's threads (128) are subgroups [headSubgroup0(), + perHead()) of the workgroup.
uint perHead() { return max(HT / gl_SubgroupSize, 1u); }
uint headSubgroup0() { return (gl_LocalInvocationID.x / HT) * perHead(); }

const uint kMergeAhead = 32u;  // splits whose partials the merge loads up front (kMaxAttentionSplits)
const uint kMaxSplits = 128u;  // at least vulkan/plan_context.h kMaxAttentionSplits

#ifdef ZINC_CHAIN
#include "chain.glsl"
// The split workgroups that count themselves for a token of n keys (attention_split.comp
// splitDone): the token's split count (`splits`), or split 0 alone where it is computed exactly.
void waitForSplits(uint n, uint splits) {
    if (pc.chainWait == 0u) return;
    const uint working = n <= pc.exactMax ? 1u : splits;
    chainWait(splitSite(pc.partials), gl_WorkGroupID.x % kSplitLines, (pc.chainWait >> 16) * working * (pc.chainWait & 0xFFFFu));
}
void signalDone() {
    if (uvec2(pc.signal) != uvec2(0u)) chainSignal(pc.signal, kChainLines);
}
#else
void waitForSplits(uint n, uint splits) {}
void signalDone() {}
#endif

const uint kChunk = HB > 1u ? 256u : 1024u;  // positions a pass of the exact path (shared memory)
const uint kAhead = 16u;  // V elements a thread has in flight in the exact accumulation
shared float qh[HB * 256u];
shared float scores[HB * kChunk];   // then each position's rescale of the accumulator
shared float vScale[HB * kChunk];   // each position's weight
shared float splitScale[HB * kMaxSplits];
shared float outVals[QUANT != 0u ? 256u : 1u];  // QUANT: the workgroup's outputs, in row order

// Output element d of head h (part: the head's place in the workgroup) of token t.
void emit(uint t, uint h, uint part, uint d, float value) {
    pc.out_.v[t * pc.outStride + h * pc.headDim + d] = value;
    if (QUANT != 0u) outVals[part * pc.headDim + d] = value;
}

// QUANT: the workgroup's 256 outputs (thread j: element j of the group) quantized.
void finish(uint t) {
    if (QUANT == 0u) return;
    barrier();  // outVals[]
    const uint j = gl_LocalInvocationID.x, k = pc.nHead * pc.headDim, i = gl_WorkGroupID.x * 256u + j;
    quantizeBlock(pc.quantOut, t * pc.quantStride, k, j, i, j < 256u, j < 256u ? outVals[j] : 0.0, QUANT - 1u);
}

// The outputs written (and quantized): a chained matvec may read them.
void done(uint t) {
    finish(t);
    signalDone();
}

void main() {
    const uint tid = gl_LocalInvocationID.x % HT, part = gl_LocalInvocationID.x / HT;
    const uint h = gl_WorkGroupID.x * HB + part, t = gl_WorkGroupID.y;
    const uint pos = rowPosition(pc.state, t);
    slotBase_ = rowSlotBase(pc.state, t);
    const uint first = pc.window > 0u && pos >= pc.window ? pos + 1u - pc.window : 0u;
    const uint n = pos + 1u - first;
    firstSlot_ = first % pc.slots;
    const uint kvHead = h / pc.group;
    const uint hd = pc.headDim, kvDim = (pc.nHead / pc.group) * hd;
    // A token past exactMax keys: its split count (attention_split.comp's, the partials merged).
    const uint splits = stepSplits(n, first == 0u, pc.nSplits, pc.partials);
    waitForSplits(n, splits);
    if (n > pc.exactMax) {
        // Merge: one thread per split finds the common max and each split's scale, then one
        // thread per output element sums the scaled partials (loads independent of each other).
        // Every load the merge makes for the first kMergeAhead splits (each split's max and sum,
        // element tid of its partial) is issued first, in one round trip, not three.
        const uint base = (t * pc.nHead + h) * policyStride(pc.nSplits) * (hd + 2u);
        float ahead[kMergeAhead];
        [[unroll]] for (uint u = 0u; u < kMergeAhead; ++u)
            ahead[u] = u < splits && tid < hd ? pc.partials.v[base + u * (hd + 2u) + 2u + tid] : 0.0;
        // A thread a split (at most kMaxSplits, the workgroup's 128): its max and sum.
        const float mine = tid < splits ? pc.partials.v[base + tid * (hd + 2u)] : -1.0 / 0.0;
        const float mineSum = tid < splits ? pc.partials.v[base + tid * (hd + 2u) + 1u] : 0.0;
        const float m = groupMax(mine, HT);
        const uint ss = part * kMaxSplits;  // this head's splitScale[]
        float scaled = 0.0;
        if (tid < splits) {
            const float f = expAccurate(mine - m);
            splitScale[ss + tid] = f;
            scaled = mineSum * f;
        }
        const float sum = groupSum(scaled, HT);  // its barriers also publish splitScale[]
        for (uint d = tid; d < hd; d += 128u) {
            float acc[8] = float[8](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
            uint s0 = 0u;
            if (d == tid) {  // the first element: its first kMergeAhead partials are held
                [[unroll]] for (uint s = 0u; s < kMergeAhead; s += 8u)
                    [[unroll]] for (uint u = 0u; u < 8u; ++u)
                        if (s + u < splits) acc[u] += ahead[s + u] * splitScale[ss + s + u];
                s0 = kMergeAhead;
            }
            for (uint s = s0; s < splits; s += 8u)
                [[unroll]] for (uint u = 0u; u < 8u; ++u)
                    if (s + u < splits) acc[u] += pc.partials.v[base + (s + u) * (hd + 2u) + 2u + d] * splitScale[ss + s + u];
            const float total = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
            emit(t, h, part, d, total / sum);
        }
        done(t);
        return;
    }
    const uint qb = part * 256u, sb = part * kChunk;  // this head's qh[], scores[] and vScale[]
    for (uint i = tid; i < hd; i += 128u) qh[qb + i] = roundHalf(pc.q.v[t * pc.qStride + h * hd + i] * pc.qScale);
    barrier();
    const uvec2 kAddress = uvec2(pc.kCache);
    const bool wide = hd % 8u == 0u && kvDim % 8u == 0u && (kAddress.x & 15u) == 0u;
    Uvec4Buf k4 = Uvec4Buf(kAddress);
    // The accumulator: element tid and, for heads wider than the workgroup (256: qwen35's gated
    // attention, gemma3), element tid + 128.
    float maxScore = -1.0 / 0.0, sum = 0.0;
    float acc[2] = float[2](0.0, 0.0);
    for (uint base = 0u; base < n; base += kChunk) {
        const uint count = min(kChunk, n - base);
        // Scores, one thread per position. Where rows are 16-byte aligned the row is loaded 16
        // bytes at a time, up to 16 loads in flight; the sum runs in the same order either way.
        for (uint p = tid; p < count; p += 128u) {
            float s = 0.0;
            if (wide) {
                const uint row = (rowOf(base + p) * kvDim + kvHead * hd) / 8u, quads = hd / 8u;
                for (uint b = 0u; b < quads; b += 16u) {
                    uvec4 k[16];
                    [[unroll]] for (uint i = 0u; i < 16u; ++i)
                        if (b + i < quads) k[i] = k4.v[row + b + i];
                    [[unroll]] for (uint i = 0u; i < 16u; ++i) {
                        if (b + i >= quads) break;
                        const uint q0 = 8u * (b + i);
                        const vec2 k0 = unpackHalf2x16(k[i].x), k1 = unpackHalf2x16(k[i].y);
                        const vec2 k2 = unpackHalf2x16(k[i].z), k3 = unpackHalf2x16(k[i].w);
                        s += k0.x * qh[qb + q0] + k0.y * qh[qb + q0 + 1u];
                        s += k1.x * qh[qb + q0 + 2u] + k1.y * qh[qb + q0 + 3u];
                        s += k2.x * qh[qb + q0 + 4u] + k2.y * qh[qb + q0 + 5u];
                        s += k3.x * qh[qb + q0 + 6u] + k3.y * qh[qb + q0 + 7u];
                    }
                }
            } else {
                const uint row = (rowOf(base + p) * kvDim + kvHead * hd) / 2u;
                for (uint i = 0u; i < hd / 2u; ++i) {
                    const vec2 kv = unpackHalf2x16(pc.kCache.v[row + i]);
                    s += kv.x * qh[qb + 2u * i] + kv.y * qh[qb + 2u * i + 1u];
                }
            }
            scores[sb + p] = s * pc.scale;
        }
        barrier();
        // The online softmax's factors for every position, in parallel: thread i takes a
        // contiguous segment, learns the running max before it (a scan of the segments' maxima),
        // and writes each position's accumulator rescale (scores[p]) and weight (vScale[p]).
        // The values are those of the sequential loop exactly: the same exp of the same floats.
        const uint per = (count + 127u) / 128u, first = min(tid * per, count), last = min(first + per, count);
        float segMax = -1.0 / 0.0;
        for (uint p = first; p < last; ++p) segMax = max(segMax, scores[sb + p]);
        // Scan: within the subgroup in registers, across subgroups through their maxima.
        float running = max(maxScore, subgroupExclusiveMax(segMax));
        const float subgroupTotal = subgroupMax(segMax);
        if (subgroupElect()) reduceScratch_[gl_SubgroupID] = subgroupTotal;
        barrier();
        for (uint i = headSubgroup0(); i < gl_SubgroupID; ++i) running = max(running, reduceScratch_[i]);
        for (uint i = headSubgroup0(); i < headSubgroup0() + perHead(); ++i) maxScore = max(maxScore, reduceScratch_[i]);
        for (uint p = first; p < last; ++p) {
            const float s = scores[sb + p];
            if (s > running) {
                scores[sb + p] = expAccurate(running - s);
                vScale[sb + p] = 1.0;
                running = s;
            } else {
                scores[sb + p] = 1.0;
                vScale[sb + p] = expAccurate(s - running);
            }
        }
        barrier();
        // The F16 accumulator, position by position, one thread per output element (two where the
        // head is wider than the workgroup); V is loaded kAhead positions ahead so the loads
        // overlap the rounding chain (4 ahead left the chain waiting on memory: a 16-token chat
        // decoded slower than one past exactMax). The weights' sum is kept once per thread.
        [[unroll]] for (uint lane = 0u; lane < 2u; ++lane) {
            const uint d = tid + 128u * lane;
            if (d >= hd) break;
            const uint col = kvHead * hd + d;
            float v[kAhead], next[kAhead];
            [[unroll]] for (uint u = 0u; u < kAhead; ++u) {
                const uint e = rowOf(base + min(u, count - 1u)) * kvDim + col;
                next[u] = unpackHalf2x16(pc.vCache.v[e / 2u])[e % 2u];
            }
            float a = acc[lane];
            for (uint p = 0u; p < count; p += kAhead) {
                [[unroll]] for (uint u = 0u; u < kAhead; ++u) v[u] = next[u];
                if (p + kAhead < count)
                    [[unroll]] for (uint u = 0u; u < kAhead; ++u) {
                        const uint e = rowOf(base + min(p + kAhead + u, count - 1u)) * kvDim + col;
                        next[u] = unpackHalf2x16(pc.vCache.v[e / 2u])[e % 2u];
                    }
                [[unroll]] for (uint u = 0u; u < kAhead; ++u) {
                    if (p + u >= count) break;
                    const float ms = scores[sb + p + u], vs = vScale[sb + p + u];
                    // a is a half already: the rescale rounds only where a new max made it
                    // differ from 1 (ms is the same in every thread: no divergence).
                    if (ms != 1.0) a = roundHalf(a * ms);
                    a = roundHalf(fma(v[u], vs, a));  // one rounding, as the AVX2 kernel
                    if (lane == 0u) sum = sum * ms + vs;
                }
            }
            acc[lane] = a;
        }
        barrier();
    }
    [[unroll]] for (uint lane = 0u; lane < 2u; ++lane)
        if (tid + 128u * lane < hd) emit(t, h, part, tid + 128u * lane, acc[lane] * (sum > 0.0 ? 1.0 / sum : 0.0));
    done(t);
}
