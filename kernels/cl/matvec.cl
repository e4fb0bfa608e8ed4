// Matrix times activation row, as the cpu tier's generic kernels (quant_generic.cpp) compute
// it in ggml precision: quantized weights against the 8-bit activation blocks of
// quantize.cl with the same integer math per block, and the per-block float values summed
// in block order, so a row's result is bit-identical to matVec with the generic kernels.
// F32 / F16 keep its eight float lanes: lane l sums elements 8m + l, then
// ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), then the tail in order.
//
// Workgroup 256 = 32 rows x 8 lanes. matvec_T grid: x = ceil(rows / 32), y = tokens; with
// accumulate set it adds each row into y (y + s: the residual add of graph::fuse's MatMulAdd,
// the cpu tier's Add after the MatMul, bit for bit).
// matvec_T_expert reads the expert from memory (the router's output): grid z = slot k, and
// expert e = ids[t * idsStride + k] selects weights w + e * expertBytes; activations at
// act + t * actStride + k * actSlotStride bytes, results at y + t * yStride + k * ySlotStride.
// matvec_T_conv is graph::fuse's MatMulConv: row r of the product is channel r of the hybrids'
// causal conv1d (zk_conv_step, ssm_conv's arithmetic), so only silu(conv) is written, at
// out + t * outStride, and the window moves. Each token y is a decode row: the one row of a
// one-token step (slot 0's window, cleared at position 0), or with `rowsBlock` a row in a
// sequence slot of its own (that slot's window: kernels/cl/deltanet.cl).
// matvec_T_gate_up is graph::fuse's GateUpSwiGlu: gate rows w and up rows `up` of one type and
// shape; a workgroup's first 16 rows of lanes sum 16 gate rows, the other 16 the same up rows
// (each row as matvec_T sums it), and y gets zk_swiglu(gate, up), the swiglu kernel's
// expression. Grid x = ceil(rows / 16): as many workgroups as the two matvecs apart.
// matvec_T_expert_gate_up: the same for the experts' gate and up (grid z = slot, as _expert).
#include "zk_quant.h"

#define ZK_MV_LANES 8
#define ZK_MV_WG 256  // work-items: ZK_MV_ROWS rows of ZK_MV_LANES lanes
#define ZK_MV_ROWS 32  // kernels::kMatVecShape.perGroupX

// Quantized rows: lanes take the next 8 blocks, lane 0 adds their values in order. On amdgcn
// the activation row is first copied into LDS by the whole workgroup when it fits
// (ZK_MV_ACT_LDS bytes: Q8_K rows of k <= 14336), so the 32 rows of a workgroup read it from
// global memory once instead of once per row; the arithmetic is the same either way.
#define ZK_MV_ACT_LDS 16384
#define ZK_MATVEC_QUANT_LOOP(DOT, WBYTES, ABYTES, ACT)                                               \
    for (int b0 = 0; b0 < nb; b0 += ZK_MV_LANES) {                                                   \
        const int b = b0 + lane;                                                                     \
        vals[lid] = (live && b < nb) ? DOT(wrow + (ulong)b * WBYTES, (ACT) + (ulong)b * ABYTES) : 0.0f; \
        zk_barrier();                                                                                \
        if (lane == 0)                                                                               \
            for (int j = 0; j < ZK_MV_LANES && b0 + j < nb; ++j) s += vals[lid + j];                 \
        zk_barrier();                                                                                \
    }
#if ZK_MV_STAGE_ACT
#define ZK_MATVEC_STAGED(DOT, WBYTES, ABYTES)                                                        \
    const int halves = nb * (ABYTES / 2);                                                            \
    if (halves * 2 <= ZK_MV_ACT_LDS) {                                                               \
        for (int i = lid; i < halves; i += ZK_MV_WG) actLds[i] = ((__global const ushort*)act)[i];         \
        zk_barrier();                                                                                \
        ZK_MATVEC_QUANT_LOOP(DOT, WBYTES, ABYTES, (__local const uchar*)actLds)                      \
    } else
#else
#define ZK_MATVEC_STAGED(DOT, WBYTES, ABYTES)
#endif
// A row's sum (lane 0's; the other lanes return 0). The caller picks the row (`row` in `w`,
// `live` when it exists): every thread of the workgroup calls, for the barriers.
#define ZK_MATVEC_QUANT_ROWS(NAME, DOT, QK, WBYTES, ABYTES)                                          \
    static inline float NAME(ZkBytes w, ZkBytes act, ulong rowBytes, int k, int row, int live,       \
                             __local float* vals, __local ushort* actLds) {                          \
        const int lid = ZK_LID(), lane = lid & 7;                                                    \
        ZkBytes wrow = w + (ulong)(live ? row : 0) * rowBytes;                                       \
        const int nb = k / QK;                                                                       \
        float s = 0.0f;                                                                              \
        ZK_MATVEC_STAGED(DOT, WBYTES, ABYTES) {                                                      \
            ZK_MATVEC_QUANT_LOOP(DOT, WBYTES, ABYTES, act)                                           \
        }                                                                                            \
        return s;                                                                                    \
    }

ZK_MATVEC_QUANT_ROWS(zk_rows_q8_0, zk_dot_q8_0, 32, ZK_Q8_0_BYTES, ZK_Q8_0_BYTES)
ZK_MATVEC_QUANT_ROWS(zk_rows_q4_k, zk_dot_q4_k, 256, ZK_Q4_K_BYTES, ZK_Q8_K_BYTES)
ZK_MATVEC_QUANT_ROWS(zk_rows_q5_k, zk_dot_q5_k, 256, ZK_Q5_K_BYTES, ZK_Q8_K_BYTES)
ZK_MATVEC_QUANT_ROWS(zk_rows_q6_k, zk_dot_q6_k, 256, ZK_Q6_K_BYTES, ZK_Q8_K_BYTES)

static inline float zk_elem_f32(ZkAnyBytes p, int i) { return ((const ZK_ANY_AS float*)p)[i]; }
static inline float zk_elem_f16(ZkAnyBytes p, int i) { return zk_h2f(((const ZK_ANY_AS ushort*)p)[i]); }

// Float rows: eight lanes as quant_generic.cpp's Lanes8. The activation row (k elements of
// EBYTES) is staged in LDS like the quantized one when it fits.
#define ZK_MATVEC_FLOAT_BODY(ELEM, ACT)                                                              \
    if (live)                                                                                        \
        for (int i = lane; i < k8; i += ZK_MV_LANES) acc += ELEM(wrow, i) * ELEM(ACT, i);            \
    vals[lid] = acc;                                                                                 \
    zk_barrier();                                                                                    \
    if (lane == 0 && live) {                                                                         \
        __local const float* v = vals + lid;                                                         \
        s = ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));                       \
        for (int i = k8; i < k; ++i) s += ELEM(wrow, i) * ELEM(ACT, i);                              \
    }
#if ZK_MV_STAGE_ACT
#define ZK_MATVEC_FLOAT_STAGED(ELEM, EBYTES)                                                         \
    const int halves = k * (EBYTES / 2);                                                             \
    if (halves * 2 <= ZK_MV_ACT_LDS) {                                                               \
        for (int i = lid; i < halves; i += ZK_MV_WG) actLds[i] = ((__global const ushort*)act)[i];   \
        zk_barrier();                                                                                \
        ZK_MATVEC_FLOAT_BODY(ELEM, (__local const uchar*)actLds)                                     \
    } else
#else
#define ZK_MATVEC_FLOAT_STAGED(ELEM, EBYTES)
#endif
#define ZK_MATVEC_FLOAT_ROWS(NAME, ELEM, EBYTES)                                                     \
    static inline float NAME(ZkBytes w, ZkBytes act, ulong rowBytes, int k, int row, int live,       \
                             __local float* vals, __local ushort* actLds) {                          \
        const int lid = ZK_LID(), lane = lid & 7;                                                    \
        ZkBytes wrow = w + (ulong)(live ? row : 0) * rowBytes;                                       \
        const int k8 = k & ~7;                                                                       \
        float acc = 0.0f, s = 0.0f;                                                                  \
        ZK_MATVEC_FLOAT_STAGED(ELEM, EBYTES) {                                                       \
            ZK_MATVEC_FLOAT_BODY(ELEM, act)                                                          \
        }                                                                                            \
        return s;                                                                                    \
    }

ZK_MATVEC_FLOAT_ROWS(zk_rows_f32, zk_elem_f32, 4)
ZK_MATVEC_FLOAT_ROWS(zk_rows_f16, zk_elem_f16, 2)

// The thread's row in a matvec workgroup: ZK_MV_ROWS rows of ZK_MV_LANES lanes.
#define ZK_MV_ROW() (ZK_GROUP_X() * ZK_MV_ROWS + (ZK_LID() >> 3))
#define ZK_MV_SUMS(T, W, ACT, ROW, LIVE)                                                             \
    __local float vals[ZK_MV_WG];                                                                    \
    __local ushort actLds[ZK_MV_ACT_LDS_OF_##T / 2];                                                 \
    const int sumLane = (ZK_LID() & 7) == 0;                                                         \
    const float s = zk_rows_##T(W, ACT, rowBytes, k, ROW, LIVE, vals, actLds);

// Gate rows W and up rows UP: the first 16 rows of lanes sum 16 gate rows, the other 16 the same
// up rows, and Y gets their SwiGLU.
#define ZK_MV_GATE_UP(T, W, UP, ACT, Y)                                                              \
    __local float upSums[ZK_MV_ROWS / 2];                                                            \
    const int pair = (ZK_LID() >> 3) & (ZK_MV_ROWS / 2 - 1), isUp = (ZK_LID() >> 3) >= ZK_MV_ROWS / 2; \
    const int row = ZK_GROUP_X() * (ZK_MV_ROWS / 2) + pair, live = row < rows;                       \
    ZK_MV_SUMS(T, isUp ? (UP) : (W), ACT, row, live)                                                 \
    if (sumLane && isUp) upSums[pair] = s;                                                           \
    zk_barrier();                                                                                    \
    if (sumLane && !isUp && live) (Y)[row] = zk_swiglu(s, upSums[pair]);

#define ZK_MATVEC_KERNELS(T)                                                                         \
    ZK_KERNEL(256) void matvec_##T(__global const uchar* w, __global const uchar* act, __global float* y, \
                                  ulong rowBytes, ulong actStride, int k, int rows, int yStride,     \
                                  int accumulate) {                                                  \
        const int t = ZK_GROUP_Y(), row = ZK_MV_ROW(), live = row < rows;                            \
        ZK_MV_SUMS(T, w, act + (ulong)t * actStride, row, live)                                      \
        __global float* yt = y + (long)t * yStride;                                                  \
        if (sumLane && live) yt[row] = accumulate ? yt[row] + s : s;                                 \
    }                                                                                                \
    ZK_KERNEL(256) void matvec_##T##_expert(__global const uchar* w, __global const uchar* act, __global float* y, \
                                           __global const int* ids, ulong rowBytes, ulong actStride, \
                                           ulong actSlotStride, ulong expertBytes, int k, int rows,  \
                                           int yStride, int ySlotStride, int idsStride) {            \
        const int t = ZK_GROUP_Y(), slot = ZK_GROUP_Z(), row = ZK_MV_ROW(), live = row < rows;       \
        const int e = ids[(long)t * idsStride + slot];                                               \
        ZK_MV_SUMS(T, w + (ulong)e * expertBytes, act + (ulong)t * actStride + (ulong)slot * actSlotStride, row, live) \
        if (sumLane && live) y[(long)t * yStride + (long)slot * ySlotStride + row] = s;              \
    }                                                                                                \
    ZK_KERNEL(256) void matvec_##T##_conv(__global const uchar* w, __global const uchar* act, ulong rowBytes, \
                                         ulong actStride, int k, int rows, __global float* window,   \
                                         __global const float* convW, __global float* out,           \
                                         __global const int* state, int taps, int outStride,         \
                                         __global const int* rowsBlock, int slotFloats, int kvRows) { \
        const int t = ZK_GROUP_Y(), row = ZK_MV_ROW(), live = row < rows;                            \
        ZK_MV_SUMS(T, w, act + (ulong)t * actStride, row, live)                                      \
        if (sumLane && live) {                                                                       \
            __global float* win = rowsBlock ? window + (long)(rowsBlock[2 * t + 1] / kvRows) * slotFloats : window; \
            const int clear = rowsBlock ? rowsBlock[2 * t] == 0 : state[0] == 0;                     \
            out[(long)t * outStride + row] = zk_conv_step(win, convW + (long)row * taps, rows, row, taps, s, clear); \
        }                                                                                            \
    }                                                                                                \
    ZK_KERNEL(256) void matvec_##T##_gate_up(__global const uchar* w, __global const uchar* up,       \
                                            __global const uchar* act, __global float* y, ulong rowBytes, \
                                            ulong actStride, int k, int rows, int yStride) {         \
        const int t = ZK_GROUP_Y();                                                                  \
        ZK_MV_GATE_UP(T, w, up, act + (ulong)t * actStride, y + (long)t * yStride)                   \
    }                                                                                                \
    ZK_KERNEL(256) void matvec_##T##_expert_gate_up(__global const uchar* w, __global const uchar* up, \
                                                   __global const uchar* act, __global float* y,     \
                                                   __global const int* ids, ulong rowBytes, ulong actStride, \
                                                   ulong actSlotStride, ulong expertBytes, int k, int rows, \
                                                   int yStride, int ySlotStride, int idsStride) {    \
        const int t = ZK_GROUP_Y(), slot = ZK_GROUP_Z();                                             \
        const ulong e = (ulong)ids[(long)t * idsStride + slot] * expertBytes;                        \
        ZK_MV_GATE_UP(T, w + e, up + e, act + (ulong)t * actStride + (ulong)slot * actSlotStride,    \
                      y + (long)t * yStride + (long)slot * ySlotStride)                              \
    }

// LDS for the staged activation row.
#define ZK_MV_ACT_LDS_OF_f32 ZK_MV_ACT_LDS
#define ZK_MV_ACT_LDS_OF_f16 ZK_MV_ACT_LDS
#define ZK_MV_ACT_LDS_OF_q8_0 ZK_MV_ACT_LDS
#define ZK_MV_ACT_LDS_OF_q4_k ZK_MV_ACT_LDS
#define ZK_MV_ACT_LDS_OF_q5_k ZK_MV_ACT_LDS
#define ZK_MV_ACT_LDS_OF_q6_k ZK_MV_ACT_LDS

ZK_MATVEC_KERNELS(f32)
ZK_MATVEC_KERNELS(f16)
ZK_MATVEC_KERNELS(q8_0)
ZK_MATVEC_KERNELS(q4_k)
ZK_MATVEC_KERNELS(q5_k)
ZK_MATVEC_KERNELS(q6_k)
