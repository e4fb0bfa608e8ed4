// Greedy sampling: out[t] = index of the largest of n logits (the first one on ties, as
// std::max_element in the sampler). Grid: x = 1, y = tokens. Workgroup 256.
#include "zk_math.h"

ZK_KERNEL(256) void argmax(__global const float* logits, __global int* out, int n, int stride) {
    __local float best[256];
    __local int where[256];
    const int lid = ZK_LID(), t = ZK_GROUP_Y();
    __global const float* x = logits + (long)t * stride;
    float b = -as_float(0x7f800000u);
    int at = -1;
    for (int i = lid; i < n; i += 256)
        if (at < 0 || x[i] > b) {
            b = x[i];
            at = i;
        }
    best[lid] = b;
    where[lid] = at;
    zk_argmax_tree(best, where, 256);
    if (lid == 0) out[t] = where[0];
}
