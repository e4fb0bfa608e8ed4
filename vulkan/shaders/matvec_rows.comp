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
// VEC: the weight rows are 16-byte aligned: Q4_K's quants are read 16 bytes a load. STAGE 0
// (one token; a tile of 2 in matvec_rows_tiles): no staging, activations read from global memory
// beside the weights.
// PAIR: gate and up over the same activations, written as silu(gate · x) * (up · x).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "dot4.glsl"
// The loops over spec-constant counts (rows, tokens, units in flight) unroll in the dot4 build:
// NVIDIA's compiler left them rolled and kept a tile's sums in local memory (H200: 64-288 bytes
// a thread at 8 tokens; 8 sequences of Qwen3-8B 841 -> 873 tok/s, run 56). Without dot4 (4
// multiplies a product) the forced unroll makes RADV spill on gfx1100 (radv_compile_test), so
// that build leaves it to the compiler, as before.
#ifdef ZINC_DOT4
#define UNROLL [[unroll]]
#else
#define UNROLL
#endif
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
    UintBuf wait;     // ZINC_CHAIN: the site of the quantize that writes act (vulkan/plan_context.h)
    uint waitGroups;  // its workgroups: each line of the site counts to this
} pc;

#define ZINC_WORDS_BRANCH
const bool kWordsBranch = PAIR != 0u && NT > 1u;
#include "unit_decode.glsl"

const bool kNeedsSums = kOffset != 0 || kHalfMins;
// One scale for both halves of a unit (fa == fb): the 8 dot products sum as one integer.
const bool kOneScale = TYPE != kQ2_K && TYPE != kQ3_K && TYPE != kQ6_K;
layout(constant_id = 8) const uint ACT4 = 0u;  // activation rows 16-byte aligned: read 16 bytes a load
// STAGE 0: no shared staging, each thread reads its activation units from global memory with
// its weights (one token: a staging pass would put an L2 round trip and a barrier before the
// first weight load). STAGE 1: the tile's activations staged C units a pass (op_matvec.cpp's
// rowsConfig says why not double-buffered). Same values, same arithmetic: the bits do not
// change with STAGE.
layout(constant_id = 9) const uint STAGE = 1u;
// PF (STAGE 0): units of k a thread loads before it multiplies the first. One at a
// time, a thread's loop waits a memory round trip per unit: a matvec alone on an idle GPU (a
// plan's step between barriers) then takes several round trips longer than its bytes need.
layout(constant_id = 10) const uint PF = 1u;
// CONV (MatMulConv, one token, no PAIR): the DeltaNet conv's taps. Row r is conv channel r: its
// thread loads the channel's window and taps first, runs conv_step.glsl's step on the row's sum,
// writes silu(conv) instead of the sum and stores the window moved on; w2 holds the conv kernel,
// w2_32 the window.
layout(constant_id = 11) const uint CONV = 0u;
const uint SC = STAGE != 0u ? NT * C : 1u;
const uint UPT = (C + TK - 1u) / TK;  // a staged pass's units per thread
// Tokens whose activation units the prefetching path (PF > 1, STAGE 0) holds in flight: a tile's
// in matvec_rows_tiles (ZINC_TILE_PREFETCH), one token's otherwise. A module of its own: with
// the tile path's code in it, NVIDIA's compiler made the staged tiles of the same module 2x
// slower (H200, run 60), though their spec constants leave that code dead.
#ifdef ZINC_TILE_PREFETCH
const uint NA = NT;
#else
const uint NA = 1u;
#endif
shared uvec4 shQ[STAGE != 0u ? NT * 2u * C : 1u];  // [token][half unit][unit]: lanes read consecutive 16 bytes
shared float shD[SC];
shared float shS[kHasMin ? SC : 1u];
// Per (token, unit): the activation sums of each half, times kOffset where the type has one
// (Q2_K: kOffset 0, the plain sums its mins multiply).
shared int shLo[kNeedsSums ? SC : 1u], shHi[kNeedsSums ? SC : 1u];
shared float red[gl_WorkGroupSize.x];

#include "q4k_vec.glsl"
#include "conv_step.glsl"

layout(buffer_reference, std430, buffer_reference_align = 16) ZINC_MEM readonly buffer Act4Buf { uvec4 v[]; };

// ZINC_CHAIN (matvec_rows_chain; one token, STAGE 0, every thread a unit of k at least;
// vulkan/plan_context.h kChainLines): this dispatch runs with no barrier after the quantize that
// writes its activations. Each thread issues its first weight units' loads, then thread 0 polls
// a line of the quantize's site until every workgroup of it counted itself (quantize.comp
// signalDone) and acquires, and the workgroup barrier makes the activations visible to all.
#ifdef ZINC_CHAIN
#include "chain.glsl"
const bool kWait = true;
void waitSignal() { chainWait(pc.wait, (gl_WorkGroupID.x + gl_WorkGroupID.y * pc.groupsX) % kChainLines, pc.waitGroups); }
#else
const bool kWait = false;
void waitSignal() {}
#endif

// kOffset (Q2_K: 1) times the sums of each half of a unit's activation quants.
void halfSums(uvec4 lo, uvec4 hi, out int olo, out int ohi) {
    int slo = 0, shi = 0;
    UNROLL for (uint i = 0u; i < 4u; ++i) {
        slo += sdot4(lo[i], 0x01010101u);
        shi += sdot4(hi[i], 0x01010101u);
    }
    const int off = kHalfMins ? 1 : kOffset;
    olo = off * slo;
    ohi = off * shi;
}

void stage(uint c0, uint cu, uint actRow0, uint nt) {
    const uint wg = gl_WorkGroupSize.x, tid = gl_LocalInvocationID.x;
    const uint nBlocks = pc.k / 32u;
    if (ACT4 != 0u) {
        Act4Buf act4 = Act4Buf(uvec2(pc.act));
        for (uint idx = tid; idx < nt * cu * 2u; idx += wg) {
            const uint t = idx / (cu * 2u), q = idx % (cu * 2u);
            shQ[(t * 2u + q % 2u) * C + q / 2u] = act4.v[((actRow0 + t) * pc.actStride + 8u * c0) / 4u + q];
        }
    } else {
        for (uint idx = tid; idx < nt * cu * 8u; idx += wg) {
            const uint t = idx / (cu * 8u), g = idx % (cu * 8u);
            shQ[(t * 2u + (g / 4u) % 2u) * C + g / 8u][g % 4u] = pc.act.v[(actRow0 + t) * pc.actStride + 8u * c0 + g];
        }
    }
    for (uint idx = tid; idx < nt * cu; idx += wg) {
        const uint t = idx / cu, j = idx % cu, a0 = (actRow0 + t) * pc.actStride + pc.k / 4u + c0 + j;
        shD[t * C + j] = uintBitsToFloat(pc.act.v[a0]);
        if (kHasMin) shS[t * C + j] = uintBitsToFloat(pc.act.v[a0 + nBlocks]);
    }
    if (kNeedsSums) {
        barrier();
        for (uint idx = tid; idx < nt * cu; idx += wg) {
            const uint t = idx / cu, j = idx % cu;
            int olo, ohi;
            halfSums(shQ[(t * 2u) * C + j], shQ[(t * 2u + 1u) * C + j], olo, ohi);
            shLo[t * C + j] = olo;
            shHi[t * C + j] = ohi;
        }
    }
}

// Token t's activation unit u (j in the staged pass): quants, scale, sum, offset sums.
void actUnit(uint t, uint j, uint u, uint actRow0, out uvec4 alo, out uvec4 ahi, out float da, out float sa, out int olo,
             out int ohi) {
    olo = ohi = 0;
    if (STAGE != 0u) {
        alo = shQ[(t * 2u) * C + j];
        ahi = shQ[(t * 2u + 1u) * C + j];
        da = shD[t * C + j];
        sa = kHasMin ? shS[t * C + j] : 0.0;
        if (kNeedsSums) {
            olo = shLo[t * C + j];
            ohi = shHi[t * C + j];
        }
        return;
    }
    const uint a0 = (actRow0 + t) * pc.actStride;
    if (ACT4 != 0u) {
        Act4Buf act4 = Act4Buf(uvec2(pc.act));
        alo = act4.v[a0 / 4u + 2u * u];
        ahi = act4.v[a0 / 4u + 2u * u + 1u];
    } else {
        UNROLL for (uint i = 0u; i < 4u; ++i) {
            alo[i] = pc.act.v[a0 + 8u * u + i];
            ahi[i] = pc.act.v[a0 + 8u * u + 4u + i];
        }
    }
    da = uintBitsToFloat(pc.act.v[a0 + pc.k / 4u + u]);
    sa = kHasMin ? uintBitsToFloat(pc.act.v[a0 + pc.k / 4u + pc.k / 32u + u]) : 0.0;
    if (kNeedsSums) halfSums(alo, ahi, olo, ohi);
}

// Unit u of weight row set r (r >= R: the up rows of PAIR) of this thread's rows: 8 quant words
// and how to scale them (decodeUnit). A missing last row decodes the one before; its result
// is not written.
void weightUnit(uint r, uint wBase, uint row0, uint u, out uint q[8], out float fa, out float fb, out float fm) {
    const uint row = wBase + min(row0 + r % R, pc.m - 1u) * pc.rowBytes;
    if (VEC != 0u && TYPE == kQ4_K) decodeQ4KVec(U128Buf(uvec2(r >= R ? pc.w2_32 : pc.w32)), row, u, q, fa, fb, fm);
    else decodeUnit(r >= R ? pc.w2 : pc.w, r >= R ? pc.w2_32 : pc.w32, row, u, q, fa, fb, fm);
}

// v plus one row set's weight unit (quant words wlo, whi; scales fa, fb; min fm; Q2_K's mins
// mlo, mhi) times one token's activation unit. Scalars and vectors only: glslang gives each
// array sized by a specialization constant a type of its own, so no array parameter matches.
float unitSum(float v, uvec4 wlo, uvec4 whi, float fa, float fb, float fm, float mlo, float mhi, uvec4 alo, uvec4 ahi, float da,
              float sa, int olo, int ohi) {
    int dlo = 0, dhi = 0;
    UNROLL for (uint i = 0u; i < 4u; ++i) {
        dlo += sdot4(alo[i], wlo[i]);
        dhi += sdot4(ahi[i], whi[i]);
    }
    // Explicit fmas: no contraction left to the driver, which could fuse differently in the
    // 1-token and the tile pipelines.
    if (kOneScale) {
        v = fma(da * fa, float(dlo + dhi - olo - ohi), v);
    } else if (kHalfMins) {
        const float q = fma(fa, float(dlo), fma(fb, float(dhi), fma(mlo, float(olo), mhi * float(ohi))));
        v = fma(da, q, v);
    } else {
        v = fma(da, fma(fa, float(dlo - olo), fb * float(dhi - ohi)), v);
    }
    if (kHasMin) v = fma(fm, sa, v);
    return v;
}

// Q2_K's mins of row set r's unit u (0 for the other types, which have none per half).
void unitMins(uint r, uint wBase, uint row0, uint u, out float mlo, out float mhi) {
    mlo = mhi = 0.0;
    if (kHalfMins) decodeMinsQ2K(r >= R ? pc.w2 : pc.w, wBase + min(row0 + r % R, pc.m - 1u) * pc.rowBytes, u, mlo, mhi);
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
    // CONV: the rows' windows and taps, loaded before the first weight unit (off the end's path).
    ConvChannel conv[CONV != 0u ? R : 1u];
    if (CONV != 0u && kk == 0u)
        UNROLL for (uint r = 0u; r < R; ++r)
            if (row0 + r < pc.m) conv[r] = convLoad(FloatBuf(uvec2(pc.w2_32)), 0u, false, FloatBuf(uvec2(pc.w2)), row0 + r, pc.m, CONV);
    float acc[RR * NT];
    UNROLL for (uint i = 0u; i < RR * NT; ++i) acc[i] = 0.0;
    const uint nUnits = pc.k / 32u;
    for (uint c0 = 0u; c0 < nUnits; c0 += C) {
        const uint cu = min(C, nUnits - c0);
        if (STAGE == 1u) {
            // The pass's weight units are loaded before the staging and its barriers, so the
            // two memory round trips overlap. A unit past the pass reloads its last; it is
            // not added. Sums in the same order as a unit at a time.
            uint pq[UPT * RR * 8u];
            float pa[UPT * RR], pb[UPT * RR], pm[UPT * RR];
            UNROLL for (uint p = 0u; p < UPT; ++p) {
                const uint j = min(kk + p * TK, cu - 1u);
                UNROLL for (uint r = 0u; r < RR; ++r) {
                    uint q[8];
                    weightUnit(r, wBase, row0, c0 + j, q, pa[p * RR + r], pb[p * RR + r], pm[p * RR + r]);
                    UNROLL for (uint i = 0u; i < 8u; ++i) pq[(p * RR + r) * 8u + i] = q[i];
                }
            }
            barrier();  // the previous pass is done with the shared activations
            stage(c0, cu, actRow0, nt);
            barrier();
            UNROLL for (uint p = 0u; p < UPT; ++p) {
                const uint j = kk + p * TK, u = c0 + j;
                if (j >= cu) break;
                UNROLL for (uint t = 0u; t < NT; ++t) {
                    if (t >= nt) break;
                    uvec4 alo, ahi;
                    float da, sa;
                    int olo, ohi;
                    actUnit(t, j, u, actRow0, alo, ahi, da, sa, olo, ohi);
                    UNROLL for (uint r = 0u; r < RR; ++r) {
                        const uint w = (p * RR + r) * 8u, f = p * RR + r;
                        float mlo, mhi;
                        unitMins(r, wBase, row0, u, mlo, mhi);
                        acc[r * NT + t] = unitSum(acc[r * NT + t], uvec4(pq[w], pq[w + 1u], pq[w + 2u], pq[w + 3u]),
                                                  uvec4(pq[w + 4u], pq[w + 5u], pq[w + 6u], pq[w + 7u]), pa[f], pb[f], pm[f],
                                                  mlo, mhi, alo, ahi, da, sa, olo, ohi);
                    }
                }
            }
            continue;
        }
        if (PF > 1u && STAGE == 0u && NT == NA) {
            // PF units a thread in flight: every load of PF units (weights, and each token's
            // activation units) is issued before the first multiply waits for one. A unit past
            // the end reloads the last one, a token past the tile the tile's last; neither is
            // added. The sums are the same as one unit at a time, in the same order.
            for (uint j0 = kk; j0 < cu; j0 += TK * PF) {
                uint pq[PF * RR * 8u];
                float pa[PF * RR], pb[PF * RR], pm[PF * RR];
                uvec4 alo[PF * NA], ahi[PF * NA];
                float da[PF * NA], sa[PF * NA];
                int olo[PF * NA], ohi[PF * NA];
                UNROLL for (uint p = 0u; p < PF; ++p) {
                    const uint j = min(j0 + p * TK, cu - 1u);
                    UNROLL for (uint r = 0u; r < RR; ++r) {
                        uint q[8];
                        weightUnit(r, wBase, row0, c0 + j, q, pa[p * RR + r], pb[p * RR + r], pm[p * RR + r]);
                        UNROLL for (uint i = 0u; i < 8u; ++i) pq[(p * RR + r) * 8u + i] = q[i];
                    }
                    if (!kWait) {
                        UNROLL for (uint t = 0u; t < NA; ++t) {
                            const uint a = p * NA + t;
                            actUnit(min(t, nt - 1u), j, c0 + j, actRow0, alo[a], ahi[a], da[a], sa[a], olo[a], ohi[a]);
                        }
                    }
                }
                if (kWait) {
                    if (j0 == kk) waitSignal();  // the first units' weight loads are in flight
                    UNROLL for (uint p = 0u; p < PF; ++p) {
                        const uint j = min(j0 + p * TK, cu - 1u);
                        UNROLL for (uint t = 0u; t < NA; ++t) {
                            const uint a = p * NA + t;
                            actUnit(min(t, nt - 1u), j, c0 + j, actRow0, alo[a], ahi[a], da[a], sa[a], olo[a], ohi[a]);
                        }
                    }
                }
                UNROLL for (uint p = 0u; p < PF; ++p) {
                    const uint u = c0 + j0 + p * TK;
                    if (j0 + p * TK >= cu) break;
                    UNROLL for (uint t = 0u; t < NA; ++t) {
                        if (t >= nt) break;
                        const uint a = p * NA + t;
                        UNROLL for (uint r = 0u; r < RR; ++r) {
                            const uint w = (p * RR + r) * 8u, f = p * RR + r;
                            float mlo, mhi;
                            unitMins(r, wBase, row0, u, mlo, mhi);
                            acc[r * NT + t] = unitSum(acc[r * NT + t], uvec4(pq[w], pq[w + 1u], pq[w + 2u], pq[w + 3u]),
                                                      uvec4(pq[w + 4u], pq[w + 5u], pq[w + 6u], pq[w + 7u]), pa[f], pb[f], pm[f],
                                                      mlo, mhi, alo[a], ahi[a], da[a], sa[a], olo[a], ohi[a]);
                        }
                    }
                }
            }
            continue;
        }
        for (uint j = kk; j < cu; j += TK) {
            const uint u = c0 + j;
            uint wq[RR * 8u];
            float fa[RR], fb[RR], fm[RR];
            UNROLL for (uint r = 0u; r < RR; ++r) {
                uint q[8];
                weightUnit(r, wBase, row0, u, q, fa[r], fb[r], fm[r]);
                UNROLL for (uint i = 0u; i < 8u; ++i) wq[r * 8u + i] = q[i];
            }
            if (kWait && j == kk) waitSignal();  // the first unit's weight loads are in flight
            UNROLL for (uint t = 0u; t < NT; ++t) {
                if (t >= nt) break;
                uvec4 alo, ahi;
                float da, sa;
                int olo, ohi;  // kOffset times the half sums (Q2_K: the plain sums)
                actUnit(t, j, u, actRow0, alo, ahi, da, sa, olo, ohi);
                UNROLL for (uint r = 0u; r < RR; ++r) {
                    float mlo, mhi;
                    unitMins(r, wBase, row0, u, mlo, mhi);
                    acc[r * NT + t] = unitSum(acc[r * NT + t], uvec4(wq[r * 8u], wq[r * 8u + 1u], wq[r * 8u + 2u], wq[r * 8u + 3u]),
                                              uvec4(wq[r * 8u + 4u], wq[r * 8u + 5u], wq[r * 8u + 6u], wq[r * 8u + 7u]), fa[r],
                                              fb[r], fm[r], mlo, mhi, alo, ahi, da, sa, olo, ohi);
                }
            }
        }
    }
    // The TK partial sums of each (row, token), added in one order; lane kk == 0 keeps them.
    const bool bySubgroup = gl_SubgroupSize == TK;
    UNROLL for (uint i = 0u; i < RR * NT; ++i) {
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
    UNROLL for (uint r = 0u; r < R; ++r) {
        const uint row = row0 + r;
        UNROLL for (uint t = 0u; t < NT; ++t) {
            if (t >= nt || row >= pc.m) break;
            float s = acc[r * NT + t];
            if (PAIR != 0u) {
                const float up = acc[(r + R) * NT + t];
                s = swiglu(s, up);
            }
            if (CONV != 0u) {
                s = convStep(conv[r], CONV, s);
                convStore(FloatBuf(uvec2(pc.w2_32)), 0u, conv[r], row, pc.m, CONV);
            }
            const uint o = (outRow0 + t) * pc.outStride + row;
            pc.out_.v[o] = pc.accumulate != 0u ? pc.out_.v[o] + s : s;
        }
    }
}
