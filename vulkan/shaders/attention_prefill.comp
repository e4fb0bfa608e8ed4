#version 450
// A prefill batch's exact attention, tiled over queries: workgroup (head, tile of kTile
// consecutive tokens) computes, for each token of the tile that reads up to exactMax keys, what
// attention.comp computes for it alone (q rounded to F16, fp32 scores, the online softmax's
// per-position factors, the weighted sum of V in an F16 accumulator rounded after every
// position, in position order). A K row is loaded once for the tile's scores, a V element once
// for the tile's kTile accumulator chains, which run side by side in each thread (independent
// chains: their latencies overlap, where attention.comp runs one chain per workgroup).
// Tokens past exactMax are left to attention_split.comp and attention.comp's merge.
//
// Per chunk of kChunk absolute positions (the union of the tile's key ranges, in order):
//   scores: thread (position p, half of the tile's tokens) loads key p once, 8 dot products;
//   factors: thread (token j, segment of 8 positions) scans the running max as attention.comp
//            does (a segment's max, the earlier segments' through shared memory) and writes each
//            position's accumulator rescale and weight;
//   values: thread d walks the chunk's positions, V element d loaded kAhead positions ahead,
//           and updates the chain of every token whose range holds the position.
// A sliding-window layer reads each token's last `window` positions from its ring of rows
// (position P in row P % slots).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#extension GL_EXT_buffer_reference_uvec2 : require

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer Uvec4Buf { uvec4 v[]; };

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
    uint nTokens;
    uint exactMax;
    float qScale;    // gemma3 scales q before attention (its F16 rounding sees q * qScale)
    uint window;     // 0: every position
    uint slots;      // the layer's rows: position p in row p % slots (graph/kv_layout.h)
} pc;

const uint kTile = 16u;    // tokens per workgroup (vulkan/op_attention.cpp kPrefillTile)
const uint kChunk = 64u;   // positions per step: 128 threads = 64 positions x 2 token halves
const uint kSeg = 8u;      // positions per thread in the factors' scan: 16 tokens x 8 segments
const uint kAhead = 16u;   // V elements a thread has in flight
shared float qh[kTile * 256u];
shared float rescaleOf[kTile * kChunk];  // scores, then each position's accumulator rescale
shared float weightOf[kTile * kChunk];
shared float segMax[kTile * kChunk / kSeg];
shared float runMax[kTile];
shared uint firstPos[kTile], lastPos[kTile];  // each token's key range, absolute positions
shared uint tileTokens;

uint rowOf(uint position) { return position % pc.slots; }

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint h = gl_WorkGroupID.x, t0 = gl_WorkGroupID.y * kTile;
    const uint kvHead = h / pc.group, hd = pc.headDim;
    if (tid == 0u) {
        // The exact tokens are a prefix of the tile: a token's key count grows with its position.
        uint e = 0u;
        for (uint j = 0u; j < kTile && t0 + j < pc.nTokens; ++j) {
            const uint pos = uint(pc.state.v[kStatePosition]) + t0 + j;
            const uint first = pc.window > 0u && pos >= pc.window ? pos + 1u - pc.window : 0u;
            if (pos + 1u - first > pc.exactMax) break;
            firstPos[j] = first;
            lastPos[j] = pos;
            e = j + 1u;
        }
        tileTokens = e;
    }
    if (tid < kTile) runMax[tid] = -1.0 / 0.0;
    barrier();
    const uint nt = tileTokens;
    if (nt == 0u) return;  // whole workgroup
    for (uint i = tid; i < nt * hd; i += 128u) {
        const uint j = i / hd, d = i % hd;
        qh[i] = roundHalf(pc.q.v[(t0 + j) * pc.qStride + h * hd + d] * pc.qScale);
    }
    barrier();
    const uvec2 kAddress = uvec2(pc.kCache);
    const bool wide = hd % 8u == 0u && pc.kvDim % 8u == 0u && (kAddress.x & 15u) == 0u;
    Uvec4Buf k4 = Uvec4Buf(kAddress);
    const uint begin = firstPos[0], end = lastPos[nt - 1u] + 1u;
    // The accumulators: element tid (and tid + 128 for heads wider than the workgroup) of each
    // token's output, and each token's sum of weights.
    float acc[2][kTile];
    float sum[kTile];
    for (uint j = 0u; j < kTile; ++j) {
        acc[0][j] = 0.0;
        acc[1][j] = 0.0;
        sum[j] = 0.0;
    }
    for (uint base = begin; base < end; base += kChunk) {
        const uint count = min(kChunk, end - base);
        // Scores: key p against the queries of tokens pair, pair + 2, ... (pair: 0 or 1) (attention.comp's
        // sum order over the head).
        {
            const uint p = tid % kChunk, pair = tid / kChunk;
            float dot[kTile / 2u];
            for (uint u = 0u; u < kTile / 2u; ++u) dot[u] = 0.0;
            if (p < count) {
                if (wide) {
                    const uint row = (rowOf(base + p) * pc.kvDim + kvHead * hd) / 8u, quads = hd / 8u;
                    for (uint b = 0u; b < quads; b += 8u) {
                        uvec4 k[8];
                        for (uint i = 0u; i < 8u; ++i)
                            if (b + i < quads) k[i] = k4.v[row + b + i];
                        for (uint i = 0u; i < 8u; ++i) {
                            if (b + i >= quads) break;
                            const vec2 k0 = unpackHalf2x16(k[i].x), k1 = unpackHalf2x16(k[i].y);
                            const vec2 k2 = unpackHalf2x16(k[i].z), k3 = unpackHalf2x16(k[i].w);
                            for (uint u = 0u; u < kTile / 2u; ++u) {
                                const uint j = pair + 2u * u;
                                if (j >= nt) break;
                                const uint q0 = j * hd + 8u * (b + i);
                                float s = dot[u];
                                s += k0.x * qh[q0] + k0.y * qh[q0 + 1u];
                                s += k1.x * qh[q0 + 2u] + k1.y * qh[q0 + 3u];
                                s += k2.x * qh[q0 + 4u] + k2.y * qh[q0 + 5u];
                                s += k3.x * qh[q0 + 6u] + k3.y * qh[q0 + 7u];
                                dot[u] = s;
                            }
                        }
                    }
                } else {
                    const uint row = (rowOf(base + p) * pc.kvDim + kvHead * hd) / 2u;
                    for (uint i = 0u; i < hd / 2u; ++i) {
                        const vec2 kv = unpackHalf2x16(pc.kCache.v[row + i]);
                        for (uint u = 0u; u < kTile / 2u; ++u) {
                            const uint j = pair + 2u * u;
                            if (j >= nt) break;
                            dot[u] += kv.x * qh[j * hd + 2u * i] + kv.y * qh[j * hd + 2u * i + 1u];
                        }
                    }
                }
            }
            for (uint u = 0u; u < kTile / 2u; ++u) {
                const uint j = pair + 2u * u;
                if (j < nt) rescaleOf[j * kChunk + p] = dot[u] * pc.scale;
            }
        }
        barrier();
        // Factors: token j's positions [s0, s1) of this chunk inside its range, by segments.
        const uint j = tid / (kChunk / kSeg), seg = tid % (kChunk / kSeg);
        uint lo = 0u, hi = 0u;  // this thread's positions of the chunk (relative)
        if (j < nt) {
            const uint s0 = max(firstPos[j], base) - base;
            const uint s1 = min(lastPos[j] + 1u, base + count);
            const uint top = s1 > base ? s1 - base : 0u;
            lo = min(max(s0, seg * kSeg), top);
            hi = min(max(s0, seg * kSeg + kSeg), top);
        }
        float mine = -1.0 / 0.0;
        for (uint p = lo; p < hi; ++p) mine = max(mine, rescaleOf[j * kChunk + p]);
        if (j < nt) segMax[tid] = mine;
        barrier();
        if (j < nt) {
            float running = runMax[j];
            for (uint g = 0u; g < seg; ++g) running = max(running, segMax[j * (kChunk / kSeg) + g]);
            for (uint p = lo; p < hi; ++p) {
                const float s = rescaleOf[j * kChunk + p];
                if (s > running) {
                    rescaleOf[j * kChunk + p] = expAccurate(running - s);
                    weightOf[j * kChunk + p] = 1.0;
                    running = s;
                } else {
                    rescaleOf[j * kChunk + p] = 1.0;
                    weightOf[j * kChunk + p] = expAccurate(s - running);
                }
            }
        }
        barrier();  // segMax and runMax are read above before the last segment moves runMax
        if (j < nt && seg == kChunk / kSeg - 1u) {
            float m = runMax[j];
            for (uint g = 0u; g < kChunk / kSeg; ++g) m = max(m, segMax[j * (kChunk / kSeg) + g]);
            runMax[j] = m;
        }
        // Values: every token's chain at element d, positions in order.
        for (uint lane = 0u; lane < 2u; ++lane) {
            const uint d = tid + 128u * lane;
            if (d >= hd) break;
            const uint col = kvHead * hd + d;
            float v[kAhead], next[kAhead];
            for (uint u = 0u; u < kAhead; ++u) {
                const uint e = rowOf(base + min(u, count - 1u)) * pc.kvDim + col;
                next[u] = unpackHalf2x16(pc.vCache.v[e / 2u])[e % 2u];
            }
            for (uint p = 0u; p < count; p += kAhead) {
                for (uint u = 0u; u < kAhead; ++u) v[u] = next[u];
                if (p + kAhead < count)
                    for (uint u = 0u; u < kAhead; ++u) {
                        const uint e = rowOf(base + min(p + kAhead + u, count - 1u)) * pc.kvDim + col;
                        next[u] = unpackHalf2x16(pc.vCache.v[e / 2u])[e % 2u];
                    }
                for (uint u = 0u; u < kAhead && p + u < count; ++u) {
                    const uint position = base + p + u;
                    for (uint jj = 0u; jj < kTile; ++jj) {
                        if (jj >= nt) break;
                        if (position < firstPos[jj] || position > lastPos[jj]) continue;  // the same for every thread
                        const float ms = rescaleOf[jj * kChunk + p + u], vs = weightOf[jj * kChunk + p + u];
                        float a = acc[lane][jj];
                        if (ms != 1.0) a = roundHalf(a * ms);
                        acc[lane][jj] = roundHalf(fma(v[u], vs, a));  // one rounding, as the AVX2 kernel
                        if (lane == 0u) sum[jj] = sum[jj] * ms + vs;
                    }
                }
            }
        }
        barrier();  // the chunk's factors are rewritten by the next one
    }
    for (uint jj = 0u; jj < kTile; ++jj) {
        if (jj >= nt) break;
        const float inv = sum[jj] > 0.0 ? 1.0 / sum[jj] : 0.0;
        for (uint lane = 0u; lane < 2u; ++lane)
            if (tid + 128u * lane < hd) pc.out_.v[(t0 + jj) * pc.outStride + h * hd + tid + 128u * lane] = acc[lane][jj] * inv;
    }
}
