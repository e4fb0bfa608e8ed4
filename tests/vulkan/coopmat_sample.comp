#version 450
// tests/vulkan/coopmat_test.cpp's NV module: one A, one B and one accumulator type; loads of
// A row-major and B column-major, the result stored column-major.
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(constant_id = 10) const uint KA = 16u;
layout(constant_id = 11) const uint KB = 16u;
shared float16_t sa[256];
shared float16_t sb[256];
shared float sc[256];
void main() {
    fcoopmatNV<16, 3, 16, KA> a;
    fcoopmatNV<16, 3, KB, 16> b;
    fcoopmatNV<32, 3, 16, 16> c = fcoopmatNV<32, 3, 16, 16>(0.0);
    coopMatLoadNV(a, sa, 0, 16, false);
    coopMatLoadNV(b, sb, 0, 16, true);
    c = coopMatMulAddNV(a, b, c);
    coopMatStoreNV(c, sc, 0, 16, true);
}
