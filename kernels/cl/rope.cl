// RoPE in place, at position state[0] + t (the token-state block), or rows[2t] in a step over
// rows of several sequences (continuous batching: `rows` holds per row {position, first KV row
// of its slot}, written with the token state; 0 in every one-sequence plan); angles as the cpu tier's
// fillRopeTables (model/rope_scaling.h, ggml's rope_yarn): theta_0 = pos, theta_i =
// theta_(i-1) * thetaScale in float, where the host passes thetaScale = pow(base, -2 / ropeDim)
// computed in float as the cpu tier does; divided by freqFactors[i] (rope_freqs) when given,
// then linear (freqScale) / yarn (extFactor, ramp corrLow..corrHigh) scaling; cos and sin
// times mscale. rope_norm rotates (2i, 2i+1) (llama), rope_neox (i, i + ropeDim/2) (qwen3).
// Grid: x = heads, y = tokens. Workgroup 64.
#include "zk_math.h"

static inline float zk_rope_angle(float theta, int i, __global const float* freqFactors, float freqScale, float extFactor,
                                  float corrLow, float corrHigh) {
    const float extrap = freqFactors ? theta / freqFactors[i] : theta;
    const float interp = freqScale * extrap;
    if (extFactor == 0.0f) return interp;
    const float span = corrHigh - corrLow < 0.001f ? 0.001f : corrHigh - corrLow;  // std::max, std::min as the host
    const float y = ((float)i - corrLow) / span;
    const float ramp = 1.0f - (y < 0.0f ? 0.0f : (y > 1.0f ? 1.0f : y));
    const float mix = ramp * extFactor;
    return interp * (1.0f - mix) + extrap * mix;
}

// cos and sin (times mscale) of pair i's angle at `pos`.
static inline void zk_rope_cs(float pos, int i, float thetaScale, __global const float* freqFactors, float freqScale,
                              float extFactor, float mscale, float corrLow, float corrHigh, float* s, float* c) {
    float theta = pos;
    for (int j = 0; j < i; ++j) theta *= thetaScale;
    zk_sincosf(zk_rope_angle(theta, i, freqFactors, freqScale, extFactor, corrLow, corrHigh), s, c);
    *c *= mscale;
    *s *= mscale;
}

static inline void zk_rope(__global float* x, __global const int* state, int heads, int headDim, int ropeDim,
                           float thetaScale, int stride, __global const float* freqFactors, float freqScale,
                           float extFactor, float mscale, float corrLow, float corrHigh, __global const int* rows,
                           int neox) {
    const int h = ZK_GROUP_X(), t = ZK_GROUP_Y();
    if (h >= heads) return;
    const int half_ = ropeDim / 2;
    __global float* v = x + (long)t * stride + (long)h * headDim;
    const float pos = (float)(rows ? rows[2 * t] : state[0] + t);
    for (int i = ZK_LID(); i < half_; i += 64) {
        float s, c;
        zk_rope_cs(pos, i, thetaScale, freqFactors, freqScale, extFactor, mscale, corrLow, corrHigh, &s, &c);
        const int a = neox ? i : 2 * i;
        const int b = neox ? i + half_ : 2 * i + 1;
        const float x0 = v[a], x1 = v[b];
        v[a] = x0 * c - x1 * s;
        v[b] = x0 * s + x1 * c;
    }
}

#define ZK_ROPE_PARAMS                                                                                            \
    __global float *x, __global const int *state, int heads, int headDim, int ropeDim, float thetaScale, int stride, \
        __global const float *freqFactors, float freqScale, float extFactor, float mscale, float corrLow, float corrHigh, \
        __global const int *rows

ZK_KERNEL(64) void rope_norm(ZK_ROPE_PARAMS) {
    zk_rope(x, state, heads, headDim, ropeDim, thetaScale, stride, freqFactors, freqScale, extFactor, mscale, corrLow,
            corrHigh, rows, 0);
}

ZK_KERNEL(64) void rope_neox(ZK_ROPE_PARAMS) {
    zk_rope(x, state, heads, headDim, ropeDim, thetaScale, stride, freqFactors, freqScale, extFactor, mscale, corrLow,
            corrHigh, rows, 1);
}

// graph::fuse's QkRopeAttention before attention (the PM4 tier): per head of q and of k, the
// QK-norm (head_norm, where given), RoPE (rope_norm / rope_neox) and, for k's heads, the K and V
// rows into the KV cache (kv_store): up to five dispatches in one, each value through the same
// expressions as there (the head held in LDS between them), so the same bits. q and k are written
// back in place, as the kernels apart leave them. Grid: x = heads + kvHeads (q's heads, then k's),
// y = tokens. Workgroup 64. headDim <= 256.
ZK_KERNEL(64) void qk_rope(__global float* q, __global float* k, __global const float* v, __global const float* qNorm,
                           __global const float* kNorm, float eps, __global ushort* kCache, __global ushort* vCache,
                           __global const int* state, int heads, int kvHeads, int headDim, int ropeDim, float thetaScale,
                           int qStride, int kStride, int vStride, float freqScale, float extFactor, float mscale, float corrLow,
                           float corrHigh, int neox, int slots, __global const int* rows) {
    __local float partialHi[64], partialLo[64];
    __local float head[256];
    const int t = ZK_GROUP_Y(), isK = ZK_GROUP_X() >= heads, h = isK ? ZK_GROUP_X() - heads : ZK_GROUP_X();
    __global float* x = (isK ? k + (long)t * kStride : q + (long)t * qStride) + (long)h * headDim;
    __global const float* w = isK ? kNorm : qNorm;
    float scale = 0.0f;
    if (w) {  // as head_norm
        zk_ff sum;
        ZK_SUM_SQUARES(64, x, headDim, partialHi, partialLo, sum)
        scale = zk_rms_scale(sum, headDim, eps);
    }
    for (int i = ZK_LID(); i < headDim; i += 64) head[i] = w ? x[i] * scale * w[i] : x[i];
    zk_barrier();
    const int half_ = ropeDim / 2;
    const int position = rows ? rows[2 * t] : state[0] + t;
    for (int i = ZK_LID(); i < half_; i += 64) {  // as zk_rope
        float s, c;
        zk_rope_cs((float)position, i, thetaScale, 0, freqScale, extFactor, mscale, corrLow, corrHigh, &s, &c);
        const int a = neox ? i : 2 * i;
        const int b = neox ? i + half_ : 2 * i + 1;
        const float x0 = head[a], x1 = head[b];
        head[a] = x0 * c - x1 * s;
        head[b] = x0 * s + x1 * c;
    }
    zk_barrier();
    for (int i = ZK_LID(); i < headDim; i += 64) x[i] = head[i];
    if (!isK) return;
    const long row = ((rows ? (long)rows[2 * t + 1] : 0) + position % slots) * (long)kvHeads * headDim + (long)h * headDim;
    __global const float* vh = v + (long)t * vStride + (long)h * headDim;
    for (int i = ZK_LID(); i < headDim; i += 64) {  // as kv_store
        kCache[row + i] = (ushort)zk_f2h(head[i]);
        vCache[row + i] = (ushort)zk_f2h(vh[i]);
    }
}
