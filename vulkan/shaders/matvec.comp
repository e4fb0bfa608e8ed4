#version 450
// y[t][r] = weight row r · activation row t, for one weight type (spec constant TYPE).
// Quantized weights multiply 8-bit activation blocks (quantize.comp) in integer arithmetic
// per 32 values, as the cpu tier does; F32/F16/BF16 weights multiply float activations.
// A workgroup handles R rows for up to NT tokens: each weight unit is decoded once into
// registers and reused by every token of the tile (batched prefill), each activation unit is
// loaded once for the R rows. Expert mode: workgroup z is a (token, slot) pair whose expert id
// the router wrote on the GPU. Compiled twice: with ZINC_DOT4 the 4x8-bit dot products are
// SPIR-V's OpSDot/OpSUDot (VK_KHR_shader_integer_dot_product), otherwise unpacked by hand.
// PAIR: two weights of one type (gate and up) over the same activations, written as
// silu(gate · x) * (up · x): the SwiGLU of the FFN in the same dispatch.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_buffer_reference_uvec2 : require
#include "dot4.glsl"
#include "common.glsl"
#include "weights.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint TYPE = 12u;
layout(constant_id = 2) const uint NT = 1u;
layout(constant_id = 3) const uint R = 1u;
layout(constant_id = 4) const uint PAIR = 0u;
// F32 rows and activation rows 16-byte aligned: a thread reads its unit 16 bytes a load (its
// loads touch as many lines as before, a quarter as often); the sums stay value by value.
layout(constant_id = 5) const uint VEC4 = 0u;
const uint RR = R * (PAIR != 0u ? 2u : 1u);  // row sets decoded: R of w, then R of w2

layout(push_constant) uniform PC {
    U16Buf w;
    UintBuf w32;      // the same weights, for 4-byte aligned block types
    UintBuf act;
    FloatBuf out_;
    IntBuf ids;
    U16Buf w2;
    UintBuf w2_32;
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
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer F32x4Buf { vec4 v[]; };
#include "unit_decode.glsl"
// Value e of a float weight row at byte offset row.
float floatWeight(uint row, uint e) {
    if (TYPE == kF32) return uintBitsToFloat(pc.w32.v[row / 4u + e]);
    if (TYPE == kF16) return halfBits(rd16(pc.w, row + 2u * e));
    return uintBitsToFloat(rd16(pc.w, row + 2u * e) << 16);
}

const uint kMaxSubgroups = 32u;  // workgroups of at most 128, subgroups of at least 4
shared float partials[RR * NT * kMaxSubgroups];

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
    float acc[RR * NT];
    [[unroll]] for (uint i = 0u; i < RR * NT; ++i) acc[i] = 0.0;
    const uint nUnits = (pc.k + 31u) / 32u;
    const uint nBlocks = pc.k / 32u;
    for (uint u = tid; u < nUnits; u += wg) {
        if (kFloatType) {
            // Each (row, token) sums its unit from 0 in order, then adds it (moe_topk.comp's
            // rowDot: the same bits). A whole unit goes value by value for all R x NT sums at
            // once: R weights and NT activations loaded per value, R * NT multiply-adds, all
            // in registers. Only a row's short last unit is read value by value per sum.
            const uint e0 = 32u * u, n = min(32u, pc.k - e0);
            if (n == 32u) {
                uint wAt[R], aAt[NT];
                [[unroll]] for (uint r = 0u; r < R; ++r) wAt[r] = wBase + min(row0 + r, pc.m - 1u) * pc.rowBytes;
                [[unroll]] for (uint t = 0u; t < NT; ++t) aAt[t] = (actRow0 + min(t, nt - 1u)) * pc.actStride + e0;
                float sum[R * NT];
                [[unroll]] for (uint i = 0u; i < R * NT; ++i) sum[i] = 0.0;
                if (VEC4 != 0u && TYPE == kF32) {
                    [[unroll]] for (uint e4 = 0u; e4 < 8u; ++e4) {
                        vec4 wv[R], av[NT];
                        [[unroll]] for (uint r = 0u; r < R; ++r) wv[r] = F32x4Buf(uvec2(pc.w32)).v[(wAt[r] / 4u + e0) / 4u + e4];
                        [[unroll]] for (uint t = 0u; t < NT; ++t) av[t] = F32x4Buf(uvec2(pc.act)).v[aAt[t] / 4u + e4];
                        [[unroll]] for (uint j = 0u; j < 4u; ++j)
                            [[unroll]] for (uint r = 0u; r < R; ++r)
                                [[unroll]] for (uint t = 0u; t < NT; ++t) sum[r * NT + t] += wv[r][j] * av[t][j];
                    }
                    [[unroll]] for (uint i = 0u; i < R * NT; ++i) acc[i] += sum[i];
                    continue;
                }
                [[unroll]] for (uint e = 0u; e < 32u; ++e) {
                    float wv[R], av[NT];
                    [[unroll]] for (uint r = 0u; r < R; ++r) wv[r] = floatWeight(wAt[r], e0 + e);
                    [[unroll]] for (uint t = 0u; t < NT; ++t) av[t] = uintBitsToFloat(pc.act.v[aAt[t] + e]);
                    [[unroll]] for (uint r = 0u; r < R; ++r)
                        [[unroll]] for (uint t = 0u; t < NT; ++t) sum[r * NT + t] += wv[r] * av[t];
                }
                [[unroll]] for (uint i = 0u; i < R * NT; ++i) acc[i] += sum[i];  // tokens past nt: never written
            } else {
                [[unroll]] for (uint r = 0u; r < R; ++r) {
                    const uint base = wBase + min(row0 + r, pc.m - 1u) * pc.rowBytes;
                    [[unroll]] for (uint t = 0u; t < NT; ++t) {
                        if (t >= nt) break;
                        const uint a0 = (actRow0 + t) * pc.actStride + e0;
                        float sum = 0.0;
                        for (uint e = 0u; e < n; ++e) sum += floatWeight(base, e0 + e) * uintBitsToFloat(pc.act.v[a0 + e]);
                        acc[r * NT + t] += sum;
                    }
                }
            }
            continue;
        }
        uint wq[RR * 8u];
        float fa[RR], fb[RR], fm[RR];
        [[unroll]] for (uint r = 0u; r < RR; ++r) {
            // A missing last row decodes the one before; its result is not written.
            uint q[8];
            decodeUnit(r >= R ? pc.w2 : pc.w, r >= R ? pc.w2_32 : pc.w32, wBase + min(row0 + r % R, pc.m - 1u) * pc.rowBytes, u, q, fa[r], fb[r], fm[r]);
            [[unroll]] for (uint i = 0u; i < 8u; ++i) wq[r * 8u + i] = q[i];
        }
        [[unroll]] for (uint t = 0u; t < NT; ++t) {
            if (t >= nt) break;
            const uint a0 = (actRow0 + t) * pc.actStride;
            uint a[8];
            for (uint i = 0u; i < 8u; ++i) a[i] = pc.act.v[a0 + 8u * u + i];
            const float da = uintBitsToFloat(pc.act.v[a0 + pc.k / 4u + u]);
            const float sa = kHasMin ? uintBitsToFloat(pc.act.v[a0 + pc.k / 4u + nBlocks + u]) : 0.0;
            int slo = 0, shi = 0;
            if (kOffset != 0 || kHalfMins) {
                for (uint i = 0u; i < 4u; ++i) {
                    slo += sdot4(a[i], 0x01010101u);
                    shi += sdot4(a[i + 4u], 0x01010101u);
                }
            }
            [[unroll]] for (uint r = 0u; r < RR; ++r) {
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
    // One barrier for all RR * NT sums: subgroups reduce, then thread i adds up sum i.
    [[unroll]] for (uint i = 0u; i < RR * NT; ++i) {
        const float s = subgroupAdd(acc[i]);
        if (subgroupElect()) partials[i * kMaxSubgroups + gl_SubgroupID] = s;
    }
    barrier();
    if (tid < R * NT) {
        const uint r = tid / NT, t = tid % NT, row = row0 + r;
        float s = 0.0;
        for (uint g = 0u; g < gl_NumSubgroups; ++g) s += partials[tid * kMaxSubgroups + g];
        if (PAIR != 0u) {
            float up = 0.0;
            for (uint g = 0u; g < gl_NumSubgroups; ++g) up += partials[(tid + R * NT) * kMaxSubgroups + g];
            s = swiglu(s, up);
        }
        if (row < pc.m && t < nt) {
            const uint o = (outRow0 + t) * pc.outStride + row;
            pc.out_.v[o] = pc.accumulate != 0u ? pc.out_.v[o] + s : s;
        }
    }
}
