#version 450
// The first pass of the two-pass prefill matmul (matmul_f16.comp is the second): rows of a
// quantized weight matrix (spec constant TYPE, any type matmul.comp takes) decoded to
// row-major f16 in a scratch buffer, so that the GEMM's inner loop is plain 16-byte copies
// and matrix multiply-adds. Bandwidth-bound: each thread decodes one 32-value unit
// (decodeUnit) and writes its 64 bytes as four 16-byte stores; consecutive threads take
// consecutive units of a row, so a workgroup writes 16 KiB of contiguous rows.
//
// The values are the cpu tier's (model/quant/dequantize.cpp) rounded to f16: f * (q - off)
// (+ fm for the types with a min), evaluated in f32 in its order (precise: no fused
// multiply-add, which would round once where the cpu tier rounds twice), then one rounding
// to f16 (packHalf2x16: round to nearest even on the drivers we run, checked bit for bit by
// tests/vulkan/coopmat_test.cpp). Plain f32: no shaderFloat16 needed.
//
// Workgroup x: 256 (row, unit) pairs of rows row0.. row0 + rows of one matrix; z: the set
// (PAIR: 0 gate, 1 up); y, EXPERT only: a tile of moe_group.comp. A tile decodes its expert's
// rows only if it is the expert's first tile (tiles are sorted by expert), so experts no pair
// was routed to are skipped and none is decoded twice.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "weights.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint TYPE = 12u;
layout(constant_id = 1) const uint EXPERT = 0u;

layout(buffer_reference, std430, buffer_reference_align = 16) writeonly buffer Half8Out { uvec4 v[]; };

layout(push_constant) uniform PC {
    U16Buf w;          // set 0's quantized rows (EXPERT: expert 0's)
    UintBuf w32;
    U16Buf w2;         // set 1's (PAIR)
    UintBuf w2_32;
    Half8Out out_;     // set 0's f16 rows: [expert][sliceRows][k]
    Half8Out out2;     // set 1's
    IntBuf group;      // EXPERT: moe_group.comp's tiles
    uint k;
    uint rows;         // rows decoded (of each expert)
    uint row0;         // first weight row
    uint rowBytes;
    uint sliceBytes;   // EXPERT: bytes between experts' quantized matrices
    uint sliceRows;    // EXPERT: rows between experts' f16 rows (the chunk's rows)
} pc;

#include "unit_decode.glsl"

// The 4 values of the quants in word y: unsigned bytes, or signed ones (Q8_0, IQ4 levels).
uvec2 halvesOfWord(uint y, float f, float fm) {
    precise vec4 v;
    for (uint j = 0u; j < 4u; ++j) {
        const int q = kSignedQuants ? bitfieldExtract(int(y), int(8u * j), 8) : int((y >> (8u * j)) & 0xFFu);
        v[j] = kHasMin ? float(q - kOffset) * f + fm : float(q - kOffset) * f;
    }
    return uvec2(packHalf2x16(v.xy), packHalf2x16(v.zw));
}

void main() {
    uint expert = 0u;
    if (EXPERT != 0u) {
        const uint tile = gl_WorkGroupID.y;
        if (tile >= uint(pc.group.v[0])) return;
        expert = uint(pc.group.v[1u + 3u * tile]);
        if (tile > 0u && uint(pc.group.v[1u + 3u * (tile - 1u)]) == expert) return;  // decoded by its first tile
    }
    const uint nUnits = pc.k / 32u;
    const uint job = gl_WorkGroupID.x * 256u + gl_LocalInvocationID.x;
    if (job >= pc.rows * nUnits) return;
    const uint r = job / nUnits, unit = job % nUnits;
    const bool up = gl_WorkGroupID.z != 0u;
    const uint row = expert * pc.sliceBytes + (pc.row0 + r) * pc.rowBytes;
    uint q[8];
    float fa, fb, fm;
    decodeUnit(up ? pc.w2 : pc.w, up ? pc.w2_32 : pc.w32, row, unit, q, fa, fb, fm);
    const uint at = (expert * pc.sliceRows + r) * (pc.k / 8u) + 4u * unit;
    for (uint i = 0u; i < 4u; ++i) {
        const float f = i < 2u ? fa : fb;
        const uvec4 v = uvec4(halvesOfWord(q[2u * i], f, fm), halvesOfWord(q[2u * i + 1u], f, fm));
        if (up) pc.out2.v[at + i] = v;
        else pc.out_.v[at + i] = v;
    }
}
