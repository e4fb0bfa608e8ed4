#version 450
// Batched prefill: Y[t][r] = weight row r · activation row t for many tokens at once, for one
// quantized weight type (spec constant TYPE), in the same integer arithmetic per 32 values as
// matvec.comp (8-bit activation blocks from quantize.comp). A workgroup of 256 threads owns a
// tile of 64 rows x 64 tokens. Per step of 4 units (128 values) every thread decodes one
// (row, unit) of the weights and loads one (token, unit) of the activations into shared
// memory; then each thread multiplies 4 rows by 4 tokens out of shared memory. Every weight
// unit is decoded once per 64 tokens, every activation unit read once per 64 rows.
// PAIR: gate and up weights over the same activations, written as silu(gate · x) * (up · x).
// EXPERT: workgroup y is a tile of moe_group.comp (one expert, up to 64 of its (token, slot)
// pairs): the expert's matrices, the pairs' activation rows (pair / actDiv), output rows by pair.
#extension GL_GOOGLE_include_directive : require
#include "dot4.glsl"
#include "common.glsl"
#include "weights.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint TYPE = 12u;
layout(constant_id = 1) const uint PAIR = 0u;
layout(constant_id = 2) const uint EXPERT = 0u;

layout(push_constant) uniform PC {
    U16Buf w;
    UintBuf w32;
    UintBuf act;
    FloatBuf out_;
    U16Buf w2;
    UintBuf w2_32;
    uint k;
    uint m;
    uint rowBytes;
    uint actStride;   // words between activation rows
    uint outStride;   // floats between output rows
    uint nTok;
    uint accumulate;  // add into out instead of overwriting (fused residual)
    IntBuf group;     // EXPERT: moe_group.comp's tiles and pair order
    uint sliceBytes;  // EXPERT: bytes between experts
    uint actDiv;      // EXPERT: activation row = pair / actDiv
    uint orderAt;     // EXPERT: int offset of the pair order in group
} pc;

#include "unit_decode.glsl"

const uint BM = 64u, BN = 64u, U = 4u;  // rows, tokens, units per step
const uint NW = PAIR != 0u ? 2u : 1u;   // weight sets
// Weights: [set][unit][half][row] as 4 words; scales [set][unit][row]. Activations:
// [unit][half][token]. 128-bit loads: a thread reads a unit of a row in two.
shared uvec4 sW[NW * U * 2u * BM];
shared vec3 sWScale[NW * U * BM];  // fa, fb, fm
shared uvec4 sA[U * 2u * BN];
shared vec4 sAScale[U * BN];       // da, sa, sum of quants 0..15, sum of quants 16..31
shared uint sActRow[BN];           // the tile's activation and output rows
shared uint sOutRow[BN];
uint wBase = 0u;                   // the expert's first byte
uint tileTokens = 0u;              // valid columns of the tile

void loadWeights(uint set, uint row0, uint unit0, uint nUnits) {
    const uint r = gl_LocalInvocationID.x % BM, u = gl_LocalInvocationID.x / BM;
    const uint unit = unit0 + u;
    uint q[8];
    float fa = 0.0, fb = 0.0, fm = 0.0;
    if (unit < nUnits) {
        const uint row = wBase + min(row0 + r, pc.m - 1u) * pc.rowBytes;  // a missing row decodes the last; not written
        decodeUnit(set == 0u ? pc.w : pc.w2, set == 0u ? pc.w32 : pc.w2_32, row, unit, q, fa, fb, fm);
    } else {
        for (uint i = 0u; i < 8u; ++i) q[i] = 0u;
    }
    sW[((set * U + u) * 2u) * BM + r] = uvec4(q[0], q[1], q[2], q[3]);
    sW[((set * U + u) * 2u + 1u) * BM + r] = uvec4(q[4], q[5], q[6], q[7]);
    sWScale[(set * U + u) * BM + r] = vec3(fa, fb, fm);
}

void loadActivations(uint unit0, uint nUnits) {
    const uint t = gl_LocalInvocationID.x % BN, u = gl_LocalInvocationID.x / BN;
    const uint unit = unit0 + u;
    const uint a0 = sActRow[t] * pc.actStride;
    int slo = 0, shi = 0;
    float da = 0.0, sa = 0.0;
    uint words[8];
    for (uint i = 0u; i < 8u; ++i) {
        const uint word = unit < nUnits ? pc.act.v[a0 + 8u * unit + i] : 0u;
        words[i] = word;
        if (kOffset != 0) {
            if (i < 4u) slo += sdot4(word, 0x01010101u);
            else shi += sdot4(word, 0x01010101u);
        }
    }
    sA[(u * 2u) * BN + t] = uvec4(words[0], words[1], words[2], words[3]);
    sA[(u * 2u + 1u) * BN + t] = uvec4(words[4], words[5], words[6], words[7]);
    if (unit < nUnits) {
        da = uintBitsToFloat(pc.act.v[a0 + pc.k / 4u + unit]);
        if (kHasMin) sa = uintBitsToFloat(pc.act.v[a0 + pc.k / 4u + pc.k / 32u + unit]);
    }
    sAScale[u * BN + t] = vec4(da, sa, float(slo), float(shi));
}

// The tile's columns: tokens y * 64.. or one expert's pairs; false if the tile is empty.
bool setUpTile() {
    const uint tid = gl_LocalInvocationID.x;
    uint first;
    if (EXPERT != 0u) {
        const uint tile = gl_WorkGroupID.y;
        if (tile >= uint(pc.group.v[0])) return false;
        wBase = uint(pc.group.v[1u + 3u * tile]) * pc.sliceBytes;
        first = uint(pc.group.v[2u + 3u * tile]);
        tileTokens = uint(pc.group.v[3u + 3u * tile]);
    } else {
        first = gl_WorkGroupID.y * BN;
        tileTokens = min(BN, pc.nTok - first);
    }
    if (tid < BN) {  // a missing column repeats the last; not written
        const uint c = first + min(tid, tileTokens - 1u);
        const uint pair = EXPERT != 0u ? uint(pc.group.v[pc.orderAt + c]) : c;
        sActRow[tid] = EXPERT != 0u ? pair / pc.actDiv : pair;
        sOutRow[tid] = pair;
    }
    barrier();
    return true;
}

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint row0 = gl_WorkGroupID.x * BM;
    if (!setUpTile()) return;  // the whole workgroup leaves together
    const uint tx = tid % 16u, ty = tid / 16u;  // rows tx + 16 i, tokens ty + 16 j
    const uint nUnits = (pc.k + 31u) / 32u;
    float acc[NW * 16u];
    for (uint i = 0u; i < NW * 16u; ++i) acc[i] = 0.0;
    for (uint unit0 = 0u; unit0 < nUnits; unit0 += U) {
        for (uint set = 0u; set < NW; ++set) loadWeights(set, row0, unit0, nUnits);
        loadActivations(unit0, nUnits);
        barrier();
        for (uint u = 0u; u < U; ++u) {
            uvec4 a[4][2];
            vec4 as[4];
            for (uint j = 0u; j < 4u; ++j) {
                const uint t = ty + 16u * j;
                a[j][0] = sA[(u * 2u) * BN + t];
                a[j][1] = sA[(u * 2u + 1u) * BN + t];
                as[j] = sAScale[u * BN + t];
            }
            for (uint set = 0u; set < NW; ++set) {
                for (uint ri = 0u; ri < 4u; ++ri) {
                    const uint r = tx + 16u * ri;
                    const uvec4 wlo = sW[((set * U + u) * 2u) * BM + r];
                    const uvec4 whi = sW[((set * U + u) * 2u + 1u) * BM + r];
                    const vec3 ws = sWScale[(set * U + u) * BM + r];
                    for (uint j = 0u; j < 4u; ++j) {
                        int dlo = 0, dhi = 0;
                        for (uint i = 0u; i < 4u; ++i) {
                            if (kSignedQuants) {
                                dlo += sdot4(a[j][0][i], wlo[i]);
                                dhi += sdot4(a[j][1][i], whi[i]);
                            } else {
                                dlo += sudot4(a[j][0][i], wlo[i]);
                                dhi += sudot4(a[j][1][i], whi[i]);
                            }
                        }
                        float v = as[j].x * (ws.x * (float(dlo) - float(kOffset) * as[j].z) +
                                             ws.y * (float(dhi) - float(kOffset) * as[j].w));
                        if (kHasMin) v += ws.z * as[j].y;
                        acc[(set * 4u + ri) * 4u + j] += v;
                    }
                }
            }
        }
        barrier();
    }
    for (uint ri = 0u; ri < 4u; ++ri) {
        const uint row = row0 + tx + 16u * ri;
        if (row >= pc.m) continue;
        for (uint j = 0u; j < 4u; ++j) {
            const uint t = ty + 16u * j;
            if (t >= tileTokens) continue;
            float s = acc[ri * 4u + j];
            if (PAIR != 0u) {
                const float up = acc[(4u + ri) * 4u + j];
                s = swiglu(s, up);
            }
            const uint o = sOutRow[t] * pc.outStride + row;
            pc.out_.v[o] = pc.accumulate != 0u ? pc.out_.v[o] + s : s;
        }
    }
}
