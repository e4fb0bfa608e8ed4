#version 450
// y[t][r] = weight row r · activation row t, for one weight type (spec constant TYPE).
// Quantized weights multiply 8-bit activation blocks (quantize.comp) in integer arithmetic
// per 32 values, as the cpu tier does; F32/F16/BF16 weights multiply float activations.
// A workgroup handles R rows for up to NT tokens, so each weight unit is decoded once and
// reused by every token of the tile (batched prefill). Expert mode: workgroup z is a
// (token, slot) pair whose expert id the router wrote on the GPU.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "reduce.glsl"
#include "weights.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint TYPE = 12u;
layout(constant_id = 2) const uint NT = 1u;
layout(constant_id = 3) const uint R = 1u;

layout(push_constant) uniform PC {
    U16Buf w;
    UintBuf act;
    FloatBuf out_;
    IntBuf ids;
    uint k;
    uint m;
    uint rowBytes;
    uint actStride;   // words between activation rows
    uint outStride;   // floats between output rows
    uint nTok;
    uint sliceBytes;  // bytes between experts
    uint expertMode;
    uint actDiv;      // expert mode: activation row = slot / actDiv
    uint accumulate;  // add into out instead of overwriting (fused residual)
    uint groupsX;
} pc;

const bool kFloatType = TYPE == kF32 || TYPE == kF16 || TYPE == kBF16;

// Unit u (32 values) of a quantized row: 32 quants packed 4 per word, and how to scale
// them: value dot = d_act * (fa * (dot of quants 0..15 - off * act sum) + fb * (16..31 ...))
// + fm * s_act.
void decodeUnit(uint row, uint u, out uint wq[8], out float fa, out float fb, out float fm, out int off) {
    fm = 0.0;
    off = 0;
    if (TYPE == kQ8_0) {
        const uint blk = row + u * 34u;
        fa = fb = rdHalf(pc.w, blk);
        for (uint i = 0u; i < 8u; ++i) wq[i] = rd32(pc.w, blk + 2u + 4u * i);
    } else if (TYPE == kQ4_0 || TYPE == kQ4_1 || TYPE == kQ5_0 || TYPE == kQ5_1) {
        const bool hasMin = TYPE == kQ4_1 || TYPE == kQ5_1;
        const bool five = TYPE == kQ5_0 || TYPE == kQ5_1;
        const uint size = TYPE == kQ4_0 ? 18u : TYPE == kQ4_1 ? 20u : TYPE == kQ5_0 ? 22u : 24u;
        const uint blk = row + u * size;
        const uint qhAt = blk + (hasMin ? 4u : 2u);
        const uint qs = qhAt + (five ? 4u : 0u);
        const uint qh = five ? rd32(pc.w, qhAt) : 0u;
        for (uint i = 0u; i < 4u; ++i) {
            const uint word = rd32(pc.w, qs + 4u * i);
            wq[i] = word & 0x0F0F0F0Fu;
            wq[i + 4u] = (word >> 4) & 0x0F0F0F0Fu;
            if (five) {
                wq[i] |= spreadBits4((qh >> (4u * i)) & 0xFu);
                wq[i + 4u] |= spreadBits4((qh >> (16u + 4u * i)) & 0xFu);
            }
        }
        fa = fb = rdHalf(pc.w, blk);
        if (hasMin) fm = rdHalf(pc.w, blk + 2u);
        else off = five ? 16 : 8;
    } else if (TYPE == kQ4_K || TYPE == kQ5_K) {
        const uint b = u / 8u, j = u % 8u, c = j / 2u;
        const uint blk = row + b * (TYPE == kQ4_K ? 144u : 176u);
        float sc, mn;
        scaleMinK4(pc.w, blk + 4u, j, sc, mn);
        const uint qs = blk + (TYPE == kQ4_K ? 16u : 48u) + 32u * c;
        for (uint i = 0u; i < 8u; ++i) {
            wq[i] = (rd32(pc.w, qs + 4u * i) >> (4u * (j & 1u))) & 0x0F0F0F0Fu;
            if (TYPE == kQ5_K) wq[i] |= ((rd32(pc.w, blk + 16u + 4u * i) >> j) & 0x01010101u) << 4;
        }
        fa = fb = rdHalf(pc.w, blk) * sc;
        fm = -rdHalf(pc.w, blk + 2u) * mn;
    } else {  // Q6_K
        const uint b = u / 8u, g = u % 8u, h = g / 4u, kq = g % 4u;
        const uint blk = row + b * 210u;
        const uint ql = blk + 64u * h + 32u * (kq & 1u);
        const uint qh = blk + 128u + 32u * h;
        for (uint i = 0u; i < 8u; ++i) {
            const uint lo = (rd32(pc.w, ql + 4u * i) >> (4u * (kq >> 1))) & 0x0F0F0F0Fu;
            const uint hi = (rd32(pc.w, qh + 4u * i) >> (2u * kq)) & 0x03030303u;
            wq[i] = lo | (hi << 4);
        }
        const float d = rdHalf(pc.w, blk + 208u);
        const uint sc = blk + 192u + 8u * h + 2u * kq;
        fa = d * float(bitfieldExtract(int(rd8(pc.w, sc)), 0, 8));
        fb = d * float(bitfieldExtract(int(rd8(pc.w, sc + 1u)), 0, 8));
        off = 32;
    }
}

float unitDot(uint wq[8], float fa, float fb, float fm, int off, uint actRow, uint u) {
    int dlo = 0, dhi = 0, slo = 0, shi = 0;
    for (uint i = 0u; i < 8u; ++i) {
        const uint aw = pc.act.v[actRow + 8u * u + i];
        int d = 0, s = 0;
        for (int b = 0; b < 32; b += 8) {
            const int a = bitfieldExtract(int(aw), b, 8);
            const int q = TYPE == kQ8_0 ? bitfieldExtract(int(wq[i]), b, 8) : int((wq[i] >> b) & 0xFFu);
            d += q * a;
            s += a;
        }
        if (i < 4u) { dlo += d; slo += s; } else { dhi += d; shi += s; }
    }
    const uint nBlocks = pc.k / 32u;
    const float da = uintBitsToFloat(pc.act.v[actRow + pc.k / 4u + u]);
    float r = da * (fa * float(dlo - off * slo) + fb * float(dhi - off * shi));
    if (TYPE == kQ4_1 || TYPE == kQ5_1 || TYPE == kQ4_K || TYPE == kQ5_K)
        r += fm * uintBitsToFloat(pc.act.v[actRow + pc.k / 4u + nBlocks + u]);
    return r;
}

float floatUnitDot(uint row, uint actRow, uint u) {
    float r = 0.0;
    const uint end = min(32u * u + 32u, pc.k);
    for (uint e = 32u * u; e < end; ++e) {
        float wv;
        if (TYPE == kF32) wv = uintBitsToFloat(rd32(pc.w, row + 4u * e));
        else if (TYPE == kF16) wv = halfBits(rd16(pc.w, row + 2u * e));
        else wv = uintBitsToFloat(rd16(pc.w, row + 2u * e) << 16);
        r += wv * uintBitsToFloat(pc.act.v[actRow + e]);
    }
    return r;
}

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint wg = gl_WorkGroupSize.x;
    const uint row0 = (gl_WorkGroupID.x + gl_WorkGroupID.y * pc.groupsX) * R;
    if (row0 >= pc.m) return;  // whole workgroup leaves together
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
    float acc[R * NT];
    for (uint i = 0u; i < R * NT; ++i) acc[i] = 0.0;
    const uint nUnits = (pc.k + 31u) / 32u;
    for (uint u = tid; u < nUnits; u += wg) {
        for (uint r = 0u; r < R; ++r) {
            const uint row = min(row0 + r, pc.m - 1u);  // a missing last row recomputes the one before
            const uint base = wBase + row * pc.rowBytes;
            if (kFloatType) {
                for (uint t = 0u; t < NT; ++t)
                    if (t < nt) acc[r * NT + t] += floatUnitDot(base, (actRow0 + t) * pc.actStride, u);
            } else {
                uint wq[8];
                float fa, fb, fm;
                int off;
                decodeUnit(base, u, wq, fa, fb, fm, off);
                for (uint t = 0u; t < NT; ++t)
                    if (t < nt) acc[r * NT + t] += unitDot(wq, fa, fb, fm, off, (actRow0 + t) * pc.actStride, u);
            }
        }
    }
    for (uint r = 0u; r < R; ++r) {
        for (uint t = 0u; t < NT; ++t) {
            const float s = workgroupSum(acc[r * NT + t]);
            const uint row = row0 + r;
            if (tid == 0u && row < pc.m && t < nt) {
                const uint o = (outRow0 + t) * pc.outStride + row;
                pc.out_.v[o] = pc.accumulate != 0u ? pc.out_.v[o] + s : s;
            }
        }
    }
}
