// RMSNorm (rms_norm) and per-head RMSNorm in place (head_norm, QK-norm), as ops_norm.cpp:
// the sum of squares in double, scale = 1 / sqrt(mean + eps) in float, out = x * scale * w.
#include "zk_math.h"

// Sum of squares of n floats over a workgroup of WG threads; every thread gets the total.
#define ZK_SUM_SQUARES(WG, x, n, partial, result)                                    \
    {                                                                                \
        double s_ = 0.0;                                                             \
        for (int i_ = ZK_LID(); i_ < (n); i_ += WG) s_ += (double)(x)[i_] * (double)(x)[i_]; \
        partial[ZK_LID()] = s_;                                                      \
        zk_barrier();                                                                \
        for (int w_ = WG / 2; w_ > 0; w_ /= 2) {                                     \
            if (ZK_LID() < w_) partial[ZK_LID()] += partial[ZK_LID() + w_];          \
            zk_barrier();                                                            \
        }                                                                            \
        result = partial[0];                                                         \
    }

static inline float zk_rms_scale(double sum, int n, float eps) {
    const float mean = (float)(sum / (double)n);
    return 1.0f / zk_sqrtf(mean + eps);
}

// Grid: x = 1, y = tokens. Workgroup 256.
ZK_KERNEL(256) void rms_norm(__global const float* in, __global const float* weight, __global float* out, int n,
                             float eps, int inStride, int outStride) {
    __local double partial[256];
    const int t = ZK_GROUP_Y();
    __global const float* x = in + (long)t * inStride;
    __global float* y = out + (long)t * outStride;
    double sum;
    ZK_SUM_SQUARES(256, x, n, partial, sum)
    const float scale = zk_rms_scale(sum, n, eps);
    for (int i = ZK_LID(); i < n; i += 256) y[i] = x[i] * scale * weight[i];
}

// Grid: x = heads, y = tokens. Workgroup 64. x[t] holds heads * headDim floats at stride.
ZK_KERNEL(64) void head_norm(__global float* x, __global const float* weight, int heads, int headDim, float eps,
                             int stride) {
    __local double partial[64];
    const int h = ZK_GROUP_X(), t = ZK_GROUP_Y();
    const int n = h < heads ? headDim : 0;
    __global float* v = x + (long)t * stride + (long)h * headDim;
    double sum;
    ZK_SUM_SQUARES(64, v, n, partial, sum)
    const float scale = zk_rms_scale(sum, headDim, eps);
    for (int i = ZK_LID(); i < n; i += 64) v[i] = v[i] * scale * weight[i];
}
