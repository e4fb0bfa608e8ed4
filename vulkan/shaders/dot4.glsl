// 4 x 8-bit dot products: with ZINC_DOT4 SPIR-V's OpSDot/OpSUDot (VK_KHR_shader_integer_dot_product,
// emitted through GL_EXT_spirv_intrinsics since Debian's glslang lacks GL_EXT_integer_dot_product),
// otherwise unpacked by hand. Needs GL_GOOGLE_include_directive.
#ifdef ZINC_DOT4
#extension GL_EXT_spirv_intrinsics : require
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4450)
int spirvSDot(uint a, uint b, spirv_literal int packedFormat);
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4452)
int spirvSUDot(uint a, uint b, spirv_literal int packedFormat);
int sdot4(uint a, uint b) { return spirvSDot(a, b, 0); }    // signed x signed bytes
int sudot4(uint a, uint b) { return spirvSUDot(a, b, 0); }  // signed a x unsigned b
#else
int sdot4(uint a, uint b) {
    int s = 0;
    for (int i = 0; i < 32; i += 8) s += bitfieldExtract(int(a), i, 8) * bitfieldExtract(int(b), i, 8);
    return s;
}
int sudot4(uint a, uint b) {
    int s = 0;
    for (int i = 0; i < 32; i += 8) s += bitfieldExtract(int(a), i, 8) * int((b >> i) & 0xFFu);
    return s;
}
#endif
