// Bytes to f16 values without integer conversions, for the cooperative-matrix matmuls
// (matmul_coopmat.comp, matmul_f16.comp): 0x6400 | q is the f16 1024 + q (exact for q < 1024),
// minus 1024 + offset is exactly q - offset (signed quants are first made unsigned with ^ 0x80,
// offset + 128); then scale and min in f32 and one rounding to f16 (an f16 fma would round f
// and m as well, and an f32 block scale may lie below f16's normal range). Needs
// GL_EXT_shader_explicit_arithmetic_types_float16.

// Bytes 0, 1 (hi: 2, 3) of the unsigned word y as exact f16 integers minus off (f16 1024 + off).
vec2 bytePair(uint y, bool hi, float16_t off) {
    const uint v = hi ? ((y >> 16) & 0xFFu) | ((y >> 8) & 0xFF0000u) : (y & 0xFFu) | ((y << 8) & 0xFF0000u);
    return vec2(unpackFloat2x16(v | 0x64006400u) - f16vec2(off));
}

// Values f * q + m of the 8 quants of q0, q1 (unsigned, off as bytePair) as 8 halves.
uvec4 halvesOf(uint q0, uint q1, float16_t off, float f, float m) {
    return uvec4(packHalf2x16(bytePair(q0, false, off) * f + m), packHalf2x16(bytePair(q0, true, off) * f + m),
                 packHalf2x16(bytePair(q1, false, off) * f + m), packHalf2x16(bytePair(q1, true, off) * f + m));
}
