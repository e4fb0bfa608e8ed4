// Mixture of experts around the expert matvecs (ops_moe.cpp):
//   moe_topk     router logits -> softmax (exp in float, sum in float-float) -> the nUsed largest
//                (lower expert id on ties) -> ids and weights, renormalised when asked
//   moe_combine  out = sum over the chosen experts, in increasing expert id, of weight * down
#include "zk_math.h"

#define ZK_MOE_MAX_EXPERTS 512

// The softmax normalisation and top-k selection, in order, by one thread.
static inline void zk_topk_serial(__local float* prob, __local int* taken, __global int* outIds, __global float* outWeights,
                                  int nExpert, int nUsed, int normalize) {
    zk_ff sum = zk_ff_make(0.0f, 0.0f);  // the cpu tier sums in double: float-float keeps ~48 bits
    for (int e = 0; e < nExpert; ++e) sum = zk_ff_add(sum, zk_ff_make(prob[e], 0.0f));
    for (int e = 0; e < nExpert; ++e) prob[e] = zk_ff_div_into(prob[e], sum);
    float chosen = 0.0f;
    for (int k = 0; k < nUsed; ++k) {
        int best = 0;
        while (taken[best]) ++best;  // the first expert not chosen yet (nUsed <= nExpert)
        for (int e = best + 1; e < nExpert; ++e)
            if (!taken[e] && prob[e] > prob[best]) best = e;
        taken[best] = 1;
        outIds[k] = best;
        outWeights[k] = prob[best];
        chosen += prob[best];
    }
    if (normalize)
        for (int k = 0; k < nUsed; ++k) outWeights[k] = outWeights[k] / chosen;
}

// Grid: x = 1, y = tokens. Workgroup 64. nExpert <= 512.
ZK_KERNEL(64) void moe_topk(__global const float* logits, __global int* ids, __global float* weights, int nExpert,
                            int nUsed, int logitsStride, int idsStride, int normalize) {
    __local float prob[ZK_MOE_MAX_EXPERTS];
    __local int taken[ZK_MOE_MAX_EXPERTS];
    __local float top[64];
    const int lid = ZK_LID(), t = ZK_GROUP_Y();
    const int valid = nExpert <= ZK_MOE_MAX_EXPERTS && nUsed <= nExpert;
    __global const float* l = logits + (long)t * logitsStride;
    float m = -as_float(0x7f800000u);
    for (int e = lid; valid && e < nExpert; e += 64) m = __builtin_fmaxf(m, l[e]);
    top[lid] = m;
    zk_barrier();
    for (int w = 32; w > 0; w /= 2) {
        if (lid < w) top[lid] = __builtin_fmaxf(top[lid], top[lid + w]);
        zk_barrier();
    }
    const float maxLogit = top[0];
    for (int e = lid; valid && e < nExpert; e += 64) {
        prob[e] = zk_expf(l[e] - maxLogit);
        taken[e] = 0;
    }
    zk_barrier();
    if (valid && lid == 0) zk_topk_serial(prob, taken, ids + (long)t * idsStride, weights + (long)t * idsStride, nExpert, nUsed, normalize);
}

// down: rows of n floats, slot k of token t at down + t * downTokenStride + k * downSlotStride.
// Grid: x = ceil(n / 256), y = tokens. Workgroup 256. nUsed <= 32.
ZK_KERNEL(256) void moe_combine(__global const float* down, __global const int* ids, __global const float* weights,
                                __global float* out, int n, int nUsed, int downTokenStride, int downSlotStride,
                                int idsStride, int outStride) {
    const int i = ZK_GROUP_X() * 256 + ZK_LID(), t = ZK_GROUP_Y();
    if (i >= n) return;
    __global const int* id = ids + (long)t * idsStride;
    __global const float* w = weights + (long)t * idsStride;
    __global const float* d = down + (long)t * downTokenStride + i;
    float acc = 0.0f;
    int last = -1;
    for (int k = 0; k < nUsed; ++k) {  // the slot with the next larger expert id
        int pick = -1;
        for (int j = 0; j < nUsed; ++j)
            if (id[j] > last && (pick < 0 || id[j] < id[pick])) pick = j;
        if (pick < 0) break;
        last = id[pick];
        acc = acc + w[pick] * d[(long)pick * downSlotStride];
    }
    out[(long)t * outStride + i] = acc;
}
