// SwiGLU, the residual add (ops_elementwise.cpp) and a MatMul's bias (ops_matmul.cpp addBias).
// Rows of n floats at `stride` apart.
// Grid: x = ceil(n / 256), y = rows. Workgroup 256.
#include "zk_math.h"

ZK_KERNEL(256) void swiglu(__global const float* gate, __global const float* up, __global float* out, int n,
                           int stride) {
    const int i = ZK_GROUP_X() * 256 + ZK_LID();
    if (i >= n) return;
    const long at = (long)ZK_GROUP_Y() * stride + i;
    const float g = gate[at];
    out[at] = g / (1.0f + zk_expf(-g)) * up[at];
}

ZK_KERNEL(256) void add(__global const float* a, __global const float* b, __global float* out, int n, int stride) {
    const int i = ZK_GROUP_X() * 256 + ZK_LID();
    if (i >= n) return;
    const long at = (long)ZK_GROUP_Y() * stride + i;
    out[at] = a[at] + b[at];
}

// x[row][i] += bias[i]: qwen2's q/k/v biases, after the matvec, in place.
ZK_KERNEL(256) void add_bias(__global float* x, __global const float* bias, int n, int stride) {
    const int i = ZK_GROUP_X() * 256 + ZK_LID();
    if (i >= n) return;
    const long at = (long)ZK_GROUP_Y() * stride + i;
    x[at] = x[at] + bias[i];
}
