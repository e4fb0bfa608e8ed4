// Q4_K's 32-value unit with 16-byte loads, for rows 16-byte aligned (the host's VEC): the 32
// quant bytes as two loads instead of eight, the block's header (d, dmin, 12 bytes of scales:
// a block is 144 bytes, so it starts 16-byte aligned too) as one instead of four. The same
// values as unit_decode.glsl's decodeUnit.
// Needs common.glsl, unit_decode.glsl, GL_EXT_buffer_reference_uvec2 and UNROLL defined by the
// includer.
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer U128Buf { uvec4 v[]; };

// Q4_K unit u of `row` (a byte offset) of the weights w128.
void decodeQ4KVec(U128Buf w128, uint row, uint u, out uint wq[8], out float fa, out float fb, out float fm) {
    const uint b = u / 8u, j = u % 8u;
    const uvec4 head = w128.v[(row + b * 144u) / 16u];
    const vec2 dm = unpackHalf2x16(head.x);
    uint sc, mn;
    scaleMinK4Words(head.y, head.z, head.w, j, sc, mn);
    const uint q = (row + b * 144u + 16u + 32u * (j / 2u)) / 16u;
    const uvec4 lo = w128.v[q], hi = w128.v[q + 1u];
    const uint shift = 4u * (j & 1u);
    UNROLL for (uint i = 0u; i < 4u; ++i) {
        wq[i] = (lo[i] >> shift) & 0x0F0F0F0Fu;
        wq[i + 4u] = (hi[i] >> shift) & 0x0F0F0F0Fu;
    }
    fa = fb = dm.x * float(sc);
    fm = -dm.y * float(mn);
}
