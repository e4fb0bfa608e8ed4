// Activation rows -> the formats quantized weights multiply against, bit-exact with
// model/quant/quantize_activations.cpp (ggml's x86 CPU backend):
//   quantize_q8_0  blocks of 32: d = amax / 127, q = round_half_even(x * (127 / amax))
//   quantize_q8_k  blocks of 256: iscale = -127 / (signed element of largest magnitude, the
//                  first one on ties), q = min(127, nearest_int(iscale * x)), d = 1 / iscale
//   quantize_f16   round to nearest even halves
// Rows: x + t * inStride floats -> out + t * outStride bytes. Grid y = rows. The 8-bit ones
// take `up` (or 0): then the row quantized is swiglu(in, up) (graph::fuse's SwiGluQuantize).
#include "zk_math.h"

// Every thread of a workgroup of 256 gets the largest |value| of its block of 32 (v: its value).
static inline float zk_block32_amax(__local float* amax, float v, int lid) {
    amax[lid] = __builtin_fabsf(v);
    zk_barrier();
    for (int w = 16; w > 0; w /= 2) {
        if ((lid & 31) < w) amax[lid] = __builtin_fmaxf(amax[lid], amax[lid + w]);
        zk_barrier();
    }
    return amax[lid & ~31];
}

// Grid: x = ceil(n / 256) (8 blocks per group), y = rows. Workgroup 256, one thread per value.
ZK_KERNEL(256) void quantize_q8_0(__global const float* in, __global uchar* out, int n, int inStride,
                                  ulong outStride, __global const float* up) {
    __local float amax[256];
    const int lid = ZK_LID(), t = ZK_GROUP_Y();
    const int e = ZK_GROUP_X() * 256 + lid;
    const float v = e < n ? zk_quant_input(in, up, (long)t * inStride + e) : 0.0f;
    const float a = zk_block32_amax(amax, v, lid);
    if (e >= n) return;
    const float id = a != 0.0f ? 127.0f / a : 0.0f;
    __global uchar* block = out + (ulong)t * outStride + (ulong)(e / 32) * 34;
    block[2 + (e & 31)] = (uchar)zk_clamp_i(zk_nearest_int(v * id), -128, 127);
    if ((e & 31) == 0) *(__global ushort*)block = (ushort)zk_f2h(a / 127.0f);
}

// Grid: x = n / 256 (one block per group), y = rows. Workgroup 256.
ZK_KERNEL(256) void quantize_q8_k(__global const float* in, __global uchar* out, int n, int inStride,
                                  ulong outStride, __global const float* up) {
    __local float amax[256];
    __local int where[256];
    __local int sums[256];
    const int lid = ZK_LID(), t = ZK_GROUP_Y(), b = ZK_GROUP_X();
    const int valid = b * 256 < n;
    const long x = (long)t * inStride + b * 256;
    const float v = valid ? zk_quant_input(in, up, x + lid) : 0.0f;
    amax[lid] = __builtin_fabsf(v);
    where[lid] = lid;
    zk_barrier();
    for (int w = 128; w > 0; w /= 2) {  // largest magnitude; the lower index on ties
        if (lid < w) {
            const float o = amax[lid + w];
            if (o > amax[lid] || (o == amax[lid] && where[lid + w] < where[lid])) {
                amax[lid] = o;
                where[lid] = where[lid + w];
            }
        }
        zk_barrier();
    }
    __global uchar* block = out + (ulong)t * outStride + (ulong)b * 292;
    const float a = amax[0];
    int q = 0;
    if (a != 0.0f) {
        const float iscale = -127.0f / zk_quant_input(in, up, x + where[0]);
        q = zk_min_i(127, zk_nearest_int(iscale * v));
        if (lid == 0 && valid) *(__global float*)block = 1.0f / iscale;
    } else if (lid == 0 && valid) {
        *(__global float*)block = 0.0f;
    }
    if (valid) block[4 + lid] = (uchar)q;
    sums[lid] = q;
    zk_barrier();
    for (int w = 8; w > 0; w /= 2) {  // sums of 16 consecutive quants
        if ((lid & 15) < w) sums[lid] += sums[lid + w];
        zk_barrier();
    }
    if (valid && (lid & 15) == 0) *(__global short*)(block + 260 + 2 * (lid / 16)) = (short)sums[lid];
}

// Grid: x = ceil(n / 256), y = rows. Workgroup 256. outStride in halves.
ZK_KERNEL(256) void quantize_f16(__global const float* in, __global ushort* out, int n, int inStride,
                                 int outStride) {
    const int e = ZK_GROUP_X() * 256 + ZK_LID(), t = ZK_GROUP_Y();
    if (e < n) out[(long)t * outStride + e] = (ushort)zk_f2h(in[(long)t * inStride + e]);
}
