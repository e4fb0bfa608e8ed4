#version 450
// Batched prefill of a MoE layer: groups the (token, slot) pairs the router chose by expert,
// so matmul.comp can multiply each expert's matrices once per 64 of its pairs instead of
// once per pair. Writes the pairs ordered by expert and a list of tiles (expert, first
// pair, pairs <= 64); matmul workgroups past the tile count exit. One workgroup.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform PC {
    IntBuf ids;    // [pair] expert id, pair = token * nUsed + k
    IntBuf group;  // out: [0] tile count, [1 ..] tiles {expert, first, count}, then the pair order
    uint nPairs;
    uint nExpert;
    uint orderAt;  // int offset of the pair order in `group`
} pc;

const uint kMaxExperts = 512u;  // moe_topk.comp's limit
const uint kTile = 64u;         // matmul.comp's tokens per workgroup
shared uint counts[kMaxExperts];
shared uint next[kMaxExperts];

void main() {
    const uint tid = gl_LocalInvocationID.x;
    for (uint e = tid; e < pc.nExpert; e += 256u) counts[e] = 0u;
    barrier();
    for (uint p = tid; p < pc.nPairs; p += 256u) atomicAdd(counts[uint(pc.ids.v[p])], 1u);
    barrier();
    if (tid == 0u) {
        uint start = 0u, tiles = 0u;
        for (uint e = 0u; e < pc.nExpert; ++e) {
            next[e] = start;
            for (uint first = 0u; first < counts[e]; first += kTile) {
                pc.group.v[1u + 3u * tiles] = int(e);
                pc.group.v[2u + 3u * tiles] = int(start + first);
                pc.group.v[3u + 3u * tiles] = int(min(kTile, counts[e] - first));
                ++tiles;
            }
            start += counts[e];
        }
        pc.group.v[0] = int(tiles);
    }
    barrier();
    // Order within an expert does not matter: every pair's result is computed alike.
    for (uint p = tid; p < pc.nPairs; p += 256u) {
        const uint at = atomicAdd(next[uint(pc.ids.v[p])], 1u);
        pc.group.v[pc.orderAt + at] = int(p);
    }
}
