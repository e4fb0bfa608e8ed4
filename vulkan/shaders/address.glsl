// Device-address arithmetic on buffer references. Needs common.glsl.
#ifndef ZINC_ADDRESS_GLSL
#define ZINC_ADDRESS_GLSL
#extension GL_EXT_buffer_reference_uvec2 : require
// The words `bytes` before a buffer's start (the split site and attention_args.comp's words sit
// before the attention partials: vulkan/tier_memory.cpp).
UintBuf uintsBefore(FloatBuf p, uint bytes) {
    const uvec2 a = uvec2(p);
    return UintBuf(uvec2(a.x - bytes, a.y - (a.x < bytes ? 1u : 0u)));
}
#endif
