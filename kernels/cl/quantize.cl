// Activation rows -> the formats quantized weights multiply against, bit-exact with
// model/quant/quantize_activations.cpp (ggml's x86 CPU backend):
//   quantize_q8_0  blocks of 32: d = amax / 127, q = round_half_even(x * (127 / amax))
//   quantize_q8_k  blocks of 256: iscale = -127 / (signed element of largest magnitude, the
//                  first one on ties), q = min(127, nearest_int(iscale * x)), d = 1 / iscale
//   quantize_f16   round to nearest even halves
// Rows: x + t * inStride floats -> out + t * outStride bytes. Grid y = rows. The 8-bit ones
// also compute the op that made their row on the way in (graph::fuse's fusions into a
// quantization; ZK_QUANT_PARAMS), and write its F32 row to normOut as that op writes it:
//   up                 swiglu(in, up) (SwiGluQuantize; nothing written)
//   normWeight         rms_norm: in * scale * normWeight, the scale from the row's sum of
//                      squares with rms_norm's tree of 256 threads, summed again by every
//                      workgroup (NormQuantize; normOut must not be `in`: another workgroup may
//                      still be reading it)
//   normWeight, gate   gated_norm: in * scale_h * normWeight[i] * silu(gate), heads of headDim
//                      values (a power of two <= 128 dividing 256, so a workgroup holds whole
//                      heads), each head's sum with gated_norm's tree (GatedNormQuantize)
//   gate               sigmoid_gate: in * sigmoid(gate), gate per element or, with
//                      gatePerToken, one a row (SigmoidGateQuantize)
// The same expressions as the kernels apart, so the same bits; the gated ops may write in place
// (normOut == in): a workgroup reads only its own elements, all before its barrier.
// Uses ZK_SUM_SQUARES and zk_rms_scale of norm.cl (zinc_kernels.cl includes it first).
#include "zk_math.h"

#define ZK_QUANT_PARAMS                                                                            \
    __global const float *in, __global uchar *out, int n, int inStride, ulong outStride, __global const float *up, \
        __global const float *normWeight, __global float *normOut, int normOutStride, float eps, __global const float *gate, \
        int gateStride, int headDim, int gatePerToken

// The scale of the workgroup's element `first + lid` of row t (0 without normWeight): the whole
// row's (rms_norm) or its head's (gated_norm). The whole workgroup.
#define ZK_QUANT_SCALE(t, first, scale)                                                            \
    __local float normHi_[256], normLo_[256];                                                      \
    float scale = 0.0f;                                                                            \
    if (normWeight && !gate) {                                                                     \
        zk_ff sum_;                                                                                \
        ZK_SUM_SQUARES(256, in + (long)(t) * inStride, n, normHi_, normLo_, sum_)                  \
        scale = zk_rms_scale(sum_, n, eps);                                                        \
    } else if (normWeight) {                                                                       \
        const int j_ = ZK_LID() & (headDim - 1), e_ = (first) + ZK_LID();                          \
        zk_ff s_ = zk_ff_make(0.0f, 0.0f);                                                         \
        if (e_ < n) {                                                                              \
            const float x_ = in[(long)(t) * inStride + e_];                                        \
            s_ = zk_ff_add(s_, zk_two_prod(x_, x_));                                               \
        }                                                                                          \
        normHi_[ZK_LID()] = s_.hi;                                                                 \
        normLo_[ZK_LID()] = s_.lo;                                                                 \
        zk_barrier();                                                                              \
        for (int w_ = headDim / 2; w_ > 0; w_ /= 2) {                                              \
            if (j_ < w_) {                                                                         \
                const zk_ff a_ = zk_ff_add(zk_ff_make(normHi_[ZK_LID()], normLo_[ZK_LID()]),       \
                                           zk_ff_make(normHi_[ZK_LID() + w_], normLo_[ZK_LID() + w_])); \
                normHi_[ZK_LID()] = a_.hi;                                                         \
                normLo_[ZK_LID()] = a_.lo;                                                         \
            }                                                                                      \
            zk_barrier();                                                                          \
        }                                                                                          \
        const int base_ = ZK_LID() - j_;                                                           \
        scale = zk_rms_scale(zk_ff_make(normHi_[base_], normLo_[base_]), headDim, eps);            \
    }

// Element e of row t to quantize (e < n), as the op apart computes it.
#define ZK_QUANT_VALUE(t, e, scale)                                                                \
    (normWeight && gate   ? in[(long)(t) * inStride + (e)] * (scale) * normWeight[(e) & (headDim - 1)] * \
                         zk_silu(gate[(long)(t) * gateStride + (e)])                               \
     : normWeight         ? in[(long)(t) * inStride + (e)] * (scale) * normWeight[e]               \
     : gate          ? in[(long)(t) * inStride + (e)] *                                            \
                         zk_sigmoid(gate[(long)(t) * gateStride + (gatePerToken ? 0 : (e))])       \
                     : zk_quant_input(in, up, (long)(t) * inStride + (e)))

// Whether the kernel writes the op's F32 row too.
#define ZK_QUANT_WRITES_ROW (normWeight || gate)

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
ZK_KERNEL(256) void quantize_q8_0(ZK_QUANT_PARAMS) {
    __local float amax[256];
    const int lid = ZK_LID(), t = ZK_GROUP_Y();
    const int e = ZK_GROUP_X() * 256 + lid;
    ZK_QUANT_SCALE(t, ZK_GROUP_X() * 256, scale)
    const float v = e < n ? ZK_QUANT_VALUE(t, e, scale) : 0.0f;
    const float a = zk_block32_amax(amax, v, lid);
    if (e >= n) return;
    if (ZK_QUANT_WRITES_ROW) normOut[(long)t * normOutStride + e] = v;
    const float id = a != 0.0f ? 127.0f / a : 0.0f;
    __global uchar* block = out + (ulong)t * outStride + (ulong)(e / 32) * 34;
    block[2 + (e & 31)] = (uchar)zk_clamp_i(zk_nearest_int(v * id), -128, 127);
    if ((e & 31) == 0) *(__global ushort*)block = (ushort)zk_f2h(a / 127.0f);
}

// Grid: x = n / 256 (one block per group), y = rows. Workgroup 256.
ZK_KERNEL(256) void quantize_q8_k(ZK_QUANT_PARAMS) {
    __local float amax[256];
    __local float values[256];  // the signed value of largest magnitude is read back from here
    __local int where[256];
    __local int sums[256];
    const int lid = ZK_LID(), t = ZK_GROUP_Y(), b = ZK_GROUP_X();
    const int valid = b * 256 < n;
    ZK_QUANT_SCALE(t, b * 256, scale)
    const float v = valid ? ZK_QUANT_VALUE(t, b * 256 + lid, scale) : 0.0f;
    values[lid] = v;
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
        const float iscale = -127.0f / values[where[0]];
        q = zk_min_i(127, zk_nearest_int(iscale * v));
        if (lid == 0 && valid) *(__global float*)block = 1.0f / iscale;
    } else if (lid == 0 && valid) {
        *(__global float*)block = 0.0f;
    }
    if (valid) block[4 + lid] = (uchar)q;
    if (valid && ZK_QUANT_WRITES_ROW) normOut[(long)t * normOutStride + b * 256 + lid] = v;
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
