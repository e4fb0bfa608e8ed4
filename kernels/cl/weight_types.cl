// Embed and matvec kernels of the weight types in zk_quant_more.h (same macros, grids and
// numerics as embed.cl / matvec.cl), and the two activation formats they add:
//   quantize_q8_1  blocks of 32 as quantize_q8_0, plus s = fp16(d * sum(q)) (d before rounding)
//   quantize_bf16  round to nearest even bfloat16 (NaN kept quiet), as fp32ToBf16
#include "zk_quant_more.h"

ZK_EMBED_KERNEL(embed_bf16, zk_deq_bf16)
ZK_EMBED_KERNEL(embed_q4_0, zk_deq_q4_0)
ZK_EMBED_KERNEL(embed_q4_1, zk_deq_q4_1)
ZK_EMBED_KERNEL(embed_q5_0, zk_deq_q5_0)
ZK_EMBED_KERNEL(embed_q5_1, zk_deq_q5_1)
ZK_EMBED_KERNEL(embed_q2_k, zk_deq_q2_k)
ZK_EMBED_KERNEL(embed_q3_k, zk_deq_q3_k)
ZK_EMBED_KERNEL(embed_iq4_nl, zk_deq_iq4_nl)
ZK_EMBED_KERNEL(embed_iq4_xs, zk_deq_iq4_xs)

ZK_MATVEC_QUANT_ROWS(zk_rows_q4_0, zk_dot_q4_0, 32, ZK_Q4_0_BYTES, ZK_Q8_0_BYTES)
ZK_MATVEC_QUANT_ROWS(zk_rows_q4_1, zk_dot_q4_1, 32, ZK_Q4_1_BYTES, ZK_Q8_1_BYTES)
ZK_MATVEC_QUANT_ROWS(zk_rows_q5_0, zk_dot_q5_0, 32, ZK_Q5_0_BYTES, ZK_Q8_0_BYTES)
ZK_MATVEC_QUANT_ROWS(zk_rows_q5_1, zk_dot_q5_1, 32, ZK_Q5_1_BYTES, ZK_Q8_1_BYTES)
ZK_MATVEC_QUANT_ROWS(zk_rows_iq4_nl, zk_dot_iq4_nl, 32, ZK_IQ4_NL_BYTES, ZK_Q8_0_BYTES)
ZK_MATVEC_QUANT_ROWS(zk_rows_q2_k, zk_dot_q2_k, 256, ZK_Q2_K_BYTES, ZK_Q8_K_BYTES)
ZK_MATVEC_QUANT_ROWS(zk_rows_q3_k, zk_dot_q3_k, 256, ZK_Q3_K_BYTES, ZK_Q8_K_BYTES)
ZK_MATVEC_QUANT_ROWS(zk_rows_iq4_xs, zk_dot_iq4_xs, 256, ZK_IQ4_XS_BYTES, ZK_Q8_K_BYTES)

static inline float zk_elem_bf16(ZkAnyBytes p, int i) { return as_float(zk_ld16(p + 2 * i) << 16); }
ZK_MATVEC_FLOAT_ROWS(zk_rows_bf16, zk_elem_bf16, 2)

#define ZK_MV_ACT_LDS_OF_bf16 ZK_MV_ACT_LDS
#define ZK_MV_ACT_LDS_OF_q4_0 ZK_MV_ACT_LDS
#define ZK_MV_ACT_LDS_OF_q4_1 ZK_MV_ACT_LDS
#define ZK_MV_ACT_LDS_OF_q5_0 ZK_MV_ACT_LDS
#define ZK_MV_ACT_LDS_OF_q5_1 ZK_MV_ACT_LDS
#define ZK_MV_ACT_LDS_OF_iq4_nl ZK_MV_ACT_LDS
#define ZK_MV_ACT_LDS_OF_q2_k ZK_MV_ACT_LDS
#define ZK_MV_ACT_LDS_OF_q3_k ZK_MV_ACT_LDS
#define ZK_MV_ACT_LDS_OF_iq4_xs ZK_MV_ACT_LDS

ZK_MATVEC_KERNELS(bf16)
ZK_MATVEC_KERNELS(q4_0)
ZK_MATVEC_KERNELS(q4_1)
ZK_MATVEC_KERNELS(q5_0)
ZK_MATVEC_KERNELS(q5_1)
ZK_MATVEC_KERNELS(iq4_nl)
ZK_MATVEC_KERNELS(q2_k)
ZK_MATVEC_KERNELS(q3_k)
ZK_MATVEC_KERNELS(iq4_xs)

// Grid: x = ceil(n / 256) (8 blocks per group), y = rows. Workgroup 256, one thread per value.
ZK_KERNEL(256) void quantize_q8_1(ZK_QUANT_PARAMS) {
    __local float amax[256];
    __local int sums[256];
    const int lid = ZK_LID(), t = ZK_GROUP_Y();
    const int e = ZK_GROUP_X() * 256 + lid;
    ZK_QUANT_SCALE(t, ZK_GROUP_X() * 256, scale)
    const float v = e < n ? ZK_QUANT_VALUE(t, e, scale) : 0.0f;
    zk_barrier();  // every value of the workgroup read before any is written (in place)
    if (e < n && ZK_QUANT_WRITES_ROW) normOut[(long)t * normOutStride + e] = v;
    const float a = zk_block32_amax(amax, v, lid);
    const float id = a != 0.0f ? 127.0f / a : 0.0f;
    const int q = zk_clamp_i(zk_nearest_int(v * id), -128, 127);
    sums[lid] = q;
    zk_barrier();
    for (int w = 16; w > 0; w /= 2) {  // sum within each block of 32
        if ((lid & 31) < w) sums[lid] += sums[lid + w];
        zk_barrier();
    }
    if (e >= n) return;
    __global uchar* block = out + (ulong)t * outStride + (ulong)(e / 32) * ZK_Q8_1_BYTES;
    block[4 + (e & 31)] = (uchar)q;
    if ((e & 31) == 0) {
        const float d = a / 127.0f;
        *(__global ushort*)block = (ushort)zk_f2h(d);
        *(__global ushort*)(block + 2) = (ushort)zk_f2h(d * (float)sums[lid]);
    }
}

// Grid: x = ceil(n / 256), y = rows. Workgroup 256. outStride in halves.
ZK_KERNEL(256) void quantize_bf16(__global const float* in, __global ushort* out, int n, int inStride,
                                  int outStride) {
    const int e = ZK_GROUP_X() * 256 + ZK_LID(), t = ZK_GROUP_Y();
    if (e >= n) return;
    const uint x = as_uint(in[(long)t * inStride + e]);
    const uint r = (x & 0x7fffffffu) > 0x7f800000u ? ((x >> 16) | 64u) : ((x + (0x7fffu + ((x >> 16) & 1u))) >> 16);
    out[(long)t * outStride + e] = (ushort)r;
}
