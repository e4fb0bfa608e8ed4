// RMSNorm (rms_norm) and per-head RMSNorm in place (head_norm, QK-norm), as ops_norm.cpp:
// the sum of squares in float-float, scale = 1 / sqrt(mean + eps) in float, out = x * scale * w.
#include "zk_math.h"

// Sum of squares of n floats over a workgroup of WG threads, in float-float (each square exact
// by zk_two_prod, about 48 bits kept: the cpu tier sums in double); every thread gets the total.
#define ZK_SUM_SQUARES(WG, x, n, partialHi, partialLo, result)                     \
    {                                                                              \
        zk_ff s_ = zk_ff_make(0.0f, 0.0f);                                         \
        for (int i_ = ZK_LID(); i_ < (n); i_ += WG) s_ = zk_ff_add(s_, zk_two_prod((x)[i_], (x)[i_])); \
        partialHi[ZK_LID()] = s_.hi;                                               \
        partialLo[ZK_LID()] = s_.lo;                                               \
        zk_barrier();                                                              \
        for (int w_ = WG / 2; w_ > 0; w_ /= 2) {                                   \
            if (ZK_LID() < w_) {                                                   \
                const zk_ff a_ = zk_ff_add(zk_ff_make(partialHi[ZK_LID()], partialLo[ZK_LID()]), \
                                           zk_ff_make(partialHi[ZK_LID() + w_], partialLo[ZK_LID() + w_])); \
                partialHi[ZK_LID()] = a_.hi;                                       \
                partialLo[ZK_LID()] = a_.lo;                                       \
            }                                                                      \
            zk_barrier();                                                          \
        }                                                                          \
        result = zk_ff_make(partialHi[0], partialLo[0]);                           \
    }

// mean = sum / n rounded to float, as the cpu tier's (float)(sum / (double)n).
static inline float zk_rms_scale(zk_ff sum, int n, float eps) {
    const float mean = zk_ff_div(sum, (float)n);
    return 1.0f / zk_sqrtf(mean + eps);
}

// Grid: x = 1, y = tokens. Workgroup 256.
ZK_KERNEL(256) void rms_norm(__global const float* in, __global const float* weight, __global float* out, int n,
                             float eps, int inStride, int outStride) {
    __local float partialHi[256], partialLo[256];
    const int t = ZK_GROUP_Y();
    __global const float* x = in + (long)t * inStride;
    __global float* y = out + (long)t * outStride;
    zk_ff sum;
    ZK_SUM_SQUARES(256, x, n, partialHi, partialLo, sum)
    const float scale = zk_rms_scale(sum, n, eps);
    for (int i = ZK_LID(); i < n; i += 256) y[i] = x[i] * scale * weight[i];
}

// Grid: x = heads, y = tokens. Workgroup 64. x[t] holds heads * headDim floats at stride.
ZK_KERNEL(64) void head_norm(__global float* x, __global const float* weight, int heads, int headDim, float eps,
                             int stride) {
    __local float partialHi[64], partialLo[64];
    const int h = ZK_GROUP_X(), t = ZK_GROUP_Y();
    const int n = h < heads ? headDim : 0;
    __global float* v = x + (long)t * stride + (long)h * headDim;
    zk_ff sum;
    ZK_SUM_SQUARES(64, v, n, partialHi, partialLo, sum)
    const float scale = zk_rms_scale(sum, headDim, eps);
    for (int i = ZK_LID(); i < n; i += 64) v[i] = v[i] * scale * weight[i];
}
