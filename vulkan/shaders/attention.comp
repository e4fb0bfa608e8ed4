#version 450
// One query head of one token over the layer's F16 KV cache. Up to exactMax positions it
// computes as llama.cpp's CPU flash attention does (runtime/cpu/attention_kernel.h): q rounded
// to F16, fp32 scores, online softmax, and the weighted sum of V in an F16 accumulator rounded
// after every position. Scores of a chunk of positions are computed in parallel; the
// accumulation then runs in position order, one thread per output element, with no barrier
// inside. Past exactMax it merges the fp32 partials of attention_split.comp instead.
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
    FloatBuf partials;
    uint nSplits;
    uint exactMax;
} pc;

const uint kSplitChunk = 64u;  // attention_split.comp's chunk

const uint kChunk = 1024u;
shared float qh[256];
shared float scores[kChunk];

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint h = gl_WorkGroupID.x, t = gl_WorkGroupID.y;
    const uint n = uint(pc.state.v[kStatePosition]) + t + 1u;
    const uint kvHead = h / pc.group;
    const uint hd = pc.headDim;
    if (n > pc.exactMax) {
        const uint splits = (n + kSplitChunk - 1u) / kSplitChunk;
        const uint base = (t * pc.nHead + h) * pc.nSplits * (hd + 2u);
        float m = -1.0 / 0.0;
        for (uint s = 0u; s < splits; ++s) m = max(m, pc.partials.v[base + s * (hd + 2u)]);
        float sum = 0.0;
        for (uint s = 0u; s < splits; ++s) sum += pc.partials.v[base + s * (hd + 2u) + 1u] * expAccurate(pc.partials.v[base + s * (hd + 2u)] - m);
        for (uint d = tid; d < hd; d += 128u) {
            float acc = 0.0;
            for (uint s = 0u; s < splits; ++s)
                acc += pc.partials.v[base + s * (hd + 2u) + 2u + d] * expAccurate(pc.partials.v[base + s * (hd + 2u)] - m);
            pc.out_.v[t * pc.outStride + h * hd + d] = acc / sum;
        }
        return;
    }
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
                    ms = expAccurate(maxScore - s);
                    maxScore = s;
                    acc = roundHalf(acc * ms);
                } else {
                    vs = expAccurate(s - maxScore);
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
