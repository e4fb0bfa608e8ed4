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
        float theta = pos;
        for (int j = 0; j < i; ++j) theta *= thetaScale;
        float s, c;
        zk_sincosf(zk_rope_angle(theta, i, freqFactors, freqScale, extFactor, corrLow, corrHigh), &s, &c);
        c *= mscale;
        s *= mscale;
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
