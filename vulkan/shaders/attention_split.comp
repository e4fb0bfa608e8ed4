#version 450
// Long-context attention, split along the KV length (flash decoding): workgroup
// (split, head block, token) walks the chunks split, split + S, split + 2S, ... of kChunk positions
// (S = the token's own split count, split_policy.glsl: one per kChunk keys it reads, at most the
// policy's stride, fewer where the GPU's units are busier otherwise; the dispatch's
// x, from attention_args.comp, follows the step's longest row) in fp32 with an online softmax,
// and writes its partial (max score, sum of weights, weighted V sum); attention.comp merges
// the partials. A decode step, a prefill batch (token t at position + t) and rows of several
// sequences (each row at its own position in its own KV slot) alike.
// Only for KV lengths past exactMax; shorter ones are computed exactly as the cpu tier does.
// Needs headDim % 8 == 0 (the host splits only then). A sliding-window layer (window > 0) reads
// its last `window` positions from its ring of rows, as attention.comp does: the i-th of them
// is row (first + i) % slots.
// A head block is GQ query heads of one KV head (GQ divides the GQA group; spec constant): each
// key and value row is read once for them, and each head's sums are the ones a workgroup of its
// own computes (same threads, same order), so GQ changes no bits.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "reduce.glsl"
#include "split_policy.glsl"
#extension GL_EXT_buffer_reference_uvec2 : require

layout(buffer_reference, std430, buffer_reference_align = 16) ZINC_MEM readonly buffer Uvec4Buf { uvec4 v[]; };

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint GQ = 1u;  // query heads a workgroup, at most 8
layout(constant_id = 1) const uint HD = 128u;  // the head size (8 to 256)
layout(constant_id = 2) const uint ROLL = 1u;  // 1: the next chunk's loads issued as this one's are used up
// FUSED (a one-token step of a layer without a window): the step's QK-norm, RoPE and KV store are
// done here, not by qk_rope.comp before (one dispatch boundary a layer less). Every workgroup
// normalises and rotates its own query heads (qk_rope.comp's arithmetic, same order); the one
// whose chunks hold the new position also its key, and stores the key and value in the cache
// before it reads them. Up to exactMax keys (attention.comp computes exactly) only split 0 runs:
// it does the same and writes its rotated queries back for attention.comp.
layout(constant_id = 3) const uint FUSED = 0u;
layout(push_constant) uniform PC {
    FloatBuf q;
    UintBuf kCache;
    UintBuf vCache;
    FloatBuf partials;  // [token][head][split][headDim + 2]
    IntBuf state;
    FloatBuf k;      // FUSED: the step's k and v rows ([token][kvDim]), the QK-norm weights,
    FloatBuf v;      // the RoPE table ([position][ropeDim / 2] of (cos, sin))
    FloatBuf qNorm;
    FloatBuf kNorm;
    FloatBuf table;
    uint nHead;
    uint group;
    uint kvDim;
    uint qStride;
    uint nSplits;  // the split policy (split_policy.glsl): its stride is the partials per (token, head)
    float scale;
    uint exactMax;
    float qScale;  // gemma3 scales q before attention (its F16 rounding sees q * qScale)
    uint window;   // 0: every position
    uint slots;    // the layer's rows: position p in row p % slots (graph/kv_layout.h)
    uint rope;     // FUSED: ropeDim | neox << 16 | hasNorm << 17
    float eps;
} pc;

// ZINC_CHAIN (attention_split_chain; FUSED one-token steps): attention.comp runs with no barrier
// after this dispatch. Each workgroup that works (split < the token's split count, or split 0 of
// an exact step: it rotates and stores) counts itself on the split site when its writes are
// done (chain.glsl); the merge waits for every one.
#ifdef ZINC_CHAIN
#include "chain.glsl"
void splitDone() { chainSignal(splitSite(pc.partials), kSplitLines); }
#else
void splitDone() {}
#endif

uint firstSlot_, slotBase_;
// The cache row of the i-th key this query reads (in position order), in its sequence's slot.
uint rowOf(uint i) {
    const uint r = firstSlot_ + i;
    return slotBase_ + (r >= pc.slots ? r - pc.slots : r);
}

const uint kChunk = 64u;
const uint KQ = (HD + 31u) / 32u;         // a key quarter's 16-byte loads (wide rows)
const uint VG = 256u / (HD / 2u);         // value threads of a position (groups below)
const uint VP = (kChunk + VG - 1u) / VG;  // a value thread's positions in a chunk
// The block's queries, F16-rounded: [head][64 vec4]. Where a key quarter is whole vec4s
// (headDim % 16 == 0) vec4 j of quarter c sits at 4 j + c, so the four threads of a position,
// which read the same j of their own quarters at once, hit four consecutive 16 bytes and not
// one bank four times (qIndex).
shared vec4 qh[GQ * 64u];
const uint GW = (GQ + 3u) / 4u;       // vec4s of weights a position
shared vec4 weights[kChunk * GW];     // [position][head / 4][head % 4]: this chunk's softmax weights
shared vec4 partDot[GQ * 64u];        // [head][position][quarter]: the partial dots
const uint PA = GQ < 4u ? GQ : 4u;  // heads a pass of the final sums
shared vec2 partAcc[PA * 256u];     // [head of the pass][thread]: the V sums of its element pair
shared float headM[GQ], headSum[GQ], headRescale[GQ];  // each head's running max and sum
shared float fusedIn[FUSED != 0u ? (GQ + 1u) * HD : 1u];  // FUSED: the heads normalised, before RoPE

// qh's vec4 holding query elements e .. e + 3 (e % 4 == 0) of head hq of the block.
uint qIndex(uint hq, uint e) {
    const uint hd = HD;
    if (hd % 16u != 0u) return hq * 64u + e / 4u;
    const uint quarter = hd / 4u;
    return hq * 64u + (e % quarter) + e / quarter;
}

// FUSED: element i of the head normalised at fusedIn[base ..], rotated as qk_rope.comp does.
float ropedAt(uint base, uint i, uint pos) {
    const uint ropeDim = pc.rope & 0xFFFFu;
    if (i >= ropeDim) return fusedIn[base + i];
    const RopePair p = ropePair(i, ropeDim, (pc.rope & 0x10000u) != 0u);
    return ropeRotated(p, fusedIn[base + p.a], fusedIn[base + p.b], pc.table, pos, ropeDim);
}

// Per head block of 64 threads, groupSum(x.x, 64) and, over the first block only, the sum of x.y (a key's
// sum of squares beside its queries'): the same sums, two reductions through one pair of barriers.
vec2 blockSum2(vec2 x) {
    x = subgroupAdd(x);
    if (subgroupElect()) {
        reduceScratch_[gl_SubgroupID] = x.x;
        reduceScratch_[64u + gl_SubgroupID] = x.y;  // 256 threads: at most 64 subgroups (of 4)
    }
    barrier();
    const uint per = max(64u / gl_SubgroupSize, 1u), first = (gl_LocalInvocationID.x / 64u) * per;
    vec2 total = vec2(0.0);
    for (uint i = 0u; i < per; ++i) total.x += reduceScratch_[first + i];
    for (uint i = 0u; i < per; ++i) total.y += reduceScratch_[64u + i];
    barrier();
    return total;
}

// FUSED: the block's queries normalised and rotated into qh (and back to q where attention.comp
// computes exactly); where this workgroup's chunks hold the new position, the new key
// normalised and rotated and the value, stored in the cache before any key is read (the
// workgroups of the kv head's other blocks store the same bits). Each head's sum of squares is
// 64 threads' in qk_rope.comp's order (a 64-thread workgroup's reduction); the key's by the
// first 64 threads beside their query head's. True: this workgroup has nothing more to do.
bool fusedStep(uint tid, uint split, uint h0, uint kvHead, uint t, uint pos, uint n, bool exact, uint tokenSplits) {
    const uint hd = HD;
    const uint splits = exact ? 1u : tokenSplits;
    if (split >= splits) return true;  // whole workgroup
    const bool ownsPos = exact || ((n - 1u) / kChunk) % splits == split;
    const bool hasNorm = (pc.rope & 0x20000u) != 0u;
    const uint lane = tid % 64u, kIn = GQ * hd, kSrc = t * pc.kvDim + kvHead * hd;  // the key: fusedIn[kIn ..]
    for (uint pass = 0u; pass < (GQ + 3u) / 4u; ++pass) {
        const uint hq = pass * 4u + tid / 64u;
        const bool withKey = ownsPos && pass == 0u && tid < 64u;
        const uint src = t * pc.qStride + (h0 + hq) * hd;
        vec2 sums = vec2(0.0);
        if (hq < GQ)
            for (uint i = lane; i < hd; i += 64u) {
                const float x = pc.q.v[src + i];
                fusedIn[hq * hd + i] = x;
                sums.x += x * x;
            }
        if (withKey)
            for (uint i = lane; i < hd; i += 64u) {
                const float x = pc.k.v[kSrc + i];
                fusedIn[kIn + i] = x;
                sums.y += x * x;
            }
        sums = blockSum2(sums);  // its barriers also publish fusedIn[]
        if (hasNorm && hq < GQ) {
            const float scale = 1.0 / sqrt(sums.x / float(hd) + pc.eps);
            for (uint i = lane; i < hd; i += 64u) fusedIn[hq * hd + i] = fusedIn[hq * hd + i] * scale * pc.qNorm.v[i];
        }
        if (hasNorm && withKey) {
            const float scale = 1.0 / sqrt(sums.y / float(hd) + pc.eps);
            for (uint i = lane; i < hd; i += 64u) fusedIn[kIn + i] = fusedIn[kIn + i] * scale * pc.kNorm.v[i];
        }
    }
    barrier();
    for (uint i = tid; i < GQ * hd; i += 256u) {
        const uint hq = i / hd, e = i % hd;
        const float r = ropedAt(hq * hd, e, pos);
        qh[qIndex(hq, e & ~3u)][e & 3u] = roundHalf(r * pc.qScale);
        if (exact) pc.q.v[t * pc.qStride + (h0 + hq) * hd + e] = r;
    }
    if (ownsPos) {
        const uint row = ((slotBase_ + pos) * pc.kvDim + kvHead * hd) / 2u;
        for (uint i = tid; i < hd / 2u; i += 256u) {
            pc.kCache.v[row + i] = packHalves(ropedAt(kIn, 2u * i, pos), ropedAt(kIn, 2u * i + 1u, pos));
            pc.vCache.v[row + i] = packHalves(pc.v.v[kSrc + 2u * i], pc.v.v[kSrc + 2u * i + 1u]);
        }
#ifndef ZINC_CHAIN
        memoryBarrier();  // the stored key and value, before this workgroup's loads
#endif
    }
#ifdef ZINC_CHAIN
    workgroupBufferBarrier();  // qh[], and the stored key and value before this workgroup's loads
#else
    barrier();  // qh[]
#endif
    return exact;
}

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint split = gl_WorkGroupID.x, h0 = gl_WorkGroupID.y * GQ, t = gl_WorkGroupID.z;
    const uint pos = rowPosition(pc.state, t);
    slotBase_ = rowSlotBase(pc.state, t);
    const uint first = pc.window > 0u && pos >= pc.window ? pos + 1u - pc.window : 0u;
    const uint n = pos + 1u - first;
    firstSlot_ = first % pc.slots;
    const bool exact = n <= pc.exactMax;
    // whole workgroup (FUSED: split 0 runs whatever the length: the step's rotations and store)
    if ((FUSED == 0u || split > 0u) && (exact || split * kChunk >= n)) return;
    const uint kvHead = h0 / pc.group, hd = HD;
    // This token's own split count (attention.comp merges that many), whatever the dispatch's
    // x, which follows the step's longest row: a row's partials do not depend on its batch.
    const uint splits = stepSplits(n, first == 0u, pc.nSplits, pc.partials);
    if (FUSED != 0u) {
        if (fusedStep(tid, split, h0, kvHead, t, pos, n, exact, splits)) {
            if (exact && split == 0u) splitDone();  // rotated and stored for attention.comp
            return;
        }
    } else {
        for (uint i = tid; i < GQ * 64u; i += 256u) {
            const uint hq = i / 64u, e = 4u * (i % 64u);
            if (e >= hd) continue;
            const uint q0 = t * pc.qStride + (h0 + hq) * hd + e;
            qh[qIndex(hq, e)] = vec4(roundHalf(pc.q.v[q0] * pc.qScale), roundHalf(pc.q.v[q0 + 1u] * pc.qScale),
                                     roundHalf(pc.q.v[q0 + 2u] * pc.qScale), roundHalf(pc.q.v[q0 + 3u] * pc.qScale));
        }
    }
    if (tid < GQ) {
        headM[tid] = -1.0 / 0.0;
        headSum[tid] = 0.0;
    }
    barrier();
    const uvec2 kAddress = uvec2(pc.kCache);
    const bool wide = hd % 32u == 0u && pc.kvDim % 8u == 0u && (kAddress.x & 15u) == 0u;
    const bool roll = ROLL != 0u && hd == HD;
    Uvec4Buf k4 = Uvec4Buf(kAddress);
    const uint pairs = hd / 2u, groups = 256u / pairs;
    const uint g = tid / pairs, j = tid % pairs;
    vec2 acc[GQ];
    [[unroll]] for (uint hq = 0u; hq < GQ; ++hq) acc[hq] = vec2(0.0);
    if (split >= splits) return;  // whole workgroup
    // Rolling loads (ROLL): a thread's key quarter (KQ 16-byte loads, wide rows) and value pairs
    // (positions g, g + groups, ...: VP words) of the next chunk are issued as soon as this
    // chunk's are used up, the keys after the scores and the values after the weighted sum, so
    // they arrive during the softmax and the other phase instead of being waited for in turn.
    // The same sums in the same order: bits unchanged.
    const uint kp = tid / 4u, kPart = tid % 4u;
#define LOAD_KEYS(S)                                                                              \
    if (wide && kp < min(kChunk, n - (S))) {                                                      \
        const uint row_ = (rowOf((S) + kp) * pc.kvDim + kvHead * hd + kPart * (hd / 4u)) / 8u;    \
        [[unroll]] for (uint i = 0u; i < KQ; ++i) kr[i] = k4.v[row_ + i];                                    \
    }
#define LOAD_VALUES(S)                                                                            \
    [[unroll]] for (uint u = 0u; u < VP; ++u)                                                                \
        if (g < groups && g + u * groups < min(kChunk, n - (S)))                                  \
            vr[u] = pc.vCache.v[(rowOf((S) + g + u * groups) * pc.kvDim) / 2u + (kvHead * hd) / 2u + j];
    uvec4 kr[KQ];
    uint vr[VP];
    if (roll) {
        LOAD_KEYS(split * kChunk)
        LOAD_VALUES(split * kChunk)
    }
    for (uint start = split * kChunk; start < n; start += splits * kChunk) {
        const uint count = min(kChunk, n - start), next = start + splits * kChunk;
        // Scores: four threads per position, each a quarter of the head (hd % 8 == 0 here),
        // its key quarter loaded once for the GQ heads.
        {
            const uint p = tid / 4u, part = tid % 4u, words = hd / 8u;
            float dot[GQ];
            [[unroll]] for (uint hq = 0u; hq < GQ; ++hq) dot[hq] = 0.0;
            if (p < count && wide && roll) {
                [[unroll]] for (uint i = 0u; i < KQ; ++i) {
                    const uint qi = 8u * i + part;  // qIndex of the quarter's elements 8i (and + 4u: 8i + 4)
                    const vec2 k0 = unpackHalf2x16(kr[i].x), k1 = unpackHalf2x16(kr[i].y);
                    const vec2 k2 = unpackHalf2x16(kr[i].z), k3 = unpackHalf2x16(kr[i].w);
                    [[unroll]] for (uint hq = 0u; hq < GQ; ++hq) {
                        const vec4 qa = qh[hq * 64u + qi], qb = qh[hq * 64u + qi + 4u];
                        dot[hq] += k0.x * qa.x + k0.y * qa.y;
                        dot[hq] += k1.x * qa.z + k1.y * qa.w;
                        dot[hq] += k2.x * qb.x + k2.y * qb.y;
                        dot[hq] += k3.x * qb.z + k3.y * qb.w;
                    }
                }
            } else if (p < count && wide) {  // a quarter is hd / 32 16-byte loads, all in flight
                const uint row = (rowOf(start + p) * pc.kvDim + kvHead * hd + part * (hd / 4u)) / 8u, quads = hd / 32u;
                uvec4 k[8];
                [[unroll]] for (uint i = 0u; i < 8u; ++i)
                    if (i < quads) k[i] = k4.v[row + i];
                [[unroll]] for (uint i = 0u; i < 8u; ++i) {
                    if (i >= quads) break;
                    const uint qi = 8u * i + part;
                    const vec2 k0 = unpackHalf2x16(k[i].x), k1 = unpackHalf2x16(k[i].y);
                    const vec2 k2 = unpackHalf2x16(k[i].z), k3 = unpackHalf2x16(k[i].w);
                    [[unroll]] for (uint hq = 0u; hq < GQ; ++hq) {
                        const vec4 qa = qh[hq * 64u + qi], qb = qh[hq * 64u + qi + 4u];
                        dot[hq] += k0.x * qa.x + k0.y * qa.y;
                        dot[hq] += k1.x * qa.z + k1.y * qa.w;
                        dot[hq] += k2.x * qb.x + k2.y * qb.y;
                        dot[hq] += k3.x * qb.z + k3.y * qb.w;
                    }
                }
            } else if (p < count) {
                const uint row = (rowOf(start + p) * pc.kvDim + kvHead * hd + part * (hd / 4u)) / 2u;
                const uint q0 = part * (hd / 4u);
                for (uint i = 0u; i < words; ++i) {
                    const vec2 k0 = unpackHalf2x16(pc.kCache.v[row + i]);
                    const uint qi = q0 + 2u * i;  // qh element qi, qi + 1 (qi even)
                    [[unroll]] for (uint hq = 0u; hq < GQ; ++hq) {
                        const vec4 qa = qh[qIndex(hq, qi & ~3u)];
                        const vec2 qp = (qi & 2u) != 0u ? qa.zw : qa.xy;
                        dot[hq] += k0.x * qp.x + k0.y * qp.y;
                    }
                }
            }
            [[unroll]] for (uint hq = 0u; hq < GQ; ++hq) partDot[hq * 64u + p][part] = dot[hq];
        }
        if (roll && next < n) LOAD_KEYS(next)
        barrier();
        // Softmax: thread (head hq, position p) for the heads of each pass of four.
        for (uint pass = 0u; pass < (GQ + 3u) / 4u; ++pass) {
            const uint hq = pass * 4u + tid / 64u, p = tid % 64u;
            const bool mine = hq < GQ && p < count;
            const vec4 d = partDot[(hq < GQ ? hq : 0u) * 64u + p];
            const float s = mine ? ((d.x + d.y) + (d.z + d.w)) * pc.scale : -1.0 / 0.0;
            const float chunkMax = groupMax(s, 64u);
            const float m = hq < GQ ? headM[hq] : 0.0;
            const float mNew = max(m, chunkMax);
            const float w = mine ? expAccurate(s - mNew) : 0.0;
            if (hq < GQ) weights[p * GW + hq / 4u][hq % 4u] = w;
            const float chunkSum = groupSum(w, 64u);  // its barriers also publish weights[]
            if (hq < GQ && p == 0u) {
                const float rescale = expAccurate(m - mNew);  // 0 on the first chunk
                headRescale[hq] = rescale;
                headSum[hq] = headSum[hq] * rescale + chunkSum;
                headM[hq] = mNew;
            }
        }
        barrier();  // headRescale[]
        // Weighted V: thread (g, j) sums the element pair j of positions g, g + G, ... (eight
        // rows in flight at a time), each value pair once for the GQ heads.
        [[unroll]] for (uint hq = 0u; hq < GQ; ++hq) acc[hq] *= headRescale[hq];
        if (roll) {
            [[unroll]] for (uint u = 0u; u < VP; ++u)
                if (g < groups && g + u * groups < count) {
                    const vec2 v = unpackHalf2x16(vr[u]);
                    [[unroll]] for (uint hq = 0u; hq < GQ; ++hq) acc[hq] += weights[(g + u * groups) * GW + hq / 4u][hq % 4u] * v;
                }
            if (next < n) LOAD_VALUES(next)
        } else if (g < groups) {
            const uint col = (kvHead * hd) / 2u + j;
            for (uint p = g; p < count; p += 8u * groups) {
                vec2 v[8];
                [[unroll]] for (uint u = 0u; u < 8u; ++u)
                    if (p + u * groups < count) v[u] = unpackHalf2x16(pc.vCache.v[(rowOf(start + p + u * groups) * pc.kvDim) / 2u + col]);
                [[unroll]] for (uint u = 0u; u < 8u; ++u)
                    if (p + u * groups < count)
                        [[unroll]] for (uint hq = 0u; hq < GQ; ++hq) acc[hq] += weights[(p + u * groups) * GW + hq / 4u][hq % 4u] * v[u];
            }
        }
        barrier();  // weights[], partDot[] and headRescale[] are rewritten by the next chunk
    }
#undef LOAD_KEYS
#undef LOAD_VALUES
    // Each head: the G partial sums of each element pair are added, in group order, for up to
    // PA heads a pass (one barrier for them, not two a head).
    const bool pow2 = (hd & (hd - 1u)) == 0u;  // the usual head sizes: a shift, not a division
    const uint shift = uint(findMSB(hd));
    [[unroll]] for (uint h1 = 0u; h1 < GQ; h1 += PA) {
        if (h1 > 0u) barrier();  // partAcc[] is rewritten for the next heads
        [[unroll]] for (uint i = 0u; i < PA; ++i)
            if (h1 + i < GQ) partAcc[i * 256u + tid] = acc[h1 + i];
        barrier();
        const uint passHeads = min(PA, GQ - h1);
        for (uint o = tid; o < passHeads * hd; o += 256u) {
            const uint i = pow2 ? o >> shift : o / hd, e = pow2 ? o & (hd - 1u) : o % hd;
            float total = 0.0;
            for (uint gg = 0u; gg < groups; ++gg) total += partAcc[i * 256u + gg * pairs + e / 2u][e % 2u];
            pc.partials.v[((t * pc.nHead + h0 + h1 + i) * policyStride(pc.nSplits) + split) * (hd + 2u) + 2u + e] = total;
        }
        if (tid < passHeads) {
            const uint out0 = ((t * pc.nHead + h0 + h1 + tid) * policyStride(pc.nSplits) + split) * (hd + 2u);
            pc.partials.v[out0] = headM[h1 + tid];
            pc.partials.v[out0 + 1u] = headSum[h1 + tid];
        }
    }
    splitDone();
}
