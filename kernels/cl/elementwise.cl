// SwiGLU, the residual add (ops_elementwise.cpp) and a MatMul's bias (ops_matmul.cpp addBias).
// Rows of n floats at `stride` apart.
// Grid: x = ceil(n / 256), y = rows. Workgroup 256.
#include "zk_math.h"

ZK_KERNEL(256) void swiglu(__global const float* gate, __global const float* up, __global float* out, int n,
                           int stride) {
    const int i = ZK_GROUP_X() * 256 + ZK_LID();
    if (i >= n) return;
    const long at = (long)ZK_GROUP_Y() * stride + i;
    out[at] = zk_swiglu(gate[at], up[at]);
}

// ggml's CPU geglu (GGML_GELU_FP16): 0 at or below -10, the gate itself at or above 10, else
// gelu_tanh of the gate rounded to F16, rounded to F16; times up.
static inline float zk_gelu_tanh(float x) {
    const float y = 0.79788456080286535587989211986876f * x * (1.0f + 0.044715f * x * x);
    const float e = zk_expf(-2.0f * __builtin_fabsf(y));
    const float th = (1.0f - e) / (1.0f + e);
    return 0.5f * x * (1.0f + (y < 0.0f ? -th : th));
}

ZK_KERNEL(256) void geglu(__global const float* gate, __global const float* up, __global float* out, int n,
                          int stride) {
    const int i = ZK_GROUP_X() * 256 + ZK_LID();
    if (i >= n) return;
    const long at = (long)ZK_GROUP_Y() * stride + i;
    const float g = gate[at];
    const float a = g <= -10.0f ? 0.0f : g >= 10.0f ? g : zk_round_half(zk_gelu_tanh(zk_round_half(g)));
    out[at] = a * up[at];
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

// A step over rows of several sequences (continuous batching): the wanted rows of one buffer
// (`wanted`, increasing row indices, written with the token state) move to rows 0..count-1, so
// the ops after the layer stack run on `count` rows. Each thread copies its column of every
// wanted row in order; the k-th wanted row is row k or later, so no row is read after it was
// overwritten, and no barrier is needed. Grid: x = ceil(width / 256). Workgroup 256.
ZK_KERNEL(256) void gather_rows(__global float* x, __global const int* wanted, int width, int stride, int count) {
    const int i = ZK_GROUP_X() * 256 + ZK_LID();
    if (i >= width) return;
    for (int k = 0; k < count; ++k) {
        const int source = wanted[k];
        if (source != k) x[(long)k * stride + i] = x[(long)source * stride + i];
    }
}
