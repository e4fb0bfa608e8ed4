#version 450
// An NV module the KHR rewrite must refuse: A and B are one type (16 x 16 f16), so that type
// would need two Uses.
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
shared float16_t sa[256];
shared float sc[256];
void main() {
    fcoopmatNV<16, 3, 16, 16> a;
    fcoopmatNV<32, 3, 16, 16> c = fcoopmatNV<32, 3, 16, 16>(0.0);
    coopMatLoadNV(a, sa, 0, 16, false);
    c = coopMatMulAddNV(a, a, c);
    coopMatStoreNV(c, sc, 0, 16, false);
}
