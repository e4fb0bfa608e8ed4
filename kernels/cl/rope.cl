// RoPE in place, at position state[0] + t (the token-state block), angles as the cpu tier's
// fillRopeTables: theta_0 = pos, theta_i = theta_(i-1) * thetaScale in float, where the host
// passes thetaScale = pow(base, -2 / ropeDim) computed in float as the cpu tier does.
// rope_norm rotates (2i, 2i+1) (llama), rope_neox (i, i + ropeDim/2) (qwen3).
// Grid: x = heads, y = tokens. Workgroup 64.
#include "zk_math.h"

static inline void zk_rope(__global float* x, __global const int* state, int heads, int headDim, int ropeDim,
                           float thetaScale, int stride, int neox) {
    const int h = ZK_GROUP_X(), t = ZK_GROUP_Y();
    if (h >= heads) return;
    const int half_ = ropeDim / 2;
    __global float* v = x + (long)t * stride + (long)h * headDim;
    const float pos = (float)(state[0] + t);
    for (int i = ZK_LID(); i < half_; i += 64) {
        float theta = pos;
        for (int j = 0; j < i; ++j) theta *= thetaScale;
        float s, c;
        zk_sincosf(theta, &s, &c);
        const int a = neox ? i : 2 * i;
        const int b = neox ? i + half_ : 2 * i + 1;
        const float x0 = v[a], x1 = v[b];
        v[a] = x0 * c - x1 * s;
        v[b] = x0 * s + x1 * c;
    }
}

ZK_KERNEL(64) void rope_norm(__global float* x, __global const int* state, int heads, int headDim, int ropeDim,
                             float thetaScale, int stride) {
    zk_rope(x, state, heads, headDim, ropeDim, thetaScale, stride, 0);
}

ZK_KERNEL(64) void rope_neox(__global float* x, __global const int* state, int heads, int headDim, int ropeDim,
                             float thetaScale, int stride) {
    zk_rope(x, state, heads, headDim, ropeDim, thetaScale, stride, 1);
}
