#version 450
// Long-context attention, split along the KV length (flash decoding): workgroup
// (split, head, token) walks the chunks split, split + S, split + 2S, ... of kChunk positions
// (S = the token's own split count: one per kChunk keys it reads, at most nSplits; the dispatch's
// x, from attention_args.comp, follows the step's longest row) in fp32 with an online softmax,
// and writes its partial (max score, sum of weights, weighted V sum); attention.comp merges
// the partials. A decode step, a prefill batch (token t at position + t) and rows of several
// sequences (each row at its own position in its own KV slot) alike.
// Only for KV lengths past exactMax; shorter ones are computed exactly as the cpu tier does.
// Needs headDim % 8 == 0 (the host splits only then). A sliding-window layer (window > 0) reads
// its last `window` positions from its ring of rows, as attention.comp does: the i-th of them
// is row (first + i) % slots.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "reduce.glsl"
#extension GL_EXT_buffer_reference_uvec2 : require

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer Uvec4Buf { uvec4 v[]; };

layout(local_size_x = 256) in;
layout(push_constant) uniform PC {
    FloatBuf q;
    UintBuf kCache;
    UintBuf vCache;
    FloatBuf partials;  // [token][head][split][headDim + 2]
    IntBuf state;
    uint nHead;
    uint group;
    uint headDim;
    uint kvDim;
    uint qStride;
    uint nSplits;  // partials per (token, head)
    float scale;
    uint exactMax;
    float qScale;  // gemma3 scales q before attention (its F16 rounding sees q * qScale)
    uint window;   // 0: every position
    uint slots;    // the layer's rows: position p in row p % slots (graph/kv_layout.h)
} pc;

uint firstSlot_, slotBase_;
// The cache row of the i-th key this query reads (in position order), in its sequence's slot.
uint rowOf(uint i) {
    const uint r = firstSlot_ + i;
    return slotBase_ + (r >= pc.slots ? r - pc.slots : r);
}

const uint kChunk = 64u;
shared float qh[256];
shared float weights[kChunk];
shared float partDot[256];
shared float partAcc[512];

float workgroupMax(float x) {
    x = subgroupMax(x);
    if (subgroupElect()) reduceScratch_[gl_SubgroupID] = x;
    barrier();
    float m = reduceScratch_[0];
    for (uint i = 1u; i < gl_NumSubgroups; ++i) m = max(m, reduceScratch_[i]);
    barrier();
    return m;
}

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint split = gl_WorkGroupID.x, h = gl_WorkGroupID.y, t = gl_WorkGroupID.z;
    const uint pos = rowPosition(pc.state, t);
    slotBase_ = rowSlotBase(pc.state, t);
    const uint first = pc.window > 0u && pos >= pc.window ? pos + 1u - pc.window : 0u;
    const uint n = pos + 1u - first;
    firstSlot_ = first % pc.slots;
    if (n <= pc.exactMax || split * kChunk >= n) return;  // whole workgroup
    const uint kvHead = h / pc.group, hd = pc.headDim;
    for (uint i = tid; i < hd; i += 256u) qh[i] = roundHalf(pc.q.v[t * pc.qStride + h * hd + i] * pc.qScale);
    barrier();
    const uvec2 kAddress = uvec2(pc.kCache);
    const bool wide = hd % 32u == 0u && pc.kvDim % 8u == 0u && (kAddress.x & 15u) == 0u;
    Uvec4Buf k4 = Uvec4Buf(kAddress);
    const uint pairs = hd / 2u, groups = 256u / pairs;
    const uint g = tid / pairs, j = tid % pairs;
    float m = -1.0 / 0.0, sum = 0.0;
    vec2 acc = vec2(0.0);
    // This token's own split count (attention.comp merges that many), whatever the dispatch's
    // x, which follows the step's longest row: a row's partials do not depend on its batch.
    const uint splits = min((n + kChunk - 1u) / kChunk, pc.nSplits);
    if (split >= splits) return;  // whole workgroup
    for (uint start = split * kChunk; start < n; start += splits * kChunk) {
        const uint count = min(kChunk, n - start);
        // Scores: four threads per position, each a quarter of the head (hd % 8 == 0 here).
        {
            const uint p = tid / 4u, part = tid % 4u, words = hd / 8u;
            float dot = 0.0;
            if (p < count && wide) {  // a quarter is hd / 32 16-byte loads, all in flight
                const uint row = (rowOf(start + p) * pc.kvDim + kvHead * hd + part * (hd / 4u)) / 8u, quads = hd / 32u;
                const uint q0 = part * (hd / 4u);
                uvec4 k[8];
                for (uint i = 0u; i < 8u; ++i)
                    if (i < quads) k[i] = k4.v[row + i];
                for (uint i = 0u; i < 8u; ++i) {
                    if (i >= quads) break;
                    const uint qi = q0 + 8u * i;
                    const vec2 k0 = unpackHalf2x16(k[i].x), k1 = unpackHalf2x16(k[i].y);
                    const vec2 k2 = unpackHalf2x16(k[i].z), k3 = unpackHalf2x16(k[i].w);
                    dot += k0.x * qh[qi] + k0.y * qh[qi + 1u];
                    dot += k1.x * qh[qi + 2u] + k1.y * qh[qi + 3u];
                    dot += k2.x * qh[qi + 4u] + k2.y * qh[qi + 5u];
                    dot += k3.x * qh[qi + 6u] + k3.y * qh[qi + 7u];
                }
            } else if (p < count) {
                const uint row = (rowOf(start + p) * pc.kvDim + kvHead * hd + part * (hd / 4u)) / 2u;
                const uint q0 = part * (hd / 4u);
                uint i = 0u;
                for (; i + 2u <= words; i += 2u) {
                    const vec2 k0 = unpackHalf2x16(pc.kCache.v[row + i]);
                    const vec2 k1 = unpackHalf2x16(pc.kCache.v[row + i + 1u]);
                    dot += k0.x * qh[q0 + 2u * i] + k0.y * qh[q0 + 2u * i + 1u];
                    dot += k1.x * qh[q0 + 2u * i + 2u] + k1.y * qh[q0 + 2u * i + 3u];
                }
                if (i < words) {
                    const vec2 k0 = unpackHalf2x16(pc.kCache.v[row + i]);
                    dot += k0.x * qh[q0 + 2u * i] + k0.y * qh[q0 + 2u * i + 1u];
                }
            }
            partDot[tid] = dot;
        }
        barrier();
        float s = -1.0 / 0.0;
        if (tid < count) s = ((partDot[4u * tid] + partDot[4u * tid + 1u]) + (partDot[4u * tid + 2u] + partDot[4u * tid + 3u])) * pc.scale;
        const float mNew = max(m, workgroupMax(s));
        const float rescale = expAccurate(m - mNew);  // 0 on the first chunk
        const float w = tid < count ? expAccurate(s - mNew) : 0.0;
        if (tid < kChunk) weights[tid] = w;
        sum = sum * rescale + workgroupSum(w);  // its barriers also publish weights[]
        m = mNew;
        // Weighted V: thread (g, j) sums the element pair j of positions g, g + G, ... (two rows
        // in flight at a time).
        acc *= rescale;
        if (g < groups) {
            const uint col = (kvHead * hd) / 2u + j;
            for (uint p = g; p < count; p += 8u * groups) {  // eight rows in flight
                vec2 v[8];
                for (uint u = 0u; u < 8u; ++u)
                    if (p + u * groups < count) v[u] = unpackHalf2x16(pc.vCache.v[(rowOf(start + p + u * groups) * pc.kvDim) / 2u + col]);
                for (uint u = 0u; u < 8u; ++u)
                    if (p + u * groups < count) acc += weights[p + u * groups] * v[u];
            }
        }
        barrier();  // weights[] and partDot[] are rewritten by the next chunk
    }
    // The G partial sums of each element pair are added.
    partAcc[2u * tid] = acc.x;
    partAcc[2u * tid + 1u] = acc.y;
    barrier();
    const uint out0 = ((t * pc.nHead + h) * pc.nSplits + split) * (hd + 2u);
    if (tid < hd) {
        float total = 0.0;
        for (uint gg = 0u; gg < groups; ++gg) total += partAcc[2u * (gg * pairs + tid / 2u) + tid % 2u];
        pc.partials.v[out0 + 2u + tid] = total;
    }
    if (tid == 0u) {
        pc.partials.v[out0] = m;
        pc.partials.v[out0 + 1u] = sum;
    }
}
