#version 450
// Seeded sampling on the GPU, the host sampler's chain step for step (runtime/sampler.cpp):
// repetition penalty over the recent ids, top-k (radix select of the k-th largest logit, ties
// to the lowest ids), candidates sorted by (logit desc, id asc), top-p, min-p, temperature,
// then a draw with the counter-based uniform of (seed, draw index). The token goes where
// argmax.comp puts it (token state slot 0, the id ring) and into the recent ids, and the state
// advances, so one recorded command buffer samples token after token.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform PC {
    FloatBuf logits;  // rewritten in place by the penalty; recomputed every token
    IntBuf state;
    IntBuf ring;
    IntBuf chain;     // vulkan/sampler_state.h
    uint n;
    uint ringCapacity;
} pc;

// vulkan/sampler_state.h, in ints.
const uint kTemperature = 0u, kTopP = 1u, kMinP = 2u, kPenalty = 3u, kTopK = 4u, kRecentCapacity = 5u;
const uint kRecentCount = 6u, kSeedLo = 7u, kSeedHi = 8u, kDrawBase = 9u, kRecent = 16u;
const uint kMaxK = 256u;

shared uint hist[256];
shared uint chosen[2];  // bin, how many of it are still wanted
shared uint counts[2 * 256];
shared float candLogit[kMaxK];
shared int candId[kMaxK];

float param(uint i) { return uintBitsToFloat(uint(pc.chain.v[i])); }

// Floats as unsigned keys in the same order.
uint keyOf(float x) {
    const uint b = floatBitsToUint(x);
    return (b & 0x80000000u) != 0u ? ~b : b | 0x80000000u;
}

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

void applyPenalty(uint step) {
    const float penalty = param(kPenalty);
    const uint capacity = uint(pc.chain.v[kRecentCapacity]);
    if (penalty == 1.0 || capacity == 0u) return;
    const uint count = min(capacity, uint(pc.chain.v[kRecentCount]) + step);
    const uint tid = gl_LocalInvocationID.x;
    for (uint i = tid; i < count; i += 256u) {
        const int id = pc.chain.v[kRecent + i];
        bool first = id >= 0 && uint(id) < pc.n;
        for (uint j = 0u; j < i && first; ++j) first = pc.chain.v[kRecent + j] != id;
        if (first) {
            const float l = pc.logits.v[id];
            pc.logits.v[id] = l > 0.0 ? l / penalty : l * penalty;
        }
    }
    memoryBarrierBuffer();
    barrier();
}

// The k-th largest key, 8 bits at a time; returns it and how many keys equal to it are taken.
uvec2 selectThreshold(uint k) {
    const uint tid = gl_LocalInvocationID.x;
    uint prefix = 0u, mask = 0u, wanted = k;
    for (int shift = 24; shift >= 0; shift -= 8) {
        hist[tid] = 0u;
        barrier();
        for (uint i = tid; i < pc.n; i += 256u) {
            const uint key = keyOf(pc.logits.v[i]);
            if ((key & mask) == prefix) atomicAdd(hist[(key >> uint(shift)) & 255u], 1u);
        }
        barrier();
        if (tid == 0u) {
            uint above = 0u, bin = 0u;
            for (int b = 255; b >= 0; --b) {
                if (above + hist[b] >= wanted) {
                    bin = uint(b);
                    break;
                }
                above += hist[b];
            }
            chosen[0] = bin;
            chosen[1] = wanted - above;
        }
        barrier();
        prefix |= chosen[0] << uint(shift);
        mask |= 255u << uint(shift);
        wanted = chosen[1];
        barrier();
    }
    return uvec2(prefix, wanted);
}

// Candidates: every key above the threshold and the first `ties` equal to it by id. Each
// thread scans a contiguous range of ids so the ties are taken in id order.
void collect(uint threshold, uint ties) {
    const uint tid = gl_LocalInvocationID.x;
    const uint chunk = (pc.n + 255u) / 256u;
    const uint begin = min(pc.n, tid * chunk), end = min(pc.n, begin + chunk);
    uint above = 0u, equal = 0u;
    for (uint i = begin; i < end; ++i) {
        const uint key = keyOf(pc.logits.v[i]);
        above += key > threshold ? 1u : 0u;
        equal += key == threshold ? 1u : 0u;
    }
    counts[tid] = above;
    counts[256u + tid] = equal;
    barrier();
    if (tid == 0u) {  // exclusive prefix sums; ties are placed after all the keys above
        uint a = 0u, e = 0u;
        for (uint t = 0u; t < 256u; ++t) {
            const uint ca = counts[t], ce = counts[256u + t];
            counts[t] = a;
            counts[256u + t] = e;
            a += ca;
            e += ce;
        }
        for (uint t = 0u; t < 256u; ++t) counts[256u + t] += a;
        chosen[0] = a + ties;  // candidates in all
    }
    barrier();
    uint at = counts[tid], tieAt = counts[256u + tid];
    const uint total = chosen[0];
    for (uint i = begin; i < end; ++i) {
        const float l = pc.logits.v[i];
        const uint key = keyOf(l);
        if (key > threshold) {
            candLogit[at] = l;
            candId[at++] = int(i);
        } else if (key == threshold && tieAt < total) {
            candLogit[tieAt] = l;
            candId[tieAt++] = int(i);
        }
    }
    barrier();
}

bool before(float la, int ia, float lb, int ib) { return la > lb || (la == lb && ia < ib); }

// Bitonic sort of the kMaxK slots by (logit desc, id asc); slots past `count` are padding.
void sortCandidates(uint count) {
    const uint tid = gl_LocalInvocationID.x;
    if (tid >= count) {
        candLogit[tid] = -1.0 / 0.0;
        candId[tid] = 0x7fffffff;
    }
    barrier();
    for (uint size = 2u; size <= kMaxK; size <<= 1u) {
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

// Softmax of candidates 0..count-1 at temperature 1 (sequential, as the host does).
float softmaxSum(uint count, float scale) {
    float sum = 0.0;
    for (uint i = 0u; i < count; ++i) sum += expAccurate((candLogit[i] - candLogit[0]) * scale);
    return sum;
}

// Thread 0: top-p, min-p, temperature and the draw over the sorted candidates.
int draw(uint count, uint drawIndex) {
    const float topP = param(kTopP), minP = param(kMinP), temperature = param(kTemperature);
    if (temperature <= 0.0) return candId[0];
    if (topP < 1.0) {
        const float sum = softmaxSum(count, 1.0);
        float acc = 0.0;
        for (uint i = 0u; i < count; ++i) {
            acc += expAccurate(candLogit[i] - candLogit[0]) / sum;
            if (acc >= topP) {
                count = i + 1u;
                break;
            }
        }
    }
    if (minP > 0.0) {
        const float sum = softmaxSum(count, 1.0);
        const float threshold = (1.0 / sum) * minP;
        uint keep = 1u;
        while (keep < count && expAccurate(candLogit[keep] - candLogit[0]) / sum >= threshold) ++keep;
        count = keep;
    }
    const float scale = 1.0 / temperature;
    const float sum = softmaxSum(count, scale);
    const float r = uniformDraw(uint(pc.chain.v[kSeedLo]), uint(pc.chain.v[kSeedHi]),
                                uint(pc.chain.v[kDrawBase]) + drawIndex);
    float acc = 0.0;
    for (uint i = 0u; i < count; ++i) {
        acc += expAccurate((candLogit[i] - candLogit[0]) * scale) / sum;
        if (r < acc) return candId[i];
    }
    return candId[count - 1u];
}

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint step = uint(pc.state.v[kStateStep]);
    applyPenalty(step);
    const bool greedy = param(kTemperature) <= 0.0;
    const uint k = greedy ? 1u : min(min(uint(pc.chain.v[kTopK]), kMaxK), pc.n);
    const uvec2 threshold = selectThreshold(k);
    collect(threshold.x, threshold.y);
    sortCandidates(k);
    if (tid == 0u) {
        const int token = draw(k, step);
        pc.state.v[kStateTokens] = token;
        pc.ring.v[step % pc.ringCapacity] = token;
        const uint capacity = uint(pc.chain.v[kRecentCapacity]);
        if (capacity > 0u) pc.chain.v[kRecent + (uint(pc.chain.v[kRecentCount]) + step) % capacity] = token;
        pc.state.v[kStatePosition] += 1;
        pc.state.v[kStateKvLength] += 1;
        pc.state.v[kStateStep] = int(step) + 1;
    }
}
