#version 450
// The second pass of the two-pass prefill matmul (issue 19): f16 weight rows (dequant_f16.comp's
// scratch) times the 8-bit activation blocks of quantize.comp, in 16x16x16 f16 cooperative
// matrices with f32 accumulators. matmul_coopmat.comp decodes the quantized weights inside its
// k loop, with the global loads between two barriers and nothing to hide them behind; here the
// weights are already f16 and the loop is software pipelined:
//
//   stage 0 loaded and stored to shared buffer 0; barrier
//   step s: global loads of step s + 1 into registers (16-byte loads of weights, 4 words and a
//           scale of activations a thread); the multiply-adds of step s from buffer s % 2;
//           the registers stored to buffer (s + 1) % 2; barrier
//
// so the loads of a step are in flight while the previous one multiplies, and one barrier a
// step suffices (buffer (s + 1) % 2 was last read in step s - 1, before the last barrier).
// A step is BK = 32 values of k (one activation unit); k is a whole number of units.
//
// A workgroup of 256 threads owns BM weight rows (per set: PAIR has gate and up, BM = 64 a
// set) x BN tokens (spec constants from MatVecOp's coopmatTileFor: 128x128, 128x64 or 64x64).
// Shared memory, 16-byte rows of 32 halves + 16 bytes of padding (80 bytes: the 8 rows a
// fragment load or a quarter-warp store touches fall on distinct banks): 2 x (NW x BM + BN)
// rows, 40 KiB at 128x128, plus the token tables. The subgroups form a grid of WR x WC (4 x 2 of
// 32 threads, 2 x 2 of 64) over the output; each owns TM x TN 16x16 f32 accumulators (twice
// with PAIR). The epilogue is matmul_coopmat.comp's: each subgroup stores a tile at a time to
// its own 1 KiB block (here in the first weight buffer, free after the last barrier) and its
// threads write it out, with PAIR (silu(gate) * up), accumulate, EXPERT's row order and the
// missing rows and columns handled there.
//
// Activations are decoded to f16 on their way to shared memory (a = q * da, the f16 trick of
// f16_halves.glsl): BN x 32 values a step, cheap beside the BM x 32 weights.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#ifndef ZINC_COOPMAT_EMULATE
#extension GL_NV_cooperative_matrix : require
#endif
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#include "common.glsl"
#include "f16_halves.glsl"

// The tile loops unroll on matrix cores (the accumulators then stay in registers); the
// emulation keeps them rolled, or llvmpipe takes minutes to compile it (EXPERT with PAIR:
// 193 s of a test here). The sums run in the same order either way.
#ifdef ZINC_COOPMAT_EMULATE
#define UNROLL [[dont_unroll]]
#else
#define UNROLL [[unroll]]
#endif

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint PAIR = 0u;
layout(constant_id = 1) const uint EXPERT = 0u;
layout(constant_id = 2) const uint BM = 64u;   // weight rows per set: 64 or 128 (PAIR: 64)
layout(constant_id = 3) const uint BN = 64u;   // tokens: 64 or 128 (EXPERT: 64, moe_group.comp's tile)
layout(constant_id = 4) const uint SG = 32u;   // subgroup size: 32 or 64 (the emulation: 32)
// K of the A and of the B matrices, 16 both: two spec constants so that A's and B's NV types
// differ and the KHR rewrite can give each its one Use. Never specialized.
layout(constant_id = 10) const uint KA = 16u;
layout(constant_id = 11) const uint KB = 16u;

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer Half8Buf { uvec4 v[]; };

layout(push_constant) uniform PC {
    Half8Buf w;       // f16 rows of k halves: [expert][sliceRows][k]
    Half8Buf w2;      // PAIR: up's
    UintBuf act;
    FloatBuf out_;    // the chunk's first row: out_[token * outStride + row], row < m
    IntBuf group;     // EXPERT: moe_group.comp's tiles and pair order
    uint k;
    uint m;           // rows (of each expert)
    uint actStride;   // words between activation rows
    uint outStride;   // floats between output rows
    uint nTok;
    uint accumulate;  // add into out instead of overwriting (fused residual)
    uint sliceRows;   // EXPERT: rows between experts in w
    uint actDiv;      // EXPERT: activation row = pair / actDiv
    uint orderAt;     // EXPERT: int offset of the pair order in group
} pc;

const uint BK = 32u;                      // values of k per step: one activation unit
const uint NW = PAIR != 0u ? 2u : 1u;     // weight sets
const uint NSG = 256u / SG;               // subgroups: 8 or 4
const uint WR = NSG == 8u ? 4u : 2u, WC = NSG / WR;  // the subgroups' grid over rows x tokens
const uint TM = BM / (16u * WR), TN = BN / (16u * WC);  // 16x16 tiles per subgroup
const uint LD4 = BK / 8u + 1u;            // row stride in uvec4: 32 halves + 8 of padding
const uint A_JOBS = NW * BM * 4u, B_JOBS = BN * 2u;  // 16-byte weight loads, half-unit activation loads
const uint AJ = (A_JOBS + 255u) / 256u, BJ = (B_JOBS + 255u) / 256u;  // per thread
const uint SW = NW * BM * LD4, SB = BN * LD4;  // uvec4 per stage
// sW: [stage][set][row][k] (A, row-major); sB: [stage][token][k] (B as k x tokens,
// column-major). uvec4: 16-byte stores; the matrix loads read them as halves.
shared uvec4 sW[2u * SW];
shared uvec4 sB[2u * SB];
shared uint sActRow[BN];
shared uint sOutRow[BN];
uint wBase = 0u;        // the expert's first row in w
uint tileTokens = 0u;

// One step's loads in flight: registers between the global loads and the shared stores.
uvec4 aReg[AJ];
uvec4 bReg[BJ];
float bScale[BJ];

// Issues the global loads of step s (values 32 s.. of k) into the registers.
void fetch(uint s, uint row0) {
    const uint tid = gl_LocalInvocationID.x;
    const uint rowVecs = pc.k / 8u;
    [[unroll]] for (uint i = 0u; i < AJ; ++i) {
        const uint job = tid + 256u * i;
        if (job >= A_JOBS) break;
        const uint set = job / (BM * 4u), r = (job / 4u) % BM, c = job % 4u;
        const uint at = (wBase + min(row0 + r, pc.m - 1u)) * rowVecs + 4u * s + c;  // a missing row reads the last; not written
        aReg[i] = set == 0u ? pc.w.v[at] : pc.w2.v[at];
    }
    [[unroll]] for (uint i = 0u; i < BJ; ++i) {
        const uint job = tid + 256u * i;
        if (job >= B_JOBS) break;
        const uint t = job / 2u, h = job % 2u;
        const uint a0 = sActRow[t] * pc.actStride, q = a0 + 8u * s + 4u * h;
        bReg[i] = uvec4(pc.act.v[q], pc.act.v[q + 1u], pc.act.v[q + 2u], pc.act.v[q + 3u]);
        bScale[i] = uintBitsToFloat(pc.act.v[a0 + pc.k / 4u + s]);
    }
}

// Stores the registers to shared buffer `stage`, the activations decoded to f16.
void stash(uint stage) {
    const uint tid = gl_LocalInvocationID.x;
    [[unroll]] for (uint i = 0u; i < AJ; ++i) {
        const uint job = tid + 256u * i;
        if (job >= A_JOBS) break;
        sW[stage * SW + (job / 4u) * LD4 + job % 4u] = aReg[i];  // row set * BM + r
    }
    const float16_t off = float16_t(1024 + 128);
    [[unroll]] for (uint i = 0u; i < BJ; ++i) {
        const uint job = tid + 256u * i;
        if (job >= B_JOBS) break;
        const uint at = stage * SB + (job / 2u) * LD4 + 2u * (job % 2u);
        const uvec4 q = bReg[i] ^ 0x80808080u;
        sB[at] = halvesOf(q.x, q.y, off, bScale[i], 0.0);
        sB[at + 1u] = halvesOf(q.z, q.w, off, bScale[i], 0.0);
    }
}

// The tile's columns: tokens y * BN.. or one expert's pairs; false if the tile is empty.
bool setUpTile() {
    const uint tid = gl_LocalInvocationID.x;
    uint first;
    if (EXPERT != 0u) {
        const uint tile = gl_WorkGroupID.y;
        if (tile >= uint(pc.group.v[0])) return false;
        wBase = uint(pc.group.v[1u + 3u * tile]) * pc.sliceRows;
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
// Tests only (ZINC_VK_COOPMAT=emulate): the same loads, pipeline and epilogue with each 16x16
// matrix held as 8 floats by each of 32 lanes (element lane + 32 j, as writeValues reads),
// "subgroups" of 32 threads by tid (the host specializes SG = 32); runs where there are no
// matrix cores (lavapipe). A and B "fragments" are their uvec4 offsets in sW / sB.
#define Tile float[8]
#define ATile uint
#define BTile uint
Tile zeroTile() { return float[8](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0); }
ATile loadA(uint at) { return at; }
BTile loadB(uint at) { return at; }
float halfAt(bool a, uint at) {
    const uvec4 v = a ? sW[at / 8u] : sB[at / 8u];
    return float(unpackFloat2x16(v[(at % 8u) / 2u])[at % 2u]);
}
// acc + A (16 rows of sW from aAt) x B (16 tokens of sB from bAt), 16 values of k.
Tile mulAdd(ATile aAt, BTile bAt, Tile acc) {
    const uint lane = gl_LocalInvocationID.x % SG;
    UNROLL for (uint j = 0u; j < 8u; ++j) {
        const uint e = lane + j * SG, r = e % 16u, c = e / 16u;
        float s = 0.0;
        UNROLL for (uint k = 0u; k < 16u; ++k) s += halfAt(true, 8u * (aAt + r * LD4) + k) * halfAt(false, 8u * (bAt + c * LD4) + k);
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
BTile loadB(uint at) {  // 16 values of k x 16 tokens; sB is token-major, so column-major
    BTile b;
    coopMatLoadNV(b, sB, at, LD4, true);
    return b;
}
Tile mulAdd(ATile a, BTile b, Tile acc) { return coopMatMulAddNV(a, b, acc); }
// Subgroup sg's tile through its 1 KiB block of sW (64 uvec4 from sg * 64; sW is free once the
// k loop's last barrier is passed): up first, kept in registers (256 / subgroup size values a
// thread), then gate. 16 floats a column: a stride of 4 uvec4.
float blockAt(uint block, uint e) { return uintBitsToFloat(sW[block + e / 4u][e % 4u]); }
void writeTile(uint sg, uint tr, uint tc, uint row0, Tile acc, Tile accUp) {
    const uint block = sg * 64u, lane = gl_SubgroupInvocationID, step = gl_SubgroupSize;
    float gate[8], up[8];  // subgroups of >= 32 threads
    if (PAIR != 0u) {
        coopMatStoreNV(accUp, sW, block, 4u, true);
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        [[unroll]] for (uint j = 0u; j < 8u; ++j)
            if (lane + j * step < 256u) up[j] = blockAt(block, lane + j * step);
        subgroupBarrier();
    }
    coopMatStoreNV(acc, sW, block, 4u, true);
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    [[unroll]] for (uint j = 0u; j < 8u; ++j)
        if (lane + j * step < 256u) gate[j] = blockAt(block, lane + j * step);
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
    const uint steps = pc.k / BK;
    Tile acc[TM * TN];
    Tile accUp[PAIR != 0u ? TM * TN : 1u];
    UNROLL for (uint i = 0u; i < TM * TN; ++i) acc[i] = zeroTile();
    UNROLL for (uint i = 0u; i < (PAIR != 0u ? TM * TN : 1u); ++i) accUp[i] = zeroTile();
    fetch(0u, row0);
    stash(0u);
    barrier();
    for (uint s = 0u; s < steps; ++s) {
        const bool more = s + 1u < steps;
        if (more) fetch(s + 1u, row0);
        const uint a0 = (s & 1u) * SW, b0 = (s & 1u) * SB;
        UNROLL for (uint kk = 0u; kk < BK / 8u; kk += 2u) {  // 16 values of k: 2 uvec4
            BTile b[TN];
            UNROLL for (uint j = 0u; j < TN; ++j) b[j] = loadB(b0 + (tc0 + j) * 16u * LD4 + kk);
            UNROLL for (uint i = 0u; i < TM; ++i) {
                const ATile a = loadA(a0 + (tr0 + i) * 16u * LD4 + kk);
                UNROLL for (uint j = 0u; j < TN; ++j) acc[i * TN + j] = mulAdd(a, b[j], acc[i * TN + j]);
                if (PAIR != 0u) {
                    const ATile aUp = loadA(a0 + (BM + (tr0 + i) * 16u) * LD4 + kk);
                    UNROLL for (uint j = 0u; j < TN; ++j) accUp[i * TN + j] = mulAdd(aUp, b[j], accUp[i * TN + j]);
                }
            }
        }
        if (more) stash((s + 1u) & 1u);
        barrier();
    }
    UNROLL for (uint i = 0u; i < TM; ++i)
        UNROLL for (uint j = 0u; j < TN; ++j)
            writeTile(sg, tr0 + i, tc0 + j, row0, acc[i * TN + j], accUp[PAIR != 0u ? i * TN + j : 0u]);
}
