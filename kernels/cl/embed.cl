// Embed: out[t] = row tokens[t] of the embedding table, dequantized (dequantize.cpp), times
// scale (gemma3's sqrt(d); 1 elsewhere).
// Grid: x = ceil(cols / 256) groups, y = tokens. Workgroup 256.
#include "zk_quant.h"

#define ZK_EMBED_KERNEL(NAME, DEQ)                                                                   \
    ZK_KERNEL(256) void NAME(__global const uchar* table, __global const int* tokens, __global float* out, \
                             ulong rowBytes, int cols, int outStride, float scale) {                \
        const int t = ZK_GROUP_Y();                                                                  \
        const int e = ZK_GROUP_X() * 256 + ZK_LID();                                                 \
        if (e >= cols) return;                                                                       \
        ZkBytes row = table + (ulong)tokens[t] * rowBytes;                                           \
        const float v = DEQ(row, e);                                                                 \
        out[(long)t * outStride + e] = scale != 1.0f ? v * scale : v;                                \
    }

static inline float zk_deq_f32(ZkBytes row, int e) { return ((__global const float*)row)[e]; }
static inline float zk_deq_f16(ZkBytes row, int e) { return zk_h2f(((__global const ushort*)row)[e]); }

ZK_EMBED_KERNEL(embed_f32, zk_deq_f32)
ZK_EMBED_KERNEL(embed_f16, zk_deq_f16)
ZK_EMBED_KERNEL(embed_q8_0, zk_deq_q8_0)
ZK_EMBED_KERNEL(embed_q4_k, zk_deq_q4_k)
ZK_EMBED_KERNEL(embed_q5_k, zk_deq_q5_k)
ZK_EMBED_KERNEL(embed_q6_k, zk_deq_q6_k)
