#version 450
// Seeded sampling on the GPU, the host sampler's chain step for step (runtime/sampler.cpp):
// repetition penalty over the recent ids, top-k (ties to the lowest ids), candidates sorted by
// (logit desc, id asc), top-p, min-p, temperature, then a draw with the counter-based uniform
// of (seed, draw index). The token goes where argmax.comp puts it (token state slot 0, the id
// ring) and into the recent ids, and the state advances, so one recorded command buffer samples
// token after token.
//
// Two phases in one dispatch. Each workgroup takes a slice of kSlice logits into shared memory,
// applies the penalty to the recent ids that fall in it and writes the slice's top k in id
// order. The global top k is among those, so the last workgroup to finish (a counter in device
// memory) selects the top k again over every slice's candidates, sorts them and draws. Both
// selections are a radix select of the k-th largest key, 8 bits at a time, then a pass that
// keeps the keys above it and the first of those equal to it by id.
//
// rows > 0: a step of several sequences (Tier::evaluateRowsSampled). Workgroup row y samples
// logits row y with sampler block y (its own chain, recent ids and first draw index, written
// by the host before every step) and its own counter and candidates; its token goes to id ring
// entry y, and the token state and the blocks are left as they are.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;

// Written by the other workgroups of this dispatch: read past the L1 (coherent).
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer SharedFloats { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer SharedInts { int v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer Counters { uint v[]; };

layout(push_constant) uniform PC {
    FloatBuf logits;
    IntBuf state;
    IntBuf ring;
    IntBuf chain;              // vulkan/sampler_state.h
    SharedFloats candLogits;   // [slice][k]: each slice's top k in id order
    SharedInts candIds;
    Counters done;             // slices finished; the last workgroup resets it
    uint n;
    uint ringCapacity;
    uint rows;
} pc;

// vulkan/sampler_state.h, in ints.
const uint kTemperature = 0u, kTopP = 1u, kMinP = 2u, kPenalty = 3u, kTopK = 4u, kRecentCapacity = 5u;
const uint kRecentCount = 6u, kSeedLo = 7u, kSeedHi = 8u, kDrawBase = 9u, kRecent = 16u;
const uint kMaxK = 256u;
const uint kBlockInts = 16u + 256u;  // vulkan/sampler_state.h kSamplerStateBytes / 4
const uint kSlice = 2048u;  // vulkan/op_sample.cpp kSampleSlice
const uint kThreads = 256u;

shared float slice[kSlice];
shared uint penalized[kSlice / 32u];
shared uint hist[256];
shared uvec2 subgroupSums[kThreads];
shared uint chosen[2];  // bin, how many of it are still wanted
shared float candLogit[kMaxK];
shared int candId[kMaxK];
shared float expOf[kMaxK];
shared bool last;

// This workgroup's row: where its logits, sampler block and candidates start (0 for one chain).
uint logitsAt = 0u, chainAt = 0u, candAt = 0u;

// This thread's place in the workgroup, subgroup by subgroup: the order of the scans.
uint lane() { return gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID; }

int chainInt(uint i) { return pc.chain.v[chainAt + i]; }
float param(uint i) { return uintBitsToFloat(uint(chainInt(i))); }

// Floats as unsigned keys in the same order.
uint keyOf(float x) {
    const uint b = floatBitsToUint(x);
    return (b & 0x80000000u) != 0u ? ~b : b | 0x80000000u;
}

// Sum of x over the lanes up to and including this one (every thread calls it).
uvec2 workgroupInclusiveSum(uvec2 x) {
    const uvec2 inSubgroup = subgroupInclusiveAdd(x);
    if (gl_SubgroupInvocationID == gl_SubgroupSize - 1u) subgroupSums[gl_SubgroupID] = inSubgroup;
    barrier();
    uvec2 before = uvec2(0u);
    for (uint s = 0u; s < gl_SubgroupID; ++s) before += subgroupSums[s];
    barrier();
    return before + inSubgroup;
}

// Phase one ranks the shared slice, phase two the candidates in device memory.
float valueAt(bool inSlice, uint i) { return inSlice ? slice[i] : pc.candLogits.v[candAt + i]; }

// runtime/sampler.cpp uniformDraw: lowbias32 (C. Wellons' integer hash) chained over the draw
// index and both seed halves; the top 24 bits make a float in [0, 1).
uint lowbias32(uint x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}
float uniformDraw(uint seedLo, uint seedHi, uint draw) {
    const uint h = lowbias32(seedLo ^ lowbias32(seedHi ^ lowbias32(draw)));
    return float(h >> 8) * (1.0 / 16777216.0);
}

// The slice's logits into shared memory, each recent id in it penalised once (llama.cpp's
// penalty: divide positive logits, multiply negative ones).
void loadSlice(uint begin, uint len, uint step) {
    const uint tid = gl_LocalInvocationID.x;
    for (uint i = tid; i < len; i += kThreads) slice[i] = pc.logits.v[logitsAt + begin + i];
    if (tid < kSlice / 32u) penalized[tid] = 0u;
    barrier();
    const float penalty = param(kPenalty);
    const uint capacity = uint(chainInt(kRecentCapacity));
    if (penalty == 1.0 || capacity == 0u) return;
    const uint count = min(capacity, uint(chainInt(kRecentCount)) + step);
    for (uint i = tid; i < count; i += kThreads) {
        const uint at = uint(chainInt(kRecent + i)) - begin;  // ids below the slice wrap past len
        if (at >= len) continue;
        const uint bit = 1u << (at & 31u);
        if ((atomicOr(penalized[at >> 5u], bit) & bit) != 0u) continue;  // already penalised
        const float l = slice[at];
        slice[at] = l > 0.0 ? divideExact(l, penalty) : l * penalty;
    }
    barrier();
}

// The k-th largest key of values 0..len-1 (k <= len), and how many keys equal to it are taken.
uvec2 selectThreshold(bool inSlice, uint len, uint k) {
    const uint tid = gl_LocalInvocationID.x;
    uint prefix = 0u, mask = 0u, wanted = k;
    for (int shift = 24; shift >= 0; shift -= 8) {
        hist[tid] = 0u;
        barrier();
        for (uint i = tid; i < len; i += kThreads) {
            const uint key = keyOf(valueAt(inSlice, i));
            if ((key & mask) == prefix) atomicAdd(hist[(key >> uint(shift)) & 255u], 1u);
        }
        barrier();
        // Lane l holds bin 255 - l, so its inclusive sum counts the keys in that bin and above.
        const uint bin = 255u - lane();
        const uint inBin = hist[bin];
        const uint atOrAbove = workgroupInclusiveSum(uvec2(inBin, 0u)).x;
        if (atOrAbove >= wanted && atOrAbove - inBin < wanted) {
            chosen[0] = bin;
            chosen[1] = wanted - (atOrAbove - inBin);
        }
        barrier();
        prefix |= chosen[0] << uint(shift);
        mask |= 255u << uint(shift);
        wanted = chosen[1];
    }
    return uvec2(prefix, wanted);
}

// The k values 0..len-1 above the threshold or among its first `ties` equals, in id order:
// phase one to this slice's k candidate slots, phase two to the shared candidates.
void collect(bool inSlice, uint len, uvec2 threshold, uint out0, uint idBase) {
    const uint chunk = (len + kThreads - 1u) / kThreads;
    const uint begin = min(len, lane() * chunk), end = min(len, begin + chunk);
    uvec2 mine = uvec2(0u);  // above, equal
    for (uint i = begin; i < end; ++i) {
        const uint key = keyOf(valueAt(inSlice, i));
        mine += uvec2(key > threshold.x ? 1u : 0u, key == threshold.x ? 1u : 0u);
    }
    const uvec2 before = workgroupInclusiveSum(mine) - mine;
    uint ties = before.y, at = before.x + min(before.y, threshold.y);
    for (uint i = begin; i < end; ++i) {
        const float l = valueAt(inSlice, i);
        const uint key = keyOf(l);
        bool take = key > threshold.x;
        if (key == threshold.x) take = ties++ < threshold.y;
        if (!take) continue;
        if (inSlice) {
            pc.candLogits.v[candAt + out0 + at] = l;
            pc.candIds.v[candAt + out0 + at] = int(idBase + i);
        } else {
            candLogit[at] = l;
            candId[at] = pc.candIds.v[candAt + i];
        }
        ++at;
    }
}

bool before(float la, int ia, float lb, int ib) { return la > lb || (la == lb && ia < ib); }

// Bitonic sort by (logit desc, id asc) of the first `count` slots, padded to the next power of
// two (top-k 40 sorts 64 slots: 21 barriers, not the 36 of all kMaxK).
void sortCandidates(uint count) {
    const uint tid = gl_LocalInvocationID.x;
    if (tid >= count) {
        candLogit[tid] = -1.0 / 0.0;
        candId[tid] = 0x7fffffff;
    }
    barrier();
    uint width = 1u;
    while (width < count) width <<= 1u;
    for (uint size = 2u; size <= width; size <<= 1u) {
        for (uint stride = size >> 1u; stride > 0u; stride >>= 1u) {
            const uint other = tid ^ stride;
            if (other > tid) {
                const bool ascending = (tid & size) == 0u;
                const float la = candLogit[tid], lb = candLogit[other];
                const int ia = candId[tid], ib = candId[other];
                if (before(lb, ib, la, ia) == ascending) {
                    candLogit[tid] = lb;
                    candId[tid] = ib;
                    candLogit[other] = la;
                    candId[other] = ia;
                }
            }
            barrier();
        }
    }
}

// expOf[i] = exp((logit_i - logit_0) * scale) for the first `count` candidates, in parallel;
// returns their sum, added in order by every thread (the host's sequential float sum).
float softmaxTerms(uint count, float scale) {
    const uint tid = gl_LocalInvocationID.x;
    if (tid < count) expOf[tid] = expAccurate((candLogit[tid] - candLogit[0]) * scale);
    barrier();
    float sum = 0.0;
    for (uint i = 0u; i < count; ++i) sum += expOf[i];
    return sum;
}

// Top-p, min-p, temperature and the draw over the k sorted candidates (every thread takes
// part; thread 0 returns the token).
int draw(uint count, uint drawIndex) {
    const uint tid = gl_LocalInvocationID.x;
    const float topP = param(kTopP), minP = param(kMinP), temperature = param(kTemperature);
    if (temperature <= 0.0) return candId[0];
    if (topP < 1.0) {
        const float sum = softmaxTerms(count, 1.0);
        float acc = 0.0;
        for (uint i = 0u; i < count; ++i) {
            acc += divideExact(expOf[i], sum);
            if (acc >= topP) {
                count = i + 1u;
                break;
            }
        }
        barrier();  // expOf is rewritten below
    }
    if (minP > 0.0) {
        const float sum = softmaxTerms(count, 1.0);
        const float threshold = divideExact(1.0, sum) * minP;
        uint keep = 1u;
        while (keep < count && divideExact(expOf[keep], sum) >= threshold) ++keep;
        count = keep;
        barrier();
    }
    const float sum = softmaxTerms(count, divideExact(1.0, temperature));
    const float r = uniformDraw(uint(chainInt(kSeedLo)), uint(chainInt(kSeedHi)), uint(chainInt(kDrawBase)) + drawIndex);
    float acc = 0.0;
    for (uint i = 0u; i < count; ++i) {
        acc += divideExact(expOf[i], sum);
        if (r < acc) return candId[i];
    }
    return candId[count - 1u];
}

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint row = gl_WorkGroupID.y;
    logitsAt = row * pc.n;
    chainAt = row * kBlockInts;
    candAt = row * 2u * kMaxK * gl_NumWorkGroups.x;
    const uint doneAt = row * 4u;  // 16 bytes a row
    const uint step = pc.rows > 0u ? 0u : uint(pc.state.v[kStateStep]);
    const bool greedy = param(kTemperature) <= 0.0;
    const uint k = greedy ? 1u : min(min(uint(chainInt(kTopK)), kMaxK), pc.n);

    // Phase one: this slice's top k.
    const uint begin = gl_WorkGroupID.x * kSlice, len = min(kSlice, pc.n - begin), sliceK = min(k, len);
    loadSlice(begin, len, step);
    collect(true, len, selectThreshold(true, len, sliceK), gl_WorkGroupID.x * k, begin);
    memoryBarrierBuffer();
    barrier();
    if (tid == 0u) {
        last = atomicAdd(pc.done.v[doneAt], 1u) == gl_NumWorkGroups.x - 1u;
        if (last) pc.done.v[doneAt] = 0u;  // ready for the next token
    }
    barrier();
    if (!last) return;
    memoryBarrierBuffer();

    // Phase two: every slice gave k candidates but the last, which may be shorter than k.
    const uint lastBegin = (gl_NumWorkGroups.x - 1u) * kSlice;
    const uint total = (gl_NumWorkGroups.x - 1u) * k + min(k, pc.n - lastBegin);
    collect(false, total, selectThreshold(false, total, k), 0u, 0u);
    barrier();
    sortCandidates(k);
    const int token = draw(k, step);
    if (tid == 0u && pc.rows > 0u) {
        pc.ring.v[row] = token;
    } else if (tid == 0u) {
        pc.state.v[kStateTokens] = token;
        pc.ring.v[step % pc.ringCapacity] = token;
        const uint capacity = uint(chainInt(kRecentCapacity));
        if (capacity > 0u) pc.chain.v[kRecent + (uint(chainInt(kRecentCount)) + step) % capacity] = token;
        pc.state.v[kStatePosition] += 1;
        pc.state.v[kStateKvLength] += 1;
        pc.state.v[kStateStep] = int(step) + 1;
    }
}
