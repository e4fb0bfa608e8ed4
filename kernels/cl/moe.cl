// Mixture of experts around the expert matvecs (ops_moe.cpp):
//   moe_topk     router logits -> softmax (exp in float, sum in float-float) -> the nUsed largest
//                (lower expert id on ties) -> ids and weights, renormalised when asked
//   moe_combine  out = sum over the chosen experts, in increasing expert id, of weight * down
//   moe_shared_add  out += that sum + shared * sigmoid(gate . x)  (qwen35moe's shared expert)
#include "zk_math.h"

#define ZK_MOE_MAX_EXPERTS 512

// Grid: x = 1, y = tokens. Workgroup 64. nExpert <= 512. The whole workgroup: the softmax sum in
// float-float (each thread its experts, then a tree: the cpu tier sums in double, in order; both
// round prob / sum to the same float except within ~2^-20 ulp of a tie), then nUsed rounds of an
// argmax over the experts not taken yet (the largest probability, the lower expert id on ties,
// as the cpu tier's partial_sort), each a tree over the 64 threads.
ZK_KERNEL(64) void moe_topk(__global const float* logits, __global int* ids, __global float* weights, int nExpert,
                            int nUsed, int logitsStride, int idsStride, int normalize) {
    __local float prob[ZK_MOE_MAX_EXPERTS];
    __local int taken[ZK_MOE_MAX_EXPERTS];
    __local float top[64], topLo[64];
    __local int topId[64];
    __local int picked[ZK_MOE_MAX_EXPERTS];
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
    zk_barrier();
    zk_ff part = zk_ff_make(0.0f, 0.0f);
    for (int e = lid; valid && e < nExpert; e += 64) {
        const float p = zk_expf(l[e] - maxLogit);
        prob[e] = p;
        taken[e] = 0;
        part = zk_ff_add(part, zk_ff_make(p, 0.0f));
    }
    top[lid] = part.hi;
    topLo[lid] = part.lo;
    zk_barrier();
    for (int w = 32; w > 0; w /= 2) {
        if (lid < w) {
            const zk_ff s = zk_ff_add(zk_ff_make(top[lid], topLo[lid]), zk_ff_make(top[lid + w], topLo[lid + w]));
            top[lid] = s.hi;
            topLo[lid] = s.lo;
        }
        zk_barrier();
    }
    const zk_ff sum = zk_ff_make(top[0], topLo[0]);
    zk_barrier();
    for (int e = lid; valid && e < nExpert; e += 64) prob[e] = zk_ff_div_into(prob[e], sum);
    zk_barrier();
    for (int k = 0; valid && k < nUsed; ++k) {
        float best = -1.0f;
        int bestId = -1;
        for (int e = lid; e < nExpert; e += 64)
            if (!taken[e] && (bestId < 0 || prob[e] > best)) {  // ascending e: a tie keeps the lower id
                best = prob[e];
                bestId = e;
            }
        top[lid] = best;
        topId[lid] = bestId;
        zk_argmax_tree(top, topId, 64);
        if (lid == 0) {
            taken[topId[0]] = 1;
            picked[k] = topId[0];
        }
        zk_barrier();
    }
    if (valid && lid == 0) {
        __global int* outIds = ids + (long)t * idsStride;
        __global float* outWeights = weights + (long)t * idsStride;
        float chosen = 0.0f;
        for (int k = 0; k < nUsed; ++k) {
            outIds[k] = picked[k];
            outWeights[k] = prob[picked[k]];
            chosen += prob[picked[k]];
        }
        if (normalize)
            for (int k = 0; k < nUsed; ++k) outWeights[k] = outWeights[k] / chosen;
    }
}

// One element of the chosen experts' rows summed as the cpu tier does: weight * down, the slots
// in increasing expert id (id, w: the token's nUsed ids and weights; d: the element in slot 0).
static inline float zk_moe_sum(__global const int* id, __global const float* w, __global const float* d, int nUsed,
                               int downSlotStride) {
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
    return acc;
}

// down: rows of n floats, slot k of token t at down + t * downTokenStride + k * downSlotStride.
// Grid: x = ceil(n / 256), y = tokens. Workgroup 256. nUsed <= 32. accumulate: out += the sum.
ZK_KERNEL(256) void moe_combine(__global const float* down, __global const int* ids, __global const float* weights,
                                __global float* out, int n, int nUsed, int downTokenStride, int downSlotStride,
                                int idsStride, int outStride, int accumulate) {
    const int i = ZK_GROUP_X() * 256 + ZK_LID(), t = ZK_GROUP_Y();
    if (i >= n) return;
    const float acc = zk_moe_sum(ids + (long)t * idsStride, weights + (long)t * idsStride, down + (long)t * downTokenStride + i,
                                 nUsed, downSlotStride);
    __global float* o = out + (long)t * outStride + i;
    *o = accumulate ? *o + acc : acc;  // accumulate: the residual add of graph::fuse's MoeFfnAdd
}

// graph::fuse's MoeSharedAdd (qwen35moe): out += combine + shared * sigmoid(g), g = gate . x the
// shared expert's input gate (one F32 row of k values), in one pass instead of five dispatches
// (matvec_f32 for g, moe_combine, sigmoid_gate, the shared expert's add, the residual add). Each
// value goes through the same expressions as there, so the same bits: g as matvec_f32's eight
// lanes (lane l sums elements 8m + l, then ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)),
// then the tail in order), computed again by every workgroup of the token; the combination as
// moe_combine's. Grid: x = ceil(n / 256), y = tokens. Workgroup 256. nUsed <= 32.
ZK_KERNEL(256) void moe_shared_add(__global const float* down, __global const int* ids, __global const float* weights,
                                   __global const float* shared, __global const float* gate, __global const float* x,
                                   __global float* out, int n, int nUsed, int downTokenStride, int downSlotStride,
                                   int idsStride, int sharedStride, int xStride, int k, int outStride) {
    __local float lanes[8];
    const int lid = ZK_LID(), t = ZK_GROUP_Y(), i = ZK_GROUP_X() * 256 + lid;
    __global const float* xt = x + (long)t * xStride;
    const int k8 = k & ~7;
    if (lid < 8) {
        float acc = 0.0f;
        for (int e = lid; e < k8; e += 8) acc += gate[e] * xt[e];
        lanes[lid] = acc;
    }
    zk_barrier();
    float g = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
    for (int e = k8; e < k; ++e) g += gate[e] * xt[e];
    if (i >= n) return;
    float acc = zk_moe_sum(ids + (long)t * idsStride, weights + (long)t * idsStride, down + (long)t * downTokenStride + i, nUsed,
                           downSlotStride);
    acc = acc + shared[(long)t * sharedStride + i] * zk_sigmoid(g);
    __global float* o = out + (long)t * outStride + i;
    *o = *o + acc;
}
