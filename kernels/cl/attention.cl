// The F16 KV cache and attention over it, as the cpu tier's ggml precision mode computes it
// (ops_attention.cpp, attention_generic.cpp; llama.cpp's flash attention with an F16 cache):
// q rounded to F16, each score a sequential fp32 dot product, online softmax, and the
// weighted sum of V kept in an F16 accumulator rounded after every position.
#include "zk_math.h"

// kv_store: K and V rows of token t, rounded to halves, at cache row (state[0] + t) % slots.
// kCache / vCache: this layer's cache, `slots` rows of kvDim halves (graph/kv_layout.h: a ring
// on sliding-window layers). Grid: x = ceil(kvDim / 256), y = tokens. Workgroup 256.
ZK_KERNEL(256) void kv_store(__global const float* k, __global const float* v, __global ushort* kCache,
                             __global ushort* vCache, __global const int* state, int kvDim, int inStride, int slots) {
    const int i = ZK_GROUP_X() * 256 + ZK_LID(), t = ZK_GROUP_Y();
    if (i >= kvDim) return;
    const long row = (long)((state[0] + t) % slots) * kvDim;
    kCache[row + i] = (ushort)zk_f2h(k[(long)t * inStride + i]);
    vCache[row + i] = (ushort)zk_f2h(v[(long)t * inStride + i]);
}

#define ZK_ATT_WG 128
#define ZK_ATT_MAX_HEAD_DIM 256

// attention: query head h of token t attends to cache rows [0, state[0] + t] (the last
// `window` of them when window > 0) of kv head
// h / (nHead / nHeadKv). Rows are kvStride halves apart; position p in row p % slots. headDim <= 256.
// Grid: x = nHead, y = tokens. Workgroup 128: scores of 128 positions at a time (one
// position per thread, its dot product in order), then thread 0 runs the softmax
// bookkeeping over them in order and every thread updates its dims of the accumulator.
ZK_KERNEL(128) void attention(__global const float* q, __global const ushort* kCache, __global const ushort* vCache,
                              __global float* out, __global const int* state, int nHead, int nHeadKv, int headDim,
                              int kvStride, int qStride, int outStride, float scale, int window, int preScale, int slots) {
    __local float q16[ZK_ATT_MAX_HEAD_DIM];
    __local float scores[ZK_ATT_WG];
    __local float rescale[ZK_ATT_WG];  // ms: factor for the accumulator before position p
    __local float weight[ZK_ATT_WG];   // vs: weight of V row p
    __local float total[1];
    const int lid = ZK_LID(), h = ZK_GROUP_X(), t = ZK_GROUP_Y();
    const int valid = h < nHead && headDim <= ZK_ATT_MAX_HEAD_DIM;
    const int n = valid ? state[0] + t + 1 : 0;
    const int first = window > 0 ? zk_max_i(0, n - window) : 0;  // sliding window: positions first..n-1
    const int kvOffset = (h / (nHead / nHeadKv)) * headDim;
    __global const float* qh = q + (long)t * qStride + (long)h * headDim;
    for (int i = lid; valid && i < headDim; i += ZK_ATT_WG) q16[i] = zk_round_half(preScale ? qh[i] * scale : qh[i]);
    float acc0 = 0.0f, acc1 = 0.0f;  // dims lid and lid + 128
    float maxScore = -as_float(0x7f800000u), sum = 0.0f;  // used by thread 0
    if (lid == 0) total[0] = 0.0f;
    zk_barrier();
    for (int p0 = first; p0 < n; p0 += ZK_ATT_WG) {
        const int p = p0 + lid;
        if (p < n) {
            __global const ushort* kr = kCache + (long)(p % slots) * kvStride + kvOffset;
            float s = 0.0f;
            for (int i = 0; i < headDim; ++i) s += zk_h2f(kr[i]) * q16[i];
            scores[lid] = preScale ? s : s * scale;
        }
        zk_barrier();
        const int count = zk_min_i(ZK_ATT_WG, n - p0);
        if (lid == 0) {
            for (int j = 0; j < count; ++j) {
                const float s = scores[j];
                float ms = 1.0f, vs = 1.0f;
                if (s > maxScore) {
                    ms = zk_expf(maxScore - s);
                    maxScore = s;
                } else {
                    vs = zk_expf(s - maxScore);
                }
                rescale[j] = ms;
                weight[j] = vs;
                sum = sum * ms + vs;
            }
            total[0] = sum;
        }
        zk_barrier();
        for (int j = 0; j < count; ++j) {
            const float ms = rescale[j], vs = weight[j];
            __global const ushort* vr = vCache + (long)((p0 + j) % slots) * kvStride + kvOffset;
            if (lid < headDim) {
                if (ms != 1.0f) acc0 = zk_round_half(acc0 * ms);
                acc0 = zk_round_half(acc0 + zk_h2f(vr[lid]) * vs);
            }
            if (lid + ZK_ATT_WG < headDim) {
                if (ms != 1.0f) acc1 = zk_round_half(acc1 * ms);
                acc1 = zk_round_half(acc1 + zk_h2f(vr[lid + ZK_ATT_WG]) * vs);
            }
        }
        zk_barrier();
    }
    const float all = total[0];
    const float inv = all > 0.0f ? 1.0f / all : 0.0f;
    __global float* o = out + (long)t * outStride + (long)h * headDim;
    if (valid && lid < headDim) o[lid] = acc0 * inv;
    if (valid && lid + ZK_ATT_WG < headDim) o[lid + ZK_ATT_WG] = acc1 * inv;
}
