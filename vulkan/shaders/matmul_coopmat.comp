#version 450
// Batched prefill on matrix cores: matmul.comp's product (same push constants, TYPE, PAIR,
// EXPERT, accumulate) with the multiply-adds in 16x16x16 f16 cooperative matrices and f32
// accumulators. Written against GL_NV_cooperative_matrix (what Debian's glslang compiles) and
// rewritten to SPV_KHR_cooperative_matrix at build time (vulkan/spirv_coopmat).
//
// A workgroup of 256 threads owns BM weight rows (per set: PAIR has gate and up) x BN tokens
// (spec constants, chosen by the host: 64 or 128 each). Per step of 2 units (64 values of k)
// each thread decodes one (set, row, unit) of the weights (decodeUnit) and one (token, unit)
// of the 8-bit activations into f16 in shared memory, 32 values as four 16-byte stores:
// w = f * (q - kOffset) + fm with f = fa for values 0..15 and fb for 16..31, a = q * da.
// Since quantize.comp's block sum sa is the sum of the block's dequantized activations,
// sum(a * w) is matmul.comp's value up to f16 rounding of w and a. The bytes become halves
// without integer conversions: 0x6400 | q is the f16 1024 + q (exact for q < 1024), minus
// 1024 + offset is exactly q - offset (signed quants are first made unsigned with ^ 0x80,
// offset + 128); then scale and min in f32 and one rounding to f16, as before (an f16 fma
// would round f and fm as well, and da, an f32 block scale, may lie below f16's normal range).
// The subgroups form a grid of WR x WC (4 x 2 of 32 threads, 2 x 2 of 64) over the output;
// each owns TM x TN 16x16 f32 accumulators for the whole k loop and per 16 values of k loads
// TM A and TN B fragments for TM * TN multiply-adds (twice the A and the multiply-adds with
// PAIR). At the end each subgroup stores one tile at a time to its own shared 16x16 block and
// its threads write that block out: PAIR (silu(gate) * up), accumulate, the EXPERT row order
// and the missing rows and columns are handled there, never by a store straight to the output.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#ifndef ZINC_COOPMAT_EMULATE
#extension GL_NV_cooperative_matrix : require
#endif
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_buffer_reference_uvec2 : require
#include "dot4.glsl"
#include "common.glsl"
#include "weights.glsl"
#include "f16_halves.glsl"

// The tile loops unroll on matrix cores (the accumulators then stay in registers); the
// emulation keeps them rolled, or llvmpipe takes minutes to compile its EXPERT variants, as
// matmul_f16.comp's. The sums run in the same order either way.
#ifdef ZINC_COOPMAT_EMULATE
#define UNROLL [[dont_unroll]]
#else
#define UNROLL [[unroll]]
#endif

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint TYPE = 12u;
layout(constant_id = 1) const uint PAIR = 0u;
layout(constant_id = 2) const uint EXPERT = 0u;
layout(constant_id = 3) const uint BM = 64u;   // weight rows per set: 64 or 128
layout(constant_id = 4) const uint BN = 64u;   // tokens: 64 or 128 (EXPERT: 64, moe_group.comp's tile)
layout(constant_id = 5) const uint SG = 32u;   // subgroup size: 32 or 64 (the emulation: 32)
layout(constant_id = 6) const uint VEC = 0u;   // Q4_K rows 16-byte aligned: quants read 16 bytes a load
layout(constant_id = 7) const uint ACT4 = 0u;  // activation rows 16-byte aligned: a unit's quants as two 16-byte loads
// K of the A and of the B matrices, 16 both: two spec constants so that A's and B's NV types
// differ and the KHR rewrite can give each its one Use. Never specialized.
layout(constant_id = 10) const uint KA = 16u;
layout(constant_id = 11) const uint KB = 16u;

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
#include "q4k_vec.glsl"

const uint U = 2u, BK = 32u * U;          // units and values of k per step
const uint NW = PAIR != 0u ? 2u : 1u;     // weight sets
const uint NSG = 256u / SG;               // subgroups: 8 or 4
const uint WR = NSG == 8u ? 4u : 2u, WC = NSG / WR;  // the subgroups' grid over rows x tokens
const uint TM = BM / (16u * WR), TN = BN / (16u * WC);  // 16x16 tiles per subgroup
// Row stride of sW / sA in uvec4 (8 halves): 64 values + 8 halves of padding, 144 bytes, so
// that the 8 rows a fragment load or a quarter-warp store touches fall on distinct banks.
const uint LD4 = BK / 8u + 1u;
// sW: [set][row][k] (A, row-major); sA: [token][k] (B as k x tokens, column-major). uvec4:
// 16-byte stores; the matrix loads read them as halves (element and stride in uvec4).
shared uvec4 sW[NW * BM * LD4];
shared uvec4 sA[BN * LD4];
#ifndef ZINC_COOPMAT_EMULATE
shared float sOut[NSG * 256u];  // per subgroup one 16x16 block, column-major (token-major)
#endif
shared uint sActRow[BN];
shared uint sOutRow[BN];
uint wBase = 0u;
uint tileTokens = 0u;

// Job (set, row, unit) with the unit fastest: the U units of a row are neighbouring threads, so
// a warp's loads touch BM * U / 32 rows' lines, not 32 rows'.
void loadWeights(uint job, uint row0, uint unit0, uint nUnits) {
    const uint set = job / (BM * U), r = (job / U) % BM, u = job % U;
    const uint unit = unit0 + u;
    uint q[8];
    float fa = 0.0, fb = 0.0, fm = 0.0;
    if (unit < nUnits) {
        const uint row = wBase + min(row0 + r, pc.m - 1u) * pc.rowBytes;  // a missing row decodes the last; not written
        if (VEC != 0u && TYPE == kQ4_K)
            decodeQ4KVec(U128Buf(uvec2(set == 0u ? pc.w32 : pc.w2_32)), row, unit, q, fa, fb, fm);
        else
            decodeUnit(set == 0u ? pc.w : pc.w2, set == 0u ? pc.w32 : pc.w2_32, row, unit, q, fa, fb, fm);
    } else {
        for (uint i = 0u; i < 8u; ++i) q[i] = 0u;
    }
    const uint flip = kSignedQuants ? 0x80808080u : 0u;
    const float16_t off = float16_t(1024 + kOffset + (kSignedQuants ? 128 : 0));
    const uint base = (set * BM + r) * LD4 + u * 4u;
    for (uint i = 0u; i < 4u; ++i) sW[base + i] = halvesOf(q[2u * i] ^ flip, q[2u * i + 1u] ^ flip, off, i < 2u ? fa : fb, fm);
}

void loadActivations(uint job, uint unit0, uint nUnits) {
    const uint t = job / U, u = job % U;
    const uint unit = unit0 + u;
    const uint a0 = sActRow[t] * pc.actStride;
    const float da = unit < nUnits ? uintBitsToFloat(pc.act.v[a0 + pc.k / 4u + unit]) : 0.0;
    const uint base = t * LD4 + u * 4u;
    uint w[8];
    if (ACT4 != 0u && unit < nUnits) {
        const uvec4 lo = U128Buf(uvec2(pc.act)).v[(a0 + 8u * unit) / 4u], hi = U128Buf(uvec2(pc.act)).v[(a0 + 8u * unit) / 4u + 1u];
        w = uint[8](lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w);
    } else {
        for (uint i = 0u; i < 8u; ++i) w[i] = unit < nUnits ? pc.act.v[a0 + 8u * unit + i] : 0u;
    }
    for (uint i = 0u; i < 4u; ++i)
        sA[base + i] = halvesOf(w[2u * i] ^ 0x80808080u, w[2u * i + 1u] ^ 0x80808080u, float16_t(1024 + 128), da, 0.0);
}

// The tile's columns: tokens y * BN.. or one expert's pairs; false if the tile is empty.
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

// Element e = lane + j * step (j < 8) of the 16x16 tile (tr, tc), column-major (r = e % 16,
// token c = e / 16: consecutive threads write consecutive rows of one token), out.
void writeValues(uint tr, uint tc, uint row0, uint lane, uint step, float gate[8], float up[8]) {
    [[unroll]] for (uint j = 0u; j < 8u; ++j) {
        const uint e = lane + j * step;
        if (e >= 256u) break;
        const uint r = e % 16u, c = e / 16u;
        const uint row = row0 + tr * 16u + r, t = tc * 16u + c;
        if (row >= pc.m || t >= tileTokens) continue;
        float s = gate[j];
        if (PAIR != 0u) s = swiglu(s, up[j]);
        const uint o = sOutRow[t] * pc.outStride + row;
        pc.out_.v[o] = pc.accumulate != 0u ? pc.out_.v[o] + s : s;
    }
}

#ifdef ZINC_COOPMAT_EMULATE
// Tests only (ZINC_VK_COOPMAT=emulate): the same decode, tiles and epilogue with each 16x16
// matrix held as 8 floats by each of 32 lanes (element lane + 32 j, as writeValues reads),
// "subgroups" of 32 threads by tid (the host specializes SG = 32); runs where there are no
// matrix cores (lavapipe), so all but the cooperative-matrix instructions and their KHR
// rewrite is checked there. A and B "fragments" are their uvec4 offsets.
#define Tile float[8]
#define ATile uint
#define BTile uint
Tile zeroTile() { return float[8](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0); }
ATile loadA(uint at) { return at; }
BTile loadB(uint at) { return at; }
float halfAt(bool a, uint at) {
    const uvec4 v = a ? sW[at / 8u] : sA[at / 8u];
    return float(unpackFloat2x16(v[(at % 8u) / 2u])[at % 2u]);
}
// acc + A (16 rows of sW from aAt) x B (16 tokens of sA from bAt), 16 values of k.
Tile mulAdd(ATile aAt, BTile bAt, Tile acc) {
    const uint lane = gl_LocalInvocationID.x % SG;
    for (uint j = 0u; j < 8u; ++j) {
        const uint e = lane + j * SG, r = e % 16u, c = e / 16u;
        float s = 0.0;
        for (uint k = 0u; k < 16u; ++k) s += halfAt(true, 8u * (aAt + r * LD4) + k) * halfAt(false, 8u * (bAt + c * LD4) + k);
        acc[j] += s;
    }
    return acc;
}
void writeTile(uint sg, uint tr, uint tc, uint row0, Tile acc, Tile accUp) {
    writeValues(tr, tc, row0, gl_LocalInvocationID.x % SG, SG, acc, accUp);
}
#else
#define Tile fcoopmatNV<32, 3, 16, 16>
#define ATile fcoopmatNV<16, 3, 16, KA>
#define BTile fcoopmatNV<16, 3, KB, 16>
Tile zeroTile() { return Tile(0.0); }
ATile loadA(uint at) {  // 16 rows x 16 values of k of sW from uvec4 at, row-major
    ATile a;
    coopMatLoadNV(a, sW, at, LD4, false);
    return a;
}
BTile loadB(uint at) {  // 16 values of k x 16 tokens; sA is token-major, so column-major
    BTile b;
    coopMatLoadNV(b, sA, at, LD4, true);
    return b;
}
Tile mulAdd(ATile a, BTile b, Tile acc) { return coopMatMulAddNV(a, b, acc); }
// Subgroup sg's tile through its block of sOut: up first, kept in registers (256 / subgroup
// size values a thread), then gate.
void writeTile(uint sg, uint tr, uint tc, uint row0, Tile acc, Tile accUp) {
    const uint stage = sg * 256u, lane = gl_SubgroupInvocationID, step = gl_SubgroupSize;
    float gate[8], up[8];  // subgroups of >= 32 threads
    if (PAIR != 0u) {
        coopMatStoreNV(accUp, sOut, stage, 16u, true);
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        [[unroll]] for (uint j = 0u; j < 8u; ++j)
            if (lane + j * step < 256u) up[j] = sOut[stage + lane + j * step];
        subgroupBarrier();
    }
    coopMatStoreNV(acc, sOut, stage, 16u, true);
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    [[unroll]] for (uint j = 0u; j < 8u; ++j)
        if (lane + j * step < 256u) gate[j] = sOut[stage + lane + j * step];
    writeValues(tr, tc, row0, lane, step, gate, up);
    subgroupBarrier();  // the block is free for the next tile
}
#endif

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint row0 = gl_WorkGroupID.x * BM;
    if (!setUpTile()) return;  // the whole workgroup leaves together
#ifdef ZINC_COOPMAT_EMULATE
    const uint sg = tid / SG;
#else
    const uint sg = gl_SubgroupID;
#endif
    // Subgroup sg: tile rows tr0 + i (i < TM), tile columns tc0 + j (j < TN).
    const uint tr0 = (sg % WR) * TM, tc0 = (sg / WR) * TN;
    const uint nUnits = (pc.k + 31u) / 32u;
    Tile acc[TM * TN];
    Tile accUp[PAIR != 0u ? TM * TN : 1u];
    UNROLL for (uint i = 0u; i < TM * TN; ++i) acc[i] = zeroTile();
    UNROLL for (uint i = 0u; i < (PAIR != 0u ? TM * TN : 1u); ++i) accUp[i] = zeroTile();
    for (uint unit0 = 0u; unit0 < nUnits; unit0 += U) {
        for (uint job = tid; job < NW * BM * U; job += 256u) loadWeights(job, row0, unit0, nUnits);
        // The activation jobs start where the weight jobs left off (64x64: threads 128..255).
        for (uint job = (tid + 256u - (NW * BM * U) % 256u) % 256u; job < BN * U; job += 256u) loadActivations(job, unit0, nUnits);
        barrier();
        UNROLL for (uint kk = 0u; kk < BK / 8u; kk += 2u) {  // 16 values of k: 2 uvec4
            BTile b[TN];
            UNROLL for (uint j = 0u; j < TN; ++j) b[j] = loadB((tc0 + j) * 16u * LD4 + kk);
            UNROLL for (uint i = 0u; i < TM; ++i) {
                const ATile a = loadA((tr0 + i) * 16u * LD4 + kk);
                UNROLL for (uint j = 0u; j < TN; ++j) acc[i * TN + j] = mulAdd(a, b[j], acc[i * TN + j]);
                if (PAIR != 0u) {
                    const ATile aUp = loadA((BM + (tr0 + i) * 16u) * LD4 + kk);
                    UNROLL for (uint j = 0u; j < TN; ++j) accUp[i * TN + j] = mulAdd(aUp, b[j], accUp[i * TN + j]);
                }
            }
        }
        barrier();
    }
    UNROLL for (uint i = 0u; i < TM; ++i)
        UNROLL for (uint j = 0u; j < TN; ++j)
            writeTile(sg, tr0 + i, tc0 + j, row0, acc[i * TN + j], accUp[PAIR != 0u ? i * TN + j : 0u]);
}
