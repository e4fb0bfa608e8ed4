#version 450
// y[t][r] = weight row r · activation row t for quantized weights (spec constant TYPE): the
// matvec's second variant (ZINC_VK_MATVEC=v2), for one token and for tiles of up to NT tokens.
//
// A workgroup of TK x TR threads handles TR * R rows: thread (kk, rg) multiplies rows
// rg * R .. rg * R + R - 1 over the units kk, kk + TK, ... of k. The NT tokens' activation
// units are staged in shared memory C units at a time, loaded once per workgroup with
// coalesced loads (matvec.comp reads them per thread from global memory for its 1..4 rows, so a
// tile of 8 tokens re-reads them once per 1..4 rows). Each weight unit is decoded once into
// registers for the R rows (2R with PAIR) and used by every token of the tile.
// Per (row, token) the arithmetic is the same whatever NT and nTok: thread kk accumulates its
// units in k order, then the TK partial sums are added in one fixed order (a subgroup sum where
// the subgroup is exactly the TK threads of a row group, else lane 0 adds them in lane order):
// a row of a batched step gets the bits it gets alone.
// VEC: the weight rows are 16-byte aligned: Q4_K's quants are read 16 bytes a load.
// PAIR: gate and up over the same activations, written as silu(gate · x) * (up · x).
#extension GL_GOOGLE_include_directive : require
#include "dot4.glsl"
#include "common.glsl"
#include "weights.glsl"
#extension GL_EXT_buffer_reference_uvec2 : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint TYPE = 12u;
layout(constant_id = 2) const uint NT = 1u;
layout(constant_id = 3) const uint R = 2u;
layout(constant_id = 4) const uint PAIR = 0u;
layout(constant_id = 5) const uint TK = 32u;   // threads along k per row group
layout(constant_id = 6) const uint C = 32u;    // units staged per pass (a multiple of TK)
layout(constant_id = 7) const uint VEC = 0u;
const uint RR = R * (PAIR != 0u ? 2u : 1u);

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer U128Buf { uvec4 v[]; };

layout(push_constant) uniform PC {
    U16Buf w;
    UintBuf w32;
    UintBuf act;
    FloatBuf out_;
    IntBuf ids;
    U16Buf w2;
    UintBuf w2_32;
    uint k;
    uint m;
    uint rowBytes;
    uint actStride;
    uint outStride;
    uint nTok;
    uint sliceBytes;
    uint expertMode;
    uint actDiv;
    uint accumulate;
    uint groupsX;
} pc;

#include "unit_decode.glsl"

const bool kNeedsSums = kOffset != 0 || kHalfMins;
const uint CP = C + 1u;  // padded row of shQ: staging stores hit distinct banks
shared uint shQ[NT * 8u * CP];  // [token][word i of the unit][unit]: lanes read consecutive words
shared float shD[NT * C];
shared float shS[kHasMin ? NT * C : 1u];
shared int shLo[kNeedsSums ? NT * C : 1u], shHi[kNeedsSums ? NT * C : 1u];
shared float red[gl_WorkGroupSize.x];

// Q4_K unit u of `row` with the 32 quant bytes read as two 16-byte loads (VEC).
void decodeQ4KVec(UintBuf w32, U128Buf w128, uint row, uint u, out uint wq[8], out float fa, out float fb, out float fm) {
    const uint b = u / 8u, j = u % 8u;
    const uint blk = (row + b * 144u) / 4u;
    const vec2 dm = unpackHalf2x16(w32.v[blk]);
    const uint s0 = w32.v[blk + 1u], s1 = w32.v[blk + 2u], s2 = w32.v[blk + 3u];
    uint sc, mn;
    if (j < 4u) {
        sc = byteOf(s0, j) & 63u;
        mn = byteOf(s1, j) & 63u;
    } else {
        sc = (byteOf(s2, j - 4u) & 0xFu) | ((byteOf(s0, j - 4u) >> 6) << 4);
        mn = (byteOf(s2, j - 4u) >> 4) | ((byteOf(s1, j - 4u) >> 6) << 4);
    }
    const uint q = (row + b * 144u + 16u + 32u * (j / 2u)) / 16u;
    const uvec4 lo = w128.v[q], hi = w128.v[q + 1u];
    const uint shift = 4u * (j & 1u);
    for (uint i = 0u; i < 4u; ++i) {
        wq[i] = (lo[i] >> shift) & 0x0F0F0F0Fu;
        wq[i + 4u] = (hi[i] >> shift) & 0x0F0F0F0Fu;
    }
    fa = fb = dm.x * float(sc);
    fm = -dm.y * float(mn);
}

void stage(uint c0, uint cu, uint actRow0, uint nt) {
    const uint wg = gl_WorkGroupSize.x, tid = gl_LocalInvocationID.x;
    const uint nBlocks = pc.k / 32u;
    for (uint idx = tid; idx < nt * cu * 8u; idx += wg) {
        const uint t = idx / (cu * 8u), g = idx % (cu * 8u);
        shQ[(t * 8u + g % 8u) * CP + g / 8u] = pc.act.v[(actRow0 + t) * pc.actStride + 8u * c0 + g];
    }
    for (uint idx = tid; idx < nt * cu; idx += wg) {
        const uint t = idx / cu, j = idx % cu, a0 = (actRow0 + t) * pc.actStride + pc.k / 4u + c0 + j;
        shD[t * C + j] = uintBitsToFloat(pc.act.v[a0]);
        if (kHasMin) shS[t * C + j] = uintBitsToFloat(pc.act.v[a0 + nBlocks]);
    }
    if (kNeedsSums) {  // the activation sums of each half unit, once per (token, unit)
        barrier();
        for (uint idx = tid; idx < nt * cu; idx += wg) {
            const uint t = idx / cu, j = idx % cu;
            int lo = 0, hi = 0;
            for (uint i = 0u; i < 4u; ++i) {
                lo += sdot4(shQ[(t * 8u + i) * CP + j], 0x01010101u);
                hi += sdot4(shQ[(t * 8u + i + 4u) * CP + j], 0x01010101u);
            }
            shLo[t * C + j] = lo;
            shHi[t * C + j] = hi;
        }
    }
}

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint kk = tid % TK, rg = tid / TK;
    const uint groupRow0 = (gl_WorkGroupID.x + gl_WorkGroupID.y * pc.groupsX) * (gl_WorkGroupSize.x / TK) * R;
    if (groupRow0 >= pc.m) return;  // whole workgroup leaves together
    const uint row0 = groupRow0 + rg * R;
    uint wBase = 0u, actRow0, outRow0, nt;
    if (pc.expertMode != 0u) {
        const uint slot = gl_WorkGroupID.z;
        wBase = uint(pc.ids.v[slot]) * pc.sliceBytes;
        actRow0 = slot / pc.actDiv;
        outRow0 = slot;
        nt = 1u;
    } else {
        actRow0 = outRow0 = gl_WorkGroupID.z * NT;
        nt = min(NT, pc.nTok - actRow0);
    }
    float acc[RR * NT];
    for (uint i = 0u; i < RR * NT; ++i) acc[i] = 0.0;
    const uint nUnits = pc.k / 32u;
    for (uint c0 = 0u; c0 < nUnits; c0 += C) {
        const uint cu = min(C, nUnits - c0);
        barrier();  // the previous pass is done with the shared activations
        stage(c0, cu, actRow0, nt);
        barrier();
        for (uint j = kk; j < cu; j += TK) {
            const uint u = c0 + j;
            uint wq[RR * 8u];
            float fa[RR], fb[RR], fm[RR];
            for (uint r = 0u; r < RR; ++r) {
                // A missing last row decodes the one before; its result is not written.
                const uint row = wBase + min(row0 + r % R, pc.m - 1u) * pc.rowBytes;
                uint q[8];
                if (VEC != 0u && TYPE == kQ4_K) decodeQ4KVec(r >= R ? pc.w2_32 : pc.w32, U128Buf(uvec2(r >= R ? pc.w2_32 : pc.w32)), row, u, q, fa[r], fb[r], fm[r]);
                else decodeUnit(r >= R ? pc.w2 : pc.w, r >= R ? pc.w2_32 : pc.w32, row, u, q, fa[r], fb[r], fm[r]);
                for (uint i = 0u; i < 8u; ++i) wq[r * 8u + i] = q[i];
            }
            for (uint t = 0u; t < NT; ++t) {
                if (t >= nt) break;
                uint a[8];
                for (uint i = 0u; i < 8u; ++i) a[i] = shQ[(t * 8u + i) * CP + j];
                const float da = shD[t * C + j];
                const float sa = kHasMin ? shS[t * C + j] : 0.0;
                const int slo = kNeedsSums ? shLo[t * C + j] : 0, shi = kNeedsSums ? shHi[t * C + j] : 0;
                for (uint r = 0u; r < RR; ++r) {
                    int dlo = 0, dhi = 0;
                    for (uint i = 0u; i < 4u; ++i) {
                        if (kSignedQuants) {
                            dlo += sdot4(a[i], wq[r * 8u + i]);
                            dhi += sdot4(a[i + 4u], wq[r * 8u + i + 4u]);
                        } else {
                            dlo += sudot4(a[i], wq[r * 8u + i]);
                            dhi += sudot4(a[i + 4u], wq[r * 8u + i + 4u]);
                        }
                    }
                    float v = da * (fa[r] * float(dlo - kOffset * slo) + fb[r] * float(dhi - kOffset * shi));
                    if (kHasMin) v += fm[r] * sa;
                    if (kHalfMins) {
                        float mlo, mhi;
                        decodeMinsQ2K(r >= R ? pc.w2 : pc.w, wBase + min(row0 + r % R, pc.m - 1u) * pc.rowBytes, u, mlo, mhi);
                        v += da * (mlo * float(slo) + mhi * float(shi));
                    }
                    acc[r * NT + t] += v;
                }
            }
        }
    }
    // The TK partial sums of each (row, token), added in one order; lane kk == 0 keeps them.
    const bool bySubgroup = gl_SubgroupSize == TK;
    for (uint i = 0u; i < RR * NT; ++i) {
        if (bySubgroup) {
            acc[i] = subgroupAdd(acc[i]);
        } else {
            barrier();
            red[tid] = acc[i];
            barrier();
            if (kk == 0u) {
                float s = 0.0;
                for (uint l = 0u; l < TK; ++l) s += red[rg * TK + l];
                acc[i] = s;
            }
        }
    }
    if (kk != 0u) return;
    for (uint r = 0u; r < R; ++r) {
        const uint row = row0 + r;
        for (uint t = 0u; t < NT; ++t) {
            if (t >= nt || row >= pc.m) break;
            float s = acc[r * NT + t];
            if (PAIR != 0u) {
                const float up = acc[(r + R) * NT + t];
                s = s / (1.0 + exp(-s)) * up;
            }
            const uint o = (outRow0 + t) * pc.outStride + row;
            pc.out_.v[o] = pc.accumulate != 0u ? pc.out_.v[o] + s : s;
        }
    }
}
