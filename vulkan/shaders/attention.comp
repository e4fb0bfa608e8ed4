#version 450
// One query head of one token over the layer's F16 KV cache, as llama.cpp's CPU flash
// attention computes it (runtime/cpu/attention_kernel.h): q rounded to F16, fp32 scores,
// online softmax, and the weighted sum of V in an F16 accumulator rounded after every
// position. Scores of a chunk of positions are computed in parallel; the accumulation then
// runs in position order, one thread per output element, with no barrier inside.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 128) in;
layout(push_constant) uniform PC {
    FloatBuf q;
    UintBuf kCache;
    UintBuf vCache;
    FloatBuf out_;
    IntBuf state;
    uint nHead;
    uint group;      // query heads per kv head
    uint headDim;
    uint kvDim;
    uint qStride;
    uint outStride;
    float scale;
} pc;

const uint kChunk = 1024u;
shared float qh[256];
shared float scores[kChunk];

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint h = gl_WorkGroupID.x, t = gl_WorkGroupID.y;
    const uint n = uint(pc.state.v[kStatePosition]) + t + 1u;
    const uint kvHead = h / pc.group;
    const uint hd = pc.headDim;
    for (uint i = tid; i < hd; i += 128u) qh[i] = roundHalf(pc.q.v[t * pc.qStride + h * hd + i]);
    barrier();
    float maxScore = -1.0 / 0.0, sum = 0.0, acc = 0.0;
    for (uint base = 0u; base < n; base += kChunk) {
        const uint count = min(kChunk, n - base);
        for (uint p = tid; p < count; p += 128u) {
            const uint row = ((base + p) * pc.kvDim + kvHead * hd) / 2u;
            float s = 0.0;
            for (uint i = 0u; i < hd / 2u; ++i) {
                const vec2 kv = unpackHalf2x16(pc.kCache.v[row + i]);
                s += kv.x * qh[2u * i] + kv.y * qh[2u * i + 1u];
            }
            scores[p] = s * pc.scale;
        }
        barrier();
        if (tid < hd) {
            for (uint p = 0u; p < count; ++p) {
                const float s = scores[p];
                float ms = 1.0, vs = 1.0;
                if (s > maxScore) {
                    ms = exp(maxScore - s);
                    maxScore = s;
                    acc = roundHalf(acc * ms);
                } else {
                    vs = exp(s - maxScore);
                }
                const uint e = (base + p) * pc.kvDim + kvHead * hd + tid;
                const float v = unpackHalf2x16(pc.vCache.v[e / 2u])[e % 2u];
                acc = roundHalf(fma(v, vs, acc));  // one rounding, as the AVX2 kernel
                sum = sum * ms + vs;
            }
        }
        barrier();
    }
    if (tid < hd) pc.out_.v[t * pc.outStride + h * hd + tid] = acc * (sum > 0.0 ? 1.0 / sum : 0.0);
}
