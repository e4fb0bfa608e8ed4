#version 450
// Causal attention of a prefill batch on matrix cores (issue 19): flash attention, tiled over
// queries and keys with an online softmax. A workgroup owns BR = 16 x NSG consecutive tokens of
// one query head; each subgroup 16 of them (its query rows), with q as HD/16 f16 A fragments in
// registers and its output as HD/16 16x16 f32 accumulators. Per step of BC = 32 keys:
//
//   the step's K and V rows (F16 cache, 16-byte loads, fetched into registers during the
//   previous step) in shared memory; barrier
//   S = q K^T: BC/16 tiles, stored to the subgroup's shared block
//   the softmax, LPR = SG/16 lanes a row: the row's running max m and sum l, each score's
//   p = exp(s - m) (0 past the token's own position: causal) as f16 P, and alpha =
//   exp(m_old - m) a row
//   O = alpha O + P V: alpha reaches an accumulator element through the element's row, read
//   from the accumulator-typed matrix rowIndex (element (r, c) = r, loaded once): elements of
//   one matrix type share one layout, whatever it is
//   barrier; the next step's rows stored
//
// and at the end O / l, a tile at a time through the subgroup's block to global memory.
// Against the exact path (attention.comp + attention_split.comp: fp32 scores, fp32 or F16
// sums) it rounds p to f16 before P V; the distance is measured in the tests and results/.
// Only for a batch of one sequence without a window (AttentionOp::flashFits): token t at
// position + t, key p in cache row p.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#ifndef ZINC_COOPMAT_EMULATE
#extension GL_NV_cooperative_matrix : require
#endif
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#include "common.glsl"

// The tile loops unroll on matrix cores (the accumulators then stay in registers); the
// emulation keeps them rolled, or llvmpipe takes minutes to compile it.
#ifdef ZINC_COOPMAT_EMULATE
#define UNROLL [[dont_unroll]]
#else
#define UNROLL [[unroll]]
#endif

layout(local_size_x = 128) in;
layout(constant_id = 0) const uint HD = 128u;  // head size: a multiple of 16, at most 128
layout(constant_id = 1) const uint SG = 32u;   // subgroup size: 32 or 64 (the emulation: 32)
// K of the A and of the B matrices, 16 both: two spec constants so that A's and B's NV types
// differ and the KHR rewrite can give each its one Use. Never specialized.
layout(constant_id = 10) const uint KA = 16u;
layout(constant_id = 11) const uint KB = 16u;

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer Half8Buf { uvec4 v[]; };

layout(push_constant) uniform PC {
    FloatBuf q;        // [token][qStride], head h at h * HD
    Half8Buf kCache;   // the layer's F16 rows of kvDim, key p in row p
    Half8Buf vCache;
    FloatBuf out_;     // [token][outStride], head h at h * HD
    IntBuf state;
    uint nTok;
    uint group;        // query heads per kv head
    uint kvDim;
    uint qStride;
    uint outStride;
    float scale;       // of the scores
    float qScale;      // of q before its f16 rounding (gemma3)
} pc;

const uint NSG = 128u / SG;        // subgroups: 4 or 2
const uint BR = 16u * NSG;         // query rows a workgroup: 64 or 32
const uint BC = 32u;               // keys a step
const uint LPR = SG / 16u;         // lanes a query row in the softmax: 2 or 4
const uint CPL = BC / LPR;         // its columns a lane: 16 or 8
const uint LDK = HD / 8u + 1u;     // K, V and q rows in uvec4: HD halves + 8 of padding
const uint LDS = BC + 4u;          // S rows in floats
const uint LDP = BC / 8u + 1u;     // P rows in uvec4
const uint DT = HD / 16u;          // 16-wide tiles along the head
const uint JOBS = BC * HD / 8u;    // 16-byte loads of K (and as many of V) a step
const uint LJ = (JOBS + 127u) / 128u;
// Elements of a 16x16 accumulator a lane: 8 of 32 lanes, 4 of 64 (NVIDIA, RDNA3/4 WMMA; a
// constant, so that the element loop unrolls and the accumulators stay in registers).
const uint NE = 256u / SG;

// sKV: K rows [0, BC), V rows [BC, 2 BC), LDK apart; before the loop, the q rows (BR <= 2 BC).
shared uvec4 sKV[2u * BC * LDK];
shared float sS[NSG * 16u * LDS];  // each subgroup's scores; its output tiles at the end
shared uvec4 sP[NSG * 16u * LDP];
shared float sAlpha[BR];
shared float sRed[128u];           // the lanes' partial max and sum of a row
shared uint sPos[BR];

uvec4 kReg[LJ], vReg[LJ];

// The global loads of the step's keys kb.. (rows past `last` read row `last`: masked).
void fetch(uint kb, uint last, uint kvCol4) {
    const uint tid = gl_LocalInvocationID.x;
    [[unroll]] for (uint i = 0u; i < LJ; ++i) {
        const uint job = tid + 128u * i;
        if (job >= JOBS) break;
        const uint at = min(kb + job / (HD / 8u), last) * (pc.kvDim / 8u) + kvCol4 + job % (HD / 8u);
        kReg[i] = pc.kCache.v[at];
        vReg[i] = pc.vCache.v[at];
    }
}

void stash() {
    const uint tid = gl_LocalInvocationID.x;
    [[unroll]] for (uint i = 0u; i < LJ; ++i) {
        const uint job = tid + 128u * i;
        if (job >= JOBS) break;
        const uint at = (job / (HD / 8u)) * LDK + job % (HD / 8u);
        sKV[at] = kReg[i];
        sKV[BC * LDK + at] = vReg[i];
    }
}

#ifdef ZINC_COOPMAT_EMULATE
// Tests only (ZINC_VK_COOPMAT=emulate): each 16x16 matrix as 8 floats of each of 32 lanes
// (element lane + 32 j: row e % 16, column e / 16), "subgroups" of 32 threads by tid, A and B
// "fragments" their place in shared memory; runs where there are no matrix cores (lavapipe).
#define Tile float[8]
// q's "fragments" read q from global memory, rounded as the real path stages it (sKV holds the
// keys by then; a copy of its own would pass lavapipe's 32 KiB of shared memory at HD 128):
// the subgroup's first token and the head's first column.
uint qToken0_, qColumn0_;
struct Frag {
    uint buf;       // 0: sKV, 1: sP, 2: q (at: the first column)
    uint at;        // first uvec4
    uint stride;    // uvec4 between rows (column-major: columns)
    bool colMajor;
};
#define ATile Frag
#define BTile Frag
uint laneOf() { return gl_LocalInvocationID.x % 32u; }
Tile zeroTile() { return float[8](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0); }
BTile loadK(uint at) { return Frag(0u, at, LDK, true); }
BTile loadV(uint at) { return Frag(0u, at, LDK, false); }
ATile loadP(uint at) { return Frag(1u, at, LDP, false); }
ATile loadQ(uint rowAt, uint i) { return Frag(2u, 16u * i, 0u, false); }
float fragAt(Frag f, uint r, uint c) {
    if (f.buf == 2u) {
        const uint t = min(qToken0_ + r, pc.nTok - 1u);
        return unpackHalf2x16(packHalf2x16(vec2(pc.q.v[t * pc.qStride + qColumn0_ + f.at + c] * pc.qScale, 0.0))).x;
    }
    const uint h = f.colMajor ? 8u * (f.at + c * f.stride) + r : 8u * (f.at + r * f.stride) + c;
    const uvec4 v = f.buf == 0u ? sKV[h / 8u] : sP[h / 8u];
    return float(unpackFloat2x16(v[(h % 8u) / 2u])[h % 2u]);
}
Tile mulAdd(ATile a, BTile b, Tile acc) {
    for (uint j = 0u; j < 8u; ++j) {
        const uint e = laneOf() + 32u * j, r = e % 16u, c = e / 16u;
        float s = 0.0;
        for (uint k = 0u; k < 16u; ++k) s += fragAt(a, r, k) * fragAt(b, k, c);
        acc[j] += s;
    }
    return acc;
}
void storeS(Tile t, uint at, uint stride) {  // row-major floats of sS
    for (uint j = 0u; j < 8u; ++j) {
        const uint e = laneOf() + 32u * j;
        sS[at + (e % 16u) * stride + e / 16u] = t[j];
    }
}
Tile loadS(uint at, uint stride) {
    Tile t;
    for (uint j = 0u; j < 8u; ++j) {
        const uint e = laneOf() + 32u * j;
        t[j] = sS[at + (e % 16u) * stride + e / 16u];
    }
    return t;
}
// The emulated subgroup is not the device's: its exchanges go through the workgroup (every
// thread of it reaches every such call).
void subgroupSync() {
    memoryBarrierShared();
    barrier();
}
#else
#define Tile fcoopmatNV<32, 3, 16, 16>
#define ATile fcoopmatNV<16, 3, 16, KA>
#define BTile fcoopmatNV<16, 3, KB, 16>
uint laneOf() { return gl_SubgroupInvocationID; }
Tile zeroTile() { return Tile(0.0); }
// K^T (column-major: key rows of HD halves) and V (row-major) as B matrices; q as an A matrix.
BTile loadK(uint at) {
    BTile b;
    coopMatLoadNV(b, sKV, at, LDK, true);
    return b;
}
BTile loadV(uint at) {
    BTile b;
    coopMatLoadNV(b, sKV, at, LDK, false);
    return b;
}
ATile loadQ(uint rowAt, uint i) {  // q's columns 16 i.. of the rows from uvec4 rowAt
    ATile a;
    coopMatLoadNV(a, sKV, rowAt + 2u * i, LDK, false);
    return a;
}
ATile loadP(uint at) {
    ATile a;
    coopMatLoadNV(a, sP, at, LDP, false);
    return a;
}
Tile mulAdd(ATile a, BTile b, Tile acc) { return coopMatMulAddNV(a, b, acc); }
void storeS(Tile t, uint at, uint stride) { coopMatStoreNV(t, sS, at, stride, false); }
Tile loadS(uint at, uint stride) {
    Tile t;
    coopMatLoadNV(t, sS, at, stride, false);
    return t;
}
void subgroupSync() {
    subgroupMemoryBarrierShared();
    subgroupBarrier();
}
#endif

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint h = gl_WorkGroupID.y;
    // The longest blocks (the batch's last tokens) first: they set the dispatch's length.
    const uint t0 = (gl_NumWorkGroups.x - 1u - gl_WorkGroupID.x) * BR;
#ifdef ZINC_COOPMAT_EMULATE
    const uint sg = tid / 32u;
#else
    const uint sg = gl_SubgroupID;
#endif
    const uint lane = laneOf();
    const uint position0 = uint(pc.state.v[kStatePosition]);
    const uint lastTok = min(t0 + BR, pc.nTok) - 1u;
    const uint lastKey = position0 + lastTok;  // the block's keys: 0..lastKey
    const uint kvCol4 = (h / pc.group) * (HD / 8u);

    // The block's q rows as f16 (a missing token repeats the last; not written), in sKV.
    for (uint i = tid; i < BR * HD / 2u; i += 128u) {
        const uint r = i / (HD / 2u), d = 2u * (i % (HD / 2u));
        const uint at = min(t0 + r, pc.nTok - 1u) * pc.qStride + h * HD + d;
        const uint word = packHalf2x16(vec2(pc.q.v[at], pc.q.v[at + 1u]) * pc.qScale);
        const uint w = r * LDK * 4u + d / 2u;
        sKV[w / 4u][w % 4u] = word;
    }
    if (tid < BR) sPos[tid] = position0 + min(t0 + tid, pc.nTok - 1u);
    barrier();
    ATile qf[DT];
#ifdef ZINC_COOPMAT_EMULATE
    qToken0_ = t0 + sg * 16u;
    qColumn0_ = h * HD;
#endif
    UNROLL for (uint i = 0u; i < DT; ++i) qf[i] = loadQ(sg * 16u * LDK, i);
    // rowIndex: element (r, c) = r, through the subgroup's S block.
    for (uint e = lane; e < 256u; e += SG) sS[sg * 16u * LDS + (e / 16u) * LDS + e % 16u] = float(e / 16u);
    subgroupSync();
    const Tile rowIndex = loadS(sg * 16u * LDS, LDS);
    Tile o[DT];
    UNROLL for (uint i = 0u; i < DT; ++i) o[i] = zeroTile();
    barrier();  // q read by every subgroup: sKV takes the keys

    // This lane's row in the softmax and its running max and sum.
    const uint row = sg * 16u + lane / LPR, c0 = (lane % LPR) * CPL;
    const uint rowPos = sPos[row];
    float m = -1.0 / 0.0, l = 0.0;
    const uint steps = lastKey / BC + 1u;
    fetch(0u, lastKey, kvCol4);
    stash();
    barrier();
    for (uint s = 0u; s < steps; ++s) {
        const uint kb = s * BC;
        const bool more = s + 1u < steps;
        if (more) fetch(kb + BC, lastKey, kvCol4);
        // S = q K^T.
        UNROLL for (uint j = 0u; j < BC / 16u; ++j) {
            Tile acc = zeroTile();
            UNROLL for (uint i = 0u; i < DT; ++i) acc = mulAdd(qf[i], loadK(j * 16u * LDK + 2u * i), acc);
            storeS(acc, sg * 16u * LDS + 16u * j, LDS);
        }
        subgroupSync();
        // The softmax of row `row`, columns c0.. (LPR lanes a row, combined through sRed).
        float sv[CPL];
        float mx = -1.0 / 0.0;
        UNROLL for (uint c = 0u; c < CPL; ++c) {
            const float x = sS[row * LDS + c0 + c] * pc.scale;
            sv[c] = kb + c0 + c <= rowPos ? x : -1.0 / 0.0;
            mx = max(mx, sv[c]);
        }
        sRed[sg * SG + lane] = mx;
        subgroupSync();
        UNROLL for (uint i = 0u; i < LPR; ++i) mx = max(mx, sRed[sg * SG + (lane / LPR) * LPR + i]);
        const float mNew = max(m, mx);  // finite: key 0 is in every row's first step
        const float alpha = exp(m - mNew);
        float sum = 0.0;
        uint words[CPL / 2u];
        UNROLL for (uint c = 0u; c < CPL; c += 2u) {
            const float p0 = kb + c0 + c <= rowPos ? exp(sv[c] - mNew) : 0.0;
            const float p1 = kb + c0 + c + 1u <= rowPos ? exp(sv[c + 1u] - mNew) : 0.0;
            sum += p0 + p1;
            words[c / 2u] = packHalf2x16(vec2(p0, p1));
        }
        subgroupSync();  // sRed's maxima read
        sRed[sg * SG + lane] = sum;
        UNROLL for (uint i = 0u; i < CPL / 8u; ++i)
            sP[row * LDP + c0 / 8u + i] = uvec4(words[4u * i], words[4u * i + 1u], words[4u * i + 2u], words[4u * i + 3u]);
        if (lane % LPR == 0u) sAlpha[row] = alpha;
        subgroupSync();
        sum = 0.0;
        UNROLL for (uint i = 0u; i < LPR; ++i) sum += sRed[sg * SG + (lane / LPR) * LPR + i];
        l = l * alpha + sum;
        m = mNew;
        // O = alpha O + P V: each element's alpha and the P fragments read once for all DT tiles.
        float alphaOf[NE];
        UNROLL for (uint e = 0u; e < NE; ++e) alphaOf[e] = sAlpha[sg * 16u + uint(rowIndex[e])];
        ATile pf[BC / 16u];
        UNROLL for (uint j = 0u; j < BC / 16u; ++j) pf[j] = loadP(sg * 16u * LDP + 2u * j);
        UNROLL for (uint i = 0u; i < DT; ++i) {
            UNROLL for (uint e = 0u; e < NE; ++e) o[i][e] *= alphaOf[e];
            UNROLL for (uint j = 0u; j < BC / 16u; ++j) o[i] = mulAdd(pf[j], loadV(BC * LDK + j * 16u * LDK + 2u * i), o[i]);
        }
        barrier();  // every subgroup is done with sKV, sRed and sAlpha
        if (more) {
            stash();
            barrier();
        }
    }
    // O / l, a tile at a time through the subgroup's S block; the lanes of a row hold its l.
    if (lane % LPR == 0u) sAlpha[row] = l > 0.0 ? 1.0 / l : 0.0;
    subgroupSync();
    UNROLL for (uint i = 0u; i < DT; ++i) {
        storeS(o[i], sg * 16u * LDS, LDS);
        subgroupSync();
        for (uint e = lane; e < 256u; e += SG) {
            const uint r = e / 16u, t = t0 + sg * 16u + r;
            if (t < pc.nTok)
                pc.out_.v[t * pc.outStride + h * HD + 16u * i + e % 16u] = sS[sg * 16u * LDS + r * LDS + e % 16u] * sAlpha[sg * 16u + r];
        }
        subgroupSync();
    }
}
