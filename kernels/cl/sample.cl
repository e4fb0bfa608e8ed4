// Seeded sampling on the GPU, the host sampler's chain step for step (runtime/sampler.cpp, as
// vulkan/shaders/sample.comp does it): repetition penalty over the recent ids, top-k (radix
// select of the k-th largest logit, ties to the lowest ids), candidates sorted by (logit desc,
// id asc), top-p, min-p, temperature, then a draw with the counter-based uniform of (seed,
// draw index). Temperature <= 0 is greedy (k = 1 after the penalty).
//
// The token goes into the token ids embed reads next (tokens[0]), the id ring and the recent
// ids; the token state advances (position, kvLength) and so does the chain's step, so one
// recorded IB samples token after token. End of generation is decided here: a stop id, the
// step budget, a full context or the host's cancel word clears `live`, which the command
// processor's COND_EXEC reads before each further token (kfd/tier/sampler_block.h). In the
// persistent loop (`loop` set) the budget pauses instead: `go` is cleared and the CP's
// WAIT_REG_MEM holds until the host grants more tokens; an end sets `go` so the loop exits.
//
// The logits are not changed: the penalised copy goes to `scratch` (n floats), so a check can
// read the step's logits back. Grid: 1 x 1 x 1. Workgroup 256.
#include "zk_compat.h"

// kfd/tier/sampler_block.h, in ints.
#define ZKS_TEMPERATURE 0
#define ZKS_TOP_P 1
#define ZKS_MIN_P 2
#define ZKS_PENALTY 3
#define ZKS_TOP_K 4
#define ZKS_RECENT_CAPACITY 5
#define ZKS_RECENT_COUNT 6
#define ZKS_SEED_LO 7
#define ZKS_SEED_HI 8
#define ZKS_DRAW_BASE 9
#define ZKS_STEP 10
#define ZKS_LIVE 11
#define ZKS_MAX_STEPS 12
#define ZKS_CONTEXT 13
#define ZKS_STOP_COUNT 14
#define ZKS_END_REASON 15
#define ZKS_CANCEL 16
#define ZKS_GO 17
#define ZKS_LOOP 18
#define ZKS_STOP_IDS 32
#define ZKS_RECENT 48
#define ZKS_MAX_K 256
// ZKS_END_REASON values (kfd/tier/sampler_block.h EndReason).
#define ZKS_END_STOP_ID 1
#define ZKS_END_BUDGET 2
#define ZKS_END_CONTEXT 3
#define ZKS_END_CANCEL 4

static inline float zks_param(__global const int* chain, int i) { return as_float(chain[i]); }

// Floats as unsigned keys in the same order.
static inline uint zks_key(float x) {
    const uint b = as_uint(x);
    return (b & 0x80000000u) != 0u ? ~b : b | 0x80000000u;
}

// C. Wellons' lowbias32 integer hash, chained as runtime/sampler.cpp uniformDraw.
static inline uint zks_lowbias32(uint x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}
static inline float zks_uniform(uint seedLo, uint seedHi, uint draw) {
    const uint h = zks_lowbias32(seedLo ^ zks_lowbias32(seedHi ^ zks_lowbias32(draw)));
    return (float)(h >> 8) * (1.0f / 16777216.0f);
}

// p * 2^k for k in -149..128 as std::ldexp rounds it: the scalings are exact powers of two and
// only the last one can round (into the subnormals) or overflow.
static inline float zks_ldexp(float p, int k) {
    if (k > 127) {
        p *= 2.0f;
        k -= 1;
    }
    if (k < -126) return (p * as_float((uint)(k + 64 + 127) << 23)) * as_float((uint)(127 - 64) << 23);
    return p * as_float((uint)(k + 127) << 23);
}

// runtime/sampler.cpp expAccurate: Cody-Waite reduction and a degree-7 polynomial, every step
// a fused multiply-add as on the host.
static inline float zks_exp(float x) {
    if (x < -103.0f) return 0.0f;
    if (x > 88.7f) return as_float(0x7f800000u);
    const float t = x * 1.44269504f;
    const float k = (t + 12582912.0f) - 12582912.0f;  // round half to even (|t| < 150)
    float r = zk_fma(-k, 0.693145752f, x);
    r = zk_fma(-k, 1.42860677e-6f, r);
    float p = 1.98412698e-4f;
    p = zk_fma(p, r, 1.38888889e-3f);
    p = zk_fma(p, r, 8.33333333e-3f);
    p = zk_fma(p, r, 4.16666667e-2f);
    p = zk_fma(p, r, 1.66666667e-1f);
    p = zk_fma(p, r, 0.5f);
    p = zk_fma(p, r, 1.0f);
    p = zk_fma(p, r, 1.0f);
    return zks_ldexp(p, (int)k);
}

static inline float zks_softmax_sum(__local const float* logit, int count, float scale) {
    float sum = 0.0f;
    for (int i = 0; i < count; ++i) sum += zks_exp((logit[i] - logit[0]) * scale);
    return sum;
}

// Top-p, min-p, temperature and the draw over the sorted candidates (one work-item).
static int zks_draw(__global const int* chain, __local const float* logit, __local const int* id, int count, uint drawIndex) {
    const float topP = zks_param(chain, ZKS_TOP_P), minP = zks_param(chain, ZKS_MIN_P);
    const float temperature = zks_param(chain, ZKS_TEMPERATURE);
    if (temperature <= 0.0f) return id[0];
    if (topP < 1.0f) {
        const float sum = zks_softmax_sum(logit, count, 1.0f);
        float acc = 0.0f;
        for (int i = 0; i < count; ++i) {
            acc += zks_exp(logit[i] - logit[0]) / sum;
            if (acc >= topP) {
                count = i + 1;
                break;
            }
        }
    }
    if (minP > 0.0f) {
        const float sum = zks_softmax_sum(logit, count, 1.0f);
        const float threshold = (1.0f / sum) * minP;
        int keep = 1;
        while (keep < count && zks_exp(logit[keep] - logit[0]) / sum >= threshold) ++keep;
        count = keep;
    }
    const float scale = 1.0f / temperature;
    const float sum = zks_softmax_sum(logit, count, scale);
    const float r = zks_uniform((uint)chain[ZKS_SEED_LO], (uint)chain[ZKS_SEED_HI], (uint)chain[ZKS_DRAW_BASE] + drawIndex);
    float acc = 0.0f;
    for (int i = 0; i < count; ++i) {
        acc += zks_exp((logit[i] - logit[0]) * scale) / sum;
        if (r < acc) return id[i];
    }
    return id[count - 1];
}

static inline bool zks_before(float la, int ia, float lb, int ib) { return la > lb || (la == lb && ia < ib); }

ZK_KERNEL(256) void sample_token(__global const float* logits, __global float* scratch, __global int* state,
                                 __global int* tokens, __global int* ring, __global int* chain, int n, int ringCapacity) {
    __local uint hist[256];
    __local uint counts[2 * 256];
    __local uint chosen[2];  // radix bin, how many of it are still wanted; later the candidate count
    __local float candLogit[ZKS_MAX_K];
    __local int candId[ZKS_MAX_K];
    const int tid = ZK_LID();
    // After the end every loop runs empty and nothing is written (no early return: zk_compat.h).
    const bool live = chain[ZKS_LIVE] != 0;
    n = live ? n : 0;
    const int step = chain[ZKS_STEP];

    // The penalised logits (llama.cpp: divide positive logits, multiply negative ones, once per id).
    for (int i = tid; i < n; i += 256) scratch[i] = logits[i];
    zk_barrier();
    const float penalty = zks_param(chain, ZKS_PENALTY);
    const int capacity = chain[ZKS_RECENT_CAPACITY];
    if (live && penalty != 1.0f && capacity > 0) {
        const int count = zk_min_i(capacity, chain[ZKS_RECENT_COUNT] + step);
        for (int i = tid; i < count; i += 256) {
            const int id = chain[ZKS_RECENT + i];
            bool first = id >= 0 && id < n;
            for (int j = 0; j < i && first; ++j) first = chain[ZKS_RECENT + j] != id;
            if (first) {
                const float l = scratch[id];
                scratch[id] = l > 0.0f ? l / penalty : l * penalty;
            }
        }
        zk_barrier();
    }

    const bool greedy = zks_param(chain, ZKS_TEMPERATURE) <= 0.0f;
    const int k = !live ? 0 : greedy ? 1 : zk_min_i(zk_min_i(chain[ZKS_TOP_K], ZKS_MAX_K), n);

    // The k-th largest key, 8 bits at a time, and how many keys equal to it are taken.
    uint prefix = 0u, mask = 0u, wanted = (uint)k;
    for (int shift = 24; shift >= 0; shift -= 8) {
        hist[tid] = 0u;
        zk_barrier();
        for (int i = tid; i < n; i += 256) {
            const uint key = zks_key(scratch[i]);
            if ((key & mask) == prefix) __atomic_fetch_add(&hist[(key >> shift) & 255u], 1u, __ATOMIC_RELAXED);
        }
        zk_barrier();
        if (tid == 0) {
            uint above = 0u, bin = 0u;
            for (int b = 255; b >= 0; --b) {
                if (above + hist[b] >= wanted) {
                    bin = (uint)b;
                    break;
                }
                above += hist[b];
            }
            chosen[0] = bin;
            chosen[1] = wanted - above;
        }
        zk_barrier();
        prefix |= chosen[0] << shift;
        mask |= 255u << shift;
        wanted = chosen[1];
        zk_barrier();
    }
    const uint threshold = prefix, ties = wanted;

    // Candidates: every key above the threshold and the first `ties` equal to it by id. Each
    // work-item scans a contiguous range of ids so the ties are taken in id order.
    const int chunk = (n + 255) / 256;
    const int begin = zk_min_i(n, tid * chunk), end = zk_min_i(n, begin + chunk);
    uint above = 0u, equal = 0u;
    for (int i = begin; i < end; ++i) {
        const uint key = zks_key(scratch[i]);
        above += key > threshold ? 1u : 0u;
        equal += key == threshold ? 1u : 0u;
    }
    counts[tid] = above;
    counts[256 + tid] = equal;
    zk_barrier();
    if (tid == 0) {  // exclusive prefix sums; ties are placed after all the keys above
        uint a = 0u, e = 0u;
        for (int t = 0; t < 256; ++t) {
            const uint ca = counts[t], ce = counts[256 + t];
            counts[t] = a;
            counts[256 + t] = e;
            a += ca;
            e += ce;
        }
        for (int t = 0; t < 256; ++t) counts[256 + t] += a;
        chosen[0] = a + ties;
    }
    zk_barrier();
    uint at = counts[tid], tieAt = counts[256 + tid];
    const uint total = chosen[0];
    for (int i = begin; i < end; ++i) {
        const float l = scratch[i];
        const uint key = zks_key(l);
        if (key > threshold) {
            candLogit[at] = l;
            candId[at++] = i;
        } else if (key == threshold && tieAt < total) {
            candLogit[tieAt] = l;
            candId[tieAt++] = i;
        }
    }
    zk_barrier();

    // Bitonic sort of the slots by (logit desc, id asc); slots past k are padding.
    if (tid >= k) {
        candLogit[tid] = -as_float(0x7f800000u);
        candId[tid] = 0x7fffffff;
    }
    zk_barrier();
    for (int size = 2; size <= ZKS_MAX_K; size <<= 1) {
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            const int other = tid ^ stride;
            if (other > tid) {
                const bool ascending = (tid & size) == 0;
                const float la = candLogit[tid], lb = candLogit[other];
                const int ia = candId[tid], ib = candId[other];
                if (zks_before(lb, ib, la, ia) == ascending) {
                    candLogit[tid] = lb;
                    candId[tid] = ib;
                    candLogit[other] = la;
                    candId[other] = ia;
                }
            }
            zk_barrier();
        }
    }

    if (live && tid == 0) {
        const int token = zks_draw(chain, candLogit, candId, k, (uint)step);
        tokens[0] = token;
        ring[step % ringCapacity] = token;
        if (capacity > 0) chain[ZKS_RECENT + (chain[ZKS_RECENT_COUNT] + step) % capacity] = token;
        const int position = state[0] + 1;  // where the token would be fed
        state[0] = position;
        state[2] += 1;
        chain[ZKS_STEP] = step + 1;
        int reason = 0;
        for (int i = 0; i < chain[ZKS_STOP_COUNT]; ++i)
            if (chain[ZKS_STOP_IDS + i] == token) reason = ZKS_END_STOP_ID;
        if (reason == 0 && position >= chain[ZKS_CONTEXT]) reason = ZKS_END_CONTEXT;
        if (reason == 0 && chain[ZKS_CANCEL] != 0) reason = ZKS_END_CANCEL;
        const bool budget = step + 1 >= chain[ZKS_MAX_STEPS];
        if (reason == 0 && budget && chain[ZKS_LOOP] == 0) reason = ZKS_END_BUDGET;
        if (reason != 0) {
            chain[ZKS_END_REASON] = reason;
            chain[ZKS_LIVE] = 0;
            chain[ZKS_GO] = 1;
        } else if (budget) {
            chain[ZKS_GO] = 0;  // the loop waits for the host's grant; written last
        }
    }
}
