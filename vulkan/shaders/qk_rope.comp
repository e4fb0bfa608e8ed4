#version 450
// Everything between the q/k/v projections and attention, in one dispatch: per head of q and
// k, the optional QK-norm (RMSNorm over the head, times its weight) and RoPE, written back in
// place; k and v also go to this layer's F16 cache at the token's position. Workgroup x:
// q heads, then k heads, then v heads; y: the token. Same arithmetic as rms_norm.comp,
// rope.comp and kv_store.comp, which it replaces.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "reduce.glsl"

layout(local_size_x = 64) in;
layout(push_constant) uniform PC {
    FloatBuf q;
    FloatBuf k;
    FloatBuf v;
    FloatBuf qNorm;   // weights when hasNorm
    FloatBuf kNorm;
    FloatBuf table;   // [position][ropeDim / 2] of (cos, sin)
    UintBuf kCache;
    UintBuf vCache;
    IntBuf state;
    uint nHead;
    uint nHeadKv;
    uint headDim;
    uint ropeDim;
    uint neox;
    uint qStride;
    uint kvStride;    // floats between tokens of k and v (= kvDim)
    float eps;
    uint hasNorm;
} pc;

shared float x[256];
shared float rotated[256];

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint head = gl_WorkGroupID.x, t = gl_WorkGroupID.y;
    const uint hd = pc.headDim;
    const uint pos = rowPosition(pc.state, t);
    const uint cacheRow = rowSlotBase(pc.state, t) + pos;  // fused only on global layers: one row per position
    const uint kvDim = pc.nHeadKv * hd;
    if (head >= pc.nHead + pc.nHeadKv) {  // v head: store only
        const uint h = head - pc.nHead - pc.nHeadKv;
        for (uint i = tid; i < hd / 2u; i += 64u) {
            const uint src = t * pc.kvStride + h * hd + 2u * i;
            pc.vCache.v[(cacheRow * kvDim + h * hd) / 2u + i] = packHalves(pc.v.v[src], pc.v.v[src + 1u]);
        }
        return;
    }
    const bool isQ = head < pc.nHead;
    const uint h = isQ ? head : head - pc.nHead;
    const uint base = isQ ? t * pc.qStride + h * hd : t * pc.kvStride + h * hd;
    float sum = 0.0;
    for (uint i = tid; i < hd; i += 64u) {
        const float v = isQ ? pc.q.v[base + i] : pc.k.v[base + i];
        x[i] = v;
        sum += v * v;
    }
    sum = workgroupSum(sum);  // its barriers also publish x[]
    if (pc.hasNorm != 0u) {
        const float scale = 1.0 / sqrt(sum / float(hd) + pc.eps);
        for (uint i = tid; i < hd; i += 64u) x[i] = x[i] * scale * (isQ ? pc.qNorm.v[i] : pc.kNorm.v[i]);
        barrier();
    }
    for (uint i = tid; i < hd; i += 64u) {
        float r = x[i];
        if (i < pc.ropeDim) {
            const RopePair p = ropePair(i, pc.ropeDim, pc.neox != 0u);
            r = ropeRotated(p, x[p.a], x[p.b], pc.table, pos, pc.ropeDim);
        }
        if (isQ) {
            pc.q.v[base + i] = r;
        } else {
            pc.k.v[base + i] = r;
            rotated[i] = r;  // read back below for the cache (after the barrier)
        }
    }
    if (isQ) return;
    barrier();
    for (uint i = tid; i < hd / 2u; i += 64u)
        pc.kCache.v[(cacheRow * kvDim + h * hd) / 2u + i] = packHalves(rotated[2u * i], rotated[2u * i + 1u]);
}
