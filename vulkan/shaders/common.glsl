// Shared by every zinc-rt compute shader: buffers are reached through device addresses
// passed in push constants (no descriptor sets), so one pipeline layout serves all shaders
// and a weight tensor larger than maxStorageBufferRange is still one pointer.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(buffer_reference, std430, buffer_reference_align = 4) buffer FloatBuf { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer IntBuf { int v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer UintBuf { uint v[]; };
// Raw GGUF blocks: some block sizes (Q6_K 210, Q8_0 34 bytes) are only 2-byte aligned.
layout(buffer_reference, std430, buffer_reference_align = 2) readonly buffer U16Buf { uint16_t v[]; };

// Token state (vulkan/token_state.h): ints.
const int kStatePosition = 0;
const int kStateNTokens = 1;
const int kStateKvLength = 2;
const int kStateStep = 3;
const int kStateTokens = 8;

float roundHalf(float x) { return unpackHalf2x16(packHalf2x16(vec2(x, 0.0))).x; }
float halfBits(uint bits) { return unpackHalf2x16(bits).x; }

// Byte-offset readers over 2-byte aligned raw blocks.
uint rd16(U16Buf b, uint byteOff) { return uint(b.v[byteOff >> 1]); }
uint rd32(U16Buf b, uint byteOff) { return uint(b.v[byteOff >> 1]) | (uint(b.v[(byteOff >> 1) + 1]) << 16); }
uint rd8(U16Buf b, uint byteOff) { return (uint(b.v[byteOff >> 1]) >> ((byteOff & 1u) * 8u)) & 0xFFu; }
float rdHalf(U16Buf b, uint byteOff) { return halfBits(rd16(b, byteOff)); }

// Workgroup-wide sum for any subgroup size: subgroups reduce, then one subgroup sums the
// partials. `scratch` must hold gl_NumSubgroups floats.
#define WORKGROUP_SUM_DECL(NAME, MAXSG) shared float NAME[MAXSG];
