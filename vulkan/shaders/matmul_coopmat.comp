#version 450
// Batched prefill on matrix cores: matmul.comp's product (same push constants, TYPE, PAIR,
// EXPERT, accumulate) with the multiply-adds in 16x16x16 f16 cooperative matrices and f32
// accumulators. Written against GL_NV_cooperative_matrix (what Debian's glslang compiles) and
// rewritten to SPV_KHR_cooperative_matrix at build time (vulkan/spirv_coopmat).
//
// A workgroup of 256 threads owns 64 rows x 64 tokens. Per step of 2 units (64 values of k)
// the threads decode the weights (decodeUnit, one (row, unit) each) into f16 values in shared
// memory, w = f * (q - kOffset) + fm with f = fa for values 0..15 and fb for 16..31, and
// dequantize the 8-bit activation blocks to f16, a = q * da. Since quantize.comp's block sum
// sa is the sum of the block's dequantized activations (d * sum of quants; Q8_1: fp16 of it),
// sum(a * w) = da * (fa * (dlo - kOffset * slo) + fb * (...)) + fm * sa, matmul.comp's value,
// up to f16 rounding of w and a. Then each subgroup multiplies its 16x16 output tiles from
// shared memory: tile t = subgroup + i * gl_NumSubgroups, so the shader works with any
// subgroup size that leaves 4..16 subgroups (32 or 64 threads; the host checks).
// At the end each subgroup stores one tile at a time to its own shared 16x16 block and its
// threads write that block out: PAIR (silu(gate) * up), accumulate, the EXPERT row order and
// the missing rows and columns are handled there, never by a store straight to the output.
#extension GL_GOOGLE_include_directive : require
#ifndef ZINC_COOPMAT_EMULATE
#extension GL_NV_cooperative_matrix : require
#endif
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#include "dot4.glsl"
#include "common.glsl"
#include "weights.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint TYPE = 12u;
layout(constant_id = 1) const uint PAIR = 0u;
layout(constant_id = 2) const uint EXPERT = 0u;
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

const uint BM = 64u, BN = 64u, U = 2u, BK = 32u * U;  // rows, tokens, units and values per step
const uint NW = PAIR != 0u ? 2u : 1u;                 // weight sets
const uint LD = BK + 8u;  // halves between rows of sW / sA: 144 bytes, 16-byte aligned, rows off the same banks
const uint MAX_SG = 8u;   // staging blocks: the host requires subgroups of >= 32 threads
// sW: [set][row][k] (A, row-major); sA: [token][k] (B as k x tokens, column-major).
shared float16_t sW[NW * BM * LD];
shared float16_t sA[BN * LD];
#ifndef ZINC_COOPMAT_EMULATE
shared float sOut[MAX_SG * 256u];  // per subgroup one 16x16 block, column-major (token-major)
#endif
shared uint sActRow[BN];
shared uint sOutRow[BN];
uint wBase = 0u;
uint tileTokens = 0u;

void loadWeights(uint job, uint row0, uint unit0, uint nUnits) {
    const uint set = job / (BM * U), r = job % BM, u = (job / BM) % U;
    const uint unit = unit0 + u;
    uint q[8];
    float fa = 0.0, fb = 0.0, fm = 0.0;
    if (unit < nUnits) {
        const uint row = wBase + min(row0 + r, pc.m - 1u) * pc.rowBytes;  // a missing row decodes the last; not written
        decodeUnit(set == 0u ? pc.w : pc.w2, set == 0u ? pc.w32 : pc.w2_32, row, unit, q, fa, fb, fm);
    } else {
        for (uint i = 0u; i < 8u; ++i) q[i] = 0u;
    }
    const uint base = (set * BM + r) * LD + u * 32u;
    for (uint i = 0u; i < 8u; ++i) {
        const float f = i < 4u ? fa : fb;
        for (uint b = 0u; b < 4u; ++b) {
            const int qv = kSignedQuants ? bitfieldExtract(int(q[i]), int(8u * b), 8) : int((q[i] >> (8u * b)) & 0xFFu);
            sW[base + 4u * i + b] = float16_t(f * float(qv - kOffset) + fm);
        }
    }
}

void loadActivations(uint job, uint unit0, uint nUnits) {
    const uint t = job % BN, u = job / BN;
    const uint unit = unit0 + u;
    const uint a0 = sActRow[t] * pc.actStride;
    const float da = unit < nUnits ? uintBitsToFloat(pc.act.v[a0 + pc.k / 4u + unit]) : 0.0;
    const uint base = t * LD + u * 32u;
    for (uint i = 0u; i < 8u; ++i) {
        const uint word = unit < nUnits ? pc.act.v[a0 + 8u * unit + i] : 0u;
        for (uint b = 0u; b < 4u; ++b) sA[base + 4u * i + b] = float16_t(float(bitfieldExtract(int(word), int(8u * b), 8)) * da);
    }
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

// Element e = lane + j * step (j < 8) of the 16x16 tile (tr, tc), column-major (r = e % 16,
// token c = e / 16: consecutive threads write consecutive rows of one token), out.
void writeValues(uint tr, uint tc, uint row0, uint lane, uint step, float gate[8], float up[8]) {
    for (uint j = 0u; j < 8u; ++j) {
        const uint e = lane + j * step;
        if (e >= 256u) break;
        const uint r = e % 16u, c = e / 16u;
        const uint row = row0 + tr * 16u + r, t = tc * 16u + c;
        if (row >= pc.m || t >= tileTokens) continue;
        float s = gate[j];
        if (PAIR != 0u) s = s / (1.0 + exp(-s)) * up[j];
        const uint o = sOutRow[t] * pc.outStride + row;
        pc.out_.v[o] = pc.accumulate != 0u ? pc.out_.v[o] + s : s;
    }
}

#ifdef ZINC_COOPMAT_EMULATE
// Tests only (ZINC_VK_COOPMAT=emulate): the same decode, tiles and epilogue with each 16x16
// matrix held as 8 floats by each of 32 lanes (element lane + 32 j, as writeValues reads),
// "subgroups" of 32 threads by tid; runs where there are no matrix cores (lavapipe), so all
// but the cooperative-matrix instructions and their KHR rewrite is checked there.
#define Tile float[8]
#define ATile uint
#define BTile uint
const uint EMU_SG = 32u;
Tile zeroTile() { return float[8](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0); }
ATile loadA(uint at) { return at; }
BTile loadB(uint at) { return at; }
// acc + A (16 rows of sW from aAt) x B (16 tokens of sA from bAt), 16 values of k.
Tile mulAdd(ATile aAt, BTile bAt, Tile acc) {
    const uint lane = gl_LocalInvocationID.x % EMU_SG;
    for (uint j = 0u; j < 8u; ++j) {
        const uint e = lane + j * EMU_SG, r = e % 16u, c = e / 16u;
        float s = 0.0;
        for (uint k = 0u; k < 16u; ++k) s += float(sW[aAt + r * LD + k]) * float(sA[bAt + c * LD + k]);
        acc[j] += s;
    }
    return acc;
}
void writeTile(uint sg, uint tr, uint tc, uint row0, Tile acc, Tile accUp) {
    writeValues(tr, tc, row0, gl_LocalInvocationID.x % EMU_SG, EMU_SG, acc, accUp);
}
#else
#define Tile fcoopmatNV<32, 3, 16, 16>
#define ATile fcoopmatNV<16, 3, 16, KA>
#define BTile fcoopmatNV<16, 3, KB, 16>
Tile zeroTile() { return Tile(0.0); }
ATile loadA(uint at) {  // 16 rows x 16 values of k of sW, row-major
    ATile a;
    coopMatLoadNV(a, sW, at, LD, false);
    return a;
}
BTile loadB(uint at) {  // 16 values of k x 16 tokens; sA is token-major, so column-major
    BTile b;
    coopMatLoadNV(b, sA, at, LD, true);
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
        for (uint j = 0u; j < 8u; ++j)
            if (lane + j * step < 256u) up[j] = sOut[stage + lane + j * step];
        subgroupBarrier();
    }
    coopMatStoreNV(acc, sOut, stage, 16u, true);
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    for (uint j = 0u; j < 8u; ++j)
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
    const uint sg = tid / EMU_SG, nsg = 256u / EMU_SG;
#else
    const uint sg = gl_SubgroupID, nsg = gl_NumSubgroups;
#endif
    // 16x16 tiles of the 64x64 output per subgroup: t = sg + i * nsg, i < tiles. With 4 or 8
    // subgroups (the host's 32 or 64 threads) a subgroup's tiles share one row of tiles,
    // tr = sg % 4, so each step loads its A once for all of them.
    const uint tiles = 16u / nsg, tr = sg % 4u;
    const uint nUnits = (pc.k + 31u) / 32u;
    Tile acc[4];
    Tile accUp[4];
    for (uint i = 0u; i < 4u; ++i) {
        acc[i] = zeroTile();
        accUp[i] = zeroTile();
    }
    for (uint unit0 = 0u; unit0 < nUnits; unit0 += U) {
        // NW * 128 weight jobs on threads 0.., 128 activation jobs on threads 128..255.
        for (uint job = tid; job < NW * BM * U; job += 256u) loadWeights(job, row0, unit0, nUnits);
        const uint aJob = (tid + 128u) % 256u;
        if (aJob < BN * U) loadActivations(aJob, unit0, nUnits);
        barrier();
        for (uint kk = 0u; kk < BK; kk += 16u) {
            const ATile a = loadA(tr * 16u * LD + kk);
            ATile aUp;
            if (PAIR != 0u) aUp = loadA((BM + tr * 16u) * LD + kk);
            for (uint i = 0u; i < 4u; ++i) {
                if (i >= tiles) break;
                const BTile b = loadB((sg + i * nsg) / 4u * 16u * LD + kk);
                acc[i] = mulAdd(a, b, acc[i]);
                if (PAIR != 0u) accUp[i] = mulAdd(aUp, b, accUp[i]);
            }
        }
        barrier();
    }
    for (uint i = 0u; i < 4u; ++i) {
        if (i >= tiles) break;
        writeTile(sg, tr, (sg + i * nsg) / 4u, row0, acc[i], accUp[i]);
    }
}
